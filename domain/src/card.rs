//! Cards and their codes: `AS`, `10H`, `JK` for French cards, `A`…`Z`, `STAR`,
//! `BANG` for the Amérix letter deck (docs/API.md, "Cards and moves").

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A French suit; codes `C D H S`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Suit {
    Clubs,
    Diamonds,
    Hearts,
    Spades,
}

impl Suit {
    pub const ALL: [Suit; 4] = [Suit::Clubs, Suit::Diamonds, Suit::Hearts, Suit::Spades];

    pub fn code(self) -> char {
        match self {
            Suit::Clubs => 'C',
            Suit::Diamonds => 'D',
            Suit::Hearts => 'H',
            Suit::Spades => 'S',
        }
    }

    fn from_code(c: &str) -> Option<Suit> {
        Some(match c {
            "C" => Suit::Clubs,
            "D" => Suit::Diamonds,
            "H" => Suit::Hearts,
            "S" => Suit::Spades,
            _ => return None,
        })
    }
}

impl fmt::Display for Suit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.code())
    }
}

impl FromStr for Suit {
    type Err = CardError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Suit::from_code(s).ok_or_else(|| CardError::Suit(s.to_owned()))
    }
}

/// A French rank, from 2 to ace.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Rank {
    Two,
    Three,
    Four,
    Five,
    Six,
    Seven,
    Eight,
    Nine,
    Ten,
    Jack,
    Queen,
    King,
    Ace,
}

impl Rank {
    pub const ALL: [Rank; 13] = [
        Rank::Two,
        Rank::Three,
        Rank::Four,
        Rank::Five,
        Rank::Six,
        Rank::Seven,
        Rank::Eight,
        Rank::Nine,
        Rank::Ten,
        Rank::Jack,
        Rank::Queen,
        Rank::King,
        Rank::Ace,
    ];

    pub fn code(self) -> &'static str {
        [
            "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A",
        ][self as usize]
    }

    /// The face value of a number card (2…10); None for J, Q, K, A.
    pub fn face_value(self) -> Option<i32> {
        match self {
            Rank::Jack | Rank::Queen | Rank::King | Rank::Ace => None,
            r => Some(r as i32 + 2),
        }
    }

    pub fn is_face_card(self) -> bool {
        matches!(self, Rank::Jack | Rank::Queen | Rank::King)
    }

    fn from_code(s: &str) -> Option<Rank> {
        Some(match s.as_bytes() {
            [d @ b'2'..=b'9'] => Rank::ALL[(d - b'2') as usize],
            b"10" => Rank::Ten,
            b"J" => Rank::Jack,
            b"Q" => Rank::Queen,
            b"K" => Rank::King,
            b"A" => Rank::Ace,
            _ => return None,
        })
    }
}

/// A letter of the Amérix deck, `A` (0) to `Z` (25).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Letter(u8);

impl Letter {
    pub fn new(index: u8) -> Option<Letter> {
        (index < 26).then_some(Letter(index))
    }

    pub fn all() -> impl Iterator<Item = Letter> {
        (0..26).map(Letter)
    }

    pub fn index(self) -> u8 {
        self.0
    }

    pub fn char(self) -> char {
        (b'A' + self.0) as char
    }

    /// A E I O U Y (S3: "on peut poser une voyelle : A, E, I, O, U, Y").
    pub fn is_vowel(self) -> bool {
        matches!(self.char(), 'A' | 'E' | 'I' | 'O' | 'U' | 'Y')
    }

    /// Distance on the circular alphabet (S3: on X, "Y, Z, ou A. Oui : YZAB...").
    pub fn circular_distance(self, other: Letter) -> u8 {
        let d = (self.0 as i16 - other.0 as i16).rem_euclid(26) as u8;
        d.min(26 - d)
    }

    fn from_code(s: &str) -> Option<Letter> {
        match s.as_bytes() {
            [c @ b'A'..=b'Z'] => Some(Letter(c - b'A')),
            _ => None,
        }
    }
}

impl fmt::Display for Letter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.char())
    }
}

impl FromStr for Letter {
    type Err = CardError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Letter::from_code(s).ok_or_else(|| CardError::Letter(s.to_owned()))
    }
}

/// One card. Several decks give several equal cards.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Card {
    French(Rank, Suit),
    Joker,
    Letter(Letter),
    /// Étoile: a wild letter.
    Star,
    /// Pétard: a firecracker.
    Bang,
}

impl Card {
    pub fn face(self) -> Face {
        match self {
            Card::French(r, _) => Face::Rank(r),
            Card::Joker => Face::Joker,
            Card::Letter(l) => Face::Letter(l),
            Card::Star => Face::Star,
            Card::Bang => Face::Bang,
        }
    }

    pub fn suit(self) -> Option<Suit> {
        match self {
            Card::French(_, s) => Some(s),
            _ => None,
        }
    }

