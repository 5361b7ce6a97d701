//! SPEC §2.4: locally plausible, globally different — per-step NLL under
//! base, trajectory log-likelihood ratios, and the length-matched difference.

use std::collections::BTreeMap;

use super::bootstrap::{cluster_bootstrap, cluster_bootstrap_each, cluster_point};
use super::stats::{median_in_place, Bootstrap, Ci, Cluster, Estimate};
use super::{Pair, Settings};
use crate::error::Result;
use crate::schema::frames::TaskInfos;
use crate::schema::{Id, Loc, LogSet, LogpWindow, Steps, Trajectory};

pub const BINS: usize = 50;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Summary {
    pub mean: f64,
    pub median: f64,
    pub n: u64,
}

/// Mean (in the order given), median and n; `v` is left reordered.
fn summary(v: &mut [f64]) -> Option<Summary> {
    Some(Summary {
        mean: super::stats::mean(v)?,
        median: median_in_place(v)?,
        n: v.len() as u64,
    })
}

/// A histogram of 50 equal-width bins over [lo, hi].
#[derive(Debug, Clone, PartialEq)]
pub struct Histogram {
    pub lo: f64,
    pub hi: f64,
    /// Counts per run: [base, RL].
    pub counts: [Vec<u64>; 2],
}

#[derive(Debug, Clone)]
pub struct LengthMatched {
    pub tasks: u64,
    pub pairs: u64,
    pub mean_diff: Option<Estimate>,
}

#[derive(Debug, Clone)]
pub struct Likelihood {
    pub benchmark: String,
    pub base: String,
    pub rl: String,
    /// [base, RL] producing runs.
    pub step_nll: [Option<Summary>; 2],
    pub histogram: Option<Histogram>,
    pub overlap: Option<f64>,
    pub llr: [Option<Summary>; 2],
    /// Trajectory LLR distributions of both runs, same binning rule.
    pub llr_histogram: Option<Histogram>,
    pub length_matched: LengthMatched,
    pub notes: Vec<String>,
}

/// One successful trajectory usable for pairing.
#[derive(Debug, Clone, Copy)]
pub struct Scored {
    pub loc: Loc,
    pub len: u64,
    pub llr: f64,
}

/// Greedy length matching within one task (SPEC §2.4): every cross pair within
/// 10% of the longer, closest first, ties by (RL, base) line order, each
/// trajectory used once. Returns (RL index, base index) pairs.
pub fn length_matched_pairs(rl: &[Scored], base: &[Scored]) -> Vec<(usize, usize)> {
    let mut cands: Vec<(u64, Loc, Loc, usize, usize)> = Vec::new();
    for (i, a) in rl.iter().enumerate() {
        for (j, b) in base.iter().enumerate() {
            let d = a.len.abs_diff(b.len);
            if 10 * d <= a.len.max(b.len) {
                cands.push((d, a.loc, b.loc, i, j));
            }
        }
    }
    cands.sort_unstable_by_key(|c| (c.0, c.1, c.2));
    let (mut used_a, mut used_b) = (vec![false; rl.len()], vec![false; base.len()]);
    let mut out = Vec::new();
    for (_, _, _, i, j) in cands {
        if !used_a[i] && !used_b[j] {
            used_a[i] = true;
            used_b[j] = true;
            out.push((i, j));
        }
    }
    out
}

/// One length-matched pair of §2.4: an RL and a base trajectory of one
/// task, each with its length and LLR.
#[derive(Debug, Clone, Copy)]
pub struct MatchedPair {
    pub task: Id,
    pub rl: Scored,
    pub base: Scored,
}

impl MatchedPair {
    /// d = LLR(RL trajectory) − LLR(base trajectory).
    pub fn d(&self) -> f64 {
        self.rl.llr - self.base.llr
    }
}

/// Each task's length-matched pairs, in task order, each task's in the
/// order they were accepted; tasks without a pair left out.
fn matched_by_task(per_task: &BTreeMap<Id, [Vec<Scored>; 2]>) -> Vec<(Id, Vec<MatchedPair>)> {
    per_task
        .iter()
        .map(|(&task, [base_t, rl_t])| {
            let pairs = length_matched_pairs(rl_t, base_t)
                .into_iter()
                .map(|(i, j)| MatchedPair {
                    task,
                    rl: rl_t[i],
                    base: base_t[j],
                })
                .collect::<Vec<_>>();
            (task, pairs)
        })
        .filter(|(_, pairs)| !pairs.is_empty())
        .collect()
}

