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

/// The generator of resample `b`: seeded from (seed, b), so the result does
/// not depend on the number of threads.
pub fn resample_rng(seed: u64, b: usize) -> Xoshiro {
    Xoshiro::seed_from_u64(seed ^ (b as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15))
}

/// Cluster bootstrap of Σsum/Σweight over clusters resampled with replacement
/// (SPEC §2). Paired differences pass per-task differences as clusters.
pub fn cluster_bootstrap(clusters: &[Cluster], cfg: &Bootstrap) -> Estimate {
    let family = Family {
        sums: vec![clusters.iter().map(|c| c.sum).collect()],
        weights: clusters.iter().map(|c| c.weight).collect(),
    };
    cluster_bootstrap_families(std::slice::from_ref(&family), cfg)
        .remove(0)
        .remove(0)
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
/// The sets are taken (each freed as its family is made: a batch can be
/// most of an analysis's memory).
pub fn cluster_bootstrap_each(sets: Vec<Vec<Cluster>>, cfg: &Bootstrap) -> Vec<Estimate> {
    let family = |c: &[Cluster]| Family {
        sums: vec![c.iter().map(|c| c.sum).collect()],
        weights: c.iter().map(|c| c.weight).collect(),
    };
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
    let mut slots: Vec<(Key, usize)> = Vec::with_capacity(sets.len());
    for (i, c) in sets.into_iter().enumerate() {
        let f = family(&c);
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

/// A family's clusters grouped into classes of identical clusters (equal in
/// every statistic and in weight): the statistic of a resample depends only
/// on how many clusters of each class it drew.
struct Classes {
    /// Class of each cluster.
    of: Vec<u32>,
    /// Clusters per class.
    size: Vec<u64>,
    /// Class-major sums: `sums[c * stats + s]`.
    sums: Vec<f64>,
    weights: Vec<f64>,
    stats: usize,
}

impl Classes {
    fn new(f: &Family) -> Self {
        let stats = f.sums.len();
        let n = f.weights.len();
        // A cluster's key: the bits of its sums and weight.
        let key = |i: usize| {
            f.sums
                .iter()
                .map(move |s| s[i].to_bits())
                .chain(std::iter::once(f.weights[i].to_bits()))
        };
        let hasher = foldhash::fast::FixedState::default();
        let mut seen = FirstSeen::with_capacity(n);
        let mut c = Classes {
            of: Vec::with_capacity(n),
            size: Vec::new(),
            sums: Vec::new(),
            weights: Vec::new(),
            stats,
        };
        let hash_of = |j: u32| {
            let mut h = hasher.build_hasher();
            key(j as usize).for_each(|b| h.write_u64(b));
            h.finish()
        };
        for i in 0..n {
            let same = |j: u32| key(j as usize).eq(key(i));
            let id = match seen.first(hash_of(i as u32), i as u32, same, hash_of) {
                Some(j) => c.of[j as usize],
                None => {
                    c.size.push(0);
                    c.sums.extend(f.sums.iter().map(|s| s[i]));
                    c.weights.push(f.weights[i]);
                    c.size.len() as u32 - 1
                }
            };
            c.size[id as usize] += 1;
            c.of.push(id);
        }
        c
    }
    fn len(&self) -> usize {
        self.size.len()
    }
    /// How many clusters (m).
    fn clusters(&self) -> usize {
        self.of.len()
    }
    /// Class k's sum for statistic s.
    fn sum(&self, k: u32, s: usize) -> f64 {
        self.sums[k as usize * self.stats + s]
    }
    /// Statistic s over the family's own clusters, cluster by cluster in
    /// order.
    fn value(&self, s: usize) -> f64 {
        let total_w: f64 = self.of.iter().map(|&k| self.weights[k as usize]).sum();
        self.of.iter().map(|&k| self.sum(k, s)).sum::<f64>() / total_w
    }
    /// Some weight to resample (else its estimates are undefined).
    fn is_live(&self) -> bool {
        self.weights.iter().any(|w| *w != 0.0)
    }
}

/// Resamples handled together: per-cluster draw counts are laid out
/// cluster-major with this many resamples side by side, so summing a class's
/// clusters is a run of vector adds over the block.
const BLOCK: usize = 64;

/// The block of multinomial draws ([`multinomial_block`]): it holds no
/// draw counts per cluster, and the wider it is, the more of a class's
/// binomials recur within it — at 11 M trajectories (26,041 tasks) 81 % of
/// them were set up anew in blocks of 16 or 64, 19 % in blocks of 1,024
/// (the whole audit 3.5 CPU-s less of 58; README, session 35).
const DIRECT_BLOCK: usize = 1024;

/// The block for m clusters: 64 resamples while their per-cluster draw
/// counts (m × block × 4 bytes) fit in 2 MiB, else 16, else 4. Past that
/// size the counts were summed at memory's pace: at 28,645 tasks, 64-wide
/// blocks (7.3 MB) made the stages 14–21 × those over 2,864 tasks, 4-wide
/// ones (0.46 MB) took Pass@(K,T) from 45.8 to 41.1 s and 16-wide ones
/// (1.8 MB, twice this machine's 1 MiB L2 a core) to 30.9 s (11 M
/// trajectories, `RL_AUDIT_TIMINGS=1`). The width changes no result: each
/// resample's counts and sums are the same, in the same order, whatever
/// resamples sit beside it.
fn block_for(m: usize) -> usize {
    [BLOCK, 16]
        .into_iter()
        .find(|b| m * b * 4 <= 2 << 20)
        .unwrap_or(4)
}

/// A worker's buffers for one block of resamples.
#[derive(Default)]
struct Scratch<C> {
    draws: Vec<C>,
    rows: Vec<C>,
    counts: Vec<C>,
    acc: Vec<f64>,
    binomials: Binomials,
}

/// A draw count (no count exceeds m): u16 while m < 2^16 — half the bytes
/// to zero, transpose and sum into class counts — else u32.
trait Count:
    Copy + Default + Send + Sync + std::ops::AddAssign + std::ops::Sub<Output = Self> + 'static
{
    const ONE: Self;
    /// `x` ≤ m, so it fits.
    fn of(x: u64) -> Self;
    fn to_f64(self) -> f64;
}

impl Count for u16 {
    const ONE: Self = 1;
    fn of(x: u64) -> Self {
        x as u16
    }
    #[inline(always)]
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
}

impl Count for u32 {
    const ONE: Self = 1;
    fn of(x: u64) -> Self {
        x as u32
    }
    /// As i32: one instruction to a double, where u32 takes three (m <
    /// 2^31, `replicate_blocks_of`).
    #[inline(always)]
    fn to_f64(self) -> f64 {
        f64::from(self as i32)
    }
}

/// A family's clusters in class order (by cluster within a class): class
/// k's are the `size[k]` after those of the classes before it. In a family
/// of distinct values (one cluster per class), each class's cluster.
fn clusters_by_class(c: &Classes) -> Vec<u32> {
    let mut next: Vec<u64> = c
        .size
        .iter()
        .scan(0, |at, &n| {
            let first = *at;
            *at += n;
            Some(first)
        })
        .collect();
    let mut list = vec![0u32; c.of.len()];
    for (i, &k) in c.of.iter().enumerate() {
        list[next[k as usize] as usize] = i as u32;
        next[k as usize] += 1;
    }
    list
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

/// Replicate `col` of every resample, in resample order.
fn column(blocks: &Blocks, col: usize, b_total: usize) -> impl Iterator<Item = f64> + '_ {
    let bw = blocks.width;
    blocks.out.iter().enumerate().flat_map(move |(blk, out)| {
        let rr = bw.min(b_total - blk * bw);
        out[col * bw..col * bw + rr].iter().copied()
    })
}

/// A pass's replicates: per block of `width` resamples, stat-major with
/// `width` per statistic.
struct Blocks {
    out: Vec<Vec<f64>>,
    width: usize,
}

/// Runs `pass` over the families in passes of at most [`MAX_REPLICATES`]
/// replicates, each pass drawing the very same resamples again (same
/// seeds), so how they are split does not change any result. `joint`:
/// every family must see the same draw of cluster ids (no per-family
/// multinomial shortcut).
fn passes<T>(
    classes: Vec<Classes>,
    cfg: &Bootstrap,
    joint: bool,
    pass: impl Fn(&[Classes], &[bool], bool) -> Vec<T>,
) -> Vec<T> {
    let m = classes.first().map_or(0, Classes::clusters);
    assert!(
        classes.iter().all(|c| c.clusters() == m),
        "bootstrap families must share their clusters"
    );
    let live: Vec<bool> = classes.iter().map(|c| m > 0 && c.is_live()).collect();
    let direct = !joint
        && classes
            .iter()
            .zip(&live)
            .all(|(c, &l)| draws_directly(c, l, m));
    let per_pass = (MAX_REPLICATES / cfg.resamples.max(1)).max(1);
    let mut out = Vec::with_capacity(classes.len());
    let mut start = 0;
    while start < classes.len() {
        let mut end = start;
        let mut width = 0;
        while end < classes.len() && (end == start || width + classes[end].stats <= per_pass) {
            width += classes[end].stats;
            end += 1;
        }
        out.extend(pass(&classes[start..end], &live[start..end], direct));
        start = end;
    }
    out
}

/// Replicate values held at once (32 MB of f64).
const MAX_REPLICATES: usize = 4 << 20;

/// The replicates of one pass, in blocks as wide as [`block_for`] m; and
/// where each family's statistics start.
fn replicate_blocks(
    classes: &[Classes],
    live: &[bool],
    direct: bool,
    cfg: &Bootstrap,
) -> (Blocks, Vec<usize>) {
    let m = classes.first().map_or(0, Classes::clusters);
    // Wide direct blocks while they leave every thread two or more.
    let wide = direct && cfg.resamples >= 2 * DIRECT_BLOCK * rayon::current_num_threads();
    let width = if wide { DIRECT_BLOCK } else { block_for(m) };
    let (out, offsets) = match (width, m < 1 << 16) {
        (DIRECT_BLOCK, true) => {
            replicate_blocks_of::<DIRECT_BLOCK, u16>(classes, live, direct, cfg)
        }
        (DIRECT_BLOCK, false) => {
            replicate_blocks_of::<DIRECT_BLOCK, u32>(classes, live, direct, cfg)
        }
        (BLOCK, true) => replicate_blocks_of::<BLOCK, u16>(classes, live, direct, cfg),
        (BLOCK, false) => replicate_blocks_of::<BLOCK, u32>(classes, live, direct, cfg),
        (16, true) => replicate_blocks_of::<16, u16>(classes, live, direct, cfg),
        (16, false) => replicate_blocks_of::<16, u32>(classes, live, direct, cfg),
        (_, true) => replicate_blocks_of::<4, u16>(classes, live, direct, cfg),
        (_, false) => replicate_blocks_of::<4, u32>(classes, live, direct, cfg),
    };
    (Blocks { out, width }, offsets)
}

/// [`replicate_blocks`] with blocks of `W` resamples, draws counted as `C`:
/// per block, stat-major with `W` per statistic.
fn replicate_blocks_of<const W: usize, C: Count>(
    classes: &[Classes],
    live: &[bool],
    direct: bool,
    cfg: &Bootstrap,
) -> (Vec<Vec<f64>>, Vec<usize>) {
    let m = classes.first().map_or(0, Classes::clusters);
    // Class counts are sums of draw counts over a class's clusters, listed
    // class by class (families of distinct values read them in place).
    let lists: Vec<Vec<u32>> = classes
        .iter()
        .zip(live)
        .map(|(c, &live)| {
            if direct || !live {
                Vec::new()
            } else {
                clusters_by_class(c)
            }
        })
        .collect();
    let mut stat_offset = vec![0usize; classes.len() + 1];
    for (f, c) in classes.iter().enumerate() {
        stat_offset[f + 1] = stat_offset[f] + c.stats;
    }
    let m32 = i32::try_from(m).expect("fewer than 2^31 clusters") as u32;
    assert!(
        std::mem::size_of::<C>() == 4 || m < 1 << 16,
        "m fits the count"
    );
    let input = BlockInput {
        classes,
        live,
        direct,
        lists: &lists,
        stat_offset: &stat_offset,
        m: m32,
        cfg,
    };
    // Per block: replicates stat-major, `W` per statistic.
    // Scratch buffers live per worker thread, reused block after block.
    let blocks: Vec<Vec<f64>> = (0..cfg.resamples.div_ceil(W))
        .into_par_iter()
        .map_init(Scratch::default, |scratch, blk| {
            one_block::<W, C>(&input, scratch, blk)
        })
        .collect();
    (blocks, stat_offset)
}

/// What every block of a pass reads.
struct BlockInput<'a> {
    classes: &'a [Classes],
    live: &'a [bool],
    direct: bool,
    /// Per family, its clusters in class order ([`clusters_by_class`];
    /// empty for multinomial draws and families not live).
    lists: &'a [Vec<u32>],
    /// Where each family's statistics start; the last, how many in all.
    stat_offset: &'a [usize],
    /// Clusters (m).
    m: u32,
    cfg: &'a Bootstrap,
}

/// [`block`], compiled for AVX2 where the processor has it: the same IEEE
/// operations in the same order on wider registers (Rust never fuses a
/// multiply and an add), so the same bits —
/// `blocks_equal_one_resample_at_a_time` checks it.
fn one_block<const W: usize, C: Count>(
    input: &BlockInput,
    scratch: &mut Scratch<C>,
    blk: usize,
) -> Vec<f64> {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the processor has AVX2, checked just now.
        return unsafe { block_avx2::<W, C>(input, scratch, blk) };
    }
    block::<W, C, false>(input, scratch, blk)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn block_avx2<const W: usize, C: Count>(
    input: &BlockInput,
    scratch: &mut Scratch<C>,
    blk: usize,
) -> Vec<f64> {
    block::<W, C, true>(input, scratch, blk)
}

/// Block `blk`'s replicates: resamples `blk * W ..`, stat-major with `W`
/// per statistic (NaN past the last resample, and for families not live).
/// `AVX2`: inlined into [`block_avx2`], so AVX2 instructions may be used.
#[inline(always)]
fn block<const W: usize, C: Count, const AVX2: bool>(
    input: &BlockInput,
    scratch: &mut Scratch<C>,
    blk: usize,
) -> Vec<f64> {
    let BlockInput {
        classes,
        live,
        direct,
        lists,
        stat_offset,
        m,
        cfg,
    } = *input;
    let b0 = blk * W;
    let rr = W.min(cfg.resamples - b0);
    let mut out = vec![f64::NAN; stat_offset[classes.len()] * W];
    if m == 0 || cfg.cancel.is_cancelled() {
        return out;
    }
    let Scratch {
        draws,
        rows,
        counts,
        acc,
        binomials,
    } = scratch;
    let mut rngs: Vec<Xoshiro> = (0..rr).map(|r| resample_rng(cfg.seed, b0 + r)).collect();
    if !direct {
        // Every entry is written by `draw_block`: not zeroed first.
        draws.resize(m as usize * W, C::default());
        draw_block::<W, C, AVX2>(draws, rows, &mut rngs, m);
    }
    let mut w = [0.0f64; W];
    for (f, cl) in classes.iter().enumerate() {
        if !live[f] {
            continue;
        }
        // Class counts, class-major with the block side by side.
        counts.clear();
        if direct || cl.len() < m as usize {
            counts.resize(cl.len() * W, C::default());
        }
        if direct {
            multinomial_block::<W, C>(counts, &cl.size, u64::from(m), &mut rngs, binomials);
        } else if cl.len() < m as usize {
            class_counts::<W, C, AVX2>(counts, &lists[f], &cl.size, draws, m);
        }
        // Σ count × value per statistic, Σ count × weight.
        acc.resize(cl.stats * W, 0.0);
        if !direct && cl.len() == m as usize {
            // Every class one cluster (distinct values): its counts are the
            // cluster's draw counts, read in place.
            let list = &lists[f];
            accumulate::<W, C>(
                cl,
                |k| {
                    let i = list[k] as usize;
                    &draws[i * W..(i + 1) * W]
                },
                &mut w,
                acc,
            );
        } else {
            accumulate::<W, C>(cl, |k| &counts[k * W..(k + 1) * W], &mut w, acc);
        }
        for (s, a) in acc.chunks_exact(W).enumerate() {
            let dst = &mut out[(stat_offset[f] + s) * W..][..W];
            for r in 0..rr {
                dst[r] = a[r] / w[r];
            }
        }
    }
    out
}

/// Each resample's class counts drawn directly as a multinomial over
/// classes of sizes `size` (m clusters in all): class by class, the
/// binomial of what is left with probability size_k / (clusters not yet
/// passed), each resample from its own generator in class order — as one
/// resample at a time would, so the same counts. Going class by class over
/// the block lets resamples with as many left share the binomial's set-up
/// (`Binomial::new`, a pure function of the two), kept in `made` while
/// it holds fewer than [`MADE`]: the binomials of a class recur across the
/// block's resamples (and, while they fit, the blocks').
fn multinomial_block<const W: usize, C: Count>(
    counts: &mut [C],
    size: &[u64],
    m: u64,
    rngs: &mut [Xoshiro],
    made: &mut Binomials,
) {
    let mut left = [m; W];
    let mut mass = m;
    for (k, &size) in size.iter().enumerate() {
        // Never more than MADE and one class's (at most W).
        if made.len() > MADE {
            made.clear();
        }
        let p = size as f64 / mass as f64;
        for (r, rng) in rngs.iter_mut().enumerate() {
            let n = left[r];
            if n == 0 {
                continue;
            }
            let x = if size == mass {
                n
            } else {
                let d = made
                    .entry((n, p.to_bits()))
                    .or_insert_with(|| Binomial::new(n, p));
                d.as_ref().map_or(0, |d| d.sample(rng))
            };
            counts[k * W + r] = C::of(x);
            left[r] -= x;
        }
        mass -= size;
    }
}

/// The binomials a worker has set up, by (n, p's bits).
type Binomials = crate::schema::FastMap<(u64, u64), Option<Binomial>>;

/// The most binomials a worker keeps (about 1.5 MB).
const MADE: usize = 8192;

/// Σ count × weight (into `w`) and Σ count × value per statistic (into
/// `acc`, stat-major, `W` per statistic) over a family's classes, for `W`
/// resamples; `class(k)` is class k's counts. Every sum runs over the
/// classes in order from 0.0, as one resample alone would (the same bits).
/// The resamples go 16 at a time through the classes with the weights and
/// one statistic, 8 at a time with up to three, their sums held in
/// registers: a sum stored and loaded again for every class was most of
/// this function's time.
#[inline(always)]
fn accumulate<'c, const W: usize, N: Count>(
    cl: &Classes,
    class: impl Fn(usize) -> &'c [N],
    w: &mut [f64; W],
    acc: &mut [f64],
) {
    w.fill(0.0);
    acc.fill(0.0);
    // Classes a tile at a time, every statistic and resample through each
    // tile while its counts and values are in L1: at 28,645 tasks (11 M
    // trajectories) passes over all the classes for every group of
    // statistics and resamples left Pass@(K,T) at 58 s, tiles at 50–52 s.
    const TILE: usize = 128;
    for k0 in (0..cl.len()).step_by(TILE) {
        let tile = k0..cl.len().min(k0 + TILE);
        let mut s0 = 0;
        loop {
            let g = (cl.stats - s0).min(3);
            let t = tile.clone();
            match (s0 == 0, g) {
                (true, 0) => sums::<W, 16, true, 0, N>(cl, &class, s0, t, w, acc),
                (true, 1) => sums::<W, 16, true, 1, N>(cl, &class, s0, t, w, acc),
                (true, 2) => sums::<W, 8, true, 2, N>(cl, &class, s0, t, w, acc),
                (true, _) => sums::<W, 8, true, 3, N>(cl, &class, s0, t, w, acc),
                (false, 1) => sums::<W, 16, false, 1, N>(cl, &class, s0, t, w, acc),
                (false, 2) => sums::<W, 8, false, 2, N>(cl, &class, s0, t, w, acc),
                (false, _) => sums::<W, 8, false, 3, N>(cl, &class, s0, t, w, acc),
            }
            s0 += g;
            if s0 >= cl.stats {
                break;
            }
        }
    }
}

/// [`accumulate`]'s statistics `s0 .. s0 + G` (and the weights when
/// `WEIGHT`) over the classes `tile`, added to the sums so far, `C`
/// resamples at a time (`W` when fewer): as many sums as registers hold.
#[inline(always)]
fn sums<'c, const W: usize, const C: usize, const WEIGHT: bool, const G: usize, N: Count>(
    cl: &Classes,
    class: &impl Fn(usize) -> &'c [N],
    s0: usize,
    tile: std::ops::Range<usize>,
    w: &mut [f64; W],
    acc: &mut [f64],
) {
    let c = W.min(C);
    let n_stats = cl.stats;
    let weights = &cl.weights[tile.clone()];
    let values = &cl.sums[tile.start * n_stats..tile.end * n_stats];
    for r0 in (0..W).step_by(c) {
        let mut lw = [0.0f64; C];
        let mut la = [[0.0f64; C]; G];
        if WEIGHT {
            lw[..c].copy_from_slice(&w[r0..r0 + c]);
        }
        for (t, a) in la.iter_mut().enumerate() {
            a[..c].copy_from_slice(&acc[(s0 + t) * W + r0..][..c]);
        }
        for (i, &wk) in weights.iter().enumerate() {
            let cnt = &class(tile.start + i)[r0..r0 + c];
            let v = &values[i * n_stats + s0..][..G];
            for j in 0..c {
                let x = cnt[j].to_f64();
                if WEIGHT {
                    lw[j] += x * wk;
                }
                for t in 0..G {
                    la[t][j] += x * v[t];
                }
            }
        }
        if WEIGHT {
            w[r0..r0 + c].copy_from_slice(&lw[..c]);
        }
        for (t, a) in la.iter().enumerate() {
            acc[(s0 + t) * W + r0..][..c].copy_from_slice(&a[..c]);
        }
    }
}

