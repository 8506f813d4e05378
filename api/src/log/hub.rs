//! Cross-process wake-ups for long polls, through PostgreSQL `LISTEN/NOTIFY`.
//!
//! Once an append is committed, the table service announces it
//! ([`crate::log::announce`]:
//! `pg_notify('table_events', '<table id>:<new version>')` in a transaction
//! of its own), so every server process connected to the database hears of
//! a commit. Here one listener connection per process bumps a per-table counter
//! that long-pollers watch, and remembers the highest version heard per table
//! ([`CommitHub::heard`]), which lets the table cache skip its refresh read
//! when nothing newer was committed elsewhere.
//!
//! Use it without missing a wake-up: subscribe *first*, then read the events,
//! then wait:
//!
//! ```ignore
//! let mut rx = hub.subscribe(table_id);
//! let events = store::events::read_after(&pool, table_id, after, limit).await?;
//! if events.is_empty() {
//!     hub.wait(&mut rx, deadline).await; // then read again
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

use crate::log::announce::{parse_payload, Announced};
use crate::pruned::Pruned;
use store::events::CHANNEL;

/// Above this many tables, the versions heard are forgotten (and the epoch
/// moves, so no cache trusts what it can no longer check).
const HEARD_LIMIT: usize = 16_384;

/// Wake-ups per table, and per account's feed. Cheap to clone; shared by
/// every worker.
#[derive(Debug, Clone, Default)]
pub struct CommitHub {
    tables: Wakers,
    feeds: Wakers,
    /// Told whenever any feed has new items: one for each sender that waits
    /// for them (the webhooks', the pushes').
    any_feed: Arc<Mutex<Vec<Arc<tokio::sync::Notify>>>>,
    heard: Arc<Mutex<Heard>>,
}

/// Wake-ups by key: a counter each waiter watches; those nobody watches
/// any more are dropped once there are twice as many as the last pruning
/// kept (at least 1,024).
#[derive(Debug, Clone)]
struct Wakers(Arc<Mutex<Pruned<Uuid, watch::Sender<u64>>>>);

impl Default for Wakers {
    fn default() -> Self {
        Self(Arc::new(Mutex::new(Pruned::new(1024))))
    }
}

impl Wakers {
    fn senders(&self) -> std::sync::MutexGuard<'_, Pruned<Uuid, watch::Sender<u64>>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn subscribe(&self, key: Uuid) -> watch::Receiver<u64> {
        let mut senders = self.senders();
        senders.prune(|_, s| s.receiver_count() > 0);
        senders
            .entry(key)
            .or_insert_with(|| watch::channel(0).0)
            .subscribe()
    }

    fn subscribers(&self, key: Uuid) -> usize {
        self.senders().get(&key).map_or(0, |s| s.receiver_count())
    }

    fn wake(&self, key: Uuid) {
        let mut senders = self.senders();
        if let Some(s) = senders.get(&key) {
            if s.receiver_count() == 0 {
                senders.remove(&key);
            } else {
                s.send_modify(|n| *n = n.wrapping_add(1));
            }
        }
    }

    fn wake_all(&self) {
        let mut senders = self.senders();
        senders.retain(|_, s| s.receiver_count() > 0);
        for s in senders.values() {
            s.send_modify(|n| *n = n.wrapping_add(1));
        }
    }
}

/// What the listener heard since its connection `epoch` was made.
#[derive(Debug, Default)]
struct Heard {
    /// Moves at every (re)connection, at every loss and when `versions` is
    /// forgotten: notifications may have been missed.
    epoch: u64,
    /// Is a `LISTEN` connection up (false for a hub without a listener)?
    listening: bool,
    /// The highest version heard per table in this epoch.
    versions: HashMap<Uuid, i64>,
    /// Moves whenever `epoch` does, and whenever an account changed what
    /// others cache of it (its name, its sessions): what a process caches
    /// of accounts holds while this stays.
    accounts: u64,
}

