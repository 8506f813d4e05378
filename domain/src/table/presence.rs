//! Keeping a table moving (docs/RULES.md §7): the clock (D37), the timeout
//! move (D38), away seats (D39), resigning (D40) and aborting (D41), and the
//! moves the server makes for a seat whose player is not there (D42).
//!
//! Who acted is read from the log alone: a `turn_timed_out` or `bot_moved`
//! marks the seat's next move as the server's, until a turn starts (a turn
//! that starts for that same seat with its drawn card pending is still the
//! same automatic move) or the seat's player comes back. Every other act of
//! a seat (a play, a draw, a pass, a challenge) is its player's own: it
//! counts for D41 and resets D39's count of timeouts.

use std::ops::RangeInclusive;
use std::time::Duration;

use crate::fair::Chance;
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::{PlayerId, Table, TableCommand, TableError, TableEvent};
use crate::bots::{Level, Playouts};
use crate::engine::{Command, RuleError};
use crate::event::{DrawReason, EndReason, Event, GameEnded, Pending, Placing, Seat};
use crate::game::{Game, Status};
use crate::rules::End;
use crate::score;

/// A table's clock (D37): how long a seat has to act, and after how many
/// timeouts in a row it is marked away (D39).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(example = json!({"turn_seconds": 60, "away_after": 2})))]
#[serde(deny_unknown_fields)]
pub struct Clock {
    /// 5 s up to 14 days (correspondence play).
    #[cfg_attr(feature = "openapi", schema(minimum = 5, maximum = 1_209_600))]
    pub turn_seconds: u32,
    /// Timeouts in a row before the seat is away, 1 to 10 (default 2).
    #[serde(default = "Clock::default_away_after")]
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 10))]
    pub away_after: u32,
}

impl Clock {
    pub const TURN_SECONDS: RangeInclusive<u32> = 5..=1_209_600;
    pub const AWAY_AFTER: RangeInclusive<u32> = 1..=10;

    fn default_away_after() -> u32 {
        2
    }

    /// The clock, if its values are in range.
    pub fn checked(self) -> Result<Clock, TableError> {
        if !Self::TURN_SECONDS.contains(&self.turn_seconds) {
            return Err(TableError::InvalidClock(format!(
                "turn_seconds: from {} to {}",
                Self::TURN_SECONDS.start(),
                Self::TURN_SECONDS.end()
            )));
        }
        if !Self::AWAY_AFTER.contains(&self.away_after) {
            return Err(TableError::InvalidClock(format!(
                "away_after: from {} to {}",
                Self::AWAY_AFTER.start(),
                Self::AWAY_AFTER.end()
            )));
        }
        Ok(self)
    }
}

/// Why the server moves for a seat (`bot_moved.reason`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum BotReason {
    /// A bot holds the seat.
    Bot,
    /// Its player is away (D39).
    Away,
    /// Its player resigned (D40).
    Resigned,
}

impl BotReason {
    /// Its name in events.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Bot => "bot",
            Self::Away => "away",
            Self::Resigned => "resigned",
        }
    }
}

/// When the server must next act on a table by itself (a turn's deadline,
/// D37; the move of a bot, away or resigned seat, D39-D42), as the events
/// just decided leave it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Due {
    /// As it was (the events changed neither whose turn it is nor how).
    Keep,
    /// Nothing is due.
    Clear,
    /// This long after the events' time.
    After(Duration),
}

/// Who must act on a table and whether the server plays for them: what,
/// when it changes, makes something new due ([`Table::due_after`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Turn {
    seat: Option<Seat>,
    automatic: bool,
}

/// What the table knows of one seat's player during a game.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Presence {
    pub away: bool,
    pub resigned: bool,
    /// Timeouts in a row (D39).
    pub timeouts: u32,
    /// The player has made a move of their own (resets D39's count).
    pub moved: bool,
    /// The seat has had a turn (D41): a move of its player's own, a
    /// timeout, or a move the server made for it.
    pub turned: bool,
}

/// The level that plays for an away or resigned seat (D39, D40).
pub const STAND_IN: Level = Level::Basic;

impl Table {
    /// Who must act now, and whether the server plays for them.
    pub fn turn(&self) -> Turn {
        Turn {
            seat: self.must_act(),
            automatic: self.automatic().is_some(),
        }
    }

