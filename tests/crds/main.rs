//! The custom resource definitions: schema, CEL rules, the chart's generated copies, the samples.

mod bounds;
mod cel;
mod client_cert_cel;
mod cluster_cel;
mod cluster_secret_cel;
mod drift;
mod go_manifests;
mod readme_manifests;
mod samples;
mod schema;
