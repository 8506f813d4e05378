//! What the server does on a table by itself (docs/RULES.md §7): when a
//! seat's deadline passes, its timeout move (D38); when an away or resigned
//! seat is on turn, its move by the stand-in bot (D39, D40); when quick
//! play's wait is over, its bots (docs/API.md "Finding a game"); when 80 %
//! of a turn's clock is gone, the turn's alarm (`turn_ending` in its
//! player's feed: `game_tables.turn_ending_at`, rung once by one statement
//! that clears it, [`TableService::ring_turn_endings`]). And the feeds'
//! items past their retention are pruned.
//!
//! When it is due lives in PostgreSQL (`game_tables.due_at`), set by the
//! statement that appends the events that make it so (see
//! `domain::Table::due_after`), not in a process's memory. Every server
//! process looks for due tables at the next deadline to come, and every
//! `HUIT_DUE_POLL_MS` at the latest, and fires each one
//! with an ordinary append at the version that made it due: should a move
//! come first, or another process fire it first, the append meets another
//! version and does nothing. So a due table is fired once, by any process,
//! also after a crash or a restart.
//!
//! A timeout is cheap and fired in the loop. The server's move for a seat
//! may be a bot's search (tens of milliseconds, and waiting for the search
//! budget under a crowd of bots, see [`crate::searches`]): it runs in a task
//! of its own, so that the loop and the other tables' deadlines never wait
//! for it; a table whose move is under way in this process is not fired
//! again meanwhile.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use domain::{Table, TableCommand};
use futures_util::StreamExt;
use rand::Rng;
use sqlx::PgPool;
use tokio::time::Instant;
use uuid::Uuid;

use crate::dealer;
use crate::metric_names::{DEADLINES_DUE, DEADLINES_FIRED, DEADLINES_PENDING, DEADLINE_LATENESS};
use crate::service_error::ServiceError;
use crate::table_service::TableService;
use crate::webhooks;
use store::chain;
use store::due::DueTable;

/// Due tables read at a time.
const BATCH: i64 = 256;
/// Due tables fired at once.
const CONCURRENT: usize = 64;

/// How often the feeds are pruned (or every retention period, if shorter).
const PRUNE_EVERY: Duration = Duration::from_secs(60);
/// Feed items deleted per statement when pruning.
const PRUNE_BATCH: i64 = 10_000;

/// Looks for due tables and fires them, and rings the turns' alarms, until
/// the process ends: at the next deadline this process knows of, or every
/// `every` at the latest (a deadline another process sets, or one set
/// meanwhile, is seen at the next look); prunes the feed items older than
/// `retention`.
pub fn spawn(
    tables: Arc<TableService>,
    pool: PgPool,
    every: Duration,
    retention: Duration,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let moving = Moving::default();
        let every = every.max(Duration::from_millis(10));
        let mut pruned = Instant::now();
        let mut next = Instant::now();
        loop {
            tokio::time::sleep_until(next).await;
            let looked = Instant::now();
            ring(&tables).await;
            if pruned.elapsed() >= PRUNE_EVERY.min(retention) {
                pruned = Instant::now();
                prune(&pool, retention).await;
            }
            fire_due(&tables, &pool, &moving).await;
            next = wake_at(&pool, looked + every).await;
        }
    })
}

/// Fires everything due now, a batch at a time, concurrently: the log
/// writer gathers their appends into few statements. A bounded number of
/// batches per look, should some keep failing.
async fn fire_due(tables: &Arc<TableService>, pool: &PgPool, moving: &Moving) {
    for _ in 0..16 {
        let underway = moving.underway();
        let due = match store::due::due(pool, BATCH, &underway).await {
            Ok(due) => due,
            Err(e) => {
                tracing::warn!(error = %e, "could not read the due tables");
                return;
            }
        };
        let full = due.len() as i64 == BATCH;
        futures_util::stream::iter(due)
            .for_each_concurrent(CONCURRENT, |table| fire(tables, pool, moving, table))
            .await;
        if !full {
            return;
        }
    }
}

/// When to look again: at the next deadline or alarm to come, if it comes
/// before `latest`.
async fn wake_at(pool: &PgPool, latest: Instant) -> Instant {
    match store::due::next_due(pool).await {
        Ok(Some(at)) => {
            let wait = (at - chrono::Utc::now()).to_std().unwrap_or_default();
            latest.min(Instant::now() + wait)
        }
        Ok(None) => latest,
        Err(e) => {
            tracing::warn!(error = %e, "could not read the next deadline");
            latest
        }
    }
}

/// Rings every turn's alarm due now, a batch at a time.
async fn ring(tables: &TableService) {
    for _ in 0..16 {
        match tables.ring_turn_endings(BATCH).await {
            Ok(rung) => {
                metrics::counter!(DEADLINES_FIRED, "kind" => "turn_ending").increment(rung as u64);
                if rung < BATCH as usize {
                    return;
                }
            }
            Err(e) => {
                tracing::warn!(error = %e, "could not ring the turns' alarms");
                return;
            }
        }
    }
}

/// Deletes the feed items older than `retention`, a batch at a time, but
/// those whose webhook or a push is still to be delivered: those are
/// failed (and deleted at the next pass, admins seeing them failed
/// meanwhile).
async fn prune(pool: &PgPool, retention: Duration) {
    let before = chrono::Utc::now() - chrono::Duration::from_std(retention).unwrap_or_default();
    let pruned = store::in_batches(PRUNE_BATCH, || {
        store::feed::prune(pool, before, PRUNE_BATCH)
    });
    if let Err(e) = pruned.await {
        tracing::warn!(error = %e, "could not prune the feeds");
    }
    webhooks::expire(pool, before, PRUNE_BATCH).await;
    crate::push::expire(pool, before, PRUNE_BATCH).await;
}

