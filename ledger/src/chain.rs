//! The event log's canonical JSON and hash chain (pure, no I/O).
//!
//! For the event at `seq`:
//!
//! ```text
//! hash = hex(SHA-256(prev_hash || canonical_json({"seq", "type", "v", "at", "data"})))
//! ```
//!
//! where `prev_hash` is the previous event's `hash` (64 lowercase hex digits,
//! as ASCII) and, for `seq = 1`, 64 zeros. Canonical JSON is defined in
//! [`canonical_json`]; `at` is [`format_at`]. The README repeats this.

use std::fmt::Write as _;

use chrono::{DateTime, SecondsFormat, SubsecRound, Utc};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// The `prev_hash` of the first event of every table.
pub const GENESIS_PREV_HASH: &str =
    "0000000000000000000000000000000000000000000000000000000000000000";

/// An instant as stored and hashed: microsecond precision (PostgreSQL's
/// `timestamptz` precision), so what is read back is what was hashed.
pub fn truncate_at(at: DateTime<Utc>) -> DateTime<Utc> {
    at.trunc_subsecs(6)
}

/// `at` as written in the log and hashed: RFC 3339 in UTC, always six
/// fractional digits and a `Z`: `2025-01-31T18:04:05.123456Z`. Written by
/// chrono's RFC 3339 writer, the text of the format string
/// `%Y-%m-%dT%H:%M:%S%.6fZ` (which the log was first written with) for any
/// year from 1 to 9999, in a fifth of its time: every event's hash writes one.
pub fn format_at(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Micros, true)
}

/// Canonical JSON of a value: the JSON Canonicalization Scheme, RFC 8785,
/// which a stock library in any language reproduces:
///
/// - no whitespace at all;
/// - object members sorted by key, comparing the keys as arrays of UTF-16
///   code units (RFC 8785 §3.2.3; this differs from UTF-8 byte order only
///   for a key holding a character beyond U+FFFF against one of U+E000 to
///   U+FFFF), at every depth; array order is kept;
/// - strings: UTF-8, with only `"` `\` and the control characters
///   U+0000–U+001F escaped: `\"` `\\` `\b` `\f` `\n` `\r` `\t`, others as
///   `\u00XX` with lowercase hex; everything else (including `/`, U+007F
///   and non-ASCII) is written as is;
/// - numbers: as ECMAScript prints the IEEE 754 double they denote
///   (RFC 8785 §3.2.2.3): an integer of at most 2^53 in magnitude in plain
///   decimal (`-12`, `0`), others in ECMAScript's shortest form (`4.5`,
///   `1e+30`, `0.002`). Event data holds small integers only;
/// - `true`, `false`, `null` as such.
pub fn canonical_json(value: &Value) -> String {
    let mut out = String::new();
    write_canonical(&mut out, value);
    out
}

fn write_canonical(out: &mut String, value: &Value) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => write_number(out, n),
        Value::String(s) => write_string(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(out, item);
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_unstable_by(|a, b| a.0.encode_utf16().cmp(b.0.encode_utf16()));
            out.push('{');
            for (i, (key, item)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(out, key);
                out.push(':');
                write_canonical(out, item);
            }
            out.push('}');
        }
    }
}

/// The largest integer every smaller one of which a double holds exactly.
const EXACT_INTEGERS: u64 = 1 << 53;

/// A number as ECMAScript's `Number.prototype.toString` prints its double.
fn write_number(out: &mut String, n: &serde_json::Number) {
    match (n.as_i64(), n.as_f64()) {
        (Some(i), _) if i.unsigned_abs() <= EXACT_INTEGERS => {
            let _ = write!(out, "{i}");
        }
        (_, Some(f)) if f.is_finite() => out.push_str(ryu_js::Buffer::new().format_finite(f)),
        // Not a double (serde_json parses none such): as serde_json prints it.
        _ => {
            let _ = write!(out, "{n}");
        }
    }
}

/// An integer of the hashed document (`seq`, `v`), as [`write_number`].
fn write_integer(out: &mut String, i: i64) {
    write_number(out, &serde_json::Number::from(i));
}

fn write_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{08}' => out.push_str("\\b"),
            '\u{0c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// The hashed document of an event: `{"at":…,"data":…,"seq":…,"type":…,"v":…}`,
