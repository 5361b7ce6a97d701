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

/// Native: the rollout ran with budget T. Truncated: a full-budget rollout cut at T.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Mode {
    Native,
    Truncated,
}

impl Mode {
    pub const BOTH: [Mode; 2] = [Mode::Native, Mode::Truncated];
    pub fn name(self) -> &'static str {
        match self {
            Mode::Native => "native",
            Mode::Truncated => "truncated",
        }
    }
}

/// T at level L (percent) of full budget B: max(1, ceil(L·B/100)).
pub fn t_at_level(level: u32, full: u32) -> u32 {
    (((level as u64) * (full as u64)).div_ceil(100)).max(1) as u32
}

/// Which rollouts of a task form its (level, mode) cell: those that ran with
/// `budget`, judged within `t` turns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CellBudget {
    pub budget: u32,
    pub t: u32,
}

/// The one place that decides cell membership (SPEC §2.1): native — the
/// rollouts that ran with budget T; truncated — the full-budget rollouts
/// cut at T, only where T < B (at T = B they count once, as native).
pub fn cell_budget(info: TaskInfo, level: u32, mode: Mode) -> Option<CellBudget> {
    let b = info.full_budget;
    let t = t_at_level(level, b);
    match mode {
        Mode::Native => Some(CellBudget { budget: t, t }),
        Mode::Truncated if t < b => Some(CellBudget { budget: b, t }),
        Mode::Truncated => None,
    }
}

/// Is this evaluation rollout one of its task's (level, mode) cell? An
/// outcome-only rollout (unknown turns) has no turns to cut at T.
pub fn in_cell(tr: &Trajectory, info: TaskInfo, level: u32, mode: Mode) -> bool {
    !tr.is_training()
        && cell_budget(info, level, mode)
            .is_some_and(|c| tr.budget == c.budget && (mode == Mode::Native || tr.turns_known))
}

/// One task's rollouts in one (run, level, mode) cell: (seed, n, c) per
/// seed of the run (one entry, seed `None`, for a run with at most one
/// seed); empty when it has no rollouts there.
pub type SeedCounts = Vec<SeedCount>;

/// (seed, n, c) of one task in one cell.
pub type SeedCount = (Option<Id>, u64, u64);

/// (n, c) per seed of one task in one (run, level, mode) cell.
/// `turns` is [`EvalAggregates::turns`].
pub fn cell_counts(
    turns: &[u32],
    groups: &[BudgetGroup],
    info: TaskInfo,
    level: u32,
    mode: Mode,
) -> SeedCounts {
    let Some(cb) = cell_budget(info, level, mode) else {
        return Vec::new();
    };
    groups
        .iter()
        .filter(|g| g.budget == cb.budget)
        .map(|g| {
            let (n, c) = match mode {
                Mode::Native => g.native_counts(turns),
                Mode::Truncated => (g.n, g.solved_within(turns, cb.t)),
            };
            (g.seed, n, c)
        })
        .filter(|x| x.1 > 0)
        .collect()
}

/// A run's seed slots in a benchmark: its seeds when it has two or more,
/// else one slot (`None`).
fn seed_slots(input: &PassInput, bench: Id, run: Id) -> Vec<Option<Id>> {
    match input.multi_seed(bench, run) {
        Some(s) => s.iter().map(|&x| Some(x)).collect(),
        None => vec![None],
    }
}

/// Distinct seeds that contributed to a cell (a seed with ≥ K rollouts of
/// some task); 0 where the rollouts carry no seed.
fn contributing_seeds(input: &PassInput, bench: Id, run: Id, counts: &TaskCounts, k: u64) -> usize {
    let any = counts.values().flatten().any(|x| x.1 >= k);
    match input.agg.seeds.get(&(bench, run)).map(Vec::len) {
        None | Some(0) => 0,
        Some(1) => usize::from(any),
        Some(_) => counts
            .values()
            .flatten()
            .filter(|x| x.1 >= k)
            .filter_map(|x| x.0)
            .collect::<BTreeSet<Id>>()
            .len(),
    }
}

/// A cell for the two-stage bootstrap: its sides (run, counts) — one, or
/// RL then base of a difference — its member tasks and K.
type SeedSpec<'a> = (Vec<(Id, &'a TaskCounts)>, Vec<Id>, u64);

/// The §4.3 two-stage inputs of cells over `tasks`: one side per distinct
/// run, each member task's per-seed Pass@K per side.
fn seed_cells(
    input: &PassInput,
    bench: Id,
    tasks: &[Id],
    cells: &[SeedSpec],
) -> (Vec<super::seeds::Side>, Vec<super::seeds::SeedCell>) {
    let mut runs: Vec<Id> = Vec::new();
    for (sides, _, _) in cells {
        for (r, _) in sides {
            if !runs.contains(r) {
                runs.push(*r);
            }
        }
    }
    let slots: Vec<Vec<Option<Id>>> = runs.iter().map(|&r| seed_slots(input, bench, r)).collect();
    let sides = runs
        .iter()
        .zip(&slots)
        .map(|(&r, s)| super::seeds::Side {
            run: r,
            seeds: s.len(),
        })
        .collect();
    let seed_cells = cells
        .iter()
        .map(|(sides, members, k)| {
            let idx: Vec<usize> = sides
                .iter()
                .map(|(r, _)| runs.iter().position(|x| x == r).unwrap_or(0))
                .collect();
            let members = members
                .iter()
                .filter_map(|t| {
                    let at = tasks.binary_search(t).ok()?;
                    let vals = sides
                        .iter()
                        .zip(&idx)
                        .map(|((_, counts), &i)| {
                            let mut v = vec![None; slots[i].len()];
                            for &(seed, n, c) in counts.get(t).into_iter().flatten() {
                                let slot = slots[i].iter().position(|x| *x == seed).unwrap_or(0);
                                if n >= *k {
                                    v[slot] = Some(pass_at_k(n, c, *k));
                                }
                            }
                            v
                        })
                        .collect();
                    Some((at, vals))
                })
                .collect();
            super::seeds::SeedCell {
                sides: idx,
                members,
            }
        })
        .collect();
    (sides, seed_cells)
}

/// A (possibly paired) cell's estimate by the two-stage bootstrap (§4.3).
pub(crate) fn two_stage(
    input: &PassInput,
    bench: Id,
    sides: Vec<(Id, &TaskCounts)>,
    tasks: Vec<Id>,
    k: u64,
    boot: &Bootstrap,
) -> Estimate {
    let (s, mut cells) = seed_cells(input, bench, &tasks, &[(sides, tasks.clone(), k)]);
    super::seeds::estimate(tasks.len(), &s, cells.remove(0), boot)
}