    pub fn rank(self) -> Option<Rank> {
        match self {
            Card::French(r, _) => Some(r),
            _ => None,
        }
    }

    pub fn letter(self) -> Option<Letter> {
        match self {
            Card::Letter(l) => Some(l),
            _ => None,
        }
    }

    pub fn is_french(self) -> bool {
        matches!(self, Card::French(..) | Card::Joker)
    }
}

impl Card {
    /// How many distinct cards there are: 52 French, the joker, 26 letters,
    /// the star and the pétard.
    #[cfg(test)]
    pub(crate) const COUNT: usize = 52 + 1 + 26 + 2;

    /// A dense number for the card, `0..Card::COUNT`, for `CardSet`.
    #[inline]
    pub(crate) fn index(self) -> usize {
        match self {
            Card::French(r, s) => r as usize * 4 + s as usize,
            Card::Joker => 52,
            Card::Letter(l) => 53 + l.0 as usize,
            Card::Star => 79,
            Card::Bang => 80,
        }
    }
}

/// A set of distinct cards, one bit per `Card::index`: which cards may be
/// played now, which carry an effect, which match a rank or suit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub(crate) struct CardSet(u128);

impl CardSet {
    pub(crate) const EMPTY: CardSet = CardSet(0);
    #[cfg(test)]
    pub(crate) const ALL: CardSet = CardSet((1 << Card::COUNT) - 1);
    /// The French cards and the joker: what a French card to follow can match.
    pub(crate) const FRENCH: CardSet = CardSet((1 << 53) - 1);
    pub(crate) const JOKER: CardSet = CardSet(1 << 52);

    #[inline]
    pub(crate) fn of(card: Card) -> CardSet {
        CardSet(1 << card.index())
    }

    #[inline]
    pub(crate) fn contains(self, card: Card) -> bool {
        self.0 >> card.index() & 1 == 1
    }

    /// The distinct cards among `cards`.
    pub(crate) fn holding(cards: &[Card]) -> CardSet {
        let mut set = CardSet::EMPTY;
        for &card in cards {
            set.insert(card);
        }
        set
    }

    #[inline]
    pub(crate) fn insert(&mut self, card: Card) {
        self.0 |= 1 << card.index();
    }

    /// The card of a set of one.
    #[inline]
    pub(crate) fn single(self) -> Option<Card> {
        if self.0.count_ones() != 1 {
            return None;
        }
        let i = self.0.trailing_zeros() as usize;
        Some(match i {
            0..52 => Card::French(Rank::ALL[i / 4], Suit::ALL[i % 4]),
            52 => Card::Joker,
            53..79 => Card::Letter(Letter((i - 53) as u8)),
            79 => Card::Star,
            _ => Card::Bang,
        })
    }

    #[inline]
    pub(crate) fn is_empty(self) -> bool {
        self.0 == 0
    }

    #[inline]
    pub(crate) fn union(self, other: CardSet) -> CardSet {
        CardSet(self.0 | other.0)
    }

    #[inline]
    pub(crate) fn and(self, other: CardSet) -> CardSet {
        CardSet(self.0 & other.0)
    }

    #[inline]
    pub(crate) fn without(self, other: CardSet) -> CardSet {
        CardSet(self.0 & !other.0)
    }

    /// The four cards of a suit.
    #[inline]
    pub(crate) fn suit(suit: Suit) -> CardSet {
        // Bit `rank * 4 + suit` for every rank.
        const CLUBS: u128 = {
            let mut bits = 0;
            let mut r = 0;
            while r < 13 {
                bits |= 1 << (r * 4);
                r += 1;
            }
            bits
        };
        CardSet(CLUBS << suit as usize)
    }

    /// Every card of a face: the four of a rank, or the one joker, letter,
    /// star or pétard.
    #[inline]
    pub(crate) fn face(face: Face) -> CardSet {
        match face {
            Face::Rank(r) => CardSet(0b1111 << (r as usize * 4)),
            Face::Joker => CardSet::of(Card::Joker),
            Face::Letter(l) => CardSet::of(Card::Letter(l)),
            Face::Star => CardSet::of(Card::Star),
            Face::Bang => CardSet::of(Card::Bang),
        }
    }

    /// The letters that may follow `on` (§4): up to three away on the
    /// circular alphabet, or any vowel on a vowel.
    #[inline]
    pub(crate) fn letters_after(on: Letter) -> CardSet {
        const fn vowel(i: usize) -> bool {
            matches!(i, 0 | 4 | 8 | 14 | 20 | 24)
        }
        const NEAR: [u128; 26] = {
            let mut table = [0; 26];
            let mut on = 0;
            while on < 26 {
                let mut l = 0;
                while l < 26 {
                    let d = (on + 26 - l) % 26;
                    let d = if d < 26 - d { d } else { 26 - d };
                    if d <= 3 || (vowel(on) && vowel(l)) {
                        table[on] |= 1 << (53 + l);
                    }
                    l += 1;
                }
                on += 1;
            }
            table
        };
        CardSet(NEAR[on.0 as usize])
    }
}

