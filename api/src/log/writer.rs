//! The moves of every table of this process, written to the log together.
//!
//! A plain move (no transaction of its own: [`super::Durability::Batched`]) is
//! handed to the [`LogWriter`] once decided and chained. A writer task
//! ([`WRITERS`], a [`Batcher`]) takes every move queued meanwhile, on a
//! connection of its own ([`Held`]), and appends them in ONE
//! statement ([`store::events::insert_batch`]): alone, a move is written at
//! once, by itself; under load, the moves of many tables share a statement
//! and a commit, which is what PostgreSQL spends most of its time per move
//! on (parsing, planning, constraint setup, commit, round trips). A move is
//! answered only once its statement has committed.
//!
//! A batch is of distinct tables (a second move of a table waits for the
//! next batch; the table's lock in [`crate::table_service`] makes that rare). A
//! statement PostgreSQL refuses wrote nothing, so its moves are written
//! again one by one, each getting its own answer (a duplicate seq is only
//! its own table's conflict); a connection lost mid-statement leaves every
//! move of the batch unknown, and each is answered with that error.

use std::collections::VecDeque;

use sqlx::PgPool;

use super::{ChainedAppend, StoredEvent};
use crate::log::batcher::{Batcher, Waiting, Work};
use store::events::{self, Appended};
use store::feed::Outbox;
use store::held::{self, Held};
use store::StoreError;

/// How many statements of one process may append at once. One: the moves
/// that arrive while a statement runs all go into the next, so the
/// batches are as large as the load makes them and PostgreSQL's fixed cost
/// per statement is shared by the most moves (the figures against two and
/// four writers: BENCHMARKS.md, sixth to eighth passes). Every move of the
/// process waits behind the statement running: when it waits on the disk,
/// a second one would flush the same WAL; when it waits on a table's row
/// that another process's transaction holds, for that transaction's end.
pub const WRITERS: usize = 1;
/// The most tables in one statement.
pub const MAX_BATCH: usize = 64;

type Answer = Result<Vec<StoredEvent>, StoreError>;

/// Appends the moves of every table of this process; cheap to clone.
#[derive(Debug, Clone)]
pub struct LogWriter {
    batcher: Batcher<Appends>,
}

/// The writer's work: batches of moves, on connections of its own.
#[derive(Debug)]
struct Appends {
    held: Held,
    outbox: Outbox,
}

impl Work for Appends {
    type Item = ChainedAppend;
    type Answer = Answer;
    const TASKS: usize = WRITERS;

    /// The first waiting moves, at most [`MAX_BATCH`], of distinct tables.
    fn take(waiting: &mut VecDeque<Waiting<Self>>, batch: &mut Vec<Waiting<Self>>) {
        let mut later = VecDeque::new();
        while let Some(item) = waiting.pop_front() {
            let table = item.0.table_id;
            if batch.len() < MAX_BATCH && batch.iter().all(|(c, _)| c.table_id != table) {
                batch.push(item);
            } else {
                later.push_back(item);
            }
        }
        *waiting = later;
    }

    /// One statement for the batch; its answers in the batch's order.
    async fn serve(&self, batch: Vec<ChainedAppend>) -> Vec<Answer> {
        metrics::histogram!(crate::metric_names::BATCH_SIZE).record(batch.len() as f64);
        let batch = match <[ChainedAppend; 1]>::try_from(batch) {
            Ok([chained]) => return vec![self.store_alone(chained).await],
            Err(batch) => batch,
        };
        let mut conn = match self.held.take().await {
            Ok(conn) => conn,
            Err(e) => return failed(e, batch.len()),
        };
        let refs: Vec<&ChainedAppend> = batch.iter().collect();
        let done = events::insert_batch(&mut conn, &refs, self.outbox).await;
        drop(refs);
        let mut answers = Vec::with_capacity(batch.len());
        match done {
            Ok(done) => {
                tracing::debug!(tables = batch.len(), "moves appended together");
                for (chained, done) in batch.into_iter().zip(done) {
                    answers.push(match done {
                        Appended::Stored => Ok(chained.events),
                        Appended::NotAtVersion => {
                            Err(events::not_appended(&mut conn, &chained).await)
                        }
                    });
                }
                self.held.give_back(conn);
            }
            Err(e @ sqlx::Error::Database(_)) => {
                tracing::info!(error = %e, tables = batch.len(), "a batch refused; each move alone");
                if held::survives(&e) {
                    self.held.give_back(conn);
                }
                for chained in batch {
                    answers.push(self.store_alone(chained).await);
                }
            }
            // The connection is dropped.
            Err(e) => return failed(e, batch.len()),
        }
        answers
    }
}

impl LogWriter {
    /// The writer, on connections of its own (one per task of
    /// [`WRITERS`], see [`Held`]) to the database of `pool`, with its
    /// settings; its tasks run on the current runtime.
    pub fn new(pool: &PgPool, outbox: Outbox) -> Self {
        Self {
            batcher: Batcher::new(Appends {
                held: Held::new(pool),
                outbox,
            }),
        }
    }

    /// Appends a table's chained events (with the moves of other tables
    /// waiting meanwhile): the events as stored once committed, or why not
    /// ([`events::insert_one`]'s answers).
    pub async fn append(&self, chained: ChainedAppend) -> Answer {
        self.batcher
            .ask(chained)
            .await
            .unwrap_or(Err(StoreError::Stopped("log writer")))
    }
}

impl Appends {
    async fn store_alone(&self, chained: ChainedAppend) -> Answer {
        let mut conn = self.held.take().await?;
        let stored = events::insert_one(&mut conn, &chained, self.outbox).await;
        // A conflict or a refusal leaves the connection sound; after any
        // other error it is dropped.
        if !matches!(stored, Err(StoreError::Db(_))) {
            self.held.give_back(conn);
        }
        stored.map(|()| chained.events)
    }
}

/// The answers of the `n` moves of a batch whose statement failed otherwise
/// than by PostgreSQL's refusal: stored or not, nobody knows. Each is
/// answered with the error (a 503 when the database is away).
fn failed(e: sqlx::Error, n: usize) -> Vec<Answer> {
    tracing::warn!(error = %e, tables = n, "a batch of moves failed");
    StoreError::for_each(&e, n)
}
