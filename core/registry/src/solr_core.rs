//! `Core`: a loaded core with Solr's reference count and exactly-once close.
//!
//! Mirrors `SolrCore`'s `refCount` (`AtomicInteger(1)`), `open()` (increment, then
//! `MDCLoggingContext.setCore`) and `close()` (decrement; `doClose()` at zero; an error below zero;
//! `MDCLoggingContext.clear()` in a `finally`). The count has these states:
//!
//! | count | meaning |
//! |---|---|
//! | `n >= 2` | `n` live references; while the core is registered, one is the registry's |
//! | `1` | one reference: the registry's own if the core is registered, else the last handle's |
//! | `0` | closed: `do_close` ran once, on the thread whose close took the count from 1 to 0 |
//! | `< 0` | a close without a matching open: reported as [`RegistryError::RefCountBelowZero`] |
//!
//! The count only rises from `n >= 1`: [`Core::open`] is called only while the caller holds a lock
//! under which the registry still holds its reference, and [`Core::try_open`] refuses a count of 0.
//! So once it reaches 0 it never leaves it, and `do_close` cannot run twice.

use super::descriptor::CoreDescriptor;
use super::error::RegistryError;
use super::mdc::{Mdc, MdcEntries, MdcKind};
use critsec_sync::primitive::{Arc, AtomicI64, AtomicU32, Ordering, fence};
use std::fmt;

/// A core's unique id (Solr uses a random UUID per `SolrCore` instance; a reload gets a new one).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CoreId(pub u64);

impl fmt::Display for CoreId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "core#{}", self.0)
    }
}

impl CoreId {
    /// A fresh id. A plain std atomic on purpose: ids only need to be unique, no protocol orders
    /// anything by them, and loom cannot model a `static`.
    fn next() -> CoreId {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        CoreId(NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
    }
}

/// A loaded core: an id, the descriptor it was created from, and its reference count.
pub struct Core {
    id: CoreId,
    descriptor: Arc<CoreDescriptor>,
    mdc: MdcEntries,
    /// The logging-context model `open` and `close` run.
    mdc_kind: MdcKind,
    /// The reference count; see the state table in the module doc.
    ref_count: AtomicI64,
    /// How many times `do_close` ran (the exactly-once property makes this 0 or 1).
    closes_run: AtomicU32,
    /// Closes that found the count already at 0 or below.
    over_closes: AtomicU32,
    /// A deliberately broken count, for the loom models that must catch it (`cfg(loom)` only).
    #[cfg(loom)]
    mutant: std::sync::atomic::AtomicU8,
    /// The container's tally of real closes and over-closes, if the core was created by one.
    tally: Option<std::sync::Arc<CloseTally>>,
}

/// Real closes and over-closes of every core a container created, for verifying that none
/// leaked and none closed twice without keeping the cores themselves. Plain std atomics: a
/// statistic outside any protocol, bumped once per core at its real close.
#[derive(Debug, Default)]
pub struct CloseTally {
    closed: std::sync::atomic::AtomicU64,
    over_closed: std::sync::atomic::AtomicU64,
}

impl CloseTally {
    /// Real closes so far.
    pub fn closed(&self) -> u64 {
        self.closed.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Closes that found a core already closed (0 in a correct program).
    pub fn over_closed(&self) -> u64 {
        self.over_closed.load(std::sync::atomic::Ordering::Relaxed)
    }
}

#[cfg(loom)]
mod mutant;
#[cfg(loom)]
pub use mutant::RefCountMutant;

impl Core {
    /// A new core holding one reference: the one its registry will own (Solr's `refCount = 1`).
    /// `mdc` are the logging-context entries every outermost open puts.
    pub fn new(descriptor: Arc<CoreDescriptor>, mdc: MdcEntries, mdc_kind: MdcKind) -> Core {
        Core {
            id: CoreId::next(),
            descriptor,
            mdc,
            mdc_kind,
            ref_count: AtomicI64::new(1),
            closes_run: AtomicU32::new(0),
            over_closes: AtomicU32::new(0),
            #[cfg(loom)]
            mutant: Default::default(),
            tally: None,
        }
    }

