//! `loadgen clocks`: how late the server fires deadlines, and at what cost
//! while it waits (docs/RULES.md D37, D38). Opens T two-player tables with
//! a clock of S seconds through the API and lets nobody move; once every
//! first deadline has passed (and a margin), reads the log: each
//! `turn_timed_out` against its recorded deadline (how late it came), and
//! whether any deadline fired twice. Prints one line:
//! `clocks tables=<t> fired=<n> late_p50_ms=<a> late_p99_ms=<b> late_max_ms=<c> fired_twice=<d> server_cpu_share=<x> postgres_cpu_share=<y>`
//! where the CPU shares are the server process's (`--server-pid`) and
//! PostgreSQL's (its postmaster's children, `--postmaster-pid`) over the
//! wait, as a fraction of one core: when deadlines are late, whether the
//! server or the database was busy, or both waited.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::history_cost::{player, started_table};
use crate::load::measure::{PostgresTicks, ProcStat, USER_HZ};
use crate::Error;

pub struct ClockArgs {
    pub base_url: String,
    pub database_url: String,
    pub tables: usize,
    pub turn_seconds: u64,
    pub server_pid: Option<u32>,
    /// PostgreSQL's postmaster, for its processes' CPU share while the
    /// server waits.
    pub postmaster_pid: Option<u32>,
}

/// The CPU time of a process so far (`/proc/<pid>/stat`, clock ticks).
pub(crate) fn cpu_ticks(pid: u32) -> Option<u64> {
    Some(ProcStat::of(pid)?.ticks)
}

/// A CPU share as printed: three decimals, or `unknown`.
fn share(share: Option<f64>) -> String {
    share.map_or("unknown".to_owned(), |s| format!("{s:.3}"))
}

pub async fn run(args: ClockArgs) -> Result<(), Error> {
    let client = reqwest::Client::builder().no_proxy().build()?;
    let base = args.base_url.trim_end_matches('/');
    let a = player(&client, base, "a").await?.token;
    let b = player(&client, base, "b").await?.token;
    // Long games: the deadlines, not the ends, are measured.
    let table = json!({
        "ruleset": "classique", "seats": 2, "options": {"target": 100000},
        "clock": {"turn_seconds": args.turn_seconds, "away_after": 10}
    });
    let opened = Instant::now();
    for _ in 0..args.tables {
        started_table(&client, base, &table, &a, &b).await?;
    }
    eprintln!(
        "loadgen clocks: {} tables opened in {:.1} s; nobody moves",
        args.tables,
        opened.elapsed().as_secs_f64()
    );
    // Every first deadline passes within turn_seconds of the last start.
    let ticks_before = args.server_pid.and_then(cpu_ticks);
    let postgres_before = args.postmaster_pid.and_then(PostgresTicks::of);
    let waited = Instant::now();
    tokio::time::sleep(Duration::from_secs(args.turn_seconds) + Duration::from_secs(3)).await;
    let wait = waited.elapsed().as_secs_f64();
    let cpu_share = args
        .server_pid
        .and_then(|pid| Some((cpu_ticks(pid)?, ticks_before?)))
        .map(|(after, before)| (after - before) as f64 / USER_HZ / wait);
    let postgres_share = args
        .postmaster_pid
        .and_then(|pid| Some(PostgresTicks::of(pid)?.since(postgres_before.as_ref()?)))
        .map(|ticks| ticks as f64 / USER_HZ / wait);

    let pool = sqlx::PgPool::connect(&args.database_url).await?;
    let rows: Vec<(f64, i64)> = sqlx::query_as(
        r#"SELECT (EXTRACT(EPOCH FROM (at - (data->>'deadline')::timestamptz)) * 1000.0)::float8,
                  count(*) OVER (PARTITION BY table_id, data->>'deadline')
           FROM events WHERE type = 'turn_timed_out'"#,
    )
    .fetch_all(&pool)
    .await?;
    let mut late: Vec<f64> = rows.iter().map(|(ms, _)| *ms).collect();
    late.sort_by(f64::total_cmp);
    let twice = rows.iter().filter(|(_, n)| *n > 1).count();
    let pct = |p: f64| crate::load::measure::percentile(&late, p);
    println!(
        "clocks tables={} fired={} late_p50_ms={:.0} late_p99_ms={:.0} late_max_ms={:.0} fired_twice={twice} server_cpu_share={} postgres_cpu_share={}",
        args.tables,
        late.len(),
        pct(0.50),
        pct(0.99),
        late.last().copied().unwrap_or(0.0),
        share(cpu_share),
        share(postgres_share),
    );
    Ok(())
}
