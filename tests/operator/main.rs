//! Both reconcilers on a real runtime against the Kubernetes and FerrVault simulators, and the
//! property tests of the pure reconcile rules.

mod change_detection;
mod client_certs;
mod connection;
mod connection_resume;
mod content_hash;
mod deferred_restarts;
mod economy;
mod event_flood;
mod events;
mod go_era_values;
mod invalid_spec;
mod ownership;
mod props;
mod reasons;
mod refresh_control;
mod rollout;
mod rollout_floor;
mod rollout_stamps;
mod secret_deletes;
mod spec_bounds;
mod sync;
mod target_shape;
mod target_types;
mod templates;
mod token_health;
mod transforms;

/// The in-process harness and its fixtures ([`ferrvault_testkit`]), under the name the tests use.
mod operator_support {
    pub use ferrvault_sim::testkit::eventually;
    pub use ferrvault_testkit::{fixtures::*, harness::*};
}
