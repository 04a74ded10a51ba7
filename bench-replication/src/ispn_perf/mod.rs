//! `replication/ispn_perf`: IspnPerfTest's workload against the three write protocols.
//!
//! Requesters loop over uniform random keys (80% gets, 20% puts) with no think time. The `sim`
//! driver runs a seeded discrete-event simulation in virtual time and scores requests per second
//! per node; every iteration is verified before its score counts. The `threads` driver runs per
//! node a transport thread and real bounded pools (`pool_size` threads, plus `oob_pool_size`
//! with caller-runs) whose threads block in key-lock waits and sync replies, and one harness
//! thread per requester (`nodes x requesters`), each checking its replies; the quiescent
//! cluster is verified after the last iteration. The `net` driver runs each node in a process
//! of its own (`critsec node`) on the threads driver's pools, over TCP, with its requesters;
//! this process coordinates them, scores each iteration from the nodes' own counts and clocks,
//! and verifies the quiescent cluster from their reports.

use critsec_harness::run::resolve_threads;
use critsec_harness::{
    CheckFailed, Choice, GroupSpec, Iterations, Metric, ParamSpec, Params, Probe, Scenario,
    ScenarioError, Trial,
};
use critsec_replication::sim::{CpuConfig, NetworkConfig, SimConfig};
use critsec_replication::threads::ThreadsConfig;
use critsec_replication::workload::{MIN_VALUE_SIZE, RequesterStats, WorkloadConfig};
use critsec_replication::{
    ClusterConfig, ConfigError, GetPlanChoice, NodeStats, ProtocolKind, RejectionPolicy,
};
use critsec_sync::kind::{StrategyKind, ids};

mod cluster_file;
mod net_trial;
mod node_process;
mod sim_trial;
#[cfg(test)]
mod tests;
mod threads_trial;

pub use cluster_file::{ClusterFile, ClusterFileError, fill_params};
use net_trial::NetTrial;
pub use node_process::{NodeError, NodeProgram, NodeStart, SECRET_ENV, run_node};
use sim_trial::SimTrial;
use threads_trial::ThreadsTrial;

/// The scenario. Built with the program that hosts node processes ([`IspnPerf::hosting_nodes`]),
/// its `driver=net` trials start one per node on this machine; built without, they can only wait
/// for those of a cluster file.
#[derive(Debug, Default)]
pub struct IspnPerf {
    nodes: Option<NodeProgram>,
}

// The duration parameters' ranges, each stated in its parameter's description: wide enough for
// any real cluster (a timeout of ten minutes, a one-way link of a second), narrow enough that
// no conversion to µs or ns wraps and no simulated wait outruns the simulation's clock.
const LOCK_TIMEOUT_MS: std::ops::RangeInclusive<u64> = 0..=600_000;
const REPLY_TIMEOUT_MS: std::ops::RangeInclusive<u64> = 1..=600_000;
const LINK_DELAY_US: std::ops::RangeInclusive<u64> = 0..=1_000_000;
const DURATION_MS: std::ops::RangeInclusive<u64> = 1..=3_600_000;
const FAULT_MS: std::ops::RangeInclusive<u64> = 1..=600_000;
const SETTLE_MS: std::ops::RangeInclusive<u64> = 0..=600_000;
const GC_INTERVAL_MS: std::ops::RangeInclusive<u64> = 0..=3_600_000;
const GC_PAUSE_MS: std::ops::RangeInclusive<u64> = 0..=60_000;
const CPU_US_PER_MSG: std::ops::RangeInclusive<u64> = 0..=100_000;
const CPU_NS_PER_BYTE: std::ops::RangeInclusive<u64> = 0..=10_000;

impl IspnPerf {
    /// The scenario whose `driver=net` trials start their node processes with `nodes`.
    pub fn hosting_nodes(nodes: NodeProgram) -> Self {
        IspnPerf { nodes: Some(nodes) }
    }

    /// Every parameter at its first default, as the runner fills what a run leaves out.
    pub fn default_params() -> Params {
        Params::from_pairs(
            IspnPerf::default()
                .params()
                .into_iter()
                .map(|s| (s.name.to_string(), s.defaults[0].clone())),
        )
    }
}

/// Which driver runs the cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Driver {
    Sim,
    Threads,
    /// A process per node over TCP, this process their coordinator.
    Net,
}

/// How the threads driver's nodes exchange messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Links {
    Channels,
    Tcp,
}

