//! The five presets of docs/RULES.md §5, and the options a table may set
//! on them (§5: `target`, `rounds`, `decks`, each preset's own, or any
//! knob by name).

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::card::Rank;
use crate::deck::DeckKind;

use super::*;

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
        match self {
            Preset::Classique => classique(),
            Preset::Moderne => moderne(),
            Preset::Base => base(),
            Preset::Amerix => amerix(),
            Preset::Sept757 => sept_757(),
        }
    }

    /// The preset with a table's options applied (docs/RULES.md §5), validated:
    /// the options of every preset, then the preset's own, then any knob of
    /// [`Rules`] by its name.
    pub fn with_options(self, options: &Map<String, Value>) -> Result<Rules, RulesError> {
        let mut r = self.rules();
        let mut knobs = Map::new();
        for (key, value) in options {
            let option = Given { key, value };
            let applied = option.common(&mut r)?
                || match self {
                    Preset::Classique => option.classique(&mut r)?,
                    Preset::Moderne => option.moderne(&mut r)?,
                    Preset::Base => option.base(&mut r)?,
                    Preset::Amerix | Preset::Sept757 => false,
                };
            if !applied {
                knobs.insert(key.clone(), value.clone());
            }
        }
        if !knobs.is_empty() {
            r = self.with_knobs(&r, knobs)?;
        }
        r.validate()?;
        Ok(r)
    }

    /// `r` with knobs of [`Rules`] set by their names, each checked with a
    /// value of its own type.
    fn with_knobs(self, r: &Rules, knobs: Map<String, Value>) -> Result<Rules, RulesError> {
        let mut all = serde_json::to_value(r).expect("rules serialise");
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
        Ok(serde_json::from_value(all).expect("each knob was checked"))
    }
}

/// One option of a new table, as given. Each preset's options are applied
/// by a method of their own, which says whether the key was one of them.
struct Given<'a> {
    key: &'a str,
    value: &'a Value,
}

