//! The FerrVault client against the FerrVault simulator: both reveal modes, every status-code
//! path the server produces, injected faults (5xx, reset, malformed and oversized bodies, hang),
//! `Retry-After` in both formats, OIDC, and redaction of everything printed on the way.

use std::time::Duration;

use ferrvault_operator::ferrvault::{
    ClientConfig, ClusterIdentity, Credential, DeadlineStage, Endpoint, FerrVault, FerrVaultError,
    KeySelector, OidcSource, RequestResult, RetryPolicy, RevealRequest, RevealScope, Revealed,
};
use ferrvault_sim::ferrvault::{
    FaultSpec, FerrVaultSim, RetryAfterFormat, SimConfig, faults::Endpoint as SimEndpoint,
};
use tokio::time::Instant;

pub(crate) const SAT: &str = "fvsat_sim-app-0123456789";
const ORG_TOKEN: &str = "fft_sim-org-0123456789";
const ORG: &str = "globex";
const PROJECT: &str = "web";
const CLUSTER_ID: &str = "0b6f1c1e-7d0a-4c55-9e55-3f1a2b3c4d5e";
const JWT: &str = "eyJ.sim-projected-jwt.sig";
const VALUE_A: &str = "secret-value-of-A";

/// The simulator (vault `app` read by [`SAT`], labelled `app-sat`), a client allowed to reach it,
/// and its endpoint.
pub(crate) struct Setup {
    pub(crate) sim: FerrVaultSim,
    pub(crate) client: FerrVault,
    pub(crate) endpoint: Endpoint,
}

pub(crate) async fn setup() -> Setup {
    let config = SimConfig::default()
        .vault("app", [("A", VALUE_A), ("B", "secret-value-of-B")])
        .vault("other", [("X", "x")])
        .cloud_vault(ORG, PROJECT, "cloudy", [("C", "secret-value-of-C")])
        .service_account_token(SAT, "app")
        .token_label(SAT, "app-sat")
        .org_token(ORG_TOKEN, ORG)
        .token_label(ORG_TOKEN, "org")
        .oidc_cluster(CLUSTER_ID, JWT, ORG)
        .rate_limit(1000.0, 100);
    let sim = FerrVaultSim::start(config).await.unwrap();
    let client = FerrVault::new(ClientConfig {
        rate_per_second: 1000.0,
        burst: 100,
        retry: RetryPolicy {
            backoff: vec![Duration::from_millis(20)],
            ..RetryPolicy::default()
        },
        ..crate::plain_http_config()
    });
    let endpoint = Endpoint::parse(&sim.url()).unwrap();
    Setup {
        sim,
        client,
        endpoint,
    }
}

pub(crate) fn soon() -> Instant {
    Instant::now() + Duration::from_secs(20)
}

fn fv(vault: &str, names: &[&str]) -> RevealRequest {
    RevealRequest {
        scope: RevealScope::FerrVault,
        vault: vault.into(),
        keys: KeySelector::from_names(names.iter().copied()),
    }
}

fn cloud(vault: &str, names: &[&str]) -> RevealRequest {
    RevealRequest {
        scope: RevealScope::Cloud {
            organization: ORG.into(),
            project: PROJECT.into(),
            namespace: "team-a".into(),
        },
        vault: vault.into(),
        keys: KeySelector::from_names(names.iter().copied()),
    }
}

impl Setup {
    async fn reveal(&self, token: &str, request: RevealRequest) -> Result<Revealed, FerrVaultError> {
        self.client
            .reveal(&self.endpoint, &Credential::new(token).unwrap(), request, soon())
            .await
    }
}

#[tokio::test]
async fn client_should_reveal_through_both_modes() {
    let s = setup().await;
    let revealed = s.reveal(SAT, fv("app", &["A", "Z"])).await.unwrap();
    assert_eq!(revealed.secrets["A"].expose(), VALUE_A);
    assert_eq!(revealed.missing.names(), ["Z"]);
    let all = s.reveal(SAT, fv("app", &[])).await.unwrap();
    assert_eq!(all.secrets.keys().collect::<Vec<_>>(), ["A", "B"]);
    let cloudy = s.reveal(ORG_TOKEN, cloud("cloudy", &["C", "D"])).await.unwrap();
    assert_eq!(cloudy.secrets["C"].expose(), "secret-value-of-C");
    assert_eq!(cloudy.missing.names(), ["D"]);
    s.client.probe(&s.endpoint, soon()).await.unwrap();
}