    /// The same core, counted in `tally` when it closes.
    pub(crate) fn tallied(mut self, tally: std::sync::Arc<CloseTally>) -> Core {
        self.tally = Some(tally);
        self
    }

    /// The core's unique id.
    pub fn id(&self) -> CoreId {
        self.id
    }

    /// The descriptor the core was created from.
    ///
    /// Deviation: Solr renames a `SolrCore` in place on `swap` (`setName`, a volatile field). Our
    /// core's descriptor never changes, so a reader of an old registry snapshot can never see a
    /// half-renamed core; the name a core is registered under is the registry's key, and after a
    /// swap the logging context carries the name the core was created with.
    pub fn descriptor(&self) -> &Arc<CoreDescriptor> {
        &self.descriptor
    }

    /// The name the core was created with.
    pub fn name(&self) -> &str {
        &self.descriptor.name
    }

    /// Solr's `SolrCore.open()`: one more reference, then the logging-context puts.
    ///
    /// Callers must hold a lock under which the registry still owns its reference, so the count
    /// is at least 1 here; a count of 0 or less means that rule was broken and is reported.
    pub fn open(&self) -> Result<(), RegistryError> {
        // Relaxed, as in `Arc::clone`: the caller reached the core through a lock that already
        // orders it after the core's creation, and an increment publishes nothing.
        let prev = self.ref_count.fetch_add(1, Ordering::Relaxed);
        if prev <= 0 {
            return Err(RegistryError::OpenedClosedCore {
                id: self.id,
                count: prev,
            });
        }
        Mdc::set_core_with(self.mdc_kind, &self.mdc);
        Ok(())
    }

    /// `open()` for callers holding no lock (the snapshot registry): increments only while the
    /// count is above 0, so a core whose last reference is gone is never revived (returns false).
    pub fn try_open(&self) -> bool {
        #[cfg(loom)]
        if let Some(opened) = self.mutant_try_open() {
            return opened;
        }
        // Acquire on every read of the count: when it reads 0, it synchronises with the Release
        // decrement that closed the core, which the closing writer made after publishing the
        // snapshot without this core; a snapshot loaded after this call therefore no longer holds
        // it (see `SnapshotRegistry`). On success Relaxed would do, as in `open`.
        let mut count = self.ref_count.load(Ordering::Acquire);
        loop {
            if count <= 0 {
                return false;
            }
            match self.ref_count.compare_exchange_weak(
                count,
                count + 1,
                Ordering::Relaxed,
                Ordering::Acquire,
            ) {
                Ok(_) => break,
                Err(actual) => count = actual,
            }
        }
        Mdc::set_core_with(self.mdc_kind, &self.mdc);
        true
    }

    /// Solr's `SolrCore.close()`: one reference fewer; the real close runs when the count reaches
    /// 0. Returns whether this call closed the core. The logging context is cleared in any case.
    pub fn close(&self) -> Result<bool, RegistryError> {
        let result = self.release();
        Mdc::clear_with(self.mdc_kind);
        result
    }

    /// The `CloserThread`'s `close()` of a core the transient cache evicted: the same release of
    /// a reference (here the registry's), leaving the calling thread's logging context alone.
    /// In Solr that close runs on the closer thread, whose context is its own (its clear there
    /// is not modelled); here the thread that ran the eviction calls it, and that thread may be
    /// a request holding another core, whose context must stay as its own open left it.
    pub(crate) fn close_on_closer_thread(&self) -> Result<bool, RegistryError> {
        self.release()
    }

