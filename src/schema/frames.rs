//! Polars frames built from the loaded columns, and the per-task aggregates
//! the Pass@(K,T) analyses read.
//!
//! The bulk reduction — 10⁶ rollouts to one row per (benchmark, run, task,
//! budget) with n and the sorted success turns — runs as a lazy polars
//! `group_by`. These aggregates are mergeable across shards: counts add, and
//! success-turn lists concatenate.

use std::collections::BTreeMap;

use polars::prelude::*;

use super::{FastMap, Id, LogSet};
use crate::error::{Error, Result};

/// Distinct seeds of each (benchmark, run)'s evaluation rollouts (SPEC §4.3).
pub fn run_seeds(set: &LogSet) -> BTreeMap<(Id, Id), Vec<Id>> {
    let mut out: BTreeMap<(Id, Id), std::collections::BTreeSet<Id>> = BTreeMap::new();
    for t in set.trajectories.iter().filter(|t| !t.is_training()) {
        if let Some(s) = t.seed() {
            out.entry((t.benchmark, t.run)).or_default().insert(s);
        }
    }
    out.into_iter()
        .map(|(k, v)| (k, v.into_iter().collect()))
        .collect()
}

/// One row per evaluation rollout (no `train_step`) of `rows` (indices
/// into the set's trajectories), with ids for names; `seed` only for runs
/// with two or more seeds in the benchmark (a run with one seed is
/// computed exactly as one without).
pub fn evaluation_frame(
    set: &LogSet,
    seeds: &BTreeMap<(Id, Id), Vec<Id>>,
    rows: &[u32],
) -> Result<DataFrame> {
    let eval: Vec<_> = rows
        .iter()
        .map(|&i| &set.trajectories[i as usize])
        .filter(|t| !t.is_training())
        .collect();
    let col_u32 = |name: &str, f: &dyn Fn(&crate::schema::Trajectory) -> u32| {
        Column::new(name.into(), eval.iter().map(|t| f(t)).collect::<Vec<u32>>())
    };
    let columns = vec![
        col_u32("benchmark", &|t| t.benchmark),
        col_u32("run", &|t| t.run),
        col_u32("task", &|t| t.task),
        col_u32("budget", &|t| t.budget),
        col_u32("full", &|t| t.max_budget().unwrap_or(t.budget)),
        Column::new(
            "success_turn".into(),
            eval.iter()
                .map(|t| t.success_turn().filter(|_| t.turns_known))
                .collect::<Vec<Option<u32>>>(),
        ),
        Column::new(
            "seed".into(),
            eval.iter()
                .map(|t| {
                    t.seed().filter(|_| {
                        seeds
                            .get(&(t.benchmark, t.run))
                            .is_some_and(|s| s.len() > 1)
                    })
                })
                .collect::<Vec<Option<u32>>>(),
        ),
        Column::new(
            "outcome_only".into(),
            eval.iter().map(|t| !t.turns_known).collect::<Vec<bool>>(),
        ),
        Column::new(
            "outcome_only_solved".into(),
            eval.iter()
                .map(|t| !t.turns_known && t.success)
                .collect::<Vec<bool>>(),
        ),
        Column::new(
            "min_turns".into(),
            eval.iter()
                .map(|t| t.min_turns())
                .collect::<Vec<Option<u32>>>(),
        ),
    ];
    DataFrame::new_infer_height(columns).map_err(polars_bug)
}

fn polars_bug(e: PolarsError) -> Error {
    Error::Internal(format!("polars: {e}"))
}

/// Rollouts of one (benchmark, run, task) at one budget.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BudgetGroup {
    pub budget: u32,
    /// Rollouts whose turns are known.
    pub n: u64,
    /// Where the success turns of its successful rollouts with known turns
    /// are in [`EvalAggregates::turns`] (ascending): one column for every
    /// group, not an allocation each.
    turns: super::Span,
    /// Outcome-only rollouts (unknown turns, SPEC §4.1) and how many of
    /// them succeeded: they count only in the native cell of this budget.
    pub outcome_only: u64,
    pub outcome_only_solved: u64,
    /// The seed of these rollouts, for runs with several seeds (§4.3).
    pub seed: Option<Id>,
}

