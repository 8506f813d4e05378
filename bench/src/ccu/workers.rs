//! The worker processes of `loadgen ccu`: each holds its share of the
//! streams (a process has at most 20,000 descriptors here), told on its
//! standard input, and reports what it holds and every timed frame it read.

use std::net::SocketAddr;
use std::process::Stdio;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

use crate::Error;

/// One stream for a worker to hold: its path, its token, and the table
/// whose frames it times (an active table's index), if any.
#[derive(Serialize, Deserialize)]
pub(super) struct Hold {
    pub(super) path: String,
    pub(super) token: String,
    pub(super) timed: Option<usize>,
}

/// A worker's share of the run, the one line of its standard input.
#[derive(Serialize, Deserialize)]
pub(super) struct Job {
    /// The server's addresses, taken in turn.
    pub(super) servers: Vec<SocketAddr>,
    /// Streams this worker opens per second.
    pub(super) ramp: usize,
    pub(super) holds: Vec<Hold>,
}

/// What a worker's streams note, and what the run hears a worker say of
/// them.
#[derive(Default)]
pub(super) struct Counts {
    /// Frames of timed tables as they arrive: (table, version, when, in
    /// nanoseconds of the wall clock).
    pub(super) arrivals: Mutex<Vec<(usize, i64, u128)>>,
    /// Streams that have had their first frame.
    pub(super) held: AtomicUsize,
    /// Streams that failed or ended.
    pub(super) errors: AtomicUsize,
}

/// Now, in nanoseconds of the wall clock (the same in every process).
pub(super) fn wall_nanos() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos()
}

/// One stream, held until the worker stops: the request by hand on a raw
/// socket to `server`, the frames' `id:` lines read as they come (a
/// timed table's noted). Counts itself held at its first frame; a stream
/// that fails or ends counts as an error.
async fn hold(server: SocketAddr, stream: Hold, counts: Arc<Counts>) {
    let run = async {
        let mut tcp = TcpStream::connect(server).await?;
        let request = format!(
            "GET {} HTTP/1.1\r\nHost: {server}\r\nAuthorization: Bearer {}\r\n\
             Accept: text/event-stream\r\n\r\n",
            stream.path, stream.token
        );
        tcp.write_all(request.as_bytes()).await?;
        let mut buf = vec![0u8; 2048];
        let mut line = Vec::with_capacity(64);
        let mut counted = false;
        // The answer's first bytes, to say why a stream that ends ended.
        let mut head = Vec::new();
        loop {
            let n = tcp.read(&mut buf).await?;
            if n == 0 {
                let head = String::from_utf8_lossy(&head).into_owned();
                return Err::<(), Error>(format!("the stream ended: {head:?}").into());
            }
            if head.len() < 160 {
                head.extend_from_slice(&buf[..n.min(160 - head.len())]);
            }
            let now = wall_nanos();
            for &b in &buf[..n] {
                if b != b'\n' {
                    if line.len() < 64 {
                        line.push(b);
                    }
                    continue;
                }
                if let Some(id) = line.strip_prefix(b"id: ") {
                    if !counted {
                        counted = true;
                        counts.held.fetch_add(1, Ordering::Relaxed);
                    }
                    let version = std::str::from_utf8(id).ok().and_then(|v| v.parse().ok());
                    if let (Some(table), Some(version)) = (stream.timed, version) {
                        counts.arrivals.lock().unwrap().push((table, version, now));
                    }
                }
                line.clear();
            }
        }
    };
    let result = run.await;
    // The first few say why.
    if counts.errors.fetch_add(1, Ordering::Relaxed) < 3 {
        eprintln!("loadgen ccu-worker: a stream failed: {:?}", result.err());
    }
}

