//! Levels far from the others': a process that ran much slower (or faster) than the other
//! processes of its side. It stays in the interval (dropping it would hide what the machine
//! does); it is reported, so that a reader can look for its cause.

/// How far, in robust standard deviations of the others, a level must lie to be reported.
pub const FAR_SD: f64 = 4.0;
/// And how far as a factor, so that a tight spread does not make a small difference "far".
pub const FAR_FACTOR: f64 = 1.25;

/// The entries of `levels` (logs) that lie far from the others': each index with its factor
/// against the median of the others, `exp(level - median)`. Judged against the others alone
/// (leave one out), by their median and their median absolute deviation (× 1.4826, the normal's
/// SD); at least four levels are needed to judge any.
pub fn far_levels(levels: &[f64]) -> Vec<(usize, f64)> {
    if levels.len() < 4 || levels.iter().any(|l| !l.is_finite()) {
        return Vec::new();
    }
    (0..levels.len())
        .filter_map(|i| {
            let others: Vec<f64> = levels
                .iter()
                .enumerate()
                .filter(|&(j, _)| j != i)
                .map(|(_, &l)| l)
                .collect();
            let median = super::median(&others);
            let deviations: Vec<f64> = others.iter().map(|l| (l - median).abs()).collect();
            let sd = 1.4826 * super::median(&deviations);
            let distance = (levels[i] - median).abs();
            (distance > FAR_SD * sd && distance > FAR_FACTOR.ln())
                .then(|| (i, (levels[i] - median).exp()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_process_three_times_slower_is_reported_and_noise_is_not() {
        let ln = |xs: &[f64]| xs.iter().map(|x: &f64| x.ln()).collect::<Vec<_>>();
        // Four processes near 300k ops/s and one at 100k (the versionlookup baseline case).
        let far = far_levels(&ln(&[305e3, 298e3, 101e3, 310e3, 292e3]));
        assert_eq!(far.len(), 1, "{far:?}");
        assert_eq!(far[0].0, 2);
        assert!((far[0].1 - 101.0 / 301.5).abs() < 0.01, "{far:?}");
        // A spread of a few percent: nothing is far.
        assert!(far_levels(&ln(&[100.0, 103.0, 97.0, 101.0, 99.0])).is_empty());
        // A tight spread makes 10% many SDs, but not far as a factor.
        assert!(far_levels(&ln(&[100.0, 100.1, 99.9, 100.0, 110.0])).is_empty());
        // Too few to judge.
        assert!(far_levels(&ln(&[100.0, 100.0, 300.0])).is_empty());
    }
}
