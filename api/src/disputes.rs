//! Disputes (docs/API.md "Disputes, the admin console, metrics"): a player
//! of a table files one about a finished round or the finished game; an
//! admin reads it beside the table's audit and resolves it. A resolution
//! never touches the game log. What admins do is recorded
//! ([`store::disputes::record`]) in the transaction of what they did, and
//! shown with the dispute. The handlers ([`crate::routes::disputes`]) parse
//! and answer; the rules and the transactions are here.

use std::collections::BTreeMap;

use sqlx::PgPool;
use uuid::Uuid;

use crate::codes::ProblemCode;
use crate::history::{self, AuditReport, Parsed};
use crate::ratings::Rerate;
use crate::service_error::ServiceError;
use crate::table_service::{player_id, TableService};
use domain::table::TableEvent;
use domain::table::{Correction, Grounds};
use domain::TableCommand;
use store::disputes::{ActionRow, AdminAction, DisputeRow, NewDispute};

/// Open disputes a player may have at once (429 `too_many_requests` beyond).
pub const MAX_OPEN_DISPUTES: i64 = 3;
/// The longest reason or note, in characters.
pub const MAX_TEXT: usize = 2000;
/// The admin actions shown with a dispute (the latest).
const ACTIONS_SHOWN: i64 = 200;

/// A reason or a note: 1 to [`MAX_TEXT`] characters, not only spaces, and
/// no control character but tabs and line breaks (PostgreSQL's text refuses
/// NUL; the others have no place in a sentence shown to a person); `code`
/// otherwise (`invalid_dispute`, `invalid_sanction`).
pub fn text(code: ProblemCode, what: &str, s: &str) -> Result<(), ServiceError> {
    let control = s
        .chars()
        .any(|c| c.is_control() && !matches!(c, '\t' | '\n' | '\r'));
    if s.trim().is_empty() || s.chars().count() > MAX_TEXT || control {
        return Err(ServiceError::Invalid {
            code,
            detail: format!(
                "{what}: 1 to {MAX_TEXT} characters, not only spaces, no control character \
                 but tabs and line breaks"
            ),
        });
    }
    Ok(())
}

fn round_running(detail: String) -> ServiceError {
    ServiceError::Conflict {
        code: ProblemCode::RoundRunning,
        detail,
    }
}

/// Whether `account_id` may dispute `round` (none: the game) of the game
/// of `parsed`: a player of it, the round (or the game) over, however it
/// ended.
fn disputable(parsed: &Parsed, account_id: Uuid, round: Option<i32>) -> Result<(), ServiceError> {
    let table = parsed.table()?;
    if table.seat_of(&player_id(account_id)).is_none() {
        return Err(ServiceError::Forbidden {
            code: ProblemCode::NotAPlayer,
            detail: "only the players of this game may dispute its scores".into(),
        });
    }
    // A round or a game is over however it ended: played out, resigned,
    // aborted (docs/API.md "A result that is over stays over").
    let over = matches!(
        table.status(),
        domain::Status::Finished | domain::Status::Aborted
    );
    match round {
        Some(n) => match parsed.round_span(n.unsigned_abs()) {
            None => Err(ServiceError::NotFound(format!(
                "no round {n} at this table"
            ))),
            Some(span) if !span.finished => {
                Err(round_running(format!("round {n} is still being played")))
            }
            Some(_) => Ok(()),
        },
        None if !over => Err(round_running("the game is not over".into())),
        None => Ok(()),
    }
}

/// Files `dispute` about the game of `parsed` when its filer may dispute
/// that round or the game (a player of it, the round or the game over), unless the filer has
/// [`MAX_OPEN_DISPUTES`] open already (429 then).
pub async fn file(
    pool: &PgPool,
    parsed: &Parsed,
    dispute: NewDispute<'_>,
) -> Result<DisputeRow, ServiceError> {
    disputable(parsed, dispute.account_id, dispute.round)?;
    let mut tx = pool.begin().await?;
    let Some(filed) = store::disputes::file(&mut tx, dispute, MAX_OPEN_DISPUTES).await? else {
        return Err(ServiceError::Limited {
            code: ProblemCode::TooManyRequests,
            detail: format!(
                "{MAX_OPEN_DISPUTES} disputes of yours are open; file another once one is resolved"
            ),
            retry_after: std::time::Duration::from_secs(3600),
        });
    };
    tx.commit().await?;
    Ok(filed)
}

/// A dispute (404 when there is no such one).
pub async fn dispute(pool: &PgPool, id: Uuid) -> Result<DisputeRow, ServiceError> {
    store::disputes::get(pool, id)
        .await?
        .ok_or_else(|| ServiceError::NotFound("no such dispute".into()))
}

/// A dispute as an admin opens it: the table's audit (kept once the game is
/// over, see [`history::kept_audit`]) and the admin actions on its table.
#[derive(Debug)]
pub struct Opened {
    pub dispute: DisputeRow,
    pub audit: AuditReport,
    /// The latest 200, this opening's audit included.
    pub actions: Vec<ActionRow>,
}

/// An admin opens a dispute: its table's audit, recorded as an admin
/// action, and the actions on its table.
pub async fn open(pool: &PgPool, admin: Uuid, id: Uuid) -> Result<Opened, ServiceError> {
    let d = dispute(pool, id).await?;
    let audit = history::kept_audit(pool, d.table_id, false).await?;
    let (table, id) = (Some(d.table_id), Some(d.id));
    store::disputes::record(pool, admin, AdminAction::Audit, table, id).await?;
    let actions = store::disputes::actions_on(pool, d.table_id, ACTIONS_SHOWN).await?;
    Ok(Opened {
        dispute: d,
        audit,
        actions,
    })
}

