//! What every route that follows a table needs (the view, its stream, the
//! events, their stream): the caller, the table of the path, the service,
//! and a place among the caller's long polls and streams. Its refusals are
//! [`crate::routes::problems::WatchingTable`]'s.

use actix_web::dev::Payload;
use actix_web::{web, FromRequest, HttpRequest};
use futures_util::future::LocalBoxFuture;
use uuid::Uuid;

use super::dto::TablePath;
use crate::auth::CachedAuthUser;
use crate::error::ApiError;
use crate::table_service::TableService;
use crate::watchers::{Watch, WatchSlot};

/// The caller following the table of the path.
#[derive(Debug)]
pub struct Watching {
    pub tables: web::Data<TableService>,
    pub user: CachedAuthUser,
    pub table_id: Uuid,
    slot: WatchSlot,
}

impl Watching {
    /// The caller's account.
    pub fn account_id(&self) -> Uuid {
        self.user.account.id
    }

    /// A place for a long poll or a stream (429 `too_many_streams` past the
    /// caller's limits, 503 when the process is full); it is given back
    /// when the [`Watch`] is dropped.
    pub fn open(&self) -> Result<Watch, ApiError> {
        self.slot.open(&self.user)
    }
}

impl FromRequest for Watching {
    type Error = actix_web::Error;
    type Future = LocalBoxFuture<'static, Result<Self, actix_web::Error>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let parts = <(
            web::Data<TableService>,
            CachedAuthUser,
            TablePath,
            WatchSlot,
        )>::from_request(req, payload);
        Box::pin(async move {
            let (tables, user, table, slot) = parts.await?;
            Ok(Self {
                tables,
                user,
                table_id: table.0,
                slot,
            })
        })
    }
}
