//! Erasing an account (docs/API.md "Accounts"), `loadgen erasure`: how
//! long an admin's `DELETE /v1/admin/accounts/{id}` takes for an account
//! with 100, 1,000 and 10,000 finished games (their logs, seats and feed
//! items and its standing, written by `COPY` as the product writes them,
//! plus two running tables it plays at over HTTP, which the erasure
//! resigns), and the move latency of other tables while the largest
//! erasure runs, against the moves of a calm spell just before it. Prints
//!
//! `erasure games=<n> running=2 feed_items=<f> ms=<t>` for each size, then
//! `erasure-moves movers=<m> calm_moves=<a> calm_p50_ms=<b> calm_p99_ms=<c> during_moves=<d> during_p50_ms=<e> during_p99_ms=<f>`

use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use api::table_service::player_id;
use domain::{Table, TableCommand, TableEvent};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::json;
use sqlx::PgPool;
use store::chain::{format_at, GENESIS_PREV_HASH};
use store::{ChainedAppend, NewEvent};
use uuid::Uuid;

use crate::history_cost::{log_in, next_move, player, started_table, Player};
use crate::load::measure::percentile;
use crate::ratings::{copy_csv, copy_events, event_rows};
use crate::Error;

/// Games written per `COPY`.
const GAMES_A_COPY: usize = 2_000;

/// Feed items each finished game left its player.
const FEED_A_GAME: usize = 3;

/// Tables played on while the largest erasure runs.
const MOVERS: usize = 8;

/// The arguments of `loadgen erasure`.
#[derive(clap::Args)]
pub struct ErasureArgs {
    #[arg(long, default_value = "http://127.0.0.1:8080")]
    pub base_url: String,
    #[arg(long, env = "DATABASE_URL")]
    pub database_url: String,
    /// The sizes measured, in finished games.
    #[arg(long, value_delimiter = ',', default_value = "100,1000,10000")]
    pub games: Vec<usize>,
}

/// The log of a finished two-seat game of `a` (seat 0) and `b`.
fn finished_log(rng: &mut StdRng, a: Uuid, b: Uuid) -> Vec<TableEvent> {
    let mut log =
        Table::create("classique", &Default::default(), 2, None, &player_id(a)).expect("a table");
    let mut table = Table::from_events(&log).expect("a table");
    let join = TableCommand::Join {
        account_id: player_id(b),
        joining: domain::Joining::Open,
        guest: false,
        client_seed: None,
    };
    log.extend(table.execute(&join, rng).expect("joins"));
    let players = table.players.iter().flatten().cloned().collect();
    log.push(TableEvent::GameStarted { players });
    log.extend((0..2).map(|seat| TableEvent::Game(domain::Event::TurnPassed { seat })));
    let totals: Vec<i32> = (0..2).map(|_| rng.gen_range(0..40) * 5).collect();
    let ended = domain::score::ranking(table.rules.end, &totals);
    log.push(TableEvent::Game(domain::Event::GameEnded(Box::new(ended))));
    log
}

/// Writes `games` finished games of `account` against `opponents`, with
/// their seats, `account`'s feed items and a standing.
async fn fill(
    pool: &PgPool,
    account: Uuid,
    opponents: &[Uuid],
    games: usize,
    rng: &mut StdRng,
) -> Result<usize, Error> {
    let mut written = 0;
    let mut items = 0;
    while written < games {
        let batch = GAMES_A_COPY.min(games - written);
        let (mut tables, mut events, mut seats, mut feed) =
            (String::new(), String::new(), String::new(), String::new());
        for _ in 0..batch {
            let other = opponents[rng.gen_range(0..opponents.len())];
            let log = finished_log(rng, account, other);
            let id = Uuid::new_v4();
            let new: Vec<NewEvent> = log.iter().map(NewEvent::sealed).collect();
            let chained = ChainedAppend::new(id, 0, GENESIS_PREV_HASH, new, None);
            writeln!(
                tables,
                "{id},classique,finished,{},{account},2",
                chained.events.len()
            )?;
            event_rows(&mut events, &chained)?;
            writeln!(seats, "{id},{account},0\n{id},{other},1")?;
            for kind in ["game_started", "your_turn", "game_over"]
                .iter()
                .take(FEED_A_GAME)
            {
                writeln!(
                    feed,
                    "{account},{kind},{id},{},0",
                    format_at(chrono::Utc::now())
                )?;
                items += 1;
            }
        }
        let mut conn = pool.acquire().await?;
        copy_csv(
            &mut conn,
            "game_tables (id, ruleset, status, version, created_by, seats)",
            &tables,
        )
        .await?;
        copy_events(&mut conn, &events).await?;
        copy_csv(
            &mut conn,
            "table_players (table_id, account_id, seat)",
            &seats,
        )
        .await?;
        copy_csv(
            &mut conn,
            "feed_items (account_id, kind, table_id, at, my_turn)",
            &feed,
        )
        .await?;
        written += batch;
    }
    sqlx::query(
        "INSERT INTO ratings (account_id, ruleset, mu, sigma, games, wins, places, points) \
         VALUES ($1, 'classique', 25, 3, $2, 1, $2, 0)",
    )
    .bind(account)
    .bind(games as i64)
    .execute(pool)
    .await?;
    Ok(items)
}

