//! Apple's and Google's push services as this machine cannot reach them:
//! local fakes over TLS (their certificates signed by a test's authority)
//! that check what the real services check, and answer as they do.
//!
//! - [`FakeApns`]: HTTP/2 only; `POST /3/device/<token>` with a provider
//!   token (an ES256 JWT, verified with the team key's public half: `kid`,
//!   `iss`, `iat` within the hour), `apns-topic` the bundle id,
//!   `apns-push-type: alert`, `apns-collapse-id` at most 64 bytes, and a
//!   payload of at most 4 KiB with `aps.alert.loc-key`; a refusal is
//!   Apple's status and `{"reason"}`.
//! - [`FakeFcm`]: the OAuth2 token endpoint (the JWT grant: an RS256
//!   assertion verified with the service account's public key, `iss` its
//!   e-mail, `aud` the token URI, the messaging scope, at most an hour) and
//!   `POST /v1/projects/<id>/messages:send` with an access token it issued,
//!   `android.priority: high`, a collapse key, localisation keys and data
//!   of strings; a refusal is Google's `{"error": {..., "details":
//!   [{"errorCode"}]}}`.
//!
//! Both record each request, what it broke of those checks, and can be told
//! to answer the next requests otherwise (a status, after a pause), to
//! hold them until released, or to call tokens dead.

use std::collections::{HashSet, VecDeque};
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use actix_web::{http::Version, web, App, HttpRequest, HttpResponse, HttpServer};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::{json, Value};
use tokio::sync::Semaphore;

use super::tls::TestCa;

/// What the fakes know of the server's credentials.
pub const KEY_ID: &str = "ABC123DEFG";
pub const TEAM_ID: &str = "DEF123GHIJ";
pub const TOPIC: &str = "fr.huit.app";
pub const PROJECT: &str = "huit-test";
pub const CLIENT_EMAIL: &str = "push@huit-test.iam.gserviceaccount.com";

/// One request a fake received.
#[derive(Debug, Clone)]
pub struct Pushed {
    /// The device token it was for.
    pub token: String,
    /// `apns-collapse-id`, or FCM's `android.collapse_key`.
    pub collapse: String,
    /// The APNs payload, or FCM's `message`.
    pub body: Value,
    /// Its credential: the provider token, or the access token.
    pub credential: String,
    /// What it broke of the checks (none: it was well formed).
    pub broke: Vec<String>,
    /// Its status as answered.
    pub status: u16,
}

/// What both fakes share: the requests, the script, the dead tokens, the
/// gate.
#[derive(Debug, Default)]
struct Common {
    got: Mutex<Vec<Pushed>>,
    script: Mutex<VecDeque<(u16, Duration)>>,
    dead: Mutex<HashSet<String>>,
    /// When set, each request waits for a permit first.
    gate: Mutex<Option<Arc<Semaphore>>>,
    /// Well-formed requests that arrived (held or not).
    arrived: std::sync::atomic::AtomicUsize,
}

impl Common {
    /// The answer to the next well-formed request for `token`: dead, then
    /// scripted, else 200; after the gate and the pause.
    async fn next(&self, token: &str) -> u16 {
        self.arrived
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let gate = self.gate.lock().unwrap().clone();
        if let Some(gate) = gate {
            gate.acquire().await.expect("the gate stays open").forget();
        }
        if self.dead.lock().unwrap().contains(token) {
            return 410;
        }
        let next = self.script.lock().unwrap().pop_front();
        let (status, pause) = next.unwrap_or((200, Duration::ZERO));
        tokio::time::sleep(pause).await;
        status
    }

    fn record(&self, pushed: Pushed) {
        self.got.lock().unwrap().push(pushed);
    }
}

/// The controls of a fake.
#[derive(Debug, Clone)]
pub struct Fake {
    /// Its base URL (`HUIT_APNS_URL`, `HUIT_FCM_URL`).
    pub url: String,
    common: Arc<Common>,
}

