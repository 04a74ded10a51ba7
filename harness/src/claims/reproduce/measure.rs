//! How the arms of a claim group are measured: in rounds of fresh processes (wall-time
//! scenarios), or once per seed (deterministic simulations).
//!
//! An *arm* is one configuration a claim side runs (scenario, parameters, threads,
//! environment). Claims that share arms form a group and are derived from the same
//! measurements, so a configuration is never measured twice in one run.
//!
//! A *round* (Kalibera & Jones' execution level, RMIT's round) starts one fresh process per arm,
//! in a random launch order and each with a random environment-block padding (which shifts the
//! stack), warms each up, then measures `m` blocks. A block measures every arm once; its order is
//! a random permutation, and every odd block reverses the block before it, so that with `m` even
//! each pair of arms runs as often A-B as B-A (ABBA balance for two arms). Everything random is
//! drawn from the run's seed and recorded.

use std::time::{Duration, Instant};

use rand::SeedableRng;
use rand::rngs::SmallRng;
use rand::seq::SliceRandom;
use serde::{Deserialize, Serialize};

use crate::run::result::{IterationResult, TrialSpec};
use crate::run::runner::Launcher;

/// The environment variable whose length shifts each process's stack (its value is padding).
pub const ENV_PAD: &str = "CRITSEC_ENV_PAD";

/// The measurements of one replicate of a group: a round of processes, or a seed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoundRecord {
    /// The seed offset of a deterministic replicate (iteration `n` runs seed + n).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// The arms in launch order (indices into the group's arms).
    pub launch_order: Vec<usize>,
    /// Environment padding of each arm's process, in bytes, by arm.
    pub env_pad: Vec<usize>,
    /// Per block: the order the arms were measured in, and each arm's iteration, by arm.
    pub blocks: Vec<BlockRecord>,
    /// Wall seconds to start, set up, verify and warm the round's processes.
    pub setup_seconds: f64,
    /// Wall seconds of all the round's blocks.
    pub block_seconds: f64,
    /// The CPU every process of the round was pinned to after its setup (none: where the
    /// scheduler put them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<usize>,
}

/// One block of a round.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BlockRecord {
    /// The order the arms were measured in (indices into the group's arms).
    pub order: Vec<usize>,
    /// Each arm's iteration, by arm index.
    pub results: Vec<IterationResult>,
    /// A cache line's round trip between two CPUs (ns), timed right after the block, while
    /// every arm's threads are parked (with [`RoundPlan::probe_coherence`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coherence_ns: Option<f64>,
}

/// What measuring an arm failed with: the arm's label and the reason.
#[derive(Debug, Clone, PartialEq)]
pub struct ArmError {
    /// Index of the arm.
    pub arm: usize,
    /// Why.
    pub message: String,
}

/// The block orders of one round: `m` permutations of `k` arms, odd blocks reversing the one
/// before, so every pair of arms is measured equally often in each order when `m` is even.
pub fn block_orders(k: usize, m: usize, rng: &mut SmallRng) -> Vec<Vec<usize>> {
    let mut orders: Vec<Vec<usize>> = Vec::with_capacity(m);
    for b in 0..m {
        if b % 2 == 1 {
            let mut rev = orders[b - 1].clone();
            rev.reverse();
            orders.push(rev);
        } else {
            let mut o: Vec<usize> = (0..k).collect();
            o.shuffle(rng);
            orders.push(o);
        }
    }
    orders
}

