//! The node side of a `driver=net` run, as IspnPerfTest runs one JVM per node: how this
//! scenario's coordinator starts a node process ([`NodeProgram`], given to the scenario when it
//! is built), and that process's main ([`run_node`]), which checks and parses the scenario's
//! parameters here, where every other run's are, and serves the net driver's node.
//!
//! A node process is started by a coordinator with its address and every parameter of the run
//! (the coordinator's own digest of them, checked when the node joins, proves the node parsed
//! the same), or on each host of a cluster from the cluster file, and then serves one coordinator
//! after another until stopped. The secret its hellos prove comes from the cluster file, or from
//! its starter's environment ([`SECRET_ENV`], hex), never from a command line.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use critsec_harness::{Params, ScenarioError};
use critsec_replication::NodeId;
use critsec_replication::net::{NetError, NodeSettings, Secret, serve};

use super::cluster_file::ClusterFile;
use super::net_trial::JOIN_TIMEOUT;
use super::{IspnPerf, IspnPerfParams};

/// The environment variable that hands a node process started here its run's secret, as hex.
pub const SECRET_ENV: &str = "CRITSEC_NODE_SECRET";

/// The program a `driver=net` trial starts once per node, and the arguments before the node's
/// own that select its node command (`critsec` and `node`): the node's flags follow them
/// (`--coordinator ADDR --id N --listen ADDR -p NAME=VALUE ...`), which [`run_node`] serves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeProgram {
    /// The executable.
    pub program: PathBuf,
    /// The arguments before the node's flags.
    pub args: Vec<String>,
}

impl NodeProgram {
    /// `program` with `args` before the node's flags.
    pub fn new(program: PathBuf, args: impl IntoIterator<Item = impl Into<String>>) -> Self {
        NodeProgram {
            program,
            args: args.into_iter().map(Into::into).collect(),
        }
    }
}

/// Where a node process finds its coordinator and its run's parameters.
#[derive(Debug, Clone)]
pub enum NodeStart<'a> {
    /// Given by its starter: the coordinator's control address, where the other nodes connect
    /// to this one (`None`: loopback, a port the OS picks), and the parameters the run sets
    /// (`name`, `value`; the others take their defaults). The process serves one run.
    Coordinator {
        /// The coordinator's control address.
        coordinator: SocketAddr,
        /// Where the other nodes connect to this one.
        listen: Option<SocketAddr>,
        /// The parameters set.
        params: Vec<(&'a str, &'a str)>,
    },
    /// A host of the cluster file at this path: its coordinator, every node's address, the
    /// parameters and the secret are the file's. The process serves runs until stopped.
    ClusterFile(&'a Path),
}

/// Why a node process failed.
#[derive(Debug, thiserror::Error)]
pub enum NodeError {
    /// Its flags, parameters, cluster file or environment cannot be used (exit 2).
    #[error("{0}")]
    Usage(String),
    /// Its parameters are invalid (exit 2).
    #[error(transparent)]
    Params(ScenarioError),
    /// The run failed.
    #[error("{}", named(*node, error))]
    Net {
        /// The node this process served.
        node: NodeId,
        /// What failed.
        error: NetError,
    },
}

impl NodeError {
    /// Whether the process was started wrong rather than its run failing.
    pub fn is_usage(&self) -> bool {
        matches!(self, NodeError::Usage(_) | NodeError::Params(_))
    }
}

/// A failed run's message, naming the node unless the driver's error already does.
fn named(node: NodeId, error: &NetError) -> String {
    match error {
        NetError::Node { .. } => error.to_string(),
        other => format!("node {node}: {other}"),
    }
}

/// A node process's main: serves node `id` of the runs that `start` names, until the coordinator
/// says exit (a cluster file's host: until stopped, reporting each run's end on stderr).
pub fn run_node(id: NodeId, start: NodeStart<'_>) -> Result<(), NodeError> {
    let path = match start {
        NodeStart::Coordinator {
            coordinator,
            listen,
            params,
        } => {
            let params = params_from(params)?;
            let listen = listen.unwrap_or(([127, 0, 0, 1], 0).into());
            let secret = match std::env::var(SECRET_ENV) {
                Ok(hex) => Secret::from_hex(&hex)
                    .ok_or_else(|| NodeError::Usage(format!("{SECRET_ENV} is not hex")))?,
                Err(_) => Secret::default(),
            };
            return serve_node(&params, id, listen, coordinator, JOIN_TIMEOUT, secret);
        }
        NodeStart::ClusterFile(path) => path,
    };
    let file = ClusterFile::read(path).map_err(|e| NodeError::Usage(e.to_string()))?;
    let listen = *file.nodes.get(usize::from(id)).ok_or_else(|| {
        NodeError::Usage(format!(
            "{} lists nodes 0..{}, not {}",
            path.display(),
            file.nodes.len(),
            id
        ))
    })?;
    let params = params_from(file.params.iter().map(|(k, v)| (k.as_str(), v.as_str())))?;
    eprintln!(
        "critsec node {id}: listening at {listen}, serving the coordinator at {} until stopped",
        file.coordinator
    );
    loop {
        let secret = file.secret.clone();
        match serve_node(&params, id, listen, file.coordinator, Duration::MAX, secret) {
            Ok(()) => eprintln!("critsec node {id}: run ended; waiting for the next"),
            Err(e) if e.is_usage() => return Err(e),
            Err(e) => eprintln!("critsec node {id}: {e}; waiting for the next run"),
        }
    }
}

/// The scenario's defaults with `pairs` set; an unknown name is a usage error.
fn params_from<'a>(
    pairs: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> Result<Params, NodeError> {
    let mut params = IspnPerf::default_params();
    for (name, value) in pairs {
        if !params.0.contains_key(name) {
            return Err(NodeError::Usage(format!(
                "replication/ispn_perf has no parameter `{name}`"
            )));
        }
        params.0.insert(name.to_string(), value.to_string());
    }
    Ok(params)
}

/// Parses the scenario's parameters as the coordinator sent them (or the cluster file gives
/// them) and serves node `id` until the coordinator says exit, trying to join it for
/// `join_timeout`, its hellos proving `secret`.
fn serve_node(
    params: &Params,
    id: NodeId,
    listen: SocketAddr,
    coordinator: SocketAddr,
    join_timeout: Duration,
    secret: Secret,
) -> Result<(), NodeError> {
    let s = IspnPerfParams::parse(params).map_err(NodeError::Params)?;
    let settings = NodeSettings {
        protocol: s.protocol,
        threads: s.threads_config(),
        workload: s.workload,
        id,
        listen,
        coordinator,
        join_timeout,
        secret,
    };
    serve(&settings).map_err(|error| NodeError::Net { node: id, error })
}
