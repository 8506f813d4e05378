//! The knobs of docs/RULES.md §3, the five presets of §5 and their options, and the
//! validation that refuses impossible combinations.
//!
//! `Rules` is the one description of a game; presets are constructors of it.
//! `Book` is the same rules compiled into per-face tables for the engine.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::card::{Card, CardSet, Face, Letter, Rank, Suit};
use crate::deck::DeckKind;
use crate::event::Target;

/// Every knob of docs/RULES.md §3.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rules {
    pub deck: DeckKind,
    pub decks: Decks,
    pub players: Players,
    pub deal: Deal,
    pub starter: Starter,
    pub draw: DrawRule,
    pub voluntary_draw: bool,
    /// Face (`8`, `A`, `JK`, `X`, `STAR`, …) → effect.
    pub effects: BTreeMap<String, Effect>,
    /// Faces on which a `wild_suit` card may not be played (S0: an 8 not on a 2).
    pub wild_not_on: Vec<String>,
    pub stacking: Stacking,
    pub joker_counter: bool,
    pub special_finish: bool,
    pub two_player_reverse: TwoPlayerReverse,
    pub announce: Announce,
    pub points: Points,
    pub scoring: Scoring,
    pub end: End,
    /// A fixed number of rounds instead of the end threshold.
    pub rounds: Option<u32>,
}

/// How many decks are shuffled together.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decks {
    Fixed(u32),
    /// One deck per this many players, rounded up (S4: ceil(players/6)).
    PerPlayers(u32),
}

