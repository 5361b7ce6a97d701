//! Statistics shared by every analysis: bootstrap settings and intervals
//! (percentile or BCa), the Wilson interval, numpy-style quantiles, and the
//! Pass@(K,T) estimators. The resampling itself is in `bootstrap`, which
//! builds on this module (never the other way round).

use statrs::distribution::{ContinuousCDF, Normal};

/// How intervals are computed (`--ci`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CiMethod {
    Percentile,
    Bca,
}

impl CiMethod {
    pub fn name(self) -> &'static str {
        match self {
            CiMethod::Percentile => "percentile",
            CiMethod::Bca => "bca",
        }
    }
}

/// Bootstrap settings: `--resamples`, `--seed`, `--ci`.
#[derive(Debug, Clone, Copy)]
pub struct Bootstrap {
    pub resamples: usize,
    pub seed: u64,
    pub method: CiMethod,
    /// Checked per block of resamples: a cancelled audit stops early (its
    /// result is then dropped, never shown).
    pub cancel: crate::cancel::Cancel,
}

impl Bootstrap {
    /// The settings of a provisional interval ([`Ci::Provisional`]): the
    /// first [`PROVISIONAL_RESAMPLES`] of these resamples, the same seed and
    /// method. `None` when these are no more than that.
    pub fn provisional(&self) -> Option<Bootstrap> {
        (self.resamples > PROVISIONAL_RESAMPLES).then_some(Bootstrap {
            resamples: PROVISIONAL_RESAMPLES,
            ..*self
        })
    }
}

impl Default for Bootstrap {
    fn default() -> Self {
        Bootstrap {
            resamples: 10_000,
            seed: 0,
            method: CiMethod::Percentile,
            cancel: crate::cancel::Cancel::default(),
        }
    }
}

/// A 95% interval, or why there is none.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Ci {
    Interval(f64, f64),
    /// Every resample gave the same value: written as `null` with `ci_degenerate: true`.
    Degenerate,
    /// No data to resample.
    Undefined,
    /// Still being drawn: the workbench shows a part's values before its
    /// intervals ([`passkt::analyse_staged`](super::passkt::analyse_staged));
    /// a finished audit, and so every report, has none.
    Pending,
    /// The interval of the first [`PROVISIONAL_RESAMPLES`] resamples alone —
    /// what `--resamples 1000` reports, the same draws — shown by the
    /// workbench for the panel on screen while the rest are drawn; never
    /// judged on (not [`Ci::bounds`]) and, like [`Ci::Pending`], never in a
    /// finished audit.
    Provisional(f64, f64),
}

/// How many resamples a provisional interval is drawn from ([`Ci::Provisional`]):
/// the fewest a percentile interval is commonly drawn from (Efron &
/// Tibshirani, *An Introduction to the Bootstrap*, §13.3), a tenth of the
/// default's cost.
pub const PROVISIONAL_RESAMPLES: usize = 1000;

impl Ci {
    /// As the workbench shows an interval of the first
    /// [`PROVISIONAL_RESAMPLES`] while the rest are drawn: an interval
    /// [`Ci::Provisional`]; a degenerate one [`Ci::Pending`] (the resamples
    /// still to come may not all agree); no interval as it was (no data, no
    /// resample tells more).
    pub fn provisional(self) -> Ci {
        match self {
            Ci::Interval(l, h) => Ci::Provisional(l, h),
            Ci::Degenerate => Ci::Pending,
            ci => ci,
        }
    }

    pub fn bounds(self) -> Option<(f64, f64)> {
        match self {
            Ci::Interval(l, h) => Some((l, h)),
            _ => None,
        }
    }
    /// Entirely below zero.
    pub fn below_zero(self) -> bool {
        matches!(self, Ci::Interval(_, h) if h < 0.0)
    }
    pub fn above_zero(self) -> bool {
        matches!(self, Ci::Interval(l, _) if l > 0.0)
    }
}

/// A point estimate with its interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    pub value: f64,
    pub ci: Ci,
}

impl Estimate {
    /// This estimate, drawn from [`Bootstrap::provisional`]'s resamples, as
    /// the workbench shows it meanwhile ([`Ci::provisional`]).
    pub fn provisional(self) -> Estimate {
        Estimate {
            ci: self.ci.provisional(),
            ..self
        }
    }
    /// No data: no value, no interval.
    pub const UNDEFINED: Estimate = Estimate {
        value: f64::NAN,
        ci: Ci::Undefined,
    };
}

/// One cluster (task) of a ratio statistic: Σ values and how many there are.
/// A mean over tasks uses weight 1 per task; a mean over pairs or states
/// clustered by task uses the task's sum and count.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cluster {
    pub sum: f64,
    pub weight: f64,
}

