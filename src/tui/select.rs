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
    /// Budget: a task category to restrict the grid to (its index among
    /// the benchmark's categories); `None`: every task.
    pub category: Option<usize>,
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

/// The selected category's name, if one is selected and exists.
pub fn category(a: &Audit, sel: &Selection) -> Option<String> {
    let (bench, _) = current(a, sel);
    let cats = a.categories.categories(&bench?);
    sel.category
        .and_then(|i| cats.get(i).map(|c| c.to_string()))
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
