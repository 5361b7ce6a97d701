//! SPEC §2.7: cost frontier — more samples, more turns, or a better model?
//! Each (run, K, level, mode) cell becomes a point (expected cost, Pass@(K,T));
//! the per-run frontier drops dominated points; the equal-cost winner is
//! found for every cost ceiling.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};

use rayon::prelude::*;

use super::passkt::{cell_budget, CellBudget, Mode, PassReport};
use super::ragged::Ragged;
use super::Settings;
use crate::schema::frames::EvalAggregates;
use crate::schema::{Id, LogSet};

const REL_TOL: f64 = 1e-9;

#[derive(Debug, Clone, PartialEq)]
pub struct CostPoint {
    pub benchmark: String,
    pub run: String,
    pub k: u64,
    pub level: u32,
    pub mode: Mode,
    pub pass: f64,
    pub cost: f64,
    pub on_frontier: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Winner {
    pub benchmark: String,
    pub from_cost: f64,
    pub to_cost: Option<f64>,
    pub run: String,
    pub k: u64,
    pub level: u32,
    pub mode: Mode,
    pub pass: f64,
}

/// Equal within a relative tolerance of 1e-9.
pub fn approx_eq(a: f64, b: f64) -> bool {
    (a - b).abs() <= REL_TOL * a.abs().max(b.abs())
}

fn le(a: f64, b: f64) -> bool {
    a < b || approx_eq(a, b)
}

/// Dominated: another point costs no more and passes no less, one strictly.
pub fn dominated(p: &CostPoint, by: &CostPoint) -> bool {
    le(by.cost, p.cost)
        && le(p.pass, by.pass)
        && (!approx_eq(by.cost, p.cost) || !approx_eq(by.pass, p.pass))
}

/// The winner ordering: higher pass, then cheaper, smaller K, native, run name, level.
pub fn better(a: &CostPoint, b: &CostPoint) -> Ordering {
    if !approx_eq(a.pass, b.pass) {
        return b.pass.total_cmp(&a.pass);
    }
    if !approx_eq(a.cost, b.cost) {
        return a.cost.total_cmp(&b.cost);
    }
    (a.k, a.mode, &a.run, a.level).cmp(&(b.k, b.mode, &b.run, b.level))
}

/// A cell of the frontier: (benchmark, run, level, mode).
type CellKey = (Id, Id, u32, Mode);

/// A (benchmark, run) and its cells' (level, mode).
type PairCells = ((Id, Id), Vec<(u32, Mode)>);

/// Per task: (attempts, mean cost of one) per seed — one entry for a run
/// with at most one seed (§4.3: a task's cost is the mean over its seeds).
/// One column over the tasks ([`Ragged`]): 24 bytes a task of a one-seed
/// run, where a `Vec` a task took about 56 (190 MB over the 120 cells of
/// the 11 M set).
type PerTask = Ragged<(u64, f64)>;

/// The cells of some (benchmark, run) pairs costed in one pass over the
/// rollouts, in file order: each costed rollout is read once, front to
/// back with its steps, and adds its cost at T to every cell it is in (at
/// the full budget: the native cell of the top level and each truncated
/// one). Each (cell, task, seed)'s total is summed in rollout order, as the
/// cell's rollouts alone would be. Returns per cell each task's
/// (attempts, mean cost of one attempt) per seed, tasks in order.
fn cost_cells(
    set: &LogSet,
    agg: &EvalAggregates,
    pairs: &[PairCells],
    multi: &BTreeSet<(Id, Id)>,
    s: &Settings,
) -> Vec<(CellKey, PerTask)> {
    // A slot: a (benchmark, run, task, budget) whose rollouts some cells
    // cost, a pair's tasks in order; its members (the cell's index among
    // the pair's, and T) from `first[slot]` on, each with its (attempts,
    // total cost) — per seed in `seeded` for a run with several (§4.3).
    // In columns: ~24 bytes a (cell, task).
    let mut at: crate::schema::FastMap<(Id, Id, Id, u32), (u32, u32)> = Default::default();
    let mut first: Vec<u32> = Vec::new();
    let mut members: Vec<(u32, u32)> = Vec::new();
    let mut pair_first: Vec<usize> = Vec::with_capacity(pairs.len() + 1);
    let mut budgets: Vec<Option<CellBudget>> = Vec::new();
    for (p, ((b, r), cells)) in pairs.iter().enumerate() {
        pair_first.push(first.len());
        for (&(_, task), info) in agg.tasks.range((*b, 0)..=(*b, Id::MAX)) {
            // A cell's own rollouts: the same membership as Pass, so a
            // point's cost and pass come from one task set.
            budgets.clear();
            budgets.extend(
                cells
                    .iter()
                    .map(|&(level, mode)| cell_budget(*info, level, mode)),
            );
            for (j, cb) in budgets.iter().enumerate() {
                let Some(CellBudget { budget, .. }) = *cb else {
                    continue;
                };
                // Each budget once, at its first cell.
                if budgets[..j].iter().flatten().any(|c| c.budget == budget) {
                    continue;
                }
                at.insert((*b, *r, task, budget), (p as u32, first.len() as u32));
                first.push(members.len() as u32);
                members.extend((j..cells.len()).filter_map(|m| {
                    budgets[m]
                        .filter(|c| c.budget == budget)
                        .map(|c| (m as u32, c.t))
                }));
            }
        }
    }
    pair_first.push(first.len());
    first.push(members.len() as u32);
    // Per pair: several seeds (its sums per seed, in `seeded`).
    let per_seed: Vec<bool> = pairs.iter().map(|(pr, _)| multi.contains(pr)).collect();
    let mut sums: Vec<(u64, f64)> = vec![(0, 0.0); members.len()];
    let mut seeded: BTreeMap<(u32, Option<Id>), (u64, f64)> = BTreeMap::new();
    // A rollout's counted steps, read once for every T it is costed at —
    // only when tokens have a price: at the default `token=0` a token adds
    // exactly 0 (prices are finite), and the steps are not read (11 M
    // rollouts: the cost frontier 2.05 → 1.4–1.5 s).
    let mut tokens: Vec<(u32, u64)> = Vec::new();
    let priced = s.cost.token != 0.0;
    // This thread's (benchmark, run)s, asked first: a short list in cache,
    // where the map of slots is not (a lookup that misses cost as much).
    let mine: Vec<(Id, Id)> = pairs.iter().map(|(pr, _)| *pr).collect();
    // Outcome-only rollouts have no turns to cost (SPEC §4.1).
    for tr in set
        .trajectories
        .iter()
        .filter(|t| !t.is_training() && t.turns_known)
        .filter(|t| mine.contains(&(t.benchmark, t.run)))
    {
        let Some(&(p, slot)) = at.get(&(tr.benchmark, tr.run, tr.task, tr.budget)) else {
            continue;
        };
        let slot = slot as usize;
        tokens.clear();
        if priced {
            tokens.extend(
                set.steps_of(tr)
                    .iter()
                    .filter_map(|st| Some((st.turn, st.output_tokens()?))),
            );
        }
        for m in first[slot]..first[slot + 1] {
            let t = members[m as usize].1;
            let cost = attempt_cost(tr.success_turn(), tr.turns, &tokens, t, s);
            let e = if per_seed[p as usize] {
                seeded.entry((m, tr.seed())).or_default()
            } else {
                &mut sums[m as usize]
            };
            e.0 += 1;
            e.1 += cost;
        }
    }
    drop(at);
    let mean = |&(n, total): &(u64, f64)| (n, total / n as f64);
    let mut out = Vec::new();
    for (p, ((b, r), cells)) in pairs.iter().enumerate() {
        let mut per: Vec<PerTask> = cells.iter().map(|_| Ragged::default()).collect();
        for slot in pair_first[p]..pair_first[p + 1] {
            for m in first[slot]..first[slot + 1] {
                let j = members[m as usize].0 as usize;
                if per_seed[p] {
                    let mut seeds = seeded.range((m, None)..=(m, Some(Id::MAX))).peekable();
                    if seeds.peek().is_some() {
                        per[j].push(seeds.map(|(_, v)| mean(v)));
                    }
                } else if sums[m as usize].0 > 0 {
                    per[j].push(std::iter::once(mean(&sums[m as usize])));
                }
            }
        }
        for (&(level, mode), mut p) in cells.iter().zip(per) {
            p.shrink_to_fit();
            out.push(((*b, *r, level, mode), p));
        }
    }
    out
}

/// Cost of one attempt at T: u turns (the success turn if solved within T,
/// else min(T, turns)) plus the output tokens of its steps up to turn u.
/// `tokens`: its steps' (turn, output tokens), those with a count (a step
/// without one costs nothing).
pub fn attempt_cost(
    success_turn: Option<u32>,
    turns: u32,
    tokens: &[(u32, u64)],
    t: u32,
    s: &Settings,
) -> f64 {
    let u = match success_turn {
        Some(st) if st <= t => st,
        _ => t.min(turns),
    };
    let toks: u64 = tokens.iter().filter(|st| st.0 <= u).map(|st| st.1).sum();
    u as f64 * s.cost.turn + toks as f64 * s.cost.token
}

pub fn analyse(
    set: &LogSet,
    agg: &EvalAggregates,
    pass: &PassReport,
    s: &Settings,
) -> (Vec<CostPoint>, Vec<Winner>) {
    // Per (benchmark, run, level, mode): each task's rollout count and mean
    // cost of one attempt — the same for every K.
    let multi: BTreeSet<(Id, Id)> = agg
        .seeds
        .iter()
        .filter(|(_, s)| s.len() > 1)
        .map(|(k, _)| *k)
        .collect();
    let keys: BTreeSet<CellKey> = pass
        .cells
        .iter()
        .filter(|c| c.tasks > 0)
        .filter_map(|c| {
            Some((
                set.strings.get(&c.benchmark)?,
                set.strings.get(&c.run)?,
                c.level,
                c.mode,
            ))
        })
        .collect();
    // The cells of each (benchmark, run); the pairs dealt out to the
    // threads, each costing its pairs' cells in one pass over the rollouts
    // (each cell read its own rollouts from all over the set: 7.0 s at 11 M
    // rollouts, most of it waiting for their steps).
    let mut pairs: BTreeMap<(Id, Id), Vec<(u32, Mode)>> = BTreeMap::new();
    for (b, r, level, mode) in keys {
        pairs.entry((b, r)).or_default().push((level, mode));
    }
    let threads = rayon::current_num_threads().clamp(1, pairs.len().max(1));
    let mut dealt: Vec<Vec<PairCells>> = (0..threads).map(|_| Vec::new()).collect();
    for (i, pair) in pairs.into_iter().enumerate() {
        dealt[i % threads].push(pair);
    }
    let per_cell: BTreeMap<CellKey, PerTask> = dealt
        .into_par_iter()
        .flat_map_iter(|mine| cost_cells(set, agg, &mine, &multi, s))
        .collect();
    let mut points = Vec::new();
    for cell in pass.cells.iter().filter(|c| c.tasks > 0) {
        let (Some(b), Some(r)) = (set.strings.get(&cell.benchmark), set.strings.get(&cell.run))
        else {
            continue;
        };
        let Some(value) = cell.value else { continue };
        let Some(tasks) = per_cell.get(&(b, r, cell.level, cell.mode)) else {
            continue;
        };
        let costs: Vec<f64> = tasks
            .iter()
            .filter_map(|seeds| {
                let v: Vec<f64> = seeds
                    .iter()
                    .filter(|(n, _)| *n >= cell.k)
                    .map(|(_, mean)| cell.k as f64 * mean)
                    .collect();
                (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
            })
            .collect();
        if costs.is_empty() {
            continue;
        }
        points.push(CostPoint {
            benchmark: cell.benchmark.clone(),
            run: cell.run.clone(),
            k: cell.k,
            level: cell.level,
            mode: cell.mode,
            pass: value,
            cost: costs.iter().sum::<f64>() / costs.len() as f64,
            on_frontier: true,
        });
    }
    for i in 0..points.len() {
        let dom = points.iter().enumerate().any(|(j, q)| {
            j != i
                && q.benchmark == points[i].benchmark
                && q.run == points[i].run
                && dominated(&points[i], q)
        });
        points[i].on_frontier = !dom;
    }
    let winners = winners(&points);
    (points, winners)
}

/// Each run's best point costing at most `ceiling` (the winner ordering),
/// in run-name order: the Cost panel's table.
pub fn best_per_run<'a>(points: &'a [CostPoint], bench: &str, ceiling: f64) -> Vec<&'a CostPoint> {
    let mut best: BTreeMap<&str, &CostPoint> = BTreeMap::new();
    for p in points
        .iter()
        .filter(|p| p.benchmark == bench && le(p.cost, ceiling))
    {
        let e = best.entry(p.run.as_str()).or_insert(p);
        if better(p, e) == Ordering::Less {
            *e = p;
        }
    }
    best.into_values().collect()
}

