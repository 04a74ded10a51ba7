//! The coordinator of a net run: the one process that drives the node processes (as
//! IspnPerfTest's controller drives its cluster's JVMs). It waits for every node to join,
//! hands each every node's address, starts runs and collects each node's own figures, decides
//! when the cluster is quiescent from the nodes' message counts, and verifies the whole cluster
//! from the nodes' reports with the same verifier every driver uses.
//!
//! Every wait has a deadline, and a node that fails is named: one that never joins, joins
//! twice, runs another build or cluster, does not prove the cluster's secret, joins from an
//! address other than the one its cluster file gives it, reports a failure, or whose process
//! dies (its control connection ends). A connection that never says who it is (a port scan, a
//! health check) is no node: it is dropped, and listed in [`NetCluster::ignored`]. Dropping a
//! [`NetCluster`] tells every node to exit and kills any process this coordinator started that
//! has not exited within a few seconds.

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::Child;
use std::time::{Duration, Instant};

use crossbeam::channel::{Receiver, RecvTimeoutError, TryRecvError};

use super::control::{
    Command, ControlStream, ControlWriter, Event, FinalReport, RunFigures, read_on_a_thread,
};
use super::sockets::HELLO_TIMEOUT;
use super::wire::{Challenge, Hello, Secret, challenge};
use super::{NetError, cluster_digest};
use crate::driver::threads::{DriverStats, Progress, ThreadsConfig};
use crate::history::{TimedOp, check_timeline};
use crate::message::NodeId;
use crate::node::NodeStats;
use crate::protocol::ProtocolKind;
use crate::verifier::{AckLog, VerifyReport, verify_snapshots, verify_survivors};
use crate::workload::WorkloadConfig;

/// The coordinator's listener, bound before any node process is started so that their
/// command lines can name it.
#[derive(Debug)]
pub struct Coordinator {
    listener: TcpListener,
    secret: Secret,
    /// Where a cluster file places each node, by id: a node joins from its host only.
    placed: Option<Vec<SocketAddr>>,
}

/// A node process a coordinator started: killed if it outlives the run.
#[derive(Debug)]
pub struct Started {
    /// The node it hosts.
    pub node: NodeId,
    /// The process.
    pub child: Child,
}

/// Has the process `cmd` starts killed (`SIGKILL`) when the thread that starts it ends, the
/// process with it (Linux's `PR_SET_PDEATHSIG`): a node process must not outlive its
/// coordinator, even one killed outright. Start it from a thread that lives as long as the
/// cluster. If that thread is gone before the child could ask, the child does not start.
pub fn dies_with_its_parent(cmd: &mut std::process::Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: getpid has no preconditions.
    let parent = unsafe { libc::getpid() };
    // SAFETY: between fork and exec the closure calls only async-signal-safe functions (prctl,
    // getppid) and allocates nothing.
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            if libc::getppid() != parent {
                return Err(std::io::Error::from(std::io::ErrorKind::NotConnected));
            }
            Ok(())
        });
    }
}

/// What a verified net run found.
#[derive(Debug, Clone)]
pub struct NetReport {
    /// The verifier's report over every node's state.
    pub verify: VerifyReport,
    /// The nodes' machine counters, summed.
    pub stats: NodeStats,
    /// What the nodes' threads did, summed (maxima: the largest).
    pub driver: DriverStats,
    /// Gets the nodes' history checks compared, each over its own node's requesters.
    pub gets_checked: u64,
    /// Gets the history check across every node's requesters compared, where it ran: when
    /// this coordinator started every node process itself, so they share this host's clock.
    pub gets_checked_across: Option<u64>,
}

impl Coordinator {
    /// Listens at `address` (port 0: one the OS picks).
    pub fn bind(address: SocketAddr) -> Result<Self, NetError> {
        Ok(Coordinator {
            listener: TcpListener::bind(address)?,
            secret: Secret::default(),
            placed: None,
        })
    }

