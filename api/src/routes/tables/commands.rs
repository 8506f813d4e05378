//! The table commands a seat's player sends without a card: joining,
//! leaving and starting a table, seating a bot, and keeping a running game
//! moving (docs/RULES.md D39-D41: resigning, aborting, coming back to an
//! away seat). The server's side of D37-D42 (timeouts, the moves it makes
//! for a seat) is [`crate::deadlines`].
//!
//! Each handler runs one `TableCommand` for the caller and answers with
//! the table's summary or the caller's view, through
//! `TableCall::answer`; each is a plain function, found by its name.

// The unit structs that actix and utoipa write for each route have no
// `Debug`; written from a local macro, the lint sees them as ours.
#![allow(missing_debug_implementations)]

use actix_web::{delete, post, web, HttpResponse};
use domain::{Joining, PlayerId, TableCommand};
use uuid::Uuid;

use super::dto::{BotRequest, SeatRequest, TableSummary, TableView};
use super::headers::etag;
use crate::dealer;
use crate::error::{ApiError, Problem};
use crate::routes::problems::{JsonBody, OnTable, TooManyBots};
use crate::routes::shared::{OptionalBody, TableCall, TablePath};
use crate::table_service::{player_id, CachedTable, TableService};

/// What a command answers with: the table's summary (lobby commands) or the
/// caller's view (commands on a running game), and the version it shows,
/// for the ETag.
pub(super) trait Answer: serde::Serialize + Sized {
    fn after(table_id: Uuid, loaded: &CachedTable, account_id: Uuid) -> (i64, Self);

    /// What the caller alone is shown besides (see
    /// [`TableSummary::shown_to`]).
    async fn shown_to(self, _: &TableService, _: Uuid) -> Result<Self, ApiError> {
        Ok(self)
    }
}

impl Answer for TableSummary {
    fn after(table_id: Uuid, loaded: &CachedTable, _: Uuid) -> (i64, Self) {
        let summary = TableSummary::of(table_id, loaded);
        (summary.table.version, summary)
    }

    async fn shown_to(self, tables: &TableService, caller: Uuid) -> Result<Self, ApiError> {
        TableSummary::shown_to(self, tables, caller).await
    }
}

impl Answer for TableView {
    fn after(table_id: Uuid, loaded: &CachedTable, account_id: Uuid) -> (i64, Self) {
        (
            loaded.version(),
            TableView::of(table_id, loaded, account_id),
        )
    }
}

impl TableCall<TableService> {
    /// Runs `command` (given the caller's id and name) and answers with `A`
    /// after it, with its ETag.
    pub(super) async fn answer<A: Answer>(
        self,
        command: impl FnOnce(PlayerId) -> Result<TableCommand, ApiError>,
    ) -> Result<HttpResponse, ApiError> {
        let (account_id, table_id) = (self.user.account.id, self.table_id);
        let command = command(player_id(account_id))?;
        let acted = self
            .state
            .act(table_id, &command, None, None, |l, _, _| {
                Ok(A::after(table_id, l, account_id))
            })
            .await?;
        let (version, answer) = acted.answer;
        let answer = answer.shown_to(&self.state, account_id).await?;
        Ok(HttpResponse::Ok().insert_header(etag(version)).json(answer))
    }
}

/// Join a public table that has not started: take the next free seat (a
/// private table is joined through its invitation, a rematch by its
/// players, `POST /v1/tables/{id}/rematch`).
#[utoipa::path(
    tag = "tables",
    params(TablePath),
    request_body(content = SeatRequest, description = "May be left out: the caller's `client_seed`"),
    responses(
        (status = 200, description = "Seated; the table's summary", body = TableSummary),
        (status = 403, description = "`invitation_needed` (the creator of a private table, who left it, comes back through its invitation) or `seat_reserved` (a rematch's seats are kept for the players of the game before it)", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "`table_full`, `already_seated`, `table_not_waiting`, `table_closed` (a quick-play table closed when its last person left: ask quick play again), or `version_conflict` when other writers kept winning; a table that starts by itself starts with the join that fills it", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "`invalid_body`: a `client_seed` that is not 1 to 64 ASCII characters from `!` to `~`", body = Problem, content_type = "application/problem+json"),
        JsonBody,
        OnTable,
    )
)]
#[post("/tables/{id}/players")]
pub async fn join_table(
    call: TableCall<TableService>,
    OptionalBody(body): OptionalBody<SeatRequest>,
) -> Result<HttpResponse, ApiError> {
    let newcomer = call.user.person().bringing(body.client_seed).newcomer();
    call.answer::<TableSummary>(|account_id| {
        Ok(TableCommand::Join {
            account_id,
            joining: Joining::Open,
            guest: newcomer.guest,
            client_seed: newcomer.client_seed,
        })
    })
    .await
}

