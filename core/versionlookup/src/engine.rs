//! The engine: a tantivy index written the way an Elasticsearch primary shard writes.
//!
//! [`Engine::index`] follows `InternalEngine.index` for provided ids: take the engine's indexing
//! lock shared and the id's lock, resolve the current version (live version map first, then the
//! lookup cache against the last refreshed reader), assign version + 1 (or 1), and hand the write
//! (update = delete by term + add) to the writer. [`Engine::index_auto`] is the append-only path
//! for auto-generated ids: no version map, no lookup.
//!
//! [`Engine::refresh`] follows `InternalEngine.refresh` with the version map as a refresh
//! listener, and indexing goes on while it runs. Its cut takes the indexing lock exclusively for
//! a few swaps: the version map's `beforeRefresh`, and the writer taken out for the commit
//! (Lucene's `markForFullFlush`). Until the writer is handed back, index operations buffer their
//! writes per thread, as Lucene's go to fresh DWPTs during a full flush. With no engine lock the
//! refresh commits, hands the writer back with what was buffered meanwhile, reopens the reader,
//! lets the lookup cache see the new generation, publishes it, and calls `afterRefresh`.
//!
//! Deviation: tantivy has no near-real-time reader, so a refresh is a commit (a Lucene commit:
//! segments written and the index's meta file saved) followed by a reopen, and each refresh that
//! saw writes adds one segment. One tantivy indexing worker inverts the documents handed to the
//! writer, not each indexing thread into its own DWPT, and the documents buffered during a
//! commit reach it only when the writer is handed back.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;

use arc_swap::ArcSwap;
use tantivy::index::SegmentId;
use tantivy::indexer::NoMergePolicy;
use tantivy::schema::{BytesOptions, FAST, Field, Schema, TEXT};
use tantivy::{Index, IndexReader, IndexWriter, ReloadPolicy, TantivyDocument, Term};

use super::error::VersionLookupError;
use super::indexing_buffer::{Batch, BufferedOp, IndexingBuffers};
use super::leaf_lookup::{
    BODY_FIELD, DocVersion, ID_FIELD, ReaderGeneration, SEQ_NO_FIELD, VERSION_FIELD,
};
use super::live_version_map::{LiveVersionMap, MapEntry};
use super::lookup_cache::{LookupCache, LookupStats};
use super::uid::Uid;
use critsec_sync::{Mutex, RwLock, RwLockWriteGuard};

/// Engine settings.
#[derive(Debug, Clone)]
pub struct EngineConfig {
    /// `None` keeps the index in RAM; a path puts it on disk, memory-mapped (the directory must
    /// be empty or absent).
    pub directory: Option<PathBuf>,
    /// Refresh (commit and reopen) after every this many index/delete operations, which makes
    /// the segment count a controlled parameter. `None`: only explicit refreshes. The operation
    /// that reaches the count runs the refresh; the other indexing threads go on.
    pub refresh_every_ops: Option<u64>,
    /// After a refresh, merge the smallest segments in the background whenever there are more
    /// than this many (one merge at a time). `None`: never merge on our own.
    pub max_segments: Option<usize>,
    /// Tombstones are collected once they are this many refreshes old (`index.gc_deletes`).
    pub gc_deletes_refreshes: u64,
    /// tantivy's indexing memory budget, in bytes (at least 15 MB).
    pub writer_memory_bytes: usize,
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            directory: None,
            refresh_every_ops: None,
            max_segments: None,
            gc_deletes_refreshes: 4,
            writer_memory_bytes: 64 << 20,
        }
    }
}

/// What an index operation did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IndexResult {
    /// The version written.
    pub version: u64,
    /// The operation's sequence number.
    pub seq_no: u64,
    /// True when no live document had this id.
    pub created: bool,
    /// True when the live version map answered and the reader was not consulted.
    pub from_version_map: bool,
    /// What the reader lookup cost (all zero when the map answered or for auto ids).
    pub lookup: LookupStats,
}

