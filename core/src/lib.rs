//! critsec-core: four server hot paths, each with its "before", "after" and "ours" designs.
//!
//! | module | models | strategies |
//! |---|---|---|
//! | [`sync`] | instrumented locks (JFR-style contended-wait accounting), loom shim | — |
//! | [`registry`] | Solr `SolrCores` + `CoreContainer.getCore` (SOLR-16497) | `mutex`, `rwlock`, `snapshot` |
//! | [`versionlookup`] | Elasticsearch `_id` → version lookup at index time on a tantivy index (PR #19856) | per-segment, per-reader, pruned |
//! | [`replication`] | Infinispan DIST-SYNC writes: cluster, key locks, pools, sim + threads drivers | lock-forwarding, key-queue, triangle |
//! | [`parser`] | Lucene classic QueryParser: lexer, query tree, `toString` renderer | backtracking (JavaCC lookahead-by-exception), predictive |
//!
//! Key decision: this crate runs no benchmark and knows no harness type. Its only clock is the
//! contended-wait recorder in [`sync`]; everything else about timing lives in `critsec-harness`.

#![deny(missing_docs)]

pub mod kind;
pub mod parser;
pub mod registry;
pub mod replication;
pub mod sync;
#[cfg(feature = "versionlookup")]
pub mod versionlookup;
