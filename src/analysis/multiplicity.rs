//! SPEC §4.2: many cells at once. For one (benchmark, base, rl) family —
//! its advantage cells of both modes, every K × level — joint bootstrap
//! replicates (one draw of the family's task union per resample) give each
//! cell a standard error and a bootstrap p-value; the family-wise
//! adjustment (single-step max-|t| by default, Holm, Benjamini–Hochberg or
//! none), the minimum detectable effect, a verdict and, for inconclusive
//! cells, how many tasks would resolve them.

use super::stats::quantile_sorted;

/// `--adjust`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Adjust {
    /// Single-step max-|t| (Romano–Wolf): simultaneous intervals too.
    #[default]
    MaxT,
    /// Holm's step-down.
    Holm,
    /// Benjamini–Hochberg step-up, monotone.
    Bh,
    None,
}

impl Adjust {
    pub fn name(self) -> &'static str {
        match self {
            Adjust::MaxT => "maxt",
            Adjust::Holm => "holm",
            Adjust::Bh => "bh",
            Adjust::None => "none",
        }
    }
}

/// z at 80% power.
pub const Z_POWER: f64 = 0.8416;
/// z_0.975 + z_0.80, for the minimum detectable effect without max-|t|.
pub const Z_TWO_SIDED_POWER: f64 = 2.8016;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Degenerate,
    Ahead,
    Flip,
    Equivalent,
    Inconclusive,
}

impl Verdict {
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Degenerate => "degenerate",
            Verdict::Ahead => "ahead",
            Verdict::Flip => "flip",
            Verdict::Equivalent => "equivalent",
            Verdict::Inconclusive => "inconclusive",
        }
    }
}

/// The §4.2 figures of one advantage cell.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CellTest {
    pub se: Option<f64>,
    pub p_value: Option<f64>,
    /// The smallest `p_value` its B_c replicates allow, 2/(B_c+1) (not in
    /// report.json: it marks a p at it `≤`).
    pub p_value_floor: Option<f64>,
    pub p_adjusted: Option<f64>,
    /// The smallest `p_adjusted` the resamples allow this cell: 2/(B_c+1)
    /// for its B_c replicates, and with Holm its family's m live cells
    /// times the smallest of those. One at it saw no resample cross 0 (or
    /// with Holm, its family's smallest did not); more resamples would tell
    /// how far below.
    pub p_adjusted_floor: Option<f64>,
    pub ci_simultaneous: Option<(f64, f64)>,
    pub significant_flip_adjusted: bool,
    pub mde: Option<f64>,
    pub verdict: Verdict,
    pub tasks_needed: Option<u64>,
}

impl CellTest {
    pub const DEGENERATE: CellTest = CellTest {
        se: None,
        p_value: None,
        p_value_floor: None,
        p_adjusted: None,
        p_adjusted_floor: None,
        ci_simultaneous: None,
        significant_flip_adjusted: false,
        mde: None,
        verdict: Verdict::Degenerate,
        tasks_needed: None,
    };
}

/// Is an adjusted p at the floor the resamples allow (a floor below 1: at
/// 1, "at most 1" says nothing)?
pub fn at_floor(p_adjusted: Option<f64>, floor: Option<f64>) -> bool {
    matches!((p_adjusted, floor), (Some(p), Some(f)) if p <= f && f < 1.0)
}

/// One cell of a family, as the tests need it.
pub struct CellInput<'a> {
    /// Δ̂ (§2.1).
    pub delta: f64,
    /// Its own bootstrap was degenerate: outside the family.
    pub degenerate: bool,
    /// Joint replicates, one per resample (NaN: the resample drew none of
    /// the cell's tasks).
    pub replicates: &'a [f64],
    /// Tasks Δ̂ averages over.
    pub tasks: usize,
}

/// A replicate with |Δ*| ≤ 1e-12 counts as 0.
fn zeroed(x: f64) -> f64 {
    if x.abs() <= 1e-12 {
        0.0
    } else {
        x
    }
}

/// Standard deviation with ddof 1.
fn sd(v: &[f64]) -> Option<f64> {
    if v.len() < 2 {
        return None;
    }
    let m = v.iter().sum::<f64>() / v.len() as f64;
    let ss: f64 = v.iter().map(|x| (x - m).powi(2)).sum();
    Some((ss / (v.len() - 1) as f64).sqrt())
}

/// Two-sided bootstrap p-value of H0: Δ = 0 (§4.2), from replicates with
/// |x| ≤ 1e-12 already counted as 0.
pub fn p_value(reps: &[f64]) -> f64 {
    let n = reps.len() as f64;
    let a = (1.0 + reps.iter().filter(|&&x| x <= 0.0).count() as f64) / (n + 1.0);
    let b = (1.0 + reps.iter().filter(|&&x| x >= 0.0).count() as f64) / (n + 1.0);
    (2.0 * a.min(b)).min(1.0)
}

