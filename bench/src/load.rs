//! The load: the baseline first, then real games over HTTP.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use hyper::header::HeaderValue;
use hyper::Uri;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{json, Value};

use crate::conn::{bearer, Conn, Server};
use crate::Error;

#[derive(clap::Args)]
pub struct RunArgs {
    /// The API under test.
    #[arg(long, default_value = "http://127.0.0.1:8080")]
    base_url: String,
    /// The baseline server (`loadgen baseline-server`); skipped when absent.
    #[arg(long)]
    baseline_url: Option<String>,
    #[arg(long, default_value_t = 16)]
    tables: usize,
    /// Players per table (tables × players play at once).
    #[arg(long, default_value_t = 4)]
    players: usize,
    /// How long the games are played.
    #[arg(long, default_value_t = 20)]
    seconds: u64,
    /// How long the baseline is measured (with as many clients as players).
    #[arg(long, default_value_t = 10)]
    baseline_seconds: u64,
    #[arg(long, default_value = "classique")]
    ruleset: String,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// How a waiting player follows its table: `view` (long polls of its
    /// view: one request per change), `view-stream` (one `/view/stream`
    /// for the whole run), `poll` (long polls of `/events`, and its view
    /// when they concern it) or `stream` (one `/events/stream` for the whole
    /// run, and its view when an event concerns it).
    #[arg(long, value_enum, default_value_t = Follow::View)]
    follow: Follow,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Follow {
    Poll,
    View,
    ViewStream,
    Stream,
}

/// What one client saw.
#[derive(Default)]
struct Tally {
    latencies_ms: Vec<f64>,
    /// Status → count, for every answer that was not 2xx (or 304).
    refused: BTreeMap<u16, u64>,
    requests: u64,
    finished_games: u64,
}

impl Tally {
    fn merge(&mut self, other: Tally) {
        self.latencies_ms.extend(other.latencies_ms);
        for (k, v) in other.refused {
            *self.refused.entry(k).or_default() += v;
        }
        self.requests += other.requests;
        self.finished_games += other.finished_games;
    }

    fn note(&mut self, status: reqwest::StatusCode) {
        self.requests += 1;
        if !status.is_success() && status != reqwest::StatusCode::NOT_MODIFIED {
            *self.refused.entry(status.as_u16()).or_default() += 1;
        }
    }

