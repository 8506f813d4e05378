//! The dispute routes: a player files one, an admin lists, opens and
//! resolves them (the rules and the transactions: [`crate::disputes`]).

use std::collections::HashMap;

use actix_web::{get, post, web, HttpResponse};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sqlx::PgPool;
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use crate::auth::AuthUser;
use crate::codes::ProblemCode;
use crate::disputes::{self, Opened};
use crate::error::{ApiError, Problem};
use crate::history::AuditReport;
use crate::routes::problems::{Authenticated, JsonBody, OnTable};
use crate::routes::shared::{cursor_after, page_limit, ListQuery, TableCall, TablePath};
use crate::table_service::TableService;
use domain::table::{Correction, ResultCorrected};
use store::disputes::{DisputeRow, NewDispute};

/// What a player says is wrong.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"round": 2, "reason": "My 8 was counted as 8 points, not 50"}))]
pub struct NewDisputeDto {
    /// The finished round disputed (from 1); none: the finished game.
    #[schema(minimum = 1)]
    pub round: Option<u32>,
    /// Why, in 1 to 2,000 characters.
    pub reason: String,
}

/// Where a dispute stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum DisputeStatus {
    Open,
    Resolved,
}

impl DisputeStatus {
    const ALL: [Self; 2] = [Self::Open, Self::Resolved];

    /// Its name, in answers and in the database.
    fn as_str(self) -> &'static str {
        match self {
            Self::Open => "open",
            Self::Resolved => "resolved",
        }
    }
}

/// An admin's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The player was right (the log stays as it is; what follows is the
    /// admins' business, outside the game).
    Upheld,
    /// The score stands.
    Rejected,
}

/// A resolved dispute, for the examples.
fn dispute_example() -> serde_json::Value {
    serde_json::json!({
        "id": "0b7e3c1a-5d2f-4e8b-9a6c-1f2e3d4c5b6a", "table_id": "6f1c2a5e-2b7d-4c1e-9a53-0d4f8b2e7c11",
        "round": 2, "reason": "My 8 was counted as 8 points, not 50", "status": "resolved",
        "filed_by": "alice", "created_at": "2025-01-31T18:04:05.123456Z",
        "verdict": "rejected", "note": "The audit recomputes the same points.",
        "resolved_by": "admin", "resolved_at": "2025-02-01T09:00:00.000000Z",
        "correction": null
    })
}

impl Verdict {
    const ALL: [Self; 2] = [Self::Upheld, Self::Rejected];

    /// Its name, in answers and in the database.
    fn as_str(self) -> &'static str {
        match self {
            Self::Upheld => "upheld",
            Self::Rejected => "rejected",
        }
    }
}

/// A dispute.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = dispute_example)]
pub struct DisputeDto {
    pub id: Uuid,
    pub table_id: Uuid,
    /// The round disputed; null: the whole game.
    pub round: Option<u32>,
    pub reason: String,
    pub status: DisputeStatus,
    /// The filer's username; null: their account was erased.
    #[schema(required = true)]
    pub filed_by: Option<String>,
    pub created_at: DateTime<Utc>,
    /// Null while open.
    pub verdict: Option<Verdict>,
    /// The admin's note; null while open.
    pub note: Option<String>,
    /// The admin who resolved it; null while open.
    pub resolved_by: Option<String>,
    pub resolved_at: Option<DateTime<Utc>>,
    /// Upheld with a correction of the game's result: the correction, as
    /// logged (`result_corrected`); null otherwise.
    #[schema(required = true)]
    pub correction: Option<Correction>,
}

impl TryFrom<DisputeRow> for DisputeDto {
    type Error = ApiError;

