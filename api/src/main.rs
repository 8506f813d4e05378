//! `huit`: the Huit server and its administration commands.

use std::io::BufRead;
use std::process::ExitCode;

use api::config::Settings;
use api::error::cause_chain;
use api::startup::{self, Application};
use clap::{Parser, Subcommand};
use store::accounts::Role;

/// mimalloc rather than the system's malloc, whose allocation and freeing
/// were a large share of the server's CPU under load (BENCHMARKS.md, sixth
/// pass).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Debug, Parser)]
#[command(
    name = "huit",
    version,
    about = "Huit: a server for 8 américain (Crazy Eights)"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Apply the database migrations, then serve the HTTP API.
    Serve(Box<Settings>),
    /// Administration.
    Admin {
        #[command(subcommand)]
        command: AdminCommand,
    },
    /// Print the OpenAPI document (the content of openapi/openapi.json).
    Openapi,
    /// Exit 0 when the server listening on BIND answers `/healthz` with 200
    /// (its database answers), 1 otherwise: a container's health check.
    Health {
        /// The address `serve` listens on; `0.0.0.0` (or `[::]`) is asked on
        /// the loopback.
        #[arg(long, env = "BIND", default_value = "127.0.0.1:8080")]
        bind: String,
    },
    /// Print a round of a table step by step, every hand visible (read from
    /// the event log).
    Replay {
        table_id: uuid::Uuid,
        /// The round (default: the last one dealt).
        #[arg(long)]
        round: Option<u32>,
        #[arg(long, env = "DATABASE_URL", hide_env_values = true)]
        database_url: String,
    },
    /// An exported log (`GET …/log`, NDJSON), read with no database.
    Log {
        #[command(subcommand)]
        command: LogCommand,
    },
    /// Ratings and statistics.
    Ratings {
        #[command(subcommand)]
        command: RatingsCommand,
    },
    /// Audit a table: re-fold its log, recompute every round's scores,
    /// verify the hash chain. Exits with status 2 when the audit fails.
    Audit {
        table_id: uuid::Uuid,
        #[arg(long, env = "DATABASE_URL", hide_env_values = true)]
        database_url: String,
    },
}

#[derive(Debug, Subcommand)]
enum LogCommand {
    /// Check an exported log: consecutive seqs, every prev_hash and hash
    /// (RFC 8785), every round's scores re-folded with the engine, and the
    /// game's end reached. Exits 0 when it holds, 2 when not (naming the
    /// first bad line), 1 when it cannot be read.
    Verify {
        /// The file, or `-` for standard input.
        file: String,
        /// Accept a log that stops before the game's end (exported while
        /// the game ran).
        #[arg(long)]
        partial: bool,
        /// The table's id, which its shuffles name: with it, the deals are
        /// checked against the revealed seed too (docs/API.md "Fair deals").
        #[arg(long)]
        table: Option<uuid::Uuid>,
    },
    /// Print a round of an exported log step by step, every hand visible,
    /// as `huit replay` does from the database.
    Replay {
        /// The file, or `-` for standard input.
        file: String,
        /// The round (default: the last one dealt).
        #[arg(long)]
        round: Option<u32>,
    },
}

#[derive(Debug, Subcommand)]
enum RatingsCommand {
    /// Recompute every rating and statistic from the finished games' logs
    /// alone, in the order the games ended, compare them with the stored
    /// values (bit for bit) and store them. Exits with status 2 when
    /// `--check` finds a difference.
    Rebuild {
        /// Only compare: write nothing.
        #[arg(long)]
        check: bool,
        #[arg(long, env = "DATABASE_URL", hide_env_values = true)]
        database_url: String,
    },
}

#[derive(Debug, Subcommand)]
enum AdminCommand {
    /// Create an administrator account; the password is read from the first
    /// line of standard input.
    Create {
        username: String,
        #[arg(long, env = "DATABASE_URL", hide_env_values = true)]
        database_url: String,
    },
}

