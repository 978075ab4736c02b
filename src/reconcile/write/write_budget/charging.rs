//! Charging on the wire: the reconcilers' kube client wrapped so that every write request it
//! sends spends one token of its namespace's budget, whatever code sent it.
//!
//! # Guarantees
//! - Charged: POST, PUT, PATCH and DELETE on a namespaced path (`/api/v1/namespaces/NS/…`,
//!   `/apis/GROUP/VERSION/namespaces/NS/…`), once per request sent, answered or not. Reads,
//!   watches and cluster-scoped requests are not.
//! - Nothing is refused or delayed here: admission is the passes' business
//!   ([`WriteBudget::admit`](crate::reconcile::write::WriteBudget::admit)).

use std::{
    sync::Arc,
    task::{Context, Poll},
};

use futures::future::BoxFuture;
use http::{Method, Request, Response};
use kube::client::Body;
use tower_service::Service;

/// Charges one write to a namespace.
pub(super) type Charge = Arc<dyn Fn(&str) + Send + Sync>;

/// `client` with `charge` called for every write it sends.
pub(super) fn wrap(charge: Charge, client: kube::Client) -> kube::Client {
    let namespace = client.default_namespace().to_owned();
    kube::Client::new(Charging { charge, client }, namespace)
}

/// The service the wrapped client sends through: charge, then send on the inner client.
#[derive(Clone)]
struct Charging {
    charge: Charge,
    client: kube::Client,
}

impl Service<Request<Body>> for Charging {
    type Response = Response<Body>;
    type Error = kube::Error;
    type Future = BoxFuture<'static, Result<Response<Body>, kube::Error>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), kube::Error>> {
        // The inner client has its own buffer, which `send` waits on.
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<Body>) -> Self::Future {
        if let Some(namespace) = charged_namespace(request.method(), request.uri().path()) {
            (self.charge)(namespace);
        }
        let client = self.client.clone();
        Box::pin(async move { client.send(request).await })
    }
}

/// The namespace a request of `method` to `path` is charged to: writes to namespaced paths only.
fn charged_namespace<'a>(method: &Method, path: &'a str) -> Option<&'a str> {
    if !matches!(
        *method,
        Method::POST | Method::PUT | Method::PATCH | Method::DELETE
    ) {
        return None;
    }
    let mut segments = path.trim_start_matches('/').split('/');
    let prefix = match segments.next()? {
        "api" => 1,
        "apis" => 2,
        _ => return None,
    };
    let mut segments = segments.skip(prefix);
    match (segments.next(), segments.next(), segments.next()) {
        (Some("namespaces"), Some(namespace), Some(resource))
            if !namespace.is_empty() && !resource.is_empty() =>
        {
            Some(namespace)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_to_namespaced_paths_should_be_charged_to_their_namespace_only() {
        // (method, path, charged to)
        let table = [
            (Method::POST, "/api/v1/namespaces/team-a/secrets", Some("team-a")),
            (
                Method::PUT,
                "/api/v1/namespaces/team-a/secrets/db",
                Some("team-a"),
            ),
            (
                Method::DELETE,
                "/api/v1/namespaces/team-a/secrets/db",
                Some("team-a"),
            ),
            (
                Method::PATCH,
                "/apis/ferrvault.com/v1alpha1/namespaces/team-b/ferrvaultsecrets/app/status",
                Some("team-b"),
            ),
            (
                Method::POST,
                "/apis/events.k8s.io/v1/namespaces/team-c/events",
                Some("team-c"),
            ),
            (
                Method::PATCH,
                "/apis/apps/v1/namespaces/team-d/deployments/web",
                Some("team-d"),
            ),
            (Method::GET, "/api/v1/namespaces/team-a/secrets/db", None),
            (Method::POST, "/apis/authentication.k8s.io/v1/tokenreviews", None),
            (Method::PATCH, "/api/v1/namespaces/team-a", None),
            (Method::POST, "/api/v1/namespaces", None),
            (Method::POST, "/healthz", None),
            (Method::POST, "/api/v1/namespaces//secrets", None),
        ];
        for (method, path, expected) in table {
            assert_eq!(charged_namespace(&method, path), expected, "{method} {path}");
        }
    }
}
