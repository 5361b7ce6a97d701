//! SPEC §2.6: the BudgetMix audit — six rules on training rollouts, and the
//! gain table against the full-budget RL run on evaluation rollouts.

use std::collections::{BTreeMap, BTreeSet};

use statrs::distribution::{ChiSquared, ContinuousCDF};

use super::passkt::{Mode, PassCell, PassReport};
use super::Settings;
use crate::schema::{Id, LogSet, Trajectory};

pub const MAX_EXAMPLES: usize = 20;

pub const RULES: [&str; 6] = [
    "candidate_budgets",
    "uniform_sampling",
    "group_consistency",
    "budget_disclosure",
    "zero_reward_out_of_budget",
    "no_success_past_budget",
];

#[derive(Debug, Clone, Default)]
pub struct Rule {
    pub rule: &'static str,
    pub checked: u64,
    pub violations: u64,
    pub p_value: Option<f64>,
    pub examples: Vec<String>,
    /// Every violating rollout (indices into `LogSet::trajectories`, in
    /// the order found; a rollout may repeat), for the drill-down.
    pub trajectories: Vec<u32>,
}

impl Rule {
    fn new(rule: &'static str) -> Self {
        Rule {
            rule,
            ..Default::default()
        }
    }
    fn check(&mut self, set: &LogSet, ok: bool, t: u32) {
        self.checked += 1;
        if !ok {
            self.violations += 1;
            if self.examples.len() < MAX_EXAMPLES {
                self.examples
                    .push(set.loc_text(set.trajectories[t as usize].loc));
            }
            self.trajectories.push(t);
        }
    }
    pub fn rate(&self) -> Option<f64> {
        (self.checked > 0).then(|| self.violations as f64 / self.checked as f64)
    }
}

#[derive(Debug, Clone)]
pub struct Gain {
    pub benchmark: String,
    pub level: u32,
    pub gain: f64,
    pub vs: String,
    pub modes: BTreeMap<String, &'static str>,
}

#[derive(Debug, Clone)]
pub struct BudgetMixAudit {
    pub run: String,
    pub rules: Vec<Rule>,
    pub gains: Vec<Gain>,
    pub mean_gain: Vec<(u32, f64)>,
    pub notes: Vec<String>,
}

impl Gain {
    /// The Pass@(1,T) cell one side of the gain reads (`run`: the audited
    /// run or `vs`), in the mode the gain took it.
    pub fn cell<'a>(&self, pass: &'a PassReport, run: &str) -> Option<&'a PassCell> {
        let mode = Mode::BOTH
            .into_iter()
            .find(|m| self.modes.get(run).is_some_and(|n| *n == m.name()))?;
        pass.cell(&self.benchmark, run, 1, self.level, Some(mode))
    }
}

impl BudgetMixAudit {
    /// The n of `mean_gain` at a level: the benchmarks whose gains it
    /// averages.
    pub fn benchmarks_at(&self, level: u32) -> usize {
        self.gains.iter().filter(|g| g.level == level).count()
    }
}

/// ceil(B·i/10) in integers.
pub fn candidate(b: u32, i: u32) -> u32 {
    (b as u64 * i as u64).div_ceil(10) as u32
}

fn candidates(b: u32) -> BTreeSet<u32> {
    (1..=10).map(|i| candidate(b, i)).collect()
}

/// Pearson's chi-square test that group budgets are drawn uniformly from
/// the ten candidate levels: (statistic, degrees of freedom, p-value).
pub fn uniform_test(draws: &[(u32, u32)]) -> (f64, u64, Option<f64>) {
    let mut n_b: BTreeMap<u32, u64> = BTreeMap::new();
    let mut observed: BTreeMap<(u32, u32), u64> = BTreeMap::new();
    for &(b, budget) in draws {
        *n_b.entry(b).or_default() += 1;
        *observed.entry((b, budget)).or_default() += 1;
    }
    let mut stat = 0.0;
    let mut cells = 0u64;
    for (&b, &n) in &n_b {
        for budget in candidates(b) {
            let multiplicity = (1..=10).filter(|&i| candidate(b, i) == budget).count() as f64;
            let expected = n as f64 * multiplicity / 10.0;
            let o = *observed.get(&(b, budget)).unwrap_or(&0) as f64;
            stat += (o - expected).powi(2) / expected;
            cells += 1;
        }
    }
    let df = cells - n_b.len() as u64;
    let p = (df > 0)
        .then(|| ChiSquared::new(df as f64).ok().map(|d| d.sf(stat)))
        .flatten();
    (stat, df, p)
}

