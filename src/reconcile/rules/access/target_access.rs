//! Whether a FerrVaultSecret may write its target Secret: the ownership rule and the Secrets that
//! are never written, decided from names, types, annotations and owner references only (no value
//! is read), before anything is revealed.
//!
//! # Guarantees
//! - A FerrVaultSecret writes a Secret only when it does not exist yet (it is then created with
//!   the FerrVaultSecret as controller owner), when it carries that controller owner reference
//!   (same UID), or when the Secret opts in: [`ADOPTABLE_BY_ANNOTATION`] names this FerrVaultSecret
//!   and nothing controls the Secret. A spec field alone never takes over a Secret that exists.
//! - Never written: a Secret controlled by anything else (another FerrVaultSecret included); a
//!   Secret that a valid FerrVaultConnection of the namespace reads as its token or CA bundle; a
//!   Secret Kubernetes acts on (a type of [`REFUSED_TARGET_TYPES`], or a ServiceAccount token
//!   annotation); and no target is created with a refused type.
//! - Under `creationPolicy: Merge` a target is never created: it must exist and opt in (or be
//!   controlled by this FerrVaultSecret already, from an earlier `Owner`); under `Orphan` one is
//!   created, and later passes write it through the opt-in it was created with.
//! - Each refusal has its own [`Reason`]; it is retried when the objects involved change, not on
//!   a timer.

use k8s_openapi::api::core::v1::Secret;

use kube::Resource;

use crate::api::{
    CreationPolicy, FerrVaultConnection, FerrVaultSecret, Reason,
    names::{ADOPTABLE_BY_ANNOTATION, MANAGED_BY_ANNOTATION, MANAGED_BY_VALUE},
    secret::REFUSED_TARGET_TYPES,
};

/// Annotations marking a Secret as a ServiceAccount token: the token controller fills such a
/// Secret with a long-lived token and the legacy-token cleaner tracks it, so it is never written
/// whatever its type says.
pub(crate) const SERVICE_ACCOUNT_ANNOTATIONS: [&str; 2] = [
    "kubernetes.io/service-account.name",
    "kubernetes.io/service-account.uid",
];

/// The type the API server gives a Secret created without one.
const IMPLICIT_SECRET_TYPE: &str = "Opaque";

/// How the target may be written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TargetAccess {
    /// It does not exist: create it, controlled by the FerrVaultSecret.
    Create,
    /// It is controlled by this FerrVaultSecret.
    Owned,
    /// It opted in to be taken over by this FerrVaultSecret, and becomes controlled by it.
    Adopt,
}

/// Which Secret of a FerrVaultConnection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ConnectionSecretRole {
    /// `tokenSecretRef`.
    Token,
    /// `caBundleSecretRef`.
    CaBundle,
    /// `clientCertSecretRef`.
    ClientCertificate,
}

impl ConnectionSecretRole {
    /// The role as a message says it.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Token => "token",
            Self::CaBundle => "CA bundle",
            Self::ClientCertificate => "client certificate",
        }
    }
}

/// A Secret a FerrVaultConnection reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ConnectionSecret {
    /// The connection's name.
    pub connection: String,
    /// The Secret's name (in the connection's namespace).
    pub secret: String,
    /// What the connection reads it for.
    pub role: ConnectionSecretRole,
}

/// The Secrets `connection` reads (token, CA bundle, client certificate).
pub(crate) fn connection_secrets(connection: &FerrVaultConnection) -> Vec<ConnectionSecret> {
    let name = connection.metadata.name.clone().unwrap_or_default();
    let spec = &connection.spec;
    [
        (spec.token_secret_ref.as_ref(), ConnectionSecretRole::Token),
        (spec.ca_bundle_secret_ref.as_ref(), ConnectionSecretRole::CaBundle),
    ]
    .into_iter()
    .filter_map(|(reference, role)| reference.map(|r| (r.name.as_str(), role)))
    .chain(
        spec.client_cert_secret_ref
            .as_ref()
            .map(|r| (r.name.as_str(), ConnectionSecretRole::ClientCertificate)),
    )
    .map(|(secret, role)| ConnectionSecret {
        connection: name.clone(),
        secret: secret.to_owned(),
        role,
    })
    .collect()
}

/// Why the target is not written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum TargetRefusal {
    /// `spec.target.type` is one Kubernetes turns into credentials.
    RefusedType {
        /// The type asked for.
        type_: String,
    },
    /// The existing Secret is one Kubernetes acts on: its type, or a ServiceAccount annotation.
    KubernetesManaged {
        /// The refused type or annotation found on it.
        marker: String,
    },
    /// A FerrVaultConnection reads the Secret.
    ConnectionSecret(ConnectionSecret),
    /// Something else controls the Secret.
    ControlledByOther {
        /// The controller's kind.
        kind: String,
        /// The controller's name.
        name: String,
    },
    /// The Secret exists, is controlled by nothing and did not opt in to this FerrVaultSecret.
    NotOwned,
    /// `creationPolicy: Merge` and the Secret does not exist.
    MergeMissing,
}

