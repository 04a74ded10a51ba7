//! Plots against threads: where thread counts go on the x axis (a log2 scale when they span 8x
//! or more, as thread sweeps double, so that 1, 2 and 8 threads are not crowded at the left of
//! 64), and how a count reads in a title.

use super::XValue;

/// A thread count in words: `1 thread`, `4 threads`.
pub fn threads_words(n: usize) -> String {
    if n == 1 {
        "1 thread".into()
    } else {
        format!("{n} threads")
    }
}

/// The x values of `counts` (ascending) and the axis's description.
pub(super) fn thread_axis(counts: &[usize]) -> (Vec<XValue>, String) {
    let (lo, hi) = (
        counts.first().copied().unwrap_or(1).max(1) as f64,
        counts.last().copied().unwrap_or(1).max(1) as f64,
    );
    let log = hi / lo >= 8.0;
    let xs = counts
        .iter()
        .map(|&t| XValue {
            label: t.to_string(),
            pos: if log {
                (t.max(1) as f64).log2()
            } else {
                t as f64
            },
        })
        .collect();
    let desc = if log {
        "threads (log2 scale)"
    } else {
        "threads"
    };
    (xs, desc.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_read_grammatically_and_wide_sweeps_go_on_a_log2_axis() {
        assert_eq!(threads_words(1), "1 thread");
        assert_eq!(threads_words(4), "4 threads");
        let (xs, desc) = thread_axis(&[1, 2, 8, 64]);
        assert_eq!(desc, "threads (log2 scale)");
        assert_eq!(
            xs.iter().map(|x| x.pos).collect::<Vec<_>>(),
            [0.0, 1.0, 3.0, 6.0]
        );
        let (xs, desc) = thread_axis(&[1, 2]);
        assert_eq!(desc, "threads");
        assert_eq!(xs[1].pos, 2.0);
    }
}
