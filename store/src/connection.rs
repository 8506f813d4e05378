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
