//! The table commands a seat's player sends without a card: joining,
//! leaving and starting a table, seating a bot, and keeping a running game
//! moving (docs/RULES.md D39-D41: resigning, aborting, coming back to an
//! away seat). The server's side of D37-D42 (timeouts, the moves it makes
//! for a seat) is [`crate::deadlines`].
//!
//! Each route is the same thing with other words: run one `TableCommand`
//! for the caller, answer with the table's summary or the caller's view.
//! `table_command!` writes that once, with the route's document.

// The unit structs that actix and utoipa write for each route have no
// `Debug`; written from a local macro, the lint sees them as ours.
#![allow(missing_debug_implementations)]

use actix_web::{delete, post, web, HttpResponse};
use domain::{PlayerId, TableCommand};
use uuid::Uuid;

use super::dto::{BotRequest, TableCall, TablePath, TableSummary, TableView};
use super::headers::etag;
use crate::error::{ApiError, Problem};
use crate::routes::problems::{JsonBody, OnTable, TooManyBots};
use crate::table_service::{player_id, CachedTable, TableService};

/// What a command answers with: the table's summary (lobby commands) or the
/// caller's view (commands on a running game), and the version it shows,
/// for the ETag.
pub(super) trait Answer: serde::Serialize {
    fn after(table_id: Uuid, loaded: &CachedTable, account_id: Uuid) -> (i64, Self);
}

impl Answer for TableSummary {
    fn after(table_id: Uuid, loaded: &CachedTable, _: Uuid) -> (i64, Self) {
        let summary = TableSummary::of(table_id, loaded);
        (summary.table.version, summary)
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
        command: impl FnOnce(PlayerId, &str) -> Result<TableCommand, ApiError>,
    ) -> Result<HttpResponse, ApiError> {
        let (account_id, table_id) = (self.user.account.id, self.table_id);
        let command = command(player_id(account_id), &self.user.account.username)?;
        let acted = self
            .state
            .act(table_id, &command, None, None, |l, _, _| {
                Ok(A::after(table_id, l, account_id))
            })
            .await?;
        let (version, answer) = acted.answer;
        Ok(HttpResponse::Ok().insert_header(etag(version)).json(answer))
    }
}

/// A command route: its `#[utoipa::path]` (200 with `$answer`, the problems
/// listed, those named after `also`, and those of any table route) and its
/// handler, which reads the JSON body named after `body`, if any, and runs
/// the command (which may refuse with `?`).
macro_rules! table_command {
    (
        $(#[$doc:meta])*
        $method:ident $path:literal, $name:ident -> $answer:ident $ok:literal;
        $($status:literal $why:literal),+; $(also $($also:ident),+;)?
        $(body $bind:ident: $body:ty;)?
        |$account:pat_param, $username:pat_param| $command:expr
    ) => {
        $(#[$doc])*
        #[utoipa::path(
            tag = "tables",
            params(TablePath),
            $(request_body = $body,)?
            responses(
                (status = 200, description = $ok, body = $answer),
                $((status = $status, description = $why, body = Problem,
                    content_type = "application/problem+json"),)+
                $($($also,)+)?
                OnTable,
            )
        )]
        #[$method($path)]
        pub async fn $name(
            call: TableCall<TableService>,
            $($bind: web::Json<$body>,)?
        ) -> Result<HttpResponse, ApiError> {
            call.answer::<$answer>(|$account, $username| Ok($command)).await
        }
    };
}

table_command! {
    /// Join a table that has not started: take the next free seat.
    post "/tables/{id}/players", join_table -> TableSummary "Seated; the table's summary";
    409 "`table_full`, `already_seated`, `table_not_waiting`, or `version_conflict` when other writers kept winning";
    |account_id, username| TableCommand::Join { account_id, username: username.to_owned() }
}

table_command! {
    /// Leave a table that has not started.
    delete "/tables/{id}/players/me", leave_table -> TableSummary "The seat is free; the table's summary";
    403 "`not_seated`", 409 "`table_not_waiting` (the game has started) or `version_conflict`";
    |account_id, _| TableCommand::Leave { account_id }
}

table_command! {
    /// The creator starts the game: the seats are renumbered 0..n-1 in seat
    /// order and round 1 is dealt.
    post "/tables/{id}/start", start_table -> TableSummary "Started; the table's summary";
    403 "`not_creator`",
    409 "`no_person_seated` (bots alone never play), `not_enough_players`, `table_not_waiting` or `version_conflict`";
    also TooManyBots;
    |account_id, _| TableCommand::Start { account_id }
}

table_command! {
    /// Resign the running game: a bot plays your seat to its end (D40), which
    /// comes at once when fewer than two players are left unresigned. Your view
    /// after it.
    post "/tables/{id}/resign", resign -> TableView "Resigned; the caller's view";
    403 "`not_seated`", 409 "`already_resigned`, `game_not_started`, `game_over`, `game_aborted` or `version_conflict`";
    |account_id, _| TableCommand::Resign { account_id }
}

table_command! {
    /// Abort the running game, which any player who has not resigned may
    /// until every person seated has had a turn (a turn that timed out
    /// counts) or the first round is over (D41): the table ends `aborted`,
    /// with no ranking.
    post "/tables/{id}/abort", abort -> TableSummary "Aborted; the table's summary";
    403 "`not_seated`",
    409 "`abort_too_late` (every person has had a turn, or the first round is over), `already_resigned`, `game_not_started`, `game_over`, `game_aborted` or `version_conflict`";
    |account_id, _| TableCommand::Abort { account_id }
}

table_command! {
    /// Take your seat back after it was marked away (D39): your own moves
    /// again, instead of the server's. Your view after it.
    post "/tables/{id}/seats/me/back", come_back -> TableView "Back; the caller's view";
    403 "`not_seated`", 409 "`not_away`, `already_resigned`, `game_not_started`, `game_over`, `game_aborted` or `version_conflict`";
    |account_id, _| TableCommand::Back { account_id }
}

table_command! {
    /// The creator seats a bot at the next free seat while the table waits
    /// (docs/RULES.md D42).
    post "/tables/{id}/bots", seat_bot -> TableSummary "The bot sits; the table's summary";
    403 "`not_creator`", 409 "`table_full`, `table_not_waiting` or `version_conflict`",
    422 "`invalid_bot` (no such level) or `invalid_body`"; also JsonBody, TooManyBots;
    body bot: BotRequest;
    |account_id, _| TableCommand::SeatBot { account_id, level: bot.level()? }
}
