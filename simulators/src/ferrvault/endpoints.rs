//! What each endpoint answers once a request is authenticated, admitted and not disrupted.

use tokio::time::Instant;

use super::{
    identity::Caller,
    reply::Reply,
    state::SimState,
    vaults::select,
    wire::{
        CloudRevealResponse, ExchangeRequest, ExchangeResponse, Hit, RevealRequest, RevealResponse, VaultMeta,
    },
};

/// `POST /operator/secrets/reveal`: 400 bad body, 404 unknown vault, 403 `wrong vault`, else hits.
pub fn reveal(state: &SimState, caller: &Caller, request: Option<&RevealRequest>) -> Reply {
    let Some(request) = request else {
        return Reply::error(400, "invalid request body");
    };
    let Caller::ServiceAccount {
        vault: bound_vault, ..
    } = caller
    else {
        return Reply::error(401, "unauthorized");
    };
    let fetched_at = jiff::Timestamp::now().to_string();
    let reply = state.vaults.read(&request.vault, |vault| {
        if vault.name != *bound_vault {
            return Reply::message(403, "wrong vault");
        }
        let selection = select(&vault.secrets, request.names.as_deref());
        let hits = selection
            .hits
            .iter()
            .map(|(name, secret)| Hit {
                name,
                value: secret.value.expose(),
                version: secret.version,
                fetched_at: fetched_at.clone(),
            })
            .collect();
        Reply::json(
            200,
            &RevealResponse {
                hits,
                missing: selection.missing,
            },
        )
    });
    reply.unwrap_or_else(|| Reply::error(404, "vault not found"))
}

/// The address of a cloud-mode reveal, decoded.
#[derive(Debug)]
pub struct CloudTarget<'a> {
    /// Org segment.
    pub org: &'a str,
    /// Project segment.
    pub project: &'a str,
    /// Vault segment.
    pub vault: &'a str,
    /// Requested names; `None` means all.
    pub names: Option<&'a [String]>,
}

/// Cloud-mode reveal: 400 cluster token without namespace, 403 other org or namespace not allowed,
/// 404 unknown org/project/vault, else `{secrets, missing, vault}`.
pub fn cloud_reveal(
    state: &SimState,
    caller: &Caller,
    namespace: Option<&str>,
    target: &CloudTarget<'_>,
) -> Reply {
    let token_org = match caller {
        Caller::Org { org, .. } => org,
        Caller::Cluster { org, namespaces, .. } => {
            let Some(namespace) = namespace.filter(|n| !n.is_empty()) else {
                return Reply::error(400, "X-FerrVault-Namespace header is required for cluster tokens");
            };
            if !namespaces.is_empty() && !namespaces.iter().any(|n| n == namespace) {
                return Reply::message(403, "namespace not allowed for this cluster");
            }
            org
        }
        Caller::Anonymous | Caller::Unknown { .. } | Caller::ServiceAccount { .. } => {
            return Reply::error(401, "unauthorized");
        }
    };
    if token_org != target.org {
        return Reply::message(403, "token not valid for this organization");
    }
    let reply = state.vaults.read(target.vault, |vault| {
        if vault.org != target.org || vault.project != target.project {
            return None;
        }
        let selection = select(&vault.secrets, target.names);
        let secrets = selection
            .hits
            .iter()
            .map(|(name, secret)| (*name, secret.value.expose()))
            .collect();
        let meta = VaultMeta {
            id: &vault.id,
            name: &vault.name,
            environment: &vault.environment,
        };
        Some(Reply::json(
            200,
            &CloudRevealResponse {
                secrets,
                missing: selection.missing,
                vault: meta,
            },
        ))
    });
    reply
        .flatten()
        .unwrap_or_else(|| Reply::error(404, "vault not found"))
}

/// OIDC exchange: 400 bad body, 401 unknown (cluster, JWT) pair, else a fresh `ffclust_` token.
pub fn oidc_exchange(state: &SimState, request: Option<&ExchangeRequest>) -> Reply {
    let Some(request) = request else {
        return Reply::error(400, "invalid request body");
    };
    match state
        .tokens
        .exchange(&request.cluster_id, request.token.expose(), Instant::now())
    {
        Some(minted) => Reply::json(
            200,
            &ExchangeResponse {
                access_token: minted.access_token,
                expires_at: minted.expires_at.to_string(),
                token_type: "Bearer",
            },
        ),
        None => Reply::error(401, "unauthorized"),
    }
}
