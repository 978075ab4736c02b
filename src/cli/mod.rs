//! The `run` subcommand: flags ([`args`]), their checked form ([`settings`]), logging
//! ([`logging`]) and the process that wires the operator, the HTTP servers and signals
//! together ([`run`]).

mod address;
pub mod args;
pub mod logging;
pub mod run;
pub mod settings;

pub use address::{AddressError, BindAddress};
pub use args::{LogFormat, RunArgs};
pub use settings::{ConfigError, ProcessEnv, RunSettings};
