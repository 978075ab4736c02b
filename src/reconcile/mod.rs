//! The two reconcilers (FerrVaultSecret, FerrVaultConnection) and everything around them,
//! grouped by role. Not "pure": the [`rules`] are, everything else does I/O, each file one job.
//!
//! # Modules
//! - `operator.rs`: [`Operator`], the seam the process uses (`Operator::new`, `install`);
//!   `settings.rs`: what the flags decide ([`OperatorSettings`]) and the controllers' names;
//!   `context.rs`: what both reconcilers share ([`Context`]); `content_hash_key.rs`: the
//!   operator-held key of the content hash.
//! - `secret/`: the FerrVaultSecret reconciler ([`SecretReconciler`]) and its steps, one file
//!   each (target access, reveal, payload, plan, target, rollout, status).
//! - `connection/`: the FerrVaultConnection reconciler, and connection access (`access.rs`: a
//!   connection's endpoint and credential, which the FerrVaultSecret reveal uses too).
//! - `prologue.rs`: the first steps both reconcilers share (read, finalizer, invalid spec).
//! - `changes/`: change detection (`changeDetection: Versions`): one `list` poller per
//!   connection, the latest versions, the FerrVaultSecrets it re-queues.
//! - `watch/`: the watches, one per kind and scope, and their routes: which changes matter
//!   (`filters.rs`) and which keys they enqueue (`keys.rs`).
//! - `read/`: the read side — the watches' stores, what they keep (`projection.rs`), reads from
//!   a store or a GET where a store cannot be trusted (the rules are in `read/mod.rs`), our own
//!   writes not stored yet, credential values, the inputs a status records.
//! - `write/`: the finalizer, the field manager, the `InvalidSpec` report, Kubernetes failures
//!   typed, and the per-namespace write budget.
//! - `report/`: Events (deduplicated, rate-limited) and metrics.
//! - [`rules`]: pure rules, values in, values out, grouped by what they decide (`content/`,
//!   `status/`, `schedule/`, `access/`, `bounds/`, `rollout.rs`).
//!
//! # Layout
//! ```text
//! Operator::install ──▶ watch::build ──routes (filters, keys)──▶ the runtime's queues
//!        │                    └── fills ──▶ read::Stores ◀── read (CrStore, find, SecretValues)
//!        └──▶ SecretReconciler, ConnectionReconciler ── prologue ──▶ read, write
//!                 │ secret steps ──▶ connection::access ──▶ ferrvault (the client)
//!                 └──▶ report (Events, metrics), write (status, target, budget)
//! rules ◀── everything above (no arrow leaves rules but to api)
//! ```

mod changes;
mod connection;
mod content_hash_key;
mod context;
#[cfg(test)]
mod fixtures;
mod operator;
mod prologue;
mod read;
mod report;
pub(crate) mod rules;
mod secret;
mod settings;
mod watch;
mod write;

pub use self::{
    changes::ChangeFeed,
    content_hash_key::{CONTENT_HASH_KEY_SECRET, ContentHashKeySource},
    context::Context,
    operator::Operator,
    read::{connection_secret_names, secret_inputs_by},
    report::{COMBINED_PREFIX, EventSink, REPORTING_CONTROLLER, SyncMetrics},
    secret::SecretReconciler,
    settings::{DEFAULT_MIN_REFRESH_INTERVAL, OperatorSettings, SECRET_CONTROLLER},
    watch::HintMarks,
    write::{FIELD_MANAGER, WriteBudget},
};
pub(crate) use self::{
    content_hash_key::KeyError, secret::CLUSTER_SECRET_CONTROLLER, watch::KeepsNamespace, write::write_budget,
};
