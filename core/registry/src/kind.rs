//! The registry strategies by kind: each strategy's id and how to build it.

use critsec_sync::kind::StrategyKind;

use crate::container::RegistryConfig;
use crate::core_registry::CoreRegistry;
use crate::{JdkRwLockRegistry, MutexRegistry, RwLockRegistry, SnapshotRegistry};

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

impl RegistryKind {
    /// An empty registry of this strategy.
    pub fn build(self, config: RegistryConfig) -> Box<dyn CoreRegistry> {
        match self {
            RegistryKind::Mutex => Box::new(MutexRegistry::new(config)),
            RegistryKind::RwLock => Box::new(RwLockRegistry::new(config)),
            RegistryKind::JdkRwLock => Box::new(JdkRwLockRegistry::new(config)),
            RegistryKind::Snapshot => Box::new(SnapshotRegistry::new(config)),
        }
    }
}

critsec_sync::strategy_kind_text!(RegistryKind);
