//! Connections kept by the process's background tasks (the log writer, the
//! version reads, the announcements) from one statement to the next.
//!
//! sqlx's pool sends every connection given back to it a `Sync` and waits
//! for PostgreSQL's answer (`return_to_pool` in sqlx-core 0.8: always, it
//! cannot be turned off), a round trip more per statement, for PostgreSQL
//! and for us. These tasks run a statement per batch all day long, never
//! hand a connection to anyone else, and never drop a statement half-way,
//! which is what that ping guards against; so they keep their connections
//! here instead, with the same policy as the pool's on taking one
//! (`api::startup::ping_when_idle`): a connection idle for a second is
//! pinged first, and a dead one is replaced.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use sqlx::postgres::{PgConnectOptions, PgDatabaseError, PgPool, PgSeverity};
use sqlx::{Connection, PgConnection};

/// A connection idle for this long is pinged before it is used again.
const PING_AFTER_IDLE: Duration = Duration::from_secs(1);

/// A few connections of one kind of work; cheap to share behind an `Arc`.
#[derive(Debug)]
pub struct Held {
    options: PgConnectOptions,
    connect_timeout: Duration,
    idle: Mutex<Vec<(PgConnection, Instant)>>,
}

impl Held {
    /// Connections to the database of `pool`, with its settings and
    /// generic plans only: the batched statements take their rows as arrays
    /// whose lengths vary from batch to batch, and PostgreSQL, whose plans
    /// for a batch's own lengths always look cheaper than a generic one,
    /// would otherwise plan them again on every execution (a measurable share
    /// of PostgreSQL's time per append: BENCHMARKS.md, second pass).
    pub fn new(pool: &PgPool) -> Self {
        Self {
            options: (*pool.connect_options())
                .clone()
                .options([("plan_cache_mode", "force_generic_plan")]),
            connect_timeout: pool.options().get_acquire_timeout(),
            idle: Mutex::default(),
        }
    }

    /// An idle connection that answers, or a new one.
    pub async fn take(&self) -> Result<PgConnection, sqlx::Error> {
        loop {
            let next = self.idle.lock().unwrap_or_else(|p| p.into_inner()).pop();
            let Some((mut conn, since)) = next else { break };
            if since.elapsed() < PING_AFTER_IDLE || conn.ping().await.is_ok() {
                return Ok(conn);
            }
            // Dead (the database restarted, say): dropped, try the next.
        }
        tokio::time::timeout(
            self.connect_timeout,
            PgConnection::connect_with(&self.options),
        )
        .await
        .map_err(|_| sqlx::Error::PoolTimedOut)?
    }

    /// Keeps `conn` for the next statement. Only a connection whose last
    /// statement ended, well or with PostgreSQL's refusal, comes back here;
    /// one that failed otherwise (lost, cut) is dropped instead.
    pub fn give_back(&self, conn: PgConnection) {
        self.idle
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push((conn, Instant::now()));
    }

    /// Runs `f` on a held connection, kept for the next statement when it
    /// is still sound afterwards.
    pub async fn with<T>(
        &self,
        f: impl AsyncFnOnce(&mut PgConnection) -> Result<T, sqlx::Error>,
    ) -> Result<T, sqlx::Error> {
        let mut conn = self.take().await?;
        let done = f(&mut conn).await;
        self.keep_if_sound(conn, &done);
        done
    }

    /// `give_back` when `result` says the connection is still sound.
    fn keep_if_sound<T>(&self, conn: PgConnection, result: &Result<T, sqlx::Error>) {
        if result.as_ref().err().is_none_or(survives) {
            self.give_back(conn);
        }
    }
}

/// Whether a connection whose statement failed with `err` can run the next
/// one: PostgreSQL refused the statement, not the session. A FATAL error
/// (the server shutting down, the backend terminated) ends the session.
pub fn survives(err: &sqlx::Error) -> bool {
    match err {
        sqlx::Error::Database(db) => db
            .try_downcast_ref::<PgDatabaseError>()
            .is_some_and(|pg| !matches!(pg.severity(), PgSeverity::Fatal | PgSeverity::Panic)),
        _ => false,
    }
}
