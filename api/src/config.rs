//! Settings, read from the command line or (usually) the environment.
//! `.env.example` at the repository root lists every variable.

use std::fmt;
use std::time::Duration;

use clap::ArgAction;

/// Everything `huit serve` needs. Every field has an environment variable;
/// the README has the table.
#[derive(Clone, Debug, clap::Args)]
pub struct Settings {
    /// PostgreSQL connection URL.
    #[arg(long, env = "DATABASE_URL", hide_env_values = true)]
    pub database_url: DatabaseUrl,

    /// Address and port to listen on.
    #[arg(long, env = "BIND", default_value = "127.0.0.1:8080")]
    pub bind: String,

    /// Lifetime of a session token, in seconds.
    #[arg(long, env = "HUIT_TOKEN_TTL_SECS", default_value_t = 30 * 24 * 3600)]
    pub token_ttl_secs: u64,

    /// Largest accepted JSON request body, in bytes.
    #[arg(long, env = "HUIT_BODY_LIMIT_BYTES", default_value_t = 16 * 1024)]
    pub body_limit_bytes: usize,

    /// Most connections the pool opens to PostgreSQL.
    #[arg(long, env = "HUIT_DB_MAX_CONNECTIONS", default_value_t = 10)]
    pub db_max_connections: u32,

    /// How long `serve` waits at start-up for the database to answer
    /// (retrying with backoff, saying why), before it gives up.
    #[arg(long, env = "HUIT_DB_WAIT_SECS", default_value_t = 60)]
    pub db_wait_secs: u64,

    /// How long a request waits for a database connection before it is
    /// answered 503.
    #[arg(long, env = "HUIT_DB_ACQUIRE_TIMEOUT_SECS", default_value_t = 3)]
    pub db_acquire_timeout_secs: u64,

    /// HTTP worker threads (default: one per CPU).
    #[arg(long, env = "HUIT_WORKERS")]
    pub workers: Option<usize>,

    /// Failed log-ins allowed per (username, client address) within the
    /// window, before 429.
    #[arg(long, env = "HUIT_LOGIN_MAX_FAILURES", default_value_t = 5)]
    pub login_max_failures: u32,

