//! The rest of the FerrVault simulator's `/operator/…` API over real HTTP, as the FerrVault CLI
//! calls it: `list`, `me`, create, update and delete under both path prefixes; their versions,
//! roles, rate limit and counting; endpoints switched off as on an older server; and HTTPS with
//! client certificates (mTLS).

use std::{sync::Arc, time::Duration};

use ferrvault_sim::{
    ferrvault::{Endpoint, FerrVaultSim, Role, SimConfig, Unserved},
    testkit::tls::{CertAndKey, TestPki},
};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, pem::PemObject};
use serde_json::{Value, json};

const READER: &str = "fvsat_prod_reader";
const WRITER: &str = "fvsat_prod_writer";
const STAGING: &str = "fvsat_staging_writer";

fn config() -> SimConfig {
    SimConfig::default()
        .vault("prod", [("DB_URL", "postgres://prod"), ("API_KEY", "sk_live_1")])
        .vault("staging", [("DB_URL", "postgres://staging")])
        .service_account_token(READER, "prod")
        .token_label(READER, "reader")
        .service_account_token(WRITER, "prod")
        .token_label(WRITER, "writer")
        .token_role(WRITER, Role::Writer)
        .service_account_token(STAGING, "staging")
        .token_role(STAGING, Role::Writer)
}

/// A running simulator and a client for it.
struct Fixture {
    sim: FerrVaultSim,
    http: reqwest::Client,
}

impl Fixture {
    async fn start(config: SimConfig) -> Self {
        let sim = FerrVaultSim::start(config).await.expect("simulator should start");
        Self {
            sim,
            http: ferrvault_sim::testkit::http::client(),
        }
    }

    /// `method path` with `token` and an optional JSON body → (status, JSON body or `Null`).
    async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        token: &str,
        body: Option<Value>,
    ) -> (u16, Value) {
        let mut request = self
            .http
            .request(method, format!("{}{path}", self.sim.url()))
            .bearer_auth(token);
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().await.expect("an HTTP answer");
        let status = response.status().as_u16();
        let text = response.text().await.expect("a body");
        (status, serde_json::from_str(&text).unwrap_or(Value::Null))
    }

    async fn get(&self, path: &str, token: &str) -> (u16, Value) {
        self.call(reqwest::Method::GET, path, token, None).await
    }
}

/// `name → version` of a `list` answer, asserting no entry carries a value.
fn versions(list: &Value) -> Vec<(String, u64)> {
    let entries = list.as_array().expect("list answers a JSON array");
    entries
        .iter()
        .map(|entry| {
            let fields: Vec<&String> = entry.as_object().expect("an object").keys().collect();
            assert_eq!(
                fields,
                ["name", "updated_at", "version"],
                "no value in a list entry"
            );
            let updated_at = entry["updated_at"].as_str().expect("updated_at");
            assert!(
                updated_at.parse::<jiff::Timestamp>().is_ok(),
                "RFC 3339: {updated_at}"
            );
            (
                entry["name"].as_str().expect("name").to_owned(),
                entry["version"].as_u64().expect("version"),
            )
        })
        .collect()
}

// === list and me ===

#[tokio::test]
async fn list_should_answer_every_name_with_its_version_under_both_prefixes_and_no_value() {
    let fx = Fixture::start(config()).await;
    fx.sim.put_secret("prod", "API_KEY", "sk_live_2");
    for prefix in ["", "/v1"] {
        let (status, list) = fx.get(&format!("{prefix}/operator/secrets/list"), READER).await;
        assert_eq!(status, 200, "{prefix}: {list}");
        assert_eq!(
            versions(&list),
            [("API_KEY".to_owned(), 2), ("DB_URL".to_owned(), 1)]
        );
        assert!(
            !list.to_string().contains("sk_live"),
            "list never answers a value: {list}"
        );
    }
}