/// Per statistic of a pass: its replicates → the interval.
fn estimates(
    classes: &[Classes],
    live: &[bool],
    blocks: &Blocks,
    stat_offset: &[usize],
    cfg: &Bootstrap,
) -> Vec<Vec<Estimate>> {
    let b_total = cfg.resamples;
    let jobs: Vec<(usize, usize)> = classes
        .iter()
        .enumerate()
        .flat_map(|(f, c)| (0..c.stats).map(move |s| (f, s)))
        .collect();
    let estimates: Vec<Estimate> = jobs
        .par_iter()
        .map(|&(f, s)| {
            let c = &classes[f];
            if !live[f] {
                return Estimate::UNDEFINED;
            }
            let value = c.value(s);
            let mut stats: Vec<f64> = column(blocks, stat_offset[f] + s, b_total)
                .filter(|x| x.is_finite())
                .collect();
            let ci = interval_from(&mut stats, value, cfg, || {
                let clusters: Vec<Cluster> =
                    c.of.iter()
                        .map(|&k| Cluster {
                            sum: c.sum(k, s),
                            weight: c.weights[k as usize],
                        })
                        .collect();
                jackknife(&clusters)
            });
            Estimate { value, ci }
        })
        .collect();
    let mut it = estimates.into_iter();
    classes
        .iter()
        .map(|c| it.by_ref().take(c.stats).collect())
        .collect()
}

