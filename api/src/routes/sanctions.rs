//! Admins' routes on a player's account: sanctioning it, lifting a
//! sanction, and the account's page (its sanctions, the accounts it plays
//! with most). The rules and the transactions: [`crate::accounts`].

use actix_web::{delete, get, post, web, HttpResponse};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use crate::accounts::{Accounts, Sanction, SanctionKind};
use crate::auth::AuthUser;
use crate::codes::ProblemCode;
use crate::error::{ApiError, Problem};
use crate::routes::accounts::AccountPath;
use crate::routes::problems::{Authenticated, JsonBody};
use store::accounts::Role;
use store::sanctions::{PartnerRow, SanctionRow};

/// What an admin does to an account.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum SanctionAction {
    /// Log-ins refused until `until`.
    Suspend,
    /// Log-ins refused until an admin lifts it.
    Ban,
}

/// A sanction, as an admin asks for it.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({
    "action": "suspend", "until": "2025-03-01T00:00:00Z",
    "reason": "Colluded with bob in 12 games", "void_rated_games_since": "2025-01-15T00:00:00Z"
}))]
pub struct NewSanctionDto {
    pub action: SanctionAction,
    /// A suspension's end (required for `suspend`, refused for `ban`): in
    /// the future, within 3,650 days.
    pub until: Option<DateTime<Utc>>,
    /// Why, in 1 to 2,000 characters (admins read it; the player does
    /// not).
    pub reason: String,
    /// Void each rated game of the account that ended at or after this
    /// moment (within the last 366 days): a `result_corrected` in each
    /// game's log, everyone's ratings recomputed.
    pub void_rated_games_since: Option<DateTime<Utc>>,
}

impl NewSanctionDto {
    fn sanction(&self) -> Result<Sanction<'_>, ApiError> {
        let invalid = |detail: &str| ApiError::Validation {
            code: ProblemCode::InvalidSanction,
            detail: detail.into(),
        };
        let kind = match (self.action, self.until) {
            (SanctionAction::Suspend, Some(until)) => SanctionKind::Suspend { until },
            (SanctionAction::Suspend, None) => {
                return Err(invalid("a suspension says `until` when it ends"))
            }
            (SanctionAction::Ban, None) => SanctionKind::Ban,
            (SanctionAction::Ban, Some(_)) => {
                return Err(invalid("a ban has no end: no `until` (suspend instead)"))
            }
        };
        Ok(Sanction {
            kind,
            reason: &self.reason,
            void_rated_games_since: self.void_rated_games_since,
        })
    }
}

fn sanction_example() -> serde_json::Value {
    serde_json::json!({
        "id": "3d1f0c9e-7a2b-4c5d-8e6f-0a1b2c3d4e5f", "account_id": "0b5c9e04-5f5e-4a43-9f1e-0c2b8d1c7a10",
        "action": "suspend", "until": "2025-03-01T00:00:00.000000Z",
        "reason": "Colluded with bob in 12 games", "void_rated_games_since": "2025-01-15T00:00:00Z",
        "games_voided": 12, "voided_at": "2025-02-01T09:00:01.250000Z",
        "created_by": "admin", "created_at": "2025-02-01T09:00:00.000000Z",
        "lifted_by": null, "lifted_at": null, "standing": true
    })
}

/// A sanction.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = sanction_example)]
pub struct SanctionDto {
    pub id: Uuid,
    pub account_id: Uuid,
    pub action: SanctionAction,
    /// A suspension's end; null: a ban.
    #[schema(required = true)]
    pub until: Option<DateTime<Utc>>,
    pub reason: String,
    #[schema(required = true)]
    pub void_rated_games_since: Option<DateTime<Utc>>,
    /// The rated games voided so far.
    pub games_voided: i32,
    /// When the voids were all done; null: none asked, or not all done
    /// yet.
    #[schema(required = true)]
    pub voided_at: Option<DateTime<Utc>>,
    /// The admin's username; null: their account was erased.
    #[schema(required = true)]
    pub created_by: Option<String>,
    pub created_at: DateTime<Utc>,
    #[schema(required = true)]
    pub lifted_by: Option<String>,
    #[schema(required = true)]
    pub lifted_at: Option<DateTime<Utc>>,
    /// Whether it refuses log-ins now: not lifted, not past its end.
    pub standing: bool,
}

impl TryFrom<SanctionRow> for SanctionDto {
    type Error = ApiError;

    fn try_from(s: SanctionRow) -> Result<Self, ApiError> {
        let action = match s.action.as_str() {
            "suspend" => SanctionAction::Suspend,
            "ban" => SanctionAction::Ban,
            other => return Err(ApiError::internal(format!("sanction {}: {other}", s.id))),
        };
        let standing = s.lifted_at.is_none() && s.until.is_none_or(|until| until > Utc::now());
        Ok(Self {
            id: s.id,
            account_id: s.account_id,
            action,
            until: s.until,
            reason: s.reason,
            void_rated_games_since: s.void_rated_games_since,
            games_voided: s.games_voided,
            voided_at: s.voided_at,
            created_by: s.created_by,
            created_at: s.created_at,
            lifted_by: s.lifted_by,
            lifted_at: s.lifted_at,
            standing,
        })
    }
}

/// An account the player sat with in rated games, and how each placed
/// when they did: the first sign of collusion operators look at.
#[derive(Debug, Serialize, ToSchema)]
pub struct PartnerDto {
    pub account_id: Uuid,
    /// Null: the account was erased.
    #[schema(required = true)]
    pub username: Option<String>,
    /// Rated games together.
    pub games: i64,
    /// The player's wins and average place in them.
    pub wins: i64,
    pub average_place: f64,
    /// The partner's.
    pub partner_wins: i64,
    pub partner_average_place: f64,
}

