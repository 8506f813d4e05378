//! Round history, replays, the log export, the event stream and the audit:
//! all read from the event log ([`crate::history`], [`crate::sse`]).
//!
//! Who may read what:
//! - `/rounds`: any authenticated account (points and totals are public, like
//!   the table summary; no hand is shown).
//! - `/rounds/{n}/replay`: admins at any time; the table's players once that
//!   round is over (403 `round_running` before); others 403 `not_a_player`.
//! - `/log`: admins at any time; the table's players once the game is over
//!   (403 `game_running` before); others 403 `not_a_player`.
//! - `/events/stream`: any authenticated account; a player sees its own
//!   hand and draws, anyone else what a spectator sees.
//! - `/admin/tables/{id}/audit`: admins only (403 `forbidden`).
//!
//! What an admin reads that a player could not yet (a running round's
//! replay, a log, an audit) is recorded as an admin action.

use actix_web::http::header::{Accept, Header};
use actix_web::http::StatusCode;
use actix_web::{get, web, HttpRequest, HttpResponse};
use domain::table::TableEvent;
use serde::Deserialize;
use serde_json::json;
use sqlx::PgPool;
use std::collections::BTreeMap;
use utoipa::openapi::extensions::Extensions;
use utoipa::openapi::schema::{ObjectBuilder, Schema, SchemaType, Type};
use utoipa::openapi::{ContentBuilder, RefOr, Response, ResponseBuilder};
use utoipa::{IntoParams, IntoResponses, PartialSchema};
use uuid::Uuid;

use crate::codes::ProblemCode;
use crate::config::Settings;
use crate::error::{ApiError, Problem};
use crate::history::{self, AuditReport, Parsed, ReplayDto, RoundsDto};
use crate::routes::problems::{Authenticated, OnTable, WatchingTable};
use crate::routes::shared::{TableCall, TablePath, Watching};
use crate::sse;
use crate::sse::{event_stream, last_event_id, SseEvent};
use store::accounts::Role;
use store::disputes::AdminAction;
use store::StoredEvent;

impl TableCall<PgPool> {
    fn is_admin(&self) -> bool {
        self.user.account.role == Role::Admin
    }

    /// The table's whole log, parsed (404 when there is no such table).
    pub async fn parsed(&self) -> Result<Parsed, ApiError> {
        Ok(Parsed::new(
            history::load(&self.state, self.table_id).await?,
        )?)
    }

    /// Records that the caller, an admin, did `action` on this table.
    async fn record(&self, action: AdminAction) -> Result<(), ApiError> {
        let (admin, table) = (self.user.account.id, Some(self.table_id));
        store::disputes::record(self.state.get_ref(), admin, action, table, None).await?;
        Ok(())
    }
}

fn not_a_player() -> ApiError {
    ApiError::Problem {
        status: StatusCode::FORBIDDEN,
        code: ProblemCode::NotAPlayer,
        detail: "only the players of this table (and administrators) may read this".into(),
    }
}

/// The history of a table: every finished round, and the result once over.
#[utoipa::path(
    tag = "history",
    params(TablePath),
    responses(
        (status = 200, description = "The rounds that are over, however they ended (points and totals by seat, index = seat), and the result once over", body = RoundsDto),
        OnTable,
    )
)]
#[get("/tables/{id}/rounds")]
pub async fn list_rounds(reader: TableCall<PgPool>) -> Result<HttpResponse, ApiError> {
    let parsed = reader.parsed().await?;
    Ok(HttpResponse::Ok().json(history::rounds(&parsed)?))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ReplayQuery {
    /// The step to show: 0 right after the deal, up to the round's last
    /// event (default: the last).
    step: Option<usize>,
}

/// The `{n}` of a round's routes (the table's `{id}` is a [`TablePath`]).
#[derive(Debug, Deserialize)]
pub struct RoundPath {
    n: u32,
}

/// A round replayed with every hand visible: its events and the omniscient
/// state after `step`.
#[utoipa::path(
    tag = "history",
    params(
        ("id" = Uuid, Path, description = "The table"),
        ("n" = u32, Path, description = "The round number (from 1)"),
        ReplayQuery,
    ),
    responses(
        (status = 200, description = "The round's events (full data) and the state after `step`", body = ReplayDto),
        (status = 400, description = "`invalid_query`: `step` is not a number", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "`not_a_player`: not a player of this table; `round_running`: the round is not over (players only see finished rounds)", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "`not_found`: no such table or round", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "`step_out_of_range`: past the round's last step", body = Problem, content_type = "application/problem+json"),
        Authenticated,
    )
)]
#[get("/tables/{id}/rounds/{n}/replay")]
pub async fn replay_round(
    reader: TableCall<PgPool>,
    round: web::Path<RoundPath>,
    query: web::Query<ReplayQuery>,
) -> Result<HttpResponse, ApiError> {
    let n = round.n;
    let parsed = reader.parsed().await?;
    let span = parsed
        .round_span(n)
        .ok_or_else(|| ApiError::NotFound(format!("no round {n} at this table")))?;
    if reader.is_admin() && !span.finished {
        reader.record(AdminAction::ReplayRunningRound).await?;
    } else if !reader.is_admin() {
        if parsed.seat_of(reader.user.account.id)?.is_none() {
            return Err(not_a_player());
        }
        if !span.finished {
            return Err(ApiError::Problem {
                status: StatusCode::FORBIDDEN,
                code: ProblemCode::RoundRunning,
                detail: format!("round {n} is still being played; replay it once it is over"),
            });
        }
    }
    Ok(HttpResponse::Ok().json(history::replay(&parsed, span, query.step)?))
}

