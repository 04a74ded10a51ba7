//! `JdkReadWriteLock<T>`: the JDK's non-fair `ReentrantReadWriteLock`, mechanism for mechanism.
//!
//! parking_lot's `RwLock` is not what Solr's PR #1155 ran. Its read path is one CAS; the JDK's
//! (`ReentrantReadWriteLock.Sync`, JDK 17-25) does, on every acquire *and* every release:
//! - a CAS on the AQS `state` word (shared count in the high 16 bits, exclusive count in the low
//!   16), retried in `fullTryAcquireShared`, an unbounded loop without backoff;
//! - `readerShouldBlock()`, non-fair: block if the first queued waiter is exclusive;
//! - hold-count bookkeeping in fields every reader shares: `firstReader`/`firstReaderHoldCount`
//!   when the read count was 0, else `cachedHoldCounter` (written whenever the cached counter is
//!   another thread's) and the `ThreadLocal` `readHolds` (get, maybe set);
//! - on release, `readHolds.remove()` when the thread's count drops to 0, so its next acquire
//!   allocates a new `HoldCounter` (`ThreadLocal.initialValue`).
//!
//! Writers (`tryAcquire`) CAS the exclusive count from a zero state, are re-entrant, and barge
//! (`writerShouldBlock` is false in the non-fair lock). A thread that fails parks in a FIFO wait
//! queue (AQS's CLH queue; here a mutex-guarded deque with a condvar) and only the first queued
//! thread retries; a reader that succeeds from the queue wakes the next (shared propagation).
//!
//! Deviations: `cachedHoldCounter` holds the owner's thread id, not a pointer to its counter (a
//! pointer into another thread's storage would need the JDK's garbage collector to stay valid), so
//! a thread whose counter is cached still finds it in its thread-local table; the write and the
//! cache line it dirties are the JDK's. The table is a short per-thread list keyed by lock, as
//! `ThreadLocalMap` is a per-thread hash table keyed by `ThreadLocal`.
//!
//! # No lost wake-up
//! A releaser that freed the lock reads `head_mode` after its state RMW and, if a waiter is
//! queued, notifies under the queue mutex. A waiter sets `head_mode` when it enqueues, then reads
//! `state` through an RMW (a CAS writing back the value it read) before it tries, all under the queue mutex it holds
//! until it sleeps. Both RMWs are on `state`, so one reads the other's write: either the waiter's
//! try sees the release, or the releaser's RMW is ordered after the waiter's and its `head_mode`
//! load sees the queued waiter and notifies, which cannot happen before the waiter sleeps. The
//! loom model in `core/sync/tests/loom_sync.rs` checks this.

use super::lock_stats::{LockStats, lock_stats_enabled};
use super::primitive::{
    self, AtomicU32, AtomicU64, ConstPtr, MutPtr, Ordering, RawCondvar, RawMutex, UnsafeCell,
    thread_local,
};
use crossbeam_utils::CachePadded;
use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::fmt;
use std::marker::PhantomData;
use std::mem::ManuallyDrop;
use std::ops::{Deref, DerefMut};
use std::time::Instant;

const SHARED_SHIFT: u32 = 16;
const SHARED_UNIT: u32 = 1 << SHARED_SHIFT;
const MAX_COUNT: u32 = (1 << SHARED_SHIFT) - 1;
const EXCLUSIVE_MASK: u32 = MAX_COUNT;

#[inline]
fn shared_count(c: u32) -> u32 {
    c >> SHARED_SHIFT
}
#[inline]
fn exclusive_count(c: u32) -> u32 {
    c & EXCLUSIVE_MASK
}

/// `head_mode` values: what the first queued waiter wants.
const QUEUE_EMPTY: u32 = 0;
const QUEUE_SHARED: u32 = 1;
const QUEUE_EXCLUSIVE: u32 = 2;

/// A `HoldCounter`: one thread's read holds on one lock.
struct HoldCounter {
    count: u32,
}

