//! TCP connections between nodes, one per ordered pair, as JGroups' TCP transport keeps one per
//! pair of members: the sender's thread writes each message as a [`wire`](super::wire) frame
//! straight onto the connection (`TCP_NODELAY`, as JGroups sets it), and a reader thread per
//! connection on the receiving side turns frames back into messages for the receiver's transport.
//!
//! Every connection opens with a [`Hello`] that the receiver checks before it reads a message,
//! so a peer of another build or cluster is refused by name. A reader that meets bad bytes or a
//! refused hello reports the error and stops reading that connection; it never guesses.
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
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::thread::JoinHandle;

use critsec_sync::Mutex;

use super::wire::{Frame, FrameReader, Hello, WireError, write_frame};
use crate::message::{Msg, NodeId};

/// How long a node tries to open its connection to a peer.
pub const CONNECT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// What a reader does with a message that arrived: `(to, from, msg, resent, delay_us)`.
pub type Deliver = Arc<dyn Fn(NodeId, NodeId, Msg, bool, u64) + Send + Sync>;

/// What happens when a connection to a hosted node ends, or its listener fails:
/// `(to, from, error)`, `from` the peer once its hello was read, `error` `None` for a clean end
/// (the peer closed it). Every reader calls it once; a driver learns from it that a peer's
/// messages have all arrived, and which errors concern which peer.
pub type OnEnd = Arc<dyn Fn(NodeId, Option<NodeId>, Option<String>) + Send + Sync>;

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

