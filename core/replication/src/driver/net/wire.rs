//! The bytes between two node processes: what one node writes on its TCP connection to another,
//! and how the reader turns them back into frames or says why it cannot.
//!
//! JGroups' TCP transport writes each marshalled message as a length followed by its bytes on a
//! connection per pair of members, after a connection header naming the sender. So does this:
//! every frame is a 4-byte little-endian length, then the frame's postcard encoding (serde,
//! compact varints). A connection opens with [`Frame::Hello`], which names the sender and carries
//! the wire and build versions and a digest of the cluster's settings, so that two hosts running
//! different builds or different cluster files refuse each other with a message naming the node,
//! instead of misreading each other's bytes. A value travels as its bytes ([`Value`]'s
//! `Serialize`): the wire carries every payload byte a put writes, as a real transport does.
//!
//! A hello also proves that its sender holds the cluster's shared secret without sending it: the
//! receiver opens with a fresh random [`Frame::Challenge`], and the hello carries an HMAC-SHA256
//! of the challenge and the hello's own fields keyed by the secret ([`Secret::prove`]). A copied
//! hello proves nothing on another connection, and a stranger who reaches a port cannot pass for
//! a node of the cluster.
//!
//! A reader never trusts a length: one above [`MAX_FRAME`] is an error before anything is
//! allocated, and a stream that ends inside a frame is [`WireError::Truncated`], distinct from a
//! clean end between frames.

use std::io::{ErrorKind, Read, Write};

use hmac::{Hmac, Mac};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::message::{Msg, NodeId};

/// The wire format's version: a change to [`Frame`] or to a message's fields changes it.
pub const WIRE_VERSION: u16 = 2;

/// The largest frame a reader accepts, in bytes: far above any message (a put's payload is
/// `value_size` bytes, IspnPerfTest's default 1,000), far below what a corrupt length could ask
/// a reader to allocate.
pub const MAX_FRAME: usize = 16 << 20;

/// One unit on a connection between two node processes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Frame {
    /// The receiving end's first frame: the nonce the connecting node's hello must prove the
    /// cluster's secret over.
    Challenge(Challenge),
    /// The connecting end's first frame: who is speaking, and whether it can be understood.
    Hello(Hello),
    /// A message of the protocol from the connection's sender.
    Message {
        /// The message.
        msg: Msg,
        /// Resent on the receiver's request (UNICAST3's retransmission): if the receiver's pool
        /// rejects it again, it was asked for before.
        resent: bool,
        /// The user-space shaper's delay for this message, in µs: the link latency and jitter the
        /// sender drew (and a lost transmission's repair), which the receiver holds it for after
        /// it arrives, since this machine's kernel has no `netem` to delay it on the way.
        delay_us: u64,
    },
}

/// A connection's opening frame.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hello {
    /// The sender's [`WIRE_VERSION`].
    pub wire: u16,
    /// The sender's build (the crate's version): hosts of one cluster run one build.
    pub build: String,
    /// The sending node.
    pub from: NodeId,
    /// A digest of the settings that decide what a node does (protocol, cluster, links,
    /// workload, seed) as the sender read them: nodes started from different cluster files
    /// disagree here.
    pub cluster: u64,
    /// The HMAC of the receiver's challenge and the fields above, keyed by the cluster's secret.
    pub proof: [u8; 32],
}

/// A connection's nonce, sent by its receiving end ([`Frame::Challenge`]).
pub type Challenge = [u8; 16];

/// A fresh random challenge.
pub fn challenge() -> Challenge {
    rand::random()
}

/// The secret the nodes and the coordinator of one cluster share: from the cluster file, or
/// drawn afresh for each run whose processes this host starts. It never travels: a hello only
/// proves it. Empty where a cluster file has none (then a hello proves nothing but its settings).
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Secret(Vec<u8>);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Secret({} bytes)", self.0.len())
    }
}

impl Secret {
    /// A secret of these bytes.
    pub fn new(bytes: impl Into<Vec<u8>>) -> Self {
        Secret(bytes.into())
    }

    /// 32 random bytes, for one run.
    pub fn random() -> Self {
        Secret(rand::random::<[u8; 32]>().to_vec())
    }