    fn errors(&self) -> u64 {
        self.refused.values().sum()
    }
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((p * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len()) - 1;
    sorted[i]
}

pub async fn run(args: RunArgs) -> std::io::Result<()> {
    match run_inner(args).await {
        Ok(()) => Ok(()),
        Err(e) => Err(std::io::Error::other(e.to_string())),
    }
}

async fn run_inner(args: RunArgs) -> Result<(), Error> {
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(256)
        .timeout(Duration::from_secs(60))
        .build()?;
    let concurrency = args.tables * args.players;

    // The baseline is measured half before the games and half after, so
    // that a drift of the machine (this VM's disk and CPU vary by ×4 within
    // minutes) weighs on both figures alike.
    let half = Duration::from_secs_f64(args.baseline_seconds as f64 / 2.0);
    let cpu_before = CpuTimes::now();
    let baseline_server = match &args.baseline_url {
        Some(url) => Some(Server::of(url).await?),
        None => None,
    };
    let mut baseline = match &baseline_server {
        Some(server) => Some(baseline_load(server, concurrency, half).await),
        None => None,
    };
    let cpu_baseline_first = CpuTimes::since_then(cpu_before);
    let seats = setup(&client, &args).await?;
    let server = Server::of(&args.base_url).await?;
    eprintln!(
        "loadgen: {} tables × {} players started; playing for {} s, following by {:?}",
        args.tables, args.players, args.seconds, args.follow
    );
    let cpu_before = CpuTimes::now();
    let started = Instant::now();
    let deadline = started + Duration::from_secs(args.seconds);
    let mut tasks = Vec::new();
    for (i, (table, token)) in seats.into_iter().enumerate() {
        let client = client.clone();
        let server = server.clone();
        let base = args.base_url.clone();
        let seed = args.seed * 1_000_003 + i as u64;
        let follow = args.follow;
        tasks.push(tokio::spawn(async move {
            let conn = Conn::new(server);
            play(&client, conn, &base, &table, &token, deadline, seed, follow).await
        }));
    }
    let mut tally = Tally::default();
    for t in tasks {
        tally.merge(t.await?);
    }
    let secs = started.elapsed().as_secs_f64();
    if let Some(shares) = CpuTimes::since_then(cpu_before) {
        // What the machine did meanwhile: on a shared VM, `steal` is the
        // time the hypervisor gave our cores to others.
        eprintln!("loadgen: during the games {shares}");
    }
    let mut l = std::mem::take(&mut tally.latencies_ms);
    l.sort_by(f64::total_cmp);
    let moves_per_sec = l.len() as f64 / secs;
    let (p50, p95, p99) = (
        percentile(&l, 0.5),
        percentile(&l, 0.95),
        percentile(&l, 0.99),
    );
    if let (Some(server), Some((before, rows_before, secs_before))) =
        (&baseline_server, &mut baseline)
    {
        let cpu_before = CpuTimes::now();
        let (after, rows_after, secs_after) = baseline_load(server, concurrency, half).await;
        let cpu_second = CpuTimes::since_then(cpu_before);
        eprintln!(
            "loadgen: baseline before the games {:.0} rows/s ({}), after {:.0} rows/s ({})",
            *rows_before as f64 / *secs_before,
            cpu_baseline_first.as_deref().unwrap_or("cpu unknown"),
            rows_after as f64 / secs_after,
            cpu_second.as_deref().unwrap_or("cpu unknown"),
        );
        before.merge(after);
        *rows_before += rows_after;
        *secs_before += secs_after;
    }
    let baseline_per_sec = baseline
        .as_ref()
        .map_or(0.0, |(_, rows, secs)| *rows as f64 / secs);
    if let Some((b, _, _)) = &baseline {
        let mut l = b.latencies_ms.clone();
        l.sort_by(f64::total_cmp);
        println!(
            "baseline: clients={concurrency} requests={} per_sec={baseline_per_sec:.0} p50_ms={:.2} p99_ms={:.2} non_2xx={:?}",
            b.requests,
            percentile(&l, 0.5),
            percentile(&l, 0.99),
            b.refused
        );
    }
    println!(
        "moves: players={concurrency} follow={:?} moves={} seconds={secs:.1} per_sec={moves_per_sec:.0} p50_ms={p50:.2} p95_ms={p95:.2} p99_ms={p99:.2} requests={} games_finished={} non_2xx={:?}",
        args.follow,
        l.len(),
        tally.requests,
        tally.finished_games,
        tally.refused
    );
    let errors = tally.errors() + baseline.as_ref().map_or(0, |(b, _, _)| b.errors());
    let ratio = if baseline_per_sec > 0.0 {
        moves_per_sec / baseline_per_sec
    } else {
        0.0
    };
    println!(
        "moves_per_sec={moves_per_sec:.0} baseline_per_sec={baseline_per_sec:.0} ratio={ratio:.3} p50_ms={p50:.2} p99_ms={p99:.2} errors={errors}"
    );
    Ok(())
}

/// The machine's CPU time counters (`/proc/stat`, Linux): user, nice,
/// system, idle, iowait, irq, softirq, steal.
struct CpuTimes([u64; 8]);

impl CpuTimes {
    fn now() -> Option<CpuTimes> {
        let stat = std::fs::read_to_string("/proc/stat").ok()?;
        let line = stat.lines().next()?.strip_prefix("cpu ")?;
        let mut times = [0u64; 8];
        for (slot, field) in times.iter_mut().zip(line.split_whitespace()) {
            *slot = field.parse().ok()?;
        }
        Some(CpuTimes(times))
    }

