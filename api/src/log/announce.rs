//! The announcement of a commit: once a table's events are committed,
//! every server process is told the table's new version, so that its cache
//! knows whether to read the log, and its long polls and streams wake
//! ([`crate::log::hub`] hears it).
//!
//! The versions committed meanwhile (and in the 2 ms (`ANNOUNCE_GATHER`) after
//! an announcement), each table's last, share one notifying transaction
//! ([`store::events::notify`]); nobody waits for it. A notification
//! lost in a crash between the commit and it only makes other processes'
//! waiters late: they check the table's version when their wait ends.

use std::collections::HashMap;

use sqlx::PgPool;
use uuid::Uuid;

use crate::log::batcher::{Batcher, Work};
use store::held::Held;

/// The least time between two announcements of one process: a commit is
/// announced at once when none was just announced, else at most this much
/// later.
const ANNOUNCE_GATHER: std::time::Duration = std::time::Duration::from_millis(2);

/// The longest payload sent: PostgreSQL takes up to 8000 bytes.
const PAYLOAD_MAX: usize = 7900;

/// Announcements of new versions; cheap to clone.
pub type Announcements = Batcher<Announcer>;

/// What is announced once committed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Announced {
    /// A table at a version (`None` in a payload: unknown).
    Table(Uuid, Option<i64>),
    /// An account's feed has new items.
    Feed(Uuid),
    /// An account changed what others cache of it: its name (a guest
    /// upgraded, an account erased) or its sessions (one revoked).
    Account(Uuid),
}

/// Announces new versions: (table, version committed), every process told.
#[derive(Debug)]
pub struct Announcer {
    held: Held,
}

impl Announcer {
    /// Announcements on a connection of their own to the database of
    /// `pool`.
    pub fn batcher(pool: &PgPool) -> Announcements {
        Batcher::new(Announcer {
            held: Held::new(pool),
        })
    }
}

impl Work for Announcer {
    type Item = Announced;
    type Answer = ();
    const TASKS: usize = 1;

    /// Each table at its last version, and each feed once, in one
    /// statement. A failure is logged: the events are stored, and other
    /// processes' waiters check the table's version (or the feed) when
    /// their wait ends.
    async fn serve(&self, committed: Vec<Announced>) -> Vec<()> {
        let n = committed.len();
        let mut last: HashMap<Uuid, i64> = HashMap::with_capacity(n);
        let mut feeds = std::collections::HashSet::new();
        let mut accounts = std::collections::HashSet::new();
        for announced in committed {
            match announced {
                Announced::Table(table_id, version) => {
                    let version = version.unwrap_or(0);
                    let v = last.entry(table_id).or_insert(version);
                    *v = (*v).max(version);
                }
                Announced::Feed(account) => {
                    feeds.insert(account);
                }
                Announced::Account(account) => {
                    accounts.insert(account);
                }
            }
        }
        let mut versions: Vec<Announced> = last
            .into_iter()
            .map(|(table_id, v)| Announced::Table(table_id, Some(v)))
            .collect();
        versions.extend(feeds.into_iter().map(Announced::Feed));
        versions.extend(accounts.into_iter().map(Announced::Account));
        let sent = self
            .held
            .with(async |conn| announce(conn, &versions).await)
            .await;
        if let Err(e) = sent {
            tracing::warn!(error = %e, tables = versions.len(), "new versions not announced");
        }
        // The commits of the next moments gather meanwhile: under load,
        // one notifying transaction (and one wake-up of every listening
        // connection) then carries the versions of many moves.
        tokio::time::sleep(ANNOUNCE_GATHER).await;
        vec![(); n]
    }
}

/// Tells every server process that each table is at its version (and
/// which feeds have new items), now: call it once an append is committed
/// (the service's own announcements go through its [`Announcer`]).
pub async fn announce(
    executor: impl sqlx::PgExecutor<'_>,
    announced: &[Announced],
) -> Result<(), sqlx::Error> {
    store::events::notify(executor, &payloads(announced)).await
}