    fn try_from(d: DisputeRow) -> Result<Self, ApiError> {
        let stored = |what: &str| ApiError::internal(format!("dispute {}: stored {what}", d.id));
        let status = DisputeStatus::ALL
            .into_iter()
            .find(|s| s.as_str() == d.status)
            .ok_or_else(|| stored("status"))?;
        let verdict = match d.verdict.as_deref() {
            None => None,
            Some(v) => Some(
                Verdict::ALL
                    .into_iter()
                    .find(|k| k.as_str() == v)
                    .ok_or_else(|| stored("verdict"))?,
            ),
        };
        let correction = d
            .correction
            .map(serde_json::from_value)
            .transpose()
            .map_err(|_| stored("correction"))?;
        Ok(Self {
            correction,
            id: d.id,
            table_id: d.table_id,
            round: d.round.map(|r| r.unsigned_abs()),
            reason: d.reason,
            status,
            filed_by: d.username,
            created_at: d.created_at,
            verdict,
            note: d.note,
            resolved_by: d.resolved_by,
            resolved_at: d.resolved_at,
        })
    }
}

/// A page of disputes, oldest first.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({"disputes": [dispute_example()], "next": null}))]
pub struct DisputePage {
    pub disputes: Vec<DisputeDto>,
    /// The `after` of the next page; null on the last.
    #[schema(required = true)]
    pub next: Option<String>,
}

impl DisputePage {
    /// The first `limit` of `rows` (one more was asked for).
    fn of(rows: Vec<DisputeRow>, limit: i64) -> Result<Self, ApiError> {
        let more = rows.len() as i64 > limit;
        let page: Vec<DisputeRow> = rows.into_iter().take(limit as usize).collect();
        let next = page
            .last()
            .filter(|_| more)
            .map(|d| cursor_after(d.created_at, d.id));
        Ok(Self {
            disputes: page
                .into_iter()
                .map(DisputeDto::try_from)
                .collect::<Result<_, _>>()?,
            next,
        })
    }
}

/// The cursor and size of a page of disputes, and for admins its status.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct DisputeQuery {
    /// Only disputes with this status (admins' queue only).
    #[param(value_type = Option<DisputeStatus>)]
    pub status: Option<DisputeStatus>,
    /// The `next` of the previous page.
    #[param(pattern = r"^-?[0-9]{1,16}\.[0-9a-fA-F]{32}$")]
    pub after: Option<String>,
    /// 1 to 100 (default 20).
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<i64>,
}

impl DisputeQuery {
    async fn page(self, pool: &PgPool, account_id: Option<Uuid>) -> Result<DisputePage, ApiError> {
        let limit = page_limit(self.limit)?;
        let after = self.after.as_deref().map(ListQuery::cursor).transpose()?;
        let status = self.status.map(DisputeStatus::as_str);
        let rows = store::disputes::list(pool, status, account_id, after, limit + 1).await?;
        DisputePage::of(rows, limit)
    }
}

/// An admin action on a dispute's table.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({"admin": "admin", "action": "audit", "dispute_id": null, "at": "2025-02-01T09:00:00.000000Z"}))]
pub struct AdminActionDto {
    /// The admin's username; null: their account was erased.
    #[schema(required = true)]
    pub admin: Option<String>,
    /// `resolve_dispute`, `replay_running_round`, `export_log` or `audit`.
    pub action: String,
    /// The dispute it was about, if any.
    pub dispute_id: Option<Uuid>,
    pub at: DateTime<Utc>,
}

/// A dispute as an admin opens it: with the table's audit, run now, and
/// the admin actions on its table (this reading's audit included).
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({
    "id": "0b7e3c1a-5d2f-4e8b-9a6c-1f2e3d4c5b6a", "table_id": "6f1c2a5e-2b7d-4c1e-9a53-0d4f8b2e7c11",
    "round": 2, "reason": "My 8 was counted as 8 points, not 50", "status": "open",
    "filed_by": "alice", "created_at": "2025-01-31T18:04:05.123456Z",
    "verdict": null, "note": null, "resolved_by": null, "resolved_at": null, "correction": null,
    "audit": {"ok": true, "chain_valid": true, "first_bad_seq": null, "problems": [], "rounds": [], "events": 212, "version": 212},
    "actions": [{"admin": "admin", "action": "audit", "dispute_id": "0b7e3c1a-5d2f-4e8b-9a6c-1f2e3d4c5b6a", "at": "2025-02-01T09:00:00.000000Z"}]
}))]
pub struct DisputeDetail {
    #[serde(flatten)]
    pub dispute: DisputeDto,
    pub audit: AuditReport,
    pub actions: Vec<AdminActionDto>,
}

