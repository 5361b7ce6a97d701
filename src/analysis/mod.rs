//! The analyses of SPEC §2. Pure: a loaded [`LogSet`] in, result structs out.
//! Headless reports and the TUI both read the same [`Audit`].

pub mod binomial;
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
pub mod ragged;
pub mod recovery;
pub mod seeds;
pub mod stats;
pub mod xoshiro;

use std::collections::{BTreeMap, BTreeSet};

use crate::error::{Error, Result};
use crate::schema::frames::{self, eval_aggregates_with, EvalAggregates};
use crate::schema::{Id, LogSet};
use stats::Bootstrap;

mod run;

pub use run::*;

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
    /// The parts the workbench's panel reads, computed first ([`Focus`]).
    pub focus: Focus,
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
            focus: Focus::default(),
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
    for (b, r) in crate::schema::frames::distinct_eval_keys(set, |t| Some((t.benchmark, t.run))) {
        m.entry(b).or_default().insert(r);
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
    resolve_pairs_of(set, s, &runs_by_benchmark(set))
}

/// `--budgetmix-vs RUN` names a run of the logs, as `--compare` must: a
/// usage error otherwise (a misspelt name gave no gain table, and no word
/// on why).
fn check_budgetmix_vs(
    set: &LogSet,
    s: &Settings,
    by_bench: &BTreeMap<Id, BTreeSet<Id>>,
) -> Result<()> {
    let Some(vs) = &s.budgetmix_vs else {
        return Ok(());
    };
    let known = set
        .strings
        .get(vs)
        .is_some_and(|id| by_bench.values().any(|runs| runs.contains(&id)));
    match known {
        true => Ok(()),
        false => Err(Error::Usage(format!(
            "--budgetmix-vs {vs}: no such run in the logs (runs: {})",
            all_runs(set, by_bench).join(", ")
        ))),
    }
}

