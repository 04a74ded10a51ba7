//! The simulation loop: requesters issue operations in a closed loop, the event queue delivers
//! messages, timers and CPU-delayed inputs to the node machines in virtual-time order, and after
//! the window the run drains to quiescence (or a cap, which moves while operations still
//! complete: [`DrainCap`]; a cut run fails with what was still in flight) and the verifier
//! checks the cluster. With
//! `requests_per_node` (IspnPerfTest's run shape) the requesters stop after their share of the
//! requests instead, and the window is the time until the last completed. Every
//! operation is also checked as it completes against the puts of its key acknowledged before it
//! was issued ([`HistoryCheck`]: no stale read, consistent put acks); a violation fails the
//! run's verification as the verifier's own findings do. A message a node's full pools reject
//! waits for its connection's repair
//! ([`retransmission`](crate::driver::retransmission)): the messages of one
//! connection asked for at one run of the receiver's retransmission task arrive together, as
//! one event.

use super::SimConfig;
use super::cpu::Cpus;
use super::event_queue::{EventKind, EventQueue};
use super::network::Network;
use super::report::{InFlight, SimReport};
use crate::driver::retransmission::{ResentInput, repair_tick};
use crate::error::{ConfigError, VerifyError};
use crate::history::HistoryCheck;
use crate::message::{ClientOp, Input, Msg, NodeId, Outcome, Output};
use crate::node::{NodeMachine, NodeStats};
use crate::protocol::ProtocolKind;
use crate::verifier::{AckLog, verify};
use crate::workload::{OpGenerator, RequesterStats};

/// The least virtual time between two operations of one requester (µs): what keeps a run whose
/// operations take no time of their own moving towards the end of its window.
pub const MIN_ISSUE_INTERVAL_US: u64 = 1;

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
    queue: EventQueue,
    network: Network,
    cpus: Cpus,
    ops_gen: OpGenerator,
    /// Start time of each requester's current op, by `node * requesters + requester`.
    started: Vec<u64>,
    /// The history check's floor of each requester's current op (same index).
    floors: Vec<u64>,
    history: HistoryCheck,
    /// Per node, the time of the last wake-up it asked for, while that event is still queued.
    timer_at: Vec<Option<u64>>,
    /// Ops issued per requester.
    issued: Vec<u64>,
    acks: AckLog,
    requesters: RequesterStats,
    drained_ops: u64,
    /// Operations completed over the run, window and drain.
    completed: u64,
    /// Fixed-request runs: when the last operation completed (the end of their window).
    last_reply: u64,
    now: u64,
    last_activity: u64,
    events: u64,
    out: Vec<Output>,
    /// Per connection (`receiver * nodes + sender`), the messages it has lost, by the run of the
    /// receiver's retransmission task that will ask for them (at most a few runs at a time);
    /// each batch's [`EventKind::Resend`] is queued.
    resends: Vec<Vec<(u64, Vec<Msg>)>>,
    /// Emptied batches, reused.
    spare_batches: Vec<Vec<Msg>>,
    /// Tests: a per-message delay that overrides the network's (`None`: the network decides).
    #[cfg(test)]
    delay_hook: Option<DelayHook>,
}

/// Tests: the delay of a message `(from, to, msg)` in µs, or `None` for the network's own.
#[cfg(test)]
pub(crate) type DelayHook = Box<dyn FnMut(NodeId, NodeId, &Msg) -> Option<u64> + Send>;

