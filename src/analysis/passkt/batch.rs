//! The bootstrap batch of Pass@(K,T): statistics over shared task lists, registered, reduced to their classes and drawn at once.

use super::*;

/// One statistic's value per task, over a task list shared with every
/// other statistic of the benchmark over the same tasks: 8 bytes a task
/// where (task, value) pairs took 16 — at 11 M rollouts these are most of
/// the stage's memory (issue 20).
pub(super) struct Column {
    pub(super) tasks: Rc<[Id]>,
    values: Vec<f64>,
}

impl Column {
    pub(super) fn new(lists: &mut TaskLists, pairs: Vec<(Id, f64)>) -> Column {
        let values = pairs.iter().map(|x| x.1).collect();
        Column {
            tasks: lists.share(pairs.into_iter().map(|x| x.0).collect()),
            values,
        }
    }
    pub(super) fn len(&self) -> usize {
        self.values.len()
    }
    /// The mean over tasks, in task order (None over no task).
    pub(super) fn mean(&self) -> Option<f64> {
        (!self.values.is_empty())
            .then(|| self.values.iter().sum::<f64>() / self.values.len() as f64)
    }
}

/// What a finished row reads of a [`Column`], the values gone to the batch.
pub(super) struct ColumnSummary {
    pub(super) tasks: Rc<[Id]>,
    pub(super) len: usize,
    pub(super) mean: Option<f64>,
}

impl ColumnSummary {
    pub(super) fn len(&self) -> usize {
        self.len
    }
    pub(super) fn mean(&self) -> Option<f64> {
        self.mean
    }
}

impl Column {
    pub(super) fn summary(&self) -> ColumnSummary {
        ColumnSummary {
            tasks: Rc::clone(&self.tasks),
            len: self.len(),
            mean: self.mean(),
        }
    }
}

/// Two runs' (or modes') per-task values over the tasks where both have
/// ≥ K rollouts ([`paired_values`] in columns).
pub(super) struct Paired {
    pub(super) tasks: Rc<[Id]>,
    pub(super) a: Vec<f64>,
    pub(super) b: Vec<f64>,
}

impl Paired {
    pub(super) fn new(lists: &mut TaskLists, v: Vec<(Id, f64, f64)>) -> Paired {
        Paired {
            a: v.iter().map(|x| x.1).collect(),
            b: v.iter().map(|x| x.2).collect(),
            tasks: lists.share(v.into_iter().map(|x| x.0).collect()),
        }
    }
    pub(super) fn len(&self) -> usize {
        self.a.len()
    }
    /// a − b per task, a column of the batch.
    pub(super) fn diffs(&self) -> PerTask {
        Rc::new(Column {
            tasks: Rc::clone(&self.tasks),
            values: self.a.iter().zip(&self.b).map(|(a, b)| a - b).collect(),
        })
    }
}

/// A benchmark's distinct task lists, each held once by every column over
/// it (the cells of one benchmark mostly cover the same tasks).
#[derive(Default)]
pub(super) struct TaskLists(Vec<Rc<[Id]>>);

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
pub(super) struct Batch {
    /// Per-task values, each tagged (section, group).
    items: Grouped<GroupTag>,
    sections: usize,
    /// The task lists of the columns.
    pub(super) lists: TaskLists,
    /// Statistics of the batch this one continues ([`Batch::then`]): its
    /// positions follow theirs.
    offset: usize,
}

impl Batch {
    /// Adds a section's statistics; their estimates come back, in order, at
    /// the returned positions of [`Batch::run`]'s result.
    pub(super) fn add<G: Ord + Clone>(&mut self, items: Grouped<G>) -> std::ops::Range<usize> {
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
    pub(super) fn then(&self) -> Batch {
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
    pub(super) fn reduce(self) -> ReducedBatch {
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
pub(super) struct ReducedBatch {
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
    pub(super) fn merged(mut self, other: ReducedBatch) -> ReducedBatch {
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
    pub(super) fn points(&self) -> Vec<Estimate> {
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

    /// [`ReducedBatch::run`] with `boot`'s resamples, the batch kept (each
    /// set's families copied while it is drawn): a provisional interval's
    /// estimates ([`Bootstrap::provisional`]) before the batch's own.
    pub(super) fn run_early(&self, boot: &Bootstrap) -> Vec<Estimate> {
        let mut out = vec![Estimate::UNDEFINED; self.statistics];
        for (_, groups, families) in &self.sets {
            let ests = bootstrap::cluster_bootstrap_reduced(families.clone(), boot);
            for (members, es) in groups.iter().zip(ests) {
                for (&i, e) in members.iter().zip(es) {
                    out[i] = e.provisional();
                }
            }
        }
        out
    }

    /// Every statistic's estimate, in the batch's order.
    pub(super) fn run(self, boot: &Bootstrap) -> Vec<Estimate> {
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
