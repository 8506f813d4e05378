//! `idempotency_keys`: the stored answers of moves sent with an
//! `Idempotency-Key`. Same key and same body: replay the stored answer; same
//! key, another body: 422 `idempotency_key_reused`.
//!
//! Use in a move's transaction: [`find`] first; when absent, do the move and
//! [`save`] its answer before committing. Two concurrent first uses of a key
//! collide on the primary key (or on the events' version), so only one
//! commits.

use serde_json::Value;
use sha2::{Digest, Sha256};
use sqlx::PgExecutor;
use uuid::Uuid;

use super::{violates, StoreError};

/// A stored answer.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredResponse {
    pub request_hash: String,
    pub status: u16,
    pub body: Value,
}

/// Hex SHA-256 of a request body (hash the raw bytes, or canonical JSON).
pub fn request_hash(body: &[u8]) -> String {
    hex::encode(Sha256::digest(body))
}

#[tracing::instrument(skip(executor))]
pub async fn find(
    executor: impl PgExecutor<'_>,
    table_id: Uuid,
    account_id: Uuid,
    key: &str,
) -> Result<Option<StoredResponse>, sqlx::Error> {
    let row = sqlx::query!(
        r#"SELECT request_hash, response_status, response_body
           FROM idempotency_keys
           WHERE table_id = $1 AND account_id = $2 AND key = $3"#,
        table_id,
        account_id,
        key,
    )
    .fetch_optional(executor)
    .await?;
    Ok(row.map(|r| StoredResponse {
        request_hash: r.request_hash,
        status: u16::try_from(r.response_status).unwrap_or(500),
        body: r.response_body,
    }))
}

/// Stores the answer of a key's first use. A concurrent first use of the same
/// key fails on `idempotency_keys_pkey`: [`StoreError::KeyInUse`] (the
/// client retries and gets the replay).
#[tracing::instrument(skip(executor, body))]
pub async fn save(
    executor: impl PgExecutor<'_>,
    table_id: Uuid,
    account_id: Uuid,
    key: &str,
    request_hash: &str,
    status: u16,
    body: &Value,
) -> Result<(), StoreError> {
    let saved = sqlx::query!(
        r#"INSERT INTO idempotency_keys
             (table_id, account_id, key, request_hash, response_status, response_body)
           VALUES ($1, $2, $3, $4, $5, $6)"#,
        table_id,
        account_id,
        key,
        request_hash,
        status as i16,
        body,
    )
    .execute(executor)
    .await;
    match saved {
        Ok(_) => Ok(()),
        Err(e) if violates(&e, "idempotency_keys_pkey") => Err(StoreError::KeyInUse),
        Err(e) if violates(&e, "idempotency_keys_table_id_fkey") => Err(StoreError::NoTable),
        Err(e) => Err(e.into()),
    }
}
