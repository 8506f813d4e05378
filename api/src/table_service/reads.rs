//! Reads of a table: its state now or once it changes (the view's long
//! poll), its events after a seq (from the cache's tail or the log, with
//! a long poll), the list of tables, and a player's own tables.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use domain::Status;
use tokio::time::Instant;
use uuid::Uuid;

use super::cache::Slot;
use super::{not_found, player_id, redact, redact_parsed, CachedTable, TableService};
use crate::log::versions;
use crate::service_error::ServiceError;
use store::accounts::{Account, Role};
use store::StoredEvent;

/// How a read checks the table's stored version (one indexed read, batched
/// with the reads asked for meanwhile, see `crate::log::versions`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Check {
    /// Not at all: the cache is as recent as what the hub heard.
    No,
    /// Now: a read after a commit made through another process sees it.
    Now,
    /// As read at most a second ago, by any caller: the check of a stream
    /// or long poll that heard nothing by its deadline (a notification can
    /// be lost), which the idle streams of a table make together.
    Recent,
}

impl TableService {
    /// `min_version`, or the table's stored version when it is above (as
    /// `check` says to look).
    async fn at_least_stored(
        &self,
        table_id: Uuid,
        min_version: i64,
        check: Check,
    ) -> Result<i64, ServiceError> {
        let stored = match check {
            Check::No => return Ok(min_version),
            Check::Now => versions::stored_version(&self.versions, table_id).await?,
            Check::Recent => versions::recent_stored_version(&self.versions, table_id).await?,
        };
        Ok(stored.map_or(min_version, |v| v.max(min_version)))
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
    ) -> Result<R, ServiceError> {
        self.read_checked(table_id, min_version, Check::Now, f)
            .await
    }

    /// [`Self::read`], the stored version looked at as `check` says.
    async fn read_checked<R>(
        &self,
        table_id: Uuid,
        min_version: i64,
        check: Check,
        f: impl FnOnce(&CachedTable) -> R,
    ) -> Result<R, ServiceError> {
        // A read is never older than the last commit, whichever process made
        // it (a client moving through one process and reading through
        // another sees its move): the table's stored version, and the log
        // only when the cache is behind it. A table not cached yet is read
        // from its log whole, which is as recent as that.
        let slot = self.slot(table_id);
        let cached = slot.try_lock().map_or(true, |entry| entry.is_some());
        let check = if cached { check } else { Check::No };
        let min_version = self.at_least_stored(table_id, min_version, check).await?;
        self.read_slot(table_id, &slot, min_version, f).await
    }

    /// Nothing, when `caller` may see the table (`domain::Table::may_see`;
    /// administrators see every table); else 404, as for a table that does
    /// not exist, so that nobody learns that a private table exists. Asked
    /// of the cache first; a refusal is asked again of the stored version,
    /// since the caller may have just joined through another process.
    pub async fn seen_by(&self, table_id: Uuid, caller: &Account) -> Result<(), ServiceError> {
        if caller.role == Role::Admin {
            return Ok(());
        }
        // A table this process holds no fold of: its row says whether it is
        // public, without folding its log (a history read needs no fold).
        let slot = self.slot(table_id);
        if !slot.try_lock().map_or(true, |entry| entry.is_some()) {
            match store::tables::is_public(&self.pool, table_id).await? {
                None => return Err(not_found()),
                Some(true) => return Ok(()),
                Some(false) => {}
            }
        }
        let who = player_id(caller.id);
        let sees = |l: &CachedTable| l.table.may_see(&who);
        if self.read_cached(table_id, 0, sees).await? || self.read(table_id, 0, sees).await? {
            return Ok(());
        }
        Err(not_found())
    }

    /// Subscribes to the commits of `table_id`, from any process: take it
    /// before the first read, so that no commit between a read and the wait
    /// is missed.
    pub fn subscribe(&self, table_id: Uuid) -> Subscription {
        Subscription {
            table_id,
            rx: self.log.hub().subscribe(table_id),
        }
    }

    /// The long polls' and streams' one loop: `read` until it finds
    /// something, waiting between reads for a commit of the table (heard
    /// from any process, without polling the database), until `deadline`;
    /// `None` then. `read` is told whether to check the table's stored
    /// version as well: after a wait that heard nothing it does, once,
    /// before the answer is `None` (a notification can be lost).
    ///
    /// A stream holds this future between its frames: the read, which may
    /// reach the database and so is large, is boxed for its duration, so
    /// that what waits is small (a few hundred bytes, not kilobytes, for
    /// each of tens of thousands of idle streams).
    pub async fn wait_for<R>(
        &self,
        subscription: &mut Subscription,
        deadline: Instant,
        mut read: impl AsyncFnMut(bool) -> Result<Option<R>, ServiceError>,
    ) -> Result<Option<R>, ServiceError> {
        let mut verify = false;
        loop {
            if let Some(found) = Box::pin(read(verify)).await? {
                return Ok(Some(found));
            }
            if verify {
                return Ok(None);
            }
            if !self.log.hub().wait(&mut subscription.rx, deadline).await {
                if Instant::now() < deadline {
                    // The wake-up channel closed: subscribe again, read again.
                    *subscription = self.subscribe(subscription.table_id);
                } else {
                    verify = true;
                }
            }
        }
    }

