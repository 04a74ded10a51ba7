//! Latency plots as ratios: one x value per percentile (`p50`, `p99.9`), each the contender's
//! latency at that percentile over the baseline's, evenly spaced in level order (the levels are
//! categories: p99.9 is not "ten times" p99).

use super::XValue;

/// A percentile level from its name (`p99.9` is 99.9); `None` when it is not one.
fn level_of(name: &str) -> Option<f64> {
    name.strip_prefix('p')?
        .parse::<f64>()
        .ok()
        .filter(|l| (0.0..=100.0).contains(l))
}

/// The x values of the percentile names `levels`, in level order, one step apart.
pub(super) fn percentile_axis(levels: &[String]) -> Vec<XValue> {
    let mut sorted: Vec<&String> = levels.iter().collect();
    sorted.sort_by(|a, b| {
        let key = |s: &str| level_of(s).unwrap_or(f64::INFINITY);
        key(a).total_cmp(&key(b)).then_with(|| a.cmp(b))
    });
    sorted.dedup();
    sorted
        .into_iter()
        .enumerate()
        .map(|(i, l)| XValue {
            label: l.clone(),
            pos: i as f64,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_go_in_level_order_one_step_apart() {
        let names: Vec<String> = ["p99.9", "p50", "p99", "p90"].map(String::from).to_vec();
        let xs = percentile_axis(&names);
        let labels: Vec<&str> = xs.iter().map(|x| x.label.as_str()).collect();
        assert_eq!(labels, ["p50", "p90", "p99", "p99.9"]);
        assert_eq!(xs[3].pos, 3.0);
        assert_eq!(level_of("p99.9"), Some(99.9));
        assert_eq!(level_of("mean"), None);
    }
}
