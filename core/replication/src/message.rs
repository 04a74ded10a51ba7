//! The vocabulary of the sans-IO protocols: ids, versioned values, wire messages, and the inputs
//! a node state machine takes and the outputs it emits. Upstream the messages are Infinispan's
//! replicable commands (`PutKeyValueCommand`, `ClusteredGetCommand`, the Triangle's backup-write
//! and ack commands) carried by JGroups; the model keeps only the fields the protocols read.
//!
//! A put carries real value bytes ([`Value`]: `value_size` bytes, IspnPerfTest's `msg_size`), so
//! messages, inputs and outputs are `Clone` but not `Copy`. A value is an immutable, shared
//! buffer: moving a message moves a pointer, and a clone (a backup fan-out, an entry read from the
//! data container) is a reference-count bump. Only [`Value::marshalled`] copies the bytes: the
//! threads and local drivers call it once per hop between two nodes, standing in for the
//! transport's marshal + unmarshal, so a receiver never shares its sender's buffer.

// Deviation from the house rule of taking `Arc` from `sync::primitive`: a value is immutable
// data handed between threads, not a synchronisation protocol loom checks, and loom's `Arc`
// cannot hold an unsized `[u8]`.
use std::sync::Arc;

use serde::{Deserialize, Serialize};

/// A node's index in the cluster view (0-based).
pub type NodeId = u16;

/// A cache key; IspnPerfTest uses the integers `1..=num_keys`, we use `0..keys`.
pub type Key = u32;

/// A value's bytes: immutable and shared, so cloning is a reference-count bump.
///
/// As IspnPerfTest writes a (uuid, counter) pair into each `new byte[msg_size]`, a value's first
/// 8 bytes hold a 64-bit tag naming the write (little-endian; see `workload::value_tag`) and the
/// rest are zero. The absent value (version 0) is empty, with tag 0, and allocates nothing.
/// Equality compares the bytes, so owners agree only if their whole payloads do.
///
/// A value is held either as its bytes ([`Value::new`], [`Value::from_bytes`]) or as their
/// description, tag and length ([`Value::described`]): the simulation never reads, copies or
/// marshals a value's bytes (its CPU model charges for them), and allocating 1000 bytes per put
/// and bumping their reference count in cold memory at every read would be most of a simulated
/// run's wall time. Both forms of the same bytes are equal and print alike.
#[derive(Clone, Default)]
pub struct Value(Repr);

#[derive(Clone, Default)]
enum Repr {
    #[default]
    Absent,
    Bytes(Arc<[u8]>),
    /// `len` bytes: the tag, then zeros.
    Described {
        tag: u64,
        len: usize,
    },
}

/// The bytes of a value's tag.
const TAG_BYTES: usize = 8;

impl Value {
    /// A fresh `size`-byte value holding `tag` in its first 8 bytes: one allocation, as
    /// `new byte[msg_size]`. Sizes below 8 are raised to 8 so that the tag fits; configurations
    /// reject them before a run (`WorkloadConfig::check`).
    pub fn new(tag: u64, size: usize) -> Self {
        // Zeroed at once (a `memset` or pages the allocator already zeroed), the tag written
        // in place, then moved into the shared buffer: filling it byte by byte from an iterator
        // costs a third of a simulated run's instructions.
        let mut bytes = vec![0u8; size.max(TAG_BYTES)];
        bytes[..TAG_BYTES].copy_from_slice(&tag.to_le_bytes());
        Value(Repr::Bytes(Arc::from(bytes)))
    }

    /// The bytes of [`Value::new`]`(tag, size)`, held as their description (no allocation): for
    /// the simulation, which never touches a value's bytes.
    pub fn described(tag: u64, size: usize) -> Self {
        Value(Repr::Described {
            tag,
            len: size.max(TAG_BYTES),
        })
    }

    /// A value holding exactly `bytes` (empty bytes: the absent value).
    pub fn from_bytes(bytes: &[u8]) -> Self {
        if bytes.is_empty() {
            Value(Repr::Absent)
        } else {
            Value(Repr::Bytes(Arc::from(bytes)))
        }
    }

