//! Players' profiles and the leaderboards (docs/API.md "Finding a game and
//! coming back": statistics and ratings): public, no token, limited per
//! client address (`HUIT_PUBLIC_READS_PER_MINUTE`).

use actix_web::{get, web, HttpResponse};
use chrono::{DateTime, Utc};
use domain::{Preset, Rating, Stats};
use serde::{Deserialize, Serialize};
use sqlx::PgPool;
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use crate::auth::ClientAddress;
use crate::error::{ApiError, Problem};
use crate::rates::Rates;
use crate::routes::shared::{page_limit, Username};
use store::ratings::{RecentResult, StandingRow};

/// How many of a player's last rated games their profile shows.
const RECENT_GAMES: i64 = 20;

/// A player's standing in one ruleset.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({"ruleset": "classique", "games": 12, "wins": 5,
    "average_place": 1.58, "points": 1840, "rating": 27.31, "rating_deviation": 5.12,
    "provisional": false}))]
pub struct PlayerStats {
    pub ruleset: String,
    /// Rated games played (finished games between people).
    pub games: i64,
    pub wins: i64,
    /// 1 is always first.
    pub average_place: f64,
    /// The sum of their final totals.
    pub points: i64,
    /// Weng-Lin's μ.
    pub rating: f64,
    /// Weng-Lin's σ: how unsure the rating still is.
    pub rating_deviation: f64,
    /// While `rating_deviation` > 6: not on the leaderboard yet.
    pub provisional: bool,
}

impl From<StandingRow> for PlayerStats {
    fn from(s: StandingRow) -> Self {
        let rating = Rating {
            mu: s.mu,
            sigma: s.sigma,
        };
        let stats = Stats {
            games: s.games as u64,
            places: s.places as u64,
            ..Stats::default()
        };
        Self {
            ruleset: s.ruleset,
            games: s.games,
            wins: s.wins,
            average_place: stats.average_place().unwrap_or(0.0),
            points: s.points,
            rating: s.mu,
            rating_deviation: s.sigma,
            provisional: rating.provisional(),
        }
    }
}

/// One of a player's last rated games.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({"table_id": "3f6c1b9e-2a4d-4e8f-9b1c-5d7e0a2f4c68",
    "ruleset": "classique", "ended_at": "2025-01-31T18:04:05.123456Z", "place": 1,
    "total": 12, "won": true, "rating_before": 25.0, "rating_after": 27.64}))]
pub struct RecentGame {
    /// The table, for its replay; null for a private table, which nobody
    /// outside it is told of.
    pub table_id: Option<Uuid>,
    pub ruleset: String,
    pub ended_at: DateTime<Utc>,
    pub place: i32,
    /// Their final total.
    pub total: i32,
    pub won: bool,
    pub rating_before: f64,
    pub rating_after: f64,
}

impl From<RecentResult> for RecentGame {
    fn from(r: RecentResult) -> Self {
        Self {
            table_id: r.table_id,
            ruleset: r.ruleset,
            ended_at: r.ended_at,
            place: r.place,
            total: r.total,
            won: r.won,
            rating_before: r.mu_before,
            rating_after: r.mu_after,
        }
    }
}

/// A player's profile.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({"username": "alice",
    "stats": [{"ruleset": "classique", "games": 12, "wins": 5, "average_place": 1.58,
        "points": 1840, "rating": 27.31, "rating_deviation": 5.12, "provisional": false}],
    "recent": [{"table_id": "3f6c1b9e-2a4d-4e8f-9b1c-5d7e0a2f4c68", "ruleset": "classique",
        "ended_at": "2025-01-31T18:04:05.123456Z", "place": 1, "total": 12, "won": true,
        "rating_before": 26.9, "rating_after": 27.31}]}))]
pub struct PlayerProfile {
    pub username: String,
    /// One per ruleset they played a rated game of, by ruleset name.
    pub stats: Vec<PlayerStats>,
    /// Their last rated games, newest first (at most 20).
    pub recent: Vec<RecentGame>,
}

/// `GET /v1/players/{username}`'s path.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(names("username"), parameter_in = Path)]
pub struct PlayerPath(
    /// Whatever its case.
    pub String,
);

/// A player's statistics and ratings per ruleset, from their finished games
/// between people (a game with a bot seat, or aborted, does not count),
/// and their last rated games. Public.
#[utoipa::path(
    tag = "players",
    security(()),
    params(PlayerPath),
    responses(
        (status = 200, description = "The player's profile", body = PlayerProfile),
        (status = 404, description = "`not_found`: no player of that name", body = Problem, content_type = "application/problem+json"),
        (status = 429, description = "`too_many_requests`: too many public reads from this address (`Retry-After`)", body = Problem, content_type = "application/problem+json"),
    )
)]
#[get("/players/{username}")]
pub async fn player_profile(
    pool: web::Data<PgPool>,
    rates: web::Data<Rates>,
    ClientAddress(address): ClientAddress,
    path: web::Path<PlayerPath>,
) -> Result<HttpResponse, ApiError> {
    rates.public_read(address)?;
    let no_player = || ApiError::NotFound("no player of that name".into());
    let name = Username::parse(&path.0).map_err(|_| no_player())?;
    let account = store::accounts::find_by_username(pool.get_ref(), &name.key())
        .await?
        .ok_or_else(no_player)?;
    let stats = store::ratings::standings_of(pool.get_ref(), account.id).await?;
    let recent = store::ratings::recent_results(pool.get_ref(), account.id, RECENT_GAMES).await?;
    Ok(HttpResponse::Ok().json(PlayerProfile {
        username: account.username,
        stats: stats.into_iter().map(PlayerStats::from).collect(),
        recent: recent.into_iter().map(RecentGame::from).collect(),
    }))
}