impl BudgetGroup {
    /// Its success turns, ascending; `turns` is [`EvalAggregates::turns`].
    pub fn success_turns<'a>(&self, turns: &'a [u32]) -> &'a [u32] {
        &turns[self.turns.range()]
    }
    /// Rollouts with known turns solved within T turns.
    pub fn solved_within(&self, turns: &[u32], t: u32) -> u64 {
        self.success_turns(turns).partition_point(|&s| s <= t) as u64
    }
    /// (n, c) of the native cell at T = this budget: every rollout, solved
    /// within T (an outcome-only rollout is solved iff it succeeded).
    pub fn native_counts(&self, turns: &[u32]) -> (u64, u64) {
        (
            self.n + self.outcome_only,
            self.solved_within(turns, self.budget) + self.outcome_only_solved,
        )
    }
    /// The earliest turn at which any rollout of the group solved the task.
    pub fn first_success(&self, turns: &[u32]) -> Option<u32> {
        let oo = (self.outcome_only_solved > 0).then_some(self.budget);
        match (self.success_turns(turns).first().copied(), oo) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

/// Appends a group's success turns to the column; where they are.
fn push_turns(column: &mut Vec<u32>, turns: impl IntoIterator<Item = u32>) -> super::Span {
    let start = column.len();
    column.extend(turns);
    super::Span {
        start: start as u32,
        len: (column.len() - start) as u32,
    }
}

/// What a task's evaluation rollouts say about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskInfo {
    /// B(task): the largest `max_budget` (else `budget`) over its evaluation rollouts.
    pub full_budget: u32,
    pub min_turns: Option<u32>,
}

/// The aggregates of every evaluation rollout.
#[derive(Debug, Default, Clone)]
pub struct EvalAggregates {
    /// (benchmark, task) → full budget and oracle fewest turns.
    pub tasks: BTreeMap<(Id, Id), TaskInfo>,
    /// (benchmark, run, task) → groups by budget (then seed), ascending.
    pub groups: BTreeMap<(Id, Id, Id), Vec<BudgetGroup>>,
    /// (benchmark, run) → its distinct evaluation seeds (§4.3).
    pub seeds: BTreeMap<(Id, Id), Vec<Id>>,
    /// Every group's success turns, each group's a run of this column (see
    /// [`BudgetGroup::success_turns`]).
    pub turns: Vec<u32>,
    /// How many evaluation and training rollouts: counted once, read by
    /// every view of the inputs.
    pub evaluation: u64,
    pub training: u64,
    /// `tasks`, hashed, for the scans that ask for every rollout's task
    /// ([`EvalAggregates::at_full_budget`], [`EvalAggregates::task_info`]; a
    /// tree's search for each of 11 M rollouts was ~0.2 s of natural
    /// recovery's and of the token scan's, 0.6 s of 1.2 CPU-s of the
    /// failure causes'). Made from `tasks` once they are complete.
    hashed: FastMap<(Id, Id), TaskInfo>,
}

impl EvalAggregates {
    /// Whether `t` is an evaluation rollout at its task's full budget
    /// B(task) (what `--grep` and the likelihood analyses read).
    pub fn at_full_budget(&self, t: &super::Trajectory) -> bool {
        !t.is_training()
            && self
                .hashed
                .get(&(t.benchmark, t.task))
                .is_some_and(|i| i.full_budget == t.budget)
    }
    /// A task's entry of `tasks`, found by hash (for a lookup per rollout).
    pub fn task_info(&self, bench: Id, task: Id) -> Option<TaskInfo> {
        self.hashed.get(&(bench, task)).copied()
    }
}

fn u32s(df: &DataFrame, name: &str) -> Result<Vec<Option<u32>>> {
    let c = df.column(name).map_err(polars_bug)?;
    let ca = c.u32().map_err(polars_bug)?;
    Ok(ca.iter().collect())
}

fn req(v: Option<u32>) -> Result<u32> {
    v.ok_or_else(|| Error::Internal("unexpected null in a key column".into()))
}

/// Evaluation rollouts reduced at a time: the frame and the group-by's
/// working memory stay about this size, whatever the number of rollouts.
const PART_ROWS: usize = 1 << 18;

