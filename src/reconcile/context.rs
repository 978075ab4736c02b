//! What both reconcilers share: the Kubernetes client, the FerrVault client, the settings,
//! metrics, the Event sink, the write budget, the content-hash key and the change detection.

use std::sync::Arc;

use crate::ferrvault::FerrVault;

use super::changes::ChangeFeed;

use super::{
    content_hash_key::ContentHashKeySource,
    read::OwnWrites,
    report::{EventSink, SyncMetrics},
    settings::OperatorSettings,
    watch::HintMarks,
    write::WriteBudget,
};

/// The shared context of both reconcilers (controller-rs's `Context`).
pub struct Context {
    /// The Kubernetes client (CRs, target and token Secrets, workloads, Events); its writes are
    /// charged to [`Context::writes`].
    pub client: kube::Client,
    /// The one FerrVault client: its pacers make the per-credential budget one budget.
    pub ferrvault: FerrVault,
    /// Flags that shape the reconcilers.
    pub settings: OperatorSettings,
    /// `ferrvault_secret_*` and `ferrvault_connection_ready`.
    pub metrics: SyncMetrics,
    /// Events on the custom resources, deduplicated.
    pub events: EventSink,
    /// Resource versions of our own target writes, read by the Secret watch filter.
    pub own_writes: Arc<OwnWrites>,
    /// Each namespace's write budget: passes ask it before they write.
    pub writes: Arc<WriteBudget>,
    /// The key of the content hash (loaded once).
    pub content_hash_key: ContentHashKeySource,
    /// Change detection: the connections' `list` pollers and their latest versions.
    pub changes: Arc<ChangeFeed>,
    /// FerrVaultSecrets a change hint made due, taken by their next pass.
    pub hints: Arc<HintMarks>,
}
