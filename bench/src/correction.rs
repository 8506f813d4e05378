//! `loadgen correction-cost`: what one correction of a game's result
//! costs when many rated games of its ruleset ended after it (docs/API.md
//! "Corrections and sanctions"). On a database `loadgen ratings-fill` wrote
//! and `huit ratings rebuild` rated, the game of the most-played ruleset
//! with `--later` rated games after it is voided as a correction re-rates
//! it (`api::ratings::record`: the game and every later one, from the
//! ratings just before it), in a transaction rolled back, `--runs` times.
//! Meanwhile another connection rates the ruleset's last game as the move
//! ending it does (`api::ratings::record` of its end, rolled back too),
//! and times it: a move must not wait for the correction (its rating is
//! deferred to the rater instead). Prints
//!
//! `correction later_games=<n> rerate_p50_ms=<a> rerate_max_ms=<b> end_p50_ms=<c> end_max_ms=<d> runs=<r>`
//!
//! With `--base-url` (a server on the same database), moves are then played
//! there (`loadgen run`'s 16 tables × 4 players of `classique`, the
//! ruleset re-rated when it is the most played) for `--seconds` alone,
//! then as long again while the same correction is re-rated over and over
//! (rolled back each time), and it prints
//!
//! `correction-moves seconds=<s> calm_moves_per_sec=<a> calm_p99_ms=<b> during_moves_per_sec=<c> during_p99_ms=<d> corrections=<n> errors=<e>`

use std::time::{Duration, Instant};

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use api::ratings::{Ended, Rerate};
use sqlx::PgPool;
use uuid::Uuid;

use crate::load::measure::percentile;
use crate::Error;

/// The arguments of `loadgen correction-cost`.
#[derive(clap::Args)]
pub struct CorrectionArgs {
    #[arg(long, env = "DATABASE_URL")]
    database_url: String,
    /// Rated games of its ruleset after the corrected one.
    #[arg(long, default_value_t = 10_000)]
    later: i64,
    #[arg(long, default_value_t = 5)]
    runs: usize,
    /// A server on the same database, to play moves on meanwhile.
    #[arg(long)]
    base_url: Option<String>,
    /// How long the moves are played, alone and then with corrections.
    #[arg(long, default_value_t = 15)]
    seconds: u64,
}

/// The most-played ruleset's game with `later` rated games after it.
async fn game_with_later(pool: &PgPool, later: i64) -> Result<(Uuid, String), Error> {
    let found: Option<(Uuid, String)> = sqlx::query_as(
        "WITH busiest AS (SELECT ruleset FROM rated_games GROUP BY ruleset ORDER BY count(*) DESC LIMIT 1) \
         SELECT g.table_id, g.ruleset FROM rated_games g JOIN busiest USING (ruleset) \
         ORDER BY g.ended_at DESC, g.table_id DESC OFFSET $1 LIMIT 1",
    )
    .bind(later)
    .fetch_optional(pool)
    .await?;
    found.ok_or_else(|| format!("no ruleset has {later} rated games after one of its games").into())
}

/// The ruleset's last rated game, as its end rates it.
async fn last_game(pool: &PgPool, ruleset: &str) -> Result<Ended, Error> {
    let (table_id,): (Uuid,) = sqlx::query_as(
        "SELECT table_id FROM rated_games WHERE ruleset = $1 \
         ORDER BY ended_at DESC, table_id DESC LIMIT 1",
    )
    .bind(ruleset)
    .fetch_one(pool)
    .await?;
    let events = store::ratings::rating_events(pool, &[table_id]).await?;
    let rated = api::ratings::rated_in(events)?.pop();
    Ok(rated.ok_or("a rated game is rated")?)
}

pub async fn run(args: CorrectionArgs) -> Result<(), Error> {
    let pool = crate::ratings::pool(&args.database_url).await?;
    let (table_id, ruleset) = game_with_later(&pool, args.later).await?;
    let void = Rerate::Corrected {
        table_id,
        ruleset: ruleset.clone(),
        game: None,
    };
    let last = Rerate::Ended(last_game(&pool, &ruleset).await?);
    let (mut rerates, mut ends) = (Vec::new(), Vec::new());
    for _ in 0..args.runs {
        let mut tx = pool.begin().await?;
        let started = Instant::now();
        // A game's end comes a moment after the correction took the
        // ruleset's lock.
        let end = {
            let (pool, last) = (pool.clone(), last.clone());
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(20)).await;
                let mut end = pool.begin().await?;
                let started = Instant::now();
                api::ratings::record(&mut end, &last).await?;
                let took = started.elapsed();
                end.rollback().await?;
                Ok::<_, Error>(took)
            })
        };
        api::ratings::record(&mut tx, &void).await?;
        rerates.push(started.elapsed());
        tx.rollback().await?;
        ends.push(end.await??);
    }
    // Milliseconds, sorted: the median and the largest.
    let sorted = |v: &[Duration]| {
        let mut ms: Vec<f64> = v.iter().map(|d| d.as_secs_f64() * 1e3).collect();
        ms.sort_by(f64::total_cmp);
        (percentile(&ms, 0.5), ms.last().copied().unwrap_or(0.0))
    };
    let (rerate_p50, rerate_max) = sorted(&rerates);
    let (end_p50, end_max) = sorted(&ends);
    println!(
        "correction later_games={} rerate_p50_ms={rerate_p50:.1} rerate_max_ms={rerate_max:.1} \
         end_p50_ms={end_p50:.1} end_max_ms={end_max:.1} runs={}",
        args.later, args.runs
    );
    if let Some(base_url) = &args.base_url {
        moves_meanwhile(&pool, base_url, args.seconds, &void).await?;
    }
    Ok(())
}

/// Moves on the server at `base_url` for `seconds` alone, then as long
/// again while `correction` is re-rated over and over, each time rolled
/// back: their rate and p99 both ways.
async fn moves_meanwhile(
    pool: &PgPool,
    base_url: &str,
    seconds: u64,
    correction: &Rerate,
) -> Result<(), Error> {
    use crate::load::{play_load, RunArgs};
    let calm = play_load(RunArgs::against(base_url, seconds, 1)).await?;
    let (stop, done) = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicUsize::new(0)),
    );
    let corrections = {
        let (pool, correction) = (pool.clone(), correction.clone());
        let (stop, done) = (stop.clone(), done.clone());
        tokio::spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                let mut tx = pool.begin().await?;
                api::ratings::record(&mut tx, &correction).await?;
                tx.rollback().await?;
                done.fetch_add(1, Ordering::Relaxed);
            }
            Ok::<_, Error>(())
        })
    };
    let during = play_load(RunArgs::against(base_url, seconds, 2)).await;
    stop.store(true, Ordering::Relaxed);
    corrections.await??;
    let during = during?;
    println!(
        "correction-moves seconds={seconds} calm_moves_per_sec={:.0} calm_p99_ms={:.2} \
         during_moves_per_sec={:.0} during_p99_ms={:.2} corrections={} errors={}",
        calm.moves_per_sec,
        calm.p99_ms,
        during.moves_per_sec,
        during.p99_ms,
        done.load(Ordering::Relaxed),
        calm.errors + during.errors
    );
    Ok(())
}
