//! Accounts an app store accepts (docs/API.md "Accounts"): deleting one,
//! erasing one, and the eraser that erases them when due.
//!
//! Deleting (the account's own request) revokes every session at once,
//! resigns its running seats (the server plays them out, as after any
//! resignation), frees its waiting ones and closes the rematches that keep
//! one for it, so that nobody waits for it
//! through the grace period; the account is erased when the period ends,
//! unless a log-in cancels it first. Erasing (then, by an admin, or a
//! guest idle too long) does the same for seats taken meanwhile, then in
//! ONE transaction forgets the person: name, password, sessions, feed and
//! undelivered webhook items, idempotent answers, statistics. The row
//! keeps its random id, which the logs and the results name: every read
//! shows its seats as erased ([`crate::table_service::Names`]), no hash
//! changes. Each step is idempotent, so an erasure cut short is finished
//! by the next pass of the eraser.

use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use domain::{Status, TableCommand};
use sqlx::PgPool;
use uuid::Uuid;

use crate::service_error::ServiceError;
use crate::table_service::{player_id, TableService};

mod sanctions;
pub use sanctions::{AccountRecord, Sanction, SanctionKind, MAX_SUSPENSION_DAYS, MAX_VOID_DAYS};

/// Accounts erased per pass of the eraser, at most.
const ERASE_BATCH: i64 = 50;

/// Tables read per page when an account leaves its seats.
const SEATS_PAGE: i64 = 100;

/// The accounts' service; one per process.
#[derive(Debug, Clone)]
pub struct Accounts {
    pool: PgPool,
    tables: Arc<TableService>,
    /// Between a deletion and the erasure (`HUIT_ERASE_GRACE_SECS`).
    grace: Duration,
    /// A guest unused this long is erased (`HUIT_GUEST_IDLE_SECS`).
    guest_idle: Duration,
}

impl Accounts {
    pub fn new(
        pool: PgPool,
        tables: Arc<TableService>,
        grace: Duration,
        guest_idle: Duration,
    ) -> Self {
        Self {
            pool,
            tables,
            grace,
            guest_idle,
        }
    }

    /// The account asks to be deleted (see the module documentation):
    /// when it will be erased (now, without a grace period).
    pub async fn delete(&self, account: Uuid) -> Result<DateTime<Utc>, ServiceError> {
        let grace = chrono::Duration::from_std(self.grace).map_err(ServiceError::internal)?;
        let erase_at = store::chain::truncate_at(Utc::now() + grace);
        let mut tx = self.pool.begin().await?;
        let erase_at = store::accounts::request_erasure(&mut *tx, account, erase_at)
            .await?
            .ok_or_else(|| ServiceError::NotFound("no such account".into()))?;
        store::sessions::revoke_all(&mut *tx, account, None).await?;
        store::devices::drop_all(&mut *tx, account).await?;
        self.tables.log().announce_account(&mut tx, account).await?;
        tx.commit().await?;
        self.tables.log().account_changed();
        tracing::info!(account_id = %account, %erase_at, "account deletion asked");
        // Erasing leaves the seats first; so does a deletion with a grace
        // period, at once.
        if self.grace.is_zero() {
            self.erase(account).await?;
        } else {
            self.leave_seats(account).await?;
        }
        Ok(erase_at)
    }

    /// Erases an account now (see the module documentation): `false` when
    /// it was erased already.
    pub async fn erase(&self, account: Uuid) -> Result<bool, ServiceError> {
        self.leave_seats(account).await?;
        let mut tx = self.pool.begin().await?;
        let erased = store::accounts::erase(&mut tx, account).await?;
        if erased {
            self.tables.log().announce_account(&mut tx, account).await?;
        }
        tx.commit().await?;
        if erased {
            self.tables.log().account_changed();
            tracing::info!(account_id = %account, "account erased");
        }
        Ok(erased)
    }

    /// An admin erases an account at once, recorded as their action: 404
    /// when there is no such account (an erased one: its erasure is
    /// done).
    pub async fn erase_by_admin(&self, admin: Uuid, account: Uuid) -> Result<(), ServiceError> {
        if store::accounts::find_by_id(&self.pool, account)
            .await?
            .is_none()
        {
            return Err(ServiceError::NotFound("no such account".into()));
        }
        if self.erase(account).await? {
            let action = store::disputes::AdminAction::EraseAccount;
            store::disputes::record_on_account(&self.pool, admin, action, account, None).await?;
        }
        Ok(())
    }

    /// One pass of the eraser: the deletions due and the guests idle since
    /// `HUIT_GUEST_IDLE_SECS`, erased one by one (how many), and the voids
    /// of sanctions cut short, finished.
    pub async fn erase_due(&self) -> Result<usize, ServiceError> {
        let idle = chrono::Duration::from_std(self.guest_idle).map_err(ServiceError::internal)?;
        let due =
            store::accounts::due_for_erasure(&self.pool, Utc::now() - idle, ERASE_BATCH).await?;
        let mut erased = 0;
        for account in due {
            erased += usize::from(self.erase(account).await?);
        }
        self.finish_voids().await?;
        Ok(erased)
    }

    /// The account resigns its running seats, leaves its waiting ones and
    /// declines the rematches that keep one for it (a seat it left,
    /// resigned or lost meanwhile is passed over).
    async fn leave_seats(&self, account: Uuid) -> Result<(), ServiceError> {
        let mut after = None;
        loop {
            let page = store::mine::not_over(&self.pool, account, after, SEATS_PAGE).await?;
            for &(table_id, _) in &page {
                let status = self.tables.read(table_id, 0, |l| l.table.status()).await?;
                let account_id = player_id(account);
                let command = match status {
                    Status::Waiting => TableCommand::Leave { account_id },
                    Status::Playing => TableCommand::Resign { account_id },
                    Status::Finished | Status::Aborted => continue,
                };
                self.act_on(table_id, command).await?;
            }
            if page.len() < SEATS_PAGE as usize {
                break;
            }
            after = page.last().map(|&(id, at)| (at, id));
        }
        // A rematch that keeps a seat for the account would wait for it
        // forever: declined, it is closed.
        for table_id in store::lobby::rematches_waiting_for(&self.pool, account).await? {
            let account_id = player_id(account);
            self.act_on(table_id, TableCommand::DeclineRematch { account_id })
                .await?;
        }
        Ok(())
    }

    /// `command` at `table_id`; refused by the rules (the seat left or
    /// resigned, the table over, meanwhile), it is passed over.
    async fn act_on(&self, table_id: Uuid, command: TableCommand) -> Result<(), ServiceError> {
        let acted = self
            .tables
            .act(table_id, &command, None, None, |_, _, _| Ok(()))
            .await;
        match acted {
            Ok(_) | Err(ServiceError::Rules(_)) => Ok(()),
            Err(e) => Err(e),
        }
    }
}

/// Runs the eraser every `every`, until the runtime stops.
pub fn spawn(accounts: Accounts, every: Duration) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            if let Err(e) = accounts.erase_due().await {
                tracing::warn!(error = %e, "the eraser's pass failed; the next one tries again");
            }
        }
    })
}
