//! Real processes for the fault tests: `huit serve` as a child process (so
//! it can be killed with SIGKILL) and a private PostgreSQL cluster (so it
//! can be stopped and started again), both on 127.0.0.1 only.
//!
//! Everything a test starts lives in a [`Scratch`] folder and is stopped
//! when its owner is dropped, also when the test panics. Under
//! `scripts/test` the folders are inside the script's temporary folder
//! (`HUIT_TEST_TMPDIR`), whose clean-up also kills what a killed test
//! process left behind (the `*.pid` files and `cluster` folders).

use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use tokio::time::Instant;

/// The `huit` binary: `HUIT_BIN` (set by `scripts/test`), else the one next
/// to this test's executable (`target/<profile>/huit`).
pub fn huit_bin() -> PathBuf {
    if let Some(bin) = std::env::var_os("HUIT_BIN") {
        return PathBuf::from(bin);
    }
    let exe = std::env::current_exe().expect("the test's path");
    // target/<profile>/deps/faults-<hash>
    let bin = exe
        .parent()
        .and_then(Path::parent)
        .expect("target/<profile>")
        .join("huit");
    assert!(
        bin.exists(),
        "{} is missing: build it (cargo build -p api --bin huit) or run through scripts/test",
        bin.display()
    );
    bin
}

/// The repository's root (for `scripts/lib/pg-cluster`).
fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace root")
        .to_path_buf()
}

/// A folder for one test's processes, removed on drop.
#[derive(Debug)]
pub struct Scratch {
    pub dir: PathBuf,
}

impl Scratch {
    pub fn new(name: &str) -> Self {
        let root = std::env::var_os("HUIT_TEST_TMPDIR")
            .map(PathBuf::from)
            .unwrap_or_else(std::env::temp_dir);
        let dir = root.join(format!(
            "faults-{name}-{}",
            &uuid::Uuid::new_v4().simple().to_string()[..8]
        ));
        fs::create_dir_all(&dir).expect("the scratch folder");
        // The cluster's owner (`postgres` when running as root) must reach
        // its folder inside.
        run(Command::new("chmod").arg("755").arg(&dir));
        Self { dir }
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.dir);
    }
}

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?}: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .expect("UTF-8")
        .trim()
        .to_owned()
}

/// `huit serve` in a child process, its log in a file. Killed on drop.
#[derive(Debug)]
pub struct Server {
    child: Child,
    pub address: String,
    /// `/metrics`'s URL, when `HUIT_METRICS_BIND` is set.
    pub metrics: Option<String>,
    pub log: PathBuf,
    pidfile: PathBuf,
}

impl Server {
    /// Starts `huit serve` on `database_url` (on a free port of 127.0.0.1)
    /// with `env` added; waits (60 s at most) until it listens. The log and
    /// a pid file go into `scratch` under `name`.
    pub async fn start(
        scratch: &Scratch,
        name: &str,
        database_url: &str,
        env: &[(&str, &str)],
    ) -> Self {
        Self::start_under(scratch, name, database_url, env, &[]).await
    }

    /// [`Server::start`] through a wrapper command (`prlimit …`, ending
    /// in `--`) that then runs `huit serve`.
    pub async fn start_under(
        scratch: &Scratch,
        name: &str,
        database_url: &str,
        env: &[(&str, &str)],
        wrapper: &[&str],
    ) -> Self {
        let log = scratch.path(&format!("{name}.log"));
        let out = File::create(&log).expect("the server log");
        let mut cmd = match wrapper.split_first() {
            Some((program, args)) => {
                let mut cmd = Command::new(program);
                cmd.args(args).arg(huit_bin());
                cmd
            }
            None => Command::new(huit_bin()),
        };
        cmd.arg("serve")
            .env("DATABASE_URL", database_url)
            .env("BIND", "127.0.0.1:0")
            .env("HUIT_WORKERS", "2")
            .env("RUST_LOG", "warn,huit=info")
            .env_remove("HUIT_TRUST_PROXY")
            .stdin(Stdio::null())
            .stdout(out.try_clone().expect("log"))
            .stderr(out);
        for (k, v) in env {
            cmd.env(k, v);
        }
        let child = cmd.spawn().expect("huit serve starts");
        let pidfile = scratch.path(&format!("{name}.pid"));
        fs::write(&pidfile, child.id().to_string()).expect("the pid file");
        let mut server = Self {
            child,
            address: String::new(),
            metrics: None,
            log,
            pidfile,
        };
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let log = fs::read_to_string(&server.log).unwrap_or_default();
            if let Some(port) = listening_port(&log, "port=") {
                server.address = format!("http://127.0.0.1:{port}");
                server.metrics = listening_port(&log, "metrics_port=")
                    .map(|port| format!("http://127.0.0.1:{port}/metrics"));
                return server;
            }
            if let Some(status) = server.child.try_wait().expect("try_wait") {
                panic!("huit serve exited ({status}):\n{}", server.log_tail());
            }
            assert!(
                Instant::now() < deadline,
                "huit serve did not listen within 60 s:\n{}",
                server.log_tail()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.address, path)
    }

