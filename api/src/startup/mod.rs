//! Building and running the server.

use std::net::TcpListener;
use std::time::{Duration, Instant};

use actix_web::body::MessageBody;
use actix_web::dev::Server;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{self, HeaderName, HeaderValue};
use actix_web::http::{Method, StatusCode};
use actix_web::middleware::{from_fn, Condition, DefaultHeaders, Next};
use actix_web::{web, App, HttpMessage, HttpResponse, HttpServer, ResponseError};
use sqlx::PgPool;
use tracing_actix_web::{RequestId, TracingLogger};
use utoipa::OpenApi;
use utoipa_actix_web::AppExt;
use utoipa_swagger_ui::{Config, SwaggerUi};

use crate::accounts::Accounts;
use crate::config::Settings;
use crate::error::{self, ApiError};
use crate::log::hub::CommitHub;
use crate::metric_names::{DB_CONNECTIONS, DB_CONNECTIONS_MAX};
use crate::openapi::{self, ApiDoc};
use crate::outbound::ExtraRoots;
use crate::push::{Platform, Pushers};
use crate::rates::{RateLimits, Rates};
use crate::searches::SearchBudget;
use crate::table_service::{BotCaps, TableService};
use crate::telemetry::RequestSpan;
use crate::throttle::{InviteThrottle, LoginLimits, LoginThrottle};
use crate::watchers::{WatchLimits, Watchers};
use crate::webhooks::Webhooks;
use crate::{console, deadlines, metrics, routes, webhooks};
use store::feed::Outbox;

mod cors;
mod database;
mod sockets;

use cors::{cors, cors_origins, cors_refused};
pub use database::{
    connect_lazy, migrate, ping_when_idle, pool_options, wait_for_database, DatabaseWait,
};
pub use sockets::raise_descriptor_limit;
use sockets::{connections_per_worker, descriptor_limit, SocketOptions};

/// A bound, not yet running, server.
pub struct Application {
    port: u16,
    server: Server,
    hub: CommitHub,
    listener_task: tokio::task::JoinHandle<()>,
    /// What acts by itself (see `spawn_tasks`).
    tasks: Vec<tokio::task::JoinHandle<()>>,
    /// `/metrics` on its own listener, when `HUIT_METRICS_BIND` is set.
    metrics: Option<(u16, Server)>,
}

impl std::fmt::Debug for Application {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Application")
            .field("port", &self.port)
            .finish_non_exhaustive()
    }
}

/// The body limit, and bad JSON bodies, paths and queries answered as
/// problems.
fn extractor_errors(cfg: &mut utoipa_actix_web::service_config::ServiceConfig, body_limit: usize) {
    cfg.app_data(
        web::JsonConfig::default()
            .limit(body_limit)
            .error_handler(move |err, _| error::json_error(err, body_limit).into()),
    )
    .app_data(web::PathConfig::default().error_handler(|err, _| error::path_error(err).into()))
    .app_data(web::QueryConfig::default().error_handler(|err, _| error::query_error(err).into()));
}

/// Every answer: no framing, no sniffing, no referrer (the interactive
/// documentation included; the console's pages set a stricter policy of
/// their own, which this leaves alone).
fn security_headers() -> DefaultHeaders {
    DefaultHeaders::new()
        .add((header::X_CONTENT_TYPE_OPTIONS, "nosniff"))
        .add((header::CONTENT_SECURITY_POLICY, "frame-ancestors 'none'"))
        .add((header::REFERRER_POLICY, "no-referrer"))
}

/// `/metrics` on `HUIT_METRICS_BIND`, when set: its port and its server.
fn metrics_listener(
    settings: &Settings,
    pool: &web::Data<PgPool>,
    tables: &web::Data<TableService>,
    watchers: &web::Data<Watchers>,
) -> std::io::Result<Option<(u16, Server)>> {
    let Some(bind) = &settings.metrics_bind else {
        return Ok(None);
    };
    let listener = TcpListener::bind(bind)?;
    let port = listener.local_addr()?.port();
    let (tables, watchers) = (tables.clone(), watchers.clone());
    let db = pool.get_ref().clone();
    let (due, outbox, pushes) = (db.clone(), db.clone(), db.clone());
    let gauges = vec![
        metrics::held(move || tables.gauge()),
        metrics::held(move || watchers.gauge()),
        metrics::held(move || connections_gauge(&db)),
        metrics::read(move || deadlines::gauge(due.clone())),
        metrics::read(move || webhooks::gauge(outbox.clone())),
        metrics::read(move || crate::push::gauge(pushes.clone())),
    ];
    Ok(Some((port, metrics::serve(listener, gauges)?)))
}