/// An administrator, logged in: its token.
async fn admin(client: &reqwest::Client, base: &str, pool: &PgPool) -> Result<String, Error> {
    let name = format!("eraser{:08x}", rand::thread_rng().gen::<u32>());
    let hash = api::password::hash("bench-password-1")?;
    store::accounts::insert(pool, &name, &hash, store::accounts::Role::Admin).await?;
    log_in(client, base, &name).await
}

/// Two tables `account` plays at, running.
async fn running_tables(
    client: &reqwest::Client,
    base: &str,
    account: &Player,
    other: &Player,
) -> Result<(), Error> {
    let table = json!({"ruleset": "classique", "seats": 2});
    for _ in 0..2 {
        started_table(client, base, &table, &account.token, &other.token).await?;
    }
    Ok(())
}

/// A move's end and its latency.
type Timed = (Instant, f64);

/// Plays random legal moves on a table of its own until `stop`: each
/// move's end and latency.
async fn mover(
    client: reqwest::Client,
    base: String,
    players: [Player; 2],
    stop: Arc<AtomicBool>,
    seed: u64,
) -> Result<Vec<Timed>, Error> {
    let mut rng = StdRng::seed_from_u64(seed);
    let table =
        json!({"ruleset": "classique", "options": {"rounds": 1000, "target": 100000}, "seats": 2});
    let id = started_table(&client, &base, &table, &players[0].token, &players[1].token).await?;
    let mut timed = Vec::new();
    let mut who = 0;
    while !stop.load(Ordering::Relaxed) {
        if let Some(ms) = next_move(&client, &base, &id, &players, &mut who, &mut rng).await? {
            timed.push((Instant::now(), ms));
        }
    }
    Ok(timed)
}

/// p50 and p99 of latencies.
fn spread(mut ms: Vec<f64>) -> (usize, f64, f64) {
    ms.sort_by(f64::total_cmp);
    (ms.len(), percentile(&ms, 0.50), percentile(&ms, 0.99))
}

pub async fn run(args: ErasureArgs) -> Result<(), Error> {
    let base = args.base_url.trim_end_matches('/').to_owned();
    let client = reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(120))
        .build()?;
    let pool = sqlx::postgres::PgPoolOptions::new()
        .max_connections(2)
        .connect(&args.database_url)
        .await?;
    let admin = admin(&client, &base, &pool).await?;
    let mut rng = StdRng::seed_from_u64(41);
    let mut opponents = Vec::new();
    for i in 0..20 {
        opponents.push(player(&client, &base, &format!("opp{i}")).await?);
    }
    let opponent_ids: Vec<Uuid> = opponents
        .iter()
        .map(|p| p.id.parse())
        .collect::<Result<_, _>>()?;
    let largest = args.games.iter().copied().max().unwrap_or(0);
    for &games in &args.games {
        let account = player(&client, &base, "erased").await?;
        let id: Uuid = account.id.parse()?;
        let filled = Instant::now();
        let items = fill(&pool, id, &opponent_ids, games, &mut rng).await?;
        sqlx::query("ANALYZE").execute(&pool).await?;
        eprintln!(
            "loadgen erasure: {games} games and {items} feed items written in {:.1} s",
            filled.elapsed().as_secs_f64()
        );
        running_tables(&client, &base, &account, &opponents[0]).await?;

        // The largest erasure runs among moves: a calm spell first.
        let movers = if games == largest {
            let stop = Arc::new(AtomicBool::new(false));
            let mut tasks = Vec::new();
            for m in 0..MOVERS {
                let players = [
                    player(&client, &base, &format!("m{m}a")).await?,
                    player(&client, &base, &format!("m{m}b")).await?,
                ];
                tasks.push(tokio::spawn(mover(
                    client.clone(),
                    base.clone(),
                    players,
                    stop.clone(),
                    m as u64,
                )));
            }
            // Warm: every table opened and moving.
            tokio::time::sleep(Duration::from_secs(2)).await;
            Some((stop, tasks, Instant::now()))
        } else {
            None
        };
        let calm_from = Instant::now();
        if movers.is_some() {
            tokio::time::sleep(Duration::from_secs(3)).await;
        }
        let started = Instant::now();
        let res = client
            .delete(format!("{base}/v1/admin/accounts/{id}"))
            .bearer_auth(&admin)
            .send()
            .await?;
        let took = started.elapsed();
        if res.status() != 204 {
            return Err(format!("erasure: {} {}", res.status(), res.text().await?).into());
        }
        println!(
            "erasure games={games} running=2 feed_items={items} ms={:.0}",
            took.as_secs_f64() * 1000.0
        );
        if let Some((stop, tasks, _)) = movers {
            let ended = Instant::now();
            // The moves that ended while it ran, and a little after (a
            // move held up by it ends after it).
            tokio::time::sleep(Duration::from_millis(200)).await;
            stop.store(true, Ordering::Relaxed);
            let (mut calm, mut during) = (Vec::new(), Vec::new());
            for task in tasks {
                for (at, ms) in task.await?? {
                    if at >= calm_from && at < started {
                        calm.push(ms);
                    } else if at >= started && at <= ended + Duration::from_millis(200) {
                        during.push(ms);
                    }
                }
            }
            let (calm_n, calm_50, calm_99) = spread(calm);
            let (during_n, during_50, during_99) = spread(during);
            println!(
                "erasure-moves movers={MOVERS} calm_moves={calm_n} calm_p50_ms={calm_50:.1} \
                 calm_p99_ms={calm_99:.1} during_moves={during_n} during_p50_ms={during_50:.1} \
                 during_p99_ms={during_99:.1}"
            );
        }
    }
    Ok(())
}
