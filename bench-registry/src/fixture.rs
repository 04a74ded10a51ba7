//! What both scenarios share: building a registry of cloud cores, the lock-wait probe, and the
//! post-run verification of reference counts and closes.

use critsec_core::registry::{Core, CoreDescriptor, CoreRegistry, RegistryConfig, RegistryKind};
use critsec_core::sync::{lock_stats, reset_lock_stats};
use critsec_harness::{LockWaitProbe, LockWaits, ScenarioError};
use std::sync::Arc;

/// A registry of strategy `kind` with `cores` (the scenarios require at least one) loaded SolrCloud cores `core0..`, each in its own shard of one collection,
/// on a node with a name (so an open can put all five of Solr's logging-context keys).
pub fn build(
    kind: RegistryKind,
    cores: usize,
    mdc_puts: usize,
) -> Result<(Box<dyn CoreRegistry>, Vec<String>), ScenarioError> {
    let config = RegistryConfig::new(Some("node1:8983_solr".into()), mdc_puts)
        .map_err(|e| ScenarioError::bad("mdc_puts", &mdc_puts.to_string(), e.to_string()))?;
    let registry = kind.build(config);
    let names: Vec<String> = (0..cores).map(|i| format!("core{i}")).collect();
    for (i, name) in names.iter().enumerate() {
        let d = CoreDescriptor::cloud(
            name,
            "collection1",
            format!("shard{i}"),
            format!("core_node{i}"),
        );
        registry
            .create(d)
            .map_err(|e| ScenarioError::Setup(e.to_string()))?;
    }
    Ok((registry, names))
}

/// Contended waits on the registry's named locks, per operation.
pub(crate) fn lock_probe() -> LockWaitProbe {
    LockWaitProbe::new("registry.", reset_lock_stats, || {
        lock_stats()
            .into_iter()
            .map(|s| LockWaits::new(s.name, s.contended, s.wait_ns))
            .collect()
    })
}

/// The check value of a quiescent registry: every loaded core is back at the registry's own
/// reference and was never closed, and every retired core (replaced by a reload) was closed
/// exactly once. Equal opens and closes are what bring each count back to 1.
pub fn verify(
    registry: &dyn CoreRegistry,
    expected_cores: usize,
    retired: &[Arc<Core>],
) -> Result<String, String> {
    let loaded = registry.loaded_names();
    if loaded.len() != expected_cores {
        return Err(format!(
            "{} cores loaded, expected {expected_cores}",
            loaded.len()
        ));
    }
    for name in &loaded {
        let core = registry
            .get_loaded_core_without_increment(name)
            .ok_or_else(|| format!("{name} vanished during verification"))?;
        if core.ref_count() != 1 || core.closes_run() != 0 || core.over_closes() != 0 {
            return Err(format!(
                "{name}: refcount {} (expected 1: opens != closes), closed {} times, over-closed {}",
                core.ref_count(),
                core.closes_run(),
                core.over_closes()
            ));
        }
    }
    for core in retired {
        if core.ref_count() != 0 || core.closes_run() != 1 || core.over_closes() != 0 {
            return Err(format!(
                "retired {}: refcount {}, closed {} times (expected exactly once), over-closed {}",
                core.id(),
                core.ref_count(),
                core.closes_run(),
                core.over_closes()
            ));
        }
    }
    let mut summary = format!("{} cores at refcount 1", loaded.len());
    if !retired.is_empty() {
        summary += &format!(", {} retired cores closed exactly once", retired.len());
    }
    Ok(summary)
}
