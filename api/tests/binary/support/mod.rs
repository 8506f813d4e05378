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
