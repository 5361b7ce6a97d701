//! Resamples in blocks: each block's class counts (from drawn cluster ids, or drawn directly as a multinomial), summed into every statistic's replicates, then the estimates.

use super::*;

/// Resamples handled together: per-cluster draw counts are laid out
/// cluster-major with this many resamples side by side, so summing a class's
/// clusters is a run of vector adds over the block.
const BLOCK: usize = 64;

/// The block of multinomial draws ([`multinomial_block`]): it holds no
/// draw counts per cluster, and the wider it is, the more of a class's
/// binomials recur within it — at 11 M trajectories (26,041 tasks) 81 % of
/// them were set up anew in blocks of 16 or 64, 19 % in blocks of 1,024
/// (the whole audit 3.5 CPU-s less of 58; README, session 35).
pub(super) const DIRECT_BLOCK: usize = 1024;

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
pub(super) struct Scratch<C> {
    draws: Vec<C>,
    rows: Vec<C>,
    counts: Vec<C>,
    /// A group's joint class counts ([`Groups`]).
    joint: Vec<C>,
    acc: Vec<f64>,
    binomials: Binomials,
}

/// A draw count (no count exceeds m): u16 while m < 2^16 — half the bytes
/// to zero, transpose and sum into class counts — else u32.
pub(super) trait Count:
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

/// Replicate `col` of every resample, in resample order.
pub(super) fn column(
    blocks: &Blocks,
    col: usize,
    b_total: usize,
) -> impl Iterator<Item = f64> + '_ {
    let bw = blocks.width;
    blocks.out.iter().enumerate().flat_map(move |(blk, out)| {
        let rr = bw.min(b_total - blk * bw);
        out[col * bw..col * bw + rr].iter().copied()
    })
}

/// A pass's replicates: per block of `width` resamples, stat-major with
/// `width` per statistic.
pub(super) struct Blocks {
    pub(super) out: Vec<Vec<f64>>,
    pub(super) width: usize,
}