impl Choice for Links {
    const ALL: &'static [Self] = &[Links::Channels, Links::Tcp];
    fn id(self) -> &'static str {
        match self {
            Links::Channels => "channels",
            Links::Tcp => "tcp",
        }
    }
}

impl Choice for Driver {
    const ALL: &'static [Self] = &[Driver::Sim, Driver::Threads, Driver::Net];
    fn id(self) -> &'static str {
        match self {
            Driver::Sim => "sim",
            Driver::Threads => "threads",
            Driver::Net => "net",
        }
    }
}

/// Parsed parameters.
#[derive(Debug, Clone)]
struct IspnPerfParams {
    protocol: ProtocolKind,
    driver: Driver,
    /// Threads: messages over sockets.
    links: Links,
    cluster: ClusterConfig,
    workload: WorkloadConfig,
    link_latency_us: u64,
    jitter_us: u64,
    cpu: CpuConfig,
    duration_ms: u64,
    seed: u64,
    /// The simulation's worker threads.
    sim_threads: usize,
    /// Net: the cluster file naming the hosts of the node processes (`None`: start them here).
    net_cluster: Option<std::path::PathBuf>,
    /// Net, started here: whether the node processes get network namespaces.
    netns: Netns,
    /// Net, started here: the fault of the first measured iteration, and a cut's length.
    fault: Fault,
    fault_ms: u64,
    /// Net: the unmeasured lead of every iteration.
    settle_ms: u64,
}

/// A fault of the net driver's first measured iteration, on the last node, a third of the way
/// into it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fault {
    None,
    /// Its process is killed; the others are told, and go on without it.
    Kill,
    /// Its link is cut for `fault_ms`, then repaired (namespaces only).
    Cut,
}

impl Choice for Fault {
    const ALL: &'static [Self] = &[Fault::None, Fault::Kill, Fault::Cut];
    fn id(self) -> &'static str {
        match self {
            Fault::None => "none",
            Fault::Kill => "kill",
            Fault::Cut => "cut",
        }
    }
}

/// Whether the net driver's node processes on this machine get a network namespace each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Netns {
    /// When this process may make them (root, iproute2), else loopback, said in the report.
    Auto,
    /// Always; a run fails where they cannot be made.
    On,
    /// Never: loopback.
    Off,
}

impl Choice for Netns {
    const ALL: &'static [Self] = &[Netns::Auto, Netns::On, Netns::Off];
    fn id(self) -> &'static str {
        match self {
            Netns::Auto => "auto",
            Netns::On => "on",
            Netns::Off => "off",
        }
    }
}

