//! Watches the benchmarks time things with: when FerrVaultSecrets become Ready, when target
//! Secrets (or a given key of them) first appear, and how many objects of a kind meet a condition.

use std::{
    collections::{HashMap, HashSet},
    fmt::Debug,
    hash::Hash,
    sync::{Arc, Mutex},
    time::Duration,
};

use futures::StreamExt;
use k8s_openapi::api::core::v1::Secret;
use kube::{
    Api, Resource, ResourceExt,
    runtime::{WatchStreamExt, watcher},
};
use serde::de::DeserializeOwned;
use tokio::{sync::watch, task::JoinHandle, time::Instant};

use ferrvault_operator::api::FerrVaultSecret;

/// Whether `cr`'s status says Ready=True.
pub fn is_ready(cr: &FerrVaultSecret) -> bool {
    cr.status.as_ref().is_some_and(|s| {
        s.conditions
            .iter()
            .any(|c| c.type_ == "Ready" && c.status == "True")
    })
}

/// Counts the FerrVaultSecrets of a namespace that are Ready, from a watch.
pub struct ReadyCounter(Counter);

impl ReadyCounter {
    /// Starts watching `ns`.
    pub fn start(client: &kube::Client, ns: &str) -> Self {
        Self(Counter::start(
            Api::<FerrVaultSecret>::namespaced(client.clone(), ns),
            is_ready,
        ))
    }

    /// Waits until at least `n` are Ready; `false` when `within` passed first.
    pub async fn wait_for(&mut self, n: usize, within: Duration) -> bool {
        self.0.wait_for(n, within).await
    }

    /// How many are Ready now.
    pub fn ready(&self) -> usize {
        self.0.count()
    }
}

/// Spawns a task handing `on_object` every object a watch of `api` applies (created or changed),
/// until the task is aborted; a failed watch is retried with the default backoff.
pub fn on_each_applied<K>(api: Api<K>, mut on_object: impl FnMut(K) + Send + 'static) -> JoinHandle<()>
where
    K: Resource + Clone + DeserializeOwned + Debug + Send + 'static,
    K::DynamicType: Default + Eq + Hash + Clone,
{
    tokio::spawn(async move {
        let mut events = std::pin::pin!(
            watcher(api, watcher::Config::default())
                .default_backoff()
                .applied_objects()
        );
        while let Some(event) = events.next().await {
            let Ok(object) = event else { continue };
            on_object(object);
        }
    })
}

/// Records when each Secret of a namespace was first seen, and when each of its keys was.
pub struct SecretArrivals {
    seen: Arc<Mutex<HashMap<String, Instant>>>,
    keys: Arc<Mutex<HashMap<(String, String), Instant>>>,
    task: JoinHandle<()>,
}

impl SecretArrivals {
    /// Starts watching Secrets in `ns`.
    pub fn start(client: &kube::Client, ns: &str) -> Self {
        let api = Api::<Secret>::namespaced(client.clone(), ns);
        let seen = Arc::new(Mutex::new(HashMap::new()));
        let keys = Arc::new(Mutex::new(HashMap::new()));
        let (record_seen, record_keys) = (seen.clone(), keys.clone());
        let task = on_each_applied(api, move |secret: Secret| {
            let now = Instant::now();
            let name = secret.name_any();
            let mut keys = record_keys.lock().expect("arrivals lock");
            for key in secret.data.iter().flat_map(|d| d.keys()) {
                keys.entry((name.clone(), key.clone())).or_insert(now);
            }
            record_seen
                .lock()
                .expect("arrivals lock")
                .entry(name)
                .or_insert(now);
        });
        Self { seen, keys, task }
    }

    /// When Secret `name` was first seen.
    pub fn seen(&self, name: &str) -> Option<Instant> {
        self.seen.lock().expect("arrivals lock").get(name).copied()
    }

    /// When Secret `name` was first seen holding `key`.
    pub fn key_seen(&self, name: &str, key: &str) -> Option<Instant> {
        self.keys
            .lock()
            .expect("arrivals lock")
            .get(&(name.to_owned(), key.to_owned()))
            .copied()
    }

    /// Waits up to `within` for Secret `name` to hold `key`; when it first did.
    pub async fn wait_for_key(&self, name: &str, key: &str, within: Duration) -> Option<Instant> {
        let deadline = Instant::now() + within;
        loop {
            if let Some(at) = self.key_seen(name, key) {
                return Some(at);
            }
            if Instant::now() >= deadline {
                return None;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

impl Drop for SecretArrivals {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Counts, from a watch, the objects for which a predicate holds.
pub struct Counter {
    count: watch::Receiver<usize>,
    task: JoinHandle<()>,
}

impl Counter {
    /// Starts watching `api`, counting the objects `holds` accepts.
    pub fn start<K>(api: Api<K>, holds: impl Fn(&K) -> bool + Send + 'static) -> Self
    where
        K: Resource + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
        K::DynamicType: Default + Eq + Hash + Clone,
    {
        let (tx, count) = watch::channel(0);
        let mut holding = HashSet::new();
        let task = on_each_applied(api, move |object: K| {
            let key = (object.namespace(), object.name_any());
            let changed = if holds(&object) {
                holding.insert(key)
            } else {
                holding.remove(&key)
            };
            if changed {
                tx.send_replace(holding.len());
            }
        });
        Self { count, task }
    }

    /// How many hold now.
    pub fn count(&self) -> usize {
        *self.count.borrow()
    }

    /// Waits until at least `n` hold; `false` when `within` passed first.
    pub async fn wait_for(&mut self, n: usize, within: Duration) -> bool {
        tokio::time::timeout(within, self.count.wait_for(|c| *c >= n))
            .await
            .is_ok_and(|r| r.is_ok())
    }
}

impl Drop for Counter {
    fn drop(&mut self) {
        self.task.abort();
    }
}
