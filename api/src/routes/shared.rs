//! What several route modules share, so that no route module imports
//! another: the table of the path and its caller ([`TablePath`],
//! [`TableCall`]), a place among the caller's long polls and streams
//! ([`Watching`], whose refusals are
//! [`crate::routes::problems::WatchingTable`]'s), paging ([`ListQuery`],
//! [`cursor_after`], [`page_limit`]), a username ([`Username`]) and an
//! account as answered ([`AccountDto`]).

use std::future::{ready, Ready};

use actix_web::dev::Payload;
use actix_web::{web, FromRequest, HttpMessage, HttpRequest};
use chrono::{DateTime, Utc};
use domain::Status;
use futures_util::future::LocalBoxFuture;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use crate::auth::{AuthUser, CachedAuthUser};
use crate::codes::ProblemCode;
use crate::config::Settings;
use crate::error::ApiError;
use crate::table_service::TableService;
use crate::telemetry;
use crate::watchers::{Following, Watch, WatchSlot};
use store::accounts::{Account, Role};

/// The `{id}` of a table's routes. Extracting it names the table in the
/// request's span; a malformed id names no resource (404).
#[derive(Debug, IntoParams)]
#[into_params(names("id"), parameter_in = Path)]
pub struct TablePath(
    /// The table
    pub Uuid,
);

impl FromRequest for TablePath {
    type Error = ApiError;
    type Future = Ready<Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let id = req.match_info().get("id").unwrap_or_default();
        ready(match Uuid::parse_str(id) {
            Ok(id) => {
                telemetry::record_table(id);
                Ok(Self(id))
            }
            Err(e) => Err(ApiError::NotFound(format!(
                "no resource at this path (table id: {e})"
            ))),
        })
    }
}

/// The caller on the table of the path, with what the route works with
/// (`S`): the table service for the commands, the pool for the history.
/// Extracted only when the caller may see the table (404 otherwise, as for
/// a table that does not exist: [`TableService::seen_by`]).
#[derive(Debug)]
pub struct TableCall<S: ?Sized + 'static> {
    pub state: web::Data<S>,
    pub user: AuthUser,
    pub table_id: Uuid,
}

impl<S: ?Sized + 'static> FromRequest for TableCall<S> {
    type Error = actix_web::Error;
    type Future = LocalBoxFuture<'static, Result<Self, actix_web::Error>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let parts = <(web::Data<S>, web::Data<TableService>, AuthUser, TablePath)>::from_request(
            req, payload,
        );
        Box::pin(async move {
            let (state, tables, user, path) = parts.await?;
            tables
                .seen_by(path.0, &user.account)
                .await
                .map_err(ApiError::from)?;
            Ok(Self {
                state,
                user,
                table_id: path.0,
            })
        })
    }
}

/// A JSON body the client may leave out: none (no bytes), `T::default()`;
/// one sent must be JSON (415 otherwise) that reads as `T` (400
/// `malformed_json`, 422 `invalid_body`, `null` included), within the
/// limit of every JSON body (`HUIT_BODY_LIMIT_BYTES`, 413).
#[derive(Debug)]
pub struct OptionalBody<T>(pub T);

impl<T: serde::de::DeserializeOwned + Default + 'static> FromRequest for OptionalBody<T> {
    type Error = actix_web::Error;
    type Future = LocalBoxFuture<'static, Result<Self, actix_web::Error>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let kind = req.content_type();
        let json = kind == "application/json" || kind.ends_with("+json");
        let settings = web::Data::<Settings>::extract(req);
        let body = web::Bytes::from_request(req, payload);
        Box::pin(async move {
            let limit = settings.await?.body_limit_bytes;
            let body = body
                .await
                .map_err(|_| ApiError::PayloadTooLarge { limit })?;
            if body.is_empty() {
                return Ok(Self(T::default()));
            }
            if body.len() > limit {
                return Err(ApiError::PayloadTooLarge { limit }.into());
            }
            if !json {
                return Err(ApiError::UnsupportedMediaType.into());
            }
            match serde_json::from_slice::<T>(&body) {
                Ok(value) => Ok(Self(value)),
                Err(e) if e.is_data() => Err(ApiError::InvalidBody(e.to_string()).into()),
                Err(e) => Err(ApiError::MalformedJson(e.to_string()).into()),
            }
        })
    }
}

/// The caller following the table of the path, which they may see (as
/// [`TableCall`]).
#[derive(Debug)]
pub struct Watching {
    pub tables: web::Data<TableService>,
    pub user: CachedAuthUser,
    pub table_id: Uuid,
    slot: WatchSlot,
}

impl Watching {
    /// The caller's account.
    pub fn account_id(&self) -> Uuid {
        self.user.account.id
    }

    /// A place for a long poll or a stream (429 `too_many_streams` past the
    /// caller's limits, 503 when the process is full); it is given back
    /// when the [`Watch`] is dropped.
    pub async fn open(&self) -> Result<Watch, ApiError> {
        self.slot
            .open(&self.user, Following::Table(self.table_id))
            .await
    }
}

impl FromRequest for Watching {
    type Error = actix_web::Error;
    type Future = LocalBoxFuture<'static, Result<Self, actix_web::Error>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let parts = <(
            web::Data<TableService>,
            CachedAuthUser,
            TablePath,
            WatchSlot,
        )>::from_request(req, payload);
        Box::pin(async move {
            let (tables, user, table, slot) = parts.await?;
            tables
                .seen_by(table.0, &user.account)
                .await
                .map_err(ApiError::from)?;
            Ok(Self {
                tables,
                user,
                table_id: table.0,
                slot,
            })
        })
    }
}

