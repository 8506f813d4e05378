//! The caller: their account, their tables, and their feed.

use actix_web::http::header;
use actix_web::{get, web, HttpRequest, HttpResponse};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sqlx::PgPool;
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use crate::auth::{AuthUser, CachedAuthUser};
use crate::config::Settings;
use crate::error::{ApiError, Problem};
use crate::feed::FeedItem;
use crate::feed::{self, FeedPage};
use crate::rates::Rates;
use crate::routes::devices::DeviceDto;
use crate::routes::disputes::DisputeDto;
use crate::routes::players::{PlayerStats, RecentGame};
use crate::routes::problems::{Authenticated, TooManyRequests};
use crate::routes::sessions::SessionInfo;
use crate::routes::shared::{cursor_after, page_limit, AccountDto, ListQuery};
use crate::routes::tables::dto::ListedTableDto;
use crate::routes::tables::dto::{table_summary_example, TableSummary};
use crate::routes::tables::play::{long_poll_deadline, wait_secs};
use crate::sse::{self, event_stream, last_event_id, SseEvent};
use crate::table_service::TableService;
use crate::watchers::{Following, WatchSlot};
use store::accounts::Role;

/// The caller's account.
#[utoipa::path(
    tag = "accounts",
    responses(
        (status = 200, description = "The caller's account", body = AccountDto),
        Authenticated,
    )
)]
#[get("/me")]
pub async fn get_me(user: AuthUser) -> Result<HttpResponse, ApiError> {
    Ok(HttpResponse::Ok().json(AccountDto::from(user.account)))
}

/// Which of the caller's tables `GET /v1/me/tables` lists.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct MyTablesQuery {
    /// `mine`: only the tables that wait for the caller (the seat on turn
    /// is theirs, and the server does not play it), soonest deadline
    /// first, those without a clock last; absent: every table the caller
    /// sits at that is not over, oldest first.
    #[param(value_type = Option<String>, pattern = "^mine$")]
    pub turn: Option<TurnFilter>,
    /// The `next` of the previous page.
    #[param(pattern = r"^-?[0-9]{1,16}\.[0-9a-fA-F]{32}$")]
    pub after: Option<String>,
    /// 1 to 100 (default 20).
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<i64>,
}

/// `turn=mine`.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TurnFilter {
    Mine,
}

/// The example of [`MyTables`].
fn my_tables_example() -> serde_json::Value {
    serde_json::json!({"tables": [table_summary_example()], "my_turn": 1, "next": null})
}

/// A page of the caller's tables.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = my_tables_example)]
pub struct MyTables {
    /// Their summaries, as the caller is shown them (each with its clock's
    /// `deadline`).
    pub tables: Vec<TableSummary>,
    /// How many tables wait for the caller, in all (an app's badge).
    pub my_turn: i64,
    /// Pass as `after` for the next page; null: no more.
    #[schema(required = true)]
    pub next: Option<String>,
}

/// The caller's tables: those that wait for them (`turn=mine`), soonest
/// deadline first, or every one they sit at that is not over; with how
/// many wait for them. Chosen by an index, whatever the number of tables.
#[utoipa::path(
    tag = "tables",
    params(MyTablesQuery),
    responses(
        (status = 200, description = "A page of the caller's tables", body = MyTables),
        (status = 400, description = "`invalid_query`: `turn` other than `mine`, a bad cursor, `limit` not in 1..=100", body = Problem, content_type = "application/problem+json"),
        Authenticated,
    )
)]
#[get("/me/tables")]
pub async fn my_tables(
    tables: web::Data<TableService>,
    user: AuthUser,
    query: web::Query<MyTablesQuery>,
) -> Result<HttpResponse, ApiError> {
    let MyTablesQuery { turn, after, limit } = query.into_inner();
    let limit = page_limit(limit)?;
    let after = after.as_deref().map(ListQuery::cursor).transpose()?;
    let caller = user.account.id;
    let mine = tables.mine(caller, turn.is_some(), after, limit).await?;
    let mut summaries = Vec::with_capacity(mine.tables.len());
    for (id, table) in &mine.tables {
        summaries.push(
            TableSummary::of(*id, table)
                .shown_to(&tables, caller)
                .await?,
        );
    }
    Ok(HttpResponse::Ok().json(MyTables {
        tables: summaries,
        my_turn: mine.my_turn,
        next: mine.next.map(|(key, id)| cursor_after(key, id)),
    }))
}

