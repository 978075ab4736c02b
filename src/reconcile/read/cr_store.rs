//! Custom resources as a reconciler reads them: from their watch's store, or with a GET where
//! the store cannot be trusted (rules 1, 2 and 5 of [`read`](super)): [`CrStore`] for a
//! reconciler's own kind, [`find`] for another reader (a FerrVaultSecret reading its
//! connection), and [`WrittenVersions`], the versions our own writes produced.

use std::{
    fmt::Debug,
    sync::{Mutex, PoisonError},
};

use kube::{Api, Resource, api::ObjectMeta};
use serde::de::DeserializeOwned;

use super::{Scoped, projection::is_partial};
use crate::{api::Lenient, reconcile::rules::bounds::pruned_map::PrunedMap};

/// Custom resources of one kind as a reconciler reads them: from the watch's store, or with a
/// GET where the store may not hold our own last write yet (rule 2 of [`read`](super)).
pub struct CrStore<K: Resource<DynamicType = ()> + Clone + 'static> {
    store: Scoped<Lenient<K>>,
    written: WrittenVersions,
}

impl<K> CrStore<K>
where
    K: Resource<DynamicType = ()> + Clone + Send + Sync + 'static,
{
    /// Reads through `store`, the kind's watch store.
    pub fn new(store: Scoped<Lenient<K>>) -> Self {
        let shown_by = store.clone();
        let written = WrittenVersions::new(move |namespace, name, version| {
            shown_by
                .get(namespace, name)
                .is_some_and(|object| object.meta().resource_version.as_deref() == Some(version))
        });
        Self { store, written }
    }
}

impl<K> CrStore<K>
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + 'static,
{
    /// The store itself (for scans such as "which FerrVaultSecrets use this connection").
    pub fn store(&self) -> &Scoped<Lenient<K>> {
        &self.store
    }

    /// Where the writers of this kind record the versions they produced.
    pub fn written(&self) -> &WrittenVersions {
        &self.written
    }

    /// `namespace/name` as the store holds it, or as a GET reads it when the store does not show
    /// our own last write to it yet; `None` when it does not exist.
    ///
    /// # Errors
    /// The GET failed, or the store's watch is gone (shutdown).
    pub async fn get(
        &self,
        api: &Api<Lenient<K>>,
        namespace: &str,
        name: &str,
    ) -> Result<Option<Lenient<K>>, kube::Error> {
        if !self.store.covers(namespace) {
            return api.get_opt(name).await;
        }
        self.store.wait_until_listed().await?;
        let stored = self.store.get(namespace, name);
        let ours = self.written.take(namespace, name);
        let stored_version = stored.as_ref().and_then(|o| o.meta().resource_version.as_deref());
        let whole = stored.as_ref().is_none_or(|o| !is_partial(o.meta()));
        if whole && store_holds_our_write(stored_version, ours.as_deref()) {
            return Ok(stored.map(|object| (*object).clone()));
        }
        api.get_opt(name).await
    }
}

/// Whether a store showing `stored` (the object's `resourceVersion` there, `None` when absent)
/// may be read, given the version `ours` our own last write to it produced (if any): always
/// without such a write, else only when the store shows exactly that version. A store only moves
/// forward, and a later write by someone else would also show another version, so anything else
/// is read with a GET.
fn store_holds_our_write(stored: Option<&str>, ours: Option<&str>) -> bool {
    ours.is_none_or(|ours| stored == Some(ours))
}

/// `namespace/name` for a reader that is not its reconciler (a FerrVaultSecret reading its
/// connection): as `store` holds it, or read with a GET when `store` does not hold it whole
/// (rules 1 and 5 of the module); `None` when it does not exist. Its status may lag our own last
/// write to it, so such readers use its spec and metadata.
///
/// # Errors
/// The GET failed, or the store's watch is gone (shutdown).
pub(crate) async fn find<K>(
    store: &Scoped<Lenient<K>>,
    api: &Api<Lenient<K>>,
    namespace: &str,
    name: &str,
) -> Result<Option<Lenient<K>>, kube::Error>
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + 'static,
{
    store.wait_until_listed().await?;
    match store.get(namespace, name) {
        Some(object) if !is_partial(object.meta()) => Ok(Some((*object).clone())),
        _ => api.get_opt(name).await,
    }
}

