//! Mutation tests of the replication checkers: each protocol with one deliberate bug,
//! run in the simulation and under the threads driver, must fail its verification with the
//! violation that bug produces. A checker that passes a broken protocol checks nothing.
//!
//! Every mutant is a [`WriteProtocol`] decorator over a real protocol, touching only writes of
//! the keys [`mutated`] picks (a quarter of them), so the rest of the run is a normal run.
//!
//! | mutation | what the broken node does |
//! |---|---|
//! | [`DROP_BACKUP_WRITE`] | a backup acks a write of a mutated key but keeps its old entry |
//! | [`APPLY_OUT_OF_ORDER`] | a backup applies a write, then the entry it replaced (an older version) over it |
//! | [`ACK_BEFORE_APPLY`] | the primary acknowledges (and replicates) a put whose own apply is lost |
//! | [`SKIP_SEQUENCE`] | Triangle's primary skips a sequence number (sends 2, 3, ... for 1, 2, ...) |
//! | [`DIVERGE_PAYLOAD`] | a backup applies a write with one payload byte flipped |

use super::*;
use crate::components::pool::Slot;
use crate::components::timeouts::Deadline;
use crate::driver::threads::{ThreadCluster, ThreadsConfig};
use crate::message::{Key, Msg, NodeId, Output};
use crate::node::{NodeBase, ProtocolNode};
use crate::protocol::{GetPlan, KeyQueueProtocol, TriangleProtocol, WriteProtocol};
use crate::verifier::verify_snapshots;
use crate::{
    AckLog, LockForwardingProtocol, NodeMachine, Value, VerifyError, VerifyReport, Versioned,
};
use std::time::Duration;

const DROP_BACKUP_WRITE: u8 = 0;
const APPLY_OUT_OF_ORDER: u8 = 1;
const ACK_BEFORE_APPLY: u8 = 2;
const SKIP_SEQUENCE: u8 = 3;
const DIVERGE_PAYLOAD: u8 = 4;

/// The keys a mutant breaks.
fn mutated(key: Key) -> bool {
    key % 4 == 0
}

/// Protocol `P` with mutation `M`.
struct Mutant<P, const M: u8> {
    inner: P,
}

impl<P: WriteProtocol, const M: u8> Mutant<P, M> {
    /// A backup's copy of a write (lock forwarding's and Triangle's `BackupWrite`, the key
    /// queue's `Replicate`) as the mutant receives it, before the real protocol sees it.
    fn receive_backup_write(base: &NodeBase, mut msg: Msg) -> (Msg, Option<(Key, Versioned)>) {
        let (Msg::BackupWrite { key, entry, .. } | Msg::Replicate { key, entry, .. }) = &mut msg
        else {
            return (msg, None);
        };
        let (key, before) = (*key, base.data.get(*key));
        if mutated(key) {
            match M {
                DROP_BACKUP_WRITE => *entry = before.clone(),
                DIVERGE_PAYLOAD if !entry.value.is_empty() => {
                    let mut bytes = entry.value.bytes().to_vec();
                    let last = bytes.len() - 1;
                    bytes[last] ^= 0x5a;
                    entry.value = Value::from_bytes(&bytes);
                }
                _ => {}
            }
        }
        (msg, Some((key, before)))
    }

    /// After the real protocol handled a backup write of `key` that replaced `before`.
    fn after_backup_write(base: &mut NodeBase, key: Key, before: Versioned) {
        if M == APPLY_OUT_OF_ORDER && mutated(key) && base.data.version(key) > before.version {
            // The older write "arrives late" and is applied unconditionally.
            base.data.apply(key, before);
        }
    }
}

impl<P: WriteProtocol, const M: u8> WriteProtocol for Mutant<P, M> {
    const KIND: ProtocolKind = P::KIND;

    fn new(base: &NodeBase) -> Self {
        Mutant {
            inner: P::new(base),
        }
    }

    fn is_command(msg: &Msg) -> bool {
        P::is_command(msg)
    }

    fn get_plan(base: &NodeBase, key: Key) -> GetPlan {
        P::get_plan(base, key)
    }

    fn put_acks(base: &NodeBase, key: Key) -> u8 {
        P::put_acks(base, key)
    }

    fn on_command(
        &mut self,
        base: &mut NodeBase,
        now: u64,
        slot: Slot,
        from: NodeId,
        msg: Msg,
        out: &mut Vec<Output>,
    ) {
        let (msg, write) = Self::receive_backup_write(base, msg);
        self.inner.on_command(base, now, slot, from, msg, out);
        if let Some((key, before)) = write {
            Self::after_backup_write(base, key, before);
        }
    }

    fn on_lock_granted(&mut self, base: &mut NodeBase, now: u64, op: u64, out: &mut Vec<Output>) {
        let key = base.ops.get(op).map(|o| o.key);
        let sent = out.len();
        if M == ACK_BEFORE_APPLY && key.is_some_and(mutated) {
            let saved = base.data.clone();
            self.inner.on_lock_granted(base, now, op, out);
            base.data = saved;
        } else {
            self.inner.on_lock_granted(base, now, op, out);
        }
        if M == SKIP_SEQUENCE {
            for o in &mut out[sent..] {
                if let Output::Send {
                    msg: Msg::BackupWrite { seq, .. },
                    ..
                } = o
                {
                    seq.seq += 1;
                }
            }
        }
    }