/// A cell's estimate under §4.3: the two-stage one (seeds, then `tasks()`)
/// when a run of `sides` has several seeds in `bench`, else `one_stage()`.
pub(crate) fn seed_aware(
    input: &PassInput,
    bench: Id,
    sides: Vec<(Id, &TaskCounts)>,
    tasks: impl FnOnce() -> Vec<Id>,
    k: u64,
    boot: &Bootstrap,
    one_stage: impl FnOnce() -> Estimate,
) -> Estimate {
    if input.any_multi_seed(bench, sides.iter().map(|s| s.0)) {
        two_stage(input, bench, sides, tasks(), k, boot)
    } else {
        one_stage()
    }
}

/// (n, c) of a task's cell pooled over seeds (what a table shows).
pub fn pooled(c: &[SeedCount]) -> Option<(u64, u64)> {
    (!c.is_empty()).then(|| c.iter().fold((0, 0), |a, x| (a.0 + x.1, a.1 + x.2)))
}

/// SPEC §4.3: a task's value — the mean, over the seeds with ≥ K rollouts,
/// of the per-(task, seed) estimator; `None` when no seed has K.
pub fn seed_mean(c: &[SeedCount], k: u64, est: impl Fn(u64, u64, u64) -> f64) -> Option<f64> {
    // Counted, then summed in order (no list made: this runs for every
    // task, K and t of the pass curves).
    let with_k = || c.iter().filter(|x| x.1 >= k);
    let n = with_k().count();
    (n > 0).then(|| with_k().map(|x| est(x.1, x.2, k)).sum::<f64>() / n as f64)
}

/// One task of an advantage cell: each run's (n, c) there (pooled over
/// seeds), its Pass@K (the seed mean, §4.3), and
/// its share of Δ — (Pass_RL − Pass_base) / m over the m tasks Δ averages
/// (both runs with ≥ K rollouts), so the shares add up to Δ exactly; None
/// for a task Δ leaves out.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskDelta {
    pub task: Id,
    pub info: TaskInfo,
    pub base: Option<(u64, u64)>,
    pub rl: Option<(u64, u64)>,
    pub pass_base: Option<f64>,
    pub pass_rl: Option<f64>,
    pub contribution: Option<f64>,
}

/// The tasks behind one advantage cell: every task of the benchmark where
/// either run has rollouts in the cell, in task-id order.
pub fn delta_by_task(
    agg: &EvalAggregates,
    bench: Id,
    (base, rl): (Id, Id),
    k: u64,
    level: u32,
    mode: Mode,
) -> Vec<TaskDelta> {
    let mut rows: Vec<TaskDelta> = agg
        .tasks
        .range((bench, 0)..=(bench, Id::MAX))
        .filter_map(|(&(_, task), &info)| {
            let get = |run| {
                agg.groups
                    .get(&(bench, run, task))
                    .map(|g| cell_counts(&agg.turns, g, info, level, mode))
                    .unwrap_or_default()
            };
            let (b, r) = (get(base), get(rl));
            if b.is_empty() && r.is_empty() {
                return None;
            }
            Some(TaskDelta {
                task,
                info,
                base: pooled(&b),
                rl: pooled(&r),
                pass_base: seed_mean(&b, k, pass_at_k),
                pass_rl: seed_mean(&r, k, pass_at_k),
                contribution: None,
            })
        })
        .collect();
    let m = rows
        .iter()
        .filter(|r| r.pass_base.is_some() && r.pass_rl.is_some())
        .count();
    for r in &mut rows {
        if let (Some(b), Some(x)) = (r.pass_base, r.pass_rl) {
            r.contribution = Some((x - b) / m as f64);
        }
    }
    rows
}

/// Views with one number per cell prefer native (SPEC §2.1): among the
/// rows of one cell, the native one where it exists, else the truncated one.
pub fn preferred<T>(rows: impl IntoIterator<Item = T>, mode: impl Fn(&T) -> Mode) -> Option<T> {
    let mut truncated = None;
    for r in rows {
        match mode(&r) {
            Mode::Native => return Some(r),
            Mode::Truncated => truncated = truncated.or(Some(r)),
        }
    }
    truncated
}

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

#[derive(Debug, Clone)]
pub struct CurvePoint {
    pub benchmark: String,
    pub run: String,
    pub k: u64,
    pub t: u32,
    pub value: Option<f64>,
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

/// U at an absolute number of turns t (the Pass-vs-T figure's bound): a
/// task is solvable at t when `min_turns ≤ min(t, B)`, else by the
/// empirical rule, exactly as the curve takes a task at min(t, B).
#[derive(Debug, Clone)]
pub struct UpperPoint {
    pub benchmark: String,
    pub t: u32,
    pub value: f64,
    pub kind: &'static str,
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
    pub curve: Vec<CurvePoint>,
    pub token: Vec<TokenCell>,
    pub token_budgets: BTreeMap<String, Vec<u64>>,
    /// Per benchmark: rollouts left out of the token view (no steps or missing tokens).
    pub token_left_out: BTreeMap<String, u64>,
    pub upper: Vec<UpperBound>,
    pub upper_curve: Vec<UpperPoint>,
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

/// Per-task (n, c) per seed of every task in a cell, in task-id order:
/// every task's entries in one column ([`Ragged`]), 36 bytes a task of a
/// one-seed run (a map of per-task `Vec`s took about 85 — at 11 M
/// rollouts a benchmark's 42 cells of them were a fifth of Pass@(K,T)'s
/// memory).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TaskCounts {
    tasks: Vec<Id>,
    counts: Ragged<SeedCount>,
}

impl TaskCounts {
    /// Appends a task's entries (tasks come in id order; a task with no
    /// entry is not added).
    pub fn push(&mut self, task: Id, entries: impl IntoIterator<Item = SeedCount>) {
        debug_assert!(self.tasks.last().is_none_or(|&t| t < task));
        let mut entries = entries.into_iter().peekable();
        if entries.peek().is_some() {
            self.tasks.push(task);
            self.counts.push(entries);
        }
    }
    /// Appends one entry to `task`, the last task or a new one after it.
    pub fn push_entry(&mut self, task: Id, entry: SeedCount) {
        if self.tasks.last() == Some(&task) {
            self.counts.push_to_last(entry);
        } else {
            self.push(task, [entry]);
        }
    }
    /// A task's entries, when it has any.
    pub fn get(&self, task: &Id) -> Option<&[SeedCount]> {
        let i = self.tasks.binary_search(task).ok()?;
        Some(self.counts.get(i))
    }
    /// (task, its entries), in task order.
    pub fn iter(&self) -> impl Iterator<Item = (&Id, &[SeedCount])> {
        self.tasks.iter().zip(self.counts.iter())
    }
    pub fn values(&self) -> impl Iterator<Item = &[SeedCount]> {
        self.counts.iter()
    }
    /// How many tasks.
    pub fn len(&self) -> usize {
        self.tasks.len()
    }
    pub fn is_empty(&self) -> bool {
        self.tasks.is_empty()
    }
    /// Lets go of spare capacity.
    fn shrink_to_fit(&mut self) {
        self.tasks.shrink_to_fit();
        self.counts.shrink_to_fit();
    }
}

/// Everything needed to compute cells: aggregates plus the benchmark layout.
pub struct PassInput<'a> {
    pub set: &'a LogSet,
    pub agg: &'a EvalAggregates,
}