/// The length-matched pairs of a pair of runs named as reports name it
/// (the workbench's drill-down from a Likelihood row): task by task, as
/// [`values`] forms them; none when a name is not in the logs.
pub fn matched_pairs(set: &LogSet, names: &super::PairNames) -> Result<Vec<MatchedPair>> {
    let id = |n: &str| set.strings.get(n);
    let (Some(benchmark), Some(base), Some(rl)) =
        (id(&names.benchmark), id(&names.base), id(&names.rl))
    else {
        return Ok(Vec::new());
    };
    let pair = Pair {
        benchmark,
        base,
        rl,
    };
    let successes = Successes::of(set, &TaskInfos::of(set), &[pair]);
    let (_, _, per_task) = scored(set, &pair, &successes.of_pair(set, &pair))?;
    Ok(matched_by_task(&per_task)
        .into_iter()
        .flat_map(|(_, pairs)| pairs)
        .collect())
}

/// A pair's successful full-budget rollouts (`succ`) read: per producing
/// run (base, RL), each step's NLL under base and each trajectory's LLR,
/// and per task the trajectories with an LLR and a length, for matching.
type ScoredRuns = ([Vec<f64>; 2], [Vec<f64>; 2], BTreeMap<Id, [Vec<Scored>; 2]>);

fn scored(set: &LogSet, pair: &Pair, succ: &[&Trajectory]) -> Result<ScoredRuns> {
    let mut window = LogpWindow::default();
    // One value per step: sized up front (a growing Vec can hold twice
    // that), summarized in place.
    let mut n = [0; 2];
    for t in succ {
        n[usize::from(t.run == pair.rl)] += set.steps_of(t).len();
    }
    let mut nll = n.map(Vec::with_capacity);
    let mut llrs: [Vec<f64>; 2] = Default::default();
    let mut per_task: BTreeMap<Id, [Vec<Scored>; 2]> = BTreeMap::new();
    for t in succ {
        let side = usize::from(t.run == pair.rl);
        let steps = set.steps_with_logps(t, &mut window)?;
        for st in steps {
            if let Some(lp) = st.logp_of(pair.base) {
                nll[side].push(-lp);
            }
        }
        if let Some(llr) = trajectory_llr(steps, pair.base, pair.rl) {
            llrs[side].push(llr);
            if let Some(len) = length(set, t) {
                per_task.entry(t.task).or_default()[side].push(Scored {
                    loc: t.loc,
                    len,
                    llr,
                });
            }
        }
    }
    Ok((nll, llrs, per_task))
}

fn trajectory_llr(steps: Steps<'_>, base: Id, rl: Id) -> Option<f64> {
    if steps.is_empty() {
        return None;
    }
    let mut s = 0.0;
    for st in steps {
        s += st.logp_of(rl)? - st.logp_of(base)?;
    }
    Some(s)
}

fn length(set: &LogSet, t: &Trajectory) -> Option<u64> {
    let steps = set.steps_of(t);
    if steps.is_empty() {
        return None;
    }
    steps.into_iter().map(|s| s.output_tokens()).sum()
}

/// `successes`: [`Successes::of`] the same set and pairs.
pub fn analyse(
    set: &LogSet,
    pairs: &[Pair],
    s: &Settings,
    successes: &Successes,
) -> Result<Vec<Likelihood>> {
    let (mut rows, sets) = values(set, pairs, successes)?;
    with_intervals(&mut rows, sets, &s.boot);
    Ok(rows)
}

/// The length-matched clusters of [`values`]' rows, row by row: what their
/// bootstrap intervals are drawn from ([`with_intervals`]).
#[derive(Clone)]
pub struct Intervals(Vec<Vec<Cluster>>);

/// [`analyse`]'s rows before the length-matched difference's interval is
/// drawn: every summary, histogram, count and value final, that interval
/// [`Ci::Pending`].
pub fn values(
    set: &LogSet,
    pairs: &[Pair],
    successes: &Successes,
) -> Result<(Vec<Likelihood>, Intervals)> {
    use rayon::prelude::*;
    // A pair to a thread, each reading its own rollouts' log-probabilities
    // back (11 M rollouts, the Likelihood panel on screen: its rows
    // 0.90–0.95 → 0.82–0.87 s after the load; 0.51–0.58 s with the LLR by
    // turn begun after them, `run_audit_staged`). An error is the first
    // pair's, in the pairs' order.
    let rows: Vec<Result<_>> = pairs
        .par_iter()
        .map(|pair| pair_values(set, pair, successes))
        .collect();
    let rows = rows.into_iter().collect::<Result<Vec<_>>>()?;
    let (out, sets) = rows.into_iter().flatten().unzip();
    Ok((out, Intervals(sets)))
}

