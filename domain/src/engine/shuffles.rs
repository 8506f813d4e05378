//! Every shuffle of a game (docs/RULES.md §2.1): the deal, a special
//! starter put back (D9), the first dealer (D23) and a reshuffle of the
//! stock, each from its own stream of a [`Chance`]. The engine deals and
//! reshuffles through these; a verifier recomputes them from a finished
//! log with the revealed seed ([`crate::fair`]).

use std::collections::BTreeMap;

use crate::card::Card;
use crate::deck::full_deck;
use crate::event::{RoundStarted, Seat};
use crate::fair::{Chance, Words};
use crate::game::Game;
use crate::rules::Starter;

impl Game {
    /// The first dealer (D23): a number below the number of seats, from
    /// round 0's stream.
    pub(crate) fn first_dealer<C: Chance + ?Sized>(&self, chance: &mut C) -> Seat {
        chance.stream(&self.clients, 0, 0).below(self.seats)
    }

    /// The next round's deal by `dealer`, as `round_started` records it: the
    /// decks in their canonical order shuffled by the round's shuffle 0
    /// (D22), unless the test's `deck` is given; dealt one card at a time
    /// from the seat after the dealer; the starter, then the stock (its
    /// top, last, the card after the starter); a special starter put back
    /// from the same stream (D9).
    pub(crate) fn dealt<C: Chance + ?Sized>(
        &self,
        dealer: Seat,
        deck: Option<Vec<Card>>,
        chance: &mut C,
    ) -> RoundStarted {
        let n = self.seats;
        let round = self.history.len() as u32 + 1;
        let mut stream = chance.stream(&self.clients, round, 0);
        let deck = deck.unwrap_or_else(|| {
            let mut d = full_deck(self.rules.deck, self.rules.decks.count(n));
            stream.shuffle(&mut d);
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
            // D9: back at a place counted from the bottom, the top
            // included, and the top card turned.
            while self.effect(starter).is_some() && stock.iter().any(|c| self.effect(*c).is_none())
            {
                let at = stream.below(stock.len() + 1);
                stock.insert(at, starter);
                starter = stock.pop().expect("the stock is not empty");
            }
        }
        RoundStarted {
            round,
            dealer,
            deck: self.deck_id.clone(),
            hands,
            stock,
            starter,
            // D23: the seat after the dealer plays first.
            first_seat: (dealer + 1) % n,
        }
    }

    /// The running round's next stock: the discard pile less the cards kept
    /// on top, bottom first, shuffled by the round's next shuffle.
    pub(crate) fn reshuffled<C: Chance + ?Sized>(&self, chance: &mut C) -> Vec<Card> {
        let r = self.r();
        let mut stock = r.discard[..self.recyclable()].to_vec();
        chance
            .stream(&self.clients, r.number, r.reshuffles + 1)
            .shuffle(&mut stock);
        stock
    }
}
