//! The net driver with real processes: `critsec node` processes over loopback TCP, gathered by a
//! coordinator (this test, or a `critsec run` fork). A full run verifies; a node process that
//! dies, never comes, joins twice or runs other settings is named in the error, and no process
//! outlives its coordinator.

use std::net::SocketAddr;
use std::process::{Command, Stdio};
use std::time::Duration;

use critsec_replication::NodeId;
use critsec_replication::net::{Coordinator, Namespaces, NetCluster, RunFigures, Started};
use critsec_replication::threads::ThreadsConfig;
use critsec_replication::workload::WorkloadConfig;
use critsec_replication::{ClusterConfig, ProtocolKind};

/// The settings the nodes get (`-p`), and the same as the coordinator's `ThreadsConfig`.
const PARAMS: &[&str] = &[
    "protocol=key-queue",
    "nodes=3",
    "requesters=2",
    "keys=200",
    "value_size=64",
    "link_latency_us=300",
    "jitter_us=100",
    "lock_timeout_ms=100",
    "reply_timeout_ms=500",
];

/// Requesters per node, as `PARAMS` sets.
const REQUESTERS: u64 = 2;

fn threads_config() -> ThreadsConfig {
    ThreadsConfig {
        cluster: ClusterConfig {
            nodes: 3,
            keys: 200,
            lock_timeout_us: 100_000,
            reply_timeout_us: 500_000,
            ..ClusterConfig::default()
        },
        latency_us: 300,
        jitter_us: 100,
        seed: 42,
        sockets: true,
        ..ThreadsConfig::default()
    }
}

/// What the nodes' requesters do under `PARAMS`.
fn workload() -> WorkloadConfig {
    WorkloadConfig {
        requesters_per_node: 2,
        value_size: 64,
        ..WorkloadConfig::default()
    }
}

fn node(coordinator: SocketAddr, id: NodeId, extra: &[&str]) -> Started {
    let critsec = Command::new(env!("CARGO_BIN_EXE_critsec"));
    node_with(critsec, coordinator, id, None, extra)
}

/// [`node`] with `cmd` as the program (a namespace's `ip netns exec ... critsec`), listening at
/// `listen`.
fn node_with(
    mut cmd: Command,
    coordinator: SocketAddr,
    id: NodeId,
    listen: Option<SocketAddr>,
    extra: &[&str],
) -> Started {
    cmd.args(["node", "--coordinator", &coordinator.to_string()])
        .args(["--id", &id.to_string()]);
    if let Some(listen) = listen {
        cmd.args(["--listen", &listen.to_string()]);
    }
    for p in PARAMS.iter().chain(extra) {
        cmd.args(["-p", p]);
    }
    let child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("starting a node process");
    Started { node: id, child }
}

/// Asserts that `acked` writes were checked by the verifier for the puts of `runs`: those that
/// ended inside a run's window, and at most each requester's last put, ended after it.
fn assert_acked(acked: u64, runs: &[&[RunFigures]], what: &str) {
    let puts: u64 = runs
        .iter()
        .flat_map(|r| r.iter())
        .map(|f| f.requesters.puts.count())
        .sum();
    let tails: u64 = runs.iter().map(|r| r.len() as u64 * REQUESTERS).sum();
    assert!(
        (puts..=puts + tails).contains(&acked),
        "{what}: {acked} writes acknowledged, {puts} puts in the windows"
    );
}

/// Three node processes of `protocol` on loopback, gathered.
fn three_nodes(protocol: ProtocolKind) -> NetCluster {
    let (c, at) = coordinator();
    let param = format!("protocol={protocol}");
    let started = (0..3).map(|id| node(at, id, &[&param])).collect();
    c.gather(
        protocol,
        &threads_config(),
        &workload(),
        started,
        Duration::from_secs(30),
    )
    .unwrap()
}

/// The error of gathering the key-queue node processes `start` starts, given the coordinator's
/// address.
fn gather_error(start: impl FnOnce(SocketAddr) -> Vec<Started>, timeout: Duration) -> String {
    let (c, at) = coordinator();
    c.gather(
        ProtocolKind::KeyQueue,
        &threads_config(),
        &workload(),
        start(at),
        timeout,
    )
    .unwrap_err()
    .to_string()
}

