//! The folded tables of one process: a slot per table, its cold load (one
//! `COPY`, folded on a blocking thread) and how a cached table is brought
//! up to date before a use (see the parent module's "The cache").

use std::collections::VecDeque;
use std::sync::Arc;

use domain::{Fold, Table, TableEvent};
use futures_util::TryStreamExt;
use tokio::sync::Mutex;
use uuid::Uuid;

use super::{corrupt, corrupt_event, not_found, parse_event, CachedTable, TableService};
use crate::dealer::Dealer;
use crate::service_error::ServiceError;
use store::copy::{CopyRows, LogCopy};
use store::{EventRows, StoredEvent};

/// Events read per query when a cached table is brought up to date.
const REFRESH_PAGE: i64 = 500;

/// Rows handed at once to the parsing thread of a cold load.
const LOAD_BATCH: usize = 1024;

/// Recent events kept per cached table, for the long polls.
const TAIL_LEN: usize = 256;

/// Above this many cached tables, idle entries are dropped (they are
/// reloaded from their log on their next use).
pub(super) const CACHE_SOFT_LIMIT: usize = 4096;

/// A recent event as stored, with its parsed form (to redact it without
/// parsing it again).
#[derive(Debug)]
pub(super) struct Recent {
    pub(super) stored: StoredEvent,
    pub(super) event: TableEvent,
}

/// A cached table and what this process knows of the end of its log.
#[derive(Debug)]
pub(super) struct Entry {
    pub(super) loaded: CachedTable,
    /// The hash of the event at the table's version, when known (the chain
    /// head the next append links to).
    pub(super) head_hash: Option<String>,
    /// The last events (at most [`TAIL_LEN`]) up to the table's version,
    /// in order and without gaps: the long polls are answered from here.
    pub(super) tail: VecDeque<Arc<Recent>>,
    /// The [`CommitHub`] epoch in which the log was last read; `None`
    /// when the next use must read it.
    pub(super) synced: Option<u64>,
    /// Who shuffles its cards: kept here, beside the table every read
    /// shows, never in it.
    pub(super) dealer: Option<Dealer>,
}

impl Entry {
    /// A table just folded from its log, or just created, and its dealer.
    pub(super) fn new(loaded: CachedTable, dealer: Option<Dealer>) -> Self {
        Self {
            loaded,
            head_hash: None,
            tail: VecDeque::new(),
            synced: None,
            dealer,
        }
    }

    pub(super) fn version(&self) -> i64 {
        self.loaded.version()
    }

    pub(super) fn push(&mut self, stored: StoredEvent, event: TableEvent) {
        if self.tail.len() == TAIL_LEN {
            self.tail.pop_front();
        }
        self.head_hash = Some(stored.hash.clone());
        self.tail.push_back(Arc::new(Recent { stored, event }));
    }
}

pub(super) type Slot = Arc<Mutex<Option<Entry>>>;

/// Parses and folds a log's rows, batch after batch (see
/// [`TableService::load`]); `None` for no event at all.
fn fold_batches(
    batches: &mut tokio::sync::mpsc::Receiver<EventRows>,
) -> Result<Option<Table>, ServiceError> {
    let mut fold = Fold::new();
    while let Some(batch) = batches.blocking_recv() {
        for e in batch.iter() {
            let event = e.event().map_err(|err| corrupt_event(e.seq, e.kind, err))?;
            fold.apply(seq_of(e.seq), &event)
                .map_err(|err| corrupt_event(e.seq, e.kind, err))?;
        }
    }
    Ok(fold.into_table())
}

