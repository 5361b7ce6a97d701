//! The analyses of SPEC §2. Pure: a loaded [`LogSet`] in, result structs out.
//! Headless reports and the TUI both read the same [`Audit`].

pub mod bootstrap;
pub mod budgetmix;
pub mod categories;
pub mod cost;
pub mod dynamics;
pub mod failures;
pub mod frozenlake;
pub mod grep;
pub mod likelihood;
pub mod matched;
pub mod multiplicity;
pub mod natural;
pub mod passkt;
pub mod probes;
pub mod recovery;
pub mod seeds;
pub mod stats;

use std::collections::{BTreeMap, BTreeSet};

use crate::error::{Error, Result};
use crate::schema::frames::{eval_aggregates, EvalAggregates};
use crate::schema::{Id, LogSet};
use stats::Bootstrap;

/// Cost model of SPEC §2.7 (`--cost turn=A,token=B`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CostModel {
    pub turn: f64,
    pub token: f64,
}

impl Default for CostModel {
    fn default() -> Self {
        CostModel {
            turn: 1.0,
            token: 0.0,
        }
    }
}

/// Every setting an analysis reads (SPEC §3 options).
#[derive(Debug, Clone)]
pub struct Settings {
    pub levels: Vec<u32>,
    /// `--k`; `None` means the default grid {1, 2, 4, …}.
    pub ks: Option<Vec<u64>>,
    /// `--compare BASE:RL`, repeatable.
    pub compare: Vec<(String, String)>,
    pub audit: Vec<String>,
    pub budgetmix_vs: Option<String>,
    pub balance: bool,
    pub gamma: f64,
    pub boot: Bootstrap,
    pub cost: CostModel,
    pub token_budgets: Option<Vec<u64>>,
    /// `--adjust`: the family-wise adjustment of §4.2.
    pub adjust: multiplicity::Adjust,
    /// `--min-effect` as a fraction (default 0.05): the equivalence margin.
    pub min_effect: f64,
    /// `--grep`: patterns over actions (a behaviour split).
    pub grep: Vec<String>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            levels: vec![25, 50, 75, 100],
            ks: None,
            compare: Vec::new(),
            audit: Vec::new(),
            budgetmix_vs: None,
            balance: false,
            gamma: 0.95,
            boot: Bootstrap::default(),
            cost: CostModel::default(),
            token_budgets: None,
            adjust: multiplicity::Adjust::MaxT,
            min_effect: 0.05,
            grep: Vec::new(),
        }
    }
}

/// A (base, RL) comparison on one benchmark.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Pair {
    pub benchmark: Id,
    pub base: Id,
    pub rl: Id,
}

/// Runs seen on each benchmark: evaluation rollouts and probe candidates.
pub fn runs_by_benchmark(set: &LogSet) -> BTreeMap<Id, BTreeSet<Id>> {
    let mut m: BTreeMap<Id, BTreeSet<Id>> = BTreeMap::new();
    for t in set.trajectories.iter().filter(|t| !t.is_training()) {
        m.entry(t.benchmark).or_default().insert(t.run);
    }
    for a in &set.aggregates {
        m.entry(a.benchmark).or_default().insert(a.run);
    }
    for p in &set.probes {
        let e = m.entry(p.benchmark).or_default();
        for c in set.candidates_of(p) {
            e.insert(c.run);
        }
    }
    m
}

