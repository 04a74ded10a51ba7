//! How repeated looks spend a family-wise α: the Lan-DeMets O'Brien-Fleming-type spending
//! function, and each planned look's share of α from it.
//!
//! At information fraction t (replicates at a look over replicates at the last planned look),
//! the two-sided function has spent α(t) = 2 − 2Φ(z_{1−α/2} / √t): almost nothing while t is
//! small, and all of α at t = 1. A look spends the increment α(t_k) − α(t_{k−1}) as its
//! interval's α. The increments add up to α, so by the union bound the chance that any look's
//! interval misses the truth is at most α, whatever the correlation between looks. That is
//! conservative: exact group-sequential boundaries (Armitage-McPherson-Rowe recursive
//! integration) would spend the same α(t) with a larger nominal α at each look (a narrower
//! interval), because looks over nested replicates are correlated and a miss at one look often
//! follows a miss at an earlier one. We do not compute them: they assume a normal statistic
//! with known variance, and ours is a Student t with few degrees of freedom (4 at a 5-pair
//! pilot), where those boundaries would not hold exactly.

use statrs::distribution::{ContinuousCDF, Normal};

/// The smallest α a look spends. The Student-t quantile of a smaller one can be infinite
/// (1 − α/2 rounds to 1 below about 2·10⁻¹⁶), and an infinite quantile times a zero spread (a
/// deterministic simulation) is NaN, an interval that never decides. At 10⁻¹² the quantile is
/// finite at every degree of freedom (about 6·10¹¹ at one), and a look this small decides
/// only what a point interval decides. What the floor adds to an early look is taken from the
/// last, so the looks still spend α in all.
pub const MIN_LOOK_ALPHA: f64 = 1e-12;

/// The α the two-sided Lan-DeMets O'Brien-Fleming-type function has spent of a family-wise
/// `alpha` at information fraction `t`: 2 − 2Φ(z_{1−α/2}/√t). Zero at t ≤ 0, `alpha` at
/// t ≥ 1.
pub fn obrien_fleming_spent(alpha: f64, t: f64) -> f64 {
    if t <= 0.0 {
        return 0.0;
    }
    if t >= 1.0 {
        return alpha;
    }
    let normal = Normal::standard();
    let z = -normal.inverse_cdf(alpha / 2.0);
    2.0 * normal.sf(z / t.sqrt())
}

/// The α each look spends, for looks at `looks` replicates (increasing; the last is the last
/// planned look) and a family-wise `alpha` in (0, 1): the increments of
/// [`obrien_fleming_spent`] at t = looks[k] / looks[last], each at least [`MIN_LOOK_ALPHA`] and
/// never negative, adding up to `alpha`. A single look spends all of it. Should the floors of
/// the early looks leave the last less than the floor (thousands of looks), the looks split
/// `alpha` equally instead.
pub fn look_alphas(looks: &[u32], alpha: f64) -> Vec<f64> {
    assert!(
        alpha > 0.0 && alpha < 1.0,
        "a family-wise α is in (0, 1), not {alpha}"
    );
    let Some(&last) = looks.last() else {
        return Vec::new();
    };
    let total = f64::from(last.max(1));
    let mut spent = 0.0;
    let mut alphas: Vec<f64> = looks[..looks.len() - 1]
        .iter()
        .map(|&n| {
            let cumulative = obrien_fleming_spent(alpha, f64::from(n) / total).max(spent);
            let increment = cumulative - spent;
            spent = cumulative;
            increment.max(MIN_LOOK_ALPHA)
        })
        .collect();
    let earlier: f64 = alphas.iter().sum();
    let rest = alpha - earlier;
    if rest < MIN_LOOK_ALPHA {
        return vec![alpha / looks.len() as f64; looks.len()];
    }
    alphas.push(rest);
    alphas
}

