//! What the CLI tests share: a scratch database on DATABASE_URL's cluster
//! (scripts/test provides one).

use std::str::FromStr;

use sqlx::postgres::PgConnectOptions;
use sqlx::Connection;

/// A new, empty database on the cluster: its URL (the cluster's, its
/// parameters kept: `sslmode`, `sslrootcert`) and connection options.
pub async fn scratch_database() -> (String, PgConnectOptions) {
    let cluster = std::env::var("DATABASE_URL").expect("DATABASE_URL (run scripts/test)");
    let options = PgConnectOptions::from_str(&cluster).unwrap();
    let name = format!("huit_cli_{}", uuid::Uuid::new_v4().simple());
    let mut admin = sqlx::PgConnection::connect_with(&options).await.unwrap();
    sqlx::query(&format!(r#"CREATE DATABASE "{name}""#))
        .execute(&mut admin)
        .await
        .unwrap();
    let (base, query) = match cluster.split_once('?') {
        Some((base, query)) => (base, format!("?{query}")),
        None => (cluster.as_str(), String::new()),
    };
    let (server, _) = base.rsplit_once('/').expect("a URL with a database");
    (format!("{server}/{name}{query}"), options.database(&name))
}

/// A fresh migrated database: its URL and a pool on it.
pub async fn migrated_database() -> (String, sqlx::PgPool) {
    let (url, options) = scratch_database().await;
    let pool = sqlx::postgres::PgPoolOptions::new()
        .max_connections(2)
        .connect_with(options)
        .await
        .unwrap();
    api::startup::migrate(&pool).await.unwrap();
    (url, pool)
}

/// `huit <args>` with `stdin` written to it, on the database at `url`
/// (none: no DATABASE_URL at all).
pub fn huit_with_stdin(args: &[&str], url: Option<&str>, stdin: &str) -> std::process::Output {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut command = Command::new(env!("CARGO_BIN_EXE_huit"));
    command
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    match url {
        Some(url) => command.env("DATABASE_URL", url),
        None => command.env_remove("DATABASE_URL"),
    };
    let mut child = command.spawn().unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}
