//! The caller's phones, registered for push (docs/API.md "Push to
//! phones"): register one by its platform's token, list them, drop one.

use actix_web::{delete, get, post, web, HttpResponse};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sqlx::PgPool;
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use crate::auth::AuthUser;
use crate::codes::ProblemCode;
use crate::error::{ApiError, Problem};
use crate::push::Platform;
use crate::routes::problems::{Authenticated, JsonBody};
use store::devices::{DeviceRow, Registered};

/// Devices an account may register, at most.
pub const MAX_DEVICES: i64 = 10;

/// A language tag (`fr`, `pt-BR`, `zh-Hant-TW`): 2 or 3 letters, then up
/// to three subtags of 2 to 8 letters or digits, at most 35 characters.
fn locale_ok(locale: &str) -> bool {
    let mut parts = locale.split(['-', '_']);
    let language = parts.next().unwrap_or_default();
    let subtags: Vec<&str> = parts.collect();
    locale.len() <= 35
        && (2..=3).contains(&language.len())
        && language.bytes().all(|b| b.is_ascii_alphabetic())
        && subtags.len() <= 3
        && subtags
            .iter()
            .all(|s| (2..=8).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_alphanumeric()))
}

/// A phone to push to.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"platform": "apns", "token": "8f3c0b7a1e2d4c5b6a7980f1e2d3c4b5a69788f0e1d2c3b4a5968778695a4b3c", "locale": "fr-FR"}))]
pub struct NewDevice {
    pub platform: Platform,
    /// The platform's token for the app on this phone.
    pub token: String,
    /// The language the app speaks (a BCP 47 tag); pushes carry
    /// localisation keys, which the app resolves.
    pub locale: Option<String>,
}

/// A registered phone (its token is not shown back).
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({"id": "2c9d7e1f-0a3b-4c5d-8e6f-7a8b9c0d1e2f", "platform": "apns", "locale": "fr-FR", "created_at": "2025-01-31T18:04:05.123456Z"}))]
pub struct DeviceDto {
    pub id: Uuid,
    pub platform: Platform,
    #[schema(required = true)]
    pub locale: Option<String>,
    pub created_at: DateTime<Utc>,
}

impl TryFrom<DeviceRow> for DeviceDto {
    type Error = ApiError;

    fn try_from(d: DeviceRow) -> Result<Self, ApiError> {
        let platform = Platform::stored(&d.platform)
            .ok_or_else(|| ApiError::internal(format!("device {}: {}", d.id, d.platform)))?;
        Ok(Self {
            id: d.id,
            platform,
            locale: d.locale,
            created_at: d.created_at,
        })
    }
}

/// The caller's phones.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({"devices": [{"id": "2c9d7e1f-0a3b-4c5d-8e6f-7a8b9c0d1e2f", "platform": "apns", "locale": "fr-FR", "created_at": "2025-01-31T18:04:05.123456Z"}]}))]
pub struct Devices {
    /// Oldest first; at most 10.
    pub devices: Vec<DeviceDto>,
}

fn invalid(detail: &str) -> ApiError {
    ApiError::Validation {
        code: ProblemCode::InvalidDevice,
        detail: detail.into(),
    }
}

