//! Webhooks (docs/API.md "Finding a game and coming back"): every feed item
//! POSTed in the Standard Webhooks format, signed, at least once and in
//! order per account, retried, failed, sent again by an admin, paused by a
//! 410 until an admin resumes them. A `kill -9` mid-delivery is in
//! `faults`.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

use crate::feed::{feed, two_player_table};
use crate::support::process::Scratch;
use crate::support::receiver::{Received, Receiver};
use crate::support::tls::TestCa;
use crate::support::{admin_token, get, json_of, play, post_empty, view};
use e2e::{assert_problem, eventually, spawn_app_with, TestApp};
use serde_json::{json, Value};

pub const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

async fn app_for(receiver: &Receiver, schedule: &str) -> TestApp {
    app_trusting(receiver, schedule, None).await
}

/// The app, its clients trusting the authorities of `extra_ca` beyond the
/// platform's (HUIT_EXTRA_CA_FILE).
async fn app_trusting(receiver: &Receiver, schedule: &str, extra_ca: Option<PathBuf>) -> TestApp {
    let (url, schedule) = (receiver.url.clone(), schedule.to_owned());
    spawn_app_with(move |s| {
        s.extra_ca_file = extra_ca;
        s.webhook_url = Some(url);
        s.webhook_secret = Some(SECRET.parse().unwrap());
        s.webhook_retry_schedule = schedule.parse().unwrap();
        s.webhook_timeout_secs = 2;
    })
    .await
}

async fn players(app: &TestApp) -> (String, String) {
    let tag = &uuid::Uuid::new_v4().simple().to_string()[..8];
    (
        app.player_token(&format!("wa_{tag}")).await,
        app.player_token(&format!("wb_{tag}")).await,
    )
}

/// The account id of a token.
async fn account_of(app: &TestApp, token: &str) -> String {
    let me = json_of(get(app, token, "/v1/me").await, 200).await;
    me["id"].as_str().unwrap().to_owned()
}

/// Each distinct item received (the first copy of each id), by account, in
/// the order received; every copy verified.
pub fn delivered(got: &[Received]) -> HashMap<String, Vec<Value>> {
    let mut seen = std::collections::HashSet::new();
    let mut by_account: HashMap<String, Vec<Value>> = HashMap::new();
    for r in got {
        assert!(
            r.verified(SECRET),
            "a signature that does not verify: {r:?}"
        );
        let body = r.json();
        assert_eq!(
            body["data"]["id"].to_string(),
            r.id,
            "webhook-id is the item id"
        );
        if seen.insert(r.id.clone()) {
            let account = body["data"]["account_id"].as_str().unwrap().to_owned();
            by_account.entry(account).or_default().push(body);
        }
    }
    by_account
}

/// A few moves on a two-player table of `a` and `b`.
async fn some_moves(app: &TestApp, a: &str, b: &str, id: &str, moves: usize) {
    for _ in 0..moves {
        let seat = view(app, a, id).await["current_seat"].as_u64().unwrap() as usize;
        let token = if seat == 0 { a } else { b };
        let v = view(app, token, id).await;
        let (mv, version) = (&v["legal_moves"][0], v["version"].as_i64());
        json_of(play(app, token, id, mv, version).await, 200).await;
    }
}

/// Waits until every feed item of `tokens` was received (by item id).
async fn all_received(app: &TestApp, receiver: &Receiver, tokens: &[&str]) {
    let mut ids = Vec::new();
    for t in tokens {
        ids.extend(feed(app, t).await.iter().map(|i| i["id"].to_string()));
    }
    eventually(Duration::from_secs(20), || async {
        let got: Vec<String> = receiver.got().iter().map(|r| r.id.clone()).collect();
        ids.iter().all(|id| got.contains(id)).then_some(())
    })
    .await
    .unwrap_or_else(|| panic!("not every item arrived: {ids:?}"));
}

