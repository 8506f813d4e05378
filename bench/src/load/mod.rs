//! The load: the baseline first, then real games over HTTP.

use std::time::{Duration, Instant};

use hyper::Uri;
use rand::Rng;
use serde_json::{json, Value};

use crate::conn::{Conn, Server};
use crate::Error;

pub(crate) mod measure;
mod player;

use measure::{percentile, CpuTimes, Processes, Spent, Tally};
use player::play;

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
    /// Each player registers an APNs device (`loadgen push`).
    #[arg(skip)]
    pub devices: bool,
    /// The API server's process: with `--postmaster-pid`, the CPU a move
    /// costs each process is printed (`cpu_moves`).
    #[arg(long)]
    server_pid: Option<u32>,
    /// The baseline server's process: with `--postmaster-pid`, the CPU a
    /// baseline row costs each process is printed (`cpu_baseline_rows`).
    #[arg(long)]
    baseline_pid: Option<u32>,
    /// PostgreSQL's postmaster (the first line of `postmaster.pid`): its
    /// children's CPU is PostgreSQL's.
    #[arg(long)]
    postmaster_pid: Option<u32>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Follow {
    Poll,
    View,
    ViewStream,
    Stream,
}

impl RunArgs {
    /// The defaults of `loadgen run` against `base_url` for `seconds`,
    /// without the baseline.
    pub fn against(base_url: &str, seconds: u64, seed: u64) -> Self {
        Self {
            base_url: base_url.to_owned(),
            baseline_url: None,
            tables: 16,
            players: 4,
            seconds,
            baseline_seconds: 0,
            ruleset: "classique".into(),
            seed,
            follow: Follow::View,
            devices: false,
            server_pid: None,
            baseline_pid: None,
            postmaster_pid: None,
        }
    }
}

/// What a run measured of the moves.
#[derive(Debug, Clone, Copy)]
pub struct Figures {
    pub moves_per_sec: f64,
    pub p99_ms: f64,
    pub errors: u64,
}

pub async fn run(args: RunArgs) -> std::io::Result<()> {
    match play_load(args).await {
        Ok(_) => Ok(()),
        Err(e) => Err(std::io::Error::other(e.to_string())),
    }
}

/// The run: its lines printed, its figures answered.
pub async fn play_load(args: RunArgs) -> Result<Figures, Error> {
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(256)
        .timeout(Duration::from_secs(60))
        .build()?;
    let concurrency = args.tables * args.players;

    // The baseline is measured half before the games and half after, so
    // that a drift of the machine (this VM's disk and CPU vary by ×4 within
    // minutes) weighs on both figures alike.
    let half = Duration::from_secs_f64(args.baseline_seconds as f64 / 2.0);
    let (api, bare) = (
        Processes {
            server: args.server_pid,
            postmaster: args.postmaster_pid,
        },
        Processes {
            server: args.baseline_pid,
            postmaster: args.postmaster_pid,
        },
    );
    let cpu_before = CpuTimes::now();
    let baseline_server = match &args.baseline_url {
        Some(url) => Some(Server::of(url).await?),
        None => None,
    };
    let ticks = bare.ticks();
    let mut baseline = match &baseline_server {
        Some(server) => Some(baseline_load(server, concurrency, half).await),
        None => None,
    };
    let mut baseline_spent = bare.spent_since(ticks);
    let cpu_baseline_first = CpuTimes::since_then(cpu_before);
    let seats = setup(&client, &args).await?;
    let server = Server::of(&args.base_url).await?;
    eprintln!(
        "loadgen: {} tables × {} players started; playing for {} s, following by {:?}",
        args.tables, args.players, args.seconds, args.follow
    );
    let cpu_before = CpuTimes::now();
    let ticks = api.ticks();
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
    let moves_spent = api.spent_since(ticks);
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
        let ticks = bare.ticks();
        let (after, rows_after, secs_after) = baseline_load(server, concurrency, half).await;
        let second_spent = bare.spent_since(ticks);
        let cpu_second = CpuTimes::since_then(cpu_before);
        baseline_spent = baseline_spent.zip(second_spent).map(|(mut first, second)| {
            first.add(second);
            first
        });
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
    print_cpu(
        moves_spent,
        l.len() as u64,
        baseline_spent.zip(baseline.as_ref().map(|(_, rows, _)| *rows)),
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
    Ok(Figures {
        moves_per_sec,
        p99_ms: p99,
        errors,
    })
}

/// The CPU a move costs each process, and a baseline row, when measured;
/// then how many moves the CPU of a row would pay for (`cpu_ratio`): the
/// ratio the run would print if the machine's CPU alone bounded both (when
/// the two agree, a move is cheaper only by costing less CPU).
fn print_cpu(moves: Option<Spent>, move_count: u64, rows: Option<(Spent, u64)>) {
    let Some(moves) = moves else { return };
    let (line, move_us) = moves.line("moves", move_count);
    println!("{line}");
    if let Some((spent, row_count)) = rows {
        let (line, row_us) = spent.line("baseline_rows", row_count);
        println!("{line}");
        println!("cpu_ratio={:.3}", row_us / move_us.max(f64::MIN_POSITIVE));
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
/// A number of `name`'s own.
fn hash_of(name: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    name.hash(&mut hasher);
    hasher.finish()
}

async fn setup(client: &reqwest::Client, args: &RunArgs) -> Result<Vec<(String, String)>, Error> {
    let base = args.base_url.trim_end_matches('/').to_owned();
    let run: u32 = rand::thread_rng().gen();
    let mut logins = Vec::new();
    for t in 0..args.tables {
        for p in 0..args.players {
            let client = client.clone();
            let base = base.clone();
            let username = format!("b{run:08x}_{t}_{p}");
            let devices = args.devices;
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
                let token = session["token"].as_str().unwrap_or_default().to_owned();
                if devices {
                    // A phone of its own (64 hex digits, from the name).
                    let phone = format!("{:0>64}", format!("{:x}", hash_of(&username)));
                    let res = client
                        .post(format!("{base}/v1/me/devices"))
                        .bearer_auth(&token)
                        .json(&json!({"platform": "apns", "token": phone}))
                        .send()
                        .await?;
                    expect_json(res, "register a phone").await?;
                }
                Ok::<String, Error>(token)
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