/// the canonical JSON of that object, written directly (its keys are in
/// order) rather than through a copy of `data`.
pub fn hashed_document(seq: i64, kind: &str, v: i32, at: &str, data: &Value) -> String {
    let mut out = String::with_capacity(128);
    out.push_str(r#"{"at":"#);
    write_string(&mut out, at);
    out.push_str(r#","data":"#);
    write_canonical(&mut out, data);
    out.push_str(r#","seq":"#);
    write_integer(&mut out, seq);
    out.push_str(r#","type":"#);
    write_string(&mut out, kind);
    out.push_str(r#","v":"#);
    write_integer(&mut out, i64::from(v));
    out.push('}');
    out
}

/// The `hash` of an event.
pub fn event_hash(prev_hash: &str, seq: i64, kind: &str, v: i32, at: &str, data: &Value) -> String {
    let mut hasher = Sha256::new();
    hasher.update(prev_hash.as_bytes());
    hasher.update(hashed_document(seq, kind, v, at, data).as_bytes());
    hex::encode(hasher.finalize())
}

/// The `hash` of an event given as an exported line's JSON object
/// (`{seq, type, v, at, data, …}`) after `prev_hash`, its `at` taken as
/// written; `None` when one of those fields is missing or of another type.
pub fn line_hash(prev_hash: &str, line: &Value) -> Option<String> {
    let v = i32::try_from(line["v"].as_i64()?).ok()?;
    Some(event_hash(
        prev_hash,
        line["seq"].as_i64()?,
        line["type"].as_str()?,
        v,
        line["at"].as_str()?,
        line.get("data")?,
    ))
}

/// What [`verify_chain`] found wrong, at which `seq`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChainError {
    #[error("event {seq}: expected seq {expected}")]
    Gap { seq: i64, expected: i64 },
    #[error("event {seq}: prev_hash does not match the previous event's hash")]
    PrevHashMismatch { seq: i64 },
    #[error("event {seq}: hash does not match its content")]
    HashMismatch { seq: i64 },
}

/// The fields of a logged event that the chain covers.
pub trait ChainedEvent {
    fn seq(&self) -> i64;
    fn kind(&self) -> &str;
    fn v(&self) -> i32;
    fn at(&self) -> String;
    fn data(&self) -> &Value;
    fn prev_hash(&self) -> &str;
    fn hash(&self) -> &str;
}

/// Checks a whole log from seq 1: consecutive seqs, each `prev_hash` equal to
/// the previous `hash` (64 zeros first), each `hash` recomputed.
pub fn verify_chain<E: ChainedEvent>(events: &[E]) -> Result<(), ChainError> {
    let mut prev = GENESIS_PREV_HASH.to_owned();
    for (i, e) in events.iter().enumerate() {
        let expected = i as i64 + 1;
        if e.seq() != expected {
            return Err(ChainError::Gap {
                seq: e.seq(),
                expected,
            });
        }
        if e.prev_hash() != prev {
            return Err(ChainError::PrevHashMismatch { seq: e.seq() });
        }
        let recomputed = event_hash(&prev, e.seq(), e.kind(), e.v(), &e.at(), e.data());
        if recomputed != e.hash() {
            return Err(ChainError::HashMismatch { seq: e.seq() });
        }
        prev = recomputed;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;
    use serde_json::json;

    #[test]
    fn canonical_json_sorts_keys_recursively_without_whitespace() {
        let v = json!({"b": 1, "a": {"d": [3, {"z": null, "y": true}], "c": "x"}});
        assert_eq!(
            canonical_json(&v),
            r#"{"a":{"c":"x","d":[3,{"y":true,"z":null}]},"b":1}"#
        );
    }

    #[test]
    fn canonical_json_escapes_only_quote_backslash_and_controls() {
        let v = json!("é/\"\\\n\u{1}");
        assert_eq!(canonical_json(&v), "\"é/\\\"\\\\\\n\\u0001\"");
    }

    #[test]
    fn canonical_json_orders_keys_by_utf16_code_units() {
        let v = json!({"é": 1, "z": 2, "Z": 3, "10": 4, "9": 5});
        assert_eq!(canonical_json(&v), r#"{"10":4,"9":5,"Z":3,"z":2,"é":1}"#);
        // Where UTF-16 and UTF-8 (code point) orders part: U+1F600 is the
        // surrogates D83D DE00 in UTF-16, before U+FB33; in UTF-8 (F0…)
        // after it (EF…).
        let v = json!({"\u{fb33}": 1, "\u{1f600}": 2, "\u{e000}": 3});
        assert_eq!(
            canonical_json(&v),
            "{\"\u{1f600}\":2,\"\u{e000}\":3,\"\u{fb33}\":1}"
        );
    }

    fn rfc8785_dir() -> std::path::PathBuf {
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/rfc8785")
    }

    /// RFC 8785's reference test data (`ledger/testdata/rfc8785`, from its
    /// author's implementations): each input, parsed, canonicalises to its
    /// output byte for byte; non-ASCII keys and strings, escapes and numbers
    /// included.
    #[test]
    fn canonical_json_is_rfc_8785_on_its_reference_documents() {
        let dir = rfc8785_dir();
        let mut names: Vec<_> = std::fs::read_dir(dir.join("input"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        names.sort();
        assert_eq!(names.len(), 6, "{names:?}");
        for name in names {
            let input = std::fs::read_to_string(dir.join("input").join(&name)).unwrap();
            let expected = std::fs::read_to_string(dir.join("output").join(&name)).unwrap();
            let value: Value = serde_json::from_str(&input).unwrap();
            assert_eq!(canonical_json(&value), expected, "{name:?}");
        }
    }

    /// RFC 8785 §3.2.2.3 and Appendix B: numbers as ECMAScript prints the
    /// doubles they denote, each given by its IEEE 754 bits.
    #[test]
    fn numbers_are_written_as_rfc_8785_appendix_b_says() {
        let appendix_b = [
            ("0000000000000000", "0"),
            ("8000000000000000", "0"),
            ("0000000000000001", "5e-324"),
            ("8000000000000001", "-5e-324"),
            ("7fefffffffffffff", "1.7976931348623157e+308"),
            ("ffefffffffffffff", "-1.7976931348623157e+308"),
            ("4340000000000000", "9007199254740992"),
            ("c340000000000000", "-9007199254740992"),
            ("4430000000000000", "295147905179352830000"),
            ("44b52d02c7e14af5", "9.999999999999997e+22"),
            ("44b52d02c7e14af6", "1e+23"),
            ("44b52d02c7e14af7", "1.0000000000000001e+23"),
            ("444b1ae4d6e2ef4e", "999999999999999700000"),
            ("444b1ae4d6e2ef4f", "999999999999999900000"),
            ("444b1ae4d6e2ef50", "1e+21"),
            ("3eb0c6f7a0b5ed8c", "9.999999999999997e-7"),
            ("3eb0c6f7a0b5ed8d", "0.000001"),
            ("41b3de4355555553", "333333333.3333332"),
            ("41b3de4355555554", "333333333.33333325"),
            ("41b3de4355555555", "333333333.3333333"),
            ("41b3de4355555556", "333333333.3333334"),
            ("41b3de4355555557", "333333333.33333343"),
            ("becbf647612f3696", "-0.0000033333333333333333"),
            ("43143ff3c1cb0959", "1424953923781206.2"),
        ];
        for (bits, expected) in appendix_b {
            assert_eq!(written_double(bits), expected, "{bits}");
        }
        // An integer beyond 2^53 is the double it denotes.
        let big: Value = serde_json::from_str("[9007199254740993, -9007199254740993]").unwrap();
        assert_eq!(canonical_json(&big), "[9007199254740992,-9007199254740992]");
    }

    /// The first 10,000 lines of RFC 8785's number test file (edge cases,
    /// subnormals, pseudo-random doubles), as Node printed them.
    #[test]
    fn numbers_are_written_as_ecmascript_prints_them() {
        let lines = std::fs::read_to_string(rfc8785_dir().join("numbers.txt")).unwrap();
        let mut checked = 0;
        for line in lines.lines() {
            let (bits, expected) = line.split_once(',').unwrap();
            assert_eq!(written_double(bits), expected, "{line}");
            checked += 1;
        }
        assert_eq!(checked, 10_000);
    }

    /// The canonical JSON of the double of these IEEE 754 bits (hex).
    fn written_double(bits: &str) -> String {
        let f = f64::from_bits(u64::from_str_radix(bits, 16).unwrap());
        canonical_json(&Value::from(serde_json::Number::from_f64(f).unwrap()))
    }

    #[test]
    fn at_is_written_as_the_logs_first_format_string_wrote_it() {
        let first = |at: DateTime<Utc>| at.format("%Y-%m-%dT%H:%M:%S%.6fZ").to_string();
        let (mut at, end) = (
            Utc.with_ymd_and_hms(1, 1, 1, 0, 0, 0).unwrap(),
            Utc.with_ymd_and_hms(9999, 12, 31, 23, 59, 59).unwrap(),
        );
        // Steps of up to about 37 days, every digit moving (xorshift).
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut checked = 0;
        while at < end {
            assert_eq!(format_at(at), first(at), "{at:?}");
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            at += chrono::Duration::nanoseconds((x % 3_200_000_000_000_000) as i64 + 1);
            checked += 1;
        }
        assert!(checked > 90_000, "{checked}");
        // A leap second, as chrono holds it.
        let leap = chrono::NaiveDate::from_ymd_opt(2016, 12, 31)
            .and_then(|d| d.and_hms_nano_opt(23, 59, 59, 1_234_567_890))
            .unwrap()
            .and_utc();
        assert_eq!(format_at(leap), "2016-12-31T23:59:60.234567Z");
        assert_eq!(format_at(leap), first(leap));
    }

    #[test]
    fn at_has_six_fractional_digits_and_z() {
        let at = Utc.with_ymd_and_hms(2025, 1, 31, 18, 4, 5).unwrap();
        assert_eq!(format_at(at), "2025-01-31T18:04:05.000000Z");
        let precise = at + chrono::Duration::nanoseconds(123_456_789);
        assert_eq!(
            format_at(truncate_at(precise)),
            "2025-01-31T18:04:05.123456Z"
        );
    }

    #[test]
    fn the_hashed_document_is_the_canonical_json_of_the_event_object() {
        let cases = [
            (
                1,
                "table_created",
                1,
                "2025-01-31T18:04:05.000000Z",
                json!({}),
            ),
            (
                i64::MAX,
                "odd \"kind\"\n",
                -3,
                "at\\",
                json!({"z": [1, {"b": null, "a": true}], "é": "x\u{1}", "a": -1.5}),
            ),
            (20_000, "card_played", 1, "t", json!(["8H", 4, false])),
        ];
        for (seq, kind, v, at, data) in cases {
            let object = json!({"seq": seq, "type": kind, "v": v, "at": at, "data": data});
            assert_eq!(
                hashed_document(seq, kind, v, at, &data),
                canonical_json(&object),
                "{object}"
            );
        }
    }

    #[test]
    fn a_lines_hash_is_its_events() {
        let data = json!({"seats": 4, "ruleset": "classic"});
        let at = "2025-01-31T18:04:05.000000Z";
        let line = json!({"seq": 1, "type": "table_created", "v": 1, "at": at, "data": data,
                          "prev_hash": GENESIS_PREV_HASH, "hash": "ignored"});
        assert_eq!(
            line_hash(GENESIS_PREV_HASH, &line).as_deref(),
            Some(event_hash(GENESIS_PREV_HASH, 1, "table_created", 1, at, &data).as_str())
        );
        let mut no_data = line.clone();
        no_data.as_object_mut().unwrap().remove("data");
        assert_eq!(line_hash(GENESIS_PREV_HASH, &no_data), None);
    }

    #[test]
    fn first_hash_is_fixed() {
        // A fixed vector: replay tools in other languages can check against it.
        let h = event_hash(
            GENESIS_PREV_HASH,
            1,
            "table_created",
            1,
            "2025-01-31T18:04:05.000000Z",
            &json!({"seats": 4, "ruleset": "classic"}),
        );
        let doc = hashed_document(
            1,
            "table_created",
            1,
            "2025-01-31T18:04:05.000000Z",
            &json!({"seats": 4, "ruleset": "classic"}),
        );
        assert_eq!(
            doc,
            r#"{"at":"2025-01-31T18:04:05.000000Z","data":{"ruleset":"classic","seats":4},"seq":1,"type":"table_created","v":1}"#
        );
        let mut hasher = Sha256::new();
        hasher.update(format!("{GENESIS_PREV_HASH}{doc}").as_bytes());
        assert_eq!(h, hex::encode(hasher.finalize()));
        assert_eq!(h.len(), 64);
    }
}