impl Fake {
    /// The next requests are answered with these statuses, each after its
    /// pause.
    pub fn answer(&self, script: &[(u16, Duration)]) {
        self.common.script.lock().unwrap().extend(script);
    }

    /// `token` is dead: APNs answers 410 `Unregistered`, FCM 404
    /// `UNREGISTERED`.
    pub fn kill_token(&self, token: &str) {
        self.common.dead.lock().unwrap().insert(token.to_owned());
    }

    /// Holds every request until [`Fake::release`] lets it through.
    pub fn hold(&self) {
        *self.common.gate.lock().unwrap() = Some(Arc::new(Semaphore::new(0)));
    }

    /// Lets every held request, and every later one, through.
    pub fn release(&self) {
        if let Some(gate) = self.common.gate.lock().unwrap().take() {
            gate.add_permits(Semaphore::MAX_PERMITS / 2);
        }
    }

    /// How many well-formed requests arrived, answered or held.
    pub fn arrived(&self) -> usize {
        self.common
            .arrived
            .load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Every request answered so far, in the order they were.
    pub fn got(&self) -> Vec<Pushed> {
        self.common.got.lock().unwrap().clone()
    }
}

/// A listener on a free port of 127.0.0.1, and the base URL of an HTTPS
/// server on it.
fn listener() -> (std::net::TcpListener, String) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    let port = listener.local_addr().unwrap().port();
    (listener, format!("https://127.0.0.1:{port}"))
}

/// The fake APNs.
#[derive(Debug, Clone)]
pub struct FakeApns {
    pub fake: Fake,
    /// The team key's private half, PEM (PKCS#8, as Apple's `.p8`).
    pub key_pem: String,
}

struct ApnsState {
    common: Arc<Common>,
    public: DecodingKey,
}

impl FakeApns {
    pub fn start(ca: &TestCa) -> Self {
        let key = rcgen::KeyPair::generate().expect("a P-256 key");
        let public = DecodingKey::from_ec_pem(key.public_key_pem().as_bytes()).unwrap();
        let common = Arc::new(Common::default());
        let state = web::Data::new(ApnsState {
            common: common.clone(),
            public,
        });
        let (listener, url) = listener();
        let server = HttpServer::new(move || {
            App::new()
                .app_data(state.clone())
                .app_data(web::PayloadConfig::new(64 * 1024))
                .route("/3/device/{token}", web::post().to(apns_push))
        })
        .workers(1)
        .listen_rustls_0_23(listener, ca.server_config())
        .expect("listens");
        tokio::spawn(server.run());
        Self {
            fake: Fake { url, common },
            key_pem: key.serialize_pem(),
        }
    }

    /// The `.p8` file, written at `path`.
    pub fn write_key(&self, path: &Path) {
        std::fs::write(path, &self.key_pem).unwrap();
    }
}

/// What APNs checks of a provider token.
fn provider_token_broken(header: &str, public: &DecodingKey) -> Option<String> {
    let Some(jwt) = header.strip_prefix("bearer ") else {
        return Some("authorization: not `bearer <jwt>`".into());
    };
    let head = match jsonwebtoken::decode_header(jwt) {
        Ok(head) => head,
        Err(e) => return Some(format!("provider token: {e}")),
    };
    if head.alg != Algorithm::ES256 || head.kid.as_deref() != Some(KEY_ID) {
        return Some(format!("provider token: {:?} {:?}", head.alg, head.kid));
    }
    let mut validation = Validation::new(Algorithm::ES256);
    validation.required_spec_claims = ["iss".to_owned()].into();
    validation.validate_exp = false;
    validation.set_issuer(&[TEAM_ID]);
    match jsonwebtoken::decode::<Value>(jwt, public, &validation) {
        Err(e) => Some(format!("provider token: {e}")),
        Ok(data) => {
            let iat = data.claims["iat"].as_i64().unwrap_or(0);
            let age = chrono::Utc::now().timestamp() - iat;
            (!(-60..3600).contains(&age)).then(|| format!("provider token: iat {age} s old"))
        }
    }
}

