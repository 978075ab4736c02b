//! The `run` subcommand: flags ([`args`], with the Go operator's zap flags in [`zap`]), their
//! checked form ([`settings`]), logging ([`logging`]) and the process that wires the operator, the HTTP servers and signals
//! together ([`run`]).

pub mod args;
pub mod logging;
pub mod run;
pub mod settings;
pub mod zap;
