//! SPEC §4.6 error recovery in ordinary rollouts: after a failed tool call
//! or an invalid move (a step flagged `error`), how often is the next step
//! clean, and how often does the rollout still succeed — the paper's
//! question asked of the logs every team has, without probe experiments.

use std::collections::BTreeMap;

use super::bootstrap::cluster_bootstrap_each;
use super::stats::{Ci, Cluster, Estimate};
use super::{Pair, Settings};
use crate::schema::frames::TaskInfos;
use crate::schema::{FastMap, Id, LogSet};

#[derive(Debug, Clone, Default)]
pub struct TurnRow {
    pub turn: u32,
    pub error_events: u64,
    pub next_ok: Option<f64>,
    pub rollouts: u64,
    pub recovered: Option<f64>,
}

#[derive(Debug, Clone)]
pub struct RunRecovery {
    pub benchmark: String,
    pub run: String,
    pub rollouts: u64,
    pub rollouts_with_error: u64,
    pub error_events: u64,
    pub next_ok: Option<Estimate>,
    pub recovered: Option<Estimate>,
    pub by_turn: Vec<TurnRow>,
}

#[derive(Debug, Clone)]
pub struct RecoveryDiff {
    pub benchmark: String,
    pub base: String,
    pub rl: String,
    pub tasks: usize,
    pub next_ok: Option<Estimate>,
    pub recovered: Option<Estimate>,
}

/// A task's counts for one run: error events and those followed by a clean
/// step; rollouts with an event and those that succeeded.
#[derive(Debug, Clone, Copy, Default)]
struct Counts {
    events: u64,
    next_ok: u64,
    with_error: u64,
    recovered: u64,
}

impl std::ops::AddAssign for Counts {
    fn add_assign(&mut self, o: Counts) {
        self.events += o.events;
        self.next_ok += o.next_ok;
        self.with_error += o.with_error;
        self.recovered += o.recovered;
    }
}

/// (benchmark, run) → task → counts, rollouts qualifying, and by turn.
type PerRun = BTreeMap<(Id, Id), (BTreeMap<Id, Counts>, u64, BTreeMap<u32, Counts>)>;

fn gather(set: &LogSet, tasks: &TaskInfos) -> PerRun {
    // Per (benchmark, run): tasks hashed while the rollouts are read (a
    // tree's search per rollout was most of this scan at 11 M), put in task
    // order at the end; a chunk of the rollouts a thread, their counts then
    // added (11 M rollouts, the Recovery panel on screen: 0.42 → 0.23 s).
    // The counts are whole numbers: the same in any order.
    fn merge(mut a: Runs, mut b: Runs) -> Runs {
        if a.len() < b.len() {
            std::mem::swap(&mut a, &mut b);
        }
        for (k, (tasks, n, turns)) in b {
            let e = a.entry(k).or_default();
            e.1 += n;
            for (t, c) in tasks {
                *e.0.entry(t).or_default() += c;
            }
            for (t, c) in turns {
                *e.2.entry(t).or_default() += c;
            }
        }
        a
    }
    use rayon::prelude::*;
    let runs = set
        .trajectories
        .par_chunks(1 << 16)
        .map(|chunk| scan(set, tasks, chunk))
        .reduce(Runs::new, merge);
    runs.into_iter()
        .map(|(k, (tasks, n, turns))| (k, (tasks.into_iter().collect(), n, turns)))
        .collect()
}

/// A chunk's counts while they are gathered: per (benchmark, run), its
/// tasks hashed, its rollouts qualifying, its counts by turn.
type Runs = BTreeMap<(Id, Id), (FastMap<Id, Counts>, u64, BTreeMap<u32, Counts>)>;

