//! What a legal move does: its card's effect, draws and recycled stock,
//! whose turn it is next, the end of a round and the next deal. Each
//! consequence is an event, applied through `evolve` as it is emitted.

use std::collections::BTreeMap;

use crate::fair::Chance;

use crate::card::Card;
use crate::event::{
    CardPlayed, Choice, DrawReason, Event, Move, Pending, RoundEnded, Seat, SkipReason,
};
use crate::game::{kept_on_top, Game};
use crate::rules::{DrawRule, Effect, Stacking, Starter, TwoPlayerReverse};
use crate::score;

use super::{Check, RuleError};

impl Game {
    pub(super) fn act<C: Chance + ?Sized>(
        &mut self,
        seat: Seat,
        mv: &Move,
        chance: &mut C,
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
            self.draw(target, penalty, DrawReason::Challenge, chance, out);
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
                let choice = Choice {
                    suit,
                    letter,
                    as_card,
                };
                self.check_play(r, seat, card, choice)?;
                if announce && r.hands[seat].len() != 2 {
                    return Err(RuleError::BadAnnounce(
                        "only a play that leaves exactly one card may announce it (D8)",
                    ));
                }
                self.play(seat, card, choice, announce, chance, out);
            }
            Move::Draw {} => {
                self.check_draw(r, seat)?;
                self.draw_move(seat, chance, out);
            }
            Move::Pass {} => {
                self.check_pass(r)?;
                self.emit(Event::TurnPassed { seat }, out);
                self.start_turn(self.step(seat, 1), Pending::None, self.r().frozen, out);
            }
            Move::Challenge { .. } => unreachable!("handled above"),
        }
        Ok(())
    }

    pub(super) fn play<C: Chance + ?Sized>(
        &mut self,
        seat: Seat,
        card: Card,
        Choice {
            suit,
            letter,
            as_card,
        }: Choice,
        announce: bool,
        chance: &mut C,
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
                self.end_round(false, chance, out);
                return;
            }
        }
        let eff_card = as_card.unwrap_or(card);
        let effect = match self.effect(card) {
            Some(Effect::Substitute) => self.effect(eff_card),
            e => e,
        };
        self.resolve(seat, eff_card, effect, false, chance, out);
    }

    /// Applies the effect of a card `player` has just played (or, for an
    /// `apply_effect` starter, that the dealer is deemed to have played, D10)
    /// and gives the turn to whoever has it next.
    pub(super) fn resolve<C: Chance + ?Sized>(
        &mut self,
        player: Seat,
        card: Card,
        effect: Option<Effect>,
        starter: bool,
        chance: &mut C,
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
                self.draw(victim, n, DrawReason::Penalty, chance, out);
                (self.skip(victim, SkipReason::Penalty, out), Pending::None)
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
                (self.skip(skipped, SkipReason::Skip, out), Pending::None)
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
                replay(player, again, Pending::MustReplay { penalty })
            }
            Some(Effect::MayReplay) if !starter => replay(player, again, Pending::MayReplay),
            _ => (self.step(player, 1), Pending::None),
        };
        self.start_turn(next, pending, frozen, out);
    }

    /// `seat` loses its turn (`reason`): the seat after it is next.
    fn skip(&mut self, seat: Seat, reason: SkipReason, out: &mut Vec<Event>) -> Seat {
        self.emit(Event::TurnSkipped { seat, reason }, out);
        self.step(seat, 1)
    }

    /// Does a draw card wait for an answer (D25, D28) rather than act at once?
    pub(super) fn stacks(&self, card: Card) -> bool {
        self.rules.stacking == Stacking::DrawCards
            || (self.rules.joker_counter && card == Card::Joker)
    }

    /// Gives the turn to `next`, passing over seats that owe a lost turn (S3).
    pub(super) fn start_turn(
        &mut self,
        mut next: Seat,
        pending: Pending,
        frozen: bool,
        out: &mut Vec<Event>,
    ) {
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
    pub(super) fn step(&self, from: Seat, steps: usize) -> Seat {
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

    /// D38: a pass where the rules let the turn end without drawing, else
    /// a draw that the turn ends on (the card drawn is never played).
    pub(super) fn time_out<C: Chance + ?Sized>(
        &mut self,
        seat: Seat,
        chance: &mut C,
        out: &mut Vec<Event>,
    ) -> Check {
        let r = self.running_round()?;
        let current = r.current.expect("a running round has a seat on turn");
        if current != seat {
            return Err(RuleError::NotYourTurn { seat, current });
        }
        if self.check_pass(r).is_ok() {
            return self.act(seat, &Move::Pass {}, chance, out);
        }
        self.draw_move(seat, chance, out);
        let drawn_pending = self
            .round
            .as_ref()
            .is_some_and(|r| r.current == Some(seat) && matches!(r.pending, Pending::Drawn { .. }));
        if drawn_pending && self.result.is_none() {
            self.act(seat, &Move::Pass {}, chance, out)?;
        }
        Ok(())
    }

    pub(super) fn draw_move<C: Chance + ?Sized>(
        &mut self,
        seat: Seat,
        chance: &mut C,
        out: &mut Vec<Event>,
    ) {
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
            self.draw(seat, n, DrawReason::Penalty, chance, out);
            self.start_turn(self.step(seat, 1), Pending::None, frozen, out);
            return;
        }
        let drawn = self.draw(seat, 1, DrawReason::Draw, chance, out);
        let Some(card) = drawn else {
            // D24: nothing to draw, play goes on; D31: a blocked round ends.
            let r = self.r();
            if r.idle >= r.active_count() {
                self.end_round(true, chance, out);
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
    pub(super) fn draw<C: Chance + ?Sized>(
        &mut self,
        seat: Seat,
        n: u32,
        reason: DrawReason,
        chance: &mut C,
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
            let stock = self.reshuffled(chance);
            self.emit(Event::StockReshuffled { stock }, out);
        }
        if !recorded {
            let cards = Vec::new();
            self.emit_cards_drawn(seat, cards, reason, out);
        }
        first
    }

    /// Cards the discard pile could give to a new stock.
    pub(super) fn recyclable(&self) -> usize {
        let r = self.r();
        r.discard.len() - kept_on_top(&r.discard, &self.book)
    }

    // ----- rounds ---------------------------------------------------------

    /// Deals a round (§2.1–2.2, D9, D10, D20, D22, D23).
    pub(super) fn deal<C: Chance + ?Sized>(
        &mut self,
        dealer: Seat,
        deck: Option<Vec<Card>>,
        chance: &mut C,
        out: &mut Vec<Event>,
    ) {
        let started = self.dealt(dealer, deck, chance);
        let (starter, first_seat) = (started.starter, started.first_seat);
        self.emit(Event::RoundStarted(Box::new(started)), out);
        let effect = self.effect(starter);
        match (self.rules.starter, effect) {
            (Starter::Letters, Some(Effect::Firecracker(penalty))) => {
                // S3, D20: the first player draws and does not play; a card is
                // turned onto the pétard; the second player starts.
                self.draw(first_seat, penalty, DrawReason::Penalty, chance, out);
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
                self.resolve(dealer, starter, Some(e), true, chance, out)
            }
            _ => self.start_turn(first_seat, Pending::None, false, out),
        }
    }

    /// Scores the round and deals the next one or ends the game. `blocked`:
    /// the round ends because nobody can draw or play (D31).
    pub(super) fn end_round<C: Chance + ?Sized>(
        &mut self,
        blocked: bool,
        chance: &mut C,
        out: &mut Vec<Event>,
    ) {
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
            self.deal((dealer + 1) % self.seats, None, chance, out);
        }
    }
}

/// A card its player replays after (D5, S4 queen): the player again with
/// `pending`, or, when the player is out (D32), the next seat with nothing.
fn replay(player: Seat, again: Seat, pending: Pending) -> (Seat, Pending) {
    if again == player {
        (player, pending)
    } else {
        (again, Pending::None)
    }
}
