//! The simulation loop: requesters issue operations in a closed loop, the event queue delivers
//! messages, timers and CPU-delayed inputs to the node machines in virtual-time order, and after
//! the window the run drains to quiescence (or a cap, which moves while operations still
//! complete: [`DrainCap`]; a cut run fails with what was still in flight) and the verifier
//! checks the cluster. With `requests_per_node` (IspnPerfTest's run shape) the requesters stop
//! after their share of the requests instead, and the window is the time until the last
//! completed. A message a node's full pools reject waits for its connection's repair
//! ([`retransmission`](crate::driver::retransmission)): the messages of one connection asked for
//! at one run of the receiver's retransmission task arrive together, as one event.
//!
//! **Worker threads.** The cluster is split into [`Partition`]s, one per worker thread, which
//! run in lockstep windows of virtual time no longer than the least link latency (the
//! *lookahead*: conservative synchronisation, as in Chandy–Misra–Bryant's simulations): a
//! message takes at least that long, so nothing a partition does in a window can reach another
//! before the window ends. Between windows the coordinator (the calling thread) hands the mail
//! over, runs the history check over the window's operations and applies the drain cap. Every
//! run, on one thread too, takes the same windows, and each node draws from its own streams and
//! orders its events by their own keys, so the report is the same for any number of threads. A
//! configuration without lookahead (zero latency) runs on one thread.
//!
//! Every operation is also checked against the puts of its key acknowledged before it was
//! issued ([`HistoryCheck`]: no stale read, consistent put acks), in virtual-time order at the
//! end of each window; a violation fails the run's verification as the verifier's own findings
//! do.

use std::any::Any;
use std::panic::{self, AssertUnwindSafe};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use super::SimConfig;
use super::barrier::WindowBarrier;
use super::cpu::CpuUsage;
use super::event_queue::{Event, EventKind};
use super::partition::{Happened, Partition, Record};
use super::report::{InFlight, SimError, SimReport};
use crate::components::hashing::ConsistentHash;
use crate::error::ConfigError;
use crate::history::HistoryCheck;
use crate::node::{NodeMachine, NodeStats};
use crate::protocol::ProtocolKind;
use crate::verifier::{AckLog, verify};
use crate::workload::RequesterStats;

#[cfg(test)]
pub(crate) use super::partition::DelayHook;

/// How many rounds of its pending work a drain may take before the cap cuts it.
const DRAIN_ROUNDS: u64 = 100;

/// The drain cap: the virtual time after which a run that is still not quiescent is cut, and
/// the operations completed in the drain when it was last set (while more complete, it moves
/// on).
#[derive(Debug, Clone, Copy)]
struct DrainCap {
    at: u64,
    completed: u64,
}

/// A simulated cluster.
pub struct Simulation {
    cfg: SimConfig,
    nodes: Vec<Box<dyn NodeMachine>>,
    hash: ConsistentHash,
    /// Tests: a per-message delay that overrides the network's.
    #[cfg(test)]
    delay_hook: Option<DelayHook>,
    /// Tests: windows this many times the lookahead (1; more breaks the rule that keeps the
    /// threads' runs apart).
    #[cfg(test)]
    window_factor: u64,
}

impl std::fmt::Debug for Simulation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Simulation")
            .field("nodes", &self.nodes.len())
            .field("threads", &self.cfg.threads)
            .finish()
    }
}

/// The run's state between windows: what the coordinator keeps while the partitions run.
struct Coordinator<'a> {
    cfg: &'a SimConfig,
    hash: &'a ConsistentHash,
    /// The length of a window, µs.
    window_us: u64,
    history: HistoryCheck,
    acks: AckLog,
    /// The history check's floor of each requester's current op (`node * requesters + r`).
    floors: Vec<u64>,
    /// The window's records of every partition, merged.
    merged: Vec<Record>,
}

impl Simulation {
    /// A cluster running `protocol` configured by `cfg`.
    pub fn new(protocol: ProtocolKind, cfg: SimConfig) -> Result<Self, ConfigError> {
        let nodes = protocol.build_cluster(&cfg.cluster)?;
        Self::with_nodes(cfg, nodes)
    }