/// Reduces the evaluation rollouts with a lazy group-by, a part of the
/// tasks at a time (a task's rollouts are all in one part, so each group
/// is whole); each task's figures come from its groups'. Parts are reduced
/// on both cores, two at a time, and put together in part order: their
/// tasks are disjoint, so what each adds is what it would add alone (at
/// 11 M rollouts, 42 parts reduced one by one left a core idle for 3 s).
pub fn eval_aggregates(set: &LogSet) -> Result<EvalAggregates> {
    use rayon::prelude::*;
    let seeds = run_seeds(set);
    let rows = set.trajectories.iter().filter(|t| !t.is_training()).count();
    // A rollout's part: its task id modulo the number of parts.
    let parts = rows.div_ceil(PART_ROWS).max(1);
    let mut members: Vec<Vec<u32>> = vec![Vec::new(); parts];
    for (i, t) in set.trajectories.iter().enumerate() {
        if !t.is_training() {
            members[t.task as usize % parts].push(i as u32);
        }
    }
    let mut out = EvalAggregates::default();
    let threads = rayon::current_num_threads().max(1);
    let mut members = members.into_iter();
    loop {
        let wave: Vec<Vec<u32>> = members.by_ref().take(threads).collect();
        if wave.is_empty() {
            break;
        }
        let reduced: Vec<Result<EvalAggregates>> = wave
            .into_par_iter()
            .map(|rows| {
                let mut part = EvalAggregates::default();
                let df = evaluation_frame(set, &seeds, &rows)?;
                drop(rows);
                if df.height() > 0 {
                    reduce_groups(df, &mut part)?;
                }
                Ok(part)
            })
            .collect();
        for part in reduced {
            add_part(&mut out, part?);
        }
    }
    merge_aggregates(set, &mut out);
    out.hashed = out.tasks.iter().map(|(k, i)| (*k, *i)).collect();
    out.seeds = seeds;
    out.evaluation = rows as u64;
    out.training = (set.trajectories.len() - rows) as u64;
    Ok(out)
}

/// One frame's (benchmark, run, task, budget, seed) groups into `out`.
fn reduce_groups(df: DataFrame, out: &mut EvalAggregates) -> Result<()> {
    let groups = df
        .lazy()
        .group_by([
            col("benchmark"),
            col("run"),
            col("task"),
            col("budget"),
            col("seed"),
        ])
        .agg([
            len().cast(DataType::UInt32).alias("n"),
            col("outcome_only")
                .sum()
                .cast(DataType::UInt32)
                .alias("outcome_only"),
            col("outcome_only_solved")
                .sum()
                .cast(DataType::UInt32)
                .alias("outcome_only_solved"),
            col("success_turn")
                .drop_nulls()
                .sort(SortOptions::default())
                .alias("turns"),
            col("full").max(),
            col("min_turns").max(),
        ])
        .collect()
        .map_err(polars_bug)?;
    let (b, r, t, bu, n) = (
        u32s(&groups, "benchmark")?,
        u32s(&groups, "run")?,
        u32s(&groups, "task")?,
        u32s(&groups, "budget")?,
        u32s(&groups, "n")?,
    );
    let (oo, oo_solved, seed) = (
        u32s(&groups, "outcome_only")?,
        u32s(&groups, "outcome_only_solved")?,
        u32s(&groups, "seed")?,
    );
    let (full, min_turns) = (u32s(&groups, "full")?, u32s(&groups, "min_turns")?);
    let turns = groups
        .column("turns")
        .and_then(|c| c.list().cloned())
        .map_err(polars_bug)?;
    for (i, l) in turns.amortized_iter().enumerate() {
        let success_turns = match l {
            Some(s) => push_turns(
                &mut out.turns,
                s.as_ref().u32().map_err(polars_bug)?.iter().flatten(),
            ),
            None => push_turns(&mut out.turns, []),
        };
        let key = (req(b[i])?, req(r[i])?, req(t[i])?);
        // A task's full budget and fewest turns: the largest over its
        // groups' largest (a null only where every rollout's is).
        let full = req(full[i])?;
        let info = out.tasks.entry((key.0, key.2)).or_insert(TaskInfo {
            full_budget: full,
            min_turns: min_turns[i],
        });
        info.full_budget = info.full_budget.max(full);
        info.min_turns = info.min_turns.max(min_turns[i]);
        let outcome_only = req(oo[i])? as u64;
        out.groups.entry(key).or_default().push(BudgetGroup {
            budget: req(bu[i])?,
            n: req(n[i])? as u64 - outcome_only,
            turns: success_turns,
            outcome_only,
            outcome_only_solved: req(oo_solved[i])? as u64,
            seed: seed[i],
        });
    }
    Ok(())
}

/// A part's aggregates into the whole: its tasks are its own, so its
/// entries are new; its success turns go to the end of the column.
fn add_part(out: &mut EvalAggregates, part: EvalAggregates) {
    let base = out.turns.len() as u32;
    out.turns.extend(part.turns);
    out.tasks.extend(part.tasks);
    out.groups
        .extend(part.groups.into_iter().map(|(key, mut groups)| {
            for g in &mut groups {
                g.turns.start += base;
            }
            (key, groups)
        }));
}

