//! SPEC §2.1: Pass@(K,T) tight-budget evaluation — budget levels, native and
//! truncated modes, the unbiased estimator, K grid, T curves, structural
//! upper bound, advantage with flips, mode gap and token budgets.

use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

use super::bootstrap::{self, Family};
use super::ragged::Ragged;
use super::stats::{nearest_rank, pass_all_k, pass_at_k, Bootstrap, Ci, Estimate};
use super::{Pair, Settings};
use crate::schema::frames::{BudgetGroup, EvalAggregates, TaskInfo};
use crate::schema::{FastMap, Id, LogSet, Trajectory};
use crate::stage::{finished, joined};

mod advantage;
mod batch;
mod bounds;
mod cell;
mod counts;
mod lookups;
mod tokens;

pub use advantage::*;
use batch::*;
pub use bounds::*;
pub use cell::*;
pub use counts::*;
use tokens::*;

#[derive(Debug, Clone)]
pub struct PassCell {
    pub benchmark: String,
    pub run: String,
    pub k: u64,
    pub level: u32,
    pub mode: Mode,
    pub value: Option<f64>,
    pub ci: Ci,
    pub pass_all: Option<f64>,
    pub tasks: usize,
    pub tasks_left_out: usize,
    /// §4.3: distinct seeds that contributed (0: the rollouts carry none).
    pub seeds: usize,
}

/// A run's truncated Pass@(K,t) curve over t = 1 … `until` (the
/// benchmark's largest full budget, SPEC §2.1): `values[i]` at t = i + 1,
/// the last of them at every t after. Past the latest success turn within
/// a full budget no count changes, so the curve is flat there: a budget of
/// 1,000,000 turns holds as many values as turns were taken.
#[derive(Debug, Clone)]
pub struct Curve {
    pub benchmark: String,
    pub run: String,
    pub k: u64,
    pub values: Vec<Option<f64>>,
    pub until: u32,
}

/// U at every absolute number of turns t = 1 … `until` (the Pass-vs-T
/// figure's bound): a task is solvable at t when `min_turns ≤ min(t, B)`,
/// else by the empirical rule, exactly as the curve takes a task at
/// min(t, B); `values` as in [`Curve`], flat past the last.
#[derive(Debug, Clone)]
pub struct UpperCurve {
    pub benchmark: String,
    pub values: Vec<f64>,
    pub until: u32,
    pub kind: &'static str,
}

/// Every t of a flat-tailed curve (`values` at t = 1, 2, …, the last held
/// to `until`), with its value: SPEC's rows.
pub fn every_t<T: Copy>(values: &[T], until: u32) -> impl Iterator<Item = (u32, T)> + '_ {
    (1..=until).filter_map(move |t| {
        let i = (t as usize - 1).min(values.len().checked_sub(1)?);
        Some((t, values[i]))
    })
}

/// The vertices of a flat-tailed curve drawn as a line through every t:
/// the points it holds, and the tail's end where the curve runs past them
/// (the tail's other points lie on that segment).
pub fn vertices<T: Copy>(values: &[T], until: u32) -> impl Iterator<Item = (u32, T)> + '_ {
    let tail = match values.last() {
        Some(&v) if until as usize > values.len() => Some((until, v)),
        _ => None,
    };
    values
        .iter()
        .enumerate()
        .map(|(i, &v)| (i as u32 + 1, v))
        .chain(tail)
}

#[derive(Debug, Clone)]
pub struct TokenCell {
    pub benchmark: String,
    pub run: String,
    pub k: u64,
    pub tokens: u64,
    pub value: Option<f64>,
    pub ci: Ci,
    pub tasks: usize,
    pub tasks_left_out: usize,
}

#[derive(Debug, Clone)]
pub struct UpperBound {
    pub benchmark: String,
    pub level: u32,
    pub value: f64,
    pub tasks: usize,
    pub kind: &'static str,
}

#[derive(Debug, Clone)]
pub struct Advantage {
    pub benchmark: String,
    pub base: String,
    pub rl: String,
    pub k: u64,
    pub level: u32,
    pub mode: Mode,
    pub tasks: usize,
    pub delta: f64,
    pub ci: Ci,
    pub flip: bool,
    pub significant_flip: bool,
    pub headroom: Option<f64>,
    pub base_pass: f64,
    pub rl_pass: f64,
    /// SPEC §4.2: se, p-values, simultaneous interval, mde, verdict.
    pub test: super::multiplicity::CellTest,
    /// §4.3: per run, the distinct seeds that contributed.
    pub seeds: BTreeMap<String, usize>,
}

