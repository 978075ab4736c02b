//! The read side: where the reconcilers read the cluster — the watches' stores, with a GET only
//! where a store cannot be trusted — and what the stores keep.
//!
//! The watches already hold every FerrVaultSecret, every FerrVaultConnection and the metadata of
//! every Secret; reading them again with a GET on each pass cost four requests per object per
//! refresh. A store may lag the API server by the watch's latency, so each read below says what
//! it trusts the store for.
//!
//! # Where a fresh read is needed, and why
//! 1. **Absence.** An object a store does not hold is read with a GET before the pass acts on its
//!    absence: the streams of different watches are not ordered, so a connection created just
//!    before its FerrVaultSecret may not be in the connection store yet when the FerrVaultSecret's
//!    pass runs. (A custom resource reconciled by its own key is the exception: the key came from
//!    its own watch, which stored it first, so its absence means it is gone — unless rule 2.)
//! 2. **Our own last write.** A custom resource this process wrote is read with a GET until its
//!    store shows the version that write produced ([`WrittenVersions`]): a pass that runs right
//!    after our status write (an event arrived during the previous pass) would otherwise start
//!    from the status before it, and could skip a write the server still needs.
//! 3. **Values.** The Secret store holds metadata only (memory must not grow with unrelated
//!    Secrets); a token or CA bundle value is read with a GET when the store shows a
//!    `resourceVersion` its cache has not seen ([`SecretValues`]).
//! 4. **The target.** Read with a GET unless the store shows it at the version the last sync left
//!    it (`status.targetResourceVersion`), and always before it is written: a write needs its
//!    whole content and carries the `resourceVersion` it was computed from. The one exception to
//!    this rule and rule 1 is a first sync's target the listed store does not hold: the create
//!    is the check (the API server refuses it if the Secret exists), and its retry reads.
//! 5. **A partial object.** A custom resource whose spec lists or foreign finalizers are over
//!    the stores' budget is stored without them ([`projection`]):
//!    it is read with a GET, so the fields its store dropped are read fresh, never missed.
//! 6. **A connection's dependants, when it is deleted.** Listed from the API server: its finalizer
//!    goes when none is left, so a store missing a just-created FerrVaultSecret would free a
//!    connection that one names (rule 1 for a list). Deletions are off the refresh path.
//!
//! Everything else (the custom resources themselves, their connections, the Secrets' versions)
//! comes from the stores.
//!
//! # Layout
//! - [`Reads`] (here): everything both reconcilers read through.
//! - `stores.rs`: [`Stores`], the watches' stores; `scoped_store.rs`: [`Scoped`], one watch's
//!   stores across the watched scopes (`--watch-namespace`).
//! - [`projection`]: what the stores keep of each object (each watch's `trim`).
//! - `cr_store.rs`: [`CrStore`] and [`find`], custom resources from their store or a GET (rules
//!   1, 2, 5), and [`WrittenVersions`], the versions our own writes produced.
//! - `own_writes.rs`: [`OwnWrites`], the target Secret versions we wrote, so the Secret watch
//!   tells our writes from drift and a pass does not take a write not yet stored for a change.
//! - `secret_values.rs`: [`SecretValues`], token and CA bundle values kept per
//!   `resourceVersion`, bounded, shared, opted in (rule 3).
//! - `inputs.rs`: the versions `status.observedInputs` records, read from the stores.

mod cr_store;
mod inputs;
mod own_writes;
pub(crate) mod projection;
mod scoped_store;
mod secret_values;
mod stores;

pub use self::inputs::{connection_secret_names, secret_inputs_by};
pub(crate) use self::{
    cr_store::{CrStore, WrittenVersions, find},
    inputs::{connection_inputs, ready_for_dependants, secret_inputs},
    own_writes::OwnWrites,
    scoped_store::Scoped,
    secret_values::{CaBundleError, ClientCertError, SecretValues, ValueError},
    stores::Stores,
};
use crate::{
    api::{ClusterFerrVaultSecret, FerrVaultConnection, FerrVaultSecret},
    reconcile::settings::OperatorSettings,
};

/// Everything both reconcilers read through.
pub struct Reads {
    /// The watches' stores.
    pub stores: Stores,
    /// FerrVaultSecrets.
    pub secrets: CrStore<FerrVaultSecret>,
    /// FerrVaultConnections.
    pub connections: CrStore<FerrVaultConnection>,
    /// ClusterFerrVaultSecrets.
    pub cluster_secrets: CrStore<ClusterFerrVaultSecret>,
    /// Token and CA bundle values.
    pub values: SecretValues,
}

impl Reads {
    /// Reads through `stores`, with GETs through `client` where the module says; `settings`
    /// say which Secrets may be read as credentials.
    pub fn new(client: kube::Client, stores: Stores, settings: &OperatorSettings) -> Self {
        Self {
            secrets: CrStore::new(stores.secrets.clone()),
            connections: CrStore::new(stores.connections.clone()),
            cluster_secrets: CrStore::new(stores.cluster_secrets.clone()),
            values: SecretValues::new(client, stores.clone(), settings.require_credential_opt_in),
            stores,
        }
    }
}