/// One pair's row of [`values`] and its length-matched clusters; `None`
/// when neither run has a successful full-budget rollout.
fn pair_values(
    set: &LogSet,
    pair: &Pair,
    successes: &Successes,
) -> Result<Option<(Likelihood, Vec<Cluster>)>> {
    // Successful full-budget evaluation rollouts of the pair's runs.
    let succ = successes.of_pair(set, pair);
    if succ.is_empty() {
        return Ok(None);
    }
    let (mut nll, mut llrs, per_task) = scored(set, pair, &succ)?;
    let mut notes = Vec::new();
    if nll.iter().all(Vec::is_empty) {
        notes.push(format!(
            "no step has steps[].logp.{} (the base run's log-probability): per-step NLL needs it",
            set.name(pair.base)
        ));
    }
    if llrs.iter().all(Vec::is_empty) {
        notes.push(format!(
            "no successful full-budget trajectory has steps[].logp for both {} and {} on every step: LLR and length matching need both",
            set.name(pair.base),
            set.name(pair.rl)
        ));
    }
    let (llr_histogram, _) = histogram(&llrs);
    let (histogram, overlap) = histogram(&nll);
    let mut clusters = Vec::new();
    let mut n_pairs = 0;
    for (_, matched) in matched_by_task(&per_task) {
        n_pairs += matched.len() as u64;
        let sum: f64 = matched.iter().map(MatchedPair::d).sum();
        clusters.push(Cluster {
            sum,
            weight: matched.len() as f64,
        });
    }
    let [nll_base, nll_rl] = &mut nll;
    let step_nll = [summary(nll_base), summary(nll_rl)];
    let [llr_base, llr_rl] = &mut llrs;
    let llr = [summary(llr_base), summary(llr_rl)];
    let row = Likelihood {
        benchmark: set.name(pair.benchmark).into(),
        base: set.name(pair.base).into(),
        rl: set.name(pair.rl).into(),
        step_nll,
        histogram,
        overlap,
        llr,
        llr_histogram,
        length_matched: LengthMatched {
            tasks: clusters.len() as u64,
            pairs: n_pairs,
            mean_diff: (!clusters.is_empty()).then(|| cluster_point(&clusters)),
        },
        notes,
    };
    Ok(Some((row, clusters)))
}

/// Draws the length-matched differences' intervals of [`values`]' rows:
/// the rows [`analyse`] gives.
/// [`with_intervals`] at `boot`, each interval provisional, as
/// [`matched::with_provisional`](super::matched::with_provisional).
pub fn with_provisional(rows: &mut [Likelihood], sets: Intervals, boot: &Bootstrap) {
    with_intervals(rows, sets, boot);
    for e in rows
        .iter_mut()
        .filter_map(|r| r.length_matched.mean_diff.as_mut())
    {
        *e = e.provisional();
    }
}

pub fn with_intervals(rows: &mut [Likelihood], sets: Intervals, boot: &Bootstrap) {
    for (row, clusters) in rows.iter_mut().zip(sets.0) {
        row.length_matched.mean_diff =
            (!clusters.is_empty()).then(|| cluster_bootstrap(&clusters, boot));
    }
}

impl Histogram {
    /// Per run: (bin centre, share of that run's values) for plotting.
    pub fn shares(&self) -> [Vec<(f64, f64)>; 2] {
        let width = (self.hi - self.lo) / BINS as f64;
        let side = |i: usize| {
            let n = self.counts[i].iter().sum::<u64>().max(1) as f64;
            self.counts[i]
                .iter()
                .enumerate()
                .map(|(b, c)| (self.lo + (b as f64 + 0.5) * width, *c as f64 / n))
                .collect()
        };
        [side(0), side(1)]
    }
    pub fn n(&self, side: usize) -> u64 {
        self.counts[side].iter().sum()
    }
}

