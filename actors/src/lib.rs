//! A small Kubernetes controller runtime on ractor, with no FerrVault knowledge.
//!
//! Controllers implement [`Reconciler`]; [`Runtime::builder`] assembles the actor tree;
//! [`Runtime::run`] runs it until shutdown or escalation. HTTP handlers read
//! [`HealthHandle`], [`TreeHandle`] and [`QueueHandle`], which never wait on an actor for a
//! probe. A [`Fence`], shared with a [`FenceLayer`] on the Kubernetes client the reconcilers
//! write through, stops every write once this replica cannot prove it holds the Lease.
//!
//! The public API is the flat set of re-exports below; every module is private.
//! `docs/architecture.md` explains the design and why; this page maps the files.
//!
//! # Modules
//! Actors (one per file, each a `RuntimeActor` run only through `spawn::Spawner`):
//! - `supervisor`: root supervisor — health, leadership, controllers; restarts, escalation,
//!   shutdown (`supervisor/slot.rs`: the controllers slot; `supervisor/children.rs`: starting
//!   children, the leadership hooks).
//! - `controllers`: the subtree run while leading — queues and watchers; the `KeySink` router;
//!   `listed_gate`: whether every watch of the term has listed (releases the `Refresh` lane).
//! - `work_queue`: a controller's queue actor (`work_queue/pool.rs`: its workers).
//! - `worker`: runs one reconcile at a time in a task it owns, under a deadline and the fence;
//!   `DoneGuard`.
//! - `health`: evaluates the health rules every probe period and publishes the verdict.
//! - `leadership`: competes for the Lease (client-go semantics), moves the fence, calls the
//!   leadership hooks.
//! - `watcher`: one per watch spec (`watcher/stream.rs`: the watch stream task).
//! - `shard_leadership`: holds this replica's member Lease and its share of the shard Leases,
//!   one fence per shard (`shard_source`: its adapter, `ShardLeases`, also a
//!   `LeadershipSource` restarting the controllers on each change of the held set).
//! - `key_feed`: a feed of keys from outside the watches (a poller, a webhook), run like a
//!   watch while leading.
//!
//! Pure logic (no actors, no I/O):
//! - `queue_state`: client-go work-queue semantics, two lanes, one timer map, exact figures;
//!   `queue_state/fair_share.rs`: fairness across namespaces.
//! - `backoff`: error / rate-limit backoff, refresh jitter.
//! - `health_rules`: what live and ready mean.
//! - `restart_policy`: one-for-one backoff and the R-within-T intensity limit.
//! - `lease_rules`: client-go leader-election decisions (acquire, renew, wait, step down) and
//!   the timing rules, the fence's included.
//! - `watch_filter`: which watch events deserve a reconcile.
//! - `shard_rules`: which shard an object belongs to (FNV-1a of its namespace), each shard's
//!   Lease name, and which shards a replica releases or acquires to stay balanced.
//!
//! Shared vocabulary and plumbing:
//! - `key`: what is scheduled (`ObjectKey`, `Cause`, `Lane`).
//! - `reconciler`: the `Reconciler` trait and its `Outcome`.
//! - `seams`: the contracts that keep files from needing each other (`KeySink`,
//!   `WatchSource`, `LeadershipSource`, `LeadershipHooks`, `LeaseStatus`, `DoneSink`,
//!   `Escalation`); `watch_state`: `WatchState` and `WatchReporter`.
//! - `spawn`: the one way to run an actor (linked, registered, every message counted);
//!   `mailbox`: the counted references that give every actor a mailbox depth.
//! - `directory`: live actors (names, kinds, mailboxes), restart history, watch states — per
//!   runtime.
//! - `fence`: "writes allowed until T"; `fence_layer`: the tower layer enforcing it.
//! - `queue_view`: what a queue publishes and how it is configured.
//! - `introspection`: the actor-tree dump (JSON and text).
//! - `metrics`: controller-runtime compatible Prometheus metrics; `fairness_metrics`: the
//!   namespace-share gauges.
//! - `lease_board`: the shard and member Leases as one replica observed them (live members,
//!   each shard's holder), for `shard_rules::plan`.
//! - `lease_source`: plugs the Lease leadership actor into the supervisor; `lease_api`: the
//!   Lease calls, each under a deadline.
//! - `runtime`: the builder, `run`, the handles and `RuntimeError`.
//! - `watch_spec`: `WatchSpec` (full or metadata-only), turned into a watcher by `watcher`;
//!   `watch_route`: `Route`, one way a watch's changes become keys (a spec has one or more);
//!   `watch_store`: the store each watch keeps, which the reconcilers read.
//!
//! # Layout
//! ```text
//! supervisor ──spawns/stops──▶ health          (Nudge on escalation)
//!     │       ──spawns──────▶ leadership ──LeadershipHooks──▶ supervisor
//!     │                          (Start/StopControllers; publishes LeaseStatus; moves the Fence)
//!     └──────spawns/stops───▶ controllers ──Escalation──▶ supervisor
//!                                ├── watcher ×W ──KeySink: Enqueue──▶ work queue
//!                                │      └──WatchReporter──▶ directory ◀── health, tree
//!                                └── work queue ×C ──Run──▶ worker ×N ──(cancelled when the Fence lapses)
//!                                       ▲                     │
//!                                       └──DoneSink: Done ────┘ (DoneGuard)
//! work queue ──QueueStats (watch)──▶ health, tree, metrics, QueueHandle
//! health ──Verdict (watch)──▶ HealthHandle (/healthz, /readyz)
//! Fence ◀── FenceLayer on the reconcilers' kube::Client (every POST/PUT/PATCH/DELETE)
//! ```
//!
//! # Semantics (and the tests that prove them)
//! - A key waits once however many events arrive, and never runs on two workers at once; a
//!   change during a run re-runs it once afterwards: `queue_should_never_hand_one_key_to_two_workers`,
//!   `queue_should_serialise_and_coalesce_a_thousand_events_for_ten_keys`,
//!   `work_queue_should_serialise_and_coalesce_a_thousand_events_for_ten_keys`,
//!   `runtime_should_serialise_and_coalesce_a_thousand_simulator_events_for_ten_keys`.
//! - New and changed objects (watch events) run before refreshes and before the keys a
//!   (re-)list found: `queue_should_run_a_changed_key_before_a_backlog_of_five_thousand_refreshes`;
//!   a start's backlog waits outside the pool until every watch has listed, so it cannot hold
//!   the workers a new object of its namespace needs: `queue_state::hold_tests`,
//!   `work_queue_should_hold_listed_keys_until_every_watch_has_listed`.
//! - One namespace holds at most its share of the pool (default `workers − 1`), and a free
//!   worker goes to the namespace holding the fewest, round robin; so while one namespace's
//!   reconciles hang, another's keys wait only for that namespace's own work:
//!   `queue_should_sync_another_namespace_within_its_own_work_while_one_namespace_hangs`,
//!   `fair_share::tests`, and against the real binary
//!   `another_namespace_should_sync_within_ten_seconds_while_one_namespaces_ferrvault_token_hangs`.
//! - Errors back off 1s→5m (±10%), throttles 5s→5m over `[d/2, d)` and never before
//!   `Retry-After`; both are forgotten on success:
//!   `queue_should_back_off_errors_exponentially_and_forget_them_on_success`,
//!   `queue_should_keep_rate_limits_on_their_own_path_and_honour_retry_after`.
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
//! - Fencing: writes stop at the last successful Lease write + renew deadline, before anyone
//!   may acquire (lease duration after it): the fence follows renewals
//!   (`the_fence_should_follow_the_renewals_and_lapse_at_the_renew_deadline_before_the_lease_expires`),
//!   a write sent after the lapse is refused and in-flight reconciles are cancelled
//!   (`a_leader_that_cannot_renew_should_stop_writing_before_another_replica_acquires`,
//!   `worker_should_cancel_the_token_and_report_fenced_when_the_fence_lapses`), and against
//!   the real binary
//!   `a_leader_losing_its_lease_mid_reconcile_should_write_nothing_past_its_fence_and_a_standby_should_sync`.
//! - Shutdown lets in-flight reconciles finish (their writes still bounded by the fence):
//!   `shutdown_should_let_in_flight_reconciles_finish`.
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
mod key_feed;
mod leadership;
mod lease_api;
mod lease_board;
mod lease_rules;
mod lease_source;
mod listed_gate;
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
mod shard_leadership;
mod shard_rules;
mod shard_source;
mod spawn;
mod supervisor;
#[cfg(test)]
mod test_support;
mod watch_filter;
mod watch_route;
mod watch_spec;
mod watch_state;
mod watch_store;
mod watcher;
mod work_queue;
mod worker;

