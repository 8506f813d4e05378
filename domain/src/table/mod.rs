//! A table: the lobby (create, join, leave, start) around one game. Its log
//! is the one the API stores: lobby events, then the game's events.

use crate::fair::Chance;

pub(crate) mod correction;
mod deals;
pub(crate) mod events;
mod lobby;
mod log;
pub mod notices;
mod presence;
mod seats;

pub use correction::{Correction, CorrectionError, Grounds, ResultCorrected};
pub use deals::{verify_deals, verify_revealed, DealsChecked, Unfair};
pub use events::{TableCreated, TableEvent};
pub use lobby::{Joining, Lobby, RematchOf, Reserved, Visibility};
pub use log::{apply, apply_guarded, Fold, FoldError, ReadError};
pub use notices::{Notice, NoticeKind, TURN_ENDING};
pub use presence::{
    ranking_after, ranking_after_resignations, Actors, BotReason, Clock, Due, Presence, Turn,
    STAND_IN,
};
pub use seats::{Newcomer, PlayerId, Seated};

use crate::bots::{Level, Playouts};
use crate::engine::{Command, RuleError};
use crate::event::{Move, Seat};
use crate::fair::{ClientSeed, SeedHash, ServerSeed};
use crate::game::{Game, Status};
use crate::rules::{Preset, Rules, RulesError};
use crate::view::{PendingView, PlayerView, SeatView};

