//! `accounts`.

use std::str::FromStr;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sqlx::PgExecutor;
use utoipa::ToSchema;
use uuid::Uuid;

use super::{violates, StoreError};

/// What an account may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Player,
    Admin,
    /// Plays without a password, every unrated way, until upgraded.
    Guest,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Player => "player",
            Self::Admin => "admin",
            Self::Guest => "guest",
        }
    }
}

impl FromStr for Role {
    type Err = sqlx::Error;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "player" => Ok(Self::Player),
            "admin" => Ok(Self::Admin),
            "guest" => Ok(Self::Guest),
            other => Err(sqlx::Error::Decode(
                format!("unknown role {other:?}").into(),
            )),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Account {
    pub id: Uuid,
    pub username: String,
    pub role: Role,
    pub created_at: DateTime<Utc>,
}

impl Account {
    /// An account from its row's columns (the role as stored, checked).
    pub(crate) fn from_row(
        id: Uuid,
        username: String,
        role: &str,
        created_at: DateTime<Utc>,
    ) -> Result<Self, sqlx::Error> {
        Ok(Self {
            id,
            username,
            role: role.parse()?,
            created_at,
        })
    }
}

/// Inserts an account. A username already taken (whatever its case) fails
/// on `accounts_username_lower_key`: [`StoreError::UsernameTaken`].
#[tracing::instrument(skip(executor, password_hash))]
pub async fn insert(
    executor: impl PgExecutor<'_>,
    username: &str,
    password_hash: &str,
    role: Role,
) -> Result<Account, StoreError> {
    insert_row(executor, username, Some(password_hash), role).await
}

/// Inserts a guest: a generated name, no password (a name taken:
/// [`StoreError::UsernameTaken`]).
#[tracing::instrument(skip(executor))]
pub async fn insert_guest(
    executor: impl PgExecutor<'_>,
    username: &str,
) -> Result<Account, StoreError> {
    insert_row(executor, username, None, Role::Guest).await
}

async fn insert_row(
    executor: impl PgExecutor<'_>,
    username: &str,
    password_hash: Option<&str>,
    role: Role,
) -> Result<Account, StoreError> {
    let row = sqlx::query!(
        r#"INSERT INTO accounts (id, username, password_hash, role)
           VALUES ($1, $2, $3, $4)
           RETURNING id, username AS "username!", role, created_at"#,
        Uuid::new_v4(),
        username,
        password_hash,
        role.as_str(),
    )
    .fetch_one(executor)
    .await
    .map_err(|e| match violates(&e, "accounts_username_lower_key") {
        true => StoreError::UsernameTaken,
        false => e.into(),
    })?;
    Ok(Account::from_row(
        row.id,
        row.username,
        &row.role,
        row.created_at,
    )?)
}

/// The account of a username and its password hash; `key` is the
/// username's normal form (ASCII lowercase, `Username::key`), matched
/// against the stored names' `lower()` (the unique index), which is the
/// same for the ASCII names the table holds.
#[tracing::instrument(skip(executor))]
pub async fn find_with_password_hash(
    executor: impl PgExecutor<'_>,
    key: &str,
) -> Result<Option<(Account, String)>, sqlx::Error> {
    let row = sqlx::query!(
        r#"SELECT id, username AS "username!", role, created_at,
                  password_hash AS "password_hash!"
           FROM accounts WHERE lower(username) = lower($1) AND password_hash IS NOT NULL"#,
        key,
    )
    .fetch_optional(executor)
    .await?;
    row.map(|r| {
        Ok((
            Account::from_row(r.id, r.username, &r.role, r.created_at)?,
            r.password_hash,
        ))
    })
    .transpose()
}

#[tracing::instrument(skip(executor))]
pub async fn find_by_id(
    executor: impl PgExecutor<'_>,
    id: Uuid,
) -> Result<Option<Account>, sqlx::Error> {
    let row = sqlx::query!(
        r#"SELECT id, username AS "username!", role, created_at
           FROM accounts WHERE id = $1 AND erased_at IS NULL"#,
        id,
    )
    .fetch_optional(executor)
    .await?;
    row.map(|r| Account::from_row(r.id, r.username, &r.role, r.created_at))
        .transpose()
}

/// The account of a username, whatever its case (`key`: its normal form,
/// see [`find_with_password_hash`]).
#[tracing::instrument(skip(executor))]
pub async fn find_by_username(
    executor: impl PgExecutor<'_>,
    key: &str,
) -> Result<Option<Account>, sqlx::Error> {
    let row = sqlx::query!(
        r#"SELECT id, username AS "username!", role, created_at
           FROM accounts WHERE lower(username) = lower($1)"#,
        key,
    )
    .fetch_optional(executor)
    .await?;
    row.map(|r| Account::from_row(r.id, r.username, &r.role, r.created_at))
        .transpose()
}

/// The names of these accounts now: `None` for an erased one (or an id
/// that is no account's), in no order.
#[tracing::instrument(skip_all, fields(count = ids.len()))]
pub async fn names(
    executor: impl PgExecutor<'_>,
    ids: &[Uuid],
) -> Result<Vec<(Uuid, Option<String>)>, sqlx::Error> {
    let rows = sqlx::query!("SELECT id, username FROM accounts WHERE id = ANY($1)", ids,)
        .fetch_all(executor)
        .await?;
    Ok(rows.into_iter().map(|r| (r.id, r.username)).collect())
}

/// Which of `ids` are erased accounts'.
#[tracing::instrument(skip_all, fields(count = ids.len()))]
pub async fn erased_among(
    executor: impl PgExecutor<'_>,
    ids: &[Uuid],
) -> Result<Vec<Uuid>, sqlx::Error> {
    sqlx::query_scalar!(
        "SELECT id FROM accounts WHERE id = ANY($1) AND erased_at IS NOT NULL",
        ids,
    )
    .fetch_all(executor)
    .await
}

/// A guest becomes a player, the same account under a name and password
/// of its own: `None` when it is not a guest (any more). A name taken is
/// [`StoreError::UsernameTaken`].
#[tracing::instrument(skip(executor, password_hash))]
pub async fn upgrade(
    executor: impl PgExecutor<'_>,
    id: Uuid,
    username: &str,
    password_hash: &str,
) -> Result<Option<Account>, StoreError> {
    let row = sqlx::query!(
        r#"UPDATE accounts SET username = $2, password_hash = $3, role = 'player'
           WHERE id = $1 AND role = 'guest' AND erased_at IS NULL
           RETURNING id, username AS "username!", role, created_at"#,
        id,
        username,
        password_hash,
    )
    .fetch_optional(executor)
    .await
    .map_err(|e| match violates(&e, "accounts_username_lower_key") {
        true => StoreError::UsernameTaken,
        false => e.into(),
    })?;
    row.map(|r| Account::from_row(r.id, r.username, &r.role, r.created_at))
        .transpose()
        .map_err(Into::into)
}

/// An account's password hash (`None`: a guest's, or no living account).
#[tracing::instrument(skip(executor))]
pub async fn password_hash(
    executor: impl PgExecutor<'_>,
    id: Uuid,
) -> Result<Option<String>, sqlx::Error> {
    let hash = sqlx::query_scalar!(
        "SELECT password_hash FROM accounts WHERE id = $1 AND erased_at IS NULL",
        id,
    )
    .fetch_optional(executor)
    .await?;
    Ok(hash.flatten())
}

/// Sets a living account's password hash.
#[tracing::instrument(skip(executor, password_hash))]
pub async fn set_password_hash(
    executor: impl PgExecutor<'_>,
    id: Uuid,
    password_hash: &str,
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "UPDATE accounts SET password_hash = $2 WHERE id = $1 AND erased_at IS NULL AND role <> 'guest'",
        id,
        password_hash,
    )
    .execute(executor)
    .await?;
    Ok(())
}

