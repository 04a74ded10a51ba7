//! Errors of the versionlookup system.

/// Why a versionlookup operation failed.
#[derive(Debug, thiserror::Error)]
pub enum VersionLookupError {
    /// Elasticsearch rejects empty ids, and so do we.
    #[error("document ids can't be empty")]
    EmptyId,
    /// Encoded id bytes that no `Uid::encode_id` output could produce.
    #[error("encoded id {bytes:02x?} is invalid: {reason}")]
    BadEncodedId {
        /// The rejected bytes.
        bytes: Vec<u8>,
        /// What was wrong, and what a valid encoding looks like.
        reason: &'static str,
    },
    /// An engine setting out of range.
    #[error("bad engine setting `{name}` = {value}: {reason}")]
    BadConfig {
        /// The setting's name.
        name: &'static str,
        /// The rejected value.
        value: String,
        /// What would be valid.
        reason: &'static str,
    },
    /// The index has no field the lookup needs (an index not built by [`super::Engine`]).
    #[error("the index schema has no field `{field}`")]
    MissingField {
        /// The field's name.
        field: &'static str,
    },
    /// tantivy failed (I/O on the directory, a corrupt segment, a failed commit).
    #[error("tantivy: {0}")]
    Tantivy(#[from] tantivy::TantivyError),
    /// Reading a segment file failed.
    #[error("reading a segment: {0}")]
    Io(#[from] std::io::Error),
    /// A directory path could not be opened as an index.
    #[error("opening index directory {path}: {message}")]
    Directory {
        /// The path given.
        path: String,
        /// What went wrong.
        message: String,
    },
}