/// The pairs of SPEC §3: `--compare`, else per benchmark the `base` run
/// against every other run. Notes say where no pair could be formed.
pub fn resolve_pairs(set: &LogSet, s: &Settings) -> Result<(Vec<Pair>, Vec<String>)> {
    let by_bench = runs_by_benchmark(set);
    let mut pairs = Vec::new();
    let mut notes = Vec::new();
    if !s.compare.is_empty() {
        for (base, rl) in &s.compare {
            let (Some(b), Some(r)) = (set.strings.get(base), set.strings.get(rl)) else {
                return Err(Error::Usage(format!(
                    "--compare {base}:{rl}: no such run in the logs (runs: {})",
                    all_runs(set, &by_bench).join(", ")
                )));
            };
            let mut found = false;
            for (&bench, runs) in &by_bench {
                if runs.contains(&b) && runs.contains(&r) {
                    pairs.push(Pair {
                        benchmark: bench,
                        base: b,
                        rl: r,
                    });
                    found = true;
                }
            }
            if !found {
                notes.push(format!("--compare {base}:{rl}: no benchmark has both runs"));
            }
        }
    } else {
        for (&bench, runs) in &by_bench {
            let is_base = |r: &Id| set.method_of(*r) == Some("base");
            let bases: Vec<Id> = runs.iter().copied().filter(is_base).collect();
            if bases.is_empty() {
                notes.push(format!(
                    "{}: no run says method: base, so no pair is compared (use --compare BASE:RL)",
                    set.name(bench)
                ));
            }
            for &b in &bases {
                for &r in runs.iter().filter(|r| !is_base(r)) {
                    pairs.push(Pair {
                        benchmark: bench,
                        base: b,
                        rl: r,
                    });
                }
            }
        }
    }
    pairs.sort_by(|a, b| {
        (set.name(a.benchmark), set.name(a.base), set.name(a.rl)).cmp(&(
            set.name(b.benchmark),
            set.name(b.base),
            set.name(b.rl),
        ))
    });
    pairs.dedup();
    Ok((pairs, notes))
}

fn all_runs(set: &LogSet, by_bench: &BTreeMap<Id, BTreeSet<Id>>) -> Vec<String> {
    let all: BTreeSet<&str> = by_bench.values().flatten().map(|&r| set.name(r)).collect();
    all.into_iter().map(str::to_string).collect()
}

/// A pair by name, as reports show it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PairNames {
    pub benchmark: String,
    pub base: String,
    pub rl: String,
}

/// The whole audit: every analysis on one log set with one set of settings.
pub struct Audit {
    pub settings: Settings,
    pub pairs: Vec<PairNames>,
    pub pass: passkt::PassReport,
    pub matched: Vec<matched::Matched>,
    pub recovery: Vec<recovery::Recovery>,
    pub likelihood: Vec<likelihood::Likelihood>,
    pub dynamics: Vec<dynamics::MetricTrend>,
    pub divergence: Vec<dynamics::Divergence>,
    pub cost_frontier: Vec<cost::CostPoint>,
    pub cost_winners: Vec<cost::Winner>,
    pub budgetmix: Vec<budgetmix::BudgetMixAudit>,
    /// §4.3: per-category Pass and Δ, and the contrasts between categories.
    pub categories: categories::CategoryReport,
    /// §4.4: why each cell's rollouts failed.
    pub failures: Vec<failures::FailureRow>,
    /// §4.5: the LLR by turn, per pair and producing run.
    pub llr_by_turn: Vec<likelihood::LlrTurn>,
    /// §4.6: error recovery in ordinary rollouts, per run and per pair.
    pub natural_recovery: Vec<natural::RunRecovery>,
    pub natural_recovery_diff: Vec<natural::RecoveryDiff>,
    /// `--grep`: matching rollouts and their success, per pattern.
    pub grep: Vec<grep::GrepRow>,
    pub agg: EvalAggregates,
    pub notes: Vec<String>,
}

impl PairNames {
    /// (benchmark, base, rl), as the report's lookups take a pair.
    pub fn key(&self) -> (&str, &str, &str) {
        (&self.benchmark, &self.base, &self.rl)
    }
}

impl Audit {
    /// Every benchmark any analysis reports on, in name order.
    pub fn benchmarks(&self) -> Vec<String> {
        let mut s: BTreeSet<String> = self
            .pass
            .cells
            .iter()
            .map(|c| c.benchmark.clone())
            .collect();
        s.extend(self.pairs.iter().map(|p| p.benchmark.clone()));
        s.extend(self.matched.iter().map(|m| m.benchmark.clone()));
        s.into_iter().collect()
    }

    pub fn pairs_of(&self, bench: &str) -> Vec<&PairNames> {
        self.pairs.iter().filter(|p| p.benchmark == bench).collect()
    }
}

/// The result among per-pair results that belongs to a benchmark and pair
/// (any pair of the benchmark when `pair` is None).
pub fn for_pair<'a, T>(
    items: &'a [T],
    bench: &str,
    pair: Option<&PairNames>,
    key: impl Fn(&T) -> (&str, &str, &str),
) -> Option<&'a T> {
    items.iter().find(|x| {
        let (b, base, rl) = key(x);
        b == bench && pair.is_none_or(|p| p.base == base && p.rl == rl)
    })
}

