//! Metrics a controller-runtime operator exposes besides its controllers', so Go-era dashboards
//! and alerts find them: the process collector of client_golang ([`process`]) and client-go's
//! REST client metrics ([`rest_client`]), a tower layer on the kube client; and, with
//! `--shards`, the shards this replica holds ([`shards`]).

pub(crate) mod process;
pub(crate) mod rest_client;
pub(crate) mod shards;