    /// What `events` (just applied to this table, which was at `before`)
    /// leave due: the move of a bot, away or resigned seat `bot_delay`
    /// after them (D39-D42); a new turn's deadline when the table has a
    /// clock (D37; the deadline of a turn that goes on, say after another
    /// seat's challenge, stays, D36); else nothing.
    pub fn due_after(&self, before: Turn, events: &[TableEvent], bot_delay: Duration) -> Due {
        if self.game.is_none() {
            return self.due_in_lobby(events);
        }
        let now = self.turn();
        let new_turn = now != before
            || events
                .iter()
                .any(|e| matches!(e, TableEvent::Game(Event::TurnStarted { .. })));
        match (now, self.clock) {
            (
                Turn {
                    seat: Some(_),
                    automatic: true,
                },
                _,
            ) => Due::After(bot_delay),
            (
                Turn {
                    seat: Some(_),
                    automatic: false,
                },
                Some(clock),
            ) if new_turn => Due::After(Duration::from_secs(u64::from(clock.turn_seconds))),
            (
                Turn {
                    seat: Some(_),
                    automatic: false,
                },
                Some(_),
            ) => Due::Keep,
            (Turn { seat: Some(_), .. }, None) | (Turn { seat: None, .. }, _) => Due::Clear,
        }
    }

    /// What is due while the table waits: quick play's bots, `bots_after`
    /// seconds after the table opened (the events that open it set it;
    /// later lobby events keep it).
    fn due_in_lobby(&self, events: &[TableEvent]) -> Due {
        let opened = events
            .iter()
            .any(|e| matches!(e, TableEvent::TableCreated(_)));
        if self.aborted {
            return Due::Clear;
        }
        match self.lobby.bots_after {
            Some(secs) if opened => Due::After(Duration::from_secs(u64::from(secs))),
            Some(_) => Due::Keep,
            None => Due::Clear,
        }
    }

    /// The seat whose turn it is while the game runs: the one with a
    /// deadline when the table has a clock (D37).
    pub fn must_act(&self) -> Option<Seat> {
        if self.status() != Status::Playing {
            return None;
        }
        self.game.as_ref()?.round()?.current
    }

    /// The person the table waits for: the player of the seat on turn,
    /// unless the server plays it (a bot's, an away or resigned seat).
    pub fn to_act(&self) -> Option<&PlayerId> {
        let seat = self.must_act()?;
        if self.automatic().is_some() {
            return None;
        }
        let seated = self.players.get(seat)?.as_ref()?;
        seated.bot.is_none().then_some(&seated.account_id)
    }

    /// The seat on turn when the server plays it at once, and why.
    pub fn automatic(&self) -> Option<(Seat, BotReason)> {
        let seat = self.must_act()?;
        let presence = self.presence.get(seat)?;
        if self.bot_at(seat).is_some() {
            Some((seat, BotReason::Bot))
        } else if presence.resigned {
            Some((seat, BotReason::Resigned))
        } else if presence.away {
            Some((seat, BotReason::Away))
        } else {
            None
        }
    }

    /// The level of the bot that holds `seat`, if a bot does (D42).
    pub fn bot_at(&self, seat: Seat) -> Option<Level> {
        self.players.get(seat)?.as_ref()?.bot
    }

    /// The seat of a player of the running game who is present (not away,
    /// not resigned): the one who may move.
    pub(super) fn present_seat(&self, seat: Seat) -> Result<Seat, TableError> {
        match self.presence.get(seat) {
            Some(p) if p.resigned => Err(TableError::AlreadyResigned),
            Some(p) if p.away => Err(TableError::SeatAway),
            _ => Ok(seat),
        }
    }

    /// The running game, or why there is none.
    pub(super) fn running(&self) -> Result<&Game, TableError> {
        match self.status() {
            Status::Playing => Ok(self.game.as_ref().expect("a playing table has a game")),
            Status::Waiting => Err(RuleError::NotStarted.into()),
            Status::Finished => Err(RuleError::GameOver.into()),
            Status::Aborted => Err(TableError::Aborted),
        }
    }

