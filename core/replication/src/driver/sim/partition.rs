//! A share of the simulated cluster that one worker thread runs: its nodes, each with its own
//! random streams, wake-up and lost messages, and one event queue for all of them.
//!
//! Node `n` belongs to partition `n % partitions`. A partition runs one window of virtual time
//! at a time ([`Partition::run_window`]): it handles its events due before the window's end, and
//! puts the messages its nodes send to other partitions' nodes in their mail. A window is no
//! longer than the least delay of a message between nodes (the lookahead), so a message sent
//! inside a window is due after it: no partition can receive, in the window it is running, an
//! event another partition makes in that window. Between windows the mail is delivered and the
//! coordinator ([`super::simulation`]) checks what the windows' operations returned.
//!
//! Every source of order is the node's own: its events run in [`EventKey`] order, the keys are
//! made from the node's own count, and its random draws come from its own streams. So a node
//! handles the same inputs at the same instants in the same order whatever the partitioning,
//! and a run's report does not depend on the number of worker threads.

use super::SimConfig;
use super::cpu::{CpuUsage, Cpus};
use super::event_queue::{Event, EventKey, EventKind, EventQueue};
use super::network::Network;
use crate::driver::retransmission::{ResentInput, repair_tick};
use crate::message::{ClientOp, Input, Key, Msg, NodeId, Outcome, Output, Value, Versioned};
use crate::node::NodeMachine;
use crate::workload::{OpGenerator, RequesterStats};

/// The least virtual time between two operations of one requester (µs): what keeps a run whose
/// operations take no time of their own moving towards the end of its window.
pub const MIN_ISSUE_INTERVAL_US: u64 = 1;