/// A §4.2 family no cell of which can reach the level asked
/// ([`PassReport::families_out_of_reach`]).
#[derive(Debug, Clone, Copy)]
pub struct OutOfReach<'a> {
    /// Its first advantage row (its pair, and where the finding lands).
    pub first: &'a Advantage,
    /// Its live cells (those with a p-value): Holm's m.
    pub cells: usize,
    /// The smallest `p_adjusted_floor` of its cells.
    pub p_floor: f64,
    /// The smallest `--resamples` that would let a cell through (every cell
    /// with a replicate in every resample).
    pub resamples_needed: usize,
}

#[derive(Debug, Clone)]
pub struct ModeGap {
    pub benchmark: String,
    pub run: String,
    pub k: u64,
    pub level: u32,
    pub tasks: usize,
    pub diff: f64,
    pub ci: Ci,
    /// §4.3: distinct seeds of the run that contributed.
    pub seeds: usize,
}

#[derive(Debug, Clone, Default)]
pub struct PassReport {
    pub ks: Vec<u64>,
    pub cells: Vec<PassCell>,
    pub curve: Vec<Curve>,
    pub token: Vec<TokenCell>,
    pub token_budgets: BTreeMap<String, Vec<u64>>,
    /// Per benchmark: rollouts left out of the token view (no steps or missing tokens).
    pub token_left_out: BTreeMap<String, u64>,
    pub upper: Vec<UpperBound>,
    pub upper_curve: Vec<UpperCurve>,
    pub advantage: Vec<Advantage>,
    pub mode_gap: Vec<ModeGap>,
    /// The benchmarks whose rows are in: every one once the analysis is
    /// done; while it computes ([`analyse_staged`]), those done so far.
    pub benchmarks_in: Vec<String>,
    /// While it computes, the benchmarks whose rows are in with their
    /// values alone (not yet in `benchmarks_in`): every interval
    /// [`Ci::Pending`], the §4.2 tests to come. Empty once done.
    pub values_in: Vec<String>,
}

pub fn analyse(input: &PassInput, pairs: &[Pair], s: &Settings) -> PassReport {
    analyse_staged(input, pairs, s, &mut drop)
}

