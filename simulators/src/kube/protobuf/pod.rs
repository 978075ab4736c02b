//! The pod spec and status (`core/v1`), shared by pods and every workload template.
//!
//! Field lists generated from k8s-pb's messages; JSON names checked against k8s-openapi.

use super::convert::messages;
use k8s_pb::api::core::v1 as core;

messages! {
    core::LocalObjectReference { name }
    core::PodSpec {
        volumes, init_containers, containers, ephemeral_containers, restart_policy,
        termination_grace_period_seconds: keep, active_deadline_seconds: keep, dns_policy,
        node_selector, service_account_name, service_account, automount_service_account_token: keep,
        node_name, host_network, host_pid: "hostPID", host_ipc: "hostIPC",
        share_process_namespace: keep, security_context, image_pull_secrets, hostname, subdomain,
        affinity, scheduler_name, tolerations, host_aliases, priority_class_name, priority: keep,
        dns_config, readiness_gates, runtime_class_name: keep, enable_service_links: keep,
        preemption_policy: keep, overhead, topology_spread_constraints,
        set_hostname_as_fqdn: "setHostnameAsFQDN" keep, os, host_users: keep, scheduling_gates,
        resource_claims, resources, hostname_override: keep, workload_ref
    }
    core::PodStatus {
        observed_generation, phase, conditions, message, reason, nominated_node_name,
        host_ip: "hostIP", host_ips: "hostIPs", pod_ip: "podIP", pod_ips: "podIPs",
        start_time: keep, init_container_statuses, container_statuses, qos_class,
        ephemeral_container_statuses, resize, resource_claim_statuses,
        extended_resource_claim_status, allocated_resources, resources
    }
    core::Volume { name: keep, volume_source: inline }
    core::Container {
        name: keep, image, command, args, working_dir, ports, env_from, env, resources,
        resize_policy, restart_policy: keep, restart_policy_rules, volume_mounts, volume_devices,
        liveness_probe, readiness_probe, startup_probe, lifecycle, termination_message_path,
        termination_message_policy, image_pull_policy, security_context, stdin, stdin_once, tty
    }
    core::EphemeralContainer { ephemeral_container_common: inline, target_container_name }
    core::PodSecurityContext {
        se_linux_options, windows_options, run_as_user: keep, run_as_group: keep,
        run_as_non_root: keep, supplemental_groups, supplemental_groups_policy: keep,
        fs_group: keep, sysctls, fs_group_change_policy: keep, seccomp_profile, app_armor_profile,
        se_linux_change_policy: keep
    }
    core::Affinity { node_affinity, pod_affinity, pod_anti_affinity }
    core::Toleration { key, operator, value, effect, toleration_seconds: keep }
    core::HostAlias { ip: keep, hostnames }
    core::PodDnsConfig { nameservers, searches, options }
    core::PodReadinessGate { condition_type: keep }
    core::TopologySpreadConstraint {
        max_skew: keep, topology_key: keep, when_unsatisfiable: keep, label_selector,
        min_domains: keep, node_affinity_policy: keep, node_taints_policy: keep, match_label_keys
    }
    core::PodOs { name: keep }
    core::PodSchedulingGate { name: keep }
    core::PodResourceClaim {
        name: keep, resource_claim_name: keep, resource_claim_template_name: keep
    }
    core::ResourceRequirements { limits, requests, claims }
    core::WorkloadReference { name, pod_group, pod_group_replica_key }
    core::PodCondition {
        r#type: keep, observed_generation, status: keep, last_probe_time: keep,
        last_transition_time: keep, reason, message
    }
    core::HostIp { ip: keep }
    core::PodIp { ip: keep }
    core::ContainerStatus {
        name: keep, state, last_state, ready: keep, restart_count: keep, image: keep,
        image_id: "imageID" keep, container_id: "containerID", started: keep, allocated_resources,
        resources, volume_mounts, user, allocated_resources_status, stop_signal: keep
    }
    core::PodResourceClaimStatus { name: keep, resource_claim_name: keep }
    core::PodExtendedResourceClaimStatus { request_mappings, resource_claim_name: keep }
    core::VolumeSource {
        host_path, empty_dir, gce_persistent_disk, aws_elastic_block_store, git_repo, secret, nfs,
        iscsi, glusterfs, persistent_volume_claim, rbd, flex_volume, cinder, cephfs, flocker,
        downward_api: "downwardAPI", fc, azure_file, config_map, vsphere_volume, quobyte,
        azure_disk, photon_persistent_disk, projected, portworx_volume, scale_io: "scaleIO",
        storageos, csi, ephemeral, image
    }
    core::ContainerPort { name, host_port, container_port: keep, protocol, host_ip: "hostIP" }
    core::EnvFromSource { prefix, config_map_ref, secret_ref }
    core::EnvVar { name: keep, value, value_from }
    core::ContainerResizePolicy { resource_name: keep, restart_policy: keep }
    core::ContainerRestartRule { action, exit_codes }
    core::VolumeMount {
        name: keep, read_only, recursive_read_only: keep, mount_path: keep, sub_path,
        mount_propagation: keep, sub_path_expr
    }
    core::VolumeDevice { name: keep, device_path: keep }
    core::Probe {
        handler: inline, initial_delay_seconds, timeout_seconds, period_seconds, success_threshold,
        failure_threshold, termination_grace_period_seconds: keep
    }
    core::Lifecycle { post_start, pre_stop, stop_signal: keep }
    core::SecurityContext {
        capabilities, privileged: keep, se_linux_options, windows_options, run_as_user: keep,
        run_as_group: keep, run_as_non_root: keep, read_only_root_filesystem: keep,
        allow_privilege_escalation: keep, proc_mount: keep, seccomp_profile, app_armor_profile
    }
    core::EphemeralContainerCommon {
        name: keep, image, command, args, working_dir, ports, env_from, env, resources,
        resize_policy, restart_policy: keep, restart_policy_rules, volume_mounts, volume_devices,
        liveness_probe, readiness_probe, startup_probe, lifecycle, termination_message_path,
        termination_message_policy, image_pull_policy, security_context, stdin, stdin_once, tty
    }
    core::SeLinuxOptions { user, role, r#type, level }
    core::WindowsSecurityContextOptions {
        gmsa_credential_spec_name: keep, gmsa_credential_spec: keep, run_as_user_name: keep,
        host_process: keep
    }
    core::Sysctl { name: keep, value: keep }
    core::SeccompProfile { r#type: keep, localhost_profile: keep }
    core::AppArmorProfile { r#type: keep, localhost_profile: keep }
    core::NodeAffinity {
        required_during_scheduling_ignored_during_execution,
        preferred_during_scheduling_ignored_during_execution
    }
    core::PodAffinity {
        required_during_scheduling_ignored_during_execution,
        preferred_during_scheduling_ignored_during_execution
    }
    core::PodAntiAffinity {
        required_during_scheduling_ignored_during_execution,
        preferred_during_scheduling_ignored_during_execution
    }
    core::PodDnsConfigOption { name, value: keep }
    core::ResourceClaim { name: keep, request }
    core::ContainerState { waiting, running, terminated }
    core::VolumeMountStatus { name: keep, mount_path: keep, read_only, recursive_read_only: keep }
    core::ContainerUser { linux }
    core::ResourceStatus { name: keep, resources }
    core::ContainerExtendedResourceRequest {
        container_name: keep, resource_name: keep, request_name: keep
    }
    core::PersistentVolumeClaimSpec {
        access_modes, selector, resources, volume_name, storage_class_name: keep, volume_mode: keep,
        data_source, data_source_ref, volume_attributes_class_name: keep
    }
    core::HostPathVolumeSource { path: keep, r#type: keep }
    core::EmptyDirVolumeSource { medium, size_limit }
    core::GcePersistentDiskVolumeSource { pd_name: keep, fs_type, partition, read_only }
    core::AwsElasticBlockStoreVolumeSource {
        volume_id: "volumeID" keep, fs_type, partition, read_only
    }
    core::GitRepoVolumeSource { repository: keep, revision, directory }
    core::SecretVolumeSource { secret_name, items, default_mode: keep, optional: keep }
    core::NfsVolumeSource { server: keep, path: keep, read_only }
    core::IscsiVolumeSource {
        target_portal: keep, iqn: keep, lun: keep, iscsi_interface, fs_type, read_only, portals,
        chap_auth_discovery, chap_auth_session, secret_ref, initiator_name: keep
    }
    core::GlusterfsVolumeSource { endpoints: keep, path: keep, read_only }
    core::PersistentVolumeClaimVolumeSource { claim_name: keep, read_only }
    core::RbdVolumeSource {
        monitors, image: keep, fs_type, pool, user, keyring, secret_ref, read_only
    }
    core::FlexVolumeSource { driver: keep, fs_type, secret_ref, read_only, options }
    core::CinderVolumeSource { volume_id: "volumeID" keep, fs_type, read_only, secret_ref }
    core::CephFsVolumeSource { monitors, path, user, secret_file, secret_ref, read_only }
    core::FlockerVolumeSource { dataset_name, dataset_uuid: "datasetUUID" }
    core::DownwardAPIVolumeSource { items, default_mode: keep }
    core::FcVolumeSource { target_ww_ns: "targetWWNs", lun: keep, fs_type, read_only, wwids }
    core::AzureFileVolumeSource { secret_name: keep, share_name: keep, read_only }
    core::ConfigMapVolumeSource {
        local_object_reference: inline, items, default_mode: keep, optional: keep
    }
    core::VsphereVirtualDiskVolumeSource {
        volume_path: keep, fs_type, storage_policy_name, storage_policy_id: "storagePolicyID"
    }
    core::QuobyteVolumeSource { registry: keep, volume: keep, read_only, user, group, tenant }
    core::AzureDiskVolumeSource {
        disk_name: keep, disk_uri: "diskURI" keep, caching_mode: keep, fs_type: keep,
        read_only: keep, kind: keep
    }
    core::PhotonPersistentDiskVolumeSource { pd_id: "pdID" keep, fs_type }
    core::ProjectedVolumeSource { sources, default_mode: keep }
    core::PortworxVolumeSource { volume_id: "volumeID" keep, fs_type, read_only }
    core::ScaleIoVolumeSource {
        gateway: keep, system: keep, secret_ref, ssl_enabled, protection_domain, storage_pool,
        storage_mode, volume_name, fs_type, read_only
    }
    core::StorageOsVolumeSource { volume_name, volume_namespace, fs_type, read_only, secret_ref }
    core::CSIVolumeSource {
        driver: keep, read_only: keep, fs_type: keep, volume_attributes, node_publish_secret_ref
    }
    core::EphemeralVolumeSource { volume_claim_template }
    core::ImageVolumeSource { reference, pull_policy }
    core::ConfigMapEnvSource { local_object_reference: inline, optional: keep }
    core::SecretEnvSource { local_object_reference: inline, optional: keep }
    core::EnvVarSource {
        field_ref, resource_field_ref, config_map_key_ref, secret_key_ref, file_key_ref
    }
    core::ContainerRestartRuleOnExitCodes { operator, values }
    core::ProbeHandler { exec, http_get, tcp_socket, grpc }
    core::LifecycleHandler { exec, http_get, tcp_socket, sleep }
    core::Capabilities { add, drop }
    core::NodeSelector { node_selector_terms }
    core::PreferredSchedulingTerm { weight: keep, preference }
    core::PodAffinityTerm {
        label_selector, namespaces, topology_key: keep, namespace_selector, match_label_keys,
        mismatch_label_keys
    }
    core::WeightedPodAffinityTerm { weight: keep, pod_affinity_term }
    core::ContainerStateWaiting { reason, message }
    core::ContainerStateRunning { started_at: keep }
    core::ContainerStateTerminated {
        exit_code: keep, signal, reason, message, started_at: keep, finished_at: keep,
        container_id: "containerID"
    }
    core::LinuxContainerUser { uid: keep, gid: keep, supplemental_groups }
    core::ResourceHealth { resource_id: "resourceID" keep, health }
    core::VolumeResourceRequirements { limits, requests }
    core::TypedLocalObjectReference { api_group: keep, kind: keep, name: keep }
    core::TypedObjectReference { api_group: keep, kind: keep, name: keep, namespace: keep }
    core::KeyToPath { key: keep, path: keep, mode: keep }
    core::DownwardAPIVolumeFile { path: keep, field_ref, resource_field_ref, mode: keep }
    core::VolumeProjection {
        secret, downward_api: "downwardAPI", config_map, service_account_token,
        cluster_trust_bundle, pod_certificate
    }
    core::PersistentVolumeClaimTemplate { metadata, spec }
    core::ObjectFieldSelector { api_version, field_path: keep }
    core::ResourceFieldSelector { container_name, resource: keep, divisor }
    core::ConfigMapKeySelector { local_object_reference: inline, key: keep, optional: keep }
    core::SecretKeySelector { local_object_reference: inline, key: keep, optional: keep }
    core::FileKeySelector { volume_name: keep, path: keep, key: keep, optional: keep }
    core::ExecAction { command }
    core::HttpGetAction { path, port, host, scheme, http_headers }
    core::TcpSocketAction { port, host }
    core::GrpcAction { port: keep, service: keep }
    core::SleepAction { seconds: keep }
    core::NodeSelectorTerm { match_expressions, match_fields }
    core::SecretProjection { local_object_reference: inline, items, optional: keep }
    core::DownwardAPIProjection { items }
    core::ConfigMapProjection { local_object_reference: inline, items, optional: keep }
    core::ServiceAccountTokenProjection { audience, expiration_seconds: keep, path: keep }
    core::ClusterTrustBundleProjection {
        name: keep, signer_name: keep, label_selector, optional: keep, path: keep
    }
    core::PodCertificateProjection {
        signer_name, key_type, max_expiration_seconds: keep, credential_bundle_path, key_path,
        certificate_chain_path, user_annotations
    }
    core::HttpHeader { name: keep, value: keep }
    core::NodeSelectorRequirement { key: keep, operator: keep, values }
}
