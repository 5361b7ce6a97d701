//! `report.json` in the SPEC §3.1 layout (schema version 1), from typed row
//! structs: the compiler checks the contract's names; serde writes them.
//! Non-finite numbers are written as `null` (serde_json's rule), keys in
//! name order.

use std::collections::BTreeMap;

use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;
use serde_json::Value;

use crate::analysis::likelihood::{Summary, BINS};
use crate::analysis::matched::Half;
use crate::analysis::recovery::Breakdown;
use crate::analysis::stats::{Ci, Estimate};
use crate::analysis::Audit;
use crate::schema::LogSet;

pub const SCHEMA_VERSION: u64 = 1;

/// `ci` as `[low, high]`, or `null` (with `ci_degenerate: true` when every
/// resample agreed): flattened into its row.
struct CiKeys<'a>(&'a str, Ci);

impl Serialize for CiKeys<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        match self.1 {
            Ci::Interval(l, h) => m.serialize_entry(self.0, &[l, h])?,
            Ci::Degenerate => {
                m.serialize_entry(self.0, &())?;
                m.serialize_entry(&format!("{}_degenerate", self.0), &true)?;
            }
            // Pending: never in a finished audit.
            Ci::Undefined | Ci::Pending => m.serialize_entry(self.0, &())?,
        }
        m.end()
    }
}

fn ci(c: Ci) -> CiKeys<'static> {
    CiKeys("ci", c)
}

/// `{value, ci}` of an estimate; both null when there is none.
#[derive(Serialize)]
struct Est {
    value: Option<f64>,
    #[serde(flatten)]
    ci: CiKeys<'static>,
}

fn est(e: &Option<Estimate>) -> Est {
    match e {
        Some(e) => Est {
            value: Some(e.value),
            ci: ci(e.ci),
        },
        None => Est {
            value: None,
            ci: ci(Ci::Undefined),
        },
    }
}

/// A named figure (`mean_diff`, …) with its `ci`.
#[derive(Serialize)]
struct Named<T: Serialize> {
    #[serde(flatten)]
    head: T,
    #[serde(flatten)]
    figure: BTreeMap<&'static str, Option<f64>>,
    #[serde(flatten)]
    ci: CiKeys<'static>,
}

fn named<T: Serialize>(head: T, key: &'static str, e: &Option<Estimate>) -> Named<T> {
    Named {
        head,
        figure: BTreeMap::from([(key, e.map(|e| e.value))]),
        ci: ci(e.map_or(Ci::Undefined, |e| e.ci)),
    }
}

/// `{run: x}` for the runs (base, RL) that have the figure.
fn per_run<'a, T: Copy>(names: [&'a str; 2], v: &[Option<T>; 2]) -> BTreeMap<&'a str, T> {
    names
        .iter()
        .zip(v)
        .filter_map(|(n, x)| x.map(|x| (*n, x)))
        .collect()
}

#[derive(Serialize)]
struct Inputs<'a> {
    files: &'a [String],
    records: BTreeMap<&'static str, u64>,
    skipped: &'a BTreeMap<&'static str, u64>,
    unknown_kinds: &'a BTreeMap<String, u64>,
    ignored_files: &'a [String],
}

#[derive(Serialize)]
struct BootstrapSettings {
    resamples: usize,
    seed: u64,
    method: &'static str,
}

#[derive(Serialize)]
struct CostSettings {
    turn: f64,
    token: f64,
}

#[derive(Serialize)]
struct PairRow<'a> {
    benchmark: &'a str,
    base: &'a str,
    rl: &'a str,
}

#[derive(Serialize)]
struct SettingsOut<'a> {
    levels: &'a [u32],
    ks: &'a [u64],
    bootstrap: BootstrapSettings,
    gamma: f64,
    cost: CostSettings,
    balance: bool,
    pairs: Vec<PairRow<'a>>,
    token_budgets: &'a BTreeMap<String, Vec<u64>>,
    adjust: &'static str,
    min_effect: f64,
}

