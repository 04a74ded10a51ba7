//! TCP connections between nodes, one per ordered pair, as JGroups' TCP transport keeps one per
//! pair of members: the sender's thread writes each message as a [`wire`](super::wire) frame
//! straight onto the connection (`TCP_NODELAY`, as JGroups sets it), and a reader thread per
//! connection on the receiving side turns frames back into messages for the receiver's transport.
//!
//! Every connection opens with a handshake the receiver checks before it reads a message: it
//! sends a fresh challenge, and the connecting node answers with a [`Hello`] that proves the
//! cluster's secret over it; a peer of another build, cluster or secret, an id out of range or
//! one already connected is refused by name. A reader that meets bad bytes or a refused hello
//! reports the error and stops reading that connection; it never guesses.
//!
//! A listener's port is open to anyone who can reach it: a connection that closes, or stays
//! silent for [`HELLO_TIMEOUT`], before its hello (a port scan, a health check) is dropped
//! without a word and is no peer, so a listener keeps accepting for as long as its node runs.
//! Identified connections have TCP keepalive, so a peer host that vanishes without closing is
//! noticed; and closing waits at most [`CLOSE_GRACE`] for the peers to close their ends.
//!
//! The nodes of one cluster may live in several processes (or hosts): each opens the
//! connections from the nodes it hosts to every other node, and accepts theirs. Opening takes two
//! phases so that no process connects to a listener that does not exist yet: every process first
//! binds a listener per hosted node ([`Bound::bind`], whose addresses it tells the others), and
//! only once every address is known does each connect ([`Connections::connect`]). Accepting
//! runs on a thread per listener, since the other processes connect when they are ready.
//!
//! Only the connections live here: what a message does when it arrives, and any clock, belong to
//! the driver that owns them (the threads driver's transport holds a message for the delay the
//! frame carries).

