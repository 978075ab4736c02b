//! The FerrVault client over real HTTP: against a scripted stub (status mapping, retries, OIDC,
//! TLS, refusals of plain http, of redirects and of misplaced cluster bearers) and against the
//! FerrVault simulator (rate limits, single-flight).

mod against_sim;
mod ferrvault_stub;
mod http;
mod oidc;
mod rate_limit;
mod refusals;
mod single_flight;
mod tls;

/// The client's defaults, plus plain `http://` allowed: the stub and the simulator speak it.
fn plain_http_config() -> ferrvault_operator::ferrvault::ClientConfig {
    ferrvault_operator::ferrvault::ClientConfig {
        allow_insecure_http: true,
        ..ferrvault_operator::ferrvault::ClientConfig::default()
    }
}
