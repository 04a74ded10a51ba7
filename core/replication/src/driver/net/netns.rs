//! Network namespaces for the node processes of a net run on one machine: each node gets a
//! namespace of its own with one end of a veth pair, whose other end sits on a bridge in the
//! host's namespace, so that every message crosses a real (virtual) link and the kernel's
//! network stack between two namespaces, not loopback. The coordinator listens on the bridge.
//!
//! Everything is made with iproute2 (`ip`), which needs root; [`Namespaces::create`] says why
//! it cannot instead of half-building. Names carry this process's id, so that a run killed
//! before it could clean up (Ctrl-C reaching a fork) is swept by the next one:
//! [`Namespaces::create`] first deletes the namespaces and bridges of processes that are gone.
//! Addresses come from 10.213.0.0/16, one /24 per run, never outside the machine.
//!
//! Link delay: where the kernel has `netem`, a user would add it on the veth ends; this
//! machine's kernel has none, so the nodes' user-space shaper holds each message instead (see
//! [`wire::Frame::Message`](super::wire::Frame::Message)).

use std::net::{IpAddr, Ipv4Addr};
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};

use super::NetError;

/// Runs of this process so far (names and subnets differ per run).
static RUNS: AtomicU32 = AtomicU32::new(0);

/// The namespaces, veth pairs and bridge of one run; dropping it deletes them.
#[derive(Debug)]
pub struct Namespaces {
    namespaces: Vec<String>,
    /// Per node, its veth end on the bridge.
    outside: Vec<String>,
    bridge: String,
    subnet: [u8; 3],
}

impl Namespaces {
    /// Creates a namespace per node, linked to a new bridge. Fails, deleting whatever it made,
    /// if `ip` is missing or refuses (not root, no namespace support).
    pub fn create(nodes: usize) -> Result<Self, NetError> {
        if nodes > 250 {
            return Err(unavailable(format!("{nodes} nodes do not fit one /24")));
        }
        sweep_stale();
        let pid = std::process::id();
        let run = RUNS.fetch_add(1, Ordering::Relaxed);
        let subnet = free_subnet(pid, run)?;
        let tag = format!("{pid:x}{:x}", run % 16);
        let mut made = Namespaces {
            namespaces: Vec::new(),
            outside: Vec::new(),
            bridge: format!("csb{tag}"),
            subnet,
        };
        ip(&["link", "add", &made.bridge, "type", "bridge"])?;
        let host = format!("{}/24", made.host_address());
        ip(&["addr", "add", &host, "dev", &made.bridge])?;
        ip(&["link", "set", &made.bridge, "up"])?;
        for i in 0..nodes {
            let ns = format!("critsec-{pid}-{run}-{i}");
            ip(&["netns", "add", &ns])?;
            made.namespaces.push(ns.clone());
            let (outside, inside) = (format!("csh{tag}-{i}"), format!("csn{tag}-{i}"));
            ip(&[
                "link", "add", &outside, "type", "veth", "peer", "name", &inside,
            ])?;
            made.outside.push(outside.clone());
            ip(&["link", "set", &inside, "netns", &ns])?;
            ip(&["link", "set", &outside, "master", &made.bridge])?;
            ip(&["link", "set", &outside, "up"])?;
            let address = format!("{}/24", made.node_address(i));
            ip(&["-n", &ns, "addr", "add", &address, "dev", &inside])?;
            ip(&["-n", &ns, "link", "set", &inside, "up"])?;
            ip(&["-n", &ns, "link", "set", "lo", "up"])?;
        }
        Ok(made)
    }

    /// Where the coordinator listens: the bridge's address.
    pub fn host_address(&self) -> IpAddr {
        let [a, b, c] = self.subnet;
        IpAddr::V4(Ipv4Addr::new(a, b, c, 1))
    }

    /// Node `i`'s address in its namespace.
    pub fn node_address(&self, i: usize) -> IpAddr {
        let [a, b, c] = self.subnet;
        IpAddr::V4(Ipv4Addr::new(a, b, c, 2 + i as u8))
    }

    /// A command that runs `program` in node `i`'s namespace.
    pub fn command(&self, i: usize, program: &std::path::Path) -> Command {
        let mut cmd = Command::new("ip");
        cmd.args(["netns", "exec", &self.namespaces[i]])
            .arg(program);
        cmd
    }

    /// Puts the links' delay in the kernel: `netem` on every node's end of its veth pair, so
    /// that each message leaves its sender `latency_us` plus a uniform `0..=jitter_us` late
    /// (netem's `delay` is a mean and a spread: `latency + jitter/2 ± jitter/2`). `Ok(false)`,
    /// with nothing changed, where the kernel has no `netem` (as this project's 2-core VM has
    /// not): the nodes' user-space shaper must hold the messages instead.
    pub fn delay_links(&self, latency_us: u64, jitter_us: u64) -> Result<bool, NetError> {
        let mean = format!("{}us", latency_us + jitter_us / 2);
        let spread = format!("{}us", jitter_us / 2);
        for (i, ns) in self.namespaces.iter().enumerate() {
            let dev = self.inside(i);
            let added = ip_tc(
                ns,
                &[
                    "qdisc", "add", "dev", &dev, "root", "netem", "delay", &mean, &spread,
                ],
            );
            match added {
                Ok(()) => {}
                Err(NetError::Namespaces(e)) if i == 0 && e.contains("qdisc kind is unknown") => {
                    return Ok(false);
                }
                Err(e) => return Err(e),
            }
        }
        Ok(true)
    }