/// Runs `pass` over the families in passes of at most [`MAX_REPLICATES`]
/// replicates, each pass drawing the very same resamples again (same
/// seeds), so how they are split does not change any result. `joint`:
/// every family must see the same draw of cluster ids (no per-family
/// multinomial shortcut).
pub(super) fn passes<T>(
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
pub(super) const MAX_REPLICATES: usize = 4 << 20;

/// The replicates of one pass, in blocks as wide as [`block_for`] m; and
/// where each family's statistics start.
pub(super) fn replicate_blocks(
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
pub(super) fn replicate_blocks_of<const W: usize, C: Count>(
    classes: &[Classes],
    live: &[bool],
    direct: bool,
    cfg: &Bootstrap,
) -> (Vec<Vec<f64>>, Vec<usize>) {
    let m = classes.first().map_or(0, Classes::clusters);
    // Class counts are sums of draw counts over a class's clusters, listed
    // class by class (families of distinct values read them in place), or
    // added up from their group's joint classes'.
    let summed: Vec<bool> = classes
        .iter()
        .zip(live)
        .map(|(c, &live)| !direct && live && c.len() < m)
        .collect();
    let groups = Groups::of(classes, &summed);
    let lists: Vec<Vec<u32>> = classes
        .iter()
        .zip(live)
        .zip(&groups.of)
        .map(|((c, &live), g)| {
            if direct || !live || g.is_some() {
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
        groups: &groups,
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
pub(super) struct BlockInput<'a> {
    pub(super) classes: &'a [Classes],
    pub(super) live: &'a [bool],
    pub(super) direct: bool,
    /// Per family, its clusters in class order ([`clusters_by_class`];
    /// empty for multinomial draws, families not live and those of a
    /// group).
    pub(super) lists: &'a [Vec<u32>],
    /// The families whose class counts are added up from joint ones.
    pub(super) groups: &'a Groups,
    /// Where each family's statistics start; the last, how many in all.
    pub(super) stat_offset: &'a [usize],
    /// Clusters (m).
    pub(super) m: u32,
    pub(super) cfg: &'a Bootstrap,
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
pub(super) fn block_avx2<const W: usize, C: Count>(
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
pub(super) fn block<const W: usize, C: Count, const AVX2: bool>(
    input: &BlockInput,
    scratch: &mut Scratch<C>,
    blk: usize,
) -> Vec<f64> {
    let BlockInput {
        classes,
        live,
        direct,
        lists,
        groups,
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
        joint,
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
        } else if let Some(g) = groups.of[f] {
            let g = &groups.groups[g as usize];
            if f == g.first {
                joint.clear();
                joint.resize(g.size.len() * W, C::default());
                class_counts::<W, C, AVX2>(joint, &g.list, &g.size, draws, m);
            }
            added_up::<W, C>(counts, joint, &g.to[f - g.first]);
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

/// A family's class counts for a block from its group's joint ones
/// (`joint`, class-major with the block side by side): each joint class's
/// added to the family's class it lies in (`to`).
#[inline(always)]
fn added_up<const W: usize, C: Count>(counts: &mut [C], joint: &[C], to: &[u32]) {
    counts.fill(C::default());
    for (src, &k) in joint.chunks_exact(W).zip(to) {
        let dst: &mut [C; W] = (&mut counts[k as usize * W..][..W])
            .try_into()
            .expect("W counts");
        let src: &[C; W] = src.try_into().expect("W counts");
        for (d, s) in dst.iter_mut().zip(src) {
            *d += *s;
        }
    }
}

/// Each resample's class counts drawn directly as a multinomial over
/// classes of sizes `size` (m clusters in all): class by class, the
/// binomial of what is left with probability size_k / (clusters not yet
/// passed), each resample from its own generator in class order — as one
/// resample at a time would, so the same counts. Going class by class over
/// the block lets resamples with as many left share the binomial's set-up
/// (`Binomial::new`, a pure function of the two): a class's are kept in
/// `made` by what is left, less the least left in the block. Looked up by
/// index rather than hashed by (n, p) in a map kept across classes and
/// blocks (as before session 56), Pass@(K,T) took 4.1 s against 4.8 and
/// natural recovery 3.0 against 3.8 (11 M trajectories, 26,041 tasks,
/// blocks of 1,024).
pub(super) fn multinomial_block<const W: usize, C: Count>(
    counts: &mut [C],
    size: &[u64],
    m: u64,
    rngs: &mut [Xoshiro],
    made: &mut Binomials,
) {
    let mut left = [m; W];
    let mut mass = m;
    for (k, &size) in size.iter().enumerate() {
        let p = size as f64 / mass as f64;
        mass -= size;
        let left = &mut left[..rngs.len()];
        if mass == 0 {
            // The last class with any clusters takes what is left.
            for (r, n) in left.iter_mut().enumerate() {
                counts[k * W + r] = C::of(std::mem::take(n));
            }
            continue;
        }
        let low = left.iter().copied().filter(|&n| n > 0).min().unwrap_or(0);
        let high = left.iter().copied().max().unwrap_or(0);
        let span = (high - low).saturating_add(1);
        made.index.clear();
        made.made.clear();
        if span <= DENSE_SPAN {
            made.index.resize(span as usize, 0);
        }
        for (r, rng) in rngs.iter_mut().enumerate() {
            let n = left[r];
            if n == 0 {
                continue;
            }
            let x = match made.index.get_mut((n - low) as usize) {
                Some(at) => {
                    if *at == 0 {
                        made.made.push(Binomial::new(n, p));
                        *at = made.made.len() as u32;
                    }
                    made.made[*at as usize - 1]
                        .as_ref()
                        .map_or(0, |d| d.sample(rng))
                }
                // What is left spreads over more than DENSE_SPAN values
                // (some billion clusters): each set up where drawn.
                None => Binomial::new(n, p).map_or(0, |d| d.sample(rng)),
            };
            counts[k * W + r] = C::of(x);
            left[r] -= x;
        }
    }
}

/// The binomials of one class a worker has set up for a block.
#[derive(Default)]
pub(super) struct Binomials {
    /// By what is left less the least left: 1 + where in `made`, 0 if not
    /// set up yet.
    index: Vec<u32>,
    made: Vec<Option<Binomial>>,
}

/// The widest spread of what is left that [`Binomials`] indexes (256 KB of
/// index): some ±10 standard deviations of a class's count at 10⁸ clusters.
const DENSE_SPAN: u64 = 1 << 16;

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
pub(super) fn estimates(
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