/// Why a table command is refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TableError {
    #[error("the table is full")]
    Full,
    #[error("you already sit at this table")]
    AlreadySeated,
    #[error("you do not sit at this table")]
    NotSeated,
    #[error("only the creator of the table can start it")]
    NotCreator,
    #[error("the table has {have} player(s); these rules need at least {need}")]
    NotEnoughPlayers { have: usize, need: usize },
    #[error("the game has already started")]
    NotWaiting,
    #[error("your seat is not away")]
    NotAway,
    #[error("your seat is away: take it back first (POST …/seats/me/back)")]
    SeatAway,
    #[error("you have resigned this game")]
    AlreadyResigned,
    #[error("every person seated has had a turn, or the first round is over: the game can no longer be aborted")]
    AbortTooLate,
    #[error("no person sits at this table: a game of bots alone is not played")]
    NoPersonSeated,
    #[error("the game was aborted")]
    Aborted,
    #[error("invalid clock: {0}")]
    InvalidClock(String),
    #[error("no move is the server's to make now")]
    NoAutomaticMove,
    #[error("this table is private: it is joined through its invitation")]
    InvitationNeeded,
    #[error("the seats of this rematch are kept for the players of the game before it")]
    SeatReserved,
    #[error("this table seats its players and starts by itself (quick play, a rematch)")]
    StartsByItself,
    #[error("the game is not over")]
    GameNotOver,
    #[error("the rematch of this table is already open")]
    RematchOpen,
    #[error("this quick-play table closed when its last person left: ask quick play again")]
    Closed,
    #[error("{0}")]
    Rules(#[from] RulesError),
    #[error("{0}")]
    Rule(#[from] RuleError),
    #[error("{0}")]
    Correction(#[from] CorrectionError),
}

impl TableError {
    /// A stable machine code for clients.
    pub fn code(&self) -> &'static str {
        match self {
            TableError::Full => "table_full",
            TableError::AlreadySeated => "already_seated",
            TableError::NotSeated => "not_seated",
            TableError::NotCreator => "not_creator",
            TableError::NotEnoughPlayers { .. } => "not_enough_players",
            TableError::NotWaiting => "table_not_waiting",
            TableError::NotAway => "not_away",
            TableError::SeatAway => "seat_away",
            TableError::AlreadyResigned => "already_resigned",
            TableError::AbortTooLate => "abort_too_late",
            TableError::NoPersonSeated => "no_person_seated",
            TableError::Aborted => "game_aborted",
            TableError::InvalidClock(_) => "invalid_clock",
            TableError::NoAutomaticMove => "no_automatic_move",
            TableError::InvitationNeeded => "invitation_needed",
            TableError::SeatReserved => "seat_reserved",
            TableError::StartsByItself => "starts_by_itself",
            TableError::GameNotOver => "game_not_over",
            TableError::RematchOpen => "rematch_open",
            TableError::Closed => "table_closed",
            TableError::Rules(_) => "invalid_rules",
            TableError::Rule(e) => e.code(),
            TableError::Correction(e) => e.code(),
        }
    }
}

/// What can be asked of a table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TableCommand {
    Join {
        account_id: PlayerId,
        joining: Joining,
        /// The account is a guest's (see [`Seated::guest`]).
        guest: bool,
        /// The seed the person brings (see [`Seated::client_seed`]).
        client_seed: Option<ClientSeed>,
    },
    Leave {
        account_id: PlayerId,
    },
    Start {
        account_id: PlayerId,
    },
    Move {
        account_id: PlayerId,
        mv: Move,
    },
    /// The server: the deadline of the seat on turn passed (D38), as recorded.
    TimeOut {
        deadline: String,
    },
    /// The server: the move of the bot, away or resigned seat on turn (D39,
    /// D40, D42), chosen from its view and `seed`, searching at most
    /// `playouts` (a level that searches).
    PlayFor {
        seed: u32,
        playouts: Playouts,
    },
    /// An away player takes their seat back (D39).
    Back {
        account_id: PlayerId,
    },
    Resign {
        account_id: PlayerId,
    },
    Abort {
        account_id: PlayerId,
    },
    /// The creator seats a bot of `level` at the next free seat (D42).
    SeatBot {
        account_id: PlayerId,
        level: Level,
        /// The seed the server drew for the bot's seat.
        client_seed: Option<ClientSeed>,
    },
    /// The server: quick play's wait is over; bots take the empty seats,
    /// each with the seed the server drew for that seat (`client_seeds`,
    /// by seat).
    FillWithBots {
        client_seeds: Vec<ClientSeed>,
    },
    /// A player of the finished game opened its rematch, `table_id`.
    OfferRematch {
        account_id: PlayerId,
        table_id: String,
    },
    /// The server: a person a waiting rematch keeps a seat for will never
    /// come (their account is erased).
    DeclineRematch {
        account_id: PlayerId,
    },
    /// An admin corrects the finished game's result on `grounds` (a
    /// dispute upheld, a sanction), see [`Table::correct`].
    CorrectResult {
        by: PlayerId,
        grounds: Grounds,
        correction: Correction,
    },
}

/// A table: its rules, who sits, and the game once started.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Table {
    pub ruleset: String,
    pub rules: Rules,
    pub seats: usize,
    pub creator: PlayerId,
    /// Seated players by seat (before the start, seats may have gaps).
    pub players: Vec<Option<Seated>>,
    pub game: Option<Game>,
    /// Number of events folded.
    pub version: u64,
    /// The turn clock (D37), if any.
    pub clock: Option<Clock>,
    /// Each seat's player during the game (D39–D41), by seat.
    pub presence: Vec<Presence>,
    /// Seats in the order they resigned (D40's ranking).
    pub resigned_order: Vec<Seat>,
    /// D41.
    pub aborted: bool,
    /// How the table fills and starts, and its rematch.
    pub lobby: Lobby,
    /// The first round's dealer, once dealt (a rematch's is the next one).
    pub first_dealer: Option<Seat>,
    /// The last correction of the finished game's result, which stands.
    pub correction: Option<ResultCorrected>,
    /// The commitment to the server seed every shuffle is keyed with
    /// (docs/API.md "Fair deals"); `None` in logs older than fair deals.
    pub seed_hash: Option<SeedHash>,
    /// The server seed, once the game is over and `seed_revealed` logged it.
    pub revealed: Option<ServerSeed>,
    /// Whose acts are their players' own (see `presence`).
    actors: Actors,
}

