//! The `run` subcommand: the process that wires the operator, the HTTP servers and signals
//! together, from its flags.
//!
//! # Modules
//! - `args.rs`: [`RunArgs`], `run`'s flags (Go-era `-flag` spellings too: [`go_flag_syntax`]);
//!   `zap.rs`: controller-runtime's zap flags.
//! - `settings.rs`: [`RunSettings`], the flags checked against every cross-flag rule, with the
//!   process environment ([`ProcessEnv`]).
//! - `logging.rs`: logging from the flags (zap-style JSON or text, every field bounded).
//! - `run.rs`: [`OperatorProcess`] and [`run`](fn@run), the startup order and the exit codes
//!   ([`RunError`]).

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