use std::io::BufReader;
use std::net::{IpAddr, Ipv4Addr, Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use critsec_sync::Mutex;

use super::wire::{
    Challenge, Frame, FrameReader, Hello, Secret, WireError, challenge, write_frame,
};
use crate::message::{Msg, NodeId};

/// How long a node tries to open its connection to a peer, and waits for its challenge.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// How long an accepted connection may take to say hello before it is dropped.
pub const HELLO_TIMEOUT: Duration = Duration::from_secs(10);

/// How long closing waits for the peers to close their connections (so that what they wrote
/// last is read) before it closes them itself.
pub const CLOSE_GRACE: Duration = Duration::from_secs(5);

/// What a reader does with a message that arrived: `(to, from, msg, resent, delay_us)`.
pub type Deliver = Arc<dyn Fn(NodeId, NodeId, Msg, bool, u64) + Send + Sync>;

/// What happens when a connection to a hosted node ends, or its listener fails:
/// `(to, from, error)`, `from` the peer once its hello was read, `error` `None` for a clean end
/// (the peer closed it, or a stranger left before its hello). Every reader calls it once; a
/// driver learns from it that a peer's messages have all arrived, and which errors concern
/// which peer.
pub type OnEnd = Arc<dyn Fn(NodeId, Option<NodeId>, Option<String>) + Send + Sync>;

/// What a node's hellos carry and prove: the digest of the settings that decide what a node
/// does ([`cluster_digest`](super::cluster_digest)) and the cluster's secret.
#[derive(Debug, Clone)]
pub struct Handshake {
    /// The settings digest.
    pub cluster: u64,
    /// The shared secret.
    pub secret: Secret,
}

/// The sending end of one connection, and its frame buffer.
struct Writer {
    stream: TcpStream,
    buf: Vec<u8>,
}

/// The listeners of the nodes one process hosts, bound but not yet connected.
#[derive(Debug)]
pub struct Bound {
    /// `(node, listener)` per hosted node.
    listeners: Vec<(NodeId, TcpListener)>,
}

impl Bound {
    /// Binds a listener for each of `hosted` on `ip`, at a port the OS picks.
    pub fn bind(hosted: &[NodeId], ip: IpAddr) -> Result<Self, WireError> {
        let at: Vec<_> = hosted
            .iter()
            .map(|&n| (n, SocketAddr::new(ip, 0)))
            .collect();
        Self::bind_at(&at)
    }

    /// Binds a listener for each `(node, address)`: a node of a cluster file listens where the
    /// file says (port 0: one the OS picks).
    pub fn bind_at(hosted: &[(NodeId, SocketAddr)]) -> Result<Self, WireError> {
        let listeners = hosted
            .iter()
            .map(|&(n, a)| Ok((n, TcpListener::bind(a)?)))
            .collect::<Result<Vec<_>, std::io::Error>>()?;
        Ok(Bound { listeners })
    }

    /// Each hosted node's address, for the other processes.
    pub fn addresses(&self) -> Result<Vec<(NodeId, SocketAddr)>, WireError> {
        self.listeners
            .iter()
            .map(|(n, l)| Ok((*n, l.local_addr()?)))
            .collect()
    }

    /// The hosted nodes.
    pub fn hosted(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.listeners.iter().map(|(n, _)| *n)
    }
}

/// An accepted connection, kept so that closing can end its reader.
struct Accepted {
    stream: TcpStream,
    /// Whether its hello was accepted (a peer); a stranger's is closed at once on close.
    peer: Arc<AtomicBool>,
}

/// What the acceptors and readers of one process share.
struct Readers {
    /// Set by [`Connections::close`]: acceptors stop.
    closing: AtomicBool,
    /// Every accepted connection.
    accepted: std::sync::Mutex<Vec<Accepted>>,
    /// Readers still reading.
    running: AtomicUsize,
    /// Per hosted node `to`, the peers identified so far (`identified[to * nodes + from]`).
    identified: Vec<AtomicBool>,
    nodes: usize,
    /// Acceptor and reader threads.
    threads: std::sync::Mutex<Vec<JoinHandle<()>>>,
}

impl Readers {
    fn push_thread(&self, t: JoinHandle<()>) {
        let mut threads = self.threads.lock().unwrap_or_else(|e| e.into_inner());
        // Strangers come and go for as long as a node runs: their ended readers are let go.
        threads.retain(|t| !t.is_finished());
        threads.push(t);
    }

    /// Forgets an accepted connection whose reader ended, closing the copy kept of it.
    fn forget(&self, peer: &Arc<AtomicBool>) {
        self.accepted
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|a| !Arc::ptr_eq(&a.peer, peer));
    }

    /// Shuts down the accepted connections (`peers_too`: every one, else only those not yet
    /// identified), ending their readers.
    fn shut(&self, peers_too: bool) {
        let accepted = self.accepted.lock().unwrap_or_else(|e| e.into_inner());
        for a in accepted.iter() {
            if peers_too || !a.peer.load(Ordering::Acquire) {
                let _ = a.stream.shutdown(Shutdown::Both);
            }
        }
    }
}

/// Every connection from and to the nodes one process hosts.
pub struct Connections {
    /// `writers[from][to]`: `None` where `from` is not hosted here, and on the diagonal.
    writers: Vec<Option<Vec<Option<Mutex<Writer>>>>>,
    /// The hosted nodes' listener addresses, to wake their acceptors at [`Connections::close`].
    listening: Vec<SocketAddr>,
    readers: Arc<Readers>,
    /// Messages and bytes written, hellos not counted (Relaxed: statistics read after the run).
    frames: AtomicU64,
    bytes: AtomicU64,
}

impl std::fmt::Debug for Connections {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connections")
            .field("listening", &self.listening)
            .finish()
    }
}

impl Connections {
    /// Connects every pair of `nodes` nodes over loopback, all hosted here: [`Bound::bind`] and
    /// [`Connections::connect`] in one.
    pub fn open(
        nodes: usize,
        handshake: &Handshake,
        deliver: Deliver,
        on_end: OnEnd,
    ) -> Result<Self, WireError> {
        let hosted: Vec<NodeId> = (0..nodes as NodeId).collect();
        let bound = Bound::bind(&hosted, IpAddr::V4(Ipv4Addr::LOCALHOST))?;
        let addresses = bound
            .addresses()?
            .into_iter()
            .map(|(_, a)| a)
            .collect::<Vec<_>>();
        Self::connect(bound, &addresses, handshake, deliver, on_end)
    }