/// `GET /v1/me/feed`'s query.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct FeedQuery {
    /// The `next` of the previous page (0, the default: from the oldest
    /// item kept).
    #[param(minimum = 0)]
    pub after: Option<i64>,
    /// Seconds to wait for an item when there is none yet (a long poll),
    /// at most 30; 0, the default: answer at once.
    #[param(minimum = 0, maximum = 30)]
    pub wait: Option<u64>,
    /// 1 to 100 (default 100).
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<i64>,
}

/// The caller's feed, oldest first: whose turn it is, a turn's time almost
/// up (80 % of its clock), games started and over, rematches offered, each
/// with how many tables wait for the caller. With `wait`, a long poll: the
/// answer comes as soon as an item is committed (by any server process),
/// or empty after `wait` seconds; it counts among the caller's streams.
/// Items older than the server's retention (30 days by default) are gone.
#[utoipa::path(
    tag = "tables",
    params(FeedQuery),
    responses(
        (status = 200, description = "The items (possibly none)", body = FeedPage),
        (status = 400, description = "`invalid_query`: `after` < 0, `wait` > 30, `limit` not in 1..=100", body = Problem, content_type = "application/problem+json"),
        (status = 429, description = "`too_many_streams`: the caller's long polls and streams are at their limit", body = Problem, content_type = "application/problem+json"),
        Authenticated,
    )
)]
#[get("/me/feed")]
pub async fn my_feed(
    pool: web::Data<PgPool>,
    tables: web::Data<TableService>,
    user: CachedAuthUser,
    slot: WatchSlot,
    query: web::Query<FeedQuery>,
) -> Result<HttpResponse, ApiError> {
    let after = feed_after(query.after)?;
    let wait = wait_secs(query.wait)?;
    let limit = query.limit.unwrap_or(feed::MAX_PAGE);
    if !(1..=feed::MAX_PAGE).contains(&limit) {
        return Err(ApiError::InvalidQuery("limit: from 1 to 100".into()));
    }
    let account = user.account.id;
    let deadline = long_poll_deadline(wait);
    let poll = feed::poll(&pool, tables.hub(), account, after, limit, deadline);
    let items = match deadline {
        Some(_) => {
            slot.open(&user, Following::Feed)
                .await?
                .unless_ended(poll)
                .await?
        }
        None => poll.await?,
    };
    let next = items.last().map_or(after, |i| i.id);
    Ok(HttpResponse::Ok().json(FeedPage { items, next }))
}

/// A feed cursor, checked.
fn feed_after(after: Option<i64>) -> Result<i64, ApiError> {
    match after.unwrap_or(0) {
        after if after < 0 => Err(ApiError::InvalidQuery("after: 0 or more".into())),
        after => Ok(after),
    }
}

/// `GET /v1/me/feed/stream`'s query.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct FeedStreamQuery {
    /// Start after this item (`Last-Event-ID` wins over it).
    #[param(minimum = 0)]
    pub after: Option<i64>,
}