/// Draws m cluster ids for each resample of a block, counting them per
/// cluster: `draws[i * W + r]`, every entry of `draws` (`m * W`) written.
/// Each resample counts into its own cache-resident row first; the rows are
/// then transposed tile by tile. `AVX2`: only inlined into [`block_avx2`].
#[inline(always)]
fn draw_block<const W: usize, C: Count, const AVX2: bool>(
    draws: &mut [C],
    rows: &mut Vec<C>,
    rngs: &mut [Xoshiro],
    m: u32,
) {
    let mu = m as usize;
    rows.clear();
    // A row for every resample of the block; those past the last resample
    // stay zero, as their draws do.
    rows.resize(W * mu, C::default());
    // Resamples `LANES` at a time, their generators stepped side by side
    // (vector registers in the AVX2 build), the rest one at a time.
    let done = rngs.len() / LANES * LANES;
    for (group, g) in rows
        .chunks_exact_mut(LANES * mu)
        .zip(rngs.chunks_exact_mut(LANES))
    {
        let mut it = group.chunks_exact_mut(mu);
        let rows: [&mut [C]; LANES] = std::array::from_fn(|_| it.next().expect("a row"));
        let g: &mut [Xoshiro; LANES] = g.try_into().expect("LANES generators");
        #[cfg(target_arch = "x86_64")]
        if AVX2 {
            // SAFETY: `AVX2` is true only in `block_avx2`'s build, which
            // runs where the processor has AVX2.
            unsafe { draw_rows_avx2::<C>(rows, g, m) };
            continue;
        }
        draw_rows::<LANES, C>(rows, g, m);
    }
    for (row, g) in rows[done * mu..]
        .chunks_exact_mut(mu)
        .zip(&mut rngs[done..])
    {
        draw_rows::<1, C>([row], std::array::from_mut(g), m);
    }
    if W >= 8 {
        transpose::<W, 8, C>(draws, rows, mu);
    } else {
        transpose::<W, 4, C>(draws, rows, mu);
    }
}

