//! Regression tests for the simulation bugs of issue #18, one per bug, each named after what it
//! checks.

use super::*;

/// A small cluster with the CPU model off (inputs cost no virtual time), `requesters` per node,
/// and a 2 ms window.
fn no_cpu(nodes: usize, num_owners: usize, keys: u32, requesters: u32) -> SimConfig {
    SimConfig {
        cluster: ClusterConfig {
            nodes,
            num_owners,
            keys,
            ..ClusterConfig::default()
        },
        workload: WorkloadConfig {
            requesters_per_node: requesters,
            ..WorkloadConfig::default()
        },
        cpu: CpuConfig {
            cores: 0,
            ..CpuConfig::default()
        },
        duration_us: 2_000,
        start_spread_us: 100,
        ..SimConfig::default()
    }
}

/// Issue #18, bug 4: when an operation takes no virtual time (one node and one owner with the
/// CPU model off; zero latency and jitter; key-queue with one key and a requester on its
/// primary), the next operation was issued at the same instant, forever: virtual time never
/// passed the window and memory grew without bound. Every such run must end and verify.
#[test]
fn runs_whose_operations_take_no_virtual_time_still_end() {
    for &p in ProtocolKind::ALL {
        let single = no_cpu(1, 1, 100, 4);
        let mut instant_links = no_cpu(3, 2, 100, 4);
        instant_links.network.latency_us = 0;
        instant_links.network.jitter_us = 0;
        let one_key = no_cpu(2, 2, 1, 4);
        for (case, cfg) in [
            ("one node, one owner", single),
            ("zero latency and jitter", instant_links),
            ("one key", one_key),
        ] {
            let window = cfg.duration_us;
            let r = run(p, cfg);
            assert_verified(&r);
            assert!(r.requesters.ok_ops() > 0, "{p:?}, {case}: {r:#?}");
            // Virtual time reached the end of the window, where requesters stop issuing.
            assert!(
                r.end_us + 1 >= window,
                "{p:?}, {case}: ended at {} µs",
                r.end_us
            );
        }
    }
}
