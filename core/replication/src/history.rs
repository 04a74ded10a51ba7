//! The history check: every completed operation of a run, checked as it completes against the
//! puts of its key acknowledged before it started. Ours, like the verifier (which checks only the
//! quiescent end state): it checks the read guarantee of
//! [`WriteProtocol`](super::WriteProtocol) while the run goes on.
//!
//! "Before" is the driver's order of events: an operation's floor is the newest version of its
//! key acknowledged when it was issued (in the simulation, earlier in virtual time, or at the same
//! instant but handled first). Checks:
//! - a get returns a version >= its floor (else a *stale read*);
//! - a put is acknowledged with a version > its floor (a put that starts after another was
//!   acknowledged is applied after it), echoing the value it wrote;
//! - where the driver can see the primary (the simulation), the primary holds the acknowledged
//!   version or a later one, and the same value at that version, by the end of the window of
//!   virtual time the ack arrived in (at most a link latency later; a primary's versions only
//!   grow, so a primary behind the ack then was behind it at the ack).
//!
//! Acks of concurrent puts of one key may arrive out of version order (their replies race), so
//! the check does not ask that acks arrive in version order, only that a put after an ack is
//! newer than it.

use super::error::VerifyError;
use super::message::{Key, Value, Versioned};

/// The first stale read, kept to name it in the error.
#[derive(Debug, Clone, PartialEq, Eq)]
struct StaleRead {
    key: Key,
    floor: u64,
    got: u64,
}

/// Checks each completed operation against the acknowledged puts of its key before it started.
#[derive(Debug, Clone, Default)]
pub struct HistoryCheck {
    /// Per key, the newest version acknowledged so far.
    newest: Vec<u64>,
    gets_checked: u64,
    puts_checked: u64,
    stale_reads: u64,
    bad_put_replies: u64,
    first_stale: Option<StaleRead>,
    first_bad_put: Option<VerifyError>,
}

impl HistoryCheck {
    /// A check for keys `0..keys`, no put acknowledged yet.
    pub fn new(keys: u32) -> Self {
        HistoryCheck {
            newest: vec![0; keys as usize],
            ..HistoryCheck::default()
        }
    }

    /// The floor of an operation of `key` issued now: the newest version acknowledged so far.
    pub fn floor(&self, key: Key) -> u64 {
        self.newest.get(key as usize).copied().unwrap_or(0)
    }

    /// A get of `key` issued with `floor` returned version `got`.
    pub fn get_done(&mut self, key: Key, floor: u64, got: u64) {
        self.gets_checked += 1;
        if got < floor {
            self.stale_reads += 1;
            if self.first_stale.is_none() {
                self.first_stale = Some(StaleRead { key, floor, got });
            }
        }
    }

    /// A put of `value` under `key`, issued with `floor`, was acknowledged with `acked`;
    /// `primary` is the primary's entry for the key at the ack, when the driver can see it.
    pub fn put_acked(
        &mut self,
        key: Key,
        floor: u64,
        value: &Value,
        acked: &Versioned,
        primary: Option<&Versioned>,
    ) {
        self.puts_checked += 1;
        let bad = if acked.version <= floor {
            Some(format!(
                "acknowledged with version {} though version {floor} was acknowledged before it started",
                acked.version
            ))
        } else if acked.value != *value {
            Some(format!(
                "acknowledged with {:?}, not the value it wrote ({value:?})",
                acked.value
            ))
        } else {
            primary.and_then(|p| {
                (p.version < acked.version
                    || (p.version == acked.version && p.value != acked.value))
                    .then(|| format!("acknowledged as {acked:?} but the primary holds {p:?}"))
            })
        };
        if let Some(what) = bad {
            self.bad_put_replies += 1;
            if self.first_bad_put.is_none() {
                self.first_bad_put = Some(VerifyError::BadPutReply { key, what });
            }
        }
        if let Some(n) = self.newest.get_mut(key as usize) {
            *n = (*n).max(acked.version);
        }
    }

    /// [`Self::put_acked`] where the value was checked elsewhere: only that a put issued after
    /// `floor` was acknowledged is acknowledged with a newer version.
    pub fn put_version_acked(&mut self, key: Key, floor: u64, version: u64) {
        let acked = Versioned {
            version,
            value: Value::default(),
        };
        self.put_acked(key, floor, &acked.value, &acked, None);
    }

    /// Gets checked so far.
    pub fn gets_checked(&self) -> u64 {
        self.gets_checked
    }

    /// Acknowledged puts checked so far.
    pub fn puts_checked(&self) -> u64 {
        self.puts_checked
    }

    /// Gets that returned a version older than one acknowledged before they started.
    pub fn stale_reads(&self) -> u64 {
        self.stale_reads
    }

    /// Put acknowledgements that failed a check.
    pub fn bad_put_replies(&self) -> u64 {
        self.bad_put_replies
    }

