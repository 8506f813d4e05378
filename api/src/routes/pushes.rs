//! Admins and the pushes to phones (docs/API.md "Push to phones"), beside
//! the webhooks' deliveries: the pushes, and failed ones to send again
//! (recorded as an admin action).

use actix_web::http::StatusCode;
use actix_web::{get, post, web, HttpResponse};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sqlx::PgPool;
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use crate::auth::AuthUser;
use crate::codes::ProblemCode;
use crate::config::Settings;
use crate::error::{ApiError, Problem};
use crate::feed::FeedItem;
use crate::push::Platform;
use crate::routes::problems::Authenticated;
use crate::routes::shared::page_limit;
use store::pushes::Delivery;

/// A push's status.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum PushStatus {
    Pending,
    Delivered,
    /// Not sent: the player was following the table (or their feed).
    Skipped,
    Failed,
}

impl PushStatus {
    fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Delivered => "delivered",
            Self::Skipped => "skipped",
            Self::Failed => "failed",
        }
    }

    fn stored(status: &str) -> Option<Self> {
        [Self::Pending, Self::Delivered, Self::Skipped, Self::Failed]
            .into_iter()
            .find(|s| s.as_str() == status)
    }
}

/// `GET /v1/admin/pushes`' query.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct PushesQuery {
    /// Only the pushes with this status.
    #[param(value_type = Option<PushStatus>)]
    pub status: Option<PushStatus>,
    /// The `next` of the previous page.
    #[param(minimum = 1)]
    pub before: Option<i64>,
    /// 1 to 100 (default 20).
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<i64>,
}

/// One feed item's push to one device (its token is not shown).
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({
    "id": 3051, "device_id": "5a1e2b3c-4d5e-4f60-8172-93a4b5c6d7e8", "platform": "apns",
    "item": {"id": 812, "kind": "your_turn", "table_id": "7d8e2f4a-1b3c-4d5e-9f60-718293a4b5c6",
             "at": "2025-01-31T18:04:05.123456Z", "my_turn": 1},
    "account_id": "0b5c9e04-5f5e-4a43-9f1e-0c2b8d1c7a10", "status": "failed", "attempts": 10,
    "next_attempt_at": null, "last_error": "APNs answered 503 Service Unavailable", "delivered_at": null
}))]
pub struct PushDto {
    pub id: i64,
    pub device_id: Uuid,
    pub platform: Platform,
    pub item: FeedItem,
    pub account_id: Uuid,
    pub status: PushStatus,
    /// Attempts made (since an admin last sent it again).
    pub attempts: i32,
    /// When it is tried next (pending only).
    pub next_attempt_at: Option<DateTime<Utc>>,
    /// What the last failed attempt met.
    pub last_error: Option<String>,
    pub delivered_at: Option<DateTime<Utc>>,
}

impl PushDto {
    fn of(d: &Delivery) -> Result<Self, ApiError> {
        let bad = |what: &str| ApiError::internal(format!("push {}: {what}", d.id));
        Ok(Self {
            id: d.id,
            device_id: d.device_id,
            platform: Platform::stored(&d.platform).ok_or_else(|| bad(&d.platform))?,
            item: FeedItem::of(&d.item)?,
            account_id: d.item.account_id,
            status: PushStatus::stored(&d.status).ok_or_else(|| bad(&d.status))?,
            attempts: d.attempts,
            next_attempt_at: d.next_attempt_at,
            last_error: d.last_error.clone(),
            delivered_at: d.delivered_at,
        })
    }
}

/// The platforms pushed to and a page of pushes.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({
    "apns": true, "fcm": false, "pending": 0, "pushes": [], "next": null
}))]
pub struct Pushes {
    /// Whether this server pushes to APNs (`HUIT_APNS_KEY_FILE` is set).
    pub apns: bool,
    /// Whether it pushes to FCM (`HUIT_FCM_CREDENTIALS` is set).
    pub fcm: bool,
    /// How many pushes wait to be sent: each is failed once its item is
    /// older than the feed's retention (`HUIT_FEED_RETENTION_SECS`).
    pub pending: i64,
    /// Newest first.
    pub pushes: Vec<PushDto>,
    /// Pass as `before` for the next page; null: no more.
    pub next: Option<i64>,
}

/// Admin: the pushes to phones, newest first (`status=failed` for those to
/// send again).
#[utoipa::path(
    tag = "admin",
    params(PushesQuery),
    responses(
        (status = 200, description = "A page of pushes", body = Pushes),
        (status = 400, description = "`invalid_query`: an unknown status, `before` < 1, `limit` not in 1..=100", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "`forbidden`: administrators only", body = Problem, content_type = "application/problem+json"),
        Authenticated,
    )
)]
#[get("/admin/pushes")]
pub async fn pushes(
    user: AuthUser,
    pool: web::Data<PgPool>,
    settings: web::Data<Settings>,
    query: web::Query<PushesQuery>,
) -> Result<HttpResponse, ApiError> {
    user.require_admin()?;
    let limit = page_limit(query.limit)?;
    if query.before.is_some_and(|b| b < 1) {
        return Err(ApiError::InvalidQuery("before: 1 or more".into()));
    }
    let (pending, _) = store::pushes::backlog(pool.get_ref()).await?;
    let status = query.status.map(PushStatus::as_str);
    let mut rows = store::pushes::list(pool.get_ref(), status, query.before, limit + 1).await?;
    let next = (rows.len() as i64 > limit).then(|| {
        rows.truncate(limit as usize);
        rows.last().map(|d| d.id)
    });
    Ok(HttpResponse::Ok().json(Pushes {
        apns: settings.apns_key_file.is_some(),
        fcm: settings.fcm_credentials.is_some(),
        pending,
        pushes: rows.iter().map(PushDto::of).collect::<Result<_, _>>()?,
        next: next.flatten(),
    }))
}

/// The `{id}` of a push (anything but its number names nothing).
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(names("id"), parameter_in = Path)]
pub struct PushPath(
    /// The push
    pub String,
);

/// Admin: send a push again, now (delivered, skipped or failed), its
/// attempts starting over. Recorded as an admin action.
#[utoipa::path(
    tag = "admin",
    params(PushPath),
    responses(
        (status = 202, description = "It will be sent again; the push as it is now", body = PushDto),
        (status = 403, description = "`forbidden`: administrators only", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "`not_found`: no such push", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "`delivery_pending`: it is being sent already", body = Problem, content_type = "application/problem+json"),
        Authenticated,
    )
)]
#[post("/admin/pushes/{id}/retry")]
pub async fn retry_push(
    user: AuthUser,
    pool: web::Data<PgPool>,
    path: web::Path<PushPath>,
) -> Result<HttpResponse, ApiError> {
    user.require_admin()?;
    let not_found = || ApiError::NotFound("no such push".into());
    let id: i64 = path.0.parse().map_err(|_| not_found())?;
    let mut tx = pool.begin().await?;
    match store::pushes::retry(&mut *tx, id).await? {
        None => return Err(not_found()),
        Some(false) => {
            return Err(ApiError::Problem {
                status: StatusCode::CONFLICT,
                code: ProblemCode::DeliveryPending,
                detail: "this push is pending already".into(),
            })
        }
        Some(true) => {}
    }
    store::disputes::record_on_push(&mut *tx, user.account.id, id).await?;
    tx.commit().await?;
    let push = store::pushes::get(pool.get_ref(), id)
        .await?
        .ok_or_else(not_found)?;
    Ok(HttpResponse::Accepted().json(PushDto::of(&push)?))
}
