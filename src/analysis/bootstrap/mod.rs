//! The cluster bootstrap over tasks (SPEC §2): resample the tasks with
//! replacement, recompute Σsum/Σweight, 10,000 times — made cheap by drawing
//! class counts instead of task ids and sharing each resample's draw among
//! every statistic over the same tasks.

use std::hash::{BuildHasher, Hasher};

use rayon::prelude::*;

use super::binomial::Binomial;
use super::stats::{interval_from, Bootstrap, Ci, Cluster, Estimate};
use super::xoshiro::{Lanes, Xoshiro};
use crate::schema::FirstSeen;

mod blocks;
mod classes;
mod draw;

use blocks::*;
use classes::*;
use draw::*;

/// The generator of resample `b`: seeded from (seed, b), so the result does
/// not depend on the number of threads.
pub fn resample_rng(seed: u64, b: usize) -> Xoshiro {
    Xoshiro::seed_from_u64(seed ^ (b as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15))
}

/// Cluster bootstrap of Σsum/Σweight over clusters resampled with replacement
/// (SPEC §2). Paired differences pass per-task differences as clusters.
pub fn cluster_bootstrap(clusters: &[Cluster], cfg: &Bootstrap) -> Estimate {
    cluster_bootstrap_families(std::slice::from_ref(&Family::of(clusters)), cfg)
        .remove(0)
        .remove(0)
}

/// What [`cluster_bootstrap`] (or [`cluster_bootstrap_each`]) gives the
/// clusters, before the interval is drawn: the same value to the bit
/// ([`Reduced::points`]), the interval [`Ci::Pending`] — undefined where
/// the bootstrap's would be.
pub fn cluster_point(clusters: &[Cluster]) -> Estimate {
    Reduced::new(&Family::of(clusters))
        .points()
        .pop()
        .unwrap_or(Estimate::UNDEFINED)
}

/// Several statistics Σsum_s/Σweight over the same clusters (e.g. Pass@K for
/// every K of one cell's tasks). `sums[s][i]` is cluster i's sum for
/// statistic s.
pub fn cluster_bootstrap_many(
    sums: &[Vec<f64>],
    weights: &[f64],
    cfg: &Bootstrap,
) -> Vec<Estimate> {
    let family = Family {
        sums: sums.to_vec(),
        weights: weights.to_vec(),
    };
    cluster_bootstrap_families(std::slice::from_ref(&family), cfg).remove(0)
}

/// Each cluster set bootstrapped exactly as [`cluster_bootstrap`] would on
/// its own — the same estimates to the bit — but sets with the same number
/// of clusters that draw cluster ids share each resample's draw (a draw
/// depends only on the seed, the resample and m). What many small
/// statistics over one population cost once (e.g. SPEC §4.5's turn by turn).
/// The sets are taken, each freed as its family is made (a batch can be
/// most of an analysis's memory), or borrowed (`sets.iter()`: drawn again
/// after, as provisional intervals are before the rest).
pub fn cluster_bootstrap_each<S: AsRef<[Cluster]>>(
    sets: impl IntoIterator<Item = S>,
    cfg: &Bootstrap,
) -> Vec<Estimate> {
    // Group by m among the sets that draw cluster ids: they share each
    // resample's draw of m ids, as alone. A set that would draw its class
    // counts directly is a group of its own: families drawn directly
    // together take their binomials one after another from each resample's
    // generator, so a second one's would not be those it draws alone.
    // Classes are made again group by group: held for every set at once
    // they would outweigh the families (28 bytes a distinct cluster
    // against 16).
    type Key = (usize, Option<usize>);
    let mut groups: std::collections::BTreeMap<Key, Vec<Family>> = Default::default();
    let mut slots: Vec<(Key, usize)> = Vec::new();
    for (i, c) in sets.into_iter().enumerate() {
        let f = Family::of(c.as_ref());
        drop(c);
        let m = f.weights.len();
        let c = Classes::new(&f);
        let key = (m, draws_directly(&c, c.is_live(), m).then_some(i));
        let group = groups.entry(key).or_default();
        slots.push((key, group.len()));
        group.push(f);
    }
    let estimates: std::collections::BTreeMap<Key, Vec<Vec<Estimate>>> = groups
        .iter()
        .map(|(key, fams)| (*key, cluster_bootstrap_families(fams, cfg)))
        .collect();
    slots
        .into_iter()
        .map(|(key, j)| estimates[&key][j][0])
        .collect()
}

