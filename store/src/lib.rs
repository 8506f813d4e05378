//! The storage of Huit, beneath the server: every SQL statement, in small
//! instrumented functions that take a connection, a transaction
//! (`&mut *tx`) or the pool; the stored formats of a table's log
//! ([`records`]) and its hash chain ([`chain`]); the schema
//! ([`MIGRATOR`]).
//!
//! The store speaks SQL: a statement's failure is a [`StoreError`] (or the
//! driver's `sqlx::Error` where nothing but the driver can fail), the
//! constraint names matched where their statement runs; the server maps it
//! to HTTP in one place (`api::error`).
//!
//! What it deliberately is not: it imports nothing of the server (the
//! compiler holds that: `api` depends on this crate, never the other way),
//! keeps no cache and no state of a process (a statement that makes a
//! process's cache stale says so, and its caller, above, clears it), and
//! decides no rule of the game (the domain's) nor of HTTP.
//!
//! Queries are checked at compile time (`sqlx::query!`) against the offline
//! data in `.sqlx/` (regenerate with `scripts/sqlx-prepare`).

pub mod accounts;
pub mod audits;
/// The canonical JSON and hash chain of the log (the crate `ledger`).
pub use ledger::chain;
pub mod connection;
pub mod copy;
pub mod devices;
pub mod disputes;
pub mod due;
pub mod events;
pub mod feed;
pub mod held;
pub mod history;
pub mod idempotency;
pub mod lobby;
pub mod mine;
pub mod outbox;
pub mod players;
pub mod pushes;
pub mod ratings;
pub mod rechain;
pub mod records;
pub mod sanctions;
pub mod seeds;
pub mod sessions;
pub mod tables;

pub use records::{ChainedAppend, EventData, EventRows, FeedNotice, NewEvent, StoredEvent};

/// Runs `step` (a statement on at most `batch` rows, answering how many
/// it did) until it does fewer, at most 100 times: the rows done in all.
pub async fn in_batches<F, Fut>(batch: i64, mut step: F) -> Result<u64, sqlx::Error>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<u64, sqlx::Error>>,
{
    let mut done = 0;
    for _ in 0..100 {
        let n = step().await?;
        done += n;
        if n < batch as u64 {
            break;
        }
    }
    Ok(done)
}

/// The migrations of `migrations/` (the schema these statements are
/// written for), embedded in the binary.
pub static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("../migrations");

/// A database transaction.
pub type Tx<'c> = sqlx::Transaction<'c, sqlx::Postgres>;

/// Why a write was refused, or failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The table is not at the version the write expected (another writer
    /// appended first, or the caller's copy is stale): nothing was written.
    #[error("the table is not at version {expected}")]
    Conflict { expected: i64 },
    /// The table does not exist.
    #[error("no such table")]
    NoTable,
    /// `accounts_username_lower_key`: the username is taken, whatever its
    /// case.
    #[error("the username is taken")]
    UsernameTaken,
    /// `game_tables_quickplay_open_key`: a quick-play table of these
    /// settings is open already (there is one at most).
    #[error("another quick-play table of these settings is open")]
    QuickPlayOpen,
    /// `idempotency_keys_pkey`: another request with the same key is being
    /// written.
    #[error("a request with this Idempotency-Key is being processed")]
    KeyInUse,
    /// A statement shared by several requests failed (see
    /// [`StoreError::for_each`]); `unavailable` when the database was away.
    #[error("a statement shared with other requests failed")]
    Shared { unavailable: bool },
    /// The task that runs the statements of this kind stopped (the process
    /// is shutting down).
    #[error("the {0} stopped")]
    Stopped(&'static str),
    /// Anything else the database or the driver said.
    #[error(transparent)]
    Db(#[from] sqlx::Error),
}

impl StoreError {
    /// The answers of `n` requests served by one statement that failed
    /// with `err` (logged once, by the caller): [`StoreError::Shared`]
    /// each, saying whether the database was away.
    pub fn for_each<T>(err: &sqlx::Error, n: usize) -> Vec<Result<T, StoreError>> {
        let unavailable = unavailable(err);
        (0..n)
            .map(|_| Err(StoreError::Shared { unavailable }))
            .collect()
    }
}

/// Whether an error says the database cannot be reached (rather than that
/// it refused a statement): a pool that gives no connection, a lost or
/// broken connection, a server shutting down or out of resources.
pub fn unavailable(err: &sqlx::Error) -> bool {
    match err {
        sqlx::Error::PoolTimedOut
        | sqlx::Error::PoolClosed
        | sqlx::Error::Io(_)
        | sqlx::Error::Tls(_)
        | sqlx::Error::WorkerCrashed
        // What a connection cut mid-message leaves (PostgreSQL stopping
        // under load: "unknown message type '\0'").
        | sqlx::Error::Protocol(_) => true,
        sqlx::Error::Database(db) => {
            let code = db.code().unwrap_or_default();
            // Class 08: connection exception; 57P0x: the server is
            // shutting down or starting up; 53: insufficient resources.
            code.starts_with("08") || code.starts_with("57P0") || code.starts_with("53")
        }
        _ => false,
    }
}

/// Whether a statement failed on the named constraint.
pub(crate) fn violates(err: &sqlx::Error, constraint: &str) -> bool {
    matches!(err, sqlx::Error::Database(db) if db.constraint() == Some(constraint))
}

/// `SELECT 1`: does the database answer?
#[tracing::instrument(skip_all)]
pub async fn ping(pool: &sqlx::PgPool) -> Result<(), sqlx::Error> {
    sqlx::query!("SELECT 1 AS one").fetch_one(pool).await?;
    Ok(())
}