fn coordinator() -> (Coordinator, SocketAddr) {
    let c = Coordinator::bind(([127, 0, 0, 1], 0).into()).unwrap();
    let at = c.address().unwrap();
    (c, at)
}

#[test]
fn a_cluster_of_node_processes_runs_and_verifies_then_every_process_exits() {
    let mut cluster = three_nodes(ProtocolKind::KeyQueue);
    let figures = cluster.run(Duration::from_millis(200)).unwrap();
    assert!(
        figures.iter().all(|f| f.requesters.ok_ops() > 0),
        "{figures:?}"
    );
    let puts: u64 = figures.iter().map(|f| f.requesters.puts.count()).sum();
    let gets: u64 = figures.iter().map(|f| f.requesters.gets.count()).sum();
    // A settled run counts only what it issued after settling; the history check sees it all.
    let settled = cluster
        .run_settled(Duration::from_millis(100), Duration::from_millis(100))
        .unwrap();
    let settled_gets: u64 = settled.iter().map(|f| f.requesters.gets.count()).sum();
    let settled_puts: u64 = settled.iter().map(|f| f.requesters.puts.count()).sum();
    let report = cluster.verify(Duration::from_secs(30)).unwrap();
    // Every acknowledged put is checked, counted or not.
    assert!(report.verify.acked_writes > puts + settled_puts);
    assert!(report.driver.socket_messages > 0);
    let across = report.gets_checked_across.unwrap();
    assert!(
        across > gets + settled_gets,
        "{across} {gets} {settled_gets}"
    );
    // Dropping the cluster tells the nodes to exit, and waits for them (killing any that
    // does not).
    drop(cluster);
}

#[test]
fn a_node_process_that_dies_is_named_with_how_it_ended() {
    let mut cluster = three_nodes(ProtocolKind::KeyQueue);
    cluster.run(Duration::from_millis(50)).unwrap();
    // Killed behind the coordinator's back: the next run names it.
    let pid = cluster.pid(2).unwrap();
    // SAFETY: kill(2) on a child process this test started; no memory is involved.
    assert_eq!(unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) }, 0);
    let e = cluster
        .run(Duration::from_millis(50))
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("node 2: its process exited (signal: 9"),
        "{e}"
    );
}

/// Fault runs: a node process killed mid-run, the others told (as a failure detector would),
/// with 2 owners per key and no view change. Lock forwarding and Triangle acknowledge a put only
/// once both owners hold it, so the survivors verify with no acknowledged write lost; their
/// requests to the dead node fail at the reply timeout. Key queue acknowledges before it
/// replicates: its survivors stop replicating to the dead node when told, quiesce and verify,
/// and a key whose newest acknowledged put died with its primary is counted, not failed.
#[test]
fn a_killed_node_is_survived_and_only_an_ack_before_replication_can_lose_a_write() {
    for protocol in [
        ProtocolKind::LockForwarding,
        ProtocolKind::KeyQueue,
        ProtocolKind::Triangle,
    ] {
        let name = protocol.to_string();
        let mut cluster = three_nodes(protocol);
        let before = cluster.run(Duration::from_millis(200)).unwrap();
        assert!(
            before.iter().all(|f| f.requesters.failed_reply == 0),
            "{before:?}"
        );
        assert!(cluster.kill(2).unwrap());
        let after = cluster.run(Duration::from_millis(1_000)).unwrap();
        assert_eq!(after.iter().map(|f| f.node).collect::<Vec<_>>(), [0, 1]);
        let failed: u64 = after.iter().map(|f| f.requesters.failed_reply).sum();
        let ok: u64 = after.iter().map(|f| f.requesters.ok_ops()).sum();
        assert!(failed > 0 && ok > 0, "{name}: {after:?}");
        let report = cluster.verify(Duration::from_secs(30)).unwrap();
        // Every write acknowledged before and after the kill is checked, node 2's requesters'
        // too: a node streams its acks to the coordinator while it runs.
        assert_acked(report.verify.acked_writes, &[&before, &after], &name);
        if protocol.owners_hold_acked_puts() {
            assert_eq!(report.verify.lost_with_primary, 0, "{name}");
        }
        assert_eq!(cluster.dead(), [2]);
    }
}