/// The random generator of one round of one group: every choice of a run replays from the
/// run's seed, the group's index and the round's.
pub fn round_rng(run_seed: u64, group: usize, round: usize) -> SmallRng {
    SmallRng::seed_from_u64(
        run_seed ^ (group as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (round as u64) << 32,
    )
}

/// How one round runs.
#[derive(Debug, Clone, Copy)]
pub struct RoundPlan {
    /// Warmup iterations per arm after setup.
    pub warmup: u32,
    /// Blocks.
    pub blocks: usize,
    /// Length of every iteration.
    pub iteration_time: Duration,
    /// Run the arms in forks.
    pub forked: bool,
    /// Pin the round's forks, after their setup, to one CPU drawn from the allowed ones (all
    /// to the same: the arms take turns, so each runs alone on it).
    pub pin: bool,
    /// Time a cache line's round trip between two CPUs after every block: what contended
    /// threads pay to hand a line over, which a VM's host may change under a round
    /// (METHODOLOGY.md, *Cache-line distance between the CPUs*). For multi-threaded groups.
    pub probe_coherence: bool,
}

/// How long the coherence probe after a block runs: a few thousand round trips, 2% of a quick
/// block.
const COHERENCE_PROBE: Duration = Duration::from_millis(2);

/// Runs one round of fresh processes for `arms`; verifies each before and after.
pub fn run_round(
    launcher: &Launcher,
    arms: &[TrialSpec],
    plan: RoundPlan,
    rng: &mut SmallRng,
) -> Result<(RoundRecord, Vec<(String, String)>), ArmError> {
    let k = arms.len();
    let mut launch_order: Vec<usize> = (0..k).collect();
    launch_order.shuffle(rng);
    let env_pad: Vec<usize> = (0..k)
        .map(|_| rand::Rng::random_range(rng, 0..=4096))
        .collect();
    let orders = block_orders(k, plan.blocks, rng);
    // Drawn after everything else, so that the orders replay whether or not the round is pinned.
    let cpu = plan
        .pin
        .then(crate::run::affinity::allowed_cpus)
        .filter(|cpus| cpus.len() > 1)
        .map(|cpus| cpus[rand::Rng::random_range(rng, 0..cpus.len())]);
    let probe_cpus = plan
        .probe_coherence
        .then(crate::run::affinity::allowed_cpus)
        .filter(|cpus| cpus.len() > 1)
        .map(|cpus| [cpus[0], cpus[cpus.len() - 1]]);
    let start = Instant::now();
    let specs: Vec<TrialSpec> = launch_order
        .iter()
        .map(|&a| {
            let mut spec = arms[a].clone();
            spec.env.push((ENV_PAD.to_string(), "x".repeat(env_pad[a])));
            spec
        })
        .collect();
    let started = launcher
        .start_all(&specs, plan.forked)
        .map_err(|e| ArmError {
            arm: launch_order[0],
            message: e.to_string(),
        })?;
    // Back to arm order.
    let mut handles: Vec<Option<(crate::run::fork::TrialHandle, String)>> =
        (0..k).map(|_| None).collect();
    for (slot, h) in launch_order.iter().zip(started) {
        handles[*slot] = Some(h);
    }
    let mut handles: Vec<(crate::run::fork::TrialHandle, String)> = handles
        .into_iter()
        .map(|h| h.expect("every arm started"))
        .collect();
    let mut pinned = None;
    if let Some(cpu) = cpu {
        for (a, (handle, _)) in handles.iter().enumerate() {
            if handle.pin_to(cpu).map_err(|e| ArmError {
                arm: a,
                message: e.to_string(),
            })? {
                pinned = Some(cpu);
            }
        }
    }
    for _ in 0..plan.warmup {
        for &a in &launch_order {
            handles[a]
                .0
                .iteration(true, plan.iteration_time)
                .map_err(|e| ArmError {
                    arm: a,
                    message: e.to_string(),
                })?;
        }
    }
    let setup_seconds = start.elapsed().as_secs_f64();
    let blocks_start = Instant::now();
    let mut blocks = Vec::with_capacity(plan.blocks);
    for order in orders {
        let mut results: Vec<Option<IterationResult>> = (0..k).map(|_| None).collect();
        for &a in &order {
            let r = handles[a]
                .0
                .iteration(false, plan.iteration_time)
                .map_err(|e| ArmError {
                    arm: a,
                    message: e.to_string(),
                })?;
            results[a] = Some(r);
        }
        // Between blocks, outside every arm's window: a probe that failed leaves a gap.
        let coherence_ns = probe_cpus.and_then(|cpus| {
            crate::run::coherence::cache_line_round_trips(cpus, 1, COHERENCE_PROBE)
                .ok()
                .and_then(|ns| ns.first().copied())
        });
        blocks.push(BlockRecord {
            order,
            results: results.into_iter().map(|r| r.expect("measured")).collect(),
            coherence_ns,
        });
    }
    let block_seconds = blocks_start.elapsed().as_secs_f64();
    let mut checks = Vec::with_capacity(k);
    for (a, (handle, before)) in handles.into_iter().enumerate() {
        let after = handle.finish().map_err(|e| ArmError {
            arm: a,
            message: e.to_string(),
        })?;
        checks.push((before, after));
    }
    Ok((
        RoundRecord {
            seed: None,
            launch_order,
            env_pad,
            blocks,
            setup_seconds,
            block_seconds,
            cpu: pinned,
        },
        checks,
    ))
}

/// A deterministic arm's iterations, one per seed, with its checks before and after.
#[derive(Debug, Clone)]
pub struct SeededRun {
    /// Iteration `n` ran seed + n.
    pub iterations: Vec<IterationResult>,
    /// The check values before and after.
    pub checks: (String, String),
}

impl SeededRun {
    /// This run's seeds followed by `later`'s (which ran the next ones): the checks before this
    /// run and after `later`.
    pub fn followed_by(&self, later: SeededRun) -> SeededRun {
        let mut iterations = self.iterations.clone();
        iterations.extend(later.iterations);
        SeededRun {
            iterations,
            checks: (self.checks.0.clone(), later.checks.1),
        }
    }
}

/// Runs a deterministic arm once per seed (iteration `n` of the trial runs seed + n): no
/// warmup, since virtual time has nothing to warm.
pub fn run_seeds(
    launcher: &Launcher,
    arm: &TrialSpec,
    seeds: u32,
    forked: bool,
) -> Result<SeededRun, String> {
    let (mut handle, before) = launcher.start(arm, forked).map_err(|e| e.to_string())?;
    let mut results = Vec::with_capacity(seeds as usize);
    for _ in 0..seeds {
        results.push(
            handle
                .iteration(false, Duration::from_secs(1))
                .map_err(|e| e.to_string())?,
        );
    }
    let after = handle.finish().map_err(|e| e.to_string())?;
    Ok(SeededRun {
        iterations: results,
        checks: (before, after),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_orders_are_balanced_for_every_pair_of_arms() {
        let mut rng = round_rng(7, 0, 0);
        for k in 2..5 {
            let orders = block_orders(k, 6, &mut rng);
            for a in 0..k {
                for b in 0..k {
                    if a == b {
                        continue;
                    }
                    let first = |o: &Vec<usize>| {
                        o.iter().position(|&x| x == a) < o.iter().position(|&x| x == b)
                    };
                    let ab = orders.iter().filter(|o| first(o)).count();
                    assert_eq!(ab, 3, "arms {a},{b} of {k}: {orders:?}");
                }
            }
        }
    }
}