async fn apns_push(
    req: HttpRequest,
    body: web::Bytes,
    token: web::Path<String>,
    state: web::Data<ApnsState>,
) -> HttpResponse {
    let header = |name: &str| {
        req.headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned()
    };
    let mut broke = Vec::new();
    let mut refuse = |status: u16, reason: &str, why: String| {
        broke.push(why);
        Some((status, reason.to_owned()))
    };
    let payload: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let collapse = header("apns-collapse-id");
    let refusal = if req.version() != Version::HTTP_2 {
        refuse(
            405,
            "MethodNotAllowed",
            format!("{:?}, not HTTP/2", req.version()),
        )
    } else if let Some(why) = provider_token_broken(&header("authorization"), &state.public) {
        refuse(403, "InvalidProviderToken", why)
    } else if header("apns-topic") != TOPIC {
        refuse(
            400,
            "BadTopic",
            format!("apns-topic {:?}", header("apns-topic")),
        )
    } else if header("apns-push-type") != "alert" {
        refuse(400, "InvalidPushType", "apns-push-type".into())
    } else if collapse.is_empty() || collapse.len() > 64 {
        refuse(
            400,
            "BadCollapseId",
            format!("apns-collapse-id {collapse:?}"),
        )
    } else if body.len() > 4096 {
        refuse(413, "PayloadTooLarge", format!("{} bytes", body.len()))
    } else if !payload["aps"]["alert"]["loc-key"].is_string() {
        refuse(
            400,
            "PayloadEmpty",
            format!("no aps.alert.loc-key: {payload}"),
        )
    } else if !token.bytes().all(|b| b.is_ascii_hexdigit()) {
        refuse(400, "BadDeviceToken", format!("token {token:?}"))
    } else {
        None
    };
    let (status, reason) = match refusal {
        Some(refused) => refused,
        None => match state.common.next(&token).await {
            410 => (410, "Unregistered".to_owned()),
            status => (status, "TooManyRequests".to_owned()),
        },
    };
    state.common.record(Pushed {
        token: token.into_inner(),
        collapse,
        body: payload,
        credential: header("authorization"),
        broke,
        status,
    });
    let mut answer = HttpResponse::build(actix_web::http::StatusCode::from_u16(status).unwrap());
    match status {
        200 => answer.finish(),
        _ => answer.json(json!({"reason": reason})),
    }
}

/// The fake FCM and its token endpoint.
#[derive(Debug, Clone)]
pub struct FakeFcm {
    pub fake: Fake,
    /// The service account's key file's JSON.
    pub credentials: Value,
    grants: Arc<Mutex<Vec<String>>>,
}

struct FcmState {
    common: Arc<Common>,
    public: rsa::RsaPublicKey,
    token_uri: String,
    /// The access tokens issued, in order.
    grants: Arc<Mutex<Vec<String>>>,
}

/// The service account's RSA key (private PEM, public PEM): made once, as
/// a 2048-bit key takes a moment.
fn service_account_key() -> &'static (String, String) {
    static KEY: OnceLock<(String, String)> = OnceLock::new();
    KEY.get_or_init(|| {
        use rsa::pkcs8::{EncodePrivateKey, EncodePublicKey, LineEnding};
        let key = rsa::RsaPrivateKey::new(&mut rand::rngs::OsRng, 2048).expect("an RSA key");
        let private = key.to_pkcs8_pem(LineEnding::LF).unwrap().to_string();
        let public = key
            .to_public_key()
            .to_public_key_pem(LineEnding::LF)
            .unwrap();
        (private, public)
    })
}

