//! The database at start-up: its pool, waiting for it, its migrations.

use std::str::FromStr;
use std::time::Duration;

use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::{Connection, PgPool};

use crate::config::Settings;
use store::MIGRATOR;

/// A pool that connects on first use; a request waits at most
/// `HUIT_DB_ACQUIRE_TIMEOUT_SECS` for a connection, then gets 503.
pub fn connect_lazy(settings: &Settings) -> Result<PgPool, sqlx::Error> {
    let options = PgConnectOptions::from_str(settings.database_url.as_str())?;
    Ok(pool_options(settings).connect_lazy_with(options))
}

/// Waits until the database of `pool` accepts a connection, at most
/// `within`: retried with backoff (200 ms doubling to 5 s), each failure
/// logged with its cause; the last one when it never does. A server started
/// with its database (an orchestrator starting both at once) then serves
/// once it is up, instead of exiting and being restarted in a loop. A
/// refusal no wait can change (`waiting_cannot_fix`) ends it at once.
/// Answers the TLS version the connection speaks (`None`: unencrypted).
pub async fn wait_for_database(
    pool: &PgPool,
    within: Duration,
) -> Result<Option<String>, DatabaseWait> {
    use sqlx::Connection;
    let deadline = tokio::time::Instant::now() + within;
    let mut backoff = Duration::from_millis(200);
    loop {
        let options = pool.connect_options();
        let attempt = tokio::time::timeout_at(deadline, sqlx::PgConnection::connect_with(&options));
        let error = match attempt.await {
            Ok(Ok(mut conn)) => {
                let tls = store::connection::tls_version(&mut conn).await;
                let _ = conn.close().await;
                return Ok(tls.ok().flatten());
            }
            Ok(Err(e)) => e,
            Err(_) => sqlx::Error::PoolTimedOut,
        };
        if waiting_cannot_fix(&error) {
            return Err(DatabaseWait::Refused(error));
        }
        if tokio::time::Instant::now() + backoff >= deadline {
            return Err(DatabaseWait::Silent { within, error });
        }
        tracing::warn!(error = %error, retry_in_ms = backoff.as_millis() as u64, "waiting for the database");
        tokio::time::sleep(backoff).await;
        backoff = (backoff * 2).min(Duration::from_secs(5));
    }
}

/// Why [`wait_for_database`] gave up.
#[derive(Debug, thiserror::Error)]
pub enum DatabaseWait {
    #[error("the database refused the connection, which waiting cannot change: {0}")]
    Refused(sqlx::Error),
    #[error("the database did not answer within {} s (HUIT_DB_WAIT_SECS): {error}", within.as_secs())]
    Silent {
        within: Duration,
        error: sqlx::Error,
    },
}

/// A database that refused us for what we are, not for not being up yet:
/// TLS that failed (a certificate not trusted, a server without TLS for
/// `sslmode=require`), a URL that does not configure, a role or password
/// refused, or `pg_hba.conf` rejecting the connection (SQLSTATE class 28,
/// e.g. `sslmode=disable` against a server that takes TLS only).
fn waiting_cannot_fix(error: &sqlx::Error) -> bool {
    match error {
        sqlx::Error::Tls(_) | sqlx::Error::Configuration(_) => true,
        // A certificate refused in the handshake comes as an I/O error.
        sqlx::Error::Io(e) => e.get_ref().is_some_and(|inner| inner.is::<rustls::Error>()),
        sqlx::Error::Database(e) => e.code().is_some_and(|code| code.starts_with("28")),
        _ => false,
    }
}

pub fn pool_options(settings: &Settings) -> PgPoolOptions {
    ping_when_idle(
        PgPoolOptions::new()
            .max_connections(settings.db_max_connections)
            .acquire_timeout(settings.db_acquire_timeout()),
    )
}

/// A pooled connection idle for this long is pinged before it is handed
/// out (and replaced when dead).
const PING_AFTER_IDLE: Duration = Duration::from_secs(1);

/// sqlx pings every connection it hands out, by default: a round trip to
/// PostgreSQL more for every query. Only connections idle for
/// `PING_AFTER_IDLE` (1 s) are pinged here; a busy connection that died fails
/// its query (503), and sqlx closes it when it comes back to the pool.
pub fn ping_when_idle(options: PgPoolOptions) -> PgPoolOptions {
    options
        .test_before_acquire(false)
        .before_acquire(|conn, meta| {
            Box::pin(async move {
                if meta.idle_for >= PING_AFTER_IDLE {
                    conn.ping().await?;
                }
                Ok(true)
            })
        })
}

/// Applies the pending migrations, then the one-time rewrite of logs
/// written before event format 3 ([`store::rechain`]).
pub async fn migrate(pool: &PgPool) -> Result<(), sqlx::migrate::MigrateError> {
    MIGRATOR.run(pool).await?;
    store::rechain::unname_logs_once(pool)
        .await
        .map_err(sqlx::migrate::MigrateError::Execute)?;
    Ok(())
}
