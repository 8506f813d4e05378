//! The tables' stored versions, read and announced in batches (see
//! [`crate::commit::batcher`]), on connections of their own ([`Held`]).
//!
//! - A view or a page of events is never older than the last commit,
//!   whichever process made it: before answering from its cache, a process
//!   reads the table's stored version. Every read asked for meanwhile, of
//!   any table, shares one `WHERE id = ANY($1)` query.
//! - Once an append has committed, every process is told the table's new
//!   version (`NOTIFY`, heard by [`crate::commit::notify`]). The versions committed
//!   meanwhile (and in the `ANNOUNCE_GATHER` after an announcement), each
//!   table's last, share one notifying transaction; nobody waits for it.

use std::collections::HashMap;

use sqlx::PgPool;
use uuid::Uuid;

use crate::commit::batcher::{Batcher, Work};
use crate::error::ApiError;
use crate::store;
use crate::store::held::Held;

/// Reads of stored versions; cheap to clone.
pub type VersionReads = Batcher<Reads>;
/// Announcements of new versions; cheap to clone.
pub type Announcements = Batcher<Announcer>;

/// How many version reads of one process may be in flight at once.
const READERS: usize = 2;

/// The least time between two announcements of one process: a commit is
/// announced at once when none was just announced, else at most this much
/// later.
const ANNOUNCE_GATHER: std::time::Duration = std::time::Duration::from_millis(2);

/// Reading stored versions: a table's version, `None` when there is no such
/// table.
#[derive(Debug)]
pub struct Reads {
    held: Held,
}

impl Reads {
    /// Reads on connections of their own to the database of `pool`.
    pub fn batcher(pool: &PgPool) -> VersionReads {
        Batcher::new(Reads {
            held: Held::new(pool),
        })
    }
}

impl Work for Reads {
    type Item = Uuid;
    type Answer = Result<Option<i64>, ApiError>;
    const TASKS: usize = READERS;

    async fn serve(&self, ids: Vec<Uuid>) -> Vec<Self::Answer> {
        let read = self
            .held
            .with(async |conn| store::events::current_versions(conn, &ids).await)
            .await;
        match read {
            Ok(found) => {
                let found: HashMap<Uuid, i64> = found.into_iter().collect();
                ids.iter().map(|id| Ok(found.get(id).copied())).collect()
            }
            Err(e) => {
                tracing::warn!(error = %e, tables = ids.len(), "versions not read");
                ApiError::for_each(e, ids.len(), "reading the tables' versions failed")
            }
        }
    }
}

/// The table's stored version (`None`: no such table), read with the other
/// reads asked for meanwhile.
pub async fn stored_version(reads: &VersionReads, table_id: Uuid) -> Result<Option<i64>, ApiError> {
    reads
        .ask(table_id)
        .await
        .unwrap_or_else(|| Err(ApiError::internal("the version reader stopped")))
}

/// Announces new versions: (table, version committed), every process told.
#[derive(Debug)]
pub struct Announcer {
    held: Held,
}

impl Announcer {
    /// Announcements on a connection of their own to the database of
    /// `pool`.
    pub fn batcher(pool: &PgPool) -> Announcements {
        Batcher::new(Announcer {
            held: Held::new(pool),
        })
    }
}

impl Work for Announcer {
    type Item = (Uuid, i64);
    type Answer = ();
    const TASKS: usize = 1;

    /// Each table at its last version, in one statement. A failure is
    /// logged: the events are stored, and other processes' waiters check
    /// the table's version when their wait ends.
    async fn serve(&self, committed: Vec<(Uuid, i64)>) -> Vec<()> {
        let n = committed.len();
        let mut last: HashMap<Uuid, i64> = HashMap::with_capacity(n);
        for (table_id, version) in committed {
            let v = last.entry(table_id).or_insert(version);
            *v = (*v).max(version);
        }
        let versions: Vec<(Uuid, i64)> = last.into_iter().collect();
        let sent = self
            .held
            .with(async |conn| store::events::announce(conn, &versions).await)
            .await;
        if let Err(e) = sent {
            tracing::warn!(error = %e, tables = versions.len(), "new versions not announced");
        }
        // The commits of the next moments gather meanwhile: under load,
        // one notifying transaction (and one wake-up of every listening
        // connection) then carries the versions of many moves.
        tokio::time::sleep(ANNOUNCE_GATHER).await;
        vec![(); n]
    }
}
