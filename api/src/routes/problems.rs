//! The problem+json answers many routes share, declared once for the
//! OpenAPI document (`responses(..., Unauthorized, ServiceUnavailable)`);
//! the routes list only the answers of their own.

use std::collections::BTreeMap;

use utoipa::openapi::{RefOr, Response};
use utoipa::IntoResponses;

use crate::error::Problem;

/// A problem+json answer of one status, for the document.
macro_rules! problem {
    ($(#[$doc:meta])* $name:ident, $status:literal, $description:literal) => {
        $(#[$doc])*
        #[derive(Debug, IntoResponses)]
        #[response(
            status = $status,
            description = $description,
            content_type = "application/problem+json"
        )]
        pub struct $name(pub Problem);
    };
    // A refusal for now, with the seconds to wait in `Retry-After`.
    ($(#[$doc:meta])* $name:ident, $status:literal, $description:literal, retry_after) => {
        $(#[$doc])*
        #[derive(Debug, IntoResponses)]
        #[response(
            status = $status,
            description = $description,
            content_type = "application/problem+json",
            headers(("Retry-After" = u64, description = "Seconds to wait"))
        )]
        pub struct $name(pub Problem);
    };
}

problem!(
    /// 400: the body is not JSON.
    MalformedJson, 400, "`malformed_json`"
);
problem!(
    /// 401: no valid bearer token (missing, unknown, revoked or expired).
    Unauthorized, 401, "`unauthorized`"
);
problem!(
    /// 404 on a table's routes.
    TableNotFound, 404, "`not_found`: no such table, or a private table the caller is not a member of (told alike)"
);
problem!(
    /// 413: a body over the limit.
    PayloadTooLarge, 413, "`payload_too_large`"
);
problem!(
    /// 415: a body not sent as JSON.
    UnsupportedMediaType, 415, "`unsupported_media_type`"
);
problem!(
    /// 503: the database does not answer (within the acquire timeout).
    ServiceUnavailable, 503, "`service_unavailable`: the database does not answer"
);

problem!(
    /// 429 past a rate limit (the route's description says which).
    TooManyRequests,
    429,
    "`too_many_requests`: over this route's rate limit; see `Retry-After`",
    retry_after
);
problem!(
    /// 429 when the creator would run more bots than an account may.
    TooManyBots,
    429,
    "`too_many_bots`: an account runs at most `HUIT_MAX_BOTS` bots (8) and `HUIT_MAX_STRONG_BOT_TABLES` tables with a `strong` bot (4) at once; see `Retry-After`",
    retry_after
);
problem!(
    /// 429 on opening a table: its rate, or the bots.
    TablesOrBots,
    429,
    "`too_many_requests` (over `HUIT_TABLES_PER_MINUTE`) or `too_many_bots` (an account runs at most `HUIT_MAX_BOTS` bots and `HUIT_MAX_STRONG_BOT_TABLES` tables with a `strong` bot at once); see `Retry-After`",
    retry_after
);
problem!(
    /// 429 on long polls and streams.
    TooManyStreams,
    429,
    "`too_many_streams`: too many open long polls and streams for this account or address; see `Retry-After`",
    retry_after
);

/// Several answers at once: `Name = A | B | …` lists the union of theirs.
macro_rules! problems {
    ($(#[$doc:meta])* $name:ident = $($part:ident)|+) => {
        $(#[$doc])*
        #[derive(Debug)]
        pub struct $name;

        impl IntoResponses for $name {
            fn responses() -> BTreeMap<String, RefOr<Response>> {
                let mut all = BTreeMap::new();
                $(all.extend($part::responses());)+
                all
            }
        }
    };
}

problems!(
    /// 413 and 415: a JSON body too large, or not sent as JSON.
    JsonBodyRefused = PayloadTooLarge | UnsupportedMediaType
);
problems!(
    /// 400, 413 and 415: a JSON body that is not JSON, too large, or not
    /// sent as JSON.
    JsonBody = MalformedJson | PayloadTooLarge | UnsupportedMediaType
);
problems!(
    /// What every authenticated route may answer besides its own: 401 and 503.
    Authenticated = Unauthorized | ServiceUnavailable
);
problems!(
    /// What every route on one table may answer besides its own: 401, 404
    /// (no such table) and 503.
    OnTable = Unauthorized | TableNotFound | ServiceUnavailable
);
problems!(
    /// What a long poll or a stream of one table may answer besides its own:
    /// 401, 404, 429 `too_many_streams` and 503.
    WatchingTable = Unauthorized | TableNotFound | TooManyStreams | ServiceUnavailable
);
