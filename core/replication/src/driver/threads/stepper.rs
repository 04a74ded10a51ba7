//! One thread's step of its node's machine: feed one input under the node mutex, turn the
//! outputs into actions, and carry them out after the mutex is released.
//!
//! Why no wake-up is lost: a signal is created and registered (under the node mutex) when the
//! machine announces `Execute`, before any thread can see the slot; every later `Resume` or
//! `SlotFreed` for that slot is produced under the same mutex, so it finds the signal; the post
//! itself happens after the node mutex is released and sets the signal's state before
//! notifying, and the worker checks that state before every wait (see [`signal`](super::signal)).
//!
//! A message the machine's pools reject is repaired as UNICAST3 repairs it
//! ([`retransmission`](crate::driver::retransmission)): due on the run of the
//! node's retransmission task that asks for it, plus the request's and the resend's links. A
//! transmission the link loses likewise.
//!
//! Value bytes: a message a node sends another is handed over as [`Msg::marshalled`], its
//! payload deep-copied into a fresh buffer on the sending thread, standing in for the
//! transport's marshal + unmarshal (one copy, where a real transport makes two). So the
//! receiver never shares the sender's buffer, and the copy costs the sender's CPU time per hop.
//! Over sockets (`ThreadsConfig::sockets`) the wire serialises the message instead, on the
//! sending thread, and the receiver's reader builds its own copy.

use std::sync::Arc;
use std::sync::atomic::Ordering as AtomicOrdering;

use crossbeam::channel::Sender;
use rand::SeedableRng;
use rand::rngs::SmallRng;

use super::runtime::{ClusterRuntime, Envelope, Job, NodeRuntime, Reply};
use super::signal::{SlotEvent, SlotSignal};

use crate::driver::retransmission::{ResentInput, repair_tick, resent_arrival, sent_arrival};
use crate::message::SlotKind;
use crate::message::{Input, Msg, NodeId, Output};

/// Something a step produced, carried out after the node mutex is released.
enum Action {
    /// `msg` from `from` goes to `to`'s transport.
    Send {
        to: NodeId,
        /// A message this node rejected (it is already this node's copy), to be resent on
        /// request: whether it had been asked for before.
        lost: Option<bool>,
        from: NodeId,
        msg: Msg,
    },
    Reply(Sender<Reply>, Reply),
    Timer(u64),
    Job(SlotKind, Job),
    Signal(Arc<SlotSignal>, SlotEvent),
    Unblock,
}

/// One thread's handle for stepping its node's machine.
pub(super) struct Stepper {
    pub(super) node: Arc<NodeRuntime>,
    pub(super) shared: Arc<ClusterRuntime>,
    rng: SmallRng,
    actions: Vec<Action>,
    /// Whether this is the node's transport thread (which learns of unblocking from its own
    /// step's result instead of an [`Envelope::Unblocked`]).
    pub(super) transport: bool,
    /// Whether the machine's inbound path was blocked at the end of this thread's last step.
    pub(super) inbound_blocked: bool,
}

impl Stepper {
    /// A stepper of `node`'s machine whose jitter comes from a stream seeded with `seed`.
    pub(super) fn new(node: Arc<NodeRuntime>, shared: Arc<ClusterRuntime>, seed: u64) -> Self {
        Stepper {
            node,
            shared,
            rng: SmallRng::seed_from_u64(seed),
            actions: Vec::new(),
            transport: false,
            inbound_blocked: false,
        }
    }

    /// Feeds `input` to the machine under the node mutex, then carries out the effects outside
    /// it. False when the cluster is shutting down (nothing was fed).
    pub(super) fn step(&mut self, input: Input) -> bool {
        self.step_message(input, false)
    }