/// What a delete did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeleteResult {
    /// The version of the tombstone.
    pub version: u64,
    /// True when a live document was deleted.
    pub found: bool,
}

/// Called around the version lookup of [`Engine::index_timed`], so a benchmark can time the
/// lookup alone; core itself reads no clock.
pub trait LookupTimer {
    /// Just before the version map is consulted.
    fn start(&mut self);
    /// Just after the version is resolved.
    fn stop(&mut self);
}

impl LookupTimer for () {
    fn start(&mut self) {}
    fn stop(&mut self) {}
}

#[derive(Clone, Copy)]
struct Fields {
    id: Field,
    version: Field,
    seq_no: Field,
    body: Field,
}

enum Resolved {
    Live(DocVersion, bool),
    Deleted(DocVersion),
    Absent,
}

/// Deliberate bugs in the refresh, for the tests that must catch them.
#[cfg(test)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum RefreshMutant {
    /// The real refresh.
    #[default]
    None,
    /// `afterRefresh` before the new reader is published: entries leave the version map before
    /// their documents are visible.
    DropOldBeforePublish,
    /// The refresh count moves when the reader is published, not at the cut: a delete made
    /// while a refresh runs gets the previous count, so its tombstone is collected by that
    /// refresh although its delete is only in the next one.
    CountRefreshAtPublish,
    /// Buffered writes are fed to the writer thread by thread, not in sequence-number order: a
    /// later write of an id by one thread can be applied before an earlier one by another.
    FeedByThread,
}

/// Whether a refresh is running on behalf of the schedule, and whether another one is owed.
#[derive(Default)]
struct Schedule {
    running: bool,
    owed: bool,
}

/// A shard's indexing engine over one tantivy index and one lookup-cache strategy.
pub struct Engine {
    index: Index,
    fields: Fields,
    /// Index operations hold it shared (Elasticsearch's engine `readLock`) and hand their
    /// writes to the writer it holds (`IndexWriter.updateDocument`); a cut holds it exclusively
    /// for a few swaps and may take the writer out. `None` while a refresh, merge or bulk load
    /// has the writer.
    indexing: RwLock<Option<IndexWriter>>,
    /// Writes made while the writer was out, until it is handed back.
    buffers: IndexingBuffers,
    /// One refresh, merge or bulk load has the writer out at a time.
    refresh_lock: Mutex<()>,
    reader: IndexReader,
    current: ArcSwap<ReaderGeneration>,
    cache: Box<dyn LookupCache>,
    version_map: LiveVersionMap,
    /// Only uniqueness and the order of one id's operations matter, so `Relaxed`: the id's
    /// lock orders those.
    next_seq_no: AtomicU64,
    /// Cuts made; written under the exclusive indexing lock and read under the shared one, so
    /// the lock orders it and `Relaxed` suffices.
    refreshes: AtomicU64,
    /// Operations since creation, to trigger refreshes; a plain counter, `Relaxed`.
    ops: AtomicU64,
    /// A std mutex, taken once per scheduled refresh: it guards no protocol the benchmarks
    /// measure, and an instrumented `versionlookup.` lock would add a lock-wait metric to every
    /// versionlookup result.
    schedule: std::sync::Mutex<Schedule>,
    /// Set while a background merge runs; `Acquire`/`Release` so the next merge sees its end.
    merging: Arc<AtomicBool>,
    /// The thread waiting for the last background merge, so `force_merge` can wait for it too.
    /// A std mutex, as `schedule` is.
    merge_thread: std::sync::Mutex<Option<JoinHandle<()>>>,
    config: EngineConfig,
    #[cfg(test)]
    mutant: RefreshMutant,
}

