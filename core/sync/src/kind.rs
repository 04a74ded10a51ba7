//! The strategy-kind idiom every system shares: a kind enum listing its strategies, each with
//! the id the command line and the JMH `params` use.
//!
//! One trait, so that a bench crate derives its parameter choices from the kind enum
//! (`ids::<K>()`) instead of repeating the list, and every unknown id is reported the same way.

use std::fmt;

/// A system's strategies as a kind enum: every kind, its id, and parsing back from the id.
pub trait StrategyKind: Copy + Eq + fmt::Debug + 'static {
    /// Every strategy, in story order (before, after, ours).
    const ALL: &'static [Self];

    /// The id used on the command line and in results (`mutex`, `per-reader`, ...).
    fn id(self) -> &'static str;

    /// The kind whose id is `id`, or an error that lists the valid ids.
    fn from_id(id: &str) -> Result<Self, UnknownStrategy> {
        Self::ALL
            .iter()
            .copied()
            .find(|k| k.id() == id)
            .ok_or_else(|| UnknownStrategy {
                given: id.to_string(),
                valid: ids::<Self>().join(", "),
            })
    }
}

/// `Display` (the id) and `FromStr` (by [`StrategyKind::from_id`]) for a kind enum, so every
/// kind enum prints and parses its ids the same way.
#[macro_export]
macro_rules! strategy_kind_text {
    ($kind:ty) => {
        impl ::std::fmt::Display for $kind {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str($crate::kind::StrategyKind::id(*self))
            }
        }

        impl ::std::str::FromStr for $kind {
            type Err = $crate::kind::UnknownStrategy;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                <$kind as $crate::kind::StrategyKind>::from_id(s)
            }
        }
    };
}

/// Every id of the kind enum `K`, in story order.
pub fn ids<K: StrategyKind>() -> Vec<&'static str> {
    K::ALL.iter().map(|k| k.id()).collect()
}

/// An id that names no strategy of the kind enum.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown strategy `{given}`; valid are {valid}")]
pub struct UnknownStrategy {
    /// The id given.
    pub given: String,
    /// The valid ids, comma-separated.
    pub valid: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum Toy {
        A,
        B,
    }

    impl StrategyKind for Toy {
        const ALL: &'static [Self] = &[Toy::A, Toy::B];
        fn id(self) -> &'static str {
            match self {
                Toy::A => "a",
                Toy::B => "b",
            }
        }
    }

    #[test]
    fn ids_round_trip_and_unknown_ids_list_the_valid_set() {
        for k in Toy::ALL {
            assert_eq!(Toy::from_id(k.id()), Ok(*k));
        }
        assert_eq!(ids::<Toy>(), ["a", "b"]);
        let e = Toy::from_id("c").unwrap_err().to_string();
        assert_eq!(e, "unknown strategy `c`; valid are a, b");
    }
}
