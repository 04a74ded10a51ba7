//! When a lost message is repaired: JGroups 3.6.0's `UNICAST3` retransmission schedule (the
//! version Infinispan 7.0 ships), shared by the simulation and the threads driver.
//!
//! A message is lost when a full pool rejects it at the receiver (JGroups' `TP` discards what
//! its OOB pool cannot take, before `UNICAST3` sees it) or when the link loses it. `UNICAST3`
//! does not time each message: every node runs one retransmission task every `xmit_interval`
//! (500 ms by default and in Infinispan 7.0's stacks), which for each sender it has gaps from
//! asks for the missing messages in one request, and the sender resends every message asked
//! for. A gap is asked for one run after the run that found it (the task only asks for the
//! previous run's batch); a message already asked for and lost again is still missing at the
//! next run, so it is asked for then. The receiver finds a gap from the sender's later messages
//! on the same connection; a sender whose connection went quiet resends its highest unacked
//! message on the same schedule, which the model does not tell apart.
//!
//! The ticks run at multiples of the interval from the start of the run (every node's task
//! starts with it). The request and the resend each take a link's delay; if the link loses
//! either, the message is still missing at the next run, which asks for it again.

use rand::Rng;

use crate::message::{Input, NodeId};

/// `UNICAST3.xmit_interval` of JGroups 3.6.0 (also the value in Infinispan 7.0's
/// `default-jgroups-udp.xml` and `-tcp.xml`), in µs.
pub const XMIT_INTERVAL_US: u64 = 500_000;

/// The tick of the receiver's retransmission task at which a message lost at `lost_at` is asked
/// for: the second run after the loss, or the first if the message had been asked for before.
pub fn repair_tick(lost_at: u64, asked_before: bool, interval_us: u64) -> u64 {
    let interval = interval_us.max(1);
    let next = (lost_at / interval + 1) * interval;
    if asked_before { next } else { next + interval }
}

/// The highest per-mille chance of losing a transmission that the drivers apply, so that a
/// message is always repaired in the end.
pub const MAX_DROP_PER_MILLE: u32 = 900;

/// A link's latency: `latency_us` plus a uniform jitter in `0..=jitter_us`.
#[inline]
fn link_delay<R: Rng>(rng: &mut R, latency_us: u64, jitter_us: u64) -> u64 {
    if jitter_us > 0 {
        latency_us + rng.random_range(0..=jitter_us)
    } else {
        latency_us
    }
}

/// When a message sent at `now` arrives: one crossing of the link, then as many repairs as the
/// link loses it ([`repaired_arrival`]). Returns the arrival and how many times it was lost.
#[inline]
pub fn sent_arrival<R: Rng>(rng: &mut R, now: u64, link: &LinkFaults) -> (u64, u64) {
    let first = now + link_delay(rng, link.latency_us, link.jitter_us);
    repaired_arrival(rng, first, false, link)
}

/// When a transmission that reaches its receiver at `at` is delivered, if the link loses it with
/// a chance of `drop_per_mille` each time it crosses: asked for at the receiver's repair tick,
/// then the request and the resend each take a link's delay, as often as it is lost. `asked`:
/// the message had been asked for before. Returns the arrival and how many times it was lost.
/// The simulation and the threads driver both repair link losses here, so they draw the same.
#[inline]
pub fn repaired_arrival<R: Rng>(
    rng: &mut R,
    mut at: u64,
    mut asked: bool,
    link: &LinkFaults,
) -> (u64, u64) {
    let mut losses = 0;
    if link.drop_per_mille == 0 {
        return (at, losses);
    }
    while rng.random_range(0..1000) < link.drop_per_mille.min(MAX_DROP_PER_MILLE) {
        losses += 1;
        at = repair_tick(at, asked, link.xmit_interval_us)
            + link_delay(rng, link.latency_us, link.jitter_us)
            + link_delay(rng, link.latency_us, link.jitter_us);
        asked = true;
    }
    (at, losses)
}

/// When a message asked for at the receiver's repair tick `tick` arrives: the request crosses the
/// link to the sender and the resend the link back. If either is lost, the message is still
/// missing at the task's next run, which asks again (as for a message asked for before, whichever
/// of the two was lost). The simulation and the threads driver both repair rejected messages
/// here. Returns the arrival and how many times a crossing was lost.
#[inline]
pub fn resent_arrival<R: Rng>(rng: &mut R, tick: u64, link: &LinkFaults) -> (u64, u64) {
    let request = link_delay(rng, link.latency_us, link.jitter_us);
    let resend = link_delay(rng, link.latency_us, link.jitter_us);
    repaired_arrival(rng, tick + request + resend, true, link)
}

