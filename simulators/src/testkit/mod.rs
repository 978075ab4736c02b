//! What tests against the simulators share, whichever crate they live in: bounded polling,
//! unique names, child processes with collected output, and a plain-HTTP client.
//!
//! Every wait here is bounded and every failure says what was awaited and what was last seen,
//! so a hang becomes a failure with a reason, never a stuck test.

pub mod http;
pub mod poll;
pub mod process;
pub mod tools;

pub use poll::{DEADLINE, eventually, poll_until, unique, within, within_for};