impl fmt::Display for Card {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code().as_str())
    }
}

/// A card's code (`AS`, `10H`, `JK`, `X`, `STAR`), held on the stack: events
/// and views write thousands of cards, without the formatting machinery.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CardCode {
    bytes: [u8; 4],
    len: u8,
}

impl CardCode {
    fn of(text: &str) -> CardCode {
        let mut code = CardCode {
            bytes: [0; 4],
            len: 0,
        };
        text.bytes().for_each(|b| code.push(b));
        code
    }

    fn push(&mut self, byte: u8) {
        self.bytes[self.len as usize] = byte;
        self.len += 1;
    }

    pub fn as_str(&self) -> &str {
        std::str::from_utf8(&self.bytes[..self.len as usize]).expect("card codes are ASCII")
    }
}

impl Card {
    /// The card's code, as the API writes it.
    pub fn code(self) -> CardCode {
        match self {
            Card::French(r, s) => {
                let mut code = CardCode::of(r.code());
                code.push(s.code() as u8);
                code
            }
            Card::Joker => CardCode::of("JK"),
            Card::Letter(l) => {
                let mut code = CardCode::of("");
                code.push(b'A' + l.0);
                code
            }
            Card::Star => CardCode::of("STAR"),
            Card::Bang => CardCode::of("BANG"),
        }
    }
}

impl Serialize for Card {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.code().as_str())
    }
}

/// Why a code is not a card (or suit, or letter).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CardError {
    #[error("unknown card code {0:?}: expected rank then suit (AS, 10H, 8D, QC), JK, a letter A…Z, STAR or BANG")]
    Card(String),
    #[error("unknown suit {0:?}: expected C, D, H or S")]
    Suit(String),
    #[error("unknown letter {0:?}: expected one capital letter A…Z")]
    Letter(String),
    #[error("unknown rank {0:?}: expected 2…10, J, Q, K, A, JK, a letter A…Z, STAR or BANG")]
    Face(String),
}

impl FromStr for Card {
    type Err = CardError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "JK" => return Ok(Card::Joker),
            "STAR" => return Ok(Card::Star),
            "BANG" => return Ok(Card::Bang),
            _ => {}
        }
        if let Some(l) = Letter::from_code(s) {
            return Ok(Card::Letter(l));
        }
        if s.len() >= 2 && s.is_ascii() {
            let (rank, suit) = s.split_at(s.len() - 1);
            if let (Some(r), Some(su)) = (Rank::from_code(rank), Suit::from_code(suit)) {
                return Ok(Card::French(r, su));
            }
        }
        Err(CardError::Card(s.chars().take(16).collect()))
    }
}

macro_rules! serde_via_str {
    ($t:ty, $what:literal) => {
        serde_via_str!(deserialize $t, $what);
        impl Serialize for $t {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_str(self)
            }
        }
    };
    (deserialize $t:ty, $what:literal) => {
        impl<'de> Deserialize<'de> for $t {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl serde::de::Visitor<'_> for V {
                    type Value = $t;
                    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                        f.write_str($what)
                    }
                    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<$t, E> {
                        v.parse().map_err(E::custom)
                    }
                }
                d.deserialize_str(V)
            }
        }
    };
}

serde_via_str!(deserialize Card, "a card code such as AS, 10H, JK, A, STAR or BANG");
serde_via_str!(Suit, "a suit code: C, D, H or S");
serde_via_str!(Letter, "a letter A…Z");

/// What a card is for the rules, whatever its suit: the key of effects and
/// points (`8`, `A`, `JK`, the letter `X`, `STAR`, …).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Face {
    Rank(Rank),
    Joker,
    Letter(Letter),
    Star,
    Bang,
}

impl Face {
    /// Number of distinct faces, the size of the rule tables.
    pub const COUNT: usize = 13 + 1 + 26 + 2;

    pub fn index(self) -> usize {
        match self {
            Face::Rank(r) => r as usize,
            Face::Joker => 13,
            Face::Letter(l) => 14 + l.index() as usize,
            Face::Star => 40,
            Face::Bang => 41,
        }
    }

    /// Parses a rule-table key. `A`, `J`, `Q`, `K` are ranks on a French
    /// deck and letters on the letter deck, so the deck decides.
    pub fn parse(key: &str, letters: bool) -> Result<Face, CardError> {
        let face = match key {
            "JK" if !letters => Some(Face::Joker),
            "STAR" if letters => Some(Face::Star),
            "BANG" if letters => Some(Face::Bang),
            _ if letters => Letter::from_code(key).map(Face::Letter),
            _ => Rank::from_code(key).map(Face::Rank),
        };
        face.ok_or_else(|| CardError::Face(key.chars().take(16).collect()))
    }
}