impl IspnPerfParams {
    fn parse(p: &Params) -> Result<IspnPerfParams, ScenarioError> {
        let raw = p.get("protocol")?;
        let protocol = ProtocolKind::from_id(raw)
            .map_err(|e| ScenarioError::bad("protocol", raw, e.to_string()))?;
        let driver = p.choice("driver")?;
        let raw = p.get("rejection")?;
        let rejection: RejectionPolicy = raw
            .parse()
            .map_err(|e: ConfigError| ScenarioError::bad("rejection", raw, e.to_string()))?;
        let nodes: usize = match driver {
            // The threads driver runs real threads per node: `nodes x (1 + pool_size + ...)`.
            Driver::Threads | Driver::Net => p.parse_in("nodes", 1..=16)?,
            Driver::Sim => p.parse("nodes")?,
        };
        let read_pct: u32 = p.parse_in("read_pct", 0..=100)?;
        let hot_key_pct: u32 = p.parse_in("hot_key_pct", 0..=100)?;
        // A value's first 8 bytes hold its tag.
        let value_size: u32 = p.parse_in("value_size", MIN_VALUE_SIZE as u32..=u32::MAX)?;
        let duration_ms: u64 = p.parse_in("duration_ms", DURATION_MS)?;
        let raw = p.get("get_plan")?;
        let get_plan: GetPlanChoice = raw
            .parse()
            .map_err(|e: ConfigError| ScenarioError::bad("get_plan", raw, e.to_string()))?;
        let links: Links = p.choice("links")?;
        if links == Links::Tcp && driver == Driver::Sim {
            return Err(ScenarioError::bad(
                "links",
                p.get("links")?,
                "the simulation's links are simulated (tcp: threads driver only)",
            ));
        }
        let net_cluster = match p.get("cluster")? {
            "local" => None,
            path if driver == Driver::Net => Some(std::path::PathBuf::from(path)),
            path => {
                return Err(ScenarioError::bad(
                    "cluster",
                    path,
                    "a cluster file places the net driver's node processes (driver=net)",
                ));
            }
        };
        let requests_per_node: u64 = p.parse("requests_per_node")?;
        if requests_per_node > 0 && driver != Driver::Sim {
            return Err(ScenarioError::bad(
                "requests_per_node",
                p.get("requests_per_node")?,
                "the fixed-request run shape is simulated only (threads, net: 0)",
            ));
        }
        let cluster = ClusterConfig {
            nodes,
            num_owners: p.parse("num_owners")?,
            keys: p.parse("keys")?,
            lock_timeout_us: p.parse_in::<u64, _>("lock_timeout_ms", LOCK_TIMEOUT_MS)? * 1000,
            reply_timeout_us: p.parse_in::<u64, _>("reply_timeout_ms", REPLY_TIMEOUT_MS)? * 1000,
            pool_size: p.parse("pool_size")?,
            oob_pool_size: p.parse("oob_pool_size")?,
            rejection,
            get_plan,
            ..ClusterConfig::default()
        };
        cluster
            .hash()
            .map_err(|e| ScenarioError::Setup(e.to_string()))?;
        // A get plan the protocol cannot keep its read guarantee under is a bad parameter.
        protocol.new_node(0, &cluster).map_err(|e| {
            ScenarioError::bad(
                "get_plan",
                p.get("get_plan").unwrap_or_default(),
                e.to_string(),
            )
        })?;
        let cpu = CpuConfig {
            cores: p.parse("cores")?,
            per_input_us: p.parse_in("cpu_us_per_msg", CPU_US_PER_MSG)?,
            per_byte_ns: p.parse_in("cpu_ns_per_byte", CPU_NS_PER_BYTE)?,
            gc_interval_us: p.parse_in::<u64, _>("gc_interval_ms", GC_INTERVAL_MS)? * 1000,
            gc_pause_us: p.parse_in::<u64, _>("gc_pause_ms", GC_PAUSE_MS)? * 1000,
        };
        cpu.check().map_err(|e| {
            ScenarioError::bad(
                "gc_pause_ms",
                p.get("gc_pause_ms").unwrap_or_default(),
                e.to_string(),
            )
        })?;
        let workload = WorkloadConfig {
            requesters_per_node: p.parse("requesters")?,
            read_pct,
            value_size,
            hot_key_pct,
            requests_per_node: (requests_per_node > 0).then_some(requests_per_node),
            ..WorkloadConfig::default()
        };
        Ok(IspnPerfParams {
            protocol,
            driver,
            links,
            cluster,
            workload,
            link_latency_us: p.parse_in("link_latency_us", LINK_DELAY_US)?,
            jitter_us: p.parse_in("jitter_us", LINK_DELAY_US)?,
            cpu,
            duration_ms,
            // `per-process` reads as 0 here: `setup` puts the seed it draws in its place.
            seed: match p.get("seed")? {
                PER_PROCESS => 0,
                _ => p.parse("seed")?,
            },
            sim_threads: {
                let raw = p.get("sim_threads")?;
                resolve_threads(raw)
                    .map_err(|e| ScenarioError::bad("sim_threads", raw, e.to_string()))?
            },
            net_cluster,
            netns: p.choice("netns")?,
            fault: {
                let fault = p.choice("fault")?;
                if fault != Fault::None && (driver != Driver::Net || p.get("cluster")? != "local") {
                    return Err(ScenarioError::bad(
                        "fault",
                        p.get("fault")?,
                        "faults are of node processes this run starts (driver=net, cluster=local)",
                    ));
                }
                if fault == Fault::Cut && p.choice::<Netns>("netns")? == Netns::Off {
                    return Err(ScenarioError::bad(
                        "fault",
                        "cut",
                        "a link to cut needs network namespaces (netns=auto or on)",
                    ));
                }
                fault
            },
            fault_ms: p.parse_in("fault_ms", FAULT_MS)?,
            settle_ms: p.parse_in("settle_ms", SETTLE_MS)?,
        })
    }

    /// The threads driver's settings (the net driver's nodes run on it too).
    fn threads_config(&self) -> ThreadsConfig {
        ThreadsConfig {
            cluster: self.cluster.clone(),
            latency_us: self.link_latency_us,
            jitter_us: self.jitter_us,
            seed: self.seed,
            sockets: self.links == Links::Tcp || self.driver == Driver::Net,
            ..ThreadsConfig::default()
        }
    }

