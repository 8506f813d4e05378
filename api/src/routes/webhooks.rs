//! Admins and the webhooks (docs/API.md "Finding a game and coming back"):
//! the deliveries, failed ones to send again, and a URL paused by a 410 to
//! resume. Every change is recorded as an admin action.

use actix_web::http::StatusCode;
use actix_web::{get, post, web, HttpResponse};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sqlx::PgPool;
use utoipa::{IntoParams, ToSchema};

use crate::auth::AuthUser;
use crate::codes::ProblemCode;
use crate::config::Settings;
use crate::error::{ApiError, Problem};
use crate::feed::FeedItem;
use crate::routes::problems::Authenticated;
use crate::routes::shared::page_limit;
use store::disputes::AdminAction;
use store::outbox::Delivery;

/// A delivery's status.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum DeliveryStatus {
    Pending,
    Delivered,
    Failed,
}

impl DeliveryStatus {
    fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Delivered => "delivered",
            Self::Failed => "failed",
        }
    }
}

/// `GET /v1/admin/webhooks`' query.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct DeliveriesQuery {
    /// Only the deliveries with this status.
    #[param(value_type = Option<DeliveryStatus>)]
    pub status: Option<DeliveryStatus>,
    /// The `next` of the previous page.
    #[param(minimum = 1)]
    pub before: Option<i64>,
    /// 1 to 100 (default 20).
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<i64>,
}

/// One item's webhook delivery.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({
    "item": {"id": 812, "kind": "your_turn", "table_id": "7d8e2f4a-1b3c-4d5e-9f60-718293a4b5c6",
             "at": "2025-01-31T18:04:05.123456Z", "my_turn": 1},
    "account_id": "0b5c9e04-5f5e-4a43-9f1e-0c2b8d1c7a10", "status": "failed", "attempts": 10,
    "next_attempt_at": null, "last_error": "answered 503 Service Unavailable", "delivered_at": null
}))]
pub struct DeliveryDto {
    pub item: FeedItem,
    pub account_id: uuid::Uuid,
    pub status: DeliveryStatus,
    /// Attempts made (since an admin last sent it again).
    pub attempts: i32,
    /// When it is tried next (pending only).
    pub next_attempt_at: Option<DateTime<Utc>>,
    /// What the last failed attempt met.
    pub last_error: Option<String>,
    pub delivered_at: Option<DateTime<Utc>>,
}

impl DeliveryDto {
    fn of(d: &Delivery) -> Result<Self, ApiError> {
        let status = match d.status.as_str() {
            "pending" => DeliveryStatus::Pending,
            "delivered" => DeliveryStatus::Delivered,
            _ => DeliveryStatus::Failed,
        };
        Ok(Self {
            item: FeedItem::of(&d.item)?,
            account_id: d.item.account_id,
            status,
            attempts: d.attempts,
            next_attempt_at: d.next_attempt_at,
            last_error: d.last_error.clone(),
            delivered_at: d.delivered_at,
        })
    }
}

/// The webhooks' state and a page of their deliveries.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({
    "url": "http://push-relay.internal:9000/huit", "paused_at": null, "pending": 0,
    "deliveries": [], "next": null
}))]
pub struct Deliveries {
    /// Where they are sent (null: webhooks are off).
    pub url: Option<String>,
    /// When a 410 Gone paused them, if it did (resume them with
    /// `POST /v1/admin/webhooks/resume`).
    pub paused_at: Option<DateTime<Utc>>,
    /// How many items wait to be delivered (paused or not): each is failed
    /// once older than the feed's retention (`HUIT_FEED_RETENTION_SECS`).
    pub pending: i64,
    /// Newest first.
    pub deliveries: Vec<DeliveryDto>,
    /// Pass as `before` for the next page; null: no more.
    pub next: Option<i64>,
}