impl PassInput<'_> {
    pub fn benchmarks(&self) -> BTreeSet<Id> {
        self.agg.tasks.keys().map(|k| k.0).collect()
    }
    pub fn runs(&self, bench: Id) -> BTreeSet<Id> {
        self.agg
            .groups
            .keys()
            .filter(|k| k.0 == bench)
            .map(|k| k.1)
            .collect()
    }
    pub fn tasks(&self, bench: Id) -> impl Iterator<Item = (Id, TaskInfo)> + '_ {
        self.agg
            .tasks
            .range((bench, 0)..=(bench, Id::MAX))
            .map(|(k, v)| (k.1, *v))
    }
    /// (n, c) per seed per task of one run's cell.
    pub fn counts(&self, bench: Id, run: Id, level: u32, mode: Mode) -> TaskCounts {
        self.run_counts(bench, run, &[(level, mode)])
            .pop()
            .unwrap_or_default()
    }
    /// [`PassInput::counts`] of several (level, mode) cells of one run, in
    /// one pass over its groups in task order (a task without a group, or
    /// a group without the task's layout, counts in none).
    fn run_counts(&self, bench: Id, run: Id, cells: &[(u32, Mode)]) -> Vec<TaskCounts> {
        let mut out = vec![TaskCounts::default(); cells.len()];
        let groups = self
            .agg
            .groups
            .range((bench, run, Id::MIN)..=(bench, run, Id::MAX));
        for (&(_, _, task), groups) in groups {
            let Some(&info) = self.agg.tasks.get(&(bench, task)) else {
                continue;
            };
            for (o, &(level, mode)) in out.iter_mut().zip(cells) {
                o.push(
                    task,
                    cell_counts(&self.agg.turns, groups, info, level, mode),
                );
            }
        }
        for o in &mut out {
            o.shrink_to_fit();
        }
        out
    }
    /// Whether any of `runs` has two or more seeds in the benchmark.
    pub fn any_multi_seed(&self, bench: Id, runs: impl IntoIterator<Item = Id>) -> bool {
        runs.into_iter()
            .any(|r| self.multi_seed(bench, r).is_some())
    }
    /// The run's seeds in the benchmark, when it has two or more (§4.3).
    pub fn multi_seed(&self, bench: Id, run: Id) -> Option<&[Id]> {
        self.agg
            .seeds
            .get(&(bench, run))
            .filter(|s| s.len() > 1)
            .map(Vec::as_slice)
    }
    fn name(&self, id: Id) -> String {
        self.set.name(id).to_string()
    }
}

/// Each cell's counts computed once and shared by every section of
/// [`analyse`] that reads them (the cells, the paired differences, the
/// mode gaps): at a million rollouts they are most of its memory.
#[derive(Default)]
struct CountsCache(std::cell::RefCell<BTreeMap<CellKey, Rc<TaskCounts>>>);

/// (benchmark, run, level, mode)
type CellKey = (Id, Id, u32, Mode);

impl CountsCache {
    /// Every (run, level, mode) cell's counts of a benchmark at once, a
    /// (run, level) to a worker (11 M rollouts: 0.35 s a benchmark, one
    /// tree search per task and cell, when each was made on first use).
    fn fill(&self, input: &PassInput, bench: Id, levels: &[u32]) {
        use rayon::prelude::*;
        let jobs: Vec<(Id, u32)> = input
            .runs(bench)
            .into_iter()
            .flat_map(|r| levels.iter().map(move |&l| (r, l)))
            .collect();
        let made: Vec<Vec<TaskCounts>> = jobs
            .par_iter()
            .map(|&(r, l)| input.run_counts(bench, r, &Mode::BOTH.map(|m| (l, m))))
            .collect();
        let mut m = self.0.borrow_mut();
        for (&(r, l), counts) in jobs.iter().zip(made) {
            for (mode, c) in Mode::BOTH.into_iter().zip(counts) {
                m.insert((bench, r, l, mode), Rc::new(c));
            }
        }
    }
    fn get(&self, input: &PassInput, bench: Id, run: Id, level: u32, mode: Mode) -> Rc<TaskCounts> {
        let mut m = self.0.borrow_mut();
        Rc::clone(
            m.entry((bench, run, level, mode))
                .or_insert_with(|| Rc::new(input.counts(bench, run, level, mode))),
        )
    }
}

/// K ∈ {1, 2, 4, …} up to the largest number of rollouts in any cell.
pub fn default_ks(input: &PassInput, levels: &[u32]) -> Vec<u64> {
    let mut max_n = 0;
    for ((b, _, t), groups) in &input.agg.groups {
        let Some(info) = input.agg.tasks.get(&(*b, *t)) else {
            continue;
        };
        for &l in levels {
            for m in Mode::BOTH {
                for (_, n, _) in cell_counts(&input.agg.turns, groups, *info, l, m) {
                    max_n = max_n.max(n);
                }
            }
        }
    }
    let mut ks = vec![1];
    while ks[ks.len() - 1] * 2 <= max_n {
        ks.push(ks[ks.len() - 1] * 2);
    }
    ks
}

/// Per-task Pass@K (the seed mean) over tasks with a seed of ≥ K
/// rollouts; (values, tasks left out).
pub fn pass_values(counts: &TaskCounts, k: u64) -> (Vec<(Id, f64)>, usize) {
    let mut left_out = 0;
    let mut v = Vec::new();
    for (&task, c) in counts.iter() {
        match seed_mean(c, k, pass_at_k) {
            Some(x) => v.push((task, x)),
            None => left_out += 1,
        }
    }
    (v, left_out)
}

/// Per-task values of several statistics, each tagged with its sharing group
/// (shared, not copied, between a section's table and the batch).
type Grouped<G> = Vec<(G, PerTask)>;

/// One statistic's per-task values, shared.
type PerTask = Rc<Column>;

/// One statistic's value per task, over a task list shared with every
/// other statistic of the benchmark over the same tasks: 8 bytes a task
/// where (task, value) pairs took 16 — at 11 M rollouts these are most of
/// the stage's memory (issue 20).
struct Column {
    tasks: Rc<[Id]>,
    values: Vec<f64>,
}

impl Column {
    fn new(lists: &mut TaskLists, pairs: Vec<(Id, f64)>) -> Column {
        let values = pairs.iter().map(|x| x.1).collect();
        Column {
            tasks: lists.share(pairs.into_iter().map(|x| x.0).collect()),
            values,
        }
    }
    fn len(&self) -> usize {
        self.values.len()
    }
    /// The mean over tasks, in task order (None over no task).
    fn mean(&self) -> Option<f64> {
        (!self.values.is_empty())
            .then(|| self.values.iter().sum::<f64>() / self.values.len() as f64)
    }
}

