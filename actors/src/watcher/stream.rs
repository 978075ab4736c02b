//! The stream task of a watcher actor: runs the `kube_runtime::watcher` stream, keeps the
//! spec's store current, judges each change against the version it replaced (once per route),
//! maps the changes that matter to keys and forwards every item to the actor through
//! [`Forward`]. Items carry keys, not objects: the store already holds each object, and a list
//! of 10,000 objects waiting in the actor's mailbox would otherwise be a second copy of them.
//! The guarantees are the watcher's (see [`super`]).

use std::sync::Arc;

use futures::StreamExt;
use kube::runtime::{
    WatchStreamExt,
    watcher::{self, Event},
};

use crate::{
    key::{Cause, ObjectKey},
    seams::WatchStart,
    watch_spec::{SpecShared, Watched},
    watch_store::{Applied, WatchStoreWriter},
};

/// One watch stream item, as the stream task saw it against the store.
#[derive(Debug)]
pub(crate) enum StreamItem {
    /// A (re)list started (first start, or after a 410).
    Relisting,
    /// The (re)list completed; objects that were in the store but not in the list are gone.
    Listed {
        /// The keys of the objects deleted while the watch was down.
        vanished: Vec<ObjectKey>,
    },
    /// An object was listed, applied or deleted.
    Object {
        /// The keys to queue, route after route: each route's mapper's, or none when its filter
        /// says the change does not matter (a deletion always does). Each with its cause:
        /// [`Cause::Listed`] (a refresh) when the object came from a (re-)list, not from a
        /// watch event, and the route does not call it unsettled.
        keys: Vec<(ObjectKey, Cause)>,
    },
    /// The stream failed; it retries after a backoff. Secret-free description.
    Failed(String),
}

/// Where the stream task sends what it sees (the watcher actor's mailbox).
pub(super) trait Forward: Send + 'static {
    /// One item; `false` when nobody listens any more (the task then ends).
    fn item(&self, item: StreamItem) -> bool;
    /// The task is gone: it `panicked` (in the filter or the mapper), the stream ended, or the
    /// task was aborted.
    fn ended(&self, panicked: bool);
}

/// Tells the actor the stream task is gone, however it ends.
struct EndGuard<F: Forward>(F);

impl<F: Forward> Drop for EndGuard<F> {
    fn drop(&mut self) {
        self.0.ended(std::thread::panicking());
    }
}

/// The stream task: owns the watch stream and the store writer, forwards every item. Started
/// for a new term, its store's readers wait for its first list, which judges every object as a
/// first sighting.
pub(super) async fn run<K: Watched, F: Forward>(spec: Arc<SpecShared<K>>, forward: F, start: WatchStart) {
    let forward = EndGuard(forward);
    let mut first_list_of_term = start == WatchStart::Term;
    let mut writer = spec.writer.clone().lock_owned().await;
    if first_list_of_term {
        writer.unlist();
    }
    let trim = spec.trim;
    let mut stream = std::pin::pin!(
        watcher::watcher(spec.api.clone(), spec.config.clone())
            .default_backoff()
            .modify(move |object| {
                drop_bookkeeping(object);
                trim(object);
            })
    );
    while let Some(item) = stream.next().await {
        let item = match item {
            Ok(event) if !spec.keeps(&event) => continue,
            Ok(event) => {
                let item = observe(&spec, &mut writer, event, first_list_of_term);
                if matches!(item, StreamItem::Listed { .. }) {
                    first_list_of_term = false;
                }
                item
            }
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
        if annotations.is_empty() {
            // An emptied map still holds its node, about 540 bytes per object.
            meta.annotations = None;
        }
    }
}

/// Apply `event` to the store, judge the change against the version it replaced, then map what
/// matters to keys, route after route. Mapping comes after storing: should a mapper panic on an
/// object, the store already holds it, so the next incarnation's re-list finds it unchanged and
/// does not map it again.
///
/// `first_list_of_term`: a listed object is judged as never seen, whatever the store kept from
/// an earlier term, whose queue (and the keys it held) is gone.
fn observe<K: Watched>(
    spec: &SpecShared<K>,
    writer: &mut WatchStoreWriter<K>,
    event: Event<K>,
    first_list_of_term: bool,
) -> StreamItem {
    match writer.apply(event) {
        Applied::Relisting => StreamItem::Relisting,
        Applied::Listed { vanished } => StreamItem::Listed {
            vanished: vanished
                .iter()
                .flat_map(|object| spec.routes.iter().flat_map(|route| (route.mapper)(object)))
                .collect(),
        },
        Applied::Stored {
            object,
            previous,
            listed,
        } => {
            let previous = previous.filter(|_| !(listed && first_list_of_term));
            StreamItem::Object {
                keys: spec
                    .routes
                    .iter()
                    .filter(|route| (route.matters)(previous.as_deref(), &object))
                    .flat_map(|route| {
                        let cause = if listed && !(route.unsettled)(&object) {
                            Cause::Listed
                        } else {
                            Cause::Event
                        };
                        (route.mapper)(&object).into_iter().map(move |key| (key, cause))
                    })
                    .collect(),
            }
        }
        Applied::Deleted(object) => StreamItem::Object {
            keys: spec
                .routes
                .iter()
                .flat_map(|route| (route.mapper)(&object))
                .map(|key| (key, Cause::Event))
                .collect(),
        },
    }
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
