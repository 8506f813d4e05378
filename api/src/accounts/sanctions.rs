//! Sanctions (docs/API.md "Corrections and sanctions"): an admin suspends
//! an account until a date, or bans it. In one transaction, with the
//! account's row locked (see [`store::sanctions`]): the sanction, the admin
//! action, every session revoked and announced to every process. Then its
//! running seats are resigned and its waiting ones left, as a deletion
//! does; and with `void_rated_games_since`, each of its rated games that
//! ended since then is voided by a `result_corrected` in its own log (the
//! game re-rated, and every later one, in that correction's transaction:
//! [`crate::ratings`]). The request voids the latest
//! [`VOIDS_IN_A_REQUEST`]; the eraser's passes void the rest, and finish
//! what a stopped process left: whoever voids holds the sanction's voids
//! for a minute, renewed with each game ([`store::sanctions::claim_voids`]),
//! so that no two void a game twice; the sanction says when they were all
//! done.

use chrono::{DateTime, Utc};
use domain::table::{Correction, Grounds};
use domain::TableCommand;
use uuid::Uuid;

use super::Accounts;
use crate::codes::ProblemCode;
use crate::disputes;
use crate::service_error::ServiceError;
use crate::table_service::player_id;
use store::accounts::Account;
use store::disputes::AdminAction;
use store::sanctions::{Lifted, NewSanction, PartnerRow, PendingVoids, SanctionRow};

/// The longest suspension, in days.
pub const MAX_SUSPENSION_DAYS: i64 = 3650;
/// How far back `void_rated_games_since` may reach, in days.
pub const MAX_VOID_DAYS: i64 = 366;
/// Sanctions and partners shown on an account's admin page.
const SHOWN: i64 = 100;
const PARTNERS_SHOWN: i64 = 10;
/// Games a sanction's request voids before it answers, at most (each
/// re-rates its ruleset from that game on: up to a second at 10,000 later
/// games, BENCHMARKS.md).
pub const VOIDS_IN_A_REQUEST: usize = 20;
/// Sanctions whose voids one pass of the eraser goes on with, and games
/// it voids of each, at most.
const SANCTIONS_A_PASS: i64 = 10;
const VOIDS_A_PASS: usize = 100;

/// What an admin does to an account.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SanctionKind {
    /// Log-ins refused until a date.
    Suspend { until: DateTime<Utc> },
    /// Log-ins refused for good (until lifted).
    Ban,
}

impl SanctionKind {
    fn as_str(self) -> &'static str {
        match self {
            Self::Suspend { .. } => "suspend",
            Self::Ban => "ban",
        }
    }

    fn until(self) -> Option<DateTime<Utc>> {
        match self {
            Self::Suspend { until } => Some(until),
            Self::Ban => None,
        }
    }
}

/// A sanction as an admin asks for it.
#[derive(Debug, Clone)]
pub struct Sanction<'a> {
    pub kind: SanctionKind,
    pub reason: &'a str,
    pub void_rated_games_since: Option<DateTime<Utc>>,
}

fn invalid(detail: String) -> ServiceError {
    ServiceError::Invalid {
        code: ProblemCode::InvalidSanction,
        detail,
    }
}

impl Sanction<'_> {
    /// 422 `invalid_sanction` unless it can be: a reason; a suspension
    /// that ends in the future, within [`MAX_SUSPENSION_DAYS`]; voids since
    /// a past moment within [`MAX_VOID_DAYS`].
    fn check(&self, now: DateTime<Utc>) -> Result<(), ServiceError> {
        disputes::text(ProblemCode::InvalidSanction, "reason", self.reason)?;
        if let SanctionKind::Suspend { until } = self.kind {
            if until <= now || until > now + chrono::Duration::days(MAX_SUSPENSION_DAYS) {
                return Err(invalid(format!(
                    "a suspension ends in the future, within {MAX_SUSPENSION_DAYS} days"
                )));
            }
        }
        if let Some(since) = self.void_rated_games_since {
            if since > now || since < now - chrono::Duration::days(MAX_VOID_DAYS) {
                return Err(invalid(format!(
                    "void_rated_games_since is a past moment, within {MAX_VOID_DAYS} days"
                )));
            }
        }
        Ok(())
    }
}

/// An account as an admin reads it: its sanctions (the latest 100) and the
/// accounts it sat with most in rated games (10).
#[derive(Debug)]
pub struct AccountRecord {
    pub account: Account,
    pub sanctions: Vec<SanctionRow>,
    pub partners: Vec<PartnerRow>,
}

