//! The FerrVault client over real HTTP: against a scripted stub (status mapping, retries, OIDC,
//! TLS) and against the FerrVault simulator (rate limits, single-flight).

mod against_sim;
mod ferrvault_stub;
mod http;
mod oidc;
mod rate_limit;
mod single_flight;
mod tls;
