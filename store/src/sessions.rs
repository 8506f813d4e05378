//! `sessions`: log-in tokens, stored only as their SHA-256 digest.

use chrono::{DateTime, Utc};
use sqlx::PgExecutor;
use uuid::Uuid;

use super::accounts::Account;

/// An active session and its account.
#[derive(Debug, Clone)]
pub struct ActiveSession {
    pub session_id: Uuid,
    pub expires_at: DateTime<Utc>,
    pub account: Account,
}

/// Records a session; `token_hash` is the hex SHA-256 of the token.
#[tracing::instrument(skip(executor, token_hash))]
pub async fn insert(
    executor: impl PgExecutor<'_>,
    token_hash: &str,
    account_id: Uuid,
    expires_at: DateTime<Utc>,
) -> Result<Uuid, sqlx::Error> {
    let id = Uuid::new_v4();
    sqlx::query!(
        r#"INSERT INTO sessions (id, token_hash, account_id, expires_at)
           VALUES ($1, $2, $3, $4)"#,
        id,
        token_hash,
        account_id,
        expires_at,
    )
    .execute(executor)
    .await?;
    Ok(id)
}

/// The session of a token hash, when it is neither expired nor revoked.
#[tracing::instrument(skip_all)]
pub async fn find_active(
    executor: impl PgExecutor<'_>,
    token_hash: &str,
) -> Result<Option<ActiveSession>, sqlx::Error> {
    let row = sqlx::query!(
        r#"SELECT s.id AS session_id, s.expires_at,
                  a.id, a.username, a.role, a.created_at
           FROM sessions s JOIN accounts a ON a.id = s.account_id
           WHERE s.token_hash = $1 AND s.revoked_at IS NULL AND s.expires_at > now()"#,
        token_hash,
    )
    .fetch_optional(executor)
    .await?;
    row.map(|r| {
        Ok(ActiveSession {
            session_id: r.session_id,
            expires_at: r.expires_at,
            account: Account::from_row(r.id, r.username, &r.role, r.created_at)?,
        })
    })
    .transpose()
}

/// Which of `ids` are revoked, expired or gone (their streams end).
#[tracing::instrument(skip_all, fields(count = ids.len()))]
pub async fn ended_among(
    executor: impl PgExecutor<'_>,
    ids: &[Uuid],
) -> Result<Vec<Uuid>, sqlx::Error> {
    sqlx::query_scalar!(
        r#"SELECT id AS "id!" FROM unnest($1::uuid[]) AS w(id)
           WHERE NOT EXISTS (SELECT 1 FROM sessions s
                             WHERE s.id = w.id AND s.revoked_at IS NULL AND s.expires_at > now())"#,
        ids,
    )
    .fetch_all(executor)
    .await
}

/// Revokes a session; `false` when it was already revoked or does not exist.
/// (A process that caches sessions forgets it itself: the store keeps
/// no cache.)
#[tracing::instrument(skip(executor))]
pub async fn revoke(executor: impl PgExecutor<'_>, session_id: Uuid) -> Result<bool, sqlx::Error> {
    let done = sqlx::query!(
        "UPDATE sessions SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL",
        session_id,
    )
    .execute(executor)
    .await?;
    Ok(done.rows_affected() == 1)
}