/// [`gather`]'s counts of a chunk of the rollouts.
fn scan(set: &LogSet, tasks: &TaskInfos, chunk: &[crate::schema::Trajectory]) -> Runs {
    let mut runs = Runs::new();
    // One buffer for every rollout's flags.
    let mut flags: Vec<(bool, u32)> = Vec::new();
    // Full-budget rollouts whose every step says whether it was an error.
    for t in chunk.iter().filter(|t| tasks.at_full_budget(t)) {
        flags.clear();
        let mut all = true;
        for s in set.steps_of(t).iter() {
            match s.error() {
                Some(e) => flags.push((e, s.turn)),
                None => {
                    all = false;
                    break;
                }
            }
        }
        if !all || flags.is_empty() {
            continue;
        }
        let e = runs.entry((t.benchmark, t.run)).or_default();
        e.1 += 1;
        let c = e.0.entry(t.task).or_default();
        let mut first = None;
        for i in 0..flags.len().saturating_sub(1) {
            if flags[i].0 {
                let ok = !flags[i + 1].0;
                c.events += 1;
                c.next_ok += u64::from(ok);
                let turn = flags[i].1;
                first.get_or_insert(turn);
                let bt = e.2.entry(turn).or_default();
                bt.events += 1;
                bt.next_ok += u64::from(ok);
            }
        }
        if let Some(turn) = first {
            c.with_error += 1;
            c.recovered += u64::from(t.success);
            let bt = e.2.entry(turn).or_default();
            bt.with_error += 1;
            bt.recovered += u64::from(t.success);
        }
    }
    runs
}

fn share(k: u64, n: u64) -> Option<f64> {
    (n > 0).then(|| k as f64 / n as f64)
}

/// A pooled share, its interval to come from the cluster bootstrap over
/// tasks of the clusters queued in `boots` (each resample pools the drawn
/// tasks' counts).
fn pooled(
    tasks: &BTreeMap<Id, Counts>,
    f: impl Fn(&Counts) -> (u64, u64),
    boots: &mut Vec<Vec<Cluster>>,
) -> Option<Estimate> {
    let clusters: Vec<Cluster> = tasks
        .values()
        .map(f)
        .filter(|&(_, n)| n > 0)
        .map(|(k, n)| Cluster {
            sum: k as f64,
            weight: n as f64,
        })
        .collect();
    if clusters.is_empty() {
        return None;
    }
    let total: f64 = clusters.iter().map(|c| c.weight).sum();
    let value = clusters.iter().map(|c| c.sum).sum::<f64>() / total;
    boots.push(clusters);
    Some(Estimate {
        value,
        ci: Ci::Undefined,
    })
}

pub fn analyse(
    set: &LogSet,
    tasks: &TaskInfos,
    pairs: &[Pair],
    s: &Settings,
) -> (Vec<RunRecovery>, Vec<RecoveryDiff>) {
    analyse_staged(set, tasks, pairs, s, &mut |_, _, _| {})
}