    /// [`CpuTimes::since`] from `before` to now, when both were read.
    fn since_then(before: Option<CpuTimes>) -> Option<String> {
        before
            .zip(CpuTimes::now())
            .map(|(before, now)| now.since(&before))
    }

    /// `busy=<%> iowait=<%> steal=<%> idle=<%>` of the time since `before`.
    fn since(&self, before: &CpuTimes) -> String {
        let d: Vec<f64> = self
            .0
            .iter()
            .zip(before.0)
            .map(|(a, b)| a.saturating_sub(b) as f64)
            .collect();
        let total: f64 = d.iter().sum::<f64>().max(1.0);
        let busy = d[0] + d[1] + d[2] + d[5] + d[6];
        format!(
            "cpu busy={:.0}% iowait={:.0}% steal={:.0}% idle={:.0}%",
            100.0 * busy / total,
            100.0 * d[4] / total,
            100.0 * d[7] / total,
            100.0 * d[3] / total
        )
    }
}

/// `clients` clients inserting rows through the baseline server for
/// `length`: (what they saw, rows inserted, seconds taken).
async fn baseline_load(server: &Server, clients: usize, length: Duration) -> (Tally, u64, f64) {
    let path = Uri::from_static("/baseline");
    let started = Instant::now();
    let deadline = started + length;
    let mut tasks = Vec::new();
    for c in 0..clients {
        let mut conn = Conn::new(server.clone());
        let path = path.clone();
        tasks.push(tokio::spawn(async move {
            let mut t = Tally::default();
            let mut n = 0u64;
            while Instant::now() < deadline {
                let t0 = Instant::now();
                let body = json!({"client": c, "n": n}).to_string().into_bytes();
                match conn.post_json(&path, None, body).await {
                    Ok((status, _)) => {
                        t.note(status);
                        if status.is_success() {
                            t.latencies_ms.push(t0.elapsed().as_secs_f64() * 1000.0);
                        }
                    }
                    Err(_) => *t.refused.entry(0).or_default() += 1,
                }
                n += 1;
            }
            t
        }));
    }
    let mut tally = Tally::default();
    for task in tasks {
        if let Ok(t) = task.await {
            tally.merge(t);
        }
    }
    let rows = tally.latencies_ms.len() as u64;
    (tally, rows, started.elapsed().as_secs_f64())
}

async fn expect_json(res: reqwest::Response, what: &str) -> Result<Value, Error> {
    let status = res.status();
    let body: Value = res.json().await.unwrap_or(Value::Null);
    if !status.is_success() {
        return Err(format!("{what}: {status} {body}").into());
    }
    Ok(body)
}

/// Registers and logs in every player, opens the tables, seats everyone and
/// starts the games. Returns (table id, token) per player.
async fn setup(client: &reqwest::Client, args: &RunArgs) -> Result<Vec<(String, String)>, Error> {
    let base = args.base_url.trim_end_matches('/').to_owned();
    let run: u32 = rand::thread_rng().gen();
    let mut logins = Vec::new();
    for t in 0..args.tables {
        for p in 0..args.players {
            let client = client.clone();
            let base = base.clone();
            let username = format!("b{run:08x}_{t}_{p}");
            logins.push(tokio::spawn(async move {
                let creds = json!({"username": username, "password": "bench-password-1"});
                let res = client
                    .post(format!("{base}/v1/accounts"))
                    .json(&creds)
                    .send()
                    .await?;
                expect_json(res, "register").await?;
                let res = client
                    .post(format!("{base}/v1/sessions"))
                    .json(&creds)
                    .send()
                    .await?;
                let session = expect_json(res, "log in").await?;
                Ok::<String, Error>(session["token"].as_str().unwrap_or_default().to_owned())
            }));
        }
    }
    let mut tokens = Vec::new();
    for l in logins {
        tokens.push(l.await??);
    }
    let mut seats = Vec::new();
    for t in 0..args.tables {
        let table_tokens = &tokens[t * args.players..(t + 1) * args.players];
        // Games long enough to outlast the run: every table plays until
        // the end (rounds still end and start).
        let res = client
            .post(format!("{base}/v1/tables"))
            .bearer_auth(&table_tokens[0])
            .json(&json!({
                "ruleset": args.ruleset,
                "seats": args.players,
                "options": {"rounds": 1000, "target": 100000},
            }))
            .send()
            .await?;
        let table = expect_json(res, "create a table").await?;
        let id = table["id"].as_str().ok_or("a table has an id")?.to_owned();
        for token in &table_tokens[1..] {
            let res = client
                .post(format!("{base}/v1/tables/{id}/players"))
                .bearer_auth(token)
                .send()
                .await?;
            expect_json(res, "join").await?;
        }
        let res = client
            .post(format!("{base}/v1/tables/{id}/start"))
            .bearer_auth(&table_tokens[0])
            .send()
            .await?;
        expect_json(res, "start").await?;
        for token in table_tokens {
            seats.push((id.clone(), token.clone()));
        }
    }
    Ok(seats)
}

/// One player: on turn, a random legal move (never a challenge); otherwise
/// it waits for the table's events (long polls, or its event stream) and
/// fetches a fresh view when they concern it.
#[allow(clippy::too_many_arguments)] // one player: its clients, table, token and run
async fn play(
    client: &reqwest::Client,
    mut conn: Conn,
    base: &str,
    table: &str,
    token: &str,
    deadline: Instant,
    seed: u64,
    follow: Follow,
) -> Tally {
    let base = base.trim_end_matches('/');
    let mut rng = StdRng::seed_from_u64(seed);
    let mut t = Tally::default();
    // The table's paths, parsed once like a client that keeps them: the
    // requests of the loop go through `conn` (origin form), the streams
    // through reqwest (the same path after the base URL).
    let path = |p: &str| -> Uri {
        format!("/v1/tables/{table}/{p}")
            .parse()
            .expect("a table id is a path segment")
    };
    let url = |p: &str| -> reqwest::Url {
        format!("{base}{}", path(p))
            .parse()
            .expect("the base URL is a URL")
    };
    let Ok(auth) = bearer(token) else {
        *t.refused.entry(0).or_default() += 1;
        return t;
    };
    let view_path = path("view");
    let moves_path = path("moves");
    let long_polls: Vec<Uri> = (1..=5).map(|w| path(&format!("view?wait={w}"))).collect();
    let mut view = match get_view(&mut conn, &view_path, &auth, &mut t).await {
        Some(v) => v,
        None => return t,
    };
    let mut after = view.version;
    let mut stream = match follow {
        Follow::Poll | Follow::View => None,
        Follow::Stream | Follow::ViewStream => {
            let url = match follow {
                Follow::Stream => url("events/stream"),
                _ => url("view/stream"),
            };
            let res = client
                .get(url)
                .bearer_auth(token)
                .header("Last-Event-ID", after.to_string())
                .timeout(
                    deadline.saturating_duration_since(Instant::now()) + Duration::from_secs(5),
                )
                .send()
                .await;
            match res {
                Ok(res) => {
                    t.note(res.status());
                    Some(EventStream::new(res))
                }
                Err(_) => {
                    *t.refused.entry(0).or_default() += 1;
                    return t;
                }
            }
        }
    };
    while Instant::now() < deadline {
        if view.status == "finished" {
            t.finished_games += u64::from(view.my_seat == Some(0));
            break;
        }
        let on_turn = view.current_seat.is_some() && view.current_seat == view.my_seat;
        let plays: Vec<&RawValue> = view
            .legal_moves
            .iter()
            .map(|m| &**m)
            .filter(|m| !m.get().contains(r#""type":"challenge""#))
            .collect();
        if on_turn && !plays.is_empty() {
            let post = Post {
                mv: plays[rng.gen_range(0..plays.len())],
                expected_version: view.version,
            };
            let t0 = Instant::now();
            let body = serde_json::to_vec(&post).expect("a move serializes");
            let Ok((status, body)) = conn.post_json(&moves_path, Some(&auth), body).await else {
                *t.refused.entry(0).or_default() += 1;
                continue;
            };
            t.note(status);
            if status.is_success() {
                t.latencies_ms.push(t0.elapsed().as_secs_f64() * 1000.0);
                if let Ok(body) = serde_json::from_slice::<Moved>(&body) {
                    view = body.view;
                    after = view.version;
                    continue;
                }
            }
        } else if follow == Follow::View {
            // A long poll of the view: the next one as soon as the table
            // moves (a 304 when it did not within `wait`), at most until
            // the end of the run.
            let left = deadline.saturating_duration_since(Instant::now());
            let wait = left.as_secs_f64().ceil().clamp(1.0, 5.0) as u64;
            let etag = HeaderValue::from_str(&format!("\"{}\"", view.version))
                .expect("a version is a header value");
            let polled = tokio::time::timeout_at(
                deadline.into(),
                conn.get(&long_polls[wait as usize - 1], Some(&auth), Some(etag)),
            )
            .await;
            let Ok(polled) = polled else { break };
            let Ok((status, body)) = polled else {
                *t.refused.entry(0).or_default() += 1;
                break;
            };
            t.note(status);
            if status == reqwest::StatusCode::NOT_MODIFIED {
                continue;
            }
            match serde_json::from_slice::<View>(&body) {
                Ok(v) => view = v,
                Err(_) => break,
            }
            continue;
        } else if follow == Follow::ViewStream {
            // The view stream: the next view as the table moves.
            let Some(stream) = stream.as_mut() else { break };
            match stream.next_view(view.version, deadline).await {
                Ok(next) => view = next,
                Err(Wait::Deadline) => break,
                Err(_) => {
                    *t.refused.entry(0).or_default() += 1;
                    break;
                }
            }
            continue;
        } else if let Some(stream) = stream.as_mut() {
            // The stream: read events until one after the view concerns
            // this player (or the run ends, or the stream fails).
            match stream.wait_for(view.version, view.my_seat, deadline).await {
                Wait::Concerned => {}
                Wait::Deadline => break,
                Wait::Failed => {
                    *t.refused.entry(0).or_default() += 1;
                    break;
                }
            }
        } else {
            // A long poll, at most until the end of the run (so that the
            // run ends on time and the rate is over the time played). Like
            // an app, a waiting player follows the game from the events and
            // fetches its view only when they concern it: its turn, a new
            // round, the end; or when the poll failed.
            // The poll is given up at the deadline (the server's `wait` is
            // in whole seconds).
            let left = deadline.saturating_duration_since(Instant::now());
            let wait = left.as_secs_f64().ceil().clamp(1.0, 5.0) as u64;
            let url = format!("{base}/v1/tables/{table}/events?after={after}&wait={wait}");
            let mut concerned = true;
            let polled =
                tokio::time::timeout_at(deadline.into(), client.get(url).bearer_auth(token).send())
                    .await;
            let Ok(polled) = polled else { break };
            if let Ok(res) = polled {
                t.note(res.status());
                if res.status().is_success() {
                    if let Ok(page) = res.json::<Page>().await {
                        after = page.next;
                        concerned = page.events.iter().any(|e| e.concerns(view.my_seat));
                    }
                }
            }
            if !concerned {
                continue;
            }
        }
        match get_view(&mut conn, &view_path, &auth, &mut t).await {
            Some(v) => view = v,
            None => break,
        }
        after = view.version;
    }
    t
}

/// A player's server-sent event stream, read frame by frame.
struct EventStream {
    res: reqwest::Response,
    buf: Vec<u8>,
}

enum Wait {
    Concerned,
    Deadline,
    Failed,
}

impl EventStream {
    fn new(res: reqwest::Response) -> Self {
        Self {
            res,
            buf: Vec::new(),
        }
    }

    /// The `data` of the next frame that has one (comments, such as
    /// keep-alives, are skipped).
    async fn next_data(&mut self, deadline: Instant) -> Result<Vec<u8>, Wait> {
        loop {
            while let Some(end) = self.buf.windows(2).position(|w| w == b"\n\n") {
                let frame: Vec<u8> = self.buf.drain(..end + 2).collect();
                if let Some(data) = frame
                    .split(|b| *b == b'\n')
                    .find_map(|line| line.strip_prefix(b"data: "))
                {
                    return Ok(data.to_vec());
                }
            }
            match tokio::time::timeout_at(deadline.into(), self.res.chunk()).await {
                Err(_) => return Err(Wait::Deadline),
                Ok(Ok(Some(chunk))) => self.buf.extend_from_slice(&chunk),
                Ok(_) => return Err(Wait::Failed),
            }
        }
    }

    /// Reads until an event after seq `seen` concerns `my_seat`.
    async fn wait_for(&mut self, seen: i64, my_seat: Option<u64>, deadline: Instant) -> Wait {
        loop {
            match self.next_data(deadline).await {
                Err(wait) => return wait,
                Ok(data) => {
                    if serde_json::from_slice::<Head>(&data)
                        .is_ok_and(|e| e.seq > seen && e.concerns(my_seat))
                    {
                        return Wait::Concerned;
                    }
                }
            }
        }
    }

    /// Reads until a view of a version after `seen`.
    async fn next_view(&mut self, seen: i64, deadline: Instant) -> Result<View, Wait> {
        loop {
            let data = self.next_data(deadline).await?;
            if let Ok(view) = serde_json::from_slice::<View>(&data) {
                if view.version > seen {
                    return Ok(view);
                }
            }
        }
    }
}

// What a player reads of the answers: typed, the rest skipped, the legal
// moves kept as their JSON text to post one back as it is (the load
// generator shares the machine with the server: it should cost little).

/// A player's view.
#[derive(Deserialize)]
struct View {
    version: i64,
    status: String,
    my_seat: Option<u64>,
    current_seat: Option<u64>,
    #[serde(default)]
    legal_moves: Vec<Box<RawValue>>,
}

/// The answer to a move.
#[derive(Deserialize)]
struct Moved {
    view: View,
}

/// A long poll's page.
#[derive(Deserialize)]
struct Page {
    next: i64,
    events: Vec<Head>,
}

/// An event's seq, type and seat.
#[derive(Deserialize)]
struct Head {
    #[serde(default)]
    seq: i64,
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    data: HeadData,
}

#[derive(Deserialize, Default)]
struct HeadData {
    seat: Option<u64>,
}

impl Head {
    /// Whether the event makes a waiting player look at its view again: its
    /// turn starts, or a round or the game begins or ends.
    fn concerns(&self, my_seat: Option<u64>) -> bool {
        match self.kind.as_str() {
            "turn_started" => self.data.seat.is_some() && self.data.seat == my_seat,
            "round_started" | "round_ended" | "game_ended" => true,
            _ => false,
        }
    }
}

/// A move posted.
#[derive(Serialize)]
struct Post<'a> {
    #[serde(rename = "move")]
    mv: &'a RawValue,
    expected_version: i64,
}

async fn get_view(conn: &mut Conn, path: &Uri, auth: &HeaderValue, t: &mut Tally) -> Option<View> {
    let (status, body) = conn.get(path, Some(auth), None).await.ok()?;
    t.note(status);
    serde_json::from_slice::<View>(&body).ok()
}
