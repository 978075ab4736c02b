//! The size bound of every string and list in both custom resources' specs (issue 34, point 2):
//! the CRD schema declares them (`maxLength`, `maxItems`) and the reconcilers check them again
//! ([`spec_bounds`](crate::reconcile::rules::bounds::spec_bounds)) for objects stored past the schema.
//! Both use these constants, so the two can never disagree.
//!
//! # Guarantees
//! - Every bound is far above what a real manifest reaches (the Go operator's samples and e2e
//!   manifests re-apply unchanged) and low enough that no single field is a lever: what the
//!   reconcilers build from a field (a key name, a prefixed key, a URL) is at most a few KiB.
//!   Whole objects are bounded by the API server's own limits (3 MiB per request, 1.5 MiB per
//!   object in etcd), which bind before the sum of these bounds does.
//! - Lengths are in characters (Unicode code points), as the API server counts `maxLength`.
//!
//! # Assumptions
//! What a spec cannot bound (how many keys a FerrVault reveals, how large a value is) is bounded
//! where it is read: the reveal's own caps and the transforms' output bound.

/// Kubernetes object names (a DNS subdomain, `metadata.name` of a Secret, a Deployment or a
/// FerrVaultConnection) are at most 253 characters: a longer reference can never resolve.
/// Bounds `connectionRef.name`, `target.name`, `rolloutRestart[].name` and the Secret names of
/// `tokenSecretRef` and `caBundleSecretRef`.
pub const MAX_NAME: usize = 253;

/// Keys of a Secret's `data` are at most 253 characters (`IsConfigMapKey`): a longer key can be
/// neither read nor written. Bounds `selector.names[]`, the Secret keys of `tokenSecretRef` and
/// `caBundleSecretRef`, and every key a transform names (`from`, `to`, `key`, `keys[]`); also a
/// `prefix`/`suffix` `value`, which no valid key can contain if it is longer.
pub const MAX_SECRET_KEY: usize = 253;

/// FerrVault's own identifiers (`vault`, `project`, `organization`) and a Secret `type`
/// (`target.type`, a qualified name such as `kubernetes.io/tls`): real ones are a few dozen
/// characters; 253 is the longest Kubernetes name, which these are spelled like.
pub const MAX_IDENTIFIER: usize = 253;

/// `url` and the Go-era `oidc.audience` (a URL by convention): 2,048 characters, the longest URL
/// browsers and proxies commonly accept, many times an API base URL.
pub const MAX_URL: usize = 2048;

/// The Go-era `oidc.tokenPath`: 4,096 characters, Linux's `PATH_MAX` (it is never read; only
/// compared with the operator's setting).
pub const MAX_PATH: usize = 4096;

/// The Go-era `oidc.clusterID`: a 36-character UUID (its schema pattern says so too).
pub const MAX_CLUSTER_ID: usize = 36;

/// `refreshInterval`: 64 characters, several times the longest Go duration anyone writes
/// (`1h59m59.999999999s` is 18).
pub const MAX_DURATION: usize = 64;

/// `transforms`: 32 steps; the Go operator's samples use two, and each step's cost is bounded
/// separately (its output is refused over a Secret's 1 MiB).
pub const MAX_TRANSFORMS: usize = 32;

/// Key lists (`selector.names`, a `base64Decode`'s `keys`): 1,000 names, a Secret far larger than
/// any configuration Secret; the key count FerrVault answers with is bounded by the reveal.
pub const MAX_KEY_NAMES: usize = 1000;

/// `rolloutRestart`: 32 workloads restarted by one Secret, more than any application has.
pub const MAX_ROLLOUT_TARGETS: usize = 32;

/// The value of the `ferrvault.com/force-sync` annotation the operator keeps and records in
/// `status.observedForceSync`: at most 253 bytes (a timestamp or a counter is a few dozen). A
/// longer value (annotations may hold 256 KiB) is kept as a fixed-length digest of itself, so it
/// still forces a sync when it changes but never grows a store or a status.
pub const MAX_FORCE_SYNC_VALUE: usize = 253;

/// `target.template.data`: 100 keys, more than any templated configuration Secret needs (the
/// template's output is bounded separately: computed before it is built, refused over a
/// Secret's 1 MiB).
pub const MAX_TEMPLATE_KEYS: usize = 100;

/// One template of `target.template.data`: 32,768 characters, room for a whole configuration
/// file with placeholders; its placeholders (at least 4 characters each) are then at most 8,192.
pub const MAX_TEMPLATE_TEXT: usize = 32_768;

/// Namespace names (`allowedNamespaces.names[]`, `namespaces.names[]`, a reference's
/// `namespace`): a namespace name is a DNS label, at most 63 characters.
pub const MAX_NAMESPACE_NAME: usize = 63;

/// `allowedNamespaces.names` and a ClusterFerrVaultSecret's `namespaces.names`: 1,000 names, five
/// times the largest shared cluster the issue describes (200 namespaces); more is a selector's job.
pub const MAX_NAMESPACE_NAMES: usize = 1000;

/// A namespace selector's `matchLabels` entries and `matchExpressions` terms: 16 each, as many as
/// any platform's labelling scheme combines; each term's `values` list is bounded by
/// [`MAX_SELECTOR_VALUES`] and each key and value by [`MAX_LABEL_TEXT`].
pub const MAX_SELECTOR_TERMS: usize = 16;

/// The `values` of one `matchExpressions` term: 64.
pub const MAX_SELECTOR_VALUES: usize = 64;

/// A label key (prefix `/` name: 253 + 1 + 63 characters) or value (63) in a selector: 317.
pub const MAX_LABEL_TEXT: usize = 317;
