//! The `ferrvault.com/v1alpha1` custom resource types.