/// The `resourceVersion` each of our writes to a custom resource produced, until a pass reads
/// that object again or its store shows that version: keyed by namespace and name, one entry
/// per object at most.
pub struct WrittenVersions {
    versions: Mutex<Versions>,
    /// Whether the store shows `(namespace, name)` at `version`: such an entry is no longer
    /// needed (reading the store gives our write), so it is pruned.
    shown: Box<ShownByStore>,
}

/// `(namespace, name, version)` → whether the store shows that object at that version.
type ShownByStore = dyn Fn(&str, &str, &str) -> bool + Send + Sync;

/// Our last written version, by namespace and name.
type Versions = PrunedMap<(String, String), String>;

impl WrittenVersions {
    /// Versions of objects whose store answers `shown` (see the field).
    pub fn new(shown: impl Fn(&str, &str, &str) -> bool + Send + Sync + 'static) -> Self {
        Self {
            versions: Mutex::default(),
            shown: Box::new(shown),
        }
    }

    /// Records that our write left `object` at its `resourceVersion`. Once the map has doubled
    /// since it was last pruned, drops the entries the store already shows (amortized constant
    /// time; without it every object written once would stay until its next pass, hours later).
    pub fn record(&self, object: &ObjectMeta) {
        let (Some(namespace), Some(name), Some(version)) =
            (&object.namespace, &object.name, &object.resource_version)
        else {
            return;
        };
        let mut versions = self.lock();
        versions.prune_if_doubled(|(namespace, name), version| (self.shown)(namespace, name, version));
        versions.insert((namespace.clone(), name.clone()), version.clone());
    }

    /// The version our last write to `namespace/name` produced, forgotten by the read: after it,
    /// the pass that read it records its own writes.
    fn take(&self, namespace: &str, name: &str) -> Option<String> {
        self.lock().remove(&(namespace.to_owned(), name.to_owned()))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Versions> {
        self.versions.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reconcile::rules::bounds::pruned_map::MIN_PRUNE_LEN;

    fn meta(version: &str) -> ObjectMeta {
        ObjectMeta {
            namespace: Some("ns".into()),
            name: Some("app".into()),
            resource_version: Some(version.into()),
            ..ObjectMeta::default()
        }
    }

    #[test]
    fn the_store_should_be_read_unless_it_does_not_show_our_last_write() {
        assert!(store_holds_our_write(Some("7"), None), "nothing written");
        assert!(
            store_holds_our_write(None, None),
            "gone, and its own watch said so"
        );
        assert!(store_holds_our_write(Some("8"), Some("8")), "our write seen");
        assert!(
            !store_holds_our_write(Some("7"), Some("8")),
            "our write not seen yet"
        );
        assert!(!store_holds_our_write(None, Some("8")), "not seen at all");
        assert!(
            !store_holds_our_write(Some("9"), Some("8")),
            "someone wrote after us: only a GET tells"
        );
    }

    #[test]
    fn a_written_version_should_be_taken_by_the_next_read_only() {
        let written = WrittenVersions::new(|_, _, _| false);
        written.record(&meta("7"));
        written.record(&meta("8"));
        assert_eq!(written.take("ns", "app").as_deref(), Some("8"), "the last write");
        assert_eq!(written.take("ns", "app"), None, "forgotten once read");
        written.record(&ObjectMeta::default());
        assert_eq!(
            written.take("", ""),
            None,
            "an object without coordinates is not recorded"
        );
    }

    #[test]
    fn versions_the_store_shows_should_be_pruned_once_the_map_doubles() {
        // The store shows every even-numbered object at the version we wrote.
        let written = WrittenVersions::new(|_, name, version| {
            name.trim_start_matches("app-")
                .parse::<usize>()
                .is_ok_and(|n| n % 2 == 0)
                && version == "7"
        });
        let object = |n: usize| ObjectMeta {
            name: Some(format!("app-{n}")),
            ..meta("7")
        };
        for n in 0..MIN_PRUNE_LEN {
            written.record(&object(n));
        }
        assert_eq!(
            written.lock().len(),
            MIN_PRUNE_LEN,
            "not pruned below the minimum"
        );
        written.record(&object(MIN_PRUNE_LEN + 1));
        assert_eq!(written.lock().len(), MIN_PRUNE_LEN / 2 + 1, "shown ones dropped");
        assert_eq!(
            written.take("ns", "app-1").as_deref(),
            Some("7"),
            "not shown: kept"
        );
        assert_eq!(written.take("ns", "app-2"), None, "shown: the store is read");
    }
}