/// What a thread keeps for every `JdkReadWriteLock`: its id and its `readHolds` entries.
struct ThreadSlot {
    /// `Thread.getId()`; 0 means "no thread".
    tid: u64,
    /// `readHolds`: per lock id, this thread's counter (absent after `remove()`).
    holds: RefCell<Vec<(u64, Box<HoldCounter>)>>,
    /// Counters that `remove()` took out of `readHolds` while `cachedHoldCounter` still named
    /// this thread: the JDK re-`set`s that same object on the next acquire, without allocating.
    cached_spare: RefCell<Vec<(u64, Box<HoldCounter>)>>,
    /// `HoldCounter`s this thread allocated (for tests of the remove-then-allocate behaviour).
    allocated: Cell<u64>,
}

impl ThreadSlot {
    fn new() -> Self {
        static NEXT_TID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        ThreadSlot {
            tid: NEXT_TID.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            holds: RefCell::new(Vec::new()),
            cached_spare: RefCell::new(Vec::new()),
            allocated: Cell::new(0),
        }
    }

    fn index(holds: &[(u64, Box<HoldCounter>)], lock: u64) -> Option<usize> {
        holds.iter().position(|(id, _)| *id == lock)
    }

    /// `rh.count++` after `rh = cached` (if ours, re-`set` if it was removed) or
    /// `rh = readHolds.get()` (allocating via `initialValue` if absent).
    fn acquire(&self, lock: u64, cached_is_mine: bool) {
        let mut holds = self.holds.borrow_mut();
        let i = match Self::index(&holds, lock) {
            Some(i) => i,
            None => {
                let mut spare = self.cached_spare.borrow_mut();
                let reused = match Self::index(&spare, lock) {
                    Some(j) => {
                        let counter = spare.swap_remove(j).1;
                        cached_is_mine.then_some(counter)
                    }
                    None => None,
                };
                let counter = reused.unwrap_or_else(|| self.allocate());
                holds.push((lock, counter));
                holds.len() - 1
            }
        };
        holds[i].1.count += 1;
    }

    fn allocate(&self) -> Box<HoldCounter> {
        self.allocated.set(self.allocated.get() + 1);
        Box::new(HoldCounter { count: 0 })
    }

    /// `tryReleaseShared`'s bookkeeping: `readHolds.remove()` when the count drops to 0.
    fn release(&self, lock: u64, cached_is_mine: bool) {
        let mut holds = self.holds.borrow_mut();
        let Some(i) = Self::index(&holds, lock) else {
            panic!("attempt to unlock read lock, not locked by current thread");
        };
        if holds[i].1.count <= 1 {
            let (id, mut counter) = holds.swap_remove(i);
            counter.count = 0;
            if cached_is_mine {
                self.cached_spare.borrow_mut().push((id, counter));
            }
        } else {
            holds[i].1.count -= 1;
        }
    }

    /// `rh.count == 0` in `fullTryAcquireShared`, through `readHolds.get()` (which allocates if
    /// absent) and `readHolds.remove()` when it is 0, as the JDK does.
    fn holds_none_probe(&self, lock: u64) -> bool {
        let holds = self.holds.borrow();
        if Self::index(&holds, lock).is_some() {
            return false;
        }
        drop(holds);
        drop(self.allocate());
        true
    }

    fn count(&self, lock: u64) -> u32 {
        let holds = self.holds.borrow();
        Self::index(&holds, lock).map_or(0, |i| holds[i].1.count)
    }
}

thread_local! {
    static THREAD: ThreadSlot = ThreadSlot::new();
}

/// The fields of `ReentrantReadWriteLock.Sync` (and its AQS) that every thread touches: in the
/// JDK they sit together in one small object, so here they share one cache line.
#[repr(C)]
struct SyncFields {
    state: AtomicU32,
    /// What the first queued waiter wants (`QUEUE_*`): AQS's `head.next` mode, as a word.
    head_mode: AtomicU32,
    /// `exclusiveOwnerThread`.
    owner: AtomicU64,
    /// `firstReader`.
    first_reader: AtomicU64,
    /// `cachedHoldCounter`, as its owner's thread id.
    cached_hold_counter: AtomicU64,
    /// `firstReaderHoldCount` (written only by the first reader, like the JDK's plain int).
    first_reader_hold_count: AtomicU32,
}