/// [`analyse`], handing a copy of the report so far to `progress` after each
/// benchmark is counted, once more when every counted benchmark's token
/// budgets are registered, and after each benchmark's intervals are drawn.
/// Counted, a benchmark's rows come with their final values and every
/// interval [`Ci::Pending`] (`values_in` names those) — its token budgets
/// with the hand-over after the last benchmark's; drawn, whole (named in
/// `benchmarks_in`) — but for their §4.2 tests (most are drawn jointly once
/// every benchmark is in; each row's `test` is the placeholder
/// [`CellTest::DEGENERATE`](super::multiplicity::CellTest) until then); the
/// pass curves once their thread is done (empty before). A benchmark with
/// a run of several seeds (§4.3: its values come from the two-stage
/// bootstrap) comes whole only. Holding every benchmark's statistics
/// reduced until their intervals are drawn costs 127 MiB more at the peak
/// at 11 M rollouts (1,859 MiB; was 1,732).
pub fn analyse_staged(
    input: &PassInput,
    pairs: &[Pair],
    s: &Settings,
    progress: &mut dyn FnMut(PassReport),
) -> PassReport {
    let ks = s.ks.clone().unwrap_or_else(|| default_ks(input, &s.levels));
    let mut rep = PassReport {
        ks: ks.clone(),
        ..Default::default()
    };
    // The bounds U, the scan for the token budgets and the pass curves read
    // only the rollouts and the aggregates: they run on threads of their
    // own while the benchmarks' cells are counted (one core's work, between
    // the bootstraps' two) — the bounds and curves from the start, the scan
    // once the first benchmark is handed on (below) — the scan waited for
    // once every benchmark's values are in (their token budgets are
    // registered then), the bounds when the first benchmark's Δ rows are
    // made, the curves taken when a benchmark is handed on after they are
    // done (11 M rollouts: 1.0, 0.4 and 0.7 s). Begun only after the first
    // hand-over, the curves brought it no sooner than the scan alone did
    // (session 54), and raised the peak by 10 MiB at 1 M.
    let pending = std::thread::scope(|scope| {
        let bounds = scope.spawn(|| upper_bounds(input, &s.levels));
        let curves = scope.spawn(|| curves(input, &ks));
        let (mut bounds, mut scan, mut curves) = (Some(bounds), None, Some(curves));
        // Every pair's rows, their §4.2 tests waiting for the joint draws.
        let mut pending: Vec<(usize, Vec<Advantage>, FamilyTests)> = Vec::new();
        // A benchmark's statistics share resample draws only with one
        // another (every draw is made from the same seeds, so which
        // statistics are batched together changes no result).
        // The benchmark on screen first (`Settings::focus`), then the others
        // in order; the rows are put back in that order below, so none
        // changes.
        let order: Vec<Id> = input.benchmarks().into_iter().collect();
        // Of the benchmarks left, the one on screen, else the first.
        let on_screen = |left: &[Id]| {
            s.focus
                .benchmark()
                .and_then(|name| left.iter().position(|b| input.name(*b) == name))
                .unwrap_or(0)
        };
        // First every benchmark's cells counted and its statistics
        // registered, reduced to their classes: their values are handed on
        // (the preview, intervals pending) before any interval is drawn —
        // the bootstraps are three quarters of the part.
        let mut preview = Preview::default();
        let mut registered = Vec::new();
        // Provisional intervals ([`Ci::Provisional`]: the first 1,000
        // resamples' alone, what `--resamples 1000` gives) for the
        // benchmark on screen in the Budget or Cost panel (whose rows show
        // their cells' intervals; `Focus::shows`: the workbench only), drawn
        // once its values are in (`first`: it is the first counted) — their
        // settings; then the benchmarks that have them.
        let provisional_for = |name: &str, first: bool| {
            let shown = s.focus.shows(super::Part::Pass) || s.focus.shows(super::Part::Cost);
            s.boot
                .provisional()
                .filter(|_| shown && s.focus.benchmark().map_or(first, |n| n == name))
        };
        let mut provisional: Vec<String> = Vec::new();
        let mut left = order.clone();
        while !left.is_empty() {
            let b = left.remove(on_screen(&left));
            let cache = CountsCache::default();
            cache.fill(input, b, &s.levels);
            let mut batch = Batch::default();
            let finish_cells = cells(input, &cache, b, &ks, s, &mut batch);
            let mut finish_advantages = Vec::new();
            for (i, p) in pairs.iter().enumerate().filter(|(_, p)| p.benchmark == b) {
                finish_advantages.push((i, advantages(input, &cache, p, &ks, s, &mut batch)));
            }
            let finish_gaps = mode_gaps(input, &cache, b, &ks, &s.levels, &s.boot, &mut batch);
            drop(cache);
            // The token budgets come after every benchmark's values (below),
            // in a batch that continues this one: the first benchmark's
            // values do not wait for the scan (11 M rollouts: 0.64 s).
            let rest = batch.then();
            let batch = batch.reduce();
            if let Some(u) = finished(&mut bounds, true) {
                (rep.upper, rep.upper_curve) = u;
            }
            if let Some(c) = finished(&mut curves, false) {
                rep.curve = c;
            }
            // A benchmark with a run of several seeds takes its values from
            // the two-stage bootstrap (§4.3): no preview, its rows come whole.
            if !input.any_multi_seed(b, input.runs(b)) {
                let points = batch.points();
                preview.rep.cells.extend(finish_cells(&points));
                for (i, f) in &finish_advantages {
                    preview
                        .advantage
                        .push((*i, f(&points, &rep.upper, Draw::ValuesOnly).0));
                }
                preview.rep.mode_gap.extend(finish_gaps(&points));
                let name = input.name(b);
                preview.rep.benchmarks_in.push(name.clone());
                progress(so_far(&rep, &pending, &preview));
                // The benchmark on screen in the Budget or Cost panel: its
                // provisional intervals at once, from the first 1,000
                // resamples — a tenth of its draws, before the other
                // benchmarks are counted — in place of its `[…]`.
                if let Some(boot) = provisional_for(&name, registered.is_empty()) {
                    let early = batch.run_early(&boot);
                    preview.provisional(&name, &early, &finish_cells, &finish_gaps);
                    let upper = &rep.upper;
                    preview.provisional_advantages(&early, upper, &finish_advantages);
                    provisional.push(name);
                    progress(so_far(&rep, &pending, &preview));
                }
            }
            registered.push((b, batch, rest, finish_cells, finish_advantages, finish_gaps));
            // The scan once the first benchmark is handed on: begun with
            // the others, it took a core's quarter from that benchmark's
            // counting (11 M rollouts, the Budget panel on screen: 1.27–1.43
            // → 1.01–1.08 s after the load, five runs and two interleaved
            // in one process).
            if scan.is_none() {
                scan = Some(scope.spawn(|| TokenScan::of(input)));
            }
        }
        // Each benchmark's token budgets, registered in the batch its
        // values' batch continues and merged into it, as one batch would
        // have them (the same draws, the same figures); the previewed
        // benchmarks' token rows handed on with their values.
        let mut registered: Vec<_> = if registered.is_empty() {
            Vec::new()
        } else {
            let tokens = finished(&mut scan, true).expect("the scan is joined once");
            let registered: Vec<_> = registered
                .into_iter()
                .map(|(b, batch, mut rest, cells, advantages, gaps)| {
                    let finish_tokens = token_budgets(input, &tokens, b, &ks, s, &mut rest);
                    let batch = batch.merged(rest.reduce());
                    (b, batch, cells, advantages, gaps, finish_tokens)
                })
                .collect();
            drop(tokens);
            let mut previewed = false;
            for (b, batch, _, _, _, finish_tokens) in &registered {
                if preview.rep.benchmarks_in.contains(&input.name(*b)) {
                    finish_tokens(&batch.points(), &mut preview.rep);
                    previewed = true;
                }
            }
            if previewed {
                progress(so_far(&rep, &pending, &preview));
            }
            registered
        };
        // Then the intervals, a benchmark at a time, the one on screen first.
        while !registered.is_empty() {
            let names: Vec<Id> = registered.iter().map(|r| r.0).collect();
            let (b, batch, finish_cells, finish_advantages, finish_gaps, finish_tokens) =
                registered.remove(on_screen(&names));
            // Selected since its values came: its provisional intervals
            // now (the token budgets' too), before its own.
            let name = input.name(b);
            let boot = provisional_for(&name, false).filter(|_| !provisional.contains(&name));
            if let Some(boot) = boot {
                let early = batch.run_early(&boot);
                let p = &mut preview.rep;
                p.token.retain(|t| t.benchmark != name);
                finish_tokens(&early, p);
                preview.provisional(&name, &early, &finish_cells, &finish_gaps);
                preview.provisional_advantages(&early, &rep.upper, &finish_advantages);
                progress(so_far(&rep, &pending, &preview));
            }
            let all = batch.run(&s.boot);
            rep.cells.extend(finish_cells(&all));
            pending.extend(finish_advantages.into_iter().map(|(i, f)| {
                let (rows, tests) = f(&all, &rep.upper, Draw::Whole);
                (i, rows, tests)
            }));
            rep.mode_gap.extend(finish_gaps(&all));
            finish_tokens(&all, &mut rep);
            rep.benchmarks_in.push(input.name(b));
            if let Some(c) = finished(&mut curves, false) {
                rep.curve = c;
            }
            progress(so_far(&rep, &pending, &preview));
        }
        if let (Some(bounds), Some(scan)) = (bounds, scan) {
            // No benchmark: nothing to bound, the scan let go unread.
            (rep.upper, rep.upper_curve) = joined(bounds.join());
            joined(scan.join());
        }
        sort_cells(&mut rep.cells);
        // The benchmarks' order, whichever came first: the joint draws of
        // the §4.2 tests take the pairs' cells in it.
        // (The rows of the mode gaps and the token budgets too.)
        let rank = |b: Id| order.iter().position(|x| *x == b);
        let names: Vec<String> = order.iter().map(|b| input.name(*b)).collect();
        let rank_of = |name: &str| names.iter().position(|x| x == name);
        rep.mode_gap.sort_by_key(|g| rank_of(&g.benchmark));
        rep.token.sort_by_key(|t| rank_of(&t.benchmark));
        pending.sort_by_key(|(i, _, _)| (rank(pairs[*i].benchmark), *i));
        joint_family_tests(&mut pending, s);
        if let Some(c) = finished(&mut curves, true) {
            rep.curve = c;
        }
        pending
    });
    rep.advantage = in_pair_order(pending.iter().map(|(i, rows, _)| (*i, rows)));
    rep
}

