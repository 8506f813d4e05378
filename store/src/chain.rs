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

use chrono::{DateTime, SubsecRound, Utc};
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
/// fractional digits and a `Z`: `2025-01-31T18:04:05.123456Z`.
pub fn format_at(at: DateTime<Utc>) -> String {
    at.format("%Y-%m-%dT%H:%M:%S%.6fZ").to_string()
}

/// Canonical JSON of a value:
///
/// - no whitespace at all;
/// - object members sorted by key, comparing the keys' UTF-8 bytes (which is
///   Unicode code point order), at every depth; array order is kept;
/// - strings: UTF-8, with only `"` `\` and the control characters
///   U+0000–U+001F escaped: `\"` `\\` `\b` `\f` `\n` `\r` `\t`, others as
///   `\u00XX` with lowercase hex; everything else (including `/` and
///   non-ASCII) is written as is;
/// - numbers: integers in plain decimal (`-12`, `0`); other numbers as
///   `serde_json` prints an `f64` (shortest round-trip form). Event data should
///   hold integers only;
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
        Value::Number(n) => {
            let _ = write!(out, "{n}");
        }
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
            entries.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
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
    let _ = write!(out, r#","seq":{seq},"type":"#);
    write_string(&mut out, kind);
    let _ = write!(out, r#","v":{v}}}"#);
    out
}

/// The `hash` of an event.
pub fn event_hash(prev_hash: &str, seq: i64, kind: &str, v: i32, at: &str, data: &Value) -> String {
    let mut hasher = Sha256::new();
    hasher.update(prev_hash.as_bytes());
    hasher.update(hashed_document(seq, kind, v, at, data).as_bytes());
    hex::encode(hasher.finalize())
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
    fn canonical_json_orders_keys_by_code_point() {
        let v = json!({"é": 1, "z": 2, "Z": 3, "10": 4, "9": 5});
        assert_eq!(canonical_json(&v), r#"{"10":4,"9":5,"Z":3,"z":2,"é":1}"#);
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
