//! The HTTP API of Huit.
//!
//! Layers, from the edge inwards: [`routes`] (thin actix-web handlers, each
//! documented for OpenAPI), [`auth`] (the [`auth::AuthUser`] extractor),
//! [`store`] (every SQL statement of the service), [`chain`] (the event log's
//! canonical JSON and hash chain, pure), [`notify`] (cross-process wake-ups
//! through PostgreSQL `LISTEN`/`NOTIFY`). [`error::ApiError`] is the one error
//! type, answered as RFC 9457 `application/problem+json`.

pub mod auth;
pub mod batcher;
pub mod chain;
pub mod config;
pub mod error;
pub mod history;
pub mod log_writer;
pub mod notify;
pub mod openapi;
pub mod password;
pub mod rates;
pub mod routes;
pub mod sse;
pub mod startup;
pub mod store;
pub mod table_service;
pub mod telemetry;
pub mod throttle;
pub mod versions;
pub mod watchers;

/// The migrations of `migrations/`, embedded in the binary.
pub static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("../migrations");
