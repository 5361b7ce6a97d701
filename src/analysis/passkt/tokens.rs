//! Token budgets: the one scan over the rollouts they need, and Pass under each budget.

use super::*;

/// The one pass over the rollouts that the token budgets need: per task
/// and seed, full-budget rollouts and their tokens up to success; per
/// benchmark, every such rollout's total and how many were left out.
pub(super) struct TokenScan {
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
    pub(super) fn of(input: &PassInput) -> TokenScan {
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
pub(super) fn token_budgets<'a>(
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
