//! Protobuf round trips of representative objects of every kind with a protobuf form:
//! the k8s-openapi JSON of an object, encoded as the simulator answers protobuf clients
//! and decoded as it reads their bodies, is the same JSON (and the same typed object).
//! The samples carry the fields kubectl's `create` subcommands send, plus the special
//! shapes: times, micro-times, int-or-string, quantities, inline structs, managedFields.

use ferrvault_sim::kube::protobuf;
use k8s_openapi::{
    List, Resource,
    api::{
        apps::v1::{Deployment, StatefulSet},
        autoscaling::v1::Scale,
        batch::v1::Job,
        coordination::v1::Lease,
        core::v1::{ConfigMap, Event, Namespace, Pod, Secret, Service, ServiceAccount},
        events::v1::Event as EventsEvent,
        policy::v1::PodDisruptionBudget,
        rbac::v1::{ClusterRole, ClusterRoleBinding, Role, RoleBinding},
    },
};
use serde::{Serialize, de::DeserializeOwned};
use serde_json::{Value, json};

/// Asserts that `sample` is exactly `K`'s JSON and survives protobuf both ways.
fn round_trip<K: Resource + Serialize + DeserializeOwned + PartialEq + std::fmt::Debug>(mut sample: Value) {
    sample["apiVersion"] = json!(K::API_VERSION);
    sample["kind"] = json!(K::KIND);
    let typed: K = serde_json::from_value(sample.clone()).expect("the sample is a valid object");
    assert_eq!(
        serde_json::to_value(&typed).expect("serialises"),
        sample,
        "the sample is written as k8s-openapi writes it"
    );
    let body = protobuf::encode(&sample).unwrap_or_else(|| panic!("{} has a protobuf form", K::KIND));
    assert!(body.starts_with(b"k8s\0"));
    let back = protobuf::decode(&body).expect("the body decodes");
    assert_eq!(back, sample, "{} survives protobuf", K::KIND);
    let typed_back: K = serde_json::from_value(back).expect("still a valid object");
    assert_eq!(typed_back, typed);
}

fn metadata(name: &str) -> Value {
    json!({
        "name": name, "namespace": "team-a", "uid": "6d5c8f0e-0000-4000-8000-000000000001",
        "resourceVersion": "42", "generation": 3, "creationTimestamp": "2026-01-02T03:04:05Z",
        "labels": {"app": "web", "tier": "front"},
        "annotations": {"ferrvault.com/owner": "platform"},
        "finalizers": ["ferrvault.com/cleanup"],
        "ownerReferences": [{"apiVersion": "ferrvault.com/v1alpha1", "kind": "FerrVaultSecret",
            "name": "app", "uid": "6d5c8f0e-0000-4000-8000-000000000002",
            "controller": true, "blockOwnerDeletion": false}],
        "managedFields": [{"manager": "kubectl-create", "operation": "Update", "apiVersion": "v1",
            "time": "2026-01-02T03:04:05Z", "fieldsType": "FieldsV1",
            "fieldsV1": {"f:data": {".": {}, "f:password": {}}}}],
    })
}

fn pod_template() -> Value {
    json!({
        "metadata": {"labels": {"app": "web"}},
        "spec": {
            "containers": [{
                "name": "web", "image": "nginx:1.27", "imagePullPolicy": "IfNotPresent",
                "command": ["nginx"], "args": ["-g", "daemon off;"],
                "ports": [{"name": "http", "containerPort": 80, "protocol": "TCP"}],
                "env": [
                    {"name": "MODE", "value": "fast"},
                    {"name": "PASSWORD", "valueFrom": {"secretKeyRef": {"name": "db", "key": "password", "optional": false}}},
                ],
                "envFrom": [{"configMapRef": {"name": "settings"}}],
                "resources": {"limits": {"cpu": "500m", "memory": "128Mi"}, "requests": {"cpu": "100m"}},
                "volumeMounts": [{"name": "tls", "mountPath": "/tls", "readOnly": true}],
                "readinessProbe": {"httpGet": {"path": "/healthz", "port": "http"}, "periodSeconds": 5},
                "livenessProbe": {"tcpSocket": {"port": 80}, "initialDelaySeconds": 3},
                "securityContext": {"runAsNonRoot": true, "runAsUser": 0, "allowPrivilegeEscalation": false,
                    "capabilities": {"drop": ["ALL"]}},
            }],
            "volumes": [
                {"name": "tls", "secret": {"secretName": "web-tls", "defaultMode": 420}},
                {"name": "settings", "configMap": {"name": "settings", "items": [{"key": "mode", "path": "mode.txt"}]}},
                {"name": "scratch", "emptyDir": {"sizeLimit": "1Gi"}},
            ],
            "restartPolicy": "Always",
            "terminationGracePeriodSeconds": 0,
            "serviceAccountName": "bot",
            "automountServiceAccountToken": false,
            "nodeSelector": {"kubernetes.io/os": "linux"},
            "tolerations": [{"key": "dedicated", "operator": "Equal", "value": "web", "effect": "NoSchedule"}],
            "affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{
                "weight": 100,
                "podAffinityTerm": {"topologyKey": "kubernetes.io/hostname",
                    "labelSelector": {"matchLabels": {"app": "web"}}},
            }]}},
        },
    })
}

