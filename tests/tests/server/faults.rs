//! Fault tests, against real `huit serve` processes under load (several
//! tables, every seated player posting moves concurrently):
//! - the server killed with SIGKILL and restarted: every move answered 200
//!   is in the log, nothing half-written is;
//! - PostgreSQL (a private cluster) stopped and started again: the server
//!   answers 503 problem+json while it is away, and 2xx again by itself;
//! - two server processes on one database: one whole log per table, no seq
//!   duplicated or missing.
//!
//! After each, every table's log is checked whole: seqs 1..n without a gap,
//! the hash chain, a re-fold by the audit (`api::history::audit`), n equal to
//! the table's version, and every acknowledged move's events at their seqs
//! with their hashes.

use crate::support;

use std::collections::{BTreeMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::support::process::{Cluster, Scratch, Server};
use crate::support::{json_of, started_table, view};
use e2e::{eventually, fresh_database, TestApp};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{json, Value};
use sqlx::postgres::PgPoolOptions;
use sqlx::PgPool;
use uuid::Uuid;

/// A table under load: its id and its players' tokens.
#[derive(Debug, Clone)]
struct LoadTable {
    id: String,
    tokens: Vec<String>,
}

/// A move answered 200: its table, the version it returned and its events
/// (seq, hash).
#[derive(Debug, Clone)]
struct Ack {
    table: String,
    version: i64,
    events: Vec<(i64, String)>,
}

/// What the load's clients saw.
#[derive(Debug, Default)]
struct Tally {
    /// (request kind, status) → count.
    statuses: BTreeMap<(&'static str, u16), usize>,
    /// Requests that got no answer (refused, reset, timed out).
    transport_errors: usize,
    acks: Vec<Ack>,
    /// Answers that break the contract (a 5xx other than a 503
    /// `service_unavailable` problem+json, an unreadable 200).
    bad: Vec<String>,
}

impl Tally {
    fn count(&self, status: u16) -> usize {
        self.statuses
            .iter()
            .filter(|((_, s), _)| *s == status)
            .map(|(_, n)| n)
            .sum()
    }

    fn summary(&self) -> String {
        format!(
            "{} moves acknowledged, statuses {:?}, {} transport errors",
            self.acks.len(),
            self.statuses,
            self.transport_errors
        )
    }

    /// Fails unless every status seen is in `allowed` and no answer broke
    /// the contract.
    fn assert_only(&self, allowed: &[u16]) {
        assert!(self.bad.is_empty(), "bad answers: {:#?}", self.bad);
        for ((kind, status), n) in &self.statuses {
            assert!(
                allowed.contains(status),
                "{n} × {status} to {kind}: {:?}",
                self.statuses
            );
        }
    }
}

/// Every seated player of every table in a loop: read its view (from one of
/// the servers, at random), post one of its legal moves (with or without an
/// expected version), or long-poll the feed when it has none. Until stopped
/// or the table is finished.
struct Load {
    stop: Arc<AtomicBool>,
    tally: Arc<Mutex<Tally>>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl Load {
    fn start(
        servers: &[String],
        tables: &[LoadTable],
        clients_per_player: usize,
        seed: u64,
    ) -> Self {
        // A request that hangs this long counts as a transport error.
        let client = e2e::http_client(Duration::from_secs(20));
        let stop = Arc::new(AtomicBool::new(false));
        let tally = Arc::new(Mutex::new(Tally::default()));
        let mut tasks = Vec::new();
        for (t, table) in tables.iter().enumerate() {
            for (p, token) in table.tokens.iter().enumerate() {
                for c in 0..clients_per_player {
                    let player = Player {
                        client: client.clone(),
                        servers: servers.to_vec(),
                        table: table.id.clone(),
                        token: token.clone(),
                        tally: tally.clone(),
                        rng: StdRng::seed_from_u64(seed * 1000 + (t * 100 + p * 10 + c) as u64),
                    };
                    tasks.push(tokio::spawn(player.run(stop.clone())));
                }
            }
        }
        Self { stop, tally, tasks }
    }

    fn acks(&self) -> usize {
        self.tally.lock().unwrap().acks.len()
    }

    fn count(&self, status: u16) -> usize {
        self.tally.lock().unwrap().count(status)
    }

    /// Stops every player (each finishes its request in flight).
    async fn finish(self) -> Tally {
        self.stop.store(true, Ordering::SeqCst);
        for t in self.tasks {
            t.await.expect("a player task");
        }
        Arc::try_unwrap(self.tally)
            .expect("no player left")
            .into_inner()
            .unwrap()
    }
}

struct Player {
    client: reqwest::Client,
    servers: Vec<String>,
    table: String,
    token: String,
    tally: Arc<Mutex<Tally>>,
    rng: StdRng,
}

impl Player {
    async fn run(mut self, stop: Arc<AtomicBool>) {
        while !stop.load(Ordering::SeqCst) {
            let server = self.servers[self.rng.gen_range(0..self.servers.len())].clone();
            let Some(v) = self
                .send(
                    "view",
                    self.client
                        .get(format!("{server}/v1/tables/{}/view", self.table)),
                )
                .await
            else {
                continue;
            };
            if v["status"] != "playing" {
                return;
            }
            let version = v["version"].as_i64().expect("version");
            let moves = v["legal_moves"].as_array().expect("legal_moves");
            if moves.is_empty() {
                let url = format!(
                    "{server}/v1/tables/{}/events?after={version}&wait=1&limit=1",
                    self.table
                );
                self.send("events", self.client.get(url)).await;
                continue;
            }
            let mv = moves[self.rng.gen_range(0..moves.len())].clone();
            let mut body = json!({"move": mv});
            if self.rng.gen_bool(0.5) {
                body["expected_version"] = version.into();
            }
            let url = format!("{server}/v1/tables/{}/moves", self.table);
            if let Some(answer) = self.send("move", self.client.post(url).json(&body)).await {
                let ack = Ack {
                    table: self.table.clone(),
                    version: answer["version"].as_i64().unwrap_or(-1),
                    events: answer["events"]
                        .as_array()
                        .map(|es| {
                            es.iter()
                                .map(|e| {
                                    (
                                        e["seq"].as_i64().unwrap_or(-1),
                                        e["hash"].as_str().unwrap_or_default().to_owned(),
                                    )
                                })
                                .collect()
                        })
                        .unwrap_or_default(),
                };
                let mut tally = self.tally.lock().unwrap();
                if ack.version < 1 || ack.events.is_empty() {
                    tally
                        .bad
                        .push(format!("a move's 200 without its events: {answer}"));
                }
                tally.acks.push(ack);
            }
        }
    }

    /// Sends a request with the player's token; records how it was
    /// answered; returns the JSON of a 200.
    async fn send(&mut self, kind: &'static str, req: reqwest::RequestBuilder) -> Option<Value> {
        let res = match req.bearer_auth(&self.token).send().await {
            Ok(res) => res,
            Err(_) => {
                self.tally.lock().unwrap().transport_errors += 1;
                // The server is away (killed): do not spin.
                tokio::time::sleep(Duration::from_millis(20)).await;
                return None;
            }
        };
        let status = res.status().as_u16();
        let content_type = e2e::content_type(&res);
        let retry_after = res.headers().contains_key("retry-after");
        let body = res.text().await;
        let (json, unavailable) = self.record(kind, status, &content_type, retry_after, body);
        if unavailable {
            // As a client told `Retry-After`, but sooner (the test is short).
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        json
    }

    /// Tallies an answer; returns the JSON of a 200, and whether it was a
    /// 503.
    fn record(
        &self,
        kind: &'static str,
        status: u16,
        content_type: &str,
        retry_after: bool,
        body: reqwest::Result<String>,
    ) -> (Option<Value>, bool) {
        let mut tally = self.tally.lock().unwrap();
        let Ok(body) = body else {
            tally.transport_errors += 1;
            return (None, false);
        };
        *tally.statuses.entry((kind, status)).or_default() += 1;
        let json = serde_json::from_str::<Value>(&body).ok();
        if status >= 500 {
            let unavailable = status == 503
                && content_type == "application/problem+json"
                && retry_after
                && json
                    .as_ref()
                    .is_some_and(|j| j["code"] == "service_unavailable" && j["status"] == 503);
            if !unavailable {
                tally
                    .bad
                    .push(format!("{kind}: {status} {content_type}: {body}"));
            }
        }
        if status != 200 {
            return (None, status == 503);
        }
        if json.is_none() {
            tally
                .bad
                .push(format!("{kind}: 200 that is not JSON: {body}"));
        }
        (json, false)
    }
}

/// The URL of database `name` on the cluster of `DATABASE_URL`.
pub(crate) fn database_url(name: &str) -> String {
    let mut url = reqwest::Url::parse(&e2e::cluster_url()).expect("DATABASE_URL is a URL");
    url.set_path(name);
    url.to_string()
}

/// A [`TestApp`] talking to a server process (for the `support` helpers).
pub(crate) fn app_of(server: &Server, pool: &PgPool) -> TestApp {
    TestApp {
        address: server.address.clone(),
        client: e2e::Client::new(e2e::http_client(Duration::from_secs(20))),
        pool: pool.clone(),
        database: String::new(),
        hub: api::log::hub::CommitHub::new(),
        metrics: None,
    }
}

/// Started tables of these rule sets and sizes.
async fn open_tables(app: &TestApp, shapes: &[(&str, usize)]) -> Vec<LoadTable> {
    let mut tables = Vec::new();
    for (ruleset, n) in shapes {
        let (id, tokens) = started_table(app, ruleset, json!({}), *n).await;
        tables.push(LoadTable { id, tokens });
    }
    tables
}

/// Checks the stored log of `table` whole, and every acknowledged move of
/// it in the log; returns its version.
async fn assert_log_whole(pool: &PgPool, table: &str, acks: &[Ack]) -> i64 {
    let id: Uuid = table.parse().expect("a table id");
    let log = api::history::load(pool, id).await.expect("the log loads");
    for (i, e) in log.events.iter().enumerate() {
        assert_eq!(e.seq, i as i64 + 1, "table {table}: a gap or a duplicate");
    }
    let report = api::history::audit(&log);
    assert!(
        report.ok && report.chain_valid,
        "{}",
        api::history::audit_text(&api::history::Source::Table(id), &report)
    );
    assert_eq!(log.events.len() as i64, log.version, "the table's version");
    let mut acknowledged = HashSet::new();
    for ack in acks.iter().filter(|a| a.table == table) {
        assert_eq!(
            ack.events.last().map(|e| e.0),
            Some(ack.version),
            "a move's answer ends at its version: {ack:?}"
        );
        for (seq, hash) in &ack.events {
            assert!(
                acknowledged.insert(*seq),
                "table {table}: seq {seq} acknowledged to two moves"
            );
            let stored = usize::try_from(*seq - 1)
                .ok()
                .and_then(|i| log.events.get(i))
                .unwrap_or_else(|| panic!("table {table}: acknowledged seq {seq} is lost"));
            assert_eq!(
                &stored.hash, hash,
                "table {table}: seq {seq} is not what was answered"
            );
        }
    }
    log.version
}

/// Every table of the database: `version` events, seqs 1..=version.
async fn assert_every_log_continuous(pool: &PgPool) {
    let broken: Vec<(Uuid, i64, i64, i64)> = sqlx::query_as(
        r#"SELECT t.id, t.version, count(e.seq), coalesce(max(e.seq), 0)
           FROM game_tables t LEFT JOIN events e ON e.table_id = t.id
           GROUP BY t.id, t.version
           HAVING count(e.seq) <> t.version OR coalesce(max(e.seq), 0) <> t.version
              OR count(DISTINCT e.seq) <> count(e.seq) OR coalesce(min(e.seq), 1) <> 1"#,
    )
    .fetch_all(pool)
    .await
    .expect("the check runs");
    assert!(
        broken.is_empty(),
        "(table, version, events, max seq): {broken:?}"
    );
}

/// The version a server answers for a table.
async fn served_version(app: &TestApp, token: &str, table: &str) -> i64 {
    view(app, token, table).await["version"]
        .as_i64()
        .expect("version")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_killed_under_load_keeps_every_acknowledged_move_and_no_half_move() {
    let scratch = Scratch::new("kill9");
    let (db, _, pool) = fresh_database().await;
    let url = database_url(&db);
    let mut server = Server::start(&scratch, "huit-0", &url, &[]).await;
    let tables = open_tables(
        &app_of(&server, &pool),
        &[("classique", 2), ("moderne", 3), ("classique", 4)],
    )
    .await;
    let mut acks = Vec::new();
    for kill in 1..=3u64 {
        let load = Load::start(&[server.address.clone()], &tables, 1, kill);
        let target = 15;
        let l = &load;
        let reached = eventually(Duration::from_secs(90), || async move {
            (l.acks() >= target).then_some(())
        })
        .await;
        // Killed while the players' next requests are in flight.
        server.kill9();
        let tally = load.finish().await;
        assert!(
            reached.is_some(),
            "{target} moves in 90 s: {}",
            tally.summary()
        );
        tally.assert_only(&[200, 409, 422]);
        acks.extend(tally.acks);

        server = Server::start(&scratch, &format!("huit-{kill}"), &url, &[]).await;
        let app = app_of(&server, &pool);
        for t in &tables {
            let version = assert_log_whole(&pool, &t.id, &acks).await;
            // The new process folds the log to the same table.
            assert_eq!(served_version(&app, &t.tokens[0], &t.id).await, version);
        }
    }

    // The log goes on where it stopped: a move on every table still playing.
    let app = app_of(&server, &pool);
    for t in &tables {
        let v = view(&app, &t.tokens[0], &t.id).await;
        if v["status"] != "playing" {
            continue;
        }
        let seat = v["current_seat"].as_u64().expect("a seat on turn") as usize;
        let mine = view(&app, &t.tokens[seat], &t.id).await;
        let mv = mine["legal_moves"][0].clone();
        let version = mine["version"].as_i64().unwrap();
        let answer = json_of(
            support::play(&app, &t.tokens[seat], &t.id, &mv, Some(version)).await,
            200,
        )
        .await;
        assert!(answer["version"].as_i64().unwrap() > version);
        assert_log_whole(&pool, &t.id, &acks).await;
    }
    assert_every_log_continuous(&pool).await;

    // `huit audit` agrees.
    for t in &tables {
        let out = std::process::Command::new(crate::support::process::huit_bin())
            .args(["audit", &t.id])
            .env("DATABASE_URL", &url)
            .output()
            .expect("huit audit runs");
        assert!(
            out.status.success(),
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_restarted_under_load_gives_503_then_the_server_recovers_by_itself() {
    let scratch = Scratch::new("pg-restart");
    let cluster = Cluster::start(&scratch).await;
    let url = cluster.url("postgres");
    let mut server = Server::start(
        &scratch,
        "huit",
        &url,
        &[("HUIT_DB_ACQUIRE_TIMEOUT_SECS", "1")],
    )
    .await;
    let pool = PgPoolOptions::new()
        .max_connections(2)
        .acquire_timeout(Duration::from_secs(10))
        .connect_lazy(&url)
        .expect("the URL parses");
    let app = app_of(&server, &pool);
    let tables = open_tables(&app, &[("classique", 2), ("moderne", 3)]).await;
    let watcher = app.player_token("watcher").await;
    let mut acks = Vec::new();

    for (cycle, mode) in [(1u64, "fast"), (2, "immediate")] {
        let load = Load::start(&[server.address.clone()], &tables, 1, cycle);
        let l = &load;
        let reached = eventually(Duration::from_secs(90), || async move {
            (l.acks() >= 10).then_some(())
        })
        .await;
        assert!(reached.is_some(), "moves before the stop");

        pool.close().await;
        cluster.stop(mode).await;

        // While PostgreSQL is away, each kind of request is answered 503
        // problem+json with Retry-After, within the client's timeout.
        let t = &tables[0];
        let probes = [
            app.client.get(app.url("/healthz")),
            app.client.get(app.url("/v1/me")).bearer_auth(&watcher),
            app.client
                .get(app.url(&format!("/v1/tables/{}/view", t.id)))
                .bearer_auth(&t.tokens[0]),
            app.client
                .post(app.url(&format!("/v1/tables/{}/moves", t.id)))
                .bearer_auth(&t.tokens[0])
                .json(&json!({"move": {"type": "draw"}})),
            app.client
                .post(app.url("/v1/sessions"))
                .json(&json!({"username": "watcher", "password": "correct horse battery"})),
            app.client.post(app.url("/v1/accounts")).json(
                &json!({"username": format!("late{cycle}"), "password": "correct horse battery"}),
            ),
        ];
        for probe in probes {
            let res = probe.send().await.expect("an answer, not a hang");
            assert!(res.headers().contains_key("retry-after"));
            e2e::assert_problem(res, 503, "service_unavailable").await;
        }
        // The load's clients get 503s too, and the process stays up.
        let before = load.count(503);
        let seen = eventually(Duration::from_secs(30), || async move {
            (l.count(503) >= before + 5).then_some(())
        })
        .await;
        assert!(seen.is_some(), "the load is answered 503");
        assert!(
            server.exited().is_none(),
            "the server died: {}",
            server.log_tail()
        );

        cluster.restart().await;
        let a = &app;
        let healthy = eventually(Duration::from_secs(60), || async move {
            let res = a.client.get(a.url("/healthz")).send().await.ok()?;
            (res.status() == 200).then_some(())
        })
        .await;
        assert!(healthy.is_some(), "healthz is 200 again");
        let acked = load.acks();
        let resumed = eventually(Duration::from_secs(90), || async move {
            (l.acks() >= acked + 10).then_some(())
        })
        .await;
        let tally = load.finish().await;
        assert!(
            resumed.is_some(),
            "moves go through again: {}",
            tally.summary()
        );
        tally.assert_only(&[200, 409, 422, 503]);
        assert_eq!(tally.transport_errors, 0, "every request is answered");
        acks.extend(tally.acks);

        let pool = PgPoolOptions::new()
            .max_connections(2)
            .connect(&url)
            .await
            .expect("PostgreSQL is back");
        for t in &tables {
            let version = assert_log_whole(&pool, &t.id, &acks).await;
            assert_eq!(served_version(&app, &t.tokens[0], &t.id).await, version);
        }
        pool.close().await;
    }
    assert!(
        server.exited().is_none(),
        "the server died: {}",
        server.log_tail()
    );
    let pool = PgPoolOptions::new()
        .max_connections(2)
        .connect(&url)
        .await
        .expect("PostgreSQL is back");
    assert_every_log_continuous(&pool).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_server_processes_under_load_keep_every_seq_once() {
    let scratch = Scratch::new("two-procs");
    let (db, _, pool) = fresh_database().await;
    let url = database_url(&db);
    let a = Server::start(&scratch, "huit-a", &url, &[]).await;
    let b = Server::start(&scratch, "huit-b", &url, &[]).await;
    let (app_a, app_b) = (app_of(&a, &pool), app_of(&b, &pool));
    let mut tables = open_tables(&app_a, &[("classique", 2), ("moderne", 3)]).await;
    tables.extend(open_tables(&app_b, &[("classique", 4), ("moderne", 2)]).await);

    // Two clients per player, each request to either process: the two
    // clients of the player on turn race with the same move.
    let load = Load::start(&[a.address.clone(), b.address.clone()], &tables, 2, 7);
    let l = &load;
    let reached = eventually(Duration::from_secs(120), || async move {
        (l.acks() >= 120).then_some(())
    })
    .await;
    let tally = load.finish().await;
    assert!(reached.is_some(), "120 moves in 120 s: {}", tally.summary());
    tally.assert_only(&[200, 409, 422]);
    assert_eq!(tally.transport_errors, 0, "{}", tally.summary());
    assert!(
        tally.count(409) + tally.count(422) > 0,
        "the clients raced: {}",
        tally.summary()
    );

    for t in &tables {
        let version = assert_log_whole(&pool, &t.id, &tally.acks).await;
        assert_eq!(served_version(&app_a, &t.tokens[0], &t.id).await, version);
        assert_eq!(served_version(&app_b, &t.tokens[0], &t.id).await, version);
    }
    assert_every_log_continuous(&pool).await;
}

/// D37, D38: a deadline lives in the database: the server that set it is
/// killed before it passes, another one started later fires it, once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deadline_set_before_the_server_was_killed_fires_after_a_restart() {
    let scratch = Scratch::new("deadline");
    let (db, _, pool) = fresh_database().await;
    let url = database_url(&db);
    let env = [("HUIT_DUE_POLL_MS", "50"), ("HUIT_BOT_DELAY_MS", "0")];
    let mut server = Server::start(&scratch, "huit-a", &url, &env).await;
    let app = app_of(&server, &pool);
    let mut tokens = Vec::new();
    for name in ["clock_a", "clock_b"] {
        tokens.push(app.player_token(name).await);
    }
    let body = json!({"ruleset": "classique", "seats": 2, "clock": {"turn_seconds": 5}});
    let res = app
        .client
        .post(app.url("/v1/tables"))
        .bearer_auth(&tokens[0])
        .json(&body)
        .send()
        .await
        .expect("sent");
    let id = json_of(res, 201).await["id"].as_str().unwrap().to_owned();
    for (token, path) in [(&tokens[1], "players"), (&tokens[0], "start")] {
        let res = app
            .client
            .post(app.url(&format!("/v1/tables/{id}/{path}")))
            .bearer_auth(token)
            .send()
            .await
            .expect("sent");
        json_of(res, 200).await;
    }
    // Killed at once, long before the 5 s deadline.
    server.kill9();
    let timeouts = |pool: PgPool, id: String| async move {
        sqlx::query_scalar::<_, i64>(
            "SELECT count(*) FROM events WHERE table_id = $1::uuid AND type = 'turn_timed_out'",
        )
        .bind(id)
        .fetch_one(&pool)
        .await
        .expect("counted")
    };
    assert_eq!(timeouts(pool.clone(), id.clone()).await, 0);
    let server = Server::start(&scratch, "huit-b", &url, &env).await;
    let fired = eventually(Duration::from_secs(20), || {
        let (pool, id) = (pool.clone(), id.clone());
        async move { (timeouts(pool, id).await > 0).then_some(()) }
    })
    .await;
    assert!(
        fired.is_some(),
        "the restarted server fired the deadline: {}",
        server.log_tail()
    );
    assert_eq!(timeouts(pool.clone(), id.clone()).await, 1, "fired once");
}

/// Quick play (docs/API.md "Finding a game"), two server processes on one
/// database, every caller at once through either: nobody is seated twice,
/// every table but one is full and started, and one table of the setting
/// is left waiting, the fewest possible.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_processes_serving_quick_play_seat_everyone_once_at_the_fewest_tables() {
    let scratch = Scratch::new("quickplay");
    let (db, _, pool) = fresh_database().await;
    let url = database_url(&db);
    let a = Server::start(&scratch, "huit-a", &url, &[]).await;
    let b = Server::start(&scratch, "huit-b", &url, &[]).await;
    let apps = [app_of(&a, &pool), app_of(&b, &pool)];
    const CALLERS: usize = 14;
    const SEATS: usize = 4;
    let mut tokens = Vec::new();
    for i in 0..CALLERS {
        tokens.push(apps[i % 2].player_token(&format!("quick{i}")).await);
    }
    let body = json!({"ruleset": "classique", "seats": SEATS});
    let answers = futures_util::future::join_all(tokens.iter().enumerate().map(|(i, token)| {
        let (app, body) = (&apps[i % 2], &body);
        async move {
            let res = app
                .client
                .post(app.url("/v1/quickplay"))
                .bearer_auth(token)
                .json(body)
                .send()
                .await
                .expect("sent");
            json_of(res, 200).await["id"].as_str().unwrap().to_owned()
        }
    }))
    .await;
    let tables: HashSet<&String> = answers.iter().collect();
    assert_eq!(tables.len(), CALLERS.div_ceil(SEATS), "{answers:?}");
    let seated: Vec<(Uuid, i64)> = sqlx::query_as(
        "SELECT table_id, count(*) FROM table_players GROUP BY table_id ORDER BY count(*) DESC",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    let counts: Vec<i64> = seated.iter().map(|(_, n)| *n).collect();
    assert_eq!(counts, [4, 4, 4, 2]);
    let rows: i64 = sqlx::query_scalar("SELECT count(DISTINCT account_id) FROM table_players")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(rows as usize, CALLERS, "everyone seated once");
    let statuses: Vec<String> =
        sqlx::query_scalar("SELECT status FROM game_tables ORDER BY status")
            .fetch_all(&pool)
            .await
            .unwrap();
    assert_eq!(statuses, ["playing", "playing", "playing", "waiting"]);
    for id in tables {
        assert_log_whole(&pool, id, &[]).await;
    }
}

/// Quick play's bots are due in the database: the server that opened the
/// table is killed before they are, another one started later seats them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quick_plays_bots_come_after_a_restart() {
    let scratch = Scratch::new("bots-after");
    let (db, _, pool) = fresh_database().await;
    let url = database_url(&db);
    let env = [("HUIT_DUE_POLL_MS", "50"), ("HUIT_BOT_DELAY_MS", "0")];
    let mut server = Server::start(&scratch, "huit-a", &url, &env).await;
    let app = app_of(&server, &pool);
    let token = app.player_token("waiting_alone").await;
    let body = json!({"ruleset": "classique", "seats": 3, "bots_after": 2});
    let res = app
        .client
        .post(app.url("/v1/quickplay"))
        .bearer_auth(&token)
        .json(&body)
        .send()
        .await
        .expect("sent");
    let id = json_of(res, 200).await["id"].as_str().unwrap().to_owned();
    server.kill9();
    let status = |pool: PgPool, id: String| async move {
        sqlx::query_scalar::<_, String>("SELECT status FROM game_tables WHERE id = $1::uuid")
            .bind(id)
            .fetch_one(&pool)
            .await
            .expect("read")
    };
    assert_eq!(status(pool.clone(), id.clone()).await, "waiting");
    let server = Server::start(&scratch, "huit-b", &url, &env).await;
    let started = eventually(Duration::from_secs(20), || {
        let (pool, id) = (pool.clone(), id.clone());
        async move { (status(pool, id).await == "playing").then_some(()) }
    })
    .await;
    assert!(started.is_some(), "the bots came: {}", server.log_tail());
    let bots: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM events WHERE table_id = $1::uuid AND type = 'bot_seated'",
    )
    .bind(&id)
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!(bots, 2, "seated once");
    assert_log_whole(&pool, &id, &[]).await;
}

/// Webhooks survive a crash mid-delivery (docs/API.md "Finding a game and
/// coming back"): the server is killed while its receiver holds the first
/// request; once it is started again, every feed item arrives, each
/// account's in order, verified, the one in flight at worst twice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhooks_killed_mid_delivery_lose_nothing_and_keep_each_accounts_order() {
    use crate::support::receiver::Receiver;
    use crate::webhooks::{delivered, SECRET};
    let receiver = Receiver::start().await;
    // The first request is held far past the kill.
    receiver.answer(&[(200, Duration::from_secs(60))]);
    let scratch = Scratch::new("webhooks-kill9");
    let (db, _, pool) = fresh_database().await;
    let url = database_url(&db);
    let env = [
        ("HUIT_WEBHOOK_URL", receiver.url.as_str()),
        ("HUIT_WEBHOOK_SECRET", SECRET),
        ("HUIT_WEBHOOK_RETRY_SCHEDULE", "200ms,200ms,200ms"),
        ("HUIT_WEBHOOK_TIMEOUT_SECS", "120"),
    ];
    let mut server = Server::start(&scratch, "huit-0", &url, &env).await;
    let app = app_of(&server, &pool);
    let (id, tokens) = started_table(&app, "classique", json!({"target": 100000}), 2).await;
    eventually(Duration::from_secs(10), || async {
        (!receiver.got().is_empty()).then_some(())
    })
    .await
    .expect("a delivery in flight");
    let in_flight = receiver.got()[0].id.clone();
    server.kill9();

    let server = Server::start(&scratch, "huit-1", &url, &env).await;
    let app = app_of(&server, &pool);
    // More items, through the new process.
    for _ in 0..4 {
        let v = view(&app, &tokens[0], &id).await;
        let seat = v["current_seat"].as_u64().unwrap() as usize;
        let mine = view(&app, &tokens[seat], &id).await;
        let (mv, version) = (&mine["legal_moves"][0], mine["version"].as_i64());
        json_of(
            support::play(&app, &tokens[seat], &id, mv, version).await,
            200,
        )
        .await;
    }
    let items: i64 = sqlx::query_scalar("SELECT count(*) FROM feed_items")
        .fetch_one(&pool)
        .await
        .unwrap();
    let all = eventually(Duration::from_secs(30), || async {
        let got = receiver.got();
        let ids: HashSet<&str> = got.iter().map(|r| r.id.as_str()).collect();
        (ids.len() as i64 == items).then_some(got)
    })
    .await
    .expect("every item arrives after the restart");
    let copies = all.iter().filter(|r| r.id == in_flight).count();
    assert!(
        (1..=2).contains(&copies),
        "the item in flight, at worst twice"
    );
    for (account, sent) in delivered(&all) {
        let ids: Vec<i64> = sent
            .iter()
            .map(|b| b["data"]["id"].as_i64().unwrap())
            .collect();
        let stored: Vec<i64> =
            sqlx::query_scalar("SELECT id FROM feed_items WHERE account_id = $1::uuid ORDER BY id")
                .bind(&account)
                .fetch_all(&pool)
                .await
                .unwrap();
        assert_eq!(ids, stored, "every item of {account}, in order");
    }
}
