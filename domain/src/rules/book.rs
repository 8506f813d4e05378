//! The rules compiled into per-face tables for the engine (`Book`): which
//! faces carry which effect, stack, counter an attack or score what; and
//! the validation that refuses impossible combinations on the way.

use crate::card::{Card, CardSet, Face, Letter, Rank, Suit};
use crate::deck::DeckKind;
use crate::event::Target;

use super::*;

/// The most seats a table may have.
pub const MAX_SEATS: usize = 64;

impl Rules {
    /// Refuses impossible combinations with a reason (docs/RULES.md §3).
    pub fn validate(&self) -> Result<(), RulesError> {
        self.compile().map(|_| ())
    }

    /// Compiles the rules into per-face tables, refusing what cannot work:
    /// the seats and the deal, the effects, what some rules need of them,
    /// the points, the scoring and the end, in that order.
    pub fn compile(&self) -> Result<Book, RulesError> {
        self.check_seats_and_deal()?;
        let mut book = Book {
            effect: [None; Face::COUNT],
            points: [0; Face::COUNT],
            wild_not_on: [false; Face::COUNT],
            in_deck: [false; Face::COUNT],
            plays: Plays::default(),
        };
        for c in self.deck.distinct_cards() {
            book.in_deck[c.face().index()] = true;
        }
        self.effects_into(&mut book)?;
        self.check_needs(&book)?;
        self.points_into(&mut book)?;
        self.check_scoring_and_end()?;
        book.plays = Plays::of(self.deck, &book);
        Ok(book)
    }

    /// A face named in the rules, which the deck must have.
    fn face_in_deck(&self, key: &str) -> Result<Face, RulesError> {
        let f = Face::parse(key, self.deck.is_letters())
            .map_err(|e| RulesError::Invalid(e.to_string()))?;
        if !self.deck.has(f) {
            return invalid(format!("the {} deck has no card {key:?}", self.deck.id()));
        }
        Ok(f)
    }

    /// 2 to [`MAX_SEATS`] players, 1 to 16 decks, and for every number of
    /// players a deal of 1 to 30 cards that the decks can hold with a
    /// starter.
    fn check_seats_and_deal(&self) -> Result<(), RulesError> {
        let Players { min, max } = self.players;
        if min < 2 || min > max || max > MAX_SEATS {
            return invalid(format!(
                "players must be from 2 to {MAX_SEATS} with min ≤ max (got {min}–{max})"
            ));
        }
        if let Decks::Fixed(0) | Decks::PerPlayers(0) = self.decks {
            return invalid("decks must be at least 1");
        }
        for p in min..=max {
            let decks = self.decks.count(p);
            if decks > 16 {
                return invalid(format!("{decks} decks for {p} players is more than 16"));
            }
            let cards = decks as usize * self.deck.cards().len();
            let deal = self.deal.cards(p);
            if deal == 0 || deal > 30 {
                return invalid(format!(
                    "the deal for {p} players must be 1 to 30 cards (got {deal})"
                ));
            }
            if p * deal + 1 > cards {
                return invalid(format!(
                    "{p} players × {deal} cards plus a starter need {} cards, but {decks} {} deck(s) hold {cards}",
                    p * deal + 1,
                    self.deck.id()
                ));
            }
        }
        Ok(())
    }

    /// Each effect on its face, where the deck allows it and with a count
    /// of 1 to 10; the faces a wild card may not go on.
    fn effects_into(&self, book: &mut Book) -> Result<(), RulesError> {
        let letters = self.deck.is_letters();
        for (key, effect) in &self.effects {
            let f = self.face_in_deck(key)?;
            let fits = match effect {
                Effect::WildSuit | Effect::AttackChain(_) | Effect::Freeze => !letters,
                Effect::Substitute => f == Face::Joker,
                Effect::WildLetter => letters,
                _ => true,
            };
            if !fits {
                return invalid(format!(
                    "effect {} cannot go on {key:?} with the {} deck",
                    serde_json::to_string(effect).unwrap_or_default(),
                    self.deck.id()
                ));
            }
            if let Effect::DrawSkip(n)
            | Effect::AttackChain(n)
            | Effect::MustReplay(n)
            | Effect::Firecracker(n) = effect
            {
                if !(1..=10).contains(n) {
                    return invalid(format!(
                        "the count of the effect on {key:?} must be 1 to 10"
                    ));
                }
            }
            book.effect[f.index()] = Some(*effect);
        }
        for key in &self.wild_not_on {
            book.wild_not_on[self.face_in_deck(key)?.index()] = true;
        }
        Ok(())
    }

