//! The lobby: the rule sets, opening, listing and reading tables (joining,
//! leaving and starting one are in `commands`).

use actix_web::http::header;
use actix_web::{get, post, web, HttpResponse};
use domain::{Lobby, Preset};

use super::dto::{BotRequest, NewTable, RulesetDto, TablePage, TableSummary};
use super::headers::etag;
use crate::auth::AuthUser;
use crate::error::{ApiError, Problem};
use crate::rates::Rates;
use crate::routes::problems::{Authenticated, JsonBody, OnTable, TablesOrBots};
use crate::routes::shared::{page_limit, ListQuery, TableCall, TablePath};
use crate::table_service::{Opening, TableService};

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
/// `too_many_requests` beyond); with bots, at most so many bots per account
/// (429 `too_many_bots`).
#[utoipa::path(
    tag = "tables",
    request_body = NewTable,
    responses(
        (status = 201, description = "The table is open", body = TableSummary,
            headers(("Location" = String, description = "The table's URL"))),
        JsonBody,
        (status = 422, description = "`invalid_rules` (unknown preset, bad option, seats out of the rules' bounds; `detail` says why), `invalid_clock` (a clock out of range), `invalid_bot` (no such bot level, or as many bots as seats: the caller takes one) or `invalid_body` (a `client_seed` that is not 1 to 64 ASCII characters from `!` to `~`, among others)", body = Problem, content_type = "application/problem+json"),
        TablesOrBots,
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
        visibility,
        client_seed,
    } = body.into_inner();
    let bots = BotRequest::levels(&bots, seats)?;
    let lobby = Lobby {
        visibility,
        ..Lobby::default()
    };
    let (id, loaded) = tables
        .create(
            &rates,
            user.person().bringing(client_seed),
            Opening {
                ruleset: &ruleset,
                options: &options.unwrap_or_default(),
                seats: seats as usize,
                clock,
                bots: &bots,
                lobby: &lobby,
            },
        )
        .await?;
    let summary = TableSummary::of(id, &loaded)
        .shown_to(&tables, user.account.id)
        .await?;
    Ok(HttpResponse::Created()
        .insert_header((header::LOCATION, format!("/v1/tables/{id}")))
        .insert_header(etag(summary.table.version))
        .json(summary))
}

/// List tables, oldest first, by cursor: the public ones, and the private
/// ones the caller created or sits at.
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
    let limit = page_limit(limit)?;
    let after = after.as_deref().map(ListQuery::cursor).transpose()?;
    let member = mine.unwrap_or(false).then_some(user.account.id);
    let rows = tables
        .list(status, member, user.account.id, after, limit + 1)
        .await?;
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
pub async fn get_table(call: TableCall<TableService>) -> Result<HttpResponse, ApiError> {
    let (tables, id) = (&call.state, call.table_id);
    let summary = tables.read(id, 0, |l| TableSummary::of(id, l)).await?;
    let summary = summary.shown_to(tables, call.user.account.id).await?;
    Ok(HttpResponse::Ok()
        .insert_header(etag(summary.table.version))
        .json(summary))
}