    /// D38: the seat on turn's deadline has passed (`deadline` as the server
    /// recorded it): `turn_timed_out`, its timeout move, and `seat_away`
    /// when that makes `away_after` timeouts in a row.
    pub(super) fn time_out<C: Chance + ?Sized>(
        &self,
        deadline: &str,
        chance: &mut C,
    ) -> Result<Vec<TableEvent>, TableError> {
        let clock = self.clock.ok_or(TableError::NoAutomaticMove)?;
        let seat = self.must_act().ok_or(TableError::NoAutomaticMove)?;
        if self.automatic().is_some() {
            return Err(TableError::NoAutomaticMove);
        }
        let moved = self.running()?.decide(&Command::TimeOut { seat }, chance)?;
        let mut events = vec![TableEvent::TurnTimedOut {
            seat,
            deadline: deadline.to_owned(),
        }];
        events.extend(moved.into_iter().map(TableEvent::Game));
        if self.presence[seat].timeouts + 1 >= clock.away_after {
            events.push(TableEvent::SeatAway { seat });
        }
        Ok(events)
    }

    /// The level that plays the seat on turn when the server does: its
    /// bot's, else [`STAND_IN`] (D39, D40, D42).
    pub fn automatic_level(&self) -> Option<Level> {
        let (seat, _) = self.automatic()?;
        Some(self.bot_at(seat).unwrap_or(STAND_IN))
    }

    /// D39, D40, D42: the server's move for the bot, away or resigned seat
    /// on turn, chosen by its level from that seat's view and `seed`,
    /// searching `playouts` (recorded only for a level that searches).
    pub(super) fn play_for<C: Chance + ?Sized>(
        &self,
        seed: u32,
        playouts: Playouts,
        chance: &mut C,
    ) -> Result<Vec<TableEvent>, TableError> {
        let (seat, reason) = self.automatic().ok_or(TableError::NoAutomaticMove)?;
        let level = self.bot_at(seat).unwrap_or(STAND_IN);
        let game = self.running()?;
        let sight = game.sight(seat).ok_or(TableError::NoAutomaticMove)?;
        let mut choice = ChaCha8Rng::seed_from_u64(u64::from(seed));
        let mv = level
            .decide(&sight, playouts, &mut choice)
            .ok_or(TableError::NoAutomaticMove)?;
        let mut events = vec![TableEvent::BotMoved {
            seat,
            bot: level.tag(),
            reason,
            seed,
            playouts: level.searches().then_some(playouts.get()),
        }];
        let moved = game.decide(&Command::Move { seat, mv }, chance)?;
        events.extend(moved.into_iter().map(TableEvent::Game));
        Ok(events)
    }

    /// D40: `seat` resigns; the game ends at once when fewer than two seats
    /// are left unresigned, or no person among them.
    pub(super) fn resign(&self, seat: Seat) -> Result<Vec<TableEvent>, TableError> {
        let game = self.running()?;
        if self.presence[seat].resigned {
            return Err(TableError::AlreadyResigned);
        }
        let mut events = vec![TableEvent::PlayerResigned { seat }];
        let mut resigned: Vec<Seat> = self.resigned_order.clone();
        resigned.push(seat);
        let unresigned: Vec<Seat> = (0..game.seats())
            .filter(|s| !resigned.contains(s))
            .collect();
        if unresigned.len() < 2 || unresigned.iter().all(|s| self.bot_at(*s).is_some()) {
            let ended = ranking_after_resignations(game, &resigned);
            events.push(TableEvent::Game(Event::GameEnded(Box::new(ended))));
        }
        Ok(events)
    }

    /// D41: `seat` aborts the game, which it may until every person seated
    /// has had a turn (a timeout counts) or the first round is over; not
    /// once it has resigned.
    pub(super) fn abort(&self, seat: Seat) -> Result<Vec<TableEvent>, TableError> {
        let game = self.running()?;
        if self.presence[seat].resigned {
            return Err(TableError::AlreadyResigned);
        }
        let first_round_over = !game.history().is_empty();
        let mut persons = self
            .presence
            .iter()
            .enumerate()
            .filter(|(s, _)| self.bot_at(*s).is_none());
        if first_round_over || persons.all(|(_, p)| p.turned) {
            return Err(TableError::AbortTooLate);
        }
        Ok(vec![TableEvent::GameAborted { by: seat }])
    }