    fn sim_config(&self, seed: u64, duration_us: u64) -> SimConfig {
        SimConfig {
            cluster: self.cluster.clone(),
            network: NetworkConfig {
                latency_us: self.link_latency_us,
                jitter_us: self.jitter_us,
                ..NetworkConfig::default()
            },
            cpu: self.cpu.clone(),
            workload: self.workload.clone(),
            duration_us,
            start_spread_us: 1_000,
            seed,
            threads: self.sim_threads,
        }
    }
}

impl Scenario for IspnPerf {
    fn name(&self) -> &'static str {
        "replication/ispn_perf"
    }

    /// The simulation is seeded and runs in virtual time: a claim's replicate is a seed (unless
    /// each process draws its own).
    fn deterministic(&self, params: &Params) -> bool {
        matches!(params.choice("driver"), Ok(Driver::Sim))
            && params.get("seed").is_ok_and(|s| s != PER_PROCESS)
    }

    /// The network namespaces of `driver=net` trials whose process was killed (a fork past its
    /// timeout, an interrupted run) before it could delete them; those of live runs stay.
    fn sweep(&self) {
        critsec_replication::net::sweep_stale();
    }

    /// A simulation takes at most `cores` worker threads (its figures are the same for any).
    fn fit_cores(&self, params: &mut Params, cores: usize) {
        if let Ok(s) = IspnPerfParams::parse(params) {
            if s.driver == Driver::Sim && s.sim_threads > cores {
                params.0.insert("sim_threads".into(), cores.to_string());
            }
        }
    }

    fn description(&self) -> &'static str {
        "IspnPerfTest: requesters on every node loop over uniform keys, 80% get / 20% put, against \
         a DIST-SYNC cache. Inside the critical section (the primary's key lock): lock-forwarding \
         applies and waits for a synchronous backup round trip; key-queue and triangle only apply \
         (and take a sequence number). Score: successful requests/s per node (virtual time for sim)."
    }

    fn params(&self) -> Vec<ParamSpec> {
        vec![
            ParamSpec::choice(
                "protocol",
                &ids::<ProtocolKind>(),
                &ids::<ProtocolKind>(),
                "write protocol",
            ),
            ParamSpec::choices(
                "driver",
                &[Driver::Sim],
                "simulation (virtual time), real threads in this process, or net: one process \
                 per node over loopback TCP (started from the critsec binary)",
            ),
            ParamSpec::choice(
                "get_plan",
                &["protocol"],
                &["protocol", "all-owners", "primary-first", "staggered"],
                "remote gets: the protocol's own plan, every owner at once, the primary only, or \
                 owners staggered primary first (key-queue: protocol or primary-first only)",
            ),
            ParamSpec::choices(
                "links",
                &[Links::Channels],
                "threads: messages between nodes over channels, or as wire frames over loopback \
                 TCP connections (the net driver's links; latency then held by the receiver)",
            ),
            ParamSpec::free("nodes", &["10"], "cluster members (threads, net: 1..=16)"),
            ParamSpec::free(
                "cluster",
                &["local"],
                "net: local (a process per node started on this machine) or the path of a \
                 cluster file whose node processes were started on their hosts",
            ),
            ParamSpec::choices(
                "fault",
                &[Fault::None],
                "net, local: in the first measured iteration, a third of the way in, the last \
                 node's process is killed (the others are told and go on; the survivors are \
                 verified) or its link is cut for fault_ms and then repaired (namespaces only)",
            ),
            ParamSpec::free(
                "fault_ms",
                &["1000"],
                "net: how long a cut lasts, in ms (1..=600000)",
            ),
            ParamSpec::free(
                "settle_ms",
                &["20"],
                "net: every iteration starts the node processes' requesters afresh; its window \
                 opens after they ran this long, so that it opens on operations in flight, as \
                 the simulation's long window nearly does (and a hot key's queue of lock \
                 waiters has time to build up: 100 for that); the window counts the operations \
                 that end inside it (ms, 0..=600000)",
            ),
            ParamSpec::choices(
                "netns",
                &[Netns::Auto],
                "net, local: a network namespace per node process linked by veth pairs to a \
                 bridge (on), loopback (off), or namespaces where this process may make them \
                 (auto: root and iproute2)",
            ),
            ParamSpec::free("requesters", &["25"], "requester threads per node"),
            ParamSpec::free("num_owners", &["2"], "owners per key (numOwners)"),
            ParamSpec::free("keys", &["20000"], "keys 0..keys"),
            ParamSpec::free(
                "value_size",
                &["1000"],
                "value size in bytes (>= 8): each put allocates, sends and stores real bytes",
            ),
            ParamSpec::free("read_pct", &["80"], "percentage of gets"),
            ParamSpec::free(
                "link_latency_us",
                &["3000"],
                "one-way link latency in µs (0..=1000000)",
            ),
            ParamSpec::free(
                "jitter_us",
                &["300"],
                "uniform extra latency in µs (0..=1000000)",
            ),
            ParamSpec::free(
                "lock_timeout_ms",
                &["5000"],
                "key lock acquisition timeout in ms (0..=600000; 0: fail at once if held)",
            ),
            ParamSpec::free(
                "reply_timeout_ms",
                &["15000"],
                "sync reply / ack timeout (replTimeout, remoteTimeout) in ms (1..=600000)",
            ),
            ParamSpec::free("hot_key_pct", &["0"], "percentage of puts that go to key 0"),
            ParamSpec::free("pool_size", &["32"], "remote-command pool slots per node"),
            ParamSpec::free("oob_pool_size", &["8"], "JGroups OOB pool slots per node"),
            ParamSpec::choice(
                "rejection",
                &["caller-runs"],
                &["block", "abort", "caller-runs"],
                "full-pool policy",
            ),
            ParamSpec::free(
                "cores",
                &["4"],
                "sim: processors per node (0: no CPU model, inputs cost no time)",
            ),
            ParamSpec::free(
                "cpu_us_per_msg",
                &["30"],
                "sim: core time per handled message or client op, in µs (0..=100000)",
            ),
            ParamSpec::free(
                "cpu_ns_per_byte",
                &["2"],
                "sim: extra core time per payload byte carried, in ns (0..=10000)",
            ),
            ParamSpec::free(
                "gc_interval_ms",
                &["0"],
                "sim: time between a node's stop-the-world pauses, in ms (0..=3600000; 0: none)",
            ),
            ParamSpec::free(
                "gc_pause_ms",
                &["0"],
                "sim: length of each pause, in ms (0..=60000)",
            ),
            ParamSpec::free(
                "duration_ms",
                &["500"],
                "sim: virtual window per iteration, in ms (1..=3600000)",
            ),
            ParamSpec::free(
                "requests_per_node",
                &["0"],
                "sim: IspnPerfTest's run shape, each node's requesters perform this many requests \
                 and the window ends when the last completes (0: a window of duration_ms)",
            ),
            ParamSpec::free(
                "seed",
                &["42"],
                "seed of the requesters' operation streams (sim: of the first iteration, then +1 \
                 per iteration); `per-process`: one drawn by each process and shown in its \
                 check line, so that the replicates of a process-pair claim sample different \
                 streams",
            ),
            ParamSpec::free(
                "sim_threads",
                &["max"],
                "sim: worker threads, a number or max (the machine's cores); the figures are the \
                 same for any",
            ),
        ]
    }

    fn default_threads(&self) -> Vec<String> {
        vec!["1".to_string()]
    }

    fn groups(&self, params: &Params, threads: usize) -> Vec<GroupSpec> {
        match IspnPerfParams::parse(params) {
            Ok(s) if s.driver == Driver::Threads => {
                // One harness thread per requester, so `requesters` means the same in both drivers.
                vec![GroupSpec::new(
                    "requesters",
                    s.cluster.nodes * s.workload.requesters_per_node as usize,
                )]
            }
            _ => vec![GroupSpec::new("op", threads)],
        }
    }

    fn setup(
        &self,
        params: &Params,
        _groups: &[GroupSpec],
    ) -> Result<Box<dyn Trial>, ScenarioError> {
        let drawn = (params.get("seed")? == PER_PROCESS).then(|| {
            // Any 64 random bits will do: the standard library seeds each `RandomState` afresh.
            std::hash::BuildHasher::hash_one(&std::collections::hash_map::RandomState::new(), 0)
        });
        let mut params = params.clone();
        if let Some(seed) = drawn {
            params.0.insert("seed".into(), seed.to_string());
        }
        let s = IspnPerfParams::parse(&params)?;
        let trial = match s.driver {
            Driver::Sim => Box::new(SimTrial::new(s)) as Box<dyn Trial>,
            Driver::Threads => Box::new(ThreadsTrial::start(s)?),
            Driver::Net => Box::new(NetTrial::start(s, &params, self.nodes.as_ref())?),
        };
        Ok(match drawn {
            Some(seed) => Box::new(DrawnSeed { trial, seed }),
            None => trial,
        })
    }
}

