//! Models: the documents indexing threads have handed to the writer since the last refresh, one
//! buffer per thread.
//! Upstream: Lucene's `DocumentsWriterPerThread` pool as a refresh sees it. An indexing thread
//! adds to its own buffer, so indexing threads never contend for one; a refresh's cut takes every
//! buffer at once (`DocumentsWriterFlushControl.markForFullFlush`) and later documents go to fresh
//! ones while the taken ones are flushed.
//! Deviation: a Lucene DWPT inverts each document as it is added; a buffer here holds the built
//! document, and tantivy's indexing worker inverts it when the refresh hands the batch to the
//! writer. Deletes are buffered with the documents instead of going to a global delete queue.

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
}