#[tokio::test]
async fn server_status_codes_should_map_to_typed_errors_without_retries() {
    let s = setup().await;
    let unknown = s.reveal("fvsat_unknown", fv("app", &["A"])).await.unwrap_err();
    assert_eq!(unknown.reason(), "AuthFailed", "{unknown}");
    let wrong_vault = s.reveal(SAT, fv("other", &["X"])).await.unwrap_err();
    assert!(wrong_vault.is_auth(), "{wrong_vault}");
    assert!(
        wrong_vault.to_string().contains("wrong vault"),
        "the 403's `message` field is read: {wrong_vault}"
    );
    let missing = s.reveal(ORG_TOKEN, cloud("nope", &["C"])).await.unwrap_err();
    assert!(missing.is_not_found(), "{missing}");
    assert_eq!(
        s.sim.stats().token("app-sat").requests,
        1,
        "the 403 was not retried"
    );
    assert_eq!(s.sim.stats().token("org").requests, 1, "the 404 was not retried");
}

#[tokio::test]
async fn injected_server_errors_and_resets_should_be_retried() {
    let s = setup().await;
    s.sim.faults().set(
        SimEndpoint::Reveal,
        FaultSpec::default().with_server_errors(1.0, 502).times(2),
    );
    assert!(s.reveal(SAT, fv("app", &["A"])).await.is_ok());
    assert_eq!(s.sim.stats().token("app-sat").requests, 3);

    s.sim.faults().set(
        SimEndpoint::Reveal,
        FaultSpec::default().with_connection_reset().times(1),
    );
    assert!(s.reveal(SAT, fv("app", &["A"])).await.is_ok());
    let counts = &s.client.limiter_snapshots()[0].requests;
    assert_eq!(counts.get(RequestResult::Transport), 1);

    s.sim.faults().set(
        SimEndpoint::Reveal,
        FaultSpec::default().with_server_errors(1.0, 503),
    );
    let err = s.reveal(SAT, fv("app", &["A"])).await.unwrap_err();
    assert!(
        matches!(
            err,
            FerrVaultError::Server {
                status: 503,
                attempts: 3,
                ..
            }
        ),
        "{err:?}"
    );
}

#[tokio::test]
async fn malformed_answers_should_be_decode_errors_and_oversized_ones_refused() {
    let s = setup().await;
    s.sim
        .faults()
        .set(SimEndpoint::Reveal, FaultSpec::default().with_malformed_json());
    assert_eq!(
        s.reveal(SAT, fv("app", &["A"])).await.unwrap_err().reason(),
        "DecodeError"
    );
    s.sim.faults().set(
        SimEndpoint::Reveal,
        FaultSpec::default().with_oversized_body(9 << 20),
    );
    assert_eq!(
        s.reveal(SAT, fv("app", &["A"])).await.unwrap_err().reason(),
        "ResponseTooLarge"
    );
    assert_eq!(s.sim.stats().token("app-sat").requests, 2, "neither is retried");
}

#[tokio::test]
async fn a_hanging_server_should_be_cut_off_by_the_callers_deadline() {
    let s = setup().await;
    s.sim
        .faults()
        .set(SimEndpoint::Reveal, FaultSpec::default().with_hang());
    let started = Instant::now();
    let deadline = started + Duration::from_millis(400);
    let err = s
        .client
        .reveal(
            &s.endpoint,
            &Credential::new(SAT).unwrap(),
            fv("app", &["A"]),
            deadline,
        )
        .await;
    assert!(
        matches!(
            err,
            Err(FerrVaultError::Deadline {
                stage: DeadlineStage::InFlight
            })
        ),
        "{err:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "took {:?}",
        started.elapsed()
    );
    s.sim
        .faults()
        .set(SimEndpoint::Healthz, FaultSpec::default().with_hang());
    let probe = s
        .client
        .probe(&s.endpoint, Instant::now() + Duration::from_millis(300))
        .await;
    assert!(matches!(probe, Err(FerrVaultError::Deadline { .. })), "{probe:?}");
}

