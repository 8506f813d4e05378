//! `/metrics` (docs/API.md "Disputes, the admin console, metrics"; the
//! README's table): requests, moves and the rest grow with what the server
//! does, in the Prometheus text format, on a listener of their own.

use crate::support;

use std::collections::BTreeMap;
use std::time::Duration;

use crate::support::{get, play, spawn_process_app, started_table, view, ProcessApp};
use e2e::{eventually, TestApp};
use serde_json::json;

/// An app whose metrics are its own: the recorder is one per process, and
/// the other tests of this binary run in this one.
async fn metered(name: &str, env: &[(&str, &str)]) -> ProcessApp {
    let mut env = env.to_vec();
    env.push(("HUIT_DB_MAX_CONNECTIONS", "5"));
    spawn_process_app(name, &env).await
}

/// A metric's samples: the labels (sorted `k="v"` pairs) of each, and its
/// value.
type Samples = BTreeMap<String, BTreeMap<String, f64>>;

/// Scrapes `/metrics` and reads its samples.
async fn scrape(app: &TestApp) -> Samples {
    let url = app.metrics.as_deref().expect("metrics are served");
    let res = reqwest::get(url).await.expect("scraped");
    assert_eq!(res.status(), 200);
    let kind = res.headers()["content-type"].to_str().unwrap().to_owned();
    assert!(kind.starts_with("text/plain; version=0.0.4"), "{kind}");
    let text = res.text().await.unwrap();
    let mut samples = Samples::new();
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
    {
        let (series, value) = line.rsplit_once(' ').expect("a sample line");
        let (name, labels) = match series.split_once('{') {
            Some((name, labels)) => {
                let mut labels: Vec<&str> = labels.trim_end_matches('}').split(',').collect();
                labels.sort();
                (name, labels.join(","))
            }
            None => (series, String::new()),
        };
        samples
            .entry(name.to_owned())
            .or_default()
            .insert(labels, value.parse().expect("a number"));
    }
    samples
}

/// The sum of `name`'s samples whose labels include every one of `with`.
fn sum(samples: &Samples, name: &str, with: &[&str]) -> f64 {
    samples.get(name).map_or(0.0, |series| {
        series
            .iter()
            .filter(|(labels, _)| with.iter().all(|w| labels.split(',').any(|l| l == *w)))
            .map(|(_, v)| v)
            .sum()
    })
}

