//! Sample manifests, embedded so tests and `ferrvault-dev demo` apply exactly what the
//! documentation shows. Each constant is one multi-document YAML file of `src/api/samples/`.

/// A ferrvault-mode FerrVaultConnection and the Secret holding its `fvsat_` service-account token.
pub const FERRVAULT_CONNECTION: &str = include_str!("samples/ferrvault-connection.yaml");

/// A cloud-mode FerrVaultConnection (organization set) and its `fft_` API token Secret.
pub const CLOUD_CONNECTION: &str = include_str!("samples/cloud-connection.yaml");

/// A FerrVaultSecret with transforms, a rollout target, and the Deployment it restarts.
pub const SECRET_WITH_TRANSFORMS: &str = include_str!("samples/secret-with-transforms.yaml");

/// Refresh control (issue 36): a suspended FerrVaultSecret and a `CreatedOnce` one.
pub const REFRESH_CONTROL: &str = include_str!("samples/refresh-control.yaml");

/// Two FerrVaultSecrets with `target.template`: a connection string from three keys, and a
/// docker config Secret (`kubernetes.io/dockerconfigjson`).
pub const SECRET_WITH_TEMPLATE: &str = include_str!("samples/secret-with-template.yaml");

/// A ClusterFerrVaultConnection lent to three team namespaces (selected by
/// `kubernetes.io/metadata.name`), its token Secret, the namespaces, and a FerrVaultSecret in
/// each using it.
pub const CLUSTER_CONNECTION: &str = include_str!("samples/cluster-connection.yaml");

/// A ClusterFerrVaultSecret fanning one read out to the three team namespaces of
/// [`CLUSTER_CONNECTION`] (apply it after that sample).
pub const CLUSTER_SECRET: &str = include_str!("samples/cluster-secret.yaml");