/// A dispute's resolution.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"verdict": "upheld", "note": "Your 8 counts 50 under these rules.", "correction": {"kind": "points", "round": 2, "points": [50, 0, 12]}}))]
pub struct Resolution {
    pub verdict: Verdict,
    /// Why, in 1 to 2,000 characters; shown to the player.
    pub note: String,
    /// With `upheld`: the game's result as corrected, appended to its log
    /// (`result_corrected`); its ratings, and those of the later games, are
    /// recomputed as if it had ended so.
    #[serde(default)]
    pub correction: Option<Correction>,
}

/// A player of the table disputes a finished round's score, or the
/// finished game's.
///
/// At most 3 open disputes per player (429 `too_many_requests` beyond,
/// until an admin resolves one).
#[utoipa::path(
    tag = "disputes",
    params(TablePath),
    request_body = NewDisputeDto,
    responses(
        (status = 201, description = "Filed, open", body = DisputeDto),
        (status = 403, description = "`not_a_player`: not a player of this game", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "`round_running`: the round (or, without `round`, the game) is not over", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "`invalid_dispute` (an empty or too long reason, round 0) or `invalid_body`", body = Problem, content_type = "application/problem+json"),
        (status = 429, description = "`too_many_requests`: 3 disputes of yours are open", body = Problem, content_type = "application/problem+json"),
        JsonBody,
        OnTable,
    )
)]
#[post("/tables/{id}/disputes")]
pub async fn file_dispute(
    reader: TableCall<PgPool>,
    body: web::Json<NewDisputeDto>,
) -> Result<HttpResponse, ApiError> {
    let (round, reason) = body.into_inner().checked()?;
    let dispute = NewDispute {
        table_id: reader.table_id,
        account_id: reader.user.account.id,
        round,
        reason: &reason,
    };
    let filed = disputes::file(&reader.state, &reader.parsed().await?, dispute).await?;
    Ok(HttpResponse::Created().json(DisputeDto::try_from(filed)?))
}

impl NewDisputeDto {
    /// The round (as stored) and the reason, both checked.
    fn checked(self) -> Result<(Option<i32>, String), ApiError> {
        disputes::text(ProblemCode::InvalidDispute, "reason", &self.reason)?;
        let round = match self.round {
            Some(0) => {
                return Err(ApiError::Validation {
                    code: ProblemCode::InvalidDispute,
                    detail: "round: rounds are numbered from 1".into(),
                })
            }
            Some(n) => {
                Some(i32::try_from(n).map_err(|_| ApiError::NotFound(format!("no round {n}")))?)
            }
            None => None,
        };
        Ok((round, self.reason))
    }
}

/// The caller's disputes, oldest first, with their verdicts.
#[utoipa::path(
    tag = "disputes",
    params(DisputeQuery),
    responses(
        (status = 200, description = "A page of the caller's disputes", body = DisputePage),
        (status = 400, description = "`invalid_query`: bad cursor, limit not in 1..=100, unknown status", body = Problem, content_type = "application/problem+json"),
        Authenticated,
    )
)]
#[get("/me/disputes")]
pub async fn my_disputes(
    user: AuthUser,
    pool: web::Data<PgPool>,
    query: web::Query<DisputeQuery>,
) -> Result<HttpResponse, ApiError> {
    let page = query
        .into_inner()
        .page(&pool, Some(user.account.id))
        .await?;
    Ok(HttpResponse::Ok().json(page))
}

/// Admin: every dispute, oldest first, by status.
#[utoipa::path(
    tag = "admin",
    params(DisputeQuery),
    responses(
        (status = 200, description = "A page of disputes", body = DisputePage),
        (status = 400, description = "`invalid_query`: bad cursor, limit not in 1..=100, unknown status", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "`forbidden`: administrators only", body = Problem, content_type = "application/problem+json"),
        Authenticated,
    )
)]
#[get("/admin/disputes")]
pub async fn admin_disputes(
    user: AuthUser,
    pool: web::Data<PgPool>,
    query: web::Query<DisputeQuery>,
) -> Result<HttpResponse, ApiError> {
    user.require_admin()?;
    Ok(HttpResponse::Ok().json(query.into_inner().page(&pool, None).await?))
}