impl std::fmt::Debug for Simulation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Simulation")
            .field("now", &self.now)
            .field("events", &self.events)
            .finish()
    }
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
        cfg.cluster.hash()?;
        Self::with_nodes(cfg, nodes)
    }

    /// Tests: `hook` decides the delay of every message it returns `Some` for.
    #[cfg(test)]
    pub(crate) fn set_delay_hook(&mut self, hook: DelayHook) {
        self.delay_hook = Some(hook);
    }

    fn with_nodes(cfg: SimConfig, nodes: Vec<Box<dyn NodeMachine>>) -> Result<Self, ConfigError> {
        cfg.cpu.check()?;
        cfg.workload.check()?;
        let node_count = nodes.len();
        let per_node = cfg.workload.requesters_per_node as usize;
        let total = per_node * nodes.len();
        let ops_gen =
            OpGenerator::new(&cfg.workload, cfg.cluster.keys, cfg.seed).describing_values();
        let network = Network::new(cfg.network.clone(), cfg.seed);
        let acks = AckLog::new(cfg.cluster.keys);
        let cpus = Cpus::new(cfg.cpu.clone(), nodes.len(), cfg.seed);
        Ok(Simulation {
            cpus,
            nodes,
            queue: EventQueue::default(),
            network,
            ops_gen,
            started: vec![0; total],
            floors: vec![0; total],
            history: HistoryCheck::new(cfg.cluster.keys),
            timer_at: vec![None; node_count],
            issued: vec![0; total],
            acks,
            requesters: RequesterStats::default(),
            drained_ops: 0,
            completed: 0,
            last_reply: 0,
            now: 0,
            last_activity: 0,
            events: 0,
            out: Vec::with_capacity(64),
            resends: vec![Vec::new(); node_count * node_count],
            spare_batches: Vec::new(),
            #[cfg(test)]
            delay_hook: None,
            cfg,
        })
    }

    /// The nodes (for inspection after a run).
    pub fn nodes(&self) -> &[Box<dyn NodeMachine>] {
        &self.nodes
    }

    /// Runs the window, drains to quiescence and verifies.
    pub fn run(mut self) -> SimReport {
        let per_node = self.cfg.workload.requesters_per_node;
        let active = self
            .cfg
            .workload
            .requester_nodes
            .unwrap_or(self.nodes.len())
            .min(self.nodes.len());
        for node in 0..active {
            for r in 0..per_node {
                let at = self.ops_gen.below(self.cfg.start_spread_us);
                self.queue.push(
                    at,
                    EventKind::Issue {
                        node: node as NodeId,
                        requester: r,
                    },
                );
            }
        }
        let mut cap = DrainCap {
            at: self.drain_cap(),
            completed: 0,
        };
        // The cores' usage when the window closed (work queued before it and ending after it
        // counts in full: a few inputs' worth).
        let mut window_cpu = None;
        let mut cut = None;
        while let Some(ev) = self.queue.pop() {
            if ev.time > cap.at && !self.extend_cap(&mut cap, ev.time) {
                cut = Some(VerifyError::DrainCut {
                    at_us: cap.at,
                    in_flight: Box::new(self.in_flight(ev.kind)),
                });
                break;
            }
            if !self.fixed_requests() && ev.time >= self.cfg.duration_us && window_cpu.is_none() {
                window_cpu = Some(self.cpus.usage);
            }
            self.now = ev.time;
            self.events += 1;
            match ev.kind {
                EventKind::Deliver { to, from, msg } => {
                    let bytes = msg.payload_len();
                    self.handle(to, Input::Message { from, msg }, bytes, false);
                }
                EventKind::Resend { to, from, tick } => {
                    let conn = self.connection(to, from);
                    let conn = &mut self.resends[conn];
                    let Some(i) = conn.iter().position(|(t, _)| *t == tick) else {
                        continue;
                    };
                    let (_, mut batch) = conn.swap_remove(i);
                    for msg in batch.drain(..) {
                        let bytes = msg.payload_len();
                        self.handle(to, Input::Message { from, msg }, bytes, true);
                    }
                    self.spare_batches.push(batch);
                }
                EventKind::Timer { node } => {
                    if let Some(t) = self.timer_at.get_mut(node as usize) {
                        if *t == Some(self.now) {
                            *t = None;
                        }
                    }
                    // A timer thread needs no core, but a stop-the-world pause stops it too.
                    let at = self.cpus.after_pause(node as usize, self.now);
                    if at > self.now {
                        self.queue.push(
                            at,
                            EventKind::Handle {
                                node,
                                input: Input::Timer,
                                resent: false,
                            },
                        );
                    } else {
                        self.step(node, Input::Timer, false);
                    }
                }
                EventKind::Handle {
                    node,
                    input,
                    resent,
                } => self.step(node, input, resent),
                EventKind::Issue { node, requester } => self.issue(node, requester),
            }
        }
        let mut stats = NodeStats::default();
        for n in &self.nodes {
            stats.add(&n.stats());
        }
        // A cut run's end state is mid-flight: the cut is its verdict. Otherwise the history
        // check found its violations first, during the run; the verifier checks the end state.
        let verify = match cut {
            Some(cut) => Err(cut),
            None => self
                .history
                .result()
                .and_then(|()| verify(&self.nodes, &self.acks)),
        };
        SimReport {
            protocol: self
                .nodes
                .first()
                .map(|n| n.kind())
                .unwrap_or(ProtocolKind::LockForwarding),
            nodes: self.nodes.len(),
            window_us: if self.fixed_requests() {
                self.last_reply.max(1)
            } else {
                self.cfg.duration_us
            },
            end_us: self.last_activity,
            events: self.events,
            requesters: self.requesters,
            drained_ops: self.drained_ops,
            stats,
            drops: self.network.drops,
            spikes: self.network.spikes,
            cpu: window_cpu.unwrap_or(self.cpus.usage),
            cores: self.cpus.config().cores,
            gets_checked: self.history.gets_checked(),
            stale_reads: self.history.stale_reads(),
            bad_put_replies: self.history.bad_put_replies(),
            verify,
        }
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
    fn extend_cap(&self, cap: &mut DrainCap, t: u64) -> bool {
        if self.drain_completed() == cap.completed {
            return false;
        }
        let cpu = self.cpus.config();
        let mut queue_us = 0;
        if cpu.enabled() {
            let nodes = self.nodes.len();
            let mut inbound = vec![0u64; nodes];
            for ev in self.queue.pending() {
                if let EventKind::Deliver { to, msg, .. } = ev {
                    let to = &mut inbound[*to as usize];
                    *to = to.saturating_add(cpu.cost_us(msg.payload_len()));
                }
            }
            for (conn, batches) in self.resends.iter().enumerate() {
                for msg in batches.iter().flat_map(|(_, batch)| batch) {
                    let to = &mut inbound[conn / nodes];
                    *to = to.saturating_add(cpu.cost_us(msg.payload_len()));
                }
            }
            queue_us = (0..nodes)
                .map(|n| {
                    let inbound = inbound[n].div_ceil(u64::from(cpu.cores));
                    self.cpus.queued_us(n, t).saturating_add(inbound)
                })
                .max()
                .unwrap_or(0);
        }
        let armed = self
            .timer_at
            .iter()
            .flatten()
            .map(|&at| at.saturating_sub(t))
            .max()
            .unwrap_or(0);
        let round = self.round_us(queue_us.max(cpu.per_input_us));
        cap.at = t
            .saturating_add(armed)
            .saturating_add(round.saturating_mul(DRAIN_ROUNDS));
        cap.completed = self.drain_completed();
        true
    }

    /// What is still pending when the drain cap cuts the run: the events still queued (`next`,
    /// the one past the cap, among them), the messages awaiting retransmission, the nodes' armed
    /// deadlines and the nodes that are not quiescent. A cut run is never verified as it stands:
    /// with the pending work all in the network (stale commands rejected again at every
    /// retransmission) no node looks busy, and the verifier would pass it.
    fn in_flight(&self, next: EventKind) -> InFlight {
        let mut f = InFlight::default();
        for ev in self.queue.pending().chain([&next]) {
            match ev {
                EventKind::Deliver { msg, .. } => f.on_link(msg),
                EventKind::Handle { input, .. } => f.queued(input),
                // A resend's messages wait in `resends`, a wake-up serves the deadlines below,
                // and the operations still to issue are counted from the requesters below.
                EventKind::Resend { .. } | EventKind::Timer { .. } | EventKind::Issue { .. } => {}
            }
        }
        if self.fixed_requests() {
            let per_node = self.cfg.workload.requesters_per_node as usize;
            let active = self
                .cfg
                .workload
                .requester_nodes
                .unwrap_or(self.nodes.len());
            for (idx, &issued) in self.issued.iter().enumerate() {
                let limit = self.cfg.workload.ops_limit((idx % per_node.max(1)) as u32);
                if idx / per_node.max(1) < active {
                    f.to_issue += limit.unwrap_or(0).saturating_sub(issued);
                }
            }
        }
        for msg in self.resends.iter().flatten().flat_map(|(_, batch)| batch) {
            f.awaiting(msg);
        }
        for n in &self.nodes {
            for d in n.base().timeouts.armed() {
                f.armed(d);
            }
            if let Some(why) = n.busy_reason() {
                f.busy_nodes.push((n.base().id(), why));
            }
        }
        f
    }

    /// Operations completed in the drain: after the window, or in a fixed-request run (whose
    /// window ends only with the last of them) over the whole run.
    fn drain_completed(&self) -> u64 {
        if self.fixed_requests() {
            self.completed
        } else {
            self.drained_ops
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

    /// Whether the run has IspnPerfTest's shape: a fixed number of requests per node, and a
    /// window that ends when the last completes (not after `duration_us`).
    fn fixed_requests(&self) -> bool {
        self.cfg.workload.requests_per_node.is_some()
    }

    fn issue(&mut self, node: NodeId, requester: u32) {
        if !self.fixed_requests() && self.now >= self.cfg.duration_us {
            return;
        }
        let idx =
            node as usize * self.cfg.workload.requesters_per_node as usize + requester as usize;
        if let Some(limit) = self.cfg.workload.ops_limit(requester) {
            if self.issued[idx] >= limit {
                return;
            }
        }
        self.issued[idx] += 1;
        self.started[idx] = self.now;
        let op = self.ops_gen.next_op();
        self.floors[idx] = self.history.floor(op.key());
        let bytes = op.payload_len();
        self.handle(node, Input::Client { requester, op }, bytes, false);
    }

    /// How long a message from `from` to `to` takes: the network's delay, unless a test's hook
    /// decides it.
    fn delay(&mut self, from: NodeId, to: NodeId, msg: &Msg) -> u64 {
        #[cfg(test)]
        let hooked = self.delay_hook.as_mut().and_then(|h| h(from, to, msg));
        #[cfg(not(test))]
        let hooked: Option<u64> = {
            let _ = (from, msg);
            None
        };
        hooked.unwrap_or_else(|| self.network.delay(self.now, to))
    }

    /// `input` reaches `node` now: handled at once, or once a core has done its work. `resent`:
    /// a message resent on request.
    fn handle(&mut self, node: NodeId, input: Input, payload_bytes: usize, resent: bool) {
        if !self.cpus.config().enabled() {
            return self.step(node, input, resent);
        }
        let at = self.cpus.schedule(node as usize, self.now, payload_bytes);
        self.queue.push(
            at,
            EventKind::Handle {
                node,
                input,
                resent,
            },
        );
    }

    /// `node`'s pools rejected `msg` from `from` now: it joins the messages its connection will
    /// ask for at the next run of `node`'s retransmission task but one (the next, if it had been
    /// asked for before), which `from` resends together. A stop-the-world pause holds the task.
    fn lose(&mut self, node: NodeId, from: NodeId, msg: Msg, asked_before: bool) {
        let interval = self.network.config().xmit_interval_us;
        let tick = repair_tick(self.now, asked_before, interval);
        let tick = self.cpus.after_pause(node as usize, tick);
        let conn = self.connection(node, from);
        if let Some((_, batch)) = self.resends[conn].iter_mut().find(|(t, _)| *t == tick) {
            batch.push(msg);
            return;
        }
        let mut batch = self.spare_batches.pop().unwrap_or_default();
        batch.push(msg);
        self.resends[conn].push((tick, batch));
        let at = tick + self.network.resent_delay(tick, from, node);
        self.queue.push(
            at,
            EventKind::Resend {
                to: node,
                from,
                tick,
            },
        );
    }

    /// The index of the connection from `from` to `to` in `resends`.
    fn connection(&self, to: NodeId, from: NodeId) -> usize {
        to as usize * self.nodes.len() + from as usize
    }

    /// Feeds `input` to `node`. `resent`: `input` is a message resent on request (if the node
    /// rejects it again, it was asked for before).
    fn step(&mut self, node: NodeId, input: Input, resent: bool) {
        let mut resent_input = ResentInput::new(&input, resent);
        let mut out = std::mem::take(&mut self.out);
        self.nodes[node as usize].handle(self.now, input, &mut out);
        if out.iter().any(|o| !matches!(o, Output::SetTimer { .. })) {
            self.last_activity = self.now;
        }
        for o in out.drain(..) {
            match o {
                Output::Send { to, msg } => {
                    let at = self.now + self.delay(node, to, &msg);
                    self.queue.push(
                        at,
                        EventKind::Deliver {
                            to,
                            from: node,
                            msg,
                        },
                    );
                }
                Output::Rejected { from, msg } => {
                    let asked_before = resent_input.asked_before(from);
                    self.lose(node, from, msg, asked_before);
                }
                Output::SetTimer { at } => {
                    // A node asks again for the wake-up it already has queued when a stale one
                    // (armed for a deadline since cancelled) fired first: one event per instant is
                    // enough, and a second one would itself re-arm when it fires, so with
                    // deadlines far apart (the key queue's backed-off batches) stale wake-ups
                    // multiplied until memory ran out.
                    let at = at.max(self.now);
                    let armed = &mut self.timer_at[node as usize];
                    if *armed != Some(at) {
                        *armed = Some(at);
                        self.queue.push(at, EventKind::Timer { node });
                    }
                }
                // Real-slot outputs: the simulation never switches its machines to real slots.
                Output::Execute { .. }
                | Output::Resume { .. }
                | Output::SlotFreed { .. }
                | Output::InboundResumed => {}
                Output::Reply {
                    requester,
                    op,
                    outcome,
                } => {
                    let idx = node as usize * self.cfg.workload.requesters_per_node as usize
                        + requester as usize;
                    let issued_at = self.started.get(idx).copied().unwrap_or(self.now);
                    let latency = self.now - issued_at;
                    let floor = self.floors.get(idx).copied().unwrap_or(0);
                    match (&op, &outcome) {
                        (ClientOp::Get(key), Outcome::Got(entry)) => {
                            self.history.get_done(*key, floor, entry);
                        }
                        (ClientOp::Put(key, value), Outcome::Put(entry)) => {
                            let primary = self.nodes.first().map(|n| n.base().hash().primary(*key));
                            let held = primary
                                .and_then(|p| self.nodes.get(p as usize))
                                .map(|n| n.base().data().get(*key));
                            self.history
                                .put_acked(*key, floor, value, entry, held.as_ref());
                            self.acks.record(*key, entry);
                        }
                        _ => {}
                    }
                    self.completed += 1;
                    if self.fixed_requests() {
                        self.last_reply = self.now;
                    }
                    if self.fixed_requests() || self.now <= self.cfg.duration_us {
                        let value_size = self.cfg.workload.value_size as usize;
                        self.requesters.record(&op, &outcome, latency, value_size);
                    } else {
                        self.drained_ops += 1;
                    }
                    // No think time, but a requester issues its next operation at least
                    // `MIN_ISSUE_INTERVAL_US` after this one: an operation that took no virtual
                    // time (a local read or write with the CPU model off, zero-latency links)
                    // would otherwise be followed by another at the same instant, forever, and
                    // the window would never close. With the CPU model on and a cost
                    // per input (the claims': 30 µs), every operation takes longer than this, so
                    // it never delays one there.
                    let next = self.now.max(issued_at + MIN_ISSUE_INTERVAL_US);
                    self.queue.push(next, EventKind::Issue { node, requester });
                }
            }
        }
        self.out = out;
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;
    use crate::node::{ClusterConfig, NodeBase};
    use crate::workload::WorkloadConfig;

    /// One message input node 0 saw: when, from whom, what, and whether it rejected it.
    type Seen = (u64, NodeId, Msg, bool);

    /// Node 0 of a real cluster, rejecting as a full pool would: every message from another
    /// node that first arrives in `burst`, and the first of them once more when it is resent.
    struct Lossy {
        inner: Box<dyn NodeMachine>,
        burst: std::ops::Range<u64>,
        seen: Arc<Mutex<Vec<Seen>>>,
    }

    impl NodeMachine for Lossy {
        fn kind(&self) -> ProtocolKind {
            self.inner.kind()
        }
        fn handle(&mut self, now: u64, input: Input, out: &mut Vec<Output>) {
            let Input::Message { from, msg } = input else {
                return self.inner.handle(now, input, out);
            };
            let mut seen = self.seen.lock().unwrap();
            let earlier = seen.iter().filter(|s| s.1 == from && s.2 == msg).count();
            let first_lost = seen.iter().find(|s| s.3).map(|s| (s.1, s.2.clone()));
            let reject = from != 0
                && ((earlier == 0 && self.burst.contains(&now))
                    || (earlier == 1 && first_lost == Some((from, msg.clone()))));
            seen.push((now, from, msg.clone(), reject));
            drop(seen);
            if reject {
                out.push(Output::Rejected { from, msg });
            } else {
                self.inner.handle(now, Input::Message { from, msg }, out);
            }
        }
        fn use_real_slots(&mut self) {
            self.inner.use_real_slots();
        }
        fn inbound_blocked(&self) -> bool {
            self.inner.inbound_blocked()
        }
        fn base(&self) -> &NodeBase {
            self.inner.base()
        }
        fn busy_reason(&self) -> Option<String> {
            self.inner.busy_reason()
        }
        fn stats(&self) -> NodeStats {
            self.inner.stats()
        }
        fn sequences(&self) -> (Vec<u64>, Vec<u64>) {
            self.inner.sequences()
        }
    }

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
        let seen = Arc::new(Mutex::new(Vec::new()));
        let mut nodes = ProtocolKind::Triangle
            .build_cluster(&cfg.cluster)
            .expect("valid config");
        let inner = nodes.remove(0);
        nodes.insert(
            0,
            Box::new(Lossy {
                inner,
                burst: 15_000..22_000,
                seen: Arc::clone(&seen),
            }),
        );
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