    /// [`step`](Self::step), where `resent` says that `input` is a message resent on request
    /// (if the machine rejects it again, it was asked for before).
    pub(super) fn step_message(&mut self, input: Input, resent: bool) -> bool {
        let mut resent_input = ResentInput::new(&input, resent);
        let now = {
            let mut guard = self.node.state.lock();
            let st = &mut *guard;
            if st.stopping {
                return false;
            }
            let now = self.shared.now_us();
            st.machine.handle(now, input, &mut st.out);
            self.inbound_blocked = st.machine.inbound_blocked();
            let id = self.node.id;
            for o in st.out.drain(..) {
                let action = match o {
                    Output::Send { to, msg } => Action::Send {
                        to,
                        lost: None,
                        from: id,
                        msg,
                    },
                    Output::Rejected { from, msg } => Action::Send {
                        to: id,
                        lost: Some(resent_input.asked_before(from)),
                        from,
                        msg,
                    },
                    Output::Reply {
                        requester,
                        op,
                        outcome,
                    } => match st.clients.get(requester as usize) {
                        Some(Some(tx)) => Action::Reply(tx.clone(), (op, outcome)),
                        _ => continue,
                    },
                    Output::SetTimer { at } => Action::Timer(at),
                    Output::Execute { slot, kind } => {
                        let signal = Arc::new(SlotSignal::new());
                        st.signals.insert(slot, Arc::clone(&signal));
                        Action::Job(kind, Job::Run { slot, signal })
                    }
                    Output::Resume { slot } => match st.signals.get(&slot) {
                        Some(s) => Action::Signal(Arc::clone(s), SlotEvent::Resume),
                        None => continue,
                    },
                    Output::SlotFreed { slot } => match st.signals.remove(&slot) {
                        Some(s) => Action::Signal(s, SlotEvent::Freed),
                        None => continue,
                    },
                    Output::InboundResumed if !self.transport => Action::Unblock,
                    Output::InboundResumed => continue,
                };
                self.actions.push(action);
            }
            now
        };
        self.perform(now);
        true
    }

    fn perform(&mut self, now: u64) {
        for a in std::mem::take(&mut self.actions) {
            match a {
                Action::Send {
                    to,
                    lost,
                    from,
                    msg,
                } => {
                    let sh = &self.shared;
                    let link = &sh.link;
                    let over_socket = sh.sockets.as_ref().filter(|_| lost.is_none() && to != from);
                    // Marshal + unmarshal, outside the node mutex: over a socket, the wire's own;
                    // over a channel, one copy of the value bytes stands in for them. A lost
                    // message is the receiver's copy already.
                    let msg = if lost.is_some() || to == from || over_socket.is_some() {
                        msg
                    } else {
                        msg.marshalled()
                    };
                    // A lost message is asked for at a run of the receiver's retransmission
                    // task, then the request and the resend each cross a link.
                    let (at, resent) = match lost {
                        Some(asked) => {
                            let tick = repair_tick(now, asked, link.xmit_interval_us);
                            (resent_arrival(&mut self.rng, tick, link).0, true)
                        }
                        None => {
                            let (at, losses) = sent_arrival(&mut self.rng, now, link);
                            (at, losses > 0)
                        }
                    };
                    // Release: see `ClusterRuntime::in_flight`.
                    sh.in_flight.fetch_add(1, AtomicOrdering::Release);
                    let sent = match over_socket {
                        // A peer known to be gone: dropped, as its dead process would drop it.
                        Some(_) if sh.links.is_gone(to) => false,
                        Some(sockets) => {
                            match sockets.send(from, to, msg, resent, at.saturating_sub(now)) {
                                Ok(()) => {
                                    sh.links.count_sent(from, to);
                                    true
                                }
                                Err(e) => {
                                    let what = format!("node {from} to node {to}: {e}");
                                    sh.links.failed(Some(to), what);
                                    false
                                }
                            }
                        }
                        None => {
                            let input = Input::Message { from, msg };
                            sh.pending.fetch_add(1, AtomicOrdering::Relaxed);
                            let queued = sh.peers.get(to as usize).is_some_and(|p| {
                                p.send(Envelope::Input { at, input, resent }).is_ok()
                            });
                            if !queued {
                                sh.pending.fetch_sub(1, AtomicOrdering::Relaxed);
                            }
                            queued
                        }
                    };
                    if !sent {
                        sh.in_flight.fetch_sub(1, AtomicOrdering::Release);
                    }
                }
                Action::Reply(tx, reply) => {
                    let _ = tx.send(reply);
                }
                Action::Timer(at) => {
                    if let Some(p) = self.shared.peers.get(self.node.id as usize) {
                        let _ = p.send(Envelope::Timer { at });
                    }
                }
                Action::Job(kind, job) => {
                    let pool = match kind {
                        SlotKind::Pool => &self.node.jobs,
                        SlotKind::Oob => &self.node.oob_jobs,
                    };
                    let _ = pool.send(job);
                }
                Action::Signal(signal, event) => signal.post(event),
                Action::Unblock => {
                    if let Some(p) = self.shared.peers.get(self.node.id as usize) {
                        let _ = p.send(Envelope::Unblocked);
                    }
                }
            }
        }
    }
}