impl Table {
    /// The first events of a new table: created, and its creator at seat 0
    /// (no seeds: its shuffles prove nothing).
    pub fn create(
        ruleset: &str,
        options: &serde_json::Map<String, serde_json::Value>,
        seats: usize,
        clock: Option<Clock>,
        creator: &PlayerId,
    ) -> Result<Vec<TableEvent>, TableError> {
        let creator = Newcomer {
            account_id: creator.clone(),
            guest: false,
            client_seed: None,
        };
        let lobby = Lobby::default();
        Self::open(ruleset, options, seats, clock, &lobby, &creator, None)
    }

    /// [`Table::create`] with the lobby's settings (a private table, one
    /// that starts by itself, quick play's bots), by a player or a guest,
    /// committed to the server seed whose hash is `seed_hash`.
    pub fn open(
        ruleset: &str,
        options: &serde_json::Map<String, serde_json::Value>,
        seats: usize,
        clock: Option<Clock>,
        lobby: &Lobby,
        creator: &Newcomer,
        seed_hash: Option<SeedHash>,
    ) -> Result<Vec<TableEvent>, TableError> {
        let preset = Preset::from_id(ruleset)?;
        let clock = clock.map(Clock::checked).transpose()?;
        let rules = preset.with_options(options)?;
        if seats < rules.players.min || seats > rules.players.max {
            return Err(RulesError::Invalid(format!(
                "{} takes {} to {} players, not {seats}",
                preset.id(),
                rules.players.min,
                rules.players.max
            ))
            .into());
        }
        Ok(vec![
            TableEvent::TableCreated(Box::new(TableCreated {
                ruleset: preset.id().to_owned(),
                rules,
                seats,
                creator: creator.account_id.clone(),
                clock,
                visibility: lobby.visibility,
                starts_when_full: lobby.starts_when_full,
                bots_after: lobby.bots_after,
                rematch_of: lobby.rematch_of.clone(),
                seed_hash,
            })),
            TableEvent::PlayerJoined(creator.at(0)),
        ])
    }