/// Whether a family's class counts are drawn directly as a multinomial
/// rather than from m cluster ids: a binomial costs about as much as 60
/// cluster-id draws.
fn draws_directly(c: &Classes, live: bool, m: usize) -> bool {
    !live || c.len() * 60 <= m
}

/// Statistics Σsum_s/Σweight that share their clusters: `sums[s][i]` is
/// cluster i's sum for statistic s, `weights[i]` its weight.
#[derive(Debug, Clone, Default)]
pub struct Family {
    pub sums: Vec<Vec<f64>>,
    pub weights: Vec<f64>,
}

impl Family {
    /// One statistic, Σsum/Σweight over the clusters.
    pub fn of(clusters: &[Cluster]) -> Family {
        Family {
            sums: vec![clusters.iter().map(|c| c.sum).collect()],
            weights: clusters.iter().map(|c| c.weight).collect(),
        }
    }
}

/// Bootstraps several families over the same m clusters (SPEC §2's cluster
/// bootstrap: m clusters drawn with replacement, Σsum/Σweight per resample).
/// A resample's statistics depend only on how many clusters of each class it
/// drew. When every family has few classes those counts are drawn directly
/// as a multinomial (one binomial per class); otherwise each resample draws
/// m cluster ids once, shared by every family, and the counts follow by
/// summing draw counts over each class's clusters — done for a block of
/// resamples at once. Resample b is seeded from (seed, b), so the result
/// does not depend on the number of threads. Returns, per family, one
/// estimate per statistic.
pub fn cluster_bootstrap_families(families: &[Family], cfg: &Bootstrap) -> Vec<Vec<Estimate>> {
    bootstrap_classes(families.iter().map(Classes::new).collect(), cfg)
}

/// [`cluster_bootstrap_families`] of families reduced beforehand, each as
/// it came (4 bytes a cluster when its values repeat, where the family
/// holds 8 a cluster and statistic), so only one is ever held whole — what
/// a batch of many statistics over many tasks needs;
/// [`Reduced::points`] gives their values meanwhile.
pub fn cluster_bootstrap_reduced(families: Vec<Reduced>, cfg: &Bootstrap) -> Vec<Vec<Estimate>> {
    bootstrap_classes(families.into_iter().map(|r| r.0).collect(), cfg)
}

fn bootstrap_classes(classes: Vec<Classes>, cfg: &Bootstrap) -> Vec<Vec<Estimate>> {
    if let Some(known) = known_degenerate(&classes, cfg) {
        return known;
    }
    drawn(classes, cfg)
}

/// [`bootstrap_classes`] by drawing the resamples.
fn drawn(classes: Vec<Classes>, cfg: &Bootstrap) -> Vec<Vec<Estimate>> {
    passes(classes, cfg, false, |cls, live, direct| {
        let (blocks, offsets) = replicate_blocks(cls, live, direct, cfg);
        estimates(cls, live, &blocks, &offsets, cfg)
    })
}

/// The estimates of families every one of whose statistics would come out
/// degenerate (every replicate within [`interval_from`]'s tolerance of the
/// others) whatever the resamples draw, known without drawing them: the
/// estimates drawing gives, to the bit. `None` when any statistic might
/// not be (then every family is drawn: families drawn together share their
/// draws, so none is left out).
///
/// Such a statistic's clusters all have about one ratio sum / weight — one
/// value for every task, as where two policies' log-probabilities differ
/// by a constant. See [`surely_degenerate`] for the bound.
fn known_degenerate(classes: &[Classes], cfg: &Bootstrap) -> Option<Vec<Vec<Estimate>>> {
    let m = classes.first().map_or(0, Classes::clusters);
    if m == 0 || cfg.resamples == 0 {
        return None;
    }
    classes
        .iter()
        .map(|c| {
            if !c.is_live() {
                return Some(vec![Estimate::UNDEFINED; c.stats]);
            }
            (0..c.stats)
                .map(|s| {
                    surely_degenerate(c, s, m).then(|| Estimate {
                        value: c.value(s),
                        ci: Ci::Degenerate,
                    })
                })
                .collect()
        })
        .collect()
}

