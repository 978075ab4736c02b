//! `enforce_rbac`: requests are authorized against the stored RBAC objects and refused as
//! a real server refuses them; without it (the default) every identity is served.

use crate::{
    kube_sim_support::sim,
    kubectl_support::{BIND_READER_TO_BOT, CREATE_SECRET_READER, Kubectl},
};
use ferrvault_sim::kube::{KubeSim, KubeSimOptions};
use k8s_openapi::api::core::v1::Secret;
use kube::{Api, api::ListParams};
use std::net::SocketAddr;

async fn enforcing_sim() -> KubeSim {
    let options = KubeSimOptions {
        enforce_rbac: true,
        ..KubeSimOptions::default()
    };
    KubeSim::start_with(SocketAddr::from(([127, 0, 0, 1], 0)), options)
        .await
        .expect("simulator starts")
}

#[tokio::test]
async fn an_enforcing_simulator_should_allow_what_rbac_grants_and_refuse_the_rest() {
    let sim = enforcing_sim().await;
    let k = Kubectl::new(&sim);
    for args in [
        &["create", "namespace", "team-a"][..],
        CREATE_SECRET_READER,
        BIND_READER_TO_BOT,
    ] {
        k.ok(args).await;
    }
    let bot = sim.client_as("system:serviceaccount:team-a:bot");
    let in_team_a = Api::<Secret>::namespaced(bot.clone(), "team-a")
        .list(&ListParams::default())
        .await;
    assert!(in_team_a.is_ok(), "{in_team_a:?}");
    let refused = Api::<Secret>::namespaced(bot.clone(), "default")
        .list(&ListParams::default())
        .await
        .expect_err("no binding in default");
    let kube::Error::Api(status) = refused else {
        panic!("a Status: {refused:?}")
    };
    assert_eq!((status.code, status.reason.as_str()), (403, "Forbidden"));
    assert_eq!(
        status.message,
        r#"secrets is forbidden: User "system:serviceaccount:team-a:bot" cannot list resource "secrets" in API group "" in the namespace "default""#
    );
    assert!(
        bot.apiserver_version().await.is_ok(),
        "discovery is every authenticated user's"
    );

    let err = k
        .fails(&["get", "secrets", "-n", "team-a", "--as", "alice"])
        .await;
    assert!(
        err.contains(r#"Error from server (Forbidden): secrets is forbidden: User "alice" cannot list resource "secrets""#),
        "{err}"
    );
    assert!(
        k.ok(&["get", "secrets", "-n", "team-a"]).await.is_empty(),
        "the kubeconfig is the admin's"
    );

    let forged = reqwest::Client::new()
        .get(format!("{}/api/v1/namespaces/team-a/secrets", sim.url()))
        .bearer_auth("forged")
        .send()
        .await
        .expect("request");
    assert_eq!(forged.status(), 401);
}

#[tokio::test]
async fn a_default_simulator_should_serve_identities_no_binding_names() {
    let sim = sim().await;
    let nobody = sim.client_as("nobody");
    let listed = Api::<Secret>::namespaced(nobody, "default")
        .list(&ListParams::default())
        .await;
    assert!(listed.is_ok(), "{listed:?}");
}
