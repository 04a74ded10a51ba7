//! The control connection between the coordinator of a net run and each node process: what
//! they say to each other, framed as the nodes' own connections are ([`wire`](super::wire)).
//!
//! No clock crosses it. A node measures its own run with its own clock and reports counts and
//! durations ([`RunFigures`]); the coordinator adds rates, never compares times of two hosts.
//! IspnPerfTest's controller collects per-node results the same way.

use std::io::BufReader;
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::NetError;
use super::wire::{FrameReader, Hello, write_frame};
use crate::driver::threads::{DriverStats, Progress};
use crate::history::TimedOp;
use crate::message::{Key, NodeId, Versioned};
use crate::node::NodeStats;
use crate::verifier::NodeSnapshot;
use crate::workload::RequesterStats;

/// What the coordinator tells a node process.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Command {
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
    /// The newest acknowledged entry of each key among them.
    pub newest: Vec<(Key, Versioned)>,
}

/// A node's state at the end of a net run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FinalReport {
    /// The node.
    pub node: NodeId,
    /// What the verifier needs of it.
    pub snapshot: NodeSnapshot,
    /// Its machine's counters.
    pub stats: NodeStats,
    /// What its threads did.
    pub driver: DriverStats,
    /// Its requesters' history check: `Ok`, or the first violation.
    pub history: Result<(), String>,
    /// Gets that history check compared.
    pub gets_checked: u64,
    /// Every successful operation of its requesters, timed on the host's monotonic clock, for
    /// the history check across the node processes of one host.
    pub ops: Vec<TimedOp>,
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

    /// Its halves, for a reader on a thread of its own (the coordinator's links).
    pub(super) fn split(self) -> (ControlReader, ControlWriter) {
        (self.reader, self.writer)
    }

    pub(super) fn send(&mut self, frame: &impl Serialize) -> Result<(), NetError> {
        self.writer.send(frame)
    }

    /// The next frame, waiting for ever; `None` where the other end closed the connection
    /// between two frames.
    pub(super) fn recv<T: DeserializeOwned>(&mut self) -> Result<Option<T>, NetError> {
        Ok(self.reader.next_as()?)
    }
}