impl Accounts {
    /// `admin` sanctions `account` (see the module documentation): 404
    /// when there is no such account (or it was erased), 422 for the
    /// admin's own or a sanction that cannot be.
    pub async fn sanction(
        &self,
        admin: Uuid,
        account: Uuid,
        sanction: Sanction<'_>,
    ) -> Result<SanctionRow, ServiceError> {
        sanction.check(Utc::now())?;
        if admin == account {
            return Err(invalid(
                "an admin does not sanction their own account".into(),
            ));
        }
        let mut tx = self.pool.begin().await?;
        if !store::sanctions::lock_for_sanction(&mut tx, account).await? {
            return Err(ServiceError::NotFound("no such account".into()));
        }
        let new = NewSanction {
            account_id: account,
            action: sanction.kind.as_str(),
            until: sanction.kind.until().map(store::chain::truncate_at),
            reason: sanction.reason,
            void_rated_games_since: sanction.void_rated_games_since,
            admin_id: admin,
        };
        let id = store::sanctions::insert(&mut tx, new).await?;
        // The request holds the voids it goes on to do.
        store::sanctions::claim_voids(&mut *tx, id).await?;
        let action = AdminAction::SanctionAccount;
        store::disputes::record_on_account(&mut *tx, admin, action, account, Some(id)).await?;
        store::sessions::revoke_all(&mut *tx, account, None).await?;
        store::devices::drop_all(&mut *tx, account).await?;
        self.tables.log().announce_account(&mut tx, account).await?;
        tx.commit().await?;
        self.tables.log().account_changed();
        tracing::info!(account_id = %account, sanction_id = %id, "account sanctioned");
        self.leave_seats(account).await?;
        if let Some(since) = sanction.void_rated_games_since {
            let pending = PendingVoids {
                id,
                account_id: account,
                admin_id: admin,
                since,
            };
            self.void_games(pending, VOIDS_IN_A_REQUEST).await?;
        }
        self.sanction_of(id).await
    }

    /// `admin` lifts the sanction `id` of `account`, recorded as their
    /// action: 404 when the account has no such sanction, 409
    /// `already_lifted`. (Games it voided stay voided: a correction is
    /// undone by another, on a dispute.)
    pub async fn lift_sanction(
        &self,
        admin: Uuid,
        account: Uuid,
        id: Uuid,
    ) -> Result<SanctionRow, ServiceError> {
        let mut tx = self.pool.begin().await?;
        match store::sanctions::lift(&mut tx, account, id, admin).await? {
            Lifted::Now => {}
            Lifted::Already => {
                return Err(ServiceError::Conflict {
                    code: ProblemCode::AlreadyLifted,
                    detail: "this sanction was lifted already".into(),
                })
            }
            Lifted::NoSuchSanction => {
                return Err(ServiceError::NotFound(
                    "no such sanction of this account".into(),
                ))
            }
        }
        let action = AdminAction::LiftSanction;
        store::disputes::record_on_account(&mut *tx, admin, action, account, Some(id)).await?;
        tx.commit().await?;
        tracing::info!(account_id = %account, sanction_id = %id, "sanction lifted");
        self.sanction_of(id).await
    }

    /// The account's sanctions and partners (404: no such account).
    pub async fn record(&self, account: Uuid) -> Result<AccountRecord, ServiceError> {
        let Some(found) = store::accounts::find_by_id(&self.pool, account).await? else {
            return Err(ServiceError::NotFound("no such account".into()));
        };
        Ok(AccountRecord {
            account: found,
            sanctions: store::sanctions::of_account(&self.pool, account, SHOWN).await?,
            partners: store::sanctions::partners(&self.pool, account, PARTNERS_SHOWN).await?,
        })
    }

    /// Goes on with the voids of sanctions nobody holds (a pass of the
    /// eraser): how many sanctions.
    pub(super) async fn finish_voids(&self) -> Result<usize, ServiceError> {
        let pending = store::sanctions::voids_pending(&self.pool, SANCTIONS_A_PASS).await?;
        let mut taken = 0;
        for &p in &pending {
            if store::sanctions::claim_voids(&self.pool, p.id).await? {
                self.void_games(p, VOIDS_A_PASS).await?;
                taken += 1;
            }
        }
        Ok(taken)
    }

    /// Voids the latest `most` rated games of the sanctioned account that
    /// ended since `p.since` (held by the caller), each by a correction in
    /// its log (a game voided already is no longer rated, so not found
    /// again); says the voids are done when none is left, or lets go of
    /// them for the next pass.
    async fn void_games(&self, p: PendingVoids, most: usize) -> Result<(), ServiceError> {
        // A game whose rating a busy ruleset deferred is rated first, so
        // that it is found.
        crate::ratings::rate_deferred(&self.pool).await?;
        let mut games =
            store::sanctions::rated_games_since(&self.pool, p.account_id, p.since).await?;
        let left = games.len() > most;
        games.truncate(most);
        let grounds = Grounds::SanctionId(p.id.to_string());
        for &table_id in &games {
            let command = TableCommand::CorrectResult {
                by: player_id(p.admin_id),
                grounds: grounds.clone(),
                correction: Correction::Void {},
            };
            let mut tx = self.pool.begin().await?;
            store::sanctions::count_void(&mut *tx, p.id).await?;
            self.tables.correct(tx, table_id, &command).await?;
        }
        if left {
            store::sanctions::release_voids(&self.pool, p.id).await?;
        } else {
            store::sanctions::voids_done(&self.pool, p.id).await?;
        }
        if !games.is_empty() {
            tracing::info!(sanction_id = %p.id, games = games.len(), left, "rated games voided");
        }
        Ok(())
    }

    async fn sanction_of(&self, id: Uuid) -> Result<SanctionRow, ServiceError> {
        store::sanctions::get(&self.pool, id)
            .await?
            .ok_or_else(|| ServiceError::internal(format!("sanction {id} vanished")))
    }
}
