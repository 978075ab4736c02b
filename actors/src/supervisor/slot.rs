//! The root supervisor's controllers slot: whether the controllers subtree should run and
//! whether it does, as one enum, so "wanted", "running" and "being stopped" cannot disagree.
//!
//! Transitions (the supervisor performs the side effects each one returns):
//! - `want` (we lead): `Idle` → start it (→ `Running`, or `Restarting` if the start failed);
//!   `Stopping` → remember to start it again once gone.
//! - `unwant` (leadership lost, shutdown): `Running` → stop it (→ `Stopping`);
//!   `Idle`/`Restarting` → `Idle`, answering the waiter at once.
//! - it exits: `Stopping` → answer the waiters, then `Idle` (or `Restarting` if wanted again);
//!   `Running` → it failed: `Restarting`, with backoff.
//! - the restart timer fires: only `Restarting` starts it.

use ractor::{ActorCell, ActorId, RpcReplyPort};

/// Where the controllers subtree is.
#[derive(Debug, Default)]
pub(super) enum ControllersSlot {
    /// Not wanted (standby, or the runtime is stopping) and not running.
    #[default]
    Idle,
    /// Wanted and running.
    Running(ActorCell),
    /// Wanted but not running: it failed or did not start; a restart is scheduled.
    Restarting,
    /// Stopped on request and not gone yet. `waiters` are answered once it is gone;
    /// `restart`: it became wanted again meanwhile, so start it afresh once gone.
    Stopping {
        cell: ActorCell,
        waiters: Vec<RpcReplyPort<()>>,
        restart: bool,
    },
}

/// What the subtree's exit means.
#[derive(Debug)]
pub(super) enum Exited {
    /// It was stopped on request: answer `waiters`; start it again if `restart`.
    Requested {
        waiters: Vec<RpcReplyPort<()>>,
        restart: bool,
    },
    /// It failed while wanted: count the failure, restart with backoff.
    Failed,
}

impl ControllersSlot {
    /// It is wanted now (we lead). Returns whether the caller must start it at once.
    pub(super) fn want(&mut self) -> bool {
        match self {
            Self::Idle => true,
            Self::Running(_) | Self::Restarting => false,
            Self::Stopping { restart, .. } => {
                *restart = true;
                false
            }
        }
    }

    /// It is no longer wanted. Returns the cell the caller must stop; `waiter` (if any) is
    /// answered once it is gone, or at once when nothing runs.
    pub(super) fn unwant(&mut self, waiter: Option<RpcReplyPort<()>>) -> Option<ActorCell> {
        match std::mem::take(self) {
            Self::Running(cell) => {
                *self = Self::Stopping {
                    cell: cell.clone(),
                    waiters: waiter.into_iter().collect(),
                    restart: false,
                };
                Some(cell)
            }
            Self::Stopping {
                cell, mut waiters, ..
            } => {
                waiters.extend(waiter);
                *self = Self::Stopping {
                    cell,
                    waiters,
                    restart: false,
                };
                None
            }
            Self::Idle | Self::Restarting => {
                if let Some(waiter) = waiter {
                    // Nobody may be waiting any more: fine.
                    let _ = waiter.send(());
                }
                None
            }
        }
    }

    /// The caller started it as `cell` (`None`: the start failed and a restart is scheduled).
    pub(super) fn started(&mut self, cell: Option<ActorCell>) {
        *self = match cell {
            Some(cell) => Self::Running(cell),
            None => Self::Restarting,
        };
    }

    /// A restart timer fired: whether the caller must start it now.
    pub(super) fn restart_due(&self) -> bool {
        matches!(self, Self::Restarting)
    }

    /// Actor `id` exited. `None` when it is not the subtree.
    pub(super) fn exited(&mut self, id: ActorId) -> Option<Exited> {
        let ours = match self {
            Self::Running(cell) | Self::Stopping { cell, .. } => cell.get_id() == id,
            Self::Idle | Self::Restarting => false,
        };
        if !ours {
            return None;
        }
        Some(match std::mem::take(self) {
            Self::Stopping { waiters, restart, .. } => Exited::Requested { waiters, restart },
            _ => {
                *self = Self::Restarting;
                Exited::Failed
            }
        })
    }
}