    /// The secret as hex, to hand to a child process through its environment.
    pub fn to_hex(&self) -> String {
        self.0.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// The secret [`Self::to_hex`] wrote, or `None` for text that is not hex.
    pub fn from_hex(hex: &str) -> Option<Self> {
        if hex.len() % 2 != 0 {
            return None;
        }
        (0..hex.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok())
            .collect::<Option<Vec<u8>>>()
            .map(Secret)
    }

    /// Whether there is no secret.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    fn mac(&self, challenge: &Challenge, hello: &Hello) -> Hmac<sha2::Sha256> {
        let mut mac = <Hmac<sha2::Sha256> as Mac>::new_from_slice(&self.0)
            .expect("HMAC takes a key of any length");
        mac.update(b"critsec hello");
        mac.update(challenge);
        mac.update(&hello.wire.to_le_bytes());
        mac.update(&(hello.build.len() as u64).to_le_bytes());
        mac.update(hello.build.as_bytes());
        mac.update(&hello.from.to_le_bytes());
        mac.update(&hello.cluster.to_le_bytes());
        mac
    }

    /// The proof of `hello` over `challenge`.
    pub fn prove(&self, challenge: &Challenge, hello: &Hello) -> [u8; 32] {
        self.mac(challenge, hello).finalize().into_bytes().into()
    }

    /// Whether `hello` proves this secret over `challenge` (compared in constant time).
    pub fn verify(&self, challenge: &Challenge, hello: &Hello) -> bool {
        self.mac(challenge, hello)
            .verify_slice(&hello.proof)
            .is_ok()
    }
}

impl Hello {
    /// This build's hello from node `from` of a cluster whose settings digest to `cluster`,
    /// proving `secret` over the receiver's `challenge`.
    pub fn new(from: NodeId, cluster: u64, secret: &Secret, challenge: &Challenge) -> Self {
        let mut hello = Hello {
            wire: WIRE_VERSION,
            build: env!("CARGO_PKG_VERSION").to_string(),
            from,
            cluster,
            proof: [0; 32],
        };
        hello.proof = secret.prove(challenge, &hello);
        hello
    }

    /// Whether a peer's hello can be talked to by `ours`: the same wire version and build, a
    /// proof of `secret` over the `challenge` this end sent, and the same cluster settings.
    pub fn check_proven(
        &self,
        ours: &Hello,
        secret: &Secret,
        challenge: &Challenge,
    ) -> Result<(), WireError> {
        self.check_build(ours)?;
        if !secret.verify(challenge, self) {
            return Err(WireError::Unproven { node: self.from });
        }
        self.check(ours)
    }

    /// The error of a hello whose `what` is `theirs` where ours is `ours`.
    fn mismatch(&self, what: &'static str, theirs: String, ours: String) -> WireError {
        WireError::Mismatch {
            node: self.from,
            what,
            theirs,
            ours,
        }
    }

    fn check_build(&self, ours: &Hello) -> Result<(), WireError> {
        if self.wire != ours.wire {
            let (theirs, ours) = (self.wire.to_string(), ours.wire.to_string());
            return Err(self.mismatch("wire version", theirs, ours));
        }
        if self.build != ours.build {
            return Err(self.mismatch("build", self.build.clone(), ours.build.clone()));
        }
        Ok(())
    }

    /// Whether a peer's hello can be talked to by `ours`: the same wire version, build and
    /// cluster settings (its proof is [`Self::check_proven`]'s).
    pub fn check(&self, ours: &Hello) -> Result<(), WireError> {
        self.check_build(ours)?;
        if self.cluster != ours.cluster {
            return Err(self.mismatch(
                "cluster settings digest",
                format!("{:#018x}", self.cluster),
                format!("{:#018x}", ours.cluster),
            ));
        }
        Ok(())
    }
}

/// The digest a [`Hello`] carries of a cluster's settings: FNV-1a over their `Debug` text, so
/// that any setting that differs between two nodes' files makes them refuse each other.
pub fn settings_digest(settings: &impl std::fmt::Debug) -> u64 {
    format!("{settings:?}")
        .bytes()
        .fold(0xcbf2_9ce4_8422_2325, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        })
}