    /// Tests: a cluster of the given machines (one per member of `cfg.cluster`, in id order), for
    /// a protocol variant no `ProtocolKind` names.
    #[cfg(test)]
    pub(crate) fn with_machines(
        cfg: SimConfig,
        nodes: Vec<Box<dyn NodeMachine>>,
    ) -> Result<Self, ConfigError> {
        Self::with_nodes(cfg, nodes)
    }

    /// Tests: `hook` decides the delay of every message it returns `Some` for. A hooked run
    /// runs on one thread (the hook may undercut the lookahead).
    #[cfg(test)]
    pub(crate) fn set_delay_hook(&mut self, hook: DelayHook) {
        self.delay_hook = Some(hook);
    }

    /// Tests: windows three times the lookahead, which lets a message reach another thread's
    /// node after its time has passed.
    #[cfg(test)]
    pub(crate) fn break_window_rule(&mut self) {
        self.window_factor = 3;
    }

    fn with_nodes(cfg: SimConfig, nodes: Vec<Box<dyn NodeMachine>>) -> Result<Self, ConfigError> {
        cfg.cpu.check()?;
        cfg.workload.check()?;
        let hash = cfg.cluster.hash()?;
        Ok(Simulation {
            nodes,
            hash,
            #[cfg(test)]
            delay_hook: None,
            #[cfg(test)]
            window_factor: 1,
            cfg,
        })
    }

    /// The least delay of a message between two nodes, µs: every window is this long (at least
    /// 1 µs), and without it (0) the run takes one thread.
    pub fn lookahead_us(cfg: &SimConfig) -> u64 {
        cfg.network.latency_us
    }

    /// How many partitions (worker threads) the run takes: `cfg.threads`, at most one per node,
    /// and one without lookahead.
    fn partitions(&self) -> usize {
        #[cfg(test)]
        if self.delay_hook.is_some() {
            return 1;
        }
        if Self::lookahead_us(&self.cfg) == 0 {
            return 1;
        }
        self.cfg.threads.clamp(1, self.nodes.len().max(1))
    }

    /// Runs the window, drains to quiescence and verifies.
    pub fn run(mut self) -> SimReport {
        let count = self.partitions();
        let requesters = self.requesters();
        let mut slots: Vec<Option<Box<dyn NodeMachine>>> = std::mem::take(&mut self.nodes)
            .into_iter()
            .map(Some)
            .collect();
        let mut parts: Vec<Partition> = (0..count)
            .map(|i| Partition::new(i, count, &self.cfg, &mut slots))
            .collect();
        #[cfg(test)]
        if let Some(hook) = self.delay_hook.take() {
            parts[0].delay_hook = Some(hook);
        }
        for p in &mut parts {
            p.start_requesters();
        }
        let parts: Vec<Mutex<Partition>> = parts.into_iter().map(Mutex::new).collect();
        // `mail[from * count + to]`: events partition `from` made for `to`'s nodes.
        let mail: Vec<Mutex<Vec<Event>>> = (0..count * count).map(|_| Mutex::default()).collect();
        #[cfg(test)]
        let factor = self.window_factor;
        #[cfg(not(test))]
        let factor = 1;
        let mut coordinator = Coordinator {
            window_us: Self::lookahead_us(&self.cfg).max(1) * factor,
            cfg: &self.cfg,
            hash: &self.hash,
            history: HistoryCheck::new(self.cfg.cluster.keys),
            acks: AckLog::new(self.cfg.cluster.keys),
            floors: vec![0; requesters],
            merged: Vec::new(),
        };
        let cut = if count == 1 {
            coordinator.run(&parts, &mail, |end| {
                window(0, 1, end, &parts, &mail);
                true
            })
        } else {
            let end = AtomicU64::new(0);
            let (go, done) = (WindowBarrier::new(count), WindowBarrier::new(count));
            // A panic in a window (a protocol bug) must not leave the other threads waiting at
            // a barrier forever: it is kept, the run stops at the next barrier, and the panic
            // goes on from here.
            let panicked: Mutex<Option<Box<dyn Any + Send>>> = Mutex::new(None);
            let guarded = |index: usize, e: u64| {
                let run = || window(index, count, e, &parts, &mail);
                if let Err(p) = panic::catch_unwind(AssertUnwindSafe(run)) {
                    lock(&panicked).get_or_insert(p);
                }
            };
            let cut = std::thread::scope(|s| {
                for index in 1..count {
                    let (end, go, done, guarded) = (&end, &go, &done, &guarded);
                    s.spawn(move || {
                        loop {
                            go.wait();
                            let end = end.load(Ordering::Acquire);
                            if end == STOP {
                                break;
                            }
                            guarded(index, end);
                            done.wait();
                        }
                    });
                }
                let run = || {
                    coordinator.run(&parts, &mail, |e| {
                        end.store(e, Ordering::Release);
                        go.wait();
                        guarded(0, e);
                        done.wait();
                        lock(&panicked).is_none()
                    })
                };
                let cut = panic::catch_unwind(AssertUnwindSafe(run));
                end.store(STOP, Ordering::Release);
                go.wait();
                cut
            });
            match (cut, lock(&panicked).take()) {
                (_, Some(p)) | (Err(p), None) => panic::resume_unwind(p),
                (Ok(cut), None) => cut,
            }
        };
        let parts: Vec<Partition> = parts
            .into_iter()
            .map(|p| p.into_inner().unwrap_or_else(|e| e.into_inner()))
            .collect();
        coordinator.report(parts, cut)
    }