#[tokio::test]
async fn every_item_arrives_signed_in_order_per_account_though_first_attempts_fail() {
    let receiver = Receiver::start().await;
    let failing = Duration::ZERO;
    receiver.answer(&[(500, failing), (503, failing), (502, failing)]);
    let app = app_for(&receiver, "100ms,100ms,100ms,100ms,100ms").await;
    let (a, b) = players(&app).await;
    let id = two_player_table(&app, &a, &b, None).await;
    some_moves(&app, &a, &b, &id, 6).await;
    json_of(
        post_empty(&app, &a, &format!("/v1/tables/{id}/resign")).await,
        200,
    )
    .await;
    all_received(&app, &receiver, &[&a, &b]).await;

    let by_account = delivered(&receiver.got());
    for token in [&a, &b] {
        let account = account_of(&app, token).await;
        let items = feed(&app, token).await;
        let sent: Vec<Value> = by_account[&account]
            .iter()
            .map(|b| b["data"].clone())
            .collect();
        let expected: Vec<Value> = items
            .iter()
            .map(|i| {
                let mut i = i.clone();
                i["account_id"] = json!(account);
                i
            })
            .collect();
        assert_eq!(sent, expected, "every item, in order, as the feed has it");
        for body in &by_account[&account] {
            assert_eq!(body["type"], body["data"]["kind"]);
            assert_eq!(body["timestamp"], body["data"]["at"]);
        }
    }
    assert!(receiver.got().len() > 3, "the failed attempts were retried");
    let admin = admin_token(&app).await;
    let page = json_of(
        get(&app, &admin, "/v1/admin/webhooks?status=delivered").await,
        200,
    )
    .await;
    let first = &page["deliveries"][0];
    assert_eq!(first["status"], "delivered", "{page}");
    assert!(first["delivered_at"].is_string());
    assert_eq!(page["url"], receiver.url.as_str());
    assert_eq!(page["paused_at"], Value::Null);
}

/// The first delivery that failed (after its retries), once one has, as an
/// admin (`admin`'s token) sees it.
async fn first_failed(app: &TestApp, admin: &str) -> Value {
    eventually(Duration::from_secs(10), || async {
        let page = json_of(
            get(app, admin, "/v1/admin/webhooks?status=failed").await,
            200,
        )
        .await;
        let first = page["deliveries"][0].clone();
        first.is_object().then_some(first)
    })
    .await
    .expect("a delivery fails after its retries")
}

/// An `https://` receiver whose certificate a private authority signed:
/// trusted through HUIT_EXTRA_CA_FILE, it gets every item; trusted by
/// nobody, it gets nothing (the handshake fails before a byte of the item
/// is sent), and the delivery says why.
#[tokio::test]
async fn an_https_receiver_is_sent_webhooks_only_when_its_certificate_is_trusted() {
    let scratch = Scratch::new("https-hooks");
    let ca = TestCa::new("huit webhooks test CA");
    let ca_file = scratch.path("extra-ca.pem");
    ca.write_pem(&ca_file);

    let receiver = Receiver::start_tls(&ca).await;
    assert!(receiver.url.starts_with("https://127.0.0.1:"));
    let app = app_trusting(&receiver, "100ms", Some(ca_file)).await;
    let (a, b) = players(&app).await;
    let id = two_player_table(&app, &a, &b, None).await;
    some_moves(&app, &a, &b, &id, 2).await;
    all_received(&app, &receiver, &[&a, &b]).await;
    let account = account_of(&app, &a).await;
    assert_eq!(
        delivered(&receiver.got())[&account].len(),
        feed(&app, &a).await.len(),
        "every item, signed, over TLS"
    );

    let untrusted = Receiver::start_tls(&TestCa::new("an authority nobody trusts")).await;
    let app = app_trusting(&untrusted, "100ms", None).await;
    let (a, b) = players(&app).await;
    let admin = admin_token(&app).await;
    two_player_table(&app, &a, &b, None).await;
    let failed = first_failed(&app, &admin).await;
    let error = failed["last_error"].as_str().unwrap();
    assert!(error.contains("UnknownIssuer"), "says why: {error}");
    assert!(untrusted.got().is_empty(), "nothing reached it");
}