    /// The tag in the first 8 bytes (0 for the absent value or a payload shorter than a tag).
    pub fn tag(&self) -> u64 {
        match &self.0 {
            Repr::Described { tag, .. } => *tag,
            _ => self
                .bytes()
                .get(..TAG_BYTES)
                .and_then(|b| b.try_into().ok())
                .map_or(0, u64::from_le_bytes),
        }
    }

    /// The payload's length in bytes (0 for the absent value).
    pub fn len(&self) -> usize {
        match &self.0 {
            Repr::Absent => 0,
            Repr::Bytes(b) => b.len(),
            Repr::Described { len, .. } => *len,
        }
    }

    /// Whether this is the absent (empty) value.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The payload (built on the fly for a described value).
    pub fn bytes(&self) -> std::borrow::Cow<'_, [u8]> {
        match &self.0 {
            Repr::Absent => std::borrow::Cow::Borrowed(&[]),
            Repr::Bytes(b) => std::borrow::Cow::Borrowed(b),
            Repr::Described { tag, len } => {
                let mut v = vec![0u8; *len];
                v[..TAG_BYTES].copy_from_slice(&tag.to_le_bytes());
                std::borrow::Cow::Owned(v)
            }
        }
    }

    /// A deep copy into a fresh allocation: what a transport's marshal and unmarshal do to a
    /// value, so that the receiver never shares the sender's buffer. One copy of the bytes
    /// stands in for both (a real transport copies twice: into the wire buffer and out of it).
    pub fn marshalled(&self) -> Value {
        Value::from_bytes(&self.bytes())
    }

    /// Whether `self` and `other` share one buffer (tests: a hop between nodes must not).
    pub fn shares_buffer(&self, other: &Value) -> bool {
        match (&self.0, &other.0) {
            (Repr::Bytes(a), Repr::Bytes(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }
}

impl PartialEq for Value {
    fn eq(&self, other: &Self) -> bool {
        match (&self.0, &other.0) {
            (Repr::Described { tag: a, len: m }, Repr::Described { tag: b, len: n }) => {
                a == b && m == n
            }
            _ => self.shares_buffer(other) || self.bytes() == other.bytes(),
        }
    }
}

impl Eq for Value {}

/// On the wire a value is its bytes, whatever its form here (a described value's are built),
/// so a message carries its whole payload as JGroups carries a marshalled command's; it arrives
/// as bytes of its own.
impl Serialize for Value {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_bytes(&self.bytes())
    }
}

impl<'de> Deserialize<'de> for Value {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Bytes;
        impl serde::de::Visitor<'_> for Bytes {
            type Value = Value;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a value's bytes")
            }
            fn visit_bytes<E: serde::de::Error>(self, bytes: &[u8]) -> Result<Value, E> {
                Ok(Value::from_bytes(bytes))
            }
        }
        deserializer.deserialize_bytes(Bytes)
    }
}

impl std::fmt::Debug for Value {
    /// Tag, length and an FNV-1a digest of the bytes, not the bytes themselves: a 1000-byte
    /// payload would drown an error message, and the digest still tells two payloads with the
    /// same tag apart.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let digest = self.bytes().iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        });
        write!(
            f,
            "Value {{ tag: {:#x}, len: {}, fnv: {digest:#018x} }}",
            self.tag(),
            self.len()
        )
    }
}

/// A value and the version the primary owner gave it under the key lock.
///
/// Version 0 means "absent"; the primary numbers writes of a key 1, 2, 3 ... in apply order.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Versioned {
    /// The write's position in the primary's apply order for this key.
    pub version: u64,
    /// The value's bytes (empty when absent).
    pub value: Value,
}

impl Versioned {
    /// The entry with its value deep-copied (see [`Value::marshalled`]).
    pub fn marshalled(&self) -> Versioned {
        Versioned {
            version: self.version,
            value: self.value.marshalled(),
        }
    }
}

/// Where a Triangle backup write sits in its segment's total order (`TriangleOrderManager`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SeqTag {
    /// The key's segment.
    pub segment: u16,
    /// The topology id the primary used when it took the sequence number.
    pub topology: u32,
    /// The per-segment, per-topology sequence number (starts at 1).
    pub seq: u64,
}

