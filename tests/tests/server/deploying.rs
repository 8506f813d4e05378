//! What an operator's platform relies on (the README's "Settings"): a
//! server started before its database serves once the database is up, and
//! gives up clearly when it never is; `huit health` says whether a server
//! answers; TLS to PostgreSQL as the URL's `sslmode` says.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use sqlx::{Connection, PgConnection};

use crate::support::process::{huit_bin, Cluster, Scratch, Server};
use crate::support::tls::TestCa;

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
    let said = serve_until_it_exits(&url, 2).await;
    assert!(
        said.contains("did not answer within 2 s (HUIT_DB_WAIT_SECS)"),
        "{said}"
    );
    assert!(said.contains("waiting for the database"), "{said}");
}

/// `url` with its `sslmode` set to `mode` and its `sslrootcert` to `root`
/// (none: removed).
fn with_tls(url: &str, mode: &str, root: Option<&Path>) -> String {
    let mut url = reqwest::Url::parse(url).expect("a URL");
    let kept: Vec<(String, String)> = url
        .query_pairs()
        .filter(|(k, _)| k != "sslmode" && k != "sslrootcert")
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect();
    {
        let mut query = url.query_pairs_mut();
        query
            .clear()
            .extend_pairs(kept)
            .append_pair("sslmode", mode);
        if let Some(root) = root {
            query.append_pair("sslrootcert", root.to_str().expect("UTF-8"));
        }
    }
    url.into()
}

/// A connection to `url`, and the TLS version it speaks.
async fn tls_of(url: &str) -> Result<Option<String>, sqlx::Error> {
    let mut conn = PgConnection::connect(url).await?;
    let version = store::connection::tls_version(&mut conn).await?;
    conn.close().await?;
    Ok(version)
}

/// The tests' clusters take TLS only, as a managed PostgreSQL does; their
/// URLs say `sslmode=verify-full` with the cluster's own authority
/// (`scripts/lib/pg.sh`), and so does every end-to-end test's. Verified
/// (`verify-full`, `verify-ca`) or not (`prefer`), it is encrypted; a
/// server whose certificate another authority signed is refused, by the
/// driver and by `huit serve` at once.
#[tokio::test]
async fn verify_full_and_verify_ca_encrypt_and_refuse_a_certificate_they_cannot_trust() {
    let scratch = Scratch::new("tls-verify");
    let cluster = Cluster::start(&scratch).await;
    let url = cluster.url("postgres");
    assert!(url.contains("sslmode=verify-full&sslrootcert="), "{url}");
    assert_eq!(tls_of(&url).await.unwrap().as_deref(), Some("TLSv1.3"));

    let server = Server::start(&scratch, "huit", &url, &[]).await;
    let log = std::fs::read_to_string(&server.log).unwrap();
    assert!(
        log.contains("tls=\"TLSv1.3\"") || log.contains("tls=TLSv1.3"),
        "{log}"
    );
    drop(server);

    let root = reqwest::Url::parse(&url).unwrap();
    let root = root
        .query_pairs()
        .find(|(k, _)| k == "sslrootcert")
        .map(|(_, v)| v.into_owned())
        .unwrap();
    let root = Path::new(&root);
    for mode in ["verify-ca", "prefer"] {
        let url = with_tls(&url, mode, Some(root));
        assert_eq!(
            tls_of(&url).await.unwrap().as_deref(),
            Some("TLSv1.3"),
            "{mode}"
        );
    }

    let other = scratch.path("other-ca.pem");
    TestCa::new("an authority the cluster never used").write_pem(&other);
    let untrusted = with_tls(&url, "verify-full", Some(&other));
    match tls_of(&untrusted).await {
        Err(sqlx::Error::Io(e)) => assert!(e.to_string().contains("UnknownIssuer"), "{e}"),
        other => panic!("refused for its certificate, not {other:?}"),
    }
    let also_untrusted = with_tls(&url, "verify-ca", Some(&other));
    assert!(matches!(
        tls_of(&also_untrusted).await,
        Err(sqlx::Error::Io(_))
    ));
    let said = serve_until_it_exits(&untrusted, 60).await;
    assert!(said.contains("waiting cannot change"), "{said}");
    assert!(
        !said.contains("waiting for the database"),
        "no wait: {said}"
    );
}

/// `sslmode=require`: encrypted, the certificate not checked (what a
/// provider without a published authority leaves).
#[tokio::test]
async fn require_encrypts_without_checking_the_certificate() {
    let scratch = Scratch::new("tls-require");
    let cluster = Cluster::start(&scratch).await;
    let url = with_tls(&cluster.url("postgres"), "require", None);
    assert!(!url.contains("sslrootcert"), "{url}");
    assert_eq!(tls_of(&url).await.unwrap().as_deref(), Some("TLSv1.3"));
    let server = Server::start(&scratch, "huit", &url, &[]).await;
    let bind = server.address.trim_start_matches("http://").to_owned();
    assert!(healthy(&bind), "{}", server.log_tail());
}

/// `sslmode=disable` against a server that takes TLS only: refused by its
/// `pg_hba.conf` (SQLSTATE 28000), and `huit serve` says so at once
/// instead of waiting HUIT_DB_WAIT_SECS for what no wait changes.
#[tokio::test]
async fn disable_is_refused_by_a_server_that_takes_tls_only() {
    let scratch = Scratch::new("tls-disable");
    let cluster = Cluster::start(&scratch).await;
    let url = with_tls(&cluster.url("postgres"), "disable", None);
    match tls_of(&url).await {
        Err(sqlx::Error::Database(e)) => {
            assert_eq!(e.code().as_deref(), Some("28000"), "{e}");
            assert!(e.message().contains("no encryption"), "{e}");
        }
        other => panic!("refused by pg_hba.conf, not {other:?}"),
    }
    let said = serve_until_it_exits(&url, 60).await;
    assert!(
        said.contains("refused the connection, which waiting cannot change"),
        "{said}"
    );
    assert!(said.contains("no encryption"), "{said}");
    assert!(
        !said.contains("waiting for the database"),
        "no wait: {said}"
    );
}

/// `huit serve` on `url` with `wait_secs` to wait for its database: what it
/// printed once it exited (it must fail).
async fn serve_until_it_exits(url: &str, wait_secs: u64) -> String {
    let (url, wait_secs) = (url.to_owned(), wait_secs.to_string());
    let out = tokio::task::spawn_blocking(move || {
        Command::new(huit_bin())
            .arg("serve")
            .env("DATABASE_URL", url)
            .env("BIND", "127.0.0.1:0")
            .env("HUIT_DB_WAIT_SECS", wait_secs)
            .env("RUST_LOG", "warn")
            .output()
            .expect("huit serve runs")
    })
    .await
    .unwrap();
    let said =
        String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "{said}");
    said
}