    /// Connects the nodes `bound` hosts to every node of the cluster, whose addresses are
    /// `addresses` by node id (the hosted ones' included), each connection opened with the
    /// sender's hello proving `handshake`, and accepts the other nodes' connections to the
    /// hosted ones as they come, with a reader per connection that hands each message to
    /// `deliver`.
    pub fn connect(
        bound: Bound,
        addresses: &[SocketAddr],
        handshake: &Handshake,
        deliver: Deliver,
        on_end: OnEnd,
    ) -> Result<Self, WireError> {
        let nodes = addresses.len();
        let readers = Arc::new(Readers {
            closing: AtomicBool::new(false),
            accepted: std::sync::Mutex::new(Vec::new()),
            running: AtomicUsize::new(0),
            identified: (0..nodes * nodes).map(|_| AtomicBool::new(false)).collect(),
            nodes,
            threads: std::sync::Mutex::new(Vec::new()),
        });
        let mut listening = Vec::new();
        // Accept first, on threads of their own: the other processes connect when they are ready.
        for (to, listener) in bound.listeners.iter() {
            let listener = listener.try_clone()?;
            listening.push(listener.local_addr()?);
            let (to, deliver, on_end) = (*to, Arc::clone(&deliver), Arc::clone(&on_end));
            let (shared, handshake) = (Arc::clone(&readers), handshake.clone());
            let acceptor = spawn(format!("repl-{to}-accept"), move || {
                accept_all(&listener, to, &handshake, &shared, &deliver, &on_end);
            })?;
            readers.push_thread(acceptor);
        }
        let mut writers: Vec<Option<Vec<Option<Mutex<Writer>>>>> =
            (0..nodes).map(|_| None).collect();
        for from in bound.hosted() {
            let mut row = Vec::with_capacity(nodes);
            for (to, address) in addresses.iter().enumerate() {
                if to == usize::from(from) {
                    row.push(None);
                    continue;
                }
                let stream = open_to(from, to, address, handshake)?;
                row.push(Some(Mutex::new(
                    "replication.connection",
                    Writer {
                        stream,
                        buf: Vec::new(),
                    },
                )));
            }
            writers[usize::from(from)] = Some(row);
        }
        Ok(Connections {
            writers,
            listening,
            readers,
            frames: AtomicU64::new(0),
            bytes: AtomicU64::new(0),
        })
    }

    /// Writes `msg` from `from` to `to` on their connection.
    pub fn send(
        &self,
        from: NodeId,
        to: NodeId,
        msg: Msg,
        resent: bool,
        delay_us: u64,
    ) -> Result<(), WireError> {
        let Some(Some(writer)) = self
            .writers
            .get(usize::from(from))
            .and_then(Option::as_ref)
            .and_then(|row| row.get(usize::from(to)))
        else {
            return Err(WireError::Io(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                format!("no connection from node {from} to node {to}"),
            )));
        };
        let frame = Frame::Message {
            msg,
            resent,
            delay_us,
        };
        let mut w = writer.lock();
        let Writer { stream, buf } = &mut *w;
        write_frame(stream, &frame, buf)?;
        self.frames.fetch_add(1, Ordering::Relaxed);
        self.bytes.fetch_add(buf.len() as u64, Ordering::Relaxed);
        Ok(())
    }

    /// Messages and bytes written so far.
    pub fn sent(&self) -> (u64, u64) {
        (
            self.frames.load(Ordering::Relaxed),
            self.bytes.load(Ordering::Relaxed),
        )
    }

    /// Closes the connections from the hosted nodes, stops accepting, drops every connection
    /// that never said hello, waits up to [`CLOSE_GRACE`] for the peers to close theirs (in a
    /// cluster split over processes, until every process has closed: what they wrote last is
    /// read), then closes what is left and waits for this process's threads. A peer that never
    /// closes (a host gone without a word) holds it no longer than the grace.
    pub fn close(&self) {
        for w in self.writers.iter().flatten().flatten().flatten() {
            let _ = w.lock().stream.shutdown(Shutdown::Both);
        }
        // An acceptor waiting in accept is woken by a connection of ours, which it drops.
        self.readers.closing.store(true, Ordering::Release);
        for address in &self.listening {
            let _ = TcpStream::connect_timeout(address, CONNECT_TIMEOUT);
        }
        self.readers.shut(false);
        let deadline = Instant::now() + CLOSE_GRACE;
        while self.readers.running.load(Ordering::Acquire) > 0 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        self.readers.shut(true);
        loop {
            let next = self
                .readers
                .threads
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .pop();
            match next {
                Some(t) => {
                    let _ = t.join();
                }
                None => break,
            }
        }
    }
}