#[test]
fn core_kinds_should_survive_protobuf() {
    round_trip::<Namespace>(json!({
        "metadata": {"name": "team-a", "labels": {"kubernetes.io/metadata.name": "team-a"}},
        "spec": {"finalizers": ["kubernetes"]},
        "status": {"phase": "Active"},
    }));
    round_trip::<Secret>(json!({
        "metadata": metadata("db"),
        "type": "kubernetes.io/tls",
        "data": {"tls.crt": "Y2VydA==", "tls.key": "a2V5"},
        "immutable": true,
    }));
    round_trip::<ConfigMap>(json!({
        "metadata": metadata("settings"),
        "data": {"mode": "fast"},
        "binaryData": {"blob": "AAEC"},
    }));
    round_trip::<ServiceAccount>(json!({
        "metadata": metadata("bot"),
        "secrets": [{"name": "bot-token"}],
        "imagePullSecrets": [{"name": "registry"}],
        "automountServiceAccountToken": false,
    }));
    round_trip::<Service>(json!({
        "metadata": metadata("web"),
        "spec": {"type": "ClusterIP", "selector": {"app": "web"}, "clusterIP": "10.0.0.10",
            "ports": [{"name": "http", "port": 80, "targetPort": "http", "protocol": "TCP"},
                      {"name": "metrics", "port": 8080, "targetPort": 8080}]},
    }));
    round_trip::<Pod>(json!({
        "metadata": metadata("web-0"),
        "spec": pod_template()["spec"].clone(),
        "status": {"phase": "Running", "podIP": "10.1.2.3", "hostIP": "192.168.1.5",
            "startTime": "2026-01-02T03:04:05Z",
            "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "2026-01-02T03:04:06Z"}],
            "containerStatuses": [{"name": "web", "ready": true, "restartCount": 0, "image": "nginx:1.27",
                "imageID": "docker.io/library/nginx@sha256:00", "started": true,
                "state": {"running": {"startedAt": "2026-01-02T03:04:05Z"}}}]},
    }));
}

#[test]
fn events_should_survive_protobuf_in_both_apis() {
    round_trip::<Event>(json!({
        "metadata": metadata("app.1"),
        "involvedObject": {"apiVersion": "ferrvault.com/v1alpha1", "kind": "FerrVaultSecret",
            "namespace": "team-a", "name": "app", "uid": "6d5c8f0e-0000-4000-8000-000000000002"},
        "reason": "Synced", "message": "synced 3 keys", "type": "Normal", "count": 2,
        "eventTime": "2026-01-02T03:04:05.123456Z",
        "firstTimestamp": "2026-01-02T03:04:05Z", "lastTimestamp": "2026-01-02T03:05:05Z",
        "source": {"component": "ferrvault-operator"},
        "reportingComponent": "ferrvault-operator", "reportingInstance": "ferrvault-operator-0",
        "action": "Sync",
        "series": {"count": 2, "lastObservedTime": "2026-01-02T03:05:05.000001Z"},
    }));
    round_trip::<EventsEvent>(json!({
        "metadata": metadata("app.2"),
        "eventTime": "2026-01-02T03:04:05.123456Z",
        "reportingController": "ferrvault-operator", "reportingInstance": "ferrvault-operator-0",
        "action": "Sync", "reason": "Synced", "note": "synced 3 keys", "type": "Normal",
        "regarding": {"apiVersion": "ferrvault.com/v1alpha1", "kind": "FerrVaultSecret",
            "namespace": "team-a", "name": "app"},
    }));
    round_trip::<Lease>(json!({
        "metadata": metadata("leader"),
        "spec": {"holderIdentity": "pod-a", "leaseDurationSeconds": 15, "leaseTransitions": 0,
            "acquireTime": "2026-01-02T03:04:05.000000Z", "renewTime": "2026-01-02T03:04:10.500000Z"},
    }));
}