#[derive(Serialize)]
struct PassRow<'a> {
    benchmark: &'a str,
    run: &'a str,
    k: u64,
    level: u32,
    t_mode: &'static str,
    value: Option<f64>,
    #[serde(flatten)]
    ci: CiKeys<'static>,
    pass_all: Option<f64>,
    tasks: usize,
    tasks_left_out: usize,
    seeds: usize,
}

#[derive(Serialize)]
struct CurveRow<'a> {
    benchmark: &'a str,
    run: &'a str,
    k: u64,
    t: u32,
    value: Option<f64>,
}

#[derive(Serialize)]
struct TokenRow<'a> {
    benchmark: &'a str,
    run: &'a str,
    k: u64,
    tokens: u64,
    value: Option<f64>,
    #[serde(flatten)]
    ci: CiKeys<'static>,
    tasks: usize,
    tasks_left_out: usize,
}

#[derive(Serialize)]
struct UpperRow<'a> {
    benchmark: &'a str,
    level: u32,
    value: f64,
    kind: &'static str,
    tasks: usize,
}

#[derive(Serialize)]
struct UpperCurveRow<'a> {
    benchmark: &'a str,
    t: u32,
    value: f64,
    kind: &'static str,
}

#[derive(Serialize)]
struct AdvantageRow<'a> {
    benchmark: &'a str,
    base: &'a str,
    rl: &'a str,
    k: u64,
    level: u32,
    t_mode: &'static str,
    tasks: usize,
    delta: f64,
    #[serde(flatten)]
    ci: CiKeys<'static>,
    flip: bool,
    significant_flip: bool,
    headroom: Option<f64>,
    se: Option<f64>,
    p_value: Option<f64>,
    p_adjusted: Option<f64>,
    /// Beyond SPEC §4.2: the smallest `p_adjusted` the resamples allow
    /// (2/(B+1); with Holm, the family's m live cells times that).
    p_adjusted_floor: Option<f64>,
    ci_simultaneous: Option<(f64, f64)>,
    significant_flip_adjusted: bool,
    mde: Option<f64>,
    verdict: &'static str,
    tasks_needed: Option<u64>,
    seeds: &'a BTreeMap<String, usize>,
}

#[derive(Serialize)]
struct ModeGapRow<'a> {
    benchmark: &'a str,
    run: &'a str,
    k: u64,
    level: u32,
    tasks: usize,
    diff: f64,
    #[serde(flatten)]
    ci: CiKeys<'static>,
    seeds: BTreeMap<&'a str, usize>,
}

#[derive(Serialize)]
struct SharesCi {
    better: Option<(f64, f64)>,
    tie: Option<(f64, f64)>,
    worse: Option<(f64, f64)>,
}

#[derive(Serialize)]
struct TurnOut {
    turn: u32,
    states: u64,
    better: Option<f64>,
    /// A key added within schema version 1 (SPEC §3.1 allows it): the
    /// Wilson interval of `better`.
    better_ci: Option<(f64, f64)>,
    mean_diff: Option<f64>,
    /// Added within schema version 1: `mean_diff`'s cluster-bootstrap
    /// interval (`ci`, or `ci_degenerate`), as early and late carry.
    #[serde(flatten)]
    ci: CiKeys<'static>,
}

#[derive(Serialize)]
struct HalfHead {
    states: u64,
    better: Option<f64>,
    /// A key added within schema version 1: the Wilson interval of `better`.
    better_ci: Option<(f64, f64)>,
}

fn half(h: &Half) -> Named<HalfHead> {
    named(
        HalfHead {
            states: h.states,
            better: h.better,
            better_ci: h.better_ci,
        },
        "mean_diff",
        &h.mean_diff,
    )
}

#[derive(Serialize)]
struct MatchedHead<'a> {
    benchmark: &'a str,
    base: &'a str,
    rl: &'a str,
    states: u64,
    states_by_source: &'a BTreeMap<String, u64>,
    better: Option<f64>,
    tie: Option<f64>,
    worse: Option<f64>,
    shares_ci: SharesCi,
    by_turn: Vec<TurnOut>,
    median_turn: Option<f64>,
    early: Named<HalfHead>,
    late: Named<HalfHead>,
    unscored_states: u64,
}