    /// Node `i`'s end of its veth pair, in its namespace.
    fn inside(&self, i: usize) -> String {
        self.outside[i].replacen("csh", "csn", 1)
    }

    /// Cuts node `i`'s link: its veth end on the bridge goes down, and nothing crosses it either
    /// way until [`Self::repair`]. Its TCP connections stay open; what they send meanwhile is
    /// lost on the link and retransmitted by TCP once the link is back, as across a real cut.
    pub fn cut(&self, i: usize) -> Result<(), NetError> {
        ip(&["link", "set", &self.outside[i], "down"]).map(drop)
    }

    /// Repairs a link [`Self::cut`] cut.
    pub fn repair(&self, i: usize) -> Result<(), NetError> {
        ip(&["link", "set", &self.outside[i], "up"]).map(drop)
    }

    /// The namespaces' names.
    pub fn names(&self) -> &[String] {
        &self.namespaces
    }
}

impl Drop for Namespaces {
    fn drop(&mut self) {
        // Deleting a namespace deletes its veth end, and with it the end on the bridge.
        for ns in &self.namespaces {
            let _ = ip(&["netns", "del", ns]);
        }
        let _ = ip(&["link", "del", &self.bridge]);
    }
}

fn unavailable(why: String) -> NetError {
    NetError::Namespaces(why)
}

/// Runs `ip args`; its stderr becomes the error.
fn ip(args: &[&str]) -> Result<String, NetError> {
    let out = Command::new("ip")
        .args(args)
        .output()
        .map_err(|e| unavailable(format!("cannot run `ip` (iproute2): {e}")))?;
    if !out.status.success() {
        return Err(unavailable(format!(
            "`ip {}`: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Runs `tc args` in namespace `ns`; its stderr becomes the error.
fn ip_tc(ns: &str, args: &[&str]) -> Result<(), NetError> {
    let mut all = vec!["netns", "exec", ns, "tc"];
    all.extend_from_slice(args);
    ip(&all).map(drop)
}

/// A /24 of 10.213.0.0/16 no interface of this machine uses, starting from one derived from
/// this run.
fn free_subnet(pid: u32, run: u32) -> Result<[u8; 3], NetError> {
    let used = ip(&["-4", "-o", "addr", "show"])?;
    let start = (pid.wrapping_mul(31).wrapping_add(run)) % 256;
    (0..256)
        .map(|k| [10, 213, ((start + k) % 256) as u8])
        .find(|[a, b, c]| !used.contains(&format!(" {a}.{b}.{c}.")))
        .ok_or_else(|| unavailable("every /24 of 10.213.0.0/16 is in use".into()))
}

/// Deletes the namespaces and bridges of runs whose process is gone (one killed by Ctrl-C or a
/// timeout before it could delete them). Cheap where there is nothing to sweep: it runs `ip`
/// only if a namespace of ours exists. A scenario that runs this driver calls it when a launcher
/// of its trials is done (bench-replication's `Scenario::sweep`), so that an interrupted run
/// leaves nothing behind once the command has ended.
pub fn sweep_stale() {
    let ours = std::fs::read_dir("/run/netns").is_ok_and(|entries| {
        entries
            .flatten()
            .any(|e| e.file_name().to_string_lossy().starts_with("critsec-"))
    });
    let bridges = std::fs::read_dir("/sys/class/net").is_ok_and(|entries| {
        entries
            .flatten()
            .any(|e| e.file_name().to_string_lossy().starts_with("csb"))
    });
    if !ours && !bridges {
        return;
    }
    let gone = |pid: u32| !std::path::Path::new(&format!("/proc/{pid}")).exists();
    if let Ok(list) = ip(&["netns", "list"]) {
        for name in list.lines().filter_map(|l| l.split_whitespace().next()) {
            let pid = name
                .strip_prefix("critsec-")
                .and_then(|rest| rest.split('-').next())
                .and_then(|p| p.parse::<u32>().ok());
            if pid.is_some_and(gone) {
                let _ = ip(&["netns", "del", name]);
            }
        }
    }
    if let Ok(links) = ip(&["-o", "link", "show", "type", "bridge"]) {
        for name in links
            .lines()
            .filter_map(|l| l.split(':').nth(1))
            .map(str::trim)
        {
            // `csb` + the pid in hex + one hex digit of the run.
            let pid = name
                .strip_prefix("csb")
                .filter(|t| t.len() >= 2)
                .and_then(|t| u32::from_str_radix(&t[..t.len() - 1], 16).ok());
            if pid.is_some_and(gone) {
                let _ = ip(&["link", "del", name]);
            }
        }
    }
}