/// What the server does on a due table.
#[derive(Debug)]
enum Act {
    /// The move of the seat nobody present holds, with this seed, decided
    /// on this copy of the table.
    PlayFor { seed: u32, table: Box<Table> },
    /// A command of the server's, at once: the seat on turn's timeout, or
    /// quick play's bots; and its kind, for the metrics.
    Command(TableCommand, &'static str),
}

/// What the server does on a due table, if anything.
fn act_for(table: &Table, due_at: chrono::DateTime<chrono::Utc>) -> Option<Act> {
    if table.status() == domain::Status::Waiting {
        return table.lobby.bots_after.map(|_| {
            let client_seeds = dealer::client_seeds(table.seats);
            Act::Command(TableCommand::FillWithBots { client_seeds }, "bots_after")
        });
    }
    if table.automatic().is_some() {
        return Some(Act::PlayFor {
            seed: rand::thread_rng().gen(),
            table: Box::new(table.clone()),
        });
    }
    (table.clock.is_some() && table.must_act().is_some()).then(|| {
        let deadline = chain::format_at(due_at);
        Act::Command(TableCommand::TimeOut { deadline }, "timeout")
    })
}

/// The tables whose server move is under way in this process.
#[derive(Debug, Clone, Default)]
struct Moving(Arc<Mutex<HashSet<Uuid>>>);

/// One table under way, until dropped.
#[derive(Debug)]
struct Underway(Moving, Uuid);

impl Moving {
    /// The tables under way now.
    fn underway(&self) -> Vec<Uuid> {
        let set = self.0.lock().unwrap_or_else(|p| p.into_inner());
        set.iter().copied().collect()
    }

    /// `table` under way; `None` when it is already.
    fn start(&self, table: Uuid) -> Option<Underway> {
        let mut set = self.0.lock().unwrap_or_else(|p| p.into_inner());
        set.insert(table).then(|| Underway(self.clone(), table))
    }
}

impl Drop for Underway {
    fn drop(&mut self) {
        let Underway(Moving(set), table) = self;
        set.lock().unwrap_or_else(|p| p.into_inner()).remove(table);
    }
}

/// Fires one due table at its version: a timeout at once, the server's
/// move for a seat in a task of its own.
async fn fire(tables: &Arc<TableService>, pool: &PgPool, moving: &Moving, due: DueTable) {
    let Some(underway) = moving.start(due.id) else {
        return;
    };
    let act = tables
        .read(due.id, due.version, |l| {
            (l.version() == due.version).then(|| act_for(&l.table, due.due_at))
        })
        .await;
    match act {
        Ok(Some(Some(Act::PlayFor { seed, table }))) => {
            let (tables, pool) = (tables.clone(), pool.clone());
            tokio::spawn(async move {
                let acted = tables.play_for(due.id, *table, seed).await;
                fired(&pool, &due, "server_move", acted).await;
                drop(underway);
            });
        }
        Ok(Some(Some(Act::Command(command, kind)))) => {
            let acted = tables
                .act(due.id, &command, Some(due.version), None, |_, _, _| Ok(()))
                .await
                .map(|_| ());
            fired(pool, &due, kind, acted).await;
        }
        // The table moved on since: its append set what is due now.
        Ok(None) => {}
        Ok(Some(None)) => {
            // Nothing to do at this version (should not happen): not due.
            if let Err(e) = store::due::clear_due(pool, due.id, due.version).await {
                tracing::warn!(table_id = %due.id, error = %e, "could not clear a due table");
            }
        }
        Err(e) => tracing::warn!(table_id = %due.id, error = %e, "could not read a due table"),
    }
}

/// What came of firing `due`, counted and logged.
async fn fired(pool: &PgPool, due: &DueTable, kind: &'static str, acted: Result<(), ServiceError>) {
    match acted {
        Ok(()) => {
            metrics::counter!(DEADLINES_FIRED, "kind" => kind).increment(1);
            let late = (chrono::Utc::now() - due.due_at)
                .to_std()
                .unwrap_or_default();
            metrics::histogram!(DEADLINE_LATENESS).record(late.as_secs_f64());
        }
        Err(ServiceError::VersionConflict { .. }) => {}
        // Quick play's bots would put a player over their bot caps: the
        // table waits for people meanwhile, and its bots come later.
        Err(ServiceError::Limited {
            detail,
            retry_after,
            ..
        }) => {
            tracing::info!(table_id = %due.id, detail, "a due command was put off");
            let secs = retry_after.as_secs_f64();
            if let Err(e) = store::due::postpone(pool, due.id, due.version, secs).await {
                tracing::warn!(table_id = %due.id, error = %e, "could not put off a due table");
            }
        }
        Err(
            refused @ (ServiceError::Rules(_)
            | ServiceError::Conflict { .. }
            | ServiceError::Forbidden { .. }
            | ServiceError::Invalid { .. }),
        ) => {
            tracing::warn!(table_id = %due.id, reason = %refused, "a due command was refused");
            let _ = store::due::clear_due(pool, due.id, due.version).await;
        }
        Err(e) => tracing::warn!(table_id = %due.id, error = %e, "could not fire a due table"),
    }
}

/// The gauges of a scrape: tables the server must act on by itself, in all
/// and due now.
pub async fn gauge(pool: PgPool) {
    match store::due::count_due(&pool).await {
        Ok((pending, due)) => {
            metrics::gauge!(DEADLINES_PENDING).set(pending as f64);
            metrics::gauge!(DEADLINES_DUE).set(due as f64);
        }
        Err(e) => tracing::warn!(error = %e, "metrics: the deadlines could not be counted"),
    }
}