#[derive(Serialize)]
struct BreakdownOut<'a> {
    #[serde(flatten)]
    key: BTreeMap<&'static str, Value>,
    states: u64,
    better: Option<f64>,
    /// A key added within schema version 1: the Wilson interval of `better`.
    better_ci: Option<(f64, f64)>,
    correction: BTreeMap<&'a str, f64>,
    terminal_success: BTreeMap<&'a str, f64>,
}

fn breakdown<'a>(names: [&'a str; 2], b: &Breakdown, key: &'static str) -> BreakdownOut<'a> {
    let k = match b.turn {
        Some(t) => Value::from(t),
        None => Value::from(b.key.clone()),
    };
    BreakdownOut {
        key: BTreeMap::from([(key, k)]),
        states: b.states,
        better: b.better,
        better_ci: b.better_ci,
        correction: per_run(names, &b.correction),
        terminal_success: per_run(names, &b.terminal_success),
    }
}

#[derive(Serialize)]
struct RecoveryRow<'a> {
    benchmark: &'a str,
    base: &'a str,
    rl: &'a str,
    states: u64,
    scored_states: u64,
    better: Option<f64>,
    better_ci: Option<(f64, f64)>,
    correction: BTreeMap<&'a str, Est>,
    terminal_success: BTreeMap<&'a str, Est>,
    correction_diff: Est,
    terminal_success_diff: Est,
    by_source: Vec<BreakdownOut<'a>>,
    by_turn: Vec<BreakdownOut<'a>>,
}

#[derive(Serialize)]
struct SummaryOut {
    mean: f64,
    median: f64,
    n: u64,
}

fn summaries<'a>(names: [&'a str; 2], s: &[Option<Summary>; 2]) -> BTreeMap<&'a str, SummaryOut> {
    names
        .iter()
        .zip(s)
        .filter_map(|(n, x)| {
            x.map(|x| {
                (
                    *n,
                    SummaryOut {
                        mean: x.mean,
                        median: x.median,
                        n: x.n,
                    },
                )
            })
        })
        .collect()
}

#[derive(Serialize)]
struct HistogramOut<'a> {
    lo: f64,
    hi: f64,
    bins: usize,
    counts: BTreeMap<&'a str, &'a [u64]>,
}

#[derive(Serialize)]
struct LengthHead {
    tasks: u64,
    pairs: u64,
}

#[derive(Serialize)]
struct LikelihoodRow<'a> {
    benchmark: &'a str,
    base: &'a str,
    rl: &'a str,
    step_nll: BTreeMap<&'a str, SummaryOut>,
    overlap: Option<f64>,
    llr: BTreeMap<&'a str, SummaryOut>,
    length_matched: Named<LengthHead>,
    histogram: Option<HistogramOut<'a>>,
    notes: &'a [String],
}

#[derive(Serialize)]
struct DynamicsRow<'a> {
    run: &'a str,
    metric: &'a str,
    checkpoints: u64,
    first: f64,
    last: f64,
    change: f64,
    slope: Option<f64>,
    slope_ci: Option<(f64, f64)>,
}

#[derive(Serialize)]
struct DivergenceRow<'a> {
    run: &'a str,
    divergent: bool,
    has_metrics: bool,
}

#[derive(Serialize)]
struct CostRow<'a> {
    benchmark: &'a str,
    run: &'a str,
    k: u64,
    level: u32,
    t_mode: &'static str,
    pass: f64,
    cost: f64,
    on_frontier: bool,
}

#[derive(Serialize)]
struct WinnerRow<'a> {
    benchmark: &'a str,
    from_cost: f64,
    to_cost: Option<f64>,
    run: &'a str,
    k: u64,
    level: u32,
    t_mode: &'static str,
    pass: f64,
}

#[derive(Serialize)]
struct RuleRow<'a> {
    rule: &'static str,
    checked: u64,
    violations: u64,
    rate: Option<f64>,
    p_value: Option<f64>,
    examples: &'a [String],
}

