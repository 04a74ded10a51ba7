//! Mutation tests of the registry scenarios' check: a strategy that leaks a
//! reference or closes a core twice must fail `registry_setup::verify`, the check value both scenarios
//! compute before and after every trial. A check that passes them checks nothing.

use std::sync::Arc;

use critsec_registry::{
    Container, Core, CoreDescriptor, CoreHandle, CoreId, CoreRegistry, RegistryError, RegistryKind,
};
use critsec_sync::kind::ids;

use crate::registry_setup;

/// What a broken registry does on its third `get_core`.
#[derive(Clone, Copy, Debug)]
enum Fault {
    /// Takes a reference it never gives back (an `open` without its `close`).
    LeakReference,
    /// Closes the core once more than it opened it.
    DoubleClose,
}

/// A real registry with one fault on its hot path.
struct Broken {
    inner: Box<dyn CoreRegistry>,
    fault: Option<Fault>,
    gets: std::sync::atomic::AtomicU64,
}

impl CoreRegistry for Broken {
    fn id(&self) -> &'static str {
        self.inner.id()
    }
    fn container(&self) -> &Container {
        self.inner.container()
    }
    fn get_core(&self, name: &str) -> Result<Option<CoreHandle>, RegistryError> {
        let handle = self.inner.get_core(name)?;
        let n = self.gets.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if let Some(h) = &handle
            && n == 2
        {
            match self.fault {
                Some(Fault::LeakReference) => h.open()?,
                Some(Fault::DoubleClose) => {
                    h.close()?;
                }
                None => {}
            }
        }
        Ok(handle)
    }
    fn get_core_with_id(
        &self,
        name: &str,
        id: CoreId,
    ) -> Result<Option<CoreHandle>, RegistryError> {
        self.inner.get_core_with_id(name, id)
    }
    fn get_core_descriptor(&self, name: &str) -> Option<Arc<CoreDescriptor>> {
        self.inner.get_core_descriptor(name)
    }
    fn get_loaded_core_without_increment(&self, name: &str) -> Option<Arc<Core>> {
        self.inner.get_loaded_core_without_increment(name)
    }
    fn add_core_descriptor(&self, descriptor: CoreDescriptor) -> Result<(), RegistryError> {
        self.inner.add_core_descriptor(descriptor)
    }
    fn put_core(&self, core: Arc<Core>) -> Result<Option<CoreHandle>, RegistryError> {
        self.inner.put_core(core)
    }
    fn remove(&self, name: &str) -> Option<CoreHandle> {
        self.inner.remove(name)
    }
    fn swap(&self, a: &str, b: &str) -> Result<(), RegistryError> {
        self.inner.swap(a, b)
    }
    fn unload(&self, name: &str) -> Result<(), RegistryError> {
        self.inner.unload(name)
    }
    fn reload(&self, name: &str) -> Result<CoreId, RegistryError> {
        self.inner.reload(name)
    }
    fn loaded_names(&self) -> Vec<String> {
        self.inner.loaded_names()
    }
    fn all_names(&self) -> Vec<String> {
        self.inner.all_names()
    }
    fn loaded_cores(&self) -> Vec<(String, CoreId)> {
        self.inner.loaded_cores()
    }
    fn num_loaded(&self) -> usize {
        self.inner.num_loaded()
    }
    fn num_unloaded(&self) -> usize {
        self.inner.num_unloaded()
    }
    fn num_all(&self) -> usize {
        self.inner.num_all()
    }
    fn num_loaded_transient(&self) -> usize {
        self.inner.num_loaded_transient()
    }
    fn clean_up_transient(&self) {
        self.inner.clean_up_transient()
    }
    fn is_loaded(&self, name: &str) -> bool {
        self.inner.is_loaded(name)
    }
    fn is_core_loading(&self, name: &str) -> bool {
        self.inner.is_core_loading(name)
    }
    fn has_pending_core_ops(&self, name: &str) -> bool {
        self.inner.has_pending_core_ops(name)
    }
    fn shutdown(&self) {
        self.inner.shutdown()
    }
}

/// The scenarios' check after one lookup of each core (get, use, close, as their workers do) on
/// a registry of strategy `kind` with `fault` (a core closed twice is not looked up again: a
/// lookup of a closed core may wait for it for good).
fn verify_after_gets(fault: Option<Fault>, kind: RegistryKind) -> Result<String, String> {
    let (inner, names) = registry_setup::build(registry_setup::RegistrySetup {
        kind,
        cores: 4,
        mode: registry_setup::SolrMode::Cloud,
        mdc: critsec_registry::MdcKind::Log4j2,
        mdc_puts: None,
    })
    .expect("fixture");
    let broken = Broken {
        inner,
        fault,
        gets: Default::default(),
    };
    for i in 0..names.len() {
        if let Ok(Some(h)) = broken.get_core(&names[i % names.len()]) {
            assert_eq!(h.name(), names[i % names.len()]);
        }
    }
    registry_setup::verify(&broken, names.len(), &[])
}

#[test]
fn the_decorator_without_a_fault_verifies_so_the_failures_below_are_the_faults() {
    for strategy in ids::<RegistryKind>() {
        let r = verify_after_gets(None, strategy.parse().unwrap());
        assert!(r.is_ok(), "{strategy}: {r:?}");
    }
}

#[test]
fn a_leaked_reference_fails_the_refcount_check() {
    for strategy in ids::<RegistryKind>() {
        let e =
            verify_after_gets(Some(Fault::LeakReference), strategy.parse().unwrap()).unwrap_err();
        assert!(e.contains("refcount 2 (expected 1"), "{strategy}: {e}");
    }
}

#[test]
fn a_double_close_fails_the_close_check() {
    for strategy in ids::<RegistryKind>() {
        let e = verify_after_gets(Some(Fault::DoubleClose), strategy.parse().unwrap()).unwrap_err();
        assert!(e.contains("closed 1 times"), "{strategy}: {e}");
    }
}
