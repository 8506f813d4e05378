//! The ceiling of our stack: one row inserted per request, in its own
//! transaction, by actix-web + sqlx on the same PostgreSQL.

use actix_web::{web, App, HttpResponse, HttpServer};
use sqlx::postgres::PgPoolOptions;
use sqlx::PgPool;

async fn insert(pool: web::Data<PgPool>, body: web::Bytes) -> HttpResponse {
    let payload: serde_json::Value =
        serde_json::from_slice(&body).unwrap_or(serde_json::Value::Null);
    let result = async {
        let mut tx = pool.begin().await?;
        sqlx::query("INSERT INTO bench_baseline (payload) VALUES ($1)")
            .bind(payload)
            .execute(&mut *tx)
            .await?;
        tx.commit().await
    }
    .await;
    match result {
        Ok(()) => HttpResponse::Created().finish(),
        Err(_) => HttpResponse::ServiceUnavailable().finish(),
    }
}

/// Serves `POST /baseline` on `bind`; prints `listening on <port>` once bound.
pub async fn serve(bind: &str, database_url: &str, workers: usize) -> std::io::Result<()> {
    // The product's connection policy (pinged only after being idle).
    let pool = api::startup::ping_when_idle(PgPoolOptions::new().max_connections(10))
        .connect(database_url)
        .await
        .map_err(std::io::Error::other)?;
    // Runtime queries, not sqlx::query!: this table is the benchmark's own and
    // has no migration in the product.
    sqlx::query(
        "CREATE TABLE IF NOT EXISTS bench_baseline (
            id bigserial PRIMARY KEY,
            at timestamptz NOT NULL DEFAULT now(),
            payload jsonb NOT NULL)",
    )
    .execute(&pool)
    .await
    .map_err(std::io::Error::other)?;
    let pool = web::Data::new(pool);
    let server = HttpServer::new(move || {
        App::new()
            .app_data(pool.clone())
            .route("/baseline", web::post().to(insert))
    })
    .workers(workers)
    .tcp_nodelay(true) // as the API server
    .bind(bind)?;
    let port = server.addrs()[0].port();
    println!("listening on {port}");
    server.run().await
}
