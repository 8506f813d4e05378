//! May this seat make this move now? One predicate per move kind, shared
//! by `legal_moves` and `decide`; see the parent module for where each
//! effect is checked, and why `playable_set` and `check_card_reason` must
//! agree.

use crate::card::{Card, CardSet, Face, Letter, Suit};
use crate::event::{Choice, Move, Pending, Seat, Target};
use crate::game::{Game, Round};
use crate::rules::{Effect, Stacking};

use super::{illegal, Check, RuleError};

impl Game {
    /// Every move `seat` may make now, each in the form to post back: a
    /// challenge (when open), the plays in the order of the hand (each
    /// choice; a play leaving one card announcing first), draw, pass.
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
        let playable = self.playable_set(r, seat);
        let substitute = self.book.plays.substitute;
        // The cards worth a look, each once, in the order of the hand.
        let mut wanted = playable.union(substitute).and(r.held[seat]);
        let mut listed = Listed {
            moves,
            announce_too: hand.len() == 2,
            any: false,
        };
        match wanted.single() {
            Some(card) => self.list_plays(r, seat, card, playable, &mut listed),
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
                    self.list_plays(r, seat, card, playable, &mut listed);
                }
            }
        }
        let has_play = listed.any;
        if self.check_draw_given(r, || has_play).is_ok() {
            moves.push(Move::Draw {});
        }
        if self.check_pass(r).is_ok() {
            moves.push(Move::Pass {});
        }
    }

    /// Every play of `card` (in the hand), with each choice it carries.
    fn list_plays(
        &self,
        r: &Round,
        seat: Seat,
        card: Card,
        playable: CardSet,
        listed: &mut Listed<'_>,
    ) {
        let mut push = |suit, letter, as_card| {
            listed.push(card, suit, letter, as_card);
            false
        };
        if !playable.contains(card) {
            self.substitute_choices(r, seat, card, push);
            return;
        }
        // D29: every choice the card carries is listed; which suit an 8
        // names or which letter a star names never decides whether it may
        // be played.
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
    }

    /// The cards `seat` may play now, whatever choice they carry: the one
    /// predicate behind `legal_moves`, `check_card` and `has_a_play`. It is
    /// `check_card` (the reference, which also says why not) worked out for
    /// all cards at once from the sets of the `Book`. A 757 joker is never
    /// in it: what it may do depends on the card it names
    /// (`substitute_choices`).
    pub(super) fn playable_set(&self, r: &Round, seat: Seat) -> CardSet {
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
    pub(super) fn substitute_choices(
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
    pub(super) fn may_play(&self, r: &Round, seat: Seat, card: Card, playable: CardSet) -> bool {
        playable.contains(card)
            || (self.book.plays.substitute.contains(card)
                && self.substitute_choices(r, seat, card, |_, _, _| true))
    }

    pub(super) fn has_a_play(&self, r: &Round, seat: Seat) -> bool {
        let held = r.held[seat];
        !self.playable_set(r, seat).and(held).is_empty()
            || (!self.book.plays.substitute.and(held).is_empty()
                // Only a joker may stand for a card (`Rules::compile`).
                && self.substitute_choices(r, seat, Card::Joker, |_, _, _| true))
    }

    /// May `seat` play `card` with these choices now?
    pub(super) fn check_play(&self, r: &Round, seat: Seat, card: Card, choice: Choice) -> Check {
        if !r.held[seat].contains(card) {
            return Err(RuleError::NotInHand(card));
        }
        self.check_card(r, seat, card, choice)
    }

    /// `check_play` for a card known to be in the hand: `playable_set` and
    /// the choice the card carries (D29); when either refuses it,
    /// `check_card_reason` says why.
    pub(super) fn check_card(&self, r: &Round, seat: Seat, card: Card, choice: Choice) -> Check {
        let effect = self.effect(card);
        let choice_fits = match effect {
            Some(Effect::Substitute) => false,
            Some(Effect::WildLetter) => choice.is_letter(),
            e if names_suit(card, e) => choice.is_suit(),
            _ => choice.is_empty(),
        };
        if choice_fits && self.playable_set(r, seat).contains(card) {
            return Ok(());
        }
        self.check_card_reason(r, seat, card, choice)
    }

    /// The rules on playing `card` (in the hand) with these choices, one by
    /// one, with the reason for a refusal. `playable_set` is the same
    /// predicate for all cards at once; a test checks that they agree.
    pub(super) fn check_card_reason(
        &self,
        r: &Round,
        seat: Seat,
        card: Card,
        choice: Choice,
    ) -> Check {
        let hand = &r.hands[seat];
        let effect = self.effect(card);
        // The common case, a plain card on a plain turn: same suit or rank.
        if effect.is_none() && r.pending == Pending::None && !r.frozen && hand.len() > 1 {
            if !choice.is_empty() {
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
        let (eff_card, eff_effect) = self.chosen(card, effect, choice)?;
        self.check_last_card(r, seat, card, effect)?;
        self.check_constraints(r, card, effect, eff_card, eff_effect)
    }

    /// D29: the move carries exactly the choice its card needs. The card
    /// the play counts as (a joker's named card) and its effect.
    fn chosen(
        &self,
        card: Card,
        effect: Option<Effect>,
        choice: Choice,
    ) -> Result<(Card, Option<Effect>), RuleError> {
        let Choice {
            suit,
            letter,
            as_card,
        } = choice;
        let refuse_unless = |ok: bool, reason: &'static str| {
            if ok {
                Ok(())
            } else {
                Err(RuleError::BadChoice { card, reason })
            }
        };
        match effect {
            Some(Effect::Substitute) => {
                let Some(named) = as_card else {
                    return Err(RuleError::BadChoice {
                        card,
                        reason: "a joker must name the card it stands for in `as` (D13)",
                    });
                };
                refuse_unless(letter.is_none(), "a joker names a card, not a letter")?;
                refuse_unless(
                    named != Card::Joker && self.book.in_deck[named.face().index()],
                    "a joker stands for a card of the deck other than a joker (D13)",
                )?;
                let named_effect = self.effect(named);
                if named_effect == Some(Effect::WildSuit) {
                    refuse_unless(
                        suit.is_some(),
                        "a joker standing for an 8 must name a suit (D29)",
                    )?;
                } else {
                    refuse_unless(suit.is_none(), "only a suit-naming card carries a suit")?;
                }
                Ok((named, named_effect))
            }
            Some(Effect::WildLetter) => {
                refuse_unless(
                    letter.is_some(),
                    "a star must name the letter it stands for",
                )?;
                refuse_unless(choice.is_letter(), "a star carries only a letter")?;
                Ok((card, effect))
            }
            e if names_suit(card, e) => {
                refuse_unless(suit.is_some(), "this card must name the suit that follows")?;
                refuse_unless(choice.is_suit(), "this card carries only a suit")?;
                Ok((card, effect))
            }
            _ => {
                refuse_unless(
                    choice.is_empty(),
                    "this card carries no choice (suit, letter or as)",
                )?;
                Ok((card, effect))
            }
        }
    }

    /// The rules on a play that would empty the hand (D11, D26, D34).
    pub(super) fn check_last_card(
        &self,
        r: &Round,
        seat: Seat,
        card: Card,
        effect: Option<Effect>,
    ) -> Check {
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
    pub(super) fn check_constraints(
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
    pub(super) fn legal_on(&self, target: Target, card: Card, effect: Option<Effect>) -> bool {
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

    pub(super) fn check_draw(&self, r: &Round, seat: Seat) -> Check {
        self.check_draw_given(r, || self.has_a_play(r, seat))
    }

    /// `check_draw`, asking `has_play` whether the seat has a legal play
    /// only when that decides it.
    pub(super) fn check_draw_given(&self, r: &Round, has_play: impl FnOnce() -> bool) -> Check {
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

    pub(super) fn check_pass(&self, r: &Round) -> Check {
        match r.pending {
            Pending::Drawn { .. } | Pending::MayReplay => Ok(()),
            _ => Err(RuleError::CannotPass(
                "passing ends a turn only after a draw or a queen",
            )),
        }
    }

    pub(super) fn check_challenge(&self, by: Seat, target: Seat) -> Check {
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
}

/// Does a card with this effect name the suit that follows? An 8, and a joker
/// with an effect other than standing for a card (D1).
pub(super) fn names_suit(card: Card, effect: Option<Effect>) -> bool {
    match effect {
        Some(Effect::WildSuit) => true,
        Some(Effect::Substitute) | None => false,
        Some(_) => card == Card::Joker,
    }
}

/// Same suit or same rank (§2.4); the letter rule for letters (§4).
#[inline]
pub(super) fn matches_target(target: Target, card: Card) -> bool {
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

/// The plays listed so far by [`Game::legal_moves_into`].
struct Listed<'m> {
    moves: &'m mut Vec<Move>,
    /// The hand holds two cards: a play leaves one.
    announce_too: bool,
    /// Whether any play was listed.
    any: bool,
}

impl Listed<'_> {
    /// A play of `card` with these choices. One that leaves one card is
    /// listed announcing first, so that whoever takes the first listed move
    /// announces (and a naive bot is never challenged forever).
    fn push(
        &mut self,
        card: Card,
        suit: Option<Suit>,
        letter: Option<Letter>,
        as_card: Option<Card>,
    ) {
        self.any = true;
        let play = |announce| Move::Play {
            card,
            suit,
            letter,
            as_card,
            announce,
        };
        if self.announce_too {
            self.moves.push(play(true));
        }
        self.moves.push(play(false));
    }
}

#[cfg(test)]
mod tests {
    use rand::{Rng, SeedableRng};
    use serde_json::json;

    use super::*;
    use crate::engine::Command;
    use crate::game::Status;
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
                            let choice = Choice {
                                suit,
                                letter,
                                as_card: None,
                            };
                            let reason = g.check_card_reason(r, seat, card, choice);
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