/// What a finished row reads of a [`Column`], the values gone to the batch.
struct ColumnSummary {
    tasks: Rc<[Id]>,
    len: usize,
    mean: Option<f64>,
}

impl ColumnSummary {
    fn len(&self) -> usize {
        self.len
    }
    fn mean(&self) -> Option<f64> {
        self.mean
    }
}

impl Column {
    fn summary(&self) -> ColumnSummary {
        ColumnSummary {
            tasks: Rc::clone(&self.tasks),
            len: self.len(),
            mean: self.mean(),
        }
    }
}

/// Two runs' (or modes') per-task values over the tasks where both have
/// ≥ K rollouts ([`paired_values`] in columns).
struct Paired {
    tasks: Rc<[Id]>,
    a: Vec<f64>,
    b: Vec<f64>,
}

impl Paired {
    fn new(lists: &mut TaskLists, v: Vec<(Id, f64, f64)>) -> Paired {
        Paired {
            a: v.iter().map(|x| x.1).collect(),
            b: v.iter().map(|x| x.2).collect(),
            tasks: lists.share(v.into_iter().map(|x| x.0).collect()),
        }
    }
    fn len(&self) -> usize {
        self.a.len()
    }
    /// a − b per task, a column of the batch.
    fn diffs(&self) -> PerTask {
        Rc::new(Column {
            tasks: Rc::clone(&self.tasks),
            values: self.a.iter().zip(&self.b).map(|(a, b)| a - b).collect(),
        })
    }
}

/// A benchmark's distinct task lists, each held once by every column over
/// it (the cells of one benchmark mostly cover the same tasks).
#[derive(Default)]
struct TaskLists(Vec<Rc<[Id]>>);

impl TaskLists {
    fn share(&mut self, tasks: Vec<Id>) -> Rc<[Id]> {
        if let Some(l) = self.0.iter().find(|l| ***l == *tasks) {
            return Rc::clone(l);
        }
        let l: Rc<[Id]> = tasks.into();
        self.0.push(Rc::clone(&l));
        l
    }
}

/// (section, group within the section)
type GroupTag = (usize, usize);

/// Every mean over tasks that Pass@(K,T) bootstraps, from every section,
/// run together: statistics over the very same tasks share each resample's
/// draw of tasks (the draw is the expensive part), and those of one group
/// (one cell's K grid, say) form one family whose classes are counted
/// together — so a K grid costs little more than one K, and every table of
/// a benchmark little more than one.
#[derive(Default)]
struct Batch {
    /// Per-task values, each tagged (section, group).
    items: Grouped<GroupTag>,
    sections: usize,
    /// The task lists of the columns.
    lists: TaskLists,
    /// Statistics of the batch this one continues ([`Batch::then`]): its
    /// positions follow theirs.
    offset: usize,
}

impl Batch {
    /// Adds a section's statistics; their estimates come back, in order, at
    /// the returned positions of [`Batch::run`]'s result.
    fn add<G: Ord + Clone>(&mut self, items: Grouped<G>) -> std::ops::Range<usize> {
        let section = self.sections;
        self.sections += 1;
        let mut ids: BTreeMap<G, usize> = BTreeMap::new();
        let start = self.offset + self.items.len();
        for (g, vals) in items {
            let next = ids.len();
            let id = *ids.entry(g).or_insert(next);
            self.items.push(((section, id), vals));
        }
        start..self.offset + self.items.len()
    }

    /// An empty batch whose statistics come after this one's, in sections
    /// of their own: reduced, it is [`ReducedBatch::merge`]d into this
    /// one's, as if they had been one batch.
    fn then(&self) -> Batch {
        Batch {
            sections: self.sections,
            offset: self.offset + self.items.len(),
            ..Default::default()
        }
    }

    /// Every statistic's family, reduced to its classes: each statistic's
    /// values are let go once its family is made (a section may still hold
    /// them through its own `Rc`), and families are made one at a time,
    /// each reduced before the next (never all of them whole at once).
    fn reduce(self) -> ReducedBatch {
        // task list → group → members
        type Groups = BTreeMap<GroupTag, Vec<usize>>;
        let mut sets: BTreeMap<Rc<[Id]>, Groups> = BTreeMap::new();
        for (i, (g, vals)) in self.items.iter().enumerate() {
            sets.entry(Rc::clone(&vals.tasks))
                .or_default()
                .entry(*g)
                .or_default()
                .push(i);
        }
        let statistics = self.offset + self.items.len();
        let offset = self.offset;
        let mut values: Vec<Option<PerTask>> =
            self.items.into_iter().map(|(_, v)| Some(v)).collect();
        let sets = sets
            .into_iter()
            .map(|(tasks, groups)| {
                let groups: Vec<Vec<usize>> = groups.into_values().collect();
                let families: Vec<bootstrap::Reduced> = groups
                    .iter()
                    .map(|members| {
                        bootstrap::Reduced::new(&Family {
                            sums: members
                                .iter()
                                .map(|&i| {
                                    let v = values[i].take().expect("a statistic is in one family");
                                    match Rc::try_unwrap(v) {
                                        Ok(c) => c.values,
                                        Err(v) => v.values.clone(),
                                    }
                                })
                                .collect(),
                            weights: vec![1.0; tasks.len()],
                        })
                    })
                    .collect();
                let at = |members: Vec<usize>| members.into_iter().map(|i| offset + i).collect();
                (Some(tasks), groups.into_iter().map(at).collect(), families)
            })
            .collect();
        ReducedBatch { statistics, sets }
    }
}

/// A [`Batch`]'s statistics, their families reduced: per set of families
/// over one task list, each family's members (positions in the batch) and
/// its classes.
struct ReducedBatch {
    statistics: usize,
    /// Per task list (in order), its families' members and classes.
    sets: Vec<TaskSet>,
}

/// A task list's families: the list itself until the last merge
/// ([`ReducedBatch::merged`]), each family's members, its classes.
type TaskSet = (Option<Rc<[Id]>>, Vec<Vec<usize>>, Vec<bootstrap::Reduced>);

impl ReducedBatch {
    /// The statistics of a batch made by [`Batch::then`], reduced, added
    /// to this one's: each family into the set of its task list, so that it
    /// shares that list's resample draws as one batch would have had it do
    /// (and, each family's estimates being its own, with the same figures).
    /// Its task lists are let go: nothing more merges into it.
    fn merged(mut self, other: ReducedBatch) -> ReducedBatch {
        assert!(other.statistics >= self.statistics);
        self.statistics = other.statistics;
        for (tasks, groups, families) in other.sets {
            let at = self.sets.binary_search_by(|s| {
                s.0.as_ref()
                    .expect("merged once")
                    .cmp(tasks.as_ref().expect("a fresh batch"))
            });
            match at {
                Ok(i) => {
                    self.sets[i].1.extend(groups);
                    self.sets[i].2.extend(families);
                }
                Err(i) => self.sets.insert(i, (tasks, groups, families)),
            }
        }
        for set in &mut self.sets {
            set.0 = None;
        }
        self
    }