/// Runs every analysis.
pub fn run_audit(set: &LogSet, settings: &Settings) -> Result<Audit> {
    let mut clock = crate::stage::StageClock::from_env();
    let (pairs, mut notes) = resolve_pairs(set, settings)?;
    let agg = eval_aggregates(set)?;
    crate::stage::release_freed_memory();
    clock.lap("polars aggregates");
    let input = passkt::PassInput { set, agg: &agg };
    let pass = passkt::analyse(&input, &pairs, settings);
    crate::stage::release_freed_memory();
    clock.lap("Pass@(K,T), Δ, curves, token budgets");
    let categories = categories::analyse(&input, &pairs, &pass.ks, settings);
    clock.lap("categories");
    let failures = failures::analyse(set, &agg, &settings.levels);
    clock.lap("failures");
    let llr_by_turn = likelihood::by_turn(set, &agg, &pairs, settings)?;
    crate::stage::release_freed_memory();
    clock.lap("likelihood by turn");
    let (natural_recovery, natural_recovery_diff) = natural::analyse(set, &agg, &pairs, settings);
    clock.lap("natural recovery");
    let grep = if settings.grep.is_empty() {
        Vec::new()
    } else {
        let patterns: Vec<regex::Regex> = settings
            .grep
            .iter()
            .map(|p| {
                regex::Regex::new(p)
                    .map_err(|e| crate::error::Error::Usage(format!("--grep {p:?}: {e}")))
            })
            .collect::<Result<_>>()?;
        let trajs = grep::candidates(set, &agg);
        let actions = set.actions_of(&trajs)?;
        grep::analyse(set, &trajs, &actions, &patterns)
    };
    clock.lap("grep");
    let mut cache = frozenlake::QCache::default();
    let matched = matched::analyse(set, &pairs, settings, &mut cache);
    let recovery = recovery::analyse(set, &pairs, settings, &mut cache);
    clock.lap("matched states, error recovery");
    let likelihood = likelihood::analyse(set, &agg, &pairs, settings)?;
    clock.lap("likelihood");
    let (dynamics, divergence) = dynamics::analyse(set);
    clock.lap("training dynamics");
    let (cost_frontier, cost_winners) = cost::analyse(set, &agg, &pass, settings);
    clock.lap("cost frontier");
    let budgetmix = budgetmix::analyse(set, &pass, settings);
    clock.lap("BudgetMix audit");
    notes.extend(set.notes.iter().cloned());
    let outcome_only = set
        .trajectories
        .iter()
        .filter(|t| !t.is_training() && !t.turns_known)
        .count();
    if outcome_only > 0 {
        notes.push(format!(
            "{outcome_only} evaluation rollouts have unknown turns (no `turns`, no `steps`: an outcome-only dump): they count only in the native cells of their own budget; Pass@(K,T) at tighter budgets, pass curves, token budgets, costs and likelihood need per-turn logs"
        ));
    }
    let one_seed: Vec<String> = pairs
        .iter()
        .filter(|p| {
            [p.base, p.rl].iter().all(|r| {
                agg.seeds
                    .get(&(p.benchmark, *r))
                    .is_none_or(|s| s.len() < 2)
            })
        })
        .map(|p| format!("{} → {}", set.name(p.base), set.name(p.rl)))
        .collect();
    if !one_seed.is_empty() {
        notes.push(format!(
            "{} of {} comparison(s) rest on one training seed per run ({}): their intervals cover task-to-task variation, not seed-to-seed; rollouts of several seeds with a `seed` field give two-stage intervals",
            one_seed.len(),
            pairs.len(),
            one_seed.join(", ")
        ));
    }
    for name in &settings.audit {
        if set.strings.get(name).is_none() {
            notes.push(format!("--audit {name}: no run of that name in the logs"));
        }
    }
    let names = pairs
        .iter()
        .map(|p| PairNames {
            benchmark: set.name(p.benchmark).to_string(),
            base: set.name(p.base).to_string(),
            rl: set.name(p.rl).to_string(),
        })
        .collect();
    Ok(Audit {
        settings: settings.clone(),
        pairs: names,
        pass,
        matched,
        recovery,
        likelihood,
        dynamics,
        divergence,
        cost_frontier,
        cost_winners,
        budgetmix,
        categories,
        failures,
        llr_by_turn,
        natural_recovery,
        natural_recovery_diff,
        grep,
        agg,
        notes,
    })
}
