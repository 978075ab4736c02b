//! The Kubernetes API simulator against kube-rs, kube-runtime and kubectl.

mod controller;
mod crud;
mod faults;
mod gc;
mod http;
mod immutable;
mod kube_sim_support;
mod kubectl;
mod kubectl_auth;
mod kubectl_create;
mod kubectl_events;
mod kubectl_openapi;
mod kubectl_scale;
mod kubectl_schema;
mod kubectl_support;
mod kubectl_tables;
mod managed_fields;
mod protobuf;
mod rbac_enforcement;
mod scale;
mod schema;
mod strategies;
mod watch;
