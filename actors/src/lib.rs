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
//!
//! Pure logic (no actors, no I/O):
//! - [`queue_state`]: client-go work-queue semantics, two lanes, one timer map, exact figures.
//! - [`backoff`]: error / rate-limit backoff, refresh jitter, first-pass spread.
//! - [`health_rules`]: what live and ready mean.
//! - [`restart_policy`]: one-for-one backoff and the R-within-T intensity limit.
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
#![deny(missing_docs)]

pub mod backoff;
pub mod controllers;
pub mod directory;
pub mod health;
pub mod health_rules;
pub mod introspection;
pub mod key;
pub mod leadership;
pub mod lease_rules;
pub mod lease_source;
pub mod mailbox;
pub mod metrics;
pub mod queue_state;
pub mod queue_view;
pub mod reconciler;
pub mod restart_policy;
pub mod runtime;
pub mod seams;
pub mod supervisor;
#[cfg(test)]
mod test_support;
pub mod watch_filter;
pub mod watch_spec;
pub mod watcher;
pub mod work_queue;
pub mod worker;