impl Engine {
    /// A new, empty engine with `cache` as its lookup strategy.
    pub fn open(
        config: EngineConfig,
        cache: Box<dyn LookupCache>,
    ) -> Result<Self, VersionLookupError> {
        if config.gc_deletes_refreshes == 0 {
            return Err(VersionLookupError::BadConfig {
                name: "gc_deletes_refreshes",
                value: "0".into(),
                reason: "tombstones must outlive the refresh that commits their delete: use >= 1",
            });
        }
        if config.refresh_every_ops == Some(0) || config.max_segments == Some(0) {
            return Err(VersionLookupError::BadConfig {
                name: "refresh_every_ops/max_segments",
                value: "0".into(),
                reason: "use a positive number, or None",
            });
        }
        let mut sb = Schema::builder();
        let fields = Fields {
            id: sb.add_bytes_field(ID_FIELD, BytesOptions::default().set_indexed()),
            version: sb.add_u64_field(VERSION_FIELD, FAST),
            seq_no: sb.add_u64_field(SEQ_NO_FIELD, FAST),
            body: sb.add_text_field(BODY_FIELD, TEXT),
        };
        let schema = sb.build();
        let index = match &config.directory {
            None => Index::create_in_ram(schema),
            Some(path) => {
                let dir_err = |message: String| VersionLookupError::Directory {
                    path: path.display().to_string(),
                    message,
                };
                std::fs::create_dir_all(path).map_err(|e| dir_err(e.to_string()))?;
                Index::create_in_dir(path, schema).map_err(|e| dir_err(e.to_string()))?
            }
        };
        let memory = config.writer_memory_bytes.max(15_000_000);
        let writer: IndexWriter = index.writer_with_num_threads(1, memory)?;
        writer.set_merge_policy(Box::new(NoMergePolicy));
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()?;
        let first = ReaderGeneration::new(reader.searcher())?;
        cache.on_refresh(&first)?;
        Ok(Engine {
            index,
            fields,
            indexing: RwLock::new("versionlookup.engine", Some(writer)),
            buffers: IndexingBuffers::new(),
            refresh_lock: Mutex::new("versionlookup.refresh", ()),
            reader,
            current: ArcSwap::from_pointee(first),
            cache,
            version_map: LiveVersionMap::new(),
            next_seq_no: AtomicU64::new(0),
            refreshes: AtomicU64::new(0),
            ops: AtomicU64::new(0),
            schedule: std::sync::Mutex::new(Schedule::default()),
            merging: Arc::new(AtomicBool::new(false)),
            merge_thread: std::sync::Mutex::new(None),
            config,
            #[cfg(test)]
            mutant: RefreshMutant::None,
        })
    }

    /// This engine with a deliberate bug in its refresh.
    #[cfg(test)]
    pub(crate) fn with_mutant(mut self, mutant: RefreshMutant) -> Self {
        self.mutant = mutant;
        self
    }

    /// The lookup strategy.
    pub fn cache(&self) -> &dyn LookupCache {
        &*self.cache
    }

    /// The last refreshed reader generation.
    pub fn reader(&self) -> Arc<ReaderGeneration> {
        self.current.load_full()
    }

    /// Segments in the last refreshed reader.
    pub fn segment_count(&self) -> usize {
        self.current.load().segment_count()
    }

    /// Entries in the version map's (current, old, tombstones).
    pub fn version_map_sizes(&self) -> (usize, usize, usize) {
        self.version_map.sizes()
    }

    fn document(&self, uid: &[u8], version: u64, seq_no: u64, body: &str) -> TantivyDocument {
        let mut doc = TantivyDocument::new();
        doc.add_bytes(self.fields.id, uid);
        doc.add_u64(self.fields.version, version);
        doc.add_u64(self.fields.seq_no, seq_no);
        doc.add_text(self.fields.body, body);
        doc
    }

    /// `resolveDocVersion`: the version map, then the lookup cache on the last reader.
    fn resolve(&self, uid: &[u8], stats: &mut LookupStats) -> Result<Resolved, VersionLookupError> {
        match self.version_map.get_under_lock(uid) {
            Some(MapEntry::Indexed(v)) => return Ok(Resolved::Live(v, true)),
            Some(MapEntry::Deleted(v)) => return Ok(Resolved::Deleted(v)),
            None => {}
        }
        // Loaded after the map was checked: a refresh publishes its reader before it drops the
        // old map, so an entry that left the map is in the reader we load here.
        let reader = self.current.load();
        Ok(match self.cache.lookup(&reader, uid, stats)? {
            Some(v) => Resolved::Live(v, false),
            None => Resolved::Absent,
        })
    }

