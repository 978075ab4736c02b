//! The [`Fence`] on the wire: a tower layer for a Kubernetes client that fails every mutating
//! request (POST, PUT, PATCH, DELETE) once the fence has lapsed, and abandons any that is still
//! unanswered when it does, so no write of this replica lands after the bound stated in
//! [`crate::fence`]. Reads pass untouched, and so do the writes leadership makes to its own
//! Lease (acquiring and renewing are how the fence opens again).
//!
//! With shards ([`FenceLayer::per_shard`]) each shard has its own fence, moved by its own
//! Lease: a write is judged by the fence of the shard of the namespace in its path
//! ([`Shards::of_namespace`]; cluster-scoped paths count as the empty namespace), so losing one
//! shard stops the writes to its namespaces only.
//!
//! ```text
//! let fence = Fence::new();
//! let client = FenceLayer::new(fence.clone()).exempt_lease("ns", "my-lease").wrap(client);
//! let runtime = Runtime::builder().fence(fence) /* … */;
//! ```

use std::{
    sync::Arc,
    task::{Context, Poll},
};

use futures::{FutureExt, future::BoxFuture};
use http::{Method, Request, Response};
use tokio::time::Instant;
use tower::{Layer, Service};

use crate::{
    fence::{Allowance, Fence},
    shard_rules::{ShardId, Shards},
};

