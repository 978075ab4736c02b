//! A small Kubernetes controller runtime on ractor, with no FerrVault knowledge.
#![deny(missing_docs)]
