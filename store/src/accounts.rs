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
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Player => "player",
            Self::Admin => "admin",
        }
    }
}

impl FromStr for Role {
    type Err = sqlx::Error;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "player" => Ok(Self::Player),
            "admin" => Ok(Self::Admin),
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
    let row = sqlx::query!(
        r#"INSERT INTO accounts (id, username, password_hash, role)
           VALUES ($1, $2, $3, $4)
           RETURNING id, username, role, created_at"#,
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
        r#"SELECT id, username, role, created_at, password_hash
           FROM accounts WHERE lower(username) = lower($1)"#,
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
        "SELECT id, username, role, created_at FROM accounts WHERE id = $1",
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
        "SELECT id, username, role, created_at FROM accounts WHERE lower(username) = lower($1)",
        key,
    )
    .fetch_optional(executor)
    .await?;
    row.map(|r| Account::from_row(r.id, r.username, &r.role, r.created_at))
        .transpose()
}