/// Why an operation failed; every failure is counted and reported, never hidden.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum OpError {
    /// The primary could not acquire the key lock within `lock_timeout` (ISPN000299).
    LockTimeout,
    /// A synchronous reply or ack did not arrive within `reply_timeout`.
    ReplyTimeout,
}

/// The outcome of a write at the primary, as carried back to the originator.
pub type PutResult = Result<u64, OpError>;

/// A wire message between nodes. Request ids are tokens of the node that waits for the answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Msg {
    /// Originator -> owner: read `key` (`ClusteredGetCommand`).
    Get {
        /// The originator's request id.
        rid: u64,
        /// The key to read.
        key: Key,
    },
    /// Owner -> originator: the owner's current entry (version 0 when absent).
    GetReply {
        /// The originator's request id.
        rid: u64,
        /// The entry read.
        entry: Versioned,
    },
    /// Originator -> primary: write `value` under `key` (`PutKeyValueCommand`).
    Put {
        /// The originator's request id.
        rid: u64,
        /// The key to write.
        key: Key,
        /// The value to write.
        value: Value,
    },
    /// Primary -> originator: the write's version, or why it failed.
    PutReply {
        /// The originator's request id.
        rid: u64,
        /// The version given to the write, or the failure.
        result: PutResult,
    },
    /// Primary -> backup: apply this entry (LockForwarding: a sync RPC; Triangle: ordered by `seq`).
    BackupWrite {
        /// LockForwarding: the primary's op id; Triangle: the originator's request id.
        rid: u64,
        /// Triangle: the node to ack (the originator).
        origin: NodeId,
        /// The key written.
        key: Key,
        /// The entry the primary applied.
        entry: Versioned,
        /// Triangle's segment order; unused (default) for LockForwarding.
        seq: SeqTag,
    },
    /// Backup -> primary: LockForwarding's synchronous reply to `BackupWrite`.
    BackupReply {
        /// The primary's op id.
        rid: u64,
    },
    /// Backup -> originator: Triangle's `BackupAckCommand`.
    BackupAck {
        /// The originator's request id.
        rid: u64,
    },
    /// Primary's replication worker -> backup: KeyQueue's "current value of key".
    Replicate {
        /// The worker's batch id, acked by the backup.
        wid: u64,
        /// The key replicated.
        key: Key,
        /// The primary's entry when the worker read it.
        entry: Versioned,
    },
    /// Backup -> primary: KeyQueue's replication ack.
    ReplicateAck {
        /// The worker's batch id.
        wid: u64,
    },
}

impl Msg {
    /// Bytes of value payload the message carries (0 for none): what a transport would copy,
    /// beyond the fixed-size header every message has.
    pub fn payload_len(&self) -> usize {
        match self {
            Msg::Put { value, .. } => value.len(),
            Msg::GetReply { entry, .. }
            | Msg::BackupWrite { entry, .. }
            | Msg::Replicate { entry, .. } => entry.value.len(),
            Msg::Get { .. }
            | Msg::PutReply { .. }
            | Msg::BackupReply { .. }
            | Msg::BackupAck { .. }
            | Msg::ReplicateAck { .. } => 0,
        }
    }

    /// The message as its receiver gets it from a real transport: its payload, if it carries
    /// one, deep-copied into a fresh allocation ([`Value::marshalled`]). The threads and local
    /// drivers deliver this for every message between two different nodes; the simulation
    /// moves the message itself.
    pub fn marshalled(self) -> Msg {
        match self {
            Msg::Put { rid, key, value } => Msg::Put {
                rid,
                key,
                value: value.marshalled(),
            },
            Msg::GetReply { rid, entry } => Msg::GetReply {
                rid,
                entry: entry.marshalled(),
            },
            Msg::BackupWrite {
                rid,
                origin,
                key,
                entry,
                seq,
            } => Msg::BackupWrite {
                rid,
                origin,
                key,
                entry: entry.marshalled(),
                seq,
            },
            Msg::Replicate { wid, key, entry } => Msg::Replicate {
                wid,
                key,
                entry: entry.marshalled(),
            },
            other => other,
        }
    }
}

