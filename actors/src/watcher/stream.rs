//! The stream task of a watcher actor: runs the `kube_runtime::watcher` stream, keeps the
//! spec's reflector store current, judges each change against the store (before applying it)
//! and forwards every item to the actor through [`Forward`]. The guarantees are the watcher's
//! (see [`super`]).

use std::{collections::HashSet, sync::Arc};

use futures::StreamExt;
use kube::runtime::{
    WatchStreamExt,
    reflector::{ObjectRef, Store, store::Writer},
    watcher::{self, Event},
};

use crate::{
    watch_filter,
    watch_spec::{SpecShared, Watched},
};

/// One watch stream item, as the stream task saw it against the store.
#[derive(Debug)]
pub(crate) enum StreamItem<K> {
    /// A (re)list started (first start, or after a 410).
    Relisting,
    /// The (re)list completed; `vanished` were in the store but not in the list.
    Listed {
        /// Objects deleted while the watch was down.
        vanished: Vec<Arc<K>>,
    },
    /// An object was listed, applied or deleted.
    Object {
        /// The object (for a delete: its last state).
        object: Arc<K>,
        /// The filter's verdict (always `true` for deletions).
        matters: bool,
        /// It came from a (re-)list, not from a watch event.
        listed: bool,
    },
    /// The stream failed; it retries after a backoff. Secret-free description.
    Failed(String),
}

/// Where the stream task sends what it sees (the watcher actor's mailbox).
pub(super) trait Forward<K>: Send + 'static {
    /// One item; `false` when nobody listens any more (the task then ends).
    fn item(&self, item: StreamItem<K>) -> bool;
    /// The task is gone (the stream ended, or the task panicked or was aborted).
    fn ended(&self);
}

/// Tells the actor the stream task is gone, however it ends.
struct EndGuard<F: Forward<K>, K>(F, std::marker::PhantomData<fn() -> K>);

impl<F: Forward<K>, K> Drop for EndGuard<F, K> {
    fn drop(&mut self) {
        self.0.ended();
    }
}

/// The stream task: owns the watch stream and the store writer, forwards every item.
pub(super) async fn run<K: Watched, F: Forward<K>>(spec: Arc<SpecShared<K>>, forward: F) {
    let forward = EndGuard(forward, std::marker::PhantomData);
    let mut writer = spec.writer.clone().lock_owned().await;
    let store = writer.as_reader();
    let mut stream = std::pin::pin!(
        watcher::watcher(spec.api.clone(), spec.config.clone())
            .default_backoff()
            .modify(drop_bookkeeping::<K>)
    );
    let mut relist = None;
    while let Some(item) = stream.next().await {
        let item = match item {
            Ok(event) => observe(&spec, &mut writer, &store, &mut relist, event),
            Err(error) => StreamItem::Failed(describe(&error)),
        };
        if !forward.0.item(item) {
            return;
        }
    }
}

/// The annotation `kubectl apply` keeps: a copy of the whole applied object (for a Secret, its
/// data), never read by a controller.
const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// Forgets an object's write bookkeeping, managedFields and kubectl's last-applied copy (see
/// the module's guarantees).
fn drop_bookkeeping<K: kube::Resource>(object: &mut K) {
    let meta = object.meta_mut();
    meta.managed_fields = None;
    if let Some(annotations) = meta.annotations.as_mut() {
        annotations.remove(LAST_APPLIED);
    }
}

/// Judge `event` against the store (before applying it), then apply it.
fn observe<K: Watched>(
    spec: &SpecShared<K>,
    writer: &mut Writer<K>,
    store: &Store<K>,
    relist: &mut Option<HashSet<ObjectRef<K>>>,
    event: Event<K>,
) -> StreamItem<K> {
    let item = match &event {
        Event::Init => {
            *relist = Some(HashSet::new());
            StreamItem::Relisting
        }
        Event::InitApply(object) | Event::Apply(object) => {
            let key = ObjectRef::from_obj(object);
            let previous = store.get(&key);
            if let (Event::InitApply(_), Some(listed)) = (&event, relist.as_mut()) {
                listed.insert(key);
            }
            StreamItem::Object {
                matters: (spec.matters)(previous.as_deref(), object),
                object: Arc::new(object.clone()),
                listed: matches!(event, Event::InitApply(_)),
            }
        }
        Event::Delete(object) => StreamItem::Object {
            object: Arc::new(object.clone()),
            matters: true,
            listed: false,
        },
        Event::InitDone => {
            let listed = relist.take().unwrap_or_default();
            let vanished = watch_filter::vanished(store.state(), &listed, |o| ObjectRef::from_obj(&**o));
            StreamItem::Listed { vanished }
        }
    };
    writer.apply_watcher_event(&event);
    item
}

/// A secret-free description of a stream error: variant, HTTP code and reason only (API
/// messages may quote object content).
pub(super) fn describe(error: &watcher::Error) -> String {
    let api = |e: &kube::Error| match e {
        kube::Error::Api(status) => format!("{} {}", status.code, status.reason),
        _ => "transport error".to_owned(),
    };
    match error {
        watcher::Error::InitialListFailed(e) => format!("initial list failed: {}", api(e)),
        watcher::Error::WatchStartFailed(e) => format!("watch start failed: {}", api(e)),
        watcher::Error::WatchError(status) => format!("watch error: {} {}", status.code, status.reason),
        watcher::Error::WatchFailed(e) => format!("watch failed: {}", api(e)),
        watcher::Error::NoResourceVersion => "no resourceVersion in watch result".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn described_errors_should_keep_code_and_reason_but_never_the_servers_message() {
        let leaky = "secret \"db\" data.password=hunter2 is invalid";
        let status = || Box::new(kube::core::Status::failure(leaky, "Invalid").with_code(422));
        let errors = [
            watcher::Error::WatchError(status()),
            watcher::Error::InitialListFailed(kube::Error::Api(status())),
            watcher::Error::WatchFailed(kube::Error::Api(status())),
        ];
        for error in &errors {
            let described = describe(error);
            assert!(described.contains("422 Invalid"), "{described}");
            assert!(!described.contains("hunter2"), "leaked: {described}");
        }
    }
}