fn full(t: &Trajectory) -> u32 {
    t.max_budget().unwrap_or(t.budget)
}

/// Why a run's training rollouts are audited, if they are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Audited {
    No,
    /// It declares `method: budgetmix`.
    ByMethod,
    /// `--audit RUN` names it.
    ByName,
}

/// A run with training rollouts: what the BudgetMix audit can read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrainingRun {
    pub run: String,
    pub method: Option<String>,
    /// Its training rollouts (trajectories with `train_step`).
    pub rollouts: u64,
    pub audited: Audited,
}

/// Every run with training rollouts, in [`super::natural_order`], with how many and
/// whether (and why) [`audited_runs`] audits it: what `--audit` may name.
pub fn training_runs(set: &LogSet, s: &Settings) -> Vec<TrainingRun> {
    let mut counts: BTreeMap<Id, u64> = BTreeMap::new();
    for t in set.trajectories.iter().filter(|t| t.is_training()) {
        *counts.entry(t.run).or_default() += 1;
    }
    let audited = audited_runs(set, s);
    let mut out: Vec<TrainingRun> = counts
        .into_iter()
        .map(|(run, rollouts)| {
            let method = set.method_of(run).map(str::to_string);
            TrainingRun {
                run: set.name(run).to_string(),
                audited: match () {
                    _ if method.as_deref() == Some("budgetmix") => Audited::ByMethod,
                    _ if audited.contains(&run) => Audited::ByName,
                    _ => Audited::No,
                },
                method,
                rollouts,
            }
        })
        .collect();
    out.sort_by(|a, b| super::natural_order(&a.run, &b.run));
    out
}

/// Runs audited: method `budgetmix`, plus `--audit RUN`.
pub fn audited_runs(set: &LogSet, s: &Settings) -> Vec<Id> {
    let mut runs: BTreeSet<Id> = set
        .run_methods
        .iter()
        .filter(|(_, &m)| set.name(m) == "budgetmix")
        .map(|(&r, _)| r)
        .collect();
    for name in &s.audit {
        if let Some(id) = set.strings.get(name) {
            runs.insert(id);
        }
    }
    let mut v: Vec<Id> = runs.into_iter().collect();
    v.sort_by_key(|&r| set.name(r).to_string());
    v
}

pub fn rules(set: &LogSet, run: Id) -> Vec<Rule> {
    // (index into set.trajectories, rollout), in file order.
    let rollouts: Vec<(u32, &Trajectory)> = set
        .trajectories
        .iter()
        .enumerate()
        .filter(|(_, t)| t.run == run && t.is_training())
        .map(|(i, t)| (i as u32, t))
        .collect();
    let mut r: Vec<Rule> = RULES.iter().map(|n| Rule::new(n)).collect();
    // Groups in file order of their first rollout.
    type Group<'a> = Vec<(u32, &'a Trajectory)>;
    let mut groups: BTreeMap<(i64, Option<Id>, usize), Group> = BTreeMap::new();
    for (i, &(ix, t)) in rollouts.iter().enumerate() {
        let key = match t.group() {
            Some(g) => (t.train_step().unwrap_or(0), Some(g), 0),
            None => (t.train_step().unwrap_or(0), None, i),
        };
        groups.entry(key).or_default().push((ix, t));
    }
    for &(i, t) in &rollouts {
        r[0].check(set, candidates(full(t)).contains(&t.budget), i);
    }
    let mut firsts: Vec<&Trajectory> = groups.values().map(|g| g[0].1).collect();
    firsts.sort_by_key(|t| t.loc);
    let draws: Vec<(u32, u32)> = firsts
        .iter()
        .filter(|t| candidates(full(t)).contains(&t.budget))
        .map(|t| (full(t), t.budget))
        .collect();
    let (_, _, p) = uniform_test(&draws);
    r[1].checked = groups.len() as u64;
    r[1].p_value = p;
    if p.is_some_and(|p| p < 0.01) {
        r[1].violations = 1;
    }
    let mut ordered: Vec<&Group> = groups.values().collect();
    ordered.sort_by_key(|g| g[0].1.loc);
    for g in ordered {
        let odd = g.iter().find(|(_, t)| t.budget != g[0].1.budget);
        r[2].check(set, odd.is_none(), odd.map_or(g[0].0, |x| x.0));
    }
    for &(i, t) in &rollouts {
        for st in set.steps_of(t) {
            let (total, left) = st.budget();
            let remaining = t.budget as i64 - st.turn as i64 + 1;
            let ok = total == Some(t.budget as i64) && left == Some(remaining);
            r[3].check(set, ok, i);
        }
        if !t.success && t.turns >= t.budget {
            r[4].check(set, t.reward() == Some(0.0), i);
        }
        if let Some(s) = t.success_turn() {
            r[5].check(set, s <= t.budget, i);
        }
    }
    r
}

