//! Apple's push (APNs): a `POST /3/device/<token>` over HTTP/2, signed with
//! a provider token (an ES256 JWT from the team's `.p8` key, one per process,
//! renewed well before its hour), `apns-collapse-id` the table so that a
//! newer notice of a table replaces the older on the phone.

use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde::Deserialize;

use super::{refusal, text_args, text_key, Answer};
use crate::config::Settings;
use crate::outbound::ExtraRoots;
use store::feed::Item;

/// How long a provider token is used: Apple refuses one older than an hour,
/// and one renewed more often than every 20 minutes.
const TOKEN_LIFE: Duration = Duration::from_secs(50 * 60);

/// The provider token's claims.
#[derive(Debug, serde::Serialize)]
struct Claims<'a> {
    iss: &'a str,
    iat: i64,
}

/// What APNs says of a refused push.
#[derive(Debug, Deserialize)]
struct Refusal {
    reason: String,
}

/// An APNs sender.
pub struct Apns {
    client: reqwest::Client,
    url: String,
    topic: String,
    key_id: String,
    team_id: String,
    key: EncodingKey,
    /// The provider token and when it was made.
    token: Mutex<Option<(String, Instant)>>,
}

impl std::fmt::Debug for Apns {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Apns")
            .field("url", &self.url)
            .field("topic", &self.topic)
            .field("key_id", &self.key_id)
            .finish_non_exhaustive()
    }
}

/// The `.p8` key at `path`, or why not.
fn read_key(path: &Path) -> Result<EncodingKey, String> {
    let shown = path.display();
    let pem = std::fs::read(path).map_err(|e| format!("HUIT_APNS_KEY_FILE {shown}: {e}"))?;
    EncodingKey::from_ec_pem(&pem)
        .map_err(|e| format!("HUIT_APNS_KEY_FILE {shown}: not an EC private key (.p8): {e}"))
}

impl Apns {
    /// The sender `settings` configure, if `HUIT_APNS_KEY_FILE` is set (an
    /// error names what else is missing).
    pub fn of(
        settings: &Settings,
        roots: &ExtraRoots,
        timeout: Duration,
    ) -> Result<Option<Self>, String> {
        let Some(path) = &settings.apns_key_file else {
            return Ok(None);
        };
        let needed = |value: &Option<String>, name: &str| {
            value
                .clone()
                .filter(|v| !v.trim().is_empty())
                .ok_or_else(|| format!("HUIT_APNS_KEY_FILE needs {name}"))
        };
        let key_id = needed(&settings.apns_key_id, "HUIT_APNS_KEY_ID")?;
        let team_id = needed(&settings.apns_team_id, "HUIT_APNS_TEAM_ID")?;
        let topic = needed(&settings.apns_topic, "HUIT_APNS_TOPIC")?;
        let url = settings.apns_url.trim_end_matches('/').to_string();
        reqwest::Url::parse(&url)
            .ok()
            .filter(|u| u.scheme() == "https" && u.host().is_some())
            .ok_or_else(|| format!("HUIT_APNS_URL: an https:// URL, not {url:?}"))?;
        let client = super::client(roots, timeout)
            .http2_prior_knowledge()
            .build()
            .map_err(|e| format!("APNs: {e}"))?;
        Ok(Some(Self {
            client,
            url,
            topic,
            key_id,
            team_id,
            key: read_key(path)?,
            token: Mutex::new(None),
        }))
    }

    /// The provider token: the process's, or a new one when it is old.
    fn provider_token(&self) -> Result<String, jsonwebtoken::errors::Error> {
        let mut token = self.token.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((jwt, made)) = token.as_ref() {
            if made.elapsed() < TOKEN_LIFE {
                return Ok(jwt.clone());
            }
        }
        let mut header = Header::new(Algorithm::ES256);
        header.kid = Some(self.key_id.clone());
        let claims = Claims {
            iss: &self.team_id,
            iat: chrono::Utc::now().timestamp(),
        };
        let jwt = jsonwebtoken::encode(&header, &claims, &self.key)?;
        *token = Some((jwt.clone(), Instant::now()));
        Ok(jwt)
    }

    /// Forgets the provider token (APNs called it expired or invalid).
    fn forget_token(&self) {
        *self.token.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }

    /// Sends `item` to the device of `token`.
    pub async fn send(&self, token: &str, item: &Item) -> Answer {
        let jwt = match self.provider_token() {
            Ok(jwt) => jwt,
            Err(e) => return Answer::Refused(format!("APNs provider token: {e}")),
        };
        let sent = self
            .client
            .post(format!("{}/3/device/{token}", self.url))
            .header("authorization", format!("bearer {jwt}"))
            .header("apns-topic", &self.topic)
            .header("apns-push-type", "alert")
            .header("apns-priority", "10")
            .header("apns-collapse-id", item.table_id.to_string())
            .json(&payload(item))
            .send()
            .await;
        let response = match refusal(sent, "APNs") {
            Ok(response) => response,
            Err(answer) => return answer,
        };
        let status = response.status();
        let reason = response
            .json::<Refusal>()
            .await
            .map_or_else(|_| String::new(), |r| r.reason);
        let error = format!("APNs answered {status} {reason}");
        match (status.as_u16(), reason.as_str()) {
            (410, _) | (400, "BadDeviceToken") => Answer::Dead(error),
            (403, "ExpiredProviderToken" | "InvalidProviderToken") => {
                self.forget_token();
                Answer::Again(error)
            }
            (429 | 500..=599, _) => Answer::Again(error),
            _ => Answer::Refused(error),
        }
    }
}

/// The JSON an item is pushed as: the alert's localisation key and
/// arguments, the badge (the tables waiting for the player), and the
/// item's kind, table and id for the app.
pub fn payload(item: &Item) -> serde_json::Value {
    let key = text_key(item);
    serde_json::json!({
        "aps": {
            "alert": {
                "title-loc-key": format!("{key}.title"),
                "loc-key": key,
                "loc-args": text_args(item),
            },
            "badge": item.my_turn,
            "sound": "default",
        },
        "kind": item.kind,
        "table_id": item.table_id,
        "item_id": item.id,
    })
}
