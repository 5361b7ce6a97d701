//! SPEC §4.3: the two-stage bootstrap for runs trained from several seeds.
//!
//! Resample b first draws, for each run independently, as many seeds as
//! the run has, with replacement (seeded from (seed, b, run)); then the
//! task ids, with replacement, shared by both runs of a difference (seeded
//! from (seed, b), as every task draw). A task's value in the resample is
//! the mean of its per-seed values over the drawn seeds (counted with
//! multiplicity) that have one; a task with none is left out of that
//! replicate, and a cell left with no task has no replicate there.

use std::sync::{Arc, Mutex};

use rand::RngExt;
use rayon::prelude::*;

use super::bootstrap::resample_rng;
use super::stats::{interval_from, Bootstrap, Estimate};
use super::xoshiro::Xoshiro;

/// A run's seed draws: seeded from (seed, b, run).
fn seed_rng(seed: u64, b: usize, run: u32) -> Xoshiro {
    let mut r = resample_rng(seed, b);
    let salt: u64 = r.random::<u64>() ^ (u64::from(run) + 1).wrapping_mul(0xA24B_AED4_963E_E407);
    Xoshiro::seed_from_u64(salt)
}

/// One side of a cell's statistic: a run (by id, for seeding) and, per
/// member task, its value under each of the run's seeds (`None`: that seed
/// has too few rollouts of the task).
pub struct Side {
    pub run: u32,
    pub seeds: usize,
}

/// One statistic: the mean over its member tasks of side 0's value, or of
/// side 0 − side 1 for a difference.
pub struct SeedCell {
    /// Indices into `Side`s of the draw.
    pub sides: Vec<usize>,
    /// (task index in the draw's task list, per side its per-seed values).
    pub members: Vec<(usize, Vec<Vec<Option<f64>>>)>,
}

/// A task's value under seed multiplicities: the weighted mean of the
/// seeds that have one.
fn seeded(values: &[Option<f64>], mult: &[u32]) -> Option<f64> {
    let (mut s, mut w) = (0.0, 0u32);
    for (v, &m) in values.iter().zip(mult) {
        if let Some(v) = v {
            s += f64::from(m) * v;
            w += m;
        }
    }
    (w > 0).then(|| s / f64::from(w))
}

/// The point value of a cell: every seed once.
pub fn point(cell: &SeedCell, sides: &[Side]) -> Option<f64> {
    let ones: Vec<Vec<u32>> = sides.iter().map(|s| vec![1; s.seeds]).collect();
    let ones: Vec<&[u32]> = ones.iter().map(Vec::as_slice).collect();
    stat(cell, &ones, None)
}

fn stat(cell: &SeedCell, mult: &[&[u32]], tasks: Option<&[u32]>) -> Option<f64> {
    let (mut s, mut w) = (0.0, 0u64);
    for (t, vals) in &cell.members {
        let times = tasks.map_or(1, |c| c[*t]);
        if times == 0 {
            continue;
        }
        let Some(x) = member_value(cell, vals, mult) else {
            continue;
        };
        s += f64::from(times) * x;
        w += u64::from(times);
    }
    (w > 0).then(|| s / w as f64)
}

/// A member task's value under seed multiplicities: side 0's, or side 0's
/// − side 1's for a difference; `None` where a side has none. Called for
/// every member of every cell in every resample: it allocates nothing.
fn member_value(cell: &SeedCell, vals: &[Vec<Option<f64>>], mult: &[&[u32]]) -> Option<f64> {
    let mut sides = cell
        .sides
        .iter()
        .zip(vals)
        .map(|(&side, v)| seeded(v, mult[side]));
    let first = sides.next()??;
    match sides.next() {
        None => Some(first),
        Some(second) => Some(first - second?),
    }
}

/// Joint two-stage replicates of several cells over one task list of
/// length `m`: `out[c][b]` (NaN where cell c has no replicate).
pub fn replicates(m: usize, sides: &[Side], cells: &[SeedCell], cfg: &Bootstrap) -> Vec<Vec<f64>> {
    let seed_draws: Vec<(Draw, Option<Arc<Vec<u16>>>)> = sides
        .iter()
        .map(|s| Draw::Seeds(s.run, s.seeds))
        .map(|d| (d, drawn(d, cfg)))
        .collect();
    let task_draws = (Draw::Tasks(m), drawn(Draw::Tasks(m), cfg));
    // LANES resamples at a time, each cell's statistic for all of them.
    let per_block: Vec<Vec<[f64; LANES]>> = (0..cfg.resamples.div_ceil(LANES))
        .into_par_iter()
        .map(|blk| {
            if cfg.cancel.is_cancelled() || m == 0 {
                return vec![[f64::NAN; LANES]; cells.len()];
            }
            // A lane past the last resample repeats the last (and is
            // dropped).
            let b_of = |l: usize| (blk * LANES + l).min(cfg.resamples - 1);
            let lanes = |(d, held): &(Draw, Option<Arc<Vec<u16>>>)| {
                let mut out = vec![[0u32; LANES]; d.len()];
                for (l, b) in (0..LANES).map(b_of).enumerate() {
                    d.each(held, cfg.seed, b, |i, c| out[i][l] += c);
                }
                out
            };
            let mult: Vec<Vec<[u32; LANES]>> = seed_draws.iter().map(lanes).collect();
            let counts = lanes(&task_draws);
            cells.iter().map(|c| lane_stat(c, &mult, &counts)).collect()
        })
        .collect();
    (0..cells.len())
        .map(|c| {
            let all = per_block.iter().flat_map(|blk| blk[c]);
            all.take(cfg.resamples).collect()
        })
        .collect()
}