/// Admin: the webhooks' URL, whether it is paused, and their deliveries,
/// newest first (`status=failed` for those to send again).
#[utoipa::path(
    tag = "admin",
    params(DeliveriesQuery),
    responses(
        (status = 200, description = "A page of deliveries", body = Deliveries),
        (status = 400, description = "`invalid_query`: an unknown status, `before` < 1, `limit` not in 1..=100", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "`forbidden`: administrators only", body = Problem, content_type = "application/problem+json"),
        Authenticated,
    )
)]
#[get("/admin/webhooks")]
pub async fn deliveries(
    user: AuthUser,
    pool: web::Data<PgPool>,
    settings: web::Data<Settings>,
    query: web::Query<DeliveriesQuery>,
) -> Result<HttpResponse, ApiError> {
    user.require_admin()?;
    let limit = page_limit(query.limit)?;
    if query.before.is_some_and(|b| b < 1) {
        return Err(ApiError::InvalidQuery("before: 1 or more".into()));
    }
    // The pause first: a pause seen comes with the outcome that caused it.
    let url = settings.webhook_url.clone();
    let paused_at = match &url {
        Some(url) => store::outbox::paused_at(pool.get_ref(), url).await?,
        None => None,
    };
    let (pending, _) = store::outbox::backlog(pool.get_ref()).await?;
    let status = query.status.map(DeliveryStatus::as_str);
    let mut rows = store::outbox::list(pool.get_ref(), status, query.before, limit + 1).await?;
    let next = (rows.len() as i64 > limit).then(|| {
        rows.truncate(limit as usize);
        rows.last().map(|d| d.item.id)
    });
    Ok(HttpResponse::Ok().json(Deliveries {
        url,
        paused_at,
        pending,
        deliveries: rows.iter().map(DeliveryDto::of).collect::<Result<_, _>>()?,
        next: next.flatten(),
    }))
}

/// The `{id}` of a delivery (its item's id; anything else names nothing).
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(names("id"), parameter_in = Path)]
pub struct DeliveryPath(
    /// The feed item
    pub String,
);

/// Admin: send a delivered or failed item again, now, its attempts
/// starting over. Recorded as an admin action.
#[utoipa::path(
    tag = "admin",
    params(DeliveryPath),
    responses(
        (status = 202, description = "It will be sent again; the delivery as it is now", body = DeliveryDto),
        (status = 403, description = "`forbidden`: administrators only", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "`not_found`: no such delivery", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "`delivery_pending`: it is being sent already", body = Problem, content_type = "application/problem+json"),
        Authenticated,
    )
)]
#[post("/admin/webhooks/{id}/retry")]
pub async fn retry_delivery(
    user: AuthUser,
    pool: web::Data<PgPool>,
    path: web::Path<DeliveryPath>,
) -> Result<HttpResponse, ApiError> {
    user.require_admin()?;
    let not_found = || ApiError::NotFound("no such delivery".into());
    let id: i64 = path.0.parse().map_err(|_| not_found())?;
    let mut tx = pool.begin().await?;
    match store::outbox::retry(&mut *tx, id).await? {
        None => return Err(not_found()),
        Some(false) => {
            return Err(ApiError::Problem {
                status: StatusCode::CONFLICT,
                code: ProblemCode::DeliveryPending,
                detail: "this delivery is pending already".into(),
            })
        }
        Some(true) => {}
    }
    let admin = user.account.id;
    store::disputes::record_on_webhooks(&mut *tx, admin, AdminAction::RetryWebhook, Some(id))
        .await?;
    tx.commit().await?;
    let delivery = store::outbox::get(pool.get_ref(), id)
        .await?
        .ok_or_else(not_found)?;
    Ok(HttpResponse::Accepted().json(DeliveryDto::of(&delivery)?))
}

/// Admin: resume the deliveries a 410 Gone paused. Recorded as an admin
/// action.
#[utoipa::path(
    tag = "admin",
    responses(
        (status = 200, description = "Resumed: the webhooks' state and their newest deliveries", body = Deliveries),
        (status = 403, description = "`forbidden`: administrators only", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "`webhooks_off`: no webhook URL is set", body = Problem, content_type = "application/problem+json"),
        Authenticated,
    )
)]
#[post("/admin/webhooks/resume")]
pub async fn resume_webhooks(
    user: AuthUser,
    pool: web::Data<PgPool>,
    settings: web::Data<Settings>,
) -> Result<HttpResponse, ApiError> {
    user.require_admin()?;
    let Some(url) = &settings.webhook_url else {
        return Err(ApiError::Problem {
            status: StatusCode::CONFLICT,
            code: ProblemCode::WebhooksOff,
            detail: "no webhook URL is set (HUIT_WEBHOOK_URL)".into(),
        });
    };
    let mut tx = pool.begin().await?;
    store::outbox::set_paused(&mut *tx, url, false).await?;
    let admin = user.account.id;
    store::disputes::record_on_webhooks(&mut *tx, admin, AdminAction::ResumeWebhooks, None).await?;
    tx.commit().await?;
    let rows = store::outbox::list(pool.get_ref(), None, None, 20).await?;
    let (pending, _) = store::outbox::backlog(pool.get_ref()).await?;
    Ok(HttpResponse::Ok().json(Deliveries {
        url: Some(url.clone()),
        paused_at: None,
        pending,
        deliveries: rows.iter().map(DeliveryDto::of).collect::<Result<_, _>>()?,
        next: None,
    }))
}
