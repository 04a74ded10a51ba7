//! One strategy of each kind: the one place that names every registry strategy's type, so that
//! the kind enum stays a leaf the strategies can name themselves by.

use crate::container::RegistryConfig;
use crate::core_registry::CoreRegistry;
use crate::kind::RegistryKind;
use crate::mutex_registry::MutexRegistry;
use crate::rwlock_registry::{JdkRwLockRegistry, RwLockRegistry};
use crate::snapshot_registry::SnapshotRegistry;

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
