//! Test support for the end-to-end tests: [`spawn_app`] starts the whole
//! server in-process on `127.0.0.1:0` against a fresh database, created on the
//! cluster named by `DATABASE_URL` (which `scripts/test` provides).

use std::str::FromStr;
use std::time::Duration;

use api::config::Settings;
use api::startup::{self, Application};
use serde_json::Value;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::{Connection, PgConnection, PgPool};
use tokio::time::Instant;
use uuid::Uuid;

pub mod checked;
pub mod games;

pub use checked::Client;

/// A running app and a client for it.
#[derive(Debug)]
pub struct TestApp {
    /// `http://127.0.0.1:<port>`.
    pub address: String,
    pub client: Client,
    /// A pool on the app's own database (for arranging and inspecting).
    pub pool: PgPool,
    pub database: String,
    pub hub: api::log::hub::CommitHub,
    /// `http://127.0.0.1:<port>/metrics`, when the settings served it.
    pub metrics: Option<String>,
}

/// The cluster URL from `DATABASE_URL`.
pub fn cluster_url() -> String {
    std::env::var("DATABASE_URL").expect(
        "DATABASE_URL must name a PostgreSQL cluster the tests may create databases on; \
         run the tests through scripts/test",
    )
}

/// Creates an empty database with a random name, migrated, and a pool on it.
pub async fn fresh_database() -> (String, PgConnectOptions, PgPool) {
    let admin_options = PgConnectOptions::from_str(&cluster_url()).expect("DATABASE_URL parses");
    let name = format!("huit_test_{}", uuid::Uuid::new_v4().simple());
    let mut admin = PgConnection::connect_with(&admin_options)
        .await
        .expect("connect to the test cluster");
    sqlx::query(&format!(r#"CREATE DATABASE "{name}""#))
        .execute(&mut admin)
        .await
        .expect("create the test database");
    admin.close().await.ok();
    let options = admin_options.database(&name);
    let pool = PgPoolOptions::new()
        .max_connections(5)
        .acquire_timeout(Duration::from_secs(10))
        .connect_with(options.clone())
        .await
        .expect("connect to the test database");
    startup::migrate(&pool).await.expect("migrations apply");
    (name, options, pool)
}

/// Starts the app with default settings (one worker) on a fresh database.
pub async fn spawn_app() -> TestApp {
    spawn_app_with(|_| {}).await
}

/// Starts the app on a fresh database, after `tweak` adjusted its settings.
pub async fn spawn_app_with(tweak: impl FnOnce(&mut Settings)) -> TestApp {
    let (database, options, pool) = fresh_database().await;
    let mut settings = Settings::with_database_url(cluster_url());
    settings.bind = "127.0.0.1:0".into();
    settings.workers = Some(1);
    settings.db_max_connections = 5;
    tweak(&mut settings);
    let app_pool = startup::pool_options(&settings).connect_lazy_with(options);
    start(settings, app_pool, pool, database).await
}

/// Starts the app on a pool whose database cannot be reached.
pub async fn spawn_app_without_database() -> TestApp {
    let mut settings = Settings::with_database_url("postgres://nobody@127.0.0.1:1/none");
    settings.bind = "127.0.0.1:0".into();
    settings.workers = Some(1);
    settings.db_acquire_timeout_secs = 1;
    let pool = startup::connect_lazy(&settings).expect("URL parses");
    start(settings, pool.clone(), pool, String::new()).await
}

async fn start(settings: Settings, app_pool: PgPool, pool: PgPool, database: String) -> TestApp {
    let app = Application::build(settings, app_pool)
        .await
        .expect("the app builds");
    let address = format!("http://127.0.0.1:{}", app.port());
    let hub = app.hub();
    let metrics = app
        .metrics_port()
        .map(|port| format!("http://127.0.0.1:{port}/metrics"));
    tokio::spawn(app.run_until_stopped());
    let client = Client::new(http_client(Duration::from_secs(30)));
    TestApp {
        address,
        client,
        pool,
        database,
        hub,
        metrics,
    }
}

impl TestApp {
    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.address, path)
    }

    pub async fn post_json(&self, path: &str, body: &Value) -> reqwest::Response {
        self.client
            .post(self.url(path))
            .json(body)
            .send()
            .await
            .expect("request sent")
    }

    /// `GET path` with `token` as the bearer.
    pub async fn get_as(&self, path: &str, token: &str) -> reqwest::Response {
        self.client
            .get(self.url(path))
            .bearer_auth(token)
            .send()
            .await
            .expect("request sent")
    }

    /// Logs `token` out (`DELETE /v1/sessions/current`).
    pub async fn log_out(&self, token: &str) -> reqwest::Response {
        self.client
            .delete(self.url("/v1/sessions/current"))
            .bearer_auth(token)
            .send()
            .await
            .expect("request sent")
    }

    /// Registers `username` with `password`; panics unless 201.
    pub async fn register(&self, username: &str, password: &str) -> Value {
        let res = self
            .post_json(
                "/v1/accounts",
                &serde_json::json!({"username": username, "password": password}),
            )
            .await;
        assert_eq!(res.status(), 201, "registering {username}");
        res.json().await.expect("JSON account")
    }

    /// Logs in; panics unless 201. Returns the session document.
    pub async fn login(&self, username: &str, password: &str) -> Value {
        let res = self
            .post_json(
                "/v1/sessions",
                &serde_json::json!({"username": username, "password": password}),
            )
            .await;
        assert_eq!(res.status(), 201, "logging in {username}");
        res.json().await.expect("JSON session")
    }

    /// Registers and logs in a player; returns its token.
    pub async fn player_token(&self, username: &str) -> String {
        self.register(username, "correct horse battery").await;
        let session = self.login(username, "correct horse battery").await;
        session["token"].as_str().expect("token").to_owned()
    }
}