/// Adds `--summarize` shards: counts add, success turns concatenate.
fn merge_aggregates(set: &LogSet, out: &mut EvalAggregates) {
    for a in &set.aggregates {
        let info = out.tasks.entry((a.benchmark, a.task)).or_insert(TaskInfo {
            full_budget: a.full_budget,
            min_turns: a.min_turns,
        });
        info.full_budget = info.full_budget.max(a.full_budget);
        info.min_turns = info.min_turns.or(a.min_turns);
        let groups = out.groups.entry((a.benchmark, a.run, a.task)).or_default();
        match groups
            .iter_mut()
            .find(|g| g.budget == a.budget && g.seed.is_none())
        {
            Some(g) => {
                g.n += a.n;
                // Its turns and the shard's, sorted, as a new run of the column.
                let mut turns = g.success_turns(&out.turns).to_vec();
                turns.extend(&a.success_turns);
                turns.sort_unstable();
                g.turns = push_turns(&mut out.turns, turns);
                g.outcome_only += a.outcome_only;
                g.outcome_only_solved += a.outcome_only_solved;
            }
            None => groups.push(BudgetGroup {
                budget: a.budget,
                n: a.n,
                turns: push_turns(&mut out.turns, a.success_turns.iter().copied()),
                outcome_only: a.outcome_only,
                outcome_only_solved: a.outcome_only_solved,
                seed: None,
            }),
        }
    }
    for v in out.groups.values_mut() {
        v.sort_by_key(|g| (g.budget, g.seed));
    }
}

/// `--summarize`: the per-task aggregates of a shard of logs as Parquet, so
/// shards reduced in parallel elsewhere can be audited together.
pub fn write_aggregates(set: &LogSet, agg: &EvalAggregates, path: &std::path::Path) -> Result<()> {
    let mut bench: Vec<&str> = Vec::new();
    let mut run: Vec<&str> = Vec::new();
    let mut method: Vec<Option<&str>> = Vec::new();
    let mut task: Vec<&str> = Vec::new();
    let (mut budget, mut full, mut min_turns, mut n) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut oo, mut oo_solved) = (Vec::new(), Vec::new());
    let mut turns: Vec<Option<Series>> = Vec::new();
    for (&(b, r, t), groups) in &agg.groups {
        let info = agg.tasks.get(&(b, t)).copied().unwrap_or(TaskInfo {
            full_budget: 0,
            min_turns: None,
        });
        for g in groups {
            bench.push(set.name(b));
            run.push(set.name(r));
            method.push(set.method_of(r));
            task.push(set.name(t));
            budget.push(g.budget);
            full.push(info.full_budget);
            min_turns.push(info.min_turns);
            n.push(g.n);
            oo.push(g.outcome_only);
            oo_solved.push(g.outcome_only_solved);
            turns.push(Some(Series::new(
                "".into(),
                g.success_turns(&agg.turns).to_vec(),
            )));
        }
    }
    let height = n.len();
    let turns: ListChunked = turns.into_iter().collect();
    let mut df = DataFrame::new_infer_height(vec![
        Column::new("kind".into(), vec!["aggregate"; height]),
        Column::new("benchmark".into(), bench),
        Column::new("run".into(), run),
        Column::new("method".into(), method),
        Column::new("task".into(), task),
        Column::new("budget".into(), budget),
        Column::new("full_budget".into(), full),
        Column::new("min_turns".into(), min_turns),
        Column::new("n".into(), n),
        Column::new("outcome_only".into(), oo),
        Column::new("outcome_only_solved".into(), oo_solved),
        turns.with_name("success_turns".into()).into_series().into(),
    ])
    .map_err(polars_bug)?;
    let out_err = |e: String| Error::Output {
        path: path.display().to_string(),
        message: format!("cannot write: {e}"),
    };
    let tmp = path.with_extension("parquet.tmp");
    let f = std::fs::File::create(&tmp).map_err(|e| out_err(e.to_string()))?;
    ParquetWriter::new(f)
        .with_compression(ParquetCompression::Zstd(None))
        .finish(&mut df)
        .map_err(|e| out_err(e.to_string()))?;
    std::fs::rename(&tmp, path).map_err(|e| out_err(e.to_string()))
}
