//! The answer a flight leaves for the rest of its wave (see the parent module): a success, kept
//! for the named callers that did not get it yet.

use std::{
    collections::HashSet,
    sync::{Arc, Mutex, PoisonError},
};

use crate::ferrvault::{
    FerrVaultError,
    reveal::{KeySelector, Revealed},
};

/// A successful answer kept for the rest of its wave.
pub(super) struct Answer {
    revealed: Revealed,
    /// The selector it was requested with.
    keys: KeySelector,
    /// The named callers it served.
    served: Mutex<HashSet<String>>,
}

impl Answer {
    /// What a flight requested with `keys` leaves for its wave: its `outcome` when it succeeded
    /// and named `callers` joined it (they have it already); else nothing.
    pub(super) fn keep(
        outcome: &Result<Revealed, FerrVaultError>,
        keys: &KeySelector,
        callers: &HashSet<String>,
    ) -> Option<Arc<Self>> {
        let Ok(revealed) = outcome else {
            return None;
        };
        (!callers.is_empty()).then(|| {
            Arc::new(Self {
                revealed: revealed.clone(),
                keys: keys.clone(),
                served: Mutex::new(callers.clone()),
            })
        })
    }

    /// `caller`'s slice, if the answer covers `want` and has not served `caller` yet (from now
    /// on it has).
    pub(super) fn serve(&self, caller: &str, want: &KeySelector) -> Option<Revealed> {
        if !self.keys.covers(want) {
            return None;
        }
        let mut served = self.served.lock().unwrap_or_else(PoisonError::into_inner);
        served
            .insert(caller.to_owned())
            .then(|| self.revealed.slice_for(want))
    }
}
