//! Keeping a table moving, the players' side (docs/RULES.md D39-D41):
//! resigning, aborting, and coming back to an away seat. The server's side
//! (timeouts, the moves it makes for a seat) is [`crate::deadlines`].

use actix_web::{post, HttpResponse};
use domain::TableCommand;

use super::dto::{TablePath, TableSummary, TableView};
use super::lobby::LobbyCall;
use crate::error::{ApiError, Problem};
use crate::routes::problems::OnTable;

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
pub async fn resign(call: LobbyCall) -> Result<HttpResponse, ApiError> {
    call.run_for_view(|account_id| TableCommand::Resign { account_id })
        .await
}

/// Abort the running game, which any player may until every player has made
/// a move of their own (D41): the table ends `aborted`, with no ranking.
#[utoipa::path(
    tag = "tables",
    params(TablePath),
    responses(
        (status = 200, description = "Aborted; the table's summary", body = TableSummary),
        (status = 403, description = "`not_seated`", body = Problem, content_type = "application/problem+json"),
        (status = 409, description = "`abort_too_late` (every player has moved), `game_not_started`, `game_over`, `game_aborted` or `version_conflict`", body = Problem, content_type = "application/problem+json"),
        OnTable,
    )
)]
#[post("/tables/{id}/abort")]
pub async fn abort(call: LobbyCall) -> Result<HttpResponse, ApiError> {
    call.run(|account_id, _| TableCommand::Abort { account_id })
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
pub async fn come_back(call: LobbyCall) -> Result<HttpResponse, ApiError> {
    call.run_for_view(|account_id| TableCommand::Back { account_id })
        .await
}