    /// What some rules need of the effects and the deck: stacking and the
    /// joker counter a draw_skip card, the letters starter the letter deck,
    /// redraw_special a card without an effect; and an announcement
    /// penalty of 0 to 10.
    fn check_needs(&self, book: &Book) -> Result<(), RulesError> {
        let draw_skips = |f: &dyn Fn(Face) -> bool| {
            self.deck.cards().iter().any(|c| {
                f(c.face()) && matches!(book.effect[c.face().index()], Some(Effect::DrawSkip(_)))
            })
        };
        if self.stacking == Stacking::DrawCards && !draw_skips(&|_| true) {
            return invalid("stacking needs a card with a draw_skip effect");
        }
        if self.joker_counter && !draw_skips(&|f| f == Face::Joker) {
            return invalid("joker_counter needs jokers with a draw_skip effect");
        }
        if self.starter == Starter::Letters && !self.deck.is_letters() {
            return invalid("the letters starter needs the letters100 deck");
        }
        if self.starter == Starter::RedrawSpecial
            && self
                .deck
                .cards()
                .iter()
                .all(|c| book.effect[c.face().index()].is_some())
        {
            return invalid("redraw_special needs at least one card without an effect");
        }
        if self.announce.penalty > 10 {
            return invalid("the announcement penalty must be 0 to 10 cards");
        }
        Ok(())
    }

    /// The points of each face: by its effect (§3.5), or from the table,
    /// which must price every card of the deck with -1000 to 1000.
    fn points_into(&self, book: &mut Book) -> Result<(), RulesError> {
        let letters = self.deck.is_letters();
        let table = match &self.points {
            Points::ByEffect => {
                for c in self.deck.cards() {
                    let f = c.face();
                    book.points[f.index()] = by_effect_points(f, book.effect[f.index()]);
                }
                return Ok(());
            }
            Points::Table(PointsTable(t)) => t,
        };
        let mut priced = [false; Face::COUNT];
        for (key, v) in table {
            if !(-1000..=1000).contains(v) {
                return invalid(format!("points for {key:?} must be -1000 to 1000"));
            }
            // A table may price faces the deck lacks (the classique joker
            // when jokers are off); effects may not.
            let f = Face::parse(key, letters).map_err(|e| RulesError::Invalid(e.to_string()))?;
            book.points[f.index()] = *v;
            priced[f.index()] = true;
        }
        match self
            .deck
            .distinct_cards()
            .iter()
            .find(|c| !priced[c.face().index()])
        {
            Some(missing) => invalid(format!(
                "the points table has no value for {}",
                missing.face()
            )),
            None => Ok(()),
        }
    }

    /// 1 to 3 placement awards, a finisher bonus of -1000 to 1000, an end
    /// threshold of 1 to 100,000 and at least one round.
    fn check_scoring_and_end(&self) -> Result<(), RulesError> {
        match &self.scoring {
            Scoring::Placement(Placement { awards }) if awards.is_empty() || awards.len() > 3 => {
                return invalid("placement awards must list 1 to 3 values");
            }
            Scoring::HandPoints(HandPoints { finisher_bonus })
                if !(-1000..=1000).contains(finisher_bonus) =>
            {
                return invalid("finisher_bonus must be -1000 to 1000");
            }
            _ => {}
        }
        if !(1..=100_000).contains(&self.end.threshold()) {
            return invalid("the end threshold must be 1 to 100000");
        }
        if let Some(0) = self.rounds {
            return invalid("rounds must be at least 1");
        }
        Ok(())
    }

    pub fn is_placement(&self) -> bool {
        matches!(self.scoring, Scoring::Placement(_))
    }
}

/// §3.5 `by_effect`.
fn by_effect_points(face: Face, effect: Option<Effect>) -> i32 {
    match (effect, face) {
        (Some(e), _) if e.is_strong() => 50,
        (Some(_), _) => 20,
        (None, Face::Rank(Rank::Ace)) => 1,
        (None, Face::Rank(r)) => r.face_value().unwrap_or(10),
        (None, Face::Joker) => 50,
        (None, Face::Letter(_)) => 5,
        (None, Face::Star | Face::Bang) => 10,
    }
}

/// The rules compiled into tables indexed by `Face::index`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Book {
    pub effect: [Option<Effect>; Face::COUNT],
    pub points: [i32; Face::COUNT],
    pub wild_not_on: [bool; Face::COUNT],
    /// Faces the deck holds.
    pub in_deck: [bool; Face::COUNT],
    /// The cards of the deck sorted by how they may be played.
    pub(crate) plays: Plays,
}

