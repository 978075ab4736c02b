//! The FerrVault HTTP client.
