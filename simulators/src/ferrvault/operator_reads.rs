//! What `list` and `me` answer once a request is authenticated, admitted and not disrupted. Both
//! are about the service-account token's own vault: neither names one.

use super::{
    identity::Caller,
    reply::Reply,
    state::SimState,
    wire::{ListEntry, MeResponse},
};

/// `GET /operator/secrets/list`: `[{name, version, updated_at}]` of the token's vault, by name;
/// never a value.
pub fn list(state: &SimState, caller: &Caller) -> Reply {
    let Caller::ServiceAccount { vault, .. } = caller else {
        return Reply::error(401, "unauthorized");
    };
    let reply = state.vaults.read(vault, |vault| {
        let entries: Vec<ListEntry<'_>> = vault
            .secrets
            .iter()
            .map(|(name, secret)| ListEntry {
                name,
                version: secret.version,
                updated_at: secret.updated_at.to_string(),
            })
            .collect();
        Reply::json(200, &entries)
    });
    reply.unwrap_or_else(|| Reply::error(404, "vault not found"))
}

/// `GET /operator/me`: `{token_id, vault_id, vault_slug, role, token_label, expires_at?}`.
pub fn me(state: &SimState, caller: &Caller) -> Reply {
    let Caller::ServiceAccount {
        key,
        vault,
        role,
        token_id,
        expires_at,
    } = caller
    else {
        return Reply::error(401, "unauthorized");
    };
    let reply = state.vaults.read(vault, |vault| {
        let me = MeResponse {
            token_id,
            vault_id: &vault.id,
            vault_slug: &vault.name,
            role: *role,
            token_label: key,
            expires_at: expires_at.map(|at| at.to_string()),
        };
        Reply::json(200, &me)
    });
    reply.unwrap_or_else(|| Reply::error(404, "vault not found"))
}
