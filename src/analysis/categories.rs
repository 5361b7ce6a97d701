//! SPEC §4.3 categories: Pass@(K,T) and Δ restricted to each task category
//! (each with its own cluster bootstrap), and the contrast Δ_a − Δ_b between
//! categories by a stratified bootstrap (each resample draws tasks within
//! each category separately), with Holm over a pair's contrasts.

use std::collections::BTreeMap;

use rand::RngExt;
use rayon::prelude::*;

use super::bootstrap::{cluster_bootstrap, resample_rng};
use super::multiplicity::{holm, holm_floor, p_floor, p_value, resamples_to_reach};
use super::passkt::{paired_values, pass_values, seed_aware, Mode, PassInput};
use super::stats::{interval_from, Bootstrap, Ci, Cluster, Estimate};
use super::{Pair, Settings};
use crate::schema::Id;

#[derive(Debug, Clone)]
pub struct CategoryPass {
    pub benchmark: String,
    pub category: String,
    pub run: String,
    pub k: u64,
    pub level: u32,
    pub mode: Mode,
    pub value: f64,
    pub ci: Ci,
    pub tasks: usize,
}

#[derive(Debug, Clone)]
pub struct CategoryAdvantage {
    pub benchmark: String,
    pub category: String,
    pub base: String,
    pub rl: String,
    pub k: u64,
    pub level: u32,
    pub mode: Mode,
    pub tasks: usize,
    pub delta: f64,
    pub ci: Ci,
    pub base_pass: f64,
    pub rl_pass: f64,
}

#[derive(Debug, Clone)]
pub struct Contrast {
    pub benchmark: String,
    pub base: String,
    pub rl: String,
    pub k: u64,
    pub level: u32,
    pub mode: Mode,
    pub a: String,
    pub b: String,
    pub tasks_a: usize,
    pub tasks_b: usize,
    pub diff: f64,
    pub ci: Ci,
    pub p_value: Option<f64>,
    /// The smallest `p_value` its B replicates allow, 2/(B+1) (not in
    /// report.json: it marks a p at it `≤`).
    pub p_value_floor: Option<f64>,
    pub p_adjusted: Option<f64>,
    /// The smallest `p_adjusted` the resamples allow this contrast: Holm's
    /// m × 2/(B+1) over the m contrasts of its (benchmark, pair). One at it
    /// saw no resample cross 0; more resamples would tell how far below.
    pub p_adjusted_floor: Option<f64>,
}

/// The contrasts of one (benchmark, pair), Holm's family.
#[derive(Debug, Clone, PartialEq)]
pub struct ContrastFamily {
    pub benchmark: String,
    pub base: String,
    pub rl: String,
    /// Contrasts with a p-value (Holm's m).
    pub contrasts: usize,
    /// The smallest `p_adjusted` any of them can have.
    pub p_floor: f64,
    /// Resamples that would let one reach 0.05 (B ≥ 40·m).
    pub resamples_needed: usize,
}

#[derive(Debug, Clone, Default)]
pub struct CategoryReport {
    pub pass: Vec<CategoryPass>,
    pub advantage: Vec<CategoryAdvantage>,
    pub contrast: Vec<Contrast>,
    /// Each (benchmark, pair)'s family of contrasts, in the order of their
    /// rows.
    pub families: Vec<ContrastFamily>,
}

impl CategoryReport {
    /// A pair's Δ in one category's cell; `mode: None` prefers native.
    pub fn advantage_at(
        &self,
        pair: (&str, &str, &str),
        category: &str,
        k: u64,
        level: u32,
        mode: Option<Mode>,
    ) -> Option<&CategoryAdvantage> {
        let (bench, base, rl) = pair;
        let rows = self.advantage.iter().filter(|a| {
            a.benchmark == bench
                && a.category == category
                && a.base == base
                && a.rl == rl
                && a.k == k
                && a.level == level
                && mode.is_none_or(|m| a.mode == m)
        });
        super::passkt::preferred(rows, |a| a.mode)
    }

    /// A run's Pass@(k, level) in one category's cell; `mode: None` prefers
    /// native.
    pub fn pass_at(
        &self,
        bench: &str,
        category: &str,
        run: &str,
        k: u64,
        level: u32,
        mode: Option<Mode>,
    ) -> Option<&CategoryPass> {
        let rows = self.pass.iter().filter(|c| {
            c.benchmark == bench
                && c.category == category
                && c.run == run
                && c.k == k
                && c.level == level
                && mode.is_none_or(|m| c.mode == m)
        });
        super::passkt::preferred(rows, |c| c.mode)
    }