impl Decks {
    pub fn count(&self, players: usize) -> u32 {
        match *self {
            Decks::Fixed(n) => n,
            Decks::PerPlayers(k) => (players as u32).div_ceil(k.max(1)),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Players {
    pub min: usize,
    pub max: usize,
}

/// The number of cards dealt to each seat.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Deal {
    Fixed(usize),
    /// `[from_players, cards]` pairs: the last pair whose `from_players` is at
    /// most the number of players applies (S2: `[[2,10],[3,8],[4,6]]`).
    ByPlayers(Vec<(usize, usize)>),
}

impl Deal {
    pub fn cards(&self, players: usize) -> usize {
        match self {
            Deal::Fixed(n) => *n,
            Deal::ByPlayers(steps) => steps
                .iter()
                .rev()
                .find(|(from, _)| *from <= players)
                .map(|(_, n)| *n)
                .unwrap_or(0),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Starter {
    /// S0, S1, D9: a special starter goes back into the stock.
    RedrawSpecial,
    /// S4 §5, D10: the starter acts as if the dealer had played it.
    ApplyEffect,
    /// S3, D20: a pétard starter penalises the first player and is covered.
    Letters,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DrawRule {
    /// Draw one; play it now if legal, else keep it and the turn ends (D27).
    DrawThenMayPlay,
    /// S2: drawing ends the turn.
    DrawEndsTurn,
}

/// The catalogue of effects (docs/RULES.md §3.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Effect {
    WildSuit,
    DrawSkip(u32),
    AttackChain(u32),
    Freeze,
    Skip,
    Reverse,
    PassAcross,
    MustReplay(u32),
    MayReplay,
    Substitute,
    WildLetter,
    Firecracker(u32),
}

impl Effect {
    /// §3.5: making others draw or changing the suit (or letter) is strong.
    pub fn is_strong(self) -> bool {
        matches!(
            self,
            Effect::WildSuit
                | Effect::WildLetter
                | Effect::DrawSkip(_)
                | Effect::AttackChain(_)
                | Effect::Freeze
                | Effect::Firecracker(_)
                | Effect::Substitute
        )
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stacking {
    None,
    /// D25: a 2 or joker answers a pending 2 or joker and passes the sum on.
    DrawCards,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TwoPlayerReverse {
    /// With two players a reversal does nothing (S0 jacks, D6).
    None,
    /// With two players the one who reversed plays again (S1 aces D7, S3 X).
    Skip,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Announce {
    pub word: String,
    pub penalty: u32,
    pub penalty_skips_turn: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Points {
    /// S2 negative: strong effect 50, other effect 20, face card 10, else face value, ace 1.
    ByEffect,
    /// Face → points; every face of the deck must be listed.
    Table(BTreeMap<String, i32>),
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scoring {
    /// Everyone but the finisher scores the points in hand; the finisher
    /// scores the bonus (S4: −10).
    HandPoints { finisher_bonus: i32 },
    /// S2 positive: points by order of going out (D17).
    Placement { awards: Vec<i32> },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum End {
    /// Ends when a total reaches T; lowest total wins (S1, S3).
    LowestWinsAt(i32),
    /// Ends when a total passes T; lowest total wins (S2 negative).
    LowestWinsAbove(i32),
    /// Ends when a total reaches T; those players lose (S4, D16).
    ReacherLosesAt(i32),
    /// Ends when a total passes T; highest total wins (S2 positive, D17).
    HighestWinsAbove(i32),
}

impl End {
    pub fn threshold(self) -> i32 {
        match self {
            End::LowestWinsAt(t)
            | End::LowestWinsAbove(t)
            | End::ReacherLosesAt(t)
            | End::HighestWinsAbove(t) => t,
        }
    }

    fn with_threshold(self, t: i32) -> End {
        match self {
            End::LowestWinsAt(_) => End::LowestWinsAt(t),
            End::LowestWinsAbove(_) => End::LowestWinsAbove(t),
            End::ReacherLosesAt(_) => End::ReacherLosesAt(t),
            End::HighestWinsAbove(_) => End::HighestWinsAbove(t),
        }
    }

    /// Does this total end the game?
    pub fn is_reached_by(self, total: i32) -> bool {
        match self {
            End::LowestWinsAt(t) | End::ReacherLosesAt(t) => total >= t,
            End::LowestWinsAbove(t) | End::HighestWinsAbove(t) => total > t,
        }
    }

    pub fn highest_wins(self) -> bool {
        matches!(self, End::HighestWinsAbove(_))
    }
}

/// Why a set of rules or options is refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RulesError {
    #[error("unknown ruleset {0:?}: expected one of classique, moderne, base, amerix, 757")]
    UnknownPreset(String),
    #[error("unknown option {option:?} for ruleset {preset}")]
    UnknownOption { preset: String, option: String },
    #[error("option {option:?}: {reason}")]
    BadOption { option: String, reason: String },
    #[error("{0}")]
    Invalid(String),
}

fn invalid<T>(reason: impl Into<String>) -> Result<T, RulesError> {
    Err(RulesError::Invalid(reason.into()))
}

/// The five presets of docs/RULES.md §5.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Preset {
    Classique,
    Moderne,
    Base,
    Amerix,
    Sept757,
}

impl Preset {
    pub const ALL: [Preset; 5] = [
        Preset::Classique,
        Preset::Moderne,
        Preset::Base,
        Preset::Amerix,
        Preset::Sept757,
    ];

    pub fn id(self) -> &'static str {
        match self {
            Preset::Classique => "classique",
            Preset::Moderne => "moderne",
            Preset::Base => "base",
            Preset::Amerix => "amerix",
            Preset::Sept757 => "757",
        }
    }

    pub fn from_id(id: &str) -> Result<Preset, RulesError> {
        Preset::ALL
            .into_iter()
            .find(|p| p.id() == id)
            .ok_or_else(|| RulesError::UnknownPreset(id.chars().take(32).collect()))
    }

    pub fn name(self) -> &'static str {
        match self {
            Preset::Classique => "8 américain classique",
            Preset::Moderne => "8 américain moderne",
            Preset::Base => "8 américain de base",
            Preset::Amerix => "Amérix",
            Preset::Sept757 => "Le 757",
        }
    }

    pub fn description(self) -> &'static str {
        match self {
            Preset::Classique => "Classic rules (S0): 8 wild but not on a 2, aces attack (2 per ace, an 8 cancels), 2 makes the next draw 2, jacks reverse. Options: jokers, tens replay, sevens skip.",
            Preset::Moderne => "Modern Uno-like rules (S1): 8 wild, joker +4, 2 +2, jack skips, ace reverses. Options: stacking, joker counter, special finish, two-player ace.",
            Preset::Base => "Base rules shared by all variants (S2): drawing ends the turn, deal by player count, effects attached to any rank, negative or positive (placement) scoring.",
            Preset::Amerix => "Amérix (S3): a 100-card letter deck; play a letter within 3 of the top one on a circular alphabet, or any vowel on a vowel; étoile wild, pétard +2, X reverses.",
            Preset::Sept757 => "The 757 (S4): 2–18 players with 54-card decks, 5 cards each; 2 +2, 6 passes across, 8 wild, 10 reverses, queen may replay, aces freeze, jokers stand for any card; reaching 151 loses.",
        }
    }

    /// The preset with every option at its default.
    pub fn rules(self) -> Rules {
        use Effect::*;
        let effects = |pairs: &[(&str, Effect)]| {
            pairs
                .iter()
                .map(|(k, e)| (k.to_string(), *e))
                .collect::<BTreeMap<_, _>>()
        };
        match self {
            Preset::Classique => Rules {
                deck: DeckKind::French52,
                decks: Decks::PerPlayers(5),
                players: Players { min: 2, max: 10 },
                deal: Deal::Fixed(7),
                starter: Starter::RedrawSpecial,
                draw: DrawRule::DrawThenMayPlay,
                voluntary_draw: false,
                effects: effects(&[
                    ("8", WildSuit),
                    ("2", DrawSkip(2)),
                    ("A", AttackChain(2)),
                    ("J", Reverse),
                ]),
                wild_not_on: vec!["2".into()],
                stacking: Stacking::None,
                joker_counter: false,
                special_finish: true,
                two_player_reverse: TwoPlayerReverse::None,
                announce: announce("Carte !", 2, false),
                points: french_points(&[("8", 50), ("JK", 50), ("A", 25), ("J", 25), ("2", 25)]),
                scoring: Scoring::HandPoints { finisher_bonus: 0 },
                end: End::LowestWinsAt(500),
                rounds: None,
            },
            Preset::Moderne => Rules {
                deck: DeckKind::French54,
                decks: Decks::Fixed(1),
                players: Players { min: 2, max: 5 },
                deal: Deal::Fixed(7),
                starter: Starter::RedrawSpecial,
                draw: DrawRule::DrawThenMayPlay,
                voluntary_draw: false,
                effects: effects(&[
                    ("8", WildSuit),
                    ("JK", DrawSkip(4)),
                    ("2", DrawSkip(2)),
                    ("J", Skip),
                    ("A", Reverse),
                ]),
                wild_not_on: vec![],
                stacking: Stacking::None,
                joker_counter: false,
                special_finish: true,
                two_player_reverse: TwoPlayerReverse::Skip,
                announce: announce("Carte !", 2, false),
                points: french_points(&[("8", 50), ("JK", 50), ("J", 20), ("A", 20), ("2", 20)]),
                scoring: Scoring::HandPoints { finisher_bonus: 0 },
                end: End::LowestWinsAt(500),
                rounds: None,
            },
            Preset::Base => Rules {
                deck: DeckKind::French52,
                decks: Decks::Fixed(1),
                players: Players { min: 2, max: 8 },
                deal: Deal::ByPlayers(vec![(2, 10), (3, 8), (4, 6)]),
                starter: Starter::RedrawSpecial,
                draw: DrawRule::DrawEndsTurn,
                voluntary_draw: false,
                effects: BTreeMap::new(),
                wild_not_on: vec![],
                stacking: Stacking::None,
                joker_counter: false,
                special_finish: true,
                two_player_reverse: TwoPlayerReverse::None,
                announce: announce("Carte !", 2, false),
                points: Points::ByEffect,
                scoring: Scoring::HandPoints { finisher_bonus: 0 },
                end: End::LowestWinsAbove(100),
                rounds: None,
            },
            Preset::Amerix => Rules {
                deck: DeckKind::Letters100,
                decks: Decks::Fixed(1),
                players: Players { min: 2, max: 8 },
                deal: Deal::Fixed(7),
                starter: Starter::Letters,
                draw: DrawRule::DrawThenMayPlay,
                voluntary_draw: false,
                effects: effects(&[
                    ("STAR", WildLetter),
                    ("BANG", Firecracker(2)),
                    ("X", Reverse),
                ]),
                wild_not_on: vec![],
                stacking: Stacking::None,
                joker_counter: false,
                special_finish: true,
                two_player_reverse: TwoPlayerReverse::Skip,
                announce: announce("Toutilix !", 2, true),
                points: letter_points(),
                scoring: Scoring::HandPoints { finisher_bonus: 0 },
                end: End::LowestWinsAt(300),
                rounds: None,
            },
            Preset::Sept757 => Rules {
                deck: DeckKind::French54,
                decks: Decks::PerPlayers(6),
                players: Players { min: 2, max: 18 },
                deal: Deal::Fixed(5),
                starter: Starter::ApplyEffect,
                draw: DrawRule::DrawThenMayPlay,
                voluntary_draw: true,
                effects: effects(&[
                    ("2", DrawSkip(2)),
                    ("6", PassAcross),
                    ("8", WildSuit),
                    ("10", Reverse),
                    ("Q", MayReplay),
                    ("A", Freeze),
                    ("JK", Substitute),
                ]),
                wild_not_on: vec![],
                stacking: Stacking::None,
                joker_counter: false,
                special_finish: true,
                two_player_reverse: TwoPlayerReverse::None,
                announce: announce("CARTE", 1, false),
                points: french_points(&[("JK", 150), ("8", 32), ("A", 11)]),
                scoring: Scoring::HandPoints {
                    finisher_bonus: -10,
                },
                end: End::ReacherLosesAt(151),
                rounds: None,
            },
        }
    }

    /// The preset with a table's options applied (docs/RULES.md §5), validated.
    pub fn with_options(self, options: &Map<String, Value>) -> Result<Rules, RulesError> {
        let mut r = self.rules();
        let mut knobs = Map::new();
        for (key, value) in options {
            let bad = |reason: &str| RulesError::BadOption {
                option: key.clone(),
                reason: reason.to_owned(),
            };
            let as_bool = || value.as_bool().ok_or_else(|| bad("expected true or false"));
            let as_str = || value.as_str().ok_or_else(|| bad("expected a string"));
            match (self, key.as_str()) {
                (_, "target") => {
                    let t = value
                        .as_i64()
                        .filter(|t| (1..=100_000).contains(t))
                        .ok_or_else(|| bad("expected a whole number from 1 to 100000"))?;
                    r.end = r.end.with_threshold(t as i32);
                }
                (_, "rounds") => {
                    r.rounds = match value {
                        Value::Null => None,
                        v => Some(
                            v.as_u64()
                                .filter(|n| (1..=1000).contains(n))
                                .ok_or_else(|| bad("expected null or a whole number from 1 to 1000"))?
                                as u32,
                        ),
                    }
                }
                (_, "decks") if value.is_number() => {
                    let n = value
                        .as_u64()
                        .filter(|n| (1..=8).contains(n))
                        .ok_or_else(|| bad("expected a whole number of decks from 1 to 8"))?;
                    r.decks = Decks::Fixed(n as u32);
                }
                (Preset::Classique, "jokers") => {
                    if as_bool()? {
                        r.deck = DeckKind::French54;
                        r.effects.insert("JK".into(), Effect::DrawSkip(4));
                    } else {
                        r.deck = DeckKind::French52;
                        r.effects.remove("JK");
                    }
                }
                (Preset::Classique, "tens_replay") => {
                    toggle(&mut r.effects, "10", Effect::MustReplay(2), as_bool()?)
                }
                (Preset::Classique, "sevens_skip") => {
                    toggle(&mut r.effects, "7", Effect::Skip, as_bool()?)
                }
                (Preset::Moderne, "stacking") => {
                    r.stacking = serde_json::from_value(value.clone())
                        .map_err(|_| bad("expected \"none\" or \"draw_cards\""))?
                }
                (Preset::Moderne, "joker_counter") => r.joker_counter = as_bool()?,
                (Preset::Moderne, "special_finish") => r.special_finish = as_bool()?,
                (Preset::Moderne, "two_player_ace") => {
                    r.two_player_reverse = match as_str()? {
                        "skip" => TwoPlayerReverse::Skip,
                        "none" => TwoPlayerReverse::None,
                        _ => return Err(bad("expected \"skip\" or \"none\"")),
                    }
                }
                (Preset::Base, "deck") => match as_str()? {
                    "french52" => {
                        r.deck = DeckKind::French52;
                        r.players.max = 8;
                    }
                    "french32" => {
                        r.deck = DeckKind::French32;
                        r.players.max = 5;
                    }
                    _ => return Err(bad("expected \"french52\" or \"french32\"")),
                },
                (Preset::Base, "scoring") => match as_str()? {
                    "negative" => {
                        r.points = Points::ByEffect;
                        r.scoring = Scoring::HandPoints { finisher_bonus: 0 };
                        r.end = End::LowestWinsAbove(r.end.threshold());
                    }
                    "positive" => {
                        r.points = Points::ByEffect;
                        r.scoring = Scoring::Placement {
                            awards: vec![50, 20, 10],
                        };
                        r.end = End::HighestWinsAbove(r.end.threshold());
                    }
                    _ => return Err(bad("expected \"negative\" or \"positive\"")),
                },
                (Preset::Base, "effects") => {
                    r.effects = serde_json::from_value(value.clone()).map_err(|e| {
                        bad(&format!(
                            "expected an object rank → effect, e.g. {{\"8\": \"wild_suit\", \"2\": {{\"draw_skip\": 2}}}} ({e})"
                        ))
                    })?
                }
                _ => {
                    knobs.insert(key.clone(), value.clone());
                }
            }
        }
        if !knobs.is_empty() {
            let mut all = serde_json::to_value(&r).expect("rules serialise");
            let obj = all.as_object_mut().expect("rules are an object");
            for (key, value) in knobs {
                if !obj.contains_key(&key) {
                    return Err(RulesError::UnknownOption {
                        preset: self.id().to_owned(),
                        option: key.chars().take(64).collect(),
                    });
                }
                let check: Result<Rules, _> = {
                    let mut probe = obj.clone();
                    probe.insert(key.clone(), value.clone());
                    serde_json::from_value(Value::Object(probe))
                };
                if let Err(e) = check {
                    return Err(RulesError::BadOption {
                        option: key,
                        reason: e.to_string(),
                    });
                }
                obj.insert(key, value);
            }
            r = serde_json::from_value(all).expect("each knob was checked");
        }
        r.validate()?;
        Ok(r)
    }
}

fn toggle(effects: &mut BTreeMap<String, Effect>, face: &str, effect: Effect, on: bool) {
    if on {
        effects.insert(face.into(), effect);
    } else {
        effects.remove(face);
    }
}

fn announce(word: &str, penalty: u32, penalty_skips_turn: bool) -> Announce {
    Announce {
        word: word.into(),
        penalty,
        penalty_skips_turn,
    }
}

/// French points: the listed faces, Q and K 10 unless listed, J 10 unless
/// listed, every other number its face value, the ace 1 unless listed.
fn french_points(special: &[(&str, i32)]) -> Points {
    let mut t: BTreeMap<String, i32> = BTreeMap::new();
    for r in Rank::ALL {
        let v = r
            .face_value()
            .unwrap_or(if r == Rank::Ace { 1 } else { 10 });
        t.insert(r.code().into(), v);
    }
    t.insert("JK".into(), 50);
    for (k, v) in special {
        t.insert((*k).into(), *v);
    }
    Points::Table(t)
}

/// §4: Y 70; W, X, Z 50; vowels but Y 20; pétard 10; étoile 10; others 5.
fn letter_points() -> Points {
    let mut t = BTreeMap::new();
    for l in crate::card::Letter::all() {
        let v = match l.char() {
            'Y' => 70,
            'W' | 'X' | 'Z' => 50,
            _ if l.is_vowel() => 20,
            _ => 5,
        };
        t.insert(l.to_string(), v);
    }
    t.insert("STAR".into(), 10);
    t.insert("BANG".into(), 10);
    Points::Table(t)
}

/// The most seats a table may have.
pub const MAX_SEATS: usize = 64;

impl Rules {
    /// Refuses impossible combinations with a reason (docs/RULES.md §3).
    pub fn validate(&self) -> Result<(), RulesError> {
        self.compile().map(|_| ())
    }

    /// Compiles the rules into per-face tables, refusing what cannot work.
    pub fn compile(&self) -> Result<Book, RulesError> {
        let letters = self.deck.is_letters();
        let deck_has = |f: Face| self.deck.has(f);
        let face = |key: &str| -> Result<Face, RulesError> {
            let f = Face::parse(key, letters).map_err(|e| RulesError::Invalid(e.to_string()))?;
            if !deck_has(f) {
                return invalid(format!("the {} deck has no card {key:?}", self.deck.id()));
            }
            Ok(f)
        };
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
        for (key, effect) in &self.effects {
            let f = face(key)?;
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
            book.wild_not_on[face(key)?.index()] = true;
        }
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
        if self.starter == Starter::Letters && !letters {
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
        match &self.points {
            Points::ByEffect => {
                for c in self.deck.cards() {
                    let f = c.face();
                    book.points[f.index()] = by_effect_points(f, book.effect[f.index()]);
                }
            }
            Points::Table(t) => {
                for (key, v) in t {
                    if !(-1000..=1000).contains(v) {
                        return invalid(format!("points for {key:?} must be -1000 to 1000"));
                    }
                    // A table may price faces the deck lacks (the classique
                    // joker when jokers are off); effects may not.
                    let f = Face::parse(key, letters)
                        .map_err(|e| RulesError::Invalid(e.to_string()))?;
                    book.points[f.index()] = *v;
                }
                let mut priced = [false; Face::COUNT];
                for key in t.keys() {
                    if let Ok(f) = Face::parse(key, letters) {
                        priced[f.index()] = true;
                    }
                }
                if let Some(missing) = self
                    .deck
                    .distinct_cards()
                    .iter()
                    .find(|c| !priced[c.face().index()])
                {
                    return invalid(format!(
                        "the points table has no value for {}",
                        missing.face()
                    ));
                }
            }
        }
        match &self.scoring {
            Scoring::Placement { awards } if awards.is_empty() || awards.len() > 3 => {
                return invalid("placement awards must list 1 to 3 values");
            }
            Scoring::HandPoints { finisher_bonus } if !(-1000..=1000).contains(finisher_bonus) => {
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
        book.plays = Plays::of(self.deck, &book);
        Ok(book)
    }

    pub fn is_placement(&self) -> bool {
        matches!(self.scoring, Scoring::Placement { .. })
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