/// An operation a requester thread issues.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClientOp {
    /// `cache.get(key)`.
    Get(Key),
    /// `cache.put(key, value)`.
    Put(Key, Value),
}

impl ClientOp {
    /// The key the operation reads or writes.
    pub fn key(&self) -> Key {
        match self {
            ClientOp::Get(k) | ClientOp::Put(k, _) => *k,
        }
    }

    /// Bytes of value payload the operation writes (0 for a get).
    pub fn payload_len(&self) -> usize {
        match self {
            ClientOp::Get(_) => 0,
            ClientOp::Put(_, value) => value.len(),
        }
    }
}

/// What a requester's operation returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// A get's entry (version 0: absent).
    Got(Versioned),
    /// A put was acknowledged with this entry: the version and value the primary applied.
    Put(Versioned),
    /// The operation failed.
    Failed(OpError),
}

/// Which of a node's pools a command holds a slot of: what a driver that backs slots with real
/// threads needs to know to pick the thread that runs it ([`Output::Execute`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlotKind {
    /// The remote-command pool.
    Pool,
    /// The transport's OOB pool (caller-runs overflow).
    Oob,
}

/// An input to a node state machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    /// Requester `requester` of this node issues `op`.
    Client {
        /// The requester's index on this node.
        requester: u32,
        /// The operation.
        op: ClientOp,
    },
    /// A message from another node arrived.
    Message {
        /// The sender.
        from: NodeId,
        /// The message.
        msg: Msg,
    },
    /// The node's wake-up timer fired (it checks its own deadlines).
    Timer,
    /// Threads driver: the worker thread that took slot `slot` runs its parked command now.
    Run {
        /// The slot id from [`Output::Execute`].
        slot: u64,
    },
    /// Threads driver: the worker thread of slot `slot` continues its command after
    /// [`Output::Resume`] (its key lock was granted while it was blocked).
    Resume {
        /// The slot id from [`Output::Resume`].
        slot: u64,
    },
    /// The failure detector reports that node `0`'s process is gone (net driver: killed).
    /// JGroups' FD and VERIFY_SUSPECT would end in a view without it; the model has no view
    /// change, so a protocol only stops waiting for the node where waiting would never end.
    Left(NodeId),
}

