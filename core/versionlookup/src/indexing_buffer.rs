//! Models: the writes indexing threads make while a refresh has the writer out, one buffer per
//! thread.
//! Upstream: Lucene's fresh `DocumentsWriterPerThread`s during a full flush: once
//! `DocumentsWriterFlushControl.markForFullFlush` has marked the DWPTs to flush, indexing threads
//! write into new ones, each its own, so they never contend for one.
//! Deviation: a Lucene DWPT inverts each document as it is added; a buffer holds the built
//! document until the writer is handed back, and deletes wait in it with the documents instead
//! of going to the global delete queue.

use tantivy::{TantivyDocument, Term};
use thread_local::ThreadLocal;

use critsec_sync::Mutex;

/// One write, as the writer will receive it.
pub(crate) enum BufferedOp {
    /// Add a document, first deleting every older document with `delete`'s id (an update).
    Add {
        seq_no: u64,
        delete: Option<Term>,
        doc: TantivyDocument,
    },
    /// Delete every document with this id.
    Delete { seq_no: u64, term: Term },
}

impl BufferedOp {
    fn seq_no(&self) -> u64 {
        match self {
            BufferedOp::Add { seq_no, .. } | BufferedOp::Delete { seq_no, .. } => *seq_no,
        }
    }
}

/// A thread's buffer on cache lines of its own: threads append to theirs on every operation.
#[repr(align(128))]
struct ThreadBuffer(Mutex<Vec<BufferedOp>>);

/// Every indexing thread's buffer.
///
/// The engine calls [`push`](Self::push) with its indexing lock held shared and
/// [`take_all`](Self::take_all) with it held exclusively, so a thread's buffer lock is never
/// contended (its waits show as `versionlookup.indexing_buffer`) and a cut sees every operation
/// that finished before it and none that started after.
pub(crate) struct IndexingBuffers {
    per_thread: ThreadLocal<ThreadBuffer>,
}

impl IndexingBuffers {
    pub(crate) fn new() -> Self {
        IndexingBuffers {
            per_thread: ThreadLocal::new(),
        }
    }

    /// Appends `op` to the calling thread's buffer.
    pub(crate) fn push(&self, op: BufferedOp) {
        self.per_thread
            .get_or(|| ThreadBuffer(Mutex::new("versionlookup.indexing_buffer", Vec::new())))
            .0
            .lock()
            .push(op);
    }

    /// Takes every thread's buffer, leaving empty ones: O(threads), so that the cut is short.
    pub(crate) fn take_all(&self) -> Batch {
        Batch(
            self.per_thread
                .iter()
                .map(|buffer| std::mem::take(&mut *buffer.0.lock()))
                .collect(),
        )
    }
}

/// The buffers one cut took.
pub(crate) struct Batch(Vec<Vec<BufferedOp>>);

impl Batch {
    /// The operations in sequence-number order.
    ///
    /// Only the order of operations on one id matters to the writer (a delete removes the
    /// documents added before it); the per-id lock orders those and gives them increasing
    /// sequence numbers, so sorting by sequence number restores it across threads.
    pub(crate) fn into_ordered(self) -> Vec<BufferedOp> {
        let mut ops: Vec<BufferedOp> = self.0.into_iter().flatten().collect();
        // Stable and adaptive: each thread's run is already sorted.
        ops.sort_by_key(BufferedOp::seq_no);
        ops
    }

    /// The operations thread by thread, for the mutant that must break ordering.
    #[cfg(test)]
    pub(crate) fn into_by_thread(self) -> Vec<BufferedOp> {
        self.0.into_iter().flatten().collect()
    }
}
