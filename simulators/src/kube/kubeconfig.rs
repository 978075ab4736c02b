//! A kubeconfig pointing at the simulator, for `kubectl --kubeconfig` and other clients.

use serde_json::json;

/// The kubeconfig YAML for a server at `url`, optionally impersonating `user_as`
/// (`users[].user.as`, sent as `Impersonate-User` by kubectl and kube-rs alike).
pub fn render(url: &str, user_as: Option<&str>) -> String {
    let mut user = json!({});
    if let Some(name) = user_as {
        user["as"] = json!(name);
    }
    let doc = json!({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{ "name": "ferrvault-sim", "cluster": { "server": url } }],
        "users": [{ "name": "ferrvault-sim", "user": user }],
        "contexts": [{ "name": "ferrvault-sim", "context": { "cluster": "ferrvault-sim", "user": "ferrvault-sim", "namespace": "default" } }],
        "current-context": "ferrvault-sim",
        "preferences": {},
    });
    serde_norway::to_string(&doc).expect("kubeconfig serialises")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kubeconfig_should_parse_as_a_kube_kubeconfig() {
        let kc = kube::config::Kubeconfig::from_yaml(&render("http://127.0.0.1:1234", None))
            .expect("valid kubeconfig");
        assert_eq!(kc.current_context.as_deref(), Some("ferrvault-sim"));
        let server = kc.clusters[0].cluster.as_ref().and_then(|c| c.server.clone());
        assert_eq!(server.as_deref(), Some("http://127.0.0.1:1234"));
    }
}