/// 50 equal-width bins over the pooled range, and Σ min(p_a, p_b) of the
/// normalised histograms (needs both runs).
pub fn histogram(v: &[Vec<f64>; 2]) -> (Option<Histogram>, Option<f64>) {
    let all = v[0].iter().chain(&v[1]);
    let lo = all.clone().copied().fold(f64::INFINITY, f64::min);
    let hi = all.copied().fold(f64::NEG_INFINITY, f64::max);
    if !lo.is_finite() {
        return (None, None);
    }
    let width = (hi - lo) / BINS as f64;
    let bin = |x: f64| {
        if width <= 0.0 {
            0
        } else {
            (((x - lo) / width) as usize).min(BINS - 1)
        }
    };
    let mut counts = [vec![0u64; BINS], vec![0u64; BINS]];
    for side in 0..2 {
        for &x in &v[side] {
            counts[side][bin(x)] += 1;
        }
    }
    let overlap = (!v[0].is_empty() && !v[1].is_empty()).then(|| {
        let (na, nb) = (v[0].len() as f64, v[1].len() as f64);
        (0..BINS)
            .map(|i| (counts[0][i] as f64 / na).min(counts[1][i] as f64 / nb))
            .sum()
    });
    (Some(Histogram { lo, hi, counts }), overlap)
}

/// SPEC §4.5: where along a trajectory the RL policy departs from base.
#[derive(Debug, Clone)]
pub struct LlrTurn {
    pub benchmark: String,
    pub base: String,
    pub rl: String,
    /// The run whose rollouts these are.
    pub run: String,
    pub turn: u32,
    pub steps: u64,
    pub mean: f64,
    pub ci: Ci,
}

impl LlrTurn {
    /// Its pair's (benchmark, base, rl), as [`super::PairNames::key`].
    pub fn key(&self) -> (&str, &str, &str) {
        (&self.benchmark, &self.base, &self.rl)
    }
}

/// The successful full-budget evaluation rollouts of each (benchmark, run)
/// of the pairs, as indices in set order: what the likelihood and its LLR
/// by turn read, found in one pass over the set (a pass per pair and run
/// before: 24 over 1.1 M rollouts for eight pairs, ~0.1 s of CPU).
pub struct Successes(BTreeMap<(Id, Id), Vec<u32>>);

impl Successes {
    pub fn of(set: &LogSet, tasks: &TaskInfos, pairs: &[Pair]) -> Successes {
        let mut by: BTreeMap<(Id, Id), Vec<u32>> = pairs
            .iter()
            .flat_map(|p| [(p.benchmark, p.base), (p.benchmark, p.rl)])
            .map(|k| (k, Vec::new()))
            .collect();
        for (i, t) in set.trajectories.iter().enumerate() {
            if !t.success {
                continue;
            }
            if let Some(v) = by.get_mut(&(t.benchmark, t.run)) {
                if tasks.at_full_budget(t) {
                    v.push(u32::try_from(i).expect("fewer than 2^32 rollouts"));
                }
            }
        }
        Successes(by)
    }

    fn of_run(&self, benchmark: Id, run: Id) -> &[u32] {
        self.0.get(&(benchmark, run)).map_or(&[], Vec::as_slice)
    }

    /// Both runs' rollouts of a pair, in set order.
    fn of_pair<'s>(&self, set: &'s LogSet, pair: &Pair) -> Vec<&'s Trajectory> {
        let mut at: Vec<u32> = self.of_run(pair.benchmark, pair.base).to_vec();
        at.extend(self.of_run(pair.benchmark, pair.rl));
        at.sort_unstable();
        at.dedup();
        at.iter().map(|&i| &set.trajectories[i as usize]).collect()
    }
}

/// Clusters the LLR by turn gathers before bootstrapping them: a window of
/// turns holds about this many (16 bytes each, and 32 more each while its
/// bootstrap runs). All (turn, task) cells of a run at once were a million
/// at 25,000 tasks × 40 turns, the peak of the whole audit there.
const WINDOW_CLUSTERS: usize = 1 << 18;

/// The most clusters [`by_turn_staged`] holds at once to hand a pair's rows
/// on before their intervals are drawn: its two runs' (turn, task) cells,
/// 32 MB (64 MB while bootstrapped; 11 M rollouts: 1.3 M a pair). More, and
/// it draws them window by window as [`by_turn`], the pair's rows handed on
/// once whole.
const STAGED_CLUSTERS: usize = 1 << 21;

