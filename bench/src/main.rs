//! `loadgen`: measures the Huit API under load, against the ceiling of its own
//! stack on the same machine.
//!
//! - `loadgen baseline-server`: an actix-web + sqlx + PostgreSQL server (the
//!   product's stack) whose one endpoint inserts one row per request in its
//!   own transaction. Built for the benchmark only; not in the product.
//! - `loadgen run`: hammers the baseline for half its time, registers
//!   players, opens tables (games long enough to outlast the run) and plays
//!   them over HTTP from `legal_moves` like real clients (each player
//!   long-polls its view while not on turn; with `--follow poll` it
//!   long-polls `/events` and fetches its view when they concern it, with
//!   `--follow stream` it reads its `/events/stream` instead), hammers the
//!   baseline for the other half, and prints moves per second, move latency
//!   percentiles and every non-2xx answer, ending with one line:
//!   `moves_per_sec=<x> baseline_per_sec=<y> ratio=<x/y> p50_ms=<a> p99_ms=<b> errors=<n>`.
//! - `loadgen history-cost`, `loadgen replay-speed`: the other figures of
//!   `scripts/bench`.
//! - `loadgen append-cost`: PostgreSQL's CPU per append statement of the log
//!   writer, by batch size, without HTTP in the way.
//! - `loadgen clocks`: how late deadlines fire on T tables where nobody
//!   moves, whether any fires twice, and the server's CPU while it waits.
//! - `loadgen bot-flood`: people's move latency and deadline lateness,
//!   calm and while one account floods the server with `strong` bots.
//! - `loadgen quickplay`: players arriving through quick play: its latency
//!   at A concurrent arrivals, and the tables opened against the fewest.
//! - `loadgen my-tables`: a page of a player's tables, at T running tables.
//! - `loadgen erasure`: an admin erasing accounts of 100, 1,000 and 10,000
//!   games, and other tables' moves while the largest is erased.
//! - `loadgen webhooks`: moves with the webhooks' outbox against without,
//!   and how late the webhooks arrive.
//! - `loadgen push-fake`, `loadgen push`: Apple's stand-in, and moves with
//!   push to phones against without, and how late the pushes go out.

mod append_cost;
mod baseline;
mod bot_flood;
mod ccu;
mod clocks;
mod conn;
mod correction;
mod erasure;
mod history_cost;
mod load;
mod my_tables;
mod push;
mod quickplay;
mod ratings;
mod replay;
mod webhooks;

use clap::{Parser, Subcommand};

/// The error of every part of the benchmark: each ends the run with its
/// message.
type Error = Box<dyn std::error::Error + Send + Sync>;

