//! The harness's bounded waits: each polls until the cluster shows what is awaited, or fails
//! naming it after [`DEADLINE`](ferrvault_sim::testkit::DEADLINE).

use std::future::Future;

use ferrvault_operator::api::{FerrVaultConnection, FerrVaultSecret};
use ferrvault_sim::testkit::eventually;
use k8s_openapi::{api::core::v1::Secret, apimachinery::pkg::apis::meta::v1::Condition};
use kube::Resource;

use super::Harness;
use crate::fixtures::ready;

impl Harness {
    /// Waits until `name` of kind `K` (read untyped) has a Ready condition with `reason`.
    pub async fn wait_raw_reason<K: Resource<DynamicType = ()>>(
        &self,
        name: &str,
        reason: &str,
    ) -> Condition {
        let api = self.raw::<K>();
        eventually(&format!("{} {name} Ready reason {reason}", K::kind(&())), || {
            let api = api.clone();
            async move {
                let object = api.get(name).await.ok()?;
                let conditions: Vec<Condition> =
                    serde_json::from_value(object.data.pointer("/status/conditions")?.clone()).ok()?;
                ready(Some(&conditions)).filter(|c| c.reason == reason).cloned()
            }
        })
        .await
    }

    /// Polls `probe` until it returns `Some`, or fails naming `what` after [`DEADLINE`].
    pub async fn eventually<T, F, Fut>(&self, what: &str, probe: F) -> T
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Option<T>>,
    {
        eventually(what, probe).await
    }

    /// Waits until the FerrVaultSecret's Ready condition has `reason`; returns the object.
    pub async fn wait_secret_reason(&self, name: &str, reason: &str) -> FerrVaultSecret {
        let api = self.fvs();
        eventually(&format!("FerrVaultSecret {name} Ready reason {reason}"), || {
            let api = api.clone();
            async move {
                let cr = api.get(name).await.ok()?;
                (ready(cr.status.as_ref().map(|s| s.conditions.as_slice()))?.reason == reason).then_some(cr)
            }
        })
        .await
    }

    /// Waits until the FerrVaultConnection's Ready condition has `reason`; returns the object.
    pub async fn wait_connection_reason(&self, name: &str, reason: &str) -> FerrVaultConnection {
        let api = self.fvc();
        eventually(
            &format!("FerrVaultConnection {name} Ready reason {reason}"),
            || {
                let api = api.clone();
                async move {
                    let c = api.get(name).await.ok()?;
                    (ready(c.status.as_ref().map(|s| s.conditions.as_slice()))?.reason == reason).then_some(c)
                }
            },
        )
        .await
    }

    /// Waits until Secret `name` exists and `check` accepts it.
    pub async fn wait_target(&self, name: &str, check: impl Fn(&Secret) -> bool) -> Secret {
        self.wait_target_for("in the expected state", name, check).await
    }

    /// [`Harness::wait_target`] with `what` in the failure message.
    pub async fn wait_target_for(&self, what: &str, name: &str, check: impl Fn(&Secret) -> bool) -> Secret {
        let api = self.secrets();
        let check = &check;
        eventually(&format!("target Secret {name} {what}"), || {
            let api = api.clone();
            async move { api.get_opt(name).await.ok().flatten().filter(|s| check(s)) }
        })
        .await
    }
}
