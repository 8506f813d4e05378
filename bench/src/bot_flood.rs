//! `loadgen bot-flood`: does a crowd of `strong` bots slow people down?
//! Two phases of S seconds each. In both, 64 people play at 32 two-player
//! tables (every move timed over HTTP) and 16 clock tables where nobody
//! moves fire a deadline every `turn_seconds` (how late each fires, read
//! from the log). In the second, one account floods meanwhile: it tries to
//! open and start `flood_tables` tables of 3 seats, two of them `strong`
//! bots, with a 5 s clock it walks away from (after its first timeout it is
//! away and the server plays its seat too). Prints one line per phase:
//! `bot-flood phase=<calm|flood> moves=<n> move_p50_ms=<a> move_p99_ms=<b>
//! late_p50_ms=<c> late_p99_ms=<d> late_max_ms=<e> bot_tables=<started>
//! refused=<429s> bot_moves=<n> playouts_mean=<p> server_cpu_share=<x>`.

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use uuid::Uuid;

use crate::clocks::cpu_ticks;
use crate::history_cost::{body, player, started_table, timed_move, Player};
use crate::load::measure::{percentile, USER_HZ};
use crate::Error;

pub struct FloodArgs {
    pub base_url: String,
    pub database_url: String,
    pub seconds: u64,
    pub turn_seconds: u64,
    pub flood_tables: usize,
    pub server_pid: Option<u32>,
}

/// People playing at two-player tables.
const PEOPLE_TABLES: usize = 32;
/// Tables where nobody moves: deadlines only.
const CLOCK_TABLES: usize = 16;

pub async fn run(args: FloodArgs) -> Result<(), Error> {
    let client = reqwest::Client::builder().no_proxy().build()?;
    let base = args.base_url.trim_end_matches('/').to_owned();
    let pool = sqlx::PgPool::connect(&args.database_url).await?;
    for phase in ["calm", "flood"] {
        let flood = phase == "flood";
        let (a, b) = (
            player(&client, &base, "a").await?,
            player(&client, &base, "b").await?,
        );
        let clock = json!({
            "ruleset": "classique", "seats": 2, "options": {"target": 100000},
            "clock": {"turn_seconds": args.turn_seconds, "away_after": 10}
        });
        let mut clocked = Vec::new();
        for _ in 0..CLOCK_TABLES {
            clocked.push(started_table(&client, &base, &clock, &a.token, &b.token).await?);
        }
        let (bot_tables, refused) = if flood {
            open_flood(&client, &base, args.flood_tables).await?
        } else {
            (Vec::new(), 0)
        };
        let began = chrono::Utc::now();
        let ticks_before = args.server_pid.and_then(cpu_ticks);
        let until = Instant::now() + Duration::from_secs(args.seconds);
        let mut players = Vec::new();
        for _ in 0..PEOPLE_TABLES {
            let (client, base) = (client.clone(), base.clone());
            players.push(tokio::spawn(async move {
                play_until(&client, &base, until).await
            }));
        }
        let mut moves = Vec::new();
        for p in players {
            moves.extend(p.await??);
        }
        let cpu_share = args
            .server_pid
            .and_then(|pid| Some((cpu_ticks(pid)?, ticks_before?)))
            .map(|(after, before)| (after - before) as f64 / USER_HZ / args.seconds as f64);
        moves.sort_by(f64::total_cmp);
        let late = lateness(&pool, &clocked, began).await?;
        let (bot_moves, playouts) = bot_moves(&pool, &bot_tables, began).await?;
        let pct = |v: &[f64], p: f64| percentile(v, p);
        println!(
            "bot-flood phase={phase} moves={} move_p50_ms={:.1} move_p99_ms={:.1} late_p50_ms={:.0} late_p99_ms={:.0} late_max_ms={:.0} bot_tables={} refused={refused} bot_moves={bot_moves} playouts_mean={playouts:.0} server_cpu_share={}",
            moves.len(),
            pct(&moves, 0.50),
            pct(&moves, 0.99),
            pct(&late, 0.50),
            pct(&late, 0.99),
            late.last().copied().unwrap_or(0.0),
            bot_tables.len(),
            cpu_share.map_or("unknown".to_owned(), |s| format!("{s:.2}")),
        );
    }
    Ok(())
}

