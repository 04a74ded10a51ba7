//! The registry strategies by kind: each strategy's id (a leaf: the strategies name themselves
//! by it; `strategies.rs` builds them).

use critsec_sync::kind::StrategyKind;

/// The registry strategies, as the command line and benchmark parameters name them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RegistryKind {
    /// [`MutexRegistry`]: upstream Solr.
    Mutex,
    /// [`RwLockRegistry`]: apache/solr PR #1155 on parking_lot's read-write lock.
    RwLock,
    /// [`JdkRwLockRegistry`]: apache/solr PR #1155 on the JDK's `ReentrantReadWriteLock`.
    JdkRwLock,
    /// [`SnapshotRegistry`]: ours.
    Snapshot,
}

impl StrategyKind for RegistryKind {
    const ALL: &'static [Self] = &[
        RegistryKind::Mutex,
        RegistryKind::RwLock,
        RegistryKind::JdkRwLock,
        RegistryKind::Snapshot,
    ];

    fn id(self) -> &'static str {
        match self {
            RegistryKind::Mutex => "mutex",
            RegistryKind::RwLock => "rwlock",
            RegistryKind::JdkRwLock => "jdk-rwlock",
            RegistryKind::Snapshot => "snapshot",
        }
    }
}

critsec_sync::strategy_kind_text!(RegistryKind);
