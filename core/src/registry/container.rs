//! The parts of `CoreContainer` every strategy shares, and its write operations, written once.
//!
//! A strategy differs from the others in how it locks: its read paths are its own, and it exposes
//! its write side through [`StateAccess`]. The operations here (the `getCore` load path,
//! `unload`, `reload`, `swap`, `putCore`, shutdown) then follow Solr's order of steps with
//! whatever lock the strategy uses, so the three strategies cannot drift apart in behaviour.

use super::core::{Core, CoreId};
use super::core_registry::CoreHandle;
use super::descriptor::CoreDescriptor;
use super::error::RegistryError;
use super::mdc::{MAX_MDC_PUTS, MDC_KEYS, MdcEntries};
use super::registry_state::RegistryState;
use crate::sync::primitive::{Arc, AtomicU64, Ordering};
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
    /// Called by every core creation (load or reload) before the core exists.
    pub load_hook: Option<LoadHook>,
}

impl fmt::Debug for RegistryConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RegistryConfig")
            .field("node_name", &self.node_name)
            .field("mdc_puts", &self.mdc_puts)
            .field(
                "load_hook",
                &self.load_hook.as_ref().map(|_| "Fn(&CoreDescriptor)"),
            )
            .finish()
    }
}

impl RegistryConfig {
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
            load_hook: None,
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
            load_hook: None,
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
}

impl Container {
    /// A container with `config` and the standard handlers.
    pub fn new(config: RegistryConfig) -> Self {
        Container {
            config,
            handlers: CONTAINER_HANDLERS.iter().map(|h| (h.path, h)).collect(),
            cores_created: AtomicU64::new(0),
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
        Arc::new(Core::new(descriptor, mdc))
    }

    /// How many cores this container has created (loads plus reloads plus `create_core` calls).
    pub fn cores_created(&self) -> u64 {
        self.cores_created.load(Ordering::Relaxed)
    }

    /// Solr's `CoreContainer.getRequestHandler(path)`: a map read, no registry lock.
    pub fn request_handler(&self, path: &str) -> Option<&'static RequestHandler> {
        self.handlers.get(path).copied()
    }
}

/// A strategy's write side, as the shared operations need it.
pub(crate) trait StateAccess {
    /// The container parts.
    fn container(&self) -> &Container;
    /// Runs `f` with the state as a writer would see it (used on slow paths only).
    fn read<R>(&self, f: impl FnOnce(&RegistryState) -> R) -> R;
    /// Runs `f` with exclusive access; the snapshot strategy republishes after a change.
    fn write<R>(&self, f: impl FnOnce(&mut RegistryState) -> R) -> R;
    /// Like `write`, then wakes every waiter (Solr's `notifyAll` / `signalAll`).
    fn write_and_notify<R>(&self, f: impl FnOnce(&mut RegistryState) -> R) -> R;
    /// Solr's `waitAddPendingCoreOps`: waits while `name` has an operation or a close pending,
    /// fails once the container is shut down, then claims `name` and returns its loaded core
    /// without taking a reference. `action` names the caller's operation in the error.
    fn wait_add_pending_core_ops(
        &self,
        name: &str,
        action: &'static str,
    ) -> Result<Option<Arc<Core>>, RegistryError>;
}

/// Solr's `removeFromPendingOps`: releases the claim on `name` and wakes waiters.
fn remove_from_pending_ops(s: &impl StateAccess, name: &str) {
    s.write_and_notify(|st| st.pending_core_ops.remove(name));
}

/// The rest of `CoreContainer.getCore(name)` after the fast path missed: find the descriptor,
/// claim the name, and load the core unless another caller loaded it meanwhile.
pub(crate) fn load_core(
    s: &impl StateAccess,
    name: &str,
) -> Result<Option<CoreHandle>, RegistryError> {
    let registered = s.read(|st| st.maps.resident_descriptors.contains_key(name));
    if !registered {
        return Ok(None);
    }
    let existing = s.wait_add_pending_core_ops(name, "loaded")?;
    let result = load_claimed(s, name, existing);
    remove_from_pending_ops(s, name);
    result
}

