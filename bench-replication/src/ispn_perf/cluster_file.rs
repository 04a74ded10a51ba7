//! A cluster file: where the node processes of a net run live when they run on several hosts,
//! and the settings they share. Every host reads the same file: a node host starts
//! `critsec node --cluster FILE --id N`, the driving host runs the scenario with
//! `-p driver=net -p cluster=FILE`. The file's parameters are the run's defaults there; a `-p`
//! that contradicts one is an error.
//!
//! ```toml
//! coordinator = "10.0.0.1:7700"   # where the driving host listens for the nodes
//! secret_file = "cluster.secret"  # or secret = "...": at least 16 bytes every host shares
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
//! Addresses are IP:port, never names: a run does not depend on a resolver. A node joins the
//! coordinator from its own address's host only. The secret (`secret`, or `secret_file`, a path
//! relative to the file, its text trimmed) is never sent: every hello, node to coordinator and
//! node to node, proves it over the receiver's challenge, so a host that can reach the ports but
//! lacks the secret cannot join or pass for a node. A file without one runs with none (any host
//! that reaches the ports and knows the settings can join): say so on a shared network.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::Path;

use critsec_replication::NodeId;
use critsec_replication::net::Secret;
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
    /// The secret every hello proves (empty where the file sets none).
    pub secret: Secret,
}

/// The shortest secret a file may set, in bytes.
pub const MIN_SECRET: usize = 16;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileText {
    coordinator: String,
    secret: Option<String>,
    secret_file: Option<String>,
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
        let dir = path.parent().unwrap_or(Path::new("."));
        Self::parse_in(&text, &origin, dir)
    }

    /// Parses and checks `text`, read from `origin`: every id from 0 to the last exactly once,
    /// every address distinct, and `nodes`, if set, the number of nodes listed. A
    /// `secret_file` is read relative to the current directory.
    pub fn parse(text: &str, origin: &str) -> Result<Self, ClusterFileError> {
        Self::parse_in(text, origin, Path::new("."))
    }

    /// [`Self::parse`], a `secret_file` read relative to `dir`.
    fn parse_in(text: &str, origin: &str, dir: &Path) -> Result<Self, ClusterFileError> {
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
        let secret = match (file.secret, file.secret_file) {
            (Some(_), Some(_)) => {
                return Err(fail("both secret and secret_file are set: keep one".into()));
            }
            (Some(s), None) => s,
            (None, Some(f)) => {
                let at = dir.join(&f);
                std::fs::read_to_string(&at)
                    .map_err(|e| fail(format!("secret_file {}: {e}", at.display())))?
                    .trim()
                    .to_string()
            }
            (None, None) => String::new(),
        };
        if !secret.is_empty() && secret.len() < MIN_SECRET {
            return Err(fail(format!(
                "the secret has {} bytes: a shared secret needs at least {MIN_SECRET}",
                secret.len()
            )));
        }
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
            secret: Secret::new(secret.into_bytes()),
        })
    }
}

/// Fills a command line's parameters (name to values) from the cluster file its `cluster`
/// names, if it names one: a parameter the command line leaves out takes the file's value, one
/// it sets must agree with the file. The error names the parameter, both values and the file.
pub fn fill_params(params: &mut BTreeMap<String, Vec<String>>) -> Result<(), String> {
    let path = match params.get("cluster").map(Vec::as_slice) {
        Some([path]) if path != "local" => path.clone(),
        _ => return Ok(()),
    };
    let file = ClusterFile::read(Path::new(&path)).map_err(|e| e.to_string())?;
    for (name, value) in file.params {
        match params.get(&name) {
            None => {
                params.insert(name, vec![value]);
            }
            Some(given) if *given == [value.as_str()] => {}
            Some(given) => {
                return Err(format!(
                    "-p {name}={} contradicts the cluster file {path}, which sets {name} = {value}",
                    given.join(",")
                ));
            }
        }
    }
    Ok(())
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

    /// The file's parameters are the command line's defaults: those it leaves out are filled,
    /// one it repeats passes, one it contradicts is refused naming both values and the file.
    #[test]
    fn a_files_params_are_the_defaults_of_a_run_that_names_it() {
        let dir = std::env::temp_dir().join(format!("critsec-cf-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("cluster.toml");
        std::fs::write(&file, GOOD).unwrap();
        let path = file.display().to_string();
        let given = |pairs: &[(&str, &str)]| -> BTreeMap<String, Vec<String>> {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), vec![v.to_string()]))
                .collect()
        };
        let mut params = given(&[("cluster", &path), ("driver", "net"), ("requesters", "4")]);
        fill_params(&mut params).unwrap();
        assert_eq!(
            params,
            given(&[
                ("cluster", &path),
                ("driver", "net"),
                ("nodes", "2"),
                ("protocol", "key-queue"),
                ("requesters", "4"),
            ])
        );
        let mut params = given(&[("cluster", &path), ("nodes", "10")]);
        assert_eq!(
            fill_params(&mut params).unwrap_err(),
            format!("-p nodes=10 contradicts the cluster file {path}, which sets nodes = 2")
        );
        let mut local = given(&[("nodes", "10")]);
        fill_params(&mut local).unwrap();
        assert_eq!(local, given(&[("nodes", "10")]));
        let _ = std::fs::remove_dir_all(&dir);
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
        let short = GOOD.replace("[params]", "secret = \"short\"\n[params]");
        assert_eq!(
            ClusterFile::parse(&short, "f").unwrap_err().to_string(),
            "cluster file f: the secret has 5 bytes: a shared secret needs at least 16"
        );
        let both = GOOD.replace(
            "[params]",
            "secret = \"0123456789abcdef\"\nsecret_file = \"s\"\n[params]",
        );
        assert!(
            ClusterFile::parse(&both, "f")
                .unwrap_err()
                .to_string()
                .contains("both secret and secret_file")
        );
        let e = ClusterFile::parse("coordinator = \"127.0.0.1:1\"\nnodes = 2\n", "f")
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown field `nodes`"), "{e}");
    }
}
