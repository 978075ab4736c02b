//! The `run` subcommand: flags ([`args`], with the Go operator's zap flags in [`zap`]), their
//! checked form ([`settings`]), logging ([`logging`]) and the process that wires the operator, the HTTP servers and signals
//! together ([`run`]).

pub(crate) mod args;
pub(crate) mod logging;
pub(crate) mod run;
pub(crate) mod settings;
pub(crate) mod zap;
