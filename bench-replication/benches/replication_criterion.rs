//! criterion bench: one put and one get on a 2-node cluster driven in-thread with instant
//! delivery (`LocalCluster`), per protocol: the protocol's own CPU cost per operation (state
//! machine steps, lock table, slab and deadline bookkeeping), with no channel or wait in it. A
//! put includes allocating its 1000-byte value (IspnPerfTest's `msg_size`) and the driver's copy
//! of those bytes on every hop between the nodes; a get's reply copies the stored value.
use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use critsec_replication::local::LocalCluster;
use critsec_replication::workload::WorkloadConfig;
use critsec_replication::{ClientOp, ClusterConfig, Outcome, ProtocolKind, Value};
use critsec_sync::kind::StrategyKind;

fn bench(c: &mut Criterion) {
    let cfg = ClusterConfig {
        nodes: 2,
        keys: 1024,
        ..ClusterConfig::default()
    };
    for &kind in ProtocolKind::ALL {
        let mut cluster = LocalCluster::new(kind, &cfg).expect("valid config");
        // Originate on node 1 for a key node 0 is primary of: the remote (4-message) path.
        let key = (0..1024)
            .find(|&k| cluster.nodes()[0].base().hash().primary(k) == 0)
            .unwrap_or(0);
        let mut n = 0u64;
        let value_size = WorkloadConfig::default().value_size as usize;
        c.bench_function(&format!("replication/{}/put", kind.id()), |b| {
            b.iter(|| {
                n += 1;
                let value = Value::new((key as u64) << 32 | (n & 0xFFFF_FFFF), value_size);
                let out = cluster.call(1, ClientOp::Put(key, value));
                assert!(matches!(out, Some(Outcome::Put(_))));
                black_box(out)
            })
        });
        c.bench_function(&format!("replication/{}/get", kind.id()), |b| {
            b.iter(|| black_box(cluster.call(1, ClientOp::Get(black_box(key)))))
        });
        assert!(
            cluster.verify().is_ok(),
            "{kind:?}: the benchmarked cluster must verify"
        );
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