/// A run's Pass@(1,T) in its preferred mode (native where it has a value).
fn preferred(pass: &PassReport, bench: &str, run: &str, level: u32) -> Option<(f64, Mode)> {
    let with_value = pass.cells.iter().filter(|c| {
        c.benchmark == bench && c.run == run && c.k == 1 && c.level == level && c.value.is_some()
    });
    super::passkt::preferred(with_value, |c| c.mode).and_then(|c| c.value.map(|v| (v, c.mode)))
}

fn gains(
    set: &LogSet,
    run: Id,
    pass: &PassReport,
    s: &Settings,
    notes: &mut Vec<String>,
) -> Vec<Gain> {
    let name = set.name(run);
    let benches: BTreeSet<&str> = pass
        .cells
        .iter()
        .filter(|c| c.run == name)
        .map(|c| c.benchmark.as_str())
        .collect();
    if benches.is_empty() {
        // rLLM and --map's `run@step` name each checkpoint's evaluation a
        // run of its own.
        let at = format!("{name}@");
        let mut checkpoints: Vec<&str> = pass
            .cells
            .iter()
            .filter(|c| c.run.starts_with(&at))
            .map(|c| c.run.as_str())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        checkpoints.sort_by(|x, y| super::natural_order(x, y));
        let theirs = match checkpoints.is_empty() {
            true => String::new(),
            false => format!(
                "; its checkpoints' are runs of their own: {}",
                checkpoints.join(", ")
            ),
        };
        notes.push(format!(
            "no gain table for {name}: it has no evaluation rollouts (a gain is its Pass@(1,T) less the full-budget RL run's){theirs}"
        ));
    }
    let mut out = Vec::new();
    for bench in benches {
        let vs = match &s.budgetmix_vs {
            Some(v) if v == name => {
                notes.push(format!(
                    "{bench}: no gain table for {name}: --budgetmix-vs names {name} itself"
                ));
                continue;
            }
            Some(v)
                if !pass
                    .cells
                    .iter()
                    .any(|c| c.benchmark == bench && c.run == *v) =>
            {
                notes.push(format!(
                    "{bench}: no gain table for {name}: --budgetmix-vs {v} has no evaluation rollouts on {bench}"
                ));
                continue;
            }
            Some(v) => v.clone(),
            None => {
                let others: BTreeSet<&str> = pass
                    .cells
                    .iter()
                    .filter(|c| c.benchmark == bench)
                    .map(|c| c.run.as_str())
                    // Not the audited run itself (one named by --audit
                    // may declare any method).
                    .filter(|r| *r != name)
                    .filter(|r| {
                        let m = set.strings.get(r).and_then(|id| set.method_of(id));
                        !matches!(m, Some("base") | Some("budgetmix"))
                    })
                    .collect();
                if others.len() != 1 {
                    notes.push(format!(
                        "{bench}: no gain table for {name}: {} (name one with --budgetmix-vs RUN)",
                        if others.is_empty() {
                            "no full-budget RL run (method neither base nor budgetmix)".to_string()
                        } else {
                            format!(
                                "several candidate RL runs: {}",
                                others.into_iter().collect::<Vec<_>>().join(", ")
                            )
                        }
                    ));
                    continue;
                }
                others.into_iter().next().unwrap_or_default().to_string()
            }
        };
        for &level in &s.levels {
            if let (Some((a, ma)), Some((b, mb))) = (
                preferred(pass, bench, name, level),
                preferred(pass, bench, &vs, level),
            ) {
                let mut modes = BTreeMap::new();
                modes.insert(name.to_string(), ma.name());
                modes.insert(vs.clone(), mb.name());
                out.push(Gain {
                    benchmark: bench.to_string(),
                    level,
                    gain: a - b,
                    vs: vs.clone(),
                    modes,
                });
            }
        }
    }
    out
}

