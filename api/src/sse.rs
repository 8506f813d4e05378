//! Streams for the HTTP side of the history: the NDJSON export of a log,
//! read page by page, and the server-sent events and views of a table, with
//! what their routes share: the `text/event-stream` answer, its event's
//! schema and the `Last-Event-ID` it resumes after.

use std::collections::VecDeque;
use std::time::Duration;

use actix_web::http::header::{self, ContentType, HeaderValue};
use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse};
use bytes::Bytes;
use futures_util::stream::{self, Stream, StreamExt};
use sqlx::PgPool;
use tokio::time::Instant;
use uuid::Uuid;

use serde::Serialize;
use utoipa::ToSchema;

use crate::codes::ProblemCode;
use crate::error::ApiError;
use crate::feed::{self, FeedItem};
use crate::log::hub::CommitHub;
use crate::table_service::{CachedTable, Subscription, TableService};
use crate::watchers::Watch;
use store::events::PAGE;

/// The whole log of a table as NDJSON, one public event per line, read from
/// the database one page at a time as the client consumes it.
pub fn ndjson_log(
    pool: PgPool,
    table_id: Uuid,
) -> impl Stream<Item = Result<Bytes, sqlx::Error>> + 'static {
    stream::try_unfold(Some(0i64), move |after| {
        let pool = pool.clone();
        async move {
            let Some(after) = after else {
                return Ok(None);
            };
            let page = store::events::read_after(&pool, table_id, after, PAGE).await?;
            let Some(last) = page.last().map(|e| e.seq) else {
                return Ok(None);
            };
            let mut chunk = Vec::with_capacity(page.len() * 256);
            for e in &page {
                serde_json::to_writer(&mut chunk, e)
                    .map_err(|err| sqlx::Error::Decode(Box::new(err)))?;
                chunk.push(b'\n');
            }
            let next = (page.len() as i64 == PAGE).then_some(last);
            Ok(Some((Bytes::from(chunk), next)))
        }
    })
}

/// `body` until its watch's session ends (the token revoked or expired):
/// then the stream closes, and a client that reconnects with that token
/// gets 401. The streams send their own keep-alive comments after each
/// `HUIT_SSE_KEEPALIVE_MS` of silence: for the proxies and NATs that drop
/// a connection idle too long, and for a client that vanished without
/// closing its connection (a write to it fails in the end). A client that
/// closes it is noticed at once, without a write (the server does not
/// allow HTTP/1 half-closed connections).
pub fn until_ended<S>(body: S, watch: Watch) -> impl Stream<Item = S::Item> + 'static
where
    S: Stream<Item = Result<Bytes, sqlx::Error>> + 'static,
{
    // `next()` of an unfold is cancel-safe: the stream keeps its future.
    stream::unfold(
        (Box::pin(body), watch),
        |(mut body, mut watch)| async move {
            tokio::select! {
                item = body.next() => item.map(|item| (item, (body, watch))),
                () = watch.ended() => None,
            }
        },
    )
}

/// A subscriber's place in a table's event stream.
#[derive(Debug)]
pub struct EventStream {
    pub tables: TableService,
    pub table_id: Uuid,
    /// The last seq sent.
    pub after: i64,
    /// The caller's account: the redaction is its seat's (or a spectator's).
    pub account_id: Uuid,
    /// Subscribed before the first read.
    pub commits: Subscription,
    pub keepalive: Duration,
}

/// When a stream silent from now on sends its keep-alive: `keepalive` from
/// now, rounded up to the process's next tick (a quarter of a second, or
/// of `keepalive` when that is shorter). Tens of thousands of streams
/// opened at their own instants would each wake a worker at its own
/// millisecond, and each ask for its table's stored version on its own
/// (two more wake-ups, across threads); due together, a tick's
/// keep-alives are one wake-up of each worker and one batch of checks,
/// four times a second (a burst a few milliseconds long at most).
fn keepalive_deadline(keepalive: Duration) -> Instant {
    static EPOCH: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    let epoch = *EPOCH.get_or_init(Instant::now);
    next_tick(epoch, Instant::now() + keepalive, keepalive)
}

/// `due` rounded up to a whole tick after `epoch` (see
/// [`keepalive_deadline`]).
fn next_tick(epoch: Instant, due: Instant, keepalive: Duration) -> Instant {
    let tick = (keepalive / 4).clamp(Duration::from_millis(1), Duration::from_millis(250));
    let ticks = (due - epoch).as_nanos().div_ceil(tick.as_nanos());
    epoch + tick * u32::try_from(ticks).unwrap_or(u32::MAX)
}

/// One SSE frame: `id: <id>` and `data:` the JSON of `data` (an event's
/// seq and the public event, its data already redacted for the subscriber;
/// a view's version and the view).
pub fn frame(id: i64, data: &impl serde::Serialize) -> Bytes {
    let mut out = format!("id: {id}\ndata: ").into_bytes();
    serde_json::to_writer(&mut out, data).expect("events and views serialise");
    out.extend_from_slice(b"\n\n");
    Bytes::from(out)
}