/// Why bytes could not be written or read as frames.
#[derive(Debug, thiserror::Error)]
pub enum WireError {
    /// The connection failed.
    #[error("connection error: {0}")]
    Io(#[from] std::io::Error),
    /// The stream ended inside a frame: `got` of the `wanted` bytes of its length or body.
    #[error("the connection closed inside a frame: {got} of {wanted} bytes")]
    Truncated {
        /// Bytes read.
        got: usize,
        /// Bytes the frame needed.
        wanted: usize,
    },
    /// A length beyond [`MAX_FRAME`]: a corrupt stream or not this protocol.
    #[error("a frame of {len} bytes is longer than the {MAX_FRAME} a frame may have")]
    TooLong {
        /// The length read.
        len: usize,
    },
    /// A body that is not a frame of this wire version.
    #[error("a frame that does not decode: {0}")]
    Decode(#[from] postcard::Error),
    /// A hello whose proof does not check: its sender does not hold the cluster's secret.
    #[error(
        "node {node}'s hello does not prove the cluster's secret (another cluster file's secret, or none)"
    )]
    Unproven {
        /// The node the hello claims to be.
        node: NodeId,
    },
    /// A peer that cannot be talked to.
    #[error("node {node} runs another {what}: {theirs}, here {ours}")]
    Mismatch {
        /// The peer.
        node: NodeId,
        /// What differs.
        what: &'static str,
        /// The peer's.
        theirs: String,
        /// Ours.
        ours: String,
    },
}

/// Appends `frame`, length first, to `out`. Generic because the control connection between a
/// coordinator and its node processes ([`control`](super::control)) uses the same framing.
pub fn encode<T: Serialize>(frame: &T, out: &mut Vec<u8>) -> Result<(), WireError> {
    let start = out.len();
    out.extend_from_slice(&[0; 4]);
    if let Err(e) = postcard::to_io(frame, &mut *out) {
        out.truncate(start);
        return Err(e.into());
    }
    let len = out.len() - start - 4;
    if len > MAX_FRAME {
        out.truncate(start);
        return Err(WireError::TooLong { len });
    }
    out[start..start + 4].copy_from_slice(&(len as u32).to_le_bytes());
    Ok(())
}

/// Writes `frame` to `to` (one `write_all` of the length and body).
pub fn write_frame<T: Serialize>(
    to: &mut impl Write,
    frame: &T,
    buf: &mut Vec<u8>,
) -> Result<(), WireError> {
    buf.clear();
    encode(frame, buf)?;
    to.write_all(buf)?;
    Ok(())
}

/// Reads frames from a connection.
#[derive(Debug)]
pub struct FrameReader<R> {
    inner: R,
    body: Vec<u8>,
}

impl<R: Read> FrameReader<R> {
    /// A reader of `inner` (buffer it: frames are read in two small reads each).
    pub fn new(inner: R) -> Self {
        FrameReader {
            inner,
            body: Vec::new(),
        }
    }

    /// The next frame, or `None` where the stream ends cleanly between two frames.
    pub fn next_frame(&mut self) -> Result<Option<Frame>, WireError> {
        self.next_as()
    }

    /// The next frame of type `T` (a [`Frame`], or a control frame), or `None` where the stream
    /// ends cleanly between two frames.
    pub fn next_as<T: DeserializeOwned>(&mut self) -> Result<Option<T>, WireError> {
        let mut len = [0u8; 4];
        match read_full(&mut self.inner, &mut len)? {
            0 => return Ok(None),
            4 => {}
            got => return Err(WireError::Truncated { got, wanted: 4 }),
        }
        let len = u32::from_le_bytes(len) as usize;
        if len > MAX_FRAME {
            return Err(WireError::TooLong { len });
        }
        self.body.resize(len, 0);
        let got = read_full(&mut self.inner, &mut self.body)?;
        if got < len {
            return Err(WireError::Truncated { got, wanted: len });
        }
        Ok(Some(decode_as(&self.body)?))
    }
}

/// The frame whose postcard encoding is exactly `body`.
#[cfg(test)]
pub fn decode(body: &[u8]) -> Result<Frame, WireError> {
    decode_as(body)
}

/// The `T` whose postcard encoding is exactly `body`.
pub fn decode_as<T: DeserializeOwned>(body: &[u8]) -> Result<T, WireError> {
    let (frame, rest) = postcard::take_from_bytes::<T>(body)?;
    if !rest.is_empty() {
        return Err(WireError::Decode(postcard::Error::DeserializeBadEncoding));
    }
    Ok(frame)
}