/// Resamples whose draws go side by side (one AVX2 register of each
/// generator word).
const LANES: usize = 4;

/// m draws from each of `N` generators, counted into its row, the
/// generators stepped side by side; each generator's draws are those it
/// makes alone, in the same order: two 32-bit draws from each 64-bit
/// output, each as [`bounded_from`] makes it.
#[inline(always)]
fn draw_rows<const N: usize, C: Count>(mut rows: [&mut [C]; N], gens: &mut [Xoshiro; N], m: u32) {
    let mut lanes = Lanes::of(gens);
    let m64 = u64::from(m);
    for _ in 0..m / 2 {
        let x = lanes.next_u64();
        let lo: [u64; N] = std::array::from_fn(|j| (x[j] & 0xFFFF_FFFF) * m64);
        let hi: [u64; N] = std::array::from_fn(|j| (x[j] >> 32) * m64);
        // `bounded_from`'s test for a draw it might reject, every lane at
        // once: true about once in 2^32 / m draws.
        let mut near = false;
        for j in 0..N {
            near |= ((lo[j] as u32) < m) | ((hi[j] as u32) < m);
        }
        if near {
            let mut g = lanes.unpack();
            draw_pairs_exactly(&mut rows, &mut g, x, m);
            lanes = Lanes::of(&g);
        } else {
            for (row, (l, h)) in rows.iter_mut().zip(lo.iter().zip(&hi)) {
                row[(l >> 32) as usize] += C::ONE;
                row[(h >> 32) as usize] += C::ONE;
            }
        }
    }
    *gens = lanes.unpack();
    draw_last_if_odd(&mut rows, gens, m);
}

/// [`draw_rows`] of four generators in AVX2 registers: the same draws.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn draw_rows_avx2<C: Count>(mut rows: [&mut [C]; 4], gens: &mut [Xoshiro; 4], m: u32) {
    use super::xoshiro::avx2::{lanes, Lanes4};
    use std::arch::x86_64::*;
    assert!(
        rows.iter().all(|r| r.len() == m as usize),
        "a row per cluster"
    );
    let mut l = Lanes4::of(gens);
    let mv = _mm256_set1_epi64x(i64::from(m));
    let low32 = _mm256_set1_epi64x(0xFFFF_FFFF);
    for _ in 0..m / 2 {
        let x = l.next_u64();
        let lo = _mm256_mul_epu32(x, mv);
        let hi = _mm256_mul_epu32(_mm256_srli_epi64::<32>(x), mv);
        // `bounded_from`'s test (the product's low 32 bits below m).
        let near = _mm256_or_si256(
            _mm256_cmpgt_epi64(mv, _mm256_and_si256(lo, low32)),
            _mm256_cmpgt_epi64(mv, _mm256_and_si256(hi, low32)),
        );
        if _mm256_testz_si256(near, near) == 0 {
            let mut g = l.unpack();
            draw_pairs_exactly(&mut rows, &mut g, lanes(x), m);
            l = Lanes4::of(&g);
        } else {
            let a = lanes(_mm256_srli_epi64::<32>(lo));
            let b = lanes(_mm256_srli_epi64::<32>(hi));
            for (row, (a, b)) in rows.iter_mut().zip(a.iter().zip(&b)) {
                // SAFETY: (x × m) >> 32 < m for x < 2^32, and every row
                // holds m counts (asserted above).
                unsafe {
                    *row.get_unchecked_mut(*a as usize) += C::ONE;
                    *row.get_unchecked_mut(*b as usize) += C::ONE;
                }
            }
        }
    }
    *gens = l.unpack();
    draw_last_if_odd(&mut rows, gens, m);
}

/// Each generator's two draws from its output `x[j]`, as [`bounded_from`]
/// makes them (a rejected half replaced from the generator).
#[inline(always)]
fn draw_pairs_exactly<const N: usize, C: Count>(
    rows: &mut [&mut [C]; N],
    gens: &mut [Xoshiro; N],
    x: [u64; N],
    m: u32,
) {
    for (j, (row, g)) in rows.iter_mut().zip(gens.iter_mut()).enumerate() {
        row[bounded_from(x[j] as u32, g, m) as usize] += C::ONE;
        row[bounded_from((x[j] >> 32) as u32, g, m) as usize] += C::ONE;
    }
}

/// An odd m's last draw, from a fresh 32-bit output of each generator.
#[inline(always)]
fn draw_last_if_odd<const N: usize, C: Count>(
    rows: &mut [&mut [C]; N],
    gens: &mut [Xoshiro; N],
    m: u32,
) {
    if m % 2 == 1 {
        for (row, g) in rows.iter_mut().zip(gens.iter_mut()) {
            let x = g.next_u32();
            row[bounded_from(x, g, m) as usize] += C::ONE;
        }
    }
}

