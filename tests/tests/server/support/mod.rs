//! Helpers of the tests: requests, tables and games over HTTP, and real
//! server processes ([`process`]).

pub mod process;
pub mod push_fakes;
pub mod receiver;
pub mod tls;

use std::time::Duration;

use api::config::Settings;
use api::startup::{self, Application};
use e2e::{cluster_url, TestApp};
use serde_json::{json, Value};

/// A request with the bearer token.
pub async fn get(app: &TestApp, token: &str, path: &str) -> reqwest::Response {
    app.get_as(path, token).await
}

pub async fn post(app: &TestApp, token: &str, path: &str, body: &Value) -> reqwest::Response {
    app.client
        .post(app.url(path))
        .bearer_auth(token)
        .json(body)
        .send()
        .await
        .expect("request sent")
}

pub async fn post_empty(app: &TestApp, token: &str, path: &str) -> reqwest::Response {
    app.client
        .post(app.url(path))
        .bearer_auth(token)
        .send()
        .await
        .expect("request sent")
}

/// A long poll of a view: `GET …/view?wait=` with `If-None-Match` when
/// given; a future of its own (to spawn), sent when first polled.
pub fn view_poll(
    app: &TestApp,
    id: &str,
    token: &str,
    etag: Option<&str>,
    wait: u64,
) -> impl std::future::Future<Output = reqwest::Response> + Send + 'static {
    let mut req = app
        .client
        .get(app.url(&format!("/v1/tables/{id}/view?wait={wait}")))
        .bearer_auth(token);
    if let Some(etag) = etag {
        req = req.header("if-none-match", etag);
    }
    async move { req.send().await.expect("request sent") }
}

pub async fn delete(app: &TestApp, token: &str, path: &str) -> reqwest::Response {
    app.client
        .delete(app.url(path))
        .bearer_auth(token)
        .send()
        .await
        .expect("request sent")
}

/// The JSON of a response, asserting its status.
pub async fn json_of(res: reqwest::Response, status: u16) -> Value {
    let got = res.status().as_u16();
    let body = res.text().await.expect("a body");
    assert_eq!(got, status, "{body}");
    serde_json::from_str(&body).expect("JSON")
}

/// Opens a table; returns its summary.
pub async fn create_table(
    app: &TestApp,
    token: &str,
    ruleset: &str,
    options: Value,
    seats: u32,
) -> Value {
    let res = post(
        app,
        token,
        "/v1/tables",
        &json!({"ruleset": ruleset, "options": options, "seats": seats}),
    )
    .await;
    json_of(res, 201).await
}

/// A table of `ruleset` and `seats` opened by `tokens[0]`, the others
/// seated in order: its id.
pub async fn seated_table(
    app: &TestApp,
    tokens: &[&str],
    ruleset: &str,
    options: Value,
    seats: u32,
) -> String {
    let table = create_table(app, tokens[0], ruleset, options, seats).await;
    let id = table["id"].as_str().expect("id").to_owned();
    for t in &tokens[1..] {
        json_of(
            post_empty(app, t, &format!("/v1/tables/{id}/players")).await,
            200,
        )
        .await;
    }
    id
}

/// Its creator starts a table: the summary.
pub async fn start(app: &TestApp, creator: &str, id: &str) -> Value {
    json_of(
        post_empty(app, creator, &format!("/v1/tables/{id}/start")).await,
        200,
    )
    .await
}

/// A `classique` table of `seats` opened by `tokens[0]`, the others seated
/// in order, started when `start`: its id.
pub async fn table_of(app: &TestApp, tokens: &[&str], seats: u32, started: bool) -> String {
    let id = seated_table(app, tokens, "classique", json!({}), seats).await;
    if started {
        start(app, tokens[0], &id).await;
    }
    id
}

/// A two-seat game of `a` and `b`: each makes a move of their own, then
/// `b` resigns, so that it is over (and rated, unless a guest sits
/// there): its id.
pub async fn finished_game(app: &TestApp, a: &str, b: &str) -> String {
    let id = table_of(app, &[a, b], 2, true).await;
    each_moves(app, &[a.to_owned(), b.to_owned()], &id).await;
    json_of(
        post_empty(app, b, &format!("/v1/tables/{id}/resign")).await,
        200,
    )
    .await;
    assert_eq!(view(app, a, &id).await["status"], "finished");
    id
}