/// The caller's feed as server-sent events: every item after `after` (or
/// `Last-Event-ID`), then each new one as it is committed by any process,
/// `id:` the item's id and `data:` the item; keep-alive comments meanwhile.
/// It counts among the caller's streams, and ends with the session.
#[utoipa::path(
    tag = "tables",
    params(FeedStreamQuery),
    responses(
        (status = 200, description = "The stream; each event's data is a feed item", content_type = "text/event-stream", body = SseEvent),
        (status = 400, description = "`invalid_query`: `after` < 0; `invalid_last_event_id`", body = Problem, content_type = "application/problem+json"),
        (status = 429, description = "`too_many_streams`: the caller's long polls and streams are at their limit", body = Problem, content_type = "application/problem+json"),
        Authenticated,
    )
)]
#[get("/me/feed/stream")]
pub async fn stream_feed(
    pool: web::Data<PgPool>,
    tables: web::Data<TableService>,
    settings: web::Data<Settings>,
    user: CachedAuthUser,
    slot: WatchSlot,
    req: HttpRequest,
    query: web::Query<FeedStreamQuery>,
) -> Result<HttpResponse, ApiError> {
    let after = feed_after(query.after)?;
    let after = last_event_id(&req, "the id of a feed item")?.unwrap_or(after);
    let watch = slot.open(&user, Following::Feed).await?;
    let body = sse::feed(
        pool.get_ref().clone(),
        tables.hub().clone(),
        user.account.id,
        after,
        settings.sse_keepalive(),
    );
    Ok(event_stream(sse::until_ended(body, watch)))
}

/// The caller's account as exported.
#[derive(Debug, Serialize, ToSchema)]
pub struct ExportedAccount {
    pub id: Uuid,
    pub username: String,
    pub role: Role,
    pub created_at: DateTime<Utc>,
}

/// The example of an [`AccountExport`].
fn account_export_example() -> serde_json::Value {
    serde_json::json!({
        "exported_at": "2025-02-01T09:00:00.000000Z",
        "account": {"id": "0b5c9e04-5f5e-4a43-9f1e-0c2b8d1c7a10", "username": "alice", "role": "player",
            "created_at": "2025-01-31T18:00:00.000000Z"},
        "sessions": [{"id": "3c1a5d2f-4e8b-4a6c-9f2e-3d4c5b6a7e8f", "created_at": "2025-01-31T18:04:05.123456Z",
            "last_used_at": "2025-02-01T09:00:00.000000Z", "expires_at": "2025-03-02T18:04:05.123456Z",
            "user_agent": "Huit/1.4 (iPhone; iOS 18.1)", "current": true}],
        "tables": [{"id": "6f1c2a5e-2b7d-4c1e-9a53-0d4f8b2e7c11", "ruleset": "classique", "status": "finished",
            "seats": 2, "players": [
                {"seat": 0, "account_id": "0b5c9e04-5f5e-4a43-9f1e-0c2b8d1c7a10", "username": "alice", "erased": false},
                {"seat": 1, "account_id": null, "username": null, "erased": true}],
            "version": 212, "created_by": "0b5c9e04-5f5e-4a43-9f1e-0c2b8d1c7a10",
            "created_at": "2025-01-31T18:04:05.123456Z", "visibility": "public"}],
        "stats": [{"ruleset": "classique", "games": 1, "wins": 1, "average_place": 1.0, "points": 0,
            "rating": 27.64, "rating_deviation": 8.07, "provisional": true}],
        "results": [{"table_id": "6f1c2a5e-2b7d-4c1e-9a53-0d4f8b2e7c11", "ruleset": "classique",
            "ended_at": "2025-01-31T18:30:00.000000Z", "place": 1, "total": 0, "won": true,
            "rating_before": 25.0, "rating_after": 27.64}],
        "disputes": [],
        "feed": [{"id": 41, "kind": "game_over", "table_id": "6f1c2a5e-2b7d-4c1e-9a53-0d4f8b2e7c11",
            "at": "2025-01-31T18:30:00.000000Z", "my_turn": 0}],
        "devices": []
    })
}

/// Everything the server holds of the caller (GDPR articles 15 and 20),
/// as one JSON document.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = account_export_example)]
pub struct AccountExport {
    pub exported_at: DateTime<Utc>,
    pub account: ExportedAccount,
    /// Its active sessions (the devices it is logged in on).
    pub sessions: Vec<SessionInfo>,
    /// Every table it sits, or sat, at, oldest first.
    pub tables: Vec<ListedTableDto>,
    /// Its statistics and ratings, by ruleset.
    pub stats: Vec<PlayerStats>,
    /// Its results in rated games, newest first.
    pub results: Vec<RecentGame>,
    /// The disputes it filed, oldest first.
    pub disputes: Vec<DisputeDto>,
    /// Its feed's items still kept, oldest first.
    pub feed: Vec<FeedItem>,
    /// Its phones registered for push notifications, oldest first.
    pub devices: Vec<DeviceDto>,
}