/// `loadgen ccu-worker`: reads its [`Job`] from the first line of its
/// standard input, opens its streams at its ramp, and prints
/// `held <n> <errors>` every quarter of a second; when its input says
/// `stop` (or ends), prints every timed frame read, `a <table> <version>
/// <nanos>`, then `end <held> <errors>`, and exits.
pub async fn worker() -> Result<(), Error> {
    // Every socket a descriptor: as many as this process may have.
    let (_, hard) = rlimit::Resource::NOFILE.get()?;
    rlimit::Resource::NOFILE.set(hard, hard)?;
    let mut input = BufReader::new(tokio::io::stdin()).lines();
    let job: Job = serde_json::from_str(&input.next_line().await?.ok_or("a job")?)?;
    let counts: Arc<Counts> = Arc::default();
    let ramp = tokio::spawn({
        let counts = counts.clone();
        async move {
            let started = Instant::now();
            for (n, stream) in job.holds.into_iter().enumerate() {
                let server = job.servers[n % job.servers.len()];
                tokio::spawn(hold(server, stream, counts.clone()));
                let due =
                    started + Duration::from_secs_f64((n + 1) as f64 / job.ramp.max(1) as f64);
                tokio::time::sleep_until(due.into()).await;
            }
        }
    });
    let report = tokio::spawn({
        let counts = counts.clone();
        async move {
            loop {
                let (held, errors) = (
                    counts.held.load(Ordering::Relaxed),
                    counts.errors.load(Ordering::Relaxed),
                );
                println!("held {held} {errors}");
                tokio::time::sleep(Duration::from_millis(250)).await;
            }
        }
    });
    while let Some(line) = input.next_line().await? {
        if line.trim() == "stop" {
            break;
        }
    }
    ramp.abort();
    report.abort();
    let mut out = String::new();
    for (table, version, at) in counts.arrivals.lock().unwrap().iter() {
        out.push_str(&format!("a {table} {version} {at}\n"));
    }
    out.push_str(&format!(
        "end {} {}\n",
        counts.held.load(Ordering::Relaxed),
        counts.errors.load(Ordering::Relaxed)
    ));
    let mut stdout = tokio::io::stdout();
    stdout.write_all(out.as_bytes()).await?;
    stdout.flush().await?;
    Ok(())
}

/// A worker process as the run sees it: where it is told to stop, and
/// what it has said so far.
pub(super) struct Worker {
    stdin: tokio::process::ChildStdin,
    child: tokio::process::Child,
    pub(super) said: Arc<Counts>,
    reading: tokio::task::JoinHandle<Result<(), Error>>,
}

impl Worker {
    pub(super) async fn start(job: &Job) -> Result<Self, Error> {
        let mut child = tokio::process::Command::new(std::env::current_exe()?)
            .arg("ccu-worker")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()?;
        let mut stdin = child.stdin.take().ok_or("a worker's input")?;
        let mut line = serde_json::to_vec(job)?;
        line.push(b'\n');
        stdin.write_all(&line).await?;
        let stdout = child.stdout.take().ok_or("a worker's output")?;
        let said: Arc<Counts> = Arc::default();
        let reading = tokio::spawn({
            let said = said.clone();
            async move {
                let mut lines = BufReader::new(stdout).lines();
                while let Some(line) = lines.next_line().await? {
                    let words: Vec<&str> = line.split_whitespace().collect();
                    match words.as_slice() {
                        ["held" | "end", held, errors] => {
                            said.held.store(held.parse()?, Ordering::Relaxed);
                            said.errors.store(errors.parse()?, Ordering::Relaxed);
                        }
                        ["a", table, version, at] => said.arrivals.lock().unwrap().push((
                            table.parse()?,
                            version.parse()?,
                            at.parse()?,
                        )),
                        _ => return Err(format!("a worker said {line:?}").into()),
                    }
                }
                Ok::<(), Error>(())
            }
        });
        Ok(Self {
            stdin,
            child,
            said,
            reading,
        })
    }

    /// Tells the worker to stop, and waits for its last words.
    pub(super) async fn stop(mut self) -> Result<Arc<Counts>, Error> {
        self.stdin.write_all(b"stop\n").await?;
        self.stdin.flush().await?;
        self.reading.await??;
        self.child.wait().await?;
        Ok(self.said)
    }
}