/// Register a phone for push: its platform and token (and the language
/// its app speaks). The same token again is the same device (201 the first
/// time, 200 after); a token another account registered moves to the
/// caller: one phone, one player. At most 10 devices an account.
#[utoipa::path(
    tag = "accounts",
    request_body = NewDevice,
    responses(
        (status = 201, description = "Registered", body = DeviceDto),
        (status = 200, description = "Known already (moved to the caller if another account had it)", body = DeviceDto),
        (status = 409, description = "`too_many_devices`: 10 devices registered; drop one first", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "`invalid_device` (a token that is not the platform's, a locale that is not a language tag), `invalid_body`", body = Problem, content_type = "application/problem+json"),
        JsonBody,
        Authenticated,
    )
)]
#[post("/me/devices")]
#[tracing::instrument(skip_all, fields(account_id = %user.account.id))]
pub async fn register_device(
    pool: web::Data<PgPool>,
    user: AuthUser,
    body: web::Json<NewDevice>,
) -> Result<HttpResponse, ApiError> {
    let NewDevice {
        platform,
        token,
        locale,
    } = body.into_inner();
    if !platform.takes(&token) {
        return Err(invalid(match platform {
            Platform::Apns => "an APNs device token is 64 to 200 hexadecimal digits",
            Platform::Fcm => {
                "an FCM registration token is 20 to 4,096 letters, digits, `_`, `-` and `:`"
            }
        }));
    }
    if locale.as_deref().is_some_and(|l| !locale_ok(l)) {
        return Err(invalid(
            "a locale is a language tag, such as `fr` or `pt-BR`",
        ));
    }
    let mut tx = pool.begin().await?;
    let registered = store::devices::register(
        &mut tx,
        user.account.id,
        platform.as_str(),
        &token,
        locale.as_deref(),
        MAX_DEVICES,
    )
    .await?;
    tx.commit().await?;
    match registered {
        Registered::New(d) => Ok(HttpResponse::Created().json(DeviceDto::try_from(d)?)),
        Registered::Known(d) => Ok(HttpResponse::Ok().json(DeviceDto::try_from(d)?)),
        Registered::TooMany => Err(ApiError::Problem {
            status: actix_web::http::StatusCode::CONFLICT,
            code: ProblemCode::TooManyDevices,
            detail: format!("{MAX_DEVICES} devices are registered; drop one first"),
        }),
    }
}

/// The caller's phones.
#[utoipa::path(
    tag = "accounts",
    responses(
        (status = 200, description = "The caller's devices, oldest first", body = Devices),
        Authenticated,
    )
)]
#[get("/me/devices")]
pub async fn my_devices(pool: web::Data<PgPool>, user: AuthUser) -> Result<HttpResponse, ApiError> {
    let devices = store::devices::of_account(pool.get_ref(), user.account.id)
        .await?
        .into_iter()
        .map(DeviceDto::try_from)
        .collect::<Result<_, _>>()?;
    Ok(HttpResponse::Ok().json(Devices { devices }))
}

/// A device's id, in the path.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct DevicePath {
    /// The device's id.
    pub id: String,
}

/// Drop one of the caller's phones: nothing is pushed to it any more.
#[utoipa::path(
    tag = "accounts",
    params(DevicePath),
    responses(
        (status = 204, description = "Dropped"),
        (status = 404, description = "`not_found`: no such device of the caller's", body = Problem, content_type = "application/problem+json"),
        Authenticated,
    )
)]
#[delete("/me/devices/{id}")]
pub async fn drop_device(
    pool: web::Data<PgPool>,
    user: AuthUser,
    path: web::Path<DevicePath>,
) -> Result<HttpResponse, ApiError> {
    let not_found = || ApiError::NotFound("no such device of yours".into());
    let id: Uuid = path.id.parse().map_err(|_| not_found())?;
    if !store::devices::drop_one(pool.get_ref(), user.account.id, id).await? {
        return Err(not_found());
    }
    Ok(HttpResponse::NoContent().finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_the_platforms_own() {
        let apns = "8f3c0b7a1e2d4c5b6a7980f1e2d3c4b5a69788f0e1d2c3b4a5968778695a4b3c";
        assert!(Platform::Apns.takes(apns));
        assert!(!Platform::Apns.takes(&apns[1..]), "63 digits");
        assert!(!Platform::Apns.takes(&apns.replace('8', "g")));
        let fcm = "dQw4w9WgXcQ:APA91bH-x_yZ0123456789abcdefghij";
        assert!(Platform::Fcm.takes(fcm));
        assert!(!Platform::Fcm.takes("short:token"));
        assert!(!Platform::Fcm.takes(&format!("{fcm} with spaces")));
        assert!(!Platform::Fcm.takes(&"a".repeat(4097)));
    }

    #[test]
    fn locales_are_language_tags() {
        for ok in ["fr", "pt-BR", "zh-Hant-TW", "es_419", "gsw"] {
            assert!(locale_ok(ok), "{ok}");
        }
        for bad in [
            "",
            "f",
            "french",
            "fr-",
            "fr-FR-x-y-z",
            "fr FR",
            "fr-\u{e9}t\u{e9}",
        ] {
            assert!(!locale_ok(bad), "{bad}");
        }
    }
}
