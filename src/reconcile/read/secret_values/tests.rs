use controller_actors::{WatchStoreWriter, watch_store};
use ferrvault_sim::kube::KubeSim;
use kube::{api::PostParams, core::PartialObjectMeta, runtime::watcher::Event};
use serde_json::json;

use super::*;
use crate::reconcile::rules::access::credential_opt_in::CREDENTIAL_LABEL;

const NS: &str = "default";

/// The simulator, a metadata store the test feeds, and the values read through both.
struct Fixture {
    sim: KubeSim,
    writer: WatchStoreWriter<PartialObjectMeta<Secret>>,
    values: SecretValues,
}

impl Fixture {
    async fn start(require_opt_in: bool) -> Fixture {
        let sim = KubeSim::start().await.expect("simulator starts");
        let (store, writer) = watch_store();
        let mut stores = Stores::default();
        stores.secret_metadata.add(None, store);
        let values = SecretValues::new(sim.client(), stores, require_opt_in);
        Fixture { sim, writer, values }
    }

    /// Creates (or replaces) Secret `name` from `secret` (a manifest without name) and shows its
    /// new version in the metadata store, as the watch would.
    async fn put(&mut self, name: &str, mut secret: serde_json::Value) {
        secret["metadata"]["name"] = json!(name);
        let api = Api::<Secret>::namespaced(self.sim.client(), NS);
        let secret: Secret = serde_json::from_value(secret).expect("a Secret");
        let stored = match api.get_opt(name).await.expect("read") {
            None => api.create(&PostParams::default(), &secret).await,
            Some(old) => {
                let mut secret = secret;
                secret.metadata.resource_version = old.metadata.resource_version;
                api.replace(name, &PostParams::default(), &secret).await
            }
        }
        .expect("write");
        self.writer.apply(Event::Apply(PartialObjectMeta {
            types: None,
            metadata: stored.metadata,
            _phantom: std::marker::PhantomData,
        }));
        self.sim.clear_audit();
    }

    /// How many times Secret `name` was read with a GET since the last [`Fixture::put`].
    fn gets(&self, name: &str) -> usize {
        self.sim
            .audit()
            .iter()
            .filter(|e| e.verb == "get" && e.resource == "secrets" && e.name == name)
            .count()
    }
}

fn reference(name: &str, key: &str) -> SecretKeyRef {
    SecretKeyRef {
        name: name.into(),
        key: key.into(),
    }
}

fn holding(key: &str, value: &str) -> serde_json::Value {
    json!({ "metadata": {}, "stringData": { key: value } })
}

/// A PEM bundle of `copies` of the test CA (about 1.2 KiB each).
fn bundle(copies: usize) -> String {
    let ca = include_str!("../../../../tests/ferrvault_client/tls_fixtures/ca.pem");
    ca.repeat(copies)
}

#[tokio::test]
async fn a_value_should_be_read_once_per_version_and_shared_by_every_reader() {
    let mut f = Fixture::start(false).await;
    f.put("token", holding("token", "fvsat_one")).await;
    let first = f
        .values
        .token(NS, &reference("token", "token"))
        .await
        .expect("read");
    let again = f
        .values
        .token(NS, &reference("token", "token"))
        .await
        .expect("kept");
    assert_eq!(&*first, b"fvsat_one");
    assert!(Arc::ptr_eq(&first, &again), "one copy, shared");
    assert_eq!(f.gets("token"), 1, "one GET for the version");

    f.put("token", holding("token", "fvsat_two")).await;
    let rotated = f
        .values
        .token(NS, &reference("token", "token"))
        .await
        .expect("read");
    assert_eq!(&*rotated, b"fvsat_two", "a new version is read again");
    assert_eq!(f.gets("token"), 1);
}