/// A benchmark's rows before their intervals are drawn: the values
/// ([`ReducedBatch::points`]), every interval [`Ci::Pending`], no §4.2 test.
#[derive(Default)]
struct Preview {
    /// Cells, mode gaps and token budgets; `benchmarks_in` names the
    /// benchmarks previewed.
    rep: PassReport,
    /// Each pair's Δ rows.
    advantage: Vec<(usize, Vec<Advantage>)>,
}

impl Preview {
    /// A benchmark's cells and mode gaps with the provisional intervals of
    /// `early` ([`ReducedBatch::run_early`]) in place of its values alone.
    fn provisional(
        &mut self,
        name: &str,
        early: &[Estimate],
        cells: &dyn Fn(&[Estimate]) -> Vec<PassCell>,
        gaps: &dyn Fn(&[Estimate]) -> Vec<ModeGap>,
    ) {
        let p = &mut self.rep;
        p.cells.retain(|c| c.benchmark != name);
        p.cells.extend(cells(early));
        p.mode_gap.retain(|g| g.benchmark != name);
        p.mode_gap.extend(gaps(early));
    }

    /// Its pairs' Δ rows likewise (no §4.2 test: those come with the part).
    fn provisional_advantages<F>(
        &mut self,
        early: &[Estimate],
        upper: &[UpperBound],
        rows: &[(usize, F)],
    ) where
        F: Fn(&[Estimate], &[UpperBound], Draw) -> (Vec<Advantage>, FamilyTests),
    {
        for (i, f) in rows {
            let new = f(early, upper, Draw::ValuesOnly).0;
            for slot in self.advantage.iter_mut().filter(|(j, _)| j == i) {
                slot.1 = new.clone();
            }
        }
    }
}