/// Per pair, per producing run, per turn: the pooled mean over the steps at
/// that turn of logp\[rl\] − logp\[base\], over successful full-budget
/// evaluation rollouts whose steps all carry both; a cluster bootstrap over
/// tasks (each resample pools the drawn tasks' steps at that turn).
///
/// A run's turns go in windows of about `WINDOW_CLUSTERS` cells, each
/// window reading the rollouts' log-probabilities again; every set is
/// bootstrapped exactly as alone, so the windows change no figure.
/// `successes`: [`Successes::of`] the same set and pairs.
pub fn by_turn(
    set: &LogSet,
    pairs: &[Pair],
    s: &Settings,
    successes: &Successes,
) -> Result<Vec<LlrTurn>> {
    by_turn_in_windows(set, pairs, s, successes, WINDOW_CLUSTERS, None, 0)
}

/// What [`by_turn_staged`] hands on before the intervals are drawn, a pair
/// at a time: the rows so far and how many pairs they cover (the first of
/// the pairs given), the last pair's with their values alone (every
/// interval [`Ci::Pending`]), then, at `provisional`'s resamples, with
/// provisional intervals
/// ([`Estimate::provisional`](super::stats::Estimate::provisional)), then
/// whole.
pub struct Early<'a> {
    pub provisional: Option<Bootstrap>,
    pub hand: &'a mut dyn FnMut(Vec<LlrTurn>, usize),
}

/// [`by_turn`], for the workbench's Likelihood panel on screen, a pair at a
/// time: each of its runs' rollouts read once, its rows handed to `early`
/// (after the pairs before, whole) with their values, then with
/// provisional intervals, before its intervals are drawn; the pairs so far
/// handed on whole before the next. Every set is bootstrapped as alone, so
/// the rows it returns are [`by_turn`]'s. A pair of more than
/// `STAGED_CLUSTERS` cells is drawn in [`by_turn`]'s windows, handed on
/// once whole.
pub fn by_turn_staged(
    set: &LogSet,
    pairs: &[Pair],
    s: &Settings,
    successes: &Successes,
    early: Early<'_>,
) -> Result<Vec<LlrTurn>> {
    by_turn_in_windows(
        set,
        pairs,
        s,
        successes,
        WINDOW_CLUSTERS,
        Some(early),
        STAGED_CLUSTERS,
    )
}

/// One pair's producing run: its successful full-budget evaluation
/// rollouts task by task, and their windows of turns.
struct RunTurns<'s> {
    pair: &'s Pair,
    run: Id,
    rollouts: Vec<&'s Trajectory>,
    windows: Vec<Window>,
}