/// How many resamples [`replicates`] computes side by side.
const LANES: usize = 8;

/// [`stat`] of LANES resamples at once (`mult[side][seed][lane]`,
/// `counts[task][lane]`), compiled for AVX2 where the processor has it: on
/// each lane the same IEEE operations in the same order as [`stat`]
/// (Rust never fuses a multiply and an add), so the same bits —
/// `lanes_are_each_resample_alone` checks it. NaN where a resample has no
/// replicate.
fn lane_stat(cell: &SeedCell, mult: &[Vec<[u32; LANES]>], counts: &[[u32; LANES]]) -> [f64; LANES] {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the processor has AVX2, checked just now.
        return unsafe { lane_stat_avx2(cell, mult, counts) };
    }
    lane_stat_any(cell, mult, counts)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn lane_stat_avx2(
    cell: &SeedCell,
    mult: &[Vec<[u32; LANES]>],
    counts: &[[u32; LANES]],
) -> [f64; LANES] {
    lane_stat_any(cell, mult, counts)
}

/// [`lane_stat`]'s body: a member a lane did not draw, or with no value
/// there, leaves that lane's sums as they were (a select, not a branch).
#[inline(always)]
fn lane_stat_any(
    cell: &SeedCell,
    mult: &[Vec<[u32; LANES]>],
    counts: &[[u32; LANES]],
) -> [f64; LANES] {
    let (mut s, mut w) = ([0.0f64; LANES], [0u64; LANES]);
    for (t, vals) in &cell.members {
        let times = counts[*t];
        if times == [0; LANES] {
            continue;
        }
        // The member's value on each lane: side 0's, less side 1's.
        let mut x = [0.0f64; LANES];
        let mut has = [!vals.is_empty() && !cell.sides.is_empty(); LANES];
        for (i, (&side, v)) in cell.sides.iter().zip(vals).take(2).enumerate() {
            let (mut sv, mut sw) = ([0.0f64; LANES], [0u32; LANES]);
            for (v, m) in v.iter().zip(&mult[side]) {
                let Some(v) = *v else { continue };
                for l in 0..LANES {
                    sv[l] += f64::from(m[l]) * v;
                    sw[l] += m[l];
                }
            }
            for l in 0..LANES {
                let y = sv[l] / f64::from(sw[l]);
                has[l] &= sw[l] > 0;
                x[l] = if i == 0 { y } else { x[l] - y };
            }
        }
        for l in 0..LANES {
            let add = times[l] > 0 && has[l];
            let sum = s[l] + f64::from(times[l]) * x[l];
            s[l] = if add { sum } else { s[l] };
            w[l] += if add { u64::from(times[l]) } else { 0 };
        }
    }
    std::array::from_fn(|l| {
        if w[l] > 0 {
            s[l] / w[l] as f64
        } else {
            f64::NAN
        }
    })
}

/// What a resample draws, as multiplicities: a run's seeds (its id, how
/// many it has: seeded from (seed, b, run)), or m task ids (seeded from
/// (seed, b), as every task draw).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Draw {
    Seeds(u32, usize),
    Tasks(usize),
}

impl Draw {
    /// How many are drawn (and so how many multiplicities there are).
    fn len(self) -> usize {
        match self {
            Draw::Seeds(_, n) | Draw::Tasks(n) => n,
        }
    }

    /// Resample b's multiplicities: from every resample's, where they are
    /// held, else drawn now (the tests' one resample at a time).
    #[cfg(test)]
    fn at(self, held: &Option<Arc<Vec<u16>>>, seed: u64, b: usize) -> Vec<u32> {
        let mut own = vec![0; self.len()];
        self.each(held, seed, b, |i, c| own[i] += c);
        own
    }