/// [`analyse`], handing its rows to `values` before their intervals are
/// drawn: the final values and counts, every interval [`Ci::Pending`] (the
/// scan is a fifth of the part; the bootstrap the rest), then, when the
/// panel on screen shows them, with provisional intervals; the last of
/// these calls says so (`values`' third argument).
pub fn analyse_staged(
    set: &LogSet,
    tasks: &TaskInfos,
    pairs: &[Pair],
    s: &Settings,
    values: &mut dyn FnMut(Vec<RunRecovery>, Vec<RecoveryDiff>, bool),
) -> (Vec<RunRecovery>, Vec<RecoveryDiff>) {
    let per = gather(set, tasks);
    // Every interval's clusters, in the order the estimates are made: they
    // are bootstrapped together (sets of as many tasks share each
    // resample's draw; each interval is the one it would be alone).
    let mut boots: Vec<Vec<Cluster>> = Vec::new();
    let mut runs: Vec<RunRecovery> = per
        .iter()
        .filter(|(_, (tasks, _, _))| tasks.values().any(|c| c.events > 0 || c.with_error > 0))
        .map(|(&(b, r), (tasks, n, turns))| RunRecovery {
            benchmark: set.name(b).to_string(),
            run: set.name(r).to_string(),
            rollouts: *n,
            rollouts_with_error: tasks.values().map(|c| c.with_error).sum(),
            error_events: tasks.values().map(|c| c.events).sum(),
            next_ok: pooled(tasks, |c| (c.next_ok, c.events), &mut boots),
            recovered: pooled(tasks, |c| (c.recovered, c.with_error), &mut boots),
            by_turn: turns
                .iter()
                .map(|(&turn, c)| TurnRow {
                    turn,
                    error_events: c.events,
                    next_ok: share(c.next_ok, c.events),
                    rollouts: c.with_error,
                    recovered: share(c.recovered, c.with_error),
                })
                .collect(),
        })
        .collect();
    let mut diffs = Vec::new();
    for p in pairs {
        let (Some(base), Some(rl)) = (
            per.get(&(p.benchmark, p.base)),
            per.get(&(p.benchmark, p.rl)),
        ) else {
            continue;
        };
        // Over the tasks where both runs have error events: per-task shares.
        let paired =
            |f: &dyn Fn(&Counts) -> (u64, u64)| -> (usize, Option<Estimate>, Vec<Cluster>) {
                let d: Vec<f64> =
                    rl.0.iter()
                        .filter_map(|(t, cr)| {
                            let cb = base.0.get(t)?;
                            let (kr, nr) = f(cr);
                            let (kb, nb) = f(cb);
                            Some(share(kr, nr)? - share(kb, nb)?)
                        })
                        .collect();
                if d.is_empty() {
                    return (0, None, Vec::new());
                }
                let value = d.iter().sum::<f64>() / d.len() as f64;
                let clusters: Vec<Cluster> = d.iter().map(|&x| Cluster::one(x)).collect();
                let e = Estimate {
                    value,
                    ci: Ci::Undefined,
                };
                (d.len(), Some(e), clusters)
            };
        let (n1, next_ok, c1) = paired(&|c| (c.next_ok, c.events));
        let (n2, recovered, c2) = paired(&|c| (c.recovered, c.with_error));
        if next_ok.is_none() && recovered.is_none() {
            continue;
        }
        boots.extend([c1, c2].into_iter().filter(|c| !c.is_empty()));
        diffs.push(RecoveryDiff {
            benchmark: set.name(p.benchmark).to_string(),
            base: set.name(p.base).to_string(),
            rl: set.name(p.rl).to_string(),
            tasks: n1.max(n2),
            next_ok,
            recovered,
        });
    }
    // Every estimate in the order its clusters were queued.
    fn slots<'a>(
        runs: &'a mut [RunRecovery],
        diffs: &'a mut [RecoveryDiff],
    ) -> impl Iterator<Item = &'a mut Estimate> {
        runs.iter_mut()
            .flat_map(|r| [&mut r.next_ok, &mut r.recovered])
            .chain(
                diffs
                    .iter_mut()
                    .flat_map(|d| [&mut d.next_ok, &mut d.recovered]),
            )
            .flatten()
    }
    let (mut early, mut early_diffs) = (runs.clone(), diffs.clone());
    for e in slots(&mut early, &mut early_diffs) {
        e.ci = Ci::Pending;
    }
    // The Recovery panel on screen (the workbench): provisional intervals
    // next, from the first 1,000 resamples (11 M rollouts: 0.5 s, the
    // 10,000 3.1 s).
    let provisional = s.boot.provisional();
    match provisional.filter(|_| s.focus.shows(super::Part::NaturalRecovery)) {
        None => values(early, early_diffs, true),
        Some(boot) => {
            values(early.clone(), early_diffs.clone(), false);
            let mut cis = cluster_bootstrap_each(boots.iter(), &boot)
                .into_iter()
                .map(|e| e.provisional().ci);
            for e in slots(&mut early, &mut early_diffs) {
                e.ci = cis.next().expect("an interval per estimate");
            }
            values(early, early_diffs, true);
        }
    }
    // The intervals, in the order their clusters were queued.
    let mut cis = cluster_bootstrap_each(boots, &s.boot)
        .into_iter()
        .map(|e| e.ci);
    for e in slots(&mut runs, &mut diffs) {
        e.ci = cis.next().expect("an interval per estimate");
    }
    (runs, diffs)
}

/// Is RL's recovered-share advantage significant (its CI clear of 0)?
pub fn significant(d: &RecoveryDiff) -> bool {
    d.recovered
        .is_some_and(|e| matches!(e.ci, Ci::Interval(l, h) if l > 0.0 || h < 0.0))
}
