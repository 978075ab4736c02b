//! ferrvault-operator: keeps Kubernetes `Secret`s in sync with the FerrVault secrets service.
//!
//! The public API is [`api`] and [`ferrvault`] (each a facade over private files), the
//! re-exports below and the small facades [`rules`] and [`secure_metrics`]; every other module is
//! private. It is what the binary (`src/main.rs`), the tests, the devtools and the fuzz targets
//! use. `docs/architecture.md` explains the design; this page maps the files.
#![deny(missing_docs)]
#![warn(unreachable_pub)]

// NOTE: for now; `src/admin/` (rewritten as warp filters in parallel, issue 35 item 2) still
// declares its items `pub` for the crate, and two of them are used by its tests only
// (`Format::ALL`, the `ALLOW_TTL`/`DENY_TTL` re-exports): narrowing them is its owner's step.
#[allow(dead_code, unused_imports, unreachable_pub)]
mod admin;
pub mod api;
mod cli;
pub mod ferrvault;
mod reconcile;
mod telemetry;

pub use crate::{
    admin::limits::HttpLimits,
    cli::{
        OperatorProcess, ProcessEnv, RunArgs, RunError, RunSettings, go_flag_syntax, init_logging,
        kube_client, run, shutdown_signal,
    },
    reconcile::{
        COMBINED_PREFIX, CONTENT_HASH_KEY_SECRET, ContentHashKeySource, Context, EventSink, FIELD_MANAGER,
        Operator, OperatorSettings, REPORTING_CONTROLLER, SECRET_CONTROLLER, SecretReconciler, SyncMetrics,
        WriteBudget,
    },
};

/// The pure rules that tests, fuzz targets and benchmark drivers call directly: values in,
/// values out, no I/O (the rest of them stay inside the reconcilers).
pub mod rules {
    pub use crate::reconcile::rules::{
        bounds::spec_bounds::{SpecBounds, connection_spec_problem, secret_spec_problem},
        content::{
            MAX_SECRET_BYTES, SecretData,
            content_hash::{ContentHashKey, content_hash, legacy_content_hash, separated_content_hash},
            json_expand, payload_bytes,
            transforms::{TransformError, TransformFailure, apply_transforms},
        },
        schedule::{
            duration::{DurationProblem, format_go_duration, parse_go_duration},
            freshness::WAVE_SPREAD,
            requeue::resolve_refresh_interval,
        },
    };
}

/// How far the secure metrics endpoint lets a client go with its reviews (what the process
/// tests drive to the edge); each server's own limits are [`HttpLimits`].
pub mod secure_metrics {
    pub use crate::admin::secure::guard::{CACHE_ENTRIES, REVIEW_BURST, REVIEWS_PER_SECOND, TOKEN_TTL};
}
