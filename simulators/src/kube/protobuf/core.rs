//! Core `v1` kinds other than the pod spec: namespaces, secrets, config maps, service accounts, services, events, pods, persistent volume claims.
//!
//! Field lists generated from k8s-pb's messages; JSON names checked against k8s-openapi.

use super::convert::messages;
use k8s_pb::api::core::v1 as core;

messages! {
    core::Namespace { metadata, spec, status }
    core::NamespaceList { metadata, items }
    core::Secret { metadata, immutable: keep, data, string_data, r#type }
    core::SecretList { metadata, items }
    core::ConfigMap { metadata, immutable: keep, data, binary_data }
    core::ConfigMapList { metadata, items }
    core::ServiceAccount {
        metadata, secrets, image_pull_secrets, automount_service_account_token: keep
    }
    core::ServiceAccountList { metadata, items }
    core::Service { metadata, spec, status }
    core::ServiceList { metadata, items }
    core::Pod { metadata, spec, status }
    core::PodList { metadata, items }
    core::Event {
        metadata, involved_object, reason, message, source, first_timestamp: keep,
        last_timestamp: keep, count, r#type, event_time: keep, series, action, related,
        reporting_component: keep, reporting_instance: keep
    }
    core::EventList { metadata, items }
    core::NamespaceSpec { finalizers }
    core::NamespaceStatus { phase, conditions }
    core::ObjectReference { kind, namespace, name, uid, api_version, resource_version, field_path }
    core::ServiceSpec {
        ports, selector, cluster_ip: "clusterIP", cluster_ips: "clusterIPs", r#type,
        external_ips: "externalIPs", session_affinity, load_balancer_ip: "loadBalancerIP",
        load_balancer_source_ranges, external_name, external_traffic_policy, health_check_node_port,
        publish_not_ready_addresses, session_affinity_config, ip_families, ip_family_policy: keep,
        allocate_load_balancer_node_ports: keep, load_balancer_class: keep,
        internal_traffic_policy: keep, traffic_distribution: keep
    }
    core::ServiceStatus { load_balancer, conditions }
    core::EventSource { component, host }
    core::EventSeries { count, last_observed_time: keep }
    core::NamespaceCondition {
        r#type: keep, status: keep, last_transition_time: keep, reason, message
    }
    core::ServicePort { name, protocol, app_protocol: keep, port: keep, target_port, node_port }
    core::SessionAffinityConfig { client_ip: "clientIP" }
    core::LoadBalancerStatus { ingress }
    core::PodTemplateSpec { metadata, spec }
    core::PersistentVolumeClaim { metadata, spec, status }
    core::ClientIpConfig { timeout_seconds: keep }
    core::LoadBalancerIngress { ip, hostname, ip_mode: keep, ports }
    core::PersistentVolumeClaimStatus {
        phase, access_modes, capacity, conditions, allocated_resources, allocated_resource_statuses,
        current_volume_attributes_class_name: keep, modify_volume_status
    }
    core::PortStatus { port: keep, protocol: keep, error: keep }
    core::PersistentVolumeClaimCondition {
        r#type: keep, status: keep, last_probe_time: keep, last_transition_time: keep, reason,
        message
    }
    core::ModifyVolumeStatus { target_volume_attributes_class_name, status: keep }
}