#[derive(Serialize)]
struct GainRow<'a> {
    benchmark: &'a str,
    level: u32,
    gain: f64,
    vs: &'a str,
    modes: &'a BTreeMap<String, &'static str>,
}

#[derive(Serialize)]
struct MeanGainRow {
    level: u32,
    gain: f64,
}

#[derive(Serialize)]
struct BudgetMixRow<'a> {
    run: &'a str,
    rules: Vec<RuleRow<'a>>,
    gains: Vec<GainRow<'a>>,
    mean_gain: Vec<MeanGainRow>,
    notes: &'a [String],
}

#[derive(Serialize)]
struct CategoryPassRow<'a> {
    benchmark: &'a str,
    category: &'a str,
    run: &'a str,
    k: u64,
    level: u32,
    t_mode: &'static str,
    value: f64,
    #[serde(flatten)]
    ci: CiKeys<'static>,
    tasks: usize,
}

#[derive(Serialize)]
struct CategoryAdvantageRow<'a> {
    benchmark: &'a str,
    category: &'a str,
    base: &'a str,
    rl: &'a str,
    k: u64,
    level: u32,
    t_mode: &'static str,
    tasks: usize,
    delta: f64,
    #[serde(flatten)]
    ci: CiKeys<'static>,
}

#[derive(Serialize)]
struct ContrastRow<'a> {
    benchmark: &'a str,
    base: &'a str,
    rl: &'a str,
    k: u64,
    level: u32,
    t_mode: &'static str,
    a: &'a str,
    b: &'a str,
    tasks_a: usize,
    tasks_b: usize,
    diff: f64,
    #[serde(flatten)]
    ci: CiKeys<'static>,
    p_value: Option<f64>,
    p_adjusted: Option<f64>,
    /// Beyond SPEC §4.3: the smallest `p_adjusted` the resamples allow
    /// (Holm over the pair's m contrasts: m × 2/(B+1), at most 1).
    p_adjusted_floor: Option<f64>,
}

#[derive(Serialize)]
struct CausesOut {
    budget: u64,
    wrong: u64,
    error: u64,
    invalid: u64,
    other: u64,
}

#[derive(Serialize)]
struct FailureOut<'a> {
    benchmark: &'a str,
    run: &'a str,
    level: u32,
    t_mode: &'static str,
    rollouts: u64,
    solved: u64,
    causes: CausesOut,
}

#[derive(Serialize)]
struct LlrTurnRow<'a> {
    benchmark: &'a str,
    base: &'a str,
    rl: &'a str,
    run: &'a str,
    turn: u32,
    steps: u64,
    mean: f64,
    #[serde(flatten)]
    ci: CiKeys<'static>,
}

#[derive(Serialize)]
struct NaturalTurn {
    turn: u32,
    error_events: u64,
    next_ok: Option<f64>,
    rollouts: u64,
    recovered: Option<f64>,
}

#[derive(Serialize)]
struct NaturalRow<'a> {
    benchmark: &'a str,
    run: &'a str,
    rollouts: u64,
    rollouts_with_error: u64,
    error_events: u64,
    next_ok: Option<f64>,
    #[serde(flatten)]
    next_ok_ci: CiKeys<'static>,
    recovered: Option<f64>,
    #[serde(flatten)]
    recovered_ci: CiKeys<'static>,
    by_turn: Vec<NaturalTurn>,
}

#[derive(Serialize)]
struct NaturalDiffRow<'a> {
    benchmark: &'a str,
    base: &'a str,
    rl: &'a str,
    tasks: usize,
    next_ok_diff: Option<f64>,
    #[serde(flatten)]
    next_ok_ci: CiKeys<'static>,
    recovered_diff: Option<f64>,
    #[serde(flatten)]
    recovered_ci: CiKeys<'static>,
}

fn ci_of(key: &'static str, e: &Option<Estimate>) -> CiKeys<'static> {
    CiKeys(key, e.map_or(Ci::Undefined, |e| e.ci))
}

#[derive(Serialize)]
struct GrepOut<'a> {
    benchmark: &'a str,
    run: &'a str,
    pattern: &'a str,
    rollouts: u64,
    matching: u64,
    pass_matching: Option<f64>,
    pass_other: Option<f64>,
}

