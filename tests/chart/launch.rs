//! The operator's command line as Kubernetes would start it from the rendered Deployment.
//!
//! The image's `ENTRYPOINT` (from the `Dockerfile`) supplies the binary and its subcommand, the chart
//! supplies `args` and `env`. [`ContainerLaunch`] joins them so a test can start the real binary
//! exactly as the kubelet would, optionally rebinding ports with [`ContainerLaunch::with_flag`].

use k8s_openapi::api::{apps::v1::Deployment, core::v1::Container};

use super::tools::repo_root;

/// The pod the container runs in, for resolving downward-API environment variables.
pub struct PodIdentity {
    /// `metadata.name` of the pod.
    pub name: String,
    /// `metadata.namespace` of the pod.
    pub namespace: String,
}

/// A flag on the command line: `--name=value`, `--name value`, or a bare boolean `--name`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Flag {
    /// Name without the leading `--`.
    pub name: String,
    /// The value, or `None` for a bare boolean flag.
    pub value: Option<String>,
}

/// Argument vector (after the binary) and environment of the operator container.
#[derive(Debug, Clone)]
pub struct ContainerLaunch {
    /// Entrypoint arguments after the binary (the subcommand), then the container's `args`.
    pub argv: Vec<String>,
    /// The container's environment, downward-API references resolved.
    pub env: Vec<(String, String)>,
}

impl ContainerLaunch {
    /// The launch of the container named `manager` in `deployment`, run as `pod`.
    ///
    /// # Errors
    /// A missing container, a `command` override (the chart relies on the image entrypoint), or an
    /// environment source other than a literal or `metadata.name`/`metadata.namespace`.
    pub fn from_deployment(deployment: &Deployment, pod: &PodIdentity) -> Result<Self, String> {
        let container = manager_container(deployment).ok_or("no container named manager")?;
        if container.command.is_some() {
            return Err("the container overrides the image entrypoint with `command`".into());
        }
        let mut argv = entrypoint_arguments()?;
        argv.extend(container.args.clone().unwrap_or_default());
        let mut env = Vec::new();
        for var in container.env.clone().unwrap_or_default() {
            let value = match (var.value, var.value_from) {
                (Some(value), None) => value,
                (None, Some(source)) => match source.field_ref.map(|field| field.field_path).as_deref() {
                    Some("metadata.name") => pod.name.clone(),
                    Some("metadata.namespace") => pod.namespace.clone(),
                    other => return Err(format!("env {}: unsupported source {other:?}", var.name)),
                },
                (None, None) => String::new(),
                (Some(_), Some(_)) => return Err(format!("env {}: both value and valueFrom", var.name)),
            };
            env.push((var.name, value));
        }
        Ok(Self { argv, env })
    }

    /// The subcommand: the first argument when it is not a flag.
    pub fn subcommand(&self) -> Option<&str> {
        self.argv
            .first()
            .map(String::as_str)
            .filter(|arg| !arg.starts_with('-'))
    }

    /// Every flag after the subcommand, in order. A token after `--name` that is not itself a flag
    /// is taken as its value.
    pub fn flags(&self) -> Vec<Flag> {
        let skip = usize::from(self.subcommand().is_some());
        let mut flags: Vec<Flag> = Vec::new();
        for arg in &self.argv[skip..] {
            match arg.strip_prefix("--") {
                Some(flag) => {
                    let (name, value) = match flag.split_once('=') {
                        Some((name, value)) => (name, Some(value.to_owned())),
                        None => (flag, None),
                    };
                    flags.push(Flag {
                        name: name.to_owned(),
                        value,
                    });
                }
                None => match flags.last_mut() {
                    Some(Flag {
                        value: value @ None, ..
                    }) => *value = Some(arg.clone()),
                    _ => flags.push(Flag {
                        name: String::new(),
                        value: Some(arg.clone()),
                    }),
                },
            }
        }
        flags
    }

    /// The value of `--name`: `Some(Some(v))` for a valued flag, `Some(None)` for a bare one.
    pub fn flag(&self, name: &str) -> Option<Option<String>> {
        self.flags()
            .into_iter()
            .find(|flag| flag.name == name)
            .map(|flag| flag.value)
    }

    /// The environment variable `name`.
    pub fn env_var(&self, name: &str) -> Option<&str> {
        self.env
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }

    /// This launch with `--name=value` replacing every occurrence of `--name`, or appended when absent
    /// (e.g. to bind a rendered port on 127.0.0.1:0 in a test).
    #[must_use]
    pub fn with_flag(mut self, name: &str, value: &str) -> Self {
        let bare = format!("--{name}");
        let assigned = format!("--{name}=");
        let mut rebuilt = Vec::with_capacity(self.argv.len() + 1);
        let mut tokens = self.argv.into_iter().peekable();
        let mut replaced = false;
        while let Some(token) = tokens.next() {
            if token == bare || token.starts_with(&assigned) {
                // `--name value`: the value token goes with the flag it belongs to.
                if token == bare && tokens.peek().is_some_and(|next| !next.starts_with('-')) {
                    tokens.next();
                }
                if !replaced {
                    rebuilt.push(format!("{assigned}{value}"));
                    replaced = true;
                }
            } else {
                rebuilt.push(token);
            }
        }
        if !replaced {
            rebuilt.push(format!("{assigned}{value}"));
        }
        self.argv = rebuilt;
        self
    }
}

/// The container named `manager` in the Deployment's pod template.
pub fn manager_container(deployment: &Deployment) -> Option<&Container> {
    let pod_spec = deployment.spec.as_ref()?.template.spec.as_ref()?;
    pod_spec
        .containers
        .iter()
        .find(|container| container.name == "manager")
}

/// The image `ENTRYPOINT` from the repository's `Dockerfile`, exec form, without the binary path.
///
/// # Errors
/// No `ENTRYPOINT`, or one not in JSON exec form.
pub fn entrypoint_arguments() -> Result<Vec<String>, String> {
    let dockerfile = std::fs::read_to_string(repo_root().join("Dockerfile"))
        .map_err(|error| format!("read Dockerfile: {error}"))?;
    let line = dockerfile
        .lines()
        .rev()
        .find_map(|line| line.trim().strip_prefix("ENTRYPOINT "))
        .ok_or("the Dockerfile has no ENTRYPOINT")?;
    let exec: Vec<String> =
        serde_json::from_str(line).map_err(|error| format!("ENTRYPOINT is not exec form: {error}"))?;
    Ok(exec.into_iter().skip(1).collect())
}
