//! From replicates to a verdict: one claim's values per replicate and block become its
//! replicates' mean log ratios, their Student-t interval (or, for a count claim, the counts and
//! their rates), the variance components, and the verdict at the look's confidence.
//!
//! This knows nothing of how the replicates were measured: each kind of replicate
//! ([`super::looks::ReplicateSource`]) hands over the same [`Observed`] values.

use crate::claims::claim::{ClaimKind, Role};
use crate::stats::CONFIDENCE;
use crate::stats::hierarchy::components;
use crate::stats::outlier::far_levels;
use crate::stats::poisson::{RateInterval, rate_interval};
use crate::stats::ratio::log_interval;

use super::distance::coherence;
use super::observed::{Observed, Paired, admissible, level, needs};
use super::outcome::{
    BlockValue, ClaimOutcome, CountSummary, FarProcess, Replicate, ReplicateKind, Verdict, verdict,
};

/// The first value of `replicates` a claim of `kind` cannot take, in words: which side, which
/// replicate and block, and the value.
fn inadmissible(kind: ClaimKind, replicates: &[Paired]) -> Option<String> {
    replicates.iter().enumerate().find_map(|(r, replicate)| {
        replicate.blocks.iter().enumerate().find_map(|(b, block)| {
            [("baseline", block.baseline), ("contender", block.contender)]
                .into_iter()
                .find(|&(_, v)| !admissible(kind, v))
                .map(|(side, v)| {
                    format!(
                        "the {side}'s is {v} in replicate {}, block {}",
                        r + 1,
                        b + 1
                    )
                })
        })
    })
}

/// The processes of either side whose level ([`level`]) lies far from
/// the other processes' of that side.
fn far_processes(replicates: &[Replicate]) -> Vec<FarProcess> {
    Role::BOTH
        .into_iter()
        .flat_map(|role| {
            let value = |b: &BlockValue| match role {
                Role::Baseline => b.baseline,
                Role::Contender => b.contender,
            };
            let levels: Vec<f64> = replicates
                .iter()
                .map(|r| level(r.blocks.iter().map(value)))
                .collect();
            far_levels(&levels)
                .into_iter()
                .map(move |(i, factor)| FarProcess {
                    replicate: i + 1,
                    side: role.name().to_string(),
                    factor,
                })
        })
        .collect()
}

