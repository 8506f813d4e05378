//! Integers of request bodies as the OpenAPI document (JSON Schema) reads
//! them: `4` and `4.0` are the same integer, so both are accepted; `4.5` is
//! not an integer (422 `invalid_body`).

use serde::{Deserialize, Deserializer};
use serde_json::Number;

fn integral<E: serde::de::Error>(n: &Number) -> Result<i128, E> {
    if let Some(i) = n.as_i64() {
        return Ok(i.into());
    }
    if let Some(u) = n.as_u64() {
        return Ok(u.into());
    }
    match n.as_f64() {
        // Beyond 2^63 every f64 is integral but outside every field's range.
        Some(f) if f.fract() == 0.0 && f.abs() < 9.2e18 => Ok(f as i128),
        _ => Err(E::custom(format!("invalid type: {n}, expected an integer"))),
    }
}

fn in_range<T: TryFrom<i128>, E: serde::de::Error>(n: i128) -> Result<T, E> {
    T::try_from(n).map_err(|_| {
        E::custom(format!(
            "{n} is out of range for {}",
            std::any::type_name::<T>()
        ))
    })
}

/// `#[serde(deserialize_with = "crate::routes::integer::u32")]`
pub fn u32<'de, D: Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
    let n = Number::deserialize(d)?;
    in_range(integral(&n)?)
}

/// `#[serde(default, deserialize_with = "crate::routes::integer::option_i64")]`
pub fn option_i64<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
    match Option::<Number>::deserialize(d)? {
        None => Ok(None),
        Some(n) => in_range(integral(&n)?).map(Some),
    }
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    #[derive(Debug, Deserialize)]
    struct Body {
        #[serde(deserialize_with = "super::u32")]
        seats: u32,
        #[serde(default, deserialize_with = "super::option_i64")]
        version: Option<i64>,
    }

    fn parse(json: &str) -> Result<Body, serde_json::Error> {
        serde_json::from_str(json)
    }

    #[test]
    fn an_integral_float_is_an_integer() {
        let b = parse(r#"{"seats": 4.0, "version": -3.0}"#).unwrap();
        assert_eq!((b.seats, b.version), (4, Some(-3)));
        let b = parse(r#"{"seats": 4}"#).unwrap();
        assert_eq!((b.seats, b.version), (4, None));
        let b = parse(r#"{"seats": 4, "version": null}"#).unwrap();
        assert_eq!(b.version, None);
    }

    #[test]
    fn a_fraction_or_an_out_of_range_number_is_a_data_error() {
        for json in [
            r#"{"seats": 4.5}"#,
            r#"{"seats": -1}"#,
            r#"{"seats": 4294967296}"#,
            r#"{"seats": 1e300}"#,
            r#"{"seats": "4"}"#,
            r#"{"seats": 2, "version": 9223372036854775808}"#,
        ] {
            let err = parse(json).unwrap_err();
            assert!(err.is_data(), "{json}: {err}");
        }
    }
}