/// `draws[i * W + r] = rows[r * mu + i]`, a tile of clusters at a time, `G`
/// rows at a time: each cluster's `G` counts gathered and stored as one
/// run. Storing them one at a time was about a third of [`draw_block`]'s
/// time (`c200k`: its share of the run's samples 19.9 → 14.9 %).
#[inline(always)]
fn transpose<const W: usize, const G: usize, C: Count>(draws: &mut [C], rows: &[C], mu: usize) {
    const TILE: usize = 64;
    for i0 in (0..mu).step_by(TILE) {
        let n = TILE.min(mu - i0);
        for r0 in (0..W).step_by(G) {
            let src: [&[C]; G] = std::array::from_fn(|j| &rows[(r0 + j) * mu + i0..][..n]);
            for (k, dst) in draws[i0 * W..].chunks_exact_mut(W).take(n).enumerate() {
                let v: [C; G] = std::array::from_fn(|j| src[j][k]);
                dst[r0..r0 + G].copy_from_slice(&v);
            }
        }
    }
}

/// A family's class counts for a block: each class's draw counts summed
/// over its clusters (`list`: the clusters class by class, `size[k]` of
/// class k; [`clusters_by_class`]) in registers, and written once — a
/// class row loaded, added to and stored for every cluster was most of the
/// block's time (the store port's limit: at 1 M trajectories Pass@(K,T)
/// has 480 families of ~2,600 clusters and ~42 classes). The largest
/// class is not summed: a resample draws m clusters in all, so its count is
/// m less the others' (exact integers, the same counts; at 1 M trajectories
/// 40 % of the clusters summed, half of them in the joint families).
#[inline(always)]
fn class_counts<const W: usize, C: Count, const AVX2: bool>(
    counts: &mut [C],
    list: &[u32],
    size: &[u64],
    draws: &[C],
    m: u32,
) {
    // The first of the largest classes.
    let largest = size
        .iter()
        .enumerate()
        .fold(
            (0, 0),
            |(k, n), (j, &s)| if s > n { (j, s) } else { (k, n) },
        )
        .0;
    #[cfg(target_arch = "x86_64")]
    if AVX2 && (W * std::mem::size_of::<C>()).is_multiple_of(32) {
        // SAFETY: `AVX2` is true only in `block_avx2`'s build, which runs
        // where the processor has AVX2.
        unsafe { class_counts_avx2::<W, C>(counts, list, size, draws, largest, m) };
        return;
    }
    let mut at = 0;
    let mut total = [C::default(); W];
    for (k, (dst, &n)) in counts.chunks_exact_mut(W).zip(size).enumerate() {
        dst.fill(C::default());
        if k != largest {
            for &i in &list[at..at + n as usize] {
                let src = &draws[i as usize * W..(i as usize + 1) * W];
                for (d, s) in dst.iter_mut().zip(src) {
                    *d += *s;
                }
            }
            for (t, d) in total.iter_mut().zip(dst.iter()) {
                *t += *d;
            }
        }
        at += n as usize;
    }
    if let Some(dst) = counts.chunks_exact_mut(W).nth(largest) {
        for (d, t) in dst.iter_mut().zip(total) {
            *d = C::of(u64::from(m)) - t;
        }
    }
}

/// [`class_counts`] in AVX2 registers, 32 bytes of counts at a time (LLVM
/// left the 16-wide u16 sum of 11 M's blocks scalar: `movzwl`, `add`). The
/// same sums: no count exceeds m, which fits the count type, so wrapping
/// lane adds are exact.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn class_counts_avx2<const W: usize, C: Count>(
    counts: &mut [C],
    list: &[u32],
    size: &[u64],
    draws: &[C],
    largest: usize,
    m: u32,
) {
    use std::arch::x86_64::*;
    let vectors = W * std::mem::size_of::<C>() / 32;
    assert_eq!(vectors * 32, W * std::mem::size_of::<C>(), "whole vectors");
    assert!(vectors <= 8, "at most 64 four-byte counts");
    assert!(std::mem::size_of::<C>() == 2 || std::mem::size_of::<C>() == 4);
    let two = std::mem::size_of::<C>() == 2;
    let add = |a, b| {
        if two {
            _mm256_add_epi16(a, b)
        } else {
            _mm256_add_epi32(a, b)
        }
    };
    let mut total = [_mm256_setzero_si256(); 8];
    let mut at = 0;
    for (k, (dst, &n)) in counts.chunks_exact_mut(W).zip(size).enumerate() {
        let mut v = [_mm256_setzero_si256(); 8];
        if k != largest {
            for &i in &list[at..at + n as usize] {
                let src = &draws[i as usize * W..(i as usize + 1) * W];
                let s = src.as_ptr().cast::<__m256i>();
                for (j, v) in v.iter_mut().enumerate().take(vectors) {
                    // SAFETY: `src` holds W counts, `vectors` × 32 bytes
                    // (asserted above); an unaligned load.
                    *v = add(*v, unsafe { _mm256_loadu_si256(s.add(j)) });
                }
            }
            for (t, v) in total.iter_mut().zip(&v).take(vectors) {
                *t = add(*t, *v);
            }
        }
        let d = dst.as_mut_ptr().cast::<__m256i>();
        for (j, v) in v.iter().enumerate().take(vectors) {
            // SAFETY: `dst` holds W counts, `vectors` × 32 bytes; an
            // unaligned store.
            unsafe { _mm256_storeu_si256(d.add(j), *v) };
        }
        at += n as usize;
    }
    // The largest class: m less the others (no lane exceeds m, so the
    // wrapping lane arithmetic is exact).
    if let Some(dst) = counts.chunks_exact_mut(W).nth(largest) {
        let all = if two {
            _mm256_set1_epi16(m as u16 as i16)
        } else {
            _mm256_set1_epi32(m as i32)
        };
        let d = dst.as_mut_ptr().cast::<__m256i>();
        for (j, t) in total.iter().enumerate().take(vectors) {
            let c = if two {
                _mm256_sub_epi16(all, *t)
            } else {
                _mm256_sub_epi32(all, *t)
            };
            // SAFETY: as above.
            unsafe { _mm256_storeu_si256(d.add(j), c) };
        }
    }
}