    /// Every statistic's value, its interval [`Ci::Pending`]: what the
    /// bootstrap will give it, the interval to come.
    fn points(&self) -> Vec<Estimate> {
        let mut out = vec![Estimate::UNDEFINED; self.statistics];
        for (_, groups, families) in &self.sets {
            for (members, f) in groups.iter().zip(families) {
                for (&i, e) in members.iter().zip(f.points()) {
                    out[i] = e;
                }
            }
        }
        out
    }

    /// Every statistic's estimate, in the batch's order.
    fn run(self, boot: &Bootstrap) -> Vec<Estimate> {
        let mut out = vec![Estimate::UNDEFINED; self.statistics];
        for (_, groups, families) in self.sets {
            let ests = bootstrap::cluster_bootstrap_reduced(families, boot);
            for (members, es) in groups.iter().zip(ests) {
                for (&i, e) in members.iter().zip(es) {
                    out[i] = e;
                }
            }
        }
        out
    }
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
    // the bootstraps' two), the scan waited for once every benchmark's
    // values are in (their token budgets are registered then), the bounds
    // when the first benchmark's Δ rows are made,
    // the curves taken when a benchmark is handed on after they are done
    // (11 M rollouts: 1.0, 0.4 and 0.7 s). Begun only after the first
    // hand-over, the curves did not bring that hand-over sooner at 11 M (the
    // CPU is all taken either way) and raised the peak by 10 MiB at 1 M.
    let pending = std::thread::scope(|scope| {
        let bounds = scope.spawn(|| upper_bounds(input, &s.levels));
        let scan = scope.spawn(|| TokenScan::of(input));
        let curves = scope.spawn(|| curves(input, &ks));
        let (mut bounds, mut scan, mut curves) = (Some(bounds), Some(scan), Some(curves));
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
                preview.rep.benchmarks_in.push(input.name(b));
                progress(so_far(&rep, &pending, &preview));
            }
            registered.push((b, batch, rest, finish_cells, finish_advantages, finish_gaps));
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

/// Earliest solving turn of each task of a benchmark over every evaluation
/// rollout, and whether the bound is oracle, empirical or mixed.
fn solvability(input: &PassInput, b: Id) -> (BTreeMap<Id, u32>, Vec<(Id, TaskInfo)>, &'static str) {
    let mut first_solve: BTreeMap<Id, u32> = BTreeMap::new();
    for ((bb, _, t), groups) in &input.agg.groups {
        if *bb != b {
            continue;
        }
        for g in groups {
            if let Some(s) = g.first_success(&input.agg.turns) {
                let e = first_solve.entry(*t).or_insert(s);
                *e = (*e).min(s);
            }
        }
    }
    let tasks: Vec<(Id, TaskInfo)> = input.tasks(b).collect();
    let with_oracle = tasks.iter().filter(|(_, i)| i.min_turns.is_some()).count();
    let kind = if with_oracle == tasks.len() {
        "oracle"
    } else if with_oracle == 0 {
        "empirical"
    } else {
        "mixed"
    };
    (first_solve, tasks, kind)
}

/// Share of tasks solvable within `tl(task)` turns.
fn solvable_share(
    tasks: &[(Id, TaskInfo)],
    first_solve: &BTreeMap<Id, u32>,
    tl: impl Fn(&TaskInfo) -> u32,
) -> f64 {
    let n = tasks
        .iter()
        .filter(|(t, info)| {
            let tl = tl(info);
            match info.min_turns {
                Some(m) => m <= tl,
                None => first_solve.get(t).is_some_and(|&s| s <= tl),
            }
        })
        .count();
    n as f64 / tasks.len().max(1) as f64
}

/// U(T) per benchmark and level (SPEC §2.1), and U at every integer t
/// from 1 to the benchmark's largest full budget: one scan of a
/// benchmark's groups for both.
pub fn upper_bounds(input: &PassInput, levels: &[u32]) -> (Vec<UpperBound>, Vec<UpperPoint>) {
    let (mut out, mut curve) = (Vec::new(), Vec::new());
    for b in input.benchmarks() {
        let (first_solve, tasks, kind) = solvability(input, b);
        for &l in levels {
            out.push(UpperBound {
                benchmark: input.name(b),
                level: l,
                value: solvable_share(&tasks, &first_solve, |i| t_at_level(l, i.full_budget)),
                tasks: tasks.len(),
                kind,
            });
        }
        let max_b = tasks.iter().map(|t| t.1.full_budget).max().unwrap_or(0);
        for t in 1..=max_b {
            curve.push(UpperPoint {
                benchmark: input.name(b),
                t,
                value: solvable_share(&tasks, &first_solve, |i| t.min(i.full_budget)),
                kind,
            });
        }
    }
    (out, curve)
}

fn curves(input: &PassInput, ks: &[u64]) -> Vec<CurvePoint> {
    let mut out = Vec::new();
    for b in input.benchmarks() {
        let tasks: Vec<(Id, TaskInfo)> = input.tasks(b).collect();
        let max_b = tasks.iter().map(|t| t.1.full_budget).max().unwrap_or(0);
        for r in input.runs(b) {
            // Full-budget groups of this run, per task (one per seed).
            let full: Vec<(Vec<&BudgetGroup>, u32)> = tasks
                .iter()
                .filter_map(|(t, info)| {
                    let groups = input.agg.groups.get(&(b, r, *t))?;
                    let g: Vec<&BudgetGroup> = groups
                        .iter()
                        .filter(|g| g.budget == info.full_budget && g.n > 0)
                        .collect();
                    (!g.is_empty()).then_some((g, info.full_budget))
                })
                .collect();
            if full.is_empty() {
                continue;
            }
            // Solved within min(t, B), per t and group (groups in task
            // order): counted once for every K, a group at a time. With
            // each group's seed and n in a column beside them, the sweeps
            // over (K, t) read two arrays front to back: they read every
            // group through its pointer, ~10 M reads out of cache at 11 M
            // rollouts (the curves took 10 s there, 0.3 s at 1.1 M).
            let groups = full.iter().map(|(gs, _)| gs.len()).sum::<usize>();
            let mut solved = vec![0u64; max_b as usize * groups];
            let mut meta: Vec<(Option<Id>, u64)> = Vec::with_capacity(groups);
            for (gs, fb) in &full {
                for g in gs {
                    let i = meta.len();
                    for t in 1..=max_b {
                        solved[(t as usize - 1) * groups + i] =
                            g.solved_within(&input.agg.turns, t.min(*fb));
                    }
                    meta.push((g.seed, g.n));
                }
            }
            let mut c: SeedCounts = Vec::new();
            for &k in ks {
                for t in 1..=max_b {
                    // Each task at min(t, B), its seeds averaged (§4.3).
                    let row = &solved[(t as usize - 1) * groups..][..groups];
                    let mut at = meta.iter().zip(row);
                    let vals: Vec<f64> = full
                        .iter()
                        .filter_map(|(gs, _)| {
                            c.clear();
                            c.extend(
                                at.by_ref()
                                    .take(gs.len())
                                    .map(|(&(seed, n), &s)| (seed, n, s)),
                            );
                            seed_mean(&c, k, pass_at_k)
                        })
                        .collect();
                    out.push(CurvePoint {
                        benchmark: input.name(b),
                        run: input.name(r),
                        k,
                        t,
                        value: super::stats::mean(&vals),
                    });
                }
            }
        }
    }
    out
}

/// Per-task Pass of both runs over the tasks where both have ≥ K rollouts.
pub fn paired_values(a: &TaskCounts, b: &TaskCounts, k: u64) -> Vec<(Id, f64, f64)> {
    a.iter()
        .filter_map(|(t, ca)| {
            let cb = b.get(t)?;
            Some((
                *t,
                seed_mean(ca, k, pass_at_k)?,
                seed_mean(cb, k, pass_at_k)?,
            ))
        })
        .collect()
}

/// Registers one pair's paired differences; the returned function builds
/// its rows of the table from the batch's estimates.
fn advantages<'a>(
    input: &'a PassInput,
    cache: &CountsCache,
    p: &'a Pair,
    ks: &[u64],
    s: &Settings,
    batch: &mut Batch,
) -> impl Fn(&[Estimate], &[UpperBound], Draw) -> (Vec<Advantage>, FamilyTests) + 'a {
    let mut jobs = Vec::new();
    for &l in &s.levels {
        for m in Mode::BOTH {
            let base = cache.get(input, p.benchmark, p.base, l, m);
            let rl = cache.get(input, p.benchmark, p.rl, l, m);
            for &k in ks {
                let v = paired_values(&rl, &base, k);
                if !v.is_empty() {
                    let v = Paired::new(&mut batch.lists, v);
                    jobs.push((k, l, m, v, Rc::clone(&base), Rc::clone(&rl)));
                }
            }
        }
    }
    let diffs: Grouped<(u32, Mode)> = jobs
        .iter()
        .map(|(_, l, m, v, _, _)| ((*l, *m), v.diffs()))
        .collect();
    let range = batch.add(diffs);
    let boot = s.boot;
    let (adjust, min_effect) = (s.adjust, s.min_effect);
    move |all, upper, draw| {
        let mut rows: Vec<Advantage> = jobs
            .iter()
            .zip(all[range.clone()].iter().copied())
            .map(|((k, l, m, v, base_c, rl_c), est)| {
                let est = seed_aware(
                    input,
                    p.benchmark,
                    vec![(p.rl, rl_c), (p.base, base_c)],
                    || v.tasks.to_vec(),
                    *k,
                    &boot,
                    || est,
                );
                let seeds = BTreeMap::from([
                    (
                        input.name(p.base),
                        contributing_seeds(input, p.benchmark, p.base, base_c, *k),
                    ),
                    (
                        input.name(p.rl),
                        contributing_seeds(input, p.benchmark, p.rl, rl_c, *k),
                    ),
                ]);
                let n = v.len() as f64;
                let rl_pass = v.a.iter().sum::<f64>() / n;
                let base_pass = v.b.iter().sum::<f64>() / n;
                let bench = input.name(p.benchmark);
                let u = upper.iter().find(|u| u.benchmark == bench && u.level == *l);
                Advantage {
                    benchmark: bench.clone(),
                    base: input.name(p.base),
                    rl: input.name(p.rl),
                    k: *k,
                    level: *l,
                    mode: *m,
                    tasks: v.len(),
                    delta: est.value,
                    ci: est.ci,
                    flip: est.value < -1e-12,
                    significant_flip: est.ci.below_zero(),
                    headroom: u.map(|u| u.value - rl_pass.max(base_pass)),
                    base_pass,
                    rl_pass,
                    test: super::multiplicity::CellTest::DEGENERATE,
                    seeds,
                }
            })
            .collect();
        if draw == Draw::ValuesOnly {
            return (rows, FamilyTests::Done(Vec::new()));
        }
        // §4.2: the pair's cells are one family, with joint replicates over
        // the union of their tasks.
        let fam: Vec<FamilyCell> = jobs
            .iter()
            .map(|j| FamilyCell {
                values: &j.3,
                base: &j.4,
                rl: &j.5,
                k: j.0,
            })
            .collect();
        let tests = family_tests_of(input, p, &rows, &fam, &boot, adjust, min_effect);
        if let FamilyTests::Done(tests) = &tests {
            for (r, t) in rows.iter_mut().zip(tests) {
                r.test = *t;
            }
        }
        (rows, tests)
    }
}

