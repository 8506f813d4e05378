//! Play: the caller's view (and its long poll and stream), moves, and the
//! caller's events (and their long poll).

use std::time::Duration;

use actix_web::http::header;
use actix_web::http::StatusCode;
use actix_web::{get, post, web, HttpRequest, HttpResponse};
use domain::{Move, TableCommand};
use serde_json::Value;
use uuid::Uuid;

use super::dto::{EventPage, EventsQuery, MoveAnswer, MoveRequest, TableView, ViewQuery};
use super::headers::{etag, IdempotencyKey, IfMatch, IfNoneMatch};
use crate::auth::CachedAuthUser;
use crate::codes::ProblemCode;
use crate::config::Settings;
use crate::error::{ApiError, Problem};
use crate::routes::problems::{JsonBodyRefused, OnTable, WatchingTable};
use crate::routes::shared::TablePath;
use crate::routes::shared::Watching;
use crate::sse;
use crate::sse::{event_stream, last_event_id, SseEvent};
use crate::table_service::{player_id, CachedTable, Idempotency, TableService};
use store::chain::canonical_json;
use store::idempotency::request_hash;

/// Longest long poll, in seconds.
pub const MAX_WAIT_SECS: u64 = 30;

/// A long poll's `wait` (0 when absent), checked.
pub(crate) fn wait_secs(wait: Option<u64>) -> Result<u64, ApiError> {
    match wait.unwrap_or(0) {
        wait if wait > MAX_WAIT_SECS => Err(ApiError::InvalidQuery(format!(
            "wait: at most {MAX_WAIT_SECS} seconds"
        ))),
        wait => Ok(wait),
    }
}

/// When a long poll of `wait` seconds started now gives up; `None` for 0
/// (no waiting).
pub(crate) fn long_poll_deadline(wait: u64) -> Option<tokio::time::Instant> {
    (wait > 0).then(|| tokio::time::Instant::now() + Duration::from_secs(wait))
}

/// The caller's view of a table (a spectator's when the caller does not
/// sit there: no hand, no moves). Send `If-None-Match: "<version>"` to get
/// a 304 while nothing changed; add `wait` to make it a long poll: the new
/// view comes as soon as a move is committed (by any server process), or
/// the 304 after `wait` seconds. A client can follow a game this way alone,
/// one request per change.
#[utoipa::path(
    tag = "tables",
    params(
        TablePath,
        ("If-None-Match" = Option<String>, Header, description = "An ETag from an earlier view"),
        ViewQuery,
    ),
    responses(
        (status = 200, description = "The view", body = TableView,
            headers(("ETag" = String, description = "`\"<version>\"`"))),
        (status = 304, description = "Not modified since the ETag sent (with `wait`: nothing changed within it)"),
        (status = 400, description = "`invalid_query`: `wait` > 30; `invalid_header`", body = Problem, content_type = "application/problem+json"),
        WatchingTable,
    )
)]
#[get("/tables/{id}/view")]
pub async fn get_view(
    call: Watching,
    query: web::Query<ViewQuery>,
    if_none_match: IfNoneMatch,
) -> Result<HttpResponse, ApiError> {
    let (tables, id, account_id) = (&call.tables, call.table_id, call.account_id());
    let wait = wait_secs(query.wait)?;
    // A version the caller has seen: the view is not older.
    let seen = if_none_match.seen();
    let view_of = |l: &CachedTable| (l.version(), TableView::of(id, l, account_id));
    let unchanged = |l: &CachedTable| if_none_match.has(l.version());
    let changed = match long_poll_deadline(wait) {
        Some(deadline) if if_none_match.is_present() => {
            let watch = call.open().await?;
            let poll = tables.read_when(id, seen, deadline, unchanged, view_of);
            watch.unless_ended(poll).await?
        }
        _ => None,
    };
    let (version, view) = match changed {
        Some((version, view)) => (version, Some(view)),
        None => {
            let read = tables.read(id, seen, |l| {
                (l.version(), (!unchanged(l)).then(|| view_of(l).1))
            });
            read.await?
        }
    };
    Ok(view_answer(version, view))
}

/// The view at `version` (200), or 304 when the caller has it; the ETag
/// either way, and `Vary: Authorization` (each caller has a view of its own).
fn view_answer(version: i64, view: Option<TableView>) -> HttpResponse {
    let mut res = match view {
        Some(_) => HttpResponse::Ok(),
        None => HttpResponse::NotModified(),
    };
    res.insert_header(etag(version))
        .insert_header((header::VARY, "Authorization"));
    match view {
        Some(view) => res.json(view),
        None => res.finish(),
    }
}

