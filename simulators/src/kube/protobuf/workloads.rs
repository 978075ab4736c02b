//! Workload kinds: `apps/v1`, `batch/v1`, `policy/v1` and the `autoscaling/v1` Scale.
//!
//! Field lists generated from k8s-pb's messages; JSON names checked against k8s-openapi.

use super::convert::messages;
use k8s_pb::api::apps::v1 as apps;
use k8s_pb::api::autoscaling::v1 as autoscaling;
use k8s_pb::api::batch::v1 as batch;
use k8s_pb::api::policy::v1 as policy;

messages! {
    apps::Deployment { metadata, spec, status }
    apps::DeploymentList { metadata, items }
    apps::StatefulSet { metadata, spec, status }
    apps::StatefulSetList { metadata, items }
    apps::DaemonSet { metadata, spec, status }
    apps::DaemonSetList { metadata, items }
    apps::ReplicaSet { metadata, spec, status }
    apps::ReplicaSetList { metadata, items }
    batch::Job { metadata, spec, status }
    batch::JobList { metadata, items }
    policy::PodDisruptionBudget { metadata, spec, status }
    policy::PodDisruptionBudgetList { metadata, items }
    autoscaling::Scale { metadata, spec, status }
    apps::DeploymentSpec {
        replicas: keep, selector, template, strategy, min_ready_seconds,
        revision_history_limit: keep, paused, progress_deadline_seconds: keep
    }
    apps::DeploymentStatus {
        observed_generation, replicas, updated_replicas, ready_replicas, available_replicas,
        unavailable_replicas, terminating_replicas: keep, conditions, collision_count: keep
    }
    apps::StatefulSetSpec {
        replicas: keep, selector, template, volume_claim_templates, service_name: keep,
        pod_management_policy, update_strategy, revision_history_limit: keep, min_ready_seconds,
        persistent_volume_claim_retention_policy, ordinals
    }
    apps::StatefulSetStatus {
        observed_generation, replicas: keep, ready_replicas, current_replicas, updated_replicas,
        current_revision, update_revision, collision_count: keep, conditions,
        available_replicas: keep
    }
    apps::DaemonSetSpec {
        selector, template, update_strategy, min_ready_seconds, revision_history_limit: keep
    }
    apps::DaemonSetStatus {
        current_number_scheduled: keep, number_misscheduled: keep, desired_number_scheduled: keep,
        number_ready: keep, observed_generation, updated_number_scheduled, number_available,
        number_unavailable, collision_count: keep, conditions
    }
    apps::ReplicaSetSpec { replicas: keep, min_ready_seconds, selector, template }
    apps::ReplicaSetStatus {
        replicas: keep, fully_labeled_replicas, ready_replicas, available_replicas,
        terminating_replicas: keep, observed_generation, conditions
    }
    batch::JobSpec {
        parallelism: keep, completions: keep, active_deadline_seconds: keep, pod_failure_policy,
        success_policy, backoff_limit: keep, backoff_limit_per_index: keep,
        max_failed_indexes: keep, selector, manual_selector: keep, template,
        ttl_seconds_after_finished: keep, completion_mode: keep, suspend: keep,
        pod_replacement_policy: keep, managed_by: keep
    }
    batch::JobStatus {
        conditions, start_time: keep, completion_time: keep, active, succeeded, failed,
        terminating: keep, completed_indexes, failed_indexes: keep, uncounted_terminated_pods,
        ready: keep
    }
    policy::PodDisruptionBudgetSpec {
        min_available, selector, max_unavailable, unhealthy_pod_eviction_policy: keep
    }
    policy::PodDisruptionBudgetStatus {
        observed_generation, disrupted_pods: keep, disruptions_allowed: keep, current_healthy: keep,
        desired_healthy: keep, expected_pods: keep, conditions
    }
    autoscaling::ScaleSpec { replicas }
    autoscaling::ScaleStatus { replicas: keep, selector }
    apps::DeploymentStrategy { r#type, rolling_update }
    apps::DeploymentCondition {
        r#type: keep, status: keep, last_update_time: keep, last_transition_time: keep, reason,
        message
    }
    apps::StatefulSetUpdateStrategy { r#type, rolling_update }
    apps::StatefulSetPersistentVolumeClaimRetentionPolicy { when_deleted, when_scaled }
    apps::StatefulSetOrdinals { start: keep }
    apps::StatefulSetCondition {
        r#type: keep, status: keep, last_transition_time: keep, reason, message
    }
    apps::DaemonSetUpdateStrategy { r#type, rolling_update }
    apps::DaemonSetCondition {
        r#type: keep, status: keep, last_transition_time: keep, reason, message
    }
    apps::ReplicaSetCondition {
        r#type: keep, status: keep, last_transition_time: keep, reason, message
    }
    batch::PodFailurePolicy { rules }
    batch::SuccessPolicy { rules }
    batch::JobCondition {
        r#type: keep, status: keep, last_probe_time: keep, last_transition_time: keep, reason,
        message
    }
    batch::UncountedTerminatedPods { succeeded, failed }
    apps::RollingUpdateDeployment { max_unavailable, max_surge }
    apps::RollingUpdateStatefulSetStrategy { partition: keep, max_unavailable }
    apps::RollingUpdateDaemonSet { max_unavailable, max_surge }
    batch::PodFailurePolicyRule { action: keep, on_exit_codes, on_pod_conditions }
    batch::SuccessPolicyRule { succeeded_indexes: keep, succeeded_count: keep }
    batch::PodFailurePolicyOnExitCodesRequirement { container_name: keep, operator: keep, values }
    batch::PodFailurePolicyOnPodConditionsPattern { r#type: keep, status: keep }
}
