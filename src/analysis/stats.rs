//! Statistics shared by every analysis: the cluster bootstrap over tasks
//! (percentile or BCa), the Wilson interval, numpy-style quantiles, and the
//! Pass@(K,T) estimators.

use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};
use rand_distr::{Binomial, Distribution};
use rayon::prelude::*;
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
}

impl Default for Bootstrap {
    fn default() -> Self {
        Bootstrap {
            resamples: 10_000,
            seed: 0,
            method: CiMethod::Percentile,
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
}

impl Ci {
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

/// The generator of resample `b`: seeded from (seed, b), so the result does
/// not depend on the number of threads.
pub fn resample_rng(seed: u64, b: usize) -> Xoshiro256PlusPlus {
    Xoshiro256PlusPlus::seed_from_u64(seed ^ (b as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15))
}

/// Cluster bootstrap of Σsum/Σweight over clusters resampled with replacement
/// (SPEC §2). Paired differences pass per-task differences as clusters.
pub fn cluster_bootstrap(clusters: &[Cluster], cfg: &Bootstrap) -> Estimate {
    let sums: Vec<f64> = clusters.iter().map(|c| c.sum).collect();
    let weights: Vec<f64> = clusters.iter().map(|c| c.weight).collect();
    cluster_bootstrap_many(&[sums], &weights, cfg).remove(0)
}

/// Several statistics Σsum_s/Σweight over the same clusters (e.g. Pass@K for
/// every K of one cell's tasks): each resample draws the clusters once and
/// evaluates every statistic on that draw. `sums[s][i]` is cluster i's sum
/// for statistic s.
pub fn cluster_bootstrap_many(
    sums: &[Vec<f64>],
    weights: &[f64],
    cfg: &Bootstrap,
) -> Vec<Estimate> {
    let m = weights.len();
    let n_stats = sums.len();
    if m == 0 || weights.iter().all(|w| *w == 0.0) {
        return vec![
            Estimate {
                value: f64::NAN,
                ci: Ci::Undefined
            };
            n_stats
        ];
    }
    let total_w: f64 = weights.iter().sum();
    let values: Vec<f64> = sums
        .iter()
        .map(|s| s.iter().sum::<f64>() / total_w)
        .collect();
    // Per-task values usually take few distinct values (Pass@K depends only on
    // (n, c)): then a resample needs only how many tasks of each class it drew,
    // a multinomial — the same distribution as drawing m task ids, at a cost
    // of one binomial per class instead of m draws.
    let classes = classes_many(sums, weights);
    // A binomial costs about as much as 16 uniform draws.
    let by_class = classes.len() * 16 <= m;
    let replicates: Vec<Vec<f64>> = (0..cfg.resamples)
        .into_par_iter()
        .map(|b| {
            let mut rng = resample_rng(cfg.seed, b);
            let mut acc = vec![0.0; n_stats];
            let mut w = 0.0;
            if by_class {
                let (mut left, mut mass) = (m as u64, m as u64);
                for (first, count) in &classes {
                    if left == 0 {
                        break;
                    }
                    let k = if *count == mass {
                        left
                    } else {
                        Binomial::new(left, *count as f64 / mass as f64)
                            .map_or(0, |d| d.sample(&mut rng))
                    };
                    let kf = k as f64;
                    for (a, s) in acc.iter_mut().zip(sums) {
                        *a += kf * s[*first];
                    }
                    w += kf * weights[*first];
                    left -= k;
                    mass -= count;
                }
            } else {
                for _ in 0..m {
                    let i = rng.random_range(0..m);
                    for (a, s) in acc.iter_mut().zip(sums) {
                        *a += s[i];
                    }
                    w += weights[i];
                }
            }
            acc.iter().map(|a| a / w).collect()
        })
        .collect();
    (0..n_stats)
        .map(|s| {
            let mut stats: Vec<f64> = replicates
                .iter()
                .map(|r| r[s])
                .filter(|x| x.is_finite())
                .collect();
            let ci = interval_from(&mut stats, values[s], cfg, || {
                let clusters: Vec<Cluster> = (0..m)
                    .map(|i| Cluster {
                        sum: sums[s][i],
                        weight: weights[i],
                    })
                    .collect();
                jackknife(&clusters)
            });
            Estimate {
                value: values[s],
                ci,
            }
        })
        .collect()
}

/// Identical clusters (equal in every statistic and in weight) grouped:
/// (index of a representative, how many), in a fixed order.
fn classes_many(sums: &[Vec<f64>], weights: &[f64]) -> Vec<(usize, u64)> {
    let mut m: std::collections::BTreeMap<Vec<u64>, (usize, u64)> = Default::default();
    for (i, w) in weights.iter().enumerate() {
        let mut key: Vec<u64> = sums.iter().map(|s| s[i].to_bits()).collect();
        key.push(w.to_bits());
        m.entry(key).or_insert((i, 0)).1 += 1;
    }
    m.into_values().collect()
}

fn jackknife(clusters: &[Cluster]) -> Vec<f64> {
    let (s, w) = clusters
        .iter()
        .fold((0.0, 0.0), |(s, w), c| (s + c.sum, w + c.weight));
    clusters
        .iter()
        .map(|c| (s - c.sum) / (w - c.weight))
        .filter(|x| x.is_finite())
        .collect()
}

/// Turns bootstrap replicates into the 95% interval of `cfg.method`.
pub fn interval_from(
    stats: &mut [f64],
    value: f64,
    cfg: &Bootstrap,
    jack: impl FnOnce() -> Vec<f64>,
) -> Ci {
    if stats.is_empty() {
        return Ci::Undefined;
    }
    stats.sort_by(f64::total_cmp);
    let (lo, hi) = (stats[0], stats[stats.len() - 1]);
    if hi - lo <= 1e-12 * hi.abs().max(lo.abs()).max(1.0) {
        return Ci::Degenerate;
    }
    let (a1, a2) = match cfg.method {
        CiMethod::Percentile => (0.025, 0.975),
        CiMethod::Bca => bca_levels(stats, value, &jack()),
    };
    Ci::Interval(quantile_sorted(stats, a1), quantile_sorted(stats, a2))
}

/// BCa-adjusted percentile levels (Efron 1987): bias correction z0 from the
/// share of replicates below the estimate (clamped to avoid infinities),
/// acceleration from the leave-one-task-out jackknife.
fn bca_levels(sorted: &[f64], value: f64, jack: &[f64]) -> (f64, f64) {
    let normal = Normal::standard();
    let b = sorted.len() as f64;
    let below = sorted.partition_point(|&x| x < value) as f64;
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

/// Quantile with linear interpolation between order statistics (numpy's default).
pub fn quantile_sorted(sorted: &[f64], q: f64) -> f64 {
    let n = sorted.len();
    if n == 1 {
        return sorted[0];
    }
    let h = (n - 1) as f64 * q.clamp(0.0, 1.0);
    let i = h.floor() as usize;
    let frac = h - i as f64;
    if i + 1 >= n {
        sorted[n - 1]
    } else {
        sorted[i] + frac * (sorted[i + 1] - sorted[i])
    }
}

/// Median: the middle value, or the mean of the two middle values.
pub fn median(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
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

    #[test]
    fn class_resampling_matches_task_resampling_in_distribution() {
        // 1000 tasks with values 0 or 1 (30% ones): the bootstrap mean has
        // sd sqrt(0.3·0.7/1000) = 0.01449; the 95% interval ≈ 0.3 ± 0.0284.
        let clusters: Vec<Cluster> = (0..1000)
            .map(|i| Cluster::one(if i % 10 < 3 { 1.0 } else { 0.0 }))
            .collect();
        let e = cluster_bootstrap(&clusters, &Bootstrap::default());
        let (l, h) = e.ci.bounds().unwrap();
        assert!((e.value - 0.3).abs() < 1e-12);
        assert!((l - (0.3 - 0.0284)).abs() < 0.003, "{l}");
        assert!((h - (0.3 + 0.0284)).abs() < 0.003, "{h}");
        // Same data through the task-id path (all values distinct by a tiny offset).
        let distinct: Vec<Cluster> = clusters
            .iter()
            .enumerate()
            .map(|(i, c)| Cluster::one(c.sum + i as f64 * 1e-12))
            .collect();
        let (l2, h2) = cluster_bootstrap(&distinct, &Bootstrap::default())
            .ci
            .bounds()
            .unwrap();
        assert!(
            (l - l2).abs() < 0.003 && (h - h2).abs() < 0.003,
            "{l} {h} vs {l2} {h2}"
        );
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
