//! What create, update and delete answer once a request is authenticated, admitted and not
//! disrupted: 400 bad request, 404 unknown vault, 403 `wrong vault` (another vault than the
//! token's), 403 `insufficient role` (a `viewer` token), then 409 (create of an existing name),
//! 404 (update or delete of a missing one), else the new version.

use super::{
    config::Role,
    identity::Caller,
    reply::Reply,
    state::SimState,
    vaults::{Vault, WriteRefused},
    wire::{CreateRequest, UpdateRequest, Written},
};

/// `POST /operator/secrets` `{vault, name, value}` → 201 `{name, version, updated_at}`.
pub fn create(state: &SimState, caller: &Caller, request: Option<&CreateRequest>) -> Reply {
    let Some(request) = request.filter(|r| !r.name.is_empty()) else {
        return Reply::error(400, "invalid request body");
    };
    in_writable_vault(state, caller, &request.vault, |vault, now| {
        let created = vault.create(&request.name, request.value.expose(), now);
        written(201, &request.name, created, now)
    })
}

/// `PUT /operator/secrets/{name}` `{vault, value}` → 200 `{name, version, updated_at}`.
pub fn update(state: &SimState, caller: &Caller, name: &str, request: Option<&UpdateRequest>) -> Reply {
    let Some(request) = request else {
        return Reply::error(400, "invalid request body");
    };
    in_writable_vault(state, caller, &request.vault, |vault, now| {
        let updated = vault.update(name, request.value.expose(), now);
        written(200, name, updated, now)
    })
}

/// `DELETE /operator/secrets/{name}?vault=` → 204.
pub fn delete(state: &SimState, caller: &Caller, name: &str, vault: Option<&str>) -> Reply {
    let Some(vault) = vault.filter(|v| !v.is_empty()) else {
        return Reply::error(400, "the vault query parameter is required");
    };
    in_writable_vault(state, caller, vault, |vault, _| match vault.delete(name) {
        Ok(()) => Reply::empty(204),
        Err(refused) => refusal(refused),
    })
}

/// Runs `write` on `vault` at the current wall time when the caller is a service-account token
/// bound to it with at least the `writer` role.
fn in_writable_vault(
    state: &SimState,
    caller: &Caller,
    vault: &str,
    write: impl FnOnce(&mut Vault, jiff::Timestamp) -> Reply,
) -> Reply {
    let Caller::ServiceAccount {
        vault: bound, role, ..
    } = caller
    else {
        return Reply::error(401, "unauthorized");
    };
    let now = jiff::Timestamp::now();
    let reply = state.vaults.write(vault, |vault| {
        if vault.name != *bound {
            return Reply::message(403, "wrong vault");
        }
        if *role < Role::Writer {
            return Reply::message(403, "insufficient role");
        }
        write(vault, now)
    });
    reply.unwrap_or_else(|| Reply::error(404, "vault not found"))
}

fn written(status: u16, name: &str, outcome: Result<u64, WriteRefused>, now: jiff::Timestamp) -> Reply {
    match outcome {
        Ok(version) => Reply::json(
            status,
            &Written {
                name,
                version,
                updated_at: now.to_string(),
            },
        ),
        Err(refused) => refusal(refused),
    }
}

fn refusal(refused: WriteRefused) -> Reply {
    match refused {
        WriteRefused::Exists => Reply::error(409, "secret already exists"),
        WriteRefused::NoSuchSecret => Reply::error(404, "secret not found"),
    }
}
