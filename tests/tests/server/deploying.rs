//! What an operator's platform relies on (the README's "Settings"): a
//! server started before its database serves once the database is up, and
//! gives up clearly when it never is; `huit health` says whether a server
//! answers.

use std::process::Command;
use std::time::Duration;

use crate::support::process::{huit_bin, Cluster, Scratch, Server};

/// `huit health` against `bind`: whether it exited 0.
fn healthy(bind: &str) -> bool {
    let out = Command::new(huit_bin())
        .arg("health")
        .env("BIND", bind)
        .output()
        .expect("huit health runs");
    out.status.success()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_started_before_its_database_waits_for_it_then_serves() {
    let scratch = Scratch::new("db-wait");
    let cluster = Cluster::start(&scratch).await;
    let url = cluster.url("postgres");
    cluster.stop("fast").await;
    // The database comes up 2 s after the server started.
    let late = async {
        tokio::time::sleep(Duration::from_secs(2)).await;
        cluster.restart().await;
    };
    let (server, ()) = tokio::join!(
        Server::start(&scratch, "huit", &url, &[("HUIT_DB_WAIT_SECS", "60")]),
        late
    );
    let log = std::fs::read_to_string(&server.log).unwrap();
    assert!(
        log.contains("waiting for the database"),
        "it said why it waited:\n{log}"
    );
    let bind = server.address.trim_start_matches("http://").to_owned();
    assert!(
        healthy(&bind),
        "healthy once it serves:\n{}",
        server.log_tail()
    );
    let port: u16 = bind.rsplit(':').next().unwrap().parse().unwrap();
    assert!(
        healthy(&format!("0.0.0.0:{port}")),
        "0.0.0.0 is asked on the loopback"
    );
    drop(server);
    assert!(!healthy(&bind), "nothing answers there any more");
}

#[tokio::test]
async fn a_server_whose_database_never_answers_gives_up_saying_why() {
    let scratch = Scratch::new("db-never");
    let cluster = Cluster::start(&scratch).await;
    let url = cluster.url("postgres");
    cluster.stop("fast").await;
    let out = tokio::task::spawn_blocking(move || {
        Command::new(huit_bin())
            .arg("serve")
            .env("DATABASE_URL", url)
            .env("BIND", "127.0.0.1:0")
            .env("HUIT_DB_WAIT_SECS", "2")
            .env("RUST_LOG", "warn")
            .output()
            .expect("huit serve runs")
    })
    .await
    .unwrap();
    let said =
        String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "{said}");
    assert!(
        said.contains("did not answer within 2 s (HUIT_DB_WAIT_SECS)"),
        "{said}"
    );
    assert!(said.contains("waiting for the database"), "{said}");
}