/// A uniform integer in 0..n from the 32 random bits `x`, exactly
/// (Lemire's multiply-and-reject; a rejected `x` is replaced from `rng`).
fn bounded_from(mut x: u32, rng: &mut Xoshiro, n: u32) -> u32 {
    let mut mul = u64::from(x) * u64::from(n);
    let mut low = mul as u32;
    if low < n {
        let threshold = n.wrapping_neg() % n;
        while low < threshold {
            x = rng.next_u32();
            mul = u64::from(x) * u64::from(n);
            low = mul as u32;
        }
    }
    (mul >> 32) as u32
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
    fn shared_draws_match_the_normal_approximation() {
        // Two families over the same 1000 tasks, forced onto shared draws by
        // the second one's many classes. Family 0: 0/1 values, 30% ones →
        // interval 0.3 ± 1.96·sqrt(0.21/1000) = 0.3 ± 0.0284. Family 1:
        // values i/1000 → mean 0.4995, sd of the mean
        // sqrt((1000²−1)/12)/1000/sqrt(1000) = 0.009129 → ± 0.0179.
        let m = 1000;
        let f0 = Family {
            sums: vec![(0..m).map(|i| f64::from(i % 10 < 3)).collect()],
            weights: vec![1.0; m],
        };
        let f1 = Family {
            sums: vec![(0..m).map(|i| i as f64 / 1000.0).collect()],
            weights: vec![1.0; m],
        };
        let out = cluster_bootstrap_families(&[f0, f1], &Bootstrap::default());
        let (l0, h0) = out[0][0].ci.bounds().unwrap();
        assert!(
            (l0 - 0.2716).abs() < 0.003 && (h0 - 0.3284).abs() < 0.003,
            "{l0} {h0}"
        );
        let (l1, h1) = out[1][0].ci.bounds().unwrap();
        assert!((out[1][0].value - 0.4995).abs() < 1e-12);
        assert!(
            (l1 - 0.4816).abs() < 0.002 && (h1 - 0.5174).abs() < 0.002,
            "{l1} {h1}"
        );
    }

    #[test]
    fn weighted_clusters_give_the_ratio_of_sums() {
        // Clusters of 1 or 3 items; the statistic is Σsum/Σweight.
        let clusters: Vec<Cluster> = (0..400)
            .map(|i| {
                let w = if i % 2 == 0 { 1.0 } else { 3.0 };
                Cluster {
                    sum: if i % 4 == 1 { w } else { 0.0 },
                    weight: w,
                }
            })
            .collect();
        // Σsum = 100 clusters × 3 = 300; Σweight = 200 + 600 = 800.
        let e = cluster_bootstrap(&clusters, &Bootstrap::default());
        assert!((e.value - 0.375).abs() < 1e-12);
        let (l, h) = e.ci.bounds().unwrap();
        assert!(l < 0.375 && h > 0.375 && h - l < 0.2, "{l} {h}");
    }

    #[test]
    fn families_bootstrapped_in_passes_equal_each_alone() {
        // 3 × 150 statistics × 10,000 resamples exceed one pass: the
        // families are bootstrapped in passes that redraw the same resamples.
        let fam = |shift: usize| Family {
            sums: (0..200)
                .map(|s| {
                    (0..100)
                        .map(|i| ((i * 31 + s * 7 + shift) % 97) as f64)
                        .collect()
                })
                .collect(),
            weights: vec![1.0; 100],
        };
        let fams = [fam(0), fam(1), fam(2)];
        const { assert!(450 * 10_000 > MAX_REPLICATES) };
        let together = cluster_bootstrap_families(&fams, &Bootstrap::default());
        for (f, got) in fams.iter().zip(&together) {
            let alone = cluster_bootstrap_families(std::slice::from_ref(f), &Bootstrap::default());
            assert_eq!(got, &alone[0]);
        }
    }

    /// Families known degenerate without drawing get the estimates drawing
    /// gives, to the bit; those that might not be are drawn. Per task, the
    /// sum of `steps` per-step values, each a difference of two
    /// log-probabilities rounded to three places (as gen_large writes
    /// them), whose exact difference is `shift`: ratios equal but for
    /// rounding (gen_large's LLR by turn). Few classes (their counts drawn
    /// directly) and many (task ids drawn); a ratio of zero; ratios
    /// 2·10⁻¹³ apart (known) and 10⁻¹¹ apart (drawn: its replicates are
    /// not degenerate); sums of both signs (drawn); several statistics.
    #[test]
    fn families_known_degenerate_are_what_drawing_gives() {
        let r3 = |x: f64| (x * 1000.0).round() / 1000.0;
        let llr = |tasks: usize, turns: usize, shift: f64| -> Family {
            let (mut sums, mut weights) = (Vec::new(), Vec::new());
            for t in 0..tasks {
                let steps = 1 + (t * 7 + turns) % turns;
                let mut sum = 0.0;
                for j in 0..steps {
                    let base = -(8.0 + ((t * 31 + j * 17) % 6000) as f64 / 1000.0);
                    sum += r3(base - shift) - r3(base);
                }
                sums.push(sum);
                weights.push(steps as f64);
            }
            Family {
                sums: vec![sums],
                weights,
            }
        };
        // 3.5 × (1, 1 + by, 1 + 2by), every seventh negated if `mixed`.
        let spread = |tasks: usize, by: f64, mixed: bool| -> Family {
            let sign = |t: usize| {
                if mixed && t.is_multiple_of(7) {
                    -1.0
                } else {
                    1.0
                }
            };
            Family {
                sums: vec![(0..tasks)
                    .map(|t| sign(t) * 3.5 * (1.0 + by * (t % 3) as f64))
                    .collect()],
                weights: vec![1.0; tasks],
            }
        };
        let cfg = Bootstrap {
            resamples: 2000,
            ..Bootstrap::default()
        };
        let cases: Vec<(&str, Vec<Family>, bool)> = vec![
            ("few classes", vec![llr(900, 3, 1.5)], true),
            ("many classes", vec![llr(900, 40, -3.5)], true),
            (
                "two families",
                vec![llr(300, 40, 1.5), llr(300, 9, 2.0)],
                true,
            ),
            (
                "zero",
                vec![Family {
                    sums: vec![vec![0.0; 50], vec![-0.0; 50]],
                    weights: (1..=50).map(f64::from).collect(),
                }],
                true,
            ),
            ("2e-13 apart", vec![spread(600, 2e-13, false)], true),
            ("1e-11 apart", vec![spread(600, 1e-11, false)], false),
            ("both signs", vec![spread(600, 0.0, true)], false),
            (
                "one of two not",
                vec![llr(600, 9, 1.5), spread(600, 1e-11, false)],
                false,
            ),
        ];
        // Whether the known families' counts would be drawn directly.
        let mut ways = std::collections::BTreeSet::new();
        for (what, fams, known) in cases {
            let classes = || fams.iter().map(Classes::new).collect::<Vec<_>>();
            if known {
                ways.extend(
                    classes()
                        .iter()
                        .map(|c| draws_directly(c, true, c.clusters())),
                );
            }
            let drawing = drawn(classes(), &cfg);
            assert_eq!(
                known_degenerate(&classes(), &cfg).is_some(),
                known,
                "{what}"
            );
            assert_eq!(bootstrap_classes(classes(), &cfg), drawing, "{what}");
            if known {
                assert!(
                    drawing.iter().flatten().all(|e| e.ci == Ci::Degenerate),
                    "{what}"
                );
            } else {
                assert!(
                    drawing.iter().flatten().any(|e| e.ci != Ci::Degenerate),
                    "{what}"
                );
            }
        }
        assert_eq!(ways.len(), 2, "multinomial and task-id draws");
    }

    #[test]
    fn sets_bootstrapped_each_equal_each_alone() {
        // 90 and 97 levels over 6,000 tasks (few classes: their counts are
        // drawn directly) and distinct values over 6,000 and 50 (task ids
        // drawn), each twice with different values: every estimate is the
        // one `cluster_bootstrap` gives the set alone.
        let set = |n: usize, f: &dyn Fn(usize) -> f64| -> Vec<Cluster> {
            (0..n).map(|i| Cluster::one(f(i))).collect()
        };
        let sets = vec![
            set(6000, &|i| ((i * 7) % 90) as f64 / 89.0),
            set(6000, &|i| (i as f64 * 0.618_034).fract()),
            set(6000, &|i| ((i * 13) % 97) as f64 / 96.0),
            set(50, &|i| (i as f64 * 0.414_213).fract()),
            set(6000, &|i| (i as f64 * 0.732_050).fract()),
            set(50, &|i| (i as f64 * 0.236_067).fract()),
        ];
        let cfg = Bootstrap::default();
        let each = cluster_bootstrap_each(sets.clone(), &cfg);
        for (c, got) in sets.iter().zip(&each) {
            assert_eq!(got, &cluster_bootstrap(c, &cfg));
        }
    }

    #[test]
    fn the_block_width_changes_no_replicate() {
        // Repeated values (class counts summed), distinct values (draw
        // counts read in place) and few classes drawn directly, over 333
        // clusters and 1,000 resamples (not a multiple of any width).
        let fams = [
            Family {
                sums: vec![
                    (0..333).map(|i| ((i * 7) % 13) as f64).collect(),
                    (0..333).map(|i| (i % 3) as f64).collect(),
                ],
                weights: (0..333).map(|i| 1.0 + (i % 2) as f64).collect(),
            },
            Family {
                sums: vec![(0..333).map(|i| (i as f64 * 0.618_034).fract()).collect()],
                weights: vec![1.0; 333],
            },
        ];
        let cfg = Bootstrap {
            resamples: 1000,
            ..Bootstrap::default()
        };
        for direct in [false, true] {
            let classes: Vec<Classes> = fams.iter().map(Classes::new).collect();
            let live = vec![true; classes.len()];
            let run = |out: Vec<Vec<f64>>, width: usize| {
                let b = Blocks { out, width };
                (0..3)
                    .map(|s| column(&b, s, cfg.resamples).map(f64::to_bits).collect())
                    .collect::<Vec<Vec<u64>>>()
            };
            let wide = run(
                replicate_blocks_of::<64, u32>(&classes, &live, direct, &cfg).0,
                64,
            );
            let mid = run(
                replicate_blocks_of::<16, u16>(&classes, &live, direct, &cfg).0,
                16,
            );
            let narrow = run(
                replicate_blocks_of::<4, u32>(&classes, &live, direct, &cfg).0,
                4,
            );
            let short = run(
                replicate_blocks_of::<64, u16>(&classes, &live, direct, &cfg).0,
                64,
            );
            assert_eq!(wide, short);
            assert_eq!(wide, mid);
            assert_eq!(wide, narrow);
            assert!(wide[0].len() == 1000 && wide[2].iter().any(|&x| x != wide[2][0]));
        }
    }

    /// Every replicate of a block — plain and AVX2 builds, blocks of 64, 16
    /// and 4, counts of 2 and 4 bytes — equals the one computed a resample at a time: m ids drawn from
    /// the resample's generator two to a 64-bit output, each class's count
    /// summed, Σ count × value / Σ count × weight in class order. Families
    /// of 5, 1 and 2 statistics (sums in groups of three and two); m odd;
    /// 150 resamples (a partial last block, an odd generator at its end).
    /// Generators stepped side by side (and in AVX2 registers) count the
    /// draws each makes alone with `bounded_from`, over m small and odd,
    /// and over m = 2^20 + 7, where a draw is near a rejection once in
    /// 4,096 and rejected about once in 4,200 (2^32 mod m = 1,019,911).
    #[test]
    fn rows_drawn_side_by_side_are_each_generators_own() {
        for m in [1u32, 2, 3, 333, (1 << 20) + 7] {
            let alone = |b: usize| {
                let mut rng = resample_rng(3, b);
                let mut row = vec![0u32; m as usize];
                for _ in 0..m / 2 {
                    let x = rng.next_u64();
                    row[bounded_from(x as u32, &mut rng, m) as usize] += 1;
                    row[bounded_from((x >> 32) as u32, &mut rng, m) as usize] += 1;
                }
                if m % 2 == 1 {
                    let x = rng.next_u32();
                    row[bounded_from(x, &mut rng, m) as usize] += 1;
                }
                (row, rng.next_u64())
            };
            let want: Vec<(Vec<u32>, u64)> = (0..4).map(alone).collect();
            let check = |rows: Vec<Vec<u32>>, gens: [Xoshiro; 4], how: &str| {
                for (j, (row, mut g)) in rows.into_iter().zip(gens).enumerate() {
                    assert!(row == want[j].0, "m {m}, {how}: lane {j}'s counts");
                    assert_eq!(
                        g.next_u64(),
                        want[j].1,
                        "m {m}, {how}: lane {j}'s generator"
                    );
                }
            };
            let fresh = || -> ([Xoshiro; 4], Vec<Vec<u32>>) {
                (
                    std::array::from_fn(|b| resample_rng(3, b)),
                    vec![vec![0u32; m as usize]; 4],
                )
            };
            let (mut gens, mut rows) = fresh();
            let [a, b, c, d] = &mut rows[..] else {
                unreachable!()
            };
            draw_rows::<4, u32>([a, b, c, d], &mut gens, m);
            check(rows, gens, "four lanes");
            let (gens, mut rows) = fresh();
            let mut gens = gens.map(|g| [g]);
            for (row, g) in rows.iter_mut().zip(&mut gens) {
                draw_rows::<1, u32>([row], g, m);
            }
            check(rows, gens.map(|[g]| g), "one lane");
            #[cfg(target_arch = "x86_64")]
            if std::arch::is_x86_feature_detected!("avx2") {
                let (mut gens, mut rows) = fresh();
                let [a, b, c, d] = &mut rows[..] else {
                    unreachable!()
                };
                // SAFETY: the processor has AVX2, checked just now.
                unsafe { draw_rows_avx2::<u32>([a, b, c, d], &mut gens, m) };
                check(rows, gens, "AVX2");
            }
        }
    }

    #[test]
    fn blocks_equal_one_resample_at_a_time() {
        let m = 333;
        let fams = [
            Family {
                sums: (0..5)
                    .map(|s| (0..m).map(|i| ((i * 7 + s) % 13) as f64 * 0.1).collect())
                    .collect(),
                weights: (0..m).map(|i| 1.0 + (i % 2) as f64).collect(),
            },
            Family {
                sums: vec![(0..m).map(|i| (i as f64 * 0.618_034).fract()).collect()],
                weights: (0..m).map(|i| 1.0 + (i % 5) as f64).collect(),
            },
            Family {
                sums: vec![
                    (0..m).map(|i| (i % 3) as f64).collect(),
                    (0..m).map(|i| -((i % 4) as f64) / 3.0).collect(),
                ],
                weights: vec![2.0; m],
            },
        ]
        .into_iter()
        // Five more families of a few classes each, their clusters in
        // classes interleaved (class counts summed over lists of them).
        .chain((0..5).map(|j| Family {
            sums: vec![(0..m).map(|i| ((i * (j + 2)) % (j + 3)) as f64).collect()],
            weights: (0..m).map(|i| 1.0 + (i % (j + 2)) as f64).collect(),
        }))
        .collect::<Vec<_>>();
        let cfg = Bootstrap {
            resamples: 150,
            seed: 7,
            ..Bootstrap::default()
        };
        let reference = |b: usize| -> Vec<u64> {
            let mut rng = resample_rng(cfg.seed, b);
            let mut drawn = vec![0u32; m];
            for _ in 0..m / 2 {
                let x = rng.next_u64();
                drawn[bounded_from(x as u32, &mut rng, m as u32) as usize] += 1;
                drawn[bounded_from((x >> 32) as u32, &mut rng, m as u32) as usize] += 1;
            }
            let x = rng.next_u32();
            drawn[bounded_from(x, &mut rng, m as u32) as usize] += 1;
            let mut out = Vec::new();
            for f in &fams {
                let c = Classes::new(f);
                let mut count = vec![0u32; c.len()];
                for (i, &k) in c.of.iter().enumerate() {
                    count[k as usize] += drawn[i];
                }
                let w: f64 = (0..c.len()).fold(0.0, |a, k| a + f64::from(count[k]) * c.weights[k]);
                for s in 0..c.stats {
                    let v =
                        (0..c.len()).fold(0.0, |a, k| a + f64::from(count[k]) * c.sum(k as u32, s));
                    out.push((v / w).to_bits());
                }
            }
            out
        };
        let want: Vec<Vec<u64>> = (0..cfg.resamples).map(reference).collect();
        let classes: Vec<Classes> = fams.iter().map(Classes::new).collect();
        assert!(classes[0].len() < m && classes[1].len() == m);
        assert!(classes.iter().filter(|c| c.len() < m).count() > 4);
        let live = vec![true; classes.len()];
        let lists: Vec<Vec<u32>> = classes.iter().map(clusters_by_class).collect();
        let stat_offset: Vec<usize> = std::iter::once(0)
            .chain(classes.iter().scan(0, |n, c| {
                *n += c.stats;
                Some(*n)
            }))
            .collect();
        let stats = stat_offset[classes.len()];
        let input = BlockInput {
            classes: &classes,
            live: &live,
            direct: false,
            lists: &lists,
            stat_offset: &stat_offset,
            m: m as u32,
            cfg: &cfg,
        };
        fn check<const W: usize, C: Count>(input: &BlockInput, want: &[Vec<u64>], stats: usize) {
            type Build<C> = fn(&BlockInput, &mut Scratch<C>, usize) -> Vec<f64>;
            let mut builds: Vec<(&str, Build<C>)> = vec![("plain", block::<W, C, false>)];
            #[cfg(target_arch = "x86_64")]
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: the processor has AVX2, checked just now.
                builds.push(("avx2", |i, s, b| unsafe { block_avx2::<W, C>(i, s, b) }));
            }
            for (name, build) in builds {
                let mut scratch = Scratch::default();
                for (b, want) in want.iter().enumerate() {
                    let out = build(input, &mut scratch, b / W);
                    let got: Vec<u64> = (0..stats).map(|s| out[s * W + b % W].to_bits()).collect();
                    let bytes = std::mem::size_of::<C>();
                    assert_eq!(
                        &got, want,
                        "{name} build, blocks of {W}, {bytes}-byte counts, resample {b}"
                    );
                }
            }
        }
        check::<64, u16>(&input, &want, stats);
        check::<64, u32>(&input, &want, stats);
        check::<16, u16>(&input, &want, stats);
        check::<16, u32>(&input, &want, stats);
        check::<4, u16>(&input, &want, stats);
        check::<4, u32>(&input, &want, stats);
    }

    #[test]
    fn multinomial_blocks_are_each_resamples_own_draws() {
        // Reference: one resample at a time, class by class, a binomial of
        // what is left with probability size / (clusters not yet passed),
        // stopping once nothing is left. Layouts: one class; a big class
        // first (its binomial the same in every resample); many small
        // classes (small means: the inversion method, many equal `left`s);
        // a last class of everything left. Blocks of 1, 5 and 64 resamples.
        fn reference(size: &[u64], m: u64, rng: &mut Xoshiro) -> Vec<u32> {
            let (mut left, mut mass) = (m, m);
            let mut out = vec![0u32; size.len()];
            for (k, &s) in size.iter().enumerate() {
                if left == 0 {
                    break;
                }
                let x = if s == mass {
                    left
                } else {
                    // rand_distr's own binomial: the reference for ours.
                    rand_distr::Binomial::new(left, s as f64 / mass as f64)
                        .map_or(0, |d| rand_distr::Distribution::sample(&d, rng))
                };
                out[k] = x as u32;
                left -= x;
                mass -= s;
            }
            out
        }
        let layouts: Vec<Vec<u64>> = vec![
            vec![40],
            vec![3000, 200, 50, 5, 1, 1],
            (0..120).map(|i| 1 + (i % 7)).collect(),
            vec![1, 1, 2, 500, 9000],
        ];
        // One worker's binomials, kept across blocks and layouts (past
        // MADE of them in the widest blocks: let go class by class).
        let mut made = Binomials::default();
        fn block<const W: usize>(
            size: &[u64],
            m: u64,
            rngs: &mut [Xoshiro],
            made: &mut Binomials,
        ) -> Vec<u32> {
            let mut counts = vec![0u32; size.len() * W];
            multinomial_block::<W, u32>(&mut counts, size, m, rngs, made);
            counts
        }
        for size in &layouts {
            let m: u64 = size.iter().sum();
            for (rr, w) in [
                (1usize, 64),
                (5, 64),
                (64, 64),
                (1, DIRECT_BLOCK),
                (1000, DIRECT_BLOCK),
            ] {
                let mut rngs: Vec<_> = (0..rr).map(|r| resample_rng(11, 300 + r)).collect();
                let counts = if w == 64 {
                    block::<64>(size, m, &mut rngs, &mut made)
                } else {
                    block::<DIRECT_BLOCK>(size, m, &mut rngs, &mut made)
                };
                for r in 0..rr {
                    let got: Vec<u32> = (0..size.len()).map(|k| counts[k * w + r]).collect();
                    let want = reference(size, m, &mut resample_rng(11, 300 + r));
                    assert_eq!(
                        got, want,
                        "sizes {size:?}, resample {r} of {rr}, blocks of {w}"
                    );
                    assert_eq!(got.iter().map(|&x| u64::from(x)).sum::<u64>(), m);
                }
                // Each generator was left where the reference leaves it.
                for (r, rng) in rngs.iter_mut().enumerate() {
                    let mut alone = resample_rng(11, 300 + r);
                    reference(size, m, &mut alone);
                    assert_eq!(rng.next_u64(), alone.next_u64());
                }
            }
        }
    }

    /// Multinomial draws in wide blocks give every resample's replicates
    /// as blocks of 64 do (each checked against one resample at a time in
    /// `multinomial_blocks_are_each_resamples_own_draws` and
    /// `blocks_equal_one_resample_at_a_time`).
    #[test]
    fn wide_direct_blocks_equal_narrow_ones() {
        let m = 3000;
        let fams: Vec<Family> = (0..3)
            .map(|j| Family {
                sums: (0..2)
                    .map(|s| {
                        (0..m)
                            .map(|i| ((i * (j + 3) + s) % (j + 5)) as f64 * 0.25)
                            .collect()
                    })
                    .collect(),
                weights: (0..m).map(|i| 1.0 + (i % (j + 2)) as f64).collect(),
            })
            .collect();
        let classes: Vec<Classes> = fams.iter().map(Classes::new).collect();
        let live = vec![true; classes.len()];
        assert!(classes.iter().all(|c| draws_directly(c, true, m)));
        let cfg = Bootstrap {
            resamples: 2500,
            seed: 5,
            ..Bootstrap::default()
        };
        let narrow = replicate_blocks_of::<64, u16>(&classes, &live, true, &cfg).0;
        let wide = replicate_blocks_of::<DIRECT_BLOCK, u16>(&classes, &live, true, &cfg).0;
        let bits = |out: Vec<Vec<f64>>, width: usize| -> Vec<Vec<u64>> {
            let blocks = Blocks { out, width };
            (0..6)
                .map(|col| {
                    column(&blocks, col, cfg.resamples)
                        .map(f64::to_bits)
                        .collect()
                })
                .collect()
        };
        assert_eq!(bits(wide, DIRECT_BLOCK), bits(narrow, 64));
    }

    #[test]
    fn results_do_not_depend_on_the_thread_count() {
        let fam = Family {
            sums: vec![
                (0..300).map(|i| ((i * 7) % 13) as f64).collect(),
                (0..300).map(|i| (i % 3) as f64).collect(),
            ],
            weights: vec![1.0; 300],
        };
        let run = |threads| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap()
                .install(|| {
                    cluster_bootstrap_families(std::slice::from_ref(&fam), &Bootstrap::default())
                })
        };
        assert_eq!(run(1), run(3));
    }
}
