//! `disputes` and `admin_actions` (docs/API.md "Disputes, the admin
//! console, metrics"): what players say is wrong and what admins did. A
//! dispute's resolution is the only change either table ever sees; admin
//! actions are append-only (a trigger refuses the rest).

use chrono::{DateTime, Utc};
use sqlx::{PgConnection, PgExecutor};
use uuid::Uuid;

/// A dispute as stored, with its filer's and resolver's names.
#[derive(Debug, Clone)]
pub struct DisputeRow {
    pub id: Uuid,
    pub table_id: Uuid,
    pub account_id: Uuid,
    /// The opener's name; `None`: their account was erased.
    pub username: Option<String>,
    pub round: Option<i32>,
    pub reason: String,
    pub status: String,
    pub verdict: Option<String>,
    pub note: Option<String>,
    pub resolved_by: Option<String>,
    pub resolved_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    /// An upheld dispute's correction of the game's result, as logged.
    pub correction: Option<serde_json::Value>,
}

/// A new dispute.
#[derive(Debug)]
pub struct NewDispute<'a> {
    pub table_id: Uuid,
    pub account_id: Uuid,
    pub round: Option<i32>,
    pub reason: &'a str,
}

/// Files `dispute` unless its filer already has `max_open` open ones
/// (`Ok(None)` then). The filer's account row is locked for the count, so
/// two filings at once cannot both take the last place.
#[tracing::instrument(skip(conn, dispute))]
pub async fn file(
    conn: &mut PgConnection,
    dispute: NewDispute<'_>,
    max_open: i64,
) -> Result<Option<DisputeRow>, sqlx::Error> {
    sqlx::query!(
        "SELECT id FROM accounts WHERE id = $1 FOR NO KEY UPDATE",
        dispute.account_id
    )
    .fetch_one(&mut *conn)
    .await?;
    let open = sqlx::query_scalar!(
        r#"SELECT count(*) AS "n!" FROM disputes WHERE account_id = $1 AND status = 'open'"#,
        dispute.account_id
    )
    .fetch_one(&mut *conn)
    .await?;
    if open >= max_open {
        return Ok(None);
    }
    let id = Uuid::new_v4();
    sqlx::query!(
        "INSERT INTO disputes (id, table_id, account_id, round, reason) VALUES ($1, $2, $3, $4, $5)",
        id,
        dispute.table_id,
        dispute.account_id,
        dispute.round,
        dispute.reason,
    )
    .execute(&mut *conn)
    .await?;
    get(conn, id).await
}

/// One dispute.
#[tracing::instrument(skip(executor))]
pub async fn get(
    executor: impl PgExecutor<'_>,
    id: Uuid,
) -> Result<Option<DisputeRow>, sqlx::Error> {
    Ok(find(executor, Some(id), None, None, None, 1).await?.pop())
}

/// A page of disputes, oldest first after the cursor: every account's (the
/// admins' queue, by `status` if given) or one account's.
#[tracing::instrument(skip(executor))]
pub async fn list(
    executor: impl PgExecutor<'_>,
    status: Option<&str>,
    account_id: Option<Uuid>,
    after: Option<(DateTime<Utc>, Uuid)>,
    limit: i64,
) -> Result<Vec<DisputeRow>, sqlx::Error> {
    find(executor, None, status, account_id, after, limit).await
}

/// The disputes that pass every filter given, oldest first.
async fn find(
    executor: impl PgExecutor<'_>,
    id: Option<Uuid>,
    status: Option<&str>,
    account_id: Option<Uuid>,
    after: Option<(DateTime<Utc>, Uuid)>,
    limit: i64,
) -> Result<Vec<DisputeRow>, sqlx::Error> {
    let (after_at, after_id) = after.unzip();
    sqlx::query_as!(
        DisputeRow,
        r#"SELECT d.id, d.table_id, d.account_id, a.username, d.round, d.reason, d.status,
                  d.verdict, d.note, r.username AS "resolved_by?", d.resolved_at, d.created_at,
                  d.correction
           FROM disputes d
           JOIN accounts a ON a.id = d.account_id
           LEFT JOIN accounts r ON r.id = d.resolved_by
           WHERE ($1::uuid IS NULL OR d.id = $1)
             AND ($2::text IS NULL OR d.status = $2)
             AND ($3::uuid IS NULL OR d.account_id = $3)
             AND ($4::timestamptz IS NULL OR (d.created_at, d.id) > ($4, $5::uuid))
           ORDER BY d.created_at, d.id
           LIMIT $6"#,
        id,
        status,
        account_id,
        after_at,
        after_id,
        limit,
    )
    .fetch_all(executor)
    .await
}

