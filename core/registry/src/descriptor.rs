//! `CoreDescriptor` and `CloudDescriptor`: what a core is, as opposed to the loaded core itself.
//!
//! Mirrors Solr's `CoreDescriptor` (name, instance dir, core properties) and `CloudDescriptor`
//! (collection, shard, replica in SolrCloud mode). Descriptors are immutable values shared as
//! `Arc`s; a rename (as in `swap`) builds a new descriptor.

use std::collections::BTreeMap;

/// Solr's `CoreDescriptor.CORE_TRANSIENT`, the `core.properties` key.
pub const TRANSIENT_PROPERTY: &str = "transient";

/// Where a core sits in a SolrCloud collection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CloudDescriptor {
    /// The collection the core belongs to.
    pub collection: String,
    /// The shard of that collection, e.g. `shard1`.
    pub shard: String,
    /// The replica name, e.g. `core_node3`.
    pub replica: String,
}

/// Everything needed to load a core: its name, its directory and its properties.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CoreDescriptor {
    /// The name clients use to address the core.
    pub name: String,
    /// The core's instance directory.
    pub instance_dir: String,
    /// `core.properties` entries.
    pub properties: BTreeMap<String, String>,
    /// The SolrCloud coordinates, or `None` in standalone mode.
    pub cloud: Option<CloudDescriptor>,
}

impl CoreDescriptor {
    /// A standalone descriptor whose instance directory is named after the core.
    pub fn new(name: impl Into<String>) -> Self {
        let name = name.into();
        CoreDescriptor {
            instance_dir: format!("cores/{name}"),
            name,
            properties: BTreeMap::new(),
            cloud: None,
        }
    }

    /// A SolrCloud descriptor: collection `collection`, shard `shard`, replica `replica`.
    pub fn cloud(
        name: impl Into<String>,
        collection: impl Into<String>,
        shard: impl Into<String>,
        replica: impl Into<String>,
    ) -> Self {
        let mut d = CoreDescriptor::new(name);
        d.cloud = Some(CloudDescriptor {
            collection: collection.into(),
            shard: shard.into(),
            replica: replica.into(),
        });
        d
    }

    /// The same descriptor marked `transient=true` in its `core.properties`: with a transient
    /// cache configured, its core is loaded into that bounded cache rather than kept for good.
    pub fn into_transient(mut self) -> Self {
        self.properties
            .insert(TRANSIENT_PROPERTY.to_string(), "true".to_string());
        self
    }

    /// Solr's `CoreDescriptor.isTransient()`: the `transient` property is `true`.
    pub fn is_transient(&self) -> bool {
        self.properties
            .get(TRANSIENT_PROPERTY)
            .is_some_and(|v| v.eq_ignore_ascii_case("true"))
    }

    /// The same descriptor under another name, as `swap` leaves it.
    pub fn renamed(&self, name: &str) -> Self {
        CoreDescriptor {
            name: name.to_string(),
            ..self.clone()
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn renaming_keeps_directory_and_cloud_coordinates() {
        let d = CoreDescriptor::cloud("a", "coll", "shard1", "core_node1");
        let r = d.renamed("b");
        assert_eq!(r.name, "b");
        assert_eq!(r.instance_dir, "cores/a");
        assert_eq!(r.cloud, d.cloud);
    }
}