    /// `kill -9`, and reaps it.
    pub fn kill9(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = fs::remove_file(&self.pidfile);
    }

    /// `None` while it runs, else how it ended.
    pub fn exited(&mut self) -> Option<std::process::ExitStatus> {
        self.child.try_wait().expect("try_wait")
    }

    /// The last lines of its log (for failure messages).
    pub fn log_tail(&self) -> String {
        let text = fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(40)..].join("\n")
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("--- {} ---\n{}", self.log.display(), self.log_tail());
        }
        self.kill9();
    }
}

/// The port of a `listening ... port=N` log line.
fn listening_port(log: &str, field: &str) -> Option<u16> {
    log.lines()
        .filter(|l| l.contains("listening"))
        .find_map(|l| {
            l.split(&format!(" {field}"))
                .nth(1)?
                .split_whitespace()
                .next()?
                .parse()
                .ok()
        })
}

/// A private PostgreSQL cluster (fsync off) on 127.0.0.1, through
/// `scripts/lib/pg-cluster` (as root, it runs as `postgres`). Destroyed on
/// drop.
#[derive(Debug)]
pub struct Cluster {
    dir: PathBuf,
    pub port: u16,
}

impl Cluster {
    /// Makes and starts a cluster in `scratch`/cluster.
    pub async fn start(scratch: &Scratch) -> Self {
        let dir = scratch.path("cluster");
        let d = dir.clone();
        let port = tokio::task::spawn_blocking(move || {
            pg_cluster(&["init", path_str(&d)]);
            pg_cluster(&["start", path_str(&d)])
        })
        .await
        .expect("pg-cluster")
        .parse()
        .expect("a port");
        Self { dir, port }
    }

    /// The URL of database `db` of this cluster.
    pub fn url(&self, db: &str) -> String {
        pg_cluster(&["url", path_str(&self.dir), &self.port.to_string(), db])
    }

    /// Stops PostgreSQL (`mode`: `fast` or `immediate`).
    pub async fn stop(&self, mode: &'static str) {
        let d = self.dir.clone();
        tokio::task::spawn_blocking(move || pg_cluster(&["stop", path_str(&d), mode]))
            .await
            .expect("pg-cluster stop");
    }

    /// Starts it again on the same port.
    pub async fn restart(&self) {
        let d = self.dir.clone();
        let port = self.port.to_string();
        let got = tokio::task::spawn_blocking(move || pg_cluster(&["start", path_str(&d), &port]))
            .await
            .expect("pg-cluster start");
        assert_eq!(got, self.port.to_string());
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let log = fs::read_to_string(self.dir.join("postgres.log")).unwrap_or_default();
            let lines: Vec<&str> = log.lines().collect();
            eprintln!(
                "--- postgres.log ---\n{}",
                lines[lines.len().saturating_sub(20)..].join("\n")
            );
        }
        let _ = Command::new(repo_root().join("scripts/lib/pg-cluster"))
            .args(["destroy", path_str(&self.dir)])
            .status();
    }
}

fn path_str(p: &Path) -> &str {
    p.to_str().expect("a UTF-8 path")
}

fn pg_cluster(args: &[&str]) -> String {
    run(Command::new(repo_root().join("scripts/lib/pg-cluster")).args(args))
}