/// The whole event log as NDJSON, streamed from the database.
#[utoipa::path(
    tag = "history",
    params(TablePath),
    responses(
        LogLines,
        (status = 403, description = "`not_a_player`: not a player of this game; `game_running`: the game is not over (players only export finished games)", body = Problem, content_type = "application/problem+json"),
        OnTable,
    )
)]
#[get("/tables/{id}/log")]
pub async fn export_log(
    reader: TableCall<PgPool>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let (table_id, pool) = (reader.table_id, reader.state.get_ref());
    store::events::current_version(pool, table_id)
        .await?
        .ok_or_else(|| ApiError::NotFound("no such table".into()))?;
    if reader.is_admin() {
        reader.record(AdminAction::ExportLog).await?;
    } else {
        if seat_in_game(pool, table_id, reader.user.account.id)
            .await?
            .is_none()
        {
            return Err(not_a_player());
        }
        let ends = ["game_ended", "game_aborted"];
        if !store::history::has_event_of_types(pool, table_id, &ends).await? {
            return Err(ApiError::Problem {
                status: StatusCode::FORBIDDEN,
                code: ProblemCode::GameRunning,
                detail: "the log of a game is exported to its players once the game is over".into(),
            });
        }
    }
    Ok(HttpResponse::Ok()
        .content_type(LogLines::media_type(&req))
        .streaming(sse::ndjson_log(pool.clone(), table_id)))
}

/// `GET …/log`'s answer: one `StoredEvent` per line, the lines' schema
/// named by the media type's `x-itemSchema` (OpenAPI 3.2's `itemSchema`,
/// which 3.1 has not). NDJSON, or the same bytes as `text/plain` to a
/// client that asks for that alone: openapi-python-client reads no other
/// text, and every generator types the body as a string.
#[derive(Debug)]
struct LogLines;

impl LogLines {
    const NDJSON: &'static str = "application/x-ndjson";
    const TEXT: &'static str = "text/plain";

    /// NDJSON unless the client prefers `text/plain` to it.
    fn media_type(req: &HttpRequest) -> &'static str {
        let accepted = Accept::parse(req).map(|a| a.ranked()).unwrap_or_default();
        let first = accepted
            .iter()
            .find(|m| m.essence_str() == Self::NDJSON || m.essence_str() == Self::TEXT);
        match first {
            Some(m) if m.essence_str() == Self::TEXT => "text/plain; charset=utf-8",
            _ => Self::NDJSON,
        }
    }
}

impl IntoResponses for LogLines {
    fn responses() -> BTreeMap<String, RefOr<Response>> {
        let RefOr::T(Schema::OneOf(event)) = StoredEvent::schema() else {
            unreachable!("a stored event is a union")
        };
        let line = event.examples.first().map(|e| format!("{e}\n"));
        let lines = ObjectBuilder::new()
            .schema_type(SchemaType::Type(Type::String))
            .description(Some(
                "One `StoredEvent` per line (its `x-itemSchema`), full data, in seq order: \
                 read the text and parse each line.",
            ))
            .examples(line);
        let content = ContentBuilder::new()
            .schema(Some(lines))
            .extensions(Some(
                Extensions::builder()
                    .add(
                        "x-itemSchema",
                        json!({"$ref": "#/components/schemas/StoredEvent"}),
                    )
                    .build(),
            ))
            .build();
        let answer = ResponseBuilder::new()
            .description(
                "The whole log, one `StoredEvent` (`{seq, type, v, at, data, prev_hash, hash}`) \
                 per line: NDJSON, or `text/plain` when asked for that alone.",
            )
            .content(Self::NDJSON, content.clone())
            .content(Self::TEXT, content)
            .build();
        BTreeMap::from([("200".to_owned(), RefOr::T(answer))])
    }
}

