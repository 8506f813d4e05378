//! Push to phones (docs/API.md "Push to phones"): every feed item sent to
//! each of the account's phones through APNs and FCM (local fakes that
//! check what Apple and Google check, over TLS with a test authority),
//! unless the player follows the table or their feed; in order per
//! device, retried on a 429 or 5xx, a dead token dropping its device,
//! never holding a move, nothing lost to a `kill -9`.

use std::collections::HashSet;
use std::time::Duration;

use crate::feed::{feed, two_player_table};
use crate::support::process::{Scratch, Server};
use crate::support::push_fakes::{FakeApns, FakeFcm, Pushed, KEY_ID, TEAM_ID, TOPIC};
use crate::support::tls::TestCa;
use crate::support::{admin_token, get, json_of, play, post, post_empty, view};
use e2e::{assert_problem, eventually, spawn_app_with, TestApp};
use serde_json::{json, Value};

/// An app pushing to both fakes, its clients trusting their authority.
struct Phones {
    app: TestApp,
    apns: FakeApns,
    fcm: FakeFcm,
    _scratch: Scratch,
}

/// The files and settings a studio fills in, for the fakes.
struct Credentials {
    ca_file: std::path::PathBuf,
    key_file: std::path::PathBuf,
    service_account: std::path::PathBuf,
}

fn credentials(scratch: &Scratch, ca: &TestCa, apns: &FakeApns, fcm: &FakeFcm) -> Credentials {
    let files = Credentials {
        ca_file: scratch.path("extra-ca.pem"),
        key_file: scratch.path("AuthKey_ABC123DEFG.p8"),
        service_account: scratch.path("service-account.json"),
    };
    ca.write_pem(&files.ca_file);
    apns.write_key(&files.key_file);
    fcm.write_credentials(&files.service_account);
    files
}

async fn phones(schedule: &str) -> Phones {
    let scratch = Scratch::new("push");
    let ca = TestCa::new("huit push test CA");
    let (apns, fcm) = (FakeApns::start(&ca), FakeFcm::start(&ca));
    let files = credentials(&scratch, &ca, &apns, &fcm);
    let (apns_url, fcm_url, schedule) = (apns.fake.url.clone(), fcm.fake.url.clone(), schedule);
    let schedule = schedule.parse().unwrap();
    let app = spawn_app_with(move |s| {
        s.extra_ca_file = Some(files.ca_file);
        s.apns_key_file = Some(files.key_file);
        s.apns_key_id = Some(KEY_ID.into());
        s.apns_team_id = Some(TEAM_ID.into());
        s.apns_topic = Some(TOPIC.into());
        s.apns_url = apns_url;
        s.fcm_credentials = Some(files.service_account);
        s.fcm_url = fcm_url;
        s.webhook_retry_schedule = schedule;
        s.push_timeout_secs = 5;
    })
    .await;
    Phones {
        app,
        apns,
        fcm,
        _scratch: scratch,
    }
}

/// An APNs token of its own for each `i`.
fn apns_token(i: u8) -> String {
    format!("{i:02x}").repeat(32)
}

/// An FCM token of its own for each `i`.
fn fcm_token(i: u8) -> String {
    format!("fcm{i}:APA91bH-x_yZ0123456789abcdefghij")
}

async fn register(app: &TestApp, token: &str, platform: &str, device: &str) -> Value {
    let body = json!({"platform": platform, "token": device, "locale": "fr-FR"});
    json_of(post(app, token, "/v1/me/devices", &body).await, 201).await
}

/// The seat on turn moves (its first legal move), `moves` times.
async fn some_moves(app: &TestApp, tokens: [&str; 2], id: &str, moves: usize) {
    for _ in 0..moves {
        let seat = view(app, tokens[0], id).await["current_seat"]
            .as_u64()
            .unwrap() as usize;
        let v = view(app, tokens[seat], id).await;
        let (mv, version) = (&v["legal_moves"][0], v["version"].as_i64());
        json_of(play(app, tokens[seat], id, mv, version).await, 200).await;
    }
}

/// The seat on turn moves until `token`'s feed holds more than `than`
/// items (at most 30 moves).
async fn until_fed(app: &TestApp, tokens: [&str; 2], id: &str, token: &str, than: usize) {
    for _ in 0..30 {
        if feed(app, token).await.len() > than {
            return;
        }
        some_moves(app, tokens, id, 1).await;
    }
    panic!("no new item for {token} in 30 moves");
}

