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

    /// Length of the failed-login window, in seconds.
    #[arg(long, env = "HUIT_LOGIN_WINDOW_SECS", default_value_t = 300)]
    pub login_window_secs: u64,

    /// Origins (`scheme://host[:port]`, comma-separated) whose browser
    /// pages may call the API (CORS); none by default.
    #[arg(long, env = "HUIT_CORS_ORIGINS", value_delimiter = ',', num_args = 0..)]
    pub cors_origins: Vec<String>,

    /// Take the client address from `Forwarded`/`X-Forwarded-For` (only
    /// behind a reverse proxy that sets them).
    #[arg(long, env = "HUIT_TRUST_PROXY", default_value_t = false, action = ArgAction::Set)]
    pub trust_proxy: bool,

    /// Silence, in milliseconds, after which an event stream
    /// (`/events/stream`) sends a keep-alive comment.
    #[arg(long, env = "HUIT_SSE_KEEPALIVE_MS", default_value_t = 15_000)]
    pub sse_keepalive_ms: u64,

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

    pub fn db_acquire_timeout(&self) -> Duration {
        Duration::from_secs(self.db_acquire_timeout_secs)
    }

    pub fn login_window(&self) -> Duration {
        Duration::from_secs(self.login_window_secs)
    }

    pub fn sse_keepalive(&self) -> Duration {
        Duration::from_millis(self.sse_keepalive_ms.max(1))
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