/// Leave a table that has not started.
#[utoipa::path(
    tag = "tables",
    params(TablePath),
    responses(
        (status = 200, description = "The seat is free; the table's summary", body = TableSummary),
        (status = 403, description = "`not_seated`", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "`table_not_waiting` (the game has started) or `version_conflict`", body = Problem, content_type = "application/problem+json"),
        OnTable,
    )
)]
#[delete("/tables/{id}/players/me")]
pub async fn leave_table(call: TableCall<TableService>) -> Result<HttpResponse, ApiError> {
    call.answer::<TableSummary>(|account_id| Ok(TableCommand::Leave { account_id }))
        .await
}

/// The creator starts the game: the seats are renumbered 0..n-1 in seat
/// order and round 1 is dealt.
#[utoipa::path(
    tag = "tables",
    params(TablePath),
    responses(
        (status = 200, description = "Started; the table's summary", body = TableSummary),
        (status = 403, description = "`not_creator`", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "`no_person_seated` (bots alone never play), `not_enough_players`, `table_not_waiting` or `version_conflict`", body = Problem, content_type = "application/problem+json"),
        TooManyBots,
        OnTable,
    )
)]
#[post("/tables/{id}/start")]
pub async fn start_table(call: TableCall<TableService>) -> Result<HttpResponse, ApiError> {
    call.answer::<TableSummary>(|account_id| Ok(TableCommand::Start { account_id }))
        .await
}

/// Resign the running game: a bot plays your seat to its end (D40), which
/// comes at once when fewer than two players are left unresigned. Your view
/// after it.
#[utoipa::path(
    tag = "tables",
    params(TablePath),
    responses(
        (status = 200, description = "Resigned; the caller's view", body = TableView),
        (status = 403, description = "`not_seated`", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "`already_resigned`, `game_not_started`, `game_over`, `game_aborted` or `version_conflict`", body = Problem, content_type = "application/problem+json"),
        OnTable,
    )
)]
#[post("/tables/{id}/resign")]
pub async fn resign(call: TableCall<TableService>) -> Result<HttpResponse, ApiError> {
    call.answer::<TableView>(|account_id| Ok(TableCommand::Resign { account_id }))
        .await
}

/// Abort the running game, which any player who has not resigned may
/// until every person seated has had a turn (a turn that timed out
/// counts) or the first round is over (D41): the table ends `aborted`,
/// with no ranking.
#[utoipa::path(
    tag = "tables",
    params(TablePath),
    responses(
        (status = 200, description = "Aborted; the table's summary", body = TableSummary),
        (status = 403, description = "`not_seated`", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "`abort_too_late` (every person has had a turn, or the first round is over), `already_resigned`, `game_not_started`, `game_over`, `game_aborted` or `version_conflict`", body = Problem, content_type = "application/problem+json"),
        OnTable,
    )
)]
#[post("/tables/{id}/abort")]
pub async fn abort(call: TableCall<TableService>) -> Result<HttpResponse, ApiError> {
    call.answer::<TableSummary>(|account_id| Ok(TableCommand::Abort { account_id }))
        .await
}

/// Take your seat back after it was marked away (D39): your own moves
/// again, instead of the server's. Your view after it.
#[utoipa::path(
    tag = "tables",
    params(TablePath),
    responses(
        (status = 200, description = "Back; the caller's view", body = TableView),
        (status = 403, description = "`not_seated`", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "`not_away`, `already_resigned`, `game_not_started`, `game_over`, `game_aborted` or `version_conflict`", body = Problem, content_type = "application/problem+json"),
        OnTable,
    )
)]
#[post("/tables/{id}/seats/me/back")]
pub async fn come_back(call: TableCall<TableService>) -> Result<HttpResponse, ApiError> {
    call.answer::<TableView>(|account_id| Ok(TableCommand::Back { account_id }))
        .await
}

/// The creator seats a bot at the next free seat while the table waits
/// (docs/RULES.md D42).
#[utoipa::path(
    tag = "tables",
    params(TablePath),
    request_body = BotRequest,
    responses(
        (status = 200, description = "The bot sits; the table's summary", body = TableSummary),
        (status = 403, description = "`not_creator`", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "`table_full`, `table_not_waiting` or `version_conflict`", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "`invalid_bot` (no such level) or `invalid_body`", body = Problem, content_type = "application/problem+json"),
        JsonBody,
        TooManyBots,
        OnTable,
    )
)]
#[post("/tables/{id}/bots")]
pub async fn seat_bot(
    call: TableCall<TableService>,
    bot: web::Json<BotRequest>,
) -> Result<HttpResponse, ApiError> {
    call.answer::<TableSummary>(|account_id| {
        Ok(TableCommand::SeatBot {
            account_id,
            level: bot.level()?,
            client_seed: Some(dealer::client_seed()),
        })
    })
    .await
}