impl Cluster {
    pub fn one(value: f64) -> Self {
        Cluster {
            sum: value,
            weight: 1.0,
        }
    }
}

/// Turns bootstrap replicates into the 95% interval of `cfg.method`. The
/// replicates are reordered (selection, not a full sort).
pub fn interval_from(
    stats: &mut [f64],
    value: f64,
    cfg: &Bootstrap,
    jack: impl FnOnce() -> Vec<f64>,
) -> Ci {
    if stats.is_empty() {
        return Ci::Undefined;
    }
    let (lo, hi) = stats
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &x| {
            (l.min(x), h.max(x))
        });
    if hi - lo <= 1e-12 * hi.abs().max(lo.abs()).max(1.0) {
        return Ci::Degenerate;
    }
    let (a1, a2) = match cfg.method {
        CiMethod::Percentile => (0.025, 0.975),
        CiMethod::Bca => {
            let below = stats.iter().filter(|&&x| x < value).count();
            bca_levels(stats.len(), below, &jack())
        }
    };
    let (a1, a2) = (a1.min(a2), a1.max(a2));
    let l = quantile_select(stats, a1);
    let h = quantile_select(stats, a2);
    Ci::Interval(l, h)
}

/// [`quantile_sorted`] without sorting: the two order statistics around the
/// level by selection.
fn quantile_select(v: &mut [f64], q: f64) -> f64 {
    let n = v.len();
    if n == 1 {
        return v[0];
    }
    let (i, frac) = quantile_position(n, q);
    let (_, x, right) = v.select_nth_unstable_by(i, f64::total_cmp);
    let x = *x;
    if i + 1 >= n {
        return x;
    }
    let next = right.iter().copied().fold(f64::INFINITY, f64::min);
    x + frac * (next - x)
}

/// BCa-adjusted percentile levels (Efron 1987): bias correction z0 from the
/// share of replicates below the estimate (clamped to avoid infinities),
/// acceleration from the leave-one-task-out jackknife.
fn bca_levels(b: usize, below: usize, jack: &[f64]) -> (f64, f64) {
    let normal = Normal::standard();
    let (b, below) = (b as f64, below as f64);
    let p = (below / b).clamp(0.5 / b, 1.0 - 0.5 / b);
    let z0 = normal.inverse_cdf(p);
    let a = if jack.len() >= 2 {
        let mean = jack.iter().sum::<f64>() / jack.len() as f64;
        let num: f64 = jack.iter().map(|x| (mean - x).powi(3)).sum();
        let den: f64 = jack.iter().map(|x| (mean - x).powi(2)).sum();
        if den > 0.0 {
            num / (6.0 * den.powf(1.5))
        } else {
            0.0
        }
    } else {
        0.0
    };
    let adj = |alpha: f64| {
        let z = normal.inverse_cdf(alpha);
        normal.cdf(z0 + (z0 + z) / (1.0 - a * (z0 + z)))
    };
    (adj(0.025), adj(0.975))
}

/// Where level q falls among n sorted values (numpy's linear method): the
/// lower order statistic's index and the fraction of the way to the next.
fn quantile_position(n: usize, q: f64) -> (usize, f64) {
    let h = (n - 1) as f64 * q.clamp(0.0, 1.0);
    let i = h.floor() as usize;
    (i, h - i as f64)
}

/// Quantile with linear interpolation between order statistics (numpy's default).
pub fn quantile_sorted(sorted: &[f64], q: f64) -> f64 {
    let n = sorted.len();
    if n == 1 {
        return sorted[0];
    }
    let (i, frac) = quantile_position(n, q);
    if i + 1 >= n {
        sorted[n - 1]
    } else {
        sorted[i] + frac * (sorted[i + 1] - sorted[i])
    }
}

/// Median: the middle value, or the mean of the two middle values.
pub fn median(values: &[f64]) -> Option<f64> {
    median_in_place(&mut values.to_vec())
}

/// [`median`] without a copy: `values` are left reordered.
pub fn median_in_place(v: &mut [f64]) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    // The middle order statistics by selection, not a sort (the same
    // values: equal under `total_cmp` is equal bit for bit).
    let n = v.len();
    let (below, mid, _) = v.select_nth_unstable_by(n / 2, f64::total_cmp);
    Some(if n % 2 == 1 {
        *mid
    } else {
        let lower = below.iter().copied().max_by(f64::total_cmp).unwrap_or(*mid);
        (lower + *mid) / 2.0
    })
}

