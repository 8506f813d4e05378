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
    /// When its use was last noted ([`touch`]).
    pub last_used_at: DateTime<Utc>,
    pub account: Account,
}

/// Records a session; `token_hash` is the hex SHA-256 of the token.
#[tracing::instrument(skip(executor, token_hash))]
pub async fn insert(
    executor: impl PgExecutor<'_>,
    token_hash: &str,
    account_id: Uuid,
    expires_at: DateTime<Utc>,
    user_agent: Option<&str>,
) -> Result<Uuid, sqlx::Error> {
    let id = Uuid::new_v4();
    sqlx::query!(
        r#"INSERT INTO sessions (id, token_hash, account_id, expires_at, user_agent)
           VALUES ($1, $2, $3, $4, $5)"#,
        id,
        token_hash,
        account_id,
        expires_at,
        user_agent,
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
        r#"SELECT s.id AS session_id, s.expires_at, s.last_used_at,
                  a.id, a.username AS "username!", a.role, a.created_at
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
            last_used_at: r.last_used_at,
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

/// Revokes every active session of `account_id` but `keep`: the ones
/// revoked.
#[tracing::instrument(skip(executor))]
pub async fn revoke_all(
    executor: impl PgExecutor<'_>,
    account_id: Uuid,
    keep: Option<Uuid>,
) -> Result<Vec<Uuid>, sqlx::Error> {
    sqlx::query_scalar!(
        r#"UPDATE sessions SET revoked_at = now()
           WHERE account_id = $1 AND revoked_at IS NULL AND id IS DISTINCT FROM $2
           RETURNING id"#,
        account_id,
        keep,
    )
    .fetch_all(executor)
    .await
}

/// Revokes one of `account_id`'s sessions: `false` when it has no such
/// active session.
#[tracing::instrument(skip(executor))]
pub async fn revoke_of(
    executor: impl PgExecutor<'_>,
    account_id: Uuid,
    session_id: Uuid,
) -> Result<bool, sqlx::Error> {
    let done = sqlx::query!(
        r#"UPDATE sessions SET revoked_at = now()
           WHERE id = $1 AND account_id = $2 AND revoked_at IS NULL AND expires_at > now()"#,
        session_id,
        account_id,
    )
    .execute(executor)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// A session as its account sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionRow {
    pub id: Uuid,
    pub created_at: DateTime<Utc>,
    pub last_used_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
    pub user_agent: Option<String>,
}

/// The active sessions of `account_id`, the last used first, at most
/// `limit`.
#[tracing::instrument(skip(executor))]
pub async fn active_of(
    executor: impl PgExecutor<'_>,
    account_id: Uuid,
    limit: i64,
) -> Result<Vec<SessionRow>, sqlx::Error> {
    sqlx::query_as!(
        SessionRow,
        r#"SELECT id, created_at, last_used_at, expires_at, user_agent FROM sessions
           WHERE account_id = $1 AND revoked_at IS NULL AND expires_at > now()
           ORDER BY last_used_at DESC, id LIMIT $2"#,
        account_id,
        limit,
    )
    .fetch_all(executor)
    .await
}

/// Notes that a session was used now, when its last use noted is older
/// than `every` (a write at most that often per session); with `lasts`, it
/// then expires that long after now at the earliest (a guest's session).
/// Its expiry when noted.
#[tracing::instrument(skip(executor))]
pub async fn touch(
    executor: impl PgExecutor<'_>,
    session_id: Uuid,
    every: std::time::Duration,
    lasts: Option<std::time::Duration>,
) -> Result<Option<DateTime<Utc>>, sqlx::Error> {
    let every = chrono::Duration::from_std(every).unwrap_or(chrono::Duration::MAX);
    let lasts = lasts.map(|l| chrono::Duration::from_std(l).unwrap_or(chrono::Duration::MAX));
    sqlx::query_scalar!(
        r#"UPDATE sessions SET last_used_at = now(),
               expires_at = CASE WHEN $3::interval IS NULL THEN expires_at
                                 ELSE GREATEST(expires_at, now() + $3::interval) END
           WHERE id = $1 AND last_used_at < now() - $2::interval
           RETURNING expires_at"#,
        session_id,
        every as _,
        lasts as _,
    )
    .fetch_optional(executor)
    .await
}