#[derive(Serialize)]
struct FindingRow<'a> {
    kind: &'static str,
    #[serde(rename = "where")]
    place: &'a str,
    detail: &'a str,
    severity: &'static str,
}

#[derive(Serialize)]
struct Tool {
    name: &'static str,
    version: &'static str,
}

/// The whole report; sections in SPEC §3.1 order (written in key order).
#[derive(Serialize)]
struct Report<'a> {
    schema_version: u64,
    tool: Tool,
    inputs: Inputs<'a>,
    settings: SettingsOut<'a>,
    pass_at_kt: Vec<PassRow<'a>>,
    pass_curve: Vec<CurveRow<'a>>,
    token_budget: Vec<TokenRow<'a>>,
    upper_bound: Vec<UpperRow<'a>>,
    upper_bound_curve: Vec<UpperCurveRow<'a>>,
    advantage: Vec<AdvantageRow<'a>>,
    mode_gap: Vec<ModeGapRow<'a>>,
    matched_states: Vec<Named<MatchedHead<'a>>>,
    error_recovery: Vec<RecoveryRow<'a>>,
    likelihood: Vec<LikelihoodRow<'a>>,
    dynamics: Vec<DynamicsRow<'a>>,
    divergence: Vec<DivergenceRow<'a>>,
    cost_frontier: Vec<CostRow<'a>>,
    cost_winners: Vec<WinnerRow<'a>>,
    budgetmix: Vec<BudgetMixRow<'a>>,
    pass_by_category: Vec<CategoryPassRow<'a>>,
    advantage_by_category: Vec<CategoryAdvantageRow<'a>>,
    category_contrast: Vec<ContrastRow<'a>>,
    failures: Vec<FailureOut<'a>>,
    llr_by_turn: Vec<LlrTurnRow<'a>>,
    natural_recovery: Vec<NaturalRow<'a>>,
    natural_recovery_diff: Vec<NaturalDiffRow<'a>>,
    /// Only with `--grep`.
    #[serde(skip_serializing_if = "Option::is_none")]
    grep: Option<Vec<GrepOut<'a>>>,
    notes: &'a [String],
    /// Beyond SPEC §3.1: the headline, as in the workbench's Overview.
    findings: Vec<FindingRow<'a>>,
}

