//! The FerrVaultConnection side: its reconciler, and connection access — how anything reaches
//! FerrVault through a connection (its endpoint with its CA bundle, its credential), which the
//! FerrVaultSecret reconciler's reveal uses too.
//!
//! # Layout
//! - `reconciler.rs`: [`ConnectionReconciler`], one pass per connection (deletion blocked by
//!   dependants, finalizer, probe when due, status).
//! - `cluster_status.rs`: the ClusterFerrVaultConnection reconciler (its status: who it allows and
//!   refuses; no probe).
//! - [`access`]: the endpoint and credential of a connection, and the spec refusals that need
//!   an edit (not to be confused with *target* access, whether a FerrVaultSecret may write its
//!   target Secret: `secret/target_access.rs`).
//! - `change_detection.rs`: a `changeDetection: Versions` connection's poller started, kept or
//!   stopped, and its `ChangeDetection` condition.
//! - `token_health.rs`: after a successful probe, the token's expiry and role from
//!   `GET /operator/me` (status, `TokenHealthy`, gauge, Warning Event).

pub(crate) mod access;
mod change_detection;
mod cluster_status;
mod reconciler;
mod token_health;

pub(crate) use self::{
    cluster_status::{
        CLUSTER_CONNECTION_CONTROLLER, ClusterConnectionReconciler, RefusedGauge, cluster_connection_key,
        register_refused_gauge,
    },
    reconciler::ConnectionReconciler,
};
