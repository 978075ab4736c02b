//! The real `ferrvault-operator` binary: flags, probes, metrics, debug endpoints, signals, and a
//! scan of everything it exposes for secrets.

mod go_command_line;
mod hostile_clients;
mod no_secrets;
mod probe_isolation;
mod product;
mod run;
mod secure_metrics;
mod slow_readers;

use ferrvault_testkit::process as process_support;
