//! Ratings at scale.
//!
//! - `loadgen ratings-fill`: G generated finished games (`--games`) between
//!   P players (`--players`), written as their logs (`table_created`, the
//!   joins, `game_started`, a `turn_passed` by each seat, then `game_ended`
//!   with seeded totals, ties included; one game in twenty has a bot seat,
//!   one in twenty is aborted and in one in twenty a person never moved:
//!   not rated, D43), by `COPY`, for `huit ratings rebuild` to read.
//!   With `--played`, each game is played for real instead (one round,
//!   random legal moves, the bot's own), so that its log is as long as a
//!   real game's: one in twenty has a bot seat, one in twenty is aborted
//!   and in one in twenty a person resigns before moving.
//! - `loadgen leaderboard`: P rated players in one ruleset (`amerix`),
//!   written straight into `ratings`, then the first page of its board and
//!   pages from random places in it, asked `--requests` times each over
//!   HTTP. Prints
//!   `leaderboard players=<p> on_board=<n> limit=20 first_p50_ms=<a> first_p99_ms=<b> deep_p50_ms=<c> deep_p99_ms=<d>`

use std::fmt::Write as _;
use std::time::Instant;

use api::table_service::player_id;
use domain::bots::Level;
use domain::{Preset, Seated, Table, TableCommand, TableEvent};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use sqlx::PgPool;
use store::chain::{format_at, GENESIS_PREV_HASH};
use store::{ChainedAppend, NewEvent};
use uuid::Uuid;

use crate::load::measure::percentile;
use crate::Error;

/// Games written per `COPY`.
const GAMES_A_COPY: usize = 5_000;

pub(crate) async fn pool(database_url: &str) -> Result<PgPool, Error> {
    let pool = sqlx::postgres::PgPoolOptions::new()
        .max_connections(2)
        .connect(database_url)
        .await?;
    store::MIGRATOR.run(&pool).await?;
    Ok(pool)
}

/// `n` accounts named `<prefix><i>`: their ids.
async fn accounts(pool: &PgPool, prefix: &str, n: usize) -> Result<Vec<Uuid>, Error> {
    let ids = sqlx::query_scalar(
        "INSERT INTO accounts (id, username, password_hash) \
         SELECT gen_random_uuid(), $1 || g, 'not a password hash' \
         FROM generate_series(1, $2::int) g RETURNING id",
    )
    .bind(prefix)
    .bind(n as i32)
    .fetch_all(pool)
    .await?;
    Ok(ids)
}

/// A CSV field.
pub(crate) fn csv(out: &mut String, field: &str) {
    out.push('"');
    out.push_str(&field.replace('"', "\"\""));
    out.push('"');
}

/// A ruleset and 2 to 4 different ones of `players`, in seat order.
fn table_of(rng: &mut StdRng, players: &[Uuid]) -> (&'static str, Vec<Uuid>) {
    let ruleset = Preset::ALL[rng.gen_range(0..Preset::ALL.len())].id();
    let n = rng.gen_range(2..=4);
    let mut seated: Vec<Uuid> = Vec::with_capacity(n);
    while seated.len() < n {
        let p = players[rng.gen_range(0..players.len())];
        if !seated.contains(&p) {
            seated.push(p);
        }
    }
    (ruleset, seated)
}

/// The log of one generated game (see the module's documentation).
fn game_log(rng: &mut StdRng, players: &[Uuid]) -> (String, Vec<TableEvent>) {
    let (ruleset, seated) = table_of(rng, players);
    let n = seated.len();
    let creator = player_id(seated[0]);
    let mut log = Table::create(ruleset, &Default::default(), n, None, &creator).expect("a table");
    let mut table = Table::from_events(&log).expect("a table");
    for id in &seated[1..] {
        let join = TableCommand::Join {
            account_id: player_id(*id),
            joining: domain::Joining::Open,
            guest: false,
            client_seed: None,
        };
        log.extend(table.execute(&join, rng).expect("joins"));
    }
    let mut players: Vec<Seated> = table.players.iter().flatten().cloned().collect();
    let kind = rng.gen_range(0..20);
    if kind == 0 {
        players[n - 1] = Seated::bot(n - 1, Level::Basic, None);
    }
    log.push(TableEvent::GameStarted { players });
    if kind == 1 {
        log.push(TableEvent::GameAborted { by: 0 });
    } else {
        // Each seat moves (but the last, one game in twenty: D43).
        let moved = if kind == 2 { n - 1 } else { n };
        log.extend((0..moved).map(|seat| TableEvent::Game(domain::Event::TurnPassed { seat })));
        // Totals of one round's hands; close totals tie now and then.
        let totals: Vec<i32> = (0..n).map(|_| rng.gen_range(0..40) * 5).collect();
        let ended = domain::score::ranking(table.rules.end, &totals);
        log.push(TableEvent::Game(domain::Event::GameEnded(Box::new(ended))));
    }
    (ruleset.to_owned(), log)
}

