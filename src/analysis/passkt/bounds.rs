//! The structural upper bound U(T) and the Pass@(K,t) curves.

use super::*;

/// Earliest solving turn of each task of a benchmark over every evaluation
/// rollout, and whether the bound is oracle, empirical or mixed.
fn solvability(input: &PassInput, b: Id) -> (BTreeMap<Id, u32>, Vec<(Id, TaskInfo)>, &'static str) {
    let mut first_solve: BTreeMap<Id, u32> = BTreeMap::new();
    let of_b = (b, Id::MIN, Id::MIN)..=(b, Id::MAX, Id::MAX);
    for ((_, _, t), groups) in input.agg.groups.range(of_b) {
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

/// Each task's threshold: the turn from which it is solvable — its oracle
/// fewest turns, else its earliest solve — if any.
fn thresholds(
    tasks: &[(Id, TaskInfo)],
    first_solve: &BTreeMap<Id, u32>,
) -> Vec<(TaskInfo, Option<u32>)> {
    tasks
        .iter()
        .map(|(t, i)| (*i, i.min_turns.or_else(|| first_solve.get(t).copied())))
        .collect()
}

/// Share of tasks solvable within `tl(task)` turns.
fn solvable_share(thresholds: &[(TaskInfo, Option<u32>)], tl: impl Fn(&TaskInfo) -> u32) -> f64 {
    let n = thresholds
        .iter()
        .filter(|(info, at)| at.is_some_and(|at| at <= tl(info)))
        .count();
    n as f64 / thresholds.len().max(1) as f64
}

/// U(T) per benchmark and level (SPEC §2.1), and U at every integer t
/// from 1 to the benchmark's largest full budget: one scan of a
/// benchmark's groups for both.
pub fn upper_bounds(input: &PassInput, levels: &[u32]) -> (Vec<UpperBound>, Vec<UpperCurve>) {
    let (mut out, mut curve) = (Vec::new(), Vec::new());
    for b in input.benchmarks() {
        let (first_solve, tasks, kind) = solvability(input, b);
        let thresholds = thresholds(&tasks, &first_solve);
        for &l in levels {
            out.push(UpperBound {
                benchmark: input.name(b),
                level: l,
                value: solvable_share(&thresholds, |i| t_at_level(l, i.full_budget)),
                tasks: tasks.len(),
                kind,
            });
        }
        let max_b = tasks.iter().map(|t| t.1.full_budget).max().unwrap_or(0);
        // A task turns solvable at its threshold if that is within its
        // full budget; no share changes after the last such turn.
        let within: Vec<u32> = thresholds
            .iter()
            .filter_map(|(i, at)| at.filter(|&at| at <= i.full_budget))
            .collect();
        let last = within
            .iter()
            .copied()
            .max()
            .unwrap_or(1)
            .clamp(1, max_b.max(1));
        if max_b > 0 {
            // Solvable within min(t, B): a threshold within B, at most t.
            // How many turn solvable at each t, summed up t by t, not every
            // task counted again at every t (a tree look-up each); the
            // share is the same quotient of the same counts.
            let mut from = vec![0usize; last as usize + 1];
            for &at in &within {
                from[at.min(last) as usize] += 1;
            }
            let mut solvable = from[0];
            let values = (1..=last as usize)
                .map(|t| {
                    solvable += from[t];
                    solvable as f64 / tasks.len().max(1) as f64
                })
                .collect();
            curve.push(UpperCurve {
                benchmark: input.name(b),
                values,
                until: max_b,
                kind,
            });
        }
    }
    (out, curve)
}

pub(super) fn curves(input: &PassInput, ks: &[u64]) -> Vec<Curve> {
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
            // No count changes after the latest success turn within a
            // full budget: the curve is flat from there to max_b.
            let last = full
                .iter()
                .flat_map(|(gs, fb)| {
                    gs.iter().filter_map(|g| {
                        let s = g.success_turns(&input.agg.turns);
                        s[..s.partition_point(|&x| x <= *fb)].last().copied()
                    })
                })
                .max()
                .unwrap_or(1)
                .clamp(1, max_b);
            let groups = full.iter().map(|(gs, _)| gs.len()).sum::<usize>();
            let mut solved = vec![0u64; last as usize * groups];
            let mut meta: Vec<(Option<Id>, u64)> = Vec::with_capacity(groups);
            for (gs, fb) in &full {
                for g in gs {
                    let i = meta.len();
                    for t in 1..=last {
                        solved[(t as usize - 1) * groups + i] =
                            g.solved_within(&input.agg.turns, t.min(*fb));
                    }
                    meta.push((g.seed, g.n));
                }
            }
            let mut c: SeedCounts = Vec::new();
            for &k in ks {
                let mut values = Vec::with_capacity(last as usize);
                for t in 1..=last {
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
                    values.push(crate::analysis::stats::mean(&vals));
                }
                out.push(Curve {
                    benchmark: input.name(b),
                    run: input.name(r),
                    k,
                    values,
                    until: max_b,
                });
            }
        }
    }
    out
}
