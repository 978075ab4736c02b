//! Who is asking and what they may do: users from bearer tokens and impersonation
//! ([`users`]), the RBAC authorizer over the stored Roles and bindings ([`rbac`]), and the
//! review APIs built on them ([`reviews`]: `SelfSubjectAccessReview`,
//! `SubjectAccessReview`, `SelfSubjectRulesReview`, `TokenReview`, `SelfSubjectReview`).
//!
//! The simulator answers the reviews exactly as a real server does; it authorizes
//! requests only when started with `enforce_rbac` ([`enforce`], see the caveats in
//! [`super`]).

pub mod enforce;
pub mod rbac;
pub mod reviews;
pub mod users;