/// A game of 2 to 4 of `players` played to its end (see the module's
/// documentation, `--played`): its ruleset and log.
fn played_log(rng: &mut StdRng, players: &[Uuid]) -> (String, Vec<TableEvent>) {
    let (ruleset, seated) = table_of(rng, players);
    let n = seated.len();
    let creator = player_id(seated[0]);
    let options = serde_json::json!({"rounds": 1});
    let options = options.as_object().expect("an object");
    let mut log = Table::create(ruleset, options, n, None, &creator).expect("a table");
    let mut table = Table::from_events(&log).expect("a table");
    let kind = rng.gen_range(0..20);
    let persons = if kind == 0 { n - 1 } else { n };
    fn run(table: &mut Table, log: &mut Vec<TableEvent>, rng: &mut StdRng, command: TableCommand) {
        log.extend(table.execute(&command, rng).expect("accepted"));
    }
    for id in &seated[1..persons] {
        let join = TableCommand::Join {
            account_id: player_id(*id),
            joining: domain::Joining::Open,
            guest: false,
            client_seed: None,
        };
        run(&mut table, &mut log, rng, join);
    }
    if kind == 0 {
        let bot = TableCommand::SeatBot {
            account_id: creator.clone(),
            level: Level::Basic,
            client_seed: None,
        };
        run(&mut table, &mut log, rng, bot);
    }
    let start = TableCommand::Start {
        account_id: creator.clone(),
    };
    run(&mut table, &mut log, rng, start);
    if kind == 1 {
        let abort = TableCommand::Abort {
            account_id: creator,
        };
        run(&mut table, &mut log, rng, abort);
        return (ruleset.to_owned(), log);
    }
    if kind == 2 {
        let resign = TableCommand::Resign {
            account_id: player_id(seated[1]),
        };
        run(&mut table, &mut log, rng, resign);
    }
    while table.status() == domain::Status::Playing {
        let command = match (table.automatic(), table.must_act()) {
            (Some(_), _) => TableCommand::PlayFor {
                seed: rng.gen(),
                playouts: domain::bots::Playouts::FULL,
            },
            (None, Some(seat)) => {
                let moves = table.game.as_ref().expect("a game").legal_moves(seat);
                TableCommand::Move {
                    account_id: player_id(seated[seat]),
                    mv: moves[rng.gen_range(0..moves.len())].clone(),
                }
            }
            (None, None) => break,
        };
        run(&mut table, &mut log, rng, command);
    }
    (ruleset.to_owned(), log)
}

/// The rows (CSV) of `events (table_id, seq, type, v, at, data, prev_hash,
/// hash)` of a chained log: how many.
pub(crate) fn event_rows(out: &mut String, chained: &ChainedAppend) -> Result<usize, Error> {
    let id = chained.table_id;
    for e in &chained.events {
        write!(
            out,
            "{id},{},{},{},{},",
            e.seq,
            e.kind,
            e.v,
            format_at(e.at)
        )?;
        csv(out, &e.data.to_string());
        writeln!(out, ",{},{}", e.prev_hash, e.hash)?;
    }
    Ok(chained.events.len())
}

/// Copies the rows [`event_rows`] wrote into `events`.
pub(crate) async fn copy_events(conn: &mut sqlx::PgConnection, rows: &str) -> Result<(), Error> {
    copy_csv(
        conn,
        "events (table_id, seq, type, v, at, data, prev_hash, hash)",
        rows,
    )
    .await
}

/// Copies `rows` (CSV) into `table (columns)`.
pub(crate) async fn copy_csv(
    conn: &mut sqlx::PgConnection,
    table: &str,
    rows: &str,
) -> Result<(), Error> {
    let mut copy = conn
        .copy_in_raw(&format!("COPY {table} FROM STDIN (FORMAT csv)"))
        .await?;
    copy.send(rows.as_bytes()).await?;
    copy.finish().await?;
    Ok(())
}

