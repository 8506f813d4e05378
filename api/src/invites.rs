//! A private table's invitation (docs/API.md "Finding a game and coming
//! back"): a random code of ten characters from Crockford's base 32 (50
//! bits: digits and lowercase letters but i, l, o and u), short enough to
//! read aloud or put in a link. Only its SHA-256 is looked up; the code
//! found is then compared with the one given in constant time. A code is
//! read as Crockford's decoding reads it: any case, `-` ignored, i and l
//! as 1, o as 0.

use rand::Rng;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// The letters of a code.
const ALPHABET: &[u8; 32] = b"0123456789abcdefghjkmnpqrstvwxyz";
/// Characters of a code (5 bits each).
pub const LENGTH: usize = 10;
/// The longest text read as a code (a code with a dash or two and some
/// room): anything longer is no code, and is not hashed.
const LONGEST: usize = 32;

/// A new code, from the OS-seeded CSPRNG of the thread.
pub fn new_code() -> String {
    let mut rng = rand::thread_rng();
    (0..LENGTH)
        .map(|_| char::from(ALPHABET[rng.gen_range(0..ALPHABET.len())]))
        .collect()
}

/// The one spelling of a code as given, if it can be one.
pub fn normal(given: &str) -> Option<String> {
    if given.len() > LONGEST {
        return None;
    }
    let code: String = given
        .chars()
        .filter(|c| *c != '-')
        .map(|c| match c.to_ascii_lowercase() {
            'i' | 'l' => '1',
            'o' => '0',
            c => c,
        })
        .collect();
    let valid = code.len() == LENGTH && code.bytes().all(|b| ALPHABET.contains(&b));
    valid.then_some(code)
}

/// What a code is looked up by.
pub fn digest(code: &str) -> [u8; 32] {
    Sha256::digest(code.as_bytes()).into()
}

/// Whether the code found is the one given, in time that does not depend
/// on where they differ.
pub fn same(found: &str, given: &str) -> bool {
    found.as_bytes().ct_eq(given.as_bytes()).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_code_is_ten_letters_of_crockfords_base_32_and_reads_back_in_any_spelling() {
        let code = new_code();
        assert_eq!(code.len(), LENGTH);
        assert_eq!(normal(&code).as_deref(), Some(code.as_str()));
        let spoken = format!("{}-{}", &code[..5], &code[5..]).to_uppercase();
        assert_eq!(normal(&spoken).as_deref(), Some(code.as_str()));
        assert_eq!(normal("IL0O-0abcde").as_deref(), Some("11000abcde"));
        for bad in [
            "",
            "short",
            "uuuuuuuuuu",
            "0123456789a",
            &"0".repeat(40),
            "0123456789\u{e9}",
        ] {
            assert_eq!(normal(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn codes_differ_and_compare_whole() {
        let codes: std::collections::HashSet<String> = (0..1000).map(|_| new_code()).collect();
        assert_eq!(codes.len(), 1000);
        assert!(same("0123456789", "0123456789"));
        assert!(!same("0123456789", "0123456788"));
        assert!(!same("0123456789", "012345678"));
        assert_ne!(digest("0123456789"), digest("0123456788"));
    }
}
