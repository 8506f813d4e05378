//! Reads of a table: its state now or once it changes (the view's long
//! poll), its events after a seq (from the cache's tail or the log, with
//! a long poll), and the list of tables.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use domain::Status;
use tokio::time::Instant;
use uuid::Uuid;

use super::{redact, redact_parsed, CachedTable, TableService};
use crate::commit::versions;
use crate::error::ApiError;
use crate::log::StoredEvent;
use crate::store;

impl TableService {
    /// `min_version`, or the table's stored version when it is above (one
    /// indexed read, batched with the reads asked for meanwhile, see
    /// `crate::commit::versions`) if `check` says to look.
    async fn at_least_stored(
        &self,
        table_id: Uuid,
        min_version: i64,
        check: bool,
    ) -> Result<i64, ApiError> {
        if !check {
            return Ok(min_version);
        }
        Ok(versions::stored_version(&self.versions, table_id)
            .await?
            .map_or(min_version, |v| v.max(min_version)))
    }

    /// Runs `f` on the up-to-date table (404 when there is none), at
    /// `min_version` at least (a version the caller has seen) and at the
    /// table's stored version at least, without reading the log when the
    /// cache is there and nothing newer was heard of.
    pub async fn read<R>(
        &self,
        table_id: Uuid,
        min_version: i64,
        f: impl FnOnce(&CachedTable) -> R,
    ) -> Result<R, ApiError> {
        // A read is never older than the last commit, whichever process made
        // it (a client moving through one process and reading through
        // another sees its move): one indexed read of the table's version
        // (with the reads asked for meanwhile, see `crate::commit::versions`),
        // and the log only when the cache is behind it. A table not cached
        // yet is read from its log whole, which is as recent as that.
        let slot = self.slot(table_id);
        let cached = slot.try_lock().map_or(true, |entry| entry.is_some());
        let min_version = self.at_least_stored(table_id, min_version, cached).await?;
        let mut guard = slot.lock().await;
        let entry = self.refresh(table_id, &mut guard, min_version).await?;
        Ok(f(&entry.loaded))
    }

    /// Runs `f` on the table once `unchanged` is false of it (a long poll of
    /// the view): at once when the cache is past it, else as soon as a
    /// commit is heard (from any process, as in [`Self::poll_events`]) that
    /// makes it so, until `deadline`. `seen` is a version the caller has
    /// seen: the table is never read older. `None` when nothing changed by
    /// the deadline; the caller then reads the table as usual, which checks
    /// its stored version (a notification can be lost).
    pub async fn read_when<R>(
        &self,
        table_id: Uuid,
        seen: i64,
        deadline: Instant,
        unchanged: impl Fn(&CachedTable) -> bool,
        f: impl FnOnce(&CachedTable) -> R,
    ) -> Result<Option<R>, ApiError> {
        // Subscribe before reading, so a commit in between is not missed.
        let mut rx = self.hub.subscribe(table_id);
        loop {
            {
                let slot = self.slot(table_id);
                let mut guard = slot.lock().await;
                let entry = self.refresh(table_id, &mut guard, seen).await?;
                if !unchanged(&entry.loaded) {
                    return Ok(Some(f(&entry.loaded)));
                }
            }
            if !self.hub.wait(&mut rx, deadline).await {
                return Ok(None);
            }
        }
    }

    /// The events after `after` (at most `limit`) as `account_id` may see
    /// them. With none yet, waits until `deadline` for one to be committed
    /// (by any process: the hub hears PostgreSQL's notifications), without
    /// polling the database in between. 404 when the table does not exist.
    /// Recent events come from the cache, older ones from the log.
    #[tracing::instrument(skip(self))]
    pub async fn poll_events(
        &self,
        table_id: Uuid,
        account_id: Uuid,
        after: i64,
        limit: i64,
        deadline: Option<Instant>,
    ) -> Result<Vec<StoredEvent>, ApiError> {
        // Subscribe before reading, so a commit in between is not missed.
        let mut rx = self.hub.subscribe(table_id);
        loop {
            let page = self
                .events_after(table_id, account_id, after, limit, false)
                .await?;
            let Some(deadline) = deadline.filter(|_| page.is_empty()) else {
                return Ok(page);
            };
            if !self.hub.wait(&mut rx, deadline).await {
                // Nothing heard: check the log's version all the same (a
                // notification can be lost).
                return self
                    .events_after(table_id, account_id, after, limit, true)
                    .await;
            }
        }
    }

    /// The events after `after` (at most `limit`) as `account_id` may see
    /// them now, without waiting: from the cache when it holds them and is
    /// current (by what the hub heard; with `verify`, also by the table's
    /// stored version, one indexed read), else from the log.
    pub async fn events_after(
        &self,
        table_id: Uuid,
        account_id: Uuid,
        after: i64,
        limit: i64,
        verify: bool,
    ) -> Result<Vec<StoredEvent>, ApiError> {
        let min_version = self.at_least_stored(table_id, after, verify).await?;
        let slot = self.slot(table_id);
        let mut guard = slot.lock().await;
        let entry = self.refresh(table_id, &mut guard, min_version).await?;
        // The cache is at least as recent as the page: the caller's seat is
        // the one the page's game events use.
        let seat = entry.loaded.seat_of(account_id);
        let version = entry.version();
        let cached_from = version - entry.tail.len() as i64;
        if after >= version {
            return Ok(Vec::new());
        }
        if after >= cached_from {
            return Ok(entry
                .tail
                .iter()
                .skip((after - cached_from) as usize)
                .take(usize::try_from(limit).unwrap_or(0))
                .map(|r| redact_parsed(&r.stored, &r.event, seat))
                .collect());
        }
        drop(guard);
        let page = store::events::read_after(&self.pool, table_id, after, limit).await?;
        page.iter().map(|e| redact(e, seat)).collect()
    }

    /// A page of tables and their seated players.
    pub async fn list(
        &self,
        status: Option<Status>,
        member: Option<Uuid>,
        after: Option<(DateTime<Utc>, Uuid)>,
        limit: i64,
    ) -> Result<Vec<(store::tables::ListedTable, Vec<store::tables::SeatRow>)>, ApiError> {
        let tables = store::tables::list(&self.pool, status, member, after, limit).await?;
        let ids: Vec<Uuid> = tables.iter().map(|t| t.id).collect();
        let mut seats: HashMap<Uuid, Vec<store::tables::SeatRow>> = HashMap::new();
        for row in store::tables::players_of(&self.pool, &ids).await? {
            seats.entry(row.table_id).or_default().push(row);
        }
        Ok(tables
            .into_iter()
            .map(|t| {
                let players = seats.remove(&t.id).unwrap_or_default();
                (t, players)
            })
            .collect())
    }
}