/// [`resolve_pairs`] over the runs each benchmark holds ([`runs_by_benchmark`]).
fn resolve_pairs_of(
    set: &LogSet,
    s: &Settings,
    by_bench: &BTreeMap<Id, BTreeSet<Id>>,
) -> Result<(Vec<Pair>, Vec<String>)> {
    let mut pairs = Vec::new();
    let mut notes = Vec::new();
    if !s.compare.is_empty() {
        for (base, rl) in &s.compare {
            let (Some(b), Some(r)) = (set.strings.get(base), set.strings.get(rl)) else {
                return Err(Error::Usage(format!(
                    "--compare {base}:{rl}: no such run in the logs (runs: {})",
                    all_runs(set, by_bench).join(", ")
                )));
            };
            let mut found = false;
            for (&bench, runs) in by_bench {
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
        for (&bench, runs) in by_bench {
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

/// The runs of the logs, each with its declared method and the benchmarks
/// it has evaluation rollouts or probe candidates on, in [`natural_order`]: what
/// `--compare` may name ([`resolve_pairs`] reads the same), for the
/// workbench's pair picker.
pub fn runs_of(set: &LogSet, by_bench: &BTreeMap<Id, BTreeSet<Id>>) -> Vec<RunOn> {
    let mut runs: BTreeMap<&str, RunOn> = BTreeMap::new();
    for (&bench, ids) in by_bench {
        for &r in ids {
            runs.entry(set.name(r))
                .or_insert_with(|| RunOn {
                    run: set.name(r).to_string(),
                    method: set.method_of(r).map(str::to_string),
                    benchmarks: Vec::new(),
                })
                .benchmarks
                .push(set.name(bench).to_string());
        }
    }
    let mut out: Vec<RunOn> = runs.into_values().collect();
    for r in &mut out {
        r.benchmarks.sort();
    }
    // Checkpoints in step order: `run@20` before `run@100`.
    out.sort_by(|x, y| natural_order(&x.run, &y.run));
    out
}

/// Names compared with their runs of digits as numbers (`run@20` before
/// `run@100`), the rest as text; equal so, by the text.
pub fn natural_order(x: &str, y: &str) -> std::cmp::Ordering {
    // Bytes: UTF-8 keeps the characters' order, and digits are ASCII.
    let (a, b) = (x.as_bytes(), y.as_bytes());
    let (mut i, mut j) = (0, 0);
    let digits = |s: &[u8], mut k: usize| {
        while k < s.len() && s[k].is_ascii_digit() {
            k += 1;
        }
        k
    };
    while i < a.len() && j < b.len() {
        if a[i].is_ascii_digit() && b[j].is_ascii_digit() {
            let (ei, ej) = (digits(a, i), digits(b, j));
            let zeros = |s: &[u8]| s.iter().take_while(|&&c| c == b'0').count();
            let (na, nb) = (&a[i..ei], &b[j..ej]);
            let (na, nb) = (&na[zeros(na)..], &nb[zeros(nb)..]);
            let o = na.len().cmp(&nb.len()).then_with(|| na.cmp(nb));
            if o.is_ne() {
                return o;
            }
            (i, j) = (ei, ej);
        } else {
            let o = a[i].cmp(&b[j]);
            if o.is_ne() {
                return o;
            }
            (i, j) = (i + 1, j + 1);
        }
    }
    (a.len() - i).cmp(&(b.len() - j)).then_with(|| x.cmp(y))
}

/// A run, its declared `method` and the benchmarks it is on ([`runs_of`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunOn {
    pub run: String,
    pub method: Option<String>,
    pub benchmarks: Vec<String>,
}

fn all_runs(set: &LogSet, by_bench: &BTreeMap<Id, BTreeSet<Id>>) -> Vec<String> {
    let all: BTreeSet<&str> = by_bench.values().flatten().map(|&r| set.name(r)).collect();
    all.into_iter().map(str::to_string).collect()
}

/// Consecutive levels of a benchmark whose Pass@(K,T) cells are one cell
/// (every task the same T), and its tasks' largest full budget.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CoincidingLevels {
    pub benchmark: String,
    pub levels: Vec<u32>,
    pub largest: u32,
}

impl CoincidingLevels {
    /// `25%=50%`: how the Budget grid's legend writes them.
    pub fn joined(&self) -> String {
        let l: Vec<String> = self.levels.iter().map(|l| format!("{l}%")).collect();
        l.join("=")
    }

    /// The audit's note on them.
    pub fn note(&self) -> String {
        let levels: Vec<String> = self.levels.iter().map(|l| format!("{l}%")).collect();
        format!(
            "{}: levels {} give every task the same turn budget T (its tasks' full budgets are at most {} turn{}): their Pass@(K,T) cells are one cell, shown under each level — not an edge that holds across budgets",
            self.benchmark,
            levels.join(", "),
            self.largest,
            if self.largest == 1 { "" } else { "s" }
        )
    }
}

/// A pair by name, as reports show it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PairNames {
    pub benchmark: String,
    pub base: String,
    pub rl: String,
}

/// The whole audit: every analysis on one log set with one set of settings.
#[derive(Clone, Default)]
pub struct Audit {
    pub settings: Settings,
    pub pairs: Vec<PairNames>,
    /// Every run the pairs could be formed of ([`runs_of`]).
    pub runs: Vec<RunOn>,
    pub pass: passkt::PassReport,
    pub matched: Vec<matched::Matched>,
    pub recovery: Vec<recovery::Recovery>,
    pub likelihood: Vec<likelihood::Likelihood>,
    pub dynamics: Vec<dynamics::MetricTrend>,
    pub divergence: Vec<dynamics::Divergence>,
    pub cost_frontier: Vec<cost::CostPoint>,
    pub cost_winners: Vec<cost::Winner>,
    pub budgetmix: Vec<budgetmix::BudgetMixAudit>,
    /// The runs with training rollouts, audited or not (in with the
    /// BudgetMix audit's rules).
    pub training_runs: Vec<budgetmix::TrainingRun>,
    /// §4.3: per-category Pass and Δ, and the contrasts between categories.
    pub categories: categories::CategoryReport,
    /// §4.4: why each cell's rollouts failed.
    pub failures: Vec<failures::FailureRow>,
    /// §4.5: the LLR by turn, per pair and producing run. While the part
    /// is pending, the Likelihood panel on screen, the pairs' rows so far
    /// ([`likelihood::by_turn_staged`]): the last pair's with their values
    /// alone (every interval [`stats::Ci::Pending`]) or provisional
    /// intervals, the others' whole.
    pub llr_by_turn: Vec<likelihood::LlrTurn>,
    /// While the LLR by turn is pending: how many of `pairs`, the first,
    /// have their rows in `llr_by_turn` ([`Audit::llr_in`]).
    pub llr_pairs_in: usize,
    /// §4.6: error recovery in ordinary rollouts, per run and per pair.
    pub natural_recovery: Vec<natural::RunRecovery>,
    pub natural_recovery_diff: Vec<natural::RecoveryDiff>,
    /// Natural recovery's rows are in: with their values alone (every
    /// interval [`stats::Ci::Pending`]) while the part is pending
    /// ([`natural::analyse_staged`]), whole once it is in.
    pub natural_values_in: bool,
    /// The matched states' and error recovery's rows are in: with their
    /// values, counts and Wilson intervals alone (every bootstrap interval
    /// [`stats::Ci::Pending`]) while the part is pending
    /// ([`matched::values`], [`recovery::values`]), whole once it is in.
    pub matched_values_in: bool,
    /// The likelihoods' rows are in: every figure but the length-matched
    /// difference's interval ([`stats::Ci::Pending`]) while the part is
    /// pending ([`likelihood::values`]), whole once it is in (with the LLR
    /// by turn).
    pub likelihood_values_in: bool,
    /// The BudgetMix audit's rules are in (`budgetmix`, its gains empty)
    /// while the part is pending: computed first when the BudgetMix panel
    /// is on screen (they read the training rollouts alone; the gains wait
    /// for Pass@(K,T)'s values).
    pub budgetmix_rules_in: bool,
    /// While the cost frontier is pending, the benchmarks whose points and
    /// winners are in (`cost_frontier`, `cost_winners` hold theirs alone):
    /// with the Cost panel on screen, each benchmark selected, costed once
    /// its Pass@(K,T) values are in — the points it will have once every
    /// benchmark's values are and the part is computed whole.
    pub cost_in: Vec<String>,
    /// Parts computed beside that have begun: natural recovery once each
    /// task's full budget is found, before the rollouts are counted; the
    /// likelihoods when begun before the part they wait for is in, the
    /// panel on screen reading them — before the rollouts are counted if it
    /// is on screen then, else once Pass@(K,T)'s values are in.
    pub begun: Vec<Part>,
    /// `--grep`: matching rollouts and their success, per pattern.
    pub grep: Vec<grep::GrepRow>,
    /// Shared: a partial audit handed to the workbench after each part is a
    /// clone, and the aggregates are most of it (at 11 M rollouts tens of
    /// MB; the rest is the parts' results).
    pub agg: std::sync::Arc<EvalAggregates>,
    /// Levels that give every task of a benchmark the same T
    /// ([`passkt::coinciding_levels`]): in with the rollout counts.
    pub coinciding_levels: Vec<CoincidingLevels>,
    pub notes: Vec<String>,
    /// The parts not computed yet (empty once the audit is complete): the
    /// workbench shows each panel as soon as its parts are in.
    pub pending: Vec<Part>,
}

impl PairNames {
    /// (benchmark, base, rl), as the report's lookups take a pair.
    pub fn key(&self) -> (&str, &str, &str) {
        (&self.benchmark, &self.base, &self.rl)
    }

    /// The pair of a result row's (benchmark, base, rl): [`Self::key`]'s
    /// inverse.
    pub fn of((benchmark, base, rl): (&str, &str, &str)) -> Self {
        PairNames {
            benchmark: benchmark.to_string(),
            base: base.to_string(),
            rl: rl.to_string(),
        }
    }
}

impl Audit {
    /// Every analysis is in.
    pub fn is_complete(&self) -> bool {
        self.pending.is_empty()
    }

    /// Whether `part` is still to come.
    pub fn is_pending(&self, part: Part) -> bool {
        self.pending.contains(&part)
    }

    /// Whether the cost frontier's points and winners for `bench` are in:
    /// the part's, or [`Audit::cost_in`]'s while it is pending.
    pub fn cost_in(&self, bench: &str) -> bool {
        !self.is_pending(Part::Cost) || self.cost_in.iter().any(|b| b == bench)
    }

    /// Whether the LLR by turn's rows of the pair (benchmark, base, rl) are
    /// in: the part's, or, while it is pending, [`Audit::llr_pairs_in`]'s
    /// (with their values, maybe their intervals still to come).
    pub fn llr_in(&self, pair: (&str, &str, &str)) -> bool {
        !self.is_pending(Part::LlrByTurn)
            || (self.pairs.iter().position(|p| p.key() == pair))
                .is_some_and(|i| i < self.llr_pairs_in)
    }

    /// Whether `part` is being computed now, as [`run_audit_staged`]
    /// schedules the parts: the main sequence's next one, and those
    /// computed beside it once begun, until they are handed on (for the
    /// workbench's stand-in; the rest wait their turn).
    pub fn is_running(&self, part: Part) -> bool {
        if !self.is_pending(part) {
            return false;
        }
        if part.beside() {
            return part.begins_after().is_some_and(|p| !self.is_pending(p))
                || self.begun.contains(&part);
        }
        // The first to come ([`Part::ALL`] puts the parts computed beside
        // after the main sequence's but grep, which follows them).
        self.pending.first() == Some(&part)
    }

    /// Whether `part`, waiting its turn, is the main sequence's next once
    /// the part running is in, the panel on screen reading it
    /// (`settings.focus`, which the audit's settings share with the
    /// workbench's); or, computed beside, begins once Pass@(K,T)'s values
    /// are in for that panel (the likelihoods: [`run_audit_staged`]).
    pub fn is_next(&self, part: Part) -> bool {
        let focus = &self.settings.focus;
        if !focus.wants(part) || !self.is_pending(part) || self.is_running(part) {
            return false;
        }
        if part.beside() {
            return part.begins_after() == Some(Part::Pass) && !focus.wants(Part::Pass);
        }
        let left: Vec<Part> = Part::ALL
            .into_iter()
            .filter(|p| p.in_turn() && self.is_pending(*p) && !self.is_running(*p))
            .collect();
        self.settings.focus.next(&left) == Some(part)
    }

    /// Whether Pass@(K,T)'s rows of `bench` are in: the part is, or it has
    /// handed on that benchmark's ([`passkt::analyse_staged`]: their values
    /// first, intervals [`stats::Ci::Pending`], then whole; their §4.2
    /// tests come with the part).
    pub fn pass_in(&self, bench: &str) -> bool {
        let p = &self.pass;
        !self.is_pending(Part::Pass)
            || p.benchmarks_in
                .iter()
                .chain(&p.values_in)
                .any(|b| b == bench)
    }

    /// How many of the [`Part::ALL`] parts are in.
    pub fn parts_done(&self) -> usize {
        Part::ALL.len() - self.pending.len()
    }

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

    /// A run of the logs by name ([`Audit::runs`]).
    pub fn run(&self, name: &str) -> Option<&RunOn> {
        self.runs.iter().find(|r| r.run == name)
    }

    /// The runs whose training rollouts no BudgetMix audit reads: what
    /// `--audit` could name.
    pub fn unaudited_training(&self) -> impl Iterator<Item = &budgetmix::TrainingRun> {
        self.training_runs
            .iter()
            .filter(|r| r.audited == budgetmix::Audited::No)
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

/// The analyses of an audit, in the order [`run_audit_staged`] computes
/// them unless told otherwise ([`Focus`]; the cheap, most read first):
/// what a partial audit has or lacks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Part {
    Dynamics,
    Aggregates,
    Pass,
    Categories,
    Failures,
    Cost,
    BudgetMix,
    Matched,
    Likelihood,
    LlrByTurn,
    NaturalRecovery,
    Grep,
}

impl Part {
    pub const ALL: [Part; 12] = [
        Part::Dynamics,
        Part::Aggregates,
        Part::Pass,
        Part::Categories,
        Part::Failures,
        Part::Cost,
        Part::BudgetMix,
        Part::Matched,
        Part::Likelihood,
        Part::LlrByTurn,
        Part::NaturalRecovery,
        Part::Grep,
    ];

    /// Whether it is one of the main sequence's parts that
    /// [`run_audit_staged`] takes in turn after the rollout counts (the
    /// order [`Focus`] may change): neither computed beside nor one of the
    /// fixed ends (training dynamics and the counts first, grep last).
    fn in_turn(self) -> bool {
        !self.beside() && !matches!(self, Part::Dynamics | Part::Aggregates | Part::Grep)
    }

    /// Whether it is computed on a thread of its own beside the main
    /// sequence (see [`run_audit_staged`]).
    pub fn beside(self) -> bool {
        matches!(
            self,
            Part::NaturalRecovery | Part::Likelihood | Part::LlrByTurn
        )
    }

    /// The part whose end a part computed beside waits for before it
    /// begins, unless begun sooner ([`Audit::begun`]): the likelihoods
    /// begin once Pass@(K,T) has let its tables go. Natural recovery waits
    /// for none (it reads each task's full budget, found before the
    /// rollouts are counted): it runs once begun.
    fn begins_after(self) -> Option<Part> {
        match self {
            Part::Likelihood | Part::LlrByTurn => Some(Part::Pass),
            _ => None,
        }
    }

    /// The part of the main sequence whose results it reads: the
    /// categories, the cost frontier and the BudgetMix audit read
    /// Pass@(K,T)'s (its K grid, its cells, its values).
    fn reads(self) -> Option<Part> {
        match self {
            Part::Categories | Part::Cost | Part::BudgetMix => Some(Part::Pass),
            _ => None,
        }
    }

    /// What the part computes, as the workbench names it while it waits.
    pub fn title(self) -> &'static str {
        match self {
            Part::Pass => "Pass@(K,T), Δ, curves, token budgets",
            Part::Categories => "categories",
            Part::Failures => "failures",
            Part::Dynamics => "training dynamics",
            Part::Aggregates => "rollout counts (per task and budget)",
            Part::Cost => "cost frontier",
            Part::BudgetMix => "BudgetMix audit",
            Part::Matched => "matched states, error recovery",
            Part::Likelihood => "likelihood",
            Part::LlrByTurn => "likelihood by turn",
            Part::NaturalRecovery => "natural recovery",
            Part::Grep => "grep",
        }
    }
}

#[cfg(test)]
mod natural_tests {
    use super::natural_order;

    /// Checkpoint names in step order, other names as text.
    #[test]
    fn names_sort_with_their_numbers_as_numbers() {
        let mut names = vec![
            "run@100",
            "run@20",
            "run@3",
            "base",
            "run@020",
            "run-b@1",
            "run@",
            "Run@5",
            "Qwen3-4B-grpo",
            "Qwen/Qwen3-4B",
        ];
        names.sort_by(|x, y| natural_order(x, y));
        // By hand: "Qwen/" < "Qwen3" ('/' < '3': a character against a
        // digit compares as text), "Q" < "R" < "b", "run-" < "run@" (ASCII); among
        // run@N: no number first, then 3, 20, 100 — "020" and "20" equal as
        // numbers, the text breaks the tie ('0' < '2').
        assert_eq!(
            names,
            [
                "Qwen/Qwen3-4B",
                "Qwen3-4B-grpo",
                "Run@5",
                "base",
                "run-b@1",
                "run@",
                "run@3",
                "run@020",
                "run@20",
                "run@100"
            ]
        );
    }
}
