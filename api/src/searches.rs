//! The server's budget for bot searches (docs/API.md "Keeping tables
//! moving"): the `strong` level searches for tens of milliseconds a move, so
//! at most `threads` such searches run at once, on the blocking pool, never
//! on a thread that serves requests and never while holding a table's lock.
//! A search that had to wait is given fewer playouts the more searches still
//! wait behind it: a crowd of bots costs a bounded share of the CPU, and is
//! answered sooner, searching less. The playouts given are recorded in
//! `bot_moved`, so the audit replays each move exactly.
//!
//! Levels that do not search (`random`, `basic`: microseconds) never wait
//! here: an away or resigned person's stand-in is not queued behind bots.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use domain::bots::Playouts;
use domain::{Table, TableCommand, TableError, TableEvent};
use tokio::sync::Semaphore;

use crate::dealer::{self, Dealer};
use crate::metric_names;
use crate::service_error::ServiceError;

/// A bot's move decided on a copy of its table: the table after it, and
/// the command's events (or why it was refused).
#[derive(Debug)]
pub struct Searched {
    pub table: Table,
    pub events: Result<Vec<TableEvent>, TableError>,
}

/// The searches of one process.
#[derive(Debug, Clone)]
pub struct SearchBudget {
    permits: Arc<Semaphore>,
    /// Searches waiting for a permit.
    queued: Arc<AtomicUsize>,
}

impl SearchBudget {
    /// At most `threads` searches at once (at least one).
    pub fn new(threads: usize) -> Self {
        Self {
            permits: Arc::new(Semaphore::new(threads.max(1))),
            queued: Arc::default(),
        }
    }

    /// Half the CPUs of this machine, at least one: the other half serves
    /// people.
    pub fn default_threads() -> usize {
        std::thread::available_parallelism().map_or(1, |n| n.get() / 2)
    }

    /// The move of the seat the server plays on `table` (its bot's, or the
    /// stand-in's), with `seed`, decided off the request threads: within
    /// the budget for a level that searches. The command as decided (its
    /// playouts) and what it did to the copy.
    pub(crate) async fn decide(
        &self,
        mut table: Table,
        dealer: Option<Dealer>,
        seed: u32,
    ) -> Result<(TableCommand, Searched), ServiceError> {
        let searches = table.automatic_level().is_some_and(|l| l.searches());
        let (_permit, playouts) = if searches {
            self.queued.fetch_add(1, Ordering::SeqCst);
            let permit = self.permits.clone().acquire_owned().await;
            let behind = self.queued.fetch_sub(1, Ordering::SeqCst) - 1;
            let permit = permit.map_err(ServiceError::internal)?;
            (Some(permit), under_pressure(behind))
        } else {
            (None, Playouts::FULL)
        };
        let command = TableCommand::PlayFor { seed, playouts };
        let decided = tokio::task::spawn_blocking(move || {
            let reason = table.automatic().map_or("none", |(_, r)| r.as_str());
            let started = std::time::Instant::now();
            let events = dealer::execute(dealer.as_ref(), &mut table, &command);
            ::metrics::histogram!(metric_names::BOT_DECISION, "reason" => reason)
                .record(started.elapsed().as_secs_f64());
            (command, Searched { table, events })
        })
        .await;
        decided.map_err(|_| ServiceError::internal("a bot's decision failed"))
    }
}

/// The playouts of a search with `behind` others still waiting: the full
/// search halved for each of them, never below [`Playouts::LEAST`].
pub fn under_pressure(behind: usize) -> Playouts {
    let halvings = behind.min(16) as u32;
    Playouts::new(Playouts::FULL.get() >> halvings)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_search_gets_less_the_more_wait_behind_it() {
        assert_eq!(under_pressure(0), Playouts::FULL);
        assert_eq!(under_pressure(1).get(), Playouts::FULL.get() / 2);
        assert!(under_pressure(2) < under_pressure(1));
        assert_eq!(under_pressure(1000), Playouts::LEAST);
    }
}
