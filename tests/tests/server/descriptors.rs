//! One client cannot take the server down by opening streams: with its
//! open-file limit at 256 (`prlimit`, as `ulimit -n 256` would), a server
//! refuses the streams past its limits (429 per account, 503 past half its
//! descriptors), other users' requests keep answering, and the places of
//! streams the client closes are free again within seconds.

use std::time::Duration;

use crate::support::process::{Scratch, Server};
use e2e::{eventually, fresh_database};
use serde_json::{json, Value};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_opening_streams_until_refused_under_256_descriptors_leaves_others_served() {
    let scratch = Scratch::new("descriptors");
    let (db, _, _pool) = fresh_database().await;
    let mut url = reqwest::Url::parse(&e2e::cluster_url()).expect("DATABASE_URL is a URL");
    url.set_path(&db);
    let server = Server::start_under(
        &scratch,
        "huit",
        url.as_str(),
        &[],
        &["prlimit", "--nofile=256:256", "--"],
    )
    .await;
    // 12 accounts × 16 streams each would be 192: past the 128 (half of
    // 256 descriptors) the server keeps for streams.
    let client = e2e::http_client(Duration::from_secs(10));
    let post = |path: &str, body: Value| client.post(server.url(path)).json(&body).send();
    let password = "correct horse battery";
    let mut tokens = Vec::new();
    for i in 0..12 {
        let name = format!("flood{i}");
        assert_eq!(
            post(
                "/v1/accounts",
                json!({"username": name, "password": password})
            )
            .await
            .unwrap()
            .status(),
            201
        );
        let session: Value = post(
            "/v1/sessions",
            json!({"username": name, "password": password}),
        )
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
        tokens.push(session["token"].as_str().unwrap().to_owned());
    }
    let table: Value = client
        .post(server.url("/v1/tables"))
        .bearer_auth(&tokens[0])
        .json(&json!({"ruleset": "classique", "seats": 2}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let stream_url = server.url(&format!(
        "/v1/tables/{}/events/stream",
        table["id"].as_str().unwrap()
    ));

    // Open streams from every account until each is refused.
    let mut open = Vec::new();
    let mut refused = 0;
    for token in &tokens {
        loop {
            let res = client
                .get(&stream_url)
                .bearer_auth(token)
                .send()
                .await
                .unwrap();
            match res.status().as_u16() {
                200 => open.push(res),
                429 | 503 => {
                    refused += 1;
                    break;
                }
                other => panic!("{other}: {}", res.text().await.unwrap_or_default()),
            }
        }
    }
    assert_eq!(refused, tokens.len());
    assert!(
        open.len() <= 128,
        "{} streams open under 256 descriptors",
        open.len()
    );

    // Others are still served: health, sign-up and log-in.
    let health = client.get(server.url("/healthz")).send().await.unwrap();
    assert_eq!(health.status(), 200);
    let other = post(
        "/v1/accounts",
        json!({"username": "bystander", "password": password}),
    )
    .await
    .unwrap();
    assert_eq!(other.status(), 201);
    let login = post(
        "/v1/sessions",
        json!({"username": "bystander", "password": password}),
    )
    .await
    .unwrap();
    assert_eq!(login.status(), 201);
    let log = std::fs::read_to_string(&server.log).unwrap();
    assert!(log.contains("descriptors=256"), "{}", server.log_tail());
    assert!(
        !log.contains("Too many open files"),
        "{}",
        server.log_tail()
    );

    // The client goes away: its places are free again within seconds (a
    // stream notices a closed connection at its next keep-alive).
    drop(open);
    let reopened = eventually(Duration::from_secs(10), || async {
        let res = client
            .get(&stream_url)
            .bearer_auth(&tokens[0])
            .send()
            .await
            .ok()?;
        (res.status() == 200).then_some(res)
    })
    .await;
    assert!(
        reopened.is_some(),
        "no stream reopened after the client left"
    );
}
