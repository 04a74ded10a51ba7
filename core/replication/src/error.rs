//! Errors of the replication model: bad configurations and failed verifications. A driver's
//! own failures are its own errors, which wrap these (the simulation's drain cap cutting a run
//! is `sim::SimError::DrainCut`).

use super::message::{Key, NodeId, Versioned};

/// A configuration the model cannot run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// `num_owners` must be between 1 and the number of nodes.
    #[error("num_owners = {num_owners} is invalid for {nodes} nodes: use 1..={nodes}")]
    BadOwners {
        /// The requested owner count.
        num_owners: usize,
        /// The cluster size.
        nodes: usize,
    },
    /// A numeric setting is out of range.
    #[error("{name} = {value} is invalid: {valid}")]
    OutOfRange {
        /// The setting.
        name: &'static str,
        /// The rejected value.
        value: u64,
        /// What would be valid.
        valid: &'static str,
    },
    /// An unknown protocol or rejection policy name.
    #[error("unknown {what} `{given}`: valid are {valid}")]
    UnknownName {
        /// What kind of name.
        what: &'static str,
        /// The name given.
        given: String,
        /// The accepted names.
        valid: &'static str,
    },
    /// A get plan that may take a backup's answer, for a protocol whose backups may lag an
    /// acknowledged put: it would break the read guarantee.
    #[error(
        "get_plan = {plan} cannot keep {protocol}'s read guarantee: its backups may not yet hold \
         an acknowledged put, so its gets must ask the primary only (primary-first or protocol)"
    )]
    GetPlanBreaksReads {
        /// The protocol's id.
        protocol: &'static str,
        /// The plan's name.
        plan: &'static str,
    },
}

/// A consistency check the verifier found violated after quiescence.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VerifyError {
    /// The cluster still had work in flight when it was verified.
    #[error("node {node} is not quiescent: {what}")]
    NotQuiescent {
        /// The node.
        node: NodeId,
        /// What it still holds.
        what: String,
    },
    /// Two owners of a key hold different entries.
    #[error("key {key}: owner {a} has {ea:?} but owner {b} has {eb:?}")]
    OwnersDisagree {
        /// The key.
        key: Key,
        /// The primary owner.
        a: NodeId,
        /// Its entry.
        ea: Versioned,
        /// A backup owner.
        b: NodeId,
        /// Its entry.
        eb: Versioned,
    },
    /// An acknowledged write is missing (the owners hold an older version or another value).
    #[error("key {key}: acknowledged write {acked:?} lost, owners hold {found:?}")]
    AckedWriteLost {
        /// The key.
        key: Key,
        /// The newest acknowledged write.
        acked: Versioned,
        /// What the primary holds.
        found: Versioned,
    },
    /// Every node of the view is dead: there is no state left to check the acknowledged writes
    /// against, so nothing is verified.
    #[error(
        "no node survived (nodes {dead:?} were killed): {acked} acknowledged puts cannot be checked"
    )]
    NoSurvivors {
        /// The dead nodes.
        dead: Vec<NodeId>,
        /// Acknowledged puts that were to be checked.
        acked: u64,
    },
    /// A node applied an older version over a newer one.
    #[error("node {node} applied an older version over a newer one {count} times")]
    VersionRegression {
        /// The node.
        node: NodeId,
        /// How many times.
        count: u64,
    },
    /// A get returned an older version than one acknowledged before it started (the read
    /// guarantee of [`WriteProtocol`](crate::WriteProtocol); found by the history
    /// check during a run).
    #[error(
        "key {key}: a get that started after version {floor} was acknowledged returned version {got} ({count} stale reads in the run)"
    )]
    StaleRead {
        /// The key.
        key: Key,
        /// The newest version acknowledged when the get started.
        floor: u64,
        /// The version it returned.
        got: u64,
        /// Stale reads in the whole run.
        count: u64,
    },
    /// A put's acknowledgement is inconsistent with the history of its key (found by the
    /// history check during a run).
    #[error("key {key}: a put was {what}")]
    BadPutReply {
        /// The key.
        key: Key,
        /// What is wrong.
        what: String,
    },
    /// A Triangle backup's delivered sequence differs from the primary's sent sequence.
    #[error(
        "segment {segment}: primary {primary} sent seq {sent} but backup {backup} delivered {delivered}"
    )]
    SequenceGap {
        /// The segment.
        segment: u16,
        /// The primary owner.
        primary: NodeId,
        /// The last sequence number the primary took.
        sent: u64,
        /// The backup.
        backup: NodeId,
        /// The last sequence number the backup delivered.
        delivered: u64,
    },
}