/// Asks for an account's erasure at `erase_at` (an earlier request's time
/// stays): the time it will be erased.
#[tracing::instrument(skip(executor))]
pub async fn request_erasure(
    executor: impl PgExecutor<'_>,
    id: Uuid,
    erase_at: DateTime<Utc>,
) -> Result<Option<DateTime<Utc>>, sqlx::Error> {
    sqlx::query_scalar!(
        r#"UPDATE accounts SET erase_at = LEAST(coalesce(erase_at, $2), $2)
           WHERE id = $1 AND erased_at IS NULL
           RETURNING erase_at AS "erase_at!""#,
        id,
        erase_at,
    )
    .fetch_optional(executor)
    .await
}

/// Cancels an account's pending deletion: whether there was one.
#[tracing::instrument(skip(executor))]
pub async fn cancel_erasure(executor: impl PgExecutor<'_>, id: Uuid) -> Result<bool, sqlx::Error> {
    let done = sqlx::query!(
        "UPDATE accounts SET erase_at = NULL WHERE id = $1 AND erase_at IS NOT NULL AND erased_at IS NULL",
        id,
    )
    .execute(executor)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Accounts due for erasure: their deletion's time passed, or guests
/// whose sessions were last used (or who were made, without one) before
/// `idle_before`; at most `limit`.
#[tracing::instrument(skip(executor))]
pub async fn due_for_erasure(
    executor: impl PgExecutor<'_>,
    idle_before: DateTime<Utc>,
    limit: i64,
) -> Result<Vec<Uuid>, sqlx::Error> {
    sqlx::query_scalar!(
        r#"(SELECT id FROM accounts
            WHERE erase_at <= now() AND erased_at IS NULL
            ORDER BY erase_at LIMIT $2)
           UNION
           (SELECT a.id FROM accounts a
            WHERE a.role = 'guest' AND a.erased_at IS NULL AND a.created_at < $1
              AND NOT EXISTS (SELECT 1 FROM sessions s
                              WHERE s.account_id = a.id AND s.last_used_at >= $1)
            ORDER BY a.created_at LIMIT $2)"#,
        idle_before,
        limit,
    )
    .fetch_all(executor)
    .await
    .map(|ids| ids.into_iter().flatten().collect())
}