pub fn report(set: &LogSet, audit: &Audit) -> Value {
    let s = &audit.settings;
    let p = &audit.pass;
    let found = super::findings::findings(audit);
    let r = Report {
        schema_version: SCHEMA_VERSION,
        tool: Tool {
            name: "rl-audit",
            version: env!("CARGO_PKG_VERSION"),
        },
        inputs: Inputs {
            files: &set.files,
            records: set.record_counts(),
            skipped: &set.skipped,
            unknown_kinds: &set.unknown_kinds,
            ignored_files: &set.ignored_files,
        },
        settings: SettingsOut {
            levels: &s.levels,
            ks: &p.ks,
            bootstrap: BootstrapSettings {
                resamples: s.boot.resamples,
                seed: s.boot.seed,
                method: s.boot.method.name(),
            },
            gamma: s.gamma,
            cost: CostSettings {
                turn: s.cost.turn,
                token: s.cost.token,
            },
            balance: s.balance,
            pairs: audit
                .pairs
                .iter()
                .map(|x| PairRow {
                    benchmark: &x.benchmark,
                    base: &x.base,
                    rl: &x.rl,
                })
                .collect(),
            token_budgets: &p.token_budgets,
            adjust: s.adjust.name(),
            min_effect: s.min_effect,
        },
        pass_at_kt: p
            .cells
            .iter()
            .map(|c| PassRow {
                benchmark: &c.benchmark,
                run: &c.run,
                k: c.k,
                level: c.level,
                t_mode: c.mode.name(),
                value: c.value,
                ci: ci(c.ci),
                pass_all: c.pass_all,
                tasks: c.tasks,
                tasks_left_out: c.tasks_left_out,
                seeds: c.seeds,
            })
            .collect(),
        pass_curve: p
            .curve
            .iter()
            .map(|c| CurveRow {
                benchmark: &c.benchmark,
                run: &c.run,
                k: c.k,
                t: c.t,
                value: c.value,
            })
            .collect(),
        token_budget: p
            .token
            .iter()
            .map(|c| TokenRow {
                benchmark: &c.benchmark,
                run: &c.run,
                k: c.k,
                tokens: c.tokens,
                value: c.value,
                ci: ci(c.ci),
                tasks: c.tasks,
                tasks_left_out: c.tasks_left_out,
            })
            .collect(),
        upper_bound: p
            .upper
            .iter()
            .map(|u| UpperRow {
                benchmark: &u.benchmark,
                level: u.level,
                value: u.value,
                kind: u.kind,
                tasks: u.tasks,
            })
            .collect(),
        upper_bound_curve: p
            .upper_curve
            .iter()
            .map(|u| UpperCurveRow {
                benchmark: &u.benchmark,
                t: u.t,
                value: u.value,
                kind: u.kind,
            })
            .collect(),
        advantage: p
            .advantage
            .iter()
            .map(|a| AdvantageRow {
                benchmark: &a.benchmark,
                base: &a.base,
                rl: &a.rl,
                k: a.k,
                level: a.level,
                t_mode: a.mode.name(),
                tasks: a.tasks,
                delta: a.delta,
                ci: ci(a.ci),
                flip: a.flip,
                significant_flip: a.significant_flip,
                headroom: a.headroom,
                se: a.test.se,
                p_value: a.test.p_value,
                p_adjusted: a.test.p_adjusted,
                p_adjusted_floor: a.test.p_adjusted_floor,
                ci_simultaneous: a.test.ci_simultaneous,
                significant_flip_adjusted: a.test.significant_flip_adjusted,
                mde: a.test.mde,
                verdict: a.test.verdict.name(),
                tasks_needed: a.test.tasks_needed,
                seeds: &a.seeds,
            })
            .collect(),
        mode_gap: p
            .mode_gap
            .iter()
            .map(|g| ModeGapRow {
                benchmark: &g.benchmark,
                run: &g.run,
                k: g.k,
                level: g.level,
                tasks: g.tasks,
                diff: g.diff,
                ci: ci(g.ci),
                seeds: BTreeMap::from([(g.run.as_str(), g.seeds)]),
            })
            .collect(),
        matched_states: audit
            .matched
            .iter()
            .map(|m| {
                let head = MatchedHead {
                    benchmark: &m.benchmark,
                    base: &m.base,
                    rl: &m.rl,
                    states: m.states,
                    states_by_source: &m.states_by_source,
                    better: m.better,
                    tie: m.tie,
                    worse: m.worse,
                    shares_ci: SharesCi {
                        better: m.shares_ci[0],
                        tie: m.shares_ci[1],
                        worse: m.shares_ci[2],
                    },
                    by_turn: m
                        .by_turn
                        .iter()
                        .map(|t| TurnOut {
                            turn: t.turn,
                            states: t.states,
                            better: t.better,
                            better_ci: t.better_ci,
                            mean_diff: t.mean_diff,
                            ci: ci(t.ci),
                        })
                        .collect(),
                    median_turn: m.median_turn,
                    early: half(&m.early),
                    late: half(&m.late),
                    unscored_states: m.unscored,
                };
                named(head, "mean_diff", &m.mean_diff)
            })
            .collect(),
        error_recovery: audit
            .recovery
            .iter()
            .map(|r| {
                let names = [r.base.as_str(), r.rl.as_str()];
                let ests = |e: &[Option<Estimate>; 2]| {
                    names
                        .iter()
                        .zip(e)
                        .filter(|(_, x)| x.is_some())
                        .map(|(n, x)| (*n, est(x)))
                        .collect()
                };
                RecoveryRow {
                    benchmark: &r.benchmark,
                    base: &r.base,
                    rl: &r.rl,
                    states: r.states,
                    scored_states: r.scored,
                    better: r.better,
                    better_ci: r.better_ci,
                    correction: ests(&r.correction),
                    terminal_success: ests(&r.terminal_success),
                    correction_diff: est(&r.correction_diff),
                    terminal_success_diff: est(&r.terminal_success_diff),
                    by_source: r
                        .by_source
                        .iter()
                        .map(|b| breakdown(names, b, "source"))
                        .collect(),
                    by_turn: r
                        .by_turn
                        .iter()
                        .map(|b| breakdown(names, b, "turn"))
                        .collect(),
                }
            })
            .collect(),
        likelihood: audit
            .likelihood
            .iter()
            .map(|l| {
                let names = [l.base.as_str(), l.rl.as_str()];
                LikelihoodRow {
                    benchmark: &l.benchmark,
                    base: &l.base,
                    rl: &l.rl,
                    step_nll: summaries(names, &l.step_nll),
                    overlap: l.overlap,
                    llr: summaries(names, &l.llr),
                    length_matched: named(
                        LengthHead {
                            tasks: l.length_matched.tasks,
                            pairs: l.length_matched.pairs,
                        },
                        "mean_diff",
                        &l.length_matched.mean_diff,
                    ),
                    histogram: l.histogram.as_ref().map(|h| HistogramOut {
                        lo: h.lo,
                        hi: h.hi,
                        bins: BINS,
                        counts: BTreeMap::from([
                            (names[0], h.counts[0].as_slice()),
                            (names[1], h.counts[1].as_slice()),
                        ]),
                    }),
                    notes: &l.notes,
                }
            })
            .collect(),
        dynamics: audit
            .dynamics
            .iter()
            .map(|t| DynamicsRow {
                run: &t.run,
                metric: &t.metric,
                checkpoints: t.checkpoints,
                first: t.first,
                last: t.last,
                change: t.change,
                slope: t.slope,
                slope_ci: t.slope_ci,
            })
            .collect(),
        divergence: audit
            .divergence
            .iter()
            .map(|d| DivergenceRow {
                run: &d.run,
                divergent: d.divergent,
                has_metrics: d.has_metrics,
            })
            .collect(),
        cost_frontier: audit
            .cost_frontier
            .iter()
            .map(|x| CostRow {
                benchmark: &x.benchmark,
                run: &x.run,
                k: x.k,
                level: x.level,
                t_mode: x.mode.name(),
                pass: x.pass,
                cost: x.cost,
                on_frontier: x.on_frontier,
            })
            .collect(),
        cost_winners: audit
            .cost_winners
            .iter()
            .map(|w| WinnerRow {
                benchmark: &w.benchmark,
                from_cost: w.from_cost,
                to_cost: w.to_cost,
                run: &w.run,
                k: w.k,
                level: w.level,
                t_mode: w.mode.name(),
                pass: w.pass,
            })
            .collect(),
        budgetmix: audit
            .budgetmix
            .iter()
            .map(|b| BudgetMixRow {
                run: &b.run,
                rules: b
                    .rules
                    .iter()
                    .map(|r| RuleRow {
                        rule: r.rule,
                        checked: r.checked,
                        violations: r.violations,
                        rate: r.rate(),
                        p_value: r.p_value,
                        examples: &r.examples,
                    })
                    .collect(),
                gains: b
                    .gains
                    .iter()
                    .map(|g| GainRow {
                        benchmark: &g.benchmark,
                        level: g.level,
                        gain: g.gain,
                        vs: &g.vs,
                        modes: &g.modes,
                    })
                    .collect(),
                mean_gain: b
                    .mean_gain
                    .iter()
                    .map(|(l, g)| MeanGainRow {
                        level: *l,
                        gain: *g,
                    })
                    .collect(),
                notes: &b.notes,
            })
            .collect(),
        pass_by_category: audit
            .categories
            .pass
            .iter()
            .map(|c| CategoryPassRow {
                benchmark: &c.benchmark,
                category: &c.category,
                run: &c.run,
                k: c.k,
                level: c.level,
                t_mode: c.mode.name(),
                value: c.value,
                ci: ci(c.ci),
                tasks: c.tasks,
            })
            .collect(),
        advantage_by_category: audit
            .categories
            .advantage
            .iter()
            .map(|c| CategoryAdvantageRow {
                benchmark: &c.benchmark,
                category: &c.category,
                base: &c.base,
                rl: &c.rl,
                k: c.k,
                level: c.level,
                t_mode: c.mode.name(),
                tasks: c.tasks,
                delta: c.delta,
                ci: ci(c.ci),
            })
            .collect(),
        category_contrast: audit
            .categories
            .contrast
            .iter()
            .map(|c| ContrastRow {
                benchmark: &c.benchmark,
                base: &c.base,
                rl: &c.rl,
                k: c.k,
                level: c.level,
                t_mode: c.mode.name(),
                a: &c.a,
                b: &c.b,
                tasks_a: c.tasks_a,
                tasks_b: c.tasks_b,
                diff: c.diff,
                ci: ci(c.ci),
                p_value: c.p_value,
                p_adjusted: c.p_adjusted,
                p_adjusted_floor: c.p_adjusted_floor,
            })
            .collect(),
        failures: audit
            .failures
            .iter()
            .map(|f| {
                let c = f.counts.causes;
                FailureOut {
                    benchmark: &f.benchmark,
                    run: &f.run,
                    level: f.level,
                    t_mode: f.mode.name(),
                    rollouts: f.counts.rollouts,
                    solved: f.counts.solved,
                    causes: CausesOut {
                        budget: c[0],
                        wrong: c[1],
                        error: c[2],
                        invalid: c[3],
                        other: c[4],
                    },
                }
            })
            .collect(),
        llr_by_turn: audit
            .llr_by_turn
            .iter()
            .map(|l| LlrTurnRow {
                benchmark: &l.benchmark,
                base: &l.base,
                rl: &l.rl,
                run: &l.run,
                turn: l.turn,
                steps: l.steps,
                mean: l.mean,
                ci: ci(l.ci),
            })
            .collect(),
        natural_recovery: audit
            .natural_recovery
            .iter()
            .map(|n| NaturalRow {
                benchmark: &n.benchmark,
                run: &n.run,
                rollouts: n.rollouts,
                rollouts_with_error: n.rollouts_with_error,
                error_events: n.error_events,
                next_ok: n.next_ok.map(|e| e.value),
                next_ok_ci: ci_of("next_ok_ci", &n.next_ok),
                recovered: n.recovered.map(|e| e.value),
                recovered_ci: ci_of("recovered_ci", &n.recovered),
                by_turn: n
                    .by_turn
                    .iter()
                    .map(|t| NaturalTurn {
                        turn: t.turn,
                        error_events: t.error_events,
                        next_ok: t.next_ok,
                        rollouts: t.rollouts,
                        recovered: t.recovered,
                    })
                    .collect(),
            })
            .collect(),
        natural_recovery_diff: audit
            .natural_recovery_diff
            .iter()
            .map(|d| NaturalDiffRow {
                benchmark: &d.benchmark,
                base: &d.base,
                rl: &d.rl,
                tasks: d.tasks,
                next_ok_diff: d.next_ok.map(|e| e.value),
                next_ok_ci: ci_of("next_ok_ci", &d.next_ok),
                recovered_diff: d.recovered.map(|e| e.value),
                recovered_ci: ci_of("recovered_ci", &d.recovered),
            })
            .collect(),
        grep: (!s.grep.is_empty()).then(|| {
            audit
                .grep
                .iter()
                .map(|g| GrepOut {
                    benchmark: &g.benchmark,
                    run: &g.run,
                    pattern: &g.pattern,
                    rollouts: g.rollouts,
                    matching: g.matching,
                    pass_matching: g.pass_matching,
                    pass_other: g.pass_other,
                })
                .collect()
        }),
        notes: &audit.notes,
        findings: found
            .iter()
            .map(|f| FindingRow {
                kind: f.kind,
                place: &f.place,
                detail: &f.detail,
                severity: f.severity.name(),
            })
            .collect(),
    };
    serde_json::to_value(&r).unwrap_or(Value::Null)
}