/// Resolves an open dispute; `false` when it was not open (resolved
/// already: a verdict is never changed).
#[tracing::instrument(skip(conn, note))]
pub async fn resolve(
    conn: &mut PgConnection,
    id: Uuid,
    admin_id: Uuid,
    verdict: &str,
    note: &str,
    correction: Option<&serde_json::Value>,
) -> Result<bool, sqlx::Error> {
    let done = sqlx::query!(
        "UPDATE disputes
         SET status = 'resolved', verdict = $3, note = $4, resolved_by = $2, resolved_at = now(),
             correction = $5
         WHERE id = $1 AND status = 'open'",
        id,
        admin_id,
        verdict,
        note,
        correction,
    )
    .execute(conn)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// What an admin did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AdminAction {
    ResolveDispute,
    ReplayRunningRound,
    ExportLog,
    Audit,
    RetryWebhook,
    ResumeWebhooks,
    EraseAccount,
    CorrectResult,
    SanctionAccount,
    LiftSanction,
    RetryPush,
}

impl AdminAction {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ResolveDispute => "resolve_dispute",
            Self::ReplayRunningRound => "replay_running_round",
            Self::ExportLog => "export_log",
            Self::Audit => "audit",
            Self::RetryWebhook => "retry_webhook",
            Self::ResumeWebhooks => "resume_webhooks",
            Self::EraseAccount => "erase_account",
            Self::CorrectResult => "correct_result",
            Self::SanctionAccount => "sanction_account",
            Self::LiftSanction => "lift_sanction",
            Self::RetryPush => "retry_push",
        }
    }
}

/// Records that `admin_id` did `action` (on a table, a dispute).
#[tracing::instrument(skip(executor))]
pub async fn record(
    executor: impl PgExecutor<'_>,
    admin_id: Uuid,
    action: AdminAction,
    table_id: Option<Uuid>,
    dispute_id: Option<Uuid>,
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "INSERT INTO admin_actions (admin_id, action, table_id, dispute_id) VALUES ($1, $2, $3, $4)",
        admin_id,
        action.as_str(),
        table_id,
        dispute_id,
    )
    .execute(executor)
    .await?;
    Ok(())
}

/// Records that `admin_id` did `action` on the webhooks (one delivery, or
/// all of them).
#[tracing::instrument(skip(executor))]
pub async fn record_on_webhooks(
    executor: impl PgExecutor<'_>,
    admin_id: Uuid,
    action: AdminAction,
    feed_item_id: Option<i64>,
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "INSERT INTO admin_actions (admin_id, action, feed_item_id) VALUES ($1, $2, $3)",
        admin_id,
        action.as_str(),
        feed_item_id,
    )
    .execute(executor)
    .await?;
    Ok(())
}

/// Records that `admin_id` sent push `push_id` again.
#[tracing::instrument(skip(executor))]
pub async fn record_on_push(
    executor: impl PgExecutor<'_>,
    admin_id: Uuid,
    push_id: i64,
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "INSERT INTO admin_actions (admin_id, action, push_id) VALUES ($1, $2, $3)",
        admin_id,
        AdminAction::RetryPush.as_str(),
        push_id,
    )
    .execute(executor)
    .await?;
    Ok(())
}

/// Records that `admin_id` did `action` on `account_id` (erased it,
/// imposed or lifted a sanction).
#[tracing::instrument(skip(executor))]
pub async fn record_on_account(
    executor: impl PgExecutor<'_>,
    admin_id: Uuid,
    action: AdminAction,
    account_id: Uuid,
    sanction_id: Option<Uuid>,
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        r#"INSERT INTO admin_actions (admin_id, action, account_id, sanction_id)
           VALUES ($1, $2, $3, $4)"#,
        admin_id,
        action.as_str(),
        account_id,
        sanction_id,
    )
    .execute(executor)
    .await?;
    Ok(())
}

/// An admin action, with the admin's name.
#[derive(Debug, Clone)]
pub struct ActionRow {
    /// The admin's name; `None`: their account was erased.
    pub admin: Option<String>,
    pub action: String,
    pub dispute_id: Option<Uuid>,
    pub at: DateTime<Utc>,
}

/// The admin actions on a table and its disputes, oldest first (the latest
/// `limit`).
#[tracing::instrument(skip(executor))]
pub async fn actions_on(
    executor: impl PgExecutor<'_>,
    table_id: Uuid,
    limit: i64,
) -> Result<Vec<ActionRow>, sqlx::Error> {
    let mut rows = sqlx::query_as!(
        ActionRow,
        r#"SELECT a.username AS admin, x.action, x.dispute_id, x.at
           FROM admin_actions x JOIN accounts a ON a.id = x.admin_id
           WHERE x.table_id = $1
           ORDER BY x.id DESC
           LIMIT $2"#,
        table_id,
        limit,
    )
    .fetch_all(executor)
    .await?;
    rows.reverse();
    Ok(rows)
}
