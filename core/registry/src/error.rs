//! Errors of the core registry: one enum, each variant holding the bad value and what is valid.

use super::solr_core::CoreId;

/// Why a registry operation failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RegistryError {
    /// The name has no descriptor in the registry.
    #[error("no core named `{name}` is registered; registered cores: {registered:?}")]
    NoSuchCore {
        /// The name asked for.
        name: String,
        /// Every registered name at the time of the call.
        registered: Vec<String>,
    },
    /// The operation needs a loaded core, and this one is only registered.
    #[error("core `{name}` is registered but not loaded; loaded cores: {loaded:?}")]
    NotLoaded {
        /// The name asked for.
        name: String,
        /// Every loaded name at the time of the call.
        loaded: Vec<String>,
    },
    /// A descriptor with this name is already registered.
    #[error("a core named `{name}` is already registered; pick a name not in {registered:?}")]
    AlreadyRegistered {
        /// The clashing name.
        name: String,
        /// Every registered name at the time of the call.
        registered: Vec<String>,
    },
    /// `swap` was asked to exchange a core with itself.
    #[error("cannot swap core `{name}` with itself; give two different loaded cores")]
    SwapWithItself {
        /// The name given twice.
        name: String,
    },
    /// The container has shut down (Solr answers such calls with a SERVER_ERROR).
    #[error("the core container is shut down; no core can be {action} (`{name}`)")]
    ShutDown {
        /// What the caller tried to do, e.g. `loaded`.
        action: &'static str,
        /// The core it was for.
        name: String,
    },
    /// A close took the reference count below zero: the core was closed more often than opened.
    #[error(
        "core {id} was closed once too often: its reference count fell to {count} (valid: >= 0)"
    )]
    RefCountBelowZero {
        /// The over-closed core.
        id: CoreId,
        /// The count after the bad close.
        count: i64,
    },
    /// `open` found a count of zero or less: the caller reached a core that was already closed.
    #[error("core {id} was opened after it closed: its reference count was {count} (valid: >= 1)")]
    OpenedClosedCore {
        /// The closed core.
        id: CoreId,
        /// The count the open found.
        count: i64,
    },
    /// The logging context models a bounded number of keys.
    #[error("mdc_puts = {given} is more than the {max} keys the logging context models")]
    TooManyMdcPuts {
        /// The requested number of puts per open.
        given: usize,
        /// The largest supported number.
        max: usize,
    },
}
