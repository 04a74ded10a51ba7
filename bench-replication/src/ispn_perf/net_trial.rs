//! The `net` driver's trial: one OS process per node over real TCP, as IspnPerfTest runs one
//! JVM per node. This process is the coordinator: it starts the node processes on this machine
//! (the program that hosts them is the scenario's [`NodeProgram`]; `critsec` builds its catalog
//! with itself), runs each iteration on every node at once, scores it from the nodes' own counts and
//! clocks, and verifies the quiescent cluster from the nodes' reports.
//!
//! A node process is `critsec node --coordinator ADDR --id N -p ...`: the scenario's
//! parameters, every one, so that each node parses exactly the settings the coordinator did
//! (and their digest, checked when the node joins, proves it). Each run draws a secret that its
//! nodes' hellos prove, handed to them in their environment ([`SECRET_ENV`]), never on a command
//! line. A node process dies with the thread that started it (`PR_SET_PDEATHSIG`; that thread
//! owns the trial until it ends), and stops by itself when its control connection closes, so
//! that a coordinator killed outright (a fork past its timeout) leaves no load behind.

use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::sync::atomic::Ordering;
use std::time::Duration;

use critsec_harness::{
    CheckFailed, ExternalSample, Iterations, Params, ScenarioError, SelfTimed, Trial,
};
use critsec_replication::net::{
    Coordinator, Namespaces, NetCluster, NetError, Secret, Started, dies_with_its_parent,
};
use critsec_replication::workload::RequesterStats;
use critsec_replication::{NodeId, NodeStats};

use super::cluster_file::ClusterFile;
use super::node_process::{NodeProgram, SECRET_ENV};
use super::{Fault, IspnPerfParams, Netns, metrics};

/// How long a node process started here may take to start and join.
pub(super) const JOIN_TIMEOUT: Duration = Duration::from_secs(30);

/// How long the coordinator waits for the node processes of a cluster file, which are
/// started by hand (or serve one coordinator after another).
const CLUSTER_JOIN_TIMEOUT: Duration = Duration::from_secs(120);

pub(super) struct NetTrial {
    setup: IspnPerfParams,
    /// Dropped before `namespaces` (a field declared later): the processes exit before their
    /// namespaces go.
    cluster: Mutex<NetCluster>,
    /// The nodes' namespaces, if they have them: deleted on drop, and where a cut is made.
    namespaces: Option<Namespaces>,
    /// Where the nodes run, for the report.
    placement: String,
    /// Whether the fault (if any) is still to come: it hits the first measured iteration.
    fault_due: std::sync::atomic::AtomicBool,
    /// What the fault did, once it happened, for the verification line.
    fault_done: Mutex<Option<String>>,
    /// Per node, its messages sent and requests ended since it started, as of the last
    /// iteration: an iteration's messages per request are the differences, so a request's
    /// messages are counted with it even when they fall before or after the slice.
    totals: Mutex<BTreeMap<NodeId, (u64, u64)>>,
}

