//! The simulation's report does not depend on its worker threads: random small clusters with
//! faults (drops, spikes, GC pauses, a slow node, tiny pools, short timeouts), every protocol,
//! run on 1, 2 and 4 threads, give byte-identical reports. A window longer than the lookahead
//! (a broken synchronisation rule, test-only) lets a message reach another thread's node after
//! its time has passed, and the same comparison catches it. A panic on any thread ends the run.

use proptest::prelude::*;

use super::*;

/// A small cluster with faults, from the drawn values.
#[allow(clippy::too_many_arguments)]
fn faulty(
    seed: u64,
    nodes: usize,
    requesters: u32,
    latency_us: u64,
    drop_per_mille: u32,
    spike_per_mille: u32,
    tiny_pools: bool,
    short_timeouts: bool,
    cpu: bool,
) -> SimConfig {
    SimConfig {
        cluster: ClusterConfig {
            nodes,
            keys: 40,
            pool_size: if tiny_pools { 1 } else { 8 },
            oob_pool_size: if tiny_pools { 1 } else { 4 },
            lock_timeout_us: if short_timeouts { 2_000 } else { 200_000 },
            reply_timeout_us: if short_timeouts { 3_000 } else { 500_000 },
            ..ClusterConfig::default()
        },
        network: NetworkConfig {
            latency_us,
            jitter_us: latency_us / 2,
            drop_per_mille,
            xmit_interval_us: 5_000,
            spike_per_mille,
            spike_us: 4_000,
            slow_node: Some(1),
            slow_node_extra_us: 700,
        },
        cpu: if cpu {
            CpuConfig {
                cores: 2,
                per_input_us: 20,
                per_byte_ns: 2,
                gc_interval_us: 10_000,
                gc_pause_us: 1_500,
            }
        } else {
            CpuConfig::default()
        },
        workload: WorkloadConfig {
            requesters_per_node: requesters,
            hot_key_pct: 30,
            hot_keys: 2,
            ..WorkloadConfig::default()
        },
        duration_us: 30_000,
        start_spread_us: 500,
        seed,
        threads: 1,
    }
}

/// The report of `p` with `cfg` on `threads` threads, as text (every field, byte for byte).
fn report(p: ProtocolKind, cfg: &SimConfig, threads: usize, broken: bool) -> String {
    let mut sim = Simulation::new(
        p,
        SimConfig {
            threads,
            ..cfg.clone()
        },
    )
    .expect("valid config");
    if broken {
        sim.break_window_rule();
    }
    format!("{:?}", sim.run())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn the_report_is_the_same_on_one_two_and_four_threads(
        seed in any::<u64>(),
        protocol in prop::sample::select(ProtocolKind::ALL.to_vec()),
        nodes in 2usize..9,
        requesters in 1u32..5,
        latency_us in 1u64..1_500,
        drop_per_mille in prop::sample::select(vec![0u32, 30, 200]),
        spike_per_mille in prop::sample::select(vec![0u32, 50]),
        tiny_pools in any::<bool>(),
        short_timeouts in any::<bool>(),
        cpu in any::<bool>(),
    ) {
        let cfg = faulty(seed, nodes, requesters, latency_us, drop_per_mille, spike_per_mille,
            tiny_pools, short_timeouts, cpu);
        let one = report(protocol, &cfg, 1, false);
        prop_assert!(one.contains("events: "), "{one}");
        for threads in [2, 4] {
            let many = report(protocol, &cfg, threads, false);
            prop_assert_eq!(&one, &many, "{} threads", threads);
        }
    }
}

/// Without latency there is no lookahead: the run takes one thread whatever was asked, and
/// says so (`lookahead_us: 0`).
#[test]
fn links_without_latency_run_on_one_thread() {
    let mut cfg = faulty(7, 4, 3, 0, 0, 0, false, false, true);
    cfg.network.jitter_us = 0;
    cfg.network.slow_node = None;
    let one = report(ProtocolKind::Triangle, &cfg, 1, false);
    assert!(one.contains("lookahead_us: 0"), "{one}");
    assert_eq!(one, report(ProtocolKind::Triangle, &cfg, 4, false));
}

/// The checker's check: windows three times the lookahead let messages between threads arrive
/// late, and the comparison above tells the reports apart.
#[test]
fn a_window_longer_than_the_lookahead_is_caught() {
    let caught = (0..8).any(|seed| {
        let cfg = faulty(seed, 6, 4, 300, 0, 0, false, false, true);
        let p = ProtocolKind::ALL[seed as usize % ProtocolKind::ALL.len()];
        report(p, &cfg, 1, true) != report(p, &cfg, 2, true)
    });
    assert!(caught, "no report changed with a broken window rule");
}

/// A node that panics on a worker thread, or on the coordinator's, fails the run with its panic;
/// the other threads do not wait for it forever.
#[test]
fn a_panic_on_any_worker_thread_ends_the_run_with_that_panic() {
    for panicking in [0usize, 1] {
        let cfg = SimConfig {
            threads: 2,
            ..faulty(3, 4, 2, 300, 0, 0, false, false, false)
        };
        let mut nodes = ProtocolKind::KeyQueue
            .build_cluster(&cfg.cluster)
            .expect("valid config");
        // A protocol bug: the node panics on its first input after 5 ms.
        intercept(&mut nodes, panicking, |inner, now, input, out| {
            assert!(now < 5_000, "a protocol bug at {now} µs");
            inner.handle(now, input, out);
        });
        let sim = Simulation::with_machines(cfg, nodes).expect("valid config");
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| sim.run()));
        let msg = r.expect_err("the run panics");
        let text = msg.downcast_ref::<String>().cloned().unwrap_or_default();
        assert!(text.contains("a protocol bug"), "node {panicking}: {text}");
    }
}
