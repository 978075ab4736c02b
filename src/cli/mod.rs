//! The `run` subcommand: flags ([`args`], with the Go operator's zap flags in [`zap`]), their
//! checked form ([`settings`]), logging ([`logging`]) and the process that wires the operator, the HTTP servers and signals
//! together ([`run`]).

mod args;
mod logging;
mod run;
mod settings;
mod zap;

pub use self::{
    args::{RunArgs, go_flag_syntax},
    logging::init as init_logging,
    run::{OperatorProcess, RunError, kube_client, main as run, shutdown_signal},
    settings::{ProcessEnv, RunSettings},
};