    /// Has every node prove `secret` when it joins (none by default).
    pub fn with_secret(self, secret: Secret) -> Self {
        Coordinator { secret, ..self }
    }

    /// Has node `i` join from the host of `addresses[i]` (a cluster file's), and listen there.
    pub fn placing(self, addresses: Vec<SocketAddr>) -> Self {
        Coordinator {
            placed: Some(addresses),
            ..self
        }
    }

    /// Where node processes join.
    pub fn address(&self) -> Result<SocketAddr, NetError> {
        Ok(self.listener.local_addr()?)
    }

    /// Waits up to `timeout` for every node of `threads.cluster` to join, checks each one's
    /// hello against this coordinator's settings and secret (and placement), and connects them.
    /// `started` are the node processes this coordinator launched (empty when they were started
    /// by hand on their hosts). A connection that closes, sends what is no hello, or stays
    /// silent for [`HELLO_TIMEOUT`] is dropped and listed ([`NetCluster::ignored`]).
    pub fn gather(
        self,
        protocol: ProtocolKind,
        threads: &ThreadsConfig,
        workload: &WorkloadConfig,
        started: Vec<Started>,
        timeout: Duration,
    ) -> Result<NetCluster, NetError> {
        let nodes = threads.cluster.nodes;
        let mut cluster = NetCluster {
            links: (0..nodes).map(|_| None).collect(),
            acks: AckLog::new(threads.cluster.keys),
            ops: (0..nodes).map(|_| Vec::new()).collect(),
            started,
            reply_timeout: Duration::from_micros(threads.cluster.reply_timeout_us),
            ignored: Vec::new(),
        };
        let digest = cluster_digest(protocol, threads, workload);
        let mut addresses: Vec<Option<SocketAddr>> = vec![None; nodes];
        // Connections not yet identified: each with its challenge, its peer, when it came.
        let mut waiting: Vec<(Link, Challenge, SocketAddr, Instant)> = Vec::new();
        let deadline = Instant::now() + timeout;
        self.listener.set_nonblocking(true)?;
        while addresses.iter().any(Option::is_none) {
            match self.listener.accept() {
                Ok((stream, from)) => {
                    stream.set_nonblocking(false)?;
                    let c = challenge();
                    let linked = Link::new(stream).and_then(|mut link| {
                        link.send(&Command::Challenge(c))?;
                        Ok(link)
                    });
                    match linked {
                        Ok(link) => waiting.push((link, c, from, Instant::now())),
                        Err(e) => cluster.ignored.push(format!("{from}: {e}")),
                    }
                    continue;
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(e.into()),
            }
            let mut i = 0;
            while i < waiting.len() {
                let first = waiting[i].0.try_next();
                let Some(first) = first else {
                    if waiting[i].3.elapsed() >= HELLO_TIMEOUT {
                        let (_, _, from, _) = waiting.swap_remove(i);
                        cluster.ignored.push(format!(
                            "{from}: no hello within {} ms",
                            HELLO_TIMEOUT.as_millis()
                        ));
                    } else {
                        i += 1;
                    }
                    continue;
                };
                let (mut link, challenge, from, _) = waiting.swap_remove(i);
                let (hello, address) = match first {
                    Ok(Event::Joined { hello, address }) => (hello, address),
                    // A node that could not even listen says so before it joins.
                    Ok(Event::Failed(what)) => return Err(NetError::Failed(what)),
                    Ok(other) => {
                        cluster.ignored.push(format!(
                            "{from}: a first frame that is no hello ({other:?})"
                        ));
                        continue;
                    }
                    Err(e) => {
                        cluster.ignored.push(format!("{from}: {e} before a hello"));
                        continue;
                    }
                };
                let node = hello.from;
                let ours = Hello::new(node, digest, &Secret::default(), &challenge);
                hello.check_proven(&ours, &self.secret, &challenge)?;
                let slot = addresses
                    .get_mut(usize::from(node))
                    .ok_or_else(|| NetError::Node {
                        node,
                        what: format!("is not a member of a cluster of {nodes} nodes"),
                    })?;
                if let Some(placed) = &self.placed {
                    check_placement(node, placed, from, address)?;
                }
                if slot.is_some() {
                    return Err(NetError::Node {
                        node,
                        what: "joined twice (two hosts with the same node id?)".into(),
                    });
                }
                *slot = Some(address);
                link.node = Some(node);
                cluster.links[usize::from(node)] = Some(link);
            }
            if addresses.iter().all(Option::is_some) {
                break;
            }
            cluster.check_started()?;
            if Instant::now() >= deadline {
                let missing: Vec<_> = (0..nodes)
                    .filter(|&n| addresses[n].is_none())
                    .map(|n| n.to_string())
                    .collect();
                let ignored = match cluster.ignored.is_empty() {
                    true => String::new(),
                    false => format!(" (connections ignored: {})", cluster.ignored.join("; ")),
                };
                return Err(NetError::Timeout {
                    what: format!(
                        "node(s) {} to join within {} ms{ignored}",
                        missing.join(", "),
                        timeout.as_millis()
                    ),
                });
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let addresses: Vec<SocketAddr> = addresses.into_iter().flatten().collect();
        cluster.broadcast(&Command::Peers(addresses))?;
        cluster.collect(timeout, |e| matches!(e, Event::Connected).then_some(()))?;
        Ok(cluster)
    }
}

/// Whether node `node`, whose control connection comes from `from` and which listens at
/// `address`, joins from where a cluster file `placed` it: an address proves little on a
/// shared network (the secret proves more), but a node on another host than its file says is
/// a mistake to name, not a member to run with.
fn check_placement(
    node: NodeId,
    placed: &[SocketAddr],
    from: SocketAddr,
    address: SocketAddr,
) -> Result<(), NetError> {
    let Some(&want) = placed.get(usize::from(node)) else {
        return Ok(());
    };
    let elsewhere = |what: String| {
        Err(NetError::Node {
            node,
            what: format!("{what}, but the cluster file places it at {want}"),
        })
    };
    if !want.ip().is_unspecified() && from.ip() != want.ip() {
        return elsewhere(format!("joined from {}", from.ip()));
    }
    if want.port() != 0 && address.port() != want.port() {
        return elsewhere(format!("listens at {address}"));
    }
    Ok(())
}

/// A joined, connected cluster of node processes.
#[derive(Debug)]
pub struct NetCluster {
    /// Per node, its control connection (all `Some` once gathered).
    links: Vec<Option<Link>>,
    /// The puts every node's requesters saw acknowledged, as the nodes streamed them
    /// ([`Event::Acked`]), a killed node's among them.
    acks: AckLog,
    /// Per node, its timed operations reported since the last verification ([`Event::Ops`]).
    ops: Vec<Vec<TimedOp>>,
    started: Vec<Started>,
    reply_timeout: Duration,
    /// Connections to the coordinator that never said who they were, and why.
    ignored: Vec<String>,
}

impl NetCluster {
    /// Runs every node's requesters for `length`, each timed by its own node; the figures per
    /// node.
    pub fn run(&mut self, length: Duration) -> Result<Vec<RunFigures>, NetError> {
        self.run_settled(Duration::ZERO, length)
    }

    /// [`Self::run`] after `settle` of unmeasured load.
    pub fn run_settled(
        &mut self,
        settle: Duration,
        length: Duration,
    ) -> Result<Vec<RunFigures>, NetError> {
        self.broadcast(&Command::Run {
            settle_millis: settle.as_millis() as u64,
            millis: length.as_millis() as u64,
        })?;
        self.collect_runs(settle + length)
    }

    /// [`Self::run`], killing the process of `node` `after` the run started ([`Self::kill`]):
    /// the figures are the survivors'.
    pub fn run_killing(
        &mut self,
        length: Duration,
        node: NodeId,
        after: Duration,
    ) -> Result<Vec<RunFigures>, NetError> {
        self.broadcast(&Command::Run {
            settle_millis: 0,
            millis: length.as_millis() as u64,
        })?;
        std::thread::sleep(after);
        if !self.kill(node)? {
            return Err(NetError::Node {
                node,
                what: "has no process this coordinator started, to kill".into(),
            });
        }
        self.collect_runs(length)
    }

    fn collect_runs(&mut self, length: Duration) -> Result<Vec<RunFigures>, NetError> {
        // A requester's last call may wait for its reply timeout.
        let wait = length + self.reply_timeout + Duration::from_secs(10);
        self.collect(wait, |e| match e {
            Event::Ran(f) => Some(*f),
            _ => None,
        })
    }

    /// Waits until every message sent has been handled and no node is busy, as two identical
    /// rounds of the nodes' reports show; fails after `max_wait` naming what was still busy.
    pub fn quiesce(&mut self, max_wait: Duration) -> Result<(), NetError> {
        let start = Instant::now();
        let mut last: Option<Vec<Progress>> = None;
        loop {
            self.broadcast(&Command::Poll)?;
            let round = self.collect(Duration::from_secs(10), |e| match e {
                Event::Progress(p) => Some(p),
                _ => None,
            })?;
            let alive: Vec<bool> = self.links.iter().map(Option::is_some).collect();
            if quiescent(last.as_deref(), &round, &alive) {
                return Ok(());
            }
            if start.elapsed() > max_wait {
                let pending: i64 = round.iter().map(|p| p.pending).sum();
                let busy = round.iter().find_map(|p| p.busy.clone());
                return Err(NetError::Timeout {
                    what: format!(
                        "the cluster to quiesce within {} ms: {}",
                        max_wait.as_millis(),
                        busy.unwrap_or_else(|| format!(
                            "{pending} inputs queued, or messages still on the wire"
                        ))
                    ),
                });
            }
            last = Some(round);
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    /// Quiesces, collects every node's state and verifies the cluster: each node's history
    /// check and connections first, then the verifier over all nodes against every
    /// requester's acknowledged writes.
    pub fn verify(&mut self, max_wait: Duration) -> Result<NetReport, NetError> {
        self.quiesce(max_wait)?;
        self.broadcast(&Command::Report)?;
        let reports: Vec<FinalReport> = self.collect(Duration::from_secs(30), |e| match e {
            Event::Final(r) => Some(*r),
            _ => None,
        })?;
        let keys = reports.first().map_or(0, |r| r.snapshot.data.keys());
        let mut ops_of: Vec<Vec<TimedOp>> = std::mem::take(&mut self.ops);
        self.ops = (0..self.links.len()).map(|_| Vec::new()).collect();
        let (mut stats, mut driver) = (NodeStats::default(), DriverStats::default());
        let mut gets_checked = 0;
        for r in &reports {
            let fail = |what: String| NetError::Node { node: r.node, what };
            r.history.clone().map_err(fail)?;
            if let Some(e) = &r.link_error {
                return Err(fail(e.clone()));
            }
            stats.add(&r.stats);
            driver.add(&r.driver);
            gets_checked += r.gets_checked;
        }
        // One host's processes share its monotonic clock, so their operations can be ordered
        // across nodes; the clocks of several hosts are never compared.
        let gets_checked_across = if self.started.is_empty() {
            None
        } else {
            let ops: Vec<TimedOp> = reports
                .iter()
                .flat_map(|r| std::mem::take(&mut ops_of[usize::from(r.node)]))
                .collect();
            let check = check_timeline(keys, &ops);
            check.result().map_err(|e| {
                NetError::Verify(format!("the history check across node processes: {e}"))
            })?;
            Some(check.gets_checked())
        };
        let snapshots: Vec<_> = reports.into_iter().map(|r| r.snapshot).collect();
        let dead = self.dead();
        let verify = if dead.is_empty() {
            verify_snapshots(&snapshots, &self.acks)
        } else {
            verify_survivors(&snapshots, &dead, &self.acks)
        }
        .map_err(|e| NetError::Verify(e.to_string()))?;
        Ok(NetReport {
            verify,
            stats,
            driver,
            gets_checked,
            gets_checked_across,
        })
    }

    /// Kills the process of `node`, if this coordinator started it (a fault run), and tells the
    /// others it is gone, as a failure detector would: from then on they drop messages to it,
    /// their requests to it fail at their reply timeouts, and runs, quiescence and verification
    /// go on without it. Whether there was a process to kill.
    pub fn kill(&mut self, node: NodeId) -> Result<bool, NetError> {
        let killed = self
            .started
            .iter_mut()
            .find(|s| s.node == node)
            .is_some_and(|s| s.child.kill().is_ok() && s.child.wait().is_ok());
        if killed {
            // What it streamed before it died is still to be read: the acks it saw.
            if let Some(mut link) = self.links.get_mut(usize::from(node)).and_then(Option::take) {
                link.drain(|e| {
                    if let Event::Acked(a) = e {
                        self.acks.absorb(a.count, &a.newest);
                    }
                });
            }
            self.broadcast(&Command::Gone(node))?;
        }
        Ok(killed)
    }

    /// The process id of `node`, if this coordinator started it.
    pub fn pid(&self, node: NodeId) -> Option<u32> {
        self.started
            .iter()
            .find(|s| s.node == node)
            .map(|s| s.child.id())
    }

    /// Connections to the coordinator while it gathered the nodes that never said who they
    /// were (a port scan, a health check), each with its peer and how it ended: ignored.
    pub fn ignored(&self) -> &[String] {
        &self.ignored
    }

    /// The nodes whose processes are gone.
    pub fn dead(&self) -> Vec<NodeId> {
        (0..self.links.len())
            .filter(|&i| self.links[i].is_none())
            .map(|i| i as NodeId)
            .collect()
    }

    fn broadcast(&mut self, command: &Command) -> Result<(), NetError> {
        for link in self.links.iter_mut().flatten() {
            link.send(command)?;
        }
        Ok(())
    }

    /// One answer from every node, in node order, each within `wait`.
    fn collect<T>(
        &mut self,
        wait: Duration,
        mut want: impl FnMut(Event) -> Option<T>,
    ) -> Result<Vec<T>, NetError> {
        let mut out = Vec::with_capacity(self.links.len());
        for i in 0..self.links.len() {
            let Some(link) = self.links[i].as_mut() else {
                continue;
            };
            let node = link.node;
            // Acks stream in while a run goes on, before its figures; operations before a
            // node's final report.
            let event = loop {
                match link.next(wait) {
                    Ok(Event::Acked(a)) => self.acks.absorb(a.count, &a.newest),
                    Ok(Event::Ops(ops)) => self.ops[i].extend(ops),
                    other => break other,
                }
            };
            let event = match event {
                Ok(e) => e,
                Err(e) => return Err(self.explain(node, e)),
            };
            match event {
                Event::Failed(what) => {
                    return Err(NetError::Node {
                        node: node.unwrap_or_default(),
                        what,
                    });
                }
                e => match want(e) {
                    Some(t) => out.push(t),
                    None => {
                        return Err(NetError::protocol(format!(
                            "node {}: an answer out of turn",
                            node.unwrap_or_default()
                        )));
                    }
                },
            }
        }
        Ok(out)
    }

    /// Adds to a node's error how its process ended, if this coordinator started it and it did.
    fn explain(&mut self, node: Option<NodeId>, e: NetError) -> NetError {
        let Some(node) = node else { return e };
        let exited = self
            .started
            .iter_mut()
            .find(|s| s.node == node)
            .and_then(|s| wait_briefly(&mut s.child));
        let what = match e {
            NetError::Node { what, .. } => what,
            e => e.to_string(),
        };
        match exited {
            Some(status) => NetError::Node {
                node,
                what: format!("its process exited ({status}): {what}"),
            },
            None => NetError::Node { node, what },
        }
    }

    /// Fails if a started process has exited.
    fn check_started(&mut self) -> Result<(), NetError> {
        for s in &mut self.started {
            if let Ok(Some(status)) = s.child.try_wait() {
                return Err(NetError::Node {
                    node: s.node,
                    what: format!("its process exited ({status}) before joining"),
                });
            }
        }
        Ok(())
    }
}

impl Drop for NetCluster {
    fn drop(&mut self) {
        for link in self.links.iter_mut().flatten() {
            let _ = link.send(&Command::Exit);
        }
        let deadline = Instant::now() + Duration::from_secs(5);
        for s in &mut self.started {
            while Instant::now() < deadline && matches!(s.child.try_wait(), Ok(None)) {
                std::thread::sleep(Duration::from_millis(10));
            }
            if matches!(s.child.try_wait(), Ok(None)) {
                let _ = s.child.kill();
            }
            let _ = s.child.wait();
        }
    }
}

/// Whether a split cluster is quiescent, given two consecutive rounds of its live processes'
/// reports (`alive` by node): every message written between two live nodes was read, no input
/// is queued or held, no node is busy, every live process has read each dead node's connection
/// to its end (so none of its messages is still to come), and nothing moved between the rounds.
/// One round is not enough: each process reports at its own moment, so a message written after
/// its receiver reported and read before its sender did looks read and never written; but it
/// changes its sender's count, which the second round shows.
fn quiescent(last: Option<&[Progress]>, round: &[Progress], alive: &[bool]) -> bool {
    if last != Some(round) || round.iter().any(|p| p.pending != 0 || p.busy.is_some()) {
        return false;
    }
    let n = alive.len();
    let total = |counts: fn(&Progress) -> &Vec<u64>, i: usize| -> u64 {
        round
            .iter()
            .map(|p| counts(p).get(i).copied().unwrap_or(0))
            .sum()
    };
    let live = |i: usize| alive.get(i).copied().unwrap_or(false);
    let wire_idle = (0..n * n)
        .filter(|i| live(i / n) && live(i % n))
        .all(|i| total(|p| &p.sent, i) == total(|p| &p.received, i));
    let dead_read = (0..n).filter(|&d| !live(d)).all(|d| {
        round
            .iter()
            .all(|p| p.closed_from.get(d).is_some_and(|&c| c > 0))
    });
    wire_idle && dead_read
}

/// The exit status of `child` if it ends within a second.
fn wait_briefly(child: &mut Child) -> Option<std::process::ExitStatus> {
    let deadline = Instant::now() + Duration::from_secs(1);
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Some(status),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(10)),
            _ => return None,
        }
    }
}

/// The coordinator's end of one node's control connection; its errors name the node once it
/// has joined. A thread of its own reads the node's events as they come, so a node streaming
/// its acks never waits for the coordinator to read them (a blocked write would delay the
/// node's reading of its counters at a window's edge).
#[derive(Debug)]
struct Link {
    node: Option<NodeId>,
    commands: ControlWriter,
    /// The node's events in order; the reader's last item is the end of the connection
    /// (`Ok(None)`) or its error.
    events: Receiver<Result<Option<Event>, NetError>>,
}

/// A link let go is closed, so that its reader thread ends even if the other end (a stranger
/// that never spoke) keeps it open.
impl Drop for Link {
    fn drop(&mut self) {
        self.commands.shut();
    }
}

impl Link {
    fn new(stream: TcpStream) -> Result<Self, NetError> {
        let (reader, commands) = ControlStream::new(stream)?.split();
        Ok(Link {
            node: None,
            commands,
            events: read_on_a_thread(reader)?,
        })
    }

    /// The node's next event if one is there: `None` if none is yet.
    fn try_next(&mut self) -> Option<Result<Event, NetError>> {
        let closed = || NetError::protocol("its control connection closed".to_string());
        match self.events.try_recv() {
            Ok(Ok(Some(e))) => Some(Ok(e)),
            Ok(Ok(None)) | Err(TryRecvError::Disconnected) => Some(Err(closed())),
            Ok(Err(e)) => Some(Err(e)),
            Err(TryRecvError::Empty) => None,
        }
    }

    fn send(&mut self, command: &Command) -> Result<(), NetError> {
        self.commands.send(command).map_err(|e| self.fail(e))
    }

    /// The node's next event within `wait`.
    fn next(&mut self, wait: Duration) -> Result<Event, NetError> {
        let closed = || NetError::protocol("its control connection closed".to_string());
        match self.events.recv_timeout(wait) {
            Ok(Ok(Some(e))) => Ok(e),
            Ok(Ok(None)) | Err(RecvTimeoutError::Disconnected) => Err(self.fail(closed())),
            Ok(Err(e)) => Err(self.fail(e)),
            Err(RecvTimeoutError::Timeout) => Err(self.fail(NetError::Timeout {
                what: format!("an answer within {} ms", wait.as_millis()),
            })),
        }
    }

    /// Reads the rest of what a dead node sent, each event to `seen`, until its connection's
    /// end (or a second without news).
    fn drain(&mut self, mut seen: impl FnMut(Event)) {
        while let Ok(Ok(Some(e))) = self.events.recv_timeout(Duration::from_secs(1)) {
            seen(e);
        }
    }

    fn fail(&self, e: NetError) -> NetError {
        match self.node {
            Some(node) => NetError::Node {
                node,
                what: e.to_string(),
            },
            None => e,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A process hosting node `node` of 2: it wrote `sent` messages to the other node and
    /// read `received` from it.
    fn at(node: usize, sent: u64, received: u64) -> Progress {
        let (mut s, mut r) = (vec![0; 4], vec![0; 4]);
        s[node * 2 + (1 - node)] = sent;
        r[(1 - node) * 2 + node] = received;
        Progress {
            sent: s,
            received: r,
            closed_from: vec![0; 2],
            pending: 0,
            busy: None,
        }
    }

    #[test]
    fn quiescence_needs_two_equal_rounds_with_nothing_on_the_wire_queued_or_busy() {
        let both = [true, true];
        let idle = [at(0, 5, 4), at(1, 4, 5)];
        assert!(quiescent(Some(&idle), &idle, &both));
        // One round alone, or a round after a different one: something may have moved.
        assert!(!quiescent(None, &idle, &both));
        assert!(!quiescent(Some(&[at(0, 5, 3), at(1, 4, 5)]), &idle, &both));
        // A message written and not yet read.
        let on_wire = [at(0, 6, 4), at(1, 4, 5)];
        assert!(!quiescent(Some(&on_wire), &on_wire, &both));
        // An input read and not yet handled.
        let mut queued = idle.clone();
        queued[1].pending = 1;
        assert!(!quiescent(Some(&queued), &queued, &both));
        // A node busy (a lock held, a queue not empty).
        let mut busy = idle.clone();
        busy[1].busy = Some("key 3 locked".into());
        assert!(!quiescent(Some(&busy), &busy, &both));
        // Node 1 is dead: its counts are gone and what it wrote does not count, but node 0
        // must have read its connection to the end, or more of its messages may come.
        let survivor = [at(0, 5, 4)];
        let dead = [true, false];
        assert!(!quiescent(Some(&survivor), &survivor, &dead));
        let mut read_out = survivor.clone();
        read_out[0].closed_from[1] = 1;
        assert!(quiescent(Some(&read_out), &read_out, &dead));
    }
}