#[tokio::test]
async fn requests_moves_and_the_rest_make_their_metrics_grow() {
    let process = metered("metrics-grow", &[]).await;
    let app = &process.app;
    let (id, tokens) = started_table(app, "classique", json!({}), 2).await;
    let before = scrape(app).await;
    let moves_route = r#"route="/v1/tables/{id}/moves""#;
    let mut moved = 0.0;
    for _ in 0..6 {
        let v = view(app, &tokens[0], &id).await;
        let seat = v["current_seat"].as_u64().unwrap() as usize;
        let mv = view(app, &tokens[seat], &id).await["legal_moves"][0].clone();
        let res = play(app, &tokens[seat], &id, &mv, None).await;
        assert_eq!(res.status(), 200);
        moved += 1.0;
    }
    // A long poll open while scraping.
    let poll = {
        let url = app.url(&format!("/v1/tables/{id}/events?after=100000&wait=3"));
        let token = tokens[0].clone();
        tokio::spawn(async move {
            reqwest::Client::new()
                .get(url)
                .bearer_auth(token)
                .send()
                .await
        })
    };
    let after = eventually(Duration::from_secs(5), || async {
        let after = scrape(app).await;
        (sum(&after, "huit_watches_open", &[]) >= 1.0).then_some(after)
    })
    .await
    .expect("the long poll is counted");
    let grew = |name: &str, with: &[&str]| sum(&after, name, with) - sum(&before, name, with);

    let ok_moves = [moves_route, r#"method="POST""#, r#"status="200""#];
    assert_eq!(grew("huit_http_requests_total", &ok_moves), moved);
    let timed = [moves_route, r#"method="POST""#];
    assert_eq!(
        grew("huit_http_request_duration_seconds_count", &timed),
        moved
    );
    assert!(grew("huit_http_request_duration_seconds_sum", &timed) > 0.0);
    assert_eq!(grew("huit_moves_total", &[r#"by="player""#]), moved);
    assert!(grew("huit_events_appended_total", &[]) >= moved);
    assert!(grew("huit_log_writer_batch_size_count", &[]) >= 1.0);
    // A route that is not one is counted under one label, not its path.
    get(app, &tokens[0], "/v1/no/such/thing").await;
    let later = scrape(app).await;
    assert!(
        sum(
            &later,
            "huit_http_requests_total",
            &[r#"route="unmatched""#]
        ) >= 1.0
    );
    assert!(!later["huit_http_requests_total"]
        .keys()
        .any(|labels| labels.contains("/v1/no/such")));
    // What is read when scraped.
    assert!(sum(&after, "huit_tables_cached", &[]) >= 1.0);
    assert!(sum(&after, "huit_db_connections", &[r#"state="in_use""#]) >= 0.0);
    assert_eq!(sum(&after, "huit_db_connections_max", &[]), 5.0);
    assert!(after.contains_key("huit_deadlines_pending"));
    poll.await.unwrap().unwrap();
}

#[tokio::test]
async fn the_server_moves_and_deadlines_are_measured() {
    let process = metered(
        "metrics-bots",
        &[("HUIT_BOT_DELAY_MS", "0"), ("HUIT_DUE_POLL_MS", "20")],
    )
    .await;
    let app = &process.app;
    let me = app.player_token("metered").await;
    let body = json!({
        "ruleset": "classique", "seats": 2, "options": {"rounds": 1},
        "bots": [{"level": "strong"}]
    });
    let table = support::json_of(support::post(app, &me, "/v1/tables", &body).await, 201).await;
    let id = table["id"].as_str().unwrap().to_owned();
    support::json_of(
        support::post_empty(app, &me, &format!("/v1/tables/{id}/start")).await,
        200,
    )
    .await;
    let tokens = [me.clone()];
    let samples = eventually(Duration::from_secs(60), || async {
        let v = view(app, &me, &id).await;
        if v["current_seat"] == 0 {
            let mv = v["legal_moves"][0].clone();
            play(app, &tokens[0], &id, &mv, None).await;
        }
        // A bot's decision is counted before its move is appended, and the
        // move before its deadline is counted as fired: a scrape between
        // them sees the one and not yet the others.
        let samples = scrape(app).await;
        let counted = [
            ("huit_bot_decision_seconds_count", &[r#"reason="bot""#][..]),
            ("huit_moves_total", &[r#"by="server""#][..]),
            ("huit_deadlines_fired_total", &[r#"kind="server_move""#][..]),
            ("huit_deadline_lateness_seconds_count", &[][..]),
        ];
        counted
            .iter()
            .all(|(name, labels)| sum(&samples, name, labels) >= 2.0)
            .then_some(samples)
    })
    .await;
    assert!(
        samples.is_some(),
        "the bot moved twice: decided, moved, fired and late, each counted"
    );
}

/// How many series `/metrics` holds (every sample line).
fn series(samples: &Samples) -> usize {
    samples.values().map(BTreeMap::len).sum()
}

#[tokio::test]
async fn made_up_methods_and_paths_add_no_series() {
    let process = metered("metrics-odd", &[]).await;
    let app = &process.app;
    let send = |method: String, path: String| {
        let (client, url) = (app.client.clone(), app.url(&path));
        async move {
            let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
            client.request(method, url).send().await.unwrap().status()
        }
    };
    // Once each kind: a made-up method on a route and off any route, a
    // standard one off any route.
    send("FOO0".into(), "/v1/tables".into()).await;
    send("FOO0".into(), "/v1/no/such/0".into()).await;
    send("GET".into(), "/v1/no/such/0".into()).await;
    let before = scrape(app).await;
    for i in 1..200 {
        // Methods up to thousands of characters, each new.
        let method = format!("FOO{i}{}", "X".repeat(i * 20));
        send(method.clone(), "/v1/tables".into()).await;
        send(method, format!("/v1/no/such/{i}")).await;
        send("GET".into(), format!("/v1/no/such/{i}/{}", "y".repeat(i))).await;
    }
    let after = scrape(app).await;
    assert_eq!(series(&after), series(&before), "no series added");
    let odd = [r#"method="other""#];
    assert!(sum(&after, "huit_http_requests_total", &odd) >= 2.0 * 200.0);
    assert!(!after["huit_http_requests_total"]
        .keys()
        .any(|labels| labels.contains("FOO")));
}

#[tokio::test]
async fn webhook_deliveries_attempts_and_backlog_are_measured() {
    use crate::support::receiver::Receiver;
    let receiver = Receiver::start().await;
    receiver.answer(&[(500, Duration::ZERO)]);
    let url = receiver.url.clone();
    let process = metered(
        "metrics-webhooks",
        &[
            ("HUIT_WEBHOOK_URL", &url),
            ("HUIT_WEBHOOK_SECRET", crate::webhooks::SECRET),
            ("HUIT_WEBHOOK_RETRY_SCHEDULE", "100ms"),
        ],
    )
    .await;
    let app = &process.app;
    started_table(app, "classique", json!({}), 2).await;
    let items: i64 = sqlx::query_scalar("SELECT count(*) FROM feed_items")
        .fetch_one(&app.pool)
        .await
        .unwrap();
    let samples = eventually(Duration::from_secs(20), || async {
        let samples = scrape(app).await;
        let delivered = sum(
            &samples,
            "huit_webhook_deliveries_total",
            &[r#"outcome="delivered""#],
        );
        (delivered == items as f64).then_some(samples)
    })
    .await
    .expect("every item delivered");
    let retried = sum(
        &samples,
        "huit_webhook_deliveries_total",
        &[r#"outcome="retry""#],
    );
    assert_eq!(retried, 1.0, "the first attempt failed once");
    assert_eq!(
        sum(&samples, "huit_webhook_attempts_total", &[]),
        items as f64 + 1.0
    );
    assert!(sum(&samples, "huit_webhook_delivery_lag_seconds_count", &[]) >= items as f64);
    assert_eq!(sum(&samples, "huit_webhook_pending", &[]), 0.0);
    assert_eq!(
        sum(&samples, "huit_webhook_oldest_pending_seconds", &[]),
        0.0
    );
}