/// [`by_turn`] with windows of about `most` clusters; with `early`, a
/// pair's runs each in one window when its cells are at most `keep`.
fn by_turn_in_windows<'s>(
    set: &'s LogSet,
    pairs: &'s [Pair],
    s: &Settings,
    successes: &Successes,
    most: usize,
    early: Option<Early<'_>>,
    keep: usize,
) -> Result<Vec<LlrTurn>> {
    let mut runs = Vec::with_capacity(2 * pairs.len());
    for pair in pairs {
        for run in [pair.base, pair.rl] {
            let mut rollouts: Vec<&Trajectory> = successes
                .of_run(pair.benchmark, run)
                .iter()
                .map(|&i| &set.trajectories[i as usize])
                .collect();
            // Task by task (stable: a task's rollouts keep their order, so
            // each cell sums its steps as it always has), tasks in id order.
            rollouts.sort_by_key(|t| t.task);
            let windows = turn_windows(set, &rollouts, most);
            runs.push(RunTurns {
                pair,
                run,
                rollouts,
                windows,
            });
        }
    }
    let mut window = LogpWindow::default();
    let row = |r: &RunTurns, (turn, steps, mean): (u32, f64, f64), ci| LlrTurn {
        benchmark: set.name(r.pair.benchmark).to_string(),
        base: set.name(r.pair.base).to_string(),
        rl: set.name(r.pair.rl).to_string(),
        run: set.name(r.run).to_string(),
        turn,
        steps: steps as u64,
        mean,
        ci,
    };
    let mut out = Vec::new();
    let mut early = early;
    let last = runs.len().saturating_sub(2);
    // A pair at a time: its base run's rows, then its RL run's.
    for (at, pair_runs) in (0..).step_by(2).zip(runs.chunks(2)) {
        let cells: usize = pair_runs
            .iter()
            .flat_map(|r| &r.windows)
            .map(|w| w.cells)
            .sum();
        match early.as_mut() {
            // Each run read once, the pair's cells held: its rows handed on
            // with their values, then provisional intervals.
            Some(Early { provisional, hand }) if cells <= keep => {
                let from = out.len();
                let mut sets = Vec::new();
                for r in pair_runs {
                    let (rows, clusters) = window_cells(set, r, Window::ALL, &mut window)?;
                    out.extend(rows.into_iter().map(|v| row(r, v, Ci::Pending)));
                    sets.extend(clusters);
                }
                hand(out.clone(), at / 2 + 1);
                if let Some(boot) = provisional.as_ref() {
                    let mut rows = out.clone();
                    let estimates = cluster_bootstrap_each(sets.iter(), boot);
                    for (r, e) in rows[from..].iter_mut().zip(estimates) {
                        r.ci = e.ci.provisional();
                    }
                    hand(rows, at / 2 + 1);
                }
                let estimates = cluster_bootstrap_each(sets, &s.boot);
                for (r, e) in out[from..].iter_mut().zip(estimates) {
                    r.ci = e.ci;
                }
            }
            _ => {
                for r in pair_runs {
                    for &w in &r.windows {
                        let (rows, sets) = window_cells(set, r, w, &mut window)?;
                        let estimates = cluster_bootstrap_each(sets, &s.boot);
                        out.extend(
                            rows.into_iter()
                                .zip(estimates)
                                .map(|(v, e)| row(r, v, e.ci)),
                        );
                        crate::stage::release_freed_memory();
                    }
                }
            }
        }
        // The pair whole, more to come.
        if let Some(Early { hand, .. }) = early.as_mut().filter(|_| at < last) {
            hand(out.clone(), at / 2 + 1);
        }
    }
    Ok(out)
}

/// The (turn, task) cells of a run's turns in `w`: per turn in order its
/// (turn, steps, pooled mean) and its clusters, task by task in id order.
#[allow(clippy::type_complexity)]
fn window_cells(
    set: &LogSet,
    r: &RunTurns<'_>,
    w: Window,
    window: &mut LogpWindow,
) -> Result<(Vec<(u32, f64, f64)>, Vec<Vec<Cluster>>)> {
    let in_window = |turn: u32| (w.lo..=w.hi).contains(&turn);
    let (base, rl) = (r.pair.base, r.pair.rl);
    // turn → its clusters, task by task in id order.
    let mut cells: BTreeMap<u32, Vec<Cluster>> = BTreeMap::new();
    // The current task's turn → (Σ diff, steps).
    let mut task: BTreeMap<u32, (f64, f64)> = BTreeMap::new();
    for group in r.rollouts.chunk_by(|a, b| a.task == b.task) {
        for t in group {
            if !set.steps_of(t).into_iter().any(|st| in_window(st.turn)) {
                continue;
            }
            let steps = set.steps_with_logps(t, window)?;
            let diffs: Option<Vec<(u32, f64)>> = steps
                .iter()
                .map(|st| Some((st.turn, st.logp_of(rl)? - st.logp_of(base)?)))
                .collect();
            let Some(diffs) = diffs.filter(|d| !d.is_empty()) else {
                continue;
            };
            for (turn, d) in diffs.into_iter().filter(|(turn, _)| in_window(*turn)) {
                let e = task.entry(turn).or_insert((0.0, 0.0));
                e.0 += d;
                e.1 += 1.0;
            }
        }
        for (turn, (sum, weight)) in std::mem::take(&mut task) {
            cells.entry(turn).or_default().push(Cluster { sum, weight });
        }
    }
    let mut rows = Vec::with_capacity(cells.len());
    let mut sets = Vec::with_capacity(cells.len());
    for (turn, clusters) in cells {
        let steps: f64 = clusters.iter().map(|c| c.weight).sum();
        let mean = clusters.iter().map(|c| c.sum).sum::<f64>() / steps;
        rows.push((turn, steps, mean));
        sets.push(clusters);
    }
    Ok((rows, sets))
}

/// Consecutive turns lo..=hi and their (turn, task) cells.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Window {
    lo: u32,
    hi: u32,
    cells: usize,
}

