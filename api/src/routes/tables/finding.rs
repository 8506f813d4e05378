//! Finding a game (docs/API.md "Finding a game and coming back"): quick
//! play, private tables' invitations, and the rematch. Each answers with
//! the summary of the table the caller now sits at (or whose invitation
//! was renewed), as its creator or a player is shown it.

// The unit structs that actix and utoipa write for each route have no
// `Debug`; written from a local macro, the lint sees them as ours.
#![allow(missing_debug_implementations)]

use actix_web::http::header;
use actix_web::{delete, post, web, HttpResponse};
use uuid::Uuid;

use super::dto::{QuickPlay, SeatRequest, TableSummary};
use super::headers::etag;
use crate::auth::{AuthUser, ClientAddress};
use crate::codes::ProblemCode;
use crate::error::{ApiError, Problem};
use crate::rates::Rates;
use crate::routes::problems::{Authenticated, JsonBody, OnTable, TooManyRequests};
use crate::routes::shared::{OptionalBody, TableCall, TablePath};
use crate::table_service::{CachedTable, Opening, TableService};
use crate::throttle::InviteThrottle;

/// The summary of the table the caller is at, as they are shown it, with
/// its ETag and URL.
async fn seated_at(
    tables: &TableService,
    caller: Uuid,
    (id, table): (Uuid, CachedTable),
) -> Result<HttpResponse, ApiError> {
    let summary = TableSummary::of(id, &table)
        .shown_to(tables, caller)
        .await?;
    Ok(HttpResponse::Ok()
        .insert_header(etag(summary.table.version))
        .insert_header((header::LOCATION, format!("/v1/tables/{id}")))
        .json(summary))
}

/// Quick play: sit at the oldest public waiting quick-play table with
/// exactly these settings and a free seat, or open one.
///
/// The table starts by itself when full; with `bots_after`, `basic` bots
/// take its empty seats that many seconds after it opened, and it starts.
/// A caller already waiting at a table of these settings gets it back.
/// Counted against `HUIT_TABLES_PER_MINUTE` like opening a table.
#[utoipa::path(
    tag = "tables",
    request_body = QuickPlay,
    responses(
        (status = 200, description = "Seated; the table's summary", body = TableSummary,
            headers(("Location" = String, description = "The table's URL"),
                    ("ETag" = String, description = "`\"<version>\"`"))),
        JsonBody,
        (status = 409, description = "`version_conflict`: other callers kept winning the race for these settings; try again", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "`invalid_rules`, `invalid_clock` or `invalid_body` (`bots_after` not in 1..=3600, a `client_seed` that is not 1 to 64 ASCII characters from `!` to `~`)", body = Problem, content_type = "application/problem+json"),
        TooManyRequests,
        Authenticated,
    )
)]
#[post("/quickplay")]
#[tracing::instrument(skip_all, fields(ruleset = %body.ruleset))]
pub async fn quickplay(
    tables: web::Data<TableService>,
    user: AuthUser,
    rates: web::Data<Rates>,
    body: web::Json<QuickPlay>,
) -> Result<HttpResponse, ApiError> {
    let lobby = body.lobby()?;
    let options = body.options.clone().unwrap_or_default();
    let opening = Opening {
        ruleset: &body.ruleset,
        options: &options,
        seats: body.seats as usize,
        clock: body.clock,
        bots: &[],
        lobby: &lobby,
    };
    let caller = user.account.id;
    let person = user.person().bringing(body.client_seed.clone());
    let seated = tables.quickplay(&rates, person, opening).await?;
    seated_at(&tables, caller, seated).await
}

/// An invitation's code, in the path.
#[derive(Debug, serde::Deserialize, utoipa::IntoParams)]
#[into_params(names("code"), parameter_in = Path)]
pub struct InvitePath(
    /// The code its creator was shown (`invite_code`): ten letters and
    /// digits, any case, dashes ignored.
    #[param(example = "7k2m9q4xtv", max_length = 32)]
    pub String,
);