/// A node killed in the middle of a run: the acks its requesters saw up to their last flush
/// are still checked. The coordinator reads what the dead node streamed before it died, so the
/// writes checked outnumber everything the survivors' requesters could have been acknowledged.
#[test]
fn a_node_killed_mid_run_has_its_streamed_acks_checked() {
    let mut cluster = three_nodes(ProtocolKind::LockForwarding);
    let during = cluster
        .run_killing(Duration::from_millis(1_000), 2, Duration::from_millis(500))
        .unwrap();
    assert_eq!(during.iter().map(|f| f.node).collect::<Vec<_>>(), [0, 1]);
    let report = cluster.verify(Duration::from_secs(30)).unwrap();
    let survivors: u64 = during.iter().map(|f| f.requesters.puts.count()).sum();
    let most = survivors + during.len() as u64 * REQUESTERS;
    assert!(
        report.verify.acked_writes > most,
        "{} writes checked, the survivors saw at most {most} acknowledged",
        report.verify.acked_writes
    );
    assert_eq!(report.verify.lost_with_primary, 0);
}

#[test]
fn a_node_that_never_joins_is_named_and_the_others_are_stopped() {
    let mut pids = Vec::new();
    let e = gather_error(
        |at| {
            let started: Vec<_> = (0..2).map(|id| node(at, id, &[])).collect();
            pids = started.iter().map(|s| s.child.id()).collect();
            started
        },
        Duration::from_secs(3),
    );
    assert_eq!(e, "waited in vain for node(s) 2 to join within 3000 ms");
    for pid in pids {
        // Reaped: the coordinator waited for (or killed) every process it started.
        assert!(
            !std::path::Path::new(&format!("/proc/{pid}")).exists(),
            "node process {pid} outlived its coordinator"
        );
    }
}

#[test]
fn a_node_with_other_settings_or_a_taken_id_is_refused_by_name() {
    let e = gather_error(
        |at| vec![node(at, 0, &[]), node(at, 1, &["keys=300"])],
        Duration::from_secs(30),
    );
    assert!(
        e.starts_with("node 1 runs another cluster settings digest"),
        "{e}"
    );
    // Another workload or seed changes what a node does: refused too.
    for other in ["read_pct=0", "requesters=6", "seed=7", "value_size=65"] {
        let e = gather_error(
            |at| vec![node(at, 0, &[]), node(at, 1, &[other])],
            Duration::from_secs(30),
        );
        assert!(
            e.starts_with("node 1 runs another cluster settings digest"),
            "{other}: {e}"
        );
    }

    let e = gather_error(
        |at| vec![node(at, 0, &[]), node(at, 0, &[])],
        Duration::from_secs(30),
    );
    assert_eq!(e, "node 0: joined twice (two hosts with the same node id?)");
}