/// The gauges of the database's connections.
fn connections_gauge(pool: &PgPool) {
    let (size, idle) = (pool.size(), pool.num_idle() as u32);
    ::metrics::gauge!(DB_CONNECTIONS, "state" => "idle").set(f64::from(idle));
    ::metrics::gauge!(DB_CONNECTIONS, "state" => "in_use")
        .set(f64::from(size.saturating_sub(idle)));
    ::metrics::gauge!(DB_CONNECTIONS_MAX).set(f64::from(pool.options().get_max_connections()));
}

/// The limits of requests shared by every worker: failed log-ins, wrong
/// invitation codes, and creation rates.
fn request_limits(
    settings: &Settings,
) -> (
    web::Data<LoginThrottle>,
    web::Data<InviteThrottle>,
    web::Data<Rates>,
) {
    (
        web::Data::new(LoginThrottle::new(login_limits(settings))),
        web::Data::new(InviteThrottle(LoginThrottle::new(login_limits(settings)))),
        web::Data::new(Rates::new(rate_limits(settings))),
    )
}

/// How often the rater looks for games whose ratings were deferred: a
/// deferred game is rated this soon after the lock it waited for is free.
const RATER_EVERY: Duration = Duration::from_millis(250);

/// The tasks that act by themselves: the streams' revocation checks, the
/// deadlines (and the feed's pruning), the eraser of accounts, the rater
/// of the games whose ratings a busy ruleset deferred, the webhooks'
/// sender when webhooks are on, and the pushes' sender and the keeper of
/// what this process's watches follow when push is.
fn spawn_tasks(
    settings: &Settings,
    pool: &PgPool,
    hub: &CommitHub,
    watchers: &Watchers,
    tables: &web::Data<TableService>,
    accounts: &Accounts,
    outgoing: Outgoing,
) -> Vec<tokio::task::JoinHandle<()>> {
    let mut tasks = vec![
        watchers.spawn_revocation_checks(pool.clone()),
        deadlines::spawn(
            tables.clone().into_inner(),
            pool.clone(),
            Duration::from_millis(settings.due_poll_ms),
            Duration::from_secs(settings.feed_retention_secs),
        ),
        crate::accounts::spawn(
            accounts.clone(),
            Duration::from_millis(settings.erase_poll_ms.max(1)),
        ),
        crate::ratings::spawn(pool.clone(), RATER_EVERY),
    ];
    let Outgoing { webhooks, pushers } = outgoing;
    tasks.extend(webhooks.map(|w| crate::webhooks::spawn(w, pool.clone(), hub.any_feed())));
    tasks.extend(pushers.map(|p| crate::push::spawn(p, pool.clone(), hub.any_feed())));
    tasks.extend(watchers.spawn_following());
    tasks
}

impl Application {
    /// Binds `settings.bind` (port 0 picks a free port) and prepares the
    /// server on `pool`. Migrations are not run here: see [`migrate`].
    pub async fn build(settings: Settings, pool: PgPool) -> std::io::Result<Self> {
        let listener = TcpListener::bind(&settings.bind)?;
        let port = listener.local_addr()?.port();
        let (hub, listener_task) = CommitHub::start(pool.clone()).await;

        let (throttle, guesses, rates) = request_limits(&settings);
        let descriptors = descriptor_limit();
        let (outgoing, watchers) = outgoing(&settings, &pool, descriptors).await?;
        let Services {
            tables,
            accounts,
            tasks,
        } = services(&settings, &pool, &hub, &watchers, outgoing);
        let pool = web::Data::new(pool);
        let metrics = metrics_listener(&settings, &pool, &tables, &watchers)?;
        let cors_origins = cors_origins(&settings.cors_origins)?;
        let (body_limit, workers) = (settings.body_limit_bytes, settings.workers);
        let sockets = SocketOptions::of(&settings);
        let settings = web::Data::new(settings);

        let mut server = HttpServer::new(move || {
            let (app, mut doc) = App::new()
                .into_utoipa_app()
                .openapi(ApiDoc::openapi())
                .app_data(pool.clone())
                .app_data(settings.clone())
                .app_data(throttle.clone())
                .app_data(guesses.clone())
                .app_data(rates.clone())
                .app_data(tables.clone())
                .app_data(accounts.clone())
                .app_data(watchers.clone())
                .configure(|cfg| extractor_errors(cfg, body_limit))
                .configure(routes::configure)
                .split_for_parts();
            openapi::finish(&mut doc);
            app.app_data(web::Data::new(doc))
                .route("/openapi.json", web::get().to(openapi_json))
                .configure(console::configure)
                // Swagger UI, its files compiled into the binary (nothing
                // fetched from elsewhere), reading the document above.
                .route("/docs", web::get().to(docs_redirect))
                .service(SwaggerUi::new("/docs/{_:.*}").config(Config::new(["/openapi.json"])))
                .default_service(web::to(routes::fallback))
                .wrap(security_headers())
                .wrap(Condition::new(
                    !cors_origins.is_empty(),
                    cors(&cors_origins),
                ))
                .wrap(from_fn(answered))
                .wrap(TracingLogger::<RequestSpan>::new())
        })
        // Stream frames (server-sent events and views) are small writes
        // one after another: with Nagle's algorithm each waits for the
        // client's (delayed) ACK of the one before.
        .tcp_nodelay(true)
        // A client that closes its connection ends its request at once,
        // also mid-stream, not at a failed write (BENCHMARKS.md, nineteenth
        // pass). No client of this API half-closes while it waits.
        .h1_allow_half_closed(false)
        .on_connect(move |connection, _| sockets.apply(connection))
        // Below the descriptor limit with room to spare (the pool, the
        // listener, files): past it a worker stops accepting for a while
        // instead of failing `accept` with EMFILE.
        .max_connections(connections_per_worker(descriptors, workers))
        .listen(listener)?
        .shutdown_timeout(10);
        if let Some(workers) = workers {
            server = server.workers(workers);
        }
        Ok(Self {
            port,
            server: server.run(),
            hub,
            listener_task,
            tasks,
            metrics,
        })
    }