impl From<PartnerRow> for PartnerDto {
    fn from(p: PartnerRow) -> Self {
        Self {
            account_id: p.account_id,
            username: p.username,
            games: p.games,
            wins: p.wins,
            average_place: p.average_place,
            partner_wins: p.partner_wins,
            partner_average_place: p.partner_average_place,
        }
    }
}

/// An account as admins read it.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({
    "id": "0b5c9e04-5f5e-4a43-9f1e-0c2b8d1c7a10", "username": "alice", "role": "player",
    "created_at": "2025-01-02T10:00:00.000000Z", "sanctions": [sanction_example()],
    "partners": [{"account_id": "5e6f7a8b-9c0d-4e1f-8a2b-3c4d5e6f7a8b", "username": "bob",
                  "games": 12, "wins": 11, "average_place": 1.08,
                  "partner_wins": 0, "partner_average_place": 2.92}]
}))]
pub struct AdminAccountDto {
    pub id: Uuid,
    pub username: String,
    pub role: Role,
    pub created_at: DateTime<Utc>,
    /// Newest first, the latest 100.
    pub sanctions: Vec<SanctionDto>,
    /// The 10 accounts it sat with most in rated games, most games first.
    pub partners: Vec<PartnerDto>,
}

/// A sanction's id, in the path.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct SanctionPath {
    /// The account's id.
    pub id: String,
    /// The sanction's id.
    pub sid: String,
}

fn account_id(id: &str) -> Result<Uuid, ApiError> {
    id.parse()
        .map_err(|_| ApiError::NotFound("no such account".into()))
}

/// Admins: suspend or ban an account (docs/API.md "Corrections and
/// sanctions"). Its sessions are revoked in every process, its log-ins
/// refused (403 `account_suspended`), its running seats resigned; with
/// `void_rated_games_since`, each of its rated games since then is voided
/// by a correction in the game's log and everyone's ratings recomputed.
/// Recorded as the admin's action.
#[utoipa::path(
    tag = "admin",
    params(AccountPath),
    request_body = NewSanctionDto,
    responses(
        (status = 201, description = "Sanctioned", body = SanctionDto),
        (status = 403, description = "`forbidden`: administrators only", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "`not_found`: no such account (or erased)", body = Problem, content_type = "application/problem+json"),
        JsonBody,
        (status = 422, description = "`invalid_sanction` (no `until` for a suspension, one for a ban, a past or too distant end, voids from the future or too far back, no reason, the admin's own account), `invalid_body`", body = Problem, content_type = "application/problem+json"),
        Authenticated,
    )
)]
#[post("/admin/accounts/{id}/sanctions")]
#[tracing::instrument(skip_all, fields(admin = %user.account.id, account_id = %path.id))]
pub async fn sanction_account(
    accounts: web::Data<Accounts>,
    user: AuthUser,
    path: web::Path<AccountPath>,
    body: web::Json<NewSanctionDto>,
) -> Result<HttpResponse, ApiError> {
    user.require_admin()?;
    let id = account_id(&path.id)?;
    let sanction = body.sanction()?;
    let row = accounts.sanction(user.account.id, id, sanction).await?;
    Ok(HttpResponse::Created().json(SanctionDto::try_from(row)?))
}

/// Admins: lift a sanction (log-ins allowed again, unless another stands;
/// games it voided stay voided). Recorded as the admin's action.
#[utoipa::path(
    tag = "admin",
    params(SanctionPath),
    responses(
        (status = 200, description = "Lifted", body = SanctionDto),
        (status = 403, description = "`forbidden`: administrators only", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "`not_found`: no such sanction of this account", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "`already_lifted`", body = Problem, content_type = "application/problem+json"),
        Authenticated,
    )
)]
#[delete("/admin/accounts/{id}/sanctions/{sid}")]
#[tracing::instrument(skip_all, fields(admin = %user.account.id, account_id = %path.id))]
pub async fn lift_sanction(
    accounts: web::Data<Accounts>,
    user: AuthUser,
    path: web::Path<SanctionPath>,
) -> Result<HttpResponse, ApiError> {
    user.require_admin()?;
    let id = account_id(&path.id)?;
    let sid = path
        .sid
        .parse()
        .map_err(|_| ApiError::NotFound("no such sanction of this account".into()))?;
    let row = accounts.lift_sanction(user.account.id, id, sid).await?;
    Ok(HttpResponse::Ok().json(SanctionDto::try_from(row)?))
}

/// Admins: an account's page: its sanctions and the accounts it sits with
/// most in rated games.
#[utoipa::path(
    tag = "admin",
    params(AccountPath),
    responses(
        (status = 200, description = "The account", body = AdminAccountDto),
        (status = 403, description = "`forbidden`: administrators only", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "`not_found`: no such account (or erased)", body = Problem, content_type = "application/problem+json"),
        Authenticated,
    )
)]
#[get("/admin/accounts/{id}")]
#[tracing::instrument(skip_all, fields(admin = %user.account.id, account_id = %path.id))]
pub async fn admin_account(
    accounts: web::Data<Accounts>,
    user: AuthUser,
    path: web::Path<AccountPath>,
) -> Result<HttpResponse, ApiError> {
    user.require_admin()?;
    let id = account_id(&path.id)?;
    let record = accounts.record(id).await?;
    let sanctions = record
        .sanctions
        .into_iter()
        .map(SanctionDto::try_from)
        .collect::<Result<_, _>>()?;
    Ok(HttpResponse::Ok().json(AdminAccountDto {
        id: record.account.id,
        username: record.account.username,
        role: record.account.role,
        created_at: record.account.created_at,
        sanctions,
        partners: record.partners.into_iter().map(PartnerDto::from).collect(),
    }))
}