/// A started table with `n` players (tokens in seat order).
pub async fn started_table(
    app: &TestApp,
    ruleset: &str,
    options: Value,
    n: usize,
) -> (String, Vec<String>) {
    let tokens = players(app, n).await;
    let seated: Vec<&str> = tokens.iter().map(String::as_str).collect();
    let id = seated_table(app, &seated, ruleset, options, n as u32).await;
    assert_eq!(start(app, &tokens[0], &id).await["status"], "playing");
    (id, tokens)
}

pub async fn view(app: &TestApp, token: &str, id: &str) -> Value {
    json_of(get(app, token, &format!("/v1/tables/{id}/view")).await, 200).await
}

/// `n` new players' tokens.
pub async fn players(app: &TestApp, n: usize) -> Vec<String> {
    let mut tokens = Vec::new();
    for i in 0..n {
        let name = format!("p{i}_{}", &uuid::Uuid::new_v4().simple().to_string()[..8]);
        tokens.push(app.player_token(&name).await);
    }
    tokens
}

/// The username of `token`'s account.
pub async fn username(app: &TestApp, token: &str) -> String {
    let me = json_of(get(app, token, "/v1/me").await, 200).await;
    me["username"].as_str().unwrap().to_owned()
}

/// The seats on turn play (their first legal move) until every seat of
/// `tokens` has made a move of its own (D43: a rated game is one that
/// people played). A fixed number of moves would not do: a seat that
/// draws a card it can play is on turn again.
pub async fn each_moves(app: &TestApp, tokens: &[String], id: &str) {
    let mut moved = vec![false; tokens.len()];
    while moved.contains(&false) {
        let v = view(app, &tokens[0], id).await;
        let seat = v["current_seat"].as_u64().expect("a seat on turn") as usize;
        let mine = view(app, &tokens[seat], id).await;
        let (mv, version) = (&mine["legal_moves"][0], mine["version"].as_i64());
        json_of(play(app, &tokens[seat], id, mv, version).await, 200).await;
        moved[seat] = true;
    }
}

/// Posts a move; returns the response.
pub async fn play(
    app: &TestApp,
    token: &str,
    id: &str,
    mv: &Value,
    expected: Option<i64>,
) -> reqwest::Response {
    let mut body = json!({"move": mv});
    if let Some(v) = expected {
        body["expected_version"] = v.into();
    }
    post(app, token, &format!("/v1/tables/{id}/moves"), &body).await
}

/// Every event of a table as `token` sees it, through `/events` pages.
pub async fn all_events(app: &TestApp, token: &str, id: &str) -> Vec<Value> {
    let mut out = Vec::new();
    let mut after = 0;
    loop {
        let page = json_of(
            get(
                app,
                token,
                &format!("/v1/tables/{id}/events?after={after}&limit=500"),
            )
            .await,
            200,
        )
        .await;
        let events = page["events"].as_array().expect("events").clone();
        if events.is_empty() {
            return out;
        }
        after = page["next"].as_i64().expect("next");
        out.extend(events);
    }
}

