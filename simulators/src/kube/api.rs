//! The API verbs on resources, independent of HTTP: get, list, create, update, patch,
//! delete and deletecollection, with the admission rules the real server applies
//! (namespace must exist and not be terminating) and the CRD registration hook.
//!
//! Creates, updates and patches that change an object record the write in its
//! managedFields (see [`managed`]).

use super::{
    admission::{self, Directive},
    crd::establish,
    errors::{ApiError, Subject, success_status},
    events::{from_stored, to_stored},
    gc::{self, Deleted, Propagation},
    list::{ListQuery, list},
    managed::{self, Operation, Write},
    meta::{Stamp, differs, name_of, now_rfc3339, prepare_create, prepare_update, settle_generation},
    metadata::{View, render, render_list},
    patch::{self, PatchType},
    registry::ResourceType,
    state::Shared,
    store::{ObjKey, Store},
    strategy::check_conditional_update,
};
use serde_json::{Value, json};
use std::sync::Arc;

/// The resource a request addresses.
#[derive(Debug, Clone)]
pub struct Target {
    /// The served type.
    pub rt: ResourceType,
    /// The version in the URL.
    pub version: String,
    /// Namespace in the URL (None for cluster-scoped types or all-namespace requests).
    pub namespace: Option<String>,
    /// Object name (None for collections).
    pub name: Option<String>,
    /// Subresource (`status`).
    pub subresource: Option<String>,
}

/// Options of a create, update or patch.
#[derive(Debug, Clone)]
pub struct WriteOpts {
    /// `dryRun=All`: validate and answer, store nothing.
    pub dry_run: bool,
    /// The field manager its managedFields entry names (see [`managed::manager_name`]).
    pub manager: String,
    /// `fieldValidation` and the response's warnings (see [`admission`]).
    pub directive: Directive,
}

/// `DeleteOptions` that change behaviour.
#[derive(Debug, Clone, Default)]
pub struct DeleteOpts {
    /// `propagationPolicy`.
    pub propagation: Option<Propagation>,
    /// `preconditions.uid`.
    pub uid: Option<String>,
    /// `preconditions.resourceVersion`.
    pub resource_version: Option<String>,
}

impl Target {
    fn key(&self) -> ObjKey {
        (
            self.namespace.clone().unwrap_or_default(),
            self.name.clone().unwrap_or_default(),
        )
    }

    /// The object this target names, for `Status` details.
    pub fn subject(&self) -> Subject<'_> {
        Subject {
            group: &self.rt.group,
            resource: &self.rt.plural,
            name: self.name.as_deref().unwrap_or_default(),
        }
    }

    fn is_crd(&self) -> bool {
        self.rt.group == "apiextensions.k8s.io"
    }

    fn is_custom(&self) -> bool {
        self.rt.is_custom()
    }

    /// `obj` as served at this target's version in `view`.
    pub fn render(&self, obj: &Value, view: View) -> Value {
        render(obj, &self.rt, &self.version, view)
    }
}

/// Namespaces the real server's admission refuses to delete.
const PROTECTED_NAMESPACES: [&str; 3] = ["default", "kube-system", "kube-public"];

/// GET one object.
pub fn get(shared: &Shared, t: &Target, view: View) -> Result<Value, ApiError> {
    let obj = shared
        .read()
        .get(&t.rt.id(), &t.key())
        .ok_or_else(|| ApiError::not_found(t.subject()))?;
    Ok(t.render(&obj, view))
}

/// GET a collection.
pub fn list_objects(shared: &Shared, t: &Target, q: &ListQuery, view: View) -> Result<Value, ApiError> {
    list(&shared.read(), &t.rt, &t.version, t.namespace.as_deref(), q, view)
}

fn check_namespace_open(store: &Store, t: &Target) -> Result<(), ApiError> {
    let Some(ns) = t.namespace.as_deref().filter(|_| t.rt.namespaced) else {
        return Ok(());
    };
    let namespaces = store
        .registry
        .lookup("", "v1", "namespaces")
        .expect("namespaces are built in")
        .id();
    match store.get(&namespaces, &(String::new(), ns.to_string())) {
        None => Err(ApiError::not_found(Subject {
            group: "",
            resource: "namespaces",
            name: ns,
        })),
        Some(n) if n.pointer("/metadata/deletionTimestamp").is_some() => Err(ApiError::forbidden(format!(
            "{} \"{}\" is forbidden: unable to create new content in namespace {ns} because it is being terminated",
            t.rt.plural,
            name_of(&n)
        ))),
        Some(_) => Ok(()),
    }
}

/// POST: create. Returns the stored object (201).
pub fn create(shared: &Shared, t: &Target, body: Value, opts: &WriteOpts) -> Result<Value, ApiError> {
    create_as(shared, t, body, opts, Operation::Update)
}

