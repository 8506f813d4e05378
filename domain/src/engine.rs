//! `decide`: every rule of docs/RULES.md. A command is checked against the state
//! without changing it; when it is legal, its consequences are worked out as
//! events, each applied through `evolve` as it is emitted, so the events of a
//! move always fold into exactly the state the rules describe.
//!
//! `legal_moves` and `decide` share one predicate per move kind
//! (`check_play`, `check_draw`, `check_pass`, `check_challenge`).

use std::collections::BTreeMap;

use rand::seq::SliceRandom;
use rand::Rng;

use crate::card::{Card, CardSet, Face, Letter, Suit};
use crate::deck::full_deck;
use crate::event::{
    CardPlayed, DrawReason, Event, Move, Pending, RoundEnded, RoundStarted, Seat, SkipReason,
    Target,
};
use crate::game::{kept_on_top, Game, Round, Status};
use crate::rules::{DrawRule, Effect, Stacking, Starter, TwoPlayerReverse};
use crate::score;

/// What can be asked of a game.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    /// Deal the first round; the first dealer is drawn at random (D23).
    Start,
    /// Deal the first round from this shuffled deck (first card dealt first)
    /// with this dealer.
    StartWith { dealer: Seat, deck: Vec<Card> },
    /// A seat's move.
    Move { seat: Seat, mv: Move },
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
    pub fn decide<R: Rng + ?Sized>(
        &self,
        command: &Command,
        rng: &mut R,
    ) -> Result<Vec<Event>, RuleError> {
        let mut scratch = self.clone();
        let mut events = Vec::new();
        scratch.execute(command, rng, &mut events)?;
        Ok(events)
    }

    /// `decide` and `evolve` in one step, without copying the state: on
    /// success the game has applied the events pushed onto `out`; on refusal
    /// nothing has changed and nothing was pushed.
    pub fn execute<R: Rng + ?Sized>(
        &mut self,
        command: &Command,
        rng: &mut R,
        out: &mut Vec<Event>,
    ) -> Result<(), RuleError> {
        match command {
            Command::Start => {
                self.check_can_start()?;
                let dealer = rng.gen_range(0..self.seats);
                self.deal(dealer, None, rng, out);
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
                self.deal(*dealer, Some(deck.clone()), rng, out);
            }
            Command::Move { seat, mv } => self.act(*seat, mv, rng, out)?,
        }
        Ok(())
    }

    fn check_can_start(&self) -> Check {
        match self.status() {
            Status::Waiting => Ok(()),
            Status::Playing => Err(RuleError::AlreadyStarted),
            Status::Finished => Err(RuleError::GameOver),
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
            Status::Finished => Err(RuleError::GameOver),
            Status::Playing => Ok(self.r()),
        }
    }

    // ----- legality -------------------------------------------------------

    /// Every move `seat` may make now, each in the form to post back.
    pub fn legal_moves(&self, seat: Seat) -> Vec<Move> {
        let mut moves = Vec::new();
        self.legal_moves_into(seat, &mut moves);
        moves
    }

    /// `legal_moves` into a buffer the caller reuses (it is cleared first).
    pub fn legal_moves_into(&self, seat: Seat, moves: &mut Vec<Move>) {
        moves.clear();
        let Ok(r) = self.running_round() else {
            return;
        };
        if seat >= self.seats {
            return;
        }
        if let Some(target) = r.window {
            if self.check_challenge(seat, target).is_ok() {
                moves.push(Move::Challenge { seat: target });
            }
        }
        if r.current != Some(seat) {
            return;
        }
        let hand = &r.hands[seat];
        let announce_too = hand.len() == 2;
        let playable = self.playable_set(r, seat);
        let substitute = self.book.plays.substitute;
        // The cards worth a look, each once, in the order of the hand.
        let mut wanted = playable.union(substitute).and(r.held[seat]);
        let mut has_play = false;
        let mut list = |card: Card| {
            let mut push = |suit, letter, as_card| {
                has_play = true;
                let play = |announce| Move::Play {
                    card,
                    suit,
                    letter,
                    as_card,
                    announce,
                };
                moves.push(play(false));
                if announce_too {
                    moves.push(play(true));
                }
                false
            };
            if playable.contains(card) {
                // D29: every choice the card carries is listed; which suit
                // an 8 names or which letter a star names never decides
                // whether it may be played.
                match self.effect(card) {
                    Some(Effect::WildLetter) => Letter::all().for_each(|l| {
                        push(None, Some(l), None);
                    }),
                    e if names_suit(card, e) => Suit::ALL.into_iter().for_each(|s| {
                        push(Some(s), None, None);
                    }),
                    _ => {
                        push(None, None, None);
                    }
                }
            } else {
                self.substitute_choices(r, seat, card, push);
            }
        };
        match wanted.single() {
            Some(card) => list(card),
            None => {
                for &card in hand {
                    if wanted.is_empty() {
                        break;
                    }
                    let one = CardSet::of(card);
                    if wanted.and(one).is_empty() {
                        continue;
                    }
                    wanted = wanted.without(one);
                    list(card);
                }
            }
        }
        if self.check_draw_given(r, || has_play).is_ok() {
            moves.push(Move::Draw);
        }
        if self.check_pass(r).is_ok() {
            moves.push(Move::Pass);
        }
    }

    /// The cards `seat` may play now, whatever choice they carry: the one
    /// predicate behind `legal_moves`, `check_card` and `has_a_play`. It is
    /// `check_card` (the reference, which also says why not) worked out for
    /// all cards at once from the sets of the `Book`. A 757 joker is never
    /// in it: what it may do depends on the card it names
    /// (`substitute_choices`).
    fn playable_set(&self, r: &Round, seat: Seat) -> CardSet {
        let plays = &self.book.plays;
        // `check_constraints`: a pending attack or draw, then a freeze, then
        // the card to match.
        let mut set = match r.pending {
            Pending::Attack { .. } => {
                let same_rank = match r.target {
                    Target::French { face: Some(f), .. } => CardSet::face(f),
                    _ => CardSet::EMPTY,
                };
                same_rank.union(plays.wild_suit)
            }
            Pending::Draw { .. } => match self.rules.stacking {
                Stacking::DrawCards => plays.draw_skip,
                Stacking::None if r.top() == Card::Joker => plays.draw_skip.and(CardSet::JOKER),
                Stacking::None => CardSet::EMPTY,
            },
            _ if r.frozen => plays.freeze.union(plays.wild_suit),
            _ => r.on_target,
        };
        if let Pending::Drawn { card } = r.pending {
            set = set.and(CardSet::of(card));
        }
        // `check_last_card`.
        if r.hands[seat].len() == 1 {
            if !self.rules.special_finish {
                set = set.without(plays.effectful);
            }
            if r.pending == Pending::MayReplay && !r.played_a_turn[seat] {
                set = CardSet::EMPTY;
            }
        }
        set
    }

    /// Calls `f` with every choice (D29) with which `seat` may play the 757
    /// joker `card` now, until `f` returns true; returns whether it did.
    fn substitute_choices(
        &self,
        r: &Round,
        seat: Seat,
        card: Card,
        mut f: impl FnMut(Option<Suit>, Option<Letter>, Option<Card>) -> bool,
    ) -> bool {
        // The same checks as `check_card` with a valid choice, the
        // last-card rules (which do not depend on the named card) once.
        let effect = Some(Effect::Substitute);
        if self.check_last_card(r, seat, card, effect).is_err() {
            return false;
        }
        // When no pending effect or freeze constrains the turn,
        // `check_constraints` comes down to `legal_on`: ask it directly.
        let plain = !r.frozen
            && match r.pending {
                Pending::None | Pending::MustReplay { .. } | Pending::MayReplay => true,
                Pending::Drawn { card: drawn } => drawn == card,
                Pending::Attack { .. } | Pending::Draw { .. } => false,
            };
        for &named in self.rules.deck.distinct_cards() {
            if named == Card::Joker {
                continue;
            }
            let named_effect = self.effect(named);
            let legal = if plain {
                self.legal_on(r.target, named, named_effect)
            } else {
                self.check_constraints(r, card, effect, named, named_effect)
                    .is_ok()
            };
            if !legal {
                continue;
            }
            let stop = if named_effect == Some(Effect::WildSuit) {
                Suit::ALL.into_iter().any(|s| f(Some(s), None, Some(named)))
            } else {
                f(None, None, Some(named))
            };
            if stop {
                return true;
            }
        }
        false
    }

    /// May `seat` play `card` (in the hand) now, with some choice?
    fn may_play(&self, r: &Round, seat: Seat, card: Card, playable: CardSet) -> bool {
        playable.contains(card)
            || (self.book.plays.substitute.contains(card)
                && self.substitute_choices(r, seat, card, |_, _, _| true))
    }

    fn has_a_play(&self, r: &Round, seat: Seat) -> bool {
        let held = r.held[seat];
        !self.playable_set(r, seat).and(held).is_empty()
            || (!self.book.plays.substitute.and(held).is_empty()
                // Only a joker may stand for a card (`Rules::compile`).
                && self.substitute_choices(r, seat, Card::Joker, |_, _, _| true))
    }

    /// May `seat` play `card` with these choices now?
    fn check_play(
        &self,
        r: &Round,
        seat: Seat,
        card: Card,
        suit: Option<Suit>,
        letter: Option<Letter>,
        as_card: Option<Card>,
    ) -> Check {
        if !r.held[seat].contains(card) {
            return Err(RuleError::NotInHand(card));
        }
        self.check_card(r, seat, card, suit, letter, as_card)
    }

    /// `check_play` for a card known to be in the hand: `playable_set` and
    /// the choice the card carries (D29); when either refuses it,
    /// `check_card_reason` says why.
    fn check_card(
        &self,
        r: &Round,
        seat: Seat,
        card: Card,
        suit: Option<Suit>,
        letter: Option<Letter>,
        as_card: Option<Card>,
    ) -> Check {
        let effect = self.effect(card);
        let choice_fits = match effect {
            Some(Effect::Substitute) => false,
            Some(Effect::WildLetter) => letter.is_some() && suit.is_none() && as_card.is_none(),
            e if names_suit(card, e) => suit.is_some() && letter.is_none() && as_card.is_none(),
            _ => suit.is_none() && letter.is_none() && as_card.is_none(),
        };
        if choice_fits && self.playable_set(r, seat).contains(card) {
            return Ok(());
        }
        self.check_card_reason(r, seat, card, suit, letter, as_card)
    }

    /// The rules on playing `card` (in the hand) with these choices, one by
    /// one, with the reason for a refusal. `playable_set` is the same
    /// predicate for all cards at once; a test checks that they agree.
    fn check_card_reason(
        &self,
        r: &Round,
        seat: Seat,
        card: Card,
        suit: Option<Suit>,
        letter: Option<Letter>,
        as_card: Option<Card>,
    ) -> Check {
        let hand = &r.hands[seat];
        let effect = self.effect(card);
        // The common case, a plain card on a plain turn: same suit or rank.
        if effect.is_none() && r.pending == Pending::None && !r.frozen && hand.len() > 1 {
            if suit.is_some() || letter.is_some() || as_card.is_some() {
                return Err(RuleError::BadChoice {
                    card,
                    reason: "this card carries no choice (suit, letter or as)",
                });
            }
            return if matches_target(r.target, card) {
                Ok(())
            } else {
                illegal(
                    card,
                    "it matches neither the suit nor the rank (or letter) to follow",
                )
            };
        }
        let choice = |ok: bool, reason: &'static str| {
            if ok {
                Ok(())
            } else {
                Err(RuleError::BadChoice { card, reason })
            }
        };
        // D29: the move carries exactly the choice its card needs.
        let (eff_card, eff_effect) = match effect {
            Some(Effect::Substitute) => {
                let Some(named) = as_card else {
                    return choice(
                        false,
                        "a joker must name the card it stands for in `as` (D13)",
                    );
                };
                choice(letter.is_none(), "a joker names a card, not a letter")?;
                choice(
                    named != Card::Joker && self.book.in_deck[named.face().index()],
                    "a joker stands for a card of the deck other than a joker (D13)",
                )?;
                let named_effect = self.effect(named);
                if named_effect == Some(Effect::WildSuit) {
                    choice(
                        suit.is_some(),
                        "a joker standing for an 8 must name a suit (D29)",
                    )?;
                } else {
                    choice(suit.is_none(), "only a suit-naming card carries a suit")?;
                }
                (named, named_effect)
            }
            Some(Effect::WildLetter) => {
                choice(
                    letter.is_some(),
                    "a star must name the letter it stands for",
                )?;
                choice(
                    suit.is_none() && as_card.is_none(),
                    "a star carries only a letter",
                )?;
                (card, effect)
            }
            e if names_suit(card, e) => {
                choice(suit.is_some(), "this card must name the suit that follows")?;
                choice(
                    letter.is_none() && as_card.is_none(),
                    "this card carries only a suit",
                )?;
                (card, effect)
            }
            _ => {
                choice(
                    suit.is_none() && letter.is_none() && as_card.is_none(),
                    "this card carries no choice (suit, letter or as)",
                )?;
                (card, effect)
            }
        };
        self.check_last_card(r, seat, card, effect)?;
        self.check_constraints(r, card, effect, eff_card, eff_effect)
    }

    /// The rules on a play that would empty the hand (D11, D26, D34).
    fn check_last_card(&self, r: &Round, seat: Seat, card: Card, effect: Option<Effect>) -> Check {
        let hand = &r.hands[seat];
        if hand.len() == 1 {
            if !self.rules.special_finish && effect.is_some() {
                return illegal(card, "a card with an effect cannot be the last card played (special_finish is off, D26, D34)");
            }
            if r.pending == Pending::MayReplay && !r.played_a_turn[seat] {
                return illegal(
                    card,
                    "in a player's first turn a queen chain may not empty their hand (D11)",
                );
            }
        }
        Ok(())
    }

    /// What the pending effect, a freeze and the card to match allow.
    /// `eff_card` is what the card counts as (a 757 joker: the named card).
    fn check_constraints(
        &self,
        r: &Round,
        card: Card,
        effect: Option<Effect>,
        eff_card: Card,
        eff_effect: Option<Effect>,
    ) -> Check {
        match r.pending {
            Pending::Drawn { card: drawn } if drawn != card => {
                return illegal(
                    card,
                    "after drawing, only the drawn card may be played (D27)",
                );
            }
            Pending::Attack { .. } => {
                let same_rank = matches!(r.target, Target::French { face: Some(f), .. } if f == eff_card.face());
                return if same_rank || eff_effect == Some(Effect::WildSuit) {
                    Ok(())
                } else {
                    illegal(card, "an attack is answered with the same rank or a canceller, or by drawing (D3)")
                };
            }
            Pending::Draw { .. } => {
                let answers = match self.rules.stacking {
                    Stacking::DrawCards => matches!(eff_effect, Some(Effect::DrawSkip(_))),
                    Stacking::None => {
                        card == Card::Joker
                            && r.top() == Card::Joker
                            && matches!(effect, Some(Effect::DrawSkip(_)))
                    }
                };
                return if answers {
                    Ok(())
                } else {
                    illegal(
                        card,
                        "a pending draw is answered with a draw card, or by drawing (D25)",
                    )
                };
            }
            _ => {}
        }
        if r.frozen {
            return if matches!(eff_effect, Some(Effect::Freeze | Effect::WildSuit)) {
                Ok(())
            } else {
                illegal(
                    card,
                    "the pile is frozen: only an ace, an 8 or a joker standing for one (D12)",
                )
            };
        }
        if self.legal_on(r.target, eff_card, eff_effect) {
            Ok(())
        } else {
            illegal(
                card,
                "it matches neither the suit nor the rank (or letter) to follow",
            )
        }
    }

    /// docs/RULES.md §2.4 and §4: is a card legal on the card to match?
    fn legal_on(&self, target: Target, card: Card, effect: Option<Effect>) -> bool {
        match effect {
            Some(Effect::WildSuit) => !matches!(
                target,
                Target::French { face: Some(f), .. } if self.book.wild_not_on[f.index()]
            ),
            Some(Effect::WildLetter | Effect::Firecracker(_)) => true,
            // D1: a joker with an effect is legal on any card.
            Some(_) if card == Card::Joker => true,
            _ => matches_target(target, card),
        }
    }

    fn check_draw(&self, r: &Round, seat: Seat) -> Check {
        self.check_draw_given(r, || self.has_a_play(r, seat))
    }

    /// `check_draw`, asking `has_play` whether the seat has a legal play
    /// only when that decides it.
    fn check_draw_given(&self, r: &Round, has_play: impl FnOnce() -> bool) -> Check {
        match r.pending {
            Pending::Drawn { .. } => Err(RuleError::CannotDraw(
                "you have drawn already: play the drawn card or pass",
            )),
            Pending::MayReplay => Err(RuleError::CannotDraw(
                "after a queen, play another card or pass",
            )),
            Pending::Attack { .. } | Pending::Draw { .. } => Ok(()),
            Pending::MustReplay { .. } => {
                if has_play() {
                    Err(RuleError::CannotDraw(
                        "you must play again on the ten (D33)",
                    ))
                } else {
                    Ok(())
                }
            }
            Pending::None => {
                if self.rules.voluntary_draw || !has_play() {
                    Ok(())
                } else {
                    Err(RuleError::CannotDraw("you have a legal card to play (D27)"))
                }
            }
        }
    }

    fn check_pass(&self, r: &Round) -> Check {
        match r.pending {
            Pending::Drawn { .. } | Pending::MayReplay => Ok(()),
            _ => Err(RuleError::CannotPass(
                "passing ends a turn only after a draw or a queen",
            )),
        }
    }

    fn check_challenge(&self, by: Seat, target: Seat) -> Check {
        let r = self.running_round()?;
        let no = |reason| {
            Err(RuleError::CannotChallenge {
                seat: target,
                reason,
            })
        };
        if target >= self.seats {
            return Err(RuleError::NoSuchSeat(target));
        }
        if by == target {
            return no("a player cannot challenge themselves (D8)");
        }
        if r.window != Some(target) {
            return no("the challenge window is closed (D8)");
        }
        if r.hands[target].len() != 1 || r.announced[target] {
            return no("only an unannounced last card can be challenged (D8)");
        }
        Ok(())
    }

    // ----- moves ----------------------------------------------------------

    fn act<R: Rng + ?Sized>(
        &mut self,
        seat: Seat,
        mv: &Move,
        rng: &mut R,
        out: &mut Vec<Event>,
    ) -> Check {
        let r = self.running_round()?;
        if seat >= self.seats {
            return Err(RuleError::NoSuchSeat(seat));
        }
        if let Move::Challenge { seat: target } = *mv {
            self.check_challenge(seat, target)?;
            let penalty = self.rules.announce.penalty;
            let loses_turn = self.rules.announce.penalty_skips_turn;
            self.emit(
                Event::Challenged {
                    by: seat,
                    seat: target,
                    penalty,
                    loses_turn,
                },
                out,
            );
            self.draw(target, penalty, DrawReason::Challenge, rng, out);
            return Ok(());
        }
        let current = r.current.expect("a running round has a seat on turn");
        if current != seat {
            return Err(RuleError::NotYourTurn { seat, current });
        }
        match *mv {
            Move::Play {
                card,
                suit,
                letter,
                as_card,
                announce,
            } => {
                self.check_play(r, seat, card, suit, letter, as_card)?;
                if announce && r.hands[seat].len() != 2 {
                    return Err(RuleError::BadAnnounce(
                        "only a play that leaves exactly one card may announce it (D8)",
                    ));
                }
                self.play(seat, card, suit, letter, as_card, announce, rng, out);
            }
            Move::Draw => {
                self.check_draw(r, seat)?;
                self.draw_move(seat, rng, out);
            }
            Move::Pass => {
                self.check_pass(r)?;
                self.emit(Event::TurnPassed { seat }, out);
                self.start_turn(self.step(seat, 1), Pending::None, self.r().frozen, out);
            }
            Move::Challenge { .. } => unreachable!("handled above"),
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn play<R: Rng + ?Sized>(
        &mut self,
        seat: Seat,
        card: Card,
        suit: Option<Suit>,
        letter: Option<Letter>,
        as_card: Option<Card>,
        announce: bool,
        rng: &mut R,
        out: &mut Vec<Event>,
    ) {
        self.emit_card_played(
            CardPlayed {
                seat,
                card,
                suit,
                letter,
                as_card,
                announce,
            },
            out,
        );
        if self.r().hands[seat].is_empty() {
            let place = self.r().out.len() + 1;
            self.emit(Event::PlayerWentOut { seat, place }, out);
            let r = self.r();
            // D17: placement goes on until three are out or one holds cards.
            if !self.rules.is_placement() || r.out.len() >= 3 || r.active_count() <= 1 {
                self.end_round(false, rng, out);
                return;
            }
        }
        let eff_card = as_card.unwrap_or(card);
        let effect = match self.effect(card) {
            Some(Effect::Substitute) => self.effect(eff_card),
            e => e,
        };
        self.resolve(seat, eff_card, effect, false, rng, out);
    }

    /// Applies the effect of a card `player` has just played (or, for an
    /// `apply_effect` starter, that the dealer is deemed to have played, D10)
    /// and gives the turn to whoever has it next.
    fn resolve<R: Rng + ?Sized>(
        &mut self,
        player: Seat,
        card: Card,
        effect: Option<Effect>,
        starter: bool,
        rng: &mut R,
        out: &mut Vec<Event>,
    ) {
        let r = self.r();
        let faced = r.pending;
        let mut frozen = r.frozen;
        let active = r.active_count();
        // D32: a player who is out gets no further turn from their card.
        let again = if r.is_out(player) {
            self.step(player, 1)
        } else {
            player
        };
        let (next, pending) = match effect {
            Some(Effect::WildSuit) => {
                frozen = false;
                (self.step(player, 1), Pending::None)
            }
            Some(Effect::Freeze) => {
                frozen = true;
                (self.step(player, 1), Pending::None)
            }
            Some(Effect::DrawSkip(n)) if !starter && self.stacks(card) => {
                let total = match faced {
                    Pending::Draw { total } => total + n,
                    _ => n,
                };
                (self.step(player, 1), Pending::Draw { total })
            }
            Some(Effect::DrawSkip(n) | Effect::Firecracker(n)) => {
                // D4, D28: drawn at once, and the victim loses the turn.
                let victim = self.step(player, 1);
                self.draw(victim, n, DrawReason::Penalty, rng, out);
                self.emit(
                    Event::TurnSkipped {
                        seat: victim,
                        reason: SkipReason::Penalty,
                    },
                    out,
                );
                (self.step(victim, 1), Pending::None)
            }
            Some(Effect::AttackChain(per_card)) => {
                let count = match faced {
                    Pending::Attack { count, .. } if !starter => count + 1,
                    _ => 1,
                };
                (self.step(player, 1), Pending::Attack { count, per_card })
            }
            Some(Effect::Skip) => {
                let skipped = self.step(player, 1);
                self.emit(
                    Event::TurnSkipped {
                        seat: skipped,
                        reason: SkipReason::Skip,
                    },
                    out,
                );
                (self.step(skipped, 1), Pending::None)
            }
            Some(Effect::Reverse) if active == 2 && !starter => {
                match self.rules.two_player_reverse {
                    // D6: does nothing with two players.
                    TwoPlayerReverse::None => (self.step(player, 1), Pending::None),
                    // D7, S3 X: the player plays again.
                    TwoPlayerReverse::Skip => (again, Pending::None),
                }
            }
            Some(Effect::Reverse) => {
                let direction = self.r().direction.flipped();
                self.emit(Event::DirectionChanged { direction }, out);
                (self.step(player, 1), Pending::None)
            }
            // D14: the seat ⌊n/2⌋ further on in the current direction.
            Some(Effect::PassAcross) => (self.step(player, (active / 2).max(1)), Pending::None),
            Some(Effect::MustReplay(penalty)) if !starter => {
                if again == player {
                    (player, Pending::MustReplay { penalty })
                } else {
                    (again, Pending::None)
                }
            }
            Some(Effect::MayReplay) if !starter => {
                if again == player {
                    (player, Pending::MayReplay)
                } else {
                    (again, Pending::None)
                }
            }
            _ => (self.step(player, 1), Pending::None),
        };
        self.start_turn(next, pending, frozen, out);
    }

    /// Does a draw card wait for an answer (D25, D28) rather than act at once?
    fn stacks(&self, card: Card) -> bool {
        self.rules.stacking == Stacking::DrawCards
            || (self.rules.joker_counter && card == Card::Joker)
    }

    /// Gives the turn to `next`, passing over seats that owe a lost turn (S3).
    fn start_turn(&mut self, mut next: Seat, pending: Pending, frozen: bool, out: &mut Vec<Event>) {
        if self.r().current != Some(next) {
            let mut guard = self.seats * 4;
            while self.r().owed_skips[next] > 0 && guard > 0 {
                guard -= 1;
                self.emit(
                    Event::TurnSkipped {
                        seat: next,
                        reason: SkipReason::Challenge,
                    },
                    out,
                );
                next = self.step(next, 1);
            }
        }
        self.emit_turn_started(next, pending, frozen, out);
    }

    /// The seat `steps` seats on from `from` in the current direction,
    /// counting only seats still holding cards (D32).
    fn step(&self, from: Seat, steps: usize) -> Seat {
        let r = self.r();
        let n = self.seats;
        let forward = r.direction == crate::event::Direction::Clockwise;
        if r.out.is_empty() {
            // Nobody is out: plain arithmetic round the table.
            let steps = steps % n;
            return if forward {
                (from + steps) % n
            } else {
                (from + n - steps) % n
            };
        }
        let mut seat = from;
        let mut left = steps;
        let mut guard = n * (steps + 1);
        while left > 0 && guard > 0 {
            guard -= 1;
            seat = if forward {
                (seat + 1) % n
            } else {
                (seat + n - 1) % n
            };
            if !r.is_out(seat) {
                left -= 1;
            }
        }
        seat
    }

    fn draw_move<R: Rng + ?Sized>(&mut self, seat: Seat, rng: &mut R, out: &mut Vec<Event>) {
        let r = self.r();
        let frozen = r.frozen;
        let penalty = match r.pending {
            Pending::Attack { count, per_card } => Some(count * per_card),
            Pending::Draw { total } => Some(total),
            Pending::MustReplay { penalty } => Some(penalty),
            _ => None,
        };
        if let Some(n) = penalty {
            // D3, D25, D28, D33: the whole penalty, and the turn ends.
            self.draw(seat, n, DrawReason::Penalty, rng, out);
            self.start_turn(self.step(seat, 1), Pending::None, frozen, out);
            return;
        }
        let drawn = self.draw(seat, 1, DrawReason::Draw, rng, out);
        let Some(card) = drawn else {
            // D24: nothing to draw, play goes on; D31: a blocked round ends.
            let r = self.r();
            if r.idle >= r.active_count() {
                self.end_round(true, rng, out);
            } else {
                self.start_turn(self.step(seat, 1), Pending::None, frozen, out);
            }
            return;
        };
        let r = self.r();
        let may_play = self.rules.draw == DrawRule::DrawThenMayPlay
            && self.may_play(r, seat, card, self.playable_set(r, seat));
        if may_play {
            // D27: the drawn card, and only it, may be played now.
            self.emit_turn_started(seat, Pending::Drawn { card }, frozen, out);
        } else {
            self.start_turn(self.step(seat, 1), Pending::None, frozen, out);
        }
    }

    /// Draws `n` cards for `seat`, recycling the discard pile when the stock
    /// runs out (§2.5, D30); takes what exists when there is nothing left
    /// (D24). Always records at least one `cards_drawn`. Returns the first
    /// card drawn.
    fn draw<R: Rng + ?Sized>(
        &mut self,
        seat: Seat,
        n: u32,
        reason: DrawReason,
        rng: &mut R,
        out: &mut Vec<Event>,
    ) -> Option<Card> {
        let mut first = None;
        let mut left = n as usize;
        let mut recorded = false;
        loop {
            let stock = &self.r().stock;
            let take = left.min(stock.len());
            if take > 0 {
                let cards: Vec<Card> = stock.iter().rev().take(take).copied().collect();
                first = first.or(cards.first().copied());
                left -= take;
                recorded = true;
                self.emit_cards_drawn(seat, cards, reason, out);
            }
            if left == 0 || self.recyclable() == 0 {
                break;
            }
            let r = self.r();
            let cut = r.discard.len() - kept_on_top(&r.discard, &self.book);
            let mut stock = r.discard[..cut].to_vec();
            stock.shuffle(rng);
            self.emit(Event::StockReshuffled { stock }, out);
        }
        if !recorded {
            let cards = Vec::new();
            self.emit_cards_drawn(seat, cards, reason, out);
        }
        first
    }

    /// Cards the discard pile could give to a new stock.
    fn recyclable(&self) -> usize {
        let r = self.r();
        r.discard.len() - kept_on_top(&r.discard, &self.book)
    }

    // ----- rounds ---------------------------------------------------------

    /// Deals a round (§2.1–2.2, D9, D10, D20, D22, D23).
    fn deal<R: Rng + ?Sized>(
        &mut self,
        dealer: Seat,
        deck: Option<Vec<Card>>,
        rng: &mut R,
        out: &mut Vec<Event>,
    ) {
        let n = self.seats;
        let copies = self.rules.decks.count(n);
        let deck = deck.unwrap_or_else(|| {
            // D22: every round starts from a full reshuffle of all cards.
            let mut d = full_deck(self.rules.deck, copies);
            d.shuffle(rng);
            d
        });
        let per_seat = self.rules.deal.cards(n);
        let mut dealt: Vec<Vec<Card>> = (0..n).map(|_| Vec::with_capacity(per_seat)).collect();
        let mut cards = deck.iter().copied();
        for _ in 0..per_seat {
            for k in 1..=n {
                let card = cards.next().expect("validated rules leave a stock");
                dealt[(dealer + k) % n].push(card);
            }
        }
        let hands: BTreeMap<Seat, Vec<Card>> = dealt.into_iter().enumerate().collect();
        let mut starter = cards.next().expect("validated rules leave a starter");
        let mut stock: Vec<Card> = cards.rev().collect();
        if self.rules.starter == Starter::RedrawSpecial {
            // D9: back into the stock at a random place below the top, and turn the next.
            while self.effect(starter).is_some() && stock.iter().any(|c| self.effect(*c).is_none())
            {
                let at = rng.gen_range(0..stock.len());
                stock.insert(at, starter);
                starter = stock.pop().expect("the stock is not empty");
            }
        }
        // D23: the seat after the dealer plays first.
        let first_seat = (dealer + 1) % n;
        let round = self.history.len() as u32 + 1;
        self.emit(
            Event::RoundStarted(Box::new(RoundStarted {
                round,
                dealer,
                deck: self.deck_id.clone(),
                hands,
                stock,
                starter,
                first_seat,
            })),
            out,
        );
        let effect = self.effect(starter);
        match (self.rules.starter, effect) {
            (Starter::Letters, Some(Effect::Firecracker(penalty))) => {
                // S3, D20: the first player draws and does not play; a card is
                // turned onto the pétard; the second player starts.
                self.draw(first_seat, penalty, DrawReason::Penalty, rng, out);
                self.emit(
                    Event::TurnSkipped {
                        seat: first_seat,
                        reason: SkipReason::Penalty,
                    },
                    out,
                );
                while let Some(&card) = self.r().stock.last() {
                    self.emit(Event::CardTurned { card }, out);
                    if !matches!(self.effect(card), Some(Effect::Firecracker(_))) {
                        break;
                    }
                }
                self.start_turn(self.step(first_seat, 1), Pending::None, false, out);
            }
            (Starter::ApplyEffect, Some(e)) => {
                self.resolve(dealer, starter, Some(e), true, rng, out)
            }
            _ => self.start_turn(first_seat, Pending::None, false, out),
        }
    }

    /// Scores the round and deals the next one or ends the game. `blocked`:
    /// the round ends because nobody can draw or play (D31).
    fn end_round<R: Rng + ?Sized>(&mut self, blocked: bool, rng: &mut R, out: &mut Vec<Event>) {
        let r = self.r();
        let points = score::round_points(&self.rules, &self.book, &r.hands, &r.out);
        let totals: Vec<i32> = self
            .totals
            .iter()
            .zip(&points)
            .map(|(t, p)| t + p)
            .collect();
        let by_seat = |v: &[i32]| v.iter().copied().enumerate().collect::<BTreeMap<_, _>>();
        let ended = RoundEnded {
            round: r.number,
            out_order: r.out.clone(),
            hands: r.hands.iter().cloned().enumerate().collect(),
            points: by_seat(&points),
            totals: by_seat(&totals),
            blocked,
        };
        let dealer = r.dealer;
        self.emit(Event::RoundEnded(Box::new(ended)), out);
        if score::game_is_over(&self.rules, &self.totals, self.history.len()) {
            self.emit(
                Event::GameEnded(Box::new(score::ranking(self.rules.end, &self.totals))),
                out,
            );
        } else {
            // D23: the deal rotates by one seat each round.
            self.deal((dealer + 1) % self.seats, None, rng, out);
        }
    }
}

/// Does a card with this effect name the suit that follows? An 8, and a joker
/// with an effect other than standing for a card (D1).
fn names_suit(card: Card, effect: Option<Effect>) -> bool {
    match effect {
        Some(Effect::WildSuit) => true,
        Some(Effect::Substitute) | None => false,
        Some(_) => card == Card::Joker,
    }
}

/// Same suit or same rank (§2.4); the letter rule for letters (§4).
#[inline]
fn matches_target(target: Target, card: Card) -> bool {
    match (target, card) {
        (Target::Any, _) => true,
        (Target::French { face, suit }, Card::French(r, s)) => {
            face == Some(Face::Rank(r)) || suit == Some(s)
        }
        (Target::French { face, .. }, Card::Joker) => face == Some(Face::Joker),
        (Target::Letter(on), Card::Letter(l)) => {
            on.circular_distance(l) <= 3 || (on.is_vowel() && l.is_vowel())
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use rand::{Rng, SeedableRng};
    use serde_json::json;

    use super::*;
    use crate::rules::Preset;

    /// The choices of the right shape for a card (D29), one of each kind.
    fn some_choice(g: &Game, card: Card) -> (Option<Suit>, Option<Letter>) {
        match g.effect(card) {
            Some(Effect::WildLetter) => (None, Letter::new(7)),
            e if names_suit(card, e) => (Some(Suit::Hearts), None),
            _ => (None, None),
        }
    }

    /// `playable_set`, the sets of the `Book`, says yes exactly when the
    /// rules one by one (`check_card_reason`) do, for every card in every
    /// hand at every move of random games under presets and options.
    #[test]
    fn playable_set_agrees_with_the_rules_card_by_card() {
        let options = [
            (Preset::Classique, json!({})),
            (
                Preset::Classique,
                json!({"jokers": true, "tens_replay": true, "sevens_skip": true}),
            ),
            (Preset::Moderne, json!({})),
            (
                Preset::Moderne,
                json!({"stacking": "draw_cards", "special_finish": false, "two_player_ace": "none"}),
            ),
            (Preset::Moderne, json!({"joker_counter": true})),
            (Preset::Base, json!({})),
            (
                Preset::Base,
                json!({"effects": {"8": "wild_suit", "2": {"draw_skip": 2}, "J": "skip", "Q": "reverse", "K": "pass_across", "A": {"attack_chain": 2}, "10": {"must_replay": 2}, "9": "may_replay", "7": "freeze"}}),
            ),
            (Preset::Amerix, json!({})),
            (Preset::Sept757, json!({})),
        ];
        let mut checked = 0;
        for (preset, opts) in options {
            let rules = preset
                .with_options(opts.as_object().expect("an object"))
                .expect("valid options");
            for seed in 0..12 {
                let seats = 2 + seed as usize % 3;
                let seats = seats.clamp(rules.players.min, rules.players.max);
                let mut g = Game::new(rules.clone(), seats).expect("valid rules");
                let mut rng = <rand::rngs::StdRng as SeedableRng>::seed_from_u64(seed);
                let mut out = Vec::new();
                g.execute(&Command::Start, &mut rng, &mut out)
                    .expect("starts");
                while g.status() == Status::Playing {
                    let r = g.r();
                    for seat in 0..seats {
                        assert_eq!(r.held[seat], CardSet::holding(&r.hands[seat]));
                        let playable = g.playable_set(r, seat);
                        for &card in &r.hands[seat] {
                            if g.book.plays.substitute.contains(card) {
                                continue;
                            }
                            let (suit, letter) = some_choice(&g, card);
                            let reason = g.check_card_reason(r, seat, card, suit, letter, None);
                            assert_eq!(
                                playable.contains(card),
                                reason.is_ok(),
                                "{card} for seat {seat}: {reason:?} in {r:?}"
                            );
                            checked += 1;
                        }
                    }
                    let seat = r.current.expect("a seat on turn");
                    let moves = g.legal_moves(seat);
                    let mv = moves[rng.gen_range(0..moves.len())].clone();
                    out.clear();
                    g.execute(&Command::Move { seat, mv }, &mut rng, &mut out)
                        .expect("a listed move is accepted");
                }
            }
        }
        assert!(checked > 10_000, "only {checked} cards checked");
    }
}