/// Derives one claim's replicates, interval and verdict from what was `observed` of its
/// `metric`, at `confidence`. The interval is combined with the one the claim's last look left
/// ([`RatioInterval::combined`](crate::stats::ratio::RatioInterval::combined)), so it narrows
/// with every look and a decided verdict stays.
pub(crate) fn derive(
    outcome: &mut ClaimOutcome,
    observed: &Observed,
    metric: &str,
    confidence: f64,
) -> Result<Verdict, String> {
    let claim = outcome.claim.clone();
    let earlier = outcome.interval.take();
    let values: Vec<&[BlockValue]> = observed
        .replicates
        .iter()
        .map(|r| r.blocks.as_slice())
        .collect();
    let flat = || values.iter().flat_map(|blocks| blocks.iter());
    outcome.baseline.values = flat().map(|v| v.baseline).collect();
    outcome.contender.values = flat().map(|v| v.contender).collect();
    outcome.baseline.unit = observed.unit.clone();
    outcome.contender.unit = observed.unit.clone();
    let ratio_defined = flat().all(|v| {
        v.baseline.is_finite() && v.contender.is_finite() && v.baseline > 0.0 && v.contender > 0.0
    });
    let logs: Vec<Vec<f64>> = values
        .iter()
        .map(|blocks| {
            blocks
                .iter()
                .map(|v| (v.contender / v.baseline).ln())
                .collect()
        })
        .collect();
    outcome.replicates = observed
        .replicates
        .iter()
        .map(|r| Replicate {
            seed: r.seed,
            baseline_launched_first: r.baseline_launched_first,
            env_pad: r.env_pad,
            cpu: r.cpu,
            blocks: r.blocks.clone(),
            log_ratio: if ratio_defined {
                r.log_ratio()
            } else {
                f64::NAN
            },
        })
        .collect();
    outcome.far_processes = if outcome.replicate_kind == ReplicateKind::ProcessPair {
        far_processes(&outcome.replicates)
    } else {
        Vec::new()
    };
    if ratio_defined {
        let means: Vec<f64> = outcome.replicates.iter().map(|r| r.log_ratio).collect();
        let this_look = log_interval(&means, confidence);
        outcome.interval = Some(earlier.map_or(this_look, |e| this_look.combined(&e)));
        outcome.components = components(&logs);
        outcome.optimal_blocks = outcome
            .components
            .and_then(|c| c.optimal_blocks(observed.costs.pair, observed.costs.block));
    }
    match claim.kind {
        ClaimKind::Ratio => {
            if let Some(which) = inadmissible(ClaimKind::Ratio, &observed.replicates) {
                return Err(format!(
                    "metric `{metric}` is not positive in every iteration: {which}; {}",
                    needs(ClaimKind::Ratio)
                ));
            }
            let Some(bound) = claim.bound() else {
                return Err("a ratio claim without direction or min_effect".into());
            };
            outcome.coherence = coherence(&observed.replicates, &bound, confidence);
            if let Some(reason) = outcome.coherence.as_ref().and_then(|c| c.disagreement()) {
                return Ok(Verdict::NotTestable { reason });
            }
            Ok(verdict(
                &bound,
                outcome.interval.as_ref().expect("computed above"),
            ))
        }
        ClaimKind::Count => {
            if let Some(which) = inadmissible(ClaimKind::Count, &observed.replicates) {
                return Err(format!(
                    "metric `{metric}` is not a count in every iteration: {which}; {}",
                    needs(ClaimKind::Count)
                ));
            }
            let counts = |side: fn(&BlockValue) -> f64| -> Vec<u64> {
                values
                    .iter()
                    .map(|blocks| blocks.iter().map(side).sum::<f64>().round().max(0.0) as u64)
                    .collect()
            };
            let (base, cont) = (counts(|v| v.baseline), counts(|v| v.contender));
            let rate = |side: usize, events: &[u64]| -> Result<Option<RateInterval>, String> {
                let Some(exposure) = &observed.exposure else {
                    return Ok(None);
                };
                let total = exposure[side].clone()?;
                Ok(Some(rate_interval(
                    events.iter().sum(),
                    total,
                    1_000.0,
                    CONFIDENCE,
                )))
            };
            let k = claim.k.unwrap_or(1);
            let reproduced = cont.iter().all(|&c| c == 0) && base.iter().all(|&b| b >= k);
            outcome.counts = Some(CountSummary {
                baseline_rate: rate(0, &base)?,
                contender_rate: rate(1, &cont)?,
                baseline: base,
                contender: cont,
            });
            Ok(if reproduced {
                Verdict::Reproduced
            } else {
                Verdict::NotReproduced
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{BlockValue, Paired};
    use crate::stats::CONFIDENCE;
    use crate::stats::ratio::{log_interval, ratio_interval};

    #[test]
    fn a_stalled_slice_costs_a_process_its_lost_time_not_its_level() {
        // The contender runs at 2x but one of its four slices was covered by a stall (1 op/s):
        // its level is the mean, (200 + 200 + 200 + 1) / 4 = 150.25, against the baseline's 100.
        let blocks = [200.0, 200.0, 200.0, 1.0]
            .map(|contender| BlockValue {
                baseline: 100.0,
                contender,
                baseline_first: true,
                coherence_ns: None,
            })
            .to_vec();
        let replicate = Paired {
            blocks,
            ..Paired::unordered(None, 1.0, 1.0)
        };
        assert!((replicate.log_ratio() - 1.5025f64.ln()).abs() < 1e-12);
    }

    #[test]
    fn ratio_interval_matches_a_hand_computed_example() {
        // log-ratios ln(2), ln(2), ln(4), ln(1): mean = ln(16)/4 = ln 2 → ratio 2.
        // sd of logs: values ln2*(1,1,2,0): mean ln2, deviations ln2*(0,0,1,-1), var = 2 ln²2 / 3,
        // sd = ln2*sqrt(2/3) = 0.565945; t(0.9995, 3) = 12.924; half = 12.924*0.565945/2 = 3.65714.
        let r = ratio_interval(&[2.0, 2.0, 4.0, 1.0]);
        assert!((r.ratio - 2.0).abs() < 1e-12);
        assert!((r.log_sd - 0.565_945).abs() < 1e-5, "{}", r.log_sd);
        assert!(
            (r.low - (2f64.ln() - 3.657_14).exp()).abs() < 1e-3,
            "{}",
            r.low
        );
        assert!(
            (r.high - (2f64.ln() + 3.657_14).exp()).abs() < 1.0,
            "{}",
            r.high
        );
    }

    /// A small deterministic generator for the coverage study (no wall time, no OS randomness).
    struct Lcg(u64);
    impl Lcg {
        fn uniform(&mut self) -> f64 {
            self.0 = self
                .0
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            ((self.0 >> 11) as f64 + 0.5) / (1u64 << 53) as f64
        }
        /// A standard normal draw (Box–Muller).
        fn normal(&mut self) -> f64 {
            let (u, v) = (self.uniform(), self.uniform());
            (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
        }
    }

    #[test]
    fn pair_means_cover_the_truth_and_pooled_blocks_do_not() {
        // True log ratio 0.2; each process pair has its own offset (between-pair sd 0.1), each
        // block its own noise (within-pair sd 0.02): ρ ≈ 0.96, the registry claims' regime.
        let truth = 0.2;
        let (pairs, blocks, runs) = (6, 8, 2_000);
        let mut rng = Lcg(42);
        let (mut pair_misses, mut pooled_misses) = (0, 0);
        for _ in 0..runs {
            let data: Vec<Vec<f64>> = (0..pairs)
                .map(|_| {
                    let offset = 0.1 * rng.normal();
                    (0..blocks)
                        .map(|_| truth + offset + 0.02 * rng.normal())
                        .collect()
                })
                .collect();
            let means: Vec<f64> = data
                .iter()
                .map(|b| b.iter().sum::<f64>() / b.len() as f64)
                .collect();
            let r = log_interval(&means, CONFIDENCE);
            if !(r.low.ln() <= truth && truth <= r.high.ln()) {
                pair_misses += 1;
            }
            // The old method: every block of ONE pair as if independent.
            let one_pair = log_interval(&data[0], CONFIDENCE);
            if !(one_pair.low.ln() <= truth && truth <= one_pair.high.ln()) {
                pooled_misses += 1;
            }
        }
        // Nominal 99.9%: about 2 misses in 2,000; allow sampling noise up to 1%.
        assert!(
            pair_misses <= 20,
            "pair-mean interval missed {pair_misses} of {runs}"
        );
        // The single-pair interval misses most of the time: it ignores the between-pair offset.
        assert!(
            pooled_misses > runs / 2,
            "the single-pair interval missed only {pooled_misses} of {runs}"
        );
    }
}
