//! The lobby: the rule sets, opening, listing and reading tables, joining,
//! leaving and starting one.

use actix_web::dev::Payload;
use actix_web::http::header;
use actix_web::{delete, get, post, web, FromRequest, HttpRequest, HttpResponse};
use domain::{PlayerId, Preset, TableCommand};
use futures_util::future::LocalBoxFuture;
use uuid::Uuid;

use super::dto::{
    BotRequest, ListQuery, NewTable, RulesetDto, TablePage, TablePath, TableSummary, TableView,
};
use super::headers::etag;
use crate::auth::AuthUser;
use crate::error::{ApiError, Problem};
use crate::rates::Rates;
use crate::routes::problems::{Authenticated, JsonBody, OnTable, TooManyRequests};
use crate::table_service::{player_id, Loaded, Opening, TableService};

/// The preset rule sets and every knob of each (no authentication needed).
#[utoipa::path(
    tag = "tables",
    security(()),
    responses(
        (status = 200, description = "The five presets of docs/RULES.md §5", body = Vec<RulesetDto>),
        (status = 500, description = "`internal_error`", body = Problem, content_type = "application/problem+json"),
    )
)]
#[get("/rulesets")]
#[tracing::instrument(skip_all)]
pub async fn list_rulesets() -> Result<HttpResponse, ApiError> {
    let presets: Vec<RulesetDto> = Preset::ALL
        .into_iter()
        .map(|p| RulesetDto {
            id: p.id().into(),
            name: p.name().into(),
            description: p.description().into(),
            rules: p.rules(),
        })
        .collect();
    Ok(HttpResponse::Ok().json(presets))
}

/// Open a table; the caller sits at seat 0.
///
/// At most `HUIT_TABLES_PER_MINUTE` tables per account per minute (429
/// `too_many_requests` beyond).
#[utoipa::path(
    tag = "tables",
    request_body = NewTable,
    responses(
        (status = 201, description = "The table is open", body = TableSummary,
            headers(("Location" = String, description = "The table's URL"))),
        JsonBody,
        (status = 409, description = "`table_full`: more bots than free seats", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "`invalid_rules` (unknown preset, bad option, seats out of the rules' bounds; `detail` says why), `invalid_clock` (a clock out of range), `invalid_bot` (no such bot level) or `invalid_body`", body = Problem, content_type = "application/problem+json"),
        TooManyRequests,
        Authenticated,
    )
)]
#[post("/tables")]
#[tracing::instrument(skip_all, fields(ruleset = %body.ruleset))]
pub async fn create_table(
    tables: web::Data<TableService>,
    user: AuthUser,
    rates: web::Data<Rates>,
    body: web::Json<NewTable>,
) -> Result<HttpResponse, ApiError> {
    let NewTable {
        ruleset,
        options,
        seats,
        clock,
        bots,
    } = body.into_inner();
    let bots = bots
        .iter()
        .map(BotRequest::level)
        .collect::<Result<Vec<_>, _>>()?;
    let (id, loaded) = tables
        .create(
            &rates,
            user.account.id,
            &user.account.username,
            Opening {
                ruleset: &ruleset,
                options: &options.unwrap_or_default(),
                seats: seats as usize,
                clock,
                bots: &bots,
            },
        )
        .await?;
    let summary = TableSummary::of(id, &loaded);
    Ok(HttpResponse::Created()
        .insert_header((header::LOCATION, format!("/v1/tables/{id}")))
        .insert_header(etag(summary.table.version))
        .json(summary))
}

/// List tables, oldest first, by cursor.
#[utoipa::path(
    tag = "tables",
    params(ListQuery),
    responses(
        (status = 200, description = "A page of tables", body = TablePage),
        (status = 400, description = "`invalid_query`: unknown status, bad cursor, limit not in 1..=100", body = Problem, content_type = "application/problem+json"),
        Authenticated,
    )
)]
#[get("/tables")]
pub async fn list_tables(
    tables: web::Data<TableService>,
    user: AuthUser,
    query: web::Query<ListQuery>,
) -> Result<HttpResponse, ApiError> {
    let ListQuery {
        status,
        mine,
        after,
        limit,
    } = query.into_inner();
    let limit = limit.unwrap_or(20);
    if !(1..=100).contains(&limit) {
        return Err(ApiError::InvalidQuery("limit: from 1 to 100".into()));
    }
    let after = after.as_deref().map(ListQuery::cursor).transpose()?;
    let member = mine.unwrap_or(false).then_some(user.account.id);
    let rows = tables.list(status, member, after, limit + 1).await?;
    Ok(HttpResponse::Ok().json(TablePage::of(rows, limit as usize)))
}

