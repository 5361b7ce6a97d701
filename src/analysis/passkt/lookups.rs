//! Lookups on the report, so renderers never search it by hand.

use super::*;

/// Lookups on the report, so renderers never search it by hand.
/// `mode: None` asks for the preferred mode (native where it exists).
impl PassReport {
    pub fn cell(
        &self,
        bench: &str,
        run: &str,
        k: u64,
        level: u32,
        mode: Option<Mode>,
    ) -> Option<&PassCell> {
        let rows = self.cells.iter().filter(|c| {
            c.benchmark == bench
                && c.run == run
                && c.k == k
                && c.level == level
                && mode.is_none_or(|m| c.mode == m)
        });
        preferred(rows, |c| c.mode)
    }

    pub fn advantage_at(
        &self,
        pair: (&str, &str, &str),
        k: u64,
        level: u32,
        mode: Option<Mode>,
    ) -> Option<&Advantage> {
        let (bench, base, rl) = pair;
        let rows = self.advantage.iter().filter(|a| {
            a.benchmark == bench
                && a.base == base
                && a.rl == rl
                && a.k == k
                && a.level == level
                && mode.is_none_or(|m| a.mode == m)
        });
        preferred(rows, |a| a.mode)
    }

    /// The §4.2 families (one per pair) of which no cell can reach an
    /// adjusted p below `alpha`, whatever the data: every live cell's
    /// `p_adjusted_floor` is at `alpha` or above (with Holm, m × 2/(B+1);
    /// otherwise 2/(B+1)). In the advantage rows' order.
    pub fn families_out_of_reach(
        &self,
        adjust: crate::analysis::multiplicity::Adjust,
        alpha: f64,
    ) -> Vec<OutOfReach<'_>> {
        let mut out: Vec<OutOfReach> = Vec::new();
        let mut seen: Vec<(&str, &str, &str)> = Vec::new();
        for a in &self.advantage {
            let key = (a.benchmark.as_str(), a.base.as_str(), a.rl.as_str());
            if seen.contains(&key) {
                continue;
            }
            seen.push(key);
            let floors: Vec<f64> = self
                .advantage
                .iter()
                .filter(|b| (b.benchmark.as_str(), b.base.as_str(), b.rl.as_str()) == key)
                .filter_map(|b| b.test.p_adjusted_floor)
                .collect();
            let Some(p_floor) = floors.iter().copied().reduce(f64::min) else {
                continue;
            };
            if p_floor >= alpha {
                let cells = floors.len();
                let per = match adjust {
                    crate::analysis::multiplicity::Adjust::Holm => cells,
                    _ => 1,
                };
                out.push(OutOfReach {
                    first: a,
                    cells,
                    p_floor,
                    resamples_needed: crate::analysis::multiplicity::resamples_to_reach(per, alpha),
                });
            }
        }
        out
    }

    /// Runs with evaluation cells on a benchmark, in name order.
    pub fn runs(&self, bench: &str) -> Vec<&str> {
        let s: BTreeSet<&str> = self
            .cells
            .iter()
            .filter(|c| c.benchmark == bench)
            .map(|c| c.run.as_str())
            .collect();
        s.into_iter().collect()
    }

    pub fn upper_at(&self, bench: &str, level: u32) -> Option<&UpperBound> {
        self.upper
            .iter()
            .find(|u| u.benchmark == bench && u.level == level)
    }

    pub fn mode_gaps_at<'a>(
        &'a self,
        bench: &'a str,
        k: u64,
        level: u32,
    ) -> impl Iterator<Item = &'a ModeGap> + 'a {
        self.mode_gap
            .iter()
            .filter(move |g| g.benchmark == bench && g.k == k && g.level == level)
    }

    /// (t, Pass@(K,t)) of a run's truncated curve.
    pub fn curve_of(&self, bench: &str, run: &str, k: u64) -> Vec<(f64, f64)> {
        self.curve
            .iter()
            .filter(|c| c.benchmark == bench && c.run == run && c.k == k)
            .filter_map(|c| c.value.map(|v| (c.t as f64, v)))
            .collect()
    }

    /// (t, U(t)) of a benchmark's upper-bound curve.
    pub fn upper_curve_of(&self, bench: &str) -> Vec<(f64, f64)> {
        self.upper_curve
            .iter()
            .filter(|u| u.benchmark == bench)
            .map(|u| (u.t as f64, u.value))
            .collect()
    }
}