    /// The port of `/metrics`, when served.
    pub fn metrics_port(&self) -> Option<u16> {
        self.metrics.as_ref().map(|(port, _)| *port)
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// The wake-up hub of this process (shared with the handlers).
    pub fn hub(&self) -> CommitHub {
        self.hub.clone()
    }

    /// Serves until the server is stopped (SIGINT/SIGTERM: graceful).
    pub async fn run_until_stopped(self) -> std::io::Result<()> {
        let metrics = self.metrics.map(|(_, server)| {
            let handle = server.handle();
            (handle, tokio::spawn(server))
        });
        let result = self.server.await;
        if let Some((handle, task)) = metrics {
            handle.stop(true).await;
            task.abort();
        }
        self.listener_task.abort();
        for task in &self.tasks {
            task.abort();
        }
        result
    }
}

async fn openapi_json(doc: web::Data<utoipa::openapi::OpenApi>) -> Result<HttpResponse, ApiError> {
    Ok(HttpResponse::Ok().json(doc.get_ref()))
}

fn login_limits(settings: &Settings) -> LoginLimits {
    LoginLimits {
        per_pair: settings.login_max_failures,
        per_address: settings.login_max_failures_per_address,
        per_username: settings.login_max_failures_per_username,
        window: settings.login_window(),
    }
}

fn rate_limits(settings: &Settings) -> RateLimits {
    RateLimits {
        sign_ups_per_address: settings.sign_ups_per_minute,
        guests_per_address: settings.guests_per_minute,
        log_ins_per_account: settings.log_ins_per_minute,
        tables_per_account: settings.tables_per_minute,
        public_reads_per_address: settings.public_reads_per_minute,
    }
}

/// The streams' limits; in all, half the open-file limit `descriptors`
/// unless set.
fn watch_limits(settings: &Settings, descriptors: usize) -> WatchLimits {
    WatchLimits {
        per_account: settings.max_streams_per_account,
        per_address: settings.max_streams_per_address,
        total: match settings.max_streams {
            0 => (descriptors / 2).max(1),
            n => n,
        },
    }
}

fn invalid(e: String) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidInput, e)
}

/// The certificates of `HUIT_EXTRA_CA_FILE`, if set, for every client the
/// server is.
fn extra_roots(settings: &Settings) -> std::io::Result<ExtraRoots> {
    let Some(path) = &settings.extra_ca_file else {
        return Ok(ExtraRoots::default());
    };
    let roots = ExtraRoots::read(path).map_err(invalid)?;
    tracing::info!(file = %path.display(), certificates = roots.len(), "trusting extra certificate authorities");
    Ok(roots)
}

/// The webhooks `settings` ask for, if any (an error when half set).
fn webhooks(settings: &Settings, roots: &ExtraRoots) -> std::io::Result<Option<Webhooks>> {
    match (&settings.webhook_url, &settings.webhook_secret) {
        (None, _) => Ok(None),
        (Some(_), None) => Err(invalid(
            "HUIT_WEBHOOK_URL needs HUIT_WEBHOOK_SECRET (whsec_...)".into(),
        )),
        (Some(url), Some(secret)) => Webhooks::new(
            url.clone(),
            secret.clone(),
            settings.webhook_retry_schedule.clone(),
            Duration::from_secs(settings.webhook_timeout_secs.max(1)),
            roots,
        )
        .map(Some)
        .map_err(invalid),
    }
}

