//! How a table fills and starts beyond its creator's say (docs/API.md
//! "Finding a game and coming back"): private tables joined through an
//! invitation, tables that start by themselves when full (quick play, a
//! rematch), quick play's bots after a wait, and the rematch, whose seats
//! are kept for the persons of the game before it and whose first dealer
//! is the one after that game's (D23 moved on by one).

use crate::fair::Chance;
use serde::{Deserialize, Serialize};

use super::{Newcomer, PlayerId, Table, TableCommand, TableCreated, TableError, TableEvent};
use crate::bots::Level;
use crate::event::Seat;
use crate::fair::{ClientSeed, SeedHash};
use crate::game::Status;

/// Who may find and join a table.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Visibility {
    /// Listed to everyone; anyone joins.
    #[default]
    Public,
    /// Listed to its players only; joined through its invitation.
    Private,
}

impl Visibility {
    pub fn is_public(&self) -> bool {
        *self == Visibility::Public
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Visibility::Public => "public",
            Visibility::Private => "private",
        }
    }
}

/// A seat kept for one person.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Reserved {
    #[cfg_attr(feature = "openapi", schema(value_type = usize))]
    pub seat: Seat,
    pub account_id: PlayerId,
}

/// What a rematch table keeps of the table it follows.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RematchOf {
    /// The table whose game came before.
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = Uuid))]
    pub table_id: String,
    /// The persons of that game, each at the seat they had (the bots sit
    /// at theirs from the start).
    pub reserved: Vec<Reserved>,
    /// The first dealer: the one after that game's (D23).
    #[cfg_attr(feature = "openapi", schema(value_type = usize))]
    pub first_dealer: Seat,
}

/// A table's lobby settings, as its `table_created` set them, and the
/// rematch that follows it once one is opened.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Lobby {
    pub visibility: Visibility,
    pub starts_when_full: bool,
    pub bots_after: Option<u32>,
    pub rematch_of: Option<RematchOf>,
    /// The table that follows this one (`rematch_offered`).
    pub rematch: Option<String>,
}

impl Lobby {
    pub(super) fn of(created: &TableCreated) -> Self {
        Lobby {
            visibility: created.visibility,
            starts_when_full: created.starts_when_full,
            bots_after: created.bots_after,
            rematch_of: created.rematch_of.clone(),
            rematch: None,
        }
    }

    /// A quick-play table: one that starts by itself and is no rematch.
    pub fn is_quick_play(&self) -> bool {
        self.starts_when_full && self.rematch_of.is_none()
    }

    /// The seat kept for `account_id` at a rematch; `Ok(None)` where no
    /// seat is kept for anyone.
    fn kept_for(&self, account_id: &PlayerId) -> Result<Option<Seat>, TableError> {
        let Some(of) = &self.rematch_of else {
            return Ok(None);
        };
        of.reserved
            .iter()
            .find(|r| &r.account_id == account_id)
            .map(|r| Some(r.seat))
            .ok_or(TableError::SeatReserved)
    }

    /// Whether `seat` is kept for a person.
    fn is_kept(&self, seat: Seat) -> bool {
        self.rematch_of
            .as_ref()
            .is_some_and(|of| of.reserved.iter().any(|r| r.seat == seat))
    }
}

/// How a person comes to a table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Joining {
    /// By the table's id (a listed table, a link): public tables only.
    Open,
    /// Through the table's invitation (the server checked its code), or
    /// sent there by the server (quick play, a rematch).
    Invited,
}

impl Table {
    /// Whether `account_id` may read this table at all (its summary, view,
    /// events, rounds and streams): anyone a public table; a private one
    /// only its members, its creator, the persons seated (at its game too,
    /// once over) and those whose seat its rematch keeps. Whoever else asks
    /// is told it does not exist. (Administrators read every table: the
    /// server's rule, not the game's.)
    pub fn may_see(&self, account_id: &PlayerId) -> bool {
        match self.lobby.visibility {
            Visibility::Public => true,
            Visibility::Private => {
                *account_id == self.creator
                    || self.seat_of(account_id).is_some()
                    || self.lobby.kept_for(account_id).ok().flatten().is_some()
            }
        }
    }