impl TargetRefusal {
    /// The Ready=False reason of this refusal.
    pub(crate) fn reason(&self) -> Reason {
        match self {
            Self::RefusedType { .. } | Self::KubernetesManaged { .. } => Reason::TargetTypeRefused,
            Self::ConnectionSecret(_) => Reason::TargetIsConnectionSecret,
            Self::ControlledByOther { .. } => Reason::TargetControlledByOther,
            Self::NotOwned => Reason::TargetNotOwned,
            Self::MergeMissing => Reason::TargetMissing,
        }
    }
}

/// The FerrVaultSecret asking to write a target.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Writer<'a> {
    /// Its name.
    pub name: &'a str,
    /// Its UID (what its controller owner references carry).
    pub uid: &'a str,
    /// Its `target.creationPolicy`.
    pub policy: CreationPolicy,
}

/// Whether `writer` may write target `target_name` of type `desired_type`, given the Secret as it
/// is (`existing`) and the Secrets the namespace's connections read.
///
/// # Errors
/// The first refusal, checked in this order: a refused type asked for; a Secret a connection
/// reads; a missing Secret under `Merge`; a Secret Kubernetes acts on; another controller; no
/// opt-in.
pub(crate) fn judge_target(
    writer: Writer<'_>,
    target_name: &str,
    desired_type: &str,
    existing: Option<&Secret>,
    connection_secrets: &[ConnectionSecret],
) -> Result<TargetAccess, TargetRefusal> {
    if REFUSED_TARGET_TYPES.contains(&desired_type) {
        return Err(TargetRefusal::RefusedType {
            type_: desired_type.to_owned(),
        });
    }
    if let Some(used) = connection_secrets.iter().find(|c| c.secret == target_name) {
        return Err(TargetRefusal::ConnectionSecret(used.clone()));
    }
    let Some(existing) = existing else {
        return match writer.policy {
            CreationPolicy::Merge => Err(TargetRefusal::MergeMissing),
            CreationPolicy::Owner | CreationPolicy::Orphan => Ok(TargetAccess::Create),
        };
    };
    if let Some(marker) = kubernetes_marker(existing) {
        return Err(TargetRefusal::KubernetesManaged { marker });
    }
    let owners = existing.metadata.owner_references.iter().flatten();
    if let Some(controller) = owners.clone().find(|o| o.controller == Some(true)) {
        return if controller.uid == writer.uid {
            Ok(TargetAccess::Owned)
        } else {
            Err(TargetRefusal::ControlledByOther {
                kind: controller.kind.clone(),
                name: controller.name.clone(),
            })
        };
    }
    let opted_in = existing
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(ADOPTABLE_BY_ANNOTATION))
        .is_some_and(|name| name == writer.name);
    if opted_in {
        Ok(TargetAccess::Adopt)
    } else {
        Err(TargetRefusal::NotOwned)
    }
}

/// Whether `existing` was created by this operator for a FerrVaultSecret named like `writer`:
/// its `ferrvault.com/managed-by` annotation is ours, and it is controlled by a FerrVaultSecret of
/// that name (whatever its UID) or by nothing (the garbage collector removes the owner reference
/// of a FerrVaultSecret deleted with `--cascade=orphan`). What a `refreshPolicy: CreatedOnce`
/// FerrVaultSecret deleted and recreated finds, and keeps as created once: it is never written
/// on that account (only judged as kept, so a Secret nobody opted in reads `TargetKept`, not
/// `TargetNotOwned`).
pub(crate) fn created_for_same_name(writer: Writer<'_>, existing: &Secret) -> bool {
    let ours = existing
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(MANAGED_BY_ANNOTATION))
        .is_some_and(|v| v == MANAGED_BY_VALUE);
    let controller = existing
        .metadata
        .owner_references
        .iter()
        .flatten()
        .find(|o| o.controller == Some(true));
    let named_like_writer = controller.is_none_or(|o| {
        o.kind == FerrVaultSecret::kind(&())
            && o.api_version == FerrVaultSecret::api_version(&())
            && o.name == writer.name
    });
    ours && named_like_writer
}

/// The refused type or ServiceAccount annotation `secret` carries, if any.
fn kubernetes_marker(secret: &Secret) -> Option<String> {
    let type_ = secret.type_.as_deref().unwrap_or(IMPLICIT_SECRET_TYPE);
    if REFUSED_TARGET_TYPES.contains(&type_) {
        return Some(type_.to_owned());
    }
    let annotations = secret.metadata.annotations.as_ref()?;
    SERVICE_ACCOUNT_ANNOTATIONS
        .iter()
        .find(|a| annotations.contains_key(**a))
        .map(|a| (*a).to_owned())
}

#[cfg(test)]
mod tests;