/// Writes `games` generated games between `players` new accounts (played
/// for real with `played`).
pub async fn fill(
    database_url: &str,
    games: usize,
    players: usize,
    seed: u64,
    played: bool,
) -> Result<(), Error> {
    let pool = pool(database_url).await?;
    let started = Instant::now();
    let ids = accounts(&pool, "rated", players).await?;
    let mut rng = StdRng::seed_from_u64(seed);
    let (mut written, mut rows) = (0, 0);
    while written < games {
        let batch = GAMES_A_COPY.min(games - written);
        let (mut tables, mut events) = (String::new(), String::new());
        for _ in 0..batch {
            let (ruleset, log) = match played {
                true => played_log(&mut rng, &ids),
                false => game_log(&mut rng, &ids),
            };
            let id = Uuid::new_v4();
            let new: Vec<NewEvent> = log.iter().map(NewEvent::sealed).collect();
            let chained = ChainedAppend::new(id, 0, GENESIS_PREV_HASH, new, None);
            let creator = ids[0];
            writeln!(
                tables,
                "{id},{ruleset},finished,{},{creator}",
                chained.events.len()
            )?;
            rows += event_rows(&mut events, &chained)?;
        }
        let mut conn = pool.acquire().await?;
        copy_csv(
            &mut conn,
            "game_tables (id, ruleset, status, version, created_by)",
            &tables,
        )
        .await?;
        copy_events(&mut conn, &events).await?;
        written += batch;
    }
    sqlx::query("ANALYZE").execute(&pool).await?;
    eprintln!(
        "loadgen ratings-fill: {games} games ({rows} events) between {players} players written in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// The arguments of `loadgen leaderboard`.
#[derive(clap::Args)]
pub struct BoardArgs {
    #[arg(long, default_value = "http://127.0.0.1:8080")]
    pub base_url: String,
    #[arg(long, env = "DATABASE_URL")]
    pub database_url: String,
    #[arg(long, default_value_t = 1_000_000)]
    pub players: usize,
    #[arg(long, default_value_t = 200)]
    pub requests: usize,
}

/// Fills a board of `players` and times its pages (see the module's
/// documentation).
pub async fn board(args: BoardArgs) -> Result<(), Error> {
    let pool = pool(&args.database_url).await?;
    let started = Instant::now();
    accounts(&pool, "board", args.players).await?;
    // σ from 1 to 8: about five in seven established, on the board.
    sqlx::query(
        "INSERT INTO ratings (account_id, ruleset, mu, sigma, games, wins, places, points) \
         SELECT id, 'amerix', 10 + random() * 30, 1 + random() * 7, 20, 5, 40, 900 \
         FROM accounts WHERE username LIKE 'board%'",
    )
    .execute(&pool)
    .await?;
    sqlx::query("ANALYZE ratings").execute(&pool).await?;
    let on_board: i64 =
        sqlx::query_scalar("SELECT count(*) FROM ratings WHERE ruleset = 'amerix' AND sigma <= 6")
            .fetch_one(&pool)
            .await?;
    eprintln!(
        "loadgen leaderboard: {} rated players ({on_board} established) written in {:.1} s",
        args.players,
        started.elapsed().as_secs_f64()
    );
    // Cursors at random places of the board (the rank in a cursor is only
    // what the next page numbers from).
    let places: Vec<(f64, Uuid)> = sqlx::query_as(
        "SELECT mu, account_id FROM ratings WHERE ruleset = 'amerix' AND sigma <= 6 \
         ORDER BY random() LIMIT $1",
    )
    .bind(args.requests as i64)
    .fetch_all(&pool)
    .await?;
    let client = reqwest::Client::builder().no_proxy().build()?;
    let base = format!(
        "{}/v1/leaderboards/amerix?limit=20",
        args.base_url.trim_end_matches('/')
    );
    let first: Vec<String> = (0..=args.requests).map(|_| base.clone()).collect();
    let deep: Vec<String> = places
        .iter()
        .map(|(mu, id)| format!("{base}&after=1000.{:016x}.{}", mu.to_bits(), id.simple()))
        .collect();
    let mut line = format!(
        "leaderboard players={} on_board={on_board} limit=20",
        args.players
    );
    for (kind, urls) in [("first", first), ("deep", deep)] {
        let mut ms = Vec::with_capacity(urls.len());
        for (i, url) in urls.iter().enumerate() {
            let sent = Instant::now();
            let res = client.get(url).send().await?;
            let status = res.status();
            let page: serde_json::Value = res.json().await?;
            if !status.is_success() || page["players"].as_array().is_none() {
                return Err(format!("{url}: {status} {page}").into());
            }
            // The very first request warms the connection; not counted.
            if i > 0 || kind == "deep" {
                ms.push(sent.elapsed().as_secs_f64() * 1000.0);
            }
        }
        ms.sort_by(f64::total_cmp);
        write!(
            line,
            " {kind}_p50_ms={:.2} {kind}_p99_ms={:.2}",
            percentile(&ms, 0.50),
            percentile(&ms, 0.99)
        )?;
    }
    println!("{line}");
    Ok(())
}