impl NetTrial {
    /// Starts a node process per node on loopback with `nodes`, or waits for those of the
    /// cluster file, and gathers them.
    pub(super) fn start(
        setup: IspnPerfParams,
        params: &Params,
        nodes: Option<&NodeProgram>,
    ) -> Result<NetTrial, ScenarioError> {
        let setup_error = |e: NetError| ScenarioError::Setup(format!("net driver: {e}"));
        if let Some(path) = &setup.net_cluster {
            let bad =
                |what: String| ScenarioError::bad("cluster", &path.display().to_string(), what);
            let file = ClusterFile::read(path).map_err(|e| bad(e.to_string()))?;
            // The command line fills a run's parameters from its cluster file (`critsec run`
            // does); a value that still differs was set against the file.
            for (k, v) in &file.params {
                let ours = params
                    .0
                    .get(k)
                    .map_or("(no such parameter)", String::as_str);
                if ours != v {
                    return Err(bad(format!(
                        "the file sets {k} = {v}, this run {k} = {ours}"
                    )));
                }
            }
            let coordinator = Coordinator::bind(file.coordinator)
                .map_err(setup_error)?
                .with_secret(file.secret.clone())
                .placing(file.nodes.clone());
            let cluster = coordinator
                .gather(
                    setup.protocol,
                    &setup.threads_config(),
                    &setup.workload,
                    Vec::new(),
                    CLUSTER_JOIN_TIMEOUT,
                )
                .map_err(setup_error)?;
            let secret = match file.secret.is_empty() {
                true => "no shared secret",
                false => "hellos proving the file's secret",
            };
            return Ok(NetTrial {
                placement: format!("on the hosts of {} ({secret})", path.display()),
                setup,
                cluster: Mutex::new(cluster),
                namespaces: None,
                fault_due: false.into(),
                fault_done: Mutex::default(),
                totals: Mutex::default(),
            });
        }
        let Some(NodeProgram { program, args }) = nodes else {
            return Err(ScenarioError::Setup(
                "driver=net starts a process per node: run it from the critsec binary".into(),
            ));
        };
        let nodes = setup.cluster.nodes;
        let made = match setup.netns {
            Netns::Off => None,
            Netns::On => Some(Ok(Namespaces::create(nodes).map_err(setup_error)?)),
            Netns::Auto => Some(Namespaces::create(nodes)),
        };
        let (namespaces, placement) = match made {
            None => (None, "on loopback".to_string()),
            Some(Ok(ns)) => {
                let at = format!("in network namespaces {}", ns.names().join(", "));
                (Some(ns), at)
            }
            Some(Err(e)) => (None, format!("on loopback ({e})")),
        };
        // Before any process starts: a cut needs a link of its own to cut.
        if setup.fault == Fault::Cut && namespaces.is_none() {
            return Err(ScenarioError::Setup(format!(
                "fault=cut needs network namespaces, and the nodes run {placement}"
            )));
        }
        // The links' delay: netem's in the kernel where it has it, else the nodes' shaper.
        let (mut node_params, mut threads) = (params.clone(), setup.threads_config());
        let (latency, jitter) = (setup.link_latency_us, setup.jitter_us);
        let delay = match &namespaces {
            Some(ns) if latency + jitter > 0 => {
                if ns.delay_links(latency, jitter).map_err(setup_error)? {
                    for zero in ["link_latency_us", "jitter_us"] {
                        node_params.0.insert(zero.into(), "0".into());
                    }
                    (threads.latency_us, threads.jitter_us) = (0, 0);
                    "link delay by netem"
                } else {
                    "link delay by the nodes' user-space shaper (this kernel has no netem)"
                }
            }
            _ => "link delay by the nodes' user-space shaper",
        };
        let placement = format!("{placement}; {delay}");
        let loopback = IpAddr::V4(Ipv4Addr::LOCALHOST);
        let host = namespaces
            .as_ref()
            .map_or(loopback, Namespaces::host_address);
        let secret = Secret::random();
        let coordinator = Coordinator::bind(SocketAddr::new(host, 0))
            .map_err(setup_error)?
            .with_secret(secret.clone());
        let at = coordinator.address().map_err(setup_error)?;
        let mut started = Vec::new();
        for id in 0..nodes as NodeId {
            let (mut cmd, listen) = match &namespaces {
                Some(ns) => (
                    ns.command(usize::from(id), program),
                    ns.node_address(usize::from(id)),
                ),
                None => (Command::new(program), loopback),
            };
            cmd.args(args)
                .arg("--coordinator")
                .arg(at.to_string())
                .arg("--id")
                .arg(id.to_string())
                .arg("--listen")
                .arg(SocketAddr::new(listen, 0).to_string());
            for (k, v) in &node_params.0 {
                cmd.arg("-p").arg(format!("{k}={v}"));
            }
            // A node's errors reach the coordinator over its control connection; its stderr
            // stays visible for what cannot (a panic).
            cmd.stdin(Stdio::null())
                .stdout(Stdio::null())
                .env(SECRET_ENV, secret.to_hex());
            // The node dies with the thread that started it, the trial's.
            dies_with_its_parent(&mut cmd);
            let child = cmd.spawn().map_err(|e| {
                ScenarioError::Setup(format!("starting node {id} ({}): {e}", program.display()))
            })?;
            started.push(Started { node: id, child });
        }
        // Dropping `started` inside a failed gather kills the processes.
        let cluster = coordinator
            .gather(
                setup.protocol,
                &threads,
                &setup.workload,
                started,
                JOIN_TIMEOUT,
            )
            .map_err(setup_error)?;
        Ok(NetTrial {
            fault_due: (setup.fault != Fault::None).into(),
            fault_done: Mutex::default(),
            setup,
            cluster: Mutex::new(cluster),
            namespaces,
            placement,
            totals: Mutex::default(),
        })
    }
}

impl Trial for NetTrial {
    fn verify(&self) -> Result<String, CheckFailed> {
        let mut cluster = self
            .cluster
            .lock()
            .map_err(|_| "net cluster poisoned".to_string())?;
        let fault = self
            .fault_done
            .lock()
            .map_err(|_| "net fault poisoned".to_string())?
            .clone();
        let verified = self.verified(&mut cluster, fault.as_deref());
        // A fault run's outcome is the point of it: shown on the console as it is in the
        // metadata, passed or failed.
        if let Some(fault) = &fault {
            match &verified {
                Ok(line) => eprintln!("critsec: net: verified: {line}"),
                Err(e) => eprintln!("critsec: net: after the {fault}: {e}"),
            }
        }
        verified
    }

    fn iterations(&self) -> Iterations<'_> {
        Iterations::SelfTimed(self)
    }
}