/// The caller's view as server-sent events: one frame (`id: <version>`,
/// `data:` the view as `GET …/view` gives it) at once, then one each time
/// the table moves (moves committed together give one frame, of the latest
/// view), woken by any server process's commits. A client can follow a game
/// with this stream alone. `Last-Event-ID` (the version of the view the
/// client has) skips the first frame while the table is at that version.
#[utoipa::path(
    tag = "tables",
    params(
        TablePath,
        ("Last-Event-ID" = Option<i64>, Header, nullable = false, minimum = 0, description = "The version of the last view received"),
    ),
    responses(
        (status = 200, description = "`text/event-stream`: `id: <version>` and `data:` the caller's view (`TableView`) per change", content_type = "text/event-stream", body = SseEvent),
        (status = 400, description = "`invalid_last_event_id`", body = Problem, content_type = "application/problem+json"),
        WatchingTable,
    )
)]
#[get("/tables/{id}/view/stream")]
pub async fn stream_view(
    call: Watching,
    req: HttpRequest,
    settings: web::Data<Settings>,
) -> Result<HttpResponse, ApiError> {
    let (id, account_id) = (call.table_id, call.account_id());
    let seen = last_event_id(&req, "the version of a view")?.unwrap_or(-1);
    let watch = call.open().await?;
    // 404 before the stream starts when there is no such table.
    call.tables.read(id, 0, |_| ()).await?;
    let body = sse::table_views(sse::ViewStream {
        tables: call.tables.get_ref().clone(),
        table_id: id,
        seen,
        // A view is its seat's: its frame is made once a version and seat.
        frame: move |l: &CachedTable| {
            l.shared_frame(l.seat_of(account_id), || {
                sse::frame(l.version(), &TableView::of(id, l, account_id))
            })
        },
        keepalive: settings.sse_keepalive(),
    });
    Ok(event_stream(sse::until_ended(body, watch)))
}

/// Make a move. The same `Idempotency-Key` with the same body (and
/// `If-Match`) replays the first successful answer; with another body it is
/// 422 `idempotency_key_reused`.
#[utoipa::path(
    tag = "tables",
    params(
        TablePath,
        ("If-Match" = Option<String>, Header, nullable = false, pattern = r#"^(\*|(W/)?"[0-9]{1,18}"|[0-9]{1,18})$"#, description = "`\"<version>\"` (or the bare version): the version the move is based on"),
        ("Idempotency-Key" = Option<String>, Header, nullable = false, min_length = 1, max_length = 255, pattern = "^[\\x21-\\x7e]([\\x20-\\x7e]*[\\x21-\\x7e])?$", description = "1 to 255 visible ASCII characters, chosen by the client per move"),
    ),
    request_body = MoveRequest,
    responses(
        (status = 200, description = "Done: the new version, the new events as the caller may see them (hashes are of the full data), and the caller's view", body = MoveAnswer,
            headers(("ETag" = String, description = "`\"<version>\"`"))),
        (status = 400, description = "`malformed_json` or `invalid_header`", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "`not_seated`", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "`version_conflict` (stale `expected_version`/`If-Match`: nothing changed), `game_not_started`, `game_over`, `idempotency_key_in_use`", body = Problem, content_type = "application/problem+json"),
        JsonBodyRefused,
        (status = 422, description = "`invalid_move` (not a move: bad shape or card code), the engine's refusal with its reason in `detail` (`not_your_turn`, `illegal_move`, `card_not_in_hand`, `bad_choice`, `bad_announce`, `cannot_draw`, `cannot_pass`, `cannot_challenge`, `no_such_seat`), `idempotency_key_reused` or `invalid_body`", body = Problem, content_type = "application/problem+json"),
        OnTable,
    )
)]
#[post("/tables/{id}/moves")]
pub async fn post_move(
    tables: web::Data<TableService>,
    user: CachedAuthUser,
    path: TablePath,
    body: web::Json<MoveRequest>,
    if_match: IfMatch,
    key: IdempotencyKey,
) -> Result<HttpResponse, ApiError> {
    let (id, account_id, body) = (path.0, user.account.id, body.into_inner());
    let mv: Move = serde_json::from_value(body.mv.clone()).map_err(|e| ApiError::Validation {
        code: ProblemCode::InvalidMove,
        detail: format!("not a move: {e}"),
    })?;
    let expected = body.expected_version(if_match)?;
    let idempotency = match key.0 {
        None => None,
        Some(key) => match start_or_replay(&tables, id, account_id, key, &body, if_match).await? {
            Started::New(idempotency) => Some(idempotency),
            Started::Replayed(answer) => return Ok(answer),
        },
    };
    let command = TableCommand::Move {
        account_id: player_id(account_id),
        mv,
    };
    let keyed = idempotency.as_ref().map(|i| (account_id, i));
    let acted = tables.act(id, &command, expected, keyed, |l, stored, events| {
        Ok(MoveAnswer::of(id, l, account_id, stored, events))
    });
    let acted = match acted.await {
        Ok(acted) => acted,
        Err(e) => {
            // The same key's move was applied meanwhile (a concurrent twin
            // committed first, and this one, decided again, was refused or
            // conflicted): its answer, never a refusal of a done move.
            if let Some(idem) = &idempotency {
                if let Some(answer) = replay(&tables, id, account_id, idem).await? {
                    return Ok(answer);
                }
            }
            // Nobody learns from a refusal that a private table exists.
            tables.seen_by(id, &user.account).await?;
            return Err(e.into());
        }
    };
    Ok(HttpResponse::Ok()
        .insert_header(etag(acted.answer.version))
        .json(acted.answer))
}

