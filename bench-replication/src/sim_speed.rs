//! The simulator's own speed: the two claim configurations whose iterations cost the most wall
//! time, as ready-made [`SimConfig`]s for `benches/sim_speed.rs` and
//! `examples/sim_speed.rs`, which report wall seconds and events per wall second.
//!
//! They are the `claims.toml` parameters, built directly (no scenario parsing), so the figures
//! are what one iteration of those claims costs.

use critsec_replication::sim::{CpuConfig, NetworkConfig, SimConfig};
use critsec_replication::workload::WorkloadConfig;
use critsec_replication::{ClusterConfig, ProtocolKind, RejectionPolicy};

/// A named simulator workload.
#[derive(Debug, Clone)]
pub struct SpeedCase {
    /// Short name for reports.
    pub name: &'static str,
    /// The protocol.
    pub protocol: ProtocolKind,
    /// The run.
    pub cfg: SimConfig,
}

/// The claims' cluster (100 nodes, 2 owners, the post's timeouts and pools, the CPU model, 2 s
/// window, seed 42) with `requesters` per node, links of `latency_us` + up to `jitter_us`, and a
/// pause of `gc_pause_us` once a second per node (0: none).
pub fn claim_config(
    requesters: u32,
    latency_us: u64,
    jitter_us: u64,
    gc_pause_us: u64,
) -> SimConfig {
    SimConfig {
        cluster: ClusterConfig {
            nodes: 100,
            num_owners: 2,
            keys: 20_000,
            lock_timeout_us: 5_000_000,
            reply_timeout_us: 20_000_000,
            pool_size: 32,
            oob_pool_size: 8,
            rejection: RejectionPolicy::CallerRuns,
            ..ClusterConfig::default()
        },
        network: NetworkConfig {
            latency_us,
            jitter_us,
            ..NetworkConfig::default()
        },
        cpu: CpuConfig {
            cores: 4,
            per_input_us: 30,
            per_byte_ns: 2,
            gc_interval_us: if gc_pause_us > 0 { 1_000_000 } else { 0 },
            gc_pause_us,
        },
        workload: WorkloadConfig {
            requesters_per_node: requesters,
            read_pct: 80,
            value_size: 1000,
            ..WorkloadConfig::default()
        },
        duration_us: 2_000_000,
        start_spread_us: 1_000,
        seed: 42,
        threads: 1,
    }
}

/// Scale: the key queue on 1,000 nodes x 25 requesters, 3 ms links, no pauses, 2 s window (a
/// user sizing a cluster asks what happens beyond the post's 100 nodes).
pub fn scale_cases() -> Vec<SpeedCase> {
    let mut cfg = claim_config(25, 3_000, 300, 0);
    cfg.cluster.nodes = 1_000;
    vec![SpeedCase {
        name: "key-queue-1000x25",
        protocol: ProtocolKind::KeyQueue,
        cfg,
    }]
}

/// The claims' two slowest configurations: 100 x 100 lock forwarding on 3 ms links
/// (`ISPN-dist-sync-*` baseline) and the CPU-bound 100 x 25 key queue on 250 µs links with 20 ms
/// pauses (`ISPN-dist-sync-25-lock-timeouts` contender).
pub fn cases() -> Vec<SpeedCase> {
    vec![
        SpeedCase {
            name: "lock-forwarding-100x100",
            protocol: ProtocolKind::LockForwarding,
            cfg: claim_config(100, 3_000, 300, 0),
        },
        SpeedCase {
            name: "key-queue-100x25",
            protocol: ProtocolKind::KeyQueue,
            cfg: claim_config(25, 250, 50, 20_000),
        },
    ]
}
