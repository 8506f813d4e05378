//! What one seat has seen of a running game, and the games it could be.
//!
//! A [`Sight`] holds the seat's view and the game with every card the seat
//! may not know taken out: the other hands and the stock (and another
//! seat's drawn card). Those cards stay as a pool, sorted, so that not even
//! their order is kept. A bot decides from a sight, never from the game; the
//! `strong` level deals the pool out again at random ([`Sight::deal`]), one
//! game the seat cannot tell from the real one per deal.

use rand::seq::SliceRandom;
use rand::Rng;

use crate::card::{Card, CardSet};
use crate::event::{Pending, Seat};
use crate::game::Game;
use crate::rules::Book;
use crate::view::SeatView;

/// What `seat` has seen of a running game.
#[derive(Clone, Debug)]
pub struct Sight {
    pub seat: Seat,
    /// The seat's own view, its legal moves included.
    pub view: SeatView,
    /// The game without the cards the seat may not know.
    public: Game,
    /// Those cards, sorted.
    unseen: Vec<Card>,
    /// How many of them each hand holds (0 for the seat's own).
    hand_sizes: Vec<usize>,
}

impl Game {
    /// What `seat` has seen of this game, while a round runs.
    pub fn sight(&self, seat: Seat) -> Option<Sight> {
        let mut public = self.clone();
        let view = self.view(Some(seat));
        let round = public.round.as_mut()?;
        let mut unseen = Vec::new();
        let mut hand_sizes = vec![0; round.hands.len()];
        for (s, hand) in round.hands.iter_mut().enumerate() {
            if s != seat {
                hand_sizes[s] = hand.len();
                unseen.append(hand);
                round.held[s] = CardSet::EMPTY;
            }
        }
        unseen.append(&mut round.stock);
        if let Pending::Drawn { .. } = round.pending {
            if round.current != Some(seat) {
                // Another seat's drawn card: one of its hand, unknown.
                round.pending = Pending::Drawn { card: Card::Joker };
            }
        }
        unseen.sort_unstable();
        Some(Sight {
            seat,
            view,
            public,
            unseen,
            hand_sizes,
        })
    }
}

impl Sight {
    /// The rules' compiled tables.
    pub fn book(&self) -> &Book {
        &self.public.book
    }

    /// One game consistent with what the seat has seen: the unseen cards
    /// dealt at random to the other hands (as many as each holds) and the
    /// stock.
    pub fn deal<R: Rng + ?Sized>(&self, rng: &mut R) -> Game {
        let mut game = self.public.clone();
        let mut pool = self.unseen.clone();
        pool.shuffle(rng);
        let round = game.round.as_mut().expect("a sight is of a running round");
        for (s, &size) in self.hand_sizes.iter().enumerate() {
            if s != self.seat {
                let at = pool.len() - size;
                round.hands[s] = pool.split_off(at);
                round.held[s] = CardSet::holding(&round.hands[s]);
            }
        }
        if let (Pending::Drawn { .. }, Some(current)) = (round.pending, round.current) {
            if current != self.seat {
                if let Some(&card) = round.hands[current].last() {
                    round.pending = Pending::Drawn { card };
                }
            }
        }
        round.stock = pool;
        game
    }
}