/// An admin's resolution of a dispute: the verdict, the note (checked by
/// the caller with [`text`]) and, upholding it, a correction of the game's
/// result.
#[derive(Debug)]
pub struct Resolution<'a> {
    pub verdict: &'a str,
    pub note: &'a str,
    pub correction: Option<Correction>,
}

/// An admin resolves an open dispute, recorded as an admin action in the
/// same transaction; 409 `already_resolved` when it has a verdict already.
/// A correction (upheld only, 422 `invalid_correction` otherwise) is
/// appended to the table's log in that transaction too, which re-rates the
/// game and the later ones (see [`crate::ratings::record`]) and tells its
/// players: the whole, or nothing.
pub async fn resolve(
    (pool, tables): (&PgPool, &TableService),
    admin: Uuid,
    id: Uuid,
    resolution: Resolution<'_>,
) -> Result<DisputeRow, ServiceError> {
    let d = dispute(pool, id).await?;
    if resolution.correction.is_some() && resolution.verdict != "upheld" {
        return Err(ServiceError::Invalid {
            code: ProblemCode::InvalidCorrection,
            detail: "a correction comes with the verdict `upheld`".into(),
        });
    }
    let logged = resolution
        .correction
        .as_ref()
        .map(serde_json::to_value)
        .transpose()
        .map_err(ServiceError::internal)?;
    let Resolution { verdict, note, .. } = resolution;
    let mut tx = pool.begin().await?;
    if !store::disputes::resolve(&mut tx, id, admin, verdict, note, logged.as_ref()).await? {
        return Err(ServiceError::Conflict {
            code: ProblemCode::AlreadyResolved,
            detail: "this dispute has a verdict already".into(),
        });
    }
    let action = AdminAction::ResolveDispute;
    store::disputes::record(&mut *tx, admin, action, Some(d.table_id), Some(id)).await?;
    match resolution.correction {
        None => tx.commit().await?,
        Some(correction) => {
            let action = AdminAction::CorrectResult;
            store::disputes::record(&mut *tx, admin, action, Some(d.table_id), Some(id)).await?;
            let command = TableCommand::CorrectResult {
                by: player_id(admin),
                grounds: Grounds::DisputeId(id.to_string()),
                correction,
            };
            tables.correct(tx, d.table_id, &command).await?;
        }
    }
    dispute(pool, id).await
}

/// A player's rating from one game: before it and after it (the mean).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RatingMove {
    pub before: f64,
    pub after: f64,
}

/// A seat's rating from the game, as stored now and as the correction
/// would store it (none: the game is not rated so).
#[derive(Debug, Clone)]
pub struct SeatPreview {
    pub seat: i32,
    pub account_id: Uuid,
    pub now: Option<RatingMove>,
    pub corrected: Option<RatingMove>,
}

/// What a correction would make of a dispute's game, before an admin
/// applies it.
#[derive(Debug)]
pub struct Preview {
    pub corrected: domain::table::ResultCorrected,
    /// By seat, the persons rated now or once corrected.
    pub ratings: Vec<SeatPreview>,
}

/// What `correction` would make of the game of dispute `id` (see
/// [`Preview`]): the engine's corrected result, and the ratings the game
/// would be rated with, found by re-rating it exactly as a correction does
/// (the later games too) in a transaction that is rolled back. Nothing is
/// written; the errors are the correction's.
pub async fn preview(
    (pool, tables): (&PgPool, &TableService),
    admin: Uuid,
    id: Uuid,
    correction: Correction,
) -> Result<Preview, ServiceError> {
    let d = dispute(pool, id).await?;
    let command = TableCommand::CorrectResult {
        by: player_id(admin),
        grounds: Grounds::DisputeId(id.to_string()),
        correction,
    };
    let (events, ruleset, game) = tables
        .read(d.table_id, 0, |cached| {
            let mut table = cached.table.clone();
            let events = table.execute(&command, &mut rand::thread_rng())?;
            Ok::<_, domain::TableError>((events, table.ruleset.clone(), table.rated_now()))
        })
        .await??;
    let Some(TableEvent::ResultCorrected(corrected)) = events.into_iter().next() else {
        return Err(ServiceError::internal("a correction is result_corrected"));
    };
    let mut tx = pool.begin().await?;
    let now = store::ratings::results_of(&mut *tx, d.table_id).await?;
    let change = Rerate::Corrected {
        table_id: d.table_id,
        ruleset,
        game,
    };
    crate::ratings::record(&mut tx, &change).await?;
    let then = store::ratings::results_of(&mut *tx, d.table_id).await?;
    tx.rollback().await?;
    let mut by_seat: BTreeMap<i32, SeatPreview> = BTreeMap::new();
    for (rows, corrected) in [(&now, false), (&then, true)] {
        for r in rows {
            let seat = by_seat.entry(r.seat).or_insert(SeatPreview {
                seat: r.seat,
                account_id: r.account_id,
                now: None,
                corrected: None,
            });
            let slot = if corrected {
                &mut seat.corrected
            } else {
                &mut seat.now
            };
            *slot = Some(RatingMove {
                before: r.mu_before,
                after: r.mu_after,
            });
        }
    }
    let ratings = by_seat.into_values().collect();
    Ok(Preview {
        corrected: *corrected,
        ratings,
    })
}