    /// Failed logins allowed per client address within the window, before 429.
    #[arg(
        long,
        env = "HUIT_LOGIN_MAX_FAILURES_PER_ADDRESS",
        default_value_t = 50
    )]
    pub login_max_failures_per_address: u32,

    /// Failed log-ins per username from all addresses within the window,
    /// after which each further try waits a growing delay (1 s, 2 s, 4 s, …).
    #[arg(
        long,
        env = "HUIT_LOGIN_MAX_FAILURES_PER_USERNAME",
        default_value_t = 100
    )]
    pub login_max_failures_per_username: u32,

    /// Open long polls and streams per account (process-wide); the next
    /// one is refused with 429 `too_many_streams`.
    #[arg(long, env = "HUIT_MAX_STREAMS_PER_ACCOUNT", default_value_t = 16)]
    pub max_streams_per_account: usize,

    /// Open long polls and streams per client address.
    #[arg(long, env = "HUIT_MAX_STREAMS_PER_ADDRESS", default_value_t = 256)]
    pub max_streams_per_address: usize,

    /// Open long polls and streams in all (503 beyond); 0: half the
    /// process's file-descriptor limit, so that other requests always find
    /// a descriptor.
    #[arg(long, env = "HUIT_MAX_STREAMS", default_value_t = 0)]
    pub max_streams: usize,

    /// Accounts created per client address per minute (and at most this
    /// many at once); 0: no limit.
    #[arg(long, env = "HUIT_SIGN_UPS_PER_MINUTE", default_value_t = 20)]
    pub sign_ups_per_minute: u32,

    /// Successful log-ins (new sessions) per account per minute; 0: no limit.
    #[arg(long, env = "HUIT_LOG_INS_PER_MINUTE", default_value_t = 30)]
    pub log_ins_per_minute: u32,

    /// Tables created per account per minute; 0: no limit.
    #[arg(long, env = "HUIT_TABLES_PER_MINUTE", default_value_t = 30)]
    pub tables_per_minute: u32,

    /// Reads of the public pages (players' profiles, leaderboards) per
    /// client address per minute; 0: no limit.
    #[arg(long, env = "HUIT_PUBLIC_READS_PER_MINUTE", default_value_t = 120)]
    pub public_reads_per_minute: u32,

    /// Length of the failed-login window, in seconds.
    #[arg(long, env = "HUIT_LOGIN_WINDOW_SECS", default_value_t = 300)]
    pub login_window_secs: u64,

    /// Origins (`scheme://host[:port]`, comma-separated) whose browser
    /// pages may call the API (CORS); none by default.
    #[arg(long, env = "HUIT_CORS_ORIGINS", value_delimiter = ',', num_args = 0..)]
    pub cors_origins: Vec<String>,

    /// Take the client address from the last `X-Forwarded-For` entry, the
    /// one the proxy appended (only behind exactly one reverse proxy, which
    /// appends it).
    #[arg(long, env = "HUIT_TRUST_PROXY", default_value_t = false, action = ArgAction::Set)]
    pub trust_proxy: bool,

    /// Silence, in milliseconds, after which an event stream
    /// (`/events/stream`) sends a keep-alive comment (at the next
    /// quarter-second tick: the streams' keep-alives go out together).
    #[arg(long, env = "HUIT_SSE_KEEPALIVE_MS", default_value_t = 15_000)]
    pub sse_keepalive_ms: u64,

    /// Seconds a connection may go without its client acknowledging what
    /// was sent to it (a stalled reader, or a phone gone off the network)
    /// before it is closed (`TCP_USER_TIMEOUT`): a stream's client then
    /// resumes with `Last-Event-ID`. Until then what waits for it is
    /// bounded: a stream buffers no frames of its own.
    #[arg(long, env = "HUIT_STALLED_READER_SECS", default_value_t = 30)]
    pub stalled_reader_secs: u64,

    /// The send buffer of each connection, in bytes (`SO_SNDBUF`; the
    /// kernel doubles it for its bookkeeping): what a stalled reader can
    /// hold of the kernel's memory, and what a connection has in flight
    /// (256 KiB: 2.6 MB/s at 100 ms of round trip, ample for the largest
    /// answers, log exports). 0: the kernel's own sizing.
    #[arg(long, env = "HUIT_SEND_BUFFER_BYTES", default_value_t = 262_144)]
    pub send_buffer_bytes: usize,

    /// Milliseconds after a table moved before the server plays a seat
    /// whose player is away or resigned (docs/RULES.md D39, D40), so that
    /// people can follow.
    #[arg(long, env = "HUIT_BOT_DELAY_MS", default_value_t = 500)]
    pub bot_delay_ms: u64,

    /// How often, in milliseconds, this process looks for tables the server
    /// must act on by itself (a passed deadline, an away seat's move).
    #[arg(long, env = "HUIT_DUE_POLL_MS", default_value_t = 250)]
    pub due_poll_ms: u64,

    /// Bot searches (the `strong` level) run at once at most; 0: half the
    /// CPUs, at least one. The others wait, and search less the more wait.
    #[arg(long, env = "HUIT_BOT_SEARCH_THREADS", default_value_t = 0)]
    pub bot_search_threads: usize,

    /// Running tables with a `strong` bot one account may have at once.
    #[arg(long, env = "HUIT_MAX_STRONG_BOT_TABLES", default_value_t = 4)]
    pub max_strong_bot_tables: i64,

    /// Bots one account may have in all across its running tables.
    #[arg(long, env = "HUIT_MAX_BOTS", default_value_t = 8)]
    pub max_bots: i64,

    /// Where every feed item is POSTed, signed (Standard Webhooks); no
    /// webhooks when unset. An `https://` URL (its certificate verified
    /// against the platform's roots and `HUIT_EXTRA_CA_FILE`), or `http://`
    /// to a relay on a private network.
    #[arg(long, env = "HUIT_WEBHOOK_URL")]
    pub webhook_url: Option<String>,

    /// The webhooks' signing secret: `whsec_` then the base64 of at least
    /// 24 random bytes. Required with `HUIT_WEBHOOK_URL`.
    #[arg(long, env = "HUIT_WEBHOOK_SECRET", hide_env_values = true)]
    pub webhook_secret: Option<WebhookSecret>,

    /// The waits before each retry of a webhook that failed, comma-separated
    /// (`500ms`, `5s`, `5m`, `2h`, `1d`); after the last, the delivery is
    /// failed (admins may send it again).
    #[arg(
        long,
        env = "HUIT_WEBHOOK_RETRY_SCHEDULE",
        default_value = "5s,5m,30m,2h,5h,10h,14h,20h,24h"
    )]
    pub webhook_retry_schedule: RetrySchedule,

    /// A PEM file of certificate authorities trusted beyond the platform's
    /// roots, by every client the server is (webhooks, push): a private
    /// authority's. Not for PostgreSQL: its URL says `sslrootcert`.
    #[arg(long, env = "HUIT_EXTRA_CA_FILE")]
    pub extra_ca_file: Option<std::path::PathBuf>,

    /// Seconds a webhook's receiver has to answer (connecting included).
    #[arg(long, env = "HUIT_WEBHOOK_TIMEOUT_SECS", default_value_t = 10)]
    pub webhook_timeout_secs: u64,

    /// Apple's push (APNs): the `.p8` file of the provider key; APNs is on
    /// when it is set, with `HUIT_APNS_KEY_ID`, `HUIT_APNS_TEAM_ID` and
    /// `HUIT_APNS_TOPIC`.
    #[arg(long, env = "HUIT_APNS_KEY_FILE")]
    pub apns_key_file: Option<std::path::PathBuf>,

    /// The provider key's id (10 characters, from Apple's developer site).
    #[arg(long, env = "HUIT_APNS_KEY_ID")]
    pub apns_key_id: Option<String>,

    /// The developer team's id (10 characters).
    #[arg(long, env = "HUIT_APNS_TEAM_ID")]
    pub apns_team_id: Option<String>,

    /// The app's bundle id (`apns-topic`).
    #[arg(long, env = "HUIT_APNS_TOPIC")]
    pub apns_topic: Option<String>,

    /// Where APNs is (`https://api.sandbox.push.apple.com` for development
    /// builds of the app).
    #[arg(
        long,
        env = "HUIT_APNS_URL",
        default_value = "https://api.push.apple.com"
    )]
    pub apns_url: String,

    /// Google's push (FCM HTTP v1): the service account's JSON key file;
    /// FCM is on when it is set. Its `token_uri` is where access tokens are
    /// asked for, its `project_id` the project messages are sent in.
    #[arg(long, env = "HUIT_FCM_CREDENTIALS")]
    pub fcm_credentials: Option<std::path::PathBuf>,

    /// Where FCM is.
    #[arg(
        long,
        env = "HUIT_FCM_URL",
        default_value = "https://fcm.googleapis.com"
    )]
    pub fcm_url: String,

    /// Seconds APNs, FCM and FCM's token service have to answer
    /// (connecting included).
    #[arg(long, env = "HUIT_PUSH_TIMEOUT_SECS", default_value_t = 10)]
    pub push_timeout_secs: u64,

    /// Seconds a feed item is kept (then pruned, unless its webhook is
    /// still to be delivered); 30 days by default.
    #[arg(long, env = "HUIT_FEED_RETENTION_SECS", default_value_t = 30 * 24 * 3600)]
    pub feed_retention_secs: u64,

    /// Seconds between an account's deletion and its erasure (a log-in
    /// meanwhile cancels it); 0: erased at once. 7 days by default.
    #[arg(long, env = "HUIT_ERASE_GRACE_SECS", default_value_t = 7 * 24 * 3600)]
    pub erase_grace_secs: u64,

    /// Seconds after which a guest whose sessions went unused is erased;
    /// 30 days by default.
    #[arg(long, env = "HUIT_GUEST_IDLE_SECS", default_value_t = 30 * 24 * 3600)]
    pub guest_idle_secs: u64,

    /// Guest accounts one address may make per minute.
    #[arg(long, env = "HUIT_GUESTS_PER_MINUTE", default_value_t = 10)]
    pub guests_per_minute: u32,

    /// How often, in milliseconds, this process erases the accounts due
    /// (deletions whose grace period ended, idle guests).
    #[arg(long, env = "HUIT_ERASE_POLL_MS", default_value_t = 60_000)]
    pub erase_poll_ms: u64,

    /// Where `/metrics` (the Prometheus text format) is served, on a
    /// listener of its own, e.g. `127.0.0.1:9100`; not served when unset.
    #[arg(long, env = "HUIT_METRICS_BIND")]
    pub metrics_bind: Option<String>,
}

