//! Tables' secret server seeds (docs/API.md "Fair deals", migration 20):
//! written with a new table, read by the command path alone.

use sqlx::{PgConnection, PgExecutor};
use uuid::Uuid;

/// Keeps a new table's server seed; in the transaction that creates it.
#[tracing::instrument(skip(conn, seed))]
pub async fn insert(
    conn: &mut PgConnection,
    table_id: Uuid,
    seed: &[u8],
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "INSERT INTO table_seeds (table_id, server_seed) VALUES ($1, $2)",
        table_id,
        seed,
    )
    .execute(conn)
    .await?;
    Ok(())
}

/// A table's server seed; `None` for a table opened before fair deals.
#[tracing::instrument(skip(executor))]
pub async fn get(
    executor: impl PgExecutor<'_>,
    table_id: Uuid,
) -> Result<Option<Vec<u8>>, sqlx::Error> {
    sqlx::query_scalar!(
        "SELECT server_seed FROM table_seeds WHERE table_id = $1",
        table_id
    )
    .fetch_optional(executor)
    .await
}
