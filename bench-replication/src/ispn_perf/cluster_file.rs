//! A cluster file: where the node processes of a net run live when they run on several hosts,
//! and the settings they share. Every host reads the same file: a node host starts
//! `critsec node --cluster FILE --id N`, the driving host runs the scenario with
//! `-p driver=net -p cluster=FILE`.
//!
//! ```toml
//! coordinator = "10.0.0.1:7700"   # where the driving host listens for the nodes
//!
//! [params]                        # replication/ispn_perf parameters, the same on every host
//! protocol = "key-queue"
//! requesters = 25
//!
//! [[node]]
//! id = 0
//! address = "10.0.0.2:7800"       # where node 0 listens for the other nodes
//! ```
//!
//! Addresses are IP:port, never names: a run does not depend on a resolver.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::Path;

use critsec_replication::NodeId;
use serde::Deserialize;

/// A parsed, checked cluster file.
#[derive(Debug, Clone, PartialEq)]
pub struct ClusterFile {
    /// Where the coordinator listens.
    pub coordinator: SocketAddr,
    /// The scenario parameters the file sets (`nodes` always: the file's node count).
    pub params: BTreeMap<String, String>,
    /// Each node's address, by id.
    pub nodes: Vec<SocketAddr>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileText {
    coordinator: String,
    #[serde(default)]
    params: BTreeMap<String, toml::Value>,
    #[serde(default)]
    node: Vec<NodeEntry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NodeEntry {
    id: NodeId,
    address: String,
}

/// Why a cluster file cannot be used.
#[derive(Debug, thiserror::Error)]
#[error("cluster file {origin}: {what}")]
pub struct ClusterFileError {
    origin: String,
    what: String,
}

impl ClusterFile {
    /// Reads and checks the file at `path`.
    pub fn read(path: &Path) -> Result<Self, ClusterFileError> {
        let origin = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| ClusterFileError {
            origin: origin.clone(),
            what: e.to_string(),
        })?;
        Self::parse(&text, &origin)
    }

    /// Parses and checks `text`, read from `origin`: every id from 0 to the last exactly once,
    /// every address distinct, and `nodes`, if set, the number of nodes listed.
    pub fn parse(text: &str, origin: &str) -> Result<Self, ClusterFileError> {
        let fail = |what: String| ClusterFileError {
            origin: origin.to_string(),
            what,
        };
        let file: FileText = toml::from_str(text).map_err(|e| fail(e.to_string()))?;
        let address = |what: &str, text: &str| {
            text.parse::<SocketAddr>()
                .map_err(|e| fail(format!("{what}'s address `{text}` is not IP:port: {e}")))
        };
        let coordinator = address("the coordinator", &file.coordinator)?;
        if file.node.is_empty() {
            return Err(fail("no [[node]] is listed".into()));
        }
        let mut nodes: Vec<Option<SocketAddr>> = vec![None; file.node.len()];
        for entry in &file.node {
            let at = address(&format!("node {}", entry.id), &entry.address)?;
            let slot = nodes.get_mut(usize::from(entry.id)).ok_or_else(|| {
                fail(format!(
                    "node {} is listed, but {} nodes have ids 0..{}",
                    entry.id,
                    file.node.len(),
                    file.node.len()
                ))
            })?;
            if slot.is_some() {
                return Err(fail(format!("node {} is listed twice", entry.id)));
            }
            *slot = Some(at);
        }
        let nodes: Vec<SocketAddr> = nodes.into_iter().flatten().collect();
        for (i, a) in nodes.iter().enumerate() {
            if let Some(j) = nodes[..i].iter().position(|b| b == a) {
                return Err(fail(format!("nodes {j} and {i} both listen at {a}")));
            }
        }
        let mut params: BTreeMap<String, String> = file
            .params
            .into_iter()
            .map(|(k, v)| {
                let v = match v {
                    toml::Value::String(s) => s,
                    other => other.to_string(),
                };
                (k, v)
            })
            .collect();
        let count = nodes.len().to_string();
        match params.get("nodes") {
            Some(n) if *n != count => {
                return Err(fail(format!(
                    "params set nodes = {n}, but {count} nodes are listed"
                )));
            }
            _ => {
                params.insert("nodes".into(), count);
            }
        }
        Ok(ClusterFile {
            coordinator,
            params,
            nodes,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
coordinator = "127.0.0.1:7700"
[params]
protocol = "key-queue"
requesters = 4
[[node]]
id = 1
address = "127.0.0.1:7802"
[[node]]
id = 0
address = "127.0.0.1:7801"
"#;

    #[test]
    fn a_file_gives_every_node_its_address_and_the_shared_params() {
        let f = ClusterFile::parse(GOOD, "good.toml").unwrap();
        assert_eq!(f.coordinator, "127.0.0.1:7700".parse().unwrap());
        assert_eq!(
            f.nodes,
            [
                "127.0.0.1:7801".parse().unwrap(),
                "127.0.0.1:7802".parse().unwrap()
            ]
        );
        assert_eq!(f.params["protocol"], "key-queue");
        assert_eq!(f.params["requesters"], "4");
        assert_eq!(f.params["nodes"], "2");
    }

    #[test]
    fn bad_files_are_refused_naming_the_node() {
        let cases = [
            (
                GOOD.replace("id = 1", "id = 0"),
                "cluster file f: node 0 is listed twice",
            ),
            (
                GOOD.replace("id = 1", "id = 2"),
                "cluster file f: node 2 is listed, but 2 nodes have ids 0..2",
            ),
            (
                GOOD.replace("7802", "7801"),
                "cluster file f: nodes 0 and 1 both listen at 127.0.0.1:7801",
            ),
            (
                GOOD.replace("127.0.0.1:7802", "db-host:7802"),
                "cluster file f: node 1's address `db-host:7802` is not IP:port: invalid socket address syntax",
            ),
            (
                GOOD.replace("requesters = 4", "requesters = 4\nnodes = 3"),
                "cluster file f: params set nodes = 3, but 2 nodes are listed",
            ),
        ];
        for (text, want) in cases {
            assert_eq!(
                ClusterFile::parse(&text, "f").unwrap_err().to_string(),
                want
            );
        }
        let e = ClusterFile::parse("coordinator = \"127.0.0.1:1\"\nnodes = 2\n", "f")
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown field `nodes`"), "{e}");
    }
}