impl Settings {
    /// Settings with every default and the given database URL (tests, tools):
    /// the defaults of the attributes above, the one place they are written,
    /// and nothing from the environment.
    pub fn with_database_url(database_url: impl Into<String>) -> Self {
        use clap::{Args, FromArgMatches};
        let url: String = database_url.into();
        let command = Self::augment_args(clap::Command::new("huit")).mut_args(|a| a.env(None));
        let matches = command
            .try_get_matches_from(["huit", "--database-url", url.as_str()])
            .expect("every setting has a default");
        Self::from_arg_matches(&matches).expect("the defaults parse")
    }

    pub fn token_ttl(&self) -> Duration {
        Duration::from_secs(self.token_ttl_secs)
    }

    /// How long a guest's session lasts unused (and a guest unused that
    /// long is erased).
    pub fn guest_idle(&self) -> Duration {
        Duration::from_secs(self.guest_idle_secs)
    }

    pub fn db_acquire_timeout(&self) -> Duration {
        Duration::from_secs(self.db_acquire_timeout_secs)
    }

    pub fn login_window(&self) -> Duration {
        Duration::from_secs(self.login_window_secs)
    }

    pub fn stalled_reader(&self) -> Duration {
        Duration::from_secs(self.stalled_reader_secs.max(1))
    }

