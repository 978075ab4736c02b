//! The actor tree dump: walked from the root `ActorCell` (`get_children`, ids, status), never
//! by messaging an actor, so it works while actors are stuck. Joined with mailbox counters,
//! the [`Directory`] (logical names, restarts, watch states) and published queue and lease
//! figures. Serialises to JSON and renders as an indented text tree.

use std::{
    fmt::Write as _,
    sync::{Arc, OnceLock},
};

use ractor::ActorCell;
use serde::Serialize;
use tokio::{sync::watch, time::Instant};

use crate::{
    directory::{ActorKind, Directory},
    queue_view::QueueStats,
    seams::LeaseStatus,
    watch_state::WatchState,
};

/// One actor in the dump.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct ActorNode {
    /// Logical name (`health`, `ferrvaultsecret/worker-2`), or the ractor name / `?`.
    pub name: String,
    /// What it is, when known.
    pub kind: Option<ActorKind>,
    /// ractor id (changes on every restart).
    pub id: String,
    /// ractor status (`Running`, `Stopping`, …).
    pub status: String,
    /// The supervisor's id (`None` for the root).
    pub parent: Option<String>,
    /// Messages waiting or being handled (this incarnation).
    pub mailbox_depth: Option<u64>,
    /// Messages handled (this incarnation).
    pub handled: Option<u64>,
    /// Restarts of this logical actor since the runtime started.
    pub restarts: u64,
    /// Why it last restarted.
    pub last_restart_reason: Option<String>,
    /// Kind-specific figures.
    pub detail: Option<Detail>,
    /// Linked children, sorted by name.
    pub children: Vec<ActorNode>,
}

/// Kind-specific figures of a node.
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum Detail {
    /// A worker's current run.
    Worker {
        /// The key it runs.
        key: Option<String>,
        /// For how long.
        running_for_secs: Option<f64>,
    },
    /// A work queue's figures.
    Queue {
        /// Keys ready.
        depth: usize,
        /// Keys waiting for a due time.
        delayed: usize,
        /// `Refresh` keys held until every watch has listed.
        held_for_lists: usize,
        /// Keys processing.
        processing: usize,
        /// Age of the oldest ready key.
        oldest_age_secs: Option<f64>,
        /// Seconds until the next delayed key is due (negative: overdue).
        next_due_in_secs: Option<f64>,
        /// Abandoned runs still going.
        abandoned: usize,
    },
    /// The lease as leadership sees it.
    Leadership(LeaseStatus),
    /// A watch stream's state.
    Watch(WatchState),
}

/// Reads the tree; cheap to clone, usable from any thread.
#[derive(Clone)]
pub struct TreeHandle {
    root: Arc<OnceLock<ActorCell>>,
    directory: Arc<Directory>,
    queues: Vec<(&'static str, watch::Receiver<QueueStats>)>,
    lease: watch::Receiver<LeaseStatus>,
}

impl TreeHandle {
    /// A handle whose root is set once the supervisor has spawned.
    pub(crate) fn new(
        root: Arc<OnceLock<ActorCell>>,
        directory: Arc<Directory>,
        queues: Vec<(&'static str, watch::Receiver<QueueStats>)>,
        lease: watch::Receiver<LeaseStatus>,
    ) -> Self {
        Self {
            root,
            directory,
            queues,
            lease,
        }
    }

    /// The current tree, or `None` before the runtime started.
    fn snapshot(&self) -> Option<ActorNode> {
        let now = Instant::now();
        self.root.get().map(|root| self.node(root, None, now))
    }

    /// The root cell (tests crash a runtime through it).
    #[cfg(test)]
    pub(crate) fn root(&self) -> Option<ActorCell> {
        self.root.get().cloned()
    }

    /// The current tree as JSON.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self.snapshot()).unwrap_or(serde_json::Value::Null)
    }

