//! Advantage (RL − base) with flips, the §4.2 family tests of its cells, and the native − truncated mode gap.

use super::*;

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
pub(super) fn advantages<'a>(
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
                    test: crate::analysis::multiplicity::CellTest::DEGENERATE,
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
    adjust: crate::analysis::multiplicity::Adjust,
    min_effect: f64,
    single_seed: bool,
) -> Vec<crate::analysis::multiplicity::CellTest> {
    use crate::analysis::multiplicity::{family_tests, CellInput};
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
pub(super) enum Draw {
    ValuesOnly,
    Whole,
}

/// A pair's §4.2 tests: done, or its family's cells reduced and waiting for
/// their joint replicates — drawn once for every pair over as many tasks,
/// whatever its benchmark (the same draws each would get alone: a draw
/// depends only on the seed, the resample and the number of tasks), where
/// each pair drew them anew (8 draws of 26,000 tasks × 10,000 at 11 M
/// rollouts).
pub(super) enum FamilyTests {
    Done(Vec<crate::analysis::multiplicity::CellTest>),
    Joint(Vec<crate::analysis::bootstrap::Reduced>),
}

/// The waiting tests of the pairs, each family bootstrapped with the others
/// over as many tasks; sets every row's test.
pub(super) fn joint_family_tests(
    pending: &mut [(usize, Vec<Advantage>, FamilyTests)],
    s: &Settings,
) {
    // m → (pair, cells) in pair order.
    let mut by_m: BTreeMap<usize, Vec<(usize, Vec<crate::analysis::bootstrap::Reduced>)>> =
        BTreeMap::new();
    for (j, (_, _, tests)) in pending.iter_mut().enumerate() {
        if let FamilyTests::Joint(cells) = std::mem::replace(tests, FamilyTests::Done(Vec::new())) {
            let m = cells.first().map_or(0, |c| c.clusters());
            by_m.entry(m).or_default().push((j, cells));
        }
    }
    for (_, pairs) in by_m {
        let sizes: Vec<(usize, usize)> = pairs.iter().map(|(j, c)| (*j, c.len())).collect();
        let all = pairs.into_iter().flat_map(|(_, c)| c).collect();
        let mut reps =
            crate::analysis::bootstrap::cluster_bootstrap_replicates_of(all, &s.boot).into_iter();
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
    adjust: crate::analysis::multiplicity::Adjust,
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
        let reps = crate::analysis::seeds::replicates(union.len(), &sides, &seed_cells, boot);
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
                crate::analysis::bootstrap::Reduced::new(&Family {
                    sums: vec![sums],
                    weights,
                })
            })
            .collect(),
    )
}

/// Registers a benchmark's mode gaps; the returned function builds them.
pub(super) fn mode_gaps<'a>(
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
pub(super) type TokenKey = (Id, Id, Id, Option<Id>);
