//! Every SQL statement of the service, in small instrumented functions that
//! take a connection, a transaction (`&mut *tx`) or the pool.
//!
//! Queries are checked at compile time (`sqlx::query!`) against the offline
//! data in `.sqlx/` (regenerate with `scripts/sqlx-prepare`).

pub mod accounts;
pub mod audits;
pub mod copy;
pub mod disputes;
pub mod events;
pub mod held;
pub mod history;
pub mod idempotency;
pub mod players;
pub mod sessions;
pub mod tables;

/// A database transaction.
pub type Tx<'c> = sqlx::Transaction<'c, sqlx::Postgres>;

/// `SELECT 1`: does the database answer?
#[tracing::instrument(skip_all)]
pub async fn ping(pool: &sqlx::PgPool) -> Result<(), sqlx::Error> {
    sqlx::query!("SELECT 1 AS one").fetch_one(pool).await?;
    Ok(())
}
