//! What a connection to PostgreSQL is, as the server reports it at start-up.

use sqlx::PgConnection;

/// The TLS version this connection speaks (`TLSv1.3`), or `None` when it
/// is not encrypted.
#[tracing::instrument(skip_all, err)]
pub async fn tls_version(conn: &mut PgConnection) -> Result<Option<String>, sqlx::Error> {
    let version = sqlx::query_scalar!(
        r#"SELECT version AS "version?" FROM pg_stat_ssl
            WHERE pid = pg_backend_pid() AND ssl"#
    )
    .fetch_optional(conn)
    .await?;
    Ok(version.flatten())
}

/// Makes the transaction of `conn` a read-only snapshot (its first
/// statement): every read in it sees the database as it was at one moment
/// (a rebuild that only checks; a log and its version read together).
#[tracing::instrument(skip(conn))]
pub async fn snapshot(conn: &mut PgConnection) -> Result<(), sqlx::Error> {
    sqlx::query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        .execute(conn)
        .await?;
    Ok(())
}
