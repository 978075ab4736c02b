//! A small Kubernetes controller runtime on ractor, with no FerrVault knowledge.
//!
//! Controllers implement [`reconciler::Reconciler`]; [`runtime::Runtime::builder`] assembles
//! the actor tree; [`runtime::Runtime::run`] runs it until shutdown or escalation. HTTP
//! handlers read [`health::HealthHandle`], [`introspection::TreeHandle`] and
//! [`runtime::QueueHandle`], which never wait on an actor for a probe.
//!
//! # Modules
//! Actors (one per file):
//! - [`supervisor`]: root supervisor — health, leadership, controllers; restarts, escalation, shutdown.
//! - [`controllers`]: the subtree run while leading — queues and watchers; the `KeySink` router.
//! - [`work_queue`]: a controller's queue actor and the parent of its workers.
//! - [`worker`]: runs one reconcile at a time in a task it owns, under a deadline; `DoneGuard`.
//! - [`health`]: evaluates the health rules every probe period and publishes the verdict.
//! - [`leadership`]: competes for the Lease (client-go semantics), calls the leadership hooks.
//! - [`watcher`]: one per watch spec; owns the watch stream task, maps changes to keys.
//!
//! Pure logic (no actors, no I/O):
//! - [`queue_state`]: client-go work-queue semantics, two lanes, one timer map, exact figures.
//! - [`backoff`]: error / rate-limit backoff, refresh jitter, first-pass spread.
//! - [`health_rules`]: what live and ready mean.
//! - [`restart_policy`]: one-for-one backoff and the R-within-T intensity limit.
//! - [`lease_rules`]: client-go leader-election decisions (acquire, renew, wait, step down).
//! - [`watch_filter`]: which watch events deserve a reconcile.
//!
//! Shared vocabulary and plumbing:
//! - [`key`]: what is scheduled (`ObjectKey`, `Lane`).
//! - [`reconciler`]: the `Reconciler` trait and its `Outcome`.
//! - [`seams`]: contracts with the watcher and leadership modules (`KeySink`, `WatchSource`,
//!   `WatchReporter`, `LeadershipSource`, `LeadershipHooks`, `LeaseStatus`).
//! - [`mailbox`]: message counters that give every actor a mailbox depth.
//! - [`directory`]: logical names, restart history and watch states, per runtime.
//! - [`queue_view`]: what a queue publishes and how it is configured.
//! - [`introspection`]: the actor-tree dump (JSON and text).
//! - [`metrics`]: controller-runtime compatible Prometheus metrics.
//! - [`lease_source`]: plugs the Lease leadership actor into the supervisor.
//! - [`runtime`]: the builder, `run`, the handles and `RuntimeError`.
//! - [`lease_api`]: the Lease calls, each under a deadline.
//! - [`watch_spec`]: `WatchSpec` (full or metadata-only), the `WatchSource` the runtime runs.
//!
//! # Layout
//! ```text
//! supervisor ──spawns/stops──▶ health          (Nudge on escalation)
//!     │       ──spawns──────▶ leadership ──LeadershipHooks──▶ supervisor
//!     │                          (Start/StopControllers; publishes LeaseStatus on a watch)
//!     └──────spawns/stops───▶ controllers ──Escalate──▶ supervisor
//!                                ├── watcher ×W ──KeySink: Enqueue──▶ work queue
//!                                │      └──WatchReporter──▶ directory ◀── health, tree
//!                                └── work queue ×C ──Run──▶ worker ×N
//!                                       ▲                     │
//!                                       └──Done (DoneGuard)───┘
//! work queue ──QueueStats (watch)──▶ health, tree, metrics, QueueHandle
//! health ──Verdict (watch)──▶ HealthHandle (/healthz, /readyz)
//! ```
//!
//! # Semantics (and the tests that prove them)
//! - A key waits once however many events arrive, and never runs on two workers at once; a
//!   change during a run re-runs it once afterwards: `queue_should_never_hand_one_key_to_two_workers`,
//!   `queue_should_serialise_and_coalesce_a_thousand_events_for_ten_keys`,
//!   `work_queue_should_serialise_and_coalesce_a_thousand_events_for_ten_keys`,
//!   `runtime_should_serialise_and_coalesce_a_thousand_simulator_events_for_ten_keys`.
//! - New and changed objects (watch events) run before refreshes and before the keys a
//!   (re-)list found: `queue_should_run_a_changed_key_before_a_backlog_of_five_thousand_refreshes`,
//!   `queue_should_run_a_new_object_at_once_ahead_of_a_listed_first_pass`.
//! - Errors back off 1s→5m (±10%), throttles 5s→5m over `[d/2, d)` and never before
//!   `Retry-After`; both are forgotten on success:
//!   `queue_should_back_off_errors_exponentially_and_forget_them_on_success`,
//!   `queue_should_keep_rate_limits_on_their_own_path_and_honour_retry_after`.
//! - A start spreads its first pass (listed keys only): `queue_should_spread_the_first_pass_after_a_start`,
//!   `a_restart_should_spread_its_first_pass_over_the_configured_window`.
//! - A reconcile is cancelled at its deadline; one that blocks past deadline + grace gets its
//!   worker replaced while other keys keep completing, and its key is retried once the
//!   abandoned run really ended: `worker_should_cancel_the_token_and_report_a_timeout_at_the_deadline`,
//!   `a_reconcile_ignoring_cancellation_should_be_recovered_while_health_stays_live`;
//!   when it cannot be replaced, liveness fails and says why:
//!   `health_should_fail_with_a_reason_when_a_stuck_worker_cannot_be_replaced`.
//! - Every run reports `Done` exactly once, even on panic, kill or loss: `worker::tests`.
//! - Liveness: `standby_should_stay_live_while_another_replica_leads`, `idle_leader_should_stay_live`,
//!   `leader_with_only_slow_refresh_objects_should_stay_live`,
//!   `leader_with_due_work_and_no_progress_should_fail_within_threshold_plus_a_probe_period`,
//!   `a_cpu_saturated_but_progressing_pool_should_stay_live`, and `health_rules::tests`.
//! - Panics are survived and counted: `panics_in_a_reconcile_and_in_a_watcher_should_be_survived_and_counted`;
//!   more than R restarts within T escalate and `run` returns `Escalated` (exit code 3):
//!   `a_restart_storm_should_escalate_and_end_run_with_an_error`.
//! - Leadership: losing it stops the subtree before the hook returns
//!   (`losing_leadership_should_stop_the_controllers_before_the_hook_returns`); three runtimes
//!   keep one leader, hand over within a retry period on shutdown and after lease expiry on a
//!   crash, and never interleave writes
//!   (`three_runtimes_should_keep_one_leader_and_hand_over_on_shutdown_and_crash`).
//! - Shutdown lets in-flight reconciles finish: `shutdown_should_let_in_flight_reconciles_finish`.
#![deny(missing_docs)]
#![warn(unreachable_pub)]