    /// Requesters in the cluster.
    fn requesters(&self) -> usize {
        self.nodes.len() * self.cfg.workload.requesters_per_node as usize
    }
}

/// The window end that tells the workers to stop.
const STOP: u64 = u64::MAX;

/// Partition `index` of `count` runs the window ending at `end`: it takes its mail, handles its
/// events and posts what it made for the others.
fn window(
    index: usize,
    count: usize,
    end: u64,
    parts: &[Mutex<Partition>],
    mail: &[Mutex<Vec<Event>>],
) {
    let mut part = lock(&parts[index]);
    for from in (0..count).filter(|&f| f != index) {
        part.receive(&mut lock(&mail[from * count + index]));
    }
    part.run_window(end);
    for to in (0..count).filter(|&t| t != index) {
        lock(&mail[index * count + to]).append(part.outbox(to));
    }
}

/// Locks `m`; a worker that panicked has already failed the run, so its poison is ignored here
/// and its panic surfaces when the threads are joined.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Coordinator<'_> {
    /// Runs windows (`run_window(end)` runs every partition up to `end`; `false`: a worker
    /// failed, stop) until no event is left, or the drain cap cuts the run (returned).
    fn run(
        &mut self,
        parts: &[Mutex<Partition>],
        mail: &[Mutex<Vec<Event>>],
        mut run_window: impl FnMut(u64) -> bool,
    ) -> Option<SimError> {
        let mut cap = DrainCap {
            at: self.drain_cap(),
            completed: 0,
        };
        loop {
            let next = parts
                .iter()
                .filter_map(|p| lock(p).next_time())
                .chain(
                    mail.iter()
                        .flat_map(|m| lock(m).iter().map(Event::time).min()),
                )
                .min();
            let start = next?;
            if start > cap.at && !self.extend_cap(&mut cap, start, parts, mail) {
                return Some(SimError::DrainCut {
                    at_us: cap.at,
                    in_flight: Box::new(self.in_flight(parts, mail)),
                });
            }
            let end = start
                .saturating_add(self.window_us)
                .min(cap.at.saturating_add(1));
            if !run_window(end) {
                return None;
            }
            self.check_window(parts);
        }
    }

    /// Runs the history check over the window's operations, in virtual-time order: each
    /// partition's records are in that order, so merging them by time and node (a stable sort
    /// keeps a node's own order) gives the order one thread would have seen. A put's ack is
    /// compared with its primary's entry as the window ends: a primary's entries only grow, so
    /// one behind the ack then was behind it at the ack, too.
    fn check_window(&mut self, parts: &[Mutex<Partition>]) {
        let mut guards: Vec<_> = parts.iter().map(lock).collect();
        let mut records = if let [only] = &mut guards[..] {
            std::mem::take(&mut only.records)
        } else {
            for g in &mut guards {
                self.merged.append(&mut g.records);
            }
            self.merged.sort_by_key(|r| (r.time, r.node));
            std::mem::take(&mut self.merged)
        };
        for r in records.drain(..) {
            let floor = &mut self.floors[r.requester];
            match r.what {
                Happened::Issued(key) => *floor = self.history.floor(key),
                Happened::Got(key, version) => self.history.get_done(key, *floor, version),
                Happened::PutAcked(key, entry, wrong_value) => {
                    let primary = self.hash.primary(key);
                    let part = &guards[Partition::of(primary, guards.len())];
                    let held = part.machine(primary).base().data().get(key);
                    let value = wrong_value.as_ref().unwrap_or(&entry.value);
                    self.history
                        .put_acked(key, *floor, value, &entry, Some(&held));
                    self.acks.record(key, &entry);
                }
            }
        }
        // Give the buffer back for the next window's records.
        match &mut guards[..] {
            [only] => only.records = records,
            _ => self.merged = records,
        }
    }

    /// Whether the run has IspnPerfTest's shape: a fixed number of requests per node, and a
    /// window that ends when the last completes (not after `duration_us`).
    fn fixed_requests(&self) -> bool {
        self.cfg.workload.requests_per_node.is_some()
    }

    /// Operations completed in the drain: after the window, or in a fixed-request run (whose
    /// window ends only with the last of them) over the whole run.
    fn drain_completed(&self, parts: &[Mutex<Partition>]) -> u64 {
        parts
            .iter()
            .map(|p| {
                let p = lock(p);
                if self.fixed_requests() {
                    p.tally.completed
                } else {
                    p.tally.drained_ops
                }
            })
            .sum()
    }
    /// The virtual time after which the drain stops, as first set (the run moves it while its
    /// operations still complete: [`Simulation::extend_cap`]): it only guards against a protocol
    /// bug looping forever (the run then fails with what was still in flight), so it must
    /// leave every healthy run time to drain. Every wait in the protocols is bounded by a lock or
    /// reply timeout, and every hop by what can still be in flight: link latency and jitter, a
    /// retransmission (a drop or a full pool), a latency spike, the slow node's extra delay, a
    /// GC pause and a core's time per input. The cap allows 100 rounds of both, so it is never
    /// smaller than 100 x (reply + lock timeout). The timeouts alone are not enough: with 1 µs
    /// timeouts a cap counting only them falls before a 3 ms message can arrive and cuts healthy
    /// runs off.
    fn drain_cap(&self) -> u64 {
        let per_input = if self.cfg.cpu.enabled() {
            self.cfg.cpu.per_input_us
        } else {
            0
        };
        let round = self.round_us(per_input);
        // A fixed-request run has no set window: each requester's operations take at most a
        // round each.
        let window = match self.cfg.workload.requests_per_node {
            Some(_) => round.saturating_mul(self.cfg.workload.ops_limit(0).unwrap_or(0)),
            None => self.cfg.duration_us,
        };
        window.saturating_add(round.saturating_mul(DRAIN_ROUNDS))
    }

    /// The run reached `cap` at `t` (its next event is due then): if an operation completed
    /// since `cap` was last set, sets it again from the work pending now and returns `true`;
    /// otherwise the run is cut (`false`).
    ///
    /// The first cap counts one input's CPU cost per hop, not the queue in front of a core: 400
    /// requesters per node on one 2 ms core have 800 ms of client operations queued per node when
    /// the window closes, far more than that cap allows. So a round's CPU term is the longest queue of work in front of a
    /// node's cores (the inputs they have taken, plus the messages on their way to it, at their
    /// cost), and the cap also waits for the latest wake-up a node has armed. Only operations
    /// completed in the drain (in a fixed-request run, any) move it, and requesters issue
    /// finitely many (none after the window, none past their share of requests), so a run that
    /// never becomes quiescent still ends, at most 100 rounds of its pending work after the
    /// last of them. A run the first cap did not reach is the same run as before.
    fn extend_cap(
        &self,
        cap: &mut DrainCap,
        t: u64,
        parts: &[Mutex<Partition>],
        mail: &[Mutex<Vec<Event>>],
    ) -> bool {
        let completed = self.drain_completed(parts);
        if completed == cap.completed {
            return false;
        }
        let cpu = &self.cfg.cpu;
        let mut inbound = vec![0u64; self.cfg.cluster.nodes];
        if cpu.enabled() {
            for m in mail {
                for e in lock(m).iter() {
                    if let EventKind::Deliver { to, msg, .. } = &e.kind {
                        let to = &mut inbound[usize::from(*to)];
                        *to = to.saturating_add(cpu.cost_us(msg.payload_len()));
                    }
                }
            }
        }
        let (queue_us, armed) = parts
            .iter()
            .map(|p| lock(p).backlog(t, &mut inbound))
            .fold((0, 0), |(q, a), (pq, pa)| (q.max(pq), a.max(pa)));
        let round = self.round_us(queue_us.max(cpu.per_input_us));
        cap.at = t
            .saturating_add(armed)
            .saturating_add(round.saturating_mul(DRAIN_ROUNDS));
        cap.completed = completed;
        true
    }

    /// What is still pending when the drain cap cuts the run: the events still queued or in the
    /// mail, the messages awaiting retransmission, the nodes' armed deadlines and the nodes that
    /// are not quiescent. A cut run is never verified as it stands: with the pending work all
    /// in the network (stale commands rejected again at every retransmission) no node looks
    /// busy, and the verifier would pass it.
    fn in_flight(&self, parts: &[Mutex<Partition>], mail: &[Mutex<Vec<Event>>]) -> InFlight {
        let mut f = InFlight::default();
        let parts: Vec<_> = parts.iter().map(lock).collect();
        let mail: Vec<_> = mail.iter().map(lock).collect();
        let pending = parts
            .iter()
            .flat_map(|p| p.pending())
            .chain(mail.iter().flat_map(|m| m.iter().map(|e| &e.kind)));
        for ev in pending {
            match ev {
                EventKind::Deliver { msg, .. } => f.on_link(msg),
                EventKind::Handle { input, .. } => f.queued(input),
                // A resend's messages wait with their receiver, a wake-up serves the deadlines
                // below, and the operations still to issue are counted from the requesters below.
                EventKind::Resend { .. } | EventKind::Timer { .. } | EventKind::Issue { .. } => {}
            }
        }
        if self.fixed_requests() {
            let per_node = (self.cfg.workload.requesters_per_node as usize).max(1);
            let active = self
                .cfg
                .workload
                .requester_nodes
                .unwrap_or(self.cfg.cluster.nodes);
            for (idx, issued) in parts.iter().flat_map(|p| p.issued()) {
                let limit = self.cfg.workload.ops_limit((idx % per_node) as u32);
                if idx / per_node < active {
                    f.to_issue += limit.unwrap_or(0).saturating_sub(issued);
                }
            }
        }
        for msg in parts.iter().flat_map(|p| p.lost()) {
            f.awaiting(msg);
        }
        let mut machines: Vec<_> = parts.iter().flat_map(|p| p.machines()).collect();
        machines.sort_by_key(|n| n.base().id());
        for n in machines {
            for d in n.base().timeouts.armed() {
                f.armed(d);
            }
            if let Some(why) = n.busy_reason() {
                f.busy_nodes.push((n.base().id(), why));
            }
        }
        f
    }

    /// The report of a run that ended (`cut`: the drain cap cut it).
    fn report(self, parts: Vec<Partition>, cut: Option<SimError>) -> SimReport {
        let (mut end_us, mut events, mut drained_ops, mut last_reply) = (0, 0, 0, 0);
        let (mut drops, mut spikes) = (0, 0);
        let mut requesters = RequesterStats::default();
        let mut cpu = CpuUsage::default();
        let mut nodes: Vec<(usize, Box<dyn NodeMachine>)> = Vec::new();
        for p in parts {
            let t = &p.tally;
            end_us = end_us.max(t.last_activity);
            events += t.events;
            requesters.merge(&t.requesters);
            drained_ops += t.drained_ops;
            last_reply = last_reply.max(t.last_reply);
            let (d, s) = p.faults();
            drops += d;
            spikes += s;
            cpu.add(&t.window_cpu.unwrap_or(p.cpu_usage()));
            nodes.extend(p.into_machines());
        }
        nodes.sort_by_key(|(id, _)| *id);
        let nodes: Vec<Box<dyn NodeMachine>> = nodes.into_iter().map(|(_, n)| n).collect();
        let mut stats = NodeStats::default();
        for n in &nodes {
            stats.add(&n.stats());
        }
        // A cut run's end state is mid-flight: the cut is its verdict. Otherwise the history
        // check found its violations first, during the run; the verifier checks the end state.
        let verify = match cut {
            Some(cut) => Err(cut),
            None => self
                .history
                .result()
                .and_then(|()| verify(&nodes, &self.acks))
                .map_err(SimError::Verify),
        };
        SimReport {
            protocol: nodes
                .first()
                .map(|n| n.kind())
                .unwrap_or(ProtocolKind::LockForwarding),
            nodes: nodes.len(),
            window_us: if self.fixed_requests() {
                last_reply.max(1)
            } else {
                self.cfg.duration_us
            },
            end_us,
            events,
            requesters,
            drained_ops,
            stats,
            drops,
            spikes,
            cpu,
            cores: self.cfg.cpu.cores,
            gets_checked: self.history.gets_checked(),
            stale_reads: self.history.stale_reads(),
            bad_put_replies: self.history.bad_put_replies(),
            lookahead_us: Simulation::lookahead_us(self.cfg),
            verify,
        }
    }

    /// The longest round of a drain: a lock and a reply timeout, and a hop whose CPU term is
    /// `cpu_us` (the time an input waits for and occupies a core).
    fn round_us(&self, cpu_us: u64) -> u64 {
        let net = &self.cfg.network;
        let cpu = &self.cfg.cpu;
        let spike = if net.spike_per_mille > 0 {
            net.spike_us
        } else {
            0
        };
        let slow = if net.slow_node.is_some() {
            net.slow_node_extra_us
        } else {
            0
        };
        let (pause, cpu_us) = if cpu.enabled() {
            (cpu.gc_pause_us, cpu_us)
        } else {
            (0, 0)
        };
        let hop = [
            net.latency_us,
            net.jitter_us,
            // The longest wait for a repair: two runs of the retransmission task.
            net.xmit_interval_us.saturating_mul(2),
            net.latency_us,
            net.jitter_us,
            spike,
            slow,
            pause,
            cpu_us,
        ]
        .into_iter()
        .fold(0u64, u64::saturating_add);
        self.cfg
            .cluster
            .reply_timeout_us
            .saturating_add(self.cfg.cluster.lock_timeout_us)
            .saturating_add(hop)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;
    use crate::driver::retransmission::repair_tick;
    use crate::message::{Input, Msg, NodeId, Output};
    use crate::node::ClusterConfig;
    use crate::workload::WorkloadConfig;

    /// One message input node 0 saw: when, from whom, what, and whether it rejected it.
    type Seen = (u64, NodeId, Msg, bool);

    /// UNICAST3's repair: a rejected message arrives again on the run of the
    /// receiver's retransmission task after the one that found it, plus the request's and the
    /// resend's links, together with every other message its connection lost before that run; a
    /// message lost again is asked for on the next run. The run still verifies.
    #[test]
    fn rejected_messages_are_resent_per_connection_on_the_retransmission_tick() {
        const LINK: u64 = 500;
        const XMIT: u64 = 10_000;
        let cfg = SimConfig {
            cluster: ClusterConfig {
                nodes: 4,
                keys: 100,
                ..ClusterConfig::default()
            },
            network: super::super::network::NetworkConfig {
                latency_us: LINK,
                jitter_us: 0,
                xmit_interval_us: XMIT,
                ..Default::default()
            },
            workload: WorkloadConfig {
                requesters_per_node: 4,
                ..WorkloadConfig::default()
            },
            duration_us: 60_000,
            ..SimConfig::default()
        };
        let seen = Arc::new(Mutex::new(Vec::<Seen>::new()));
        let mut nodes = ProtocolKind::Triangle
            .build_cluster(&cfg.cluster)
            .expect("valid config");
        // Node 0 rejects as a full pool would: every message from another node that first
        // arrives in 15-22 ms, and the first of them once more when it is resent.
        let (burst, log) = (15_000..22_000, Arc::clone(&seen));
        crate::tests::intercept(&mut nodes, 0, move |inner, now, input, out| {
            let Input::Message { from, msg } = input else {
                return inner.handle(now, input, out);
            };
            let mut seen = log.lock().unwrap();
            let earlier = seen.iter().filter(|s| s.1 == from && s.2 == msg).count();
            let first_lost = seen.iter().find(|s| s.3).map(|s| (s.1, s.2.clone()));
            let reject = from != 0
                && ((earlier == 0 && burst.contains(&now))
                    || (earlier == 1 && first_lost == Some((from, msg.clone()))));
            seen.push((now, from, msg.clone(), reject));
            drop(seen);
            if reject {
                out.push(Output::Rejected { from, msg });
            } else {
                inner.handle(now, Input::Message { from, msg }, out);
            }
        });
        let r = Simulation::with_machines(cfg, nodes)
            .expect("valid config")
            .run();
        assert!(r.verify.is_ok(), "{r:#?}");
        let seen = seen.lock().unwrap();
        let lost: Vec<&Seen> = seen.iter().filter(|s| s.3).collect();
        // Losses both sides of the run at 20 ms, and the first one lost twice.
        assert!(lost.iter().any(|s| s.0 < 20_000) && lost.iter().any(|s| s.0 > 20_000));
        let mut arrivals: Vec<(NodeId, u64, u64)> = Vec::new();
        for (n, l) in lost.iter().enumerate() {
            let again = seen
                .iter()
                .find(|s| s.0 > l.0 && s.1 == l.1 && s.2 == l.2)
                .unwrap_or_else(|| panic!("{l:?} never resent"));
            let asked_before = n > 0 && l.1 == lost[0].1 && l.2 == lost[0].2;
            let tick = repair_tick(l.0, asked_before, XMIT);
            assert_eq!(again.0, tick + 2 * LINK, "{l:?}");
            if !asked_before {
                assert_eq!(tick, if l.0 < 20_000 { 30_000 } else { 40_000 });
            }
            arrivals.push((l.1, tick, again.0));
        }
        assert_eq!(lost.iter().filter(|l| l.2 == lost[0].2).count(), 2);
        // One connection's messages asked for at one run arrive together: consecutively, at
        // one instant (the CPU model is off, so each is handled as it arrives).
        for &(from, tick, at) in &arrivals {
            let batch: Vec<usize> = (0..seen.len())
                .filter(|&i| seen[i].0 == at && seen[i].1 == from)
                .filter(|&i| lost.iter().any(|l| l.1 == from && l.2 == seen[i].2))
                .collect();
            let same_run = arrivals
                .iter()
                .filter(|a| a.0 == from && a.1 == tick)
                .count();
            assert_eq!(batch.len(), same_run, "{from} at {at}");
            assert!(batch.windows(2).all(|w| w[1] == w[0] + 1), "{batch:?}");
        }
    }
}