/// The server-sent events of a table: a comment first, then every event
/// after `after`, then each new one as it is committed (woken through
/// [`crate::log::hub::CommitHub`], not by polling the database); after each
/// `keepalive` of silence the table's stored version is checked (a
/// notification can be lost), then a keep-alive comment is sent (the loop:
/// [`TableService::wait_for`]). Events come from the table
/// cache like long polls' (the log is read only for old events or when
/// another process committed), so a wake-up costs no query, and the table
/// stays cached while the stream lives. The stream ends when it is dropped
/// (the client went away) or the database fails.
pub fn table_events(s: EventStream) -> impl Stream<Item = Result<Bytes, sqlx::Error>> + 'static {
    let mut pending = VecDeque::new();
    pending.push_back(Bytes::from(format!(
        ": events of table {}\nretry: 2000\n\n",
        s.table_id
    )));
    let kept = s.tables.keep_cached(s.table_id);
    stream::unfold(
        (s, pending, kept),
        |(mut s, mut pending, kept)| async move {
            loop {
                if let Some(b) = pending.pop_front() {
                    return Some((Ok(b), (s, pending, kept)));
                }
                let deadline = keepalive_deadline(s.keepalive);
                let (tables, commits) = (&s.tables, &mut s.commits);
                let (table_id, account_id, after) = (s.table_id, s.account_id, s.after);
                let page = tables
                    .wait_for(commits, deadline, async |verify| {
                        tables
                            .events_after(table_id, account_id, after, PAGE, verify)
                            .await
                            .map(|page| (!page.is_empty()).then_some(page))
                    })
                    .await;
                match page {
                    Err(e) => {
                        tracing::warn!(error = %e, "event stream stops");
                        return None;
                    }
                    Ok(Some(page)) => {
                        for e in &page {
                            pending.push_back(frame(e.seq, e));
                            s.after = e.seq;
                        }
                    }
                    Ok(None) => pending.push_back(Bytes::from_static(b": keep-alive\n\n")),
                }
            }
        },
    )
}

/// A subscriber's place in a table's stream of views.
pub struct ViewStream<F> {
    pub tables: TableService,
    pub table_id: Uuid,
    /// The version of the last view sent (or the one the client has, from
    /// `Last-Event-ID`); -1 for none.
    pub seen: i64,
    /// One view's frame, `id: <version>` and its JSON, as the subscriber
    /// sees it.
    pub frame: F,
    pub keepalive: Duration,
}

impl<F> std::fmt::Debug for ViewStream<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ViewStream")
            .field("table_id", &self.table_id)
            .field("seen", &self.seen)
            .field("keepalive", &self.keepalive)
            .finish_non_exhaustive()
    }
}

/// The server-sent views of a table: a comment first, then the caller's
/// view whenever the table is at a version other than the last one sent,
/// at once for the first (unless the client has it) and as each commit is
/// heard (woken through [`crate::log::hub::CommitHub`] as long polls are, from the table
/// cache). Commits heard together give one frame, of the latest view. After
/// each `keepalive` of silence the table's stored version is checked (a
/// notification can be lost), then a keep-alive comment is sent. The table
/// stays cached while the stream lives. The stream ends when it is dropped
/// (the client went away) or the database fails.
pub fn table_views<F>(s: ViewStream<F>) -> impl Stream<Item = Result<Bytes, sqlx::Error>> + 'static
where
    F: Fn(&CachedTable) -> Bytes + 'static,
{
    let first = Bytes::from(format!(": views of table {}\nretry: 2000\n\n", s.table_id));
    let kept = s.tables.keep_cached(s.table_id);
    stream::unfold((s, Some(first), kept), |(mut s, first, kept)| async move {
        if let Some(first) = first {
            return Some((Ok(first), (s, None, kept)));
        }
        let seen = s.seen;
        let deadline = keepalive_deadline(s.keepalive);
        let frame = &s.frame;
        let changed = s
            .tables
            .read_when(
                s.table_id,
                seen,
                deadline,
                |l| l.version() == seen,
                |l| (l.version(), frame(l)),
            )
            .await;
        match changed {
            Ok(Some((version, frame))) => {
                s.seen = version;
                Some((Ok(frame), (s, None, kept)))
            }
            Ok(None) => Some((Ok(Bytes::from_static(b": keep-alive\n\n")), (s, None, kept))),
            Err(e) => {
                tracing::warn!(error = %e, "view stream stops");
                None
            }
        }
    })
}

/// One event of `text/event-stream`, as its fields are read by a client
/// (what OpenAPI 3.2 calls the stream's `itemSchema`; before 3.2 the schema
/// of an event stream describes one event).
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({"id": "3", "data": "{\"seq\":3,\"type\":\"player_joined\",\"v\":1,\"at\":\"2025-01-31T18:04:05.123456Z\",\"data\":{},\"prev_hash\":\"…\",\"hash\":\"…\"}"}))]
pub struct SseEvent {
    /// The event's seq (resume with `Last-Event-ID`).
    pub id: Option<String>,
    /// The event type; absent: `message`.
    pub event: Option<String>,
    /// The public event as JSON: `{seq, type, v, at, data, prev_hash, hash}`.
    pub data: String,
    /// The reconnection delay, in milliseconds (sent once, first).
    pub retry: Option<u64>,
}

