//! `decide`: every rule of docs/RULES.md. A command is checked against the state
//! without changing it; when it is legal, its consequences are worked out as
//! events, each applied through `evolve` as it is emitted, so the events of a
//! move always fold into exactly the state the rules describe.
//!
//! - `legality`: may this seat make this move now? `legal_moves` and
//!   `decide` share one predicate per move kind (`check_play`, `check_draw`,
//!   `check_pass`, `check_challenge`);
//! - `consequences`: what a legal move does (effects, draws, turns, the
//!   end of a round, the next deal).
//!
//! # Where each effect lives
//! An effect (docs/RULES.md §3.3) is compiled from the rules into the
//! per-face `Book` (`rules::Rules::compile`: which faces carry it, which
//! stack, which counter an attack), then checked and resolved here:
//!
//! | effect | checked (`legality`) | resolved (`consequences`) |
//! |---|---|---|
//! | `wild_suit` (the 8) | `names_suit`, `check_card_reason` (a suit named, D29), `legal_on`, `check_constraints` (cancels an attack, unfreezes, D3, D12) | `resolve`: the named suit becomes the target |
//! | `draw_skip(n)` | `check_constraints` (stacking, D25) | `resolve`: a pending draw, summed when it `stacks`; `draw_move` takes it whole (D28) |
//! | `attack_chain(n)` | `check_constraints` (answered by the rank or a wild card, D3) | `resolve`: `Pending::Attack`, then `draw_move` |
//! | `freeze` | `check_constraints` (only an unfreezer plays on it, D12) | `resolve`: the pile frozen |
//! | `skip` | (none) | `resolve`: the next seat skipped |
//! | `reverse` | (none) | `resolve`: direction, or a skip with two players (`TwoPlayerReverse`) |
//! | `pass_across` | (none) | `resolve`: half the table on |
//! | `must_replay(p)` / `may_replay` | the pending replay: `playable_set`, `check_last_card`, `check_draw_given`, `check_pass` | `resolve`: `Pending::MustReplay` / `MayReplay` |
//! | `substitute` (757 joker) | `check_card_reason`, `substitute_choices` (the card it stands for, D1) | `play`: the named card's effect is resolved |
//! | `wild_letter` (star) | `check_card_reason` | `resolve`: the named letter becomes the target |
//! | `firecracker(n)` (pétard) | `legal_on` (plays on anything) | `resolve` as `draw_skip`; as a starter, `deal` (D20) |
//!
//! Legality is written twice, on purpose: `playable_set` (the sets of the
//! `Book`, a few bit operations, for `legal_moves` and the bots' playouts)
//! and `check_card_reason` (one rule at a time, with the reason a client is
//! told). Both must change together; the test
//! `legality::tests::playable_set_agrees_with_the_rules_card_by_card`
//! compares them card by card over random games of every preset, so a
//! change to one alone fails it.

mod consequences;
mod legality;
mod shuffles;

use crate::fair::Chance;

use crate::card::Card;
use crate::deck::full_deck;
use crate::event::{CardPlayed, DrawReason, Event, Move, Pending, Seat};
use crate::game::{Game, Round, Status};

/// What can be asked of a game.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    /// Deal the first round; the first dealer is drawn at random (D23).
    Start,
    /// Deal the first round with this first dealer (a rematch's, D23).
    StartFrom { dealer: Seat },
    /// Deal the first round from this shuffled deck (first card dealt first)
    /// with this dealer.
    StartWith { dealer: Seat, deck: Vec<Card> },
    /// A seat's move.
    Move { seat: Seat, mv: Move },
    /// D38: the timeout move of the seat on turn, whose deadline passed: a
    /// pass where the turn may end without drawing, else a draw (the
    /// penalty pending, or one card even when a card could be played); a
    /// card it draws is not played, the turn then ends.
    TimeOut { seat: Seat },
}

