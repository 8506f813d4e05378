//! The moves of every table of this process, written to the log together.
//!
//! A plain move (no transaction of its own: see [`crate::tables`]) is handed
//! to the [`LogWriter`] once decided and chained. A few writer tasks
//! ([`WRITERS`]) take every move queued meanwhile and append them in ONE
//! statement ([`store::events::append_batch`]): alone, a move is written at
//! once, by itself; under load, the moves of many tables share a statement
//! and a commit, which is what PostgreSQL spends most of its time per move
//! on (parsing, planning, constraint setup, commit, round trips). A move is
//! answered only once its statement has committed, as before.
//!
//! A batch is of distinct tables (a second move of a table waits for the
//! next batch; the table's lock in [`crate::tables`] makes that rare). A
//! statement PostgreSQL refuses wrote nothing, so its moves are written
//! again one by one, each getting its own answer (a duplicate seq is only
//! its own table's conflict); a connection lost mid-statement leaves every
//! move of the batch unknown, and each is answered with that error.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use sqlx::postgres::PgPoolOptions;
use sqlx::PgPool;
use tokio::runtime::Handle;
use tokio::sync::oneshot;

use crate::error::ApiError;
use crate::startup::ping_when_idle;
use crate::store;
use crate::store::events::{Appended, Chained, StoredEvent};

/// How many statements of one process may append at once.
pub const WRITERS: usize = 4;
/// The most tables in one statement.
pub const MAX_BATCH: usize = 64;

type Answer = Result<Vec<StoredEvent>, ApiError>;

/// Appends the moves of every table of this process; cheap to clone.
#[derive(Debug, Clone)]
pub struct LogWriter {
    pool: PgPool,
    queue: Arc<Mutex<Queue>>,
    /// Where the writer tasks run: the runtime that made the writer (the
    /// process's main one), not the actix worker of the move that starts
    /// a task (a worker's tasks stop with it, and wait while it computes).
    runtime: Handle,
}

#[derive(Debug, Default)]
struct Queue {
    waiting: VecDeque<(Chained, oneshot::Sender<Answer>)>,
    /// Writer tasks running.
    writers: usize,
}

impl Queue {
    /// The first waiting moves, at most [`MAX_BATCH`], of distinct tables.
    fn take_batch(&mut self) -> Vec<(Chained, oneshot::Sender<Answer>)> {
        let mut batch: Vec<(Chained, oneshot::Sender<Answer>)> = Vec::new();
        let mut later = VecDeque::new();
        while let Some(item) = self.waiting.pop_front() {
            let table = item.0.table_id;
            if batch.len() < MAX_BATCH && batch.iter().all(|(c, _)| c.table_id != table) {
                batch.push(item);
            } else {
                later.push_back(item);
            }
        }
        self.waiting = later;
        batch
    }
}

impl LogWriter {
    /// A writer with connections of its own ([`WRITERS`]), to the database
    /// of `pool`, with its settings; its tasks run on the current runtime.
    ///
    /// They use generic plans only: the append statement takes its rows as
    /// arrays whose lengths vary from batch to batch, and PostgreSQL, whose
    /// plans for a batch's own lengths always look cheaper than a generic
    /// one, would otherwise plan it again on every execution (about 0.4 ms
    /// of PostgreSQL's time each, measured with `pg_stat_statements`).
    pub fn new(pool: &PgPool) -> Self {
        let options = (*pool.connect_options())
            .clone()
            .options([("plan_cache_mode", "force_generic_plan")]);
        let pool = ping_when_idle(
            PgPoolOptions::new()
                .max_connections(WRITERS as u32)
                .acquire_timeout(pool.options().get_acquire_timeout()),
        )
        .connect_lazy_with(options);
        Self {
            pool,
            queue: Arc::default(),
            runtime: Handle::current(),
        }
    }

