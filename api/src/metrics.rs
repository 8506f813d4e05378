//! Metrics in the Prometheus text format, served at `/metrics` on their own
//! listener (`HUIT_METRICS_BIND`, off by default) with the `metrics` facade
//! and its Prometheus exporter. Every metric is named in
//! [`crate::metric_names`] and set by its owner: counters and histograms
//! where things happen (a no-op while no recorder is installed), gauges
//! that count something held elsewhere by the readers start-up hands in
//! ([`Gauges`]), run at each scrape. The exporter imports nothing of the
//! server. The README's "Metrics" table lists them all.

use std::net::TcpListener;
use std::sync::OnceLock;
use std::time::Duration;

use actix_web::dev::Server;
use actix_web::http::Method;
use actix_web::{web, App, HttpResponse, HttpServer};
use futures_util::future::LocalBoxFuture;
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};

use crate::metric_names::{BATCH_SIZE, HTTP_DURATION, HTTP_REQUESTS};

/// Request and decision latencies, and deadline lateness, in seconds.
const SECONDS: &[f64] = &[
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
];
/// Moves per log-writer statement.
const BATCH: &[f64] = &[1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0];

static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();

/// The recorder of this process, installed on first use (once per process:
/// several servers in one test process share it).
fn handle() -> &'static PrometheusHandle {
    HANDLE.get_or_init(|| {
        let builder = PrometheusBuilder::new()
            .set_buckets_for_metric(Matcher::Suffix("_seconds".into()), SECONDS)
            .and_then(|b| b.set_buckets_for_metric(Matcher::Full(BATCH_SIZE.into()), BATCH))
            .expect("the buckets are not empty");
        builder
            .install_recorder()
            .expect("no other metrics recorder is installed")
    })
}

/// Whether this process records metrics (without a recorder the macros do
/// nothing, but a request's labels would still be built).
pub fn enabled() -> bool {
    HANDLE.get().is_some()
}

/// A request answered. Every label's values come from a fixed set, so that
/// no request can add series: the method is one of the standard ones or
/// `other`, `route` is its template (`/v1/tables/{id}/view`) or
/// `unmatched`, the status a number.
pub fn request(method: &Method, route: Option<&str>, status: u16, elapsed: Duration) {
    let route = route.unwrap_or("unmatched").to_owned();
    let labels = [
        ("method", method_label(method).to_owned()),
        ("route", route),
    ];
    metrics::histogram!(HTTP_DURATION, &labels).record(elapsed.as_secs_f64());
    let [method, route] = labels;
    metrics::counter!(
        HTTP_REQUESTS,
        &[method, route, ("status", status.to_string())]
    )
    .increment(1);
}

/// A method as a label: the standard ones by name, any other `other` (a
/// method is any token a client makes up, up to the header's size).
fn method_label(method: &Method) -> &'static str {
    const STANDARD: [&str; 9] = [
        "GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "CONNECT", "TRACE",
    ];
    STANDARD
        .into_iter()
        .find(|m| *m == method.as_str())
        .unwrap_or("other")
}

/// One owner's gauges, set when a scrape asks (the tables cached, the
/// streams open, the connections, the deadlines and webhooks waiting).
pub type Gauge = Box<dyn Fn() -> LocalBoxFuture<'static, ()> + Send + Sync>;

/// Every owner's gauges, read at each scrape in the order given.
pub type Gauges = Vec<Gauge>;

/// A gauge its owner sets at once (a count it holds).
pub fn held(set: impl Fn() + Send + Sync + 'static) -> Gauge {
    Box::new(move || {
        set();
        Box::pin(std::future::ready(()))
    })
}

/// A gauge its owner reads (a count the database holds).
pub fn read<F: std::future::Future<Output = ()> + 'static>(
    read: impl Fn() -> F + Send + Sync + 'static,
) -> Gauge {
    Box::new(move || Box::pin(read()))
}

/// Serves `/metrics` on `listener` (one worker: a scrape is rare and cheap).
pub fn serve(listener: TcpListener, gauges: Gauges) -> std::io::Result<Server> {
    handle();
    let gauges = web::Data::new(gauges);
    Ok(HttpServer::new(move || {
        App::new()
            .app_data(gauges.clone())
            .route("/metrics", web::get().to(scrape))
    })
    .workers(1)
    .listen(listener)?
    .shutdown_timeout(1)
    .run())
}

async fn scrape(gauges: web::Data<Gauges>) -> HttpResponse {
    for gauge in gauges.iter() {
        gauge().await;
    }
    let handle = handle();
    handle.run_upkeep();
    HttpResponse::Ok()
        .content_type("text/plain; version=0.0.4; charset=utf-8")
        .body(handle.render())
}
