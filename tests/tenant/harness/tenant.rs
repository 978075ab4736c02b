//! One tenant: what it may do in its own namespace (Secrets, FerrVaultConnections,
//! FerrVaultSecrets, any spec it likes) and what it sees back (conditions, target Secrets).

use std::{collections::BTreeMap, time::Duration};

use ferrvault_operator::api::{FerrVaultConnection, FerrVaultSecret};
use ferrvault_sim::testkit::poll_until;
use k8s_openapi::{api::core::v1::Secret, apimachinery::pkg::apis::meta::v1::Condition};
use kube::{
    Api, Resource,
    api::{ApiResource, DynamicObject, ListParams, PostParams},
};
use serde_json::{Value, json};

/// How long a reconcile outcome may take to show (first passes run at once; this only turns a
/// hang into a failure).
pub const SHOWS_WITHIN: Duration = Duration::from_secs(30);

/// A tenant acting in its namespace through its own client.
pub struct Tenant {
    pub namespace: String,
    client: kube::Client,
}

impl Tenant {
    pub fn new(client: kube::Client, namespace: &str) -> Tenant {
        Tenant {
            namespace: namespace.to_owned(),
            client,
        }
    }

    /// The tenant's own client: what it can do is what its Role grants.
    pub fn client(&self) -> kube::Client {
        self.client.clone()
    }

    fn raw<K: Resource<DynamicType = ()>>(&self) -> Api<DynamicObject> {
        Api::namespaced_with(
            self.client.clone(),
            &self.namespace,
            &ApiResource::erase::<K>(&()),
        )
    }

    fn secrets(&self) -> Api<Secret> {
        Api::namespaced(self.client.clone(), &self.namespace)
    }

    /// Sends the create of `name` of kind `K` with `spec` exactly as given; the server's answer.
    async fn try_create<K: Resource<DynamicType = ()>>(
        &self,
        name: &str,
        spec: Value,
    ) -> kube::Result<DynamicObject> {
        let object: DynamicObject = serde_json::from_value(json!({
            "apiVersion": K::api_version(&()),
            "kind": K::kind(&()),
            "metadata": { "name": name, "namespace": self.namespace },
            "spec": spec,
        }))
        .expect("a dynamic object");
        self.raw::<K>().create(&PostParams::default(), &object).await
    }

    /// Creates `name` of kind `K` with `spec` exactly as given.
    async fn create<K: Resource<DynamicType = ()>>(&self, name: &str, spec: Value) {
        self.try_create::<K>(name, spec)
            .await
            .unwrap_or_else(|e| panic!("{} creates {} {name}: {e}", self.namespace, K::kind(&())));
    }

    /// Creates Secret `name` with string `data`.
    pub async fn put_secret(&self, name: &str, data: &[(&str, &str)]) {
        self.put_secret_as(name, json!({}), data).await;
    }

    /// Creates Secret `name` with string `data`, `extra` merged into its manifest (labels,
    /// annotations, `type`).
    pub async fn put_secret_as(&self, name: &str, extra: Value, data: &[(&str, &str)]) {
        let data: BTreeMap<&str, &str> = data.iter().copied().collect();
        let mut manifest = json!({"metadata": {"name": name}, "stringData": data});
        json_patch::merge(&mut manifest, &extra);
        let secret: Secret = serde_json::from_value(manifest).expect("a Secret");
        self.secrets()
            .create(&PostParams::default(), &secret)
            .await
            .unwrap_or_else(|e| panic!("{} creates Secret {name}: {e}", self.namespace));
    }

    /// Creates Secret `name` holding `data`, opted in as a connection's credential (the label
    /// `--require-credential-opt-in` asks for).
    pub async fn put_credential(&self, name: &str, data: &[(&str, &str)]) {
        let opted_in = json!({ "metadata": { "labels": { "ferrvault.com/credential": "true" } } });
        self.put_secret_as(name, opted_in, data).await;
    }

    /// Sets label `key` to `value` on Secret `name`: read, then replaced (the tenant's Role
    /// grants `update`, not `patch`).
    pub async fn label_secret(&self, name: &str, key: &str, value: &str) {
        let api = self.secrets();
        let mut secret = api
            .get(name)
            .await
            .unwrap_or_else(|e| panic!("{} reads Secret {name}: {e}", self.namespace));
        secret
            .metadata
            .labels
            .get_or_insert_default()
            .insert(key.to_owned(), value.to_owned());
        api.replace(name, &PostParams::default(), &secret)
            .await
            .unwrap_or_else(|e| panic!("{} labels Secret {name}: {e}", self.namespace));
    }

    /// Creates FerrVaultConnection `name` with `spec`.
    pub async fn connection(&self, name: &str, spec: Value) {
        self.create::<FerrVaultConnection>(name, spec).await;
    }

    /// Merges `spec` into FerrVaultConnection `name`'s spec (a new generation): read, then
    /// replaced (the tenant's Role grants `update`, not `patch`).
    pub async fn edit_connection(&self, name: &str, spec: Value) {
        let api = self.raw::<FerrVaultConnection>();
        let mut object = api
            .get(name)
            .await
            .unwrap_or_else(|e| panic!("{} reads {name}: {e}", self.namespace));
        json_patch::merge(&mut object.data, &json!({ "spec": spec }));
        api.replace(name, &PostParams::default(), &object)
            .await
            .unwrap_or_else(|e| panic!("{} edits {name}: {e}", self.namespace));
    }