#[derive(Default)]
struct Queue {
    waiters: VecDeque<(u64, bool)>,
    next_ticket: u64,
}

/// A read-write lock with the JDK's `ReentrantReadWriteLock` read and write paths (module doc).
/// Reads are re-entrant, also while a writer waits; writes are re-entrant; a writer may take
/// the read lock (downgrade).
pub struct JdkReadWriteLock<T> {
    sync: CachePadded<SyncFields>,
    /// Identifies this lock in threads' `readHolds` tables.
    id: u64,
    queue: RawMutex<Queue>,
    wake: RawCondvar,
    stats: &'static LockStats,
    /// Test-only mutant for the loom model: skip the RMW read before a queued try, the step the
    /// no-lost-wake-up argument rests on; loom must then find the lost wake-up.
    #[cfg(loom)]
    mutant_plain_read: bool,
    data: UnsafeCell<T>,
}

// SAFETY: the lock hands out `&T` to many threads only in shared mode and `&mut T` to one thread
// only in exclusive mode, exactly like `std::sync::RwLock`.
unsafe impl<T: Send> Send for JdkReadWriteLock<T> {}
unsafe impl<T: Send + Sync> Sync for JdkReadWriteLock<T> {}

/// Shared access; releases the read hold on drop. Not `Send`: the hold counts are per thread.
pub struct JdkReadGuard<'a, T> {
    lock: &'a JdkReadWriteLock<T>,
    /// Dropped (ending loom's record of the access) before the lock is released.
    ptr: ManuallyDrop<ConstPtr<T>>,
    _not_send: PhantomData<*const ()>,
}

/// Exclusive access; releases the write hold on drop. Not `Send`: the owner is a thread.
pub struct JdkWriteGuard<'a, T> {
    lock: &'a JdkReadWriteLock<T>,
    /// Dropped (ending loom's record of the access) before the lock is released.
    ptr: ManuallyDrop<MutPtr<T>>,
    _not_send: PhantomData<*const ()>,
}

fn current_tid() -> u64 {
    THREAD.with(|t| t.tid)
}

impl<T> JdkReadWriteLock<T> {
    /// A new lock named `name` (for [`super::lock_stats`]), holding `value`.
    pub fn new(name: &'static str, value: T) -> Self {
        static NEXT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        JdkReadWriteLock {
            sync: CachePadded::new(SyncFields {
                state: AtomicU32::new(0),
                head_mode: AtomicU32::new(QUEUE_EMPTY),
                owner: AtomicU64::new(0),
                first_reader: AtomicU64::new(0),
                cached_hold_counter: AtomicU64::new(0),
                first_reader_hold_count: AtomicU32::new(0),
            }),
            id: NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            queue: RawMutex::new(Queue::default()),
            wake: RawCondvar::new(),
            stats: LockStats::for_name(name),
            #[cfg(loom)]
            mutant_plain_read: false,
            data: UnsafeCell::new(value),
        }
    }

    /// A deliberately broken lock (loom builds only): queued threads re-read the state with a
    /// plain load instead of an RMW. The loom model must catch the resulting lost wake-up.
    #[cfg(loom)]
    #[doc(hidden)]
    pub fn mutant_without_rmw_read(name: &'static str, value: T) -> Self {
        JdkReadWriteLock {
            mutant_plain_read: true,
            ..Self::new(name, value)
        }
    }

