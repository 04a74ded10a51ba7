//! The control connection between the coordinator of a net run and each node process: what
//! they say to each other, framed as the nodes' own connections are ([`wire`](super::wire)).
//!
//! Nothing a node reports grows with the run in one frame: the acks and the final state carry
//! each value's fingerprint ([`fingerprint`]) in place of its bytes, which the verifier compares
//! as it would the bytes, and the timed operations and the acks travel in bounded chunks
//! ([`OPS_PER_FRAME`], [`ACKS_PER_FRAME`]).
//!
//! No clock crosses it. A node measures its own run with its own clock and reports counts and
//! durations ([`RunFigures`]); the coordinator adds rates, never compares times of two hosts.
//! IspnPerfTest's controller collects per-node results the same way.

use std::io::BufReader;
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use crossbeam::channel::Receiver;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use sha2::Digest;

use super::NetError;
use super::wire::{Challenge, FrameReader, Hello, write_frame};
use crate::driver::threads::{DriverStats, Progress};
use crate::history::TimedOp;
use crate::message::{Key, NodeId, Value, Versioned};
use crate::node::NodeStats;
use crate::verifier::NodeSnapshot;
use crate::workload::RequesterStats;

/// What the coordinator tells a node process.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Command {
    /// The coordinator's first frame: the nonce the node's hello proves the secret over.
    Challenge(Challenge),
    /// Every node's address, by node id: connect to them and answer [`Event::Connected`].
    Peers(Vec<SocketAddr>),
    /// Run the node's requesters for `millis` ms and answer [`Event::Ran`].
    Run {
        /// How long the requesters run before the measured part: each run starts them afresh,
        /// and what builds up under load (a hot key's queue of lock waiters) needs time to.
        settle_millis: u64,
        /// How long the measured part lasts, on the node's own clock.
        millis: u64,
    },
    /// Answer [`Event::Progress`].
    Poll,
    /// Answer [`Event::Final`].
    Report,
    /// A node's process is gone: drop messages to it, and do not fail the run on its
    /// connections' errors. No answer.
    Gone(NodeId),
    /// Close the node's connections and exit.
    Exit,
}

/// What a node process tells the coordinator.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum Event {
    /// The first frame: who the node is, and the address it listens on.
    Joined {
        /// The node's hello, checked as a peer's is.
        hello: Hello,
        /// Where the other nodes connect to it.
        address: SocketAddr,
    },
    /// Connected to every other node.
    Connected,
    /// Puts the node's requesters saw acknowledged since its last such event, sent every
    /// [`ACK_FLUSH`] while a run goes on and once more before [`Event::Ran`]: so the writes
    /// acknowledged to a node killed mid-run are checked up to its last flush. What it saw after
    /// that died with it, as a client's knowledge dies with the client.
    Acked(Acked),
    /// One run's figures.
    Ran(Box<RunFigures>),
    /// Where the node's messages stand.
    Progress(Progress),
    /// Some of the node's timed operations since its last report, at most [`OPS_PER_FRAME`],
    /// sent before [`Event::Final`].
    Ops(Vec<TimedOp>),
    /// The node's state for the verifier, and its counters.
    Final(Box<FinalReport>),
    /// The node process failed, and why; it exits after saying so.
    Failed(String),
}

/// What one node's requesters did in one run, measured by the node.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct RunFigures {
    /// The node.
    pub node: NodeId,
    /// The measured window's length on the node's clock: from the end of the settling until
    /// the requesters stop issuing.
    pub nanos: u64,
    /// Latencies and failures of its requesters' operations that ended inside the window.
    pub requesters: RequesterStats,
    /// Replies that did not match their request (a get of another key's value, a put acked with
    /// another value).
    pub mismatches: u64,
    /// Calls that got no reply at all from the node's own machine.
    pub errors: u64,
    /// The node's machine counters over the window ([`NodeStats::since`]).
    pub stats: NodeStats,
    /// Messages the node has sent since it started, read after its requesters' last replies.
    pub messages_total: u64,
    /// Operations its requesters have ended (answered or failed) since the node started.
    pub requests_total: u64,
}

/// How often a running node process sends the coordinator its requesters' new acks.
pub const ACK_FLUSH: Duration = Duration::from_millis(100);

/// Acknowledged puts since a node process's last [`Event::Acked`].
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Acked {
    /// How many puts were acknowledged.
    pub count: u64,
    /// The newest acknowledged entry of each key among them, its value a [`fingerprint`]; at
    /// most [`ACKS_PER_FRAME`].
    pub newest: Vec<(Key, Versioned)>,
}

/// The most timed operations one [`Event::Ops`] carries: far below a frame's limit at their
/// largest encoding (36 bytes each).
pub const OPS_PER_FRAME: usize = 100_000;

/// The most entries one [`Event::Acked`] carries (at most 64 bytes each, fingerprinted).
pub const ACKS_PER_FRAME: usize = 100_000;

/// What stands for a value in a node's reports: its tag and length, then the SHA-256 of its
/// bytes, as a value of its own (the absent value stays absent). Two fingerprints are equal
/// exactly when the values' bytes are (short of a SHA-256 collision), so the verifier, comparing
/// fingerprints as it compares values, still finds an acknowledged write whose bytes differ;
/// and a report's size no longer grows with `value_size`.
pub fn fingerprint(value: &Value) -> Value {
    if value.is_empty() {
        return Value::default();
    }
    let bytes = value.bytes();
    let mut out = Vec::with_capacity(48);
    out.extend_from_slice(&value.tag().to_le_bytes());
    out.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
    out.extend_from_slice(&sha2::Sha256::digest(&bytes));
    Value::from_bytes(&out)
}