/// The `{id}` of a dispute (a malformed one names nothing: 404).
fn dispute_id(raw: &str) -> Result<Uuid, ApiError> {
    Uuid::parse_str(raw).map_err(|_| ApiError::NotFound("no such dispute".into()))
}

/// Admin: a dispute with its table's audit (kept once the game is over, see
/// `history::kept_audit`; recorded as an admin action) and the admin actions
/// on its table.
#[utoipa::path(
    tag = "admin",
    params(("id" = Uuid, Path, description = "The dispute")),
    responses(
        (status = 200, description = "The dispute, the audit and the admin actions", body = DisputeDetail),
        (status = 403, description = "`forbidden`: administrators only", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "`not_found`: no such dispute", body = Problem, content_type = "application/problem+json"),
        Authenticated,
    )
)]
#[get("/admin/disputes/{id}")]
pub async fn admin_dispute(
    user: AuthUser,
    pool: web::Data<PgPool>,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    user.require_admin()?;
    let Opened {
        dispute: d,
        audit,
        actions,
    } = disputes::open(&pool, user.account.id, dispute_id(&path)?).await?;
    let actions = actions
        .into_iter()
        .map(|a| AdminActionDto {
            admin: a.admin,
            action: a.action,
            dispute_id: a.dispute_id,
            at: a.at,
        })
        .collect();
    Ok(HttpResponse::Ok().json(DisputeDetail {
        dispute: d.try_into()?,
        audit,
        actions,
    }))
}

/// Admin: resolve an open dispute with a verdict and a note, and, upholding
/// it, correct the game's result: `void`, `points` for one round,
/// `disqualify` a seat, or `none` (the original result again). The
/// correction is appended to the table's log (`result_corrected`), the
/// game and every later one of its ruleset are rated again, and its
/// players are told; all of it with the resolution, or nothing. Each
/// correction applies to the original result; the last one stands.
#[utoipa::path(
    tag = "admin",
    params(("id" = Uuid, Path, description = "The dispute")),
    request_body = Resolution,
    responses(
        (status = 200, description = "Resolved", body = DisputeDto),
        (status = 403, description = "`forbidden`: administrators only", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "`not_found`: no such dispute", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "`already_resolved`: a verdict is never changed; `game_running` or `game_aborted`: a correction of a game that is not over, or has no result; `version_conflict`: the table moved on meanwhile, try again", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "`invalid_dispute` (an empty or too long note), `invalid_correction` (with a verdict but `upheld`, a round that did not end, points not given for every seat, no such seat) or `invalid_body` (a verdict but `upheld` or `rejected`, a correction of no known kind)", body = Problem, content_type = "application/problem+json"),
        JsonBody,
        Authenticated,
    )
)]
#[post("/admin/disputes/{id}/resolution")]
pub async fn resolve_dispute(
    user: AuthUser,
    pool: web::Data<PgPool>,
    tables: web::Data<TableService>,
    path: web::Path<String>,
    body: web::Json<Resolution>,
) -> Result<HttpResponse, ApiError> {
    user.require_admin()?;
    let id = dispute_id(&path)?;
    let Resolution {
        verdict,
        note,
        correction,
    } = body.into_inner();
    disputes::text(ProblemCode::InvalidDispute, "note", &note)?;
    let resolution = disputes::Resolution {
        verdict: verdict.as_str(),
        note: &note,
        correction,
    };
    let resolved = disputes::resolve((&pool, &tables), user.account.id, id, resolution).await?;
    Ok(HttpResponse::Ok().json(DisputeDto::try_from(resolved)?))
}

/// A correction to preview.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"correction": {"kind": "disqualify", "seat": 1}}))]
pub struct PreviewRequest {
    pub correction: Correction,
}

/// A player's rating from one game: the mean before it and after it.
#[derive(Debug, Serialize, ToSchema)]
pub struct RatingMoveDto {
    pub before: f64,
    pub after: f64,
}