    fn on_message(
        &mut self,
        base: &mut NodeBase,
        now: u64,
        from: NodeId,
        msg: Msg,
        out: &mut Vec<Output>,
    ) {
        let (msg, write) = Self::receive_backup_write(base, msg);
        self.inner.on_message(base, now, from, msg, out);
        if let Some((key, before)) = write {
            Self::after_backup_write(base, key, before);
        }
    }

    fn on_deadline(&mut self, base: &mut NodeBase, now: u64, d: Deadline, out: &mut Vec<Output>) {
        self.inner.on_deadline(base, now, d, out);
    }

    fn busy_reason(&self) -> Option<String> {
        self.inner.busy_reason()
    }

    fn fill_stats(&self, stats: &mut NodeStats) {
        self.inner.fill_stats(stats);
    }

    fn sequences(&self) -> (Vec<u64>, Vec<u64>) {
        let (mut sent, delivered) = self.inner.sequences();
        if M == SKIP_SEQUENCE {
            // What the primary really sent: one past its sequencer.
            for s in sent.iter_mut().filter(|s| **s > 0) {
                *s += 1;
            }
        }
        (sent, delivered)
    }
}

/// Machines of `P` with mutation `M` for every member of `cfg`.
fn machines<P: WriteProtocol, const M: u8>(cfg: &ClusterConfig) -> Vec<Box<dyn NodeMachine>> {
    (0..cfg.nodes)
        .map(|n| {
            let base = NodeBase::new(n as NodeId, cfg).expect("config");
            Box::new(ProtocolNode::<Mutant<P, M>>::new(base)) as Box<dyn NodeMachine>
        })
        .collect()
}

fn mutant_cluster<const M: u8>(p: ProtocolKind, cfg: &ClusterConfig) -> Vec<Box<dyn NodeMachine>> {
    match p {
        ProtocolKind::LockForwarding => machines::<LockForwardingProtocol, M>(cfg),
        ProtocolKind::KeyQueue => machines::<KeyQueueProtocol, M>(cfg),
        ProtocolKind::Triangle => machines::<TriangleProtocol, M>(cfg),
    }
}

/// The simulation's report on mutant `M` of `p` (the conformance suite's small cluster) with
/// `read_pct` percent gets.
fn simulate<const M: u8>(p: ProtocolKind, read_pct: u32) -> SimReport {
    let mut cfg = small(1);
    cfg.workload.read_pct = read_pct;
    let nodes = mutant_cluster::<M>(p, &cfg.cluster);
    let r = Simulation::with_machines(cfg, nodes)
        .expect("valid config")
        .run();
    // Puts stall for good behind a skipped sequence number; every other mutant lets most work.
    assert!(
        r.requesters.ok_ops() > 100 || M == SKIP_SEQUENCE,
        "{p:?}: {r:#?}"
    );
    r
}

/// The verifier's verdict on mutant `M` of `p` in the simulation. Puts only, so that the run's
/// history check (which reads gets) leaves the verdict to the verifier of the quiescent cluster.
/// A run the drain cap cut has no verifier's verdict: it fails here.
fn simulated<const M: u8>(p: ProtocolKind) -> Result<VerifyReport, VerifyError> {
    simulate::<M>(p, 0).verify.map_err(|e| match e {
        SimError::Verify(e) => e,
        cut @ SimError::DrainCut { .. } => panic!("{p:?}: {cut}"),
    })
}

