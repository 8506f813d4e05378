//! A table's log: the one way events are written, and how every process
//! learns of them.
//!
//! - [`records`]: an event to append ([`NewEvent`], sealed with its salt), a
//!   table's new events chained to its log ([`ChainedAppend`], stamped and
//!   hashed) and an event as stored ([`StoredEvent`], the public format);
//! - [`chain`]: the canonical JSON and the hash chain, pure;
//! - [`Log::append`]: ONE append, durable as [`Durability`] says: batched
//!   with other tables' moves by the [`writer`], or inside the caller's
//!   transaction with the writes that must commit with the events (the
//!   seats' projection, an idempotent answer);
//! - [`announce`]: once committed, every process is told the table's new
//!   version ([`Log::announce`]), and its long polls wake.
//!
//! The statements themselves are the store's ([`crate::store::events`]).

pub mod announce;
pub mod chain;
pub mod records;
pub mod writer;

pub use records::{ChainedAppend, EventData, FeedNotice, NewEvent, StoredEvent};

use sqlx::{PgConnection, PgPool};
use uuid::Uuid;

use crate::store::events::Outbox;
use crate::store::{self, StoreError};
use announce::{Announced, Announcements, Announcer};
use writer::LogWriter;

/// The log of every table, as this process writes it; cheap to clone.
#[derive(Debug, Clone)]
pub struct Log {
    writer: LogWriter,
    announcements: Announcements,
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
    /// connections of their own, their tasks on the current runtime; feed
    /// items go to the webhooks' outbox as `outbox` says.
    pub fn new(pool: &PgPool, outbox: Outbox) -> Self {
        Self {
            writer: LogWriter::new(pool, outbox),
            announcements: Announcer::batcher(pool),
            outbox,
        }
    }

    /// Appends a table's chained events: the events as stored, or why not
    /// (no such table, [`StoreError::NoTable`]; not at the expected version
    /// or another writer first, [`StoreError::Conflict`]: nothing written).
    /// Once the append is committed, [`Log::announce`] it.
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

    /// Tells every process that `table_id` is at `version`, once committed
    /// (with the versions committed meanwhile); nobody waits for it.
    pub fn announce(&self, table_id: Uuid, version: i64) {
        self.announcements
            .tell(Announced::Table(table_id, Some(version)));
    }

    /// Whether feed items go to the webhooks' outbox too.
    pub fn outbox(&self) -> Outbox {
        self.outbox
    }

    /// Tells every process that `account`'s feed has new items, once
    /// committed; nobody waits for it.
    pub fn announce_feed(&self, account: Uuid) {
        self.announcements.tell(Announced::Feed(account));
    }
}