    /// `Ok` if every operation passed; else the first stale read (with their count), or the first
    /// bad put reply.
    pub fn result(&self) -> Result<(), VerifyError> {
        if let Some(s) = &self.first_stale {
            return Err(VerifyError::StaleRead {
                key: s.key,
                floor: s.floor,
                got: s.got,
                count: self.stale_reads,
            });
        }
        match &self.first_bad_put {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }
}

/// One operation of a node process's requester, timed on the host's monotonic clock: what the
/// net driver's coordinator collects from every node process on one host to run the history
/// check across them ([`check_timeline`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TimedOp {
    /// The key.
    pub key: Key,
    /// A put (else a get).
    pub put: bool,
    /// When it was issued and when its outcome arrived, in ns of `CLOCK_MONOTONIC`.
    pub issued_ns: u64,
    /// See `issued_ns`.
    pub done_ns: u64,
    /// The version the get returned, or the put was acknowledged with.
    pub version: u64,
}

/// The history check over operations timed on one clock, whichever process ran them: each
/// operation's floor is the newest version of its key acknowledged before it was issued (an ack
/// at the very instant of an issue does not count: the two are concurrent). A put's value was
/// checked by its requester; here only its version is.
pub fn check_timeline(keys: u32, ops: &[TimedOp]) -> HistoryCheck {
    // (time, issue before completion at one instant, op)
    let mut events: Vec<(u64, bool, usize)> = Vec::with_capacity(ops.len() * 2);
    for (i, op) in ops.iter().enumerate() {
        events.push((op.issued_ns, false, i));
        events.push((op.done_ns.max(op.issued_ns), true, i));
    }
    events.sort_unstable();
    let mut check = HistoryCheck::new(keys);
    let mut floors = vec![0u64; ops.len()];
    for (_, done, i) in events {
        let op = &ops[i];
        if !done {
            floors[i] = check.floor(op.key);
        } else if op.put {
            check.put_version_acked(op.key, floors[i], op.version);
        } else {
            check.get_done(op.key, floors[i], op.version);
        }
    }
    check
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(version: u64, tag: u64) -> Versioned {
        Versioned {
            version,
            value: Value::new(tag, 16),
        }
    }

    /// Node A's put of key 1 is acknowledged at 10 with version 1; node B's get issued at 11
    /// must see it, one issued at 10 (concurrent) or before may not; a put issued after the ack
    /// must be newer.
    #[test]
    fn a_timeline_of_several_processes_finds_the_stale_read_across_them() {
        let op = |put, issued_ns, done_ns, version| TimedOp {
            key: 1,
            put,
            issued_ns,
            done_ns,
            version,
        };
        let fine = [
            op(true, 5, 10, 1),
            op(false, 10, 12, 0),
            op(false, 3, 20, 0),
            op(false, 11, 13, 1),
        ];
        let h = check_timeline(4, &fine);
        assert_eq!((h.gets_checked(), h.result()), (3, Ok(())));
        let stale = [op(true, 5, 10, 1), op(false, 11, 13, 0)];
        assert_eq!(
            check_timeline(4, &stale).result(),
            Err(VerifyError::StaleRead {
                key: 1,
                floor: 1,
                got: 0,
                count: 1
            })
        );
        let old_put = [op(true, 5, 10, 2), op(true, 11, 15, 2)];
        assert_eq!(check_timeline(4, &old_put).bad_put_replies(), 1);
    }

    #[test]
    fn a_get_older_than_a_put_acknowledged_before_it_started_is_a_stale_read() {
        let mut h = HistoryCheck::new(4);
        let floor = h.floor(1);
        h.put_acked(1, floor, &v(1, 7).value, &v(1, 7), Some(&v(1, 7)));
        // A get issued before the ack may return v0; one issued after it may not.
        h.get_done(1, floor, 0);
        assert_eq!(h.result(), Ok(()));
        h.get_done(1, h.floor(1), 1);
        h.get_done(1, h.floor(1), 0);
        h.get_done(2, h.floor(2), 0);
        assert_eq!((h.gets_checked(), h.stale_reads()), (4, 1));
        assert_eq!(
            h.result(),
            Err(VerifyError::StaleRead {
                key: 1,
                floor: 1,
                got: 0,
                count: 1
            })
        );
    }

    #[test]
    fn a_put_acknowledged_after_another_must_be_newer_and_applied_at_the_primary() {
        let mut h = HistoryCheck::new(4);
        h.put_acked(0, 0, &v(2, 2).value, &v(2, 2), Some(&v(2, 2)));
        // Concurrent puts: the older version's ack arriving later is fine.
        h.put_acked(0, 0, &v(1, 1).value, &v(1, 1), Some(&v(2, 2)));
        assert_eq!((h.puts_checked(), h.bad_put_replies()), (2, 0));
        assert_eq!(h.floor(0), 2);
        // A put issued after version 2 was acknowledged cannot get version 2.
        h.put_acked(0, h.floor(0), &v(2, 3).value, &v(2, 3), None);
        // Nor an ack the primary has not applied.
        h.put_acked(
            3,
            h.floor(3),
            &v(1, 4).value,
            &v(1, 4),
            Some(&Versioned::default()),
        );
        assert_eq!(h.bad_put_replies(), 2);
        assert!(
            matches!(h.result(), Err(VerifyError::BadPutReply { key: 0, .. })),
            "{:?}",
            h.result()
        );
    }
}