/// §4.2's tests of a family's rows, row i's joint replicates `reps(i)`.
fn cell_tests<'r>(
    rows: &[Advantage],
    reps: impl Fn(usize) -> &'r [f64],
    boot: &Bootstrap,
    adjust: super::multiplicity::Adjust,
    min_effect: f64,
    single_seed: bool,
) -> Vec<super::multiplicity::CellTest> {
    use super::multiplicity::{family_tests, CellInput};
    let inputs: Vec<CellInput> = rows
        .iter()
        .enumerate()
        .map(|(i, r)| CellInput {
            delta: r.delta,
            degenerate: !matches!(r.ci, Ci::Interval(..)),
            replicates: reps(i),
            tasks: r.tasks,
        })
        .collect();
    family_tests(&inputs, boot.resamples, adjust, min_effect, single_seed)
}

/// What a pair's rows are made with: their values alone, the estimates'
/// intervals still [`Ci::Pending`] and no test drawn (the preview of
/// [`analyse_staged`]), or whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Draw {
    ValuesOnly,
    Whole,
}

/// A pair's §4.2 tests: done, or its family's cells reduced and waiting for
/// their joint replicates — drawn once for every pair over as many tasks,
/// whatever its benchmark (the same draws each would get alone: a draw
/// depends only on the seed, the resample and the number of tasks), where
/// each pair drew them anew (8 draws of 26,000 tasks × 10,000 at 11 M
/// rollouts).
enum FamilyTests {
    Done(Vec<super::multiplicity::CellTest>),
    Joint(Vec<super::bootstrap::Reduced>),
}

