//! `loadgen ccu`: what holding live connections costs the server, and how
//! fast one move reaches every follower of its table (issue 32's measure).
//!
//! S streams in all (`--streams`): players are minted in the database
//! (accounts and sessions: signing up eighteen thousand people through
//! argon2 would take longer than the run); A tables of 4 (`--active`) play
//! a move every `--move-ms` each, their players following their view
//! streams, and the first of them is watched by W spectators (`--crowd`);
//! the other streams are players of idle tables of 4 (one in ten with a
//! turn clock of an hour, running): of every ten, one on `/events/stream`,
//! one on the feed's stream (`/v1/me/feed/stream`), eight on
//! `/view/stream`. Tables are opened through the API.
//!
//! The streams are held by worker processes (`--processes`, by default one
//! per 15,000 streams: a process has at most 20,000 descriptors here), this
//! same program run as `loadgen ccu-worker`, each told its share on its
//! standard input and opening it at its part of `--ramp` a second. The
//! kernel picks each connection's port (on loopback it reuses those left in
//! TIME_WAIT by a run before): one source and one destination address have
//! 28,000 ports between them, so past that the streams are spread over
//! `--destinations` addresses, 127.0.0.1 to 127.0.0.N at the server's port
//! (a proxy listening on each). Workers report the streams held as they
//! go, and at the end every frame of a timed table they read, with its
//! time (the wall clock, which every process of the machine shares).
//!
//! Measured: the servers' resident memory (`--server-pid`, several for
//! several processes: their sum) before and
//! after the streams are held, over the streams held; their CPU while only
//! keep-alives flow (`--idle-secs`), in percent of one core; then, for
//! `--hold-secs` of play, the time from a move's answer to its mover to the
//! frame of that version reaching each follower of its table (fan-out), and
//! the same for the crowd. Prints one line:
//! `ccu streams=<held> rss_kib_per_stream=<x> fanout_p50_ms=<a> fanout_p99_ms=<b> crowd=<w> crowd_p99_ms=<c> idle_cpu_pct=<d> errors=<n>`

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rand::Rng;
use serde_json::{json, Value};
use uuid::Uuid;

mod workers;

pub use workers::worker;
use workers::{wall_nanos, Counts, Hold, Job, Worker};

use crate::clocks::cpu_ticks;
use crate::history_cost::body;
use crate::load::measure::percentile;
use crate::Error;

/// Streams one worker process holds by default.
const PER_PROCESS: usize = 15_000;

#[derive(clap::Args)]
pub struct CcuArgs {
    #[arg(long, default_value = "http://127.0.0.1:8080")]
    pub base_url: String,
    #[arg(long, env = "DATABASE_URL")]
    pub database_url: String,
    /// Streams in all: the crowd's, the active tables' players' and
    /// those of players at idle tables of 4.
    #[arg(long, default_value_t = 18_000)]
    pub streams: usize,
    /// Tables of 4 that play during the run.
    #[arg(long, default_value_t = 64)]
    pub active: usize,
    /// Spectators of the first active table.
    #[arg(long, default_value_t = 5_000)]
    pub crowd: usize,
    /// Milliseconds between two moves of an active table.
    #[arg(long, default_value_t = 1000)]
    pub move_ms: u64,
    /// Streams opened per second (by all the workers together).
    #[arg(long, default_value_t = 1000)]
    pub ramp: usize,
    /// Worker processes holding the streams; by default one per 15,000.
    #[arg(long)]
    pub processes: Option<usize>,
    /// Loopback addresses to spread the streams over, 127.0.0.1 to
    /// 127.0.0.N at the port of `--base-url` (whose server must listen on
    /// each): one pair of addresses has 28,000 ports.
    #[arg(long, default_value_t = 1)]
    pub destinations: u8,
    #[arg(long, default_value_t = 5)]
    pub idle_secs: u64,
    #[arg(long, default_value_t = 20)]
    pub hold_secs: u64,
    /// The server's processes, for their memory and CPU (comma-separated).
    #[arg(long, value_delimiter = ',')]
    pub server_pid: Vec<u32>,
}

/// A seated player: their token and their table (an index into the
/// tables).
struct Seat {
    token: String,
    table: usize,
}

