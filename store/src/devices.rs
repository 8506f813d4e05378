//! `devices` (docs/API.md "Push to phones"): the phones an account
//! registered for push, by their platform's token. A token is one phone:
//! registered again, by its account or another, it is the same device,
//! moved to the account that registered it last.

use chrono::{DateTime, Utc};
use sqlx::{PgConnection, PgExecutor};
use uuid::Uuid;

/// A device as its account sees it (its token is not shown back).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceRow {
    pub id: Uuid,
    pub platform: String,
    pub locale: Option<String>,
    pub created_at: DateTime<Utc>,
}

/// What registering a token did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Registered {
    /// A new device.
    New(DeviceRow),
    /// The token's device already (its locale updated, moved to the
    /// account if another had it).
    Known(DeviceRow),
    /// The account has `limit` devices already.
    TooMany,
}

/// Registers `token` of `platform` for `account_id` (at most `limit`
/// devices an account), in `conn`'s transaction: the account's row is
/// locked so that two registrations cannot pass the limit together.
#[tracing::instrument(skip(conn, token))]
pub async fn register(
    conn: &mut PgConnection,
    account_id: Uuid,
    platform: &str,
    token: &str,
    locale: Option<&str>,
    limit: i64,
) -> Result<Registered, sqlx::Error> {
    sqlx::query!(
        "SELECT 1 AS one FROM accounts WHERE id = $1 FOR NO KEY UPDATE",
        account_id
    )
    .fetch_optional(&mut *conn)
    .await?;
    let known = sqlx::query!(
        "SELECT account_id FROM devices WHERE platform = $1 AND token = $2 FOR UPDATE",
        platform,
        token,
    )
    .fetch_optional(&mut *conn)
    .await?;
    if known.as_ref().map(|k| k.account_id) != Some(account_id) {
        let mine = sqlx::query_scalar!(
            r#"SELECT count(*) AS "n!" FROM devices WHERE account_id = $1"#,
            account_id
        )
        .fetch_one(&mut *conn)
        .await?;
        if mine >= limit {
            return Ok(Registered::TooMany);
        }
    }
    let row = sqlx::query_as!(
        DeviceRow,
        r#"INSERT INTO devices (id, account_id, platform, token, locale)
           VALUES ($1, $2, $3, $4, $5)
           ON CONFLICT (platform, token)
           DO UPDATE SET account_id = EXCLUDED.account_id, locale = EXCLUDED.locale
           RETURNING id, platform, locale, created_at"#,
        Uuid::new_v4(),
        account_id,
        platform,
        token,
        locale,
    )
    .fetch_one(&mut *conn)
    .await?;
    if known.as_ref().is_some_and(|k| k.account_id != account_id) {
        // One phone, one player: what the last account had still to send
        // it is not for the new one.
        sqlx::query!(
            "DELETE FROM pushes WHERE device_id = $1 AND status = 'pending'",
            row.id
        )
        .execute(&mut *conn)
        .await?;
    }
    Ok(match known {
        None => Registered::New(row),
        Some(_) => Registered::Known(row),
    })
}

/// The account's devices, oldest first.
#[tracing::instrument(skip(executor))]
pub async fn of_account(
    executor: impl PgExecutor<'_>,
    account_id: Uuid,
) -> Result<Vec<DeviceRow>, sqlx::Error> {
    sqlx::query_as!(
        DeviceRow,
        r#"SELECT id, platform, locale, created_at FROM devices
           WHERE account_id = $1 ORDER BY created_at, id"#,
        account_id,
    )
    .fetch_all(executor)
    .await
}

/// Drops the account's device `id`: whether it had one.
#[tracing::instrument(skip(executor))]
pub async fn drop_one(
    executor: impl PgExecutor<'_>,
    account_id: Uuid,
    id: Uuid,
) -> Result<bool, sqlx::Error> {
    let dropped = sqlx::query!(
        "DELETE FROM devices WHERE id = $1 AND account_id = $2",
        id,
        account_id,
    )
    .execute(executor)
    .await?;
    Ok(dropped.rows_affected() == 1)
}

/// Drops every device of the account (it is being deleted or erased).
#[tracing::instrument(skip(executor))]
pub async fn drop_all(executor: impl PgExecutor<'_>, account_id: Uuid) -> Result<u64, sqlx::Error> {
    let dropped = sqlx::query!("DELETE FROM devices WHERE account_id = $1", account_id)
        .execute(executor)
        .await?;
    Ok(dropped.rows_affected())
}

/// Drops the devices `ids` (their platform said their token is dead), and
/// with them their pushes: how many were dropped.
#[tracing::instrument(skip(executor))]
pub async fn drop_dead(executor: impl PgExecutor<'_>, ids: &[Uuid]) -> Result<u64, sqlx::Error> {
    let dropped = sqlx::query!("DELETE FROM devices WHERE id = ANY($1)", ids)
        .execute(executor)
        .await?;
    Ok(dropped.rows_affected())
}
