//! A node process of a net run (`critsec node`): one member of the cluster, as one JVM of
//! IspnPerfTest's cluster is, hosting its machine on the threads driver's transport and pools, its
//! requesters, and its connections to every other node; told what to do by the coordinator over
//! its control connection ([`control`](super::control)).
//!
//! Life of a node process: join the coordinator (retrying while the coordinator is not up
//! yet, since hosts start in any order) with a hello that proves the cluster's secret over the
//! coordinator's challenge, bind its listener and tell the coordinator where, connect to every
//! node once the coordinator has every address, then run, report progress and report its state
//! as asked, until told to exit or until the coordinator's connection ends. A node whose
//! coordinator is gone (its control connection closed: the process killed, a fork timed out)
//! stops at once, mid-run too: its requesters would load a cluster nobody measures. Any failure
//! is said to the coordinator ([`Event::Failed`]) before the process gives up.

use std::collections::{BTreeMap, VecDeque};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crossbeam::channel::{Receiver, RecvTimeoutError, Sender};

use super::control::{
    ACK_FLUSH, ACKS_PER_FRAME, Acked, Command, ControlStream, ControlWriter, Event, FinalReport,
    OPS_PER_FRAME, RunFigures, fingerprint, fingerprinted, read_on_a_thread,
};
use super::sockets::{Bound, Handshake};
use super::wire::{Hello, Secret, WireError};
use super::{NetError, cluster_digest};
use crate::driver::threads::{ClusterClient, Split, ThreadCluster, ThreadsConfig};
use crate::history::TimedOp;
use crate::message::{ClientOp, Key, NodeId, Outcome, Versioned};
use crate::protocol::ProtocolKind;
use crate::workload::{OpGenerator, RequesterStats, WorkloadConfig, reply_matches};

/// What a node process needs to know: the cluster's settings (the same on every node: the
/// coordinator refuses a node whose digest differs), which node it is, and where to listen and
/// whom to join.
#[derive(Debug, Clone)]
pub struct NodeSettings {
    /// The protocol.
    pub protocol: ProtocolKind,
    /// The cluster's settings and links (`sockets` is implied).
    pub threads: ThreadsConfig,
    /// What the requesters do.
    pub workload: WorkloadConfig,
    /// This node.
    pub id: NodeId,
    /// Where it listens for the other nodes (port 0: one the OS picks).
    pub listen: SocketAddr,
    /// The coordinator's control address.
    pub coordinator: SocketAddr,
    /// How long to keep trying to reach the coordinator.
    pub join_timeout: Duration,
    /// The cluster's secret, which this node's hellos prove.
    pub secret: Secret,
}

/// Runs a node process until the coordinator says exit. An error is also reported to the
/// coordinator when its connection still works.
pub fn serve(settings: &NodeSettings) -> Result<(), NetError> {
    let stream = join(settings.coordinator, settings.join_timeout)?;
    let mut control = Control::new(stream)?;
    let result = serve_on(settings, &mut control);
    if let Err(e) = &result {
        // The coordinator may be gone already; the error is returned either way.
        let what = match e {
            NetError::Node { .. } => e.to_string(),
            _ => format!("node {}: {e}", settings.id),
        };
        let _ = control.send(&Event::Failed(what));
    }
    result
}