/// A table and whether its frames are timed (an active table's), and for
/// which group.
struct Followed {
    id: String,
    group: Group,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Group {
    Idle,
    /// Played during the run (the first one also watched by the crowd).
    Active,
}

/// The moves of a run: each answer's table, version and time (in
/// nanoseconds of the wall clock), and the moves that failed.
#[derive(Default)]
struct Moves {
    commits: Mutex<Vec<(String, i64, u128)>>,
    errors: AtomicUsize,
}

/// `n` accounts with a session each, minted in the database: their tokens.
async fn mint(pool: &sqlx::PgPool, n: usize) -> Result<Vec<String>, Error> {
    let tag: u32 = rand::thread_rng().gen();
    let ids: Vec<Uuid> = sqlx::query_scalar(
        "INSERT INTO accounts (id, username, password_hash) \
         SELECT gen_random_uuid(), $1 || g, 'not a password hash' \
         FROM generate_series(1, $2::int) g RETURNING id",
    )
    .bind(format!("ccu{tag:08x}_"))
    .bind(n as i32)
    .fetch_all(pool)
    .await?;
    let tokens: Vec<String> = ids.iter().map(|_| api::auth::new_token()).collect();
    let hashes: Vec<String> = tokens.iter().map(|t| api::auth::token_hash(t)).collect();
    sqlx::query(
        "INSERT INTO sessions (id, token_hash, account_id, expires_at) \
         SELECT gen_random_uuid(), h, a, now() + interval '1 day' \
         FROM unnest($1::text[], $2::uuid[]) AS s(h, a)",
    )
    .bind(&hashes)
    .bind(&ids)
    .execute(pool)
    .await?;
    Ok(tokens)
}

/// Opens a table of 4 for `tokens` (the first creates it), started: its id.
async fn table_of_four(
    client: &reqwest::Client,
    base: &str,
    tokens: &[String],
    clock: bool,
) -> Result<String, Error> {
    let mut spec = json!({"ruleset": "classique", "seats": 4, "options": {"target": 100000}});
    if clock {
        spec["clock"] = json!({"turn_seconds": 3600});
    }
    let post = |path: String, token: &str| client.post(format!("{base}{path}")).bearer_auth(token);
    let summary = body(
        post("/v1/tables".into(), &tokens[0])
            .json(&spec)
            .send()
            .await?,
        "open",
    )
    .await?;
    let id = summary["id"].as_str().ok_or("a table id")?.to_owned();
    for t in &tokens[1..] {
        body(
            post(format!("/v1/tables/{id}/players"), t).send().await?,
            "join",
        )
        .await?;
    }
    body(
        post(format!("/v1/tables/{id}/start"), &tokens[0])
            .send()
            .await?,
        "start",
    )
    .await?;
    Ok(id)
}

/// Plays table `id` (its players' `tokens` by seat) until `until`: every
/// `every`, the seat on turn plays its first legal move; each answer's
/// version and time are noted.
async fn play(
    client: reqwest::Client,
    base: String,
    id: String,
    tokens: Vec<String>,
    every: Duration,
    until: Instant,
    moves: Arc<Moves>,
) {
    let mut tick = tokio::time::interval(every);
    while Instant::now() < until {
        tick.tick().await;
        let step = async {
            let view = |t: &String| {
                client
                    .get(format!("{base}/v1/tables/{id}/view"))
                    .bearer_auth(t)
                    .send()
            };
            let seen = body(view(&tokens[0]).await?, "view").await?;
            let seat = seen["current_seat"].as_u64().ok_or("nobody on turn")? as usize;
            let mine = body(view(&tokens[seat]).await?, "view").await?;
            let mv = json!({"move": mine["legal_moves"][0], "expected_version": mine["version"]});
            let res = client
                .post(format!("{base}/v1/tables/{id}/moves"))
                .bearer_auth(&tokens[seat])
                .json(&mv)
                .send()
                .await?;
            let answered = wall_nanos();
            let moved: Value = body(res, "move").await?;
            let version = moved["version"].as_i64().ok_or("a version")?;
            moves
                .commits
                .lock()
                .unwrap()
                .push((id.clone(), version, answered));
            Ok::<_, Error>(())
        };
        if let Err(e) = step.await {
            if moves.errors.fetch_add(1, Ordering::Relaxed) < 3 {
                eprintln!("loadgen ccu: a move failed: {e}");
            }
        }
    }
}

/// The server's resident memory, in KiB (`/proc/<pid>/status`).
fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// The sum of `f` over the server processes, if every one answers.
fn over_servers(pids: &[u32], f: impl Fn(u32) -> Option<u64>) -> Option<u64> {
    (!pids.is_empty()).then_some(())?;
    pids.iter().map(|&pid| f(pid)).sum()
}

pub async fn run(args: CcuArgs) -> Result<(), Error> {
    let base = args.base_url.trim_end_matches('/').to_owned();
    let url = reqwest::Url::parse(&base)?;
    let server = SocketAddr::new(
        url.host_str().ok_or("a host")?.parse()?,
        url.port_or_known_default().ok_or("a port")?,
    );
    let pool = sqlx::PgPool::connect(&args.database_url).await?;
    let client = reqwest::Client::builder().no_proxy().build()?;

    // Players and tables.
    // The streams in all: the crowd's, the active tables' players', and the
    // rest at idle tables.
    let idle_tables = args
        .streams
        .checked_sub(args.crowd + 4 * args.active)
        .ok_or("--streams is fewer than the crowd and the active tables' players")?
        .div_ceil(4);
    let people = (idle_tables + args.active) * 4 + args.crowd;
    let started = Instant::now();
    let tokens = mint(&pool, people).await?;
    let mut tables: Vec<Followed> = Vec::new();
    let mut seats: Vec<Seat> = Vec::new();
    let mut groups = tokens.chunks(4);
    let mut opened = Vec::new();
    for t in 0..idle_tables + args.active {
        let four: Vec<String> = groups.next().ok_or("players")?.to_vec();
        let (client, base) = (client.clone(), base.clone());
        let clock = t < idle_tables && t % 10 == 0;
        opened.push(tokio::spawn(async move {
            let id = table_of_four(&client, &base, &four, clock).await;
            id.map(|id| (id, four))
        }));
        if opened.len() == 32 {
            for o in opened.drain(..) {
                let (id, four) = o.await??;
                push_table(&mut tables, &mut seats, id, four, idle_tables);
            }
        }
    }
    for o in opened.drain(..) {
        let (id, four) = o.await??;
        push_table(&mut tables, &mut seats, id, four, idle_tables);
    }
    eprintln!(
        "loadgen ccu: {people} players and {} tables in {:.1} s",
        tables.len(),
        started.elapsed().as_secs_f64()
    );
    let crowd_table = idle_tables; // the first active table
    let spectators: Vec<String> = tokens[(idle_tables + args.active) * 4..].to_vec();

    // The streams, dealt round the workers.
    let holds = seats
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let followed = &tables[s.table];
            let kind = match (followed.group, i % 10) {
                (Group::Idle, 9) => Some("events/stream"),
                (Group::Idle, 8) => None,
                _ => Some("view/stream"),
            };
            let path = kind.map_or("/v1/me/feed/stream".to_owned(), |kind| {
                format!("/v1/tables/{}/{kind}", followed.id)
            });
            let timed = (followed.group != Group::Idle).then_some(s.table);
            Hold {
                path,
                token: s.token.clone(),
                timed,
            }
        })
        .chain(spectators.iter().map(|t| Hold {
            path: format!("/v1/tables/{}/view/stream", tables[crowd_table].id),
            token: t.clone(),
            timed: Some(crowd_table),
        }));
    let total = seats.len() + spectators.len();
    let processes = args
        .processes
        .unwrap_or(total.div_ceil(PER_PROCESS))
        .clamp(1, total.max(1));
    let servers: Vec<SocketAddr> = match args.destinations {
        0 | 1 => vec![server],
        n => (1..=n)
            .map(|i| SocketAddr::new(IpAddr::V4(Ipv4Addr::new(127, 0, 0, i)), server.port()))
            .collect(),
    };
    let mut jobs: Vec<Job> = (0..processes)
        .map(|_| Job {
            servers: servers.clone(),
            ramp: (args.ramp / processes).max(1),
            holds: Vec::new(),
        })
        .collect();
    for (n, hold) in holds.enumerate() {
        jobs[n % processes].holds.push(hold);
    }
    let rss_before = over_servers(&args.server_pid, rss_kib);
    let ramp_started = Instant::now();
    let mut workers = Vec::new();
    for job in &jobs {
        workers.push(Worker::start(job).await?);
    }
    let count = |of: fn(&Counts) -> &AtomicUsize| -> usize {
        workers
            .iter()
            .map(|w| of(&w.said).load(Ordering::Relaxed))
            .sum()
    };
    let deadline = ramp_started
        + Duration::from_secs_f64(total as f64 / args.ramp.max(1) as f64)
        + Duration::from_secs(30);
    while count(|s| &s.held) + count(|s| &s.errors) < total && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let held_now = count(|s| &s.held);
    let rss_after = over_servers(&args.server_pid, rss_kib);
    eprintln!(
        "loadgen ccu: {held_now} of {total} streams held by {processes} processes after {:.1} s of ramp",
        ramp_started.elapsed().as_secs_f64()
    );

    // Idle: only keep-alives.
    let ticks = over_servers(&args.server_pid, cpu_ticks);
    tokio::time::sleep(Duration::from_secs(args.idle_secs)).await;
    let idle_cpu = over_servers(&args.server_pid, cpu_ticks)
        .zip(ticks)
        .map(|(after, before)| (after - before) as f64 / args.idle_secs.max(1) as f64);

    // Play.
    let moves: Arc<Moves> = Arc::default();
    let stop = Instant::now() + Duration::from_secs(args.hold_secs);
    let mut players = Vec::new();
    for (t, table) in tables
        .iter()
        .enumerate()
        .filter(|(_, t)| t.group != Group::Idle)
    {
        let four: Vec<String> = seats
            .iter()
            .filter(|s| s.table == t)
            .map(|s| s.token.clone())
            .collect();
        players.push(tokio::spawn(play(
            client.clone(),
            base.clone(),
            table.id.clone(),
            four,
            Duration::from_millis(args.move_ms),
            stop,
            moves.clone(),
        )));
    }
    for p in players {
        p.await?;
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    let mut arrivals = Vec::new();
    let mut stream_errors = 0;
    for w in workers {
        let said = w.stop().await?;
        stream_errors += said.errors.load(Ordering::Relaxed);
        arrivals.append(&mut said.arrivals.lock().unwrap());
    }

    // Fan-out: each frame of a timed table against its move's answer.
    let index: HashMap<&str, usize> = tables
        .iter()
        .enumerate()
        .map(|(i, t)| (t.id.as_str(), i))
        .collect();
    let committed: HashMap<(usize, i64), u128> = moves
        .commits
        .lock()
        .unwrap()
        .iter()
        .filter_map(|(id, v, at)| Some(((*index.get(id.as_str())?, *v), *at)))
        .collect();
    let (mut fanout, mut crowd) = (Vec::new(), Vec::new());
    for (table, version, at) in &arrivals {
        if let Some(moved) = committed.get(&(*table, *version)) {
            // A frame may beat the mover's own answer: 0, not negative.
            let ms = at.saturating_sub(*moved) as f64 / 1e6;
            if *table == crowd_table && args.crowd > 0 {
                crowd.push(ms);
            } else {
                fanout.push(ms);
            }
        }
    }
    fanout.sort_by(f64::total_cmp);
    crowd.sort_by(f64::total_cmp);
    let per_stream = match (rss_before, rss_after) {
        (Some(b), Some(a)) if held_now > 0 => {
            format!("{:.1}", a.saturating_sub(b) as f64 / held_now as f64)
        }
        _ => "na".into(),
    };
    eprintln!(
        "loadgen ccu: {} moves, {} timed frames, {} of the crowd",
        committed.len(),
        fanout.len(),
        crowd.len()
    );
    println!(
        "ccu streams={held_now} rss_kib_per_stream={per_stream} fanout_p50_ms={:.1} fanout_p99_ms={:.1} crowd={} crowd_p99_ms={:.1} idle_cpu_pct={} errors={}",
        percentile(&fanout, 0.50),
        percentile(&fanout, 0.99),
        args.crowd,
        percentile(&crowd, 0.99),
        idle_cpu.map_or("na".into(), |c| format!("{c:.1}")),
        stream_errors + moves.errors.load(Ordering::Relaxed),
    );
    Ok(())
}

/// Notes a new table (the first `idle` are idle) and its four seats.
fn push_table(
    tables: &mut Vec<Followed>,
    seats: &mut Vec<Seat>,
    id: String,
    four: Vec<String>,
    idle: usize,
) {
    let index = tables.len();
    let group = if index < idle {
        Group::Idle
    } else {
        Group::Active
    };
    tables.push(Followed { id, group });
    seats.extend(four.into_iter().map(|token| Seat {
        token,
        table: index,
    }));
}