    /// Rebuilds a table from its log; None when the log does not begin with
    /// `table_created`.
    pub fn from_events<'a>(events: impl IntoIterator<Item = &'a TableEvent>) -> Option<Table> {
        let mut it = events.into_iter();
        let TableEvent::TableCreated(c) = it.next()? else {
            return None;
        };
        let mut t = Table {
            ruleset: c.ruleset.clone(),
            rules: c.rules.clone(),
            seats: c.seats,
            creator: c.creator.clone(),
            players: vec![None; c.seats],
            game: None,
            version: 1,
            clock: c.clock,
            presence: Vec::new(),
            resigned_order: Vec::new(),
            aborted: false,
            lobby: Lobby::of(c),
            first_dealer: None,
            correction: None,
            seed_hash: c.seed_hash,
            revealed: None,
            actors: Actors::default(),
        };
        for e in it {
            t.evolve(e);
        }
        Some(t)
    }

    /// Applies one event. Never fails.
    pub fn evolve(&mut self, event: &TableEvent) {
        self.version += 1;
        self.track(event);
        match event {
            TableEvent::TableCreated(_) => {}
            TableEvent::PlayerJoined(s) => {
                if let Some(slot) = self.players.get_mut(s.seat) {
                    *slot = Some(s.clone());
                }
            }
            TableEvent::PlayerLeft { seat } => {
                if let Some(slot) = self.players.get_mut(*seat) {
                    *slot = None;
                }
                // A quick-play table nobody waits at any more is closed:
                // ended, listed nowhere, joined by nobody.
                if self.lobby.is_quick_play() && self.seated().next().is_none() {
                    self.aborted = true;
                }
            }
            TableEvent::GameStarted { players } => {
                self.players = players.iter().cloned().map(Some).collect();
                self.game = self.game_of(players).ok();
                self.presence = vec![Presence::default(); players.len()];
            }
            TableEvent::TurnTimedOut { seat, deadline: _ } => {
                if let Some(p) = self.presence.get_mut(*seat) {
                    p.timeouts += 1;
                    p.turned = true;
                }
            }
            TableEvent::SeatAway { seat } => {
                if let Some(p) = self.presence.get_mut(*seat) {
                    p.away = true;
                }
            }
            TableEvent::SeatBack { seat } => {
                if let Some(p) = self.presence.get_mut(*seat) {
                    p.away = false;
                    p.timeouts = 0;
                }
            }
            TableEvent::PlayerResigned { seat } => {
                if let Some(p) = self.presence.get_mut(*seat) {
                    p.resigned = true;
                }
                self.resigned_order.push(*seat);
            }
            TableEvent::GameAborted { by: _ } => self.aborted = true,
            TableEvent::BotSeated {
                seat,
                level,
                client_seed,
            } => {
                if let Some(slot) = self.players.get_mut(*seat) {
                    *slot = Some(Seated::bot(*seat, *level, client_seed.clone()));
                }
            }
            TableEvent::BotMoved { seat, .. } => {
                if let Some(p) = self.presence.get_mut(*seat) {
                    p.turned = true;
                }
            }
            TableEvent::RematchOffered { table_id, .. } => {
                self.lobby.rematch = Some(table_id.clone());
            }
            // A rematch one of its people declined never starts: closed,
            // like an emptied quick-play table.
            TableEvent::RematchDeclined { .. } => self.aborted = true,
            TableEvent::SeedRevealed { server_seed } => self.revealed = Some(server_seed.clone()),
            TableEvent::ResultCorrected(c) => self.correction = Some((**c).clone()),
            TableEvent::Game(e) => {
                if let Some(g) = self.game.as_mut() {
                    g.evolve(e);
                }
            }
        }
    }

    pub fn status(&self) -> Status {
        match &self.game {
            _ if self.aborted => Status::Aborted,
            Some(game) => game.status(),
            None => Status::Waiting,
        }
    }

    /// What `viewer` may see of the table (docs/API.md "The player view"),
    /// with what is said of each player made by `who`: the lobby's view
    /// before the first deal; the game's while it runs; once the game is
    /// over, however it ended (played out, resigned, aborted), nobody's
    /// turn: `current_seat` null, nothing pending, no legal move.
    pub fn view_with<P>(
        &self,
        viewer: Option<Seat>,
        mut who: impl FnMut(PlayerView) -> Option<P>,
    ) -> SeatView<P> {
        let Some(game) = &self.game else {
            let players = self.seated().map(|p| PlayerView::waiting(p.seat));
            return SeatView::nothing_dealt(viewer, players.filter_map(who).collect(), None);
        };
        let mut view = game.view_with(viewer, &mut who);
        if self.status() != Status::Playing {
            view.current_seat = None;
            view.pending = PendingView::none();
            view.legal_moves.clear();
        }
        view
    }

    /// The seat of an account, if it sits here.
    pub fn seat_of(&self, account_id: &PlayerId) -> Option<Seat> {
        self.players
            .iter()
            .flatten()
            .find(|p| &p.account_id == account_id)
            .map(|p| p.seat)
    }

    pub fn seated(&self) -> impl Iterator<Item = &Seated> {
        self.players.iter().flatten()
    }

    /// The events a command produces, or why it is refused. Pure.
    pub fn decide<C: Chance + ?Sized>(
        &self,
        command: &TableCommand,
        chance: &mut C,
    ) -> Result<Vec<TableEvent>, TableError> {
        match command {
            TableCommand::Join {
                account_id,
                joining,
                guest,
                client_seed,
            } => {
                let newcomer = Newcomer {
                    account_id: account_id.clone(),
                    guest: *guest,
                    client_seed: client_seed.clone(),
                };
                self.join(&newcomer, *joining, chance)
            }
            TableCommand::Leave { account_id } => self.leave(account_id),
            TableCommand::Start { account_id } => self.start(account_id, chance),
            TableCommand::Move { account_id, mv } => {
                let game = self.running()?;
                let seat = self.seat_of(account_id).ok_or(TableError::NotSeated)?;
                let seat = self.present_seat(seat)?;
                let events = game.decide(
                    &Command::Move {
                        seat,
                        mv: mv.clone(),
                    },
                    chance,
                )?;
                Ok(events.into_iter().map(TableEvent::Game).collect())
            }
            TableCommand::TimeOut { deadline } => self.time_out(deadline, chance),
            TableCommand::PlayFor { seed, playouts } => self.play_for(*seed, *playouts, chance),
            TableCommand::Back { account_id } => self.come_back(account_id),
            TableCommand::Resign { account_id } => {
                let seat = self.seat_of(account_id).ok_or(TableError::NotSeated)?;
                self.resign(seat)
            }
            TableCommand::Abort { account_id } => {
                let seat = self.seat_of(account_id).ok_or(TableError::NotSeated)?;
                self.abort(seat)
            }
            TableCommand::SeatBot {
                account_id,
                level,
                client_seed,
            } => self.seat_bot(account_id, *level, client_seed),
            TableCommand::FillWithBots { client_seeds } => {
                self.fill_with_bots(client_seeds, chance)
            }
            TableCommand::OfferRematch {
                account_id,
                table_id,
            } => self.offer_rematch(account_id, table_id),
            TableCommand::DeclineRematch { account_id } => self.decline_rematch(account_id),
            TableCommand::CorrectResult {
                by,
                grounds,
                correction,
            } => Ok(vec![self.correct(correction.clone(), grounds, by)?]),
        }
    }

    /// A seated player leaves a table that waits.
    fn leave(&self, account_id: &PlayerId) -> Result<Vec<TableEvent>, TableError> {
        if self.game.is_some() {
            return Err(TableError::NotWaiting);
        }
        let seat = self.seat_of(account_id).ok_or(TableError::NotSeated)?;
        Ok(vec![TableEvent::PlayerLeft { seat }])
    }

    /// An away player takes their seat back (D39).
    fn come_back(&self, account_id: &PlayerId) -> Result<Vec<TableEvent>, TableError> {
        self.running()?;
        let seat = self.seat_of(account_id).ok_or(TableError::NotSeated)?;
        match self.presence[seat] {
            Presence { resigned: true, .. } => Err(TableError::AlreadyResigned),
            Presence { away: true, .. } => Ok(vec![TableEvent::SeatBack { seat }]),
            Presence { .. } => Err(TableError::NotAway),
        }
    }

    /// The creator seats a bot of `level` at the next free seat (D42),
    /// with the seed the server drew for it.
    fn seat_bot(
        &self,
        account_id: &PlayerId,
        level: Level,
        client_seed: &Option<ClientSeed>,
    ) -> Result<Vec<TableEvent>, TableError> {
        self.by_creator_while_waiting(account_id)?;
        let seat = self.free_seat()?;
        Ok(vec![TableEvent::BotSeated {
            seat,
            level,
            client_seed: client_seed.clone(),
        }])
    }

    /// The creator starts the game (see [`Table::deal_in`]).
    fn start<C: Chance + ?Sized>(
        &self,
        account_id: &PlayerId,
        chance: &mut C,
    ) -> Result<Vec<TableEvent>, TableError> {
        self.by_creator_while_waiting(account_id)?;
        self.deal_in(chance)
    }

    /// The game starts: the seats renumbered in order, never bots alone
    /// (D40), and round 1 dealt, by a dealer drawn at random (D23) or, at
    /// a rematch, by the one after the game before's.
    fn deal_in<C: Chance + ?Sized>(&self, chance: &mut C) -> Result<Vec<TableEvent>, TableError> {
        let players: Vec<Seated> = self
            .seated()
            .enumerate()
            // Seated 0..n-1; a bot's id follows its seat in the game.
            .map(|(seat, p)| match p.bot {
                Some(_) => Seated {
                    seat,
                    account_id: Seated::bot_id(seat),
                    ..p.clone()
                },
                None => Seated { seat, ..p.clone() },
            })
            .collect();
        if players.iter().all(|p| p.bot.is_some()) {
            return Err(TableError::NoPersonSeated);
        }
        let need = self.rules.players.min;
        if players.len() < need {
            return Err(TableError::NotEnoughPlayers {
                have: players.len(),
                need,
            });
        }
        let mut game = self.game_of(&players)?;
        let mut events = vec![TableEvent::GameStarted { players }];
        let start = match &self.lobby.rematch_of {
            Some(of) => Command::StartFrom {
                dealer: of.first_dealer,
            },
            None => Command::Start,
        };
        let mut out = Vec::new();
        game.execute(&start, chance, &mut out)?;
        events.extend(out.into_iter().map(TableEvent::Game));
        Ok(events)
    }

    /// The game these players start: its shuffles take their seeds, in seat
    /// order, when every seat has one (a log older than fair deals has none).
    fn game_of(&self, players: &[Seated]) -> Result<Game, RulesError> {
        let mut game = Game::new(self.rules.clone(), players.len())?;
        game.clients = players
            .iter()
            .map(|p| p.client_seed.clone())
            .collect::<Option<_>>()
            .unwrap_or_default();
        Ok(game)
    }

    /// `decide` then `evolve` in place, without copying the game for a
    /// move; then, when these events ended the game, the server seed
    /// revealed (`seed_revealed`, when `chance` is keyed with the seed the
    /// table committed to).
    pub fn execute<C: Chance + ?Sized>(
        &mut self,
        command: &TableCommand,
        chance: &mut C,
    ) -> Result<Vec<TableEvent>, TableError> {
        if let TableCommand::Move { account_id, mv } = command {
            self.running()?;
            let seat = self.seat_of(account_id).ok_or(TableError::NotSeated)?;
            let seat = self.present_seat(seat)?;
            let game = self.game.as_mut().expect("a running table has a game");
            let mut out = Vec::new();
            game.execute(
                &Command::Move {
                    seat,
                    mv: mv.clone(),
                },
                chance,
                &mut out,
            )?;
            self.version += out.len() as u64;
            let mut events: Vec<TableEvent> = out.into_iter().map(TableEvent::Game).collect();
            for e in &events {
                self.track(e);
            }
            events.extend(self.revealing(chance));
            return Ok(events);
        }
        let mut events = self.decide(command, chance)?;
        for e in &events {
            self.evolve(e);
        }
        events.extend(self.revealing(chance));
        Ok(events)
    }

    /// `seed_revealed`, folded, once the game is over (ended, aborted)
    /// and its seed not yet revealed: the one the table committed to, which
    /// keys `chance`'s streams. Nothing for a table without a commitment.
    fn revealing<C: Chance + ?Sized>(&mut self, chance: &C) -> Option<TableEvent> {
        let seed = chance.server_seed()?;
        let over = match self.status() {
            Status::Finished | Status::Aborted => true,
            Status::Waiting | Status::Playing => false,
        };
        let committed = self.seed_hash.is_some_and(|h| h.commits_to(seed));
        if !over || !committed || self.revealed.is_some() {
            return None;
        }
        let revealed = TableEvent::SeedRevealed {
            server_seed: seed.clone(),
        };
        self.evolve(&revealed);
        Some(revealed)
    }
}

#[cfg(test)]
mod lobby_tests;
#[cfg(test)]
pub(crate) mod presence_tests;
#[cfg(test)]
mod tests;
