//! Per-task (n, c) counts of the cells and the input they are counted from.

use super::*;

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
    pub(super) fn shrink_to_fit(&mut self) {
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
    pub(super) fn name(&self, id: Id) -> String {
        self.set.name(id).to_string()
    }
}

/// Each cell's counts computed once and shared by every section of
/// [`analyse`] that reads them (the cells, the paired differences, the
/// mode gaps): at a million rollouts they are most of its memory.
#[derive(Default)]
pub(super) struct CountsCache(std::cell::RefCell<BTreeMap<CellKey, Rc<TaskCounts>>>);

/// (benchmark, run, level, mode)
type CellKey = (Id, Id, u32, Mode);

impl CountsCache {
    /// Every (run, level, mode) cell's counts of a benchmark at once, a
    /// (run, level) to a worker (11 M rollouts: 0.35 s a benchmark, one
    /// tree search per task and cell, when each was made on first use).
    pub(super) fn fill(&self, input: &PassInput, bench: Id, levels: &[u32]) {
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
    pub(super) fn get(
        &self,
        input: &PassInput,
        bench: Id,
        run: Id,
        level: u32,
        mode: Mode,
    ) -> Rc<TaskCounts> {
        let mut m = self.0.borrow_mut();
        Rc::clone(
            m.entry((bench, run, level, mode))
                .or_insert_with(|| Rc::new(input.counts(bench, run, level, mode))),
        )
    }
}

/// K ∈ {1, 2, 4, …} up to the largest number of rollouts in any cell.
pub fn default_ks(input: &PassInput, levels: &[u32]) -> Vec<u64> {
    // Each cell's n alone (its solved rollouts are not counted here), the
    // tasks on both cores (11 M rollouts: 0.08 s on one).
    use rayon::prelude::*;
    let max_n = input
        .agg
        .groups
        .par_iter()
        .filter_map(|((b, _, t), groups)| {
            let info = input.agg.task_info(*b, *t)?;
            levels
                .iter()
                .flat_map(|&l| Mode::BOTH.map(|m| (l, m)))
                .flat_map(|(l, m)| cell_groups(groups, info, l, m).map(move |(g, _)| cell_n(g, m)))
                .max()
        })
        .max()
        .unwrap_or(0);
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
pub(super) type Grouped<G> = Vec<(G, PerTask)>;

/// One statistic's per-task values, shared.
pub(super) type PerTask = Rc<Column>;