/// The random stream `stream` of node `node` in a run seeded with `seed` (SplitMix64's
/// finaliser over the three, so neighbouring nodes' streams are unrelated).
pub(super) fn node_seed(seed: u64, stream: u64, node: NodeId) -> u64 {
    let mix = |mut z: u64| {
        z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    mix(seed ^ mix(stream << 16 | u64::from(node)))
}

/// The network stream of [`node_seed`].
const NETWORK_STREAM: u64 = 1;
/// The requesters' stream of [`node_seed`].
const REQUESTER_STREAM: u64 = 2;

/// What a requester did, for the history check, which the coordinator runs between windows over
/// every partition's records in virtual-time order ([`super::simulation`]).
#[derive(Debug)]
pub(super) struct Record {
    /// When, in virtual µs.
    pub time: u64,
    /// The requester's node.
    pub node: NodeId,
    /// The requester's index in the cluster (`node * requesters_per_node + requester`).
    pub requester: usize,
    /// What happened.
    pub what: Happened,
}

/// A requester's part in the history check.
#[derive(Debug)]
pub(super) enum Happened {
    /// It issued an operation of `key`: its floor is taken now.
    Issued(Key),
    /// A get of `key` returned this version.
    Got(Key, u64),
    /// A put under `key` was acknowledged as `entry`; `wrong_value`: the ack's value is not the
    /// one the put wrote (checked here, where both are at hand), with the value written.
    PutAcked(Key, Versioned, Option<Value>),
}

/// The messages a node's full pools rejected from one sender, to be asked for at one run of the
/// node's retransmission task.
#[derive(Debug)]
struct LostBatch {
    from: NodeId,
    tick: u64,
    msgs: Vec<Msg>,
}

/// One simulated node and everything of the run that is its own.
struct NodeSlot {
    machine: Box<dyn NodeMachine>,
    /// The stream of its transmissions.
    network: Network,
    /// The stream of its requesters' operations and start times.
    ops: OpGenerator,
    /// Events it has made (the next one's [`EventKey`] sequence number).
    made: u32,
    /// The time of the last wake-up it asked for, while that event is still queued.
    timer_at: Option<u64>,
    /// Messages it rejected, by sender and the run of its retransmission task that asks for them.
    lost: Vec<LostBatch>,
    /// Per requester, when its current operation started.
    started: Vec<u64>,
    /// Per requester, operations issued.
    issued: Vec<u64>,
}

impl NodeSlot {
    /// The key of the next event this node makes, due at `time` at node `at`.
    fn next_key(&mut self, time: u64, at: NodeId, id: NodeId) -> EventKey {
        let key = EventKey::new(time, at, id, self.made);
        self.made = self
            .made
            .checked_add(1)
            .expect("a node makes fewer than 2^32 events in one run");
        key
    }
}

/// Tests: the delay of a message `(from, to, msg)` in µs, or `None` for the network's own.
#[cfg(test)]
pub(crate) type DelayHook = Box<dyn FnMut(NodeId, NodeId, &Msg) -> Option<u64> + Send>;

/// What a partition's nodes did, summed.
#[derive(Debug, Default)]
pub(super) struct Tally {
    /// Events handled.
    pub events: u64,
    /// Operations completed, window and drain.
    pub completed: u64,
    /// Operations completed after the window.
    pub drained_ops: u64,
    /// Fixed-request runs: when the last operation completed.
    pub last_reply: u64,
    /// The last message or reply.
    pub last_activity: u64,
    /// What the requesters saw inside the window.
    pub requesters: RequesterStats,
    /// The cores' usage when the partition reached the end of the measured window.
    pub window_cpu: Option<CpuUsage>,
}

/// A share of the cluster and its pending events.
pub(super) struct Partition {
    index: usize,
    partitions: usize,
    cfg: SimConfig,
    slots: Vec<NodeSlot>,
    queue: EventQueue,
    /// Every node's cores (only this partition's are used): indexed by node id, so that the
    /// pause phases are the same however the cluster is split.
    cpus: Cpus,
    /// Per other partition, the events made for its nodes in the running window.
    outbox: Vec<Vec<Event>>,
    /// The history check's records of the running window, in the order they happened.
    pub records: Vec<Record>,
    /// What it did.
    pub tally: Tally,
    out: Vec<Output>,
    /// Requesters whose next operation starts at the instant of their reply: issued once the
    /// step that replied is done.
    issue_now: Vec<(NodeId, u32)>,
    spare_batches: Vec<Vec<Msg>>,
    #[cfg(test)]
    pub(super) delay_hook: Option<DelayHook>,
}

impl Partition {
    /// Partition `index` of `partitions`, taking its nodes out of `nodes` (indexed by id).
    pub fn new(
        index: usize,
        partitions: usize,
        cfg: &SimConfig,
        nodes: &mut [Option<Box<dyn NodeMachine>>],
    ) -> Self {
        let per_node = cfg.workload.requesters_per_node as usize;
        let writers = u32::try_from(nodes.len()).unwrap_or(u32::MAX);
        let slots = (index..nodes.len())
            .step_by(partitions)
            .map(|n| {
                let id = n as NodeId;
                NodeSlot {
                    machine: nodes[n].take().expect("each node is in one partition"),
                    network: Network::new(
                        cfg.network.clone(),
                        node_seed(cfg.seed, NETWORK_STREAM, id),
                    ),
                    ops: OpGenerator::new(
                        &cfg.workload,
                        cfg.cluster.keys,
                        node_seed(cfg.seed, REQUESTER_STREAM, id),
                    )
                    .describing_values()
                    .writer(u32::from(id), writers),
                    made: 0,
                    timer_at: None,
                    lost: Vec::new(),
                    started: vec![0; per_node],
                    issued: vec![0; per_node],
                }
            })
            .collect();
        Partition {
            index,
            partitions,
            slots,
            queue: EventQueue::default(),
            cpus: Cpus::new(cfg.cpu.clone(), nodes.len(), cfg.seed),
            outbox: (0..partitions).map(|_| Vec::new()).collect(),
            records: Vec::new(),
            tally: Tally::default(),
            out: Vec::with_capacity(64),
            issue_now: Vec::new(),
            spare_batches: Vec::new(),
            #[cfg(test)]
            delay_hook: None,
            cfg: cfg.clone(),
        }
    }

    /// The partition node `node` belongs to.
    pub fn of(node: NodeId, partitions: usize) -> usize {
        usize::from(node) % partitions
    }

    fn slot(&mut self, node: NodeId) -> &mut NodeSlot {
        &mut self.slots[usize::from(node) / self.partitions]
    }

    /// Node `node`'s machine (one of this partition's).
    pub fn machine(&self, node: NodeId) -> &dyn NodeMachine {
        &*self.slots[usize::from(node) / self.partitions].machine
    }

    /// This partition's machines.
    pub fn machines(&self) -> impl Iterator<Item = &dyn NodeMachine> {
        self.slots.iter().map(|s| &*s.machine)
    }

    /// Queues each requester's first operation at a random instant in `0..start_spread_us`.
    pub fn start_requesters(&mut self) {
        let per_node = self.cfg.workload.requesters_per_node;
        let active = self.cfg.workload.requester_nodes.unwrap_or(usize::MAX);
        let spread = self.cfg.start_spread_us;
        for i in 0..self.slots.len() {
            let node = (self.index + i * self.partitions) as NodeId;
            if usize::from(node) >= active {
                continue;
            }
            for requester in 0..per_node {
                let slot = &mut self.slots[i];
                let at = slot.ops.below(spread);
                let key = slot.next_key(at, node, node);
                let kind = EventKind::Issue { node, requester };
                self.queue.push(Event { key, kind });
            }
        }
    }

    /// Takes the events other partitions made for this one's nodes.
    pub fn receive(&mut self, mail: &mut Vec<Event>) {
        for e in mail.drain(..) {
            self.queue.push(e);
        }
    }

    /// The events made for partition `to`'s nodes in the last window.
    pub fn outbox(&mut self, to: usize) -> &mut Vec<Event> {
        &mut self.outbox[to]
    }

    /// The time of this partition's earliest pending event (its mail to others not included).
    pub fn next_time(&self) -> Option<u64> {
        self.queue.peek_time()
    }

    /// Handles every event due before `end`.
    pub fn run_window(&mut self, end: u64) {
        while let Some(ev) = self.queue.pop_before(end) {
            let now = ev.time();
            if !self.fixed_requests()
                && now >= self.cfg.duration_us
                && self.tally.window_cpu.is_none()
            {
                self.tally.window_cpu = Some(self.cpus.usage);
            }
            self.tally.events += 1;
            match ev.kind {
                EventKind::Deliver { to, from, msg } => {
                    let bytes = msg.payload_len();
                    self.handle(now, to, Input::Message { from, msg }, bytes, false);
                }
                EventKind::Resend { to, from, tick } => {
                    let lost = &mut self.slot(to).lost;
                    let Some(i) = lost.iter().position(|b| b.from == from && b.tick == tick) else {
                        continue;
                    };
                    let mut batch = lost.swap_remove(i).msgs;
                    for msg in batch.drain(..) {
                        let bytes = msg.payload_len();
                        self.handle(now, to, Input::Message { from, msg }, bytes, true);
                    }
                    self.spare_batches.push(batch);
                }
                EventKind::Timer { node } => {
                    let slot = self.slot(node);
                    if slot.timer_at == Some(now) {
                        slot.timer_at = None;
                    }
                    // A timer thread needs no core, but a stop-the-world pause stops it too.
                    let at = self.cpus.after_pause(usize::from(node), now);
                    if at > now {
                        self.handle_at(node, at, Input::Timer, false);
                    } else {
                        self.step(now, node, Input::Timer, false);
                    }
                }
                EventKind::Handle {
                    node,
                    input,
                    resent,
                } => self.step(now, node, input, resent),
                EventKind::Issue { node, requester } => self.issue(now, node, requester),
            }
        }
    }

    /// Whether the run has IspnPerfTest's shape: a fixed number of requests per node.
    fn fixed_requests(&self) -> bool {
        self.cfg.workload.requests_per_node.is_some()
    }

    /// Queues an event `node` makes for itself.
    fn push_own(&mut self, node: NodeId, at: u64, kind: EventKind) {
        let key = self.slot(node).next_key(at, node, node);
        self.queue.push(Event { key, kind });
    }

    fn issue(&mut self, now: u64, node: NodeId, requester: u32) {
        if !self.fixed_requests() && now >= self.cfg.duration_us {
            return;
        }
        let limit = self.cfg.workload.ops_limit(requester);
        let slot = self.slot(node);
        let r = requester as usize;
        if limit.is_some_and(|limit| slot.issued[r] >= limit) {
            return;
        }
        slot.issued[r] += 1;
        slot.started[r] = now;
        let op = slot.ops.next_op();
        let requester_index = self.requester_index(node, requester);
        self.records.push(Record {
            time: now,
            node,
            requester: requester_index,
            what: Happened::Issued(op.key()),
        });
        let bytes = op.payload_len();
        self.handle(now, node, Input::Client { requester, op }, bytes, false);
    }

    fn requester_index(&self, node: NodeId, requester: u32) -> usize {
        usize::from(node) * self.cfg.workload.requesters_per_node as usize + requester as usize
    }

    /// How long a message from `from` to `to` takes: the sender's network stream decides,
    /// unless a test's hook does.
    fn delay(&mut self, now: u64, from: NodeId, to: NodeId, msg: &Msg) -> u64 {
        #[cfg(test)]
        if let Some(d) = self.delay_hook.as_mut().and_then(|h| h(from, to, msg)) {
            return d;
        }
        let _ = msg;
        self.slot(from).network.delay(now, to)
    }

    /// `input` reaches `node` now: handled at once, or once a core has done its work. `resent`:
    /// a message resent on request.
    fn handle(&mut self, now: u64, node: NodeId, input: Input, bytes: usize, resent: bool) {
        if !self.cpus.config().enabled() {
            return self.step(now, node, input, resent);
        }
        let at = self.cpus.schedule(usize::from(node), now, bytes);
        self.handle_at(node, at, input, resent);
    }

    /// Queues `node`'s handling of `input` at `at`, when a core has done its work or a pause
    /// has ended.
    fn handle_at(&mut self, node: NodeId, at: u64, input: Input, resent: bool) {
        let kind = EventKind::Handle {
            node,
            input,
            resent,
        };
        self.push_own(node, at, kind);
    }

    /// `node`'s pools rejected `msg` from `from` now: it joins the messages its connection will
    /// ask for at the next run of `node`'s retransmission task but one (the next, if it had been
    /// asked for before), which `from` resends together. A stop-the-world pause holds the task.
    fn lose(&mut self, now: u64, node: NodeId, from: NodeId, msg: Msg, asked_before: bool) {
        let interval = self.cfg.network.xmit_interval_us;
        let tick = repair_tick(now, asked_before, interval);
        let tick = self.cpus.after_pause(usize::from(node), tick);
        let spare = &mut self.spare_batches;
        let slot = &mut self.slots[usize::from(node) / self.partitions];
        if let Some(b) = slot
            .lost
            .iter_mut()
            .find(|b| b.from == from && b.tick == tick)
        {
            b.msgs.push(msg);
            return;
        }
        let mut msgs = spare.pop().unwrap_or_default();
        msgs.push(msg);
        slot.lost.push(LostBatch { from, tick, msgs });
        let at = tick + slot.network.resent_delay(tick, from, node);
        self.push_own(
            node,
            at,
            EventKind::Resend {
                to: node,
                from,
                tick,
            },
        );
    }

    /// Feeds `input` to `node`. `resent`: `input` is a message resent on request (if the node
    /// rejects it again, it was asked for before).
    fn step(&mut self, now: u64, node: NodeId, input: Input, resent: bool) {
        let mut resent_input = ResentInput::new(&input, resent);
        let mut out = std::mem::take(&mut self.out);
        self.slot(node).machine.handle(now, input, &mut out);
        if out.iter().any(|o| !matches!(o, Output::SetTimer { .. })) {
            self.tally.last_activity = now;
        }
        for o in out.drain(..) {
            match o {
                Output::Send { to, msg } => {
                    let at = now + self.delay(now, node, to, &msg);
                    let key = self.slot(node).next_key(at, to, node);
                    let event = Event {
                        key,
                        kind: EventKind::Deliver {
                            to,
                            from: node,
                            msg,
                        },
                    };
                    let part = Self::of(to, self.partitions);
                    if part == self.index {
                        self.queue.push(event);
                    } else {
                        self.outbox[part].push(event);
                    }
                }
                Output::Rejected { from, msg } => {
                    let asked_before = resent_input.asked_before(from);
                    self.lose(now, node, from, msg, asked_before);
                }
                Output::SetTimer { at } => {
                    // A node asks again for the wake-up it already has queued when a stale one
                    // (armed for a deadline since cancelled) fired first: one event per instant is
                    // enough, and a second one would itself re-arm when it fires, so with
                    // deadlines far apart (the key queue's backed-off batches) stale wake-ups
                    // multiplied until memory ran out.
                    let at = at.max(now);
                    let slot = self.slot(node);
                    if slot.timer_at != Some(at) {
                        slot.timer_at = Some(at);
                        self.push_own(node, at, EventKind::Timer { node });
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
                } => self.reply(now, node, requester, op, outcome),
            }
        }
        self.out = out;
        let mut issue_now = std::mem::take(&mut self.issue_now);
        for (node, requester) in issue_now.drain(..) {
            self.issue(now, node, requester);
        }
        self.issue_now = issue_now;
    }

    /// Requester `requester` of `node` has its operation's outcome now.
    fn reply(&mut self, now: u64, node: NodeId, requester: u32, op: ClientOp, outcome: Outcome) {
        let index = self.requester_index(node, requester);
        let issued_at = self.slot(node).started[requester as usize];
        let latency = now - issued_at;
        let what = match (&op, &outcome) {
            (ClientOp::Get(key), Outcome::Got(entry)) => Some(Happened::Got(*key, entry.version)),
            (ClientOp::Put(key, value), Outcome::Put(entry)) => Some(Happened::PutAcked(
                *key,
                entry.clone(),
                (entry.value != *value).then(|| value.clone()),
            )),
            _ => None,
        };
        if let Some(what) = what {
            self.records.push(Record {
                time: now,
                node,
                requester: index,
                what,
            });
        }
        let t = &mut self.tally;
        t.completed += 1;
        if self.cfg.workload.requests_per_node.is_some() {
            t.last_reply = now;
        }
        if self.cfg.workload.requests_per_node.is_some() || now <= self.cfg.duration_us {
            let value_size = self.cfg.workload.value_size as usize;
            t.requesters.record(&op, &outcome, latency, value_size);
        } else {
            t.drained_ops += 1;
        }
        // No think time, but a requester issues its next operation at least
        // `MIN_ISSUE_INTERVAL_US` after this one: an operation that took no virtual time (a
        // local read or write with the CPU model off, zero-latency links) would otherwise be
        // followed by another at the same instant, forever, and the window would never close.
        // With the CPU model on and a cost per input (the claims': 30 µs), every operation takes
        // longer than this, so it never delays one there, and the next operation is issued in
        // this step, after the reply (no event of its own: it depends on nothing else).
        let next = now.max(issued_at + MIN_ISSUE_INTERVAL_US);
        if next == now {
            self.issue_now.push((node, requester));
        } else {
            self.push_own(node, next, EventKind::Issue { node, requester });
        }
    }

    /// The cores' usage so far.
    pub fn cpu_usage(&self) -> CpuUsage {
        self.cpus.usage
    }

    /// The network's fault counters of this partition's nodes: (drops, spikes).
    pub fn faults(&self) -> (u64, u64) {
        self.slots.iter().fold((0, 0), |(d, s), slot| {
            (d + slot.network.drops, s + slot.network.spikes)
        })
    }

    /// For the drain cap: per node of this partition, the CPU work queued in front of its cores
    /// at `t` (taken, or on its way in `inbound` and in this partition's queue), and the latest
    /// wake-up it has armed.
    pub fn backlog(&self, t: u64, inbound: &mut [u64]) -> (u64, u64) {
        let cpu = self.cpus.config();
        let mut queue_us = 0;
        if cpu.enabled() {
            for ev in self.queue.pending() {
                if let EventKind::Deliver { to, msg, .. } = ev {
                    let to = &mut inbound[usize::from(*to)];
                    *to = to.saturating_add(cpu.cost_us(msg.payload_len()));
                }
            }
            for (i, slot) in self.slots.iter().enumerate() {
                let node = self.index + i * self.partitions;
                for msg in slot.lost.iter().flat_map(|b| &b.msgs) {
                    let to = &mut inbound[node];
                    *to = to.saturating_add(cpu.cost_us(msg.payload_len()));
                }
                let waiting = inbound[node].div_ceil(u64::from(cpu.cores));
                queue_us = queue_us.max(self.cpus.queued_us(node, t).saturating_add(waiting));
            }
        }
        let armed = self
            .slots
            .iter()
            .filter_map(|s| s.timer_at)
            .map(|at| at.saturating_sub(t))
            .max()
            .unwrap_or(0);
        (queue_us, armed)
    }

    /// The pending events and the messages awaiting retransmission.
    pub fn pending(&self) -> impl Iterator<Item = &EventKind> {
        self.queue.pending()
    }

    /// The messages this partition's nodes rejected and will ask for again.
    pub fn lost(&self) -> impl Iterator<Item = &Msg> {
        self.slots
            .iter()
            .flat_map(|s| s.lost.iter().flat_map(|b| &b.msgs))
    }

    /// Per requester of this partition's nodes (by cluster index), operations issued.
    pub fn issued(&self) -> impl Iterator<Item = (usize, u64)> + '_ {
        let per_node = self.cfg.workload.requesters_per_node as usize;
        self.slots.iter().enumerate().flat_map(move |(i, s)| {
            let node = self.index + i * self.partitions;
            s.issued
                .iter()
                .enumerate()
                .map(move |(r, &n)| (node * per_node + r, n))
        })
    }

    /// Gives the machines back, with their ids.
    pub fn into_machines(self) -> impl Iterator<Item = (usize, Box<dyn NodeMachine>)> {
        let (index, partitions) = (self.index, self.partitions);
        self.slots
            .into_iter()
            .enumerate()
            .map(move |(i, s)| (index + i * partitions, s.machine))
    }
}