    /// Indexes a document with a provided id; see [`Engine::index_timed`].
    pub fn index(&self, id: &str, body: &str) -> Result<IndexResult, VersionLookupError> {
        self.index_timed(id, body, &mut ())
    }

    /// Indexes a document with a provided id, calling `timer` around the version lookup.
    pub fn index_timed(
        &self,
        id: &str,
        body: &str,
        timer: &mut impl LookupTimer,
    ) -> Result<IndexResult, VersionLookupError> {
        let uid = Uid::encode_id(id)?;
        let result = {
            let writer = self.indexing.read();
            let _id_lock = self.version_map.acquire_lock(&uid);
            let mut lookup = LookupStats::default();
            timer.start();
            let resolved = self.resolve(&uid, &mut lookup);
            timer.stop();
            let (version, live, from_version_map) = match resolved? {
                Resolved::Live(v, from_map) => (v.version + 1, true, from_map),
                Resolved::Deleted(v) => (v.version + 1, false, true),
                Resolved::Absent => (1, false, false),
            };
            let seq_no = self.next_seq_no.fetch_add(1, Ordering::Relaxed);
            // Handed to the writer before the version map records it: a cut that moves the
            // entry to `old` has the document in its commit (`IndexWriter.updateDocument` comes
            // before `putIndexUnderLock` in `InternalEngine.index`).
            self.hand(
                writer.as_ref(),
                BufferedOp::Add {
                    seq_no,
                    delete: live.then(|| Term::from_field_bytes(self.fields.id, &uid)),
                    doc: self.document(&uid, version, seq_no, body),
                },
            )?;
            self.version_map
                .put_index_under_lock(&uid, DocVersion { version, seq_no });
            IndexResult {
                version,
                seq_no,
                created: !live,
                from_version_map,
                lookup,
            }
        };
        self.after_op()?;
        Ok(result)
    }

    /// The append-only path for an auto-generated id (`planIndexingAsPrimary` with
    /// `canOptimizeAddDocument`): no version map entry and no lookup; the version is 1.
    ///
    /// Deviation: Elasticsearch also handles retries of auto-id requests (the unsafe version map
    /// mode and `maxUnsafeAutoIdTimestamp`); we do not, so auto ids must be unique and must not
    /// be reused as provided ids.
    pub fn index_auto(&self, id: &str, body: &str) -> Result<IndexResult, VersionLookupError> {
        let uid = Uid::encode_id(id)?;
        let seq_no = {
            let writer = self.indexing.read();
            let _id_lock = self.version_map.acquire_lock(&uid);
            let seq_no = self.next_seq_no.fetch_add(1, Ordering::Relaxed);
            self.hand(
                writer.as_ref(),
                BufferedOp::Add {
                    seq_no,
                    delete: None,
                    doc: self.document(&uid, 1, seq_no, body),
                },
            )?;
            seq_no
        };
        self.after_op()?;
        Ok(IndexResult {
            version: 1,
            seq_no,
            created: true,
            from_version_map: false,
            lookup: LookupStats::default(),
        })
    }

    /// Deletes a document, leaving a tombstone with the next version.
    pub fn delete(&self, id: &str) -> Result<DeleteResult, VersionLookupError> {
        let uid = Uid::encode_id(id)?;
        let result = {
            let writer = self.indexing.read();
            let _id_lock = self.version_map.acquire_lock(&uid);
            let (version, found) = match self.resolve(&uid, &mut LookupStats::default())? {
                Resolved::Live(v, _) => (v.version + 1, true),
                Resolved::Deleted(v) => (v.version + 1, false),
                Resolved::Absent => (1, false),
            };
            let seq_no = self.next_seq_no.fetch_add(1, Ordering::Relaxed);
            if found {
                self.hand(
                    writer.as_ref(),
                    BufferedOp::Delete {
                        seq_no,
                        term: Term::from_field_bytes(self.fields.id, &uid),
                    },
                )?;
            }
            let stamp = self.refreshes.load(Ordering::Relaxed);
            self.version_map
                .put_delete_under_lock(&uid, DocVersion { version, seq_no }, stamp);
            DeleteResult { version, found }
        };
        self.after_op()?;
        Ok(result)
    }