/// The pushes by status, of the device `device` (all when `None`).
async fn statuses(app: &TestApp, device: Option<&str>) -> Vec<String> {
    sqlx::query_scalar(
        r#"SELECT status FROM pushes
           WHERE $1::uuid IS NULL OR device_id = $1::uuid ORDER BY id"#,
    )
    .bind(device)
    .fetch_all(&app.pool)
    .await
    .unwrap()
}

/// Waits until no push is pending: their statuses.
async fn settled(app: &TestApp, device: Option<&str>) -> Vec<String> {
    eventually(Duration::from_secs(20), || async {
        let all = statuses(app, device).await;
        (!all.is_empty() && all.iter().all(|s| s != "pending")).then_some(all)
    })
    .await
    .expect("every push settles")
}

/// Waits until no push is pending and none failed.
async fn all_delivered_but_skipped(app: &TestApp) {
    let all = settled(app, None).await;
    assert!(
        all.iter().all(|s| s == "delivered" || s == "skipped"),
        "{all:?}"
    );
}

/// Waits until every push was delivered (else says what they met).
async fn all_delivered(app: &TestApp) {
    let all = settled(app, None).await;
    let errors: Vec<Option<String>> =
        sqlx::query_scalar("SELECT last_error FROM pushes WHERE status <> 'delivered'")
            .fetch_all(&app.pool)
            .await
            .unwrap();
    assert!(all.iter().all(|s| s == "delivered"), "{all:?}: {errors:?}");
}

/// The feed items' ids of what a fake delivered (200) to `device`, in
/// order: APNs carries a number, FCM a string.
fn delivered_items(got: &[Pushed], device: &str) -> Vec<i64> {
    got.iter()
        .filter(|p| p.token == device && p.status == 200)
        .map(|p| {
            let id = p.body.get("item_id").unwrap_or(&p.body["data"]["item_id"]);
            id.as_i64()
                .or_else(|| id.as_str().and_then(|s| s.parse().ok()))
                .unwrap()
        })
        .collect()
}

fn ids(items: &[Value]) -> Vec<i64> {
    items.iter().map(|i| i["id"].as_i64().unwrap()).collect()
}

#[tokio::test]
async fn every_item_reaches_each_phone_as_apple_and_google_check_it_in_order() {
    let Phones { app, apns, fcm, .. } = phones("100ms").await;
    let [a, b]: [String; 2] = crate::support::players(&app, 2).await.try_into().unwrap();
    register(&app, &a, "fcm", &fcm_token(1)).await;
    register(&app, &b, "apns", &apns_token(2)).await;
    let id = two_player_table(&app, &a, &b, None).await;
    some_moves(&app, [&a, &b], &id, 6).await;
    all_delivered(&app).await;

    let (to_apple, to_google) = (apns.fake.got(), fcm.fake.got());
    for pushed in to_apple.iter().chain(&to_google) {
        assert!(pushed.broke.is_empty(), "well formed: {pushed:?}");
        assert_eq!(pushed.collapse, id, "one collapse id a table");
    }
    let b_feed = feed(&app, &b).await;
    assert_eq!(delivered_items(&to_apple, &apns_token(2)), ids(&b_feed));
    assert_eq!(
        delivered_items(&to_google, &fcm_token(1)),
        ids(&feed(&app, &a).await)
    );

    // What each says, as the contract has it.
    let last = to_apple.last().unwrap();
    let item = b_feed.last().unwrap();
    let kind = item["kind"].as_str().unwrap();
    assert_eq!(last.body["aps"]["alert"]["loc-key"], format!("huit.{kind}"));
    assert_eq!(last.body["aps"]["badge"], item["my_turn"]);
    assert_eq!(last.body["aps"]["sound"], "default");
    assert_eq!(
        (&last.body["kind"], &last.body["table_id"]),
        (&item["kind"], &json!(id))
    );
    let message = &to_google.last().unwrap().body;
    assert_eq!(message["android"]["priority"], "high");
    assert_eq!(message["data"]["table_id"], json!(id));
    let body_key = message["android"]["notification"]["body_loc_key"]
        .as_str()
        .unwrap();
    assert!(body_key.starts_with("huit."), "{body_key}");

    // One provider token and one access token for all of them.
    let credentials = |got: &[Pushed]| {
        got.iter()
            .map(|p| p.credential.clone())
            .collect::<HashSet<_>>()
    };
    assert_eq!(credentials(&to_apple).len(), 1);
    assert_eq!((credentials(&to_google).len(), fcm.grants()), (1, 1));
}