    /// Notes who acted in `event` (see the module's documentation): a
    /// player's own act counts for D41 and resets D39's count; the first
    /// round's dealer.
    pub(super) fn track(&mut self, event: &TableEvent) {
        if let TableEvent::Game(Event::RoundStarted(started)) = event {
            self.first_dealer.get_or_insert(started.dealer);
        }
        if let Some(p) = self
            .actors
            .note(event)
            .and_then(|seat| self.presence.get_mut(seat))
        {
            p.moved = true;
            p.turned = true;
            p.timeouts = 0;
        }
    }
}

/// Whose acts in a game are their players' own, read from the log alone
/// (see the module's documentation): what the table keeps for D39 and
/// D41, and what the ratings ask of a game (D43).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Actors {
    /// The seat whose next act is the server's (after `turn_timed_out` or
    /// `bot_moved`).
    automatic_seat: Option<Seat>,
    /// The seat of the round's last `turn_started`.
    turn_seat: Option<Seat>,
}

impl Actors {
    /// Takes the next event of the log: the seat whose player acted in it
    /// themselves, if any.
    pub fn note(&mut self, event: &TableEvent) -> Option<Seat> {
        match event {
            TableEvent::TurnTimedOut { seat, .. } | TableEvent::BotMoved { seat, .. } => {
                self.automatic_seat = Some(*seat);
                None
            }
            TableEvent::SeatBack { .. } => {
                self.automatic_seat = None;
                None
            }
            TableEvent::Game(e) => self.act(e),
            TableEvent::TableCreated(_)
            | TableEvent::PlayerJoined(_)
            | TableEvent::PlayerLeft { .. }
            | TableEvent::GameStarted { .. }
            | TableEvent::SeatAway { .. }
            | TableEvent::PlayerResigned { .. }
            | TableEvent::GameAborted { .. }
            | TableEvent::BotSeated { .. }
            | TableEvent::RematchOffered { .. }
            | TableEvent::RematchDeclined { .. }
            | TableEvent::SeedRevealed { .. }
            | TableEvent::ResultCorrected(_) => None,
        }
    }

    /// Who acted in a game event, unless the server acted for them.
    fn act(&mut self, event: &Event) -> Option<Seat> {
        let actor = match event {
            Event::CardPlayed(played) => Some(played.seat),
            Event::TurnPassed { seat } => Some(*seat),
            // A draw on one's turn (a penalty taken included); not a
            // penalty another seat's card inflicts, nor a challenge's.
            Event::CardsDrawn { seat, reason, .. } => match reason {
                DrawReason::Draw | DrawReason::Penalty => {
                    (self.turn_seat == Some(*seat)).then_some(*seat)
                }
                DrawReason::Challenge => None,
            },
            Event::Challenged { by, .. } => Some(*by),
            Event::TurnStarted { seat, pending, .. } => {
                let same_move =
                    self.automatic_seat == Some(*seat) && matches!(pending, Pending::Drawn { .. });
                if !same_move {
                    self.automatic_seat = None;
                }
                self.turn_seat = Some(*seat);
                None
            }
            Event::RoundStarted(_) | Event::RoundEnded(_) | Event::GameEnded(_) => {
                self.automatic_seat = None;
                self.turn_seat = None;
                None
            }
            Event::CardTurned { .. }
            | Event::StockReshuffled { .. }
            | Event::DirectionChanged { .. }
            | Event::TurnSkipped { .. }
            | Event::PlayerWentOut { .. } => None,
        };
        actor.filter(|s| self.automatic_seat != Some(*s))
    }
}

/// D40's ranking: the unresigned seats first, by the end rule on the totals
/// so far (equal totals share a place, D21); then the resigned seats, the
/// latest resignation first. The resigned seats are the losers.
pub fn ranking_after_resignations(game: &Game, resigned: &[Seat]) -> GameEnded {
    ranking_after(game.rules().end, game.totals(), resigned)
}

