//! The kinds with a protobuf form: every built-in kind the simulator serves (objects and
//! lists), `Status`, `DeleteOptions` and `autoscaling/v1` `Scale`.

use super::convert::{ConvertError, JsonForm};
use k8s_pb::{
    api::{
        apps::v1 as apps, authentication::v1 as authentication, authorization::v1 as authorization,
        autoscaling::v1 as autoscaling, batch::v1 as batch, coordination::v1 as coordination,
        core::v1 as core, events::v1 as events, policy::v1 as policy, rbac::v1 as rbac,
    },
    apimachinery::pkg::apis::meta::v1 as meta,
};
use prost::Message;
use serde_json::Value;

/// Decoding and encoding of one kind's message.
#[derive(Debug, Clone, Copy)]
pub struct Codec {
    /// Message bytes → JSON (without apiVersion and kind).
    pub decode: fn(&[u8]) -> Result<Value, prost::DecodeError>,
    /// JSON → message bytes.
    pub encode: fn(&Value) -> Result<Vec<u8>, ConvertError>,
}

fn decode<M: Message + Default + JsonForm>(raw: &[u8]) -> Result<Value, prost::DecodeError> {
    M::decode(raw).map(|m| m.to_json())
}

fn encode<M: Message + JsonForm>(obj: &Value) -> Result<Vec<u8>, ConvertError> {
    M::from_json(obj).map(|m| m.encode_to_vec())
}

macro_rules! kinds {
    ($($api_version:literal $module:ident { $($kind:ident),* $(,)? })*) => {
        /// The codec of `kind` at `api_version`, if it has a protobuf form. `DeleteOptions`
        /// is read at any version, as clients send it with the version of the resource.
        pub fn codec(api_version: &str, kind: &str) -> Option<Codec> {
            if kind == "DeleteOptions" {
                return Some(codec_of::<meta::DeleteOptions>());
            }
            match (api_version, kind) {
                $($(($api_version, stringify!($kind)) => Some(codec_of::<$module::$kind>()),)*)*
                _ => None,
            }
        }
    };
}

fn codec_of<M: Message + Default + JsonForm>() -> Codec {
    Codec {
        decode: decode::<M>,
        encode: encode::<M>,
    }
}

kinds! {
    "v1" core {
        Namespace, NamespaceList, Secret, SecretList, ConfigMap, ConfigMapList, ServiceAccount,
        ServiceAccountList, Service, ServiceList, Pod, PodList, Event, EventList,
    }
    "v1" meta { Status }
    "apps/v1" apps {
        Deployment, DeploymentList, StatefulSet, StatefulSetList, DaemonSet, DaemonSetList,
        ReplicaSet, ReplicaSetList,
    }
    "batch/v1" batch { Job, JobList }
    "policy/v1" policy { PodDisruptionBudget, PodDisruptionBudgetList }
    "autoscaling/v1" autoscaling { Scale }
    "rbac.authorization.k8s.io/v1" rbac {
        Role, RoleList, RoleBinding, RoleBindingList, ClusterRole, ClusterRoleList,
        ClusterRoleBinding, ClusterRoleBindingList,
    }
    "coordination.k8s.io/v1" coordination { Lease, LeaseList }
    "events.k8s.io/v1" events { Event, EventList }
    "authorization.k8s.io/v1" authorization {
        SelfSubjectAccessReview, SubjectAccessReview, LocalSubjectAccessReview, SelfSubjectRulesReview,
    }
    "authentication.k8s.io/v1" authentication { TokenReview, SelfSubjectReview }
}