#[test]
fn workloads_should_survive_protobuf() {
    round_trip::<Deployment>(json!({
        "metadata": metadata("web"),
        "spec": {
            "replicas": 0,
            "selector": {"matchLabels": {"app": "web"},
                "matchExpressions": [{"key": "tier", "operator": "In", "values": ["front"]}]},
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 1}},
            "revisionHistoryLimit": 10,
            "progressDeadlineSeconds": 600,
            "template": pod_template(),
        },
        "status": {"observedGeneration": 3, "replicas": 2, "readyReplicas": 2, "availableReplicas": 2,
            "updatedReplicas": 2,
            "conditions": [{"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable",
                "message": "Deployment has minimum availability.",
                "lastUpdateTime": "2026-01-02T03:04:05Z", "lastTransitionTime": "2026-01-02T03:04:05Z"}]},
    }));
    round_trip::<StatefulSet>(json!({
        "metadata": metadata("db"),
        "spec": {
            "replicas": 1, "serviceName": "db",
            "selector": {"matchLabels": {"app": "web"}},
            "template": pod_template(),
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}},
            "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Delete", "whenScaled": "Retain"},
        },
    }));
    round_trip::<Job>(json!({
        "metadata": metadata("once"),
        "spec": {"backoffLimit": 0, "completions": 1, "ttlSecondsAfterFinished": 600, "suspend": false,
            "template": {"spec": {"restartPolicy": "Never",
                "containers": [{"name": "once", "image": "busybox", "command": ["echo", "hi"]}]}}},
        "status": {"startTime": "2026-01-02T03:04:05Z", "succeeded": 1,
            "conditions": [{"type": "Complete", "status": "True", "lastProbeTime": "2026-01-02T03:04:09Z",
                "lastTransitionTime": "2026-01-02T03:04:09Z"}]},
    }));
    round_trip::<PodDisruptionBudget>(json!({
        "metadata": metadata("web"),
        "spec": {"minAvailable": "50%", "selector": {"matchLabels": {"app": "web"}}},
    }));
    round_trip::<Scale>(json!({
        "metadata": metadata("web"),
        "spec": {"replicas": 3},
        "status": {"replicas": 2, "selector": "app=web"},
    }));
}

#[test]
fn rbac_kinds_should_survive_protobuf() {
    round_trip::<Role>(json!({
        "metadata": metadata("reader"),
        "rules": [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get", "list"],
            "resourceNames": ["db"]}],
    }));
    round_trip::<RoleBinding>(json!({
        "metadata": metadata("bot-reads"),
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "reader"},
        "subjects": [{"kind": "ServiceAccount", "name": "bot", "namespace": "team-a"},
                     {"kind": "User", "name": "alice", "apiGroup": "rbac.authorization.k8s.io"}],
    }));
    round_trip::<ClusterRole>(json!({
        "metadata": {"name": "metrics-reader"},
        "rules": [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}],
        "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"rbac.ferrvault.com/aggregate": "true"}}]},
    }));
    round_trip::<ClusterRoleBinding>(json!({
        "metadata": {"name": "metrics-reader"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "metrics-reader"},
        "subjects": [{"kind": "Group", "name": "system:serviceaccounts", "apiGroup": "rbac.authorization.k8s.io"}],
    }));
}

#[test]
fn lists_and_status_should_survive_protobuf() {
    round_trip::<List<Secret>>(json!({
        "metadata": {"resourceVersion": "42", "continue": "abc", "remainingItemCount": 0},
        "items": [{"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "db"}, "data": {"k": "dg=="}}],
    }));
    let status = json!({"apiVersion": "v1", "kind": "Status", "metadata": {}, "status": "Failure",
        "message": "Secret \"db\" is invalid: data[a/b]: Invalid value", "reason": "Invalid", "code": 422,
        "details": {"name": "db", "kind": "Secret",
            "causes": [{"reason": "FieldValueInvalid", "message": "Invalid value", "field": "data[a/b]"}]}});
    let back =
        protobuf::decode(&protobuf::encode(&status).expect("Status has a protobuf form")).expect("decodes");
    assert_eq!(back, status);
}

#[test]
fn zero_values_should_be_kept_for_pointers_and_dropped_for_omitempty_fields_like_go_does() {
    let deploy = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
        "spec": {"replicas": 0, "paused": false, "minReadySeconds": 0, "template": {"spec": {
            "containers": [{"name": "web", "ports": [{"containerPort": 80, "hostPort": 0}]}]}}}});
    let back = protobuf::decode(&protobuf::encode(&deploy).expect("encodes")).expect("decodes");
    assert_eq!(back["spec"]["replicas"], 0, "*int32: zero was set on purpose");
    assert!(back["spec"].get("paused").is_none(), "bool,omitempty: {back}");
    assert!(
        back["spec"].get("minReadySeconds").is_none(),
        "int32,omitempty: {back}"
    );
    let port = &back["spec"]["template"]["spec"]["containers"][0]["ports"][0];
    assert_eq!(
        port,
        &json!({"containerPort": 80}),
        "hostPort is omitempty, containerPort is not"
    );
}

#[test]
fn a_custom_resource_should_have_no_protobuf_form() {
    let widget = json!({"apiVersion": "sim.ferrvault.dev/v1", "kind": "Widget", "metadata": {"name": "w"}});
    assert!(protobuf::encode(&widget).is_none());
}
