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

#[derive(Debug, Clone)]
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

#[derive(Debug, Clone)]
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

/// Per (benchmark, run, task, budget): the evaluation rollouts (indices into
/// [`LogSet::trajectories`], in order) — in one column, each key's where it
/// starts and how many: a `Vec` a key took ~64 bytes beside its entry
/// (~90 MB over the 1.4 M keys of the 11 M set).
struct Attempts {
    at: crate::schema::FastMap<(Id, Id, Id, u32), (u32, u32)>,
    rollouts: Vec<u32>,
}

impl Attempts {
    fn of(set: &LogSet) -> Attempts {
        // Outcome-only rollouts have no turns to cost (SPEC §4.1).
        let costed = || {
            set.trajectories
                .iter()
                .enumerate()
                .filter(|(_, t)| !t.is_training() && t.turns_known)
        };
        let key = |t: &crate::schema::Trajectory| (t.benchmark, t.run, t.task, t.budget);
        let mut at: crate::schema::FastMap<(Id, Id, Id, u32), (u32, u32)> = Default::default();
        for (_, t) in costed() {
            at.entry(key(t)).or_default().1 += 1;
        }
        // Each key's start, then its rollouts put in place, counted again.
        let mut next = 0u32;
        for v in at.values_mut() {
            let n = v.1;
            *v = (next, 0);
            next += n;
        }
        let mut rollouts = vec![0u32; next as usize];
        for (i, t) in costed() {
            if let Some(v) = at.get_mut(&key(t)) {
                rollouts[(v.0 + v.1) as usize] = i as u32;
                v.1 += 1;
            }
        }
        Attempts { at, rollouts }
    }
    fn get(&self, key: &(Id, Id, Id, u32)) -> Option<&[u32]> {
        let &(start, n) = self.at.get(key)?;
        Some(&self.rollouts[start as usize..(start + n) as usize])
    }
}

/// Cost of one attempt at T: u turns (the success turn if solved within T,
/// else min(T, turns)) plus the output tokens of its steps up to turn u
/// (a step without a count costs nothing).
pub fn attempt_cost(
    success_turn: Option<u32>,
    turns: u32,
    steps: crate::schema::Steps,
    t: u32,
    s: &Settings,
) -> f64 {
    let u = match success_turn {
        Some(st) if st <= t => st,
        _ => t.min(turns),
    };
    let toks: u64 = steps
        .iter()
        .filter(|st| st.turn <= u)
        .filter_map(|st| st.output_tokens())
        .sum();
    u as f64 * s.cost.turn + toks as f64 * s.cost.token
}

pub fn analyse(
    set: &LogSet,
    agg: &EvalAggregates,
    pass: &PassReport,
    s: &Settings,
) -> (Vec<CostPoint>, Vec<Winner>) {
    let att = Attempts::of(set);
    // Per (benchmark, run, level, mode): each task's rollout count and mean
    // cost of one attempt — the same for every K; the cells in parallel.
    // Per task: (attempts, mean cost of one) per seed — one entry for a run
    // with at most one seed (§4.3: a task's cost is the mean over its seeds).
    // One column over the tasks ([`Ragged`]): 24 bytes a task of a
    // one-seed run, where a `Vec` a task took about 56 (190 MB over the
    // 120 cells of the 11 M set).
    type PerTask = Ragged<(u64, f64)>;
    let multi: BTreeSet<(Id, Id)> = agg
        .seeds
        .iter()
        .filter(|(_, s)| s.len() > 1)
        .map(|(k, _)| *k)
        .collect();
    let keys: BTreeSet<(Id, Id, u32, Mode)> = pass
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
    // The cells of each (benchmark, run), the pairs in parallel: a rollout
    // is read for every cell it is in (at the full budget, the native cell
    // of the top level and each truncated one) one cell after another while
    // it is in cache, where each cell read its rollouts alone — 12 M
    // rollouts from all over 1.1 GB, a full-budget one once per level
    // (11 M: 7.0 -> 6.0 s). Each cell's sums are made in the same order as
    // alone.
    let mut pairs: BTreeMap<(Id, Id), Vec<(u32, Mode)>> = BTreeMap::new();
    for (b, r, level, mode) in keys {
        pairs.entry((b, r)).or_default().push((level, mode));
    }
    let per_cell: BTreeMap<(Id, Id, u32, Mode), PerTask> = pairs
        .into_par_iter()
        .flat_map_iter(|((b, r), cells)| {
            let mut out: Vec<PerTask> = cells.iter().map(|_| PerTask::default()).collect();
            let mut by_seed: Vec<BTreeMap<Option<Id>, (u64, f64)>> =
                vec![BTreeMap::new(); cells.len()];
            // The cells' budgets at a task, and those of one budget.
            let mut at: Vec<Option<CellBudget>> = Vec::with_capacity(cells.len());
            let mut members: Vec<usize> = Vec::with_capacity(cells.len());
            for (&(_, task), info) in agg.tasks.range((b, 0)..=(b, Id::MAX)) {
                // A cell's own rollouts: the same membership as Pass, so a
                // point's cost and pass come from one task set.
                at.clear();
                at.extend(
                    cells
                        .iter()
                        .map(|&(level, mode)| cell_budget(*info, level, mode)),
                );
                for (j, cb) in at.iter().enumerate() {
                    let Some(CellBudget { budget, .. }) = *cb else {
                        continue;
                    };
                    // Each budget once, at its first cell.
                    if at[..j].iter().flatten().any(|c| c.budget == budget) {
                        continue;
                    }
                    let Some(a) = att.get(&(b, r, task, budget)) else {
                        continue;
                    };
                    members.clear();
                    members.extend(
                        (j..at.len()).filter(|&m| at[m].is_some_and(|c| c.budget == budget)),
                    );
                    for &i in a {
                        let tr = &set.trajectories[i as usize];
                        let seed = tr.seed().filter(|_| multi.contains(&(b, r)));
                        for &m in &members {
                            let t = at[m].expect("a member has a budget").t;
                            let e = by_seed[m].entry(seed).or_default();
                            e.0 += 1;
                            e.1 +=
                                attempt_cost(tr.success_turn(), tr.turns, set.steps_of(tr), t, s);
                        }
                    }
                    for &m in &members {
                        out[m].push(
                            std::mem::take(&mut by_seed[m])
                                .into_values()
                                .map(|(n, total)| (n, total / n as f64)),
                        );
                    }
                }
            }
            cells
                .into_iter()
                .zip(out)
                .map(move |((level, mode), mut out)| {
                    out.shrink_to_fit();
                    ((b, r, level, mode), out)
                })
        })
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