/// Erases an account, in the caller's transaction: its name and password,
/// its sessions, feed, undelivered webhook items, statistics and the
/// idempotent answers stored at its tables (which show its name) go; its row keeps its id (which logs and results name,
/// nobody once it is nameless). `false` when it was erased already.
/// Whatever else names it (seats, disputes) shows it erased through its
/// row.
#[tracing::instrument(skip(conn))]
pub async fn erase(conn: &mut sqlx::PgConnection, id: Uuid) -> Result<bool, sqlx::Error> {
    let erased = sqlx::query!(
        r#"UPDATE accounts
           SET username = NULL, password_hash = NULL, erase_at = NULL, erased_at = now()
           WHERE id = $1 AND erased_at IS NULL"#,
        id,
    )
    .execute(&mut *conn)
    .await?;
    if erased.rows_affected() == 0 {
        return Ok(false);
    }
    sqlx::query!("DELETE FROM sessions WHERE account_id = $1", id)
        .execute(&mut *conn)
        .await?;
    super::devices::drop_all(&mut *conn, id).await?;
    // The stored answers of moves at its tables, everyone's: their views
    // named it.
    sqlx::query!(
        r#"DELETE FROM idempotency_keys
           WHERE account_id = $1
              OR table_id IN (SELECT table_id FROM table_players WHERE account_id = $1)"#,
        id
    )
    .execute(&mut *conn)
    .await?;
    sqlx::query!("DELETE FROM feed_items WHERE account_id = $1", id)
        .execute(&mut *conn)
        .await?;
    sqlx::query!("DELETE FROM ratings WHERE account_id = $1", id)
        .execute(&mut *conn)
        .await?;
    Ok(true)
}