/// Filters and cursor of `GET /v1/tables`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ListQuery {
    /// Only tables with this status: `waiting`, `playing` or `finished`.
    #[param(value_type = Option<Status>)]
    pub status: Option<Status>,
    /// Only tables where the caller sits.
    pub mine: Option<bool>,
    /// The `next` of the previous page.
    #[param(pattern = r"^-?[0-9]{1,16}\.[0-9a-fA-F]{32}$")]
    pub after: Option<String>,
    /// 1 to 100 (default 20).
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<i64>,
}

/// The `next` of a page whose last row was created `at` with `id`: its
/// creation (µs) and id, read back by [`ListQuery::cursor`].
pub fn cursor_after(at: DateTime<Utc>, id: Uuid) -> String {
    format!("{}.{}", at.timestamp_micros(), id.simple())
}

/// A page's `limit`: 1 to 100, 20 when not given.
pub fn page_limit(limit: Option<i64>) -> Result<i64, ApiError> {
    match limit.unwrap_or(20) {
        limit @ 1..=100 => Ok(limit),
        _ => Err(ApiError::InvalidQuery("limit: from 1 to 100".into())),
    }
}

impl ListQuery {
    /// The `after` of a page: the `next` of the one before (see
    /// [`cursor_after`]).
    pub fn cursor(raw: &str) -> Result<(DateTime<Utc>, Uuid), ApiError> {
        let bad = || ApiError::InvalidQuery(format!("after: not a cursor of this list: {raw:?}"));
        let (micros, id) = raw.split_once('.').ok_or_else(bad)?;
        // Within PostgreSQL's timestamptz range (4713 BC to 294276 AD), so
        // that no cursor becomes a database error.
        let at = micros
            .parse::<i64>()
            .ok()
            .and_then(DateTime::from_timestamp_micros)
            .filter(|at| (-4712..=294_275).contains(&chrono::Datelike::year(at)))
            .ok_or_else(bad)?;
        Ok((at, id.parse().map_err(|_| bad())?))
    }
}

/// A username: 3 to 32 of `A-Z a-z 0-9 _ -`, unique whatever its case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Username(String);

/// What every guest's name, and only theirs, begins with.
const GUEST_PREFIX: &str = "guest-";

impl Username {
    pub fn parse(raw: &str) -> Result<Self, ApiError> {
        let ok = (3..=32).contains(&raw.len())
            && raw
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
        if ok {
            Ok(Self(raw.to_owned()))
        } else {
            Err(ApiError::Validation {
                code: ProblemCode::InvalidUsername,
                detail: "a username has 3 to 32 characters among A-Z, a-z, 0-9, _ and -".into(),
            })
        }
    }

    /// A name a person chooses (registering, a guest upgrading): any
    /// username but the guests' (`guest-…`, whatever its case).
    pub fn chosen(raw: &str) -> Result<Self, ApiError> {
        let name = Self::parse(raw)?;
        if name.key().starts_with(GUEST_PREFIX) {
            return Err(ApiError::Validation {
                code: ProblemCode::InvalidUsername,
                detail: format!("names beginning with {GUEST_PREFIX} are the guests'"),
            });
        }
        Ok(name)
    }

    /// A guest's generated name: `guest-` and 10 random letters and
    /// digits (about 52 bits).
    pub fn guest() -> Self {
        use rand::Rng;
        const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
        let mut rng = rand::thread_rng();
        let tail: String = (0..10)
            .map(|_| char::from(ALPHABET[rng.gen_range(0..ALPHABET.len())]))
            .collect();
        Self(format!("{GUEST_PREFIX}{tail}"))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The one normal form of a username, for storage, look-up and
    /// throttling: ASCII lowercase (a username is ASCII).
    pub fn key(&self) -> String {
        self.0.to_ascii_lowercase()
    }
}

/// An account as shown to clients.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({
    "id": "0b5c9e04-5f5e-4a43-9f1e-0c2b8d1c7a10",
    "username": "alice",
    "role": "player"
}))]
pub struct AccountDto {
    pub id: Uuid,
    pub username: String,
    pub role: Role,
}

impl From<Account> for AccountDto {
    fn from(a: Account) -> Self {
        Self {
            id: a.id,
            username: a.username,
            role: a.role,
        }
    }
}

#[cfg(test)]
mod tests {
    use actix_web::HttpResponse;
    use tracing::level_filters::LevelFilter;

    use super::*;
    use crate::telemetry::tests::serve_once;

    #[actix_web::test]
    async fn a_line_logged_while_serving_a_table_route_names_the_table() {
        let id = "6f1c2a5e-2b7d-4c1e-9a53-0d4f8b2e7c11";
        let handler = |_: TablePath| async {
            tracing::info!("serving");
            HttpResponse::Ok().finish()
        };
        let uri = format!("/tables/{id}");
        let (_, logged) = serve_once(LevelFilter::INFO, "/tables/{id}", &uri, handler).await;
        let line = logged.lines().find(|l| l.contains("serving")).unwrap();
        assert!(line.contains(&format!("table_id={id}")), "{logged}");
    }
}
