//! Condition messages, worded as the Go operator's (reference §1.2, §3.2, §4) so users and
//! runbooks recognise them. Inputs are names and counts only: never a secret value.
//!
//! Every message is cut to 1 KiB where it is written ([`upsert_condition`]); one quoting what a
//! tenant wrote or a server answered (a controller's kind and name, a target type, a URL, a
//! parser's complaint) is cut while it is formatted, so it is never built whole either; a
//! message listing names lists only those that fit in a budget and counts the rest
//! (`budget.rs`), so its count survives the cut.
//!
//! # Layout
//! - `target.rs`: a FerrVaultSecret's sync (synced, missing keys, refused or too large target,
//!   cloud scope, rollout).
//! - `spec.rs`: a spec the operator cannot act on (connection not found or invalid, refresh
//!   interval, `InvalidSpec`, an interval below the floor).
//! - `connection.rs`: reaching FerrVault through a connection, and a blocked deletion.
//! - `budget.rs`: how a message stays within the bound while it is built.
//!
//! [`upsert_condition`]: super::conditions::upsert_condition

mod budget;
mod connection;
mod spec;
mod target;
#[cfg(test)]
mod tests;

pub(crate) use self::{
    connection::{
        CLUSTER_IDENTITY_NEEDS_CLOUD_MODE, CLUSTER_IDENTITY_NOT_CONFIGURED, CLUSTER_IDENTITY_WITH_CA_BUNDLE,
        INSECURE_URL, UNTRUSTED_URL, cluster_identity_mismatch, credential_not_opted_in, deletion_blocked,
        reachable, redact_userinfo, redirected,
    },
    spec::{
        cluster_connection_not_found, cluster_connection_spec_invalid, cluster_token_not_watched,
        connection_not_allowed, connection_not_found, connection_spec_invalid, interval_clamped,
        invalid_refresh_interval, invalid_spec,
    },
    target::{
        MISSING_CLOUD_SCOPE, ROLLOUT_UP_TO_DATE, missing_keys, missing_keys_list,
        missing_keys_target_unchanged, rollout_deferred, secret_too_large, synced, target_immutable,
        target_refused,
    },
};
