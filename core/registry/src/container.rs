//! The parts of `CoreContainer` every strategy holds besides its registry state: configuration
//! ([`RegistryConfig`], including the logging-context entries a core puts), the container-level
//! request handlers, and the count of created cores. The registry operations that use them are
//! written once, in `state_access.rs`.

use super::descriptor::CoreDescriptor;
use super::error::RegistryError;
use super::mdc::{MAX_MDC_PUTS, MDC_KEYS, MdcEntries, MdcKind};
use super::solr_core::{CloseTally, Core};
use critsec_sync::primitive::{Arc, AtomicU64, Ordering};
use std::collections::HashMap;
use std::fmt;

/// Work done while a core loads (Solr's `createFromDescriptor` opening an index); tests use it to
/// hold a load in progress. A std `Arc`: it is configuration, not part of any lock protocol.
pub type LoadHook = std::sync::Arc<dyn Fn(&CoreDescriptor) + Send + Sync>;

/// Settings of one registry.
#[derive(Clone)]
pub struct RegistryConfig {
    /// The node name, put into the logging context in SolrCloud mode (Solr: only when ZooKeeper
    /// is present); `None` for standalone.
    pub node_name: Option<String>,
    /// Logging-context puts per outermost open: Solr's real keys first (node, core, collection,
    /// shard, replica, where present), then padding keys, truncated to this number.
    pub mdc_puts: usize,
    /// Which logging-context model the cores use: the cheap garbage-free map (the default) or
    /// Solr's log4j2 copy-on-write map.
    pub mdc: MdcKind,
    /// Called by every core creation (load or reload) before the core exists.
    pub load_hook: Option<LoadHook>,
    /// Solr's `transientCacheSize`: how many cores of `transient=true` descriptors stay loaded
    /// (the bound of `TransientSolrCoreCacheDefault`); 0 (the default) means no transient cache,
    /// and such cores are loaded as permanent ones, as in Solr.
    pub transient_cache_size: usize,
    /// Test-only: a deliberately broken eviction handler that closes a core still in use (it
    /// ignores `getOpenCount() > 1`), which the conformance suite must catch.
    #[cfg(test)]
    pub(crate) eviction_mutant: bool,
}

impl fmt::Debug for RegistryConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RegistryConfig")
            .field("node_name", &self.node_name)
            .field("mdc_puts", &self.mdc_puts)
            .field("mdc", &self.mdc)
            .field("transient_cache_size", &self.transient_cache_size)
            .field(
                "load_hook",
                &self.load_hook.as_ref().map(|_| "Fn(&CoreDescriptor)"),
            )
            .finish()
    }
}

impl RegistryConfig {
    /// How many puts Solr's `MDCLoggingContext.setCore` makes at depth 0: `node_name` with a
    /// ZooKeeper node name, `core` always, and `collection`, `shard`, `replica` with a cloud
    /// descriptor. SolrCloud: 5; standalone: 1.
    pub fn solr_mdc_puts(with_node: bool, cloud: bool) -> usize {
        usize::from(with_node) + 1 + 3 * usize::from(cloud)
    }

    /// A configuration; `mdc_puts` must be at most [`MAX_MDC_PUTS`].
    pub fn new(node_name: Option<String>, mdc_puts: usize) -> Result<Self, RegistryError> {
        if mdc_puts > MAX_MDC_PUTS {
            return Err(RegistryError::TooManyMdcPuts {
                given: mdc_puts,
                max: MAX_MDC_PUTS,
            });
        }
        Ok(RegistryConfig {
            node_name,
            mdc_puts,
            mdc: MdcKind::Cheap,
            load_hook: None,
            transient_cache_size: 0,
            #[cfg(test)]
            eviction_mutant: false,
        })
    }

