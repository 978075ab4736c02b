//! Attacks from a tenant's side against the real binary (`ferrvault-operator run`) on a shared
//! cluster: every spec field of a FerrVaultConnection or FerrVaultSecret is attacker input.
//!
//! The Kubernetes simulator enforces RBAC. Each tenant is a user whose Role lets it create, get,
//! list, update and delete FerrVaultConnections, FerrVaultSecrets and Secrets in its own namespace
//! and nothing else, and creates its objects with its own credentials; the operator is the
//! chart's ServiceAccount with the chart's rendered RBAC (see [`harness::rbac`]).
//!
//! Each attack runs the operator as the platform team would, lets the attacker create objects in
//! its own namespace pointing at listeners it controls (a hostile FerrVault among them), and
//! checks that: the listeners received nothing sensitive (the operator's token, a cluster token,
//! another tenant's data); the victim object is unchanged as a whole; the attacker's object shows
//! its reason; the operator stays healthy (`/healthz` 200, peak RSS bounded) and was never refused
//! by its RBAC; other tenants keep syncing; and a positive control (the legitimate path) syncs,
//! so no attack passes by the operator syncing nothing. The harness ([`harness`]) is meant to
//! host further attack groups.
//!
//! | File | Attack |
//! |---|---|
//! | `least_privilege.rs` | the tenant acting beyond its Role: refused (403), so the operator is its only path |
//! | `token_path.rs` | `spec.oidc.tokenPath`/`clusterID` at the operator's ServiceAccount token, `/dev/zero`, a FIFO, a 1 GiB file; the operator's own token path misconfigured at those |
//! | `redirects.rs` | a `307` to a second host, for a reveal and for the OIDC exchange |
//! | `insecure_http.rs` | an `http://` URL without `--allow-insecure-http`; borrowing an identity the operator lacks |
//! | `trusted_urls.rs` | opting in to the cluster identity outside the trusted URLs, with an own CA, without a namespace, from a namespace FerrVault does not grant |
//! | `target_owner.rs` | a target another owner controls (a Deployment, another FerrVaultSecret, a kind whose CRD is not installed) |
//! | `connection_secrets.rs` | a target that is a connection's token or CA Secret, or a token Secret not created yet |
//! | `unowned_target.rs` | a pre-existing unowned target, without the opt-in, then with it |
//! | `refused_types.rs` | credential target types at admission and in the reconciler; existing Secrets Kubernetes acts on |
//! | `rollout_floor.rs` | a hostile FerrVault changing values every second: one restart |
//! | `egress.rs` | FerrVault URLs at an in-cluster service, the API server, cloud metadata (also IPv4-mapped) and the operator's own metrics port (by address and by name) |
//! | `spec_bounds.rs` | a 900 KB prefix over 1,000 keys (admission, then past it), a multiplying `jsonExpand` from a hostile FerrVault |
//! | `fingerprints.rs` | guessing a token from its `/metrics` fingerprint: keyed, not a plain hash, and the same after a restart |
//! | `message_bounds.rs` | a controller of a 512 KiB kind and 256 KiB name, quoted in forty refusals: each message cut to 1 KiB, log lines short |
//! | `lease_loss.rs` | a leader frozen mid-reconcile: nothing written past its fence (also `tests/scenarios/scenario_fencing.rs`) |
//! | `write_budget.rs` | `refreshInterval: 1s` on many objects against values changing every second: clamped, and the namespace's writes within its budget |
//! | `cache_bounds.rs` | Secrets carrying 250 KiB of annotations, FerrVaultSecrets with maximal specs, connections reading a 1 MiB CA bundle: the stores keep a projection, values are bounded and shared |
//! | `credential_opt_in.rs` | another principal's Secret named as a connection's token or CA bundle (the confused deputy), with and without `--require-credential-opt-in` |
//! | `target_shape.rs` | `target.metadata` forging the operator's or Kubernetes' annotations (adoption opt-in, content hash, ServiceAccount marker), at admission and past it; `creationPolicy: Merge` into a Secret another controller owns, one never opted in, one that does not exist |
//! | `templates.rs` | a `target.template` repeating a hostile 256 KiB value 1,200 times (300 MiB if built): refused from its computed size, unbuilt |
//! | `cluster_connections.rs` | a ClusterFerrVaultConnection named from a namespace it does not allow, a namespace relabelled out of its selection, a namespaced Role granting the cluster kinds or namespace labels; suspended by its admin (no request for any user), resumed (none re-synced) |
//! | `cluster_secrets.rs` | a ClusterFerrVaultSecret over a hundred namespaces (one reveal per refresh, a new namespace's copy within 1 s), a selection reaching a namespace the connection refuses or a Secret the victim owns (that namespace fails alone, untouched), revocation and deletion of copies, a namespaced Role granting the kind |
//! | `cluster_fanout.rs` | a ClusterFerrVaultSecret's copy deleted by someone (back within a second, one reveal), its Events (`Synced`, a Warning naming each failed namespace), a cloud-mode connection over a hundred namespaces behind a slow FerrVault (one read per namespace per refresh, eight at a time) |
//! | `client_certs.rs` | another principal's TLS Secret named as a connection's client certificate (the confused deputy), a target that is a connection's client certificate, a 900 KiB chain and a 60 KiB key |
//! | `hostile_me.rs` | a hostile FerrVault answering `GET /operator/me` with 256 MiB, 30,000 unclosed brackets, a body trickling one byte every 200 ms |
//! | `cluster_client_certs.rs` | a ClusterFerrVaultConnection's `clientCertSecretRef` against a FerrVault requiring a client certificate (the platform's path; no attack) |
//! | `cluster_change_detection.rs` | `changeDetection: Versions` on a ClusterFerrVaultConnection: a rotation reaches a FerrVaultSecret and a ClusterFerrVaultSecret's copies within the interval, one `list` per interval, one reveal per object (the admin's path; no attack) |
//! | `change_detection.rs` | a hostile `list` under `changeDetection: Versions`: 20,000 names dated year 9999, refused as `ResponseTooLarge` on the connection while its secret still polls |
//! | `change_hints.rs` | signed change hints (`POST /hooks/ferrvault`): forged, tampered, unsigned, replayed, stale, future and 65 KiB hints, an unknown vault (nothing revealed); a valid one (the value in seconds, one reveal); 1,000 at once (429s, one reveal per credential); a standby replica (503, retried at the leader) |
//! | `response_bounds.rs` | a hostile FerrVault answering with size: 8 MiB error bodies, 250,000 keys, 250,000 or 4,000 missing names; forty waves answering 1.2 MB every second (the kept-answer budget) |

mod cache_bounds;
mod change_detection;
mod change_hints;
mod client_certs;
mod cluster_change_detection;
mod cluster_client_certs;
mod cluster_connections;
mod cluster_fanout;
mod cluster_secrets;
mod connection_secrets;
mod credential_opt_in;
mod egress;
mod fingerprints;
mod harness;
mod hostile_me;
mod insecure_http;
mod lease_loss;
mod least_privilege;
mod message_bounds;
mod redirects;
mod refused_types;
mod response_bounds;
mod rollout_floor;
mod spec_bounds;
mod target_owner;
mod target_shape;
mod templates;
mod token_path;
mod trusted_urls;
mod unowned_target;
mod write_budget;