/// The `seed` value that has each process draw its own.
const PER_PROCESS: &str = "per-process";

/// A trial run with a seed its process drew, which its check line shows (the verdict file
/// keeps every process's check lines, so a replicate can be rerun with its seed).
struct DrawnSeed {
    trial: Box<dyn Trial>,
    seed: u64,
}

impl Trial for DrawnSeed {
    fn verify(&self) -> Result<String, CheckFailed> {
        self.trial
            .verify()
            .map(|v| format!("{v}; seed {} drawn by this process", self.seed))
    }

    fn iterations(&self) -> Iterations<'_> {
        self.trial.iterations()
    }

    fn probe(&self) -> Option<&dyn Probe> {
        self.trial.probe()
    }

    fn quiesce(&self) {
        self.trial.quiesce()
    }
}

/// Secondary metrics shared by every driver; `payload_seconds` is the span (s) over which
/// `stats.payload_bytes_sent` was counted. `messages_per_request` is the driver's: each
/// counts the messages that belong to the requests it counts in its own way.
fn metrics(
    req_per_s_cluster: f64,
    nodes: usize,
    req: &RequesterStats,
    stats: &NodeStats,
    payload_seconds: f64,
    messages_per_request: f64,
) -> Vec<Metric> {
    let mut m = vec![
        Metric::new("req_per_s_cluster", req_per_s_cluster, "req/s").higher_is_better(),
        Metric::new(
            "req_per_s_node",
            req_per_s_cluster / nodes.max(1) as f64,
            "req/s",
        )
        .higher_is_better(),
        // IspnPerfTest's "reqs/sec/node (bytes/sec)": here the value bytes each node sent to
        // other nodes per second (puts, backup writes, replication, get replies).
        Metric::new(
            "bytes_per_s_per_node",
            stats.payload_bytes_sent as f64 / payload_seconds.max(1e-9) / nodes.max(1) as f64,
            "B/s",
        ),
    ];
    for (name, h) in [("get", &req.gets), ("put", &req.puts)] {
        for (q, label) in [(0.5, "p50"), (0.9, "p90"), (0.99, "p99"), (0.999, "p99.9")] {
            m.push(
                Metric::new(format!("{name}.{label}"), h.quantile(q) as f64, "us")
                    .lower_is_better(),
            );
        }
    }
    m.push(Metric::new("lock_timeouts", stats.lock_timeouts as f64, "count").lower_is_better());
    // As a rate, so that iterations of different lengths (a simulated window, a net slice)
    // compare.
    m.push(
        Metric::new(
            "lock_timeouts_per_s",
            stats.lock_timeouts as f64 / payload_seconds.max(1e-9),
            "1/s",
        )
        .lower_is_better(),
    );
    // The exposure of count claims: every request that ended in the window, failed or not.
    m.push(Metric::new("requests", req.ended() as f64, "count"));
    m.push(
        Metric::new(
            "reply_timeouts",
            (stats.reply_timeouts + stats.backup_timeouts + stats.repl_timeouts) as f64,
            "count",
        )
        .lower_is_better(),
    );
    m.push(Metric::new("pool_rejections", stats.pool_rejections as f64, "count").lower_is_better());
    // What the protocol costs the network: messages sent (to other nodes and to itself) per
    // request.
    m.push(Metric::new("messages_per_request", messages_per_request, "msgs").lower_is_better());
    m.push(Metric::new("repl_queue_depth", stats.repl_queue_max as f64, "keys").lower_is_better());
    m.push(
        Metric::new(
            "failed_ops",
            (req.failed_lock + req.failed_reply) as f64,
            "count",
        )
        .lower_is_better(),
    );
    m.push(Metric::new("lock_hold_max_us", stats.max_lock_hold_us as f64, "us").lower_is_better());
    // `block` only: how long inbound paths were held behind a command waiting for a slot,
    // summed over nodes (virtual ms in the simulation, real ms with threads).
    m.push(
        Metric::new(
            "inbound_blocked_ms",
            stats.inbound_blocked_us as f64 / 1e3,
            "ms",
        )
        .lower_is_better(),
    );
    m.push(
        Metric::new(
            "blocked_deliveries",
            stats.blocked_deliveries as f64,
            "count",
        )
        .lower_is_better(),
    );
    m
}