/// Join a private table through its invitation.
///
/// Wrong codes are throttled per account and per address like failed
/// log-ins (429 without checking the code). A player already seated there
/// gets the table back.
#[utoipa::path(
    tag = "tables",
    params(InvitePath),
    request_body(content = SeatRequest, description = "May be left out: the caller's `client_seed`"),
    responses(
        (status = 200, description = "Seated; the table's summary", body = TableSummary,
            headers(("Location" = String, description = "The table's URL"),
                    ("ETag" = String, description = "`\"<version>\"`"))),
        (status = 403, description = "`seat_reserved` (a rematch's seats are kept for the players of the game before it)", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "`invitation_not_found`: no table has this code (or it was renewed)", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "`table_full`, `table_not_waiting` or `version_conflict`", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "`invalid_body`: a `client_seed` that is not 1 to 64 ASCII characters from `!` to `~`", body = Problem, content_type = "application/problem+json"),
        JsonBody,
        TooManyRequests,
        Authenticated,
    )
)]
#[post("/invites/{code}")]
#[tracing::instrument(skip_all)]
pub async fn join_invited(
    tables: web::Data<TableService>,
    guesses: web::Data<InviteThrottle>,
    user: AuthUser,
    ClientAddress(address): ClientAddress,
    path: web::Path<InvitePath>,
    OptionalBody(body): OptionalBody<SeatRequest>,
) -> Result<HttpResponse, ApiError> {
    let caller = user.account.id;
    let key = caller.to_string();
    let InviteThrottle(throttle) = guesses.get_ref();
    if let Err(wait) = throttle.check(&key, address) {
        tracing::warn!(?address, account_id = %caller, "invitation guesses throttled");
        return Err(ApiError::too_many_requests(
            "too many wrong invitation codes from this account or address",
            wait,
        ));
    }
    let Some(id) = tables.invited_to(&path.0).await? else {
        throttle.record_failure(&key, address);
        return Err(ApiError::Problem {
            status: actix_web::http::StatusCode::NOT_FOUND,
            code: ProblemCode::InvitationNotFound,
            detail: "no table has this invitation".into(),
        });
    };
    let person = user.person().bringing(body.client_seed);
    let seated = tables.seat(id, &person).await?;
    seated_at(&tables, caller, seated).await
}

/// The creator of a private table replaces its invitation: the old code
/// stops working at once; the summary shows the new one.
#[utoipa::path(
    tag = "tables",
    params(TablePath),
    responses(
        (status = 200, description = "Renewed; the table's summary with its new `invite_code`", body = TableSummary),
        (status = 403, description = "`not_creator`", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "`not_private`: a public table has no invitation", body = Problem, content_type = "application/problem+json"),
        OnTable,
    )
)]
#[delete("/tables/{id}/invite")]
#[tracing::instrument(skip_all, fields(table_id = %call.table_id))]
pub async fn renew_invite(call: TableCall<TableService>) -> Result<HttpResponse, ApiError> {
    let (tables, id, caller) = (&call.state, call.table_id, call.user.account.id);
    let table = tables.renew_invite(id, caller).await?;
    seated_at(tables, caller, (id, table)).await
}

/// A player of a finished (or aborted) table asks for the next game: the
/// first call opens it, later calls by the other players sit them there,
/// and asking again gives the same table.
///
/// The rematch has the same rules, clock, visibility and bots, as many
/// seats as the game had, each person's seat kept for them, and the first
/// dealer the one after the game's; it starts by itself once every person
/// has joined, whenever each comes back. Opening it appends
/// `rematch_offered` to this table and counts against
/// `HUIT_TABLES_PER_MINUTE`.
#[utoipa::path(
    tag = "tables",
    params(TablePath),
    request_body(content = SeatRequest, description = "May be left out: the caller's `client_seed` for the rematch"),
    responses(
        (status = 200, description = "The rematch's summary", body = TableSummary,
            headers(("Location" = String, description = "The rematch's URL"),
                    ("ETag" = String, description = "`\"<version>\"`"))),
        (status = 403, description = "`not_seated`: only the persons of the game ask for its rematch", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "`game_not_over`, or `version_conflict` when other writers kept winning", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "`invalid_body`: a `client_seed` that is not 1 to 64 ASCII characters from `!` to `~`", body = Problem, content_type = "application/problem+json"),
        JsonBody,
        TooManyRequests,
        OnTable,
    )
)]
#[post("/tables/{id}/rematch")]
#[tracing::instrument(skip_all, fields(table_id = %call.table_id))]
pub async fn rematch(
    call: TableCall<TableService>,
    rates: web::Data<Rates>,
    OptionalBody(body): OptionalBody<SeatRequest>,
) -> Result<HttpResponse, ApiError> {
    let tables = &call.state;
    let person = call.user.person().bringing(body.client_seed);
    let caller = person.id;
    let seated = tables.rematch(&rates, call.table_id, person).await?;
    seated_at(tables, caller, seated).await
}
