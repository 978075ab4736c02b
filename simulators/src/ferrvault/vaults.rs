//! The in-memory vaults, their writes (versions increase on every change, and continue across a
//! delete and a re-create), and the pure selection of requested keys.

use std::{
    collections::{BTreeMap, BTreeSet},
    sync::RwLock,
};

use super::config::{Redacted, SecretSpec, SimConfig};

/// One stored secret.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Secret {
    /// The value (redacted in `Debug`).
    pub value: Redacted,
    /// Bumped on every change.
    pub version: u64,
    /// When the value last changed (the simulator's start for configured secrets).
    pub updated_at: jiff::Timestamp,
}

/// Why a write was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteRefused {
    /// Create: the name exists (409).
    Exists,
    /// Update or delete: the name does not exist (404).
    NoSuchSecret,
}

/// One vault.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Vault {
    /// Name (slug); the key in both modes.
    pub name: String,
    /// Owning org (cloud mode).
    pub org: String,
    /// Project (cloud mode).
    pub project: String,
    /// Environment, reported by cloud-mode reveals.
    pub environment: String,
    /// Id, reported by cloud-mode reveals.
    pub id: String,
    /// Secret name → secret.
    pub secrets: BTreeMap<String, Secret>,
    /// The last version of each deleted name, so a re-created secret's version still
    /// increases (FerrVault keeps a deleted secret's versions).
    pub deleted: BTreeMap<String, u64>,
}

impl Vault {
    /// Sets `name` to `value` at `now` with the next version (the first is 1); returns it.
    fn write(&mut self, name: &str, value: &str, now: jiff::Timestamp) -> u64 {
        let last = self
            .secrets
            .get(name)
            .map(|s| s.version)
            .or_else(|| self.deleted.remove(name))
            .unwrap_or(0);
        let secret = Secret {
            value: Redacted::new(value),
            version: last + 1,
            updated_at: now,
        };
        self.secrets.insert(name.to_owned(), secret);
        last + 1
    }

    /// Creates `name`; refused when it exists.
    ///
    /// # Errors
    /// [`WriteRefused::Exists`].
    pub fn create(&mut self, name: &str, value: &str, now: jiff::Timestamp) -> Result<u64, WriteRefused> {
        if self.secrets.contains_key(name) {
            return Err(WriteRefused::Exists);
        }
        Ok(self.write(name, value, now))
    }

    /// Changes an existing `name`.
    ///
    /// # Errors
    /// [`WriteRefused::NoSuchSecret`].
    pub fn update(&mut self, name: &str, value: &str, now: jiff::Timestamp) -> Result<u64, WriteRefused> {
        if !self.secrets.contains_key(name) {
            return Err(WriteRefused::NoSuchSecret);
        }
        Ok(self.write(name, value, now))
    }

    /// Deletes `name`, remembering its version.
    ///
    /// # Errors
    /// [`WriteRefused::NoSuchSecret`].
    pub fn delete(&mut self, name: &str) -> Result<(), WriteRefused> {
        let secret = self.secrets.remove(name).ok_or(WriteRefused::NoSuchSecret)?;
        self.deleted.insert(name.to_owned(), secret.version);
        Ok(())
    }
}

/// The keys a reveal returns and the requested keys the vault lacks.
#[derive(Debug, PartialEq, Eq)]
pub struct Selection<'a> {
    /// Found secrets, in request order (or name order when everything was asked for).
    pub hits: Vec<(&'a str, &'a Secret)>,
    /// Requested names the vault does not hold, in request order.
    pub missing: Vec<String>,
}

/// Picks `names` out of `secrets`; `None` or an empty list means every secret.
/// Repeated names are answered once.
pub fn select<'a>(secrets: &'a BTreeMap<String, Secret>, names: Option<&[String]>) -> Selection<'a> {
    let Some(names) = names.filter(|n| !n.is_empty()) else {
        return Selection {
            hits: secrets.iter().map(|(k, v)| (k.as_str(), v)).collect(),
            missing: vec![],
        };
    };
    let mut seen = BTreeSet::new();
    let mut selection = Selection {
        hits: vec![],
        missing: vec![],
    };
    for name in names.iter().filter(|n| seen.insert(n.as_str())) {
        match secrets.get_key_value(name) {
            Some((k, v)) => selection.hits.push((k.as_str(), v)),
            None => selection.missing.push(name.clone()),
        }
    }
    selection
}

/// Every vault, by name.
///
/// An `RwLock`: reads (reveal, list) share it; writes (the write endpoints, tests, the admin
/// paths) are rare.
#[derive(Debug)]
pub struct VaultStore {
    vaults: RwLock<BTreeMap<String, Vault>>,
}