    /// The current tree as indented text, one actor per line.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        if let Some(root) = self.snapshot() {
            render(&root, 0, &mut out);
        }
        out
    }

    /// Visit every live actor's name and mailbox counters (for metrics).
    pub(crate) fn for_each_mailbox(&self, mut f: impl FnMut(&str, u64, u64)) {
        fn walk(cell: &ActorCell, dir: &Directory, f: &mut dyn FnMut(&str, u64, u64)) {
            if let (Some((name, _)), Some(stats)) = (dir.lookup(cell.get_id()), dir.mailbox(cell.get_id())) {
                f(&name, stats.depth(), stats.handled());
            }
            for child in cell.get_children() {
                walk(&child, dir, f);
            }
        }
        if let Some(root) = self.root.get() {
            walk(root, &self.directory, &mut f);
        }
    }

    fn node(&self, cell: &ActorCell, parent: Option<String>, now: Instant) -> ActorNode {
        let id = cell.get_id();
        let (name, kind) = match self.directory.lookup(id) {
            Some((name, kind)) => (name, Some(kind)),
            None => (cell.get_name().unwrap_or_else(|| "?".into()), None),
        };
        let stats = self.directory.mailbox(id);
        let restart = self.directory.restarts(&name);
        let mut children: Vec<ActorNode> = cell
            .get_children()
            .iter()
            .map(|c| self.node(c, Some(id.to_string()), now))
            .collect();
        children.sort_by(|a, b| a.name.cmp(&b.name));
        ActorNode {
            detail: kind.and_then(|k| self.detail(k, &name, now)),
            name,
            kind,
            id: id.to_string(),
            status: format!("{:?}", cell.get_status()),
            parent,
            mailbox_depth: stats.as_ref().map(|s| s.depth()),
            handled: stats.as_ref().map(|s| s.handled()),
            restarts: restart.as_ref().map_or(0, |r| r.count),
            last_restart_reason: restart.map(|r| r.last_reason),
            children,
        }
    }

    fn detail(&self, kind: ActorKind, name: &str, now: Instant) -> Option<Detail> {
        let secs = |t: Instant| now.saturating_duration_since(t).as_secs_f64();
        match kind {
            ActorKind::Worker => self.queues.iter().find_map(|(_, rx)| {
                let q = rx.borrow();
                q.workers.iter().find(|w| w.name == name).map(|w| Detail::Worker {
                    key: w.key.clone(),
                    running_for_secs: w.since.map(secs),
                })
            }),
            ActorKind::WorkQueue => self
                .queues
                .iter()
                .find(|(c, _)| name == queue_name(c))
                .map(|(_, rx)| {
                    let q = rx.borrow();
                    Detail::Queue {
                        depth: q.depth,
                        delayed: q.delayed,
                        held_for_lists: q.held_for_lists,
                        processing: q.processing,
                        oldest_age_secs: q.oldest_ready_since.map(secs),
                        next_due_in_secs: q.next_due.map(|d| {
                            if d >= now {
                                (d - now).as_secs_f64()
                            } else {
                                -(now - d).as_secs_f64()
                            }
                        }),
                        abandoned: q.abandoned,
                    }
                }),
            ActorKind::Leadership => Some(Detail::Leadership(self.lease.borrow().clone())),
            ActorKind::Watcher => self.directory.watches().remove(name).map(Detail::Watch),
            ActorKind::Supervisor | ActorKind::Health | ActorKind::Controllers => None,
        }
    }
}

/// The logical name of a controller's work queue.
pub(crate) fn queue_name(controller: &str) -> String {
    format!("{controller}/queue")
}

fn render(node: &ActorNode, depth: usize, out: &mut String) {
    // Writing into a String cannot fail.
    let _ = write!(
        out,
        "{:indent$}- {} [{}] id={} status={}",
        "",
        node.name,
        node.kind.map_or("?", ActorKind::as_str),
        node.id,
        node.status,
        indent = depth * 2
    );
    if let (Some(d), Some(h)) = (node.mailbox_depth, node.handled) {
        let _ = write!(out, " mailbox={d} handled={h}");
    }
    if node.restarts > 0 {
        let _ = write!(
            out,
            " restarts={} last=\"{}\"",
            node.restarts,
            node.last_restart_reason.as_deref().unwrap_or("")
        );
    }
    match &node.detail {
        Some(Detail::Worker {
            key: Some(key),
            running_for_secs,
        }) => {
            let _ = write!(
                out,
                " key={key} running_for={:.1}s",
                running_for_secs.unwrap_or(0.0)
            );
        }
        Some(Detail::Worker { key: None, .. }) => out.push_str(" idle"),
        Some(Detail::Queue {
            depth,
            delayed,
            held_for_lists,
            processing,
            oldest_age_secs,
            next_due_in_secs,
            abandoned,
        }) => {
            let _ = write!(
                out,
                " depth={depth} delayed={delayed} processing={processing} abandoned={abandoned}"
            );
            if *held_for_lists > 0 {
                let _ = write!(out, " held_until_listed={held_for_lists}");
            }
            if let Some(age) = oldest_age_secs {
                let _ = write!(out, " oldest={age:.1}s");
            }
            if let Some(due) = next_due_in_secs {
                let _ = write!(out, " next_due_in={due:.1}s");
            }
        }
        Some(Detail::Leadership(l)) => {
            let _ = write!(
                out,
                " role={:?} holder={}",
                l.role,
                l.holder.as_deref().unwrap_or("-")
            );
            if let Some(shards) = &l.shards {
                let _ = write!(out, " shards={shards:?}");
            }
        }
        Some(Detail::Watch(w)) => {
            let _ = write!(
                out,
                " synced={} connected={} events={} errors={}",
                w.synced, w.connected, w.events, w.errors
            );
        }
        None => {}
    }
    out.push('\n');
    for child in &node.children {
        render(child, depth + 1, out);
    }
}