/// The smallest [`p_value`] B replicates can give (no replicate on the
/// far side of 0): 2/(B+1), in `p_value`'s own arithmetic, so a p-value at
/// it compares equal.
pub fn p_floor(b: usize) -> f64 {
    (2.0 * ((1.0 + 0.0) / (b as f64 + 1.0))).min(1.0)
}

/// The smallest [`holm`] gives a family of m p-values none of which can be
/// below `p_min`: its smallest p is multiplied by m (and every adjusted p is
/// at least that one). In `holm`'s own arithmetic.
pub fn holm_floor(m: usize, p_min: f64) -> f64 {
    (m as f64 * p_min).min(1.0)
}

/// Resamples that let Holm over m p-values reach `alpha` at all: the
/// smallest B with m·2/(B+1) < alpha.
pub fn resamples_to_reach(m: usize, alpha: f64) -> usize {
    let b = (2.0 * m as f64 / alpha - 1.0).floor() as usize + 1;
    // Floating rounding: step to the exact boundary.
    (b.saturating_sub(2)..b + 2)
        .find(|&b| holm_floor(m, p_floor(b)) < alpha)
        .unwrap_or(b)
}

/// Holm's step-down adjustment (statsmodels `multipletests(method="holm")`).
pub fn holm(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| p[a].total_cmp(&p[b]));
    let mut out = vec![0.0; m];
    let mut running = 0.0f64;
    for (j, &i) in order.iter().enumerate() {
        running = running.max(((m - j) as f64 * p[i]).min(1.0));
        out[i] = running;
    }
    out
}

/// Benjamini–Hochberg step-up with monotone enforcement (statsmodels
/// `multipletests(method="fdr_bh")`).
pub fn bh(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| p[a].total_cmp(&p[b]));
    let mut out = vec![0.0; m];
    let mut running = 1.0f64;
    for (j, &i) in order.iter().enumerate().rev() {
        running = running.min((m as f64 / (j + 1) as f64 * p[i]).min(1.0));
        out[i] = running;
    }
    out
}

