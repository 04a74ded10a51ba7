//! A node's counters (what IspnPerfTest, JMX and the post's logs report per node: timeouts,
//! rejections, queue depths, lock hold times, messages and bytes sent); the drivers sum them.

/// Counters of one node; the drivers sum them over the cluster.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct NodeStats {
    /// Writes that failed to get their key lock in time (at this node as primary).
    pub lock_timeouts: u64,
    /// Requests of this node's requesters that got no answer in time.
    pub reply_timeouts: u64,
    /// LockForwarding: backup RPCs that timed out at this primary.
    pub backup_timeouts: u64,
    /// KeyQueue: replication batches that timed out and were requeued.
    pub repl_timeouts: u64,
    /// Commands this node's pools rejected (retransmitted by the sender).
    pub pool_rejections: u64,
    /// The most pool slots in use at once.
    pub pool_max_busy: u64,
    /// The longest the pool's queue got (block policy).
    pub pool_max_queue: u64,
    /// Messages sent.
    pub messages_sent: u64,
    /// Bytes of value payload in messages sent to other nodes
    /// ([`Msg::payload_len`](crate::message::Msg::payload_len)); messages a node
    /// loops back to itself cross no network and are not counted.
    pub payload_bytes_sent: u64,
    /// Get requests and get replies sent (the get plan's traffic).
    pub get_messages: u64,
    /// Gets sent to a further owner after the stagger delay.
    pub staggered_gets: u64,
    /// Older versions applied over newer ones (must be 0).
    pub regressions: u64,
    /// KeyQueue: the longest the replication queue got.
    pub repl_queue_max: u64,
    /// KeyQueue: the replication queue's length now.
    pub repl_queue_now: u64,
    /// Triangle: backup writes that arrived before their turn and were buffered.
    pub reordered_backups: u64,
    /// Backup writes skipped because the backup already had a newer version.
    pub stale_skipped: u64,
    /// The longest a primary held a key lock (µs on the driver's clock).
    pub max_lock_hold_us: u64,
    /// Total key-lock hold time (µs), for the mean hold per write.
    pub lock_hold_total_us: u64,
    /// `block` policy: how long (µs on the driver's clock) the inbound path was blocked behind a
    /// command waiting for a pool slot; counted when each block ends.
    pub inbound_blocked_us: u64,
    /// `block` policy: messages from other nodes held undelivered by a blocked inbound path.
    pub blocked_deliveries: u64,
}

impl NodeStats {
    /// Adds `other`'s counters (maxima take the max).
    pub fn add(&mut self, other: &NodeStats) {
        self.lock_timeouts += other.lock_timeouts;
        self.reply_timeouts += other.reply_timeouts;
        self.backup_timeouts += other.backup_timeouts;
        self.repl_timeouts += other.repl_timeouts;
        self.pool_rejections += other.pool_rejections;
        self.pool_max_busy = self.pool_max_busy.max(other.pool_max_busy);
        self.pool_max_queue = self.pool_max_queue.max(other.pool_max_queue);
        self.messages_sent += other.messages_sent;
        self.payload_bytes_sent += other.payload_bytes_sent;
        self.get_messages += other.get_messages;
        self.staggered_gets += other.staggered_gets;
        self.regressions += other.regressions;
        self.repl_queue_max = self.repl_queue_max.max(other.repl_queue_max);
        self.repl_queue_now += other.repl_queue_now;
        self.reordered_backups += other.reordered_backups;
        self.stale_skipped += other.stale_skipped;
        self.max_lock_hold_us = self.max_lock_hold_us.max(other.max_lock_hold_us);
        self.lock_hold_total_us += other.lock_hold_total_us;
        self.inbound_blocked_us += other.inbound_blocked_us;
        self.blocked_deliveries += other.blocked_deliveries;
    }

    /// What was counted since `then`, an earlier reading of the same counters: counts are
    /// differences, maxima and the queue's current length are as they are now.
    pub fn since(&self, then: &NodeStats) -> NodeStats {
        let d = |now: u64, then: u64| now.saturating_sub(then);
        NodeStats {
            lock_timeouts: d(self.lock_timeouts, then.lock_timeouts),
            reply_timeouts: d(self.reply_timeouts, then.reply_timeouts),
            backup_timeouts: d(self.backup_timeouts, then.backup_timeouts),
            repl_timeouts: d(self.repl_timeouts, then.repl_timeouts),
            pool_rejections: d(self.pool_rejections, then.pool_rejections),
            messages_sent: d(self.messages_sent, then.messages_sent),
            payload_bytes_sent: d(self.payload_bytes_sent, then.payload_bytes_sent),
            get_messages: d(self.get_messages, then.get_messages),
            staggered_gets: d(self.staggered_gets, then.staggered_gets),
            regressions: d(self.regressions, then.regressions),
            reordered_backups: d(self.reordered_backups, then.reordered_backups),
            stale_skipped: d(self.stale_skipped, then.stale_skipped),
            lock_hold_total_us: d(self.lock_hold_total_us, then.lock_hold_total_us),
            inbound_blocked_us: d(self.inbound_blocked_us, then.inbound_blocked_us),
            blocked_deliveries: d(self.blocked_deliveries, then.blocked_deliveries),
            ..self.clone()
        }
    }
}