#[tokio::test]
async fn simulator_429s_should_carry_retry_after_in_both_formats_and_pause_the_credential() {
    let s = setup().await;
    // The client believes 1000/s; the server allows this token 1/s with no burst.
    s.sim.set_rate_limit("app-sat", 1.0, 1);
    assert!(s.reveal(SAT, fv("app", &["A"])).await.is_ok());
    let err = s.reveal(SAT, fv("app", &["B"])).await.unwrap_err();
    assert_eq!(err.retry_after(), Some(Duration::from_secs(1)), "{err:?}");
    let snapshot = &s.client.limiter_snapshots()[0];
    assert_eq!(snapshot.rate_limited_total, 1);
    assert!(snapshot.paused_for.is_some(), "the credential is paused");
    assert!(snapshot.rate < 1000.0, "the rate was cut");

    s.sim.set_retry_after_format(RetryAfterFormat::HttpDate);
    let other = Credential::new(ORG_TOKEN).unwrap();
    s.sim.set_rate_limit("org", 1.0, 1);
    assert!(
        s.client
            .reveal(&s.endpoint, &other, cloud("cloudy", &["C"]), soon())
            .await
            .is_ok()
    );
    let err = s
        .client
        .reveal(&s.endpoint, &other, cloud("cloudy", &["C"]), soon())
        .await
        .unwrap_err();
    let retry_after = err.retry_after().expect("an HTTP-date Retry-After is parsed");
    assert!(retry_after <= Duration::from_secs(2), "{retry_after:?}");
}

#[tokio::test]
async fn oidc_bearers_should_read_cloud_vaults_and_be_replaced_after_invalidation() {
    let s = setup().await;
    let dir = tempfile::tempdir().unwrap();
    let token_path = dir.path().join("token");
    std::fs::write(&token_path, JWT).unwrap();
    let identity = ClusterIdentity::new(CLUSTER_ID, token_path, &[s.sim.url()], true).unwrap();
    let client = FerrVault::new(ClientConfig {
        cluster_identity: Some(identity),
        ..s.client.config().clone()
    });
    let source = OidcSource {
        namespace: "team-a".into(),
        name: "conn".into(),
        endpoint: s.endpoint.clone(),
    };
    let bearer = client.oidc_token(&source, soon()).await.unwrap();
    let revealed = client
        .reveal(&s.endpoint, &bearer, cloud("cloudy", &["C"]), soon())
        .await
        .unwrap();
    assert_eq!(revealed.secrets.len(), 1);

    s.sim.expire_cluster_tokens();
    let expired = client
        .reveal(&s.endpoint, &bearer, cloud("cloudy", &["C"]), soon())
        .await
        .unwrap_err();
    assert!(expired.is_auth(), "{expired}");
    client.invalidate_oidc("team-a", "conn");
    let fresh = client.oidc_token(&source, soon()).await.unwrap();
    assert_ne!(fresh, bearer, "a new bearer was minted");
    assert!(
        client
            .reveal(&s.endpoint, &fresh, cloud("cloudy", &["C"]), soon())
            .await
            .is_ok()
    );
}

#[tokio::test]
async fn nothing_printed_on_any_path_should_contain_a_token_or_a_value() {
    let s = setup().await;
    let mut printed = Vec::new();
    let mut record = |what: String| printed.push(what);
    for outcome in [
        s.reveal(SAT, fv("app", &["A"]))
            .await
            .map(|r| format!("{r:?} {r:#?}")),
        s.reveal(SAT, fv("other", &["X"])).await.map(|r| format!("{r:?}")),
        s.reveal("fvsat_unknown-TOPSECRET", fv("app", &["A"]))
            .await
            .map(|r| format!("{r:?}")),
        s.reveal(ORG_TOKEN, cloud("nope", &[]))
            .await
            .map(|r| format!("{r:?}")),
    ] {
        match outcome {
            Ok(text) => record(text),
            Err(err) => record(format!("{err} {err:?} {err:#?}")),
        }
    }
    s.sim
        .faults()
        .set(SimEndpoint::Reveal, FaultSpec::default().with_malformed_json());
    if let Err(err) = s.reveal(SAT, fv("app", &["A"])).await {
        record(format!("{err} {err:?}"));
    }
    record(format!("{:?} {:?}", s.client, s.client.limiter_snapshots()));
    let mut registry = prometheus_client::registry::Registry::default();
    ferrvault_operator::ferrvault::metrics::register(&mut registry, &s.client);
    let mut scrape = String::new();
    prometheus_client::encoding::text::encode(&mut scrape, &registry).unwrap();
    record(scrape);
    for text in &printed {
        for forbidden in [SAT, ORG_TOKEN, "TOPSECRET", VALUE_A, "secret-value-of-B"] {
            assert!(!text.contains(forbidden), "{forbidden} leaked into: {text}");
        }
    }
}
