//! The decks (docs/RULES.md §3.1, §4): French 32, 52 and 54 cards, and the
//! letter deck `letters100`, loaded from data. Every deck has an id and a
//! content hash, recorded with each deal so that old games still replay.

use std::sync::OnceLock;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::card::{Card, Rank, Suit};

/// The kind of deck a table plays with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum DeckKind {
    /// 7…A in every suit (S2).
    French32,
    French52,
    /// 52 + 2 jokers.
    French54,
    /// The Amérix deck of `letters100.md` (S3, D19).
    Letters100,
}

const LETTERS100: &str = include_str!("../data/letters100.txt");

impl DeckKind {
    pub fn id(self) -> &'static str {
        match self {
            DeckKind::French32 => "french32",
            DeckKind::French52 => "french52",
            DeckKind::French54 => "french54",
            DeckKind::Letters100 => "letters100",
        }
    }

    pub fn is_letters(self) -> bool {
        self == DeckKind::Letters100
    }

    /// The cards of one deck, in a fixed canonical order.
    pub fn cards(self) -> &'static [Card] {
        static DECKS: OnceLock<[Vec<Card>; 4]> = OnceLock::new();
        let decks = DECKS.get_or_init(|| {
            let french = |lowest: Rank, jokers: usize| {
                let mut v: Vec<Card> = Suit::ALL
                    .into_iter()
                    .flat_map(|s| {
                        Rank::ALL
                            .into_iter()
                            .filter(move |r| *r >= lowest)
                            .map(move |r| Card::French(r, s))
                    })
                    .collect();
                v.extend(std::iter::repeat_n(Card::Joker, jokers));
                v
            };
            [
                french(Rank::Seven, 0),
                french(Rank::Two, 0),
                french(Rank::Two, 2),
                parse_composition(LETTERS100),
            ]
        });
        &decks[self as usize]
    }

    /// Each card of the deck once, in canonical order.
    pub fn distinct_cards(self) -> &'static [Card] {
        static DISTINCT: OnceLock<[Vec<Card>; 4]> = OnceLock::new();
        let all = DISTINCT.get_or_init(|| {
            [
                DeckKind::French32,
                DeckKind::French52,
                DeckKind::French54,
                DeckKind::Letters100,
            ]
            .map(|k| {
                let mut v = k.cards().to_vec();
                v.sort_unstable();
                v.dedup();
                v
            })
        });
        &all[self as usize]
    }

    /// Does this deck hold a card of that face?
    pub fn has(self, face: crate::card::Face) -> bool {
        self.cards().iter().any(|c| c.face() == face)
    }
}

/// Parses a deck composition: lines `CODE COUNT`, `#` comments.
fn parse_composition(text: &str) -> Vec<Card> {
    let mut cards = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (code, count) = line.split_once(' ').expect("deck line is `CODE COUNT`");
        let card: Card = code.parse().expect("deck data holds card codes");
        let count: usize = count.trim().parse().expect("deck data holds counts");
        cards.extend(std::iter::repeat_n(card, count));
    }
    cards
}

/// What a deal records of the deck it used.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DeckId {
    pub id: String,
    pub copies: u32,
    /// SHA-256 (hex) of the card codes of all copies, space separated.
    pub hash: String,
}

impl DeckId {
    pub fn of(kind: DeckKind, copies: u32) -> DeckId {
        // Every new game asks for its deck's hash: work each out once (the
        // rules allow 1 to 16 copies).
        static HASHES: [[OnceLock<String>; 16]; 4] = [const { [const { OnceLock::new() }; 16] }; 4];
        let hash = match HASHES[kind as usize].get(copies.wrapping_sub(1) as usize) {
            Some(cell) => cell.get_or_init(|| Self::hash(kind, copies)).clone(),
            None => Self::hash(kind, copies),
        };
        DeckId {
            id: kind.id().to_owned(),
            copies,
            hash,
        }
    }

    /// SHA-256 (hex) of the card codes of all copies, space separated.
    fn hash(kind: DeckKind, copies: u32) -> String {
        let mut h = Sha256::new();
        for i in 0..copies {
            for (j, c) in kind.cards().iter().enumerate() {
                if i > 0 || j > 0 {
                    h.update(b" ");
                }
                h.update(c.to_string().as_bytes());
            }
        }
        format!("{:x}", h.finalize())
    }
}

/// All the cards of `copies` decks, unshuffled.
pub fn full_deck(kind: DeckKind, copies: u32) -> Vec<Card> {
    let one = kind.cards();
    let mut v = Vec::with_capacity(one.len() * copies as usize);
    for _ in 0..copies {
        v.extend_from_slice(one);
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::card::{CardSet, Face};

    /// `Card::index` numbers every card of every deck apart, and
    /// `CardSet::single` gives the card back.
    #[test]
    fn card_sets_number_every_card_apart() {
        let mut all = CardSet::EMPTY;
        for kind in [DeckKind::French54, DeckKind::Letters100] {
            for &card in kind.distinct_cards() {
                assert!(!all.contains(card), "{card} numbered twice");
                all.insert(card);
                assert_eq!(CardSet::of(card).single(), Some(card));
            }
        }
        assert_eq!(all, CardSet::ALL);
        assert_eq!(CardSet::holding(&[Card::Joker, Card::Star]).single(), None);
    }

    #[test]
    fn french_decks_have_their_sizes() {
        assert_eq!(DeckKind::French32.cards().len(), 32);
        assert_eq!(DeckKind::French52.cards().len(), 52);
        assert_eq!(DeckKind::French54.cards().len(), 54);
        assert!(!DeckKind::French32.has(Face::Rank(Rank::Six)));
        assert!(DeckKind::French32.has(Face::Rank(Rank::Seven)));
    }

    /// D19: the default letter deck is the table of letters100.md, 100 cards.
    #[test]
    fn d19_letter_deck_is_the_data_table() {
        let deck = DeckKind::Letters100.cards();
        assert_eq!(deck.len(), 100);
        let count = |code: &str| deck.iter().filter(|c| c.to_string() == code).count();
        assert_eq!(count("E"), 12);
        assert_eq!(count("A"), 8);
        assert_eq!(count("X"), 1);
        assert_eq!(count("STAR"), 4);
        assert_eq!(count("BANG"), 4);
        assert_eq!(deck.iter().filter(|c| c.letter().is_some()).count(), 92);
    }

    #[test]
    fn deck_ids_name_content_and_copies() {
        let one = DeckId::of(DeckKind::French54, 1);
        let two = DeckId::of(DeckKind::French54, 2);
        assert_eq!(one.id, "french54");
        assert_ne!(one.hash, two.hash);
        assert_eq!(one, DeckId::of(DeckKind::French54, 1));
        assert_eq!(one.hash.len(), 64);
    }
}