/// The same allocator as `huit`, so that the baseline server is built like
/// the product.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve the baseline endpoint (POST /baseline) until killed.
    BaselineServer {
        #[arg(long, default_value = "127.0.0.1:0")]
        bind: String,
        #[arg(long, env = "DATABASE_URL")]
        database_url: String,
        #[arg(long, default_value_t = 2)]
        workers: usize,
    },
    /// Measure the baseline, then play games on the API.
    Run(load::RunArgs),
    /// Move latency on a fresh table and on one with a long history.
    HistoryCost {
        #[arg(long, default_value = "http://127.0.0.1:8080")]
        base_url: String,
        #[arg(long, env = "DATABASE_URL")]
        database_url: String,
        /// Moves measured on each table.
        #[arg(long, default_value_t = 400)]
        moves: usize,
        /// Events of the long table.
        #[arg(long, default_value_t = 20_000)]
        events: usize,
    },
    /// PostgreSQL's CPU per append statement of the log writer, by batch
    /// size (the database must run on this machine).
    AppendCost {
        #[arg(long, env = "DATABASE_URL")]
        database_url: String,
        /// Moves per statement: one measurement each.
        #[arg(long, value_delimiter = ',', default_values_t = [1, 2, 4, 8, 16])]
        sizes: Vec<usize>,
        /// Moves written per measurement.
        #[arg(long, default_value_t = 2000)]
        moves: usize,
        /// Tables written to (a statement holds distinct tables).
        #[arg(long, default_value_t = 64)]
        tables: usize,
    },
    /// T tables with a clock and nobody moving: how late the deadlines fire.
    Clocks {
        #[arg(long, default_value = "http://127.0.0.1:8080")]
        base_url: String,
        #[arg(long, env = "DATABASE_URL")]
        database_url: String,
        #[arg(long, default_value_t = 1000)]
        tables: usize,
        #[arg(long, default_value_t = 5)]
        turn_seconds: u64,
        /// The server's process, for its CPU share while it waits.
        #[arg(long)]
        server_pid: Option<u32>,
        /// PostgreSQL's postmaster, for its processes' CPU share meanwhile.
        #[arg(long)]
        postmaster_pid: Option<u32>,
    },
    /// People's moves and deadlines, calm and under a flood of strong bots.
    BotFlood {
        #[arg(long, default_value = "http://127.0.0.1:8080")]
        base_url: String,
        #[arg(long, env = "DATABASE_URL")]
        database_url: String,
        /// Seconds of each phase.
        #[arg(long, default_value_t = 20)]
        seconds: u64,
        #[arg(long, default_value_t = 5)]
        turn_seconds: u64,
        /// Bot tables the flooding account tries to open and start.
        #[arg(long, default_value_t = 40)]
        flood_tables: usize,
        /// The server's process, for its CPU share.
        #[arg(long)]
        server_pid: Option<u32>,
    },
    /// Players arriving through quick play, A at once, wave after wave.
    Quickplay {
        /// The servers (comma-separated); arrivals go to each in turn.
        #[arg(long, value_delimiter = ',', default_value = "http://127.0.0.1:8080")]
        base_url: Vec<String>,
        #[arg(long, default_value_t = 64)]
        arrivals: usize,
        #[arg(long, default_value_t = 4)]
        seats: usize,
        #[arg(long, default_value_t = 10)]
        waves: usize,
    },
    /// A page of one player's tables, among T running ones.
    MyTables {
        #[arg(long, default_value = "http://127.0.0.1:8080")]
        base_url: String,
        #[arg(long, default_value_t = 500)]
        tables: usize,
        /// Finished tables of the player besides.
        #[arg(long, default_value_t = 0)]
        finished: usize,
        #[arg(long, default_value_t = 20)]
        limit: usize,
        #[arg(long, default_value_t = 200)]
        requests: usize,
    },
    /// Moves with the webhooks' outbox against without, and the webhooks'
    /// lag (the receiver is served here).
    Webhooks {
        #[arg(long)]
        off_url: String,
        #[arg(long)]
        on_url: String,
        /// host:port of the on-server's HUIT_WEBHOOK_URL.
        #[arg(long)]
        receiver: String,
        /// The on-server's database.
        #[arg(long, env = "DATABASE_URL")]
        database_url: String,
        #[arg(long, default_value_t = 15)]
        seconds: u64,
        #[arg(long, default_value_t = 3)]
        rounds: usize,
    },
    /// Live connections: what a held stream costs the server, and how fast
    /// a move reaches its table's followers and a crowd.
    Ccu(ccu::CcuArgs),
    /// One of `ccu`'s worker processes (its share of the streams comes on
    /// its standard input).
    #[command(hide = true)]
    CcuWorker,
    /// Write G generated finished games' logs (for `huit ratings rebuild`).
    RatingsFill {
        #[arg(long, env = "DATABASE_URL")]
        database_url: String,
        #[arg(long, default_value_t = 100_000)]
        games: usize,
        #[arg(long, default_value_t = 5_000)]
        players: usize,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Play each game for real (real logs' length) instead of writing
        /// its start and end.
        #[arg(long)]
        played: bool,
    },
    /// A leaderboard of P rated players: its first page and deep pages.
    Leaderboard(ratings::BoardArgs),
    /// One correction that re-rates many later games, and a game's end
    /// waiting meanwhile.
    CorrectionCost(correction::CorrectionArgs),
    /// Erasing accounts of 100, 1,000 and 10,000 games, and moves meanwhile.
    Erasure(erasure::ErasureArgs),
    /// Apple's stand-in for `push`: an authority, a team key and an
    /// HTTP/2 TLS server answering every push 200, until killed.
    PushFake(push::FakeArgs),
    /// Moves with push to phones against without (players polling, and
    /// players following), and the pushes' lag.
    Push(push::PushArgs),
    /// Write a long table to the database, then time its rebuild from the log.
    ReplaySpeed {
        #[arg(long, env = "DATABASE_URL")]
        database_url: String,
        #[arg(long, default_value_t = 100_000)]
        events: usize,
        #[arg(long, default_value_t = 1)]
        seed: u64,
    },
}

/// Runs `work` to its end on a runtime of `builder` (every driver on), its
/// error as an I/O error.
fn block_on(
    mut builder: tokio::runtime::Builder,
    work: impl std::future::Future<Output = Result<(), Error>>,
) -> std::io::Result<()> {
    builder
        .enable_all()
        .build()?
        .block_on(work)
        .map_err(|e| std::io::Error::other(e.to_string()))
}