impl FakeFcm {
    pub fn start(ca: &TestCa) -> Self {
        let (private, public) = service_account_key();
        let common = Arc::new(Common::default());
        let grants = Arc::new(Mutex::new(Vec::new()));
        let (listener, url) = listener();
        let token_uri = format!("{url}/token");
        let state = web::Data::new(FcmState {
            common: common.clone(),
            public: rsa::pkcs8::DecodePublicKey::from_public_key_pem(public).unwrap(),
            token_uri: token_uri.clone(),
            grants: grants.clone(),
        });
        let server = HttpServer::new(move || {
            App::new()
                .app_data(state.clone())
                .route("/token", web::post().to(fcm_grant))
                .route(
                    "/v1/projects/{project}/messages:send",
                    web::post().to(fcm_send),
                )
        })
        .workers(1)
        .listen_rustls_0_23(listener, ca.server_config())
        .expect("listens");
        tokio::spawn(server.run());
        let credentials = json!({
            "type": "service_account",
            "project_id": PROJECT,
            "private_key_id": "0123456789abcdef",
            "private_key": private,
            "client_email": CLIENT_EMAIL,
            "client_id": "100000000000000000001",
            "auth_uri": "https://accounts.google.com/o/oauth2/auth",
            "token_uri": token_uri,
            "auth_provider_x509_cert_url": "https://www.googleapis.com/oauth2/v1/certs",
            "client_x509_cert_url": "https://www.googleapis.com/robot/v1/metadata/x509/push"
        });
        Self {
            fake: Fake { url, common },
            credentials,
            grants,
        }
    }

    /// The service account's key file, written at `path`.
    pub fn write_credentials(&self, path: &Path) {
        std::fs::write(path, self.credentials.to_string()).unwrap();
    }

    /// How many access tokens were granted.
    pub fn grants(&self) -> usize {
        self.grants.lock().unwrap().len()
    }
}

/// The claims of an RS256 JWT whose signature `public` verifies. Google's
/// token endpoint takes base64url with or without padding (yup-oauth2
/// pads), so this does too.
fn rs256_claims(jwt: &str, public: &rsa::RsaPublicKey) -> Result<Value, String> {
    use base64::engine::{general_purpose, DecodePaddingMode, GeneralPurpose};
    use base64::Engine;
    use rsa::signature::Verifier;
    let lenient = GeneralPurpose::new(
        &base64::alphabet::URL_SAFE,
        general_purpose::NO_PAD.with_decode_padding_mode(DecodePaddingMode::Indifferent),
    );
    let decode = |part: &str| lenient.decode(part).map_err(|e| e.to_string());
    let parts: Vec<&str> = jwt.split('.').collect();
    let [head, claims, signature] = parts[..] else {
        return Err("not three parts".into());
    };
    let header: Value = serde_json::from_slice(&decode(head)?).map_err(|e| e.to_string())?;
    if header["alg"] != "RS256" {
        return Err(format!("alg {}", header["alg"]));
    }
    let signature = rsa::pkcs1v15::Signature::try_from(decode(signature)?.as_slice())
        .map_err(|e| e.to_string())?;
    rsa::pkcs1v15::VerifyingKey::<sha2::Sha256>::new(public.clone())
        .verify(format!("{head}.{claims}").as_bytes(), &signature)
        .map_err(|e| format!("signature: {e}"))?;
    serde_json::from_slice(&decode(claims)?).map_err(|e| e.to_string())
}