    /// Resample b's multiplicities handed to `add` (id, how many more):
    /// each held one once, or each id as it is drawn.
    fn each(
        self,
        held: &Option<Arc<Vec<u16>>>,
        seed: u64,
        b: usize,
        mut add: impl FnMut(usize, u32),
    ) {
        let n = self.len();
        match held {
            Some(all) => {
                for (i, &c) in all[b * n..(b + 1) * n].iter().enumerate() {
                    add(i, c.into());
                }
            }
            None => self.of(seed, b, |i| add(i, 1)),
        }
    }

    /// Resample b's draws, each id as it is drawn.
    fn of(self, seed: u64, b: usize, mut drawn: impl FnMut(usize)) {
        let (mut rng, n) = match self {
            Draw::Seeds(run, n) => (seed_rng(seed, b, run), n),
            Draw::Tasks(n) => (resample_rng(seed, b), n),
        };
        for _ in 0..n {
            drawn(rng.random_range(0..n));
        }
    }
}

/// Draws already made, by (seed, resamples, draw): every cell of a
/// two-stage analysis over the same tasks and runs (each K, level and mode
/// of a category's tasks, say) reads the same draws, and making them was
/// most of its time (the demo's whole audit 1.3 → 1.0 s). A multiplicity
/// is at most the number drawn, so one of fewer than 65,536 draws is held
/// in 2 bytes. Bounded: emptied when a draw would take it past
/// [`DRAWN_CAP`] multiplicities.
type DrawnKey = (u64, usize, Draw);
static DRAWN: Mutex<Vec<(DrawnKey, Arc<Vec<u16>>)>> = Mutex::new(Vec::new());

/// The most multiplicities [`DRAWN`] holds (2 bytes each: 64 MiB; 2,600
/// tasks' draws for 10,000 resamples are 26 M).
const DRAWN_CAP: usize = 1 << 25;

/// Every resample's multiplicities for `draw`, resample b's at
/// `[b * len, (b + 1) * len)`: made once (in parallel), then read from
/// [`DRAWN`] — the same numbers as each resample drawing its own. `None`
/// where they would be more than [`DRAWN_CAP`] (26,000 tasks and 10,000
/// resamples: 1 GiB): each resample then draws its own as it goes.
fn drawn(draw: Draw, cfg: &Bootstrap) -> Option<Arc<Vec<u16>>> {
    let key = (cfg.seed, cfg.resamples, draw);
    let n = draw.len();
    if cfg.resamples.saturating_mul(n) > DRAWN_CAP || n > usize::from(u16::MAX) {
        return None;
    }
    let lock = || DRAWN.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, d)) = lock().iter().find(|(k, _)| *k == key) {
        return Some(d.clone());
    }
    let mut all = vec![0u16; cfg.resamples * n];
    if n > 0 {
        all.par_chunks_mut(n).enumerate().for_each_init(
            || vec![0u32; n],
            |own, (b, out)| {
                own.fill(0);
                draw.of(cfg.seed, b, |i| own[i] += 1);
                // Each at most n < 65,536.
                for (o, &c) in out.iter_mut().zip(own.iter()) {
                    *o = c as u16;
                }
            },
        );
    }
    let all = Arc::new(all);
    // Whole even if the audit is cancelled meanwhile: cancelling stops the
    // statistics, not the draws.
    let mut held = lock();
    let size = |h: &[(DrawnKey, Arc<Vec<u16>>)]| h.iter().map(|(_, d)| d.len()).sum::<usize>();
    if size(&held) + all.len() > DRAWN_CAP {
        held.clear();
    }
    held.push((key, all.clone()));
    Some(all)
}

