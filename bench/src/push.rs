//! `loadgen push-fake` and `loadgen push`: what push to phones costs the
//! moves, and how late the pushes go out (docs/API.md "Push to phones").
//!
//! `push-fake` stands in for Apple: a certificate authority of its own
//! (`<dir>/ca.pem`, for the server's `HUIT_EXTRA_CA_FILE`), a team key
//! (`<dir>/AuthKey.p8`), and an HTTP/2-only TLS server answering every
//! `POST /3/device/<token>` 200 at once, until killed.
//!
//! `push` plays `loadgen run`'s load (16 × 4, every player with a phone,
//! long-polling its view) against two servers on the same PostgreSQL, one
//! without push and one pushing to the fake, in a rotating order, two ways:
//! players away (this program deletes the on-server's `watching` rows
//! every 20 ms, so that every feed item is pushed, as to players who left
//! the app, while the load and the server's own work of following stay
//! the same), and players following (nothing is pushed). Prints `push moves_per_sec_off=<x>
//! moves_per_sec_on=<y> cost_pct=<c> p99_off_ms=<a> p99_on_ms=<b>
//! following_moves_per_sec_off=<x> following_moves_per_sec_on=<y>
//! following_cost_pct=<c> delivered=<n> skipped=<n> lag_p50_ms=<l>
//! lag_p99_ms=<m> errors=<e>`: medians of the runs, and the lag from an
//! item's time (its move's commit) to its push's outcome being committed
//! (the server's own record, so a bound on when Apple had it).

use std::path::PathBuf;
use std::sync::Arc;

use hyper_util::rt::{TokioExecutor, TokioIo};
use sqlx::postgres::PgPoolOptions;

use crate::load::measure::percentile;
use crate::load::{play_load, Figures, RunArgs};
use crate::Error;

/// The arguments of `loadgen push-fake`.
#[derive(clap::Args)]
pub struct FakeArgs {
    /// Where `ca.pem` and `AuthKey.p8` are written.
    #[arg(long)]
    pub dir: PathBuf,
    /// host:port to serve on.
    #[arg(long)]
    pub listen: String,
}

/// The arguments of `loadgen push`.
#[derive(clap::Args)]
pub struct PushArgs {
    /// The server without push.
    #[arg(long)]
    pub off_url: String,
    /// The server pushing to `loadgen push-fake`.
    #[arg(long)]
    pub on_url: String,
    /// The on-server's database (its pushes).
    #[arg(long, env = "DATABASE_URL")]
    pub database_url: String,
    #[arg(long, default_value_t = 10)]
    pub seconds: u64,
    /// Runs of each kind against each server.
    #[arg(long, default_value_t = 3)]
    pub rounds: usize,
}

/// Apple's answer to any push, once its body is read (an unread body would
/// hold the connection's flow-control window): 200, empty.
async fn apns(
    req: hyper::Request<hyper::body::Incoming>,
) -> Result<hyper::Response<http_body_util::Empty<bytes::Bytes>>, std::convert::Infallible> {
    use http_body_util::BodyExt;
    let _ = req.into_body().collect().await;
    Ok(hyper::Response::new(http_body_util::Empty::new()))
}

/// The authority, the team key, and Apple's stand-in (HTTP/2 only, as
/// APNs), until killed.
pub async fn fake(args: FakeArgs) -> Result<(), Error> {
    use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, IsCa, KeyPair};
    std::fs::create_dir_all(&args.dir)?;
    let mut params = CertificateParams::new(Vec::<String>::new())?;
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let authority = CertifiedIssuer::self_signed(params, KeyPair::generate()?)?;
    let key = KeyPair::generate()?;
    let names = vec!["127.0.0.1".to_owned(), "localhost".to_owned()];
    let certificate = CertificateParams::new(names)?.signed_by(&key, &authority)?;
    let mut tls = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()?
    .with_no_client_auth()
    .with_single_cert(
        vec![certificate.der().clone()],
        rustls::pki_types::PrivateKeyDer::Pkcs8(key.serialize_der().into()),
    )?;
    tls.alpn_protocols = vec![b"h2".to_vec()];
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(tls));
    let listener = tokio::net::TcpListener::bind(&args.listen).await?;
    // The files last: the script starts the server once the key is there.
    std::fs::write(args.dir.join("ca.pem"), authority.pem())?;
    std::fs::write(
        args.dir.join("AuthKey.p8"),
        KeyPair::generate()?.serialize_pem(),
    )?;
    loop {
        let (tcp, _) = listener.accept().await?;
        let acceptor = acceptor.clone();
        tokio::spawn(async move {
            let Ok(tls) = acceptor.accept(tcp).await else {
                return;
            };
            let service = hyper::service::service_fn(apns);
            // As APNs: up to 1,000 streams at once on a connection.
            let _ = hyper::server::conn::http2::Builder::new(TokioExecutor::new())
                .max_concurrent_streams(1000)
                .adaptive_window(true)
                .serve_connection(TokioIo::new(tls), service)
                .await;
        });
    }
}

