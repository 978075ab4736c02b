//! `ferrvault-sim ferrvault --port P [--config FILE]`: runs the simulator until Ctrl-C.

use std::{net::SocketAddr, path::PathBuf};

use super::{FerrVaultSim, SimConfig, SimError, token_fingerprint};

/// Arguments of `sim ferrvault`.
#[derive(Debug, clap::Args)]
pub struct SimFerrVaultArgs {
    /// Port to listen on (127.0.0.1 only); 0 picks a free one.
    #[arg(long, default_value_t = 8200)]
    pub port: u16,
    /// YAML/JSON configuration (vaults, tokens, limits); the embedded sample when absent.
    #[arg(long)]
    pub config: Option<PathBuf>,
}

impl SimFerrVaultArgs {
    /// Loads the configuration, serves it and waits for Ctrl-C.
    ///
    /// # Errors
    /// Configuration and bind errors; failing to listen for Ctrl-C ends the run as if it was pressed.
    pub async fn run(self) -> Result<(), SimError> {
        let config = match &self.config {
            Some(path) => {
                let text = std::fs::read_to_string(path).map_err(|source| SimError::ReadConfig {
                    path: path.display().to_string(),
                    source,
                })?;
                SimConfig::from_yaml(&text)?
            }
            None => SimConfig::sample(),
        };
        let sim =
            FerrVaultSim::start_on(config.clone(), SocketAddr::from(([127, 0, 0, 1], self.port))).await?;
        println!("{}", banner(&sim.url(), &config, self.config.as_deref()));
        if let Err(error) = tokio::signal::ctrl_c().await {
            tracing::warn!(%error, "cannot listen for Ctrl-C; stopping");
        }
        sim.shutdown().await;
        Ok(())
    }
}

/// What the CLI prints at startup: where it listens and what it serves, naming tokens only by label
/// or fingerprint.
fn banner(url: &str, config: &SimConfig, source: Option<&std::path::Path>) -> String {
    let label =
        |token: &str, label: &Option<String>| label.clone().unwrap_or_else(|| token_fingerprint(token));
    let mut lines = vec![
        format!("FerrVault simulator listening on {url}"),
        format!(
            "config: {}",
            source.map_or_else(
                || "embedded sample (src/sim/ferrvault/sample.yaml)".to_owned(),
                |p| p.display().to_string()
            )
        ),
        format!(
            "rate limit: {}/s burst {} per token, {:?}, debt mode {}, Retry-After as {:?}",
            config.rate_limit.per_second,
            config.rate_limit.burst,
            config.limiter_mode,
            config.rejected_requests_spend_budget,
            config.retry_after
        ),
    ];
    for vault in &config.vaults {
        lines.push(format!(
            "vault {} (org {}, project {}): {} secrets",
            vault.name,
            vault.org,
            vault.project,
            vault.secrets.len()
        ));
    }
    for sat in &config.service_account_tokens {
        lines.push(format!(
            "service-account token {} → vault {}",
            label(sat.token.expose(), &sat.label),
            sat.vault
        ));
    }
    for org in &config.org_tokens {
        lines.push(format!(
            "org token {} → org {}",
            label(org.token.expose(), &org.label),
            org.org
        ));
    }
    for cluster in &config.oidc_clusters {
        lines.push(format!(
            "OIDC cluster {} → org {}",
            cluster.cluster_id, cluster.org
        ));
    }
    lines.push(format!("stats: curl {url}/_sim/stats"));
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn banner_should_name_tokens_by_label_or_fingerprint_never_by_value() {
        let config = SimConfig::sample();
        let text = banner("http://127.0.0.1:1", &config, None);
        for sat in &config.service_account_tokens {
            assert!(
                !text.contains(sat.token.expose()),
                "banner leaked a token:\n{text}"
            );
        }
        for org in &config.org_tokens {
            assert!(
                !text.contains(org.token.expose()),
                "banner leaked a token:\n{text}"
            );
        }
        assert!(text.contains("listening on http://127.0.0.1:1"));
    }
}