/// D40's ranking of `totals` under `end`, `resigned` in the order they
/// resigned (a correction's too, which ranks the totals it makes so).
pub fn ranking_after(end: End, totals: &[i32], resigned: &[Seat]) -> GameEnded {
    let by_rule = score::ranking(end, totals);
    let mut ranking: Vec<Placing> = Vec::with_capacity(by_rule.ranking.len());
    for p in by_rule
        .ranking
        .iter()
        .filter(|p| !resigned.contains(&p.seat))
    {
        let place = match ranking.last() {
            Some(prev) if prev.total == p.total => prev.place,
            _ => ranking.len() + 1,
        };
        ranking.push(Placing { place, ..p.clone() });
    }
    for &seat in resigned.iter().rev() {
        ranking.push(Placing {
            seat,
            total: totals[seat],
            place: ranking.len() + 1,
        });
    }
    GameEnded {
        winners: ranking
            .iter()
            .filter(|p| p.place == 1 && !resigned.contains(&p.seat))
            .map(|p| p.seat)
            .collect(),
        losers: resigned.to_vec(),
        ranking,
        reason: EndReason::Resigned,
    }
}

/// What an act of a seat looks like in the log, for comparing the moves the
/// server made with the ones it had to make (audits).
pub(super) fn act(event: &TableEvent) -> Option<String> {
    match event {
        TableEvent::Game(Event::CardPlayed(p)) => Some(format!(
            "{} played {} {:?} {:?} {:?} {}",
            p.seat, p.card, p.suit, p.letter, p.as_card, p.announce
        )),
        TableEvent::Game(Event::CardsDrawn {
            seat,
            cards,
            reason,
        }) => Some(format!("{seat} drew {} ({reason:?})", cards.len())),
        TableEvent::Game(Event::TurnPassed { seat }) => Some(format!("{seat} passed")),
        TableEvent::Game(Event::Challenged { by, seat, .. }) => {
            Some(format!("{by} challenged {seat}"))
        }
        TableEvent::SeatAway { seat } => Some(format!("{seat} away")),
        _ => None,
    }
}

impl Table {
    /// For audits (D38, D42): when `marker` (the next event of the log, not
    /// folded yet) is a `turn_timed_out` or a `bot_moved`, whether it was the
    /// server's to make and whether `following` (the events recorded after
    /// it) begin with what the server had to do: the timeout move, or the
    /// move the recorded bot chooses from the seat's view with the recorded
    /// seed. Any other event: `Ok`.
    pub fn check_automatic(
        &self,
        marker: &TableEvent,
        following: &[TableEvent],
    ) -> Result<(), String> {
        let command = match marker {
            TableEvent::TurnTimedOut { deadline, .. } => TableCommand::TimeOut {
                deadline: deadline.clone(),
            },
            TableEvent::BotMoved { seed, playouts, .. } => TableCommand::PlayFor {
                seed: *seed,
                playouts: playouts.map_or(Playouts::FULL, Playouts::new),
            },
            _ => return Ok(()),
        };
        // The engine's own randomness (a reshuffle) is recorded in the
        // events; the acts compared here do not depend on it.
        let decided = self
            .decide(&command, &mut ChaCha8Rng::seed_from_u64(0))
            .map_err(|why| {
                format!(
                    "{} when the server had no such move to make: {why}",
                    marker.kind()
                )
            })?;
        if decided.first() != Some(marker) {
            return Err(format!(
                "{} does not name the seat, bot or reason the server had to",
                marker.kind()
            ));
        }
        // The move itself: its first act. What follows it may differ where
        // the engine drew at random (a reshuffle), and the fold checks it.
        let expected = decided[1..].iter().find_map(act);
        let recorded = following.iter().find_map(act);
        if expected != recorded {
            return Err(format!(
                "the move after this {} is not the one the server had to make (expected {expected:?}, recorded {recorded:?})",
                marker.kind()
            ));
        }
        // A timeout never plays a card: not until another seat's turn.
        if let TableEvent::TurnTimedOut { seat, .. } = marker {
            let played = following
                .iter()
                .take_while(|e| {
                    !matches!(e, TableEvent::Game(Event::TurnStarted { seat: s, .. }) if s != seat)
                })
                .any(|e| matches!(e, TableEvent::Game(Event::CardPlayed(p)) if p.seat == *seat));
            if played {
                return Err("a card played by a timeout".to_owned());
            }
        }
        Ok(())
    }
}
