//! Which rollouts a cell holds (budget level, native or truncated), the per-seed counts of its tasks, and each task's share of Δ.

use super::*;

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

/// Per benchmark, the runs of consecutive levels (of `levels`, in order)
/// that give every task the same T ([`t_at_level`]): their cells hold the
/// same rollouts, judged within the same turns — one cell shown under
/// several levels (a budget of 1 turn makes every level's T 1). With the
/// largest full budget among its tasks.
pub fn coinciding_levels(
    tasks: &crate::schema::frames::TaskInfos,
    levels: &[u32],
) -> Vec<(crate::schema::Id, Vec<u32>, u32)> {
    let mut sorted = levels.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut out = Vec::new();
    let mut by_bench: std::collections::BTreeMap<crate::schema::Id, Vec<u32>> = Default::default();
    for (&(bench, _), info) in tasks.iter() {
        by_bench.entry(bench).or_default().push(info.full_budget);
    }
    for (bench, fulls) in by_bench {
        let same = |a: u32, b: u32| fulls.iter().all(|&f| t_at_level(a, f) == t_at_level(b, f));
        let largest = fulls.iter().copied().max().unwrap_or(0);
        let mut run: Vec<u32> = Vec::new();
        for &l in &sorted {
            match run.last() {
                Some(&p) if same(p, l) => run.push(l),
                _ => {
                    if run.len() > 1 {
                        out.push((bench, std::mem::take(&mut run), largest));
                    }
                    run = vec![l];
                }
            }
        }
        if run.len() > 1 {
            out.push((bench, run, largest));
        }
    }
    out
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
    cell_groups(groups, info, level, mode)
        .map(|(g, cb)| {
            let c = match mode {
                Mode::Native => g.native_counts(turns).1,
                Mode::Truncated => g.solved_within(turns, cb.t),
            };
            (g.seed, cell_n(g, mode), c)
        })
        .filter(|x| x.1 > 0)
        .collect()
}

/// A task's groups in its (level, mode) cell, with the cell's budget.
pub(super) fn cell_groups(
    groups: &[BudgetGroup],
    info: TaskInfo,
    level: u32,
    mode: Mode,
) -> impl Iterator<Item = (&BudgetGroup, CellBudget)> {
    let cb = cell_budget(info, level, mode);
    groups
        .iter()
        .filter_map(move |g| cb.filter(|cb| g.budget == cb.budget).map(|cb| (g, cb)))
}

/// A group's rollouts in a cell of `mode` it is in: every one in a native
/// cell (its outcome-only ones too), those whose turns are known in a
/// truncated one.
pub(super) fn cell_n(g: &BudgetGroup, mode: Mode) -> u64 {
    match mode {
        Mode::Native => g.native_n(),
        Mode::Truncated => g.n,
    }
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
pub(super) fn contributing_seeds(
    input: &PassInput,
    bench: Id,
    run: Id,
    counts: &TaskCounts,
    k: u64,
) -> usize {
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
pub(super) type SeedSpec<'a> = (Vec<(Id, &'a TaskCounts)>, Vec<Id>, u64);

/// The §4.3 two-stage inputs of cells over `tasks`: one side per distinct
/// run, each member task's per-seed Pass@K per side.
pub(super) fn seed_cells(
    input: &PassInput,
    bench: Id,
    tasks: &[Id],
    cells: &[SeedSpec],
) -> (
    Vec<crate::analysis::seeds::Side>,
    Vec<crate::analysis::seeds::SeedCell>,
) {
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
        .map(|(&r, s)| crate::analysis::seeds::Side {
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
            crate::analysis::seeds::SeedCell {
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
    crate::analysis::seeds::estimate(tasks.len(), &s, cells.remove(0), boot)
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
