//! A requester thread's handle on a threads cluster (an IspnPerfTest invoker thread calling into
//! its node's cache): it steps its node's machine itself and blocks on its reply channel.

use std::sync::Arc;
use std::time::Duration;

use crossbeam::channel::{Receiver, RecvTimeoutError};

use super::ThreadsError;
use super::runtime::{ClusterRuntime, Reply};
use super::stepper::Stepper;
use crate::message::{ClientOp, Input, Key, NodeId, Outcome, Value};
use crate::verifier::AckLog;

/// A requester thread's handle on the cluster: it steps its node's machine itself.
pub struct ClusterClient {
    pub(super) node: NodeId,
    pub(super) requester: u32,
    pub(super) stepper: Stepper,
    pub(super) rx: Receiver<Reply>,
    pub(super) keys: u32,
    pub(super) wait: Duration,
    pub(super) acks: AckLog,
    /// For the history check of every op.
    pub(super) shared: Arc<ClusterRuntime>,
}

impl std::fmt::Debug for ClusterClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClusterClient")
            .field("node", &self.node)
            .field("requester", &self.requester)
            .finish()
    }
}

impl ClusterClient {
    /// Runs `op` on this client's node and blocks for its outcome; an acknowledged put is
    /// recorded in the client's ack log, and every outcome is checked against the puts of its
    /// key acknowledged (to any requester) before `op` was issued (see
    /// [`ThreadCluster::verify`](super::ThreadCluster::verify)).
    pub fn call(&mut self, op: ClientOp) -> Result<Outcome, ThreadsError> {
        let key = op.key();
        if key >= self.keys {
            return Err(ThreadsError::BadKey {
                key,
                keys: self.keys,
            });
        }
        let floor = self.shared.history.floor(key);
        let input = Input::Client {
            requester: self.requester,
            op,
        };
        if !self.stepper.step(input) {
            return Err(ThreadsError::ShutDown);
        }
        match self.rx.recv_timeout(self.wait) {
            Ok((op, outcome)) => {
                self.shared.history.done(&op, &outcome, floor);
                if let (ClientOp::Put(key, _), Outcome::Put(entry)) = (&op, &outcome) {
                    self.acks.record(*key, entry);
                }
                Ok(outcome)
            }
            Err(RecvTimeoutError::Timeout) => Err(ThreadsError::NoReply {
                node: self.node,
                waited_ms: self.wait.as_millis() as u64,
            }),
            Err(RecvTimeoutError::Disconnected) => Err(ThreadsError::ShutDown),
        }
    }

    /// `put(key, value)`.
    pub fn put(&mut self, key: Key, value: Value) -> Result<Outcome, ThreadsError> {
        self.call(ClientOp::Put(key, value))
    }

    /// `get(key)`.
    pub fn get(&mut self, key: Key) -> Result<Outcome, ThreadsError> {
        self.call(ClientOp::Get(key))
    }

    /// The puts this client saw acknowledged.
    pub fn acks(&self) -> &AckLog {
        &self.acks
    }

    /// Takes the ack log, leaving an empty one.
    pub fn take_acks(&mut self) -> AckLog {
        std::mem::replace(&mut self.acks, AckLog::new(self.keys))
    }
}
