//! Routing, health, documentation and failure of the database.

use e2e::{assert_problem, spawn_app, spawn_app_without_database};
use serde_json::{json, Value};

#[tokio::test]
async fn healthz_is_200_when_the_database_answers() {
    let app = spawn_app().await;
    let res = app.client.get(app.url("/healthz")).send().await.unwrap();
    assert_eq!(res.status(), 200);
    assert!(res.headers().contains_key("x-request-id"));
    assert_eq!(res.json::<Value>().await.unwrap(), json!({"status": "ok"}));
}

#[tokio::test]
async fn without_a_database_healthz_and_requests_are_503_not_hangs() {
    let app = spawn_app_without_database().await;
    let started = std::time::Instant::now();
    let res = app.client.get(app.url("/healthz")).send().await.unwrap();
    assert_problem(res, 503, "service_unavailable").await;
    let res = app
        .post_json(
            "/v1/accounts",
            &json!({"username": "kate", "password": "correct horse"}),
        )
        .await;
    assert_problem(res, 503, "service_unavailable").await;
    let res = app
        .client
        .get(app.url("/v1/me"))
        .bearer_auth("ab".repeat(32))
        .send()
        .await
        .unwrap();
    assert_problem(res, 503, "service_unavailable").await;
    assert!(started.elapsed() < std::time::Duration::from_secs(15));
}

#[tokio::test]
async fn unknown_routes_are_404_problems() {
    let app = spawn_app().await;
    for path in ["/", "/nope", "/v1", "/v1/nope", "/v1/me/extra", "/v2/me"] {
        let res = app.client.get(app.url(path)).send().await.unwrap();
        assert_problem(res, 404, "not_found").await;
    }
}

#[tokio::test]
async fn wrong_methods_are_405_problems() {
    let app = spawn_app().await;
    let cases = [
        ("PUT", "/v1/accounts"),
        ("GET", "/v1/accounts"),
        ("GET", "/v1/sessions"),
        ("POST", "/v1/me"),
        ("DELETE", "/v1/me"),
        ("GET", "/v1/sessions/current"),
        ("POST", "/healthz"),
    ];
    for (method, path) in cases {
        let res = app
            .client
            .request(method.parse().unwrap(), app.url(path))
            .send()
            .await
            .unwrap();
        assert_problem(res, 405, "method_not_allowed").await;
    }
}

#[tokio::test]
async fn the_openapi_document_and_its_ui_are_served() {
    let app = spawn_app().await;
    let res = app
        .client
        .get(app.url("/openapi.json"))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let served: Value = res.json().await.unwrap();
    let generated: Value = serde_json::from_str(&api::openapi::document_json()).unwrap();
    assert_eq!(served, generated);
    for path in [
        "/v1/accounts",
        "/v1/sessions",
        "/v1/sessions/current",
        "/v1/me",
        "/healthz",
    ] {
        assert!(served["paths"][path].is_object(), "{path} is documented");
    }

    let res = app.client.get(app.url("/docs")).send().await.unwrap();
    assert_eq!(res.status(), 200);
    assert!(res.text().await.unwrap().contains("openapi"));
}