impl Window {
    /// Every turn (its cells not counted).
    const ALL: Window = Window {
        lo: 0,
        hi: u32::MAX,
        cells: 0,
    };
}

/// Consecutive ranges of turns, in order, each with at most `most` (turn,
/// task) cells among `rollouts` (sorted by task), or one turn with more;
/// counted from the steps' turns alone.
fn turn_windows(set: &LogSet, rollouts: &[&Trajectory], most: usize) -> Vec<Window> {
    // turn → (last task counted, tasks with a step at that turn)
    let mut cells: BTreeMap<u32, (Id, usize)> = BTreeMap::new();
    for t in rollouts {
        for st in set.steps_of(t) {
            let e = cells.entry(st.turn).or_insert((t.task, 0));
            if e.1 == 0 || e.0 != t.task {
                *e = (t.task, e.1 + 1);
            }
        }
    }
    let mut windows: Vec<Window> = Vec::new();
    for (turn, (_, n)) in cells {
        match windows.last_mut() {
            Some(w) if w.cells + n <= most => {
                w.hi = turn;
                w.cells += n;
            }
            _ => windows.push(Window {
                lo: turn,
                hi: turn,
                cells: n,
            }),
        }
    }
    windows
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The windows are a matter of memory alone: one turn a window and all
    /// turns in one give the same rows, figure for figure.
    /// The demo, settings at `resamples`, its pairs and their successes.
    fn demo_pairs(resamples: usize) -> (LogSet, Settings, Vec<Pair>, Successes) {
        let set = crate::demo::load_demo(&Default::default()).unwrap();
        let mut s = Settings::default();
        s.boot.resamples = resamples;
        let (pairs, _) = super::super::resolve_pairs(&set, &s).unwrap();
        let agg = crate::schema::frames::eval_aggregates(&set);
        let successes = Successes::of(&set, &agg.tasks, &pairs);
        (set, s, pairs, successes)
    }

    #[test]
    fn by_turn_windows_change_no_figure() {
        let (set, s, pairs, successes) = demo_pairs(200);
        let rollouts: Vec<&Trajectory> = set
            .trajectories
            .iter()
            .filter(|t| !t.is_training() && t.run == pairs[0].rl)
            .collect();
        let mut turns: Vec<u32> = rollouts
            .iter()
            .flat_map(|t| set.steps_of(t).into_iter().map(|st| st.turn))
            .collect();
        turns.sort_unstable();
        turns.dedup();
        assert!(turns.len() > 1, "{turns:?}");
        let single: Vec<(u32, u32)> = turns.iter().map(|&t| (t, t)).collect();
        let bounds = |ws: Vec<Window>| ws.iter().map(|w| (w.lo, w.hi)).collect::<Vec<_>>();
        assert_eq!(bounds(turn_windows(&set, &rollouts, 1)), single);
        let all = turn_windows(&set, &rollouts, usize::MAX);
        assert_eq!(bounds(all.clone()), [(turns[0], turns[turns.len() - 1])]);
        // The cells: (turn, task) with a step, counted by hand.
        let mut cells: Vec<(u32, Id)> = rollouts
            .iter()
            .flat_map(|t| set.steps_of(t).into_iter().map(|st| (st.turn, t.task)))
            .collect();
        cells.sort_unstable();
        cells.dedup();
        let mut sorted = rollouts.clone();
        sorted.sort_by_key(|t| t.task);
        assert_eq!(
            turn_windows(&set, &sorted, usize::MAX)[0].cells,
            cells.len()
        );
        let rows = |most| {
            format!(
                "{:?}",
                by_turn_in_windows(&set, &pairs, &s, &successes, most, None, 0)
            )
        };
        let one = rows(usize::MAX);
        assert!(one.contains("LlrTurn"), "{one}");
        assert_eq!(rows(1), one);
    }

    /// The workbench's LLR by turn hands each pair's rows on with their
    /// values, then with the first 1,000 resamples' intervals marked
    /// provisional, then whole before the next pair's, and returns
    /// [`by_turn`]'s rows; past `keep` cells a pair is handed on once whole.
    #[test]
    fn by_turn_staged_hands_on_values_then_provisional_intervals() {
        let (set, s, pairs, successes) = demo_pairs(1_500);
        assert!(pairs.len() > 1, "{}", pairs.len());
        let whole = by_turn(&set, &pairs, &s, &successes).unwrap();
        assert!(whole.iter().any(|r| r.ci.bounds().is_some()), "{whole:?}");
        let mut at_1000 = s.clone();
        at_1000.boot.resamples = 1_000;
        let first = by_turn(&set, &pairs, &at_1000, &successes).unwrap();
        let staged = |keep| {
            let mut handed = Vec::new();
            let rows = by_turn_in_windows(
                &set,
                &pairs,
                &s,
                &successes,
                1,
                Some(Early {
                    provisional: s.boot.provisional(),
                    hand: &mut |rows, n| handed.push(format!("{n} {rows:?}")),
                }),
                keep,
            )
            .unwrap();
            assert_eq!(format!("{rows:?}"), format!("{whole:?}"));
            handed
        };
        // Where each pair's rows end among `whole`'s.
        let ends: Vec<usize> = pairs
            .iter()
            .scan(0, |end, p| {
                let names = (set.name(p.benchmark), set.name(p.base), set.name(p.rl));
                *end += whole
                    .iter()
                    .filter(|r| (&*r.benchmark, &*r.base, &*r.rl) == names)
                    .count();
                Some(*end)
            })
            .collect();
        assert!(ends.windows(2).all(|e| e[0] < e[1]), "{ends:?}");
        // Rows before pair i's whole, pair i's with `ci`, none after.
        let upto = |i: usize, ci: &dyn Fn(usize) -> Ci| {
            let from = if i == 0 { 0 } else { ends[i - 1] };
            let rows: Vec<LlrTurn> = (0..ends[i])
                .map(|j| LlrTurn {
                    ci: if j < from { whole[j].ci } else { ci(j) },
                    ..whole[j].clone()
                })
                .collect();
            format!("{} {rows:?}", i + 1)
        };
        let mut want = Vec::new();
        for i in 0..pairs.len() {
            want.push(upto(i, &|_| Ci::Pending));
            want.push(upto(i, &|j| first[j].ci.provisional()));
            if i + 1 < pairs.len() {
                want.push(upto(i, &|j| whole[j].ci));
            }
        }
        assert!(first
            .iter()
            .any(|r| matches!(r.ci.provisional(), Ci::Provisional(..))));
        assert_eq!(staged(usize::MAX), want);
        let whole_pairs: Vec<String> = (0..pairs.len() - 1)
            .map(|i| upto(i, &|j| whole[j].ci))
            .collect();
        assert_eq!(staged(0), whole_pairs);
    }

    /// One pass over the set finds, for each pair, what a pass of its own
    /// filtering every rollout finds: its runs' successful full-budget
    /// evaluation rollouts, in the set's order (the two runs interleaved).
    #[test]
    fn successes_found_in_one_pass_are_each_pairs_own() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/large/jsonl");
        let set = crate::schema::load::load(&[dir], &Default::default()).unwrap();
        let s = Settings::default();
        let (pairs, _) = super::super::resolve_pairs(&set, &s).unwrap();
        assert!(pairs.len() > 1, "{}", pairs.len());
        let agg = crate::schema::frames::eval_aggregates(&set);
        let found = Successes::of(&set, &agg.tasks, &pairs);
        for p in &pairs {
            let own: Vec<&Trajectory> = set
                .trajectories
                .iter()
                .filter(|t| {
                    t.benchmark == p.benchmark
                        && t.success
                        && [p.base, p.rl].contains(&t.run)
                        && agg.at_full_budget(t)
                })
                .collect();
            let got = found.of_pair(&set, p);
            assert!(own.len() > 2, "{}", own.len());
            assert_eq!(got.len(), own.len());
            assert!(got.iter().zip(&own).all(|(a, b)| std::ptr::eq(*a, *b)));
        }
        // Runs whose rollouts alternate in the set (this one writes each
        // run's in a block) are merged in set order, not one list after
        // the other.
        let p = &pairs[0];
        let interleaved = Successes(BTreeMap::from([
            ((p.benchmark, p.base), vec![0, 2, 5, 9]),
            ((p.benchmark, p.rl), vec![1, 3, 4, 6, 7]),
        ]));
        let order: Vec<usize> = interleaved
            .of_pair(&set, p)
            .into_iter()
            .map(|t| {
                set.trajectories
                    .iter()
                    .position(|u| std::ptr::eq(t, u))
                    .unwrap()
            })
            .collect();
        assert_eq!(order, [0, 1, 2, 3, 4, 5, 6, 7, 9]);
    }
}