    /// `readLock().lock()`.
    #[inline]
    pub fn read(&self) -> JdkReadGuard<'_, T> {
        let me = current_tid();
        if !self.try_acquire_shared(me) {
            self.acquire_queued(me, false);
        }
        JdkReadGuard {
            lock: self,
            ptr: ManuallyDrop::new(self.data.get()),
            _not_send: PhantomData,
        }
    }

    /// `writeLock().lock()`.
    #[inline]
    pub fn write(&self) -> JdkWriteGuard<'_, T> {
        let me = current_tid();
        if !self.try_acquire(me) {
            self.acquire_queued(me, true);
        }
        JdkWriteGuard {
            lock: self,
            ptr: ManuallyDrop::new(self.data.get_mut()),
            _not_send: PhantomData,
        }
    }

    /// `getReadHoldCount()`: the calling thread's read holds.
    pub fn read_hold_count(&self) -> u32 {
        let me = current_tid();
        if self.sync.first_reader.load(Ordering::Relaxed) == me {
            return self.sync.first_reader_hold_count.load(Ordering::Relaxed);
        }
        THREAD.with(|t| t.count(self.id))
    }

    /// `hasQueuedThreads()`.
    pub fn has_queued_threads(&self) -> bool {
        self.sync.head_mode.load(Ordering::Acquire) != QUEUE_EMPTY
    }

    /// The lock's name.
    pub fn name(&self) -> &'static str {
        self.stats.name()
    }

    /// Non-fair `readerShouldBlock()`: `apparentlyFirstQueuedIsExclusive()`.
    #[inline]
    fn reader_should_block(&self) -> bool {
        self.sync.head_mode.load(Ordering::Acquire) == QUEUE_EXCLUSIVE
    }

    /// `tryAcquireShared`.
    #[inline]
    fn try_acquire_shared(&self, me: u64) -> bool {
        let s = &self.sync;
        let c = s.state.load(Ordering::Acquire);
        if exclusive_count(c) != 0 && s.owner.load(Ordering::Relaxed) != me {
            return false;
        }
        let r = shared_count(c);
        if !self.reader_should_block()
            && r < MAX_COUNT
            && s.state
                .compare_exchange(c, c + SHARED_UNIT, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
        {
            self.note_read_acquired(me, r);
            return true;
        }
        self.full_try_acquire_shared(me)
    }

    /// The hold-count bookkeeping after a successful shared CAS (`r` = read count before it).
    #[inline]
    fn note_read_acquired(&self, me: u64, r: u32) {
        let s = &self.sync;
        if r == 0 {
            s.first_reader.store(me, Ordering::Relaxed);
            s.first_reader_hold_count.store(1, Ordering::Relaxed);
        } else if s.first_reader.load(Ordering::Relaxed) == me {
            let n = s.first_reader_hold_count.load(Ordering::Relaxed);
            s.first_reader_hold_count.store(n + 1, Ordering::Relaxed);
        } else {
            let cached_is_mine = s.cached_hold_counter.load(Ordering::Relaxed) == me;
            if !cached_is_mine {
                s.cached_hold_counter.store(me, Ordering::Relaxed);
            }
            THREAD.with(|t| t.acquire(self.id, cached_is_mine));
        }
    }

    /// `fullTryAcquireShared`: retries the CAS without bound and without backoff; gives up only
    /// for a writer (not this thread) or a queued writer when this thread holds no read lock.
    fn full_try_acquire_shared(&self, me: u64) -> bool {
        let s = &self.sync;
        loop {
            let c = s.state.load(Ordering::Acquire);
            if exclusive_count(c) != 0 {
                if s.owner.load(Ordering::Relaxed) != me {
                    return false;
                }
            } else if self.reader_should_block()
                && s.first_reader.load(Ordering::Relaxed) != me
                && THREAD.with(|t| t.holds_none_probe(self.id))
            {
                // Not a re-entrant read: queue behind the writer.
                return false;
            }
            assert!(shared_count(c) != MAX_COUNT, "Maximum lock count exceeded");
            if s.state
                .compare_exchange(c, c + SHARED_UNIT, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
            {
                self.note_read_acquired(me, shared_count(c));
                return true;
            }
        }
    }

    /// `tryAcquire` (non-fair: `writerShouldBlock` is false).
    #[inline]
    fn try_acquire(&self, me: u64) -> bool {
        let s = &self.sync;
        let c = s.state.load(Ordering::Acquire);
        if c != 0 {
            let w = exclusive_count(c);
            if w == 0 || s.owner.load(Ordering::Relaxed) != me {
                return false;
            }
            assert!(w < MAX_COUNT, "Maximum lock count exceeded");
            // Re-entrant: only the owner writes the state now.
            s.state.fetch_add(1, Ordering::Relaxed);
            return true;
        }
        if s.state
            .compare_exchange(0, 1, Ordering::AcqRel, Ordering::Relaxed)
            .is_err()
        {
            return false;
        }
        s.owner.store(me, Ordering::Relaxed);
        true
    }

    /// AQS `acquire`/`acquireShared` after the first try failed: queue, park, retry when first.
    #[cold]
    fn acquire_queued(&self, me: u64, exclusive: bool) {
        let start = lock_stats_enabled().then(Instant::now);
        let mut q = primitive::raw_lock(&self.queue);
        let ticket = q.next_ticket;
        q.next_ticket += 1;
        q.waiters.push_back((ticket, exclusive));
        self.publish_head(&q);
        loop {
            if q.waiters.front().map(|w| w.0) == Some(ticket) {
                // The RMW read of the state (module doc: no lost wake-up).
                #[cfg(loom)]
                let rmw = !self.mutant_plain_read;
                #[cfg(not(loom))]
                let rmw = true;
                if rmw {
                    // A CAS that writes back the value it read. Not `fetch_add(0)`: LLVM lowers an
                    // idempotent RMW to a plain load on x86, and then this thread's `head_mode`
                    // store may still sit in its store buffer when a releaser reads `head_mode`
                    // (a lost wake-up that hung registry/request_mix; loom, which models the RMW,
                    // could not see it).
                    let mut c = self.sync.state.load(Ordering::Relaxed);
                    while let Err(now) = self.sync.state.compare_exchange_weak(
                        c,
                        c,
                        Ordering::AcqRel,
                        Ordering::Relaxed,
                    ) {
                        c = now;
                    }
                }
                let won = if exclusive {
                    self.try_acquire(me)
                } else {
                    self.try_acquire_shared(me)
                };
                if won {
                    q.waiters.pop_front();
                    self.publish_head(&q);
                    // The next waiter may be a reader that can share with us (propagation).
                    self.wake.notify_all();
                    break;
                }
            }
            q = primitive::raw_wait(&self.wake, q);
        }
        drop(q);
        if let Some(start) = start {
            self.stats.record_wait(start.elapsed());
        }
    }

    fn publish_head(&self, q: &Queue) {
        let mode = match q.waiters.front() {
            None => QUEUE_EMPTY,
            Some((_, true)) => QUEUE_EXCLUSIVE,
            Some((_, false)) => QUEUE_SHARED,
        };
        self.sync.head_mode.store(mode, Ordering::Release);
    }

    /// AQS `signalNext`: wake the queue if anyone is in it.
    fn signal_next(&self) {
        if self.sync.head_mode.load(Ordering::Acquire) != QUEUE_EMPTY {
            let _q = primitive::raw_lock(&self.queue);
            self.wake.notify_all();
        }
    }

    /// `tryReleaseShared`: the bookkeeping, then the CAS loop; wakes the queue at count 0.
    fn release_shared(&self) {
        let me = current_tid();
        let s = &self.sync;
        if s.first_reader.load(Ordering::Relaxed) == me {
            let n = s.first_reader_hold_count.load(Ordering::Relaxed);
            if n == 1 {
                s.first_reader.store(0, Ordering::Relaxed);
            } else {
                s.first_reader_hold_count.store(n - 1, Ordering::Relaxed);
            }
        } else {
            let cached_is_mine = s.cached_hold_counter.load(Ordering::Relaxed) == me;
            THREAD.with(|t| t.release(self.id, cached_is_mine));
        }
        let mut c = s.state.load(Ordering::Relaxed);
        loop {
            match s.state.compare_exchange_weak(
                c,
                c - SHARED_UNIT,
                Ordering::AcqRel,
                Ordering::Relaxed,
            ) {
                Ok(_) => break,
                Err(actual) => c = actual,
            }
        }
        if c - SHARED_UNIT == 0 {
            self.signal_next();
        }
    }

    /// `tryRelease`.
    fn release(&self) {
        let s = &self.sync;
        let nextc = s.state.load(Ordering::Relaxed) - 1;
        let free = exclusive_count(nextc) == 0;
        if free {
            s.owner.store(0, Ordering::Relaxed);
        }
        // An RMW rather than the JDK's volatile `setState`, for the wake-up argument.
        s.state.fetch_sub(1, Ordering::AcqRel);
        if free {
            self.signal_next();
        }
    }
}

/// `HoldCounter`s the calling thread has allocated so far (JDK: `ThreadLocal.initialValue`).
pub fn hold_counters_allocated() -> u64 {
    THREAD.with(|t| t.allocated.get())
}

impl<T> Deref for JdkReadGuard<'_, T> {
    type Target = T;
    #[inline]
    fn deref(&self) -> &T {
        // SAFETY: a read hold excludes writers.
        unsafe { (*self.ptr).deref() }
    }
}

