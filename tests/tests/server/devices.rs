//! The phones an account registers for push (docs/API.md "Push to
//! phones"): one token is one phone, which moves to the account that
//! registered it last; at most 10 an account; bad tokens refused; the
//! phones of an account deleted or sanctioned are dropped.

use crate::erasure::delete_me;
use crate::support::{delete, get, json_of, post};
use e2e::{assert_problem, spawn_app, Cast, TestApp};
use serde_json::{json, Value};

const APNS: &str = "8f3c0b7a1e2d4c5b6a7980f1e2d3c4b5a69788f0e1d2c3b4a5968778695a4b3c";

/// An APNs token of its own for each `i`.
fn apns(i: usize) -> String {
    format!("{i:064x}")
}

async fn register(app: &TestApp, token: &str, body: &Value) -> reqwest::Response {
    post(app, token, "/v1/me/devices", body).await
}

async fn devices_of(app: &TestApp, token: &str) -> Vec<Value> {
    let listed = json_of(get(app, token, "/v1/me/devices").await, 200).await;
    listed["devices"].as_array().unwrap().clone()
}

async fn stored_devices(app: &TestApp, account: &str) -> i64 {
    sqlx::query_scalar("SELECT count(*) FROM devices WHERE account_id = $1::uuid")
        .bind(account)
        .fetch_one(&app.pool)
        .await
        .unwrap()
}

#[tokio::test]
async fn a_phone_is_registered_once_moves_to_the_account_that_registers_it_and_is_dropped() {
    let app = spawn_app().await;
    let cast = Cast::new(&app, &["fern", "gus"], "hal", "iris").await;
    let (fern, gus) = (&cast.tokens[0], &cast.tokens[1]);
    let phone = json!({"platform": "apns", "token": APNS, "locale": "fr-FR"});
    let first = json_of(register(&app, fern, &phone).await, 201).await;
    assert_eq!(
        (&first["platform"], &first["locale"]),
        (&json!("apns"), &json!("fr-FR"))
    );
    assert_eq!(first.get("token"), None, "a token is not shown back");
    let again = json_of(register(&app, fern, &phone).await, 200).await;
    assert_eq!(
        again["id"], first["id"],
        "the same token is the same device"
    );
    assert_eq!(devices_of(&app, fern).await, vec![first.clone()]);

    // One phone, one player: gus logs in on it, and it is his.
    let moved = json_of(
        register(&app, gus, &json!({"platform": "apns", "token": APNS})).await,
        200,
    )
    .await;
    assert_eq!(
        (&moved["id"], &moved["locale"]),
        (&first["id"], &Value::Null)
    );
    assert_eq!(devices_of(&app, fern).await, Vec::<Value>::new());
    assert_eq!(devices_of(&app, gus).await.len(), 1);

    // The same token on the other platform is another phone.
    let fcm = "dQw4w9WgXcQ:APA91bH-x_yZ0123456789abcdefghij";
    json_of(
        register(&app, fern, &json!({"platform": "fcm", "token": fcm})).await,
        201,
    )
    .await;
    let export = json_of(get(&app, fern, "/v1/me/export").await, 200).await;
    assert_eq!(export["devices"].as_array().unwrap().len(), 1, "{export:#}");

    // Dropped by its account only.
    let path = format!("/v1/me/devices/{}", first["id"].as_str().unwrap());
    assert_problem(delete(&app, fern, &path).await, 404, "not_found").await;
    assert_eq!(delete(&app, gus, &path).await.status(), 204);
    assert_problem(delete(&app, gus, &path).await, 404, "not_found").await;
    assert_problem(
        delete(&app, gus, "/v1/me/devices/not-an-id").await,
        404,
        "not_found",
    )
    .await;
    assert_eq!(devices_of(&app, gus).await, Vec::<Value>::new());

    // Logging out may drop the phone it logs out of.
    let phone = json!({"platform": "apns", "token": apns(7)});
    let id = json_of(register(&app, gus, &phone).await, 201).await["id"].clone();
    let bad = delete(&app, gus, "/v1/sessions/current?device_id=nope").await;
    assert_problem(bad, 400, "invalid_query").await;
    let out = format!("/v1/sessions/current?device_id={}", id.as_str().unwrap());
    assert_eq!(delete(&app, gus, &out).await.status(), 204);
    assert_eq!(
        stored_devices(&app, &cast.players[1].0.to_string()).await,
        0
    );
    assert_problem(get(&app, gus, "/v1/me").await, 401, "unauthorized").await;
}

#[tokio::test]
async fn ten_phones_an_account_and_tokens_not_the_platforms_are_refused() {
    let app = spawn_app().await;
    let token = app.player_token("jade").await;
    for i in 0..10 {
        let phone = json!({"platform": "apns", "token": apns(i)});
        json_of(register(&app, &token, &phone).await, 201).await;
    }
    let eleventh = json!({"platform": "apns", "token": apns(10)});
    assert_problem(
        register(&app, &token, &eleventh).await,
        409,
        "too_many_devices",
    )
    .await;
    // A phone it has already is still its own.
    let known = json!({"platform": "apns", "token": apns(3), "locale": "de"});
    json_of(register(&app, &token, &known).await, 200).await;
    for (body, code) in [
        (
            json!({"platform": "apns", "token": &APNS[1..]}),
            "invalid_device",
        ),
        (
            json!({"platform": "apns", "token": APNS.replace('8', "x")}),
            "invalid_device",
        ),
        (
            json!({"platform": "fcm", "token": "short"}),
            "invalid_device",
        ),
        (
            json!({"platform": "fcm", "token": "a b".repeat(10)}),
            "invalid_device",
        ),
        (
            json!({"platform": "apns", "token": APNS, "locale": "français"}),
            "invalid_device",
        ),
        (json!({"platform": "web", "token": APNS}), "invalid_body"),
        (json!({"platform": "apns"}), "invalid_body"),
        (
            json!({"platform": "apns", "token": APNS, "badge": 1}),
            "invalid_body",
        ),
    ] {
        assert_problem(register(&app, &token, &body).await, 422, code).await;
    }
    assert_eq!(devices_of(&app, &token).await.len(), 10);
}

#[tokio::test]
async fn an_account_deleted_or_sanctioned_keeps_no_phone() {
    let app = spawn_app().await;
    let cast = Cast::new(&app, &["kit", "lou"], "max", "ned").await;
    let (kit, lou) = (&cast.tokens[0], &cast.tokens[1]);
    let (kit_id, lou_id) = (cast.players[0].0.to_string(), cast.players[1].0.to_string());
    for (token, i) in [(kit, 1), (lou, 2)] {
        let phone = json!({"platform": "apns", "token": apns(i)});
        json_of(register(&app, token, &phone).await, 201).await;
    }
    let password = json!({"password": "correct horse battery"});
    assert_eq!(delete_me(&app, kit, &password).await.status(), 202);
    assert_eq!(stored_devices(&app, &kit_id).await, 0, "deleted: no push");
    let ban = json!({"action": "ban", "reason": "Cheated"});
    let path = format!("/v1/admin/accounts/{lou_id}/sanctions");
    json_of(post(&app, &cast.admin, &path, &ban).await, 201).await;
    assert_eq!(
        stored_devices(&app, &lou_id).await,
        0,
        "sanctioned: no push"
    );
}
