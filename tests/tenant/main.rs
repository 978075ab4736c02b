//! Attacks from a tenant's side against the real binary (`ferrvault-operator run`) on a shared
//! cluster: every spec field of a FerrVaultConnection or FerrVaultSecret is attacker input.
//!
//! Each attack runs the operator as the platform team would, lets the attacker create objects in
//! its own namespace pointing at listeners it controls, and checks that: the listeners received
//! nothing sensitive (the operator's token, a cluster token, another tenant's data); the
//! attacker's object shows its reason; the operator stays healthy (`/healthz` 200, peak RSS
//! bounded); other tenants keep syncing; and a positive control (the legitimate path) syncs, so
//! no attack passes by the operator syncing nothing. The harness ([`harness`]) is meant to host
//! further attack groups.
//!
//! | File | Attack |
//! |---|---|
//! | `token_path.rs` | `spec.oidc.tokenPath`/`clusterID` at the operator's ServiceAccount token, `/dev/zero`, a FIFO, a 1 GiB file; the operator's own token path misconfigured at those |
//! | `redirects.rs` | a `307` to a second host, for a reveal and for the OIDC exchange |
//! | `insecure_http.rs` | an `http://` URL without `--allow-insecure-http`; borrowing an identity the operator lacks |
//! | `trusted_urls.rs` | opting in to the cluster identity outside the trusted URLs, with an own CA, without a namespace, from a namespace FerrVault does not grant |

mod connection_secrets;
mod harness;
mod insecure_http;
mod lease_loss;
mod least_privilege;
mod redirects;
mod refused_types;
mod rollout_floor;
mod target_owner;
mod token_path;
mod trusted_urls;
mod unowned_target;
