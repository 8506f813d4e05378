//! The tables' stored versions, read in batches (see
//! [`crate::commit::batcher`]), on connections of their own ([`Held`]).
//!
//! A view or a page of events is never older than the last commit,
//! whichever process made it: before answering from its cache, a process
//! reads the table's stored version. Every read asked for meanwhile, of any
//! table, shares one `WHERE id = ANY($1)` query.

use std::collections::HashMap;

use sqlx::PgPool;
use uuid::Uuid;

use crate::commit::batcher::{Batcher, Work};
use crate::store::held::Held;
use crate::store::{self, StoreError};

/// Reads of stored versions; cheap to clone.
pub type VersionReads = Batcher<Reads>;

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
        Batcher::new(Reads {
            held: Held::new(pool),
        })
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
    reads
        .ask(table_id)
        .await
        .unwrap_or(Err(StoreError::Stopped("version reader")))
}
