//! Both reconcilers on a real runtime against the Kubernetes and FerrVault simulators, and the
//! property tests of the pure reconcile rules.

mod connection;
mod content_hash;
mod economy;
mod event_flood;
mod events;
mod fixtures;
mod go_era_values;
mod invalid_spec;
#[path = "../support/operator.rs"]
mod operator_support;
mod ownership;
mod props;
mod reasons;
mod rollout;
mod rollout_floor;
mod rollout_stamps;
mod secret_deletes;
mod spec_bounds;
mod sync;
mod target_types;
mod token_health;
mod transforms;