/// What a fenced request fails with (the client reports it as `kube::Error::Service`).
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum FenceError {
    /// The fence had lapsed before the write started.
    #[error("write refused: this replica cannot prove it still holds the leader Lease")]
    Refused,
    /// The fence lapsed while the write was unanswered; the request was abandoned.
    #[error("write abandoned: the leader Lease could not be renewed while it was in flight")]
    Abandoned,
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Enforces a [`Fence`] on the requests of the service it wraps.
#[derive(Clone, Debug)]
pub struct FenceLayer {
    /// How namespaces map to `fences`.
    shards: Shards,
    /// One fence per shard, indexed by shard number (exactly one without sharding).
    fences: Arc<[Fence]>,
    /// Paths leadership writes its Leases at: for each, the collection (create) and the
    /// object.
    lease_paths: Arc<[String]>,
}

impl FenceLayer {
    /// Enforce `fence` (no Lease exempt until [`exempt_lease`](Self::exempt_lease)).
    pub fn new(fence: Fence) -> Self {
        Self::per_shard(Shards::ONE, |_| fence.clone())
    }

    /// Enforce one fence per shard, `fence_of(shard)` for each: a write to a namespace is
    /// judged by the fence of that namespace's shard (no Lease exempt until
    /// [`exempt_lease`](Self::exempt_lease)). `Shards::ONE` is [`FenceLayer::new`].
    pub fn per_shard(shards: Shards, fence_of: impl FnMut(ShardId) -> Fence) -> Self {
        Self {
            shards,
            fences: shards.all().map(fence_of).collect(),
            lease_paths: Arc::new([]),
        }
    }

    /// Let writes to Lease `namespace/name` through: leadership acquires and renews it. Call
    /// it once per Lease (with shards: every shard's Lease and the member Lease).
    #[must_use]
    pub fn exempt_lease(self, namespace: &str, name: &str) -> Self {
        let collection = format!("/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases");
        let object = format!("{collection}/{name}");
        let lease_paths = self
            .lease_paths
            .iter()
            .cloned()
            .chain([collection, object])
            .collect();
        Self { lease_paths, ..self }
    }

    /// `client` with this layer in front of it.
    pub fn wrap(&self, client: kube::Client) -> kube::Client {
        let namespace = client.default_namespace().to_owned();
        let send = tower::service_fn(move |request| {
            let client = client.clone();
            async move { client.send(request).await }
        });
        kube::client::ClientBuilder::new(send, namespace)
            .with_layer(self)
            .build()
    }

    fn is_lease_write(&self, path: &str) -> bool {
        self.lease_paths.iter().any(|p| p == path)
    }

    /// The fence that judges a write to `path`: its namespace's shard's; for an Event, the most
    /// open of all ([`is_event_path`]).
    fn fence_for(&self, path: &str) -> &Fence {
        if is_event_path(path) {
            let now = Instant::now();
            return self
                .fences
                .iter()
                .max_by_key(|fence| match fence.allowance(now) {
                    Allowance::Refused => (0, None),
                    Allowance::Until(until) => (1, Some(until)),
                    Allowance::Unbounded => (2, None),
                })
                .unwrap_or(&self.fences[0]);
        }
        let shard = self
            .shards
            .of_namespace(namespace_of_path(path).unwrap_or_default());
        &self.fences[usize::from(shard.0)]
    }
}

/// Whether `path` writes Events (core or `events.k8s.io`). An Event goes to its object's
/// namespace, and a cluster-scoped object's to `default`, whose shard the replica reconciling
/// that object need not hold: so any shard held lets a replica publish Events. An Event is a
/// record, not state another replica owns; with one shard this is the one fence.
fn is_event_path(path: &str) -> bool {
    let mut segments = path.trim_start_matches('/').split('/');
    let resource = match (segments.next(), segments.next(), segments.next()) {
        (Some("api"), Some("v1"), Some("namespaces")) => segments.nth(1),
        (Some("apis"), Some("events.k8s.io"), Some(_)) => match segments.next() {
            Some("namespaces") => segments.nth(1),
            other => other,
        },
        _ => None,
    };
    resource == Some("events")
}

/// The namespace a Kubernetes API path addresses (`/api/v1/namespaces/<ns>/…` or
/// `/apis/<group>/<version>/namespaces/<ns>/…`), `None` for cluster-scoped paths (a
/// Namespace object itself included).
fn namespace_of_path(path: &str) -> Option<&str> {
    let mut segments = path.trim_start_matches('/').split('/');
    let prefix = match segments.next()? {
        "api" => 1,
        "apis" => 2,
        _ => return None,
    };
    let mut segments = segments.skip(prefix);
    match (segments.next(), segments.next(), segments.next()) {
        (Some("namespaces"), Some(namespace), Some(_)) if !namespace.is_empty() => Some(namespace),
        _ => None,
    }
}

impl<S> Layer<S> for FenceLayer {
    type Service = FenceService<S>;

    fn layer(&self, inner: S) -> FenceService<S> {
        FenceService {
            inner,
            layer: self.clone(),
        }
    }
}

/// The service [`FenceLayer`] builds.
#[derive(Clone, Debug)]
pub struct FenceService<S> {
    inner: S,
    layer: FenceLayer,
}

impl<S, ReqBody, ResBody> Service<Request<ReqBody>> for FenceService<S>
where
    S: Service<Request<ReqBody>, Response = Response<ResBody>>,
    S::Error: Into<BoxError>,
    S::Future: Send + 'static,
    ResBody: Send + 'static,
{
    type Response = Response<ResBody>;
    type Error = BoxError;
    type Future = BoxFuture<'static, Result<Response<ResBody>, BoxError>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, request: Request<ReqBody>) -> Self::Future {
        let writes = matches!(
            *request.method(),
            Method::POST | Method::PUT | Method::PATCH | Method::DELETE
        );
        if !writes || self.layer.is_lease_write(request.uri().path()) {
            return self.inner.call(request).map(|r| r.map_err(Into::into)).boxed();
        }
        let fence = self.layer.fence_for(request.uri().path()).clone();
        match fence.allowance(Instant::now()) {
            Allowance::Refused => futures::future::ready(Err(FenceError::Refused.into())).boxed(),
            Allowance::Unbounded => self.inner.call(request).map(|r| r.map_err(Into::into)).boxed(),
            Allowance::Until(_) => {
                // Bounded by the fence as it moves: a renewal during the write extends it.
                let (call, lapsed) = (self.inner.call(request), fence.lapsed());
                async move {
                    tokio::select! {
                        answer = call => answer.map_err(Into::into),
                        // Dropping the call abandons the request (its connection is closed).
                        () = lapsed => Err(FenceError::Abandoned.into()),
                    }
                }
                .boxed()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::{
        sync::{
            Arc,
            atomic::{AtomicUsize, Ordering},
        },
        time::Duration,
    };

    use tower::ServiceExt;

    use super::*;

    /// A service answering after `delay`, counting the requests that reached it.
    fn backend(
        delay: Duration,
        reached: Arc<AtomicUsize>,
    ) -> impl Service<Request<()>, Response = Response<()>, Error = BoxError, Future: Send> + Clone {
        tower::service_fn(move |_: Request<()>| {
            reached.fetch_add(1, Ordering::SeqCst);
            async move {
                tokio::time::sleep(delay).await;
                Ok::<_, BoxError>(Response::new(()))
            }
        })
    }

    fn request(method: Method, path: &str) -> Request<()> {
        Request::builder()
            .method(method)
            .uri(format!("https://kube{path}?fieldManager=x"))
            .body(())
            .expect("a request")
    }

    async fn send(layer: &FenceLayer, delay: Duration, req: Request<()>) -> (Result<(), FenceError>, usize) {
        let reached = Arc::new(AtomicUsize::new(0));
        let answer = layer
            .layer(backend(delay, reached.clone()))
            .oneshot(req)
            .await
            .map(drop)
            .map_err(|e| *e.downcast::<FenceError>().expect("only fence errors here"));
        (answer, reached.load(Ordering::SeqCst))
    }

    const LEASE: &str = "/apis/coordination.k8s.io/v1/namespaces/ops/leases/op-lease";

    #[tokio::test(start_paused = true)]
    async fn a_closed_fence_should_refuse_writes_but_pass_reads_and_the_lease() {
        let layer = FenceLayer::new(Fence::new()).exempt_lease("ops", "op-lease");
        let secret = "/api/v1/namespaces/app/secrets/db";
        for method in [Method::POST, Method::PUT, Method::PATCH, Method::DELETE] {
            assert_eq!(
                send(&layer, Duration::ZERO, request(method.clone(), secret)).await,
                (Err(FenceError::Refused), 0),
                "{method} never reaches the server"
            );
        }
        assert_eq!(
            send(&layer, Duration::ZERO, request(Method::GET, secret)).await,
            (Ok(()), 1)
        );
        assert_eq!(
            send(&layer, Duration::ZERO, request(Method::PUT, LEASE)).await,
            (Ok(()), 1)
        );
        let other_lease = "/apis/coordination.k8s.io/v1/namespaces/ops/leases/someone-else";
        assert_eq!(
            send(&layer, Duration::ZERO, request(Method::PUT, other_lease)).await,
            (Err(FenceError::Refused), 0),
            "only our own Lease is exempt"
        );
    }

    #[test]
    fn event_paths_should_be_recognised_core_and_events_api_only() {
        for (path, event) in [
            ("/api/v1/namespaces/default/events", true),
            ("/api/v1/namespaces/default/events/fvs.1", true),
            ("/apis/events.k8s.io/v1/namespaces/default/events", true),
            ("/apis/events.k8s.io/v1/namespaces/app/events/fvs.2", true),
            ("/api/v1/namespaces/events/secrets/x", false),
            ("/api/v1/namespaces/app/secrets/events", false),
            ("/apis/ferrvault.com/v1alpha1/namespaces/app/events", false),
            ("/api/v1/namespaces/events", false),
        ] {
            assert_eq!(is_event_path(path), event, "{path:?}");
        }
    }

    #[test]
    fn namespace_of_path_should_read_namespaced_paths_only() {
        let cases = [
            ("/api/v1/namespaces/app/secrets/db", Some("app")),
            ("/api/v1/namespaces/app/secrets", Some("app")),
            ("/api/v1/namespaces/app/events", Some("app")),
            (
                "/apis/ferrvault.com/v1alpha1/namespaces/team-a/ferrvaultsecrets/x/status",
                Some("team-a"),
            ),
            (
                "/apis/coordination.k8s.io/v1/namespaces/ops/leases/op-lease",
                Some("ops"),
            ),
            (
                "/apis/ferrvault.com/v1alpha1/clusterferrvaultconnections/platform/status",
                None,
            ),
            ("/api/v1/namespaces/app", None),
            ("/api/v1/namespaces", None),
            ("/api/v1/namespaces//secrets", None),
            ("/version", None),
            ("", None),
        ];
        for (path, namespace) in cases {
            assert_eq!(namespace_of_path(path), namespace, "{path:?}");
        }
    }

    /// A namespace whose shard (of `shards`) is `shard`, and one whose shard is not.
    fn namespaces_in_and_out(shards: Shards, shard: ShardId) -> (String, String) {
        let names = (0..).map(|i| format!("tenant-{i}"));
        let mut inside = names.clone().filter(|ns| shards.of_namespace(ns) == shard);
        let mut outside = names.filter(|ns| shards.of_namespace(ns) != shard);
        (
            inside.next().expect("some name"),
            outside.next().expect("some name"),
        )
    }

    #[tokio::test(start_paused = true)]
    async fn a_per_shard_fence_should_pass_writes_of_held_shards_and_refuse_the_others() {
        let shards = Shards::new(4).expect("4 shards");
        let held = shards.of_namespace("");
        let layer = FenceLayer::per_shard(shards, |shard| {
            let fence = Fence::new();
            if shard == held {
                fence.extend_to(Instant::now() + Duration::from_secs(10));
            }
            fence
        });
        let (mine, theirs) = namespaces_in_and_out(shards, held);
        let write = |ns: &str| request(Method::PATCH, &format!("/api/v1/namespaces/{ns}/secrets/db"));
        assert_eq!(send(&layer, Duration::ZERO, write(&mine)).await, (Ok(()), 1));
        assert_eq!(
            send(&layer, Duration::ZERO, write(&theirs)).await,
            (Err(FenceError::Refused), 0),
            "{theirs} is in a shard this replica does not hold"
        );
        let layer = (0..4).fold(layer, |l, i| l.exempt_lease("ops", &format!("op-shard-{i}")));
        for i in 0..4 {
            let lease = format!("/apis/coordination.k8s.io/v1/namespaces/ops/leases/op-shard-{i}");
            assert_eq!(
                send(&layer, Duration::ZERO, request(Method::PUT, &lease)).await,
                (Ok(()), 1),
                "every shard's Lease is exempt"
            );
        }
        let cluster = "/apis/ferrvault.com/v1alpha1/clusterferrvaultconnections/platform/status";
        assert_eq!(
            send(&layer, Duration::ZERO, request(Method::PATCH, cluster)).await,
            (Ok(()), 1),
            "cluster-scoped writes belong to the shard of the empty namespace"
        );
        for path in [
            format!("/api/v1/namespaces/{theirs}/events"),
            format!("/apis/events.k8s.io/v1/namespaces/{theirs}/events/fvs.1"),
        ] {
            assert_eq!(
                send(&layer, Duration::ZERO, request(Method::PATCH, &path)).await,
                (Ok(()), 1),
                "an Event goes out while any shard is held: {path}"
            );
        }
        let none_held = FenceLayer::per_shard(shards, |_| Fence::new());
        let event = format!("/api/v1/namespaces/{mine}/events");
        assert_eq!(
            send(&none_held, Duration::ZERO, request(Method::POST, &event)).await,
            (Err(FenceError::Refused), 0),
            "no Event from a replica holding no shard"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_write_should_not_be_abandoned_while_renewals_move_the_fence() {
        let fence = Fence::new();
        fence.extend_to(Instant::now() + Duration::from_millis(100));
        let renewals = tokio::spawn({
            let fence = fence.clone();
            async move {
                for _ in 0..5 {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    fence.extend_to(Instant::now() + Duration::from_millis(100));
                }
            }
        });
        let layer = FenceLayer::new(fence);
        let patch = request(Method::PATCH, "/api/v1/namespaces/app/secrets/db");
        assert_eq!(
            send(&layer, Duration::from_millis(200), patch).await,
            (Ok(()), 1),
            "answered after the instant seen at its start, but the lease was renewed meanwhile"
        );
        renewals.await.expect("renewals ran");
    }

    #[tokio::test(start_paused = true)]
    async fn a_write_still_unanswered_when_the_fence_lapses_should_be_abandoned() {
        let fence = Fence::new();
        fence.extend_to(Instant::now() + Duration::from_millis(100));
        let layer = FenceLayer::new(fence);
        let patch = || request(Method::PATCH, "/api/v1/namespaces/app/secrets/db");
        assert_eq!(
            send(&layer, Duration::from_millis(50), patch()).await,
            (Ok(()), 1)
        );
        assert_eq!(
            send(&layer, Duration::from_millis(500), patch()).await,
            (Err(FenceError::Abandoned), 1),
            "answered after the fence: abandoned at it"
        );
        assert_eq!(
            send(&layer, Duration::ZERO, patch()).await,
            (Err(FenceError::Refused), 0),
            "the fence has lapsed: refused before sending"
        );
    }
}