pub fn mean(values: &[f64]) -> Option<f64> {
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

/// 97.5% quantile of the standard normal.
pub const Z975: f64 = 1.959_963_984_540_054;

/// Wilson score interval for `k` successes in `n` trials (95%).
pub fn wilson(k: u64, n: u64) -> Option<(f64, f64)> {
    if n == 0 {
        return None;
    }
    let (n, p) = (n as f64, k as f64 / n as f64);
    let z2 = Z975 * Z975;
    let denom = 1.0 + z2 / n;
    let centre = (p + z2 / (2.0 * n)) / denom;
    let half = Z975 * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt() / denom;
    Some(((centre - half).max(0.0), (centre + half).min(1.0)))
}

/// Unbiased Pass@K from n rollouts of which c succeeded (HumanEval's estimator):
/// 1 − C(n−c, K)/C(n, K) = 1 − ∏_{i=n−c+1}^{n} (1 − K/i).
pub fn pass_at_k(n: u64, c: u64, k: u64) -> f64 {
    if n.saturating_sub(c) < k {
        return 1.0;
    }
    let mut prod = 1.0;
    for i in (n - c + 1)..=n {
        prod *= 1.0 - k as f64 / i as f64;
    }
    1.0 - prod
}

/// Pass^K = C(c, K)/C(n, K): the chance that all K attempts succeed.
pub fn pass_all_k(n: u64, c: u64, k: u64) -> f64 {
    if c < k || n < k {
        return 0.0;
    }
    let mut prod = 1.0;
    for i in 0..k {
        prod *= (c - i) as f64 / (n - i) as f64;
    }
    prod
}

/// Nearest-rank percentile (p in 0..=100) of sorted values.
pub fn nearest_rank(sorted: &[u64], p: f64) -> Option<u64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    Some(sorted[rank.clamp(1, sorted.len()) - 1])
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::RngExt;

    #[test]
    fn selection_quantile_equals_the_sorted_one() {
        let mut rng = super::super::bootstrap::resample_rng(5, 0);
        for n in [1usize, 2, 3, 10, 101, 1000] {
            let v: Vec<f64> = (0..n).map(|_| rng.random::<f64>()).collect();
            let mut sorted = v.clone();
            sorted.sort_by(f64::total_cmp);
            for q in [0.0, 0.025, 0.5, 0.975, 1.0] {
                let mut w = v.clone();
                assert_eq!(quantile_select(&mut w, q), quantile_sorted(&sorted, q));
            }
        }
    }

    /// The median by selection is numpy.median's (the sorted middle, or
    /// the mean of the two middle values), bit for bit, ties and signed
    /// zeros included.
    #[test]
    fn selection_median_equals_the_sorted_one() {
        // numpy.median([3, 1, 2, 4]) == 2.5; numpy.median([5, 1, 3]) == 3.0
        assert_eq!(median(&[3.0, 1.0, 2.0, 4.0]), Some(2.5));
        assert_eq!(median(&[5.0, 1.0, 3.0]), Some(3.0));
        assert_eq!(median(&[]), None);
        let mut rng = super::super::bootstrap::resample_rng(6, 0);
        for n in [1usize, 2, 3, 4, 10, 101, 1000, 1001] {
            for ties in [false, true] {
                let v: Vec<f64> = (0..n)
                    .map(|_| match ties {
                        false => rng.random::<f64>() - 0.5,
                        true => [-0.0, 0.0, 1.0, -2.5][rng.random_range(0..4usize)],
                    })
                    .collect();
                let mut sorted = v.clone();
                sorted.sort_by(f64::total_cmp);
                let want = match n % 2 {
                    1 => sorted[n / 2],
                    _ => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
                };
                let got = median_in_place(&mut v.clone()).unwrap();
                assert_eq!(got.to_bits(), want.to_bits(), "n {n}, ties {ties}");
            }
        }
    }

    #[test]
    fn quantile_matches_numpy_linear() {
        // numpy.quantile([1, 2, 3, 4], 0.25) == 1.75
        assert!((quantile_sorted(&[1.0, 2.0, 3.0, 4.0], 0.25) - 1.75).abs() < 1e-12);
        assert!((quantile_sorted(&[1.0, 2.0, 3.0, 4.0], 0.975) - 3.925).abs() < 1e-12);
    }

    #[test]
    fn wilson_known_value() {
        // 5/10: centre 0.5, half-width 0.2923 (statsmodels proportion_confint method="wilson")
        let (l, h) = wilson(5, 10).unwrap();
        assert!((l - 0.236_593).abs() < 1e-5, "{l}");
        assert!((h - 0.763_407).abs() < 1e-5, "{h}");
    }

    #[test]
    fn nearest_rank_definition() {
        let v = [10, 20, 30, 40];
        assert_eq!(nearest_rank(&v, 25.0), Some(10));
        assert_eq!(nearest_rank(&v, 50.0), Some(20));
        assert_eq!(nearest_rank(&v, 75.0), Some(30));
        assert_eq!(nearest_rank(&v, 100.0), Some(40));
    }
}