/// Why a command is refused. Nothing changes when one is.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RuleError {
    #[error("the game has not started")]
    NotStarted,
    #[error("the game has already started")]
    AlreadyStarted,
    #[error("the game is over")]
    GameOver,
    #[error("there is no seat {0} at this table")]
    NoSuchSeat(Seat),
    #[error("it is seat {current}'s turn, not seat {seat}'s")]
    NotYourTurn { seat: Seat, current: Seat },
    #[error("{0} is not in your hand")]
    NotInHand(Card),
    #[error("{card} cannot be played now: {reason}")]
    Illegal { card: Card, reason: &'static str },
    #[error("{card}: {reason}")]
    BadChoice { card: Card, reason: &'static str },
    #[error("announce: {0}")]
    BadAnnounce(&'static str),
    #[error("you cannot draw now: {0}")]
    CannotDraw(&'static str),
    #[error("you cannot pass now: {0}")]
    CannotPass(&'static str),
    #[error("seat {seat} cannot be challenged: {reason}")]
    CannotChallenge { seat: Seat, reason: &'static str },
    #[error("not a deck for this table: {0}")]
    BadDeck(&'static str),
}

impl RuleError {
    /// A stable machine code for clients.
    pub fn code(&self) -> &'static str {
        match self {
            RuleError::NotStarted => "game_not_started",
            RuleError::AlreadyStarted => "game_already_started",
            RuleError::GameOver => "game_over",
            RuleError::NoSuchSeat(_) => "no_such_seat",
            RuleError::NotYourTurn { .. } => "not_your_turn",
            RuleError::NotInHand(_) => "card_not_in_hand",
            RuleError::Illegal { .. } => "illegal_move",
            RuleError::BadChoice { .. } => "bad_choice",
            RuleError::BadAnnounce(_) => "bad_announce",
            RuleError::CannotDraw(_) => "cannot_draw",
            RuleError::CannotPass(_) => "cannot_pass",
            RuleError::CannotChallenge { .. } => "cannot_challenge",
            RuleError::BadDeck(_) => "bad_deck",
        }
    }
}

type Check = Result<(), RuleError>;

fn illegal(card: Card, reason: &'static str) -> Check {
    Err(RuleError::Illegal { card, reason })
}

impl Game {
    /// The events a command produces, or why it is refused. Pure: the game is
    /// not changed (apply the events with `evolve`).
    pub fn decide<C: Chance + ?Sized>(
        &self,
        command: &Command,
        chance: &mut C,
    ) -> Result<Vec<Event>, RuleError> {
        let mut scratch = self.clone();
        let mut events = Vec::new();
        scratch.execute(command, chance, &mut events)?;
        Ok(events)
    }

    /// `decide` and `evolve` in one step, without copying the state: on
    /// success the game has applied the events pushed onto `out`; on refusal
    /// nothing has changed and nothing was pushed.
    pub fn execute<C: Chance + ?Sized>(
        &mut self,
        command: &Command,
        chance: &mut C,
        out: &mut Vec<Event>,
    ) -> Result<(), RuleError> {
        match command {
            Command::Start => {
                self.check_can_start()?;
                let dealer = self.first_dealer(chance);
                self.deal(dealer, None, chance, out);
            }
            Command::StartFrom { dealer } => {
                self.check_can_start()?;
                if *dealer >= self.seats {
                    return Err(RuleError::NoSuchSeat(*dealer));
                }
                self.deal(*dealer, None, chance, out);
            }
            Command::StartWith { dealer, deck } => {
                self.check_can_start()?;
                if *dealer >= self.seats {
                    return Err(RuleError::NoSuchSeat(*dealer));
                }
                let mut expected = full_deck(self.rules.deck, self.rules.decks.count(self.seats));
                let mut given = deck.clone();
                expected.sort_unstable();
                given.sort_unstable();
                if expected != given {
                    return Err(RuleError::BadDeck(
                        "it must hold exactly the cards of the table's decks",
                    ));
                }
                self.deal(*dealer, Some(deck.clone()), chance, out);
            }
            Command::Move { seat, mv } => self.act(*seat, mv, chance, out)?,
            Command::TimeOut { seat } => self.time_out(*seat, chance, out)?,
        }
        Ok(())
    }

    fn check_can_start(&self) -> Check {
        match self.status() {
            Status::Waiting => Ok(()),
            Status::Playing => Err(RuleError::AlreadyStarted),
            // A game never says `Aborted` (its table does, D41).
            Status::Finished | Status::Aborted => Err(RuleError::GameOver),
        }
    }

    fn emit(&mut self, event: Event, out: &mut Vec<Event>) {
        self.evolve(&event);
        out.push(event);
    }

    // `emit` for the events of every move: the same changes as `evolve`,
    // made without going through the match on all events.

    fn emit_card_played(&mut self, played: CardPlayed, out: &mut Vec<Event>) {
        let round = self.round.as_mut().expect("a round is running");
        round.card_played(&self.book, &played);
        out.push(Event::CardPlayed(played));
    }

    fn emit_cards_drawn(
        &mut self,
        seat: Seat,
        cards: Vec<Card>,
        reason: DrawReason,
        out: &mut Vec<Event>,
    ) {
        let round = self.round.as_mut().expect("a round is running");
        round.cards_drawn(seat, &cards, reason);
        out.push(Event::CardsDrawn {
            seat,
            cards,
            reason,
        });
    }

    fn emit_turn_started(
        &mut self,
        seat: Seat,
        pending: Pending,
        frozen: bool,
        out: &mut Vec<Event>,
    ) {
        let round = self.round.as_mut().expect("a round is running");
        round.turn_started(seat, pending, frozen);
        out.push(Event::TurnStarted {
            seat,
            pending,
            frozen,
        });
    }

    fn r(&self) -> &Round {
        self.round.as_ref().expect("a round is running")
    }

    fn running_round(&self) -> Result<&Round, RuleError> {
        match self.status() {
            Status::Waiting => Err(RuleError::NotStarted),
            Status::Finished | Status::Aborted => Err(RuleError::GameOver),
            Status::Playing => Ok(self.r()),
        }
    }
}

/// The fold of a game's events (`crate::game`), on a game the engine
/// started.
#[cfg(test)]
mod fold_tests {
    use super::*;
    use crate::event::{DrawReason, Event};
    use crate::rules::Preset;

    /// A log edited by hand must not crash a fold: an event naming a seat
    /// the table lacks changes nothing.
    #[test]
    fn events_naming_a_missing_seat_change_nothing() {
        let mut g = Game::new(Preset::Classique.rules(), 2).unwrap();
        let mut rng = <rand::rngs::StdRng as rand::SeedableRng>::seed_from_u64(3);
        let mut out = Vec::new();
        g.execute(&Command::Start, &mut rng, &mut out).unwrap();
        let before = g.clone();
        for e in [
            Event::TurnPassed { seat: 9 },
            Event::CardsDrawn {
                seat: 5,
                cards: vec![],
                reason: DrawReason::Draw,
            },
            Event::TurnStarted {
                seat: 7,
                pending: Pending::None,
                frozen: false,
            },
            Event::Challenged {
                by: 0,
                seat: 4,
                penalty: 2,
                loses_turn: false,
            },
        ] {
            g.evolve(&e);
        }
        assert_eq!(g, before);
    }
}