#[tokio::test]
async fn me_should_describe_the_token_and_an_expired_token_should_get_401() {
    let soon = jiff::Timestamp::now() + jiff::SignedDuration::from_hours(24 * 5);
    let past = jiff::Timestamp::now() - jiff::SignedDuration::from_secs(1);
    let fx = Fixture::start(
        config()
            .token_expires_at(WRITER, soon)
            .token_expires_at(STAGING, past),
    )
    .await;
    let (status, me) = fx.get("/v1/operator/me", WRITER).await;
    assert_eq!(status, 200, "{me}");
    assert_eq!(
        (
            &me["vault_slug"],
            &me["vault_id"],
            &me["role"],
            &me["token_label"]
        ),
        (
            &json!("prod"),
            &json!("vault-prod"),
            &json!("writer"),
            &json!("writer")
        )
    );
    assert!(me["token_id"].is_string());
    let expires: jiff::Timestamp = me["expires_at"]
        .as_str()
        .expect("expires_at")
        .parse()
        .expect("RFC 3339");
    assert_eq!(expires, soon);

    let (_, me) = fx.get("/operator/me", READER).await;
    assert_eq!(me["role"], "viewer");
    assert!(
        me.get("expires_at").is_none(),
        "a token that never expires has no expires_at: {me}"
    );

    assert_eq!(fx.get("/operator/me", STAGING).await.0, 401);
    assert_eq!(fx.get("/operator/me", "fvsat_unknown").await.0, 401);
}

// === create, update, delete ===

#[tokio::test]
async fn writes_should_follow_the_cli_and_move_the_versions_reveal_and_list_report() {
    let fx = Fixture::start(config().rate_limit(100.0, 100)).await;
    let post = reqwest::Method::POST;
    let put = reqwest::Method::PUT;
    let delete = reqwest::Method::DELETE;
    let created = json!({ "vault": "prod", "name": "NEW", "value": "n1" });

    let (status, body) = fx
        .call(
            post.clone(),
            "/v1/operator/secrets",
            WRITER,
            Some(created.clone()),
        )
        .await;
    assert_eq!((status, &body["version"]), (201, &json!(1)), "{body}");
    assert_eq!(
        fx.call(post, "/operator/secrets", WRITER, Some(created)).await.0,
        409
    );

    let (status, body) = fx
        .call(
            put.clone(),
            "/v1/operator/secrets/NEW",
            WRITER,
            Some(json!({ "vault": "prod", "value": "n2" })),
        )
        .await;
    assert_eq!((status, &body["version"]), (200, &json!(2)), "{body}");
    assert!(
        !body.to_string().contains("n2"),
        "a write never answers the value: {body}"
    );
    let (status, reveal) = fx
        .call(
            reqwest::Method::POST,
            "/operator/secrets/reveal",
            READER,
            Some(json!({ "vault": "prod", "names": ["NEW"] })),
        )
        .await;
    assert_eq!(status, 200);
    assert_eq!(
        (&reveal["hits"][0]["value"], &reveal["hits"][0]["version"]),
        (&json!("n2"), &json!(2))
    );

    let missing = Some(json!({ "vault": "prod", "value": "x" }));
    assert_eq!(
        fx.call(put, "/operator/secrets/NOPE", WRITER, missing).await.0,
        404
    );
    assert_eq!(
        fx.call(
            delete.clone(),
            "/v1/operator/secrets/NEW?vault=prod",
            WRITER,
            None
        )
        .await
        .0,
        204
    );
    assert_eq!(
        fx.call(delete.clone(), "/operator/secrets/NEW?vault=prod", WRITER, None)
            .await
            .0,
        404
    );
    assert_eq!(
        fx.call(delete, "/operator/secrets/NEW", WRITER, None).await.0,
        400
    );
    assert_eq!(
        versions(&fx.get("/operator/secrets/list", READER).await.1).len(),
        2
    );
    assert_eq!(fx.sim.secret_version("prod", "NEW"), None);
}