#[tokio::test]
async fn a_value_over_its_bound_should_be_refused_naming_the_bound_and_read_once() {
    let mut f = Fixture::start(false).await;
    f.put("big", holding("token", &"t".repeat(MAX_TOKEN_BYTES + 1)))
        .await;
    f.put("huge", holding("ca.crt", &"c".repeat(1024 * 1024))).await;
    for _ in 0..3 {
        let error = f.values.token(NS, &reference("big", "token")).await.unwrap_err();
        assert_eq!(
            error.to_string(),
            r#"Secret default/big key "token" holds 4097 bytes, over the bound of 4 KiB"#
        );
        let error = f
            .values
            .ca_endpoint(
                NS,
                &reference("huge", "ca.crt"),
                Endpoint::parse("https://x").unwrap(),
            )
            .await
            .unwrap_err();
        assert!(
            error
                .to_string()
                .ends_with("holds 1048576 bytes, over the bound of 64 KiB"),
            "{error}"
        );
    }
    assert_eq!((f.gets("big"), f.gets("huge")), (1, 1), "a refusal is kept too");
    let at_bound = bundle(MAX_CA_BUNDLE_BYTES / bundle(1).len());
    f.put("ca", holding("ca.crt", &at_bound)).await;
    f.values
        .ca_endpoint(
            NS,
            &reference("ca", "ca.crt"),
            Endpoint::parse("https://x").unwrap(),
        )
        .await
        .expect("a bundle within the bound");
}

#[tokio::test]
async fn connections_to_one_url_should_share_one_copy_of_their_ca_bundle() {
    let mut f = Fixture::start(false).await;
    f.put("ca", holding("ca.crt", &bundle(20))).await;
    let ca = reference("ca", "ca.crt");
    let url = |u: &str| Endpoint::parse(u).unwrap();
    let one = f
        .values
        .ca_endpoint(NS, &ca, url("https://a"))
        .await
        .expect("built");
    let two = f
        .values
        .ca_endpoint(NS, &ca, url("https://a"))
        .await
        .expect("shared");
    let pem = |e: &Endpoint| e.extra_ca_pem().expect("a bundle").as_ptr();
    assert_eq!(one, two);
    assert_eq!(pem(&one), pem(&two), "one copy of the bundle");
    let other = f
        .values
        .ca_endpoint(NS, &ca, url("https://b"))
        .await
        .expect("built");
    assert_eq!(other.base_url(), "https://b");
    assert_eq!(f.gets("ca"), 1);
}

#[tokio::test]
async fn with_the_opt_in_only_a_labelled_or_ferrvault_typed_secret_should_be_a_credential() {
    let mut f = Fixture::start(true).await;
    f.put("plain", holding("token", "fvsat_plain")).await;
    let mut labelled = holding("token", "fvsat_labelled");
    labelled["metadata"]["labels"] = json!({ CREDENTIAL_LABEL: "true" });
    f.put("labelled", labelled).await;
    let mut typed = holding("token", "fvsat_typed");
    typed["type"] = json!("ferrvault.com/token");
    f.put("typed", typed).await;
    for _ in 0..2 {
        assert_eq!(
            f.values
                .token(NS, &reference("plain", "token"))
                .await
                .unwrap_err(),
            ValueError::NotOptedIn {
                namespace: NS.into(),
                name: "plain".into()
            }
        );
    }
    assert_eq!(f.gets("plain"), 1, "the refusal is kept for the version");
    let error = f
        .values
        .ca_endpoint(
            NS,
            &reference("plain", "token"),
            Endpoint::parse("https://x").unwrap(),
        )
        .await
        .unwrap_err();
    assert!(matches!(
        error,
        CaBundleError::Value(ValueError::NotOptedIn { .. })
    ));
    for name in ["labelled", "typed"] {
        f.values
            .token(NS, &reference(name, "token"))
            .await
            .expect("opted in");
    }
    let mut opted_in = holding("token", "fvsat_plain");
    opted_in["metadata"]["labels"] = json!({ CREDENTIAL_LABEL: "true" });
    f.put("plain", opted_in).await;
    f.values
        .token(NS, &reference("plain", "token"))
        .await
        .expect("labelled since: read again");

    let mut without = Fixture::start(false).await;
    without.put("plain", holding("token", "fvsat_plain")).await;
    without
        .values
        .token(NS, &reference("plain", "token"))
        .await
        .expect("without the flag, any Secret of the namespace");
}