/// Deletes the `watching` rows every 20 ms until stopped: the players
/// count as away.
fn away(pool: sqlx::PgPool) -> tokio::sync::oneshot::Sender<()> {
    let (stop, mut stopped) = tokio::sync::oneshot::channel();
    tokio::spawn(async move {
        while stopped.try_recv().is_err() {
            let _ = sqlx::query("DELETE FROM watching").execute(&pool).await;
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    });
    stop
}

/// How a run's players follow, and which server they play on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Side {
    push: bool,
    following: bool,
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    percentile(&xs, 0.5)
}

pub async fn run(args: PushArgs) -> Result<(), Error> {
    let pool = PgPoolOptions::new()
        .max_connections(2)
        .connect(&args.database_url)
        .await?;
    let sides = [
        Side {
            push: false,
            following: false,
        },
        Side {
            push: true,
            following: false,
        },
        Side {
            push: false,
            following: true,
        },
        Side {
            push: true,
            following: true,
        },
    ];
    let mut runs: Vec<(Side, Figures)> = Vec::new();
    let mut left = 0;
    for round in 0..args.rounds {
        for k in 0..sides.len() {
            let side = sides[(round + k) % sides.len()];
            let url = if side.push {
                &args.on_url
            } else {
                &args.off_url
            };
            let seed = 300 + (round * sides.len() + k) as u64;
            let mut load = RunArgs::against(url, args.seconds, seed);
            load.devices = true;
            let away = (side.push && !side.following).then(|| away(pool.clone()));
            let figures = play_load(load).await;
            away.map(|stop| stop.send(()));
            let figures = figures?;
            eprintln!("loadgen: push {side:?} {figures:?}");
            let pending = "SELECT count(*) FROM pushes WHERE status = 'pending'";
            left += crate::webhooks::drained(&pool, pending).await?;
            runs.push((side, figures));
        }
    }
    let lags: Vec<f64> = sqlx::query_scalar(
        r#"SELECT (EXTRACT(EPOCH FROM p.delivered_at - f.at) * 1000)::float8
           FROM pushes p JOIN feed_items f ON f.id = p.feed_item_id
           WHERE p.status = 'delivered' ORDER BY 1"#,
    )
    .fetch_all(&pool)
    .await?;
    let skipped: i64 = sqlx::query_scalar("SELECT count(*) FROM pushes WHERE status = 'skipped'")
        .fetch_one(&pool)
        .await?;
    let of = |side: Side, f: fn(&Figures) -> f64| {
        median(
            runs.iter()
                .filter(|(s, _)| *s == side)
                .map(|(_, x)| f(x))
                .collect(),
        )
    };
    let rate = |push, following| of(Side { push, following }, |f| f.moves_per_sec);
    let p99 = |push| {
        of(
            Side {
                push,
                following: false,
            },
            |f| f.p99_ms,
        )
    };
    let cost = |following| (1.0 - rate(true, following) / rate(false, following)) * 100.0;
    let errors: u64 = runs.iter().map(|(_, f)| f.errors).sum::<u64>() + left as u64;
    println!(
        "push moves_per_sec_off={:.0} moves_per_sec_on={:.0} cost_pct={:.1} p99_off_ms={:.2} p99_on_ms={:.2} following_moves_per_sec_off={:.0} following_moves_per_sec_on={:.0} following_cost_pct={:.1} delivered={} skipped={skipped} lag_p50_ms={:.1} lag_p99_ms={:.1} errors={errors}",
        rate(false, false),
        rate(true, false),
        cost(false),
        p99(false),
        p99(true),
        rate(false, true),
        rate(true, true),
        cost(true),
        lags.len(),
        percentile(&lags, 0.5),
        percentile(&lags, 0.99),
    );
    Ok(())
}