/// The seat of an account in a started game (from its `game_started`).
async fn seat_in_game(
    pool: &PgPool,
    table_id: Uuid,
    account_id: Uuid,
) -> Result<Option<usize>, ApiError> {
    let Some(started) = store::history::first_of_type(pool, table_id, "game_started").await? else {
        return Ok(None);
    };
    let account_id = crate::table_service::player_id(account_id);
    match history::parse(&started) {
        Ok(TableEvent::GameStarted { players }) => Ok(players
            .iter()
            .find(|p| p.account_id == account_id)
            .map(|p| p.seat)),
        _ => Err(ApiError::internal(format!(
            "game_started at seq {} does not parse",
            started.seq
        ))),
    }
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct StreamQuery {
    /// Resume after this seq (the `Last-Event-ID` header wins when both are
    /// sent; default 0: from the beginning).
    #[param(minimum = 0)]
    after: Option<i64>,
}

/// The caller's events as server-sent events: `id:` is the seq, `data:` the
/// public event with the data redacted for the caller (`hash` is the hash of
/// the full data). Resumes after `Last-Event-ID`; a comment keeps idle
/// connections alive.
#[utoipa::path(
    tag = "history",
    params(
        TablePath,
        ("Last-Event-ID" = Option<i64>, Header, nullable = false, minimum = 0, description = "The last seq received; the stream resumes after it"),
        StreamQuery,
    ),
    responses(
        (status = 200, description = "`text/event-stream`: `id: <seq>` and `data: {seq, type, v, at, data, prev_hash, hash}` per event, data redacted for the caller", content_type = "text/event-stream", body = SseEvent),
        (status = 400, description = "`invalid_last_event_id`, `invalid_query` (`after` < 0)", body = Problem, content_type = "application/problem+json"),
        WatchingTable,
    )
)]
#[get("/tables/{id}/events/stream")]
pub async fn stream_events(
    call: Watching,
    req: HttpRequest,
    settings: web::Data<Settings>,
    query: web::Query<StreamQuery>,
) -> Result<HttpResponse, ApiError> {
    let (tables, table_id, account_id) = (&call.tables, call.table_id, call.account_id());
    // A bad `after` is refused even when `Last-Event-ID` wins over it.
    let after = match query.after.unwrap_or(0) {
        after if after < 0 => return Err(ApiError::InvalidQuery("after: 0 or more".into())),
        after => after,
    };
    let after = last_event_id(&req, "the seq of an event")?.unwrap_or(after);
    let watch = call.open().await?;
    // Subscribe before the first read, so no commit is missed. An empty
    // read first: 404 when there is no such table (and the table cached
    // for the stream).
    let commits = tables.subscribe(table_id);
    tables
        .events_after(table_id, account_id, after, 0, true)
        .await?;
    let body = sse::table_events(sse::EventStream {
        tables: tables.get_ref().clone(),
        table_id,
        after,
        account_id,
        commits,
        keepalive: settings.sse_keepalive(),
    });
    Ok(event_stream(sse::until_ended(body, watch)))
}

/// Admin: recompute every round from the log, compare with the recorded
/// scores, verify the hash chain. Always run now; the audit of a table whose
/// game is over is kept for the dispute pages.
#[utoipa::path(
    tag = "admin",
    params(TablePath),
    responses(
        (status = 200, description = "The audit (`ok` false when anything is wrong; `first_bad_seq` names the first bad event)", body = AuditReport),
        (status = 403, description = "`forbidden`: administrators only", body = Problem, content_type = "application/problem+json"),
        OnTable,
    )
)]
#[get("/admin/tables/{id}/audit")]
pub async fn audit_table(reader: TableCall<PgPool>) -> Result<HttpResponse, ApiError> {
    reader.user.require_admin()?;
    let report = history::kept_audit(&reader.state, reader.table_id, true).await?;
    reader.record(AdminAction::Audit).await?;
    Ok(HttpResponse::Ok().json(report))
}