impl NetTrial {
    /// Verifies the quiescent cluster, the line naming the fault that hit it, if one did.
    fn verified(
        &self,
        cluster: &mut NetCluster,
        fault: Option<&str>,
    ) -> Result<String, CheckFailed> {
        let report = cluster
            .verify(Duration::from_secs(60))
            .map_err(|e| e.to_string())?;
        if report.stats.regressions > 0 {
            return Err(format!("{} version regressions", report.stats.regressions).into());
        }
        let across = match report.gets_checked_across {
            Some(n) => format!("{n} gets history-checked across node processes"),
            None => "no history check across hosts (their clocks are not compared)".to_string(),
        };
        let fault = fault.map_or(String::new(), |f| format!("after the {f}: "));
        let ignored = match cluster.ignored() {
            [] => String::new(),
            some => format!(
                "; {} connection(s) to the coordinator ignored, never saying hello ({})",
                some.len(),
                some.join("; ")
            ),
        };
        Ok(format!(
            "{fault}{}; {} gets history-checked per node process, {across}; {} messages over sockets, nodes {}{ignored}",
            report.verify, report.gets_checked, report.driver.socket_messages, self.placement
        ))
    }

    /// Records what the fault did, and says it on the console at once.
    fn fault_happened(&self, what: String) {
        eprintln!("critsec: net: {what}");
        if let Ok(mut done) = self.fault_done.lock() {
            *done = Some(what);
        }
    }
}

impl SelfTimed for NetTrial {
    fn run_iteration(&self, warmup: bool, budget: Duration) -> Result<ExternalSample, CheckFailed> {
        let mut cluster = self
            .cluster
            .lock()
            .map_err(|_| "net cluster poisoned".to_string())?;
        // Relaxed: iterations run one at a time.
        let fault = !warmup && self.fault_due.swap(false, Ordering::Relaxed);
        let last = (self.setup.cluster.nodes - 1) as NodeId;
        let at = budget / 3;
        let figures = match (fault, self.setup.fault) {
            (true, Fault::Kill) => {
                let pid = cluster.pid(last);
                let figures = cluster.run_killing(budget, last, at);
                let pid = pid.map_or(String::new(), |p| format!(" (pid {p})"));
                self.fault_happened(format!(
                    "kill of node {last}'s process{pid} {} ms into the first measured iteration",
                    at.as_millis()
                ));
                figures
            }
            (true, Fault::Cut) => {
                let ns = self.namespaces.as_ref().expect("checked at setup");
                let cut = Duration::from_millis(self.setup.fault_ms);
                std::thread::scope(|s| {
                    let cutter = s.spawn(move || {
                        std::thread::sleep(at);
                        ns.cut(usize::from(last))?;
                        std::thread::sleep(cut);
                        ns.repair(usize::from(last))
                    });
                    let figures = cluster.run(budget);
                    let cutter = cutter.join().expect("the cutter does not panic");
                    cutter.and(figures)
                })
                .inspect(|_| {
                    self.fault_happened(format!(
                        "cut of node {last}'s link for {} ms, {} ms into the first measured iteration",
                        cut.as_millis(),
                        at.as_millis()
                    ))
                })
            }
            _ => cluster.run_settled(Duration::from_millis(self.setup.settle_ms), budget),
        }
        .map_err(|e| e.to_string())?;
        let (mut req, mut stats) = (RequesterStats::default(), NodeStats::default());
        let (mut per_s, mut seconds, mut bad) = (0.0, 0.0f64, 0);
        let (mut messages, mut requests) = (0, 0);
        let mut totals = self
            .totals
            .lock()
            .map_err(|_| "net totals poisoned".to_string())?;
        for f in &figures {
            let (m, r) = totals
                .insert(f.node, (f.messages_total, f.requests_total))
                .unwrap_or_default();
            messages += f.messages_total.saturating_sub(m);
            requests += f.requests_total.saturating_sub(r);
            // Clock-free across nodes: each node's rate on its own clock, then summed.
            let s = f.nanos.max(1) as f64 / 1e9;
            per_s += f.requesters.ok_ops() as f64 / s;
            seconds = seconds.max(s);
            req.merge(&f.requesters);
            stats.add(&f.stats);
            bad += f.mismatches + f.errors + f.requesters.bad_reads;
        }
        if bad > 0 {
            return Err(CheckFailed(format!(
                "{bad} replies did not match their request or never came"
            )));
        }
        let nodes = self.setup.cluster.nodes;
        Ok(ExternalSample {
            score: per_s / nodes.max(1) as f64,
            unit: "req/s/node".to_string(),
            secondary: metrics(
                per_s,
                nodes,
                &req,
                &stats,
                seconds,
                messages as f64 / requests.max(1) as f64,
            ),
        })
    }
}