/// The verifier's verdict on mutant `M` of `p` under the threads driver: three nodes, a
/// requester per node putting keys `0..24` twice, then the quiescent cluster checked.
fn threaded<const M: u8>(p: ProtocolKind) -> Result<VerifyReport, VerifyError> {
    let cfg = ThreadsConfig {
        cluster: ClusterConfig {
            nodes: 3,
            keys: 24,
            reply_timeout_us: 50_000,
            ..ClusterConfig::default()
        },
        latency_us: 50,
        jitter_us: 50,
        ..ThreadsConfig::default()
    };
    let keys = cfg.cluster.keys;
    let cluster = ThreadCluster::with_machines(cfg.clone(), mutant_cluster::<M>(p, &cfg.cluster))
        .expect("config");
    let logs: Vec<AckLog> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..3u16)
            .map(|node| {
                let mut c = cluster.client(node).expect("client");
                s.spawn(move || {
                    // Triangle's puts time out once its backups stall: a few show it.
                    let puts = if M == SKIP_SEQUENCE { 4 } else { 2 * keys };
                    for i in 0..puts {
                        let tag = (u64::from(node) << 32) | u64::from(i);
                        // A failed put (a mutant may make one time out) is simply not acked.
                        let _ = c.put(i % keys, Value::new(tag, 64));
                    }
                    c.take_acks()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut acks = AckLog::new(keys);
    for l in &logs {
        acks.merge(l);
    }
    assert!(
        acks.acked() > 0 || M == SKIP_SEQUENCE,
        "{p:?}: no put was acknowledged"
    );
    match cluster.quiesce(Duration::from_secs(2)) {
        Ok(snaps) => {
            let snaps: Vec<_> = snaps.into_iter().map(|(s, _)| s).collect();
            verify_snapshots(&snaps, &acks)
        }
        // A node still holding work is what the verifier reports first, too.
        Err(e) => Err(VerifyError::NotQuiescent {
            node: 0,
            what: e.to_string(),
        }),
    }
}

/// Both drivers' verdicts on mutant `M` of `p`.
fn both<const M: u8>(p: ProtocolKind) -> [(&'static str, Result<VerifyReport, VerifyError>); 2] {
    [
        ("simulation", simulated::<M>(p)),
        ("threads", threaded::<M>(p)),
    ]
}

#[test]
fn unmutated_decorators_verify_so_every_failure_below_is_the_mutation() {
    // A mutation number no arm matches: the decorator passes everything through.
    for &p in ProtocolKind::ALL {
        for (driver, r) in both::<255>(p) {
            assert!(r.is_ok(), "{p:?} under {driver}: {r:?}");
        }
    }
}

#[test]
fn a_dropped_backup_write_is_caught_as_owners_disagreeing() {
    for &p in ProtocolKind::ALL {
        for (driver, r) in both::<DROP_BACKUP_WRITE>(p) {
            assert!(
                matches!(r, Err(VerifyError::OwnersDisagree { key, .. }) if mutated(key)),
                "{p:?} under {driver}: {r:?}"
            );
        }
    }
}

#[test]
fn a_backup_write_applied_out_of_order_is_caught_as_a_version_regression() {
    for &p in ProtocolKind::ALL {
        for (driver, r) in both::<APPLY_OUT_OF_ORDER>(p) {
            assert!(
                matches!(r, Err(VerifyError::VersionRegression { count, .. }) if count > 0),
                "{p:?} under {driver}: {r:?}"
            );
        }
    }
}

#[test]
fn a_put_acked_before_the_primary_applied_it_is_caught() {
    for &p in ProtocolKind::ALL {
        for (driver, r) in both::<ACK_BEFORE_APPLY>(p) {
            let caught = match &r {
                // The simulation's history check compares each put's ack with its primary.
                Err(VerifyError::BadPutReply { key, what }) => {
                    driver == "simulation" && mutated(*key) && what.contains("primary holds")
                }
                // The backups applied the write the primary lost.
                Err(VerifyError::OwnersDisagree { key, ea, eb, .. }) => {
                    mutated(*key) && ea.version < eb.version
                }
                _ => false,
            };
            assert!(caught, "{p:?} under {driver}: {r:?}");
        }
    }
}

#[test]
fn a_skipped_sequence_number_stalls_triangles_backups_and_is_caught() {
    for (driver, r) in both::<SKIP_SEQUENCE>(ProtocolKind::Triangle) {
        assert!(
            matches!(&r, Err(VerifyError::NotQuiescent { what, .. }) if what.contains("buffered")),
            "triangle under {driver}: {r:?}"
        );
    }
}

#[test]
fn a_diverged_payload_byte_is_caught_as_owners_disagreeing_at_one_version() {
    for &p in ProtocolKind::ALL {
        for (driver, r) in both::<DIVERGE_PAYLOAD>(p) {
            assert!(
                matches!(&r, Err(VerifyError::OwnersDisagree { key, ea, eb, .. })
                    if mutated(*key) && ea.version == eb.version && ea.value.tag() == eb.value.tag()),
                "{p:?} under {driver}: {r:?}"
            );
        }
    }
}

/// The run's history check, too, is caught out by a broken protocol: with gets in the workload, a
/// backup that drops writes answers a get with a version older than one already acknowledged
/// (lock forwarding and Triangle read any owner; the key queue reads only the primary, so its
/// dropped backup writes are the verifier's to find).
#[test]
fn a_dropped_backup_write_is_caught_by_the_history_check_as_a_stale_read() {
    for p in [ProtocolKind::LockForwarding, ProtocolKind::Triangle] {
        let r = simulate::<DROP_BACKUP_WRITE>(p, 50);
        assert!(r.stale_reads > 0, "{p:?}: {r:#?}");
        assert!(
            matches!(&r.verify, Err(SimError::Verify(VerifyError::StaleRead { key, floor, got, .. })) if mutated(*key) && got < floor),
            "{p:?}: {:?}",
            r.verify
        );
    }
    let r = simulate::<DROP_BACKUP_WRITE>(ProtocolKind::KeyQueue, 50);
    assert_eq!(r.stale_reads, 0, "{r:#?}");
    assert!(
        matches!(
            r.verify,
            Err(SimError::Verify(VerifyError::OwnersDisagree { .. }))
        ),
        "{:?}",
        r.verify
    );
}
