//! Cross-process wake-ups for long polls, through PostgreSQL `LISTEN/NOTIFY`.
//!
//! [`crate::store::events::append`] runs `pg_notify('table_events', <table id>)`
//! in the appending transaction, so every server process connected to the
//! database hears of a commit. Here one listener connection per process
//! bumps a per-table counter that long-pollers watch.
//!
//! Use it without missing a wake-up: subscribe *first*, then read the events,
//! then wait:
//!
//! ```ignore
//! let mut rx = table_events.subscribe(table_id);
//! let events = store::events::read_after(&pool, table_id, after, limit).await?;
//! if events.is_empty() {
//!     table_events.wait(&mut rx, deadline).await; // then read again
//! }
//! ```

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use sqlx::postgres::PgListener;
use sqlx::PgPool;
use tokio::sync::watch;
use tokio::time::Instant;
use uuid::Uuid;

/// The notification channel; its payload is the table id.
pub const CHANNEL: &str = "table_events";

/// Wake-ups per table. Cheap to clone; shared by every worker.
#[derive(Debug, Clone, Default)]
pub struct TableEvents {
    senders: Arc<Mutex<HashMap<Uuid, watch::Sender<u64>>>>,
}

impl TableEvents {
    /// A hub with no listener: only [`TableEvents::wake`] wakes it.
    pub fn new() -> Self {
        Self::default()
    }

    /// A hub fed by a `LISTEN table_events` connection. The first connection
    /// is made before this returns (when the database answers), so a
    /// notification sent after it is not missed; the task then reconnects by
    /// itself, waking every waiter after a reconnection (notifications sent
    /// while disconnected are lost, so waiters must re-read).
    pub async fn start(pool: PgPool) -> (Self, tokio::task::JoinHandle<()>) {
        let hub = Self::new();
        let first = connect(&pool).await;
        let task = tokio::spawn(hub.clone().run(pool, first));
        (hub, task)
    }

    async fn run(self, pool: PgPool, mut listener: Option<PgListener>) {
        let mut backoff = Duration::from_millis(200);
        loop {
            let Some(l) = listener.as_mut() else {
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(Duration::from_secs(10));
                listener = connect(&pool).await;
                if listener.is_some() {
                    backoff = Duration::from_millis(200);
                    self.wake_all();
                }
                continue;
            };
            match l.try_recv().await {
                Ok(Some(n)) => match n.payload().parse::<Uuid>() {
                    Ok(table_id) => self.wake(table_id),
                    Err(_) => tracing::warn!(payload = n.payload(), "bad table_events payload"),
                },
                // The connection was lost; the next call reconnects.
                Ok(None) => {
                    tracing::warn!("table_events listener reconnecting");
                    self.wake_all();
                }
                Err(e) => {
                    tracing::warn!(error = %e, "table_events listener failed");
                    listener = None;
                    self.wake_all();
                }
            }
        }
    }

    /// A receiver that sees every wake-up of `table_id` from now on.
    pub fn subscribe(&self, table_id: Uuid) -> watch::Receiver<u64> {
        let mut senders = self.senders.lock().unwrap_or_else(|p| p.into_inner());
        if senders.len() > 1024 {
            senders.retain(|_, s| s.receiver_count() > 0);
        }
        senders
            .entry(table_id)
            .or_insert_with(|| watch::channel(0).0)
            .subscribe()
    }

    /// How many receivers of `table_id` are alive (streams and long polls
    /// waiting on it).
    pub fn subscribers(&self, table_id: Uuid) -> usize {
        let senders = self.senders.lock().unwrap_or_else(|p| p.into_inner());
        senders.get(&table_id).map_or(0, |s| s.receiver_count())
    }

    /// Waits until `rx` sees a wake-up or the deadline passes; `true` when
    /// woken.
    pub async fn wait(&self, rx: &mut watch::Receiver<u64>, deadline: Instant) -> bool {
        matches!(
            tokio::time::timeout_at(deadline, rx.changed()).await,
            Ok(Ok(()))
        )
    }

    /// Wakes the waiters of one table (called by the listener; also usable
    /// directly within one process).
    pub fn wake(&self, table_id: Uuid) {
        let mut senders = self.senders.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(s) = senders.get(&table_id) {
            if s.receiver_count() == 0 {
                senders.remove(&table_id);
            } else {
                s.send_modify(|n| *n = n.wrapping_add(1));
            }
        }
    }

    fn wake_all(&self) {
        let mut senders = self.senders.lock().unwrap_or_else(|p| p.into_inner());
        senders.retain(|_, s| s.receiver_count() > 0);
        for s in senders.values() {
            s.send_modify(|n| *n = n.wrapping_add(1));
        }
    }
}

async fn connect(pool: &PgPool) -> Option<PgListener> {
    let attempt = async {
        let mut l = PgListener::connect_with(pool).await?;
        l.listen(CHANNEL).await?;
        Ok::<_, sqlx::Error>(l)
    };
    match attempt.await {
        Ok(l) => Some(l),
        Err(e) => {
            tracing::warn!(error = %e, "cannot LISTEN table_events yet");
            None
        }
    }
}