/// Reads until `buf` is full or the stream ends; the bytes read.
fn read_full(from: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match from.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::message::{OpError, SeqTag, Value, Versioned};

    fn value() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(Value::default()),
            (any::<u64>(), 0usize..64).prop_map(|(tag, len)| Value::new(tag, len)),
            (any::<u64>(), 0usize..2000).prop_map(|(tag, len)| Value::described(tag, len)),
        ]
    }

    fn entry() -> impl Strategy<Value = Versioned> {
        (any::<u64>(), value()).prop_map(|(version, value)| Versioned { version, value })
    }

    fn msg() -> impl Strategy<Value = Msg> {
        let seq =
            (any::<u16>(), any::<u32>(), any::<u64>()).prop_map(|(segment, topology, seq)| {
                SeqTag {
                    segment,
                    topology,
                    seq,
                }
            });
        let result = prop_oneof![
            any::<u64>().prop_map(Ok),
            Just(Err(OpError::LockTimeout)),
            Just(Err(OpError::ReplyTimeout)),
        ];
        prop_oneof![
            (any::<u64>(), any::<u32>()).prop_map(|(rid, key)| Msg::Get { rid, key }),
            (any::<u64>(), entry()).prop_map(|(rid, entry)| Msg::GetReply { rid, entry }),
            (any::<u64>(), any::<u32>(), value()).prop_map(|(rid, key, value)| Msg::Put {
                rid,
                key,
                value
            }),
            (any::<u64>(), result).prop_map(|(rid, result)| Msg::PutReply { rid, result }),
            (any::<u64>(), any::<u16>(), any::<u32>(), entry(), seq).prop_map(
                |(rid, origin, key, entry, seq)| Msg::BackupWrite {
                    rid,
                    origin,
                    key,
                    entry,
                    seq
                }
            ),
            any::<u64>().prop_map(|rid| Msg::BackupReply { rid }),
            any::<u64>().prop_map(|rid| Msg::BackupAck { rid }),
            (any::<u64>(), any::<u32>(), entry()).prop_map(|(wid, key, entry)| Msg::Replicate {
                wid,
                key,
                entry
            }),
            any::<u64>().prop_map(|wid| Msg::ReplicateAck { wid }),
        ]
    }

    /// Node `from`'s hello for `cluster`, with no secret over a zero challenge.
    fn hello(from: NodeId, cluster: u64) -> Hello {
        Hello::new(from, cluster, &Secret::default(), &[0; 16])
    }

    fn frame() -> impl Strategy<Value = Frame> {
        prop_oneof![
            (any::<u16>(), any::<u64>())
                .prop_map(|(from, cluster)| Frame::Hello(hello(from, cluster))),
            any::<Challenge>().prop_map(Frame::Challenge),
            (msg(), any::<bool>(), any::<u64>()).prop_map(|(msg, resent, delay_us)| {
                Frame::Message {
                    msg,
                    resent,
                    delay_us,
                }
            }),
        ]
    }

    proptest! {
        /// Frames written back to back read back equal, payload bytes included, and the
        /// stream then ends cleanly.
        #[test]
        fn frames_read_back_as_written(frames in prop::collection::vec(frame(), 0..8)) {
            let mut bytes = Vec::new();
            for f in &frames {
                encode(f, &mut bytes).unwrap();
            }
            let mut reader = FrameReader::new(bytes.as_slice());
            for f in &frames {
                prop_assert_eq!(reader.next_frame().unwrap(), Some(f.clone()));
            }
            prop_assert!(reader.next_frame().unwrap().is_none());
        }

        /// A stream cut anywhere inside a frame is `Truncated`, never a frame or a clean end.
        #[test]
        fn a_stream_cut_inside_a_frame_is_truncated(f in frame(), cut in any::<prop::sample::Index>()) {
            let mut bytes = Vec::new();
            encode(&f, &mut bytes).unwrap();
            let cut = 1 + cut.index(bytes.len() - 1);
            let mut reader = FrameReader::new(&bytes[..cut]);
            let truncated = matches!(reader.next_frame(), Err(WireError::Truncated { .. }));
            prop_assert!(truncated);
        }

        /// Arbitrary bytes never panic a reader: each read is a frame, a clean end or an error.
        #[test]
        fn garbage_is_an_error_not_a_panic(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
            let mut reader = FrameReader::new(bytes.as_slice());
            while let Ok(Some(_)) = reader.next_frame() {}
        }
    }

    #[test]
    fn a_payload_travels_as_its_bytes_and_arrives_in_a_buffer_of_its_own() {
        let sent = Value::new(7, 1000);
        let frame = Frame::Message {
            msg: Msg::Put {
                rid: 1,
                key: 2,
                value: sent.clone(),
            },
            resent: false,
            delay_us: 0,
        };
        let mut bytes = Vec::new();
        encode(&frame, &mut bytes).unwrap();
        assert!(bytes.len() > 1000, "the frame carries the payload's bytes");
        let Frame::Message {
            msg: Msg::Put { value, .. },
            ..
        } = decode(&bytes[4..]).unwrap()
        else {
            panic!("a put");
        };
        assert_eq!(value, sent);
        assert!(!value.shares_buffer(&sent));
    }

    #[test]
    fn a_length_beyond_the_limit_is_refused_before_reading_the_body() {
        let bytes = ((MAX_FRAME + 1) as u32).to_le_bytes();
        let err = FrameReader::new(&bytes[..]).next_frame().unwrap_err();
        assert!(matches!(err, WireError::TooLong { len } if len == MAX_FRAME + 1));
    }

    #[test]
    fn trailing_bytes_after_a_frame_body_are_refused() {
        let mut bytes = Vec::new();
        encode(
            &Frame::Message {
                msg: Msg::BackupAck { rid: 3 },
                resent: true,
                delay_us: 5,
            },
            &mut bytes,
        )
        .unwrap();
        bytes.push(0);
        let len = (bytes.len() - 4) as u32;
        bytes[..4].copy_from_slice(&len.to_le_bytes());
        assert!(matches!(
            FrameReader::new(bytes.as_slice()).next_frame(),
            Err(WireError::Decode(_))
        ));
    }

    #[test]
    fn a_peer_of_another_build_wire_or_cluster_is_named_in_the_error() {
        let ours = hello(0, 42);
        assert!(hello(3, 42).check(&ours).is_ok());
        let other_cluster = hello(3, 43).check(&ours).unwrap_err().to_string();
        assert!(other_cluster.contains("node 3") && other_cluster.contains("cluster settings"));
        let other_build = Hello {
            build: "0.0.1".into(),
            ..hello(5, 42)
        };
        let msg = other_build.check(&ours).unwrap_err().to_string();
        assert!(msg.contains("node 5 runs another build: 0.0.1"), "{msg}");
        let other_wire = Hello {
            wire: WIRE_VERSION + 1,
            ..hello(6, 42)
        };
        assert!(
            other_wire
                .check(&ours)
                .unwrap_err()
                .to_string()
                .contains("wire version")
        );
    }

    /// A hello proves the secret over the receiver's challenge without carrying it: the same
    /// secret and challenge check; another secret, no secret, another challenge (a hello
    /// replayed on another connection) or a changed field are refused, naming the node.
    #[test]
    fn a_hello_proves_the_secret_over_the_challenge_without_sending_it() {
        let secret = Secret::new(*b"the cluster's shared secret text");
        let (challenge, other) = (challenge(), challenge());
        assert_ne!(challenge, other);
        let ours = Hello::new(0, 42, &secret, &other);
        let theirs = Hello::new(3, 42, &secret, &challenge);
        assert!(theirs.check_proven(&ours, &secret, &challenge).is_ok());
        let mut bytes = Vec::new();
        encode(&Frame::Hello(theirs.clone()), &mut bytes).unwrap();
        assert!(
            !bytes.windows(8).any(|w| w == &b"the cluster's shared"[..8]),
            "the hello carries the secret"
        );
        let refused = |h: &Hello, c: &Challenge| h.check_proven(&ours, &secret, c).unwrap_err();
        for (h, c) in [
            (
                Hello::new(3, 42, &Secret::new(*b"another secret"), &challenge),
                challenge,
            ),
            (Hello::new(3, 42, &Secret::default(), &challenge), challenge),
            (theirs.clone(), other),
            (
                Hello {
                    from: 4,
                    ..theirs.clone()
                },
                challenge,
            ),
        ] {
            let e = refused(&h, &c).to_string();
            assert!(
                e.starts_with(&format!(
                    "node {}'s hello does not prove the cluster's secret",
                    h.from
                )),
                "{e}"
            );
        }
        // Secrets travel to child processes as hex.
        assert_eq!(Secret::from_hex(&secret.to_hex()), Some(secret));
        assert_eq!(Secret::from_hex("0g"), None);
    }
}
