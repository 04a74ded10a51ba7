//! TCP connections between nodes, one per ordered pair, as JGroups' TCP transport keeps one per
//! pair of members: the sender's thread writes each message as a [`wire`](super::wire) frame
//! straight onto the connection (`TCP_NODELAY`, as JGroups sets it), and a reader thread per
//! connection on the receiving side turns frames back into messages for the receiver's transport.
//!
//! Every connection opens with a [`Hello`] that the receiver checks before it reads a message,
//! so a peer of another build or cluster is refused by name. A reader that meets bad bytes or a
//! refused hello reports the error and stops reading that connection; it never guesses.
//!
//! Only the connections live here: what a message does when it arrives, and any clock, belong to
//! the driver that owns them (the threads driver's transport holds a message for the delay the
//! frame carries).

use std::io::BufReader;
use std::net::{Ipv4Addr, Shutdown, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::thread::JoinHandle;

use critsec_sync::Mutex;

use super::wire::{Frame, FrameReader, Hello, WireError, write_frame};
use crate::message::{Msg, NodeId};

/// What a reader does with a message that arrived: `(to, from, msg, resent, delay_us)`.
pub type Deliver = Arc<dyn Fn(NodeId, NodeId, Msg, bool, u64) + Send + Sync>;

/// What a reader does with the error that ended its connection.
pub type OnError = Arc<dyn Fn(String) + Send + Sync>;

/// The sending end of one connection, and its frame buffer.
struct Writer {
    stream: TcpStream,
    buf: Vec<u8>,
}

/// Every connection between the nodes of one process, over loopback.
pub struct Connections {
    /// `writers[from][to]`; `None` on the diagonal.
    writers: Vec<Vec<Option<Mutex<Writer>>>>,
    readers: std::sync::Mutex<Vec<JoinHandle<()>>>,
    /// Messages and bytes written, hellos not counted (Relaxed: statistics read after the run).
    frames: AtomicU64,
    bytes: AtomicU64,
}

impl std::fmt::Debug for Connections {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connections")
            .field("nodes", &self.writers.len())
            .finish()
    }
}

impl Connections {
    /// Connects every ordered pair of `nodes` nodes over loopback, each connection opened with
    /// the sender's hello for a cluster whose settings digest to `cluster`, and starts a reader
    /// per connection that hands each message to `deliver`.
    pub fn open(
        nodes: usize,
        cluster: u64,
        deliver: Deliver,
        on_error: OnError,
    ) -> Result<Self, WireError> {
        let listeners = (0..nodes)
            .map(|_| TcpListener::bind((Ipv4Addr::LOCALHOST, 0)))
            .collect::<Result<Vec<_>, _>>()?;
        let mut writers: Vec<Vec<Option<Mutex<Writer>>>> = Vec::with_capacity(nodes);
        // Connect first: the kernel completes each handshake into its listener's backlog, so
        // the accepts below find them waiting.
        for from in 0..nodes {
            let mut row = Vec::with_capacity(nodes);
            for (to, listener) in listeners.iter().enumerate() {
                if to == from {
                    row.push(None);
                    continue;
                }
                let mut stream = TcpStream::connect(listener.local_addr()?)?;
                stream.set_nodelay(true)?;
                let mut buf = Vec::new();
                let hello = Frame::Hello(Hello::new(from as NodeId, cluster));
                write_frame(&mut stream, &hello, &mut buf)?;
                row.push(Some(Mutex::new(
                    "replication.connection",
                    Writer { stream, buf },
                )));
            }
            writers.push(row);
        }
        let mut readers = Vec::new();
        for (to, listener) in listeners.iter().enumerate() {
            for _ in 1..nodes {
                let (stream, _) = listener.accept()?;
                let (deliver, on_error) = (Arc::clone(&deliver), Arc::clone(&on_error));
                let ours = Hello::new(to as NodeId, cluster);
                let reader = std::thread::Builder::new()
                    .name(format!("repl-{to}-reader"))
                    .stack_size(256 * 1024)
                    .spawn(move || {
                        if let Err(e) = read_connection(stream, to as NodeId, &ours, &*deliver) {
                            on_error(format!("node {to}'s connection: {e}"));
                        }
                    })?;
                readers.push(reader);
            }
        }
        Ok(Connections {
            writers,
            readers: std::sync::Mutex::new(readers),
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

    /// Closes every connection and waits for the readers to see their ends.
    pub fn close(&self) {
        for w in self.writers.iter().flatten().flatten() {
            let _ = w.lock().stream.shutdown(Shutdown::Both);
        }
        let readers = std::mem::take(&mut *self.readers.lock().unwrap_or_else(|e| e.into_inner()));
        for r in readers {
            let _ = r.join();
        }
    }
}

impl Drop for Connections {
    fn drop(&mut self) {
        self.close();
    }
}

/// Reads one connection to `to` until it ends: its hello, checked against `ours`, then messages.
fn read_connection(
    stream: TcpStream,
    to: NodeId,
    ours: &Hello,
    deliver: &(dyn Fn(NodeId, NodeId, Msg, bool, u64) + Send + Sync),
) -> Result<(), WireError> {
    let mut reader = FrameReader::new(BufReader::new(stream));
    let from = match reader.next_frame()? {
        Some(Frame::Hello(hello)) => {
            hello.check(ours)?;
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
        let errors: OnError = Arc::new(|e| panic!("{e}"));
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

    #[test]
    fn a_peer_of_another_cluster_is_refused_by_name() {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        let mut stream = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let mut buf = Vec::new();
        write_frame(&mut stream, &Frame::Hello(Hello::new(4, 99)), &mut buf).unwrap();
        let (accepted, _) = listener.accept().unwrap();
        let err = read_connection(accepted, 0, &Hello::new(0, 7), &|_, _, _, _, _| {
            panic!("no message may pass a refused hello")
        })
        .unwrap_err();
        assert!(
            err.to_string()
                .contains("node 4 runs another cluster settings digest"),
            "{err}"
        );
    }
}
