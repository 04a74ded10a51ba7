//! JSON has no NaN or infinity, and serde_json writes them as `null`; these helpers read that
//! `null` back as NaN, so a file critsec wrote is always one it can read (an interval over one
//! replicate has an infinite bound; a ratio that is undefined is NaN).

use serde::{Deserialize, Deserializer, Serializer};

/// `f64` fields: non-finite values are written as `null` and read back as NaN.
pub mod f64_or_null {
    use super::*;

    /// Writes `v`, or `null` when it is not finite.
    pub fn serialize<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
        if v.is_finite() {
            s.serialize_f64(*v)
        } else {
            s.serialize_none()
        }
    }

    /// Reads a number, or `null` as NaN.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
    }
}

/// `Vec<f64>` fields, likewise element by element.
pub mod vec_f64_or_null {
    use super::*;
    use serde::Serialize;

    /// Writes the values, `null` for each one that is not finite.
    pub fn serialize<S: Serializer>(v: &[f64], s: S) -> Result<S::Ok, S::Error> {
        let values: Vec<Option<f64>> = v.iter().map(|x| x.is_finite().then_some(*x)).collect();
        values.serialize(s)
    }

    /// Reads the values, `null` as NaN.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<f64>, D::Error> {
        Ok(Vec::<Option<f64>>::deserialize(d)?
            .into_iter()
            .map(|x| x.unwrap_or(f64::NAN))
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use serde::{Deserialize, Serialize};

    #[derive(Debug, Serialize, Deserialize)]
    struct T {
        #[serde(with = "super::f64_or_null")]
        x: f64,
        #[serde(with = "super::vec_f64_or_null")]
        v: Vec<f64>,
    }

    #[test]
    fn non_finite_values_round_trip_as_null() {
        let t = T {
            x: f64::INFINITY,
            v: vec![1.0, f64::NAN],
        };
        let json = serde_json::to_string(&t).unwrap();
        assert_eq!(json, r#"{"x":null,"v":[1.0,null]}"#);
        let back: T = serde_json::from_str(&json).unwrap();
        assert!(back.x.is_nan() && back.v[0] == 1.0 && back.v[1].is_nan());
    }
}