fn create_as(
    shared: &Shared,
    t: &Target,
    body: Value,
    opts: &WriteOpts,
    operation: Operation,
) -> Result<Value, ApiError> {
    let applied = (operation == Operation::Apply).then(|| body.clone());
    let body = to_stored(&t.rt, body);
    let created = shared.write(|store| {
        check_namespace_open(store, t)?;
        let ns = if t.rt.namespaced {
            t.namespace.as_deref().or(Some("default"))
        } else {
            None
        };
        let obj = prepare_create(&t.rt, &t.version, ns, body, &Stamp::fresh())?;
        let mut obj = admission::admit(&t.rt, &t.version, None, obj, None, &opts.directive)?;
        record_write(t, opts, operation, applied.as_ref(), &mut obj);
        let key = (ns.unwrap_or_default().to_string(), name_of(&obj).to_string());
        let target = Target {
            name: Some(key.1.clone()),
            namespace: ns.map(String::from),
            ..t.clone()
        };
        if t.is_crd() {
            super::crd::validate(&obj)?;
        }
        if store.get(&t.rt.id(), &key).is_some() {
            return Err(ApiError::already_exists(target.subject()));
        }
        if opts.dry_run {
            return Ok(target.render(&obj, View::Full));
        }
        let mut stored = store.put(&t.rt.id(), key.clone(), obj);
        if t.is_crd() {
            stored = establish(store, &t.rt, &key, stored);
        }
        Ok(target.render(&stored, View::Full))
    });
    wake_collector_for(shared, created)
}

/// Wakes the garbage collector when a written object may leave it work.
fn wake_collector_for(shared: &Shared, written: Result<Value, ApiError>) -> Result<Value, ApiError> {
    if written.as_ref().is_ok_and(gc::concerns_collector) {
        shared.wake_collector();
    }
    written
}

/// Records a write in `new`'s managedFields: `applied` is the configuration of an apply
/// (its fields are recorded), else the fields of `new` are.
fn record_write(
    t: &Target,
    opts: &WriteOpts,
    operation: Operation,
    applied: Option<&Value>,
    new: &mut Value,
) {
    let subresource = t.subresource.as_deref();
    let fields = managed::fields_v1(applied.unwrap_or(new), subresource, t.rt.has_status);
    let api_version = t.rt.api_version(&t.version);
    let time = now_rfc3339();
    let write = Write {
        manager: &opts.manager,
        operation,
        api_version: &api_version,
        subresource,
        time: &time,
    };
    managed::record(new, &write, fields);
}

/// Brings `new`'s managedFields up to date before it replaces `old`: a write that changes
/// nothing records nothing (it stays a no-op), a `reset` strips them all.
fn settle_managed_fields(
    t: &Target,
    opts: &WriteOpts,
    (operation, applied): (Operation, Option<&Value>),
    old: &Value,
    new: &mut Value,
    reset: bool,
) {
    if reset {
        managed::clear(new);
    } else if differs(old, new) {
        record_write(t, opts, operation, applied, new);
    }
}

/// Stores `new` in place of `old` unless nothing changed; handles finalizer release
/// and CRD registration. Returns what a client sees afterwards.
fn commit(store: &mut Store, t: &Target, old: Arc<Value>, new: Value) -> Arc<Value> {
    if !differs(&old, &new) {
        return old;
    }
    let key = t.key();
    let mut stored = store.put(&t.rt.id(), key.clone(), new);
    if t.is_crd() {
        stored = establish(store, &t.rt, &key, stored);
    }
    gc::finish_if_released(store, &t.rt, &key);
    stored
}

/// `new` (prepared to replace `old`) after its schema, with its generation settled.
fn admitted_update(
    t: &Target,
    old: &Value,
    new: Value,
    patch: Option<&Value>,
    opts: &WriteOpts,
) -> Result<Value, ApiError> {
    let mut new = admission::admit(&t.rt, &t.version, Some(old), new, patch, &opts.directive)?;
    settle_generation(&t.rt, t.subresource.as_deref(), old, &mut new);
    Ok(new)
}

/// PUT: replace (or `/status` update). Without a resourceVersion only where the kind's
/// strategy allows unconditional updates.
pub fn update(shared: &Shared, t: &Target, body: Value, opts: &WriteOpts) -> Result<Value, ApiError> {
    let body = to_stored(&t.rt, body);
    let updated = shared.write(|store| {
        let old = store
            .get(&t.rt.id(), &t.key())
            .map(|o| admission::as_decoded(&t.rt, o))
            .ok_or_else(|| ApiError::not_found(t.subject()))?;
        check_conditional_update(&t.rt, name_of(&old), &body)?;
        let reset = t.subresource.is_none() && managed::requests_reset(&body);
        let new = prepare_update(&t.rt, t.subresource.as_deref(), &old, body)?;
        let mut new = admitted_update(t, &old, new, None, opts)?;
        settle_managed_fields(t, opts, (Operation::Update, None), &old, &mut new, reset);
        if opts.dry_run {
            return Ok(t.render(&new, View::Full));
        }
        Ok(t.render(&commit(store, t, old, new), View::Full))
    });
    wake_collector_for(shared, updated)
}