    /// A person takes a seat of a waiting table: the one kept for them at
    /// a rematch, else the first free one (never one kept for another); a
    /// private table only through its invitation. The game starts with it
    /// when the table starts by itself and this fills it.
    pub(super) fn join<C: Chance + ?Sized>(
        &self,
        newcomer: &Newcomer,
        joining: Joining,
        chance: &mut C,
    ) -> Result<Vec<TableEvent>, TableError> {
        let account_id = &newcomer.account_id;
        // Seated already comes first: asking again for a seat one has
        // (a rematch that started with this very join) is never refused
        // for what the first ask did.
        if self.seat_of(account_id).is_some() {
            return Err(TableError::AlreadySeated);
        }
        if self.game.is_some() {
            return Err(TableError::NotWaiting);
        }
        if self.aborted {
            return Err(TableError::Closed);
        }
        if joining == Joining::Open && !self.lobby.visibility.is_public() {
            return Err(TableError::InvitationNeeded);
        }
        let seat = match self.lobby.kept_for(account_id)? {
            Some(seat) => seat,
            None => self.free_seat()?,
        };
        let joined = TableEvent::PlayerJoined(newcomer.at(seat));
        self.then_start_if_full(vec![joined], chance)
    }

    /// `events` (lobby events, just decided), followed by the game's start
    /// when the table starts by itself and they fill it.
    fn then_start_if_full<C: Chance + ?Sized>(
        &self,
        mut events: Vec<TableEvent>,
        chance: &mut C,
    ) -> Result<Vec<TableEvent>, TableError> {
        if !self.lobby.starts_when_full {
            return Ok(events);
        }
        let mut after = self.clone();
        for e in &events {
            after.evolve(e);
        }
        if after.seated().count() == after.seats {
            events.extend(after.deal_in(chance)?);
        }
        Ok(events)
    }

    /// The first seat that is free and kept for nobody.
    pub(super) fn free_seat(&self) -> Result<Seat, TableError> {
        self.players
            .iter()
            .enumerate()
            .position(|(seat, p)| p.is_none() && !self.lobby.is_kept(seat))
            .ok_or(TableError::Full)
    }

    /// What only the creator may do, and only while the table waits and
    /// does not start by itself.
    pub(super) fn by_creator_while_waiting(&self, account_id: &PlayerId) -> Result<(), TableError> {
        if *account_id != self.creator {
            return Err(TableError::NotCreator);
        }
        if self.game.is_some() {
            return Err(TableError::NotWaiting);
        }
        if self.lobby.starts_when_full {
            return Err(TableError::StartsByItself);
        }
        Ok(())
    }

    /// Quick play's wait is over (the server, at `bots_after`): `basic`
    /// bots take every empty seat, with the seeds drawn for those seats,
    /// and the game starts, if a person still sits there.
    pub(super) fn fill_with_bots<C: Chance + ?Sized>(
        &self,
        client_seeds: &[ClientSeed],
        chance: &mut C,
    ) -> Result<Vec<TableEvent>, TableError> {
        if self.game.is_some() {
            return Err(TableError::NotWaiting);
        }
        if self.lobby.bots_after.is_none() {
            return Err(TableError::NoAutomaticMove);
        }
        let mut after = self.clone();
        let mut events = Vec::new();
        while let Ok(seat) = after.free_seat() {
            let seated = TableEvent::BotSeated {
                seat,
                level: Level::Basic,
                client_seed: client_seeds.get(seat).cloned(),
            };
            after.evolve(&seated);
            events.push(seated);
        }
        events.extend(after.deal_in(chance)?);
        Ok(events)
    }