/// Mean of gains over benchmarks, per level.
pub fn mean_gain(gains: &[Gain]) -> Vec<(u32, f64)> {
    let mut by: BTreeMap<u32, Vec<f64>> = BTreeMap::new();
    for g in gains {
        by.entry(g.level).or_default().push(g.gain);
    }
    by.into_iter()
        .map(|(l, v)| (l, v.iter().sum::<f64>() / v.len() as f64))
        .collect()
}

pub fn analyse(set: &LogSet, pass: &PassReport, s: &Settings) -> Vec<BudgetMixAudit> {
    with_gains(set, pass, s, rules_of(set, s))
}

/// Each audited run's rules (§2.6), its gains still to come: the rules
/// read the training rollouts alone, the gains Pass@(K,T)'s values.
pub fn rules_of(set: &LogSet, s: &Settings) -> Vec<BudgetMixAudit> {
    audited_runs(set, s)
        .into_iter()
        .map(|run| BudgetMixAudit {
            run: set.name(run).to_string(),
            rules: rules(set, run),
            gains: Vec::new(),
            mean_gain: Vec::new(),
            notes: Vec::new(),
        })
        .collect()
}

/// [`rules_of`]'s audits with their gains against Pass@(K,T).
pub fn with_gains(
    set: &LogSet,
    pass: &PassReport,
    s: &Settings,
    mut audits: Vec<BudgetMixAudit>,
) -> Vec<BudgetMixAudit> {
    for b in &mut audits {
        let Some(run) = set.strings.get(&b.run) else {
            continue;
        };
        b.notes.clear();
        let none = || {
            !set.trajectories
                .iter()
                .any(|t| t.run == run && t.is_training())
        };
        if b.rules.iter().all(|r| r.checked == 0) && none() {
            b.notes.push(format!(
                "{} has no training rollouts (trajectories with train_step): its rules check nothing",
                b.run
            ));
        }
        b.gains = gains(set, run, pass, s, &mut b.notes);
        b.mean_gain = mean_gain(&b.gains);
    }
    audits
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candidates_in_integers() {
        assert_eq!(candidates(10), (1..=10).collect());
        // B = 4: ceil(0.4), ceil(0.8) = 1; 2 (1.2→2, 1.6→2, 2.0); 3 (2.4, 2.8); 4 (3.2, 3.6, 4.0).
        assert_eq!(candidates(4), [1, 2, 3, 4].into_iter().collect());
        assert_eq!((1..=10).filter(|&i| candidate(4, i) == 2).count(), 3);
    }

    #[test]
    fn paper_gain_arithmetic() {
        // BudgetMix at 25%: per-benchmark gains 6.6 and 8.35 average to 7.475 (reported as 7.5).
        let g = |b: &str, x: f64| Gain {
            benchmark: b.into(),
            level: 25,
            gain: x,
            vs: "grpo".into(),
            modes: BTreeMap::new(),
        };
        let m = mean_gain(&[g("a", 6.6), g("b", 8.35)]);
        assert_eq!(m.len(), 1);
        assert!((m[0].1 - 7.475).abs() < 1e-12);
        assert_eq!(format!("{:.1}", m[0].1), "7.5");
    }

    #[test]
    fn chi_square_by_hand() {
        // B = 10, 20 draws: 11 at budget 1, one at each of 2..10.
        // Expected 2 per cell: (11−2)²/2 + 9·(1−2)²/2 = 40.5 + 4.5 = 45, df 9.
        let mut d = vec![(10, 1); 11];
        d.extend((2..=10).map(|b| (10, b)));
        let (stat, df, p) = uniform_test(&d);
        assert!((stat - 45.0).abs() < 1e-12);
        assert_eq!(df, 9);
        // scipy.stats.chi2.sf(45, 9) = 9.23e-07
        assert!((p.unwrap() - 9.23e-7).abs() < 1e-8, "{p:?}");
    }
}