    /// `close()` without the logging context: one reference fewer, the real close at 0.
    fn release(&self) -> Result<bool, RegistryError> {
        // Release, as in `Arc::drop`: everything this reference holder did with the core happens
        // before the real close, which the closing thread orders after itself with the fence below.
        #[cfg(not(loom))]
        let prev = self.ref_count.fetch_sub(1, Ordering::Release);
        #[cfg(loom)]
        let prev = self.mutant_decrement();
        if prev == 1 {
            fence(Ordering::Acquire);
            self.do_close();
            Ok(true)
        } else if prev <= 0 {
            // Relaxed: a statistic, read after the threads that could close have been joined.
            self.over_closes.fetch_add(1, Ordering::Relaxed);
            if let Some(tally) = &self.tally {
                tally
                    .over_closed
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
            Err(RegistryError::RefCountBelowZero {
                id: self.id,
                count: prev - 1,
            })
        } else {
            Ok(false)
        }
    }

    /// Solr's `doClose()`: releases the core's resources; runs once, at count 0.
    fn do_close(&self) {
        // Relaxed: a statistic, see `over_closes`.
        self.closes_run.fetch_add(1, Ordering::Relaxed);
        if let Some(tally) = &self.tally {
            tally
                .closed
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
    }

    /// The current reference count (a racy read unless the caller has stopped all other users).
    pub fn ref_count(&self) -> i64 {
        // Relaxed: for observation; a holder of a reference sees at least its own increment.
        self.ref_count.load(Ordering::Relaxed)
    }

    /// Solr's `isClosed()`: the count is 0 or less.
    pub fn is_closed(&self) -> bool {
        self.ref_count() <= 0
    }

    /// How many times the real close ran: 0 while open, exactly 1 once closed.
    pub fn closes_run(&self) -> u32 {
        self.closes_run.load(Ordering::Relaxed)
    }

    /// How many closes found the core already closed (always 0 in a correct program).
    pub fn over_closes(&self) -> u32 {
        self.over_closes.load(Ordering::Relaxed)
    }

    /// The logging-context entries this core puts.
    pub fn mdc_entries(&self) -> &[(&'static str, Box<str>)] {
        &self.mdc
    }
}

impl fmt::Debug for Core {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Core")
            .field("id", &self.id)
            .field("name", &self.name())
            .field("ref_count", &self.ref_count())
            .finish_non_exhaustive()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn core() -> Core {
        Core::new(
            Arc::new(CoreDescriptor::new("c")),
            vec![("core", "c".into())].into(),
            MdcKind::Cheap,
        )
    }

    #[test]
    fn the_real_close_runs_once_when_the_last_reference_goes() {
        let c = core();
        c.open().unwrap();
        assert_eq!(c.ref_count(), 2);
        assert_eq!(c.close(), Ok(false));
        assert_eq!(c.closes_run(), 0);
        assert_eq!(c.close(), Ok(true));
        assert!(c.is_closed());
        assert_eq!(c.closes_run(), 1);
    }

    #[test]
    fn closing_below_zero_is_an_error_not_a_second_close() {
        let c = core();
        assert_eq!(c.close(), Ok(true));
        assert_eq!(
            c.close(),
            Err(RegistryError::RefCountBelowZero {
                id: c.id(),
                count: -1
            })
        );
        assert_eq!(c.closes_run(), 1);
        assert_eq!(c.over_closes(), 1);
    }

    #[test]
    fn a_closed_core_cannot_be_reopened() {
        let c = core();
        assert!(c.try_open());
        assert_eq!(c.close(), Ok(false));
        assert_eq!(c.close(), Ok(true));
        assert!(!c.try_open());
        assert_eq!(c.ref_count(), 0);
        assert!(matches!(
            c.open(),
            Err(RegistryError::OpenedClosedCore { count: 0, .. })
        ));
    }

    #[test]
    fn open_fills_and_close_clears_the_logging_context() {
        let c = core();
        c.open().unwrap();
        assert_eq!(Mdc::get("core").as_deref(), Some("c"));
        c.close().unwrap();
        assert_eq!(Mdc::get("core"), None);
        assert_eq!(Mdc::depth(), 0);
    }
}