/// The waiting tests of the pairs, each family bootstrapped with the others
/// over as many tasks; sets every row's test.
fn joint_family_tests(pending: &mut [(usize, Vec<Advantage>, FamilyTests)], s: &Settings) {
    // m → (pair, cells) in pair order.
    let mut by_m: BTreeMap<usize, Vec<(usize, Vec<super::bootstrap::Reduced>)>> = BTreeMap::new();
    for (j, (_, _, tests)) in pending.iter_mut().enumerate() {
        if let FamilyTests::Joint(cells) = std::mem::replace(tests, FamilyTests::Done(Vec::new())) {
            let m = cells.first().map_or(0, |c| c.clusters());
            by_m.entry(m).or_default().push((j, cells));
        }
    }
    for (_, pairs) in by_m {
        let sizes: Vec<(usize, usize)> = pairs.iter().map(|(j, c)| (*j, c.len())).collect();
        let all = pairs.into_iter().flat_map(|(_, c)| c).collect();
        let mut reps = super::bootstrap::cluster_bootstrap_replicates_of(all, &s.boot).into_iter();
        for (j, n) in sizes {
            let reps: Vec<Vec<Vec<f64>>> = reps.by_ref().take(n).collect();
            let rows = &mut pending[j].1;
            let tests = cell_tests(rows, |i| &reps[i][0], &s.boot, s.adjust, s.min_effect, true);
            for (r, t) in rows.iter_mut().zip(tests) {
                r.test = t;
            }
        }
    }
}

/// One cell of a family: its (task, Pass_RL, Pass_base) and both runs' counts.
struct FamilyCell<'a> {
    values: &'a Paired,
    base: &'a TaskCounts,
    rl: &'a TaskCounts,
    k: u64,
}

/// The §4.2 figures of one family's cells.
fn family_tests_of(
    input: &PassInput,
    pair: &Pair,
    rows: &[Advantage],
    cells: &[FamilyCell],
    boot: &Bootstrap,
    adjust: super::multiplicity::Adjust,
    min_effect: f64,
) -> FamilyTests {
    let degenerate = |r: &Advantage| !matches!(r.ci, Ci::Interval(..));
    // U: the union of the live cells' tasks, in name (= id) order.
    let union: BTreeSet<Id> = rows
        .iter()
        .zip(cells)
        .filter(|(r, _)| !degenerate(r))
        .flat_map(|(_, c)| c.values.tasks.iter().copied())
        .collect();
    let union: Vec<Id> = union.into_iter().collect();
    let multi = input.any_multi_seed(pair.benchmark, [pair.base, pair.rl]);
    let single_seed = !multi;
    if multi {
        // §4.3: the joint replicates come from the same two-stage draw.
        let specs: Vec<SeedSpec> = cells
            .iter()
            .map(|c| {
                (
                    vec![(pair.rl, c.rl), (pair.base, c.base)],
                    c.values.tasks.to_vec(),
                    c.k,
                )
            })
            .collect();
        let (sides, seed_cells) = seed_cells(input, pair.benchmark, &union, &specs);
        let reps = super::seeds::replicates(union.len(), &sides, &seed_cells, boot);
        let tests = cell_tests(rows, |i| &reps[i], boot, adjust, min_effect, single_seed);
        return FamilyTests::Done(tests);
    }
    if union.is_empty() {
        let tests = cell_tests(rows, |_| &[], boot, adjust, min_effect, single_seed);
        return FamilyTests::Done(tests);
    }
    // Each cell's family over U, reduced as it is made.
    FamilyTests::Joint(
        cells
            .iter()
            .map(|c| {
                let mut sums = vec![0.0; union.len()];
                let mut weights = vec![0.0; union.len()];
                let v = c.values;
                for ((&t, &rl), &base) in v.tasks.iter().zip(&v.a).zip(&v.b) {
                    if let Ok(i) = union.binary_search(&t) {
                        sums[i] = rl - base;
                        weights[i] = 1.0;
                    }
                }
                super::bootstrap::Reduced::new(&Family {
                    sums: vec![sums],
                    weights,
                })
            })
            .collect(),
    )
}

/// Registers a benchmark's mode gaps; the returned function builds them.
fn mode_gaps<'a>(
    input: &'a PassInput,
    cache: &CountsCache,
    b: Id,
    ks: &[u64],
    levels: &[u32],
    boot: &Bootstrap,
    batch: &mut Batch,
) -> impl Fn(&[Estimate]) -> Vec<ModeGap> + 'a {
    let mut jobs = Vec::new();
    let mut diffs: Grouped<(Id, u32)> = Vec::new();
    for r in input.runs(b) {
        for &l in levels {
            let native = cache.get(input, b, r, l, Mode::Native);
            let trunc = cache.get(input, b, r, l, Mode::Truncated);
            for &k in ks {
                let v = paired_values(&native, &trunc, k);
                if !v.is_empty() {
                    // The differences go to the batch; the row reads their
                    // tasks and count.
                    let d = Paired::new(&mut batch.lists, v).diffs();
                    jobs.push((r, k, l, d.summary(), Rc::clone(&native), Rc::clone(&trunc)));
                    diffs.push(((r, l), d));
                }
            }
        }
    }
    let range = batch.add(diffs);
    let boot = *boot;
    move |all| {
        jobs.iter()
            .zip(all[range.clone()].iter().copied())
            .map(|((r, k, l, v, nat, tr), est)| {
                // Native and truncated rollouts share the run's seed draw.
                let tasks = || v.tasks.to_vec();
                let sides = vec![(*r, &**nat), (*r, &**tr)];
                let est = seed_aware(input, b, sides, tasks, *k, &boot, || est);
                ModeGap {
                    benchmark: input.name(b),
                    run: input.name(*r),
                    k: *k,
                    level: *l,
                    tasks: v.len(),
                    diff: est.value,
                    ci: est.ci,
                    seeds: contributing_seeds(input, b, *r, nat, *k),
                }
            })
            .collect()
    }
}

/// (bench, run, task, seed of a multi-seed run) → (n, sorted tokens-to-success)
type TokenKey = (Id, Id, Id, Option<Id>);

/// The one pass over the rollouts that the token budgets need: per task
/// and seed, full-budget rollouts and their tokens up to success; per
/// benchmark, every such rollout's total and how many were left out.
struct TokenScan {
    /// Every (bench, run, task, seed) in order, its rollouts and (`used`)
    /// its solved ones' tokens up to success, sorted — in columns, not a
    /// map entry and a `Vec` a key (~40 MB of the scan's 86 at 11 M).
    keys: Vec<TokenKey>,
    n: Vec<u64>,
    used: Ragged<u64>,
    totals: BTreeMap<Id, Vec<u64>>,
    left_out: BTreeMap<Id, u64>,
}

