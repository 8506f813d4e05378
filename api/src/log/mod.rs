//! A table's log as the server writes and hears it: the one way events
//! are appended, and how every process learns of them (one protocol, in
//! one place).
//!
//! - [`Log::append`]: ONE append, durable as [`Durability`] says: batched
//!   with other tables' moves by the [`writer`], or inside the caller's
//!   transaction with the writes that must commit with the events (the
//!   seats' projection, an idempotent answer);
//! - [`announce`]: once committed, every process is told the table's new
//!   version ([`Log::committed`]);
//! - [`hub`]: each process's `LISTEN` connection hears every announcement,
//!   notes the table's version (so that its cache knows whether to read the
//!   log) and wakes the table's waiters;
//! - [`versions`]: batched reads of tables' stored versions, so that a view
//!   is never older than the last commit of any process;
//! - [`batcher`]: the shared shape of the writer, the announcer and the
//!   version reads: a task that takes every request queued while its last
//!   statement ran, and answers each.
//!
//! What a log holds (the records, the hash chain) and the statements
//! themselves are the store's ([`store::records`], [`store::chain`],
//! [`store::events`]).

pub mod announce;
pub mod batcher;
pub mod hub;
pub mod versions;
pub mod writer;

use sqlx::{PgConnection, PgPool};
use uuid::Uuid;

use announce::{Announced, Announcements, Announcer};
use hub::CommitHub;
use store::feed::Outbox;
use store::{ChainedAppend, StoreError, StoredEvent};
use writer::LogWriter;

/// The log of every table, as this process writes it; cheap to clone.
#[derive(Debug, Clone)]
pub struct Log {
    writer: LogWriter,
    announcements: Announcements,
    /// This process's followers, woken by [`Log::committed`].
    hub: CommitHub,
    outbox: Outbox,
}

/// How an append is made durable.
#[derive(Debug)]
pub enum Durability<'t> {
    /// One statement, shared with the moves of other tables queued
    /// meanwhile, committed by itself before the append answers (plain
    /// moves).
    Batched,
    /// Inside the caller's open transaction, with the writes that must
    /// commit with the events; the caller commits it, then announces.
    InTransaction(&'t mut PgConnection),
}

impl Log {
    /// The log of the database of `pool`: its writer and its announcer on
    /// connections of their own, their tasks on the current runtime; the
    /// commits wake `hub`'s followers; feed items go to the webhooks'
    /// outbox as `outbox` says.
    pub fn new(pool: &PgPool, hub: CommitHub, outbox: Outbox) -> Self {
        Self {
            writer: LogWriter::new(pool, outbox),
            announcements: Announcer::batcher(pool),
            hub,
            outbox,
        }
    }

    /// Appends a table's chained events: the events as stored, or why not
    /// (no such table, [`StoreError::NoTable`]; not at the expected version
    /// or another writer first, [`StoreError::Conflict`]: nothing written).
    /// Once the append is committed, tell it: [`Log::committed`].
    pub async fn append(
        &self,
        chained: ChainedAppend,
        durability: Durability<'_>,
    ) -> Result<Vec<StoredEvent>, StoreError> {
        if chained.events.is_empty() {
            return Ok(Vec::new());
        }
        match durability {
            Durability::Batched => self.writer.append(chained).await,
            Durability::InTransaction(conn) => {
                store::events::insert_one(conn, &chained, self.outbox).await?;
                Ok(chained.events)
            }
        }
    }

    /// The one call once an append committed: `table_id` is at `version`
    /// and `fed` accounts' feeds have new items. This process's followers
    /// wake now (the version noted before it is announced, so that hearing
    /// the announcement back wakes nobody again), and every process is
    /// told ([`announce`], with what was committed meanwhile); nobody
    /// waits for it.
    pub fn committed(&self, table_id: Uuid, version: i64, fed: impl IntoIterator<Item = Uuid>) {
        self.hub.committed(table_id, version);
        self.announcements
            .tell(Announced::Table(table_id, Some(version)));
        self.fed(fed);
    }

    /// `accounts`' feeds have new items, committed without a table's events
    /// (a turn's alarm): their followers wake, here and in every process.
    pub fn fed(&self, accounts: impl IntoIterator<Item = Uuid>) {
        for account in accounts {
            self.hub.fed(account);
            self.announcements.tell(Announced::Feed(account));
        }
    }

    /// Tells every process, inside `tx`, that `account` changed what they
    /// cache of it (its name, its sessions): PostgreSQL delivers it when,
    /// and only if, `tx` commits. Once it has, call
    /// [`Log::account_changed`].
    pub async fn announce_account(
        &self,
        tx: &mut PgConnection,
        account: Uuid,
    ) -> Result<(), sqlx::Error> {
        announce::announce(tx, &[Announced::Account(account)]).await
    }

    /// An account's change committed: this process forgets what it cached
    /// of accounts now (the others when they hear it).
    pub fn account_changed(&self) {
        self.hub.accounts_changed();
    }

    /// The hub of this process's followers, which [`Log::committed`]
    /// wakes.
    pub fn hub(&self) -> &CommitHub {
        &self.hub
    }

    /// Whether feed items go to the webhooks' outbox too.
    pub fn outbox(&self) -> Outbox {
        self.outbox
    }
}
