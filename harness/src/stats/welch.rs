//! Welch's unequal-variance t-test, two-sided, the significance test of `critsec compare`.

use serde::Serialize;

use super::t_quantile;

/// Which test decided a significance mark.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SignificanceTest {
    /// Welch's unequal-variance t-test on the iteration scores.
    Welch,
    /// Welch's test on the fork means, when both sides have two forks or more.
    WelchForks,
    /// Whether the two 99.9% intervals are disjoint.
    Intervals,
    /// Neither applies: fewer than two iterations on a side and no interval.
    None,
}

/// The outcome of the significance test between a baseline and a contender value.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Significance {
    /// The test used.
    pub test: SignificanceTest,
    /// Whether the difference is significant at 99.9%; `None` when untestable.
    pub significant: Option<bool>,
    /// Welch's t statistic (contender minus baseline).
    pub t: Option<f64>,
    /// Welch–Satterthwaite degrees of freedom.
    pub df: Option<f64>,
    /// The two-sided critical value of t at 99.9% for `df`.
    pub critical: Option<f64>,
}

impl Significance {
    /// No test applies: fewer than two iterations on a side and no interval.
    pub fn untestable() -> Significance {
        Significance {
            test: SignificanceTest::None,
            significant: None,
            t: None,
            df: None,
            critical: None,
        }
    }
}

/// Welch's t-test at `confidence` (two-sided) between samples `a` and `b`; `None` unless both
/// have at least two values. With zero variance on both sides, any difference of means counts.
pub fn welch(a: &[f64], b: &[f64], confidence: f64) -> Option<Significance> {
    if a.len() < 2 || b.len() < 2 {
        return None;
    }
    let moments = |x: &[f64]| {
        let n = x.len() as f64;
        let mean = x.iter().sum::<f64>() / n;
        let var = x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
        (n, mean, var)
    };
    let (na, ma, va) = moments(a);
    let (nb, mb, vb) = moments(b);
    let (sa, sb) = (va / na, vb / nb);
    let se2 = sa + sb;
    let (t, df) = if se2 == 0.0 {
        let t = if ma == mb {
            0.0
        } else {
            f64::INFINITY.copysign(mb - ma)
        };
        (t, na + nb - 2.0)
    } else {
        let df = se2.powi(2) / (sa.powi(2) / (na - 1.0) + sb.powi(2) / (nb - 1.0));
        ((mb - ma) / se2.sqrt(), df)
    };
    let critical = t_quantile(confidence, df);
    Some(Significance {
        test: SignificanceTest::Welch,
        significant: Some(t.abs() > critical),
        t: Some(t),
        df: Some(df),
        critical: Some(critical),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::CONFIDENCE;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn welch_matches_a_hand_computed_example() {
        // a: mean 14, variance 10; b: mean 34, variance 10; n = 5 each.
        // se = sqrt(10/5 + 10/5) = 2, t = (34 - 14) / 2 = 10, df = 4^2 / (2^2/4 + 2^2/4) = 8,
        // and t(0.9995, 8) = 5.0413 (table), so the difference is significant.
        let a = [10.0, 12.0, 14.0, 16.0, 18.0];
        let b = [30.0, 32.0, 34.0, 36.0, 38.0];
        let s = welch(&a, &b, CONFIDENCE).unwrap();
        assert_eq!(s.test, SignificanceTest::Welch);
        assert!(close(s.t.unwrap(), 10.0, 1e-12));
        assert!(close(s.df.unwrap(), 8.0, 1e-12));
        assert!(close(s.critical.unwrap(), 5.0413, 1e-3), "{:?}", s.critical);
        assert_eq!(s.significant, Some(true));
        // The same data's 99.9% intervals, 14 ± 12.18 and 34 ± 12.18, overlap: Welch's test is
        // the stronger rule, which is why it decides whenever iterations are available.
        let half = 12.17679;
        assert!(14.0 + half > 34.0 - half);
        // b shifted to mean 18.5: t = 4.5 / 2 = 2.25 < 5.04, not significant.
        let b2 = b.map(|v| v - 15.5);
        let s = welch(&a, &b2, CONFIDENCE).unwrap();
        assert!(close(s.t.unwrap(), 2.25, 1e-12));
        assert_eq!(s.significant, Some(false));
    }

    #[test]
    fn welch_handles_unequal_variances_and_zero_variance() {
        // a: mean 2, variance 1 (n 3); b: mean 10, variance 4 (n 3).
        // sa = 1/3, sb = 4/3, se = sqrt(5/3) = 1.29099, t = 8 / 1.29099 = 6.19677,
        // df = (5/3)^2 / ((1/3)^2/2 + (4/3)^2/2) = 2.77778 / 0.94444 = 2.94118.
        let s = welch(&[1.0, 2.0, 3.0], &[8.0, 10.0, 12.0], CONFIDENCE).unwrap();
        assert!(close(s.t.unwrap(), 6.19677, 1e-4));
        assert!(close(s.df.unwrap(), 2.94118, 1e-4));
        // t(0.9995, 2.94) is about 13.3, far above 6.2: not significant at 99.9%.
        assert_eq!(s.significant, Some(false));
        let same = welch(&[5.0, 5.0], &[5.0, 5.0], CONFIDENCE).unwrap();
        assert_eq!(same.significant, Some(false));
        let moved = welch(&[5.0, 5.0], &[6.0, 6.0], CONFIDENCE).unwrap();
        assert_eq!(moved.significant, Some(true));
        assert!(welch(&[1.0], &[1.0, 2.0], CONFIDENCE).is_none());
    }
}
