//! `critsec node` (hidden): one node process of a `replication/ispn_perf` run with `driver=net`.
//! The coordinator (a `critsec run` or `reproduce` fork) starts one per node on this machine,
//! with its address and the run's parameters; on a cluster of hosts each host starts its own
//! from the cluster file, and it then serves one coordinator after another until stopped. The
//! secret its hellos prove comes from the cluster file, or from its starter's environment
//! (`CRITSEC_NODE_SECRET`, hex), never from the command line.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use bench_replication::ispn_perf::cluster_file::ClusterFile;
use bench_replication::ispn_perf::{IspnPerf, JOIN_TIMEOUT, NodeError, SECRET_ENV, serve_node};
use critsec_harness::Params;
use critsec_replication::NodeId;
use critsec_replication::net::NetError;
use critsec_replication::net::Secret;

use super::UsageError;

/// Arguments of `critsec node`.
#[derive(clap::Args, Debug)]
pub struct NodeArgs {
    /// This node's id, 0-based.
    #[arg(long)]
    pub id: NodeId,
    /// The cluster file: the coordinator's address, every node's, and the parameters.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["coordinator", "listen", "params"])]
    pub cluster: Option<PathBuf>,
    /// The coordinator's control address (without a cluster file).
    #[arg(long, value_name = "IP:PORT", required_unless_present = "cluster")]
    pub coordinator: Option<SocketAddr>,
    /// Where the other nodes connect to this one (port 0: one the OS picks).
    #[arg(long, value_name = "IP:PORT")]
    pub listen: Option<SocketAddr>,
    /// `replication/ispn_perf` parameters, `name=value`, repeatable; the others take their
    /// defaults. Every node of a cluster must be given the same (the coordinator checks).
    #[arg(short = 'p', value_name = "NAME=VALUE")]
    pub params: Vec<String>,
}

/// Serves the node until the coordinator says exit (with a cluster file: until stopped).
pub fn run(args: &NodeArgs) -> anyhow::Result<ExitCode> {
    let Some(path) = &args.cluster else {
        let pairs = args.params.iter().map(|p| {
            p.split_once('=')
                .ok_or_else(|| UsageError(format!("-p takes NAME=VALUE, got `{p}`")))
        });
        let params = params_from(pairs.collect::<Result<Vec<_>, _>>()?)?;
        let coordinator = args
            .coordinator
            .expect("clap requires it without --cluster");
        let listen = args.listen.unwrap_or(([127, 0, 0, 1], 0).into());
        let secret = match std::env::var(SECRET_ENV) {
            Ok(hex) => Secret::from_hex(&hex)
                .ok_or_else(|| UsageError(format!("{SECRET_ENV} is not hex")))?,
            Err(_) => Secret::default(),
        };
        serve(&params, args.id, listen, coordinator, JOIN_TIMEOUT, secret)?;
        return Ok(ExitCode::SUCCESS);
    };
    let file = ClusterFile::read(path).map_err(|e| UsageError(e.to_string()))?;
    let listen = *file.nodes.get(usize::from(args.id)).ok_or_else(|| {
        UsageError(format!(
            "{} lists nodes 0..{}, not {}",
            path.display(),
            file.nodes.len(),
            args.id
        ))
    })?;
    let params = params_from(file.params.iter().map(|(k, v)| (k.as_str(), v.as_str())))?;
    eprintln!(
        "critsec node {}: listening at {listen}, serving the coordinator at {} until stopped",
        args.id, file.coordinator
    );
    loop {
        let secret = file.secret.clone();
        match serve(
            &params,
            args.id,
            listen,
            file.coordinator,
            Duration::MAX,
            secret,
        ) {
            Ok(()) => eprintln!("critsec node {}: run ended; waiting for the next", args.id),
            Err(e) if e.is::<UsageError>() => return Err(e),
            Err(e) => eprintln!("critsec node {}: {e:#}; waiting for the next run", args.id),
        }
    }
}

/// The scenario's defaults with `pairs` set; an unknown name is a usage error.
fn params_from<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> anyhow::Result<Params> {
    let mut params = IspnPerf::default_params();
    for (name, value) in pairs {
        if !params.0.contains_key(name) {
            return Err(
                UsageError(format!("replication/ispn_perf has no parameter `{name}`")).into(),
            );
        }
        params.0.insert(name.to_string(), value.to_string());
    }
    Ok(params)
}

fn serve(
    params: &Params,
    id: NodeId,
    listen: SocketAddr,
    coordinator: SocketAddr,
    join_timeout: Duration,
    secret: Secret,
) -> anyhow::Result<()> {
    match serve_node(params, id, listen, coordinator, join_timeout, secret) {
        Ok(()) => Ok(()),
        Err(NodeError::Params(e)) => Err(UsageError(e.to_string()).into()),
        Err(NodeError::Net(e @ NetError::Node { .. })) => Err(anyhow::anyhow!("{e}")),
        Err(e) => Err(anyhow::anyhow!("node {id}: {e}")),
    }
}
