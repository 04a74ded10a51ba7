//! One reader generation and the per-segment lookup state every strategy caches.
//!
//! [`ReaderGeneration`] is what Elasticsearch calls the top-level reader: a tantivy
//! [`Searcher`] (one consistent set of segment readers with their deletes) plus the order in
//! which a lookup walks its segments. [`LeafLookup`] is `PerThreadIDVersionAndSeqNoLookup`: the
//! `_id` term dictionary handle, a reusable postings buffer and the `_version`/`_seq_no`
//! columns of one segment. It is mutable (the postings buffer), hence kept per thread.

use std::sync::Arc;

use tantivy::columnar::Column;
use tantivy::index::{InvertedIndexReader, SegmentId, SegmentReader};
use tantivy::postings::BlockSegmentPostings;
use tantivy::schema::Field;
use tantivy::{DocId, Searcher};

use super::error::VersionLookupError;
use super::lookup_cache::LookupStats;

/// Field name of the encoded id.
pub const ID_FIELD: &str = "_id";
/// Field name of the version fast field.
pub const VERSION_FIELD: &str = "_version";
/// Field name of the sequence-number fast field.
pub const SEQ_NO_FIELD: &str = "_seq_no";
/// Field name of the text body.
pub const BODY_FIELD: &str = "body";

/// The version and sequence number of a live document.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DocVersion {
    /// The document's version (1 for a new document, +1 per update).
    pub version: u64,
    /// The sequence number of the operation that wrote it.
    pub seq_no: u64,
}

/// One searcher plus the newest-first order of its segments.
///
/// What "newest" means: tantivy keeps committed segments in a hash map, so
/// `Searcher::segment_readers()` comes in no useful order (Lucene's `leaves()` come in
/// `SegmentInfos` order, flushes appended last). We rank each segment by the largest `_seq_no`
/// it holds (`Column::max_value`, stored in the column header, so ranking costs no scan): the
/// segment written last has the largest one, and a merged segment ranks by its newest
/// document. Correctness never depends on the order, because an update deletes the previous
/// copy before adding the new one, so at most one live copy of an id exists per generation.
pub struct ReaderGeneration {
    searcher: Searcher,
    generation: u64,
    id_field: Field,
    /// Segment ords, newest first.
    newest_first: Vec<u32>,
    segment_ids: Vec<SegmentId>,
}

impl ReaderGeneration {
    /// Wraps `searcher`, ranking its segments newest first.
    pub fn new(searcher: Searcher) -> Result<Self, VersionLookupError> {
        let id_field = searcher
            .schema()
            .get_field(ID_FIELD)
            .map_err(|_| VersionLookupError::MissingField { field: ID_FIELD })?;
        let mut ranked = Vec::with_capacity(searcher.segment_readers().len());
        for (ord, seg) in searcher.segment_readers().iter().enumerate() {
            let newest = seg.fast_fields().u64(SEQ_NO_FIELD)?.max_value();
            ranked.push((newest, ord as u32));
        }
        ranked.sort_unstable_by(|a, b| b.cmp(a));
        let newest_first: Vec<u32> = ranked.into_iter().map(|(_, ord)| ord).collect();
        let segment_ids = newest_first
            .iter()
            .map(|&o| searcher.segment_reader(o).segment_id())
            .collect();
        let generation = searcher.generation().generation_id();
        Ok(ReaderGeneration {
            searcher,
            generation,
            id_field,
            newest_first,
            segment_ids,
        })
    }

    /// The searcher generation id: new on every reload, the key of the per-reader cache.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// The underlying searcher.
    pub fn searcher(&self) -> &Searcher {
        &self.searcher
    }

    /// Number of segments.
    pub fn segment_count(&self) -> usize {
        self.newest_first.len()
    }

    /// The `i`-th newest segment.
    pub fn segment(&self, i: usize) -> &SegmentReader {
        self.searcher.segment_reader(self.newest_first[i])
    }

    /// Segment ids, newest first.
    pub fn segment_ids(&self) -> &[SegmentId] {
        &self.segment_ids
    }

    /// The `_id` field.
    pub fn id_field(&self) -> Field {
        self.id_field
    }

    /// Live documents in this generation.
    pub fn num_docs(&self) -> u64 {
        self.searcher.num_docs()
    }

    /// Opens fresh lookup states for every segment, newest first.
    pub fn open_leaves(&self) -> Result<Vec<LeafLookup>, VersionLookupError> {
        (0..self.segment_count())
            .map(|i| LeafLookup::open(self.segment(i), self.id_field))
            .collect()
    }
}

/// Lookup state for one segment (Elasticsearch `PerThreadIDVersionAndSeqNoLookup`).
pub struct LeafLookup {
    ids: Arc<InvertedIndexReader>,
    // Deviation: Elasticsearch fetches `_version` doc values afresh on every hit; opening a
    // tantivy column parses its header, so we keep the columns here as Elasticsearch 5.x did.
    versions: Column<u64>,
    seq_nos: Column<u64>,
    postings: BlockSegmentPostings,
}

impl LeafLookup {
    /// Opens the state for `segment`.
    pub fn open(segment: &SegmentReader, id_field: Field) -> Result<Self, VersionLookupError> {
        Ok(LeafLookup {
            ids: segment.inverted_index(id_field)?,
            versions: segment.fast_fields().u64(VERSION_FIELD)?,
            seq_nos: segment.fast_fields().u64(SEQ_NO_FIELD)?,
            postings: BlockSegmentPostings::empty(),
        })
    }

    /// Looks `uid` up in `segment` (the reader this state was opened on, or a later reader of
    /// the same segment, whose deletes may differ): one term-dictionary seek, then the postings,
    /// skipping deleted docs and keeping the last live one, as Elasticsearch does for nested docs.
    pub fn lookup(
        &mut self,
        segment: &SegmentReader,
        uid: &[u8],
        stats: &mut LookupStats,
    ) -> Result<Option<DocVersion>, VersionLookupError> {
        stats.term_seeks += 1;
        let Some(info) = self.ids.terms().get(uid)? else {
            return Ok(None);
        };
        self.ids
            .reset_block_postings_from_terminfo(&info, &mut self.postings)?;
        let alive = segment.alive_bitset();
        let mut last: Option<DocId> = None;
        loop {
            let docs = self.postings.docs();
            if docs.is_empty() {
                break;
            }
            for &doc in docs {
                if alive.is_none_or(|a| a.is_alive(doc)) {
                    last = Some(doc);
                }
            }
            self.postings.advance();
        }
        let Some(doc) = last else {
            return Ok(None);
        };
        match (self.versions.first(doc), self.seq_nos.first(doc)) {
            (Some(version), Some(seq_no)) => Ok(Some(DocVersion { version, seq_no })),
            _ => Err(VersionLookupError::MissingField {
                field: VERSION_FIELD,
            }),
        }
    }
}