    /// The current version of `id` as an index operation would see it (a realtime get):
    /// `None` when absent or deleted.
    pub fn get_version(&self, id: &str) -> Result<Option<u64>, VersionLookupError> {
        let uid = Uid::encode_id(id)?;
        let _indexing = self.indexing.read();
        let _id_lock = self.version_map.acquire_lock(&uid);
        Ok(match self.resolve(&uid, &mut LookupStats::default())? {
            Resolved::Live(v, _) => Some(v.version),
            Resolved::Deleted(_) | Resolved::Absent => None,
        })
    }

    /// Looks an encoded id up in the last refreshed reader through the cache alone, bypassing
    /// the version map (the lookup benchmark's operation).
    pub fn lookup_in_reader(
        &self,
        uid: &[u8],
        stats: &mut LookupStats,
    ) -> Result<Option<DocVersion>, VersionLookupError> {
        let reader = self.current.load();
        self.cache.lookup(&reader, uid, stats)
    }

    fn after_op(&self) -> Result<(), VersionLookupError> {
        if let Some(every) = self.config.refresh_every_ops {
            let n = self.ops.fetch_add(1, Ordering::Relaxed) + 1;
            if n % every == 0 {
                self.scheduled_refresh()?;
            }
        }
        Ok(())
    }

    /// A refresh on the schedule (`maybeRefresh`): the operation that reaches the count runs
    /// it, unless one is running already; then that one refreshes once more when it ends, so a
    /// count is never lost and no indexing thread waits for another's refresh.
    fn scheduled_refresh(&self) -> Result<(), VersionLookupError> {
        {
            let mut schedule = self.schedule.lock().unwrap_or_else(|e| e.into_inner());
            if schedule.running {
                schedule.owed = true;
                return Ok(());
            }
            schedule.running = true;
        }
        loop {
            let result = self.refresh();
            let mut schedule = self.schedule.lock().unwrap_or_else(|e| e.into_inner());
            if result.is_err() || !schedule.owed {
                schedule.running = false;
                return result;
            }
            schedule.owed = false;
        }
    }

    /// Makes every write that finished before it visible and moves the version map's entries
    /// out (Elasticsearch refresh, with `LiveVersionMap` as a refresh listener). Indexing goes on
    /// meanwhile; a second refresh waits for this one.
    ///
    /// An error may leave writes out of the index, as Elasticsearch fails its engine when a
    /// refresh fails.
    pub fn refresh(&self) -> Result<(), VersionLookupError> {
        #[cfg(test)]
        let count_at_cut = self.mutant != RefreshMutant::CountRefreshAtPublish;
        #[cfg(not(test))]
        let count_at_cut = true;
        let _one_at_a_time = self.refresh_lock.lock();
        // The cut: no index operation is in flight, so current -> old is atomic with respect to
        // writes, and the writer taken out holds exactly the writes `old` records.
        let (mut writer, mut now) = {
            let mut indexing = self.indexing.write();
            self.version_map.before_refresh();
            let now = if count_at_cut {
                self.refreshes.fetch_add(1, Ordering::Relaxed) + 1
            } else {
                0
            };
            (Self::take_writer(&mut indexing), now)
        };
        let published = (|| {
            writer.commit()?;
            self.maybe_merge(&mut writer)?;
            #[cfg(test)]
            if self.mutant == RefreshMutant::DropOldBeforePublish {
                self.version_map.after_refresh();
            }
            self.publish()
        })();
        self.hand_back(writer)?;
        published?;
        if !count_at_cut {
            let _indexing = self.indexing.write();
            now = self.refreshes.fetch_add(1, Ordering::Relaxed) + 1;
        }
        // Entries of `old` are in the reader just published: only now may they leave the map.
        self.version_map.after_refresh();
        self.version_map
            .prune_tombstones(now, self.config.gc_deletes_refreshes);
        Ok(())
    }