#[tokio::test]
async fn a_410_pauses_deliveries_until_an_admin_resumes_them() {
    let receiver = Receiver::start().await;
    receiver.answer(&[(410, Duration::ZERO)]);
    let app = app_for(&receiver, "100ms").await;
    let (a, b) = players(&app).await;
    let admin = admin_token(&app).await;
    let id = two_player_table(&app, &a, &b, None).await;
    let paused = eventually(Duration::from_secs(10), || async {
        let page = json_of(get(&app, &admin, "/v1/admin/webhooks").await, 200).await;
        page["paused_at"].is_string().then_some(page)
    })
    .await
    .expect("the 410 pauses the URL");
    let waits = paused["deliveries"]
        .as_array()
        .unwrap()
        .iter()
        .any(|d| d["status"] == "pending" && d["last_error"] == "410 Gone: deliveries paused");
    assert!(waits, "the item answered 410 waits, pending: {paused}");
    let before = receiver.got().len();
    assert!(receiver.got().iter().any(|r| r.verified(SECRET)));
    some_moves(&app, &a, &b, &id, 2).await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(receiver.got().len(), before, "nothing sent while paused");

    let res = post_empty(&app, &a, "/v1/admin/webhooks/resume").await;
    assert_problem(res, 403, "forbidden").await;
    let resumed = json_of(
        post_empty(&app, &admin, "/v1/admin/webhooks/resume").await,
        200,
    )
    .await;
    assert_eq!(resumed["paused_at"], Value::Null);
    all_received(&app, &receiver, &[&a, &b]).await;
    let by_account = delivered(&receiver.got());
    let account = account_of(&app, &a).await;
    assert_eq!(by_account[&account].len(), feed(&app, &a).await.len());
    let recorded: i64 =
        sqlx::query_scalar("SELECT count(*) FROM admin_actions WHERE action = 'resume_webhooks'")
            .fetch_one(&app.pool)
            .await
            .unwrap();
    assert_eq!(recorded, 1, "the resumption is an admin action");
}

#[tokio::test]
async fn a_failed_delivery_sent_again_by_an_admin_arrives() {
    let receiver = Receiver::start().await;
    receiver.otherwise(500);
    let app = app_for(&receiver, "50ms").await;
    let (a, b) = players(&app).await;
    let admin = admin_token(&app).await;
    two_player_table(&app, &a, &b, None).await;
    let failed = first_failed(&app, &admin).await;
    assert_eq!(failed["attempts"], 2, "{failed}");
    assert_eq!(failed["last_error"], "answered 500 Internal Server Error");
    receiver.otherwise(200);
    let item = failed["item"]["id"].as_i64().unwrap();
    let retry = format!("/v1/admin/webhooks/{item}/retry");
    assert_problem(post_empty(&app, &a, &retry).await, 403, "forbidden").await;
    let again = json_of(post_empty(&app, &admin, &retry).await, 202).await;
    assert_eq!(again["attempts"], 0);
    eventually(Duration::from_secs(10), || async {
        let ids: Vec<String> = receiver.got().iter().map(|r| r.id.clone()).collect();
        (ids.iter().filter(|id| **id == item.to_string()).count() == 3).then_some(())
    })
    .await
    .expect("sent again, it arrives");
    let recorded: Option<i64> =
        sqlx::query_scalar("SELECT feed_item_id FROM admin_actions WHERE action = 'retry_webhook'")
            .fetch_one(&app.pool)
            .await
            .unwrap();
    assert_eq!(
        recorded,
        Some(item),
        "the retry is an admin action on the item"
    );

    for (path, status, code) in [
        ("/v1/admin/webhooks/999999/retry", 404, "not_found"),
        ("/v1/admin/webhooks/x/retry", 404, "not_found"),
    ] {
        assert_problem(post_empty(&app, &admin, path).await, status, code).await;
    }
    for bad in ["status=lost", "limit=0", "before=0"] {
        let res = get(&app, &admin, &format!("/v1/admin/webhooks?{bad}")).await;
        assert_problem(res, 400, "invalid_query").await;
    }
    assert_problem(get(&app, &a, "/v1/admin/webhooks").await, 403, "forbidden").await;
}

#[tokio::test]
async fn a_pending_delivery_is_not_sent_twice_at_once_and_webhooks_off_cannot_resume() {
    let receiver = Receiver::start().await;
    receiver.answer(&[(200, Duration::from_secs(3))]);
    let app = app_for(&receiver, "1s").await;
    let (a, b) = players(&app).await;
    let admin = admin_token(&app).await;
    two_player_table(&app, &a, &b, None).await;
    let pending = eventually(Duration::from_secs(10), || async {
        (!receiver.got().is_empty()).then_some(())
    })
    .await;
    assert!(pending.is_some());
    let item = receiver.got()[0].id.clone();
    let res = post_empty(&app, &admin, &format!("/v1/admin/webhooks/{item}/retry")).await;
    assert_problem(res, 409, "delivery_pending").await;

    let off = e2e::spawn_app().await;
    let admin = admin_token(&off).await;
    let page = json_of(get(&off, &admin, "/v1/admin/webhooks").await, 200).await;
    assert_eq!(
        page,
        json!({"url": null, "paused_at": null, "pending": 0, "deliveries": [], "next": null})
    );
    let res = post_empty(&off, &admin, "/v1/admin/webhooks/resume").await;
    assert_problem(res, 409, "webhooks_off").await;
}