impl std::fmt::Display for Announced {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Table(table_id, Some(version)) => write!(f, "{table_id}:{version}"),
            Self::Table(table_id, None) => write!(f, "{table_id}"),
            Self::Feed(account) => write!(f, "{FEED}{account}"),
            Self::Account(account) => write!(f, "{ACCOUNT}{account}"),
        }
    }
}

/// The prefix of a feed's entry.
const FEED: &str = "feed:";

/// The prefix of an account's entry.
const ACCOUNT: &str = "account:";

/// The entries of `announced`, as few payloads as [`PAYLOAD_MAX`]
/// allows, their entries separated by commas: a payload per notification,
/// and every notification is delivered to every listening process.
fn payloads(announced: &[Announced]) -> Vec<String> {
    let mut payloads = Vec::new();
    let mut payload = String::new();
    for announced in announced {
        let entry = announced.to_string();
        if !payload.is_empty() && payload.len() + 1 + entry.len() > PAYLOAD_MAX {
            payloads.push(std::mem::take(&mut payload));
        }
        if !payload.is_empty() {
            payload.push(',');
        }
        payload.push_str(&entry);
    }
    if !payload.is_empty() {
        payloads.push(payload);
    }
    payloads
}

/// Entries separated by commas (an entry may be a bare table id, version
/// unknown); `None` when any entry is not one.
pub(crate) fn parse_payload(payload: &str) -> Option<Vec<Announced>> {
    payload
        .split(',')
        .map(|entry| {
            if let Some(account) = entry.strip_prefix(FEED) {
                return Some(Announced::Feed(account.parse().ok()?));
            }
            if let Some(account) = entry.strip_prefix(ACCOUNT) {
                return Some(Announced::Account(account.parse().ok()?));
            }
            match entry.split_once(':') {
                Some((id, version)) => Some(Announced::Table(
                    id.parse().ok()?,
                    Some(version.parse().ok()?),
                )),
                None => Some(Announced::Table(entry.parse().ok()?, None)),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn announcements_go_in_as_few_payloads_as_postgres_takes() {
        assert!(payloads(&[]).is_empty());
        let one = Uuid::from_u128(1);
        assert_eq!(
            payloads(&[Announced::Table(one, Some(7)), Announced::Feed(one)]),
            vec![format!("{one}:7,feed:{one}")],
            "a table and a feed, an entry each"
        );
        let all = [
            Announced::Table(one, Some(7)),
            Announced::Feed(one),
            Announced::Account(one),
        ];
        assert_eq!(
            parse_payload(&payloads(&all)[0]),
            Some(all.to_vec()),
            "every kind reads back"
        );
        let versions: Vec<Announced> = (0..500u128)
            .map(|i| Announced::Table(Uuid::from_u128(i), Some(i as i64 * 1000)))
            .collect();
        let sent = payloads(&versions);
        assert!(sent.len() > 1, "500 entries need more than one payload");
        assert!(sent.iter().all(|p| p.len() <= PAYLOAD_MAX));
        let entries: Vec<String> = sent
            .iter()
            .flat_map(|p| p.split(',').map(str::to_owned))
            .collect();
        let expected: Vec<String> = versions.iter().map(|a| a.to_string()).collect();
        assert_eq!(entries, expected, "every entry once, in order");
    }

    #[test]
    fn a_payload_names_one_table_or_several() {
        let (a, b) = (Uuid::from_u128(1), Uuid::from_u128(2));
        use Announced::{Feed, Table};
        assert_eq!(
            parse_payload(&format!("{a}:3")),
            Some(vec![Table(a, Some(3))])
        );
        assert_eq!(parse_payload(&a.to_string()), Some(vec![Table(a, None)]));
        assert_eq!(
            parse_payload(&format!("{a}:3,{b}:12,{a},feed:{b}")),
            Some(vec![
                Table(a, Some(3)),
                Table(b, Some(12)),
                Table(a, None),
                Feed(b)
            ])
        );
        for bad in [
            "",
            "x",
            &format!("{a}:3,"),
            &format!("{a}:x,{b}:1"),
            "feed:x",
        ] {
            assert_eq!(parse_payload(bad), None, "{bad:?}");
        }
    }
}