    pub fn sse_keepalive(&self) -> Duration {
        Duration::from_millis(self.sse_keepalive_ms.max(1))
    }
}

/// The webhooks' signing key, from `whsec_<base64>`; never printed.
#[derive(Clone)]
pub struct WebhookSecret(pub Vec<u8>);

impl std::str::FromStr for WebhookSecret {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        use base64::Engine;
        let key = s
            .strip_prefix("whsec_")
            .ok_or("a webhook secret starts with whsec_")?;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(key)
            .map_err(|e| format!("a webhook secret is whsec_ then base64: {e}"))?;
        if bytes.len() < 24 {
            return Err("a webhook secret holds at least 24 bytes".into());
        }
        Ok(Self(bytes))
    }
}

impl fmt::Debug for WebhookSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("\"<redacted>\"")
    }
}

/// The waits before each retry of a webhook or a push.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RetrySchedule(pub Vec<Duration>);

impl RetrySchedule {
    /// When to try again after a failed attempt that had `attempts` before
    /// it: `None` past the schedule's last wait (it has failed).
    pub fn next_after(&self, attempts: i32) -> Option<chrono::DateTime<chrono::Utc>> {
        let wait = self.0.get(usize::try_from(attempts).ok()?)?;
        Some(chrono::Utc::now() + chrono::Duration::from_std(*wait).unwrap_or_default())
    }
}

