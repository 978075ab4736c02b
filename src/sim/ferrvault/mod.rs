//! A FerrVault server simulator.
