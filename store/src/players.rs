//! `table_players`: who sits where, projected from the events in the
//! appending transaction (see `api::table_service`).

use sqlx::PgConnection;
use uuid::Uuid;

/// Seats `account_id` at `seat`.
#[tracing::instrument(skip(conn))]
pub async fn insert(
    conn: &mut PgConnection,
    table_id: Uuid,
    account_id: Uuid,
    seat: i32,
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "INSERT INTO table_players (table_id, account_id, seat) VALUES ($1, $2, $3)",
        table_id,
        account_id,
        seat,
    )
    .execute(conn)
    .await?;
    Ok(())
}

/// Frees a seat.
#[tracing::instrument(skip(conn))]
pub async fn remove_seat(
    conn: &mut PgConnection,
    table_id: Uuid,
    seat: i32,
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "DELETE FROM table_players WHERE table_id = $1 AND seat = $2",
        table_id,
        seat,
    )
    .execute(conn)
    .await?;
    Ok(())
}

/// Frees every seat (before the seats are renumbered at the start).
#[tracing::instrument(skip(conn))]
pub async fn clear(conn: &mut PgConnection, table_id: Uuid) -> Result<(), sqlx::Error> {
    sqlx::query!("DELETE FROM table_players WHERE table_id = $1", table_id)
        .execute(conn)
        .await?;
    Ok(())
}
