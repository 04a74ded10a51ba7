//! divan bench: puts and gets through a real 2-node threads cluster (transport and pool threads,
//! crossbeam channels, zero link latency), swept over requester threads; each thread has its own
//! client. A put allocates a 1000-byte value, copied once per hop between the nodes.
use std::cell::RefCell;
use std::sync::LazyLock;

use critsec_replication::threads::{ClusterClient, ThreadCluster, ThreadsConfig};
use critsec_replication::{ClientOp, ClusterConfig, Outcome, ProtocolKind, Value};
use critsec_sync::kind::StrategyKind;

fn main() {
    divan::main();
}

const KEYS: u32 = 1024;
/// IspnPerfTest's `msg_size`.
const VALUE_SIZE: usize = 1000;

static CLUSTERS: LazyLock<Vec<ThreadCluster>> = LazyLock::new(|| {
    ProtocolKind::ALL
        .iter()
        .map(|&kind| {
            let cfg = ThreadsConfig {
                cluster: ClusterConfig {
                    nodes: 2,
                    keys: KEYS,
                    ..ClusterConfig::default()
                },
                ..ThreadsConfig::default()
            };
            ThreadCluster::start(kind, cfg).expect("valid config")
        })
        .collect()
});

thread_local! {
    static CLIENTS: RefCell<Vec<(ClusterClient, u32)>> = RefCell::new(
        CLUSTERS.iter().map(|c| (c.client(1).expect("client"), 0)).collect()
    );
}

fn call(kind: usize, put: bool) -> u64 {
    CLIENTS.with(|c| {
        let mut c = c.borrow_mut();
        let (client, n) = &mut c[kind];
        *n = n.wrapping_add(1);
        let key = *n % KEYS;
        let op = if put {
            ClientOp::Put(key, Value::new((key as u64) << 32 | *n as u64, VALUE_SIZE))
        } else {
            ClientOp::Get(key)
        };
        let key = op.key();
        match client.call(op) {
            Ok(Outcome::Got(e)) | Ok(Outcome::Put(e)) => e.version,
            Ok(Outcome::Failed(_)) | Err(_) => panic!("op on key {key} failed on an idle cluster"),
        }
    })
}

#[divan::bench(args = ["lock-forwarding", "key-queue", "triangle"], threads = [1, 2, 4])]
fn put(protocol: &str) -> u64 {
    let kind = ProtocolKind::ALL
        .iter()
        .position(|k| k.id() == protocol)
        .unwrap_or(0);
    call(kind, true)
}

#[divan::bench(args = ["lock-forwarding", "key-queue", "triangle"], threads = [1, 2, 4])]
fn get(protocol: &str) -> u64 {
    let kind = ProtocolKind::ALL
        .iter()
        .position(|k| k.id() == protocol)
        .unwrap_or(0);
    call(kind, false)
}