    /// The categories of a benchmark, in name order.
    pub fn categories(&self, bench: &str) -> Vec<&str> {
        let s: std::collections::BTreeSet<&str> = self
            .pass
            .iter()
            .filter(|c| c.benchmark == bench)
            .map(|c| c.category.as_str())
            .collect();
        s.into_iter().collect()
    }
}

/// (benchmark, task) → category, from the trajectories that carry one.
fn task_categories(input: &PassInput) -> BTreeMap<(Id, Id), Id> {
    input
        .set
        .trajectories
        .iter()
        .filter(|t| !t.is_training())
        .filter_map(|t| Some(((t.benchmark, t.task), t.category()?)))
        .collect()
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

/// Replicates of a category's mean by resampling its own tasks; category s
/// seeded from (seed, b, s).
fn stratum(values: &[f64], s: usize, cfg: &super::stats::Bootstrap) -> Vec<f64> {
    let n = values.len();
    (0..cfg.resamples)
        .into_par_iter()
        .map(|b| {
            let mut rng = resample_rng(
                cfg.seed ^ (s as u64 + 1).wrapping_mul(0xD6E8_FEB8_6659_FD93),
                b,
            );
            let sum: f64 = (0..n).map(|_| values[rng.random_range(0..n)]).sum();
            sum / n as f64
        })
        .collect()
}

pub fn analyse(input: &PassInput, pairs: &[Pair], ks: &[u64], s: &Settings) -> CategoryReport {
    let cats = task_categories(input);
    let mut out = CategoryReport::default();
    if cats.is_empty() {
        return out;
    }
    let name = |id: Id| input.set.name(id).to_string();
    let boot = &s.boot;
    for b in input.benchmarks() {
        let mut names: Vec<Id> = cats
            .iter()
            .filter(|(k, _)| k.0 == b)
            .map(|(_, &c)| c)
            .collect();
        names.sort_by_key(|&c| name(c));
        names.dedup();
        if names.is_empty() {
            continue;
        }
        let of = |t: Id| cats.get(&(b, t)).copied();
        // Pass per category, per run.
        for r in input.runs(b) {
            for &l in &s.levels {
                for m in Mode::BOTH {
                    let counts = input.counts(b, r, l, m);
                    for &k in ks {
                        let (vals, _) = pass_values(&counts, k);
                        for &c in &names {
                            let v: Vec<f64> = vals
                                .iter()
                                .filter(|x| of(x.0) == Some(c))
                                .map(|x| x.1)
                                .collect();
                            if v.is_empty() {
                                continue;
                            }
                            // §4.3: seeds, then the category's tasks.
                            let tasks = || {
                                vals.iter()
                                    .filter(|x| of(x.0) == Some(c))
                                    .map(|x| x.0)
                                    .collect()
                            };
                            let e =
                                seed_aware(input, b, vec![(r, &counts)], tasks, k, boot, || {
                                    one_stage(&v, boot)
                                });
                            out.pass.push(CategoryPass {
                                benchmark: name(b),
                                category: name(c),
                                run: name(r),
                                k,
                                level: l,
                                mode: m,
                                value: mean(&v),
                                ci: e.ci,
                                tasks: v.len(),
                            });
                        }
                    }
                }
            }
        }
        // Δ per category, and the contrasts of each pair's cells.
        for p in pairs.iter().filter(|p| p.benchmark == b) {
            let first = out.contrast.len();
            // The smallest p-value any contrast of the family can have.
            let mut p_min: Option<f64> = None;
            for &l in &s.levels {
                for m in Mode::BOTH {
                    let base = input.counts(b, p.base, l, m);
                    let rl = input.counts(b, p.rl, l, m);
                    for &k in ks {
                        let v = paired_values(&rl, &base, k);
                        // Each category's mean Pass of both runs (for the grid).
                        let means = |c: Id| {
                            let sel: Vec<_> = v.iter().filter(|x| of(x.0) == Some(c)).collect();
                            let n = sel.len().max(1) as f64;
                            (
                                sel.iter().map(|x| x.2).sum::<f64>() / n,
                                sel.iter().map(|x| x.1).sum::<f64>() / n,
                            )
                        };
                        // (category index, its tasks' differences)
                        let per: Vec<(usize, Vec<f64>)> = names
                            .iter()
                            .enumerate()
                            .map(|(i, &c)| {
                                (
                                    i,
                                    v.iter()
                                        .filter(|x| of(x.0) == Some(c))
                                        .map(|x| x.1 - x.2)
                                        .collect::<Vec<f64>>(),
                                )
                            })
                            .filter(|(_, d)| !d.is_empty())
                            .collect();
                        let mut reps: Vec<Vec<f64>> = Vec::new();
                        for (i, d) in &per {
                            let tasks = || {
                                v.iter()
                                    .filter(|x| of(x.0) == Some(names[*i]))
                                    .map(|x| x.0)
                                    .collect()
                            };
                            let sides = vec![(p.rl, &rl), (p.base, &base)];
                            let e =
                                seed_aware(input, b, sides, tasks, k, boot, || one_stage(d, boot));
                            let (base_pass, rl_pass) = means(names[*i]);
                            out.advantage.push(CategoryAdvantage {
                                benchmark: name(b),
                                category: name(names[*i]),
                                base: name(p.base),
                                rl: name(p.rl),
                                k,
                                level: l,
                                mode: m,
                                tasks: d.len(),
                                delta: mean(d),
                                ci: e.ci,
                                base_pass,
                                rl_pass,
                            });
                            reps.push(if per.len() > 1 {
                                stratum(d, *i, boot)
                            } else {
                                Vec::new()
                            });
                        }
                        for x in 0..per.len() {
                            for y in x + 1..per.len() {
                                let (da, db) = (&per[x].1, &per[y].1);
                                let diff = mean(da) - mean(db);
                                let mut r: Vec<f64> =
                                    reps[x].iter().zip(&reps[y]).map(|(a, b)| a - b).collect();
                                let zeroed: Vec<f64> = r
                                    .iter()
                                    .map(|&x| if x.abs() <= 1e-12 { 0.0 } else { x })
                                    .collect();
                                let p_value = (!r.is_empty()).then(|| p_value(&zeroed));
                                let p_value_floor = p_value.map(|_| p_floor(r.len()));
                                if let Some(f) = p_value_floor {
                                    p_min = Some(p_min.map_or(f, |m: f64| m.min(f)));
                                }
                                let ci = interval_from(&mut r, diff, boot, || {
                                    // Jackknife: leave one task of either category out.
                                    let (sa, sb) = (da.iter().sum::<f64>(), db.iter().sum::<f64>());
                                    let (na, nb) = (da.len() as f64, db.len() as f64);
                                    da.iter()
                                        .map(|v| (sa - v) / (na - 1.0) - sb / nb)
                                        .chain(db.iter().map(|v| sa / na - (sb - v) / (nb - 1.0)))
                                        .filter(|x| x.is_finite())
                                        .collect()
                                });
                                out.contrast.push(Contrast {
                                    benchmark: name(b),
                                    base: name(p.base),
                                    rl: name(p.rl),
                                    k,
                                    level: l,
                                    mode: m,
                                    a: name(names[per[x].0]),
                                    b: name(names[per[y].0]),
                                    tasks_a: da.len(),
                                    tasks_b: db.len(),
                                    diff,
                                    ci,
                                    p_value,
                                    p_value_floor,
                                    p_adjusted: None,
                                    p_adjusted_floor: None,
                                });
                            }
                        }
                    }
                }
            }
            // Holm over every contrast of this (benchmark, pair).
            let idx: Vec<usize> = (first..out.contrast.len())
                .filter(|&i| out.contrast[i].p_value.is_some())
                .collect();
            let ps: Vec<f64> = idx
                .iter()
                .filter_map(|&i| out.contrast[i].p_value)
                .collect();
            for (&i, a) in idx.iter().zip(holm(&ps)) {
                out.contrast[i].p_adjusted = Some(a);
            }
            // Holm multiplies the smallest p by m: no adjusted p is below m
            // times the smallest p the resamples allow.
            let m = idx.len();
            let floor = p_min.map(|p_min| holm_floor(m, p_min));
            for &i in &idx {
                out.contrast[i].p_adjusted_floor = floor;
            }
            if let Some(p_floor) = floor {
                let c = &out.contrast[idx[0]];
                out.families.push(ContrastFamily {
                    benchmark: c.benchmark.clone(),
                    base: c.base.clone(),
                    rl: c.rl.clone(),
                    contrasts: m,
                    p_floor,
                    resamples_needed: resamples_to_reach(m, 0.05),
                });
            }
        }
    }
    out
}

/// The one-stage cluster bootstrap of per-task values.
fn one_stage(values: &[f64], boot: &Bootstrap) -> Estimate {
    let clusters: Vec<Cluster> = values.iter().map(|&x| Cluster::one(x)).collect();
    cluster_bootstrap(&clusters, boot)
}