impl<T> Drop for JdkReadGuard<'_, T> {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: the pointer is not used again.
        unsafe { ManuallyDrop::drop(&mut self.ptr) };
        self.lock.release_shared();
    }
}

impl<T> Deref for JdkWriteGuard<'_, T> {
    type Target = T;
    #[inline]
    fn deref(&self) -> &T {
        // SAFETY: the write hold excludes every other access.
        unsafe { &*(*self.ptr).deref() }
    }
}

impl<T> DerefMut for JdkWriteGuard<'_, T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as above, and `&mut self` makes this the guard's only live reference.
        unsafe { (*self.ptr).deref() }
    }
}

impl<T> Drop for JdkWriteGuard<'_, T> {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: the pointer is not used again.
        unsafe { ManuallyDrop::drop(&mut self.ptr) };
        self.lock.release();
    }
}

impl<T> fmt::Debug for JdkReadWriteLock<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JdkReadWriteLock")
            .field("name", &self.name())
            .finish_non_exhaustive()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::time::Duration;

    #[test]
    fn the_state_word_counts_readers_high_and_the_writer_low() {
        let l = JdkReadWriteLock::new("test.jdk.state", 5);
        let a = l.read();
        let b = l.read();
        assert_eq!(l.sync.state.load(Ordering::Relaxed), 2 << SHARED_SHIFT);
        assert_eq!(l.read_hold_count(), 2, "the first reader's count");
        drop((a, b));
        assert_eq!(l.sync.state.load(Ordering::Relaxed), 0);
        let mut w = l.write();
        *w += 1;
        let w2 = l.write(); // re-entrant
        assert_eq!(l.sync.state.load(Ordering::Relaxed), 2);
        drop(w2);
        let r = l.read(); // downgrade: the writer may read
        assert_eq!(*r, 6);
        drop(r);
        drop(w);
        assert_eq!(l.sync.state.load(Ordering::Relaxed), 0);
        assert_eq!(l.sync.owner.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn a_second_reader_keeps_its_count_in_read_holds_and_removes_it_at_zero() {
        let l = Arc::new(JdkReadWriteLock::new("test.jdk.holds", ()));
        let first = l.read(); // this thread is firstReader
        let l2 = Arc::clone(&l);
        std::thread::spawn(move || {
            let before = hold_counters_allocated();
            let g = l2.read();
            assert_eq!(l2.read_hold_count(), 1);
            assert_eq!(
                hold_counters_allocated(),
                before + 1,
                "readHolds.get allocates"
            );
            drop(g);
            assert_eq!(l2.read_hold_count(), 0, "removed at zero");
            // The cached counter is still ours: the JDK re-sets the same object.
            drop(l2.read());
            assert_eq!(hold_counters_allocated(), before + 1);
        })
        .join()
        .unwrap();
        // Another thread takes the cache; the first thread's next read allocates anew.
        let l3 = Arc::clone(&l);
        std::thread::spawn(move || {
            let before = hold_counters_allocated();
            drop(l3.read());
            assert_eq!(hold_counters_allocated(), before + 1);
        })
        .join()
        .unwrap();
        drop(first);
    }

    #[test]
    fn a_queued_writer_blocks_new_readers_but_not_a_reentrant_one() {
        let l = Arc::new(JdkReadWriteLock::new("test.jdk.reentrant", 0u32));
        let outer = l.read();
        let writer = {
            let l = Arc::clone(&l);
            std::thread::spawn(move || *l.write() += 1)
        };
        while !l.has_queued_threads() {
            std::thread::sleep(Duration::from_millis(1));
        }
        assert!(l.reader_should_block());
        // Another thread's new read must wait behind the writer.
        let reader = {
            let l = Arc::clone(&l);
            std::thread::spawn(move || *l.read())
        };
        // This thread's re-entrant read must not (it would deadlock otherwise).
        let inner = l.read();
        assert_eq!(*inner, 0);
        assert_eq!(l.read_hold_count(), 2);
        drop(inner);
        drop(outer);
        writer.join().unwrap();
        assert_eq!(reader.join().unwrap(), 1, "the reader ran after the writer");
    }

    #[test]
    fn many_threads_keep_the_counter_exact() {
        let l = Arc::new(JdkReadWriteLock::new("test.jdk.many", 0u64));
        let handles: Vec<_> = (0..4)
            .map(|i| {
                let l = Arc::clone(&l);
                std::thread::spawn(move || {
                    for n in 0..2000 {
                        if (n + i) % 7 == 0 {
                            *l.write() += 1;
                        } else {
                            let a = *l.read();
                            let _nested = l.read();
                            assert!(a <= 8000);
                        }
                    }
                    assert_eq!(l.read_hold_count(), 0);
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        let expected: u64 = (0..4)
            .map(|i| (0..2000).filter(|n| (n + i) % 7 == 0).count() as u64)
            .sum();
        assert_eq!(*l.read(), expected);
        assert_eq!(
            l.sync.state.load(Ordering::Relaxed),
            0,
            "every hold released"
        );
    }

    /// One reader cycling its read lock while a writer queues behind it, the shape that hung
    /// registry/request_mix: the queued writer's publication of its mode must reach the reader's
    /// release (a lost wake-up leaves both parked with the lock free). A watchdog turns a hang
    /// into a failure instead of a stuck test.
    #[test]
    fn a_queued_writer_is_woken_by_the_last_reader() {
        use std::sync::atomic::AtomicBool;
        use std::sync::mpsc;
        let lock = std::sync::Arc::new(JdkReadWriteLock::new("test.wakeup", 0u64));
        let (done_tx, done_rx) = mpsc::channel();
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let reader = {
            let (lock, stop) = (lock.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut seen = 0;
                while !stop.load(Ordering::Relaxed) {
                    seen = *lock.read();
                }
                seen
            })
        };
        let writer = {
            let lock = lock.clone();
            std::thread::spawn(move || {
                for _ in 0..20_000 {
                    *lock.write() += 1;
                }
                done_tx.send(()).unwrap();
            })
        };
        let finished = done_rx.recv_timeout(std::time::Duration::from_secs(60));
        stop.store(true, Ordering::Relaxed);
        assert!(
            finished.is_ok(),
            "no progress in 60 s: the writer and the reader are parked on a free lock"
        );
        writer.join().unwrap();
        reader.join().unwrap();
        assert_eq!(*lock.read(), 20_000);
    }
}