impl fmt::Display for Face {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Face::Rank(r) => f.write_str(r.code()),
            Face::Joker => f.write_str("JK"),
            Face::Letter(l) => write!(f, "{l}"),
            Face::Star => f.write_str("STAR"),
            Face::Bang => f.write_str("BANG"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_round_trips() {
        let mut all: Vec<Card> = vec![Card::Joker, Card::Star, Card::Bang];
        for r in Rank::ALL {
            for s in Suit::ALL {
                all.push(Card::French(r, s));
            }
        }
        all.extend(Letter::all().map(Card::Letter));
        for c in all {
            let code = c.to_string();
            assert_eq!(code.parse::<Card>(), Ok(c), "{code}");
        }
    }

    #[test]
    fn api_examples_parse() {
        assert_eq!("AS".parse(), Ok(Card::French(Rank::Ace, Suit::Spades)));
        assert_eq!("10H".parse(), Ok(Card::French(Rank::Ten, Suit::Hearts)));
        assert_eq!("A".parse(), Ok(Card::Letter(Letter(0))));
        assert_eq!("JK".parse(), Ok(Card::Joker));
    }

    #[test]
    fn anything_else_is_refused_with_a_reason() {
        for bad in [
            "", "1H", "11S", "10", "HS1", "ah", "as", "AX", "JKS", "star", "É", "10HH", "0S", " AS",
        ] {
            let err = bad.parse::<Card>().unwrap_err();
            assert!(err.to_string().contains("unknown card"), "{bad}: {err}");
        }
    }

    #[test]
    fn circular_alphabet_wraps_around() {
        let x: Letter = "X".parse().unwrap();
        let a: Letter = "A".parse().unwrap();
        let b: Letter = "B".parse().unwrap();
        assert_eq!(x.circular_distance(a), 3);
        assert_eq!(x.circular_distance(b), 4);
    }

    #[test]
    fn faces_depend_on_the_deck() {
        assert_eq!(Face::parse("A", false), Ok(Face::Rank(Rank::Ace)));
        assert_eq!(Face::parse("A", true), Ok(Face::Letter(Letter(0))));
        assert!(Face::parse("JK", true).is_err());
        assert!(Face::parse("STAR", false).is_err());
        assert!(Face::parse("1", false).is_err());
    }
}

/// The schemas of the codes, for the OpenAPI document: strings a client can
/// check before it sends them.
#[cfg(feature = "openapi")]
mod schema {
    use std::borrow::Cow;

    use utoipa::openapi::schema::{ObjectBuilder, Schema, SchemaType, Type};
    use utoipa::openapi::RefOr;
    use utoipa::{PartialSchema, ToSchema};

    use super::{Card, Face, Letter, Suit};

    fn code(description: &str, pattern: &str, example: &str) -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(SchemaType::Type(Type::String))
            .description(Some(description))
            .pattern(Some(pattern))
            .examples([example])
            .into()
    }

    macro_rules! code_schema {
        ($t:ty, $name:literal, $schema:expr) => {
            impl PartialSchema for $t {
                fn schema() -> RefOr<Schema> {
                    $schema
                }
            }
            impl ToSchema for $t {
                fn name() -> Cow<'static, str> {
                    Cow::Borrowed($name)
                }
            }
        };
    }

    code_schema!(
        Card,
        "Card",
        code(
            "A card's code: rank then suit for French cards (`AS`, `10H`, `8D`, `QC`), \
             `JK` a joker, `A`…`Z` a letter of the Amérix deck, `STAR` a star, `BANG` a pétard.",
            "^(([2-9]|10|[JQKA])[CDHS]|JK|[A-Z]|STAR|BANG)$",
            "8H",
        )
    );
    code_schema!(
        Suit,
        "Suit",
        ObjectBuilder::new()
            .schema_type(SchemaType::Type(Type::String))
            .description(Some("A suit: clubs, diamonds, hearts, spades."))
            .enum_values(Some(["C", "D", "H", "S"]))
            .examples(["S"])
            .into()
    );
    code_schema!(
        Letter,
        "Letter",
        code("A letter of the Amérix deck.", "^[A-Z]$", "K")
    );
    code_schema!(
        Face,
        "Face",
        code(
            "What a card is for the rules, whatever its suit: a French rank (`2`…`10`, \
             `J`, `Q`, `K`, `A`), `JK`, a letter `A`…`Z`, `STAR` or `BANG`.",
            "^([2-9]|10|[JQKA]|JK|[A-Z]|STAR|BANG)$",
            "8",
        )
    );
}
