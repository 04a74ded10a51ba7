//! What the scenarios share: building a registry of cores (SolrCloud or standalone), the
//! `mode`, `mdc` and `mdc_puts` parameters, the lock-wait probe, and the post-run verification
//! of reference counts and closes.

use critsec_harness::{Choice, LockWaitProbe, LockWaits, ParamSpec, Params, ScenarioError};
use critsec_registry::{Core, CoreDescriptor, CoreRegistry, MdcKind, RegistryConfig, RegistryKind};
use critsec_sync::kind::ids;
use critsec_sync::{lock_stats, reset_lock_stats};
use std::sync::Arc;

/// How the cores are deployed: SolrCloud (a node name from ZooKeeper, cloud descriptors: 5
/// logging-context puts per open) or standalone (1 put, the core name).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SolrMode {
    /// SolrCloud.
    Cloud,
    /// Standalone Solr.
    Standalone,
}

impl Choice for SolrMode {
    const ALL: &'static [Self] = &[SolrMode::Cloud, SolrMode::Standalone];
    fn id(self) -> &'static str {
        match self {
            SolrMode::Cloud => "cloud",
            SolrMode::Standalone => "standalone",
        }
    }
}

/// What a registry is built from.
#[derive(Debug, Clone, Copy)]
pub struct RegistrySetup {
    /// The strategy.
    pub kind: RegistryKind,
    /// Number of loaded cores.
    pub cores: usize,
    /// Deployment mode.
    pub mode: SolrMode,
    /// The logging-context model.
    pub mdc: MdcKind,
    /// Puts per outermost open; `None` = Solr's own count for the mode.
    pub mdc_puts: Option<usize>,
}

/// The `mode` parameter.
pub fn mode_param(default: SolrMode) -> ParamSpec {
    ParamSpec::choices(
        "mode",
        &[default],
        "SolrCloud (5 logging-context puts per open) or standalone (1)",
    )
}

/// The `strategy` parameter: every registry strategy, all measured by default.
pub fn strategy_param() -> ParamSpec {
    ParamSpec::choice(
        "strategy",
        &ids::<RegistryKind>(),
        &ids::<RegistryKind>(),
        "registry strategy",
    )
}

/// The `mdc_puts` parameter: logging-context puts per outermost open.
pub fn mdc_puts_param(default: &str) -> ParamSpec {
    ParamSpec::free(
        "mdc_puts",
        &[default],
        "logging-context puts per outermost open; solr = the mode's own (5 cloud, 1 standalone)",
    )
}

/// The `mdc` parameter: Solr's log4j2 copy-on-write context or the cheap garbage-free one.
pub fn mdc_param(default: &str) -> ParamSpec {
    ParamSpec::choice(
        "mdc",
        &[default],
        &ids::<MdcKind>(),
        "logging-context model: log4j2 (Solr's copy-on-write map) or cheap (no allocation)",
    )
}

impl RegistrySetup {
    /// Reads `strategy`, `cores` (at least 1), `mode`, `mdc` and `mdc_puts` (`solr` = the mode's
    /// own count) from `params`.
    pub fn from_params(params: &Params) -> Result<RegistrySetup, ScenarioError> {
        let mdc_puts = match params.get("mdc_puts")? {
            "solr" => None,
            _ => Some(params.parse("mdc_puts")?),
        };
        Ok(RegistrySetup {
            kind: params.parse("strategy")?,
            cores: params.parse_in("cores", 1..)?,
            mode: params.choice("mode")?,
            mdc: params.parse("mdc")?,
            mdc_puts,
        })
    }
}

/// The registry configuration `setup` asks for: its logging context, and in cloud mode a node
/// with a name (so an open can put all five of Solr's logging-context keys).
pub fn config(setup: RegistrySetup) -> Result<RegistryConfig, ScenarioError> {
    let cloud = setup.mode == SolrMode::Cloud;
    let mdc_puts = setup
        .mdc_puts
        .unwrap_or_else(|| RegistryConfig::solr_mdc_puts(cloud, cloud));
    let node = cloud.then(|| "node1:8983_solr".to_string());
    let mut config = RegistryConfig::new(node, mdc_puts)
        .map_err(|e| ScenarioError::bad("mdc_puts", &mdc_puts.to_string(), e.to_string()))?;
    config.mdc = setup.mdc;
    Ok(config)
}

/// The descriptor of the `i`-th core, `name`: in cloud mode in its own shard of one collection,
/// standalone without either.
pub fn descriptor(mode: SolrMode, i: usize, name: &str) -> CoreDescriptor {
    match mode {
        SolrMode::Cloud => CoreDescriptor::cloud(
            name,
            "collection1",
            format!("shard{i}"),
            format!("core_node{i}"),
        ),
        SolrMode::Standalone => CoreDescriptor::new(name),
    }
}

/// A registry of `setup.kind` with `setup.cores` (the scenarios require at least one) loaded
/// cores `core0..`, deployed as `setup.mode` says.
pub fn build(setup: RegistrySetup) -> Result<(Box<dyn CoreRegistry>, Vec<String>), ScenarioError> {
    let registry = setup.kind.build(config(setup)?);
    let names: Vec<String> = (0..setup.cores).map(|i| format!("core{i}")).collect();
    for (i, name) in names.iter().enumerate() {
        registry
            .create(descriptor(setup.mode, i, name))
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

/// Every core of `loaded` is back at the registry's own reference and was never closed: what
/// equal opens and closes leave once no request runs.
pub fn check_at_rest(registry: &dyn CoreRegistry, loaded: &[String]) -> Result<(), String> {
    for name in loaded {
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
    Ok(())
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
    check_at_rest(registry, &loaded)?;
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