// One thread for the main runtime: the HTTP workers have runtimes of their
// own, and what runs here (the log writer, version reads, LISTEN and the
// announcements) waits on PostgreSQL; a thread per core cost more CPU per
// move in the scheduler and in waking threads (BENCHMARKS.md, sixth pass).
#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Openapi => {
            print!("{}", api::openapi::document_json());
            Ok(())
        }
        Command::Serve(settings) => serve(*settings).await,
        Command::Health { bind } => return health(&bind).await,
        Command::Admin {
            command:
                AdminCommand::Create {
                    username,
                    database_url,
                },
        } => create_admin(&username, database_url).await,
        Command::Replay {
            table_id,
            round,
            database_url,
        } => replay(table_id, round, database_url).await,
        Command::Audit {
            table_id,
            database_url,
        } => return audit(table_id, database_url).await,
        Command::Log {
            command:
                LogCommand::Verify {
                    file,
                    partial,
                    table,
                },
        } => return verify_log(&file, partial, table),
        Command::Log {
            command: LogCommand::Replay { file, round },
        } => replay_log(&file, round),
        Command::Ratings {
            command:
                RatingsCommand::Rebuild {
                    check,
                    database_url,
                },
        } => return rebuild_ratings(check, database_url).await,
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("huit: {}", cause_chain(e.as_ref()));
            ExitCode::FAILURE
        }
    }
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

async fn serve(settings: Settings) -> Result<(), BoxError> {
    api::telemetry::init();
    tracing::info!(?settings, "starting");
    let descriptors = startup::raise_descriptor_limit();
    tracing::info!(descriptors, "open-file limit");
    let pool = startup::connect_lazy(&settings)?;
    let wait = std::time::Duration::from_secs(settings.db_wait_secs);
    let tls = startup::wait_for_database(&pool, wait).await?;
    let tls = tls.as_deref().unwrap_or("none");
    tracing::info!(tls, "database connected");
    startup::migrate(&pool).await?;
    tracing::info!("migrations applied");
    let app = Application::build(settings.clone(), pool).await?;
    // The ports, also when the system chose them (a bind to port 0).
    let metrics_port = app.metrics_port();
    tracing::info!(bind = %settings.bind, port = app.port(), metrics_port, "listening");
    app.run_until_stopped().await?;
    Ok(())
}

/// 0 when `/healthz` on `bind` answers 200 within 5 s.
async fn health(bind: &str) -> ExitCode {
    let address = bind
        .replacen("0.0.0.0:", "127.0.0.1:", 1)
        .replacen("[::]:", "[::1]:", 1);
    let client = match reqwest::Client::builder()
        .no_proxy()
        .timeout(std::time::Duration::from_secs(5))
        .build()
    {
        Ok(client) => client,
        Err(e) => {
            eprintln!("huit health: {e}");
            return ExitCode::FAILURE;
        }
    };
    match client.get(format!("http://{address}/healthz")).send().await {
        Ok(res) if res.status().is_success() => ExitCode::SUCCESS,
        Ok(res) => {
            eprintln!("huit health: /healthz answered {}", res.status());
            ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("huit health: {}", cause_chain(&e));
            ExitCode::FAILURE
        }
    }
}

async fn create_admin(username: &str, database_url: String) -> Result<(), BoxError> {
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line)?;
    let password = line.strip_suffix('\n').unwrap_or(&line);
    let password = password.strip_suffix('\r').unwrap_or(password);
    let settings = Settings::with_database_url(database_url);
    let pool = startup::connect_lazy(&settings)?;
    startup::migrate(&pool).await?;
    let account = api::routes::accounts::register(&pool, username, password, Role::Admin, None)
        .await
        .map_err(|e| e.to_string())?;
    println!("created admin {} ({})", account.username, account.id);
    Ok(())
}