/// The report so far, as [`analyse`] will order it: the benchmarks whose
/// intervals are in, and the others previewed (named in `values_in`).
fn so_far(
    rep: &PassReport,
    pending: &[(usize, Vec<Advantage>, FamilyTests)],
    preview: &Preview,
) -> PassReport {
    let mut out = rep.clone();
    let early = |b: &String| !rep.benchmarks_in.contains(b);
    let p = &preview.rep;
    out.cells
        .extend(p.cells.iter().filter(|c| early(&c.benchmark)).cloned());
    sort_cells(&mut out.cells);
    out.mode_gap
        .extend(p.mode_gap.iter().filter(|g| early(&g.benchmark)).cloned());
    out.token
        .extend(p.token.iter().filter(|t| early(&t.benchmark)).cloned());
    for (b, x) in p.token_budgets.iter().filter(|(b, _)| early(b)) {
        out.token_budgets.insert(b.clone(), x.clone());
    }
    for (b, n) in p.token_left_out.iter().filter(|(b, _)| early(b)) {
        out.token_left_out.insert(b.clone(), *n);
    }
    out.values_in = p
        .benchmarks_in
        .iter()
        .filter(|b| early(b))
        .cloned()
        .collect();
    let previewed = preview
        .advantage
        .iter()
        .filter(|(_, rows)| rows.first().is_some_and(|r| early(&r.benchmark)));
    out.advantage = in_pair_order(
        pending
            .iter()
            .map(|(i, rows, _)| (*i, rows))
            .chain(previewed.map(|(i, rows)| (*i, rows))),
    );
    // A pair whose tests need no joint draw (several seeds, say) has them
    // already; every row's come with the part, all at once.
    for r in &mut out.advantage {
        r.test = super::multiplicity::CellTest::DEGENERATE;
    }
    out
}