pub use crate::{
    backoff::BackoffConfig,
    fence::{Allowance, Fence},
    fence_layer::{FenceError, FenceLayer},
    health::HealthHandle,
    health_rules::{Check, ProbeReport},
    introspection::TreeHandle,
    key::{Cause, ObjectKey},
    key_feed::{FeedHooks, KeyFeed},
    leadership::{LeaderElectionConfig, LeadershipMsg, identity},
    lease_board::{LeaseBoard, member_lease_name},
    lease_rules::{Timings, TimingsError},
    lease_source::LeaseLeadership,
    queue_state::{KeyInfo, NamespaceShare, QueueCounters},
    queue_view::{QueueStats, WorkerView},
    reconciler::{Outcome, ReconcileContext, Reconciler},
    runtime::{LeaderElection, QueueHandle, Runtime, RuntimeBuilder, RuntimeError},
    seams::{KeySink, LeadershipHooks, LeadershipSource, LeaseStatus, Role, WatchSource, WatchStart},
    shard_rules::{
        FNV1A64_OFFSET_BASIS, FNV1A64_PRIME, Plan, ShardId, Shards, ShardsError, fnv1a64, plan, target,
    },
    shard_source::ShardLeases,
    spawn::{Spawned, Spawner},
    watch_route::Route,
    watch_spec::WatchSpec,
    watch_state::{WatchReporter, WatchState},
    watch_store::{Applied, WatchGone, WatchStore, WatchStoreWriter, watch_store},
};