/// An idempotent move's first step: the stored answer when its key was
/// used before (422 when with another request), else the key to store the
/// answer under, with the hash of the request.
enum Started {
    New(Idempotency),
    Replayed(HttpResponse),
}

async fn start_or_replay(
    tables: &TableService,
    id: Uuid,
    account_id: Uuid,
    key: String,
    body: &MoveRequest,
    if_match: IfMatch,
) -> Result<Started, ApiError> {
    let request = serde_json::json!({"body": body, "if_match": if_match.0});
    let idempotency = Idempotency {
        key,
        request_hash: request_hash(canonical_json(&request).as_bytes()),
    };
    Ok(match replay(tables, id, account_id, &idempotency).await? {
        Some(answer) => Started::Replayed(answer),
        None => Started::New(idempotency),
    })
}

/// The stored answer of an earlier move with this key, replayed (422 when
/// the key came with another request).
async fn replay(
    tables: &TableService,
    id: Uuid,
    account_id: Uuid,
    idem: &Idempotency,
) -> Result<Option<HttpResponse>, ApiError> {
    let Some(stored) = tables.replay(id, account_id, idem).await? else {
        return Ok(None);
    };
    let status = StatusCode::from_u16(stored.status).map_err(ApiError::internal)?;
    let mut res = HttpResponse::build(status);
    if let Some(v) = stored.body.get("version").and_then(Value::as_i64) {
        res.insert_header(etag(v));
    }
    Ok(Some(
        res.insert_header(("Idempotent-Replayed", "true"))
            .json(stored.body),
    ))
}

/// The caller's events after `after`, redacted for the caller; with
/// `wait`, a long poll: the answer comes as soon as an event is committed
/// (by any server process), or empty after `wait` seconds.
#[utoipa::path(
    tag = "tables",
    params(TablePath, EventsQuery),
    responses(
        (status = 200, description = "The events (possibly none)", body = EventPage),
        (status = 400, description = "`invalid_query`: `after` < 0, `wait` > 30, `limit` not in 1..=500", body = Problem, content_type = "application/problem+json"),
        WatchingTable,
    )
)]
#[get("/tables/{id}/events")]
pub async fn get_events(
    call: Watching,
    query: web::Query<EventsQuery>,
) -> Result<HttpResponse, ApiError> {
    let after = query.after.unwrap_or(0);
    if after < 0 {
        return Err(ApiError::InvalidQuery("after: 0 or more".into()));
    }
    let wait = wait_secs(query.wait)?;
    let limit = query.limit.unwrap_or(200);
    if !(1..=500).contains(&limit) {
        return Err(ApiError::InvalidQuery("limit: from 1 to 500".into()));
    }
    let deadline = long_poll_deadline(wait);
    let poll = call
        .tables
        .poll_events(call.table_id, call.account_id(), after, limit, deadline);
    let events = match deadline {
        Some(_) => call.open().await?.unless_ended(poll).await?,
        None => poll.await?,
    };
    let next = events.last().map_or(after, |e| e.seq);
    Ok(HttpResponse::Ok().json(EventPage { events, next }))
}