/// `GET /v1/leaderboards/{ruleset}`'s path.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(names("ruleset"), parameter_in = Path)]
pub struct BoardPath(
    /// A ruleset's id (`GET /v1/rulesets`).
    pub String,
);

/// `GET /v1/leaderboards/{ruleset}`'s query.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct BoardQuery {
    /// The `next` of the previous page.
    #[param(pattern = r"^[0-9]{1,9}\.[0-9a-f]{16}\.[0-9a-f]{32}$")]
    pub after: Option<String>,
    /// 1 to 100 (default 20).
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<i64>,
}

/// One place on a leaderboard.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({"rank": 1, "username": "alice", "rating": 31.4,
    "rating_deviation": 3.2, "games": 58, "wins": 31}))]
pub struct BoardEntry {
    /// 1 is the best.
    pub rank: i64,
    pub username: String,
    pub rating: f64,
    pub rating_deviation: f64,
    pub games: i64,
    pub wins: i64,
}

/// A page of a leaderboard.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({"ruleset": "classique",
    "players": [{"rank": 1, "username": "alice", "rating": 31.4, "rating_deviation": 3.2,
        "games": 58, "wins": 31}],
    "next": "1.403f666666666666.0b5c9e045f5e4a439f1e0c2b8d1c7a10"}))]
pub struct Leaderboard {
    pub ruleset: String,
    /// Best first: the highest rating (equal ones: the greater account id
    /// first).
    pub players: Vec<BoardEntry>,
    /// Pass as `after` for the next page; null: no more.
    #[schema(required = true)]
    pub next: Option<String>,
}

/// A leaderboard's cursor: the rank, rating (its IEEE 754 bits) and
/// account of a page's last entry.
struct BoardCursor {
    rank: i64,
    mu: f64,
    account_id: Uuid,
}

impl BoardCursor {
    fn parse(raw: &str) -> Result<Self, ApiError> {
        let bad = || ApiError::InvalidQuery(format!("after: not a cursor of this list: {raw:?}"));
        let mut parts = raw.split('.');
        let (Some(rank), Some(mu), Some(id), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(bad());
        };
        let rank = rank
            .parse::<i64>()
            .ok()
            .filter(|r| (0..1_000_000_000).contains(r));
        let mu = (mu.len() == 16)
            .then(|| u64::from_str_radix(mu, 16).ok())
            .flatten()
            .map(f64::from_bits)
            .filter(|mu| mu.is_finite());
        match (rank, mu, id.parse::<Uuid>()) {
            (Some(rank), Some(mu), Ok(account_id)) if id.len() == 32 => Ok(Self {
                rank,
                mu,
                account_id,
            }),
            _ => Err(bad()),
        }
    }

    fn to_text(&self) -> String {
        format!(
            "{}.{:016x}.{}",
            self.rank,
            self.mu.to_bits(),
            self.account_id.simple()
        )
    }
}

/// A ruleset's leaderboard: its players with an established rating
/// (`rating_deviation` ≤ 6), best first, by pages. Public.
#[utoipa::path(
    tag = "players",
    security(()),
    params(BoardPath, BoardQuery),
    responses(
        (status = 200, description = "A page of the leaderboard", body = Leaderboard),
        (status = 400, description = "`invalid_query`: a bad cursor, `limit` not in 1..=100", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "`not_found`: no such ruleset", body = Problem, content_type = "application/problem+json"),
        (status = 429, description = "`too_many_requests`: too many public reads from this address (`Retry-After`)", body = Problem, content_type = "application/problem+json"),
    )
)]
#[get("/leaderboards/{ruleset}")]
pub async fn leaderboard(
    pool: web::Data<PgPool>,
    rates: web::Data<Rates>,
    ClientAddress(address): ClientAddress,
    path: web::Path<BoardPath>,
    query: web::Query<BoardQuery>,
) -> Result<HttpResponse, ApiError> {
    rates.public_read(address)?;
    let ruleset = Preset::from_id(&path.0)
        .map_err(|_| ApiError::NotFound("no such ruleset".into()))?
        .id();
    let limit = page_limit(query.limit)?;
    let after = query.after.as_deref().map(BoardCursor::parse).transpose()?;
    let first_rank = after.as_ref().map_or(1, |c| c.rank + 1);
    let rows = store::ratings::board(
        pool.get_ref(),
        ruleset,
        after.map(|c| (c.mu, c.account_id)),
        limit,
    )
    .await?;
    let next = (rows.len() as i64 == limit)
        .then(|| rows.last())
        .flatten()
        .map(|last| {
            BoardCursor {
                rank: first_rank + limit - 1,
                mu: last.mu,
                account_id: last.account_id,
            }
            .to_text()
        });
    let players = rows
        .into_iter()
        .zip(first_rank..)
        .map(|(r, rank)| BoardEntry {
            rank,
            username: r.username,
            rating: r.mu,
            rating_deviation: r.sigma,
            games: r.games,
            wins: r.wins,
        })
        .collect();
    Ok(HttpResponse::Ok().json(Leaderboard {
        ruleset: ruleset.to_owned(),
        players,
        next,
    }))
}