/// A new administrator's token.
pub async fn admin_token(app: &TestApp) -> String {
    let name = format!("admin_{}", &uuid::Uuid::new_v4().simple().to_string()[..8]);
    let hash = api::password::hash("correct horse battery").unwrap();
    store::accounts::insert(&app.pool, &name, &hash, store::accounts::Role::Admin)
        .await
        .unwrap();
    app.login(&name, "correct horse battery").await["token"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// The audit of a table, as an administrator reads it.
pub async fn audit(app: &TestApp, id: &str) -> Value {
    let token = admin_token(app).await;
    json_of(
        get(app, &token, &format!("/v1/admin/tables/{id}/audit")).await,
        200,
    )
    .await
}

/// A second server process on the database of `app` (its own pool, cache
/// and LISTEN connection).
pub async fn spawn_second_process(app: &TestApp) -> TestApp {
    let mut settings = Settings::with_database_url(cluster_url());
    settings.bind = "127.0.0.1:0".into();
    settings.workers = Some(1);
    settings.db_max_connections = 5;
    let options = (*app.pool.connect_options()).clone();
    let pool = startup::pool_options(&settings).connect_lazy_with(options);
    let server = Application::build(settings, pool)
        .await
        .expect("the second app builds");
    let address = format!("http://127.0.0.1:{}", server.port());
    let hub = server.hub();
    tokio::spawn(server.run_until_stopped());
    TestApp {
        address,
        client: e2e::Client::new(e2e::http_client(Duration::from_secs(30))),
        pool: app.pool.clone(),
        database: app.database.clone(),
        hub,
        metrics: None,
    }
}

/// An app served by `huit serve` in a child process of its own (with `env`
/// added), on a fresh database, with `/metrics` on a port of its own: for
/// what is one per process, the metrics recorder. Kept alive by `_server`
/// and `_scratch`.
#[derive(Debug)]
pub struct ProcessApp {
    pub app: TestApp,
    _server: process::Server,
    _scratch: process::Scratch,
}

pub async fn spawn_process_app(name: &str, env: &[(&str, &str)]) -> ProcessApp {
    let scratch = process::Scratch::new(name);
    let (database, _, pool) = e2e::fresh_database().await;
    let mut url = reqwest::Url::parse(&cluster_url()).expect("DATABASE_URL is a URL");
    url.set_path(&database);
    // The metrics listener on a port the system chooses, read from the log
    // as the server's own (one chosen here could be taken before it binds).
    let mut env = env.to_vec();
    env.push(("HUIT_METRICS_BIND", "127.0.0.1:0"));
    let server = process::Server::start(&scratch, name, url.as_str(), &env).await;
    ProcessApp {
        app: TestApp {
            address: server.address.clone(),
            client: e2e::Client::new(e2e::http_client(Duration::from_secs(30))),
            pool,
            database,
            hub: api::log::hub::CommitHub::new(),
            metrics: server.metrics.clone(),
        },
        _server: server,
        _scratch: scratch,
    }
}

/// Everything a client can read of `tables`, as `reader` (a player of
/// them), an admin and anyone: each answer's text, by what it was.
pub async fn every_read(
    app: &TestApp,
    reader: &str,
    admin: &str,
    tables: &[&str],
) -> Vec<(String, String)> {
    let mut paths = vec![
        (reader.to_owned(), "/v1/me/tables".to_owned()),
        (reader.to_owned(), "/v1/tables?mine=true".to_owned()),
        (reader.to_owned(), "/v1/tables".to_owned()),
        (reader.to_owned(), "/v1/me/feed".to_owned()),
        (reader.to_owned(), "/v1/me/disputes".to_owned()),
        (reader.to_owned(), "/v1/me/export".to_owned()),
        (admin.to_owned(), "/v1/admin/disputes".to_owned()),
        (reader.to_owned(), "/v1/leaderboards/classique".to_owned()),
    ];
    for id in tables {
        for path in [
            format!("/v1/tables/{id}"),
            format!("/v1/tables/{id}/view"),
            format!("/v1/tables/{id}/events?after=0&limit=500"),
            format!("/v1/tables/{id}/rounds"),
            format!("/v1/tables/{id}/rounds/1/replay"),
            format!("/v1/tables/{id}/log"),
        ] {
            paths.push((reader.to_owned(), path));
        }
        paths.push((admin.to_owned(), format!("/v1/admin/tables/{id}/audit")));
    }
    let mut answers = Vec::new();
    for (token, path) in paths {
        let res = get(app, &token, &path).await;
        let status = res.status();
        let text = res.text().await.unwrap();
        answers.push((format!("{path} ({status})"), text));
    }
    let disputes = json_of(get(app, admin, "/v1/admin/disputes").await, 200).await;
    for d in disputes["disputes"].as_array().unwrap() {
        let path = format!("/v1/admin/disputes/{}", d["id"].as_str().unwrap());
        let text = get(app, admin, &path).await.text().await.unwrap();
        answers.push((path, text));
    }
    answers
}
