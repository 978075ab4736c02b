//! The CEL rules of `pinSha256` and `clientCertSecretRef` on both connection kinds (issue 38
//! point 6), evaluated as in `cel.rs`: a pin is 64 hexadecimal digits, and a cluster connection's
//! client certificate sits beside its token.

use ferrvault_operator::api::{
    ClusterFerrVaultConnection, FerrVaultConnection,
    client_cert::{CLIENT_CERT_NAMESPACE_MESSAGE, PINS_MESSAGE},
};
use kube::core::cel::validate_cel;

/// The messages of the CEL rules `yaml` (an object of kind `K`) violates.
fn violations<K>(yaml: &str) -> Vec<String>
where
    K: kube::CustomResourceExt + serde::Serialize + serde::de::DeserializeOwned,
{
    let object: K =
        serde_norway::from_str(yaml).unwrap_or_else(|e| panic!("test object parses: {e}\n{yaml}"));
    match validate_cel(&object) {
        Ok(()) => Vec::new(),
        Err(errors) => errors.iter().map(|e| e.message.clone()).collect(),
    }
}

fn connection(extra: &str) -> Vec<String> {
    violations::<FerrVaultConnection>(&format!(
        "apiVersion: ferrvault.com/v1alpha1\nkind: FerrVaultConnection\nmetadata: {{name: c, namespace: n}}\n\
         spec:\n  url: https://x\n  tokenSecretRef: {{name: t, key: token}}\n{extra}"
    ))
}

fn cluster_connection(extra: &str) -> Vec<String> {
    violations::<ClusterFerrVaultConnection>(&format!(
        "apiVersion: ferrvault.com/v1alpha1\nkind: ClusterFerrVaultConnection\nmetadata: {{name: c}}\n\
         spec:\n  url: https://x\n{extra}"
    ))
}

const PIN: &str = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";

#[test]
fn pins_should_be_admitted_only_as_64_hex_digits_on_both_kinds() {
    let none = Vec::<String>::new();
    let upper = PIN.to_uppercase();
    assert_eq!(connection(&format!("  pinSha256: [{PIN}, {upper}]\n")), none);
    assert_eq!(connection("  clientCertSecretRef: {name: client-tls}\n"), none);
    let not_hex = format!("{}zz", &PIN[..62]);
    let base64 = "n4bQgYhMfWWaL+qgxVrQFaO/TxsrC4Is0V1sFbDwCgg=AAAAAAAAAAAAAAAAAAAA";
    for bad in [not_hex.as_str(), base64] {
        assert_eq!(
            connection(&format!("  pinSha256: ['{bad}']\n")),
            [PINS_MESSAGE],
            "{bad}"
        );
        assert_eq!(
            cluster_connection(&format!(
                "  tokenSecretRef: {{namespace: platform, name: t, key: token}}\n  pinSha256: ['{bad}']\n"
            )),
            [PINS_MESSAGE],
            "{bad}"
        );
    }
}

#[test]
fn a_cluster_connections_client_certificate_should_be_admitted_only_beside_its_token() {
    let token = "  tokenSecretRef: {namespace: platform, name: t, key: token}\n";
    let cert =
        |namespace: &str| format!("  clientCertSecretRef: {{namespace: {namespace}, name: client-tls}}\n");
    assert_eq!(
        cluster_connection(&format!("{token}{}", cert("platform"))),
        Vec::<String>::new()
    );
    assert_eq!(
        cluster_connection(&format!("{token}{}", cert("tenant-a"))),
        [CLIENT_CERT_NAMESPACE_MESSAGE]
    );
    assert_eq!(
        cluster_connection(&format!("  oidc: {{}}\n{}", cert("platform"))),
        [CLIENT_CERT_NAMESPACE_MESSAGE],
        "no client certificate of anyone's choosing beside the cluster identity"
    );
}