mod backoff;
mod controllers;
mod directory;
mod fairness_metrics;
mod fence;
mod fence_layer;
mod health;
mod health_rules;
mod introspection;
mod key;
mod leadership;
mod lease_api;
mod lease_rules;
mod lease_source;
mod mailbox;
// Its items stay `pub` for the helper that owns the file (controller-runtime label
// compatibility); nothing of it is part of the facade.
#[allow(unreachable_pub)]
mod metrics;
mod queue_state;
mod queue_view;
mod reconciler;
mod restart_policy;
mod runtime;
mod seams;
mod spawn;
mod supervisor;
#[cfg(test)]
mod test_support;
mod watch_filter;
mod watch_spec;
mod watch_state;
mod watcher;
mod work_queue;
mod worker;

pub use crate::{
    backoff::BackoffConfig,
    fence::{Allowance, Fence},
    fence_layer::{FenceError, FenceLayer},
    health::HealthHandle,
    health_rules::ProbeReport,
    introspection::TreeHandle,
    key::{Cause, ObjectKey},
    leadership::{LeaderElectionConfig, LeadershipMsg, identity},
    lease_rules::{Timings, TimingsError},
    lease_source::LeaseLeadership,
    queue_state::{KeyInfo, NamespaceShare, QueueCounters},
    queue_view::{QueueStats, WorkerView},
    reconciler::{Outcome, ReconcileContext, Reconciler},
    runtime::{LeaderElection, QueueHandle, Runtime, RuntimeBuilder, RuntimeError},
    seams::{KeySink, LeadershipHooks, LeadershipSource, LeaseStatus, Role, WatchSource},
    spawn::{Spawned, Spawner},
    watch_spec::WatchSpec,
    watch_state::{WatchReporter, WatchState},
};
