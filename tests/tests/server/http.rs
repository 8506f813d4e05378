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
        ("PUT", "/v1/me"),
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

    // The interactive documentation, served whole by the server itself:
    // the page and every file it loads come from here, none from elsewhere.
    let page = app.client.get(app.url("/docs")).send().await.unwrap();
    assert_eq!(page.status(), 200);
    assert_eq!(page.url().path(), "/docs/", "/docs redirects to its folder");
    let html = page.text().await.unwrap();
    let assets: Vec<&str> = html
        .split(['"', '\''])
        .filter(|s| [".js", ".css", ".png"].iter().any(|ext| s.ends_with(ext)))
        .collect();
    assert!(assets.len() >= 3, "{html}");
    for asset in assets {
        assert!(!asset.contains("://"), "{asset} is fetched from elsewhere");
        let url = app.url(&format!("/docs/{}", asset.trim_start_matches("./")));
        let res = app.client.get(&url).send().await.unwrap();
        assert_eq!(res.status(), 200, "{url}");
        if asset.ends_with("swagger-initializer.js") {
            assert!(res.text().await.unwrap().contains("/openapi.json"));
        }
    }
}

/// A preflight as a browser sends it from `origin`.
fn preflight(app: &e2e::TestApp, origin: &str, headers: &str) -> e2e::checked::RequestBuilder {
    app.client
        .request(reqwest::Method::OPTIONS, app.url("/v1/tables"))
        .header("Origin", origin)
        .header("Access-Control-Request-Method", "POST")
        .header("Access-Control-Request-Headers", headers)
}

#[tokio::test]
async fn cors_lets_an_allowed_origin_call_and_read_the_headers_a_client_needs() {
    let origin = "https://app.example";
    let app = e2e::spawn_app_with(|s| {
        s.cors_origins = vec![origin.into(), "http://localhost:5173".into()]
    })
    .await;
    let res = preflight(&app, origin, "authorization, content-type, idempotency-key")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(res.headers()["access-control-allow-origin"], origin);
    let methods = res.headers()["access-control-allow-methods"]
        .to_str()
        .unwrap();
    assert!(methods.contains("POST"), "{methods}");
    let allowed = res.headers()["access-control-allow-headers"]
        .to_str()
        .unwrap()
        .to_ascii_lowercase();
    assert!(allowed.contains("idempotency-key"), "{allowed}");

    // The request itself: its answer names the origin and exposes the
    // headers a client reads.
    let res = app
        .client
        .get(app.url("/v1/rulesets"))
        .header("Origin", origin)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(res.headers()["access-control-allow-origin"], origin);
    let exposed = res.headers()["access-control-expose-headers"]
        .to_str()
        .unwrap()
        .to_ascii_lowercase();
    for h in ["etag", "retry-after", "x-request-id", "idempotent-replayed"] {
        assert!(exposed.contains(h), "{h} in {exposed}");
    }
}

#[tokio::test]
async fn cors_refuses_another_origin_with_a_problem_and_is_off_by_default() {
    let app = e2e::spawn_app_with(|s| s.cors_origins = vec!["https://app.example".into()]).await;
    let res = preflight(&app, "https://evil.example", "content-type")
        .send()
        .await
        .unwrap();
    assert!(!res.headers().contains_key("access-control-allow-origin"));
    assert_problem(res, 400, "cors_refused").await;
    // A request from it is served (a browser will not let its page read
    // the answer), without CORS headers.
    let res = app
        .client
        .get(app.url("/v1/rulesets"))
        .header("Origin", "https://evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    assert!(!res.headers().contains_key("access-control-allow-origin"));

    // No origin configured: no CORS at all, a preflight is a 405.
    let app = spawn_app().await;
    let res = preflight(&app, "https://app.example", "content-type")
        .send()
        .await
        .unwrap();
    assert!(!res.headers().contains_key("access-control-allow-origin"));
    assert_problem(res, 405, "method_not_allowed").await;
}
