//! The per-task aggregates the Pass@(K,T) analyses read, and the polars
//! frame `--summarize` writes them as.
//!
//! The bulk reduction — 10⁶ rollouts to one row per (benchmark, run, task,
//! budget, seed) with n and the sorted success turns — sorts each part's
//! rollouts by group and reads each group once ([`eval_aggregates`]). These
//! aggregates are mergeable across shards: counts add, and success-turn
//! lists concatenate.

use std::collections::BTreeMap;

use polars::prelude::*;

use super::{FastMap, Id, LogSet};
use crate::error::{Error, Result};

/// Distinct seeds of each (benchmark, run)'s evaluation rollouts (SPEC §4.3).
pub fn run_seeds(set: &LogSet) -> BTreeMap<(Id, Id), Vec<Id>> {
    let mut out: BTreeMap<(Id, Id), Vec<Id>> = BTreeMap::new();
    let keys = distinct_eval_keys(set, |t| Some((t.benchmark, t.run, t.seed()?)));
    for (b, r, s) in keys {
        out.entry((b, r)).or_default().push(s);
    }
    out
}

/// The distinct `key`s of the evaluation rollouts (those it gives one),
/// found a chunk of the rollouts a thread. A key mostly repeats the last
/// one (a run's rollouts come one after another): it is not looked up
/// again (11 M rollouts: a pass of 0.05–0.07 s on one core, each).
pub fn distinct_eval_keys<K: Ord + Copy + Send>(
    set: &LogSet,
    key: impl Fn(&super::Trajectory) -> Option<K> + Sync,
) -> std::collections::BTreeSet<K> {
    use rayon::prelude::*;
    let threads = rayon::current_num_threads().max(1);
    let chunk = set.trajectories.len().div_ceil(threads).max(1);
    set.trajectories
        .par_chunks(chunk)
        .map(|chunk| {
            let mut out = std::collections::BTreeSet::new();
            let mut last = None;
            for k in chunk.iter().filter(|t| !t.is_training()).filter_map(&key) {
                if last != Some(k) {
                    out.insert(k);
                    last = Some(k);
                }
            }
            out
        })
        .reduce(std::collections::BTreeSet::new, |mut a, mut b| {
            a.append(&mut b);
            a
        })
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
            self.native_n(),
            self.solved_within(turns, self.budget) + self.outcome_only_solved,
        )
    }
    /// n of the native cell at T = this budget: every rollout, outcome-only
    /// ones too.
    pub fn native_n(&self) -> u64 {
        self.n + self.outcome_only
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

/// Every task's [`TaskInfo`], from its evaluation rollouts and the
/// `--summarize` shards' rows ([`TaskInfos::of`]): what the aggregates hold
/// (`EvalAggregates::tasks`), found alone in one pass, so that the parts
/// reading no more than which rollouts are at their task's full budget
/// (the likelihood, natural recovery) need not wait for the rollouts to be
/// counted (11 M rollouts: ~0.06 s, against the counts' 1.0–1.2 s). It derefs
/// to its tree: (benchmark, task) → full budget and oracle fewest turns.
#[derive(Debug, Default, Clone)]
pub struct TaskInfos {
    tasks: BTreeMap<(Id, Id), TaskInfo>,
    /// `tasks`, hashed, for the scans that ask for every rollout's task
    /// ([`TaskInfos::at_full_budget`], [`TaskInfos::get_info`]; a tree's
    /// search for each of 11 M rollouts was ~0.2 s of natural recovery's
    /// and of the token scan's, 0.6 s of 1.2 CPU-s of the failure causes').
    hashed: FastMap<(Id, Id), TaskInfo>,
}

impl std::ops::Deref for TaskInfos {
    type Target = BTreeMap<(Id, Id), TaskInfo>;
    fn deref(&self) -> &Self::Target {
        &self.tasks
    }
}

impl TaskInfos {
    /// A task's full budget: the largest `max_budget` (else `budget`) over
    /// its evaluation rollouts, and over the shards' `full_budget`; its
    /// fewest turns: the largest its rollouts give, else the first shard
    /// row's that gives one. Rollouts are read in parallel chunks (each rule
    /// over the rollouts a maximum, so in any order).
    pub fn of(set: &LogSet) -> TaskInfos {
        use rayon::prelude::*;
        let add = |m: &mut FastMap<(Id, Id), TaskInfo>, key, full: u32, turns| {
            let info = m.entry(key).or_insert(TaskInfo {
                full_budget: full,
                min_turns: turns,
            });
            info.full_budget = info.full_budget.max(full);
            info.min_turns = info.min_turns.max(turns);
        };
        // A chunk a thread: each chunk's map holds about every task.
        let threads = rayon::current_num_threads().max(1);
        let chunk = set.trajectories.len().div_ceil(threads).max(1);
        let chunks: Vec<FastMap<(Id, Id), TaskInfo>> = set
            .trajectories
            .par_chunks(chunk)
            .map(|chunk| {
                let mut m = FastMap::default();
                for t in chunk.iter().filter(|t| !t.is_training()) {
                    let full = t.max_budget().unwrap_or(t.budget);
                    add(&mut m, (t.benchmark, t.task), full, t.min_turns());
                }
                m
            })
            .collect();
        let mut hashed = FastMap::default();
        for m in chunks {
            for (key, info) in m {
                add(&mut hashed, key, info.full_budget, info.min_turns);
            }
        }
        for a in &set.aggregates {
            let info = hashed.entry((a.benchmark, a.task)).or_insert(TaskInfo {
                full_budget: a.full_budget,
                min_turns: a.min_turns,
            });
            info.full_budget = info.full_budget.max(a.full_budget);
            info.min_turns = info.min_turns.or(a.min_turns);
        }
        TaskInfos {
            tasks: hashed.iter().map(|(k, i)| (*k, *i)).collect(),
            hashed,
        }
    }

    /// Whether `t` is an evaluation rollout at its task's full budget
    /// B(task) (what `--grep`, the likelihood analyses and natural
    /// recovery read).
    pub fn at_full_budget(&self, t: &super::Trajectory) -> bool {
        !t.is_training()
            && self
                .hashed
                .get(&(t.benchmark, t.task))
                .is_some_and(|i| i.full_budget == t.budget)
    }

    /// A task's entry, found by hash (for a lookup per rollout).
    pub fn get_info(&self, bench: Id, task: Id) -> Option<TaskInfo> {
        self.hashed.get(&(bench, task)).copied()
    }
}

/// The aggregates of every evaluation rollout.
#[derive(Debug, Default, Clone)]
pub struct EvalAggregates {
    /// (benchmark, task) → full budget and oracle fewest turns.
    pub tasks: std::sync::Arc<TaskInfos>,
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
}

impl EvalAggregates {
    /// Whether `t` is an evaluation rollout at its task's full budget
    /// B(task) (what `--grep` and the likelihood analyses read).
    pub fn at_full_budget(&self, t: &super::Trajectory) -> bool {
        self.tasks.at_full_budget(t)
    }
    /// A task's entry of `tasks`, found by hash (for a lookup per rollout).
    pub fn task_info(&self, bench: Id, task: Id) -> Option<TaskInfo> {
        self.tasks.get_info(bench, task)
    }
}

/// Evaluation rollouts reduced at a time: a part's working memory (its
/// keys twice, 64 bytes a rollout: 16 MiB) stays about this size, whatever
/// the number of rollouts.
const PART_ROWS: usize = 1 << 18;

/// Reduces the evaluation rollouts to their (benchmark, run, task, budget,
/// seed) groups, a part of the tasks at a time (a task's rollouts are all
/// in one part, so each group is whole); each task's figures come from its
/// groups'. Parts are reduced on both cores, a part a thread at a time,
/// and put together in part order: their tasks are disjoint, so what each
/// adds is what it would add alone (at 11 M rollouts, 42 parts reduced one
/// by one left a core idle for 3 s). At 11 M rollouts the whole takes
/// 0.46–0.62 s (0.91–1.12 s before its keys carried their counts and were
/// sorted a task at a time, the parts' members were found in parallel and
/// the map was built at once: session 54).
///
/// This was a lazy polars `group_by` (one frame a part); sorting each
/// part's rollouts and reading each group's run once gives the same
/// groups — whole numbers and sorted turns, exact either way — in half the
/// time (1.1 M rollouts: 0.30 → 0.145 s), and without polars' query engine
/// the first build compiles 30 fewer crates.
pub fn eval_aggregates(set: &LogSet) -> EvalAggregates {
    eval_aggregates_with(set, std::sync::Arc::new(TaskInfos::of(set)))
}

/// [`eval_aggregates`] with the set's [`TaskInfos::of`] found before.
pub fn eval_aggregates_with(set: &LogSet, tasks: std::sync::Arc<TaskInfos>) -> EvalAggregates {
    aggregates_in_parts(set, tasks, PART_ROWS)
}

/// [`eval_aggregates_with`] with parts of about `part_rows` rollouts.
fn aggregates_in_parts(
    set: &LogSet,
    tasks: std::sync::Arc<TaskInfos>,
    part_rows: usize,
) -> EvalAggregates {
    use rayon::prelude::*;
    let (seeds, rows) = rayon::join(
        || run_seeds(set),
        || {
            set.trajectories
                .par_iter()
                .filter(|t| !t.is_training())
                .count()
        },
    );
    // A rollout's part: its task id modulo the number of parts. Each part's
    // members in ascending order: found a chunk of the rollouts a thread,
    // then put together in chunk order.
    let parts = rows.div_ceil(part_rows).max(1);
    let threads = rayon::current_num_threads().max(1);
    let chunk = set.trajectories.len().div_ceil(threads).max(1);
    let chunks: Vec<Vec<Vec<u32>>> = set
        .trajectories
        .par_chunks(chunk)
        .enumerate()
        .map(|(c, trajectories)| {
            let mut members: Vec<Vec<u32>> = vec![Vec::new(); parts];
            for (i, t) in trajectories.iter().enumerate() {
                if !t.is_training() {
                    members[t.task as usize % parts].push((c * chunk + i) as u32);
                }
            }
            members
        })
        .collect();
    let mut members: Vec<Vec<u32>> = vec![Vec::new(); parts];
    for (i, m) in members.iter_mut().enumerate() {
        m.reserve_exact(chunks.iter().map(|c| c[i].len()).sum());
        for c in &chunks {
            m.extend_from_slice(&c[i]);
        }
    }
    drop(chunks);
    // Every part reduced on the pool, each thread taking the next part
    // when it is done (in waves of one part a thread, a thread done first
    // waited for the other), then put together in part order.
    let reduced: Vec<Part> = members
        .into_par_iter()
        .map(|rows| reduce_part(set, &seeds, rows, parts))
        .collect();
    // Every part's groups, then one map built from them (its keys are the
    // parts' own, each part's ascending: `BTreeMap`'s `from_iter` sorts
    // them and builds the tree at once; inserted one by one, they were
    // 0.1–0.2 s on one core at 11 M rollouts).
    let mut out = EvalAggregates::default();
    let mut groups = Vec::with_capacity(reduced.iter().map(|p| p.groups.len()).sum());
    for part in reduced {
        let base = out.turns.len() as u32;
        out.turns.extend(part.turns);
        groups.extend(part.groups.into_iter().map(|(key, mut groups)| {
            for g in &mut groups {
                g.turns.start += base;
            }
            (key, groups)
        }));
    }
    out.groups = groups.into_iter().collect();
    merge_aggregates(set, &mut out);
    out.tasks = tasks;
    out.seeds = seeds;
    out.evaluation = rows as u64;
    out.training = (set.trajectories.len() - rows) as u64;
    out
}

/// The seed a rollout's group is told apart by: its own for a run with
/// two or more seeds in the benchmark (§4.3), none otherwise (a run with
/// one seed is computed exactly as one without).
fn group_seed(seeds: &BTreeMap<(Id, Id), Vec<Id>>, t: &super::Trajectory) -> Option<Id> {
    t.seed().filter(|_| {
        seeds
            .get(&(t.benchmark, t.run))
            .is_some_and(|s| s.len() > 1)
    })
}

/// A success turn that counts: a rollout's whose turns are known (§4.1).
fn known_success_turn(t: &super::Trajectory) -> Option<u32> {
    t.success_turn().filter(|_| t.turns_known)
}

/// One part's evaluation rollouts (`rows`, indices into the set's
/// trajectories) as groups: sorted by (benchmark, run, task, budget), then
/// seed (none first), then success turn, so that each group is one run of
/// rollouts with its success turns ascending (a rollout without one sorts
/// as 0 and adds none). Each key carries what its group counts (the
/// rollout's success turn, if known, and whether its turns are known and
/// it succeeded), so the sorted keys are read alone: reading each
/// rollout again in their order, one cache miss a rollout, was half the
/// part's time. The keys are put in task order first (a counting sort:
/// the part's tasks are those whose id is its index modulo `parts`), then
/// each task's sorted alone, in cache; each group is its task's, so the
/// groups are the same as one sort of the part would make.
fn reduce_part(
    set: &LogSet,
    seeds: &BTreeMap<(Id, Id), Vec<Id>>,
    rows: Vec<u32>,
    parts: usize,
) -> Part {
    // Bits of a key's last field: its turns known, it succeeded, it has a
    // success turn that counts (the key's turn).
    const KNOWN: u8 = 1;
    const SOLVED: u8 = 2;
    const TURN: u8 = 4;
    let keyed: Vec<(u128, Option<Id>, u32, u8)> = rows
        .iter()
        .map(|&i| {
            let t = &set.trajectories[i as usize];
            let group = u128::from(t.benchmark) << 96
                | u128::from(t.run) << 64
                | u128::from(t.task) << 32
                | u128::from(t.budget);
            let turn = known_success_turn(t);
            let bit = |set: bool, bit: u8| if set { bit } else { 0 };
            let flags =
                bit(t.turns_known, KNOWN) | bit(t.success, SOLVED) | bit(turn.is_some(), TURN);
            (group, group_seed(seeds, t), turn.unwrap_or(0), flags)
        })
        .collect();
    drop(rows);
    // A key's task's place among the part's tasks.
    let slot = |k: &(u128, Option<Id>, u32, u8)| ((k.0 >> 32) as u32 as usize) / parts;
    let slots = keyed.iter().map(|k| slot(k) + 1).max().unwrap_or(0);
    let mut starts = vec![0usize; slots + 1];
    for k in &keyed {
        starts[slot(k) + 1] += 1;
    }
    for i in 1..starts.len() {
        starts[i] += starts[i - 1];
    }
    let mut by_task = vec![(0u128, None, 0u32, 0u8); keyed.len()];
    let mut next = starts.clone();
    for k in keyed {
        let at = &mut next[slot(&k)];
        by_task[*at] = k;
        *at += 1;
    }
    for w in starts.windows(2) {
        by_task[w[0]..w[1]].sort_unstable();
    }
    let keyed = by_task;
    let mut out = Part::default();
    for run in keyed.chunk_by(|a, b| (a.0, a.1) == (b.0, b.1)) {
        let (group, seed) = (run[0].0, run[0].1);
        let id = |shift: u32| (group >> shift) as u32;
        let (mut outcome_only, mut outcome_only_solved) = (0u64, 0u64);
        for &(_, _, _, flags) in run.iter().filter(|k| k.3 & KNOWN == 0) {
            outcome_only += 1;
            outcome_only_solved += u64::from(flags & SOLVED != 0);
        }
        let turns = push_turns(
            &mut out.turns,
            run.iter().filter(|k| k.3 & TURN != 0).map(|k| k.2),
        );
        let group = BudgetGroup {
            budget: id(0),
            n: run.len() as u64 - outcome_only,
            turns,
            outcome_only,
            outcome_only_solved,
            seed,
        };
        // A task's groups come together, by (benchmark, run), then budget
        // and seed.
        let key = (id(96), id(64), id(32));
        match out.groups.last_mut() {
            Some((k, groups)) if *k == key => groups.push(group),
            _ => out.groups.push((key, vec![group])),
        }
    }
    out
}

/// A part's groups, (benchmark, run, task) by (benchmark, run, task)
/// (each key once), and its success turns.
#[derive(Default)]
struct Part {
    groups: Vec<((Id, Id, Id), Vec<BudgetGroup>)>,
    turns: Vec<u32>,
}

/// Adds `--summarize` shards: counts add, success turns concatenate.
fn merge_aggregates(set: &LogSet, out: &mut EvalAggregates) {
    for a in &set.aggregates {
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
    // The rollouts' groups come sorted; a shard's may come anywhere.
    if !set.aggregates.is_empty() {
        for v in out.groups.values_mut() {
            v.sort_by_key(|g| (g.budget, g.seed));
        }
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

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde_json::json;

    /// A group, by name: (benchmark, run, task, budget, seed).
    type Key = (String, String, String, u32, Option<String>);
    /// n with known turns, the success turns ascending, outcome-only, solved.
    type Counts = (u64, Vec<u32>, u64, u64);
    /// A task, by name: (benchmark, task) → (full budget, fewest turns).
    type Tasks = BTreeMap<(String, String), (u32, Option<u32>)>;

    /// Evaluation rollouts of two benchmarks: a run without seeds, one with
    /// two (its groups told apart by seed, §4.3), one with a single seed
    /// (computed as if it had none); two budgets; every seventh rollout
    /// outcome-only (no turns, no steps); and training rollouts, which are
    /// not counted. The groups are counted here from the rollouts as
    /// written, not from the loaded set.
    fn rollouts() -> (Vec<serde_json::Value>, BTreeMap<Key, Counts>, Tasks) {
        let mut lines = Vec::new();
        let mut groups: BTreeMap<Key, Counts> = BTreeMap::new();
        let mut tasks = BTreeMap::new();
        let mut x: u64 = 12345;
        let mut next = |m: u64| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 33) % m
        };
        for bench in ["b1", "b2"] {
            for (run, seeds) in [
                ("base", vec![None]),
                ("rl", vec![Some(1), Some(2)]),
                ("one", vec![Some(5)]),
            ] {
                for task in 0..6u32 {
                    for budget in [4u32, 8] {
                        for seed in &seeds {
                            for sample in 0..5u32 {
                                let name = format!("{bench}-t{task}");
                                let mut r = json!({"run": run, "benchmark": bench, "task": name,
                                    "budget": budget, "sample": sample});
                                let success = next(2) == 0;
                                r["success"] = json!(success);
                                // b1 names its full budget on every rollout; b2 never.
                                if bench == "b1" {
                                    r["max_budget"] = json!(8);
                                }
                                // The oracle's fewest turns on some rollouts.
                                let min_turns = task % 3 + 1;
                                if sample % 2 == 0 {
                                    r["min_turns"] = json!(min_turns);
                                }
                                if let Some(s) = seed {
                                    r["seed"] = json!(s);
                                }
                                let outcome_only = next(7) == 0;
                                let turns = 1 + next(u64::from(budget)) as u32;
                                if !outcome_only {
                                    r["turns"] = json!(turns);
                                    if success && next(2) == 0 {
                                        r["success_turn"] =
                                            json!(1 + next(u64::from(turns)) as u32);
                                    }
                                }
                                let st = r["success_turn"].as_u64().map(|s| s as u32);
                                let g = groups
                                    .entry((
                                        bench.to_string(),
                                        run.to_string(),
                                        name.clone(),
                                        budget,
                                        seed.filter(|_| run == "rl").map(|s: u32| s.to_string()),
                                    ))
                                    .or_default();
                                if outcome_only {
                                    g.2 += 1;
                                    g.3 += u64::from(success);
                                } else {
                                    g.0 += 1;
                                    if success {
                                        g.1.push(st.unwrap_or(turns));
                                    }
                                }
                                tasks.insert((bench.to_string(), name), (8, Some(min_turns)));
                                lines.push(r);
                            }
                        }
                    }
                }
            }
        }
        for v in groups.values_mut() {
            v.1.sort_unstable();
        }
        for step in 0..3 {
            lines.push(
                json!({"run": "rl", "benchmark": "b1", "task": "b1-t0", "budget": 4,
                "success": true, "turns": 2, "train_step": step}),
            );
        }
        (lines, groups, tasks)
    }

    #[test]
    fn rollouts_are_grouped_by_budget_and_seed_with_their_turns_sorted() {
        let (lines, want, want_tasks) = rollouts();
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        let set =
            crate::schema::load::load_bytes("a.jsonl", text.into_bytes(), &Default::default())
                .unwrap();
        // One part, and parts of 7 rollouts (a task's rollouts in one).
        for part_rows in [super::PART_ROWS, 7] {
            let tasks = std::sync::Arc::new(super::TaskInfos::of(&set));
            let agg = super::aggregates_in_parts(&set, tasks, part_rows);
            let mut got: BTreeMap<Key, Counts> = BTreeMap::new();
            for (&(b, r, t), groups) in &agg.groups {
                // Each task's groups ascending by budget, then seed.
                let order: Vec<_> = groups
                    .iter()
                    .map(|g| (g.budget, g.seed.map(|s| set.name(s))))
                    .collect();
                let mut sorted = order.clone();
                sorted.sort();
                assert_eq!(order, sorted);
                for g in groups {
                    let key = (
                        set.name(b).to_string(),
                        set.name(r).to_string(),
                        set.name(t).to_string(),
                        g.budget,
                        g.seed.map(|s| set.name(s).to_string()),
                    );
                    let counts = (
                        g.n,
                        g.success_turns(&agg.turns).to_vec(),
                        g.outcome_only,
                        g.outcome_only_solved,
                    );
                    assert!(got.insert(key, counts).is_none());
                }
            }
            assert_eq!(got, want, "parts of {part_rows}");
            let tasks: Tasks = agg
                .tasks
                .iter()
                .map(|(&(b, t), i)| {
                    (
                        (set.name(b).to_string(), set.name(t).to_string()),
                        (i.full_budget, i.min_turns),
                    )
                })
                .collect();
            assert_eq!(tasks, want_tasks);
            assert_eq!((agg.evaluation, agg.training), (2 * 4 * 6 * 2 * 5, 3));
        }
    }
}