/// What [`repaired_arrival`] needs to know of a link.
#[derive(Debug, Clone, Copy)]
pub struct LinkFaults {
    /// One-way latency, µs.
    pub latency_us: u64,
    /// Uniform extra latency in `0..=jitter_us`.
    pub jitter_us: u64,
    /// Per-mille chance that a transmission is lost.
    pub drop_per_mille: u32,
    /// The receivers' retransmission task's period, µs.
    pub xmit_interval_us: u64,
}

/// Which of a step's rejections is its input, when the input is a message resent on request
/// (lost again, it had been asked for before). A machine handles its input first, so that is the
/// first rejection of a message from the input's sender; others are the node's own messages.
#[derive(Debug)]
pub struct ResentInput(Option<NodeId>);

impl ResentInput {
    /// For a step of `input`; `resent`: it is a message resent on request.
    pub fn new(input: &Input, resent: bool) -> Self {
        ResentInput(match (input, resent) {
            (Input::Message { from, .. }, true) => Some(*from),
            _ => None,
        })
    }

    /// Whether the step's next rejection, of a message from `from`, had been asked for before.
    pub fn asked_before(&mut self, from: NodeId) -> bool {
        let is_input = self.0 == Some(from);
        if is_input {
            self.0 = None;
        }
        is_input
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A lost transmission arrives two links after its repair tick, each loss after the first
    /// counted as asked for before; a link that loses nothing draws nothing.
    #[test]
    fn link_losses_are_repaired_on_the_ticks_and_nothing_is_drawn_without_them() {
        use rand::SeedableRng;
        use rand::rngs::SmallRng;
        let link = |drop_per_mille| LinkFaults {
            latency_us: 10,
            jitter_us: 0,
            drop_per_mille,
            xmit_interval_us: 500,
        };
        let mut rng = SmallRng::seed_from_u64(3);
        let untouched = rng.clone();
        assert_eq!(repaired_arrival(&mut rng, 123, false, &link(0)), (123, 0));
        assert_eq!(rng.random::<u64>(), untouched.clone().random::<u64>());
        let mut lost_often = 0;
        for seed in 0..200 {
            let mut rng = SmallRng::seed_from_u64(seed);
            let (at, losses) = repaired_arrival(&mut rng, 123, false, &link(MAX_DROP_PER_MILLE));
            // 123 is found at 500 and asked for at 1000; each later loss waits one run more.
            let want = if losses == 0 {
                123
            } else {
                500 + 500 * losses + 20
            };
            assert_eq!(at, want, "seed {seed}, {losses} losses");
            lost_often += u64::from(losses > 1);
        }
        assert!(
            lost_often > 100,
            "at 900 per mille most transmissions are lost twice"
        );
    }

    /// A rejected message asked for at a tick arrives two links later; each time the request or
    /// the resend is lost, one run of the task later.
    #[test]
    fn a_lost_request_or_resend_is_asked_for_again_at_the_next_run() {
        use rand::SeedableRng;
        use rand::rngs::SmallRng;
        let link = LinkFaults {
            latency_us: 10,
            jitter_us: 0,
            drop_per_mille: MAX_DROP_PER_MILLE,
            xmit_interval_us: 500,
        };
        let mut lost = 0;
        for seed in 0..200 {
            let mut rng = SmallRng::seed_from_u64(seed);
            let (at, losses) = resent_arrival(&mut rng, 1_000, &link);
            assert_eq!(
                at,
                1_000 + 500 * losses + 20,
                "seed {seed}, {losses} losses"
            );
            lost += u64::from(losses > 0);
        }
        assert!(lost > 150, "at 900 per mille most resends are lost");
    }

    #[test]
    fn a_gap_is_asked_for_one_run_after_the_run_that_found_it() {
        // Lost between the runs at 0 and 500 ms: found at 500, asked for at 1000.
        assert_eq!(repair_tick(1, false, 500), 1_000);
        assert_eq!(repair_tick(499, false, 500), 1_000);
        // Lost at a run's instant: that run has already looked.
        assert_eq!(repair_tick(500, false, 500), 1_500);
        // Asked for before and lost again: still missing at the next run.
        assert_eq!(repair_tick(1_003, true, 500), 1_500);
        assert_eq!(repair_tick(7, true, 0), 8);
    }
}