#[tokio::test]
async fn no_push_while_the_player_follows_the_table_and_one_as_soon_as_they_stop() {
    let Phones { app, apns, .. } = phones("2s").await;
    let [a, b]: [String; 2] = crate::support::players(&app, 2).await.try_into().unwrap();
    let device = register(&app, &b, "apns", &apns_token(3)).await;
    let device = device["id"].as_str().unwrap().to_owned();
    // Apple is busy at first: b's first push waits 2 s for its retry.
    apns.fake.answer(&[(503, Duration::ZERO)]);
    let id = two_player_table(&app, &a, &b, None).await;
    eventually(Duration::from_secs(10), || async {
        (!apns.fake.got().is_empty()).then_some(())
    })
    .await
    .expect("the first push meets a 503");
    // Meanwhile b follows the table: its view's stream is open.
    let stream = app
        .client
        .get(app.url(&format!("/v1/tables/{id}/view/stream")))
        .bearer_auth(&b)
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status(), 200);
    let written_before = statuses(&app, Some(&device)).await.len();
    let feed_before = feed(&app, &b).await.len();
    // b's feed grows by two while b follows.
    until_fed(&app, [&a, &b], &id, &b, feed_before + 1).await;
    // What was written before b followed is skipped when it comes due;
    // what came while b followed was never to be pushed.
    let skipped = settled(&app, Some(&device)).await;
    assert_eq!(
        skipped.len(),
        written_before,
        "no push written while following"
    );
    assert!(skipped.iter().all(|s| s == "skipped"), "{skipped:?}");
    assert_eq!(
        apns.fake.got().len(),
        1,
        "nothing reached the phone but the 503"
    );
    // Following one table is not following another.
    let other = two_player_table(&app, &a, &b, None).await;
    let elsewhere = eventually(Duration::from_secs(10), || async {
        apns.fake
            .got()
            .into_iter()
            .find(|p| p.status == 200 && p.body["table_id"] == json!(other))
    })
    .await;
    assert!(elsewhere.is_some(), "b's other table is pushed");
    all_delivered_but_skipped(&app).await;
    let pushed_before = apns.fake.got().len();

    // A long poll of the feed is following too, every table.
    let poll = app
        .client
        .get(app.url("/v1/me/feed?after=1000000&wait=2"))
        .bearer_auth(&b)
        .send();
    let (polled, ()) = tokio::join!(poll, async {
        let follows_feed = eventually(Duration::from_secs(5), || async {
            let n: i64 = sqlx::query_scalar(
                "SELECT count(*) FROM watching WHERE table_id = '00000000-0000-0000-0000-000000000000'",
            )
            .fetch_one(&app.pool)
            .await
            .unwrap();
            (n == 1).then_some(())
        })
        .await;
        assert!(follows_feed.is_some(), "the feed's long poll is followed");
    });
    assert_eq!(polled.unwrap().status(), 200);

    drop(stream);
    // No longer following once the grace is over (10 s, and a refresh).
    eventually(Duration::from_secs(20), || async {
        let n: i64 = sqlx::query_scalar("SELECT count(*) FROM watching WHERE until > now()")
            .fetch_one(&app.pool)
            .await
            .unwrap();
        (n == 0).then_some(())
    })
    .await
    .expect("the grace ends");
    let before = feed(&app, &b).await.len();
    until_fed(&app, [&a, &b], &id, &b, before).await;
    let pushed = eventually(Duration::from_secs(10), || async {
        let got = apns.fake.got();
        (got.len() > pushed_before).then(|| got[pushed_before..].to_vec())
    })
    .await
    .expect("pushed as soon as b stopped following");
    let new_items = ids(&feed(&app, &b).await[before..]);
    assert_eq!(delivered_items(&pushed, &apns_token(3))[0], new_items[0]);
}