    /// Hands a write to the writer, or to this thread's buffer while the writer is out.
    fn hand(&self, writer: Option<&IndexWriter>, op: BufferedOp) -> Result<(), VersionLookupError> {
        match writer {
            Some(writer) => apply(writer, op),
            None => {
                self.buffers.push(op);
                Ok(())
            }
        }
    }

    /// Applies a batch in sequence-number order; after an error, applies the rest and returns
    /// the error.
    fn feed(&self, writer: &IndexWriter, batch: Batch) -> Result<(), VersionLookupError> {
        #[cfg(test)]
        let ops = if self.mutant == RefreshMutant::FeedByThread {
            batch.into_by_thread()
        } else {
            batch.into_ordered()
        };
        #[cfg(not(test))]
        let ops = batch.into_ordered();
        let mut result = Ok(());
        for op in ops {
            result = result.and(apply(writer, op));
        }
        result
    }

    /// Takes the writer out, in a cut; only one checkout at a time, under `refresh_lock`.
    fn take_writer(indexing: &mut RwLockWriteGuard<'_, Option<IndexWriter>>) -> IndexWriter {
        indexing
            .take()
            .expect("the writer is out only under refresh_lock, and always handed back")
    }

    /// Hands the writer back to index operations after feeding it what they buffered while it
    /// was out: first what a short cut takes, with no lock held, then, inside the cut that hands
    /// the writer back, what they buffered meanwhile, so no later write of an id overtakes a
    /// buffered one. Feeds the rest after an error, and returns the first.
    fn hand_back(&self, writer: IndexWriter) -> Result<(), VersionLookupError> {
        let batch = {
            let _cut = self.indexing.write();
            self.buffers.take_all()
        };
        let fed = self.feed(&writer, batch);
        let mut indexing = self.indexing.write();
        let fed = fed.and(self.feed(&writer, self.buffers.take_all()));
        *indexing = Some(writer);
        fed
    }

    /// Opens the committed index as a new reader generation and publishes it; called under
    /// `refresh_lock`, so publications follow commits in order.
    fn publish(&self) -> Result<(), VersionLookupError> {
        self.reader.reload()?;
        let generation = ReaderGeneration::new(self.reader.searcher())?;
        self.cache.on_refresh(&generation)?;
        self.current.store(Arc::new(generation));
        Ok(())
    }

    /// Starts a background merge of the smallest segments when there are too many.
    fn maybe_merge(&self, writer: &mut IndexWriter) -> Result<(), VersionLookupError> {
        let Some(max) = self.config.max_segments else {
            return Ok(());
        };
        let mut metas = self.index.searchable_segment_metas()?;
        if metas.len() <= max || self.merging.load(Ordering::Acquire) {
            return Ok(());
        }
        metas.sort_by_key(|m| m.num_docs());
        let ids: Vec<SegmentId> = metas
            .iter()
            .take(metas.len() - max + 1)
            .map(|m| m.id())
            .collect();
        let merge = writer.merge(&ids);
        self.merging.store(true, Ordering::Release);
        let merging = Arc::clone(&self.merging);
        let thread = std::thread::spawn(move || {
            // The result is only a segment meta; a failed merge leaves the segments as they
            // were, which is still a correct index.
            let _ = merge.wait();
            merging.store(false, Ordering::Release);
        });
        // The previous merge has ended (`merging` was false), so its handle can be dropped.
        *self.merge_thread.lock().unwrap_or_else(|e| e.into_inner()) = Some(thread);
        Ok(())
    }

    /// Waits until the background merge running now, if any, has finished (a new one starts
    /// only at a later refresh). A paired run's idle side calls this so that its merges do not
    /// compete with the side being measured.
    pub fn wait_for_background_merge(&self) {
        let running = self
            .merge_thread
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some(thread) = running {
            // A panic in the merging thread leaves the segments as they were: still an index.
            let _ = thread.join();
        }
    }