async fn fcm_grant(
    form: web::Form<Vec<(String, String)>>,
    state: web::Data<FcmState>,
) -> HttpResponse {
    let field = |name: &str| {
        form.iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
            .unwrap_or_default()
    };
    let refused = |why: String| {
        HttpResponse::BadRequest().json(json!({"error": "invalid_grant", "error_description": why}))
    };
    if field("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer" {
        return refused(format!("grant_type {:?}", field("grant_type")));
    }
    let claims = match rs256_claims(&field("assertion"), &state.public) {
        Ok(claims) => claims,
        Err(e) => return refused(format!("assertion: {e}")),
    };
    if claims["iss"] != CLIENT_EMAIL || claims["aud"] != state.token_uri.as_str() {
        return refused(format!("iss, aud: {claims}"));
    }
    let scope = claims["scope"].as_str().unwrap_or_default();
    if !scope
        .split(' ')
        .any(|s| s == "https://www.googleapis.com/auth/firebase.messaging")
    {
        return refused(format!("scope {scope:?}"));
    }
    let life = claims["exp"].as_i64().unwrap_or(0) - claims["iat"].as_i64().unwrap_or(0);
    if !(1..=3600).contains(&life) {
        return refused(format!("an assertion for {life} s"));
    }
    let access = format!("ya29.{}", uuid::Uuid::new_v4().simple());
    state.grants.lock().unwrap().push(access.clone());
    HttpResponse::Ok()
        .json(json!({"access_token": access, "expires_in": 3599, "token_type": "Bearer"}))
}

/// What FCM checks of a message (the token's validity aside).
fn message_broken(message: &Value) -> Option<String> {
    let android = &message["android"];
    let notification = &android["notification"];
    let keys_ok = ["title_loc_key", "body_loc_key"].iter().all(|k| {
        notification[k]
            .as_str()
            .is_some_and(|v| v.starts_with("huit."))
    });
    let data_ok = message["data"]
        .as_object()
        .is_some_and(|d| !d.is_empty() && d.values().all(Value::is_string));
    if !message["token"].is_string() {
        Some("no token".into())
    } else if android["priority"] != "high" {
        Some(format!("android.priority {}", android["priority"]))
    } else if !android["collapse_key"].is_string() {
        Some("no android.collapse_key".into())
    } else if !keys_ok {
        Some(format!("localisation keys: {notification}"))
    } else if !data_ok {
        Some(format!("data must be strings: {}", message["data"]))
    } else {
        None
    }
}

async fn fcm_send(
    req: HttpRequest,
    body: web::Json<Value>,
    project: web::Path<String>,
    state: web::Data<FcmState>,
) -> HttpResponse {
    let message = body.into_inner()["message"].clone();
    let token = message["token"].as_str().unwrap_or_default().to_owned();
    let bearer = req
        .headers()
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or_default()
        .to_owned();
    let mut broke = Vec::new();
    let status = if !state.grants.lock().unwrap().contains(&bearer) {
        broke.push(format!("access token {bearer:?} was not granted"));
        401
    } else if *project != PROJECT {
        broke.push(format!("project {project:?}"));
        404
    } else if let Some(why) = message_broken(&message) {
        broke.push(why);
        400
    } else {
        match state.common.next(&token).await {
            410 => 404,
            status => status,
        }
    };
    state.common.record(Pushed {
        token,
        collapse: message["android"]["collapse_key"]
            .as_str()
            .unwrap_or_default()
            .to_owned(),
        body: message,
        credential: bearer,
        broke,
        status,
    });
    let code = |status: &str, error_code: &str| {
        json!({"error": {"code": 0, "message": "refused", "status": status, "details": [
            {"@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError", "errorCode": error_code}
        ]}})
    };
    let mut answer = HttpResponse::build(actix_web::http::StatusCode::from_u16(status).unwrap());
    match status {
        200 => answer.json(json!({"name": format!("projects/{PROJECT}/messages/1")})),
        404 => answer.json(code("NOT_FOUND", "UNREGISTERED")),
        429 => answer.json(code("RESOURCE_EXHAUSTED", "QUOTA_EXCEEDED")),
        401 => answer.json(code("UNAUTHENTICATED", "THIRD_PARTY_AUTH_ERROR")),
        400 => answer.json(code("INVALID_ARGUMENT", "INVALID_ARGUMENT")),
        _ => answer.json(code("UNAVAILABLE", "UNAVAILABLE")),
    }
}