async fn replay(
    table_id: uuid::Uuid,
    round: Option<u32>,
    database_url: String,
) -> Result<(), BoxError> {
    let pool = startup::connect_lazy(&Settings::with_database_url(database_url))?;
    let log = api::history::load(&pool, table_id).await?;
    let parsed = api::history::Parsed::new(log)?;
    let names = api::table_service::Names::read(&pool, parsed.persons(), None).await?;
    print!(
        "{}",
        api::history::replay_text(&parsed, round, Some(&names))?
    );
    Ok(())
}

/// The exported log in `file` (`-`: standard input).
fn read_export(file: &str) -> Result<api::history::Log, BoxError> {
    let text = if file == "-" {
        std::io::read_to_string(std::io::stdin())?
    } else {
        std::fs::read_to_string(file).map_err(|e| format!("{file}: {e}"))?
    };
    Ok(api::history::from_ndjson(file, &text)?)
}

/// 0: the log holds; 2: it does not (or a line is no event); 1: it could
/// not be read.
fn verify_log(file: &str, partial: bool, table: Option<uuid::Uuid>) -> ExitCode {
    let mut log = match read_export(file) {
        Ok(log) => log,
        Err(e) => {
            eprintln!("huit log verify: {}", cause_chain(e.as_ref()));
            return match e.downcast_ref::<api::history::BadLine>() {
                Some(_) => ExitCode::from(2),
                None => ExitCode::FAILURE,
            };
        }
    };
    log.table_id = table;
    let verdict = api::history::verify_export(&log, partial);
    print!("{}", api::history::verdict_text(&log, &verdict));
    if verdict.holds {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(2)
    }
}

fn replay_log(file: &str, round: Option<u32>) -> Result<(), BoxError> {
    let parsed = api::history::Parsed::new(read_export(file)?)?;
    print!("{}", api::history::replay_text(&parsed, round, None)?);
    Ok(())
}

/// 0: the audit passed; 2: it failed; 1: it could not run.
async fn audit(table_id: uuid::Uuid, database_url: String) -> ExitCode {
    let run = async {
        let pool = startup::connect_lazy(&Settings::with_database_url(database_url))?;
        let log = api::history::load(&pool, table_id).await?;
        Ok::<_, BoxError>(api::history::audit(&log))
    };
    match run.await {
        Ok(report) => {
            let source = api::history::Source::Table(table_id);
            print!("{}", api::history::audit_text(&source, &report));
            if report.ok {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(2)
            }
        }
        Err(e) => {
            eprintln!("huit: {}", cause_chain(e.as_ref()));
            ExitCode::FAILURE
        }
    }
}

/// 0: rebuilt (or, with `check`, the same); 2: `check` found differences;
/// 1: it could not run.
async fn rebuild_ratings(check: bool, database_url: String) -> ExitCode {
    let started = std::time::Instant::now();
    let mut reported = started;
    let progress = |tables: usize| {
        if reported.elapsed().as_secs() >= 2 {
            reported = std::time::Instant::now();
            eprintln!("ratings rebuild: {tables} finished tables read");
        }
    };
    let run = async {
        let pool = startup::connect_lazy(&Settings::with_database_url(database_url))?;
        startup::migrate(&pool).await?;
        Ok::<_, BoxError>(api::ratings::rebuild(&pool, !check, progress).await?)
    };
    let rebuilt = match run.await {
        Ok(rebuilt) => rebuilt,
        Err(e) => {
            eprintln!("huit: {}", cause_chain(e.as_ref()));
            return ExitCode::FAILURE;
        }
    };
    let seconds = started.elapsed().as_secs_f64();
    for difference in &rebuilt.differences {
        println!("differs: {difference}");
    }
    println!(
        "ratings rebuild: {} rated games from {} finished tables, {} standings; \
         {} rows differ from the stored ones; {}; {:.1} s ({:.0} games/s)",
        rebuilt.games,
        rebuilt.tables,
        rebuilt.standings,
        rebuilt.different,
        if check {
            "checked, nothing written"
        } else {
            "stored"
        },
        seconds,
        rebuilt.games as f64 / seconds.max(1e-9),
    );
    if check && rebuilt.different > 0 {
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    }
}
