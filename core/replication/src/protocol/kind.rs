//! The protocols by kind: every write protocol by its CLI id.
//!
//! A protocol's kind and its node factory are one concept, so the kind builds the machine
//! ([`ProtocolKind::new_node`], in `build.rs`) and no separate factory type exists;
//! [`WriteProtocol`](super::WriteProtocol) is the trait the protocols themselves implement. The
//! enum itself is a leaf: each protocol names its kind, and the node machine reports it.

use critsec_sync::kind::StrategyKind;

/// The three strategies, by their CLI id: the system's strategy kinds ([`StrategyKind`]);
/// `FromStr` and `Display` use the id.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub enum ProtocolKind {
    /// `lock-forwarding`: sync backup RPC while holding the key lock.
    LockForwarding,
    /// `key-queue`: unlock, then a de-duplicating FIFO of keys replicated by a worker.
    KeyQueue,
    /// `triangle`: per-segment sequence numbers, backups ack the originator.
    Triangle,
}

impl StrategyKind for ProtocolKind {
    const ALL: &'static [Self] = &[
        ProtocolKind::LockForwarding,
        ProtocolKind::KeyQueue,
        ProtocolKind::Triangle,
    ];

    /// The CLI id (the strategy file's stem in kebab-case).
    fn id(self) -> &'static str {
        match self {
            ProtocolKind::LockForwarding => "lock-forwarding",
            ProtocolKind::KeyQueue => "key-queue",
            ProtocolKind::Triangle => "triangle",
        }
    }
}

critsec_sync::strategy_kind_text!(ProtocolKind);

#[cfg(test)]
mod tests {
    use super::*;
    use critsec_sync::kind::ids;

    #[test]
    fn ids_are_the_protocol_files_and_parse_back() {
        assert_eq!(
            ids::<ProtocolKind>(),
            ["lock-forwarding", "key-queue", "triangle"]
        );
        for &k in ProtocolKind::ALL {
            assert_eq!(k.to_string().parse::<ProtocolKind>(), Ok(k));
        }
        let e = "paxos".parse::<ProtocolKind>().unwrap_err().to_string();
        assert_eq!(
            e,
            "unknown strategy `paxos`; valid are lock-forwarding, key-queue, triangle"
        );
    }
}
