//! The hints already taken, so that a captured hint sent again within its window is refused.
//!
//! # Guarantees
//! - A MAC is remembered until its timestamp is out of the window
//!   ([`WINDOW`](super::signature::WINDOW)): past then, the signature check refuses it as stale,
//!   so forgetting it lets nothing through.
//! - At most [`SEEN_CAPACITY`] MACs are held (32 bytes and a timestamp each, about 400 KiB at
//!   most). The endpoint's bucket admits fewer hints than that in two windows (the longest a MAC
//!   can stay), so the cache is never full of live MACs; if it were, a new hint is refused
//!   (answered as rate-limited) rather than one remembered hint forgotten.
//!
//! Pure: the caller passes the time.

use std::collections::HashMap;

use super::{
    bucket::{HINT_BURST, HINTS_PER_SECOND},
    signature::{TAG_LEN, Verified, WINDOW},
};

/// The most MACs remembered at once.
pub(crate) const SEEN_CAPACITY: usize = 16_384;

// Two windows of hints at the bucket's rate, plus its burst, fit: a full cache of live MACs
// cannot happen under the bucket.
const _: () = assert!((2 * WINDOW.as_secs()) as f64 * HINTS_PER_SECOND + HINT_BURST < SEEN_CAPACITY as f64);

/// Why a verified hint is not taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unseen {
    /// Its MAC was taken before, within the window.
    Replayed,
    /// The cache is full of live MACs (cannot happen under the bucket).
    Full,
}

/// The MACs taken within the window, with their timestamps (Unix seconds).
#[derive(Debug, Default)]
pub(crate) struct SeenSignatures {
    seen: HashMap<[u8; TAG_LEN], i64>,
}

impl SeenSignatures {
    /// Takes `hint` at `now` (Unix seconds), remembering its MAC.
    ///
    /// # Errors
    /// [`Unseen::Replayed`] when its MAC was taken before and is still remembered;
    /// [`Unseen::Full`] when no room is left.
    pub(crate) fn take(&mut self, hint: &Verified, now: i64) -> Result<(), Unseen> {
        if self.seen.contains_key(&hint.tag) {
            return Err(Unseen::Replayed);
        }
        if self.seen.len() >= SEEN_CAPACITY {
            let window = WINDOW.as_secs().cast_signed();
            self.seen
                .retain(|_, sent_at| now.saturating_sub(*sent_at) <= window);
            if self.seen.len() >= SEEN_CAPACITY {
                return Err(Unseen::Full);
            }
        }
        self.seen.insert(hint.tag, hint.sent_at);
        Ok(())
    }

    /// How many MACs are remembered.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.seen.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hint(n: u32, sent_at: i64) -> Verified {
        let mut tag = [0; TAG_LEN];
        tag[..4].copy_from_slice(&n.to_be_bytes());
        Verified { tag, sent_at }
    }

    #[test]
    fn seen_signatures_should_refuse_a_mac_taken_before() {
        let mut seen = SeenSignatures::default();
        assert_eq!(seen.take(&hint(1, 100), 100), Ok(()));
        assert_eq!(seen.take(&hint(1, 100), 101), Err(Unseen::Replayed));
        assert_eq!(seen.take(&hint(2, 100), 101), Ok(()));
    }

    #[test]
    fn seen_signatures_should_forget_only_macs_out_of_the_window_when_full() {
        let mut seen = SeenSignatures::default();
        let capacity = u32::try_from(SEEN_CAPACITY).expect("fits");
        for n in 0..capacity {
            seen.take(&hint(n, 0), 0).expect("room");
        }
        assert_eq!(seen.take(&hint(capacity, 0), 0), Err(Unseen::Full));
        let later = WINDOW.as_secs().cast_signed() + 1;
        assert_eq!(seen.take(&hint(capacity, later), later), Ok(()));
        assert_eq!(seen.len(), 1);
    }
}