#[tokio::test]
async fn a_dead_token_drops_its_phone_and_a_busy_platform_is_retried_in_order() {
    let Phones { app, apns, fcm, .. } = phones("100ms,100ms,100ms").await;
    let [a, b]: [String; 2] = crate::support::players(&app, 2).await.try_into().unwrap();
    register(&app, &a, "fcm", &fcm_token(4)).await;
    register(&app, &b, "apns", &apns_token(5)).await;
    apns.fake.kill_token(&apns_token(5));
    fcm.fake
        .answer(&[(429, Duration::ZERO), (500, Duration::ZERO)]);
    let id = two_player_table(&app, &a, &b, None).await;
    some_moves(&app, [&a, &b], &id, 4).await;

    let gone = eventually(Duration::from_secs(20), || async {
        let mine = json_of(get(&app, &b, "/v1/me/devices").await, 200).await;
        mine["devices"].as_array().unwrap().is_empty().then_some(())
    })
    .await;
    assert!(gone.is_some(), "Apple's 410 drops the phone");
    assert!(apns.fake.got().iter().all(|p| p.status == 410));

    all_delivered(&app).await;
    let got = fcm.fake.got();
    let answered: Vec<u16> = got.iter().map(|p| p.status).take(3).collect();
    assert_eq!(answered, [429, 500, 200], "the first item, tried thrice");
    assert_eq!(
        delivered_items(&got, &fcm_token(4)),
        ids(&feed(&app, &a).await),
        "in order"
    );

    // Google's UNREGISTERED drops a phone too.
    fcm.fake.kill_token(&fcm_token(4));
    until_fed(&app, [&a, &b], &id, &a, feed(&app, &a).await.len()).await;
    let gone = eventually(Duration::from_secs(20), || async {
        let mine = json_of(get(&app, &a, "/v1/me/devices").await, 200).await;
        mine["devices"].as_array().unwrap().is_empty().then_some(())
    })
    .await;
    assert!(gone.is_some(), "Google's UNREGISTERED drops the phone");
    let last = fcm.fake.got().last().cloned().unwrap();
    assert_eq!(last.status, 404);
}

#[tokio::test]
async fn a_platform_that_does_not_answer_holds_no_move() {
    let Phones { app, apns, .. } = phones("100ms").await;
    let [a, b]: [String; 2] = crate::support::players(&app, 2).await.try_into().unwrap();
    register(&app, &b, "apns", &apns_token(6)).await;
    apns.fake.hold();
    let id = two_player_table(&app, &a, &b, None).await;
    eventually(Duration::from_secs(10), || async {
        (apns.fake.arrived() > 0).then_some(())
    })
    .await
    .expect("a push is on its way");
    // Every move is answered while Apple holds the push.
    some_moves(&app, [&a, &b], &id, 6).await;
    assert!(apns.fake.got().is_empty(), "the push is still held");
    apns.fake.release();
    all_delivered(&app).await;
    let b_feed = ids(&feed(&app, &b).await);
    assert_eq!(delivered_items(&apns.fake.got(), &apns_token(6)), b_feed);
}

