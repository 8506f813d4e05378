//! Google's push (FCM HTTP v1): a `POST /v1/projects/<project>/messages:send`
//! with an OAuth2 access token of the service account, asked for at its
//! `token_uri` with a signed JWT (the JWT grant) by yup-oauth2, which keeps
//! it until it expires; `collapse_key` and `tag` the table, so that a newer
//! notice of a table replaces the older on the phone.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::connect::HttpConnector;
use serde::Deserialize;
use yup_oauth2::authenticator::Authenticator;

use super::{refusal, text_args, text_key, Answer};
use crate::outbound::{self, ExtraRoots};
use store::feed::Item;

/// The scope of sending FCM messages.
const SCOPE: &str = "https://www.googleapis.com/auth/firebase.messaging";

/// What FCM says of a refused message: `error.details[].errorCode`.
#[derive(Debug, Deserialize)]
struct Refusal {
    error: RefusalError,
}

#[derive(Debug, Deserialize)]
struct RefusalError {
    #[serde(default)]
    status: String,
    #[serde(default)]
    details: Vec<RefusalDetail>,
}

#[derive(Debug, Deserialize)]
struct RefusalDetail {
    #[serde(rename = "errorCode")]
    error_code: Option<String>,
}

/// An FCM sender.
pub struct Fcm {
    client: reqwest::Client,
    /// `<HUIT_FCM_URL>/v1/projects/<project_id>/messages:send`.
    send_url: String,
    auth: Authenticator<HttpsConnector<HttpConnector>>,
    /// FCM refused the access token: ask for a new one before the next push.
    stale: AtomicBool,
}

impl std::fmt::Debug for Fcm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fcm")
            .field("send_url", &self.send_url)
            .finish_non_exhaustive()
    }
}

impl Fcm {
    /// The sender of the service account whose key file is `credentials`,
    /// to FCM at `url`, its clients trusting `roots` too.
    pub async fn new(
        credentials: &Path,
        url: &str,
        roots: &ExtraRoots,
        timeout: Duration,
    ) -> Result<Self, String> {
        let shown = credentials.display();
        let key = yup_oauth2::read_service_account_key(credentials)
            .await
            .map_err(|e| format!("HUIT_FCM_CREDENTIALS {shown}: {e}"))?;
        let project = key
            .project_id
            .clone()
            .filter(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'))
            .ok_or_else(|| format!("HUIT_FCM_CREDENTIALS {shown}: no valid project_id"))?;
        let url = url.trim_end_matches('/');
        reqwest::Url::parse(url)
            .ok()
            .filter(|u| u.scheme() == "https" && u.host().is_some())
            .ok_or_else(|| format!("HUIT_FCM_URL: an https:// URL, not {url:?}"))?;
        let grants = yup_oauth2::CustomHyperClientBuilder::from(outbound::hyper_client(roots)?);
        let auth = yup_oauth2::ServiceAccountAuthenticator::with_client(key, grants)
            .with_timeout(timeout)
            .build()
            .await
            .map_err(|e| format!("HUIT_FCM_CREDENTIALS {shown}: {e}"))?;
        let client = super::client(roots, timeout)
            .build()
            .map_err(|e| format!("FCM: {e}"))?;
        Ok(Self {
            client,
            send_url: format!("{url}/v1/projects/{project}/messages:send"),
            auth,
            stale: AtomicBool::new(false),
        })
    }

    /// The access token: the process's until it expires (yup-oauth2 keeps
    /// it), a new one when FCM refused it.
    async fn access_token(&self) -> Result<String, String> {
        let token = if self.stale.swap(false, Ordering::Relaxed) {
            self.auth.force_refreshed_token(&[SCOPE]).await
        } else {
            self.auth.token(&[SCOPE]).await
        };
        token
            .map_err(|e| format!("FCM access token: {e}"))?
            .token()
            .map(str::to_string)
            .ok_or_else(|| "FCM access token: none in the answer".into())
    }

    /// Sends `item` to the device of `token`.
    pub async fn send(&self, token: &str, item: &Item) -> Answer {
        let access = match self.access_token().await {
            Ok(access) => access,
            Err(e) => return Answer::Again(e),
        };
        let sent = self
            .client
            .post(&self.send_url)
            .bearer_auth(access)
            .json(&message(token, item))
            .send()
            .await;
        let response = match refusal(sent, "FCM") {
            Ok(response) => response,
            Err(answer) => return answer,
        };
        let status = response.status();
        let refusal = response.json::<Refusal>().await.ok();
        let codes: Vec<String> = refusal
            .iter()
            .flat_map(|r| r.error.details.iter())
            .filter_map(|d| d.error_code.clone())
            .collect();
        let named = refusal.as_ref().map_or("", |r| r.error.status.as_str());
        let error = format!("FCM answered {status} {named} {}", codes.join(","));
        if codes.iter().any(|c| c == "UNREGISTERED") {
            return Answer::Dead(error);
        }
        match status.as_u16() {
            401 => {
                self.stale.store(true, Ordering::Relaxed);
                Answer::Again(error)
            }
            429 | 500..=599 => Answer::Again(error),
            _ => Answer::Refused(error),
        }
    }
}

/// The message an item is sent as: the notification's localisation keys
/// and arguments, its count (the tables waiting for the player), high
/// priority (through Doze), and the item's kind, table and id as data
/// (strings, as FCM wants).
pub fn message(token: &str, item: &Item) -> serde_json::Value {
    let key = text_key(item);
    let table = item.table_id.to_string();
    serde_json::json!({
        "message": {
            "token": token,
            "data": {
                "kind": item.kind,
                "table_id": table,
                "item_id": item.id.to_string(),
            },
            "android": {
                "priority": "high",
                "collapse_key": table,
                "notification": {
                    "title_loc_key": format!("{key}.title"),
                    "body_loc_key": key,
                    "body_loc_args": text_args(item),
                    "notification_count": item.my_turn,
                    "tag": table,
                },
            },
        }
    })
}