impl TokenScan {
    fn of(input: &PassInput) -> TokenScan {
        let set = input.set;
        // Hashed while the rollouts are read, put in key order after (with
        // the full budgets hashed too, 1.00 → 0.72 s at 11 M rollouts).
        let mut per: FastMap<TokenKey, (u64, Vec<u64>)> = FastMap::default();
        let mut totals: BTreeMap<Id, Vec<u64>> = BTreeMap::new();
        let mut left_out: BTreeMap<Id, u64> = BTreeMap::new();
        for t in set
            .trajectories
            .iter()
            .filter(|t| input.agg.at_full_budget(t))
        {
            let steps = set.steps_of(t);
            if t.steps().is_none() || steps.iter().any(|st| st.output_tokens().is_none()) {
                *left_out.entry(t.benchmark).or_default() += 1;
                continue;
            }
            let total: u64 = steps.iter().filter_map(|st| st.output_tokens()).sum();
            totals.entry(t.benchmark).or_default().push(total);
            let seed = t
                .seed()
                .filter(|_| input.multi_seed(t.benchmark, t.run).is_some());
            let e = per.entry((t.benchmark, t.run, t.task, seed)).or_default();
            e.0 += 1;
            if let Some(st) = t.success_turn() {
                let used: u64 = steps
                    .iter()
                    .filter(|x| x.turn <= st)
                    .filter_map(|x| x.output_tokens())
                    .sum();
                e.1.push(used);
            }
        }
        let mut scan = TokenScan {
            keys: Vec::with_capacity(per.len()),
            n: Vec::with_capacity(per.len()),
            used: Ragged::default(),
            totals,
            left_out,
        };
        let mut per: Vec<(TokenKey, (u64, Vec<u64>))> = per.into_iter().collect();
        per.sort_unstable_by_key(|e| e.0);
        for (key, (n, mut used)) in per {
            used.sort_unstable();
            scan.keys.push(key);
            scan.n.push(n);
            scan.used.push(used);
        }
        scan.used.shrink_to_fit();
        scan.totals.values_mut().for_each(Vec::shrink_to_fit);
        scan
    }
    /// The entries of (bench, run) keys in `runs`, in key order: (key, n, used).
    fn range(
        &self,
        b: Id,
        runs: std::ops::RangeInclusive<Id>,
    ) -> impl Iterator<Item = (&TokenKey, u64, &[u64])> {
        let lo = self
            .keys
            .partition_point(|k| (k.0, k.1) < (b, *runs.start()));
        let hi = self
            .keys
            .partition_point(|k| (k.0, k.1) <= (b, *runs.end()));
        (lo..hi).map(|i| (&self.keys[i], self.n[i], self.used.get(i)))
    }
}

/// Token budgets (SPEC §2.1) of one benchmark: truncated mode on
/// full-budget rollouts, solved within X tokens when the tokens up to the
/// success turn are ≤ X.
fn token_budgets<'a>(
    input: &'a PassInput,
    scan: &TokenScan,
    b: Id,
    ks: &[u64],
    s: &Settings,
    batch: &mut Batch,
) -> impl Fn(&[Estimate], &mut PassReport) + 'a {
    let mut jobs = Vec::new();
    let mut budgets = BTreeMap::new();
    let mut lefts = BTreeMap::new();
    if let Some(tot) = scan.totals.get(&b) {
        let mut tot = tot.clone();
        tot.sort_unstable();
        let mut xs: Vec<u64> = match &s.token_budgets {
            Some(x) => x.clone(),
            None => [25.0, 50.0, 75.0, 100.0]
                .iter()
                .filter_map(|p| nearest_rank(&tot, *p))
                .collect(),
        };
        xs.dedup();
        budgets.insert(input.name(b), xs.clone());
        let runs: BTreeSet<Id> = scan.range(b, 0..=Id::MAX).map(|(k, _, _)| k.1).collect();
        for r in runs {
            // Each token budget's counts, shared by every K.
            let per_x: Vec<Rc<TaskCounts>> = xs
                .iter()
                .map(|&x| {
                    let mut counts = TaskCounts::default();
                    for (key, n, toks) in scan.range(b, r..=r) {
                        let solved = toks.partition_point(|&u| u <= x) as u64;
                        counts.push_entry(key.2, (key.3, n, solved));
                    }
                    counts.shrink_to_fit();
                    Rc::new(counts)
                })
                .collect();
            for &k in ks {
                for (&x, counts) in xs.iter().zip(&per_x) {
                    jobs.push((r, k, x, Rc::clone(counts)));
                }
            }
        }
    }
    if let Some(n) = scan.left_out.get(&b) {
        lefts.insert(input.name(b), *n);
    }
    let columns: Grouped<(Id, u64)> = jobs
        .iter()
        .map(|(r, k, x, counts)| {
            let col = Column::new(&mut batch.lists, pass_values(counts, *k).0);
            ((*r, *x), Rc::new(col))
        })
        .collect();
    // What the rows read of the columns: the values go to the batch alone
    // (held from the preview until their intervals are drawn).
    let values: Vec<ColumnSummary> = columns.iter().map(|(_, c)| c.summary()).collect();
    let range = batch.add(columns);
    let boot = s.boot;
    move |all, rep| {
        rep.token_budgets.extend(budgets.clone());
        rep.token_left_out.extend(lefts.clone());
        let cells = jobs
            .iter()
            .zip(&values)
            .zip(all[range.clone()].iter().copied());
        rep.token
            .extend(cells.map(|(((r, k, x, counts), vals), est)| {
                let tasks = || vals.tasks.to_vec();
                let est = seed_aware(input, b, vec![(*r, &**counts)], tasks, *k, &boot, || est);
                TokenCell {
                    benchmark: input.name(b),
                    run: input.name(*r),
                    k: *k,
                    tokens: *x,
                    value: vals.mean(),
                    ci: est.ci,
                    tasks: vals.len(),
                    tasks_left_out: counts.len() - vals.len(),
                }
            }));
    }
}

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
        adjust: super::multiplicity::Adjust,
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
                    super::multiplicity::Adjust::Holm => cells,
                    _ => 1,
                };
                out.push(OutOfReach {
                    first: a,
                    cells,
                    p_floor,
                    resamples_needed: super::multiplicity::resamples_to_reach(per, alpha),
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

    /// (t, Pass@(K,t)) of a run's truncated curve.
    pub fn curve_of(&self, bench: &str, run: &str, k: u64) -> Vec<(f64, f64)> {
        self.curve
            .iter()
            .filter(|c| c.benchmark == bench && c.run == run && c.k == k)
            .filter_map(|c| c.value.map(|v| (c.t as f64, v)))
            .collect()
    }

    /// (t, U(t)) of a benchmark's upper-bound curve.
    pub fn upper_curve_of(&self, bench: &str) -> Vec<(f64, f64)> {
        self.upper_curve
            .iter()
            .filter(|u| u.benchmark == bench)
            .map(|u| (u.t as f64, u.value))
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
}