impl Drop for Connections {
    fn drop(&mut self) {
        self.close();
    }
}

fn spawn(name: String, f: impl FnOnce() + Send + 'static) -> std::io::Result<JoinHandle<()>> {
    std::thread::Builder::new()
        .name(name)
        .stack_size(256 * 1024)
        .spawn(f)
}

/// Opens node `from`'s connection to node `to` at `address`: connects, reads its challenge and
/// answers with `from`'s hello.
fn open_to(
    from: NodeId,
    to: usize,
    address: &SocketAddr,
    handshake: &Handshake,
) -> Result<TcpStream, WireError> {
    // A peer that does not answer (a wrong address in a cluster file, a host down) is named,
    // and does not hold the node up for the OS's minutes of retries.
    let named = |e: std::io::Error| {
        WireError::Io(std::io::Error::new(
            e.kind(),
            format!("node {from} cannot reach node {to} at {address}: {e}"),
        ))
    };
    let mut stream = TcpStream::connect_timeout(address, CONNECT_TIMEOUT).map_err(named)?;
    stream.set_nodelay(true)?;
    stream.set_read_timeout(Some(CONNECT_TIMEOUT))?;
    let challenge = match FrameReader::new(&stream).next_frame() {
        Ok(Some(Frame::Challenge(c))) => c,
        Ok(other) => {
            return Err(named(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!(
                    "its first frame was {}, not a challenge",
                    other.map_or("none".to_string(), |f| format!("{f:?}"))
                ),
            )));
        }
        Err(WireError::Io(e)) => return Err(named(e)),
        Err(e) => return Err(e),
    };
    stream.set_read_timeout(None)?;
    let hello = Hello::new(from, handshake.cluster, &handshake.secret, &challenge);
    write_frame(&mut stream, &Frame::Hello(hello), &mut Vec::new())?;
    Ok(stream)
}

/// Node `to`'s acceptor: a reader per connection, until [`Connections::close`].
fn accept_all(
    listener: &TcpListener,
    to: NodeId,
    handshake: &Handshake,
    shared: &Arc<Readers>,
    deliver: &Deliver,
    on_end: &OnEnd,
) {
    loop {
        let stream = match listener.accept() {
            Ok((stream, _)) => stream,
            Err(e) => {
                if !shared.closing.load(Ordering::Acquire) {
                    on_end(to, None, Some(format!("node {to}'s listener: {e}")));
                }
                return;
            }
        };
        if shared.closing.load(Ordering::Acquire) {
            return;
        }
        let peer = Arc::new(AtomicBool::new(false));
        match stream.try_clone() {
            Ok(kept) => shared
                .accepted
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(Accepted {
                    stream: kept,
                    peer: Arc::clone(&peer),
                }),
            Err(e) => {
                on_end(to, None, Some(format!("node {to}'s connection: {e}")));
                continue;
            }
        }
        let (deliver, ended) = (Arc::clone(deliver), Arc::clone(on_end));
        let (readers, handshake) = (Arc::clone(shared), handshake.clone());
        shared.running.fetch_add(1, Ordering::AcqRel);
        let reader = spawn(format!("repl-{to}-reader"), move || {
            let mut from = None;
            let checks = HelloChecks {
                to,
                handshake: &handshake,
                readers: &readers,
                peer: &peer,
            };
            let error = read_connection(stream, &checks, &*deliver, &mut from)
                .err()
                .map(|e| match from {
                    Some(f) => format!("node {to}'s connection from node {f}: {e}"),
                    None => format!("node {to}'s connection: {e}"),
                });
            readers.forget(&peer);
            readers.running.fetch_sub(1, Ordering::AcqRel);
            ended(to, from, error);
        });
        match reader {
            Ok(r) => shared.push_thread(r),
            Err(e) => {
                shared.running.fetch_sub(1, Ordering::AcqRel);
                return on_end(to, None, Some(format!("node {to}'s reader: {e}")));
            }
        }
    }
}

/// What a reader checks of a connection's hello, and where it records the peer.
struct HelloChecks<'a> {
    to: NodeId,
    handshake: &'a Handshake,
    readers: &'a Readers,
    /// Set once the hello passed.
    peer: &'a AtomicBool,
}

