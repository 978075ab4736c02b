//! Who may do what on the shared cluster. The Kubernetes simulator authorizes every request
//! (RBAC enforced); each tenant is a user bound to a Role in its own namespace only; the operator
//! is the chart's ServiceAccount with the chart's rendered RBAC (rendered by the real `helm`, as
//! `tests/chart/` does), so every attack also proves the operator works under the least privilege
//! the chart grants.

use kube::{
    Api,
    api::{ApiResource, DynamicObject, GroupVersionKind, PostParams},
};
use serde_json::{Value, json};

use super::render::{NAMESPACE, Rendering};

/// The release namespace: the operator's Lease and content-hash key live there.
pub const OPERATOR_NAMESPACE: &str = NAMESPACE;

/// The kinds of the rendering that make up the operator's identity and permissions.
const IDENTITY_KINDS: [&str; 5] = [
    "ServiceAccount",
    "ClusterRole",
    "ClusterRoleBinding",
    "Role",
    "RoleBinding",
];

/// The verbs a tenant has on its own kinds: no `patch`, no `watch`, no status subresource.
const TENANT_VERBS: [&str; 5] = ["create", "get", "list", "update", "delete"];

/// The user a tenant's requests authenticate as.
pub fn tenant_user(namespace: &str) -> String {
    format!("developer@{namespace}")
}

/// Creates the tenant's Role and RoleBinding in `namespace`: FerrVaultConnections,
/// FerrVaultSecrets and Secrets there, with [`TENANT_VERBS`], and nothing else.
pub async fn grant_tenant(admin: &kube::Client, namespace: &str) {
    let role = json!({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "Role",
        "metadata": { "name": "tenant", "namespace": namespace },
        "rules": [
            {
                "apiGroups": ["ferrvault.com"],
                "resources": ["ferrvaultconnections", "ferrvaultsecrets"],
                "verbs": TENANT_VERBS,
            },
            { "apiGroups": [""], "resources": ["secrets"], "verbs": TENANT_VERBS },
        ],
    });
    let binding = json!({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": { "name": "tenant", "namespace": namespace },
        "roleRef": { "apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "tenant" },
        "subjects": [{
            "apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": tenant_user(namespace),
        }],
    });
    for object in [role, binding] {
        create(admin, object).await;
    }
}

/// Applies the ServiceAccount and RBAC of the chart rendered with its defaults; returns the
/// user name the operator authenticates as (`system:serviceaccount:<release namespace>:<name>`).
pub async fn grant_operator(admin: &kube::Client) -> String {
    let rendering = Rendering::new(&[]);
    let accounts = rendering.names_of("ServiceAccount");
    assert_eq!(
        accounts.len(),
        1,
        "the chart renders one ServiceAccount: {accounts:?}"
    );
    for kind in IDENTITY_KINDS {
        for object in rendering.of_kind(kind) {
            create(admin, object.clone()).await;
        }
    }
    format!("system:serviceaccount:{OPERATOR_NAMESPACE}:{}", accounts[0])
}

/// Creates `object` (any kind, namespaced when its metadata says so) as the administrator.
async fn create(admin: &kube::Client, object: Value) {
    let object: DynamicObject = serde_json::from_value(object).expect("a Kubernetes object");
    let types = object.types.clone().expect("apiVersion and kind");
    let gvk = GroupVersionKind::try_from(&types).expect("a valid apiVersion");
    let resource = ApiResource::from_gvk(&gvk);
    let api: Api<DynamicObject> = match object.metadata.namespace.as_deref() {
        Some(namespace) => Api::namespaced_with(admin.clone(), namespace, &resource),
        None => Api::all_with(admin.clone(), &resource),
    };
    api.create(&PostParams::default(), &object)
        .await
        .unwrap_or_else(|e| {
            panic!(
                "the administrator creates {} {:?}: {e}",
                types.kind, object.metadata.name
            )
        });
}