/// An output of a node state machine, for its driver to carry out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Output {
    /// Send `msg` to node `to` (never to the node itself: the machine loops those back).
    Send {
        /// The destination.
        to: NodeId,
        /// The message.
        msg: Msg,
    },
    /// The node's pools rejected `msg` from `from`; the sender's transport retransmits it later.
    Rejected {
        /// The original sender.
        from: NodeId,
        /// The rejected message.
        msg: Msg,
    },
    /// Requester `requester`'s operation completed.
    Reply {
        /// The requester's index on this node.
        requester: u32,
        /// The operation it issued.
        op: ClientOp,
        /// Its result.
        outcome: Outcome,
    },
    /// Wake the node (with [`Input::Timer`]) at virtual or elapsed time `at` µs, or earlier.
    SetTimer {
        /// The time in µs on the driver's clock.
        at: u64,
    },
    /// Real slots only: a command was admitted into slot `slot` and is parked until a thread of
    /// pool `kind` feeds [`Input::Run`] for it; that thread then holds the slot.
    Execute {
        /// The slot id.
        slot: u64,
        /// The pool whose thread must run it.
        kind: SlotKind,
    },
    /// Real slots only: wake the thread holding slot `slot` so that it feeds [`Input::Resume`]
    /// (the key lock its command waited for is now its own).
    Resume {
        /// The slot id.
        slot: u64,
    },
    /// Real slots only: slot `slot` was released; its thread may return to its pool.
    SlotFreed {
        /// The slot id.
        slot: u64,
    },
    /// Real slots only: the node's inbound path, blocked by a full pool under the `block`
    /// policy, delivered its last held message; the transport may deliver again.
    InboundResumed,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_holds_its_tag_in_zeroed_bytes_of_its_size() {
        let v = Value::new(0x0123_4567_89ab_cdef, 1000);
        assert_eq!((v.tag(), v.len()), (0x0123_4567_89ab_cdef, 1000));
        assert_eq!(v.bytes()[..8], 0x0123_4567_89ab_cdefu64.to_le_bytes());
        assert!(v.bytes()[8..].iter().all(|&b| b == 0));
        assert_eq!(Value::new(7, 3).len(), 8, "a tag always fits");
        let absent = Value::default();
        assert_eq!(
            (absent.tag(), absent.len(), absent.is_empty()),
            (0, 0, true)
        );
        assert_eq!(Versioned::default().value, absent);
    }

    #[test]
    fn a_described_value_is_the_value_of_its_bytes() {
        let v = Value::new(0xfeed, 1000);
        let d = Value::described(0xfeed, 1000);
        assert_eq!((d.tag(), d.len()), (0xfeed, 1000));
        assert_eq!(d, v);
        assert_eq!(v, d);
        assert_eq!(d.bytes(), v.bytes());
        assert_eq!(format!("{d:?}"), format!("{v:?}"));
        assert_eq!(d.marshalled(), v);
        assert!(!d.shares_buffer(&d.clone()), "nothing to share");
        assert_ne!(d, Value::described(0xfeed, 999));
        assert_ne!(d, Value::described(0xfeee, 1000));
        let mut bytes = v.bytes().to_vec();
        bytes[40] = 1;
        assert_ne!(d, Value::from_bytes(&bytes), "every byte counts");
        assert_eq!(Value::described(1, 3).len(), 8, "a tag always fits");
    }

    #[test]
    fn marshalling_copies_the_bytes_into_a_fresh_buffer() {
        let v = Value::new(42, 64);
        let shared = v.clone();
        assert!(
            shared.shares_buffer(&v),
            "a clone is a reference-count bump"
        );
        let copy = v.marshalled();
        assert_eq!(copy, v);
        assert!(!copy.shares_buffer(&v));
        let mut bytes = v.bytes().to_vec();
        bytes[40] = 1;
        let other = Value::from_bytes(&bytes);
        assert_eq!(other.tag(), v.tag());
        assert_ne!(other, v, "equality compares every byte, not just the tag");
        assert_ne!(format!("{other:?}"), format!("{v:?}"), "the digest differs");
        assert!(
            !Value::default()
                .marshalled()
                .shares_buffer(&Value::default())
        );
    }

    #[test]
    fn messages_report_and_marshal_their_payload() {
        let entry = Versioned {
            version: 3,
            value: Value::new(9, 100),
        };
        let msgs = [
            Msg::Put {
                rid: 1,
                key: 2,
                value: entry.value.clone(),
            },
            Msg::GetReply {
                rid: 1,
                entry: entry.clone(),
            },
            Msg::BackupWrite {
                rid: 1,
                origin: 0,
                key: 2,
                entry: entry.clone(),
                seq: SeqTag::default(),
            },
            Msg::Replicate {
                wid: 1,
                key: 2,
                entry: entry.clone(),
            },
        ];
        for m in msgs {
            assert_eq!(m.payload_len(), 100, "{m:?}");
            let copy = m.clone().marshalled();
            assert_eq!(copy, m);
            let (Msg::Put { value, .. }
            | Msg::GetReply {
                entry: Versioned { value, .. },
                ..
            }
            | Msg::BackupWrite {
                entry: Versioned { value, .. },
                ..
            }
            | Msg::Replicate {
                entry: Versioned { value, .. },
                ..
            }) = &copy
            else {
                unreachable!()
            };
            assert!(!value.shares_buffer(&entry.value), "{copy:?}");
        }
        for m in [
            Msg::Get { rid: 1, key: 2 },
            Msg::PutReply {
                rid: 1,
                result: Ok(1),
            },
            Msg::BackupReply { rid: 1 },
            Msg::BackupAck { rid: 1 },
            Msg::ReplicateAck { wid: 1 },
        ] {
            assert_eq!(m.payload_len(), 0);
            assert_eq!(m.clone().marshalled(), m);
        }
    }
}
