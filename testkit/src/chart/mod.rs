//! The Helm chart as the chart tests and the tenant tests read it: rendered by the real `helm`
//! ([`render`]), with the tools `.ci/install-tools` installs ([`tools`]).

pub mod render;
pub mod tools;