impl TableService {
    /// Brings a cached table up to date (see the module documentation):
    /// nothing to read when the hub has heard of no newer version since the
    /// last read and the cache is at `min_version` at least (a version the
    /// caller has seen elsewhere); else the events after the cached version
    /// (all of them on the table's first use in this process).
    pub(super) async fn refresh<'s>(
        &self,
        table_id: Uuid,
        slot: &'s mut Option<Entry>,
        min_version: i64,
    ) -> Result<&'s mut Entry, ServiceError> {
        // Taken before reading: a commit heard after this moves `heard`,
        // an account's change `accounts`.
        let heard = self.log.hub().heard(table_id);
        let accounts = self.log.hub().accounts_epoch();
        let current = match (slot.as_ref(), heard) {
            (Some(entry), Some((epoch, version))) => {
                entry.synced == Some(epoch)
                    && version <= entry.version()
                    && min_version <= entry.version()
            }
            _ => false,
        };
        if !current {
            match slot.as_mut() {
                None => *slot = Some(self.load(table_id).await?),
                Some(entry) => self.catch_up(table_id, entry).await?,
            }
        }
        let entry = slot.as_mut().expect("loaded above");
        if !current {
            entry.synced = heard.map(|(epoch, _)| epoch);
        }
        self.name(&mut entry.loaded, accounts).await?;
        Ok(entry)
    }

    /// Reads the names of `loaded`'s persons again unless those it has
    /// still hold (see `names`): `accounts` is the hub's accounts epoch,
    /// taken before the table was read.
    pub(super) async fn name(
        &self,
        loaded: &mut CachedTable,
        accounts: Option<u64>,
    ) -> Result<(), ServiceError> {
        self.name_in(None, loaded, accounts).await
    }

    /// [`Self::name`], on the connection of the transaction `tx` when the
    /// caller holds one open (a command whose answer names a person it just
    /// seated): it reads them itself rather than wait for another of the
    /// pool while holding one (twenty joins at once held all of it).
    pub(super) async fn name_in(
        &self,
        tx: Option<&mut sqlx::PgConnection>,
        loaded: &mut CachedTable,
        accounts: Option<u64>,
    ) -> Result<(), ServiceError> {
        let names = &loaded.names;
        let read = match tx {
            Some(conn) => names.refreshed(conn, &loaded.table, accounts).await?,
            None => names.refreshed(&self.pool, &loaded.table, accounts).await?,
        };
        if let Some(names) = read {
            loaded.set_names(names);
        }
        Ok(())
    }

    /// Folds a table's whole log (its first use in this process): one
    /// binary `COPY` of seq, type and data text, its rows handed in batches
    /// to a blocking thread that parses and folds them, so that PostgreSQL
    /// producing the rows, this task receiving them and the parsing overlap.
    async fn load(&self, table_id: Uuid) -> Result<Entry, ServiceError> {
        let row = store::tables::get(&self.pool, table_id)
            .await?
            .ok_or_else(not_found)?;
        let dealer = store::seeds::get(&self.pool, table_id)
            .await?
            .map(|seed| Dealer::stored(table_id, &seed))
            .transpose()?;
        let (batches, mut received) = tokio::sync::mpsc::channel::<EventRows>(4);
        let folder = tokio::task::spawn_blocking(move || fold_batches(&mut received));
        let read = async {
            let mut log = LogCopy::begin(&self.pool).await?;
            let mut chunks = log.data_after(table_id, 0).await?;
            let mut rows = CopyRows::default();
            let mut batch = EventRows::with_capacity(LOAD_BATCH, 0);
            let mut folding = true;
            while let Some(chunk) = chunks.try_next().await? {
                rows.feed(&chunk, &mut batch).map_err(corrupt)?;
                if batch.len() >= LOAD_BATCH && folding {
                    let next = EventRows::with_capacity(LOAD_BATCH, batch.text_len());
                    let full = std::mem::replace(&mut batch, next);
                    // Once the folder stopped on a bad event (its error
                    // tells), the copy is read to its end all the same.
                    folding = batches.send(full).await.is_ok();
                }
                if !folding {
                    batch.clear();
                }
            }
            drop(chunks);
            log.end().await?;
            if !rows.ended() {
                return Err(corrupt("the copied log is cut short"));
            }
            if !batch.is_empty() && folding {
                let _ = batches.send(batch).await;
            }
            Ok::<_, ServiceError>(())
        }
        .await;
        drop(batches);
        let folded = folder.await.map_err(ServiceError::internal)?;
        read?;
        let table = folded?.ok_or_else(not_found)?;
        let loaded = CachedTable::new(table, row.created_by, row.created_at, row.due_at);
        Ok(Entry::new(loaded, dealer))
    }

    /// Reads and folds the events after the cached version (whole, with
    /// their hashes: they join the tail).
    async fn catch_up(&self, table_id: Uuid, entry: &mut Entry) -> Result<(), ServiceError> {
        let mut moved = false;
        loop {
            let after = entry.version();
            let page = store::events::read_after(&self.pool, table_id, after, REFRESH_PAGE).await?;
            let count = page.len() as i64;
            moved |= count > 0;
            for e in page {
                let event = parse_event(&e)?;
                domain::table::apply(&mut entry.loaded.table, seq_of(e.seq), &event)
                    .map_err(|err| corrupt_event(e.seq, &e.kind, err))?;
                entry.push(e, event);
            }
            if count < REFRESH_PAGE {
                // Another process appended: what it left due.
                if moved {
                    entry.loaded.due_at = store::due::due_at(&self.pool, table_id).await?;
                }
                return Ok(());
            }
        }
    }
}

/// A stored seq as the engine counts it (a seq below 1, which the table
/// refuses, is out of order for any fold).
fn seq_of(seq: i64) -> u64 {
    u64::try_from(seq).unwrap_or(0)
}