fn serve_on(settings: &NodeSettings, control: &mut Control) -> Result<(), NetError> {
    let challenge = match control.next()? {
        Command::Challenge(c) => c,
        other => {
            return Err(NetError::protocol(format!(
                "expected a challenge, got {other:?}"
            )));
        }
    };
    let bound = Bound::bind_at(&[(settings.id, settings.listen)]).map_err(|e| NetError::Node {
        node: settings.id,
        what: format!("cannot listen at {}: {e}", settings.listen),
    })?;
    let address = bound
        .addresses()?
        .first()
        .map(|&(_, a)| a)
        .unwrap_or(settings.listen);
    let digest = cluster_digest(settings.protocol, &settings.threads, &settings.workload);
    control.send(&Event::Joined {
        hello: Hello::new(settings.id, digest, &settings.secret, &challenge),
        address,
    })?;
    let addresses = match control.next()? {
        Command::Peers(addresses) => addresses,
        Command::Exit => return Ok(()),
        other => return Err(NetError::protocol(format!("expected peers, got {other:?}"))),
    };
    let cluster = ThreadCluster::start_split(
        settings.protocol,
        settings.threads.clone(),
        Split {
            bound,
            addresses,
            handshake: Handshake {
                cluster: digest,
                secret: settings.secret.clone(),
            },
        },
    )
    .map_err(|e| NetError::Node {
        node: settings.id,
        what: e.to_string(),
    })?;
    control.send(&Event::Connected)?;
    let mut requesters = Requesters::new(settings, &cluster)?;
    loop {
        match control.next()? {
            Command::Run {
                settle_millis,
                millis,
            } => {
                let settle = Duration::from_millis(settle_millis);
                let length = Duration::from_millis(millis);
                let figures = requesters.run(&cluster, control, settle, length)?;
                control.send(&Event::Ran(Box::new(figures)))?;
            }
            Command::Poll => control.send(&Event::Progress(cluster.progress()))?,
            Command::Report => {
                // The operations first, in bounded chunks, then the state.
                for chunk in requesters.ops.chunks(OPS_PER_FRAME) {
                    control.send(&Event::Ops(chunk.to_vec()))?;
                }
                requesters.ops.clear();
                let report = requesters.report(&cluster);
                control.send(&Event::Final(Box::new(report)))?;
            }
            Command::Gone(peer) => cluster.peer_gone(peer),
            Command::Exit => return Ok(()),
            other @ (Command::Peers(_) | Command::Challenge(_)) => {
                return Err(NetError::protocol(format!("unexpected {other:?}")));
            }
        }
    }
}

/// Connects to the coordinator, retrying every 50 ms until `timeout`.
fn join(coordinator: SocketAddr, timeout: Duration) -> Result<TcpStream, NetError> {
    let start = Instant::now();
    loop {
        match TcpStream::connect_timeout(&coordinator, Duration::from_secs(1)) {
            Ok(s) => return Ok(s),
            Err(e) if start.elapsed() >= timeout => {
                return Err(NetError::Unreachable {
                    what: format!("the coordinator at {coordinator}"),
                    error: e.to_string(),
                });
            }
            Err(_) => std::thread::sleep(Duration::from_millis(50)),
        }
    }
}

/// The node's end of its control connection, its commands read on a thread of their own so
/// that the node sees the connection close while it runs.
struct Control {
    writer: ControlWriter,
    commands: Receiver<Result<Option<Command>, NetError>>,
    /// Commands that came while a run went on, for after it.
    waiting: VecDeque<Command>,
}

impl Control {
    fn new(stream: TcpStream) -> Result<Self, NetError> {
        let (reader, writer) = ControlStream::new(stream)?.split();
        Ok(Control {
            writer,
            commands: read_on_a_thread(reader)?,
            waiting: VecDeque::new(),
        })
    }

    fn send(&mut self, event: &Event) -> Result<(), NetError> {
        self.writer.send(event)
    }

    /// The coordinator closing the connection: an error (it never leaves without saying exit).
    fn closed() -> NetError {
        NetError::Wire(WireError::Io(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            "the coordinator closed the control connection",
        )))
    }

    /// The next command.
    fn next(&mut self) -> Result<Command, NetError> {
        if let Some(c) = self.waiting.pop_front() {
            return Ok(c);
        }
        match self.commands.recv() {
            Ok(Ok(Some(c))) => Ok(c),
            Ok(Ok(None)) | Err(_) => Err(Self::closed()),
            Ok(Err(e)) => Err(e),
        }
    }

    /// Waits up to `wait` for a command, keeping it for [`Self::next`]; an error if the
    /// connection ended.
    fn watch(&mut self, wait: Duration) -> Result<(), NetError> {
        match self.commands.recv_timeout(wait) {
            Ok(Ok(Some(c))) => {
                self.waiting.push_back(c);
                Ok(())
            }
            Err(RecvTimeoutError::Timeout) => Ok(()),
            Ok(Ok(None)) | Err(RecvTimeoutError::Disconnected) => Err(Self::closed()),
            Ok(Err(e)) => Err(e),
        }
    }
}

/// The node's requester threads' state between runs: a client and an op stream each.
struct Requesters {
    node: NodeId,
    value_size: usize,
    /// Per requester: its client, its op stream, and how many ops it may still do.
    each: Vec<(ClusterClient, OpGenerator, Option<u64>)>,
    /// Every successful operation, timed, for the coordinator's history check across nodes.
    ops: Vec<TimedOp>,
    /// Operations ended (answered or failed) since the node started.
    ended: u64,
}

