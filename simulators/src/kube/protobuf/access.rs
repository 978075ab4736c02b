//! `authorization.k8s.io/v1` and `authentication.k8s.io/v1` reviews (what `kubectl auth
//! can-i` and `kubectl auth whoami` send).
//!
//! Field lists generated from k8s-pb's messages; JSON names checked against k8s-openapi.

use super::convert::{ConvertError, FieldForm, JsonForm, messages};
use k8s_pb::api::{authentication::v1 as authentication, authorization::v1 as authorization};
use serde_json::Value;

messages! {
    authorization::SelfSubjectAccessReview { metadata, spec, status }
    authorization::SubjectAccessReview { metadata, spec, status }
    authorization::LocalSubjectAccessReview { metadata, spec, status }
    authorization::SelfSubjectRulesReview { metadata, spec, status }
    authentication::TokenReview { metadata, spec, status }
    authentication::SelfSubjectReview { metadata, status }
    authorization::SelfSubjectAccessReviewSpec { resource_attributes, non_resource_attributes }
    authorization::SubjectAccessReviewStatus { allowed: keep, denied, reason, evaluation_error }
    authorization::SubjectAccessReviewSpec {
        resource_attributes, non_resource_attributes, user, groups, extra, uid
    }
    authorization::SelfSubjectRulesReviewSpec { namespace }
    authorization::SubjectRulesReviewStatus {
        resource_rules, non_resource_rules, incomplete: keep, evaluation_error
    }
    authentication::TokenReviewSpec { token, audiences }
    authentication::TokenReviewStatus { authenticated, user, audiences, error }
    authentication::SelfSubjectReviewStatus { user_info }
    authorization::ResourceAttributes {
        namespace, verb, group, version, resource, subresource, name, field_selector, label_selector
    }
    authorization::NonResourceAttributes { path, verb }
    authorization::ResourceRule { verbs, api_groups, resources, resource_names }
    authorization::NonResourceRule { verbs, non_resource_ur_ls: "nonResourceURLs" }
    authentication::UserInfo { username, uid, groups, extra }
    authorization::FieldSelectorAttributes { raw_selector, requirements }
    authorization::LabelSelectorAttributes { raw_selector, requirements }
}

/// `ExtraValue` is a list of strings in JSON (a message with `items` on the wire).
macro_rules! extra_value {
    ($($ty:path),*) => {
        $(impl JsonForm for $ty {
            fn to_json(&self) -> Value {
                self.items.to_field(true).unwrap_or_else(|| Value::Array(Vec::new()))
            }

            fn from_json(v: &Value) -> Result<Self, ConvertError> {
                Ok(Self { items: FieldForm::from_field(Some(v))? })
            }
        })*
    };
}

extra_value!(authorization::ExtraValue, authentication::ExtraValue);