/// Every connection from and to the nodes one process hosts.
pub struct Connections {
    /// `writers[from][to]`: `None` where `from` is not hosted here, and on the diagonal.
    writers: Vec<Option<Vec<Option<Mutex<Writer>>>>>,
    /// The hosted nodes' listener addresses and the connections each has accepted, to wake
    /// an acceptor still waiting for peers at [`Connections::close`].
    listening: Vec<(SocketAddr, Arc<AtomicUsize>)>,
    /// The connections each hosted node accepts: one from every other node.
    peers: usize,
    /// Acceptor and reader threads.
    threads: Arc<std::sync::Mutex<Vec<JoinHandle<()>>>>,
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
        cluster: u64,
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
        Self::connect(bound, &addresses, cluster, deliver, on_end)
    }

    /// Connects the nodes `bound` hosts to every node of the cluster, whose addresses are
    /// `addresses` by node id (the hosted ones' included), each connection opened with the
    /// sender's hello for a cluster whose settings digest to `cluster`, and accepts the other
    /// nodes' connections to the hosted ones as they come, with a reader per connection that
    /// hands each message to `deliver`.
    pub fn connect(
        bound: Bound,
        addresses: &[SocketAddr],
        cluster: u64,
        deliver: Deliver,
        on_end: OnEnd,
    ) -> Result<Self, WireError> {
        let nodes = addresses.len();
        let threads = Arc::new(std::sync::Mutex::new(Vec::new()));
        let mut listening = Vec::new();
        // Accept first, on threads of their own: the other processes connect when they are ready.
        for (to, listener) in bound.listeners.iter() {
            let listener = listener.try_clone()?;
            let accepted = Arc::new(AtomicUsize::new(0));
            listening.push((listener.local_addr()?, Arc::clone(&accepted)));
            let (to, deliver, on_end) = (*to, Arc::clone(&deliver), Arc::clone(&on_end));
            let threads_for = Arc::clone(&threads);
            let acceptor = spawn(format!("repl-{to}-accept"), move || {
                for _ in 1..nodes {
                    let stream = match listener.accept() {
                        Ok((stream, _)) => stream,
                        Err(e) => {
                            return on_end(to, None, Some(format!("node {to}'s listener: {e}")));
                        }
                    };
                    accepted.fetch_add(1, Ordering::AcqRel);
                    let (deliver, ended) = (Arc::clone(&deliver), Arc::clone(&on_end));
                    let ours = Hello::new(to, cluster);
                    let reader = spawn(format!("repl-{to}-reader"), move || {
                        let mut from = None;
                        let error = read_connection(stream, to, &ours, &*deliver, &mut from)
                            .err()
                            .map(|e| match from {
                                Some(f) => format!("node {to}'s connection from node {f}: {e}"),
                                None => format!("node {to}'s connection: {e}"),
                            });
                        ended(to, from, error);
                    });
                    match reader {
                        Ok(r) => threads_for
                            .lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .push(r),
                        Err(e) => {
                            return on_end(to, None, Some(format!("node {to}'s reader: {e}")));
                        }
                    }
                }
            })?;
            threads
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(acceptor);
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
                // A peer that does not answer (a wrong address in a cluster file, a host down)
                // is named, and does not hold the node up for the OS's minutes of retries.
                let mut stream =
                    TcpStream::connect_timeout(address, CONNECT_TIMEOUT).map_err(|e| {
                        WireError::Io(std::io::Error::new(
                            e.kind(),
                            format!("node {from} cannot reach node {to} at {address}: {e}"),
                        ))
                    })?;
                stream.set_nodelay(true)?;
                let mut buf = Vec::new();
                write_frame(
                    &mut stream,
                    &Frame::Hello(Hello::new(from, cluster)),
                    &mut buf,
                )?;
                row.push(Some(Mutex::new(
                    "replication.connection",
                    Writer { stream, buf },
                )));
            }
            writers[usize::from(from)] = Some(row);
        }
        Ok(Connections {
            writers,
            listening,
            peers: nodes - 1,
            threads,
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

    /// Closes the connections from the hosted nodes and waits for this process's acceptors and
    /// readers: a reader ends when its peer closes, so in a cluster split over processes this
    /// returns once every process has closed.
    pub fn close(&self) {
        for w in self.writers.iter().flatten().flatten().flatten() {
            let _ = w.lock().stream.shutdown(Shutdown::Both);
        }
        // An acceptor still waiting for peers that never came gets connections of ours instead,
        // which close before a hello, so their readers end at once. (A peer's connection still
        // in the backlog is accepted before them; a wake-up left over stays unaccepted.)
        for (address, accepted) in &self.listening {
            for _ in accepted.load(Ordering::Acquire)..self.peers {
                let _ = TcpStream::connect(address);
            }
        }
        loop {
            let next = self.threads.lock().unwrap_or_else(|e| e.into_inner()).pop();
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

/// Reads one connection to `to` until it ends: its hello, checked against `ours`, then messages.
/// `peer` is set to the sender once its hello has been read.
fn read_connection(
    stream: TcpStream,
    to: NodeId,
    ours: &Hello,
    deliver: &(dyn Fn(NodeId, NodeId, Msg, bool, u64) + Send + Sync),
    peer: &mut Option<NodeId>,
) -> Result<(), WireError> {
    let mut reader = FrameReader::new(BufReader::new(stream));
    let from = match reader.next_frame()? {
        Some(Frame::Hello(hello)) => {
            hello.check(ours)?;
            *peer = Some(hello.from);
            hello.from
        }
        // A connection closed before it said who it is (the cluster shutting down as it starts).
        None => return Ok(()),
        Some(Frame::Message { .. }) => {
            return Err(WireError::Io(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "a message before the connection's hello",
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
            Ok(Some(Frame::Hello(_))) => {
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
        let c = Connections::open(3, 7, deliver, errors).unwrap();
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
        let a = Connections::connect(a, &addresses, 7, Arc::clone(&deliver), Arc::clone(&errors))
            .unwrap();
        let b = Connections::connect(b, &addresses, 7, deliver, errors).unwrap();
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

    /// Node 1's part binds but never connects: node 0's part still closes (its acceptor, waiting
    /// for node 1, is woken by a connection of its own that ends before a hello).
    #[test]
    fn a_close_does_not_wait_for_a_peer_that_never_connected() {
        let ip = IpAddr::V4(Ipv4Addr::LOCALHOST);
        let (a, b) = (
            Bound::bind(&[0], ip).unwrap(),
            Bound::bind(&[1], ip).unwrap(),
        );
        let addresses = vec![a.addresses().unwrap()[0].1, b.addresses().unwrap()[0].1];
        let deliver: Deliver = Arc::new(|_, _, _, _, _| panic!("nothing is sent to node 0"));
        let errors: OnEnd = Arc::new(|_, _, e| {
            if let Some(e) = e {
                panic!("{e}")
            }
        });
        let a = Connections::connect(a, &addresses, 7, deliver, errors).unwrap();
        a.send(0, 1, Msg::BackupAck { rid: 1 }, false, 0).unwrap();
        a.close();
        drop(b);
    }

    #[test]
    fn a_peer_of_another_cluster_is_refused_by_name() {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        let mut stream = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let mut buf = Vec::new();
        write_frame(&mut stream, &Frame::Hello(Hello::new(4, 99)), &mut buf).unwrap();
        let (accepted, _) = listener.accept().unwrap();
        let mut peer = None;
        let refuse = |_, _, _, _, _| panic!("no message may pass a refused hello");
        let err = read_connection(accepted, 0, &Hello::new(0, 7), &refuse, &mut peer).unwrap_err();
        // Refused before it was taken for node 4.
        assert_eq!(peer, None);
        assert!(
            err.to_string()
                .contains("node 4 runs another cluster settings digest"),
            "{err}"
        );
    }
}