#[tokio::test]
async fn writes_should_need_the_writer_role_and_the_tokens_own_vault() {
    let fx = Fixture::start(config()).await;
    let update = || Some(json!({ "vault": "prod", "value": "x" }));
    let (status, body) = fx
        .call(reqwest::Method::PUT, "/operator/secrets/DB_URL", READER, update())
        .await;
    assert_eq!((status, &body["message"]), (403, &json!("insufficient role")));
    let (status, body) = fx
        .call(
            reqwest::Method::PUT,
            "/operator/secrets/DB_URL",
            STAGING,
            update(),
        )
        .await;
    assert_eq!((status, &body["message"]), (403, &json!("wrong vault")));
    let other_vault = Some(json!({ "vault": "nope", "value": "x" }));
    assert_eq!(
        fx.call(
            reqwest::Method::PUT,
            "/operator/secrets/DB_URL",
            WRITER,
            other_vault
        )
        .await
        .0,
        404
    );
    assert_eq!(
        fx.sim.secret_version("prod", "DB_URL"),
        Some(1),
        "nothing was written"
    );
}

// === metering, counting, unserved endpoints ===

#[tokio::test]
async fn every_operator_endpoint_should_spend_the_tokens_one_budget_and_be_counted() {
    let fx = Fixture::start(config().rate_limit(0.01, 3)).await;
    assert_eq!(fx.get("/operator/secrets/list", WRITER).await.0, 200);
    assert_eq!(fx.get("/operator/me", WRITER).await.0, 200);
    let update = Some(json!({ "vault": "prod", "value": "x" }));
    assert_eq!(
        fx.call(reqwest::Method::PUT, "/operator/secrets/DB_URL", WRITER, update)
            .await
            .0,
        200
    );
    assert_eq!(
        fx.get("/operator/secrets/list", WRITER).await.0,
        429,
        "the burst of 3 is spent"
    );
    assert_eq!(
        fx.get("/operator/me", READER).await.0,
        200,
        "another token has its own budget"
    );

    let stats = fx.sim.stats();
    let writer = stats.token("writer");
    assert_eq!((writer.requests, writer.accepted, writer.rate_limited), (4, 3, 1));
    assert_eq!(
        writer.vaults.get("prod"),
        Some(&1),
        "list and me name no vault: the update only"
    );
    let endpoints = &stats.total.endpoints;
    assert_eq!(
        (
            endpoints.get("list"),
            endpoints.get("me"),
            endpoints.get("update")
        ),
        (Some(&2), Some(&2), Some(&1))
    );
}

#[tokio::test]
async fn unserved_endpoints_should_answer_404_or_405_spend_nothing_and_come_back() {
    let fx = Fixture::start(config().unserved(Endpoint::List, Unserved::NotFound)).await;
    fx.sim
        .set_unserved(Endpoint::Me, Some(Unserved::MethodNotAllowed));
    assert_eq!(fx.get("/v1/operator/secrets/list", READER).await.0, 404);
    assert_eq!(fx.get("/operator/me", READER).await.0, 405);
    assert_eq!(fx.sim.stats().token("reader").accepted, 0, "no budget spent");
    assert_eq!(
        fx.sim.stats().total.endpoints.get("list"),
        Some(&1),
        "but counted"
    );

    let admin = format!("{}/_sim/unserved/list", fx.sim.url());
    assert_eq!(
        fx.http
            .delete(&admin)
            .send()
            .await
            .expect("admin answers")
            .status(),
        204
    );
    fx.sim.set_unserved(Endpoint::Me, None);
    assert_eq!(fx.get("/operator/secrets/list", READER).await.0, 200);
    assert_eq!(fx.get("/operator/me", READER).await.0, 200);
}

