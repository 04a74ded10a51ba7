//! `critsec node` (hidden): one node process of a `replication/ispn_perf` run with `driver=net`.
//! The coordinator (a `critsec run` or `reproduce` fork) starts one per node on this machine;
//! on a cluster of hosts each host starts its own with the coordinator's address.

use std::net::SocketAddr;
use std::process::ExitCode;

use bench_replication::ispn_perf::{IspnPerf, NodeError, serve_node};
use critsec_harness::{Params, Scenario};
use critsec_replication::NodeId;

use super::UsageError;

/// Arguments of `critsec node`.
#[derive(clap::Args, Debug)]
pub struct NodeArgs {
    /// The coordinator's control address.
    #[arg(long, value_name = "IP:PORT")]
    pub coordinator: SocketAddr,
    /// This node's id, 0-based.
    #[arg(long)]
    pub id: NodeId,
    /// Where the other nodes connect to this one (port 0: one the OS picks).
    #[arg(long, value_name = "IP:PORT", default_value = "127.0.0.1:0")]
    pub listen: SocketAddr,
    /// `replication/ispn_perf` parameters, `name=value`, repeatable; the others take their
    /// defaults. Every node of a cluster must be given the same (the coordinator checks).
    #[arg(short = 'p', value_name = "NAME=VALUE")]
    pub params: Vec<String>,
}

/// Serves the node until the coordinator says exit.
pub fn run(args: &NodeArgs) -> anyhow::Result<ExitCode> {
    let specs = IspnPerf.params();
    let mut params = Params::from_pairs(
        specs
            .iter()
            .filter_map(|s| Some((s.name, s.defaults.first()?.clone()))),
    );
    for p in &args.params {
        let (name, value) = p
            .split_once('=')
            .ok_or_else(|| UsageError(format!("-p takes NAME=VALUE, got `{p}`")))?;
        if !specs.iter().any(|s| s.name == name) {
            return Err(
                UsageError(format!("replication/ispn_perf has no parameter `{name}`")).into(),
            );
        }
        params.0.insert(name.to_string(), value.to_string());
    }
    match serve_node(&params, args.id, args.listen, args.coordinator) {
        Ok(()) => Ok(ExitCode::SUCCESS),
        Err(NodeError::Params(e)) => Err(UsageError(e.to_string()).into()),
        Err(e) => Err(anyhow::anyhow!("node {}: {e}", args.id)),
    }
}