fn load_claimed(
    s: &impl StateAccess,
    name: &str,
    existing: Option<Arc<Core>>,
) -> Result<Option<CoreHandle>, RegistryError> {
    if let Some(core) = existing {
        // Another caller loaded it while we waited. Our claim on the name keeps unload and reload
        // away; only a bare `remove` could have released the registry's reference since, and then
        // the caller sees a miss, as if it had come after the removal.
        return Ok(core.try_open().then(|| CoreHandle::from_open(core)));
    }
    let Some(descriptor) = s.read(|st| st.maps.descriptor(name)) else {
        return Ok(None);
    };
    s.write(|st| st.currently_loading.insert(name.into()));
    let core = s.container().create_core(descriptor);
    // Deviation: Solr opens the core after `registerCore`; we open it before publishing, while no
    // other thread can reach it, so even a lock-free reader never sees a registered core whose
    // loader has not taken its reference yet. The claim on the name makes the orders equivalent.
    core.open()?;
    let replaced = s.write_and_notify(|st| {
        st.currently_loading.remove(name);
        if st.shutdown {
            Err(())
        } else {
            Ok(st.put_core_locked(name, Arc::clone(&core)))
        }
    });
    match replaced {
        Ok(old) => {
            if let Some(old) = old {
                // A bare `put_core` raced us; its core's registry reference is ours to release.
                let _ = old.close();
            }
            Ok(Some(CoreHandle::from_open(core)))
        }
        Err(()) => {
            // Shut down while loading: release the loader's and the would-be registry reference.
            let _ = core.close();
            let _ = core.close();
            Err(RegistryError::ShutDown {
                action: "loaded",
                name: name.to_string(),
            })
        }
    }
}

/// Solr's `SolrCores.addCoreDescriptor`: registers a core without loading it.
pub(crate) fn add_core_descriptor(
    s: &impl StateAccess,
    descriptor: CoreDescriptor,
) -> Result<(), RegistryError> {
    s.write(|st| st.add_core_descriptor_locked(Arc::new(descriptor)))
}

/// Solr's `SolrCores.putCore`: registers a created core under its name.
pub(crate) fn put_core(
    s: &impl StateAccess,
    core: Arc<Core>,
) -> Result<Option<CoreHandle>, RegistryError> {
    let name = core.name().to_string();
    let put = s.write(|st| {
        if st.shutdown {
            Err(core)
        } else {
            Ok(st.put_core_locked(&name, Arc::clone(&core)))
        }
    });
    match put {
        Ok(old) => Ok(old.map(CoreHandle::from_open)),
        Err(core) => {
            let _ = core.close();
            Err(RegistryError::ShutDown {
                action: "registered",
                name,
            })
        }
    }
}

/// Solr's `SolrCores.remove`: the registry's reference comes back as a handle.
pub(crate) fn remove(s: &impl StateAccess, name: &str) -> Option<CoreHandle> {
    s.write(|st| st.remove_locked(name))
        .map(CoreHandle::from_open)
}

/// Solr's `SolrCores.swap`.
pub(crate) fn swap(s: &impl StateAccess, a: &str, b: &str) -> Result<(), RegistryError> {
    s.write(|st| st.swap_locked(a, b))
}

/// `CoreContainer.unload`: claim the name, unregister the core and its descriptor, release the
/// registry's reference (the real close waits for the last handle), then release the claim.
pub(crate) fn unload(s: &impl StateAccess, name: &str) -> Result<(), RegistryError> {
    s.wait_add_pending_core_ops(name, "unloaded")?;
    let removed = s.write(|st| st.unload_locked(name));
    if let Ok(Some(core)) = &removed {
        let _ = core.close();
    }
    s.write_and_notify(|st| {
        if let Ok(Some(core)) = &removed {
            st.finish_close_locked(core);
        }
        st.pending_core_ops.remove(name);
    });
    removed.map(|_| ())
}

/// `CoreContainer.reload`: claim the name, create a new core from the descriptor, register it in
/// place of the old one, release the old core's registry reference, release the claim.
pub(crate) fn reload(s: &impl StateAccess, name: &str) -> Result<CoreId, RegistryError> {
    let existing = s.wait_add_pending_core_ops(name, "reloaded")?;
    let result = reload_claimed(s, name, existing);
    remove_from_pending_ops(s, name);
    result
}

fn reload_claimed(
    s: &impl StateAccess,
    name: &str,
    existing: Option<Arc<Core>>,
) -> Result<CoreId, RegistryError> {
    if existing.is_none() {
        return Err(s.read(|st| st.not_loaded_locked(name)));
    }
    let descriptor = s
        .read(|st| st.maps.descriptor(name))
        .ok_or_else(|| s.read(|st| st.no_such_core_locked(name)))?;
    let core = s.container().create_core(descriptor);
    let id = core.id();
    let replaced = s.write(|st| {
        if st.shutdown {
            Err(())
        } else {
            Ok(st.put_core_locked(name, Arc::clone(&core)))
        }
    });
    match replaced {
        Ok(old) => {
            if let Some(old) = old {
                let _ = old.close();
            }
            Ok(id)
        }
        Err(()) => {
            let _ = core.close();
            Err(RegistryError::ShutDown {
                action: "reloaded",
                name: name.to_string(),
            })
        }
    }
}

/// `CoreContainer.shutdown`: mark the registry shut down (waking every waiter, which then fails)
/// and release the registry's reference to every loaded core.
pub(crate) fn shutdown(s: &impl StateAccess) {
    let cores = s.write_and_notify(|st| st.shutdown_locked());
    for core in cores {
        let _ = core.close();
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