#[tokio::test]
async fn admins_see_the_pushes_and_send_a_failed_one_again() {
    let Phones { app, apns, .. } = phones("100ms").await;
    let [a, b]: [String; 2] = crate::support::players(&app, 2).await.try_into().unwrap();
    let admin = admin_token(&app).await;
    register(&app, &b, "apns", &apns_token(7)).await;
    apns.fake
        .answer(&[(503, Duration::ZERO), (503, Duration::ZERO)]);
    two_player_table(&app, &a, &b, None).await;
    let failed = eventually(Duration::from_secs(10), || async {
        let page = json_of(
            get(&app, &admin, "/v1/admin/pushes?status=failed").await,
            200,
        )
        .await;
        page["pushes"].as_array().unwrap().first().cloned()
    })
    .await
    .expect("a push fails past the schedule");
    assert_eq!(
        (&failed["platform"], &failed["attempts"]),
        (&json!("apns"), &json!(2))
    );
    assert!(
        failed["last_error"].as_str().unwrap().contains("503"),
        "{failed}"
    );
    assert_eq!(failed.get("token"), None, "a phone's token is not shown");

    let path = format!("/v1/admin/pushes/{}/retry", failed["id"]);
    assert_problem(post_empty(&app, &b, &path).await, 403, "forbidden").await;
    let again = json_of(post_empty(&app, &admin, &path).await, 202).await;
    assert_eq!(
        (&again["status"], &again["attempts"]),
        (&json!("pending"), &json!(0))
    );
    let delivered = eventually(Duration::from_secs(10), || async {
        let page = json_of(get(&app, &admin, "/v1/admin/pushes").await, 200).await;
        let push = page["pushes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["id"] == failed["id"])
            .cloned()
            .unwrap();
        (push["status"] == "delivered").then_some(page)
    })
    .await
    .expect("sent again");
    assert_eq!(
        (&delivered["apns"], &delivered["fcm"]),
        (&json!(true), &json!(true))
    );
    let actions: i64 =
        sqlx::query_scalar("SELECT count(*) FROM admin_actions WHERE action = 'retry_push'")
            .fetch_one(&app.pool)
            .await
            .unwrap();
    assert_eq!(actions, 1, "recorded");
    assert_problem(
        post_empty(&app, &admin, "/v1/admin/pushes/99999999/retry").await,
        404,
        "not_found",
    )
    .await;
    assert_problem(
        get(&app, &admin, "/v1/admin/pushes?status=lost").await,
        400,
        "invalid_query",
    )
    .await;
}

/// Pushes survive a crash mid-delivery: the server is killed while Apple
/// holds the first push; once another process starts, every item reaches
/// the phone, in order, the one in flight at worst twice; and the new
/// process's metrics count them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_killed_mid_push_loses_none() {
    use crate::faults::{app_of, database_url};
    let scratch = Scratch::new("push-kill9");
    let ca = TestCa::new("huit push test CA");
    let (apns, fcm) = (FakeApns::start(&ca), FakeFcm::start(&ca));
    let files = credentials(&scratch, &ca, &apns, &fcm);
    let (db, _, pool) = e2e::fresh_database().await;
    let url = database_url(&db);
    let paths =
        [&files.ca_file, &files.key_file, &files.service_account].map(|p| p.display().to_string());
    let env = [
        ("HUIT_EXTRA_CA_FILE", paths[0].as_str()),
        ("HUIT_APNS_KEY_FILE", paths[1].as_str()),
        ("HUIT_APNS_KEY_ID", KEY_ID),
        ("HUIT_APNS_TEAM_ID", TEAM_ID),
        ("HUIT_APNS_TOPIC", TOPIC),
        ("HUIT_APNS_URL", apns.fake.url.as_str()),
        ("HUIT_FCM_CREDENTIALS", paths[2].as_str()),
        ("HUIT_FCM_URL", fcm.fake.url.as_str()),
        ("HUIT_WEBHOOK_RETRY_SCHEDULE", "200ms,200ms,200ms"),
        ("HUIT_PUSH_TIMEOUT_SECS", "120"),
    ];
    apns.fake.hold();
    let mut server = Server::start(&scratch, "huit-0", &url, &env).await;
    let app = app_of(&server, &pool);
    let [a, b]: [String; 2] = crate::support::players(&app, 2).await.try_into().unwrap();
    register(&app, &b, "apns", &apns_token(8)).await;
    let id = two_player_table(&app, &a, &b, None).await;
    eventually(Duration::from_secs(10), || async {
        (apns.fake.arrived() > 0).then_some(())
    })
    .await
    .expect("a push in flight");
    server.kill9();
    apns.fake.release();

    let mut env = env.to_vec();
    env.push(("HUIT_METRICS_BIND", "127.0.0.1:0"));
    let server = Server::start(&scratch, "huit-1", &url, &env).await;
    let app = app_of(&server, &pool);
    some_moves(&app, [&a, &b], &id, 4).await;
    all_delivered(&app).await;
    let got = apns.fake.got();
    let mut first_copies = Vec::new();
    for item in delivered_items(&got, &apns_token(8)) {
        if !first_copies.contains(&item) {
            first_copies.push(item);
        }
    }
    assert_eq!(
        first_copies,
        ids(&feed(&app, &b).await),
        "every item, in order"
    );
    assert!(
        got.len() <= first_copies.len() + 1,
        "the one in flight at worst twice"
    );

    let text = reqwest::get(server.metrics.as_deref().expect("metrics are served"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let delivered = text.lines().any(|l| {
        l.starts_with("huit_pushes_total{")
            && l.contains(r#"outcome="delivered""#)
            && l.contains(r#"platform="apns""#)
    });
    assert!(delivered, "pushes counted: {text}");
    assert!(text.contains("huit_push_oldest_pending_seconds"), "{text}");
}