/// The tests' HTTP client: no proxy, requests given up after `timeout`,
/// and idle connections dropped after 2 s, before the server's keep-alive
/// (actix-web's 5 s) closes them: reusing a connection the server is
/// closing fails the request (`IncompleteMessage`), a race seen once in
/// the fault tests after a long load.
pub fn http_client(timeout: Duration) -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .timeout(timeout)
        .pool_idle_timeout(Duration::from_secs(2))
        .build()
        .expect("client builds")
}

/// Polls `check` until it returns `Some` or `timeout` passes (no fixed
/// sleeps in tests).
pub async fn eventually<T, F, Fut>(timeout: Duration, mut check: F) -> Option<T>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = Instant::now() + timeout;
    let mut pause = Duration::from_millis(5);
    loop {
        if let Some(v) = check().await {
            return Some(v);
        }
        if Instant::now() >= deadline {
            return None;
        }
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(Duration::from_millis(100));
    }
}

/// The `seq` of each public event of a list (a page's `events`, stream
/// frames).
pub fn seqs<'a>(events: impl IntoIterator<Item = &'a Value>) -> Vec<i64> {
    events
        .into_iter()
        .map(|e| e["seq"].as_i64().expect("an event has a seq"))
        .collect()
}

/// The `Content-Type` of an answer, empty when it has none.
pub fn content_type(res: &reqwest::Response) -> String {
    res.headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned()
}

/// Asserts a problem+json answer with this status and code; returns the body.
pub async fn assert_problem(res: reqwest::Response, status: u16, code: &str) -> Value {
    assert_eq!(res.status().as_u16(), status, "status");
    assert_eq!(content_type(&res), "application/problem+json");
    let body: Value = res.json().await.expect("a JSON problem");
    assert_eq!(body["code"], code, "{body}");
    assert_eq!(body["status"], status);
    assert_eq!(body["type"], format!("urn:huit:problem:{code}"));
    assert!(body["title"].is_string());
    assert!(body["detail"].is_string());
    body
}

/// Reads server-sent events' text until `done` holds or 10 s pass.
pub async fn read_until(
    res: &mut reqwest::Response,
    text: &mut String,
    done: impl Fn(&str) -> bool,
) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !done(text) {
        let chunk = tokio::time::timeout_at(deadline, res.chunk())
            .await
            .expect("more of the stream before the deadline")
            .unwrap()
            .expect("the stream goes on");
        text.push_str(std::str::from_utf8(&chunk).unwrap());
    }
}

/// The `data:` of every complete frame of server-sent events' text (a
/// frame ends with a blank line; a chunk may end in the middle of one).
pub fn frames(text: &str) -> Vec<Value> {
    let complete = &text[..text.rfind("\n\n").map_or(0, |end| end + 2)];
    complete
        .split("\n\n")
        .filter_map(|f| f.lines().find_map(|l| l.strip_prefix("data: ")))
        .map(|d| serde_json::from_str(d).unwrap())
        .collect()
}

/// The hash of a public event (`{seq, type, v, at, prev_hash, …}` as sent)
/// recomputed with `data` in place of its own.
pub fn hash_of(event: &Value, data: &Value) -> String {
    store::chain::event_hash(
        event["prev_hash"].as_str().unwrap(),
        event["seq"].as_i64().unwrap(),
        event["type"].as_str().unwrap(),
        event["v"].as_i64().unwrap() as i32,
        event["at"].as_str().unwrap(),
        data,
    )
}

/// Players (account id and name, tokens in the same order), someone from
/// elsewhere and an admin, all logged in.
#[derive(Debug)]
pub struct Cast {
    pub players: Vec<(Uuid, String)>,
    pub tokens: Vec<String>,
    pub outsider: String,
    pub admin: String,
}

impl Cast {
    /// Registers `players`, an outsider `outsider` and an admin `admin`.
    pub async fn new(app: &TestApp, players: &[&str], outsider: &str, admin: &str) -> Self {
        let password = "correct horse battery";
        let mut cast = Cast {
            players: Vec::new(),
            tokens: Vec::new(),
            outsider: app.player_token(outsider).await,
            admin: String::new(),
        };
        for name in players {
            let account = app.register(name, password).await;
            let id: Uuid = account["id"].as_str().unwrap().parse().unwrap();
            let session = app.login(name, password).await;
            cast.players.push((id, (*name).to_owned()));
            cast.tokens
                .push(session["token"].as_str().unwrap().to_owned());
        }
        let hash = api::password::hash(password).unwrap();
        store::accounts::insert(&app.pool, admin, &hash, store::accounts::Role::Admin)
            .await
            .unwrap();
        cast.admin = app.login(admin, password).await["token"]
            .as_str()
            .unwrap()
            .to_owned();
        cast
    }
}