/// Turns on TCP keepalive, probing after `idle` without traffic, so that a peer host that
/// vanishes without closing its connection ends its reader (after about `idle` + 3 × 2 s).
fn keepalive(stream: &TcpStream, idle: Duration) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let fd = stream.as_raw_fd();
    let set = |level: libc::c_int, name: libc::c_int, value: libc::c_int| {
        // SAFETY: setsockopt on a socket this stream owns, with a c_int it reads for the call.
        let r = unsafe {
            libc::setsockopt(
                fd,
                level,
                name,
                (&raw const value).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            )
        };
        if r == 0 {
            Ok(())
        } else {
            Err(std::io::Error::last_os_error())
        }
    };
    set(libc::SOL_SOCKET, libc::SO_KEEPALIVE, 1)?;
    set(
        libc::IPPROTO_TCP,
        libc::TCP_KEEPIDLE,
        idle.as_secs().max(1) as libc::c_int,
    )?;
    set(libc::IPPROTO_TCP, libc::TCP_KEEPINTVL, 2)?;
    set(libc::IPPROTO_TCP, libc::TCP_KEEPCNT, 3)
}

/// Reads one connection to `checks.to` until it ends: sends its challenge, reads its hello
/// (checked: build, secret, settings, an id of another member not yet connected), then
/// messages. `peer` is set to the sender once its hello has passed. A connection that ends or
/// stays silent before its hello is no peer, and no error.
fn read_connection(
    stream: TcpStream,
    checks: &HelloChecks<'_>,
    deliver: &(dyn Fn(NodeId, NodeId, Msg, bool, u64) + Send + Sync),
    peer: &mut Option<NodeId>,
) -> Result<(), WireError> {
    let to = checks.to;
    let challenge: Challenge = challenge();
    if write_frame(&mut &stream, &Frame::Challenge(challenge), &mut Vec::new()).is_err() {
        // Gone before it could be challenged.
        return Ok(());
    }
    stream.set_read_timeout(Some(HELLO_TIMEOUT))?;
    let mut reader = FrameReader::new(BufReader::new(&stream));
    let from = match reader.next_frame() {
        Ok(Some(Frame::Hello(hello))) => {
            let ours = Hello::new(to, checks.handshake.cluster, &Secret::default(), &challenge);
            hello.check_proven(&ours, &checks.handshake.secret, &challenge)?;
            let from = hello.from;
            let refuse = |what: String| {
                Err(WireError::Io(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    what,
                )))
            };
            let nodes = checks.readers.nodes;
            if usize::from(from) >= nodes || from == to {
                return refuse(format!(
                    "node {from} said hello to node {to}, which expects nodes 0..{nodes} but itself"
                ));
            }
            let slot = &checks.readers.identified[usize::from(to) * nodes + usize::from(from)];
            if slot.swap(true, Ordering::AcqRel) {
                return refuse(format!("node {from} connected to node {to} twice"));
            }
            *peer = Some(from);
            checks.peer.store(true, Ordering::Release);
            stream.set_read_timeout(None)?;
            keepalive(&stream, HELLO_TIMEOUT)?;
            from
        }
        // A connection closed, or silent, before it said who it is: a port scan, a health
        // check, the cluster shutting down as it starts. No peer.
        Ok(None) | Err(WireError::Truncated { .. }) => return Ok(()),
        Err(WireError::Io(e))
            if matches!(
                e.kind(),
                std::io::ErrorKind::WouldBlock
                    | std::io::ErrorKind::TimedOut
                    | std::io::ErrorKind::ConnectionReset
            ) =>
        {
            return Ok(());
        }
        Err(e) => return Err(e),
        Ok(Some(Frame::Message { .. } | Frame::Challenge(_))) => {
            return Err(WireError::Io(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "a frame before the connection's hello",
            )));
        }
    };
    loop {
        match reader.next_frame() {
            Ok(Some(Frame::Message {
                msg,
                resent,
                delay_us,
            })) => deliver(to, from, msg, resent, delay_us),
            Ok(Some(Frame::Hello(_) | Frame::Challenge(_))) => {
                return Err(WireError::Io(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    format!("a second hello from node {from}"),
                )));
            }
            Ok(None) => return Ok(()),
            // Our own shutdown of the connection, seen from its reading end.
            Err(WireError::Io(e)) if e.kind() == std::io::ErrorKind::ConnectionReset => {
                return Ok(());
            }
            Err(e) => return Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::{Value, Versioned};

    #[test]
    fn every_pair_carries_its_messages_in_order_with_their_delays() {
        let got = Arc::new(std::sync::Mutex::new(Vec::new()));
        let sink = Arc::clone(&got);
        let deliver: Deliver = Arc::new(move |to, from, msg, resent, delay| {
            sink.lock().unwrap().push((to, from, msg, resent, delay));
        });
        let errors: OnEnd = Arc::new(|_, _, e| {
            if let Some(e) = e {
                panic!("{e}")
            }
        });
        let c = Connections::open(3, &handshake(), deliver, errors).unwrap();
        let mut sent = Vec::new();
        for from in 0..3u16 {
            for to in (0..3u16).filter(|&t| t != from) {
                for rid in 0..20u64 {
                    let entry = Versioned {
                        version: rid,
                        value: Value::new(rid, 100),
                    };
                    let msg = Msg::GetReply { rid, entry };
                    c.send(from, to, msg.clone(), rid % 2 == 0, rid * 10)
                        .unwrap();
                    sent.push((to, from, msg, rid % 2 == 0, rid * 10));
                }
            }
        }
        c.close();
        let got = got.lock().unwrap().clone();
        assert_eq!(got.len(), sent.len());
        // Per connection, in the order sent.
        for from in 0..3 {
            for to in 0..3 {
                let of = |v: &[(NodeId, NodeId, Msg, bool, u64)]| -> Vec<_> {
                    v.iter()
                        .filter(|m| m.0 == to && m.1 == from)
                        .cloned()
                        .collect()
                };
                assert_eq!(of(&got), of(&sent));
            }
        }
    }

    /// Two parts of one cluster, as two processes would hold them: nodes 0 and 1 in one, node 2
    /// in the other. Both bind first, then connect to each other's addresses; every pair
    /// carries its messages, and each part's close returns once both have closed.
    #[test]
    fn a_cluster_split_over_two_parts_connects_in_two_phases() {
        let got = Arc::new(std::sync::Mutex::new(Vec::new()));
        let sink = Arc::clone(&got);
        let deliver: Deliver = Arc::new(move |to, from, msg, _, _| {
            sink.lock().unwrap().push((to, from, msg));
        });
        let errors: OnEnd = Arc::new(|_, _, e| {
            if let Some(e) = e {
                panic!("{e}")
            }
        });
        let ip = IpAddr::V4(Ipv4Addr::LOCALHOST);
        let (a, b) = (
            Bound::bind(&[0, 1], ip).unwrap(),
            Bound::bind(&[2], ip).unwrap(),
        );
        let mut addresses = a.addresses().unwrap();
        addresses.extend(b.addresses().unwrap());
        addresses.sort();
        let addresses: Vec<SocketAddr> = addresses.into_iter().map(|(_, a)| a).collect();
        // Each part answers the other's hellos once it connects: the two connect at once, as
        // two processes do.
        let (a, b) = std::thread::scope(|s| {
            let (d, e) = (Arc::clone(&deliver), Arc::clone(&errors));
            let a = s.spawn(|| Connections::connect(a, &addresses, &handshake(), d, e));
            let b = Connections::connect(b, &addresses, &handshake(), deliver, errors).unwrap();
            (a.join().unwrap().unwrap(), b)
        });
        let mut sent = Vec::new();
        for (part, from) in [(&a, 0u16), (&a, 1), (&b, 2)] {
            for to in (0..3u16).filter(|&t| t != from) {
                let msg = Msg::BackupAck {
                    rid: u64::from(from) << 8 | u64::from(to),
                };
                part.send(from, to, msg.clone(), false, 0).unwrap();
                sent.push((to, from, msg));
            }
        }
        assert!(b.send(0, 1, Msg::BackupAck { rid: 0 }, false, 0).is_err());
        std::thread::scope(|s| {
            s.spawn(|| a.close());
            b.close();
        });
        let mut got = got.lock().unwrap().clone();
        got.sort_by_key(|m| (m.0, m.1));
        sent.sort_by_key(|m| (m.0, m.1));
        assert_eq!(got, sent);
    }

    /// The handshake of the tests' clusters.
    fn handshake() -> Handshake {
        Handshake {
            cluster: 7,
            secret: Secret::new(*b"a test cluster's secret"),
        }
    }

    /// The errors a part's connections end with, collected.
    fn collecting() -> (OnEnd, Arc<std::sync::Mutex<Vec<String>>>) {
        let errors = Arc::new(std::sync::Mutex::new(Vec::new()));
        let sink = Arc::clone(&errors);
        let on_end: OnEnd = Arc::new(move |_, _, e| {
            if let Some(e) = e {
                sink.lock().unwrap().push(e);
            }
        });
        (on_end, errors)
    }

    /// Connects to `at` as node `from` would, answering the challenge with a hello of
    /// `handshake`, and returns the open connection.
    fn say_hello(at: SocketAddr, from: NodeId, handshake: &Handshake) -> TcpStream {
        let mut stream = TcpStream::connect(at).unwrap();
        let Some(Frame::Challenge(c)) = FrameReader::new(&stream).next_frame().unwrap() else {
            panic!("no challenge");
        };
        let hello = Hello::new(from, handshake.cluster, &handshake.secret, &c);
        write_frame(&mut stream, &Frame::Hello(hello), &mut Vec::new()).unwrap();
        stream
    }

    /// Stands in for node `1`'s part at `listener`: answers `n` connections' hellos with
    /// challenges, and hands back the connections, open.
    fn node_1_answering(listener: TcpListener, n: usize) -> JoinHandle<Vec<TcpStream>> {
        std::thread::spawn(move || {
            (0..n)
                .map(|_| {
                    let (mut stream, _) = listener.accept().unwrap();
                    write_frame(&mut stream, &Frame::Challenge(challenge()), &mut Vec::new())
                        .unwrap();
                    let hello = FrameReader::new(&stream).next_frame().unwrap();
                    assert!(matches!(hello, Some(Frame::Hello(_))), "{hello:?}");
                    stream
                })
                .collect()
        })
    }

    /// Two nodes whose listeners are bound: a port scan's connect-and-close reaches node 0's
    /// listener before node 1 does. It is no peer: node 1 still connects, and its messages
    /// arrive.
    #[test]
    fn a_connection_that_closes_before_its_hello_is_no_peer() {
        let ip = IpAddr::V4(Ipv4Addr::LOCALHOST);
        let (a, b) = (
            Bound::bind(&[0], ip).unwrap(),
            Bound::bind(&[1], ip).unwrap(),
        );
        let addresses = vec![a.addresses().unwrap()[0].1, b.addresses().unwrap()[0].1];
        // First in node 0's backlog, so accepted first.
        drop(TcpStream::connect(addresses[0]).unwrap());
        let got = Arc::new(std::sync::Mutex::new(Vec::new()));
        let sink = Arc::clone(&got);
        let deliver: Deliver = Arc::new(move |to, from, msg, _, _| {
            sink.lock().unwrap().push((to, from, msg));
        });
        let (on_end, errors) = collecting();
        let (a, b) = std::thread::scope(|s| {
            let (d, e) = (Arc::clone(&deliver), Arc::clone(&on_end));
            let a = s.spawn(|| Connections::connect(a, &addresses, &handshake(), d, e));
            let b = Connections::connect(b, &addresses, &handshake(), deliver, on_end).unwrap();
            (a.join().unwrap().unwrap(), b)
        });
        b.send(1, 0, Msg::BackupAck { rid: 9 }, false, 0).unwrap();
        std::thread::scope(|s| {
            s.spawn(|| a.close());
            b.close();
        });
        assert_eq!(*got.lock().unwrap(), [(0, 1, Msg::BackupAck { rid: 9 })]);
        assert!(errors.lock().unwrap().is_empty(), "{errors:?}");
    }

    /// Closing does not wait for a stranger that connected and never spoke, nor beyond its
    /// grace for a peer that said hello and never closes (a host gone without a word). If it
    /// did, the watchdog closes their sockets, after a minute, and the test fails.
    #[test]
    fn close_waits_for_no_stranger_and_for_no_peer_that_never_closes() {
        let ip = IpAddr::V4(Ipv4Addr::LOCALHOST);
        let (a, mut b) = (
            Bound::bind(&[0], ip).unwrap(),
            Bound::bind(&[1], ip).unwrap(),
        );
        let addresses = vec![a.addresses().unwrap()[0].1, b.addresses().unwrap()[0].1];
        let deliver: Deliver = Arc::new(|_, _, _, _, _| {});
        let (on_end, errors) = collecting();
        let node_1 = node_1_answering(b.listeners.pop().unwrap().1, 1);
        let a = Connections::connect(a, &addresses, &handshake(), deliver, on_end).unwrap();
        let _from_0 = node_1.join().unwrap();
        let stranger = TcpStream::connect(addresses[0]).unwrap();
        // Node 1 says its hello to node 0 and never closes the connection.
        let silent_peer = say_hello(addresses[0], 1, &handshake());
        let (done, closed) = crossbeam::channel::bounded(1);
        let held = std::thread::scope(|s| {
            s.spawn(|| {
                a.close();
                let _ = done.send(());
            });
            let held = closed.recv_timeout(Duration::from_secs(60)).is_err();
            if held {
                let _ = stranger.shutdown(Shutdown::Both);
                let _ = silent_peer.shutdown(Shutdown::Both);
            }
            held
        });
        assert!(!held, "close waited for a connection that never closed");
        assert!(errors.lock().unwrap().is_empty(), "{errors:?}");
    }

    /// A peer that proves another secret (or none), claims an id out of range or its
    /// receiver's own, or connects twice, is refused by name and delivers nothing.
    #[test]
    fn a_peer_without_the_secret_or_with_a_bad_id_is_refused_by_name() {
        let ip = IpAddr::V4(Ipv4Addr::LOCALHOST);
        let (a, mut b) = (
            Bound::bind(&[0], ip).unwrap(),
            Bound::bind(&[1], ip).unwrap(),
        );
        let addresses = vec![a.addresses().unwrap()[0].1, b.addresses().unwrap()[0].1];
        let deliver: Deliver = Arc::new(|_, _, _, _, _| panic!("nothing may pass"));
        let (on_end, errors) = collecting();
        let node_1 = node_1_answering(b.listeners.pop().unwrap().1, 1);
        let a = Connections::connect(a, &addresses, &handshake(), deliver, on_end).unwrap();
        let from_0 = node_1.join().unwrap();
        let mut streams = Vec::new();
        for (from, secret) in [
            (1, Secret::new(*b"another cluster's secret")),
            (1, Secret::default()),
            (5, handshake().secret),
            (0, handshake().secret),
            (1, handshake().secret),
            (1, handshake().secret),
        ] {
            let theirs = Handshake {
                secret,
                ..handshake()
            };
            streams.push(say_hello(addresses[0], from, &theirs));
        }
        drop((streams, from_0));
        a.close();
        let mut errors = errors.lock().unwrap().clone();
        errors.sort();
        assert_eq!(
            errors,
            [
                "node 0's connection: connection error: node 0 said hello to node 0, which expects nodes 0..2 but itself",
                "node 0's connection: connection error: node 1 connected to node 0 twice",
                "node 0's connection: connection error: node 5 said hello to node 0, which expects nodes 0..2 but itself",
                "node 0's connection: node 1's hello does not prove the cluster's secret (another cluster file's secret, or none)",
                "node 0's connection: node 1's hello does not prove the cluster's secret (another cluster file's secret, or none)",
            ]
        );
    }

    #[test]
    fn a_peer_of_another_cluster_is_refused_by_name() {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        let at = listener.local_addr().unwrap();
        let theirs = Handshake {
            cluster: 99,
            ..handshake()
        };
        let hello = std::thread::spawn(move || say_hello(at, 4, &theirs));
        let (accepted, _) = listener.accept().unwrap();
        let readers = Readers {
            closing: AtomicBool::new(false),
            accepted: std::sync::Mutex::new(Vec::new()),
            running: AtomicUsize::new(0),
            identified: (0..100).map(|_| AtomicBool::new(false)).collect(),
            nodes: 10,
            threads: std::sync::Mutex::new(Vec::new()),
        };
        let peer_flag = AtomicBool::new(false);
        let checks = HelloChecks {
            to: 0,
            handshake: &handshake(),
            readers: &readers,
            peer: &peer_flag,
        };
        let mut peer = None;
        let refuse = |_, _, _, _, _| panic!("no message may pass a refused hello");
        let err = read_connection(accepted, &checks, &refuse, &mut peer).unwrap_err();
        drop(hello.join().unwrap());
        // Refused before it was taken for node 4.
        assert_eq!(peer, None);
        assert!(
            err.to_string()
                .contains("node 4 runs another cluster settings digest"),
            "{err}"
        );
    }
}
