//! `coordination.k8s.io/v1` leases and `events.k8s.io/v1` events.
//!
//! Field lists generated from k8s-pb's messages; JSON names checked against k8s-openapi.

use super::convert::messages;
use k8s_pb::api::coordination::v1 as coordination;
use k8s_pb::api::events::v1 as events;

messages! {
    coordination::Lease { metadata, spec }
    coordination::LeaseList { metadata, items }
    events::Event {
        metadata, event_time: keep, series, reporting_controller, reporting_instance, action,
        reason, regarding, related, note, r#type, deprecated_source,
        deprecated_first_timestamp: keep, deprecated_last_timestamp: keep, deprecated_count
    }
    events::EventList { metadata, items }
    coordination::LeaseSpec {
        holder_identity: keep, lease_duration_seconds: keep, acquire_time: keep, renew_time: keep,
        lease_transitions: keep, strategy: keep, preferred_holder: keep
    }
    events::EventSeries { count: keep, last_observed_time: keep }
}