/// The `cost_winners` row in force at a cost ceiling, if any point is that cheap.
pub fn winner_at<'a>(winners: &'a [Winner], bench: &str, ceiling: f64) -> Option<&'a Winner> {
    winners.iter().filter(|w| w.benchmark == bench).find(|w| {
        le(w.from_cost, ceiling)
            && w.to_cost
                .is_none_or(|to| ceiling < to && !approx_eq(ceiling, to))
    })
}

/// For every cost ceiling, the best point costing at most that much;
/// one row per range of ceilings over which the winner stays the same.
pub fn winners(points: &[CostPoint]) -> Vec<Winner> {
    let benches: BTreeSet<&str> = points.iter().map(|p| p.benchmark.as_str()).collect();
    let mut out = Vec::new();
    for b in benches {
        let mut pts: Vec<&CostPoint> = points.iter().filter(|p| p.benchmark == b).collect();
        pts.sort_by(|x, y| x.cost.total_cmp(&y.cost));
        let mut best: Option<&CostPoint> = None;
        let mut rows: Vec<Winner> = Vec::new();
        let mut i = 0;
        while i < pts.len() {
            // Admit every point at this ceiling (costs within tolerance together).
            let c = pts[i].cost;
            while i < pts.len() && (pts[i].cost <= c || approx_eq(pts[i].cost, c)) {
                if best.is_none_or(|bp| better(pts[i], bp) == Ordering::Less) {
                    best = Some(pts[i]);
                }
                i += 1;
            }
            let w = best.expect("at least one point admitted");
            let same = rows.last().is_some_and(|r| {
                r.run == w.run && r.k == w.k && r.level == w.level && r.mode == w.mode
            });
            if !same {
                if let Some(last) = rows.last_mut() {
                    last.to_cost = Some(c);
                }
                rows.push(Winner {
                    benchmark: b.to_string(),
                    from_cost: c,
                    to_cost: None,
                    run: w.run.clone(),
                    k: w.k,
                    level: w.level,
                    mode: w.mode,
                    pass: w.pass,
                });
            }
        }
        out.extend(rows);
    }
    out
}
