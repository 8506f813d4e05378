//! The HTTP API of Huit. From the edge inwards:
//!
//! | module | what it owns |
//! |---|---|
//! | [`routes`] | thin actix-web handlers, each documented for OpenAPI: authenticate, parse, one service call, answer |
//! | [`auth`], [`throttle`], [`rates`], [`watchers`] | who is calling, and how much they may ask: bearer tokens, failed log-ins, creation rates, open streams |
//! | [`table_service`] | tables: the per-process cache of folded tables, commands (the write path), reads and long polls |
//! | [`commit`] | how a committed move reaches every process: batched appends, announcements, the `LISTEN` hub |
//! | [`deadlines`] | what the server does on a table by itself: timeouts, away and resigned seats' moves |
//! | [`searches`] | the budget of bot searches: how many at once, and how much each may search under pressure |
//! | [`sse`] | the server-sent event streams and the NDJSON log |
//! | [`history`] | round histories, replays and audits, from the log alone |
//! | [`store`] | every SQL statement of the service |
//! | [`chain`] | the event log's canonical JSON and hash chain, pure |
//! | [`error`] | [`error::ApiError`], the one error type, answered as RFC 9457 `application/problem+json` |
//! | [`config`], [`startup`], [`telemetry`], [`openapi`], [`password`] | settings, the server's assembly, logs, the OpenAPI document, argon2id |

pub mod auth;
pub mod commit;
pub mod config;
pub mod console;
pub mod deadlines;
pub mod disputes;
pub mod error;
pub mod history;
pub mod log;
pub mod metrics;
pub mod openapi;
pub mod password;
pub mod rates;
pub mod routes;
pub mod searches;
pub mod sse;
pub mod startup;
pub mod store;
pub mod table_service;
pub mod telemetry;
pub mod throttle;
pub mod watchers;

/// The migrations of `migrations/`, embedded in the binary.
pub static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("../migrations");