/// A seat's rating from the game, now and once corrected.
#[derive(Debug, Serialize, ToSchema)]
pub struct SeatPreviewDto {
    pub seat: i32,
    pub account_id: Uuid,
    /// Null: the account was erased.
    #[schema(required = true)]
    pub username: Option<String>,
    /// As stored now; null: the game is not rated now.
    #[schema(required = true)]
    pub now: Option<RatingMoveDto>,
    /// As the correction would store it; null: not rated so (voided).
    #[schema(required = true)]
    pub corrected: Option<RatingMoveDto>,
}

/// What a correction would make of the game.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({
    "corrected": {"dispute_id": "0b7e3c1a-5d2f-4e8b-9a6c-1f2e3d4c5b6a", "by": "9a8b7c6d-5e4f-4a3b-2c1d-0e9f8a7b6c5d",
                  "correction": {"kind": "disqualify", "seat": 1},
                  "ranking": [{"seat": 0, "place": 1, "total": 12}, {"seat": 1, "place": 2, "total": 3}],
                  "winners": [0], "losers": [1], "totals": [12, 3], "rated": true},
    "ratings": [{"seat": 0, "account_id": "0b5c9e04-5f5e-4a43-9f1e-0c2b8d1c7a10", "username": "alice",
                 "now": {"before": 25.0, "after": 23.1}, "corrected": {"before": 25.0, "after": 26.9}},
                {"seat": 1, "account_id": "5e6f7a8b-9c0d-4e1f-8a2b-3c4d5e6f7a8b", "username": "bob",
                 "now": {"before": 25.0, "after": 26.9}, "corrected": {"before": 25.0, "after": 23.1}}]
}))]
pub struct PreviewDto {
    /// The `result_corrected` the correction would append.
    pub corrected: ResultCorrected,
    /// By seat, the persons rated now or once corrected (none for a game
    /// that is rated neither way).
    pub ratings: Vec<SeatPreviewDto>,
}

/// Admin: what a correction of the dispute's game would make of it, before
/// it is applied: the corrected ranking and totals, and each player's
/// rating from the game now and once corrected (re-rated exactly as the
/// correction would be, later games included, then rolled back). Nothing
/// is written or recorded.
#[utoipa::path(
    tag = "admin",
    params(("id" = Uuid, Path, description = "The dispute")),
    request_body = PreviewRequest,
    responses(
        (status = 200, description = "The correction's effect", body = PreviewDto),
        (status = 403, description = "`forbidden`: administrators only", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "`not_found`: no such dispute", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "`game_running` or `game_aborted`", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "`invalid_correction`, `invalid_body`", body = Problem, content_type = "application/problem+json"),
        JsonBody,
        Authenticated,
    )
)]
#[post("/admin/disputes/{id}/preview")]
pub async fn preview_correction(
    user: AuthUser,
    pool: web::Data<PgPool>,
    tables: web::Data<TableService>,
    path: web::Path<String>,
    body: web::Json<PreviewRequest>,
) -> Result<HttpResponse, ApiError> {
    user.require_admin()?;
    let id = dispute_id(&path)?;
    let correction = body.into_inner().correction;
    let preview = disputes::preview((&pool, &tables), user.account.id, id, correction).await?;
    let ids: Vec<Uuid> = preview.ratings.iter().map(|s| s.account_id).collect();
    let names: HashMap<Uuid, Option<String>> = store::accounts::names(pool.get_ref(), &ids)
        .await?
        .into_iter()
        .collect();
    let moved = |m: Option<disputes::RatingMove>| {
        m.map(|m| RatingMoveDto {
            before: m.before,
            after: m.after,
        })
    };
    let ratings = preview
        .ratings
        .into_iter()
        .map(|s| SeatPreviewDto {
            seat: s.seat,
            account_id: s.account_id,
            username: names.get(&s.account_id).cloned().flatten(),
            now: moved(s.now),
            corrected: moved(s.corrected),
        })
        .collect();
    Ok(HttpResponse::Ok().json(PreviewDto {
        corrected: preview.corrected,
        ratings,
    }))
}
