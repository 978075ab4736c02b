//! The in-memory vaults and the pure selection of requested keys.

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
/// An `RwLock`: reveals read concurrently; only tests change secrets.
#[derive(Debug)]
pub struct VaultStore {
    vaults: RwLock<BTreeMap<String, Vault>>,
}

impl VaultStore {
    /// The vaults of `config`.
    pub fn new(config: &SimConfig) -> Self {
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
                        (name.clone(), Secret { value, version })
                    })
                    .collect();
                let vault = Vault {
                    name: spec.name.clone(),
                    org: spec.org.clone(),
                    project: spec.project.clone(),
                    environment: spec.environment.clone(),
                    id: spec.id.clone().unwrap_or_else(|| format!("vault-{}", spec.name)),
                    secrets,
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

    /// Sets a secret, bumping its version. Returns false when the vault does not exist.
    pub fn put_secret(&self, vault: &str, name: &str, value: &str) -> bool {
        self.write(vault, |v| {
            let version = v.secrets.get(name).map_or(1, |s| s.version + 1);
            v.secrets.insert(
                name.to_owned(),
                Secret {
                    value: Redacted::new(value),
                    version,
                },
            );
        })
    }

    /// Deletes a secret. Returns false when the vault does not exist.
    pub fn remove_secret(&self, vault: &str, name: &str) -> bool {
        self.write(vault, |v| {
            v.secrets.remove(name);
        })
    }

    fn write(&self, vault: &str, f: impl FnOnce(&mut Vault)) -> bool {
        // Plain data: a panic elsewhere cannot leave a vault half-written.
        let mut vaults = self
            .vaults
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        vaults.get_mut(vault).map(f).is_some()
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
}