impl VaultStore {
    /// The vaults of `config`.
    pub fn new(config: &SimConfig) -> Self {
        let started = jiff::Timestamp::now();
        let vaults = config
            .vaults
            .iter()
            .map(|spec| {
                let secrets = spec
                    .secrets
                    .iter()
                    .map(|(name, secret)| {
                        let (value, version) = match secret {
                            SecretSpec::Value(value) => (value.clone(), 1),
                            SecretSpec::Versioned { value, version } => (value.clone(), *version),
                        };
                        let secret = Secret {
                            value,
                            version,
                            updated_at: started,
                        };
                        (name.clone(), secret)
                    })
                    .collect();
                let vault = Vault {
                    name: spec.name.clone(),
                    org: spec.org.clone(),
                    project: spec.project.clone(),
                    environment: spec.environment.clone(),
                    id: spec.id.clone().unwrap_or_else(|| format!("vault-{}", spec.name)),
                    secrets,
                    deleted: BTreeMap::new(),
                };
                (spec.name.clone(), vault)
            })
            .collect();
        Self {
            vaults: RwLock::new(vaults),
        }
    }

    /// Runs `f` on vault `name`, or returns `None` when there is none.
    pub fn read<R>(&self, name: &str, f: impl FnOnce(&Vault) -> R) -> Option<R> {
        self.vaults
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(name)
            .map(f)
    }

    /// Sets a secret (creating it or bumping its version). Returns false when the vault does not
    /// exist.
    pub fn put_secret(&self, vault: &str, name: &str, value: &str) -> bool {
        let now = jiff::Timestamp::now();
        self.write(vault, |v| v.write(name, value, now)).is_some()
    }

    /// Deletes a secret (its version is remembered). Returns false when the vault does not exist.
    pub fn remove_secret(&self, vault: &str, name: &str) -> bool {
        // Deleting a name the vault lacks changes nothing: the admin path is idempotent.
        self.write(vault, |v| v.delete(name).ok()).is_some()
    }

    /// Runs `f` on vault `name` for writing, or returns `None` when there is none.
    pub fn write<R>(&self, vault: &str, f: impl FnOnce(&mut Vault) -> R) -> Option<R> {
        // Plain data: a panic elsewhere cannot leave a vault half-written.
        let mut vaults = self
            .vaults
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        vaults.get_mut(vault).map(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secrets() -> BTreeMap<String, Secret> {
        ["A", "B", "C"]
            .into_iter()
            .map(|k| {
                (
                    k.to_owned(),
                    Secret {
                        value: Redacted::new(k.to_lowercase()),
                        version: 1,
                        updated_at: jiff::Timestamp::UNIX_EPOCH,
                    },
                )
            })
            .collect()
    }

    fn names(selection: &Selection<'_>) -> Vec<String> {
        selection.hits.iter().map(|(k, _)| (*k).to_owned()).collect()
    }

    #[test]
    fn select_should_return_everything_when_no_names_are_given() {
        let secrets = secrets();
        for request in [None, Some(&[][..])] {
            let selection = select(&secrets, request);
            assert_eq!(names(&selection), ["A", "B", "C"]);
            assert!(selection.missing.is_empty());
        }
    }

    #[test]
    fn select_should_split_hits_and_missing_in_request_order_once_each() {
        let secrets = secrets();
        let request: Vec<String> = ["C", "X", "A", "C", "X"].map(String::from).to_vec();
        let selection = select(&secrets, Some(&request));
        assert_eq!(names(&selection), ["C", "A"]);
        assert_eq!(selection.missing, ["X"]);
    }

    #[test]
    fn put_secret_should_bump_the_version() {
        let store = VaultStore::new(&SimConfig::default().vault("prod", [("A", "1")]));
        assert!(store.put_secret("prod", "A", "2"));
        assert!(!store.put_secret("nope", "A", "2"));
        let version = store.read("prod", |v| v.secrets["A"].version);
        assert_eq!(version, Some(2));
    }

    #[test]
    fn versions_should_keep_increasing_across_a_delete_and_a_re_create() {
        let store = VaultStore::new(&SimConfig::default().vault("prod", [("A", "1")]));
        let now = jiff::Timestamp::now();
        let outcome = store.write("prod", |v| {
            assert_eq!(v.create("A", "x", now), Err(WriteRefused::Exists));
            assert_eq!(v.update("B", "x", now), Err(WriteRefused::NoSuchSecret));
            assert_eq!(v.update("A", "2", now), Ok(2));
            v.delete("A").expect("A exists");
            assert_eq!(v.delete("A"), Err(WriteRefused::NoSuchSecret));
            v.create("A", "3", now)
        });
        assert_eq!(outcome, Some(Ok(3)));
    }
}
