//! What tests against the simulators share, whichever crate they live in: bounded polling,
//! unique names, child processes with collected output, a plain-HTTP client and a throwaway PKI.
//!
//! Every wait here is bounded and every failure says what was awaited and what was last seen,
//! so a hang becomes a failure with a reason, never a stuck test.

pub mod http;
pub mod poll;
pub mod process;
pub mod tls;
pub mod tools;

pub use poll::{DEADLINE, eventually, poll_until, unique, within, within_for};
