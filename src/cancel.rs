//! Cancelling background work that a newer request made stale.
//!
//! A [`Cancel`] token belongs to one job; [`supersede`] cancels every token
//! handed out before it. Loading checks its token per chunk and the
//! bootstrap per block of resamples, so a newer request does not wait for
//! an old audit. The default token (headless runs, tests) is never
//! cancelled. Tokens are `Copy`, so they ride along in settings.

use std::sync::atomic::{AtomicU64, Ordering};

/// Generation of the newest job; tokens of older generations are cancelled.
static LATEST: AtomicU64 = AtomicU64::new(0);

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Cancel {
    /// 0: never cancelled.
    generation: u64,
}

impl Cancel {
    /// A token for a job starting now (cancelled by the next [`supersede`]).
    pub fn begin() -> Cancel {
        Cancel {
            generation: LATEST.load(Ordering::SeqCst),
        }
    }
    pub fn is_cancelled(self) -> bool {
        self.generation != 0 && LATEST.load(Ordering::SeqCst) != self.generation
    }
}

/// Cancels every job started so far; the next [`Cancel::begin`] is live.
pub fn supersede() {
    LATEST.fetch_add(1, Ordering::SeqCst);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_newer_request_cancels_older_tokens_only() {
        supersede();
        let old = Cancel::begin();
        assert!(!old.is_cancelled());
        supersede();
        let new = Cancel::begin();
        assert!(old.is_cancelled());
        assert!(!new.is_cancelled());
        assert!(!Cancel::default().is_cancelled());
    }
}