/// One account tries to open and start `n` tables of two strong bots:
/// the tables started, and how many tries were refused with 429.
async fn open_flood(
    client: &reqwest::Client,
    base: &str,
    n: usize,
) -> Result<(Vec<String>, usize), Error> {
    let flooder = player(client, base, "flood").await?;
    let table = json!({
        "ruleset": "classique", "seats": 3, "options": {"target": 100000},
        "clock": {"turn_seconds": 5, "away_after": 1},
        "bots": [{"level": "strong"}, {"level": "strong"}]
    });
    let (mut started, mut refused) = (Vec::new(), 0);
    for _ in 0..n {
        let res = client
            .post(format!("{base}/v1/tables"))
            .bearer_auth(&flooder.token)
            .json(&table)
            .send()
            .await?;
        if res.status() == 429 {
            refused += 1;
            continue;
        }
        let id = body(res, "open a bot table").await?["id"]
            .as_str()
            .ok_or("a table id")?
            .to_owned();
        let res = client
            .post(format!("{base}/v1/tables/{id}/start"))
            .bearer_auth(&flooder.token)
            .send()
            .await?;
        if res.status() == 429 {
            refused += 1;
            continue;
        }
        body(res, "start a bot table").await?;
        started.push(id);
    }
    Ok((started, refused))
}

/// Two new people play a table until `until`: each move's latency in ms.
async fn play_until(
    client: &reqwest::Client,
    base: &str,
    until: Instant,
) -> Result<Vec<f64>, Error> {
    let people = [
        player(client, base, "p").await?,
        player(client, base, "q").await?,
    ];
    let table = json!({"ruleset": "classique", "seats": 2, "options": {"target": 100000}});
    let id = started_table(client, base, &table, &people[0].token, &people[1].token).await?;
    let mut latencies = Vec::new();
    let mut who = 0;
    while Instant::now() < until {
        let view = view(client, base, &id, &people[who]).await?;
        if view["current_seat"] != view["my_seat"] {
            who = 1 - who;
            continue;
        }
        let Some(mv) = view["legal_moves"]
            .as_array()
            .and_then(|m| m.iter().find(|m| m["type"] != "challenge"))
        else {
            break;
        };
        latencies.push(timed_move(client, base, &id, &people[who], &view, mv).await?);
    }
    Ok(latencies)
}

async fn view(client: &reqwest::Client, base: &str, id: &str, p: &Player) -> Result<Value, Error> {
    let url = format!("{base}/v1/tables/{id}/view");
    body(client.get(url).bearer_auth(&p.token).send().await?, "view").await
}

fn uuids(ids: &[String]) -> Vec<Uuid> {
    ids.iter().filter_map(|id| id.parse().ok()).collect()
}

/// How late (ms) each deadline of `tables` fired since `since`, sorted.
async fn lateness(
    pool: &sqlx::PgPool,
    tables: &[String],
    since: chrono::DateTime<chrono::Utc>,
) -> Result<Vec<f64>, Error> {
    let mut late: Vec<f64> = sqlx::query_scalar(
        r#"SELECT (EXTRACT(EPOCH FROM (at - (data->>'deadline')::timestamptz)) * 1000.0)::float8
           FROM events WHERE type = 'turn_timed_out' AND table_id = ANY($1) AND at >= $2"#,
    )
    .bind(uuids(tables))
    .bind(since)
    .fetch_all(pool)
    .await?;
    late.sort_by(f64::total_cmp);
    Ok(late)
}

/// The bots' moves at `tables` since `since`, and their mean playouts.
async fn bot_moves(
    pool: &sqlx::PgPool,
    tables: &[String],
    since: chrono::DateTime<chrono::Utc>,
) -> Result<(i64, f64), Error> {
    let (n, mean): (i64, Option<f64>) = sqlx::query_as(
        r#"SELECT count(*), avg((data->>'playouts')::float8)
           FROM events WHERE type = 'bot_moved' AND table_id = ANY($1) AND at >= $2"#,
    )
    .bind(uuids(tables))
    .bind(since)
    .fetch_one(pool)
    .await?;
    Ok((n, mean.unwrap_or(0.0)))
}