    /// Refreshes, then merges every segment into one and publishes the result. A background
    /// merge still running is waited for first, so its segments are merged too.
    pub fn force_merge(&self) -> Result<(), VersionLookupError> {
        self.refresh()?;
        // Background merges start only in `refresh`, under this lock, so none starts while we
        // wait for the running one; index operations go on meanwhile.
        let _one_at_a_time = self.refresh_lock.lock();
        self.wait_for_background_merge();
        let mut writer = Self::take_writer(&mut self.indexing.write());
        let merged = (|| {
            let ids = self.index.searchable_segment_ids()?;
            if ids.len() > 1 && !self.merging.load(Ordering::Acquire) {
                writer.merge(&ids).wait()?;
            }
            Ok::<_, VersionLookupError>(())
        })();
        self.hand_back(writer)?;
        merged?;
        self.publish()
    }

    /// Loads documents with known, distinct ids and versions into an empty engine, committing
    /// every `per_segment` documents so the result has a chosen number of segments; no lookups
    /// (the path of a recovery that replays operations with their versions).
    pub fn bulk_load<'a>(
        &self,
        docs: impl IntoIterator<Item = (&'a str, u64)>,
        per_segment: usize,
    ) -> Result<u64, VersionLookupError> {
        if self.next_seq_no.load(Ordering::Relaxed) != 0 || per_segment == 0 {
            return Err(VersionLookupError::BadConfig {
                name: "bulk_load",
                value: format!("per_segment={per_segment}"),
                reason: "bulk_load needs an empty engine and per_segment >= 1",
            });
        }
        let _one_at_a_time = self.refresh_lock.lock();
        let mut writer = Self::take_writer(&mut self.indexing.write());
        let loaded = self.load(&mut writer, docs, per_segment);
        self.hand_back(writer)?;
        let loaded = loaded?;
        self.publish()?;
        Ok(loaded)
    }

    fn load<'a>(
        &self,
        writer: &mut IndexWriter,
        docs: impl IntoIterator<Item = (&'a str, u64)>,
        per_segment: usize,
    ) -> Result<u64, VersionLookupError> {
        let mut seen = HashSet::new();
        let mut loaded = 0u64;
        for (id, version) in docs {
            let uid = Uid::encode_id(id)?;
            if !seen.insert(uid.clone()) {
                return Err(VersionLookupError::BadConfig {
                    name: "bulk_load",
                    value: id.to_string(),
                    reason: "ids must be distinct",
                });
            }
            let seq_no = self.next_seq_no.fetch_add(1, Ordering::Relaxed);
            writer.add_document(self.document(&uid, version.max(1), seq_no, "bulk loaded"))?;
            loaded += 1;
            if loaded % per_segment as u64 == 0 {
                writer.commit()?;
            }
        }
        writer.commit()?;
        Ok(loaded)
    }

    /// Live documents and the sum of their versions in the last refreshed reader: the check
    /// value benchmarks verify.
    pub fn checksum(&self) -> Result<(u64, u64), VersionLookupError> {
        let reader = self.current.load();
        let (mut docs, mut sum) = (0u64, 0u64);
        for seg in reader.searcher().segment_readers() {
            let versions = seg.fast_fields().u64(VERSION_FIELD)?;
            for doc in seg.doc_ids_alive() {
                docs += 1;
                sum += versions.first(doc).unwrap_or(0);
            }
        }
        Ok((docs, sum))
    }
}

/// Applies one write to the writer.
fn apply(writer: &IndexWriter, op: BufferedOp) -> Result<(), VersionLookupError> {
    match op {
        BufferedOp::Add { delete, doc, .. } => {
            if let Some(term) = delete {
                writer.delete_term(term);
            }
            writer.add_document(doc)?;
        }
        BufferedOp::Delete { term, .. } => {
            writer.delete_term(term);
        }
    }
    Ok(())
}