    /// The logging-context entries a core with `descriptor` puts on open.
    pub fn mdc_entries(&self, descriptor: &CoreDescriptor) -> MdcEntries {
        let mut real: Vec<(&'static str, Box<str>)> = Vec::with_capacity(MAX_MDC_PUTS);
        if let Some(node) = &self.node_name {
            real.push((MDC_KEYS[0], node.as_str().into()));
        }
        real.push((MDC_KEYS[1], descriptor.name.as_str().into()));
        if let Some(cloud) = &descriptor.cloud {
            real.push((MDC_KEYS[2], cloud.collection.as_str().into()));
            real.push((MDC_KEYS[3], cloud.shard.as_str().into()));
            real.push((MDC_KEYS[4], cloud.replica.as_str().into()));
        }
        let padding = MDC_KEYS[5..]
            .iter()
            .map(|k| (*k, descriptor.name.as_str().into()));
        real.into_iter()
            .chain(padding)
            .take(self.mdc_puts)
            .collect()
    }
}

impl Default for RegistryConfig {
    /// A SolrCloud node with Solr's five puts.
    fn default() -> Self {
        RegistryConfig {
            node_name: Some("node1:8983_solr".to_string()),
            mdc_puts: 5,
            mdc: MdcKind::Cheap,
            load_hook: None,
            transient_cache_size: 0,
            #[cfg(test)]
            eviction_mutant: false,
        }
    }
}

/// A container-level request handler (Solr's `containerHandlers`: admin endpoints).
#[derive(Debug, PartialEq, Eq)]
pub struct RequestHandler {
    /// The path it answers, e.g. `/admin/cores`.
    pub path: &'static str,
    /// The Solr class that implements it.
    pub class: &'static str,
}

/// The handlers every container registers at start-up.
pub const CONTAINER_HANDLERS: &[RequestHandler] = &[
    RequestHandler {
        path: "/admin/cores",
        class: "CoreAdminHandler",
    },
    RequestHandler {
        path: "/admin/collections",
        class: "CollectionsHandler",
    },
    RequestHandler {
        path: "/admin/configs",
        class: "ConfigSetsHandler",
    },
    RequestHandler {
        path: "/admin/info",
        class: "InfoHandler",
    },
    RequestHandler {
        path: "/admin/metrics",
        class: "MetricsHandler",
    },
    RequestHandler {
        path: "/admin/health",
        class: "HealthCheckHandler",
    },
    RequestHandler {
        path: "/admin/zookeeper",
        class: "ZookeeperInfoHandler",
    },
];

/// What every strategy holds besides its registry state: configuration, the container's request
/// handlers (immutable after start-up, so read without any lock, as in Solr) and a count of
/// created cores (for load-once checks).
pub struct Container {
    config: RegistryConfig,
    handlers: HashMap<&'static str, &'static RequestHandler>,
    cores_created: AtomicU64,
    /// Real closes and over-closes of the cores created here.
    tally: std::sync::Arc<CloseTally>,
}

impl Container {
    /// A container with `config` and the standard handlers.
    pub fn new(config: RegistryConfig) -> Self {
        Container {
            config,
            handlers: CONTAINER_HANDLERS.iter().map(|h| (h.path, h)).collect(),
            cores_created: AtomicU64::new(0),
            tally: std::sync::Arc::default(),
        }
    }

    /// The registry's configuration.
    pub fn config(&self) -> &RegistryConfig {
        &self.config
    }

    /// Solr's `createFromDescriptor`: a new core holding the reference its registry will own.
    pub fn create_core(&self, descriptor: Arc<CoreDescriptor>) -> Arc<Core> {
        // Relaxed: a statistic, read after the creating threads have been joined.
        self.cores_created.fetch_add(1, Ordering::Relaxed);
        if let Some(hook) = &self.config.load_hook {
            hook(&descriptor);
        }
        let mdc = self.config.mdc_entries(&descriptor);
        Arc::new(
            Core::new(descriptor, mdc, self.config.mdc).tallied(std::sync::Arc::clone(&self.tally)),
        )
    }

    /// How many cores this container has created (loads plus reloads plus `create_core` calls).
    pub fn cores_created(&self) -> u64 {
        self.cores_created.load(Ordering::Relaxed)
    }

    /// How many of the cores created here have closed, and how many closes found one closed.
    pub fn close_tally(&self) -> &CloseTally {
        &self.tally
    }

    /// Solr's `CoreContainer.getRequestHandler(path)`: a map read, no registry lock.
    pub fn request_handler(&self, path: &str) -> Option<&'static RequestHandler> {
        self.handlers.get(path).copied()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn mdc_entries_follow_solr_keys_then_pad_then_truncate() {
        let d = CoreDescriptor::cloud("c1", "coll", "shard1", "core_node1");
        let five = RegistryConfig::default().mdc_entries(&d);
        let keys: Vec<_> = five.iter().map(|(k, _)| *k).collect();
        assert_eq!(
            keys,
            ["node_name", "core", "collection", "shard", "replica"]
        );
        let seven = RegistryConfig::new(None, 7).unwrap().mdc_entries(&d);
        assert_eq!(seven.len(), 7);
        assert_eq!(seven[0].0, "core");
        assert_eq!(seven[4].0, "extra0");
        assert!(
            RegistryConfig::new(None, 0)
                .unwrap()
                .mdc_entries(&d)
                .is_empty()
        );
        assert!(matches!(
            RegistryConfig::new(None, 99),
            Err(RegistryError::TooManyMdcPuts {
                given: 99,
                max: MAX_MDC_PUTS
            })
        ));
    }

    #[test]
    fn request_handlers_are_found_by_path() {
        let c = Container::new(RegistryConfig::default());
        assert_eq!(
            c.request_handler("/admin/cores").map(|h| h.class),
            Some("CoreAdminHandler")
        );
        assert!(c.request_handler("/select").is_none());
    }
}