/// Rows read per query while exporting.
const EXPORT_PAGE: i64 = 500;

/// Every row of a read by pages of [`EXPORT_PAGE`]: `read` is given the
/// cursor (`first`, then `cursor` of the last row read) until a page comes
/// back short.
async fn every_page<T, C, E, Page>(
    first: C,
    mut read: impl FnMut(C) -> Page,
    cursor: impl Fn(&T) -> C,
) -> Result<Vec<T>, ApiError>
where
    Page: std::future::Future<Output = Result<Vec<T>, E>>,
    ApiError: From<E>,
{
    let mut rows = Vec::new();
    let mut after = first;
    loop {
        let page = read(after).await?;
        let full = page.len() as i64 == EXPORT_PAGE;
        let Some(last) = page.last() else {
            return Ok(rows);
        };
        after = cursor(last);
        rows.extend(page);
        if !full {
            return Ok(rows);
        }
    }
}

/// Download the caller's data: the account, its sessions, its tables
/// (summaries), statistics and ratings, results, disputes, feed items and
/// devices, as one JSON document (`Content-Disposition: attachment`). At
/// most 6 per account per minute.
#[utoipa::path(
    tag = "accounts",
    responses(
        (status = 200, description = "The caller's data", body = AccountExport),
        TooManyRequests,
        Authenticated,
    )
)]
#[get("/me/export")]
#[tracing::instrument(skip_all, fields(account_id = %user.account.id))]
pub async fn export_me(
    pool: web::Data<PgPool>,
    tables: web::Data<TableService>,
    rates: web::Data<Rates>,
    user: AuthUser,
) -> Result<HttpResponse, ApiError> {
    rates.export(user.account.id)?;
    let id = user.account.id;
    let pool = pool.get_ref();
    let listed = every_page(
        None,
        |after| tables.list(None, Some(id), id, after, EXPORT_PAGE),
        |(t, _)| Some((t.created_at, t.id)),
    )
    .await?;
    let disputes = every_page(
        None,
        |after| store::disputes::list(pool, None, Some(id), after, EXPORT_PAGE),
        |d| Some((d.created_at, d.id)),
    )
    .await?;
    let feed = every_page(
        0,
        |after| store::feed::after(pool, id, after, EXPORT_PAGE),
        |i| i.id,
    )
    .await?;
    let sessions = store::sessions::active_of(pool, id, i64::MAX)
        .await?
        .into_iter()
        .map(|r| SessionInfo::of(r, user.session_id))
        .collect();
    let export = AccountExport {
        exported_at: Utc::now(),
        account: ExportedAccount {
            id,
            username: user.account.username.clone(),
            role: user.account.role,
            created_at: user.account.created_at,
        },
        sessions,
        tables: listed
            .into_iter()
            .map(|(t, s)| ListedTableDto::of(t, s))
            .collect(),
        stats: store::ratings::standings_of(pool, id)
            .await?
            .into_iter()
            .map(PlayerStats::from)
            .collect(),
        results: store::ratings::recent_results(pool, id, i64::MAX)
            .await?
            .into_iter()
            .map(RecentGame::from)
            .collect(),
        disputes: disputes
            .into_iter()
            .map(DisputeDto::try_from)
            .collect::<Result<_, _>>()?,
        feed: feed.iter().map(FeedItem::of).collect::<Result<_, _>>()?,
        devices: store::devices::of_account(pool, id)
            .await?
            .into_iter()
            .map(DeviceDto::try_from)
            .collect::<Result<_, _>>()?,
    };
    Ok(HttpResponse::Ok()
        .insert_header((
            header::CONTENT_DISPOSITION,
            "attachment; filename=\"huit-export.json\"",
        ))
        .json(export))
}