impl Requesters {
    fn new(settings: &NodeSettings, cluster: &ThreadCluster) -> Result<Self, NetError> {
        let w = &settings.workload;
        let runs = w
            .requester_nodes
            .is_none_or(|k| usize::from(settings.id) < k);
        let count = if runs { w.requesters_per_node } else { 0 };
        let keys = settings.threads.cluster.keys;
        let each = (0..count)
            .map(|r| {
                let client = cluster.client(settings.id).map_err(|e| NetError::Node {
                    node: settings.id,
                    what: e.to_string(),
                })?;
                // Requester r of node n is the threads driver's requester n + r * nodes (its
                // workers are spread over nodes round robin): the same stream and tags.
                let nodes = settings.threads.cluster.nodes;
                let index = r as usize * nodes + usize::from(settings.id);
                let requesters = w.requesters_per_node as usize * nodes;
                let ops = OpGenerator::requester(w, keys, settings.threads.seed, index, requesters);
                Ok((client, ops, w.ops_limit(r)))
            })
            .collect::<Result<Vec<_>, NetError>>()?;
        Ok(Requesters {
            node: settings.id,
            value_size: w.value_size as usize,
            each,
            ops: Vec::new(),
            ended: 0,
        })
    }

    /// Runs every requester on its own thread for `settle` and then the measured window of
    /// `length`, and lets each finish the operation it has in flight at the window's end.
    ///
    /// As a JMH iteration counts, the window counts the operations that end inside it and
    /// divides by its fixed length: the one in flight at either edge falls outside, so neither
    /// a start from no load nor the last replies' tail dilutes the rate. The counters cover
    /// the window too, read at its edges. Messages per request are counted apart, over every
    /// slice since the node started ([`RunFigures::messages_total`]): the messages of a
    /// request straddling an edge would otherwise be counted without the request.
    ///
    /// Meanwhile this thread sends the coordinator the puts acknowledged so far, every
    /// [`ACK_FLUSH`], and the rest before it returns ([`Event::Acked`]).
    fn run(
        &mut self,
        cluster: &ThreadCluster,
        control: &mut Control,
        settle: Duration,
        length: Duration,
    ) -> Result<RunFigures, NetError> {
        let measured = Instant::now() + settle;
        let deadline = measured + length;
        let value_size = self.value_size;
        let (acked, acks) = crossbeam::channel::unbounded();
        // Set when the coordinator is gone: the requesters stop at once.
        let stop = AtomicBool::new(false);
        let (parts, window, flushed) = std::thread::scope(|s| {
            let handles: Vec<_> = self
                .each
                .iter_mut()
                .map(|(client, ops, left)| {
                    let (acked, stop) = (acked.clone(), &stop);
                    s.spawn(move || {
                        let until = (measured, deadline);
                        requester(client, ops, left, until, value_size, &acked, stop)
                    })
                })
                .collect();
            let flushed = flush_until(measured, &acks, control);
            let before = cluster.stats().unwrap_or_default();
            let flushed = flushed.and_then(|()| flush_until(deadline, &acks, control));
            if flushed.is_err() {
                stop.store(true, Ordering::Relaxed);
            }
            let window = cluster.stats().unwrap_or_default().since(&before);
            let parts: Vec<Requested> = handles
                .into_iter()
                .map(|h| h.join().unwrap_or_default())
                .collect();
            (parts, window, flushed)
        });
        flushed?;
        flush(&acks, control)?;
        let mut figures = RunFigures {
            node: self.node,
            nanos: length.as_nanos() as u64,
            stats: window,
            ..RunFigures::default()
        };
        for part in parts {
            figures.requesters.merge(&part.stats);
            figures.mismatches += part.mismatches;
            figures.errors += part.errors;
            self.ended += part.ended;
            self.ops.extend(part.ops);
        }
        figures.messages_total = cluster.stats().unwrap_or_default().messages_sent;
        figures.requests_total = self.ended;
        Ok(figures)
    }

    fn report(&mut self, cluster: &ThreadCluster) -> FinalReport {
        let (mut snapshot, stats) = cluster
            .snapshots()
            .into_iter()
            .next()
            .expect("a node process hosts its node");
        snapshot.data = snapshot.data.map_values(fingerprint);
        FinalReport {
            node: self.node,
            snapshot,
            stats,
            driver: cluster.driver_stats(),
            history: cluster.history(),
            gets_checked: cluster.gets_checked(),
            link_error: cluster.link_error(),
        }
    }
}

