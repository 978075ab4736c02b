//! The client's `list` and `me` calls against the FerrVault simulator (issue 38): what they
//! decode, the versions reveals carry, their bounds, the signal of a server without them, and
//! their pacing by the credential's limiter.

use std::time::Duration;

use ferrvault_operator::ferrvault::{
    ClientConfig, Credential, Endpoint, FerrVault, FerrVaultError, KeySelector, MAX_LIST_ENTRIES,
    ResponseBound, RevealRequest, RevealScope, TokenRole,
};
use ferrvault_sim::ferrvault::{FerrVaultSim, SimConfig, Unserved, faults::Endpoint as SimEndpoint};
use tokio::time::Instant;

use crate::against_sim::{SAT, Setup, setup, soon};

fn sat() -> Credential {
    Credential::new(SAT).expect("a token")
}

#[tokio::test]
async fn list_me_and_reveals_should_report_the_versions_and_token_the_simulator_holds() {
    let s = setup().await;
    assert!(s.sim.put_secret("app", "A", "rotated"));
    let inventory = s.client.list(&s.endpoint, &sat(), soon()).await.expect("list");
    assert_eq!(
        inventory
            .entries
            .iter()
            .map(|(name, e)| (name.as_str(), e.version))
            .collect::<Vec<_>>(),
        [("A", 2), ("B", 1)]
    );
    let request = RevealRequest {
        scope: RevealScope::FerrVault,
        vault: "app".into(),
        keys: KeySelector::All,
    };
    let revealed = s
        .client
        .reveal(&s.endpoint, &sat(), request, soon())
        .await
        .expect("reveal");
    assert_eq!(
        revealed.versions,
        [("A".to_owned(), 2), ("B".to_owned(), 1)].into()
    );

    let me = s.client.me(&s.endpoint, &sat(), soon()).await.expect("me");
    assert_eq!(
        (me.vault_slug.as_str(), me.role, me.expires_at),
        ("app", TokenRole::Viewer, None)
    );
    let endpoints = s.sim.stats().token("app-sat").endpoints;
    assert_eq!((endpoints.get("list"), endpoints.get("me")), (Some(&1), Some(&1)));
}

#[tokio::test]
async fn a_list_over_its_entry_bound_should_be_refused_once_as_too_large() {
    let names: Vec<(String, String)> = (0..=MAX_LIST_ENTRIES)
        .map(|i| (format!("K{i}"), String::new()))
        .collect();
    let sim = FerrVaultSim::start(
        SimConfig::default()
            .vault("big", names)
            .service_account_token(SAT, "big")
            .token_label(SAT, "big-sat")
            .rate_limit(1000.0, 100),
    )
    .await
    .expect("simulator");
    let s = Setup {
        endpoint: Endpoint::parse(&sim.url()).expect("url"),
        client: FerrVault::new(crate::plain_http_config()),
        sim,
    };
    let error = s
        .client
        .list(&s.endpoint, &sat(), soon())
        .await
        .expect_err("too many entries");
    assert!(
        matches!(
            error,
            FerrVaultError::ResponseTooLarge(ResponseBound::Keys(MAX_LIST_ENTRIES))
        ),
        "{error}"
    );
    assert_eq!(error.reason(), "ResponseTooLarge");
    assert_eq!(s.sim.stats().token("big-sat").requests, 1, "not retried");
}

#[tokio::test]
async fn a_server_without_list_or_me_should_be_reported_unsupported_and_not_retried() {
    let s = setup().await;
    s.sim.set_unserved(SimEndpoint::List, Some(Unserved::NotFound));
    s.sim
        .set_unserved(SimEndpoint::Me, Some(Unserved::MethodNotAllowed));
    let list = s
        .client
        .list(&s.endpoint, &sat(), soon())
        .await
        .expect_err("no list");
    let me = s.client.me(&s.endpoint, &sat(), soon()).await.expect_err("no me");
    for (error, status) in [(&list, 404), (&me, 405)] {
        assert!(
            matches!(error, FerrVaultError::Unsupported { status: s, .. } if *s == status),
            "{error}"
        );
        assert!(error.is_unsupported() && error.reason() == "Unsupported");
        assert!(!error.to_string().contains(SAT));
    }
    assert_eq!(s.sim.stats().token("app-sat").requests, 2, "one request each");
    s.sim.set_unserved(SimEndpoint::List, None);
    assert!(
        s.client.list(&s.endpoint, &sat(), soon()).await.is_ok(),
        "served again"
    );
}

#[tokio::test]
async fn list_and_me_should_wait_for_the_credentials_budget_like_reveals() {
    let s = setup().await;
    let client = FerrVault::new(ClientConfig {
        rate_per_second: 0.1,
        burst: 2,
        ..crate::plain_http_config()
    });
    client
        .list(&s.endpoint, &sat(), soon())
        .await
        .expect("first of the burst");
    client
        .me(&s.endpoint, &sat(), soon())
        .await
        .expect("second of the burst");
    let short = Instant::now() + Duration::from_millis(500);
    let error = client
        .list(&s.endpoint, &sat(), short)
        .await
        .expect_err("no budget left");
    assert_eq!(error.reason(), "BudgetDeadline", "{error}");
    assert_eq!(
        s.sim.stats().token("app-sat").requests,
        2,
        "nothing sent without budget"
    );
}