#[test]
fn bad_node_arguments_exit_2() {
    let out = Command::new(env!("CARGO_BIN_EXE_critsec"))
        .args(["node", "--coordinator", "127.0.0.1:9", "--id", "0"])
        .args(["-p", "nodes=many"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("`nodes` has the bad value `many`"), "{err}");
}

/// Whether this process may make network namespaces (root, iproute2, and a kernel and
/// container that allow them): it makes one and deletes it.
fn namespaces_possible() -> bool {
    // Unique per call (tests run in parallel), and not named like a run's namespaces.
    static PROBES: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = PROBES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let probe = format!("csprobe-{}-{n}", std::process::id());
    let ip = |args: &[&str]| {
        Command::new("ip")
            .args(args)
            .output()
            .is_ok_and(|o| o.status.success())
    };
    ip(&["netns", "add", &probe]) && ip(&["netns", "del", &probe])
}

#[test]
fn critsec_run_with_the_net_driver_scores_and_verifies_in_namespaces_where_it_may() {
    let dir = std::env::temp_dir().join(format!("critsec-net-run-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let json = dir.join("run.json");
    // A namespace left by a run whose process is gone (a pid above any pid_max): swept.
    let stale = "critsec-4194999-0-0";
    if namespaces_possible() {
        let made = Command::new("ip")
            .args(["netns", "add", stale])
            .status()
            .unwrap();
        assert!(made.success());
    }
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_critsec"));
    cmd.args([
        "run",
        "replication/ispn_perf",
        "-f",
        "1",
        "-wi",
        "0",
        "-i",
        "1",
    ])
    .args(["-r", "200ms", "-p", "driver=net", "-p", "netns=auto"])
    .args(["--json", json.to_str().unwrap()]);
    for p in PARAMS {
        cmd.args(["-p", p]);
    }
    let out = cmd.output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("req/s/node"), "{text}");
    assert!(!text.contains("ERROR"), "{text}");
    // The verification says where the nodes ran: in namespaces wherever they can be made.
    let meta = std::fs::read_to_string(dir.join("run.meta.json")).unwrap();
    let placed = if namespaces_possible() {
        "nodes in network namespaces critsec-"
    } else {
        "nodes on loopback (network namespaces: "
    };
    assert!(meta.contains(placed), "{meta}");
    assert!(meta.contains("; link delay by "), "{meta}");
    // The node processes of one host share its clock: their operations are checked together.
    assert!(
        meta.contains("gets history-checked across node processes"),
        "{meta}"
    );
    assert!(meta.contains("acked puts kept"), "{meta}");
    // And they are gone with the run.
    if namespaces_possible() {
        let list = Command::new("ip").args(["netns", "list"]).output().unwrap();
        let list = String::from_utf8_lossy(&list.stdout);
        // Another test's namespaces may be there, but none of a process that is gone: the
        // run's fork deleted its own, and swept the stale one.
        let orphans: Vec<&str> = list
            .split_whitespace()
            .filter(|name| {
                name.strip_prefix("critsec-")
                    .and_then(|rest| rest.split('-').next())
                    .is_some_and(|pid| !std::path::Path::new(&format!("/proc/{pid}")).exists())
            })
            .collect();
        assert!(orphans.is_empty(), "left behind or not swept: {orphans:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A free port on loopback (bound, then released for the node or coordinator to take).
fn free_address() -> SocketAddr {
    std::net::TcpListener::bind(("127.0.0.1", 0))
        .unwrap()
        .local_addr()
        .unwrap()
}

/// Kills the processes when dropped, so that a failed assertion leaves none behind.
struct KillOnDrop(Vec<std::process::Child>);

/// `nodes` node processes started by hand from the cluster file `file`.
fn nodes_from(file: &std::path::Path, nodes: u16) -> KillOnDrop {
    KillOnDrop(
        (0..nodes)
            .map(|id| {
                Command::new(env!("CARGO_BIN_EXE_critsec"))
                    .args(["node", "--cluster", file.to_str().unwrap()])
                    .args(["--id", &id.to_string()])
                    .stdin(Stdio::null())
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .spawn()
                    .unwrap()
            })
            .collect(),
    )
}

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

#[test]
fn nodes_started_by_hand_from_a_cluster_file_serve_one_coordinator_after_another() {
    let dir = std::env::temp_dir().join(format!("critsec-net-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("cluster.toml");
    let mut text = format!(
        "coordinator = \"{}\"\nsecret = \"a secret the hosts share\"\n[params]\n",
        free_address()
    );
    for p in PARAMS.iter().filter(|p| !p.starts_with("nodes=")) {
        let (k, v) = p.split_once('=').unwrap();
        text += &format!("{k} = \"{v}\"\n");
    }
    for id in 0..3 {
        text += &format!("[[node]]\nid = {id}\naddress = \"{}\"\n", free_address());
    }
    std::fs::write(&file, text).unwrap();
    let _nodes = nodes_from(&file, 3);
    let run = |extra: &[&str]| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_critsec"));
        cmd.args([
            "run",
            "replication/ispn_perf",
            "-f",
            "2",
            "-wi",
            "0",
            "-i",
            "1",
        ])
        .args(["-r", "100ms", "-p", "driver=net"])
        .args(["-p", &format!("cluster={}", file.display())]);
        for p in PARAMS.iter().chain(extra) {
            cmd.args(["-p", p]);
        }
        let out = cmd.output().unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        (out.status.success(), text)
    };
    // Two forks, two coordinators one after the other: the same node processes serve both.
    let (ok, text) = run(&[]);
    assert!(
        ok && text.contains("req/s/node") && !text.contains("ERROR"),
        "{text}"
    );
    // A run whose settings differ from the file's is refused before any node is asked.
    let (ok, text) = run_naming_only_the_file(&file, &["-p", "keys=999"]);
    assert!(!ok, "{text}");
    assert!(
        text.contains(&format!(
            "-p keys=999 contradicts the cluster file {}, which sets keys = 200",
            file.display()
        )),
        "{text}"
    );
    // The file's parameters are the run's: naming the file is enough.
    let (ok, text) = run_naming_only_the_file(&file, &[]);
    assert!(
        ok && text.contains("req/s/node") && !text.contains("ERROR"),
        "{text}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `critsec run -p driver=net -p cluster=FILE` and `extra`, nothing repeated from the file:
/// whether it passed, and its output.
fn run_naming_only_the_file(file: &std::path::Path, extra: &[&str]) -> (bool, String) {
    let cluster = format!("cluster={}", file.display());
    let mut args = vec!["-r", "100ms", "-p", "driver=net", "-p", &cluster];
    args.extend(extra);
    let (out, text) = ispn_run(&args);
    (out.status.success(), text)
}

/// A connect-and-close on the coordinator's port while it gathers (a port scan, a health
/// check) is no node: the run goes on, and the connection is listed as ignored.
#[test]
fn a_connection_that_never_says_hello_is_ignored_while_gathering() {
    let (c, at) = coordinator();
    let scan = std::net::TcpStream::connect(at).unwrap();
    let scanned_from = scan.local_addr().unwrap();
    drop(scan);
    let started = (0..3).map(|id| node(at, id, &[])).collect();
    let cluster = c
        .gather(
            ProtocolKind::KeyQueue,
            &threads_config(),
            &workload(),
            started,
            Duration::from_secs(30),
        )
        .unwrap();
    let ignored = cluster.ignored();
    assert!(
        ignored.len() == 1 && ignored[0].starts_with(&scanned_from.to_string()),
        "{ignored:?}"
    );
}

/// A coordinator with a secret refuses, by name, a node whose hello does not prove it (here,
/// nodes started with no secret); and a node that joins from another host than the one its
/// cluster file gives it is refused by name.
#[test]
fn a_node_without_the_secret_or_from_another_address_is_refused_by_name() {
    // Node 0, started with no secret, joins `c`: the error gathering gives.
    let refused = |c: Coordinator, at| {
        c.gather(
            ProtocolKind::KeyQueue,
            &threads_config(),
            &workload(),
            vec![node(at, 0, &[])],
            Duration::from_secs(30),
        )
        .unwrap_err()
        .to_string()
    };
    let (c, at) = coordinator();
    let secret = critsec_replication::net::Secret::new(*b"the run's shared secret");
    let e = refused(c.with_secret(secret), at);
    assert_eq!(
        e,
        "node 0's hello does not prove the cluster's secret (another cluster file's secret, or none)"
    );
    let (c, at) = coordinator();
    let placed: Vec<SocketAddr> = ["127.0.0.2:0", "127.0.0.1:0", "127.0.0.1:0"]
        .iter()
        .map(|a| a.parse().unwrap())
        .collect();
    let e = refused(c.placing(placed), at);
    assert_eq!(
        e,
        "node 0: joined from 127.0.0.1, but the cluster file places it at 127.0.0.2:0"
    );
}

/// `critsec run` of `args` (after `run replication/ispn_perf -f 1 -wi 0 -i 1`, nodes on
/// loopback): its exit code and its output.
fn critsec_run(args: &[&str]) -> (Option<i32>, String) {
    let mut all = vec!["-p", "driver=net", "-p", "netns=off"];
    all.extend(args);
    let (out, text) = ispn_run(&all);
    (out.status.code(), text)
}

/// `critsec run replication/ispn_perf -f 1 -wi 0 -i 1` and `args`: what it did, and its
/// stdout and stderr as one text.
fn ispn_run(args: &[&str]) -> (std::process::Output, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_critsec"))
        .args([
            "run",
            "replication/ispn_perf",
            "-f",
            "1",
            "-wi",
            "0",
            "-i",
            "1",
        ])
        .args(args)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out, text)
}

/// Large values on few nodes: each node's reports (its acks, its final state) once carried
/// every value whole, and a node holding most of 400 keys of 50 KB outgrew a frame. They carry
/// fingerprints now; the run verifies.
#[test]
fn a_run_whose_values_outgrow_a_frame_verifies() {
    let (code, text) = critsec_run(&[
        "-r",
        "1s",
        "-p",
        "nodes=2",
        "-p",
        "keys=400",
        "-p",
        "value_size=50000",
        "-p",
        "link_latency_us=200",
        "-p",
        "jitter_us=0",
    ]);
    assert_eq!(code, Some(0), "{text}");
    assert!(!text.contains("ERROR"), "{text}");
}

/// A run whose every node was killed has nothing left to verify: it fails, saying so.
#[test]
fn a_run_that_kills_its_only_node_fails_its_verification() {
    let (code, text) = critsec_run(&[
        "-r",
        "600ms",
        "-p",
        "nodes=1",
        "-p",
        "num_owners=1",
        "-p",
        "fault=kill",
        "-p",
        "requesters=2",
        "-p",
        "reply_timeout_ms=500",
    ]);
    assert_eq!(code, Some(1), "{text}");
    assert!(
        text.contains("no node survived (nodes [0] were killed)"),
        "{text}"
    );
}

/// Whether process `pid` is gone or a zombie.
fn dead(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).map_or(true, |s| {
        s.rsplit_once(") ")
            .is_some_and(|(_, rest)| rest.starts_with('Z'))
    })
}

/// The processes whose parent is `parent`.
fn children_of(parent: u32) -> Vec<u32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
                s.rsplit_once(") ")
                    .and_then(|(_, rest)| rest.split(' ').nth(1)?.parse::<u32>().ok())
                    == Some(parent)
            })
        })
        .collect()
}

/// A coordinator killed outright (SIGKILL, as a fork past its timeout is) takes its node
/// processes with it: they stop at once instead of loading the cluster for the rest of their
/// 60-second window. The test waits at most 30 s for them to go.
#[test]
fn node_processes_die_with_a_killed_coordinator() {
    let mut run = Command::new(env!("CARGO_BIN_EXE_critsec"))
        .args([
            "run",
            "replication/ispn_perf",
            "-f",
            "0",
            "-wi",
            "0",
            "-i",
            "1",
        ])
        .args([
            "-r",
            "60s",
            "-p",
            "driver=net",
            "-p",
            "netns=off",
            "-p",
            "nodes=2",
        ])
        .args(["-p", "requesters=2", "-p", "keys=200"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut nodes = Vec::new();
    for _ in 0..600 {
        nodes = children_of(run.id());
        if nodes.len() == 2 {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(nodes.len(), 2, "the run's node processes never started");
    // Under way: both nodes joined and are connected once the run has a few seconds.
    std::thread::sleep(Duration::from_secs(3));
    run.kill().unwrap();
    run.wait().unwrap();
    let mut alive = nodes.clone();
    for _ in 0..300 {
        alive.retain(|&pid| !dead(pid));
        if alive.is_empty() {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    for &pid in alive.iter().filter(|&&p| p > 1) {
        // SAFETY: kill(2) of a process this test's child started, which outlived it.
        unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
    }
    assert!(
        alive.is_empty(),
        "node processes {alive:?} outlived their coordinator"
    );
}

/// A cut link (namespaces only: the veth end of node 2 on the bridge goes down for a second,
/// then up): the other nodes' requests to node 2 fail at their reply timeout while it is cut,
/// TCP retransmits what the cut lost once it is repaired, and the cluster verifies whole, every
/// acknowledged write kept. Without root and iproute2 there is no link to cut, and the test
/// says so instead of running.
#[test]
fn a_cut_link_stalls_its_node_until_repaired_and_the_cluster_still_verifies() {
    if !namespaces_possible() {
        eprintln!("a cut link needs network namespaces (root and iproute2): not run");
        return;
    }
    let ns = Namespaces::create(3).unwrap();
    let c = Coordinator::bind((ns.host_address(), 0).into()).unwrap();
    let at = c.address().unwrap();
    let exe = std::path::Path::new(env!("CARGO_BIN_EXE_critsec"));
    let started = (0..3)
        .map(|id| {
            let listen = SocketAddr::new(ns.node_address(usize::from(id)), 0);
            let cmd = ns.command(usize::from(id), exe);
            node_with(cmd, at, id, Some(listen), &["protocol=lock-forwarding"])
        })
        .collect();
    let mut cluster = c
        .gather(
            ProtocolKind::LockForwarding,
            &threads_config(),
            &workload(),
            started,
            Duration::from_secs(30),
        )
        .unwrap();
    let before = cluster.run(Duration::from_millis(200)).unwrap();
    let during = std::thread::scope(|s| {
        s.spawn(|| {
            std::thread::sleep(Duration::from_millis(200));
            ns.cut(2).unwrap();
            std::thread::sleep(Duration::from_millis(1_000));
            ns.repair(2).unwrap();
        });
        cluster.run(Duration::from_millis(2_000)).unwrap()
    });
    let failed: u64 = during.iter().map(|f| f.requesters.failed_reply).sum();
    assert!(
        failed > 0,
        "no request timed out across the cut: {during:?}"
    );
    assert!(
        during.iter().all(|f| f.requesters.ok_ops() > 0),
        "{during:?}"
    );
    let report = cluster.verify(Duration::from_secs(30)).unwrap();
    assert_acked(report.verify.acked_writes, &[&before, &during], "cut");
    drop(cluster);
}

/// The faults from the command line (`-p fault=kill`): the first measured iteration loses the
/// last node a third of the way in, its requests to that node fail at the reply timeout, and the
/// survivors verify.
#[test]
fn critsec_run_with_a_killed_node_fails_requests_to_it_and_verifies_the_survivors() {
    let dir = std::env::temp_dir().join(format!("critsec-net-fault-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let json = dir.join("run.json");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_critsec"));
    cmd.args([
        "run",
        "replication/ispn_perf",
        "-f",
        "1",
        "-wi",
        "0",
        "-i",
        "2",
    ])
    .args(["-r", "900ms", "-p", "driver=net", "-p", "fault=kill"])
    .args(["-p", "protocol=lock-forwarding"])
    .args(["--json", json.to_str().unwrap()]);
    for p in PARAMS.iter().filter(|p| !p.starts_with("protocol=")) {
        cmd.args(["-p", p]);
    }
    let out = cmd.output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The console says what the fault did and what verification found.
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("critsec: net: kill of node 2's process (pid ")
            && err.contains("ms into the first measured iteration"),
        "{err}"
    );
    assert!(
        err.contains("critsec: net: verified: after the kill of node 2's process")
            && err.contains("acked puts kept"),
        "{err}"
    );
    let runs: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let failed = &runs[0]["secondaryMetrics"]["failed_ops"]["rawData"][0];
    assert!(failed[0].as_f64().unwrap() > 0.0, "{failed}");
    let meta = std::fs::read_to_string(dir.join("run.meta.json")).unwrap();
    assert!(meta.contains("acked puts kept"), "{meta}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A cluster file whose node cannot listen where it says (an address not on its host: here
/// TEST-NET-1's, which no machine has, so nothing is ever sent to it): the run's error names the
/// node and the address.
#[test]
fn a_node_that_cannot_listen_at_its_cluster_file_address_is_named() {
    let dir = std::env::temp_dir().join(format!("critsec-net-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("cluster.toml");
    let text = format!(
        "coordinator = \"{}\"\n[params]\nrequesters = \"2\"\n\
         [[node]]\nid = 0\naddress = \"{}\"\n[[node]]\nid = 1\naddress = \"192.0.2.7:7802\"\n",
        free_address(),
        free_address()
    );
    std::fs::write(&file, text).unwrap();
    let _nodes = nodes_from(&file, 2);
    let out = Command::new(env!("CARGO_BIN_EXE_critsec"))
        .args([
            "run",
            "replication/ispn_perf",
            "-f",
            "1",
            "-wi",
            "0",
            "-i",
            "1",
        ])
        .args([
            "-r",
            "100ms",
            "-p",
            "driver=net",
            "-p",
            "nodes=2",
            "-p",
            "requesters=2",
        ])
        .args(["-p", &format!("cluster={}", file.display())])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("node 1: cannot listen at 192.0.2.7:7802"),
        "{text}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