/// `entry` with its value's [`fingerprint`].
pub fn fingerprinted(entry: &Versioned) -> Versioned {
    Versioned {
        version: entry.version,
        value: fingerprint(&entry.value),
    }
}

/// A node's state at the end of a net run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FinalReport {
    /// The node.
    pub node: NodeId,
    /// What the verifier needs of it, each value a [`fingerprint`].
    pub snapshot: NodeSnapshot,
    /// Its machine's counters.
    pub stats: NodeStats,
    /// What its threads did.
    pub driver: DriverStats,
    /// Its requesters' history check: `Ok`, or the first violation.
    pub history: Result<(), String>,
    /// Gets that history check compared.
    pub gets_checked: u64,
    /// The first error of one of its connections.
    pub link_error: Option<String>,
}

/// One end of a control connection: frames written and read as the nodes' own connections
/// frame theirs ([`wire`](super::wire)), [`Command`]s one way and [`Event`]s the other.
#[derive(Debug)]
pub(super) struct ControlStream {
    reader: ControlReader,
    writer: ControlWriter,
}

/// The reading half of a [`ControlStream`].
pub(super) type ControlReader = FrameReader<BufReader<TcpStream>>;

/// The writing half of a [`ControlStream`].
#[derive(Debug)]
pub(super) struct ControlWriter {
    stream: TcpStream,
    buf: Vec<u8>,
}

impl ControlWriter {
    pub(super) fn send(&mut self, frame: &impl Serialize) -> Result<(), NetError> {
        Ok(write_frame(&mut self.stream, frame, &mut self.buf)?)
    }

    /// Closes the connection both ways, which also ends its reader's wait.
    pub(super) fn shut(&self) {
        let _ = self.stream.shutdown(std::net::Shutdown::Both);
    }
}

impl ControlStream {
    pub(super) fn new(stream: TcpStream) -> Result<Self, NetError> {
        stream.set_nodelay(true)?;
        Ok(ControlStream {
            reader: FrameReader::new(BufReader::new(stream.try_clone()?)),
            writer: ControlWriter {
                stream,
                buf: Vec::new(),
            },
        })
    }

    /// Its halves, for a reader on a thread of its own.
    pub(super) fn split(self) -> (ControlReader, ControlWriter) {
        (self.reader, self.writer)
    }
}

/// Reads `reader`'s frames on a thread of its own, in order, into the returned channel; its
/// last item is the end of the connection (`Ok(None)`) or its error. Both ends read so: a
/// coordinator's links, so that a node streaming its acks never waits for the coordinator to
/// read them; and a node's control, so that it sees its coordinator go at once, even mid-run.
pub(super) fn read_on_a_thread<T: DeserializeOwned + Send + 'static>(
    mut reader: ControlReader,
) -> Result<Receiver<Result<Option<T>, NetError>>, NetError> {
    let (sender, items) = crossbeam::channel::unbounded();
    std::thread::Builder::new()
        .name("critsec-control".into())
        .spawn(move || {
            loop {
                let item: Result<Option<T>, NetError> = reader.next_as().map_err(NetError::from);
                let end = !matches!(item, Ok(Some(_)));
                if sender.send(item).is_err() || end {
                    break;
                }
            }
        })?;
    Ok(items)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::net::wire::{MAX_FRAME, encode};

    /// A fingerprint stands for the bytes: equal bytes give equal fingerprints in any buffer;
    /// one changed byte, or another length, gives another; it keeps the tag, and is small.
    #[test]
    fn a_fingerprint_tells_values_apart_as_their_bytes_do() {
        let v = Value::new(7, 50_000);
        assert_eq!(fingerprint(&v), fingerprint(&v.marshalled()));
        assert_eq!(fingerprint(&v), fingerprint(&Value::described(7, 50_000)));
        let mut bytes = v.bytes().to_vec();
        bytes[49_999] ^= 1;
        assert_ne!(fingerprint(&v), fingerprint(&Value::from_bytes(&bytes)));
        assert_ne!(fingerprint(&v), fingerprint(&Value::new(7, 50_001)));
        assert_eq!(fingerprint(&v).tag(), 7);
        assert_eq!(fingerprint(&v).len(), 48);
        assert!(fingerprint(&Value::default()).is_empty());
    }

    /// The chunks a node sends fit a frame at their largest: a full chunk of operations and of
    /// fingerprinted acks, every field at its widest, encodes.
    #[test]
    fn a_full_chunk_of_ops_or_acks_fits_a_frame() {
        let op = TimedOp {
            key: u32::MAX,
            put: true,
            issued_ns: u64::MAX,
            done_ns: u64::MAX,
            version: u64::MAX,
        };
        let mut out = Vec::new();
        encode(&Event::Ops(vec![op; OPS_PER_FRAME]), &mut out).unwrap();
        let entry = (
            u32::MAX,
            Versioned {
                version: u64::MAX,
                value: fingerprint(&Value::new(u64::MAX, 1 << 20)),
            },
        );
        let acked = Acked {
            count: u64::MAX,
            newest: vec![entry; ACKS_PER_FRAME],
        };
        out.clear();
        encode(&Event::Acked(acked), &mut out).unwrap();
        assert!(out.len() <= MAX_FRAME);
    }
}