#[tokio::test]
async fn admin_secret_paths_should_rotate_a_value_and_bump_its_version() {
    let fx = Fixture::start(config()).await;
    let url = format!("{}/_sim/vaults/prod/secrets/DB_URL", fx.sim.url());
    let put = fx
        .http
        .put(&url)
        .json(&json!({ "value": "postgres://rotated" }))
        .send()
        .await;
    assert_eq!(put.expect("admin answers").status(), 204);
    assert_eq!(fx.sim.secret_version("prod", "DB_URL"), Some(2));
    let (_, reveal) = fx
        .call(
            reqwest::Method::POST,
            "/operator/secrets/reveal",
            READER,
            Some(json!({ "vault": "prod", "names": ["DB_URL"] })),
        )
        .await;
    assert_eq!(reveal["hits"][0]["value"], "postgres://rotated");
    let missing = fx
        .http
        .put(format!("{}/_sim/vaults/nope/secrets/X", fx.sim.url()));
    let answer = missing
        .json(&json!({ "value": "v" }))
        .send()
        .await
        .expect("admin answers");
    assert_eq!(answer.status(), 404);
}

// === HTTPS and client certificates ===

/// A client trusting `pki`'s CA, presenting `identity` when given.
fn tls_client(pki: &TestPki, identity: Option<&CertAndKey>) -> reqwest::Client {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(CertificateDer::from_pem_slice(pki.ca_pem().as_bytes()).expect("CA PEM"))
        .expect("CA parses");
    let builder = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("protocol versions")
        .with_root_certificates(roots);
    let config = match identity {
        None => builder.with_no_client_auth(),
        Some(identity) => {
            let chain = vec![CertificateDer::from_pem_slice(identity.cert_pem.as_bytes()).expect("cert PEM")];
            let key = PrivateKeyDer::from_pem_slice(identity.key_pem.as_bytes()).expect("key PEM");
            builder
                .with_client_auth_cert(chain, key)
                .expect("client identity")
        }
    };
    reqwest::Client::builder()
        .tls_backend_preconfigured(config)
        .timeout(Duration::from_secs(10))
        .build()
        .expect("client builds")
}

#[tokio::test]
async fn https_with_required_client_certificates_should_serve_only_clients_presenting_one() {
    let pki = TestPki::new("test CA");
    let clients = TestPki::new("client CA");
    let server = pki.server();
    let sim = FerrVaultSim::start(
        config()
            .tls(&server.cert_pem, &server.key_pem)
            .require_client_cert(&clients.ca_pem()),
    )
    .await
    .expect("simulator should start");
    assert!(sim.url().starts_with("https://127.0.0.1:"), "{}", sim.url());
    let me = format!("{}/operator/me", sim.url());

    let good = tls_client(&pki, Some(&clients.client("operator")));
    let answer = good
        .get(&me)
        .bearer_auth(READER)
        .send()
        .await
        .expect("mTLS succeeds");
    assert_eq!(answer.status(), 200);

    let anonymous = tls_client(&pki, None);
    assert!(
        anonymous.get(&me).bearer_auth(READER).send().await.is_err(),
        "no certificate, no answer"
    );
    let stranger = tls_client(&pki, Some(&TestPki::new("other CA").client("stranger")));
    assert!(
        stranger.get(&me).bearer_auth(READER).send().await.is_err(),
        "an unknown CA, no answer"
    );

    let stats = sim.stats();
    assert_eq!(stats.tls_handshake_failures, 2);
    assert_eq!(stats.total.requests, 1, "refused clients never reach a route");
}

#[tokio::test]
async fn tls_settings_that_hold_no_certificate_should_refuse_to_start() {
    let pki = TestPki::new("test CA");
    let server = pki.server();
    let error = FerrVaultSim::start(config().tls("not a certificate", &server.key_pem))
        .await
        .expect_err("no certificate");
    assert!(error.to_string().contains("tls.cert_pem"), "{error}");
    let error = FerrVaultSim::start(
        config()
            .tls(&server.cert_pem, &server.key_pem)
            .require_client_cert(""),
    )
    .await
    .expect_err("no client CA");
    assert!(error.to_string().contains("tls.client_ca_pem"), "{error}");
    assert!(
        !error.to_string().contains("PRIVATE KEY"),
        "the key is never shown: {error}"
    );
}