    /// Appends a table's chained events (with the moves of other tables
    /// waiting meanwhile): the events as stored once committed, or why not
    /// ([`store::events::append_one`]'s answers).
    pub async fn append(&self, chained: Chained) -> Answer {
        if chained.events.is_empty() {
            return Ok(Vec::new());
        }
        let (reply, answer) = oneshot::channel();
        let start = {
            let mut q = self.queue.lock().unwrap_or_else(|p| p.into_inner());
            q.waiting.push_back((chained, reply));
            q.writers < WRITERS && {
                q.writers += 1;
                true
            }
        };
        if start {
            self.runtime.spawn(self.clone().write());
        }
        answer
            .await
            .unwrap_or_else(|_| Err(ApiError::internal("the log writer stopped")))
    }

    /// A writer task: batches until none is waiting.
    async fn write(self) {
        let mut shift = Shift {
            queue: &self.queue,
            over: false,
        };
        loop {
            let batch = {
                let mut q = self.queue.lock().unwrap_or_else(|p| p.into_inner());
                if q.waiting.is_empty() {
                    q.writers -= 1;
                    shift.over = true;
                    return;
                }
                q.take_batch()
            };
            let (chained, replies): (Vec<Chained>, Vec<_>) = batch.into_iter().unzip();
            let answers = self.store(chained).await;
            for (reply, answer) in replies.into_iter().zip(answers) {
                // A move whose request is gone is stored all the same.
                let _ = reply.send(answer);
            }
        }
    }

    /// One statement for the batch; its answers in the batch's order.
    async fn store(&self, batch: Vec<Chained>) -> Vec<Answer> {
        let batch = match <[Chained; 1]>::try_from(batch) {
            Ok([chained]) => return vec![self.store_alone(chained).await],
            Err(batch) => batch,
        };
        let done = async {
            let mut conn = self.pool.acquire().await?;
            let refs: Vec<&Chained> = batch.iter().collect();
            store::events::append_batch(&mut conn, &refs).await
        }
        .await;
        let mut answers = Vec::with_capacity(batch.len());
        match done {
            Ok(done) => {
                tracing::debug!(tables = batch.len(), "moves appended together");
                for (chained, done) in batch.into_iter().zip(done) {
                    answers.push(match done {
                        Appended::Stored => Ok(chained.events),
                        Appended::NotAtVersion => Err(store::events::not_appended(
                            &self.pool,
                            chained.table_id,
                            chained.expected_version,
                        )
                        .await),
                    });
                }
            }
            Err(sqlx::Error::Database(db)) => {
                tracing::info!(error = %db, tables = batch.len(), "a batch refused; each move alone");
                for chained in batch {
                    answers.push(self.store_alone(chained).await);
                }
            }
            Err(e) => {
                // Stored or not: nobody knows. Every move of the batch is
                // answered with the error (a 503 when the database is away).
                tracing::warn!(error = %e, tables = batch.len(), "a batch of moves failed");
                let unavailable = matches!(ApiError::from(e), ApiError::ServiceUnavailable(_));
                for _ in &batch {
                    answers.push(Err(if unavailable {
                        ApiError::ServiceUnavailable(None)
                    } else {
                        ApiError::internal("appending a batch of moves failed")
                    }));
                }
            }
        }
        answers
    }

    async fn store_alone(&self, chained: Chained) -> Answer {
        let mut conn = self.pool.acquire().await?;
        store::events::append_one(&mut conn, chained).await
    }
}

/// A writer task's place among the [`WRITERS`]: given back when the task
/// ends otherwise than by finding the queue empty (a panic, its runtime
/// stopping), so that the next move starts a writer again.
struct Shift<'a> {
    queue: &'a Mutex<Queue>,
    over: bool,
}

impl Drop for Shift<'_> {
    fn drop(&mut self) {
        if !self.over {
            let mut q = self.queue.lock().unwrap_or_else(|p| p.into_inner());
            q.writers -= 1;
        }
    }
}