impl CommitHub {
    /// A hub with no listener: only [`CommitHub::wake`] wakes it.
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
        hub.set_listening(first.is_some());
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
                    self.set_listening(true);
                    self.wake_all();
                }
                continue;
            };
            match l.try_recv().await {
                Ok(Some(n)) => match parse_payload(n.payload()) {
                    Some(heard) => {
                        for announced in heard {
                            match announced {
                                Announced::Table(table_id, version) => {
                                    if self.note(table_id, version) {
                                        self.wake(table_id);
                                    }
                                }
                                Announced::Feed(account) => self.fed(account),
                                Announced::Account(_) => self.accounts_changed(),
                            }
                        }
                    }
                    None => {
                        // Some table moved, which one is unknown: trust no
                        // cache.
                        tracing::warn!(payload = n.payload(), "bad table_events payload");
                        self.forget();
                    }
                },
                // The connection was lost. Reconnect here rather than let
                // `try_recv` do it, so that `heard` knows when the new
                // connection listens.
                Ok(None) => {
                    tracing::warn!("table_events listener reconnecting");
                    listener = None;
                    self.set_listening(false);
                    self.wake_all();
                }
                Err(e) => {
                    tracing::warn!(error = %e, "table_events listener failed");
                    listener = None;
                    self.set_listening(false);
                    self.wake_all();
                }
            }
        }
    }

    /// `(epoch, highest version heard of the table in that epoch, 0 when
    /// none)`, or `None` when no `LISTEN` connection is up. A cache that
    /// read the log at version `v` with the epoch `e` (taken *before* the
    /// read) is still current when `heard` is `Some((e, h))` with `h <= v`:
    /// any later commit, by any process, is heard with its version a few
    /// milliseconds after it commits (unless its process dies before
    /// announcing it: views and moves check the stored version anyway, long
    /// polls and event streams when their wait ends).
    pub fn heard(&self, table_id: Uuid) -> Option<(u64, i64)> {
        let heard = self.heard.lock().unwrap_or_else(|p| p.into_inner());
        heard.listening.then(|| {
            (
                heard.epoch,
                heard.versions.get(&table_id).copied().unwrap_or(0),
            )
        })
    }

    /// Notes that `table_id` is at `version`: `true` when that is news (a
    /// version above any heard or committed here in this epoch, or none
    /// given), whose waiters are to be woken.
    fn note(&self, table_id: Uuid, version: Option<i64>) -> bool {
        let Some(version) = version else {
            // A notification without its version: trust no cache.
            self.forget();
            return true;
        };
        let mut heard = self.heard.lock().unwrap_or_else(|p| p.into_inner());
        if heard.versions.len() >= HEARD_LIMIT && !heard.versions.contains_key(&table_id) {
            heard.epoch += 1;
            heard.versions.clear();
        }
        let v = heard.versions.entry(table_id).or_insert(0);
        let news = version > *v;
        *v = (*v).max(version);
        news
    }

    /// This process committed `table_id` at `version`: its waiters are
    /// woken now, and the announcement of that version, when this process
    /// hears it back from PostgreSQL, wakes nobody again.
    pub fn committed(&self, table_id: Uuid, version: i64) {
        self.note(table_id, Some(version));
        self.wake(table_id);
    }

    fn forget(&self) {
        let mut heard = self.heard.lock().unwrap_or_else(|p| p.into_inner());
        heard.epoch += 1;
        heard.accounts += 1;
        heard.versions.clear();
    }

    fn set_listening(&self, listening: bool) {
        let mut heard = self.heard.lock().unwrap_or_else(|p| p.into_inner());
        heard.epoch += 1;
        heard.accounts += 1;
        heard.listening = listening;
        heard.versions.clear();
    }

    /// The accounts' epoch, or `None` when no `LISTEN` connection is up:
    /// what a process read of accounts (the names of a table's persons, a
    /// session) with the epoch `e`, taken *before* the read, still holds
    /// while this is `Some(e)`. Any process that changes an account
    /// announces it in the transaction that changes it
    /// ([`Announced::Account`]), and moves this at once in its own process
    /// ([`CommitHub::accounts_changed`]).
    pub fn accounts_epoch(&self) -> Option<u64> {
        let heard = self.heard.lock().unwrap_or_else(|p| p.into_inner());
        heard.listening.then_some(heard.accounts)
    }

    /// Some account changed: what this process cached of accounts is to
    /// be read again.
    pub fn accounts_changed(&self) {
        let mut heard = self.heard.lock().unwrap_or_else(|p| p.into_inner());
        heard.accounts += 1;
    }

    /// A receiver that sees every wake-up of `table_id` from now on.
    pub fn subscribe(&self, table_id: Uuid) -> watch::Receiver<u64> {
        self.tables.subscribe(table_id)
    }

    /// How many receivers of `table_id` are alive (streams and long polls
    /// waiting on it).
    pub fn subscribers(&self, table_id: Uuid) -> usize {
        self.tables.subscribers(table_id)
    }

    /// A receiver that sees every wake-up of `account`'s feed from now on.
    pub fn subscribe_feed(&self, account: Uuid) -> watch::Receiver<u64> {
        self.feeds.subscribe(account)
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
        self.tables.wake(table_id);
    }

    /// This process committed items of `account`'s feed: its waiters here
    /// wake now (the announcement wakes the other processes').
    pub fn fed(&self, account: Uuid) {
        self.feeds.wake(account);
        let senders = self.any_feed.lock().unwrap_or_else(|p| p.into_inner());
        senders.iter().for_each(|sender| sender.notify_one());
    }

    /// A new waker for one sender, notified whenever some feed has new
    /// items (a notice that finds it busy is kept for its next wait).
    pub fn any_feed(&self) -> Arc<tokio::sync::Notify> {
        let sender = Arc::new(tokio::sync::Notify::new());
        self.any_feed
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(sender.clone());
        sender
    }

    fn wake_all(&self) {
        self.tables.wake_all();
        self.feeds.wake_all();
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_version_heard_back_after_this_process_committed_it_wakes_nobody() {
        let hub = CommitHub::new();
        let table = Uuid::from_u128(9);
        let mut rx = hub.subscribe(table);
        hub.committed(table, 4);
        assert!(rx.has_changed().unwrap(), "the commit wakes at once");
        rx.borrow_and_update();
        assert!(!hub.note(table, Some(4)), "its own announcement");
        assert!(!hub.note(table, Some(3)), "an older one");
        assert!(hub.note(table, Some(5)), "a later commit, elsewhere");
        assert!(hub.note(table, None), "a version unknown");
    }
}
