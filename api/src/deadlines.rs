//! What the server does on a table by itself (docs/RULES.md §7): when a
//! seat's deadline passes, its timeout move (D38); when an away or resigned
//! seat is on turn, its move by the stand-in bot (D39, D40).
//!
//! When it is due lives in PostgreSQL (`game_tables.due_at`), set by the
//! statement that appends the events that make it so (see
//! `table_service::commands::due`), not in a process's memory. Every server
//! process looks for due tables every `HUIT_DUE_POLL_MS` and fires each one
//! with an ordinary append at the version that made it due: should a move
//! come first, or another process fire it first, the append meets another
//! version and does nothing. So a due table is fired once, by any process,
//! also after a crash or a restart.

use std::time::Duration;

use actix_web::web;
use domain::{Table, TableCommand};
use futures_util::StreamExt;
use rand::Rng;
use sqlx::PgPool;

use crate::chain;
use crate::error::ApiError;
use crate::metrics;
use crate::store;
use crate::store::tables::DueTable;
use crate::table_service::TableService;

/// Due tables read at a time.
const BATCH: i64 = 256;
/// Due tables fired at once.
const CONCURRENT: usize = 64;

/// Looks for due tables every `every` and fires them, until the process
/// ends.
pub fn spawn(
    tables: web::Data<TableService>,
    pool: PgPool,
    every: Duration,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut ticks = tokio::time::interval(every.max(Duration::from_millis(10)));
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            ticks.tick().await;
            // Everything due now, a batch at a time, fired concurrently:
            // the log writer gathers their appends into few statements. A
            // bounded number of batches per look, should some keep failing.
            for _ in 0..16 {
                let due = match store::tables::due(&pool, BATCH).await {
                    Ok(due) => due,
                    Err(e) => {
                        tracing::warn!(error = %e, "could not read the due tables");
                        break;
                    }
                };
                let full = due.len() as i64 == BATCH;
                futures_util::stream::iter(due)
                    .for_each_concurrent(CONCURRENT, |table| {
                        let (tables, pool) = (&tables, &pool);
                        async move { fire(tables, pool, &table).await }
                    })
                    .await;
                if !full {
                    break;
                }
            }
        }
    })
}

/// The command the server gives a due table, if any: the move of the seat
/// nobody present holds, else the timeout of the seat on turn.
pub fn command_for(table: &Table, due_at: chrono::DateTime<chrono::Utc>) -> Option<TableCommand> {
    if table.automatic().is_some() {
        return Some(TableCommand::PlayFor {
            seed: rand::thread_rng().gen(),
        });
    }
    (table.clock.is_some() && table.must_act().is_some()).then(|| TableCommand::TimeOut {
        deadline: chain::format_at(due_at),
    })
}

/// Fires one due table at its version.
async fn fire(tables: &TableService, pool: &PgPool, due: &DueTable) {
    let command = tables
        .read(due.id, due.version, |l| {
            (l.version() == due.version).then(|| command_for(&l.table, due.due_at))
        })
        .await;
    let command = match command {
        // The table moved on since: its append set what is due now.
        Ok(None) => return,
        Ok(Some(command)) => command,
        Err(e) => {
            tracing::warn!(table_id = %due.id, error = %e, "could not read a due table");
            return;
        }
    };
    let Some(command) = command else {
        // Nothing to do at this version (should not happen): not due.
        if let Err(e) = store::tables::clear_due(pool, due.id, due.version).await {
            tracing::warn!(table_id = %due.id, error = %e, "could not clear a due table");
        }
        return;
    };
    let acted = tables
        .act(due.id, &command, Some(due.version), None, |_, _, _| Ok(()))
        .await;
    match acted {
        Ok(_) => {
            let kind = match command {
                TableCommand::TimeOut { .. } => "timeout",
                _ => "server_move",
            };
            ::metrics::counter!(metrics::DEADLINES_FIRED, "kind" => kind).increment(1);
            let late = (chrono::Utc::now() - due.due_at)
                .to_std()
                .unwrap_or_default();
            ::metrics::histogram!(metrics::DEADLINE_LATENESS).record(late.as_secs_f64());
        }
        Err(ApiError::VersionConflict { .. }) => {}
        Err(ApiError::Problem { code, detail, .. }) => {
            tracing::warn!(table_id = %due.id, ?code, detail, "a due command was refused");
            let _ = store::tables::clear_due(pool, due.id, due.version).await;
        }
        Err(e) => tracing::warn!(table_id = %due.id, error = %e, "could not fire a due table"),
    }
}