/// The process's table service: its bot delay, search budget and caps,
/// and the outboxes its feed items go to.
fn table_service(
    settings: &Settings,
    pool: &PgPool,
    hub: &CommitHub,
    outbox: Outbox,
) -> TableService {
    TableService::new(pool.clone(), hub.clone())
        .with_outbox(outbox)
        .with_bot_delay(Duration::from_millis(settings.bot_delay_ms))
        .with_search_threads(match settings.bot_search_threads {
            0 => SearchBudget::default_threads(),
            n => n,
        })
        .with_bot_caps(BotCaps {
            strong_tables: settings.max_strong_bot_tables,
            bots: settings.max_bots,
        })
}

/// The process's services of tables and accounts, and the tasks that act
/// by themselves (with the webhooks and pushes `settings` ask for).
fn services(
    settings: &Settings,
    pool: &PgPool,
    hub: &CommitHub,
    watchers: &Watchers,
    outgoing: Outgoing,
) -> Services {
    let tables = web::Data::new(table_service(settings, pool, hub, outgoing.outbox()));
    let accounts = web::Data::new(accounts_service(settings, pool, &tables));
    let tasks = spawn_tasks(settings, pool, hub, watchers, &tables, &accounts, outgoing);
    Services {
        tables,
        accounts,
        tasks,
    }
}

/// What the server sends out by itself, when `settings` ask for it.
struct Outgoing {
    webhooks: Option<Webhooks>,
    pushers: Option<Pushers>,
}

impl Outgoing {
    /// The outboxes feed items are written to.
    fn outbox(&self) -> Outbox {
        let pushes_to = |platform| self.pushers.as_ref().is_some_and(|p| p.pushes_to(platform));
        Outbox {
            webhooks: self.webhooks.is_some(),
            apns: pushes_to(Platform::Apns),
            fcm: pushes_to(Platform::Fcm),
        }
    }
}

/// The webhooks and pushes `settings` ask for, their clients trusting
/// `HUIT_EXTRA_CA_FILE`, and the process's watches (what they follow is
/// kept for push when there is any).
async fn outgoing(
    settings: &Settings,
    pool: &PgPool,
    descriptors: usize,
) -> std::io::Result<(Outgoing, web::Data<Watchers>)> {
    let roots = extra_roots(settings)?;
    let webhooks = webhooks(settings, &roots)?;
    let pushers = Pushers::of(settings, &roots).await.map_err(invalid)?;
    let following = pushers.as_ref().map(|_| pool.clone());
    let watchers = Watchers::new(watch_limits(settings, descriptors), following);
    Ok((Outgoing { webhooks, pushers }, web::Data::new(watchers)))
}

/// What [`services`] starts.
struct Services {
    tables: web::Data<TableService>,
    accounts: web::Data<Accounts>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

/// The accounts' service of the process: deletions, erasures, the eraser.
fn accounts_service(
    settings: &Settings,
    pool: &PgPool,
    tables: &web::Data<TableService>,
) -> Accounts {
    Accounts::new(
        pool.clone(),
        tables.clone().into_inner(),
        Duration::from_secs(settings.erase_grace_secs),
        Duration::from_secs(settings.guest_idle_secs),
    )
}

/// Every answer, on its way out: a refused CORS preflight as problem+json
/// (actix-cors refuses in plain text), logged, measured (when metrics are
/// on), with its `x-request-id`.
async fn answered(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let request_id = req.extensions().get::<RequestId>().copied();
    let (method, started) = (req.method().clone(), Instant::now());
    let preflight = req.method() == Method::OPTIONS
        && req
            .headers()
            .contains_key(header::ACCESS_CONTROL_REQUEST_METHOD);
    let res = next.call(req).await?;
    let mut res = if preflight && res.status() == StatusCode::BAD_REQUEST {
        res.into_response(cors_refused().error_response())
            .map_into_right_body()
    } else {
        res.map_into_left_body()
    };
    let status = res.status().as_u16();
    tracing::info!(status, "answered");
    if metrics::enabled() {
        let route = res.request().match_pattern();
        metrics::request(&method, route.as_deref(), status, started.elapsed());
    }
    if let Some(id) = request_id {
        if let Ok(value) = HeaderValue::from_str(&id.to_string()) {
            res.headers_mut()
                .insert(HeaderName::from_static("x-request-id"), value);
        }
    }
    Ok(res)
}

/// `/docs` is the interactive documentation's folder, `/docs/`.
async fn docs_redirect() -> HttpResponse {
    HttpResponse::PermanentRedirect()
        .insert_header((header::LOCATION, "/docs/"))
        .finish()
}