/// A table's public summary.
#[utoipa::path(
    tag = "tables",
    params(TablePath),
    responses(
        (status = 200, description = "The summary", body = TableSummary,
            headers(("ETag" = String, description = "`\"<version>\"`"))),
        OnTable,
    )
)]
#[get("/tables/{id}")]
pub async fn get_table(
    tables: web::Data<TableService>,
    _user: AuthUser,
    path: TablePath,
) -> Result<HttpResponse, ApiError> {
    let id = path.0;
    let summary = tables.read(id, 0, |l| TableSummary::of(id, l)).await?;
    Ok(HttpResponse::Ok()
        .insert_header(etag(summary.table.version))
        .json(summary))
}

/// A lobby command on the table of the path, by the caller: the table's
/// summary after it, with its ETag.
#[derive(Debug)]
pub struct LobbyCall {
    tables: web::Data<TableService>,
    user: AuthUser,
    table_id: Uuid,
}

impl FromRequest for LobbyCall {
    type Error = actix_web::Error;
    type Future = LocalBoxFuture<'static, Result<Self, actix_web::Error>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let parts = <(web::Data<TableService>, AuthUser, TablePath)>::from_request(req, payload);
        Box::pin(async move {
            let (tables, user, path) = parts.await?;
            Ok(Self {
                tables,
                user,
                table_id: path.0,
            })
        })
    }
}

impl LobbyCall {
    /// The caller's `command`, answered with the table's summary.
    pub(super) async fn run(
        self,
        command: impl FnOnce(PlayerId, &str) -> TableCommand,
    ) -> Result<HttpResponse, ApiError> {
        let id = self.table_id;
        let username = self.user.account.username.clone();
        self.run_with(
            |account_id| command(account_id, &username),
            |l| {
                let summary = TableSummary::of(id, l);
                (summary.table.version, summary)
            },
        )
        .await
    }

    /// The caller's `command`, answered by `answer` (the version of the
    /// table it shows, for the ETag, and the answer).
    pub(super) async fn run_with<R: serde::Serialize>(
        self,
        command: impl FnOnce(PlayerId) -> TableCommand,
        answer: impl Fn(&Loaded) -> (i64, R),
    ) -> Result<HttpResponse, ApiError> {
        let command = command(player_id(self.user.account.id));
        let acted = self
            .tables
            .act(self.table_id, &command, None, None, |l, _, _| Ok(answer(l)))
            .await?;
        let (version, answer) = acted.answer;
        Ok(HttpResponse::Ok().insert_header(etag(version)).json(answer))
    }

    /// The caller's `command`, answered with the caller's view.
    pub(super) async fn run_for_view(
        self,
        command: impl FnOnce(PlayerId) -> TableCommand,
    ) -> Result<HttpResponse, ApiError> {
        let (account_id, table_id) = (self.user.account.id, self.table_id);
        self.run_with(command, move |l| {
            (l.version(), TableView::of(table_id, l, account_id))
        })
        .await
    }
}

/// Join a table that has not started: take the next free seat.
#[utoipa::path(
    tag = "tables",
    params(TablePath),
    responses(
        (status = 200, description = "Seated; the table's summary", body = TableSummary),
        (status = 409, description = "`table_full`, `already_seated`, `table_not_waiting`, or `version_conflict` when other writers kept winning", body = Problem, content_type = "application/problem+json"),
        OnTable,
    )
)]
#[post("/tables/{id}/players")]
pub async fn join_table(call: LobbyCall) -> Result<HttpResponse, ApiError> {
    call.run(|account_id, username| TableCommand::Join {
        account_id,
        username: username.to_owned(),
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
pub async fn leave_table(call: LobbyCall) -> Result<HttpResponse, ApiError> {
    call.run(|account_id, _| TableCommand::Leave { account_id })
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
        (status = 409, description = "`not_enough_players`, `table_not_waiting` or `version_conflict`", body = Problem, content_type = "application/problem+json"),
        OnTable,
    )
)]
#[post("/tables/{id}/start")]
pub async fn start_table(call: LobbyCall) -> Result<HttpResponse, ApiError> {
    call.run(|account_id, _| TableCommand::Start { account_id })
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
        OnTable,
    )
)]
#[post("/tables/{id}/bots")]
pub async fn seat_bot(
    call: LobbyCall,
    body: web::Json<BotRequest>,
) -> Result<HttpResponse, ApiError> {
    let level = body.level()?;
    call.run(|account_id, _| TableCommand::SeatBot { account_id, level })
        .await
}
