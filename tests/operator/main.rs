//! Both reconcilers on a real runtime against the Kubernetes and FerrVault simulators, and the
//! property tests of the pure reconcile rules.

mod connection;
mod events;
mod go_era_values;
mod invalid_spec;
#[path = "../support/operator.rs"]
mod operator_support;
mod props;
mod reasons;
mod rollout;
mod sync;
mod transforms;
