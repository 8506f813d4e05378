//! The tables' stored versions, read in batches (see
//! [`crate::log::batcher`]), on connections of their own ([`Held`]).
//!
//! A view or a page of events is never older than the last commit,
//! whichever process made it: before answering from its cache, a process
//! reads the table's stored version. Every read asked for meanwhile, of any
//! table, shares one `WHERE id = ANY($1)` query.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use sqlx::PgPool;
use uuid::Uuid;

use crate::log::batcher::{Batcher, Work};
use crate::pruned::Pruned;
use store::held::Held;
use store::{self, StoreError};

/// Reads of stored versions, and the versions read lately (for checks
/// that may be a little old, [`recent_stored_version`]); cheap to clone.
#[derive(Clone)]
pub struct VersionReads {
    batcher: Batcher<Reads>,
    recent: Arc<Mutex<Recent>>,
}

impl std::fmt::Debug for VersionReads {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VersionReads").finish_non_exhaustive()
    }
}

/// How old a version read may be for [`recent_stored_version`].
pub const RECENT: Duration = Duration::from_secs(1);

/// Versions read lately, by table: when the read was asked, and what it
/// found; past twice what the last pruning kept, the old ones go.
type Recent = Pruned<Uuid, (Instant, Option<i64>)>;

/// How many version reads of one process may be in flight at once.
const READERS: usize = 2;

/// Reading stored versions: a table's version, `None` when there is no such
/// table.
#[derive(Debug)]
pub struct Reads {
    held: Held,
}

impl Reads {
    /// Reads on connections of their own to the database of `pool`.
    pub fn batcher(pool: &PgPool) -> VersionReads {
        VersionReads {
            batcher: Batcher::new(Reads {
                held: Held::new(pool),
            }),
            recent: Arc::new(Mutex::new(Pruned::new(1024))),
        }
    }
}

impl Work for Reads {
    type Item = Uuid;
    type Answer = Result<Option<i64>, StoreError>;
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
                StoreError::for_each(&e, ids.len())
            }
        }
    }
}

/// The table's stored version (`None`: no such table), read with the other
/// reads asked for meanwhile.
pub async fn stored_version(
    reads: &VersionReads,
    table_id: Uuid,
) -> Result<Option<i64>, StoreError> {
    let asked = Instant::now();
    let version = reads
        .batcher
        .ask(table_id)
        .await
        .unwrap_or(Err(StoreError::Stopped("version reader")))?;
    let mut recent = reads.recent.lock().unwrap_or_else(|p| p.into_inner());
    recent.prune(|_, (at, _)| at.elapsed() < RECENT);
    recent.insert(table_id, (asked, version));
    Ok(version)
}

/// The table's stored version as read at most [`RECENT`] ago (by any
/// caller), else read now: for the checks of streams and long polls that
/// heard nothing (a notification can be lost), which tens of thousands of
/// idle streams make every keep-alive, several of them on one table.
pub async fn recent_stored_version(
    reads: &VersionReads,
    table_id: Uuid,
) -> Result<Option<i64>, StoreError> {
    let known = {
        let recent = reads.recent.lock().unwrap_or_else(|p| p.into_inner());
        recent.get(&table_id).copied()
    };
    match known {
        Some((at, version)) if at.elapsed() < RECENT => Ok(version),
        _ => stored_version(reads, table_id).await,
    }
}
