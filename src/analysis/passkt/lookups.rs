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

    /// (t, Pass@(K,t)) of a run's truncated curve, as a line: its
    /// [`vertices`] (a flat tail by its end), t where the value is defined.
    pub fn curve_of(&self, bench: &str, run: &str, k: u64) -> Vec<(f64, f64)> {
        self.run_curve(bench, run, k, false)
    }

    /// [`PassReport::curve_of`] at every t (SPEC's rows), for a short curve
    /// drawn point by point.
    pub fn curve_points_of(&self, bench: &str, run: &str, k: u64) -> Vec<(f64, f64)> {
        self.run_curve(bench, run, k, true)
    }

    fn run_curve(&self, bench: &str, run: &str, k: u64, every: bool) -> Vec<(f64, f64)> {
        let c = self
            .curve
            .iter()
            .find(|c| c.benchmark == bench && c.run == run && c.k == k);
        let Some(c) = c else { return Vec::new() };
        let points: Box<dyn Iterator<Item = (u32, Option<f64>)>> = match every {
            true => Box::new(every_t(&c.values, c.until)),
            false => Box::new(vertices(&c.values, c.until)),
        };
        points
            .filter_map(|(t, v)| v.map(|v| (t as f64, v)))
            .collect()
    }

    /// (t, U(t)) of a benchmark's upper-bound curve, as a line
    /// ([`vertices`]), or at every t.
    pub fn upper_curve_of(&self, bench: &str, every: bool) -> Vec<(f64, f64)> {
        let Some(u) = self.upper_curve.iter().find(|u| u.benchmark == bench) else {
            return Vec::new();
        };
        let points: Box<dyn Iterator<Item = (u32, f64)>> = match every {
            true => Box::new(every_t(&u.values, u.until)),
            false => Box::new(vertices(&u.values, u.until)),
        };
        points.map(|(t, v)| (t as f64, v)).collect()
    }

    /// The largest t at which one of a benchmark's curves or its bound U(t)
    /// may still change: past it each is flat to
    /// [`PassReport::curve_until`].
    pub fn curve_last_change(&self, bench: &str) -> Option<u32> {
        let curves = self.curve.iter().filter(|c| c.benchmark == bench);
        let upper = self.upper_curve.iter().filter(|u| u.benchmark == bench);
        let held = curves
            .map(|c| c.values.len())
            .chain(upper.map(|u| u.values.len()));
        held.max().map(|n| n as u32)
    }

    /// A benchmark's curves that end in a long flat tail — over the last
    /// three quarters of its largest full budget (a budget of 3,000 turns,
    /// every rollout done by turn 6; 200 turns, every task solved by 40):
    /// (the last change, the largest full budget). Figures and charts show
    /// such curves so that the turns where they move are not squeezed into
    /// their first sliver.
    pub fn curve_flat_tail(&self, bench: &str) -> Option<(u32, u32)> {
        let (last, until) = (
            self.curve_last_change(bench)?.max(1),
            self.curve_until(bench)?,
        );
        (until / 4 > last).then_some((last, until))
    }

    /// The largest t of a benchmark's curves (its largest full budget).
    pub fn curve_until(&self, bench: &str) -> Option<u32> {
        self.curve
            .iter()
            .filter(|c| c.benchmark == bench)
            .map(|c| c.until)
            .max()
    }
}