/// Sends the coordinator the acknowledged puts in `acks` every [`ACK_FLUSH`] until `until`,
/// and returns at `until` without sending, so the caller reads its counters at the edge; or
/// at once, with an error, when the coordinator's connection ends.
fn flush_until(
    until: Instant,
    acks: &Receiver<(Key, Versioned)>,
    control: &mut Control,
) -> Result<(), NetError> {
    let mut next = Instant::now() + ACK_FLUSH;
    loop {
        let now = Instant::now();
        if now >= until {
            return Ok(());
        }
        control.watch(until.min(next) - now)?;
        let now = Instant::now();
        if now >= next && now < until {
            flush(acks, control)?;
            next = now + ACK_FLUSH;
        }
    }
}

/// Sends the coordinator the acknowledged puts waiting in `acks`, the newest of each key with
/// its value's fingerprint, if there are any, in chunks of at most [`ACKS_PER_FRAME`].
fn flush(acks: &Receiver<(Key, Versioned)>, control: &mut Control) -> Result<(), NetError> {
    let mut count = 0;
    let mut newest = BTreeMap::new();
    for (key, entry) in acks.try_iter() {
        count += 1;
        let slot: &mut Versioned = newest.entry(key).or_default();
        if entry.version > slot.version {
            *slot = entry;
        }
    }
    if count == 0 {
        return Ok(());
    }
    let newest: Vec<(Key, Versioned)> = newest
        .into_iter()
        .map(|(k, e)| (k, fingerprinted(&e)))
        .collect();
    let chunks = newest.chunks(ACKS_PER_FRAME).count();
    for (i, chunk) in newest.chunks(ACKS_PER_FRAME).enumerate() {
        // The count rides with the last chunk: each earlier one counts its own entries.
        let count = if i + 1 == chunks {
            count - (newest.len() - chunk.len()) as u64
        } else {
            chunk.len() as u64
        };
        let newest = chunk.to_vec();
        control.send(&Event::Acked(Acked { count, newest }))?;
    }
    Ok(())
}

/// What one requester did in one run.
#[derive(Default)]
struct Requested {
    stats: RequesterStats,
    /// Replies that did not match their request.
    mismatches: u64,
    /// Calls without a reply.
    errors: u64,
    /// Operations ended, answered or not, inside the window or outside it.
    ended: u64,
    /// Its successful operations, timed.
    ops: Vec<TimedOp>,
}

/// This host's monotonic clock in ns: the same clock for every process of the host, so the
/// coordinator can order the operations of node processes on one host.
fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec it is given, which lives for the call.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// One requester's loop until `deadline` (or its op limit); its stats count the operations
/// that end between `measured` and `deadline` (every reply is checked, and every operation
/// timed for the history check, from the start). Each acknowledged put goes to `acked`.
fn requester(
    client: &mut ClusterClient,
    ops: &mut OpGenerator,
    left: &mut Option<u64>,
    (measured, deadline): (Instant, Instant),
    value_size: usize,
    acked: &Sender<(Key, Versioned)>,
    stop: &AtomicBool,
) -> Requested {
    let mut done = Requested::default();
    let Requested {
        stats,
        mismatches,
        errors,
        ended,
        ops: timed,
    } = &mut done;
    while Instant::now() < deadline && left.is_none_or(|n| n > 0) && !stop.load(Ordering::Relaxed) {
        if let Some(n) = left.as_mut() {
            *n -= 1;
        }
        let op = ops.next_op();
        let start = Instant::now();
        let issued_ns = monotonic_ns();
        let reply = client.call(op.clone());
        let end = Instant::now();
        *ended += 1;
        match reply {
            Ok(outcome) => {
                let us = (end - start).as_micros() as u64;
                if let (ClientOp::Put(key, _), Outcome::Put(e)) = (&op, &outcome) {
                    // The receiver lives until every requester has ended.
                    let _ = acked.send((*key, e.clone()));
                }
                if let Outcome::Got(e) | Outcome::Put(e) = &outcome {
                    timed.push(TimedOp {
                        key: op.key(),
                        put: matches!(op, ClientOp::Put(..)),
                        issued_ns,
                        done_ns: monotonic_ns(),
                        version: e.version,
                    });
                }
                if !reply_matches(&op, &outcome, value_size) {
                    *mismatches += 1;
                }
                if (measured..=deadline).contains(&end) {
                    stats.record(&op, &outcome, us, value_size);
                }
            }
            Err(_) => *errors += 1,
        }
    }
    done
}