impl std::str::FromStr for RetrySchedule {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        s.split(',')
            .map(|wait| {
                let wait = wait.trim();
                let digits = wait.trim_end_matches(|c: char| c.is_ascii_alphabetic());
                let n: u64 = digits
                    .parse()
                    .map_err(|_| format!("{wait:?}: a number then ms, s, m, h or d"))?;
                let unit = match &wait[digits.len()..] {
                    "ms" => 1,
                    "s" => 1_000,
                    "m" => 60_000,
                    "h" => 3_600_000,
                    "d" => 86_400_000,
                    _ => return Err(format!("{wait:?}: a number then ms, s, m, h or d")),
                };
                Ok(Duration::from_millis(n.saturating_mul(unit)))
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Self)
    }
}

/// A PostgreSQL connection URL. It may hold a password, so it is never
/// printed (`Debug` shows `<redacted>`).
#[derive(Clone)]
pub struct DatabaseUrl(String);

impl DatabaseUrl {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl From<String> for DatabaseUrl {
    fn from(url: String) -> Self {
        Self(url)
    }
}

impl fmt::Debug for DatabaseUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("\"<redacted>\"")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_retry_schedule_reads_as_waits_and_a_secret_as_its_bytes() {
        let s = Settings::with_database_url("postgres://u@127.0.0.1:5432/huit");
        let hours = |h: u64| Duration::from_secs(h * 3600);
        assert_eq!(
            s.webhook_retry_schedule.0,
            [
                Duration::from_secs(5),
                Duration::from_secs(300),
                Duration::from_secs(1800),
                hours(2),
                hours(5),
                hours(10),
                hours(14),
                hours(20),
                hours(24)
            ],
            "Standard Webhooks' schedule, about three days"
        );
        assert_eq!(
            "500ms, 1s,2d".parse::<RetrySchedule>().unwrap().0,
            [
                Duration::from_millis(500),
                Duration::from_secs(1),
                hours(48)
            ]
        );
        for bad in ["", "5", "5x", "s", "1s,"] {
            assert!(bad.parse::<RetrySchedule>().is_err(), "{bad:?}");
        }
        let secret: WebhookSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw".parse().unwrap();
        assert_eq!(secret.0.len(), 24);
        for bad in [
            "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
            "whsec_c2hvcnQ=",
            "whsec_!!",
        ] {
            assert!(bad.parse::<WebhookSecret>().is_err(), "{bad:?}");
        }
        assert_eq!(format!("{secret:?}"), "\"<redacted>\"");
    }

    /// The defaults are the attributes' (the README's table says the same).
    #[test]
    fn the_defaults_are_the_attributes() {
        let s = Settings::with_database_url("postgres://u@127.0.0.1:5432/huit");
        assert_eq!(s.database_url.as_str(), "postgres://u@127.0.0.1:5432/huit");
        assert_eq!(s.bind, "127.0.0.1:8080");
        assert_eq!((s.bot_delay_ms, s.due_poll_ms), (500, 250));
        assert_eq!((s.max_bots, s.max_strong_bot_tables), (8, 4));
        assert_eq!(s.workers, None);
        assert!(s.cors_origins.is_empty() && s.metrics_bind.is_none());
    }

    /// `.env.example` lists every variable a setting reads (an optional one
    /// commented out, `# NAME=value`).
    #[test]
    fn the_example_environment_lists_every_setting() {
        use clap::Args;
        let example = include_str!("../../.env.example");
        let listed: Vec<&str> = example
            .lines()
            .filter_map(|l| {
                l.split_once('=')
                    .map(|(k, _)| k.trim_start_matches("# ").trim())
            })
            .collect();
        let command = Settings::augment_args(clap::Command::new("huit"));
        for arg in command.get_arguments() {
            let Some(var) = arg.get_env() else { continue };
            let var = var.to_str().unwrap();
            assert!(listed.contains(&var), "{var} is missing from .env.example");
        }
    }
}