impl Given<'_> {
    fn bad(&self, reason: &str) -> RulesError {
        RulesError::BadOption {
            option: self.key.to_owned(),
            reason: reason.to_owned(),
        }
    }

    fn as_bool(&self) -> Result<bool, RulesError> {
        self.value
            .as_bool()
            .ok_or_else(|| self.bad("expected true or false"))
    }

    fn as_str(&self) -> Result<&str, RulesError> {
        self.value
            .as_str()
            .ok_or_else(|| self.bad("expected a string"))
    }

    /// Every preset's: the end's target, the number of rounds, the decks.
    fn common(&self, r: &mut Rules) -> Result<bool, RulesError> {
        let value = self.value;
        match self.key {
            "target" => {
                let t = value
                    .as_i64()
                    .filter(|t| (1..=100_000).contains(t))
                    .ok_or_else(|| self.bad("expected a whole number from 1 to 100000"))?;
                r.end = r.end.with_threshold(t as i32);
            }
            "rounds" => {
                r.rounds =
                    match value {
                        Value::Null => None,
                        v => Some(v.as_u64().filter(|n| (1..=1000).contains(n)).ok_or_else(
                            || self.bad("expected null or a whole number from 1 to 1000"),
                        )? as u32),
                    }
            }
            "decks" if value.is_number() => {
                let n = value
                    .as_u64()
                    .filter(|n| (1..=8).contains(n))
                    .ok_or_else(|| self.bad("expected a whole number of decks from 1 to 8"))?;
                r.decks = Decks::Fixed(n as u32);
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Classique's: jokers, tens replay, sevens skip.
    fn classique(&self, r: &mut Rules) -> Result<bool, RulesError> {
        match self.key {
            "jokers" => {
                if self.as_bool()? {
                    r.deck = DeckKind::French54;
                    r.effects.insert("JK".into(), Effect::DrawSkip(4));
                } else {
                    r.deck = DeckKind::French52;
                    r.effects.remove("JK");
                }
            }
            "tens_replay" => toggle(&mut r.effects, "10", Effect::MustReplay(2), self.as_bool()?),
            "sevens_skip" => toggle(&mut r.effects, "7", Effect::Skip, self.as_bool()?),
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Moderne's: stacking, the joker counter, the special finish, the ace
    /// between two players.
    fn moderne(&self, r: &mut Rules) -> Result<bool, RulesError> {
        match self.key {
            "stacking" => {
                r.stacking = serde_json::from_value(self.value.clone())
                    .map_err(|_| self.bad("expected \"none\" or \"draw_cards\""))?
            }
            "joker_counter" => r.joker_counter = self.as_bool()?,
            "special_finish" => r.special_finish = self.as_bool()?,
            "two_player_ace" => {
                r.two_player_reverse = match self.as_str()? {
                    "skip" => TwoPlayerReverse::Skip,
                    "none" => TwoPlayerReverse::None,
                    _ => return Err(self.bad("expected \"skip\" or \"none\"")),
                }
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Base's: the deck, the scoring, the effects.
    fn base(&self, r: &mut Rules) -> Result<bool, RulesError> {
        match self.key {
            "deck" => match self.as_str()? {
                "french52" => {
                    r.deck = DeckKind::French52;
                    r.players.max = 8;
                }
                "french32" => {
                    r.deck = DeckKind::French32;
                    r.players.max = 5;
                }
                _ => return Err(self.bad("expected \"french52\" or \"french32\"")),
            },
            "scoring" => match self.as_str()? {
                "negative" => {
                    r.points = Points::ByEffect;
                    r.scoring = Scoring::HandPoints(HandPoints { finisher_bonus: 0 });
                    r.end = End::LowestWinsAbove(r.end.threshold());
                }
                "positive" => {
                    r.points = Points::ByEffect;
                    r.scoring = Scoring::Placement(Placement {
                        awards: vec![50, 20, 10],
                    });
                    r.end = End::HighestWinsAbove(r.end.threshold());
                }
                _ => return Err(self.bad("expected \"negative\" or \"positive\"")),
            },
            "effects" => {
                r.effects = serde_json::from_value(self.value.clone()).map_err(|e| {
                    self.bad(&format!(
                        "expected an object rank → effect, e.g. {{\"8\": \"wild_suit\", \"2\": {{\"draw_skip\": 2}}}} ({e})"
                    ))
                })?
            }
            _ => return Ok(false),
        }
        Ok(true)
    }
}

/// The options a new table may take (docs/RULES.md §5), as
/// [`Preset::with_options`] reads them: a schema for clients. Any other knob
/// of [`Rules`] may also be set by its name, with a value of its own type.
#[cfg(feature = "openapi")]
#[derive(Debug, utoipa::ToSchema)]
#[schema(example = json!({"target": 300, "jokers": true}))]
#[allow(dead_code)]
pub struct TableOptions {
    /// Every preset: the end threshold, 1 to 100000.
    #[schema(minimum = 1, maximum = 100_000)]
    target: Option<i64>,
    /// Every preset: a fixed number of rounds, 1 to 1000 (null: play to the
    /// threshold).
    #[schema(minimum = 1, maximum = 1000)]
    rounds: Option<u32>,
    /// Every preset: how many decks, 1 to 8.
    #[schema(minimum = 1, maximum = 8)]
    decks: Option<u32>,
    /// `classique`: play with the two jokers (draw 4).
    jokers: Option<bool>,
    /// `classique`: a ten must be covered (or draw 2).
    tens_replay: Option<bool>,
    /// `classique`: a seven skips the next player.
    sevens_skip: Option<bool>,
    /// `moderne`: draw cards answer draw cards.
    stacking: Option<Stacking>,
    /// `moderne`: a joker answers an attack.
    joker_counter: Option<bool>,
    /// `moderne`: a special card may not be the last one.
    special_finish: Option<bool>,
    /// `moderne`: with two players an ace lets its player play again (`skip`)
    /// or does nothing (`none`).
    two_player_ace: Option<TwoPlayerReverse>,
    /// `base`: `french52` or `french32`.
    #[schema(pattern = "^(french52|french32)$")]
    deck: Option<String>,
    /// `base`: `negative` or `positive` scoring.
    #[schema(pattern = "^(negative|positive)$")]
    scoring: Option<String>,
    /// `base`: face → effect, replacing the preset's.
    effects: Option<BTreeMap<String, Effect>>,
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
    Points::Table(PointsTable(t))
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
    Points::Table(PointsTable(t))
}

/// Rank (or letter) → effect, as the rules hold them.
fn effects(pairs: &[(&str, Effect)]) -> BTreeMap<String, Effect> {
    pairs.iter().map(|(k, e)| (k.to_string(), *e)).collect()
}

/// `Classique`'s rules, every option at its default.
fn classique() -> Rules {
    use Effect::*;
    Rules {
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
        scoring: Scoring::HandPoints(HandPoints { finisher_bonus: 0 }),
        end: End::LowestWinsAt(500),
        rounds: None,
    }
}

/// `Moderne`'s rules, every option at its default.
fn moderne() -> Rules {
    use Effect::*;
    Rules {
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
        scoring: Scoring::HandPoints(HandPoints { finisher_bonus: 0 }),
        end: End::LowestWinsAt(500),
        rounds: None,
    }
}

/// `Base`'s rules, every option at its default.
fn base() -> Rules {
    Rules {
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
        scoring: Scoring::HandPoints(HandPoints { finisher_bonus: 0 }),
        end: End::LowestWinsAbove(100),
        rounds: None,
    }
}

/// `Amerix`'s rules, every option at its default.
fn amerix() -> Rules {
    use Effect::*;
    Rules {
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
        scoring: Scoring::HandPoints(HandPoints { finisher_bonus: 0 }),
        end: End::LowestWinsAt(300),
        rounds: None,
    }
}

/// `757`'s rules, every option at its default.
fn sept_757() -> Rules {
    use Effect::*;
    Rules {
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
        scoring: Scoring::HandPoints(HandPoints {
            finisher_bonus: -10,
        }),
        end: End::ReacherLosesAt(151),
        rounds: None,
    }
}