/// Cells in (benchmark, run, K, level, mode) order.
fn sort_cells(cells: &mut [PassCell]) {
    cells.sort_by(|a, b| {
        (&a.benchmark, &a.run, a.k, a.level, a.mode).cmp(&(
            &b.benchmark,
            &b.run,
            b.k,
            b.level,
            b.mode,
        ))
    });
}

/// Each pair's Δ rows, in the order of the pairs.
fn in_pair_order<'a>(rows: impl Iterator<Item = (usize, &'a Vec<Advantage>)>) -> Vec<Advantage> {
    let mut rows: Vec<(usize, &Vec<Advantage>)> = rows.collect();
    rows.sort_by_key(|a| a.0);
    rows.into_iter().flat_map(|a| a.1.iter().cloned()).collect()
}

/// Registers a benchmark's cells, in (run, k, level, mode) order; the
/// returned function builds them from the batch's estimates.
fn cells<'a>(
    input: &'a PassInput,
    cache: &CountsCache,
    b: Id,
    ks: &[u64],
    s: &Settings,
    batch: &mut Batch,
) -> impl Fn(&[Estimate]) -> Vec<PassCell> + 'a {
    let mut jobs = Vec::new();
    for r in input.runs(b) {
        for &l in &s.levels {
            for m in Mode::BOTH {
                let counts = cache.get(input, b, r, l, m);
                if counts.is_empty() {
                    continue;
                }
                // One cell's counts serve every K (shared, not copied).
                for &k in ks {
                    jobs.push((r, k, l, m, Rc::clone(&counts)));
                }
            }
        }
    }
    let columns: Grouped<(Id, u32, Mode)> = jobs
        .iter()
        .map(|(r, k, l, m, counts)| {
            let col = Column::new(&mut batch.lists, pass_values(counts, *k).0);
            ((*r, *l, *m), Rc::new(col))
        })
        .collect();
    // What the rows read of the columns: the values go to the batch alone
    // (held from the preview until their intervals are drawn).
    let values: Vec<ColumnSummary> = columns.iter().map(|(_, c)| c.summary()).collect();
    let range = batch.add(columns);
    let boot = s.boot;
    move |all| {
        jobs.iter()
            .zip(&values)
            .zip(all[range.clone()].iter().copied())
            .map(|(((r, k, l, m, counts), vals), est)| {
                let tasks = || vals.tasks.to_vec();
                let est = seed_aware(input, b, vec![(*r, &**counts)], tasks, *k, &boot, || est);
                let seeds = contributing_seeds(input, b, *r, counts, *k);
                let left_out = counts.len() - vals.len();
                let pass_all: Vec<f64> = counts
                    .values()
                    .filter_map(|c| seed_mean(c, *k, pass_all_k))
                    .collect();
                PassCell {
                    benchmark: input.name(b),
                    run: input.name(*r),
                    k: *k,
                    level: *l,
                    mode: *m,
                    value: vals.mean(),
                    ci: est.ci,
                    pass_all: super::stats::mean(&pass_all),
                    tasks: vals.len(),
                    tasks_left_out: left_out,
                    seeds,
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t_levels() {
        assert_eq!(t_at_level(25, 10), 3);
        assert_eq!(t_at_level(50, 10), 5);
        assert_eq!(t_at_level(25, 1), 1);
        assert_eq!(t_at_level(1, 10), 1);
        assert_eq!(t_at_level(100, 7), 7);
        assert_eq!(t_at_level(75, 7), 6); // 5.25 → 6
    }

    #[test]
    fn a_flat_tailed_curve_at_every_t_and_by_its_vertices() {
        let v = [0.1, 0.4, 0.5];
        let every: Vec<(u32, f64)> = every_t(&v, 6).collect();
        assert_eq!(
            every,
            [(1, 0.1), (2, 0.4), (3, 0.5), (4, 0.5), (5, 0.5), (6, 0.5)]
        );
        let line: Vec<(u32, f64)> = vertices(&v, 6).collect();
        assert_eq!(line, [(1, 0.1), (2, 0.4), (3, 0.5), (6, 0.5)]);
        // No tail: the values are every t.
        assert_eq!(vertices(&v, 3).count(), 3);
        assert_eq!(every_t(&v, 3).count(), 3);
        assert_eq!(every_t::<f64>(&[], 4).count(), 0);
        assert_eq!(vertices::<f64>(&[], 4).count(), 0);
    }
}