/// A cell's estimate with its two-stage interval (BCa's acceleration from
/// the leave-one-task-out jackknife of the point values).
pub fn estimate(m: usize, sides: &[Side], cell: SeedCell, cfg: &Bootstrap) -> Estimate {
    let value = point(&cell, sides).unwrap_or(f64::NAN);
    let cells = [cell];
    let mut reps: Vec<f64> = replicates(m, sides, &cells, cfg)
        .remove(0)
        .into_iter()
        .filter(|x| x.is_finite())
        .collect();
    let [cell] = cells;
    let ci = interval_from(&mut reps, value, cfg, || {
        let ones: Vec<Vec<u32>> = sides.iter().map(|s| vec![1; s.seeds]).collect();
        let ones: Vec<&[u32]> = ones.iter().map(Vec::as_slice).collect();
        let per: Vec<f64> = cell
            .members
            .iter()
            .filter_map(|(_, vals)| member_value(&cell, vals, &ones))
            .collect();
        let total: f64 = per.iter().sum();
        let n = per.len() as f64;
        per.iter().map(|x| (total - x) / (n - 1.0)).collect()
    });
    Estimate { value, ci }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_single_seed_is_the_plain_task_mean() {
        let sides = [Side { run: 0, seeds: 1 }];
        let cell = SeedCell {
            sides: vec![0],
            members: (0..4).map(|t| (t, vec![vec![Some(t as f64)]])).collect(),
        };
        assert_eq!(point(&cell, &sides), Some(1.5));
        // Seed means: task values average over seeds that have one.
        let sides = [Side { run: 0, seeds: 2 }];
        let cell = SeedCell {
            sides: vec![0],
            members: vec![
                (0, vec![vec![Some(1.0), Some(0.0)]]),
                (1, vec![vec![None, Some(1.0)]]),
            ],
        };
        assert_eq!(point(&cell, &sides), Some(0.75));
    }

    /// Resamples side by side, LANES at a time, give each resample's
    /// statistic to the bit as alone: [`stat`] with resample b's draws, on
    /// cells of one side and of two (a difference), with seeds missing
    /// here and there, over a count of resamples that is no multiple of
    /// LANES.
    #[test]
    fn lanes_are_each_resample_alone() {
        let cfg = Bootstrap {
            resamples: 2 * LANES + 5,
            seed: 11,
            ..Default::default()
        };
        let sides = [Side { run: 0, seeds: 3 }, Side { run: 1, seeds: 2 }];
        let m = 7;
        // Values from a fixed rule, a None where (t + seed) % 4 == 3.
        let vals = |t: usize, side: usize, n: usize| -> Vec<Option<f64>> {
            (0..n)
                .map(|j| ((t + j) % 4 != 3).then(|| ((t * 7 + j * 3 + side) % 11) as f64 / 10.0))
                .collect()
        };
        let cells = vec![
            SeedCell {
                sides: vec![0],
                members: (0..m).map(|t| (t, vec![vals(t, 0, 3)])).collect(),
            },
            SeedCell {
                sides: vec![0, 1],
                members: (1..m)
                    .map(|t| (t, vec![vals(t, 0, 3), vals(t, 1, 2)]))
                    .collect(),
            },
            SeedCell {
                sides: vec![1],
                members: vec![(2, vec![vec![None, None]])],
            },
        ];
        let reps = replicates(m, &sides, &cells, &cfg);
        for (c, cell) in cells.iter().enumerate() {
            assert_eq!(reps[c].len(), cfg.resamples);
            for (b, got) in reps[c].iter().enumerate() {
                let mult: Vec<Vec<u32>> = sides
                    .iter()
                    .map(|s| Draw::Seeds(s.run, s.seeds).at(&None, cfg.seed, b))
                    .collect();
                let mult: Vec<&[u32]> = mult.iter().map(Vec::as_slice).collect();
                let counts = Draw::Tasks(m).at(&None, cfg.seed, b);
                let alone = stat(cell, &mult, Some(&counts)).unwrap_or(f64::NAN);
                assert_eq!(got.to_bits(), alone.to_bits(), "cell {c}, b {b}");
            }
        }
        assert!(reps[2].iter().all(|x| x.is_nan()));
        assert!(reps[0].iter().all(|x| x.is_finite()));
    }

    /// The draws held are those each resample makes alone: rand's
    /// `random_range` from the resample's generator, m times (tasks) or as
    /// many times as the run has seeds, counted by id.
    #[test]
    fn the_draws_held_are_each_resamples_own() {
        let cfg = Bootstrap {
            resamples: 50,
            seed: 7,
            ..Default::default()
        };
        let alone = |mut rng: Xoshiro, n: usize| {
            let mut c = vec![0u32; n];
            for _ in 0..n {
                c[rng.random_range(0..n)] += 1;
            }
            c
        };
        for (draw, n) in [(Draw::Tasks(13), 13), (Draw::Seeds(3, 4), 4)] {
            let held = drawn(draw, &cfg).expect("held");
            assert_eq!(held.len(), 50 * n);
            for b in 0..50 {
                let rng = match draw {
                    Draw::Tasks(_) => resample_rng(7, b),
                    Draw::Seeds(run, _) => seed_rng(7, b, run),
                };
                let held: Vec<u32> = held[b * n..(b + 1) * n].iter().map(|&c| c.into()).collect();
                assert_eq!(held, alone(rng, n), "{draw:?} b={b}");
            }
            // Asked again: the same draws, held once.
            assert!(Arc::ptr_eq(&held, &drawn(draw, &cfg).unwrap()));
            // Resample b's, held or drawn as it goes: the same.
            for b in [0, 17, 49] {
                assert_eq!(draw.at(&Some(held.clone()), 7, b), draw.at(&None, 7, b));
            }
        }
        // Another seed or count of resamples: other draws.
        let other = Bootstrap { seed: 8, ..cfg };
        assert_ne!(drawn(Draw::Tasks(13), &other), drawn(Draw::Tasks(13), &cfg));
        // Too many to hold: none, each resample drawing its own.
        let many = Bootstrap {
            resamples: 10_000,
            ..cfg
        };
        assert!(drawn(Draw::Tasks(DRAWN_CAP / 10_000 + 1), &many).is_none());
    }
}
