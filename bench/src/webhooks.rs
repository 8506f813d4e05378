//! `loadgen webhooks`: what the webhooks' outbox costs the moves, and how
//! late its items arrive (docs/API.md "Finding a game and coming back").
//!
//! Two servers on the same PostgreSQL: one without webhooks, one sending
//! them to a receiver this program serves (on the port its URL names).
//! `loadgen run`'s load (16 × 4) is played three ways, in a rotating order
//! (a drift of the machine weighs on all alike): `off`, without webhooks;
//! `outbox`, with webhooks but their URL paused (the items are written to
//! the outbox, nothing is sent: what the outbox costs a move); `on`, sent
//! to the receiver as they come (the HTTP of both ends on the same cores).
//! Between runs the outbox is emptied. Prints `webhooks
//! moves_per_sec_off=<x> moves_per_sec_outbox=<y> moves_per_sec_on=<z>
//! outbox_cost_pct=<c> delivery_cost_pct=<d> p99_off_ms=<a>
//! p99_outbox_ms=<b> p99_on_ms=<c> delivered=<n> lag_p50_ms=<l>
//! lag_p99_ms=<m> errors=<e>`: medians of the runs, and the lag from an
//! item's time (its move's commit) to its arrival during the `on` runs.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use actix_web::{web, App, HttpResponse, HttpServer};
use sqlx::postgres::PgPoolOptions;

use crate::load::measure::percentile;
use crate::load::{play_load, Figures, RunArgs};
use crate::Error;

pub struct WebhooksArgs {
    /// The server without webhooks.
    pub off_url: String,
    /// The server with webhooks, sending to `receiver`.
    pub on_url: String,
    /// Where to receive (the on-server's `HUIT_WEBHOOK_URL`'s address).
    pub receiver: String,
    /// The on-server's database (its outbox, to wait until it is empty).
    pub database_url: String,
    pub seconds: u64,
    /// Runs against each server.
    pub rounds: usize,
}

/// Lags of the items received while measured (`Some`), in milliseconds.
type Lags = Arc<Mutex<Option<Vec<f64>>>>;

async fn receive(body: web::Bytes, lags: web::Data<Lags>) -> HttpResponse {
    let arrived = chrono::Utc::now();
    if lags.lock().unwrap().is_none() {
        return HttpResponse::NoContent().finish();
    }
    let at = serde_json::from_slice::<serde_json::Value>(&body)
        .ok()
        .and_then(|b| b["data"]["at"].as_str().map(str::to_owned))
        .and_then(|at| chrono::DateTime::parse_from_rfc3339(&at).ok());
    if let Some(at) = at {
        let lag = (arrived - at.with_timezone(&chrono::Utc)).num_microseconds();
        if let Some(lags) = lags.lock().unwrap().as_mut() {
            lags.push(lag.unwrap_or(0) as f64 / 1000.0);
        }
    }
    HttpResponse::NoContent().finish()
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    percentile(&xs, 0.5)
}

/// How a run treats the webhooks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    Off,
    Outbox,
    On,
}

/// Waits until `pending` (a count) answers 0, at most two minutes: what is
/// left.
pub async fn drained(pool: &sqlx::PgPool, pending: &str) -> Result<i64, Error> {
    let started = Instant::now();
    loop {
        let left: i64 = sqlx::query_scalar(pending).fetch_one(pool).await?;
        if left == 0 || started.elapsed() > Duration::from_secs(120) {
            return Ok(left);
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Pauses the on-server's deliveries (`true`) or resumes them, as a 410
/// and an admin would.
async fn pause(pool: &sqlx::PgPool, url: &str, paused: bool) -> Result<(), Error> {
    sqlx::query(
        "INSERT INTO webhook_endpoints (url, paused_at) VALUES ($1, CASE WHEN $2 THEN now() END)
         ON CONFLICT (url) DO UPDATE SET paused_at = EXCLUDED.paused_at",
    )
    .bind(url)
    .bind(paused)
    .execute(pool)
    .await?;
    Ok(())
}

pub async fn run(args: WebhooksArgs) -> Result<(), Error> {
    let lags: Lags = Arc::default();
    let data = web::Data::new(lags.clone());
    let server = HttpServer::new(move || {
        App::new()
            .app_data(data.clone())
            .route("/hook", web::post().to(receive))
    })
    .workers(1)
    .bind(&args.receiver)?
    .run();
    let receiver = server.handle();
    tokio::spawn(server);
    let pool = PgPoolOptions::new()
        .max_connections(1)
        .connect(&args.database_url)
        .await?;
    let hook_url = format!("http://{}/hook", args.receiver);

    let mut runs: Vec<(Side, Figures)> = Vec::new();
    let mut measured = Vec::new();
    let mut left = 0;
    let sides = [Side::Off, Side::Outbox, Side::On];
    for round in 0..args.rounds {
        for k in 0..sides.len() {
            let side = sides[(round + k) % sides.len()];
            let url = if side == Side::Off {
                &args.off_url
            } else {
                &args.on_url
            };
            pause(&pool, &hook_url, side == Side::Outbox).await?;
            *lags.lock().unwrap() = (side == Side::On).then(Vec::new);
            let seed = 100 + (round * sides.len() + k) as u64;
            let figures = play_load(RunArgs::against(url, args.seconds, seed)).await?;
            eprintln!("loadgen: webhooks {side:?} {figures:?}");
            pause(&pool, &hook_url, false).await?;
            left = drained(
                &pool,
                "SELECT count(*) FROM feed_items WHERE delivery = 'pending'",
            )
            .await?;
            measured.extend(lags.lock().unwrap().take().unwrap_or_default());
            runs.push((side, figures));
        }
    }
    receiver.stop(true).await;
    measured.sort_by(f64::total_cmp);
    let of = |side: Side, f: fn(&Figures) -> f64| {
        median(
            runs.iter()
                .filter(|(s, _)| *s == side)
                .map(|(_, x)| f(x))
                .collect(),
        )
    };
    let rate = |side| of(side, |f| f.moves_per_sec);
    let p99 = |side| of(side, |f| f.p99_ms);
    let errors: u64 = runs.iter().map(|(_, f)| f.errors).sum::<u64>() + left as u64;
    let cost = |side| (1.0 - rate(side) / rate(Side::Off)) * 100.0;
    println!(
        "webhooks moves_per_sec_off={:.0} moves_per_sec_outbox={:.0} moves_per_sec_on={:.0} outbox_cost_pct={:.1} delivery_cost_pct={:.1} p99_off_ms={:.2} p99_outbox_ms={:.2} p99_on_ms={:.2} delivered={} lag_p50_ms={:.1} lag_p99_ms={:.1} errors={errors}",
        rate(Side::Off),
        rate(Side::Outbox),
        rate(Side::On),
        cost(Side::Outbox),
        cost(Side::On),
        p99(Side::Off),
        p99(Side::Outbox),
        p99(Side::On),
        measured.len(),
        percentile(&measured, 0.5),
        percentile(&measured, 0.99),
    );
    Ok(())
}