    /// The seat of `account_id` when they may open this table's rematch:
    /// a person of its game, once the game is over, and no rematch open yet.
    fn may_rematch(&self, account_id: &PlayerId) -> Result<Seat, TableError> {
        let seat = self.seat_of(account_id).ok_or(TableError::NotSeated)?;
        match self.status() {
            Status::Finished | Status::Aborted => {}
            Status::Waiting | Status::Playing => return Err(TableError::GameNotOver),
        }
        if self.lobby.rematch.is_some() {
            return Err(TableError::RematchOpen);
        }
        Ok(seat)
    }

    /// A player of this finished game opens the rematch `table_id`.
    pub(super) fn offer_rematch(
        &self,
        account_id: &PlayerId,
        table_id: &str,
    ) -> Result<Vec<TableEvent>, TableError> {
        let seat = self.may_rematch(account_id)?;
        Ok(vec![TableEvent::RematchOffered {
            seat,
            table_id: table_id.to_owned(),
        }])
    }

    /// The person `account_id`, whom this waiting rematch keeps a seat for,
    /// will never come: the rematch is closed (it starts only with all of
    /// its people).
    pub(super) fn decline_rematch(
        &self,
        account_id: &PlayerId,
    ) -> Result<Vec<TableEvent>, TableError> {
        if self.aborted {
            return Err(TableError::Closed);
        }
        if self.game.is_some() {
            return Err(TableError::NotWaiting);
        }
        let seat = self
            .lobby
            .rematch_of
            .as_ref()
            .and_then(|of| of.reserved.iter().find(|r| &r.account_id == account_id))
            .map(|r| r.seat)
            .ok_or(TableError::NotSeated)?;
        Ok(vec![TableEvent::RematchDeclined { seat }])
    }

    /// The first events of the rematch of this finished table (whose id
    /// is `this_table_id`), opened by `newcomer`, a person of its game:
    /// the same rules, clock and visibility, as many seats as the game had,
    /// the bots at their seats (with the seeds drawn for them,
    /// `bot_seeds` by seat), every person's seat kept for them, the caller
    /// in theirs, and the first dealer the one after this game's; committed
    /// to a new server seed, whose hash is `seed_hash`. It starts by itself
    /// once every person is back.
    pub fn rematch<C: Chance + ?Sized>(
        &self,
        this_table_id: &str,
        newcomer: &Newcomer,
        seed_hash: Option<SeedHash>,
        bot_seeds: &[ClientSeed],
        chance: &mut C,
    ) -> Result<Vec<TableEvent>, TableError> {
        let account_id = &newcomer.account_id;
        self.may_rematch(account_id)?;
        let n = self.players.len();
        let first_dealer = (self.first_dealer.unwrap_or(n - 1) + 1) % n;
        let reserved = self
            .seated()
            .filter(|p| p.bot.is_none())
            .map(|p| Reserved {
                seat: p.seat,
                account_id: p.account_id.clone(),
            })
            .collect();
        let mut events = vec![TableEvent::TableCreated(Box::new(TableCreated {
            ruleset: self.ruleset.clone(),
            rules: self.rules.clone(),
            seats: n,
            creator: account_id.clone(),
            clock: self.clock,
            visibility: self.lobby.visibility,
            starts_when_full: true,
            bots_after: None,
            rematch_of: Some(RematchOf {
                table_id: this_table_id.to_owned(),
                reserved,
                first_dealer,
            }),
            seed_hash,
        }))];
        events.extend(self.seated().filter_map(|p| {
            p.bot.map(|level| TableEvent::BotSeated {
                seat: p.seat,
                level,
                client_seed: bot_seeds.get(p.seat).cloned(),
            })
        }));
        let mut next = Table::from_events(&events).expect("it begins with table_created");
        let join = TableCommand::Join {
            account_id: account_id.clone(),
            joining: Joining::Invited,
            guest: newcomer.guest,
            client_seed: newcomer.client_seed.clone(),
        };
        events.extend(next.execute(&join, chance)?);
        Ok(events)
    }
}