/// PATCH with any of the four types. Returns the status code (201 when an apply patch
/// created the object) and the object.
pub fn patch(
    shared: &Shared,
    t: &Target,
    kind: PatchType,
    body: &[u8],
    opts: &WriteOpts,
) -> Result<(u16, Value), ApiError> {
    let patch_doc = patch::parse_body(kind, body)?;
    let existing = shared.read().get(&t.rt.id(), &t.key());
    let Some(_) = existing else {
        if kind == PatchType::Apply && t.subresource.is_none() {
            let mut body = patch_doc;
            if !body.is_object() {
                return Err(ApiError::bad_request("an apply patch must be an object"));
            }
            if !body["metadata"].is_object() {
                body["metadata"] = json!({});
            }
            body["metadata"]["name"] = json!(t.name);
            return create_as(shared, t, body, opts, Operation::Apply).map(|o| (201, o));
        }
        return Err(ApiError::not_found(t.subject()));
    };
    let patched = shared.write(|store| {
        let old = store
            .get(&t.rt.id(), &t.key())
            .map(|o| admission::as_decoded(&t.rt, o))
            .ok_or_else(|| ApiError::not_found(t.subject()))?;
        let patched = to_stored(&t.rt, patch::apply(kind, &from_stored(&t.rt, &old), &patch_doc)?);
        let (operation, applied) = match kind {
            PatchType::Apply => (Operation::Apply, Some(&patch_doc)),
            _ => (Operation::Update, None),
        };
        let reset = t.subresource.is_none() && applied.is_none() && managed::requests_reset(&patched);
        let new = prepare_update(&t.rt, t.subresource.as_deref(), &old, patched)?;
        let mut new = admitted_update(t, &old, new, Some(&patch_doc), opts)?;
        settle_managed_fields(t, opts, (operation, applied), &old, &mut new, reset);
        if opts.dry_run {
            return Ok(t.render(&new, View::Full));
        }
        Ok(t.render(&commit(store, t, old, new), View::Full))
    });
    wake_collector_for(shared, patched).map(|o| (200, o))
}

/// DELETE one object. Pending deletions (finalizers) return the object; completed
/// deletions return a `Success` Status, except custom resources, which return the
/// object, as the real server does.
pub fn delete(shared: &Shared, t: &Target, opts: &DeleteOpts) -> Result<Value, ApiError> {
    let deleted = shared.write(|store| {
        let current = store
            .get(&t.rt.id(), &t.key())
            .ok_or_else(|| ApiError::not_found(t.subject()))?;
        if t.rt.group.is_empty()
            && t.rt.plural == "namespaces"
            && PROTECTED_NAMESPACES.contains(&name_of(&current))
        {
            return Err(ApiError::forbidden(format!(
                "namespaces \"{}\" is forbidden: this namespace may not be deleted",
                name_of(&current)
            )));
        }
        let meta = |f: &str| current["metadata"][f].as_str().unwrap_or_default().to_string();
        if opts.uid.as_ref().is_some_and(|u| *u != meta("uid"))
            || opts
                .resource_version
                .as_ref()
                .is_some_and(|rv| *rv != meta("resourceVersion"))
        {
            return Err(ApiError::conflict(t.subject()));
        }
        let policy = opts.propagation.unwrap_or(Propagation::Background);
        match gc::delete(store, &t.rt, &t.key(), policy) {
            None => Err(ApiError::not_found(t.subject())),
            Some(Deleted::Pending(obj)) => Ok(t.render(&obj, View::Full)),
            Some(Deleted::Gone(obj)) if t.is_custom() => Ok(t.render(&obj, View::Full)),
            Some(Deleted::Gone(obj)) => Ok(success_status(
                t.subject(),
                obj["metadata"]["uid"].as_str().unwrap_or_default(),
            )),
        }
    });
    shared.wake_collector();
    deleted
}

/// DELETE a collection: deletes every selected object and returns them as a list.
pub fn delete_collection(
    shared: &Shared,
    t: &Target,
    q: &ListQuery,
    opts: &DeleteOpts,
) -> Result<Value, ApiError> {
    let selected: Vec<ObjKey> = {
        let store = shared.read();
        store
            .range(&t.rt.id(), t.namespace.as_deref(), None)
            .filter(|(_, o)| q.selectors.matches(o))
            .map(|(k, _)| k.clone())
            .collect()
    };
    let policy = opts.propagation.unwrap_or(Propagation::Background);
    let (deleted, rv) = shared.write(|store| {
        let deleted: Vec<Value> = gc::delete_many(store, &t.rt, &selected, policy)
            .into_iter()
            .map(|d| match d {
                Deleted::Gone(o) | Deleted::Pending(o) => (*o).clone(),
            })
            .collect();
        (deleted, store.rv())
    });
    shared.wake_collector();
    Ok(render_list(
        &deleted,
        &t.rt,
        &t.version,
        View::Full,
        json!({ "resourceVersion": rv.to_string() }),
    ))
}
