//! A webhook receiver on 127.0.0.1 for the tests (`http://`, or `https://`
//! with a certificate a test's authority signed): it keeps every request
//! (its Standard Webhooks headers and body) and answers each as its script
//! says (a status, after a pause), then 200.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix_web::{web, App, HttpRequest, HttpResponse, HttpServer};
use serde_json::Value;

use super::tls::TestCa;

/// One request received.
#[derive(Debug, Clone)]
pub struct Received {
    pub id: String,
    pub timestamp: i64,
    pub signature: String,
    pub body: Vec<u8>,
}

impl Received {
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).expect("a JSON body")
    }

    /// Verified as Standard Webhooks says, with `secret` (the signing is
    /// checked against the specification's own vector in `api::webhooks`).
    pub fn verified(&self, secret: &str) -> bool {
        let secret: api::config::WebhookSecret = secret.parse().expect("a secret");
        let fresh = (chrono::Utc::now().timestamp() - self.timestamp).abs() < 300;
        fresh
            && api::webhooks::sign(&secret, &self.id, self.timestamp, &self.body) == self.signature
    }
}

#[derive(Debug, Default)]
struct State {
    got: Mutex<Vec<Received>>,
    /// The answers to the next requests: status, and a pause before it.
    script: Mutex<VecDeque<(u16, Duration)>>,
    /// The answer once the script is done (200 unless set).
    otherwise: Mutex<Option<u16>>,
}

/// The receiver: `url` to give the server.
#[derive(Debug, Clone)]
pub struct Receiver {
    pub url: String,
    state: Arc<State>,
}

impl Receiver {
    /// On `http://`.
    pub async fn start() -> Self {
        Self::listen(None).await
    }

    /// On `https://`, its certificate signed by `ca`.
    pub async fn start_tls(ca: &TestCa) -> Self {
        Self::listen(Some(ca.server_config())).await
    }

    async fn listen(tls: Option<rustls::ServerConfig>) -> Self {
        let state = Arc::new(State::default());
        let data = web::Data::from(state.clone());
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
        let port = listener.local_addr().unwrap().port();
        let server = HttpServer::new(move || {
            App::new()
                .app_data(data.clone())
                .route("/hook", web::post().to(receive))
        })
        .workers(1);
        let (server, scheme) = match tls {
            None => (server.listen(listener), "http"),
            Some(config) => (server.listen_rustls_0_23(listener, config), "https"),
        };
        tokio::spawn(server.expect("listens").run());
        Self {
            url: format!("{scheme}://127.0.0.1:{port}/hook"),
            state,
        }
    }

    /// The next requests are answered with these statuses, each after its
    /// pause.
    pub fn answer(&self, script: &[(u16, Duration)]) {
        self.state
            .script
            .lock()
            .unwrap()
            .extend(script.iter().copied());
    }

    /// Once the script is done, every request is answered `status`.
    pub fn otherwise(&self, status: u16) {
        *self.state.otherwise.lock().unwrap() = Some(status);
    }

    /// Every request received so far, in the order they arrived.
    pub fn got(&self) -> Vec<Received> {
        self.state.got.lock().unwrap().clone()
    }
}

async fn receive(req: HttpRequest, body: web::Bytes, state: web::Data<State>) -> HttpResponse {
    let header = |name: &str| {
        req.headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned()
    };
    state.got.lock().unwrap().push(Received {
        id: header("webhook-id"),
        timestamp: header("webhook-timestamp").parse().unwrap_or(0),
        signature: header("webhook-signature"),
        body: body.to_vec(),
    });
    let next = state.script.lock().unwrap().pop_front();
    let otherwise = state.otherwise.lock().unwrap().unwrap_or(200);
    let (status, pause) = next.unwrap_or((otherwise, Duration::ZERO));
    tokio::time::sleep(pause).await;
    HttpResponse::build(actix_web::http::StatusCode::from_u16(status).unwrap()).finish()
}
