//! What the user has chosen: benchmark, pair, K, level and mode, resolved
//! against the audit's results.

use crate::analysis::passkt::Mode;
use crate::analysis::{Audit, PairNames};

/// The user's current choices. `mode: None` is the preferred view (native
/// where a cell has native rollouts, else truncated).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Selection {
    pub bench: usize,
    pub pair: usize,
    pub k: usize,
    pub level: usize,
    pub mode: Option<Mode>,
}

impl Selection {
    /// `m`: preferred → native → truncated → preferred.
    pub fn next_mode(&mut self) {
        self.mode = match self.mode {
            None => Some(Mode::Native),
            Some(Mode::Native) => Some(Mode::Truncated),
            Some(Mode::Truncated) => None,
        };
    }

    pub fn mode_name(&self) -> &'static str {
        self.mode.map_or("preferred", Mode::name)
    }

    /// The selected K and level values.
    pub fn k_level(&self, a: &Audit) -> Option<(u64, u32)> {
        Some((*a.pass.ks.get(self.k)?, *a.settings.levels.get(self.level)?))
    }
}

/// Current benchmark and pair.
pub fn current(a: &Audit, sel: &Selection) -> (Option<String>, Option<PairNames>) {
    let b = a.benchmarks();
    let bench = b.get(sel.bench % b.len().max(1)).cloned();
    let pair = bench.as_ref().and_then(|bn| {
        let ps = a.pairs_of(bn);
        (!ps.is_empty()).then(|| ps[sel.pair % ps.len()].clone())
    });
    (bench, pair)
}
