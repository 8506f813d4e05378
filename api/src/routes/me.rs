//! The caller: their account, and their tables.

use actix_web::{get, web, HttpResponse};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::auth::AuthUser;
use crate::error::{ApiError, Problem};
use crate::routes::problems::Authenticated;
use crate::routes::shared::{cursor_after, page_limit, AccountDto, ListQuery};
use crate::routes::tables::dto::{table_summary_example, TableSummary};
use crate::table_service::TableService;

/// The caller's account.
#[utoipa::path(
    tag = "accounts",
    responses(
        (status = 200, description = "The caller's account", body = AccountDto),
        Authenticated,
    )
)]
#[get("/me")]
pub async fn get_me(user: AuthUser) -> Result<HttpResponse, ApiError> {
    Ok(HttpResponse::Ok().json(AccountDto::from(user.account)))
}

/// Which of the caller's tables `GET /v1/me/tables` lists.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct MyTablesQuery {
    /// `mine`: only the tables that wait for the caller (the seat on turn
    /// is theirs, and the server does not play it), soonest deadline
    /// first, those without a clock last; absent: every table the caller
    /// sits at that is not over, oldest first.
    #[param(value_type = Option<String>, pattern = "^mine$")]
    pub turn: Option<TurnFilter>,
    /// The `next` of the previous page.
    #[param(pattern = r"^-?[0-9]{1,16}\.[0-9a-fA-F]{32}$")]
    pub after: Option<String>,
    /// 1 to 100 (default 20).
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<i64>,
}

/// `turn=mine`.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TurnFilter {
    Mine,
}

/// The example of [`MyTables`].
fn my_tables_example() -> serde_json::Value {
    serde_json::json!({"tables": [table_summary_example()], "my_turn": 1, "next": null})
}

/// A page of the caller's tables.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = my_tables_example)]
pub struct MyTables {
    /// Their summaries, as the caller is shown them (each with its clock's
    /// `deadline`).
    pub tables: Vec<TableSummary>,
    /// How many tables wait for the caller, in all (an app's badge).
    pub my_turn: i64,
    /// Pass as `after` for the next page; null: no more.
    #[schema(required = true)]
    pub next: Option<String>,
}

/// The caller's tables: those that wait for them (`turn=mine`), soonest
/// deadline first, or every one they sit at that is not over; with how
/// many wait for them. Chosen by an index, whatever the number of tables.
#[utoipa::path(
    tag = "tables",
    params(MyTablesQuery),
    responses(
        (status = 200, description = "A page of the caller's tables", body = MyTables),
        (status = 400, description = "`invalid_query`: `turn` other than `mine`, a bad cursor, `limit` not in 1..=100", body = Problem, content_type = "application/problem+json"),
        Authenticated,
    )
)]
#[get("/me/tables")]
pub async fn my_tables(
    tables: web::Data<TableService>,
    user: AuthUser,
    query: web::Query<MyTablesQuery>,
) -> Result<HttpResponse, ApiError> {
    let MyTablesQuery { turn, after, limit } = query.into_inner();
    let limit = page_limit(limit)?;
    let after = after.as_deref().map(ListQuery::cursor).transpose()?;
    let caller = user.account.id;
    let mine = tables.mine(caller, turn.is_some(), after, limit).await?;
    let mut summaries = Vec::with_capacity(mine.tables.len());
    for (id, table) in &mine.tables {
        summaries.push(
            TableSummary::of(*id, table)
                .shown_to(&tables, caller)
                .await?,
        );
    }
    Ok(HttpResponse::Ok().json(MyTables {
        tables: summaries,
        my_turn: mine.my_turn,
        next: mine.next.map(|(key, id)| cursor_after(key, id)),
    }))
}
