//! The name of every metric the server records, in one leaf that imports
//! nothing of the server: whoever records one names it from here, and the
//! exporter ([`crate::metrics`], at the top) renders what was recorded.
//! The README's "Metrics" table lists them with their labels.

/// Requests answered, by method, route and status.
pub const HTTP_REQUESTS: &str = "huit_http_requests_total";
/// Request latency, by method and route.
pub const HTTP_DURATION: &str = "huit_http_request_duration_seconds";
/// Moves appended, by who made them (`player`, `server`).
pub const MOVES: &str = "huit_moves_total";
/// Events appended.
pub const EVENTS: &str = "huit_events_appended_total";
/// Moves per log-writer statement.
pub const BATCH_SIZE: &str = "huit_log_writer_batch_size";
/// How long a bot took to decide, by reason.
pub const BOT_DECISION: &str = "huit_bot_decision_seconds";
/// Deadlines fired, by kind (`timeout`, `server_move`, `bots_after`,
/// `turn_ending`).
pub const DEADLINES_FIRED: &str = "huit_deadlines_fired_total";
/// How long after its `due_at` a table was fired.
pub const DEADLINE_LATENESS: &str = "huit_deadline_lateness_seconds";
/// Tables the server must act on by itself, in all.
pub const DEADLINES_PENDING: &str = "huit_deadlines_pending";
/// Of those, the ones due now.
pub const DEADLINES_DUE: &str = "huit_deadlines_due";
/// Webhook deliveries by outcome (`delivered`, `retry`, `failed`, `gone`).
pub const WEBHOOK_DELIVERIES: &str = "huit_webhook_deliveries_total";
/// Webhook attempts made (each POST).
pub const WEBHOOK_ATTEMPTS: &str = "huit_webhook_attempts_total";
/// From a feed item's time to its webhook's delivery.
pub const WEBHOOK_LAG: &str = "huit_webhook_delivery_lag_seconds";
/// Feed items still to deliver.
pub const WEBHOOK_PENDING: &str = "huit_webhook_pending";
/// The age of the oldest of them.
pub const WEBHOOK_OLDEST_PENDING: &str = "huit_webhook_oldest_pending_seconds";
/// Pushes by platform (`apns`, `fcm`) and outcome (`delivered`,
/// `skipped`: the player was following, `retry`, `failed`, `dead`: the
/// token was dead).
pub const PUSHES: &str = "huit_pushes_total";
/// Devices dropped because their platform called their token dead.
pub const PUSH_DEVICES_DROPPED: &str = "huit_push_devices_dropped_total";
/// From a feed item's time to its push's delivery, by platform.
pub const PUSH_LAG: &str = "huit_push_delivery_lag_seconds";
/// Pushes still to send.
pub const PUSH_PENDING: &str = "huit_push_pending";
/// The age of the oldest of them.
pub const PUSH_OLDEST_PENDING: &str = "huit_push_oldest_pending_seconds";
/// Tables folded in this process's cache.
pub const TABLES_CACHED: &str = "huit_tables_cached";
/// Long polls and streams open.
pub const WATCHES_OPEN: &str = "huit_watches_open";
/// Database connections, by state (`idle`, `in_use`).
pub const DB_CONNECTIONS: &str = "huit_db_connections";
/// The pool's most connections.
pub const DB_CONNECTIONS_MAX: &str = "huit_db_connections_max";