/// The cards of the deck sorted by how they may be played (`legal_on`), so
/// that what a seat may play is a few set operations rather than a check per
/// card. A 757 joker (`substitute`) is in none of them but `effectful`: what
/// it may do depends on the card it names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Plays {
    /// Cards that follow the card to match (§2.4, §4): no effect, or an
    /// effect that does not make them wild.
    pub natural: CardSet,
    /// `wild_suit` (the 8): on anything but the faces of `wild_not_on`.
    pub wild_suit: CardSet,
    /// Legal on any card: `wild_letter`, `firecracker`, and a joker with an
    /// effect (D1).
    pub anywhere: CardSet,
    pub freeze: CardSet,
    pub draw_skip: CardSet,
    pub effectful: CardSet,
    pub substitute: CardSet,
    // `Book::playable_on`, worked out for every target: on a French card
    // what its face allows (or, with no face, the wild cards) together with
    // what its suit allows; on a letter; on anything.
    pub on_face: [CardSet; Face::COUNT],
    pub on_no_face: CardSet,
    pub on_suit: [CardSet; 4],
    pub on_letter: [CardSet; 26],
    pub on_any: CardSet,
}

impl Default for Plays {
    fn default() -> Plays {
        let none = CardSet::EMPTY;
        Plays {
            natural: none,
            wild_suit: none,
            anywhere: none,
            freeze: none,
            draw_skip: none,
            effectful: none,
            substitute: none,
            on_face: [none; Face::COUNT],
            on_no_face: none,
            on_suit: [none; 4],
            on_letter: [none; 26],
            on_any: none,
        }
    }
}

impl Plays {
    fn of(deck: DeckKind, book: &Book) -> Plays {
        let mut p = Plays::default();
        for &card in deck.distinct_cards() {
            let one = CardSet::of(card);
            let effect = book.effect(card);
            let class = match effect {
                None => &mut p.natural,
                Some(Effect::Substitute) => &mut p.substitute,
                Some(Effect::WildSuit) => &mut p.wild_suit,
                Some(Effect::WildLetter | Effect::Firecracker(_)) => &mut p.anywhere,
                Some(_) if card == Card::Joker => &mut p.anywhere,
                Some(_) => &mut p.natural,
            };
            *class = class.union(one);
            match effect {
                Some(Effect::Freeze) => p.freeze = p.freeze.union(one),
                Some(Effect::DrawSkip(_)) => p.draw_skip = p.draw_skip.union(one),
                _ => {}
            }
            if effect.is_some() {
                p.effectful = p.effectful.union(one);
            }
        }
        // docs/RULES.md §2.4 and §4, as the engine's `legal_on` reads them: a
        // natural card matches the face or suit (or letter) to follow, an
        // 8 goes on anything but the faces of `wild_not_on`, and the cards
        // legal anywhere go anywhere.
        let wild = p.wild_suit.union(p.anywhere);
        let faces = (Rank::ALL.into_iter().map(Face::Rank))
            .chain([Face::Joker])
            .chain(Letter::all().map(Face::Letter))
            .chain([Face::Star, Face::Bang]);
        for face in faces {
            let i = face.index();
            let wild = if book.wild_not_on[i] {
                p.anywhere
            } else {
                wild
            };
            p.on_face[i] = CardSet::face(face)
                .and(CardSet::FRENCH)
                .and(p.natural)
                .union(wild);
        }
        p.on_no_face = wild;
        for s in Suit::ALL {
            p.on_suit[s as usize] = CardSet::suit(s).and(p.natural);
        }
        for l in Letter::all() {
            p.on_letter[l.index() as usize] = CardSet::letters_after(l).and(p.natural).union(wild);
        }
        p.on_any = p.natural.union(wild);
        p
    }
}

impl Book {
    pub fn effect(&self, card: Card) -> Option<Effect> {
        self.effect[card.face().index()]
    }

    pub fn points(&self, card: Card) -> i32 {
        self.points[card.face().index()]
    }

    /// The engine's `legal_on` for every card but a 757 joker: what may be
    /// played on `target` when nothing else constrains the turn.
    #[inline]
    pub(crate) fn playable_on(&self, target: Target) -> CardSet {
        let plays = &self.plays;
        match target {
            Target::Any => plays.on_any,
            Target::French { face, suit } => {
                let by_face = face.map_or(plays.on_no_face, |f| plays.on_face[f.index()]);
                let by_suit = suit.map_or(CardSet::EMPTY, |s| plays.on_suit[s as usize]);
                by_face.union(by_suit)
            }
            Target::Letter(on) => plays.on_letter[on.index() as usize],
        }
    }
}