fn main() -> std::io::Result<()> {
    let cli = Cli::parse();
    match cli.command {
        Command::BaselineServer {
            bind,
            database_url,
            workers,
        } => actix_web::rt::System::new().block_on(baseline::serve(&bind, &database_url, workers)),
        // One thread: the clients share the machine with the server and
        // PostgreSQL, and spend less per request without work stealing
        // between threads (0.26-0.31 -> 0.23-0.25 ms of loadgen CPU per
        // move at 16 x 4, alternated runs); the baseline's clients too.
        Command::Run(args) => tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?
            .block_on(load::run(args)),
        Command::HistoryCost {
            base_url,
            database_url,
            moves,
            events,
        } => block_on(
            tokio::runtime::Builder::new_multi_thread(),
            history_cost::run(&base_url, &database_url, moves, events),
        ),
        Command::AppendCost {
            database_url,
            sizes,
            moves,
            tables,
        } => block_on(
            tokio::runtime::Builder::new_current_thread(),
            append_cost::run(&database_url, &sizes, moves, tables),
        ),
        Command::Quickplay {
            base_url,
            arrivals,
            seats,
            waves,
        } => block_on(
            tokio::runtime::Builder::new_multi_thread(),
            quickplay::run(quickplay::QuickPlayArgs {
                base_urls: base_url,
                arrivals,
                seats,
                waves,
            }),
        ),
        Command::MyTables {
            base_url,
            tables,
            finished,
            limit,
            requests,
        } => block_on(
            tokio::runtime::Builder::new_multi_thread(),
            my_tables::run(my_tables::MyTablesArgs {
                base_url,
                tables,
                finished,
                limit,
                requests,
            }),
        ),
        Command::Ccu(args) => {
            let mut runtime = tokio::runtime::Builder::new_multi_thread();
            runtime.worker_threads(2);
            block_on(runtime, ccu::run(args))
        }
        Command::CcuWorker => {
            let mut runtime = tokio::runtime::Builder::new_multi_thread();
            runtime.worker_threads(2);
            block_on(runtime, ccu::worker())
        }
        Command::RatingsFill {
            database_url,
            games,
            players,
            seed,
            played,
        } => block_on(
            tokio::runtime::Builder::new_current_thread(),
            ratings::fill(&database_url, games, players, seed, played),
        ),
        Command::Leaderboard(args) => block_on(
            tokio::runtime::Builder::new_current_thread(),
            ratings::board(args),
        ),
        Command::CorrectionCost(args) => block_on(
            tokio::runtime::Builder::new_multi_thread(),
            correction::run(args),
        ),
        Command::PushFake(args) => block_on(
            tokio::runtime::Builder::new_multi_thread(),
            push::fake(args),
        ),
        Command::Push(args) => actix_web::rt::System::new()
            .block_on(push::run(args))
            .map_err(|e| std::io::Error::other(e.to_string())),
        Command::Erasure(args) => block_on(
            tokio::runtime::Builder::new_current_thread(),
            erasure::run(args),
        ),
        Command::Webhooks {
            off_url,
            on_url,
            receiver,
            database_url,
            seconds,
            rounds,
        } => actix_web::rt::System::new()
            .block_on(webhooks::run(webhooks::WebhooksArgs {
                off_url,
                on_url,
                receiver,
                database_url,
                seconds,
                rounds,
            }))
            .map_err(|e| std::io::Error::other(e.to_string())),
        // One thread, as an actix worker of the server runs a cold load
        // (its parsing on a blocking thread either way): a multi-threaded
        // runtime's idle worker spent CPU the load's threads and
        // PostgreSQL share.
        Command::ReplaySpeed {
            database_url,
            events,
            seed,
        } => block_on(
            tokio::runtime::Builder::new_current_thread(),
            replay::run(&database_url, events, seed),
        ),
        Command::Clocks {
            base_url,
            database_url,
            tables,
            turn_seconds,
            server_pid,
            postmaster_pid,
        } => block_on(
            tokio::runtime::Builder::new_multi_thread(),
            clocks::run(clocks::ClockArgs {
                base_url,
                database_url,
                tables,
                turn_seconds,
                server_pid,
                postmaster_pid,
            }),
        ),
        Command::BotFlood {
            base_url,
            database_url,
            seconds,
            turn_seconds,
            flood_tables,
            server_pid,
        } => block_on(
            tokio::runtime::Builder::new_multi_thread(),
            bot_flood::run(bot_flood::FloodArgs {
                base_url,
                database_url,
                seconds,
                turn_seconds,
                flood_tables,
                server_pid,
            }),
        ),
    }
}