    /// Runs `f` on the table once `unchanged` is false of it (a long poll of
    /// the view): at once when the cache is past it, else as soon as a
    /// commit makes it so, until `deadline` ([`Self::wait_for`]). `seen` is a
    /// version the caller has seen: the table is never read older. `None`
    /// when nothing changed by the deadline.
    pub async fn read_when<R>(
        &self,
        table_id: Uuid,
        seen: i64,
        deadline: Instant,
        unchanged: impl Fn(&CachedTable) -> bool,
        f: impl Fn(&CachedTable) -> R,
    ) -> Result<Option<R>, ServiceError> {
        let mut subscription = self.subscribe(table_id);
        let changed = |l: &CachedTable| (!unchanged(l)).then(|| f(l));
        self.wait_for(&mut subscription, deadline, async |verify| match verify {
            true => {
                self.read_checked(table_id, seen, Check::Recent, &changed)
                    .await
            }
            false => self.read_cached(table_id, seen, &changed).await,
        })
        .await
    }

    /// `f` on the table as the cache has it, at `min_version` at least,
    /// without asking for its stored version (the hub tells the cache of
    /// every commit it hears).
    pub(super) async fn read_cached<R>(
        &self,
        table_id: Uuid,
        min_version: i64,
        f: impl FnOnce(&CachedTable) -> R,
    ) -> Result<R, ServiceError> {
        self.read_slot(table_id, &self.slot(table_id), min_version, f)
            .await
    }

    /// `f` on the table of `slot`, brought up to `min_version` at least.
    async fn read_slot<R>(
        &self,
        table_id: Uuid,
        slot: &Slot,
        min_version: i64,
        f: impl FnOnce(&CachedTable) -> R,
    ) -> Result<R, ServiceError> {
        let mut guard = slot.lock().await;
        let entry = self.refresh(table_id, &mut guard, min_version).await?;
        Ok(f(&entry.loaded))
    }

    /// The events after `after` (at most `limit`) as `account_id` may see
    /// them. With none yet and a `deadline`, waits for one to be committed
    /// ([`Self::wait_for`]). 404 when the table does not exist. Recent
    /// events come from the cache, older ones from the log.
    #[tracing::instrument(skip(self))]
    pub async fn poll_events(
        &self,
        table_id: Uuid,
        account_id: Uuid,
        after: i64,
        limit: i64,
        deadline: Option<Instant>,
    ) -> Result<Vec<StoredEvent>, ServiceError> {
        let Some(deadline) = deadline else {
            return self
                .events_after(table_id, account_id, after, limit, false)
                .await;
        };
        let mut subscription = self.subscribe(table_id);
        let page = self
            .wait_for(&mut subscription, deadline, async |verify| {
                self.events_after(table_id, account_id, after, limit, verify)
                    .await
                    .map(|page| (!page.is_empty()).then_some(page))
            })
            .await?;
        Ok(page.unwrap_or_default())
    }

    /// The events after `after` (at most `limit`) as `account_id` may see
    /// them now, without waiting: from the cache when it holds them and is
    /// current (by what the hub heard; with `verify`, also by the table's
    /// stored version as read at most a second ago, by any caller),
    /// else from the log.
    pub async fn events_after(
        &self,
        table_id: Uuid,
        account_id: Uuid,
        after: i64,
        limit: i64,
        verify: bool,
    ) -> Result<Vec<StoredEvent>, ServiceError> {
        let check = if verify { Check::Recent } else { Check::No };
        let min_version = self.at_least_stored(table_id, after, check).await?;
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
        viewer: Uuid,
        after: Option<(DateTime<Utc>, Uuid)>,
        limit: i64,
    ) -> Result<Vec<(store::tables::ListedTable, Vec<store::tables::SeatRow>)>, ServiceError> {
        let tables = store::tables::list(&self.pool, status, member, viewer, after, limit).await?;
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

/// A page of a player's tables ([`TableService::mine`]).
#[derive(Debug)]
pub struct Mine {
    /// The tables, as this process has them now.
    pub tables: Vec<(Uuid, CachedTable)>,
    /// How many tables wait for the player, in all.
    pub my_turn: i64,
    /// The key of the page's last table when more follow (the cursor).
    pub next: Option<(DateTime<Utc>, Uuid)>,
}

impl TableService {
    /// A page of `account`'s tables: those that wait for it (`on_turn`),
    /// soonest deadline first, or those it sits at that are not over,
    /// oldest first; chosen by an index, never by reading a log, then
    /// read (concurrently) like any table.
    pub async fn mine(
        &self,
        account: Uuid,
        on_turn: bool,
        after: Option<(DateTime<Utc>, Uuid)>,
        limit: i64,
    ) -> Result<Mine, ServiceError> {
        let mut page = match on_turn {
            true => store::mine::on_turn(&self.pool, account, after, limit + 1).await?,
            false => store::mine::not_over(&self.pool, account, after, limit + 1).await?,
        };
        let more = page.len() as i64 > limit;
        page.truncate(limit as usize);
        let next = page.last().filter(|_| more).map(|(id, key)| (*key, *id));
        let reads = page.iter().map(|(id, _)| async move {
            Ok::<_, ServiceError>((*id, self.read(*id, 0, CachedTable::clone).await?))
        });
        let tables = futures_util::future::try_join_all(reads).await?;
        let my_turn = store::mine::on_turn_count(&self.pool, account).await?;
        Ok(Mine {
            tables,
            my_turn,
            next,
        })
    }
}

/// A caller's subscription to a table's commits ([`TableService::subscribe`]).
#[derive(Debug)]
pub struct Subscription {
    table_id: Uuid,
    rx: tokio::sync::watch::Receiver<u64>,
}