/// The α each of `looks` spends when a first look at `first` replicates has already spent
/// `spent` of a family-wise `alpha`, and `looks` (increasing, each beyond `first`; the last is
/// the last planned look) were planned only after it: the rest, `alpha − spent`, shared in
/// proportion to the O'Brien-Fleming increments over t = n / looks[last] from t = first /
/// looks[last] to 1. With the first look's α fixed before the later looks are chosen, the
/// looks spend `alpha` in all whatever was chosen, so the union bound holds as in
/// [`look_alphas`]. Floors and the equal split as there.
pub fn look_alphas_after(spent: f64, first: u32, looks: &[u32], alpha: f64) -> Vec<f64> {
    let rest = alpha - spent;
    assert!(
        rest > 0.0 && rest <= alpha,
        "the first look spent {spent} of a family-wise α of {alpha}"
    );
    let Some(&last) = looks.last() else {
        return Vec::new();
    };
    let total = f64::from(last.max(1));
    let base = obrien_fleming_spent(alpha, f64::from(first) / total);
    let fraction = |n: u32| {
        let span = alpha - base;
        if span <= 0.0 {
            1.0
        } else {
            ((obrien_fleming_spent(alpha, f64::from(n) / total) - base) / span).clamp(0.0, 1.0)
        }
    };
    let mut done = 0.0;
    let mut alphas: Vec<f64> = looks[..looks.len() - 1]
        .iter()
        .map(|&n| {
            let cumulative = fraction(n).max(done);
            let increment = (cumulative - done) * rest;
            done = cumulative;
            increment.max(MIN_LOOK_ALPHA)
        })
        .collect();
    let earlier: f64 = alphas.iter().sum();
    if rest - earlier < MIN_LOOK_ALPHA {
        return vec![rest / looks.len() as f64; looks.len()];
    }
    alphas.push(rest - earlier);
    alphas
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, relative: f64) -> bool {
        (a - b).abs() <= relative * b.abs()
    }

    #[test]
    fn the_spending_function_matches_hand_computed_values() {
        // z_{0.9995} = 3.290527; at t = 5/8, z/√t = 4.162190 and 2(1 − Φ) = 3.15163e-5 (mpmath).
        assert!(close(
            obrien_fleming_spent(0.001, 0.625),
            3.151_634e-5,
            1e-5
        ));
        // At t = 1/4 the boundary is 2z = 6.581: 4.671e-11 of α spent.
        assert!(close(
            obrien_fleming_spent(0.001, 0.25),
            4.671_266e-11,
            1e-5
        ));
        assert_eq!(obrien_fleming_spent(0.001, 1.0), 0.001);
        assert_eq!(obrien_fleming_spent(0.001, 0.0), 0.0);
        // The classic 5% design: half the information spends 0.005575.
        assert!(close(obrien_fleming_spent(0.05, 0.5), 0.005_574_597, 1e-5));
    }

    #[test]
    fn the_quick_and_full_looks_spend_little_early_and_nearly_all_at_the_last() {
        let quick = look_alphas(&[5, 8], 0.001);
        assert!(close(quick[0], 3.151_634e-5, 1e-5), "{quick:?}");
        assert!(close(quick[1], 9.684_837e-4, 1e-6), "{quick:?}");
        let full = look_alphas(&[10, 15, 20, 25, 30], 0.001);
        let want = [
            1.202_584e-8,
            3.251_331e-6,
            5.250_027e-5,
            2.568_807e-4,
            6.873_556e-4,
        ];
        for (got, want) in full.iter().zip(want) {
            assert!(close(*got, want, 1e-5), "{full:?}");
        }
        for looks in [
            &[5, 8][..],
            &[10, 15, 20, 25, 30],
            &[3, 5, 8],
            &[10, 20, 30],
        ] {
            let alphas = look_alphas(looks, 0.001);
            assert!(close(alphas.iter().sum(), 0.001, 1e-12), "{alphas:?}");
        }
    }

    #[test]
    fn degenerate_schedules_stay_within_alpha_with_finite_quantiles() {
        assert_eq!(look_alphas(&[], 0.001), Vec::<f64>::new());
        assert_eq!(look_alphas(&[7], 0.001), vec![0.001]);
        // A first look at t = 1/15 would spend 3e-37: the floor, taken from the last look.
        let early = look_alphas(&[2, 30], 0.001);
        assert_eq!(early[0], MIN_LOOK_ALPHA);
        assert!(close(early[0] + early[1], 0.001, 1e-12));
        // Repeated or decreasing counts spend nothing more than the floor.
        let repeated = look_alphas(&[5, 5, 4, 8], 0.001);
        assert!(
            repeated.iter().all(|&a| a >= MIN_LOOK_ALPHA),
            "{repeated:?}"
        );
        assert_eq!(repeated[1], MIN_LOOK_ALPHA);
        assert_eq!(repeated[2], MIN_LOOK_ALPHA);
        assert!(close(repeated.iter().sum(), 0.001, 1e-12));
        // A zero count (no replicates) spends the floor, too.
        assert_eq!(look_alphas(&[0, 8], 0.001)[0], MIN_LOOK_ALPHA);
        // More looks than the floor can pay for: an equal split.
        let many: Vec<u32> = (1..=2_000).collect();
        let alphas = look_alphas(&many, 1e-9);
        assert!(alphas.iter().all(|&a| a == 1e-9 / 2_000.0));
        // The floor's t quantile is finite at every degree of freedom we can meet.
        for df in 1..=100 {
            let t = super::super::t_quantile(1.0 - MIN_LOOK_ALPHA, f64::from(df));
            assert!(t.is_finite() && t > 0.0, "df {df}: {t}");
        }
    }

    #[test]
    fn looks_planned_after_the_first_spend_the_rest_of_alpha_by_the_same_shape() {
        let first = look_alphas(&[5, 8], 0.001)[0];
        // Planned as before (a last look at 8): the same α as look_alphas.
        let same = look_alphas_after(first, 5, &[8], 0.001);
        assert!(close(same[0], 9.684_837e-4, 1e-6), "{same:?}");
        // A last look at 16 with a look at 11 between: the rest, shared by the increments of
        // α(t) over t = 5/16 .. 11/16 .. 1 (α(5/16) = 3.9500e-9, α(11/16) = 7.2319e-5).
        let later = look_alphas_after(first, 5, &[11, 16], 0.001);
        let share = (7.231_90e-5 - 3.950_0e-9) / (0.001 - 3.950_0e-9);
        assert!(close(later[0], share * (0.001 - first), 1e-3), "{later:?}");
        assert!(close(first + later.iter().sum::<f64>(), 0.001, 1e-12));
        // Nothing after the first look, or a first look that spent it all.
        assert!(look_alphas_after(first, 5, &[], 0.001).is_empty());
        let one = look_alphas_after(first, 5, &[5], 0.001);
        assert!(close(one[0], 0.001 - first, 1e-12), "{one:?}");
    }
}
