//! `critsec node` (hidden): one node process of a `replication/ispn_perf` run with `driver=net`.
//! The coordinator (a `critsec run` or `reproduce` fork) starts one per node on this machine,
//! with its address and the run's parameters; on a cluster of hosts each host starts its own
//! from the cluster file, and it then serves one coordinator after another until stopped. This
//! command only reads its flags: the scenario checks the parameters and serves the node
//! (`bench_replication::ispn_perf::run_node`), its secret from the cluster file or from its
//! starter's environment, never from the command line.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use bench_replication::ispn_perf::{NodeStart, run_node};
use critsec_replication::NodeId;

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
    let start = match &args.cluster {
        Some(path) => NodeStart::ClusterFile(path),
        None => NodeStart::Coordinator {
            coordinator: args
                .coordinator
                .expect("clap requires it without --cluster"),
            listen: args.listen,
            params: args
                .params
                .iter()
                .map(|p| {
                    p.split_once('=')
                        .ok_or_else(|| UsageError(format!("-p takes NAME=VALUE, got `{p}`")))
                })
                .collect::<Result<_, _>>()?,
        },
    };
    match run_node(args.id, start) {
        Ok(()) => Ok(ExitCode::SUCCESS),
        Err(e) if e.is_usage() => Err(UsageError(e.to_string()).into()),
        Err(e) => Err(anyhow::anyhow!("{e}")),
    }
}