/// A stream's `Last-Event-ID` (a number ≥ 0, `what` it names), if sent.
pub fn last_event_id(req: &HttpRequest, what: &str) -> Result<Option<i64>, ApiError> {
    req.headers()
        .get("last-event-id")
        .map(|v| {
            v.to_str()
                .ok()
                .and_then(|s| s.trim().parse::<i64>().ok())
                .filter(|n| *n >= 0)
                .ok_or(ApiError::Problem {
                    status: StatusCode::BAD_REQUEST,
                    code: ProblemCode::InvalidLastEventId,
                    detail: format!("Last-Event-ID must be {what}"),
                })
        })
        .transpose()
}

/// A `text/event-stream` answer, not to be cached nor buffered by proxies.
pub fn event_stream<S>(body: S) -> HttpResponse
where
    S: futures_util::Stream<Item = Result<bytes::Bytes, sqlx::Error>> + 'static,
{
    HttpResponse::Ok()
        .insert_header(ContentType(
            "text/event-stream".parse().expect("a valid media type"),
        ))
        .insert_header((header::CACHE_CONTROL, HeaderValue::from_static("no-cache")))
        .insert_header((
            header::HeaderName::from_static("x-accel-buffering"),
            HeaderValue::from_static("no"),
        ))
        .streaming(body)
}

/// The caller's feed as server-sent events: a comment first, then every
/// item after `after` (`id:` the item's id, `data:` the item), then each new
/// one as it is committed; a keep-alive comment after each `keepalive` of
/// silence (the feed read again then: a notification can be lost).
pub fn feed(
    pool: PgPool,
    hub: CommitHub,
    account: Uuid,
    after: i64,
    keepalive: Duration,
) -> impl Stream<Item = Result<Bytes, sqlx::Error>> + 'static {
    let mut pending = VecDeque::new();
    pending.push_back(Bytes::from_static(b": your feed\nretry: 2000\n\n"));
    let woken = hub.subscribe_feed(account);
    let state = (pool, hub, woken, after, pending, true);
    stream::unfold(
        state,
        move |(pool, hub, mut woken, mut after, mut pending, mut read)| async move {
            loop {
                if let Some(b) = pending.pop_front() {
                    return Some((Ok(b), (pool, hub, woken, after, pending, read)));
                }
                if read {
                    let items =
                        match store::feed::after(&pool, account, after, feed::MAX_PAGE).await {
                            Ok(items) => items,
                            Err(e) => {
                                tracing::warn!(error = %e, "feed stream stops");
                                return None;
                            }
                        };
                    for item in &items {
                        let Ok(shown) = FeedItem::of(item) else {
                            return None;
                        };
                        pending.push_back(frame(item.id, &shown));
                        after = item.id;
                    }
                    // A full page: read on before waiting.
                    read = items.len() as i64 == feed::MAX_PAGE;
                    if !pending.is_empty() {
                        continue;
                    }
                }
                let deadline = keepalive_deadline(keepalive);
                if !hub.wait(&mut woken, deadline).await {
                    pending.push_back(Bytes::from_static(b": keep-alive\n\n"));
                }
                read = true;
            }
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keepalives_of_streams_silent_from_one_tick_fall_due_together() {
        let epoch = Instant::now();
        let keepalive = Duration::from_secs(15);
        let ms = Duration::from_millis;
        let at = |after: Duration| next_tick(epoch, epoch + after + keepalive, keepalive);
        // Streams silent from 0.01 s, 0.1 s and 0.249 s: one tick, at
        // 15.25 s.
        let tick = at(ms(10));
        assert_eq!(tick, epoch + ms(15_250));
        assert_eq!(at(ms(100)), tick);
        assert_eq!(at(ms(249)), tick);
        // On the tick itself, that tick; just after it, the next one.
        assert_eq!(at(ms(250)), tick);
        assert_eq!(at(ms(251)), tick + ms(250));
        // Never sooner than `keepalive` of silence, nor a tick later.
        for after in (0..3000).step_by(37).map(ms) {
            let due = epoch + after + keepalive;
            assert!(at(after) >= due && at(after) < due + ms(250));
        }
    }

    #[test]
    fn a_short_keepalive_ticks_at_a_quarter_of_itself() {
        let epoch = Instant::now();
        let keepalive = Duration::from_millis(200);
        let due = epoch + Duration::from_millis(1) + keepalive;
        assert_eq!(
            next_tick(epoch, due, keepalive),
            epoch + Duration::from_millis(250)
        );
        let keepalive = Duration::from_millis(100);
        let due = epoch + Duration::from_millis(1) + keepalive;
        assert_eq!(
            next_tick(epoch, due, keepalive),
            epoch + Duration::from_millis(125)
        );
    }
}
