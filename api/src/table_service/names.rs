//! Who a table's persons are called now. A log names a seated person by
//! their account's random id only (event format 3): the name is the
//! account's, read when the table is shown, so that an erased account
//! shows as erased everywhere at once, and a guest who upgraded shows
//! under their new name, without a hash changing.
//!
//! A cached table keeps its persons' names with the hub's accounts epoch
//! they were read in ([`crate::log::hub::CommitHub::accounts_epoch`]):
//! they are read again (one query) when an account changed anywhere since,
//! and for a person newly seated; never on a plain move.

use std::collections::HashMap;

use domain::bots::Level;
use domain::{PlayerId, Seated, Table};
use sqlx::PgExecutor;
use uuid::Uuid;

/// The names of a table's persons, as last read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Names {
    /// Each person's name; `None`: their account was erased.
    known: HashMap<PlayerId, Option<String>>,
    /// The accounts epoch they were read in; `None`: read again at the
    /// next use.
    epoch: Option<u64>,
}

/// How a seat's holder is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shown<'a> {
    Person {
        account_id: &'a PlayerId,
        username: &'a str,
    },
    Bot(Level),
    /// An erased account: no id, no name.
    Erased,
}

impl Names {
    /// How `seated` is shown: an account whose name was never read here
    /// shows as erased (a table's names are read before it is shown).
    pub fn of<'a>(&'a self, seated: &'a Seated) -> Shown<'a> {
        if let Some(level) = seated.bot {
            return Shown::Bot(level);
        }
        match self.known.get(&seated.account_id) {
            Some(Some(username)) => Shown::Person {
                account_id: &seated.account_id,
                username,
            },
            Some(None) | None => Shown::Erased,
        }
    }

    /// Whether these names still show `table`: read in `epoch`, and every
    /// person seated among them.
    fn cover(&self, table: &Table, epoch: Option<u64>) -> bool {
        epoch.is_some()
            && self.epoch == epoch
            && persons(table).all(|id| self.known.contains_key(id))
    }

    /// The names of `table`'s persons, read again unless these still
    /// cover it (read in `epoch`, every person among them): `Some` when
    /// they were read (the caller keeps them), `None` when these still
    /// hold. `epoch` is the hub's accounts epoch taken before the read.
    pub async fn refreshed(
        &self,
        executor: impl PgExecutor<'_>,
        table: &Table,
        epoch: Option<u64>,
    ) -> Result<Option<Names>, sqlx::Error> {
        if self.cover(table, epoch) {
            return Ok(None);
        }
        Ok(Some(Names::read(executor, persons(table), epoch).await?))
    }

    /// The names of these persons now, read in `epoch`.
    pub async fn read(
        executor: impl PgExecutor<'_>,
        persons: impl Iterator<Item = &PlayerId>,
        epoch: Option<u64>,
    ) -> Result<Names, sqlx::Error> {
        let ids: Vec<PlayerId> = persons.cloned().collect();
        let uuids: Vec<Uuid> = ids
            .iter()
            .filter_map(|id| id.as_str().parse().ok())
            .collect();
        let read: HashMap<Uuid, Option<String>> = if uuids.is_empty() {
            HashMap::new()
        } else {
            store::accounts::names(executor, &uuids)
                .await?
                .into_iter()
                .collect()
        };
        let known = ids
            .into_iter()
            .map(|id| {
                let name = id
                    .as_str()
                    .parse::<Uuid>()
                    .ok()
                    .and_then(|u| read.get(&u).cloned().flatten());
                (id, name)
            })
            .collect();
        Ok(Names { known, epoch })
    }
}

/// The accounts of a table's persons: seated now, or in its game.
fn persons(table: &Table) -> impl Iterator<Item = &PlayerId> {
    table
        .seated()
        .filter(|s| s.bot.is_none())
        .map(|s| &s.account_id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seat_shows_its_bot_its_person_or_an_erased_account() {
        let names = Names {
            known: HashMap::from([("a".into(), Some("alice".to_owned())), ("b".into(), None)]),
            epoch: Some(1),
        };
        let person = |id: &str| Seated {
            seat: 0,
            account_id: id.into(),
            bot: None,
            guest: false,
            client_seed: None,
        };
        let alice = person("a");
        assert_eq!(
            names.of(&alice),
            Shown::Person {
                account_id: &"a".into(),
                username: "alice"
            }
        );
        assert_eq!(names.of(&person("b")), Shown::Erased);
        assert_eq!(names.of(&person("c")), Shown::Erased, "never read");
        let bot = Seated::bot(1, Level::Basic, None);
        assert_eq!(names.of(&bot), Shown::Bot(Level::Basic));
    }
}