    /// Sends the create of FerrVaultSecret `name` with `spec` exactly as given; the server's answer.
    pub async fn try_ferrvault_secret(&self, name: &str, spec: Value) -> kube::Result<DynamicObject> {
        self.try_create::<FerrVaultSecret>(name, spec).await
    }

    /// Creates FerrVaultSecret `name` with `spec` exactly as given.
    pub async fn ferrvault_secret(&self, name: &str, spec: Value) {
        self.create::<FerrVaultSecret>(name, spec).await;
    }

    /// Creates FerrVaultSecret `name` reading `vault` through `connection` into Secret `name`.
    pub async fn sync(&self, name: &str, connection: &str, vault: &str, project: Option<&str>) {
        let mut spec = json!({ "connectionRef": { "name": connection }, "vault": vault });
        if let Some(project) = project {
            spec["project"] = json!(project);
        }
        self.create::<FerrVaultSecret>(name, spec).await;
    }

    /// Waits until FerrVaultConnection `name` is Ready with `reason`; returns the condition.
    pub async fn wait_connection(&self, name: &str, reason: &str) -> Condition {
        self.wait_connection_saying(name, reason, "").await
    }

    /// Waits until FerrVaultConnection `name`'s condition `type_` has `reason`; returns it.
    pub async fn wait_connection_condition(&self, name: &str, type_: &str, reason: &str) -> Condition {
        wait_condition(
            &self.raw::<FerrVaultConnection>(),
            &self.namespace,
            name,
            (type_, reason, ""),
            SHOWS_WITHIN,
        )
        .await
    }

    /// Waits until FerrVaultConnection `name` is Ready with `reason` and a message containing
    /// `fragment`; returns the condition.
    pub async fn wait_connection_saying(&self, name: &str, reason: &str, fragment: &str) -> Condition {
        wait_condition(
            &self.raw::<FerrVaultConnection>(),
            &self.namespace,
            name,
            ("Ready", reason, fragment),
            SHOWS_WITHIN,
        )
        .await
    }

    /// Waits until FerrVaultSecret `name` is Ready with `reason`; returns the condition.
    pub async fn wait_secret(&self, name: &str, reason: &str) -> Condition {
        self.wait_secret_condition(name, "Ready", reason).await
    }

    /// Waits until FerrVaultSecret `name`'s condition `type_` has `reason`; returns it.
    pub async fn wait_secret_condition(&self, name: &str, type_: &str, reason: &str) -> Condition {
        self.wait_secret_within(name, (type_, reason), SHOWS_WITHIN).await
    }

    /// Waits at most `limit` until FerrVaultSecret `name`'s condition `type_` has `reason`.
    pub async fn wait_secret_within(
        &self,
        name: &str,
        (type_, reason): (&str, &str),
        limit: Duration,
    ) -> Condition {
        wait_condition(
            &self.raw::<FerrVaultSecret>(),
            &self.namespace,
            name,
            (type_, reason, ""),
            limit,
        )
        .await
    }

    /// The data of Secret `name`, if it exists.
    pub async fn target(&self, name: &str) -> Option<BTreeMap<String, Vec<u8>>> {
        let secret = self.secrets().get_opt(name).await.expect("read Secret")?;
        Some(
            secret
                .data
                .unwrap_or_default()
                .into_iter()
                .map(|(key, value)| (key, value.0))
                .collect(),
        )
    }

    /// Every value of every Secret in the namespace, for "no other tenant's data here" checks.
    pub async fn all_secret_values(&self) -> Vec<Vec<u8>> {
        self.secrets()
            .list(&ListParams::default())
            .await
            .expect("list Secrets")
            .items
            .into_iter()
            .flat_map(|secret| secret.data.unwrap_or_default().into_values().map(|v| v.0))
            .collect()
    }

    /// The statuses of every custom resource in the namespace, as JSON (for the leak scan).
    pub async fn statuses(&self) -> String {
        let mut statuses = Vec::new();
        for api in [self.raw::<FerrVaultConnection>(), self.raw::<FerrVaultSecret>()] {
            for object in api.list(&ListParams::default()).await.expect("list").items {
                statuses.push(object.data.get("status").cloned());
            }
        }
        serde_json::to_string(&statuses).expect("statuses serialise")
    }
}

/// The condition `type_` of `object`, read untyped.
fn condition(object: &DynamicObject, type_: &str) -> Option<Condition> {
    let conditions: Vec<Condition> =
        serde_json::from_value(object.data.pointer("/status/conditions")?.clone()).ok()?;
    conditions.into_iter().find(|c| c.type_ == type_)
}

/// Waits at most `limit` until `name`'s condition `type_` has `reason` and a message containing
/// `fragment`.
async fn wait_condition(
    api: &Api<DynamicObject>,
    namespace: &str,
    name: &str,
    (type_, reason, fragment): (&str, &str, &str),
    limit: Duration,
) -> Condition {
    poll_until(
        &format!("{namespace}/{name} {type_} reason {reason} saying {fragment:?}"),
        limit,
        || async {
            let object = api.get(name).await.map_err(|e| e.to_string())?;
            match condition(&object, type_) {
                Some(condition) if condition.reason == reason && condition.message.contains(fragment) => {
                    Ok(condition)
                }
                other => Err(format!("{:?}", other.map(|c| (c.status, c.reason, c.message)))),
            }
        },
    )
    .await
}