/// The §4.2 figures of every cell of one family. `resamples` is B; `e` the
/// equivalence margin as a fraction; `single_seed`: every run has at most
/// one seed (`tasks_needed` is given only then).
pub fn family_tests(
    cells: &[CellInput],
    resamples: usize,
    adjust: Adjust,
    e: f64,
    single_seed: bool,
) -> Vec<CellTest> {
    // Each live cell's finite replicates, zeroed near 0, and its se.
    struct Live {
        reps: Vec<f64>,
        se: f64,
        p: f64,
    }
    let live: Vec<Option<Live>> = cells
        .iter()
        .map(|c| {
            if c.degenerate {
                return None;
            }
            let reps: Vec<f64> = c
                .replicates
                .iter()
                .copied()
                .filter(|x| x.is_finite())
                .map(zeroed)
                .collect();
            let se = sd(&reps).filter(|s| *s > 0.0)?;
            let p = p_value(&reps);
            Some(Live { reps, se, p })
        })
        .collect();
    let idx: Vec<usize> = (0..cells.len()).filter(|&i| live[i].is_some()).collect();
    // The floor of each live cell's adjusted p: its own p's floor (max-|t|
    // takes the larger of p and a count over B + 1; Benjamini–Hochberg
    // never lowers a p), and with Holm m times the family's smallest.
    let own_floor = |i: usize| p_floor(live[i].as_ref().expect("live").reps.len());
    let family_floor = (adjust == Adjust::Holm)
        .then(|| idx.iter().map(|&i| own_floor(i)).reduce(f64::min))
        .flatten()
        .map(|p_min| holm_floor(idx.len(), p_min));
    // Adjusted p-values (and max-|t|'s critical value).
    let mut adjusted = vec![None; cells.len()];
    let mut q = None;
    match adjust {
        Adjust::MaxT => {
            // M_b over the cells with a replicate at b.
            let mut m_b: Vec<f64> = (0..resamples)
                .filter_map(|b| {
                    idx.iter()
                        .filter_map(|&i| {
                            let x = cells[i].replicates.get(b).copied()?;
                            x.is_finite().then(|| {
                                let l = live[i].as_ref().expect("live");
                                (zeroed(x) - cells[i].delta).abs() / l.se
                            })
                        })
                        .reduce(f64::max)
                })
                .collect();
            m_b.sort_by(f64::total_cmp);
            if !m_b.is_empty() {
                q = Some(quantile_sorted(&m_b, 0.95));
            }
            for &i in &idx {
                let l = live[i].as_ref().expect("live");
                let t = cells[i].delta.abs() / l.se;
                // #{b : M_b ≥ t} from the sorted M.
                let at_least = m_b.len() - m_b.partition_point(|&m| m < t);
                let p_max = (1.0 + at_least as f64) / (resamples as f64 + 1.0);
                adjusted[i] = Some(l.p.max(p_max));
            }
        }
        Adjust::Holm | Adjust::Bh | Adjust::None => {
            let ps: Vec<f64> = idx
                .iter()
                .map(|&i| live[i].as_ref().expect("live").p)
                .collect();
            let adj = match adjust {
                Adjust::Holm => holm(&ps),
                Adjust::Bh => bh(&ps),
                _ => ps,
            };
            for (&i, a) in idx.iter().zip(adj) {
                adjusted[i] = Some(a);
            }
        }
    }
    cells
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let Some(l) = &live[i] else {
                return CellTest::DEGENERATE;
            };
            let p_adj = adjusted[i].unwrap_or(1.0);
            let ci_simultaneous = q.map(|q| (c.delta - q * l.se, c.delta + q * l.se));
            let mde = match q {
                Some(q) => (q + Z_POWER) * l.se,
                None => Z_TWO_SIDED_POWER * l.se,
            };
            let mut sorted = l.reps.clone();
            sorted.sort_by(f64::total_cmp);
            let (lo90, hi90) = (
                quantile_sorted(&sorted, 0.05),
                quantile_sorted(&sorted, 0.95),
            );
            let verdict = if c.delta > 0.0 && p_adj < 0.05 {
                Verdict::Ahead
            } else if c.delta < 0.0 && p_adj < 0.05 {
                Verdict::Flip
            } else if lo90 > -e && hi90 < e {
                Verdict::Equivalent
            } else {
                Verdict::Inconclusive
            };
            let tasks_needed = (verdict == Verdict::Inconclusive && mde > e && single_seed)
                .then(|| (c.tasks as f64 * (mde / e).powi(2)).ceil() as u64);
            CellTest {
                se: Some(l.se),
                p_value: Some(l.p),
                p_value_floor: Some(own_floor(i)),
                p_adjusted: Some(p_adj),
                p_adjusted_floor: Some(family_floor.unwrap_or_else(|| own_floor(i))),
                ci_simultaneous,
                significant_flip_adjusted: c.delta < 0.0 && p_adj < 0.05,
                mde: Some(mde),
                verdict,
                tasks_needed,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holms_floor_is_what_holm_gives_p_values_at_theirs() {
        // 10,000 replicates all above 0: p = 2·(1 + 0)/(10,000 + 1).
        let reps = vec![0.5; 10_000];
        assert_eq!(p_value(&reps), 2.0 / 10_001.0);
        assert_eq!(p_floor(10_000), p_value(&reps));
        // Holm over 210 such p-values: each times 210 (the demo's contrasts
        // of a pair): 420/10,001 = 0.041995…; over 300, 600/10,001 > 0.05.
        let at = holm(&[p_floor(10_000); 210]);
        assert!(at.iter().all(|&p| p == holm_floor(210, p_floor(10_000))));
        assert!((holm_floor(210, p_floor(10_000)) - 420.0 / 10_001.0).abs() < 1e-15);
        assert!(holm_floor(300, p_floor(10_000)) > 0.05);
        // Below 0.05 needs m·2/(B+1) < 0.05, B ≥ 40·m: 8,400 for 210
        // (420/8,400 is exactly 0.05, not below it).
        assert_eq!(resamples_to_reach(210, 0.05), 8_400);
        assert_eq!(resamples_to_reach(1, 0.05), 40);
        // In exact arithmetic always 40·m; where m·2/(40m) rounds below
        // 0.05 (m = 300: 0.049999…), Holm here finds a p at the floor of
        // 40m − 1 resamples below 0.05, and the answer follows the program.
        for m in 1..2_000 {
            let b = resamples_to_reach(m, 0.05);
            assert!(b == 40 * m || b == 40 * m - 1, "{m}: {b}");
            assert!(holm_floor(m, p_floor(b)) < 0.05, "{m}: {b}");
            assert!(holm_floor(m, p_floor(b - 1)) >= 0.05, "{m}: {b}");
        }
        assert_eq!(resamples_to_reach(300, 0.05), 11_999);
        assert_eq!(holm_floor(5, 1.0), 1.0);
    }

    #[test]
    fn holm_and_bh_match_statsmodels() {
        // statsmodels.stats.multitest.multipletests(p, method=...)[1] for
        // p = [0.01, 0.04, 0.03, 0.005, 0.2]:
        //   holm   [0.04, 0.09, 0.09, 0.025, 0.2]
        //   fdr_bh [0.025, 0.05, 0.05, 0.025, 0.2]
        let p = [0.01, 0.04, 0.03, 0.005, 0.2];
        let close = |a: &[f64], b: &[f64]| a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-12);
        assert!(
            close(&holm(&p), &[0.04, 0.09, 0.09, 0.025, 0.2]),
            "{:?}",
            holm(&p)
        );
        assert!(
            close(&bh(&p), &[0.025, 0.05, 0.05, 0.025, 0.2]),
            "{:?}",
            bh(&p)
        );
    }

    #[test]
    fn each_cell_s_floor_is_what_its_replicates_and_the_method_allow() {
        // Three live cells of 9 resamples: the first all above 0 (its p is
        // its floor, 2/10), the second with one replicate missing (its
        // floor 2/9), the third crossing 0; one degenerate cell.
        let nan = f64::NAN;
        let a = [0.1, 0.2, 0.3, 0.1, 0.2, 0.3, 0.1, 0.2, 0.3];
        let b = [0.1, 0.2, nan, 0.1, 0.2, 0.3, 0.1, 0.2, 0.3];
        let c = [-0.1, 0.2, 0.3, -0.1, 0.2, 0.3, 0.1, 0.2, 0.3];
        fn cell(delta: f64, replicates: &[f64], degenerate: bool) -> CellInput<'_> {
            CellInput {
                delta,
                degenerate,
                replicates,
                tasks: 10,
            }
        }
        let cells = [
            cell(0.2, &a, false),
            cell(0.2, &b, false),
            cell(0.15, &c, false),
            cell(0.0, &a, true),
        ];
        for adjust in [Adjust::MaxT, Adjust::Bh, Adjust::None, Adjust::Holm] {
            let t = family_tests(&cells, 9, adjust, 0.05, true);
            let floors: Vec<Option<f64>> = t.iter().map(|t| t.p_adjusted_floor).collect();
            let want = if adjust == Adjust::Holm {
                // 3 live cells times the smallest floor, 2/10.
                vec![Some(0.6), Some(0.6), Some(0.6), None]
            } else {
                vec![Some(0.2), Some(2.0 / 9.0), Some(0.2), None]
            };
            assert_eq!(floors.len(), want.len());
            for (got, want) in floors.iter().zip(&want) {
                match (got, want) {
                    (Some(g), Some(w)) => assert!((g - w).abs() < 1e-15, "{adjust:?}: {g} {w}"),
                    _ => assert_eq!(got, want, "{adjust:?}"),
                }
            }
            // Each cell's own p has its own floor, 2/(B_c+1).
            let own: Vec<Option<f64>> = t.iter().map(|t| t.p_value_floor).collect();
            assert_eq!(own, [Some(0.2), Some(2.0 / 9.0), Some(0.2), None]);
            // No adjusted p below its floor.
            for x in &t[..3] {
                assert!(x.p_adjusted.unwrap() >= x.p_adjusted_floor.unwrap() - 1e-15);
            }
            let at: Vec<bool> = t
                .iter()
                .map(|x| at_floor(x.p_adjusted, x.p_adjusted_floor))
                .collect();
            match adjust {
                // p = 0.2, 2/9, 0.6 (3 of 9 replicates ≤ 0: 2·4/10).
                Adjust::None => assert_eq!(at, [true, true, false, false]),
                // Holm: 3·0.2 = 0.6 for the smallest, then max(0.6, 2·2/9),
                // max(0.6, 0.6): every cell at the family's floor.
                Adjust::Holm => assert_eq!(at, [true, true, true, false]),
                // BH: 0.6/3 ranks: min(0.6, 3/2·2/9 = 1/3, 0.6) = 1/3 for
                // the first two, above their floors.
                Adjust::Bh => {
                    assert!((t[0].p_adjusted.unwrap() - 1.0 / 3.0).abs() < 1e-15);
                    assert_eq!(at, [false, false, false, false]);
                }
                Adjust::MaxT => {}
            }
        }
        // A floor of 1 says nothing: not "at" it.
        assert!(!at_floor(Some(1.0), Some(1.0)));
    }

    #[test]
    fn p_values_count_both_tails() {
        // 3 of 9 replicates ≤ 0, 7 ≥ 0 (one is 0): a = 4/10, b = 8/10.
        let reps = [-0.2, -0.1, 0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6];
        assert!((p_value(&reps) - 0.8).abs() < 1e-12);
    }
}