/// Whether every resample's statistic s (Σ count × sum / Σ count × weight
/// over the classes in order, counts ≥ 0 summing to m, as [`accumulate`]
/// computes it) is within [`interval_from`]'s degenerate tolerance of every
/// other's, proven from the classes alone.
///
/// With every weight > 0 and every sum of one sign, each term of both sums
/// has that sign, so each sum of n terms (n classes, rounded products
/// added from 0.0) is within a relative γ_n = nu / (1 − nu) of the exact
/// one (u = 2⁻⁵³; Higham, *Accuracy and Stability of Numerical
/// Algorithms*, §3.1 and §4.2): every replicate is within a relative
/// 2γ_n + 3u < η = 4(n + 2)u of an exact weighted mean of the classes'
/// ratios |sum| / weight, so within [lo(1 − η), hi(1 + η)] of their least
/// and greatest (each ratio rounded once more: the 3u). The replicates'
/// range is then at most (hi − lo) + η(hi + lo) and their largest
/// magnitude at least lo(1 − η); the tolerance holds with a factor of two
/// to spare for the rounding of this test itself. Sums and weights small
/// enough that no sum overflows (m × the largest ≤ 1e300).
fn surely_degenerate(c: &Classes, s: usize, m: usize) -> bool {
    let n = c.len();
    let (mut lo, mut hi) = (f64::INFINITY, 0.0f64);
    let (mut pos, mut neg) = (false, false);
    let (mut most_sum, mut most_weight) = (0.0f64, 0.0f64);
    for k in 0..n {
        let (sum, w) = (c.sum(k as u32, s), c.weights[k]);
        if !(w > 0.0 && w.is_finite() && sum.is_finite()) {
            return false;
        }
        pos |= sum > 0.0;
        neg |= sum < 0.0;
        most_sum = most_sum.max(sum.abs());
        most_weight = most_weight.max(w);
        let ratio = sum.abs() / w;
        lo = lo.min(ratio);
        hi = hi.max(ratio);
    }
    let big = 1e300 / m as f64;
    if (pos && neg) || most_sum > big || most_weight > big {
        return false;
    }
    if hi == 0.0 {
        // Every sum is zero: every replicate is zero.
        return true;
    }
    let eta = 4.0 * (n as f64 + 2.0) * f64::EPSILON / 2.0;
    let spread = (hi - lo) + eta * (hi + lo);
    2.0 * spread <= 1e-12 * (lo * (1.0 - eta)).max(1.0)
}

/// A family reduced to what the bootstrap reads of it (its classes: 4
/// bytes a cluster when its values repeat), to be bootstrapped later beside
/// others over as many clusters.
#[derive(Clone)]
pub struct Reduced(Classes);

impl Reduced {
    pub fn new(f: &Family) -> Reduced {
        Reduced(Classes::new(f))
    }
    /// How many clusters (m).
    pub fn clusters(&self) -> usize {
        self.0.clusters()
    }
    /// Each statistic's estimate before its interval is drawn: the value
    /// the bootstrap gives it (the same sums, so the same bits), the
    /// interval [`Ci::Pending`]; undefined where it would be.
    pub fn points(&self) -> Vec<Estimate> {
        let c = &self.0;
        let live = c.clusters() > 0 && c.is_live();
        (0..c.stats)
            .map(|s| match live {
                true => Estimate {
                    value: c.value(s),
                    ci: Ci::Pending,
                },
                false => Estimate::UNDEFINED,
            })
            .collect()
    }
}

/// Every statistic's replicates, resample by resample (`out[f][s][b]`;
/// NaN where resample b drew no cluster of weight), from one shared draw of
/// the m cluster ids per resample — the joint replicates of SPEC §4.2,
/// where each statistic's own clusters are those of non-zero weight. The
/// families (all over the same m clusters) get the replicates each gets
/// alone or beside any others — a draw depends only on the seed, the
/// resample and m — so families gathered from several analyses share one
/// draw of the cluster ids per resample.
pub fn cluster_bootstrap_replicates_of(
    families: Vec<Reduced>,
    cfg: &Bootstrap,
) -> Vec<Vec<Vec<f64>>> {
    let classes = families.into_iter().map(|r| r.0).collect();
    passes(classes, cfg, true, |cls, live, direct| {
        let (blocks, offsets) = replicate_blocks(cls, live, direct, cfg);
        cls.iter()
            .enumerate()
            .map(|(f, c)| {
                (0..c.stats)
                    .map(|s| column(&blocks, offsets[f] + s, cfg.resamples).collect())
                    .collect()
            })
            .collect()
    })
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

#[cfg(test)]
mod tests;
