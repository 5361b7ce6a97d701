//! report.json's rows: one typed struct per section's row, named as SPEC §3.1 names them, and the small shapes they share (an interval's keys, an estimate, a row per run).

use super::*;

/// `ci` as `[low, high]`, or `null` (with `ci_degenerate: true` when every
/// resample agreed): flattened into its row.
pub(super) struct CiKeys<'a>(&'a str, Ci);

impl Serialize for CiKeys<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        match self.1 {
            Ci::Interval(l, h) => m.serialize_entry(self.0, &[l, h])?,
            Ci::Degenerate => {
                m.serialize_entry(self.0, &())?;
                m.serialize_entry(&format!("{}_degenerate", self.0), &true)?;
            }
            // Pending, provisional: never in a finished audit.
            Ci::Undefined | Ci::Pending | Ci::Provisional(..) => m.serialize_entry(self.0, &())?,
        }
        m.end()
    }
}

pub(super) fn ci(c: Ci) -> CiKeys<'static> {
    CiKeys("ci", c)
}

/// `{value, ci}` of an estimate; both null when there is none.
#[derive(Serialize)]
pub(super) struct Est {
    pub(super) value: Option<f64>,
    #[serde(flatten)]
    pub(super) ci: CiKeys<'static>,
}

pub(super) fn est(e: &Option<Estimate>) -> Est {
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
pub(super) struct Named<T: Serialize> {
    #[serde(flatten)]
    pub(super) head: T,
    #[serde(flatten)]
    pub(super) figure: BTreeMap<&'static str, Option<f64>>,
    #[serde(flatten)]
    pub(super) ci: CiKeys<'static>,
}

pub(super) fn named<T: Serialize>(head: T, key: &'static str, e: &Option<Estimate>) -> Named<T> {
    Named {
        head,
        figure: BTreeMap::from([(key, e.map(|e| e.value))]),
        ci: ci(e.map_or(Ci::Undefined, |e| e.ci)),
    }
}

/// `{run: x}` for the runs (base, RL) that have the figure.
pub(super) fn per_run<'a, T: Copy>(
    names: [&'a str; 2],
    v: &[Option<T>; 2],
) -> BTreeMap<&'a str, T> {
    names
        .iter()
        .zip(v)
        .filter_map(|(n, x)| x.map(|x| (*n, x)))
        .collect()
}

#[derive(Serialize)]
pub(super) struct Inputs<'a> {
    pub(super) files: &'a [String],
    pub(super) records: BTreeMap<&'static str, u64>,
    pub(super) skipped: &'a BTreeMap<&'static str, u64>,
    pub(super) unknown_kinds: &'a BTreeMap<String, u64>,
    pub(super) ignored_files: &'a [String],
}

#[derive(Serialize)]
pub(super) struct BootstrapSettings {
    pub(super) resamples: usize,
    pub(super) seed: u64,
    pub(super) method: &'static str,
}

#[derive(Serialize)]
pub(super) struct CostSettings {
    pub(super) turn: f64,
    pub(super) token: f64,
}

#[derive(Serialize)]
pub(super) struct PairRow<'a> {
    pub(super) benchmark: &'a str,
    pub(super) base: &'a str,
    pub(super) rl: &'a str,
}

#[derive(Serialize)]
pub(super) struct SettingsOut<'a> {
    pub(super) levels: &'a [u32],
    pub(super) ks: &'a [u64],
    pub(super) bootstrap: BootstrapSettings,
    pub(super) gamma: f64,
    pub(super) cost: CostSettings,
    pub(super) balance: bool,
    pub(super) pairs: Vec<PairRow<'a>>,
    pub(super) token_budgets: &'a BTreeMap<String, Vec<u64>>,
    pub(super) adjust: &'static str,
    pub(super) min_effect: f64,
}

#[derive(Serialize)]
pub(super) struct PassRow<'a> {
    pub(super) benchmark: &'a str,
    pub(super) run: &'a str,
    pub(super) k: u64,
    pub(super) level: u32,
    pub(super) t_mode: &'static str,
    pub(super) value: Option<f64>,
    #[serde(flatten)]
    pub(super) ci: CiKeys<'static>,
    pub(super) pass_all: Option<f64>,
    pub(super) tasks: usize,
    pub(super) tasks_left_out: usize,
    pub(super) seeds: usize,
}

/// Its fields in name order, as report.json's keys are: the rows are also
/// streamed as they are ([`super::report_bytes`]), not through a map.
#[derive(Serialize)]
pub(super) struct CurveRow<'a> {
    pub(super) benchmark: &'a str,
    pub(super) k: u64,
    pub(super) run: &'a str,
    pub(super) t: u32,
    pub(super) value: Option<f64>,
}

#[derive(Serialize)]
pub(super) struct TokenRow<'a> {
    pub(super) benchmark: &'a str,
    pub(super) run: &'a str,
    pub(super) k: u64,
    pub(super) tokens: u64,
    pub(super) value: Option<f64>,
    #[serde(flatten)]
    pub(super) ci: CiKeys<'static>,
    pub(super) tasks: usize,
    pub(super) tasks_left_out: usize,
}

#[derive(Serialize)]
pub(super) struct UpperRow<'a> {
    pub(super) benchmark: &'a str,
    pub(super) level: u32,
    pub(super) value: f64,
    pub(super) kind: &'static str,
    pub(super) tasks: usize,
}

/// Fields in name order, as [`CurveRow`]'s.
#[derive(Serialize)]
pub(super) struct UpperCurveRow<'a> {
    pub(super) benchmark: &'a str,
    pub(super) kind: &'static str,
    pub(super) t: u32,
    pub(super) value: f64,
}

/// A SPEC array given whole, or streamed into report.json's bytes where a
/// tag holds its place ([`super::report_bytes`]): a curve of a million
/// turns is millions of rows.
pub(super) enum Rows<T> {
    Given(Vec<T>),
    Streamed(&'static str),
}

impl<T: Serialize> Serialize for Rows<T> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Rows::Given(rows) => rows.serialize(s),
            Rows::Streamed(tag) => s.serialize_str(tag),
        }
    }
}

#[derive(Serialize)]
pub(super) struct AdvantageRow<'a> {
    pub(super) benchmark: &'a str,
    pub(super) base: &'a str,
    pub(super) rl: &'a str,
    pub(super) k: u64,
    pub(super) level: u32,
    pub(super) t_mode: &'static str,
    pub(super) tasks: usize,
    pub(super) delta: f64,
    #[serde(flatten)]
    pub(super) ci: CiKeys<'static>,
    pub(super) flip: bool,
    pub(super) significant_flip: bool,
    pub(super) headroom: Option<f64>,
    pub(super) se: Option<f64>,
    pub(super) p_value: Option<f64>,
    pub(super) p_adjusted: Option<f64>,
    /// Beyond SPEC §4.2: the smallest `p_adjusted` the resamples allow
    /// (2/(B+1); with Holm, the family's m live cells times that).
    pub(super) p_adjusted_floor: Option<f64>,
    pub(super) ci_simultaneous: Option<(f64, f64)>,
    pub(super) significant_flip_adjusted: bool,
    pub(super) mde: Option<f64>,
    pub(super) verdict: &'static str,
    pub(super) tasks_needed: Option<u64>,
    pub(super) seeds: &'a BTreeMap<String, usize>,
}

#[derive(Serialize)]
pub(super) struct ModeGapRow<'a> {
    pub(super) benchmark: &'a str,
    pub(super) run: &'a str,
    pub(super) k: u64,
    pub(super) level: u32,
    pub(super) tasks: usize,
    pub(super) diff: f64,
    #[serde(flatten)]
    pub(super) ci: CiKeys<'static>,
    pub(super) seeds: BTreeMap<&'a str, usize>,
}

#[derive(Serialize)]
pub(super) struct SharesCi {
    pub(super) better: Option<(f64, f64)>,
    pub(super) tie: Option<(f64, f64)>,
    pub(super) worse: Option<(f64, f64)>,
}

#[derive(Serialize)]
pub(super) struct TurnOut {
    pub(super) turn: u32,
    pub(super) states: u64,
    pub(super) better: Option<f64>,
    /// A key added within schema version 1 (SPEC §3.1 allows it): the
    /// Wilson interval of `better`.
    pub(super) better_ci: Option<(f64, f64)>,
    pub(super) mean_diff: Option<f64>,
    /// Added within schema version 1: `mean_diff`'s cluster-bootstrap
    /// interval (`ci`, or `ci_degenerate`), as early and late carry.
    #[serde(flatten)]
    pub(super) ci: CiKeys<'static>,
}

#[derive(Serialize)]
pub(super) struct HalfHead {
    pub(super) states: u64,
    pub(super) better: Option<f64>,
    /// A key added within schema version 1: the Wilson interval of `better`.
    pub(super) better_ci: Option<(f64, f64)>,
}

pub(super) fn half(h: &Half) -> Named<HalfHead> {
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
pub(super) struct MatchedHead<'a> {
    pub(super) benchmark: &'a str,
    pub(super) base: &'a str,
    pub(super) rl: &'a str,
    pub(super) states: u64,
    pub(super) states_by_source: &'a BTreeMap<String, u64>,
    pub(super) better: Option<f64>,
    pub(super) tie: Option<f64>,
    pub(super) worse: Option<f64>,
    pub(super) shares_ci: SharesCi,
    pub(super) by_turn: Vec<TurnOut>,
    pub(super) median_turn: Option<f64>,
    pub(super) early: Named<HalfHead>,
    pub(super) late: Named<HalfHead>,
    pub(super) unscored_states: u64,
}

#[derive(Serialize)]
pub(super) struct BreakdownOut<'a> {
    #[serde(flatten)]
    pub(super) key: BTreeMap<&'static str, Value>,
    pub(super) states: u64,
    pub(super) better: Option<f64>,
    /// A key added within schema version 1: the Wilson interval of `better`.
    pub(super) better_ci: Option<(f64, f64)>,
    pub(super) correction: BTreeMap<&'a str, f64>,
    pub(super) terminal_success: BTreeMap<&'a str, f64>,
}

pub(super) fn breakdown<'a>(
    names: [&'a str; 2],
    b: &Breakdown,
    key: &'static str,
) -> BreakdownOut<'a> {
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
pub(super) struct RecoveryRow<'a> {
    pub(super) benchmark: &'a str,
    pub(super) base: &'a str,
    pub(super) rl: &'a str,
    pub(super) states: u64,
    pub(super) scored_states: u64,
    pub(super) better: Option<f64>,
    pub(super) better_ci: Option<(f64, f64)>,
    pub(super) correction: BTreeMap<&'a str, Est>,
    pub(super) terminal_success: BTreeMap<&'a str, Est>,
    pub(super) correction_diff: Est,
    pub(super) terminal_success_diff: Est,
    pub(super) by_source: Vec<BreakdownOut<'a>>,
    pub(super) by_turn: Vec<BreakdownOut<'a>>,
}

#[derive(Serialize)]
pub(super) struct SummaryOut {
    pub(super) mean: f64,
    pub(super) median: f64,
    pub(super) n: u64,
}

pub(super) fn summaries<'a>(
    names: [&'a str; 2],
    s: &[Option<Summary>; 2],
) -> BTreeMap<&'a str, SummaryOut> {
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
pub(super) struct HistogramOut<'a> {
    pub(super) lo: f64,
    pub(super) hi: f64,
    pub(super) bins: usize,
    pub(super) counts: BTreeMap<&'a str, &'a [u64]>,
}

#[derive(Serialize)]
pub(super) struct LengthHead {
    pub(super) tasks: u64,
    pub(super) pairs: u64,
}

#[derive(Serialize)]
pub(super) struct LikelihoodRow<'a> {
    pub(super) benchmark: &'a str,
    pub(super) base: &'a str,
    pub(super) rl: &'a str,
    pub(super) step_nll: BTreeMap<&'a str, SummaryOut>,
    pub(super) overlap: Option<f64>,
    pub(super) llr: BTreeMap<&'a str, SummaryOut>,
    pub(super) length_matched: Named<LengthHead>,
    pub(super) histogram: Option<HistogramOut<'a>>,
    pub(super) notes: &'a [String],
}

#[derive(Serialize)]
pub(super) struct DynamicsRow<'a> {
    pub(super) run: &'a str,
    pub(super) metric: &'a str,
    pub(super) checkpoints: u64,
    pub(super) first: f64,
    pub(super) last: f64,
    pub(super) change: f64,
    pub(super) slope: Option<f64>,
    pub(super) slope_ci: Option<(f64, f64)>,
}

#[derive(Serialize)]
pub(super) struct DivergenceRow<'a> {
    pub(super) run: &'a str,
    pub(super) divergent: bool,
    pub(super) has_metrics: bool,
}

#[derive(Serialize)]
pub(super) struct CostRow<'a> {
    pub(super) benchmark: &'a str,
    pub(super) run: &'a str,
    pub(super) k: u64,
    pub(super) level: u32,
    pub(super) t_mode: &'static str,
    pub(super) pass: f64,
    pub(super) cost: f64,
    pub(super) on_frontier: bool,
}

#[derive(Serialize)]
pub(super) struct WinnerRow<'a> {
    pub(super) benchmark: &'a str,
    pub(super) from_cost: f64,
    pub(super) to_cost: Option<f64>,
    pub(super) run: &'a str,
    pub(super) k: u64,
    pub(super) level: u32,
    pub(super) t_mode: &'static str,
    pub(super) pass: f64,
}

#[derive(Serialize)]
pub(super) struct RuleRow<'a> {
    pub(super) rule: &'static str,
    pub(super) checked: u64,
    pub(super) violations: u64,
    pub(super) rate: Option<f64>,
    pub(super) p_value: Option<f64>,
    pub(super) examples: &'a [String],
}

#[derive(Serialize)]
pub(super) struct GainRow<'a> {
    pub(super) benchmark: &'a str,
    pub(super) level: u32,
    pub(super) gain: f64,
    pub(super) vs: &'a str,
    pub(super) modes: &'a BTreeMap<String, &'static str>,
}

#[derive(Serialize)]
pub(super) struct MeanGainRow {
    pub(super) level: u32,
    pub(super) gain: f64,
}

#[derive(Serialize)]
pub(super) struct BudgetMixRow<'a> {
    pub(super) run: &'a str,
    pub(super) rules: Vec<RuleRow<'a>>,
    pub(super) gains: Vec<GainRow<'a>>,
    pub(super) mean_gain: Vec<MeanGainRow>,
    pub(super) notes: &'a [String],
}

#[derive(Serialize)]
pub(super) struct CategoryPassRow<'a> {
    pub(super) benchmark: &'a str,
    pub(super) category: &'a str,
    pub(super) run: &'a str,
    pub(super) k: u64,
    pub(super) level: u32,
    pub(super) t_mode: &'static str,
    pub(super) value: f64,
    #[serde(flatten)]
    pub(super) ci: CiKeys<'static>,
    pub(super) tasks: usize,
}

#[derive(Serialize)]
pub(super) struct CategoryAdvantageRow<'a> {
    pub(super) benchmark: &'a str,
    pub(super) category: &'a str,
    pub(super) base: &'a str,
    pub(super) rl: &'a str,
    pub(super) k: u64,
    pub(super) level: u32,
    pub(super) t_mode: &'static str,
    pub(super) tasks: usize,
    pub(super) delta: f64,
    #[serde(flatten)]
    pub(super) ci: CiKeys<'static>,
}

#[derive(Serialize)]
pub(super) struct ContrastRow<'a> {
    pub(super) benchmark: &'a str,
    pub(super) base: &'a str,
    pub(super) rl: &'a str,
    pub(super) k: u64,
    pub(super) level: u32,
    pub(super) t_mode: &'static str,
    pub(super) a: &'a str,
    pub(super) b: &'a str,
    pub(super) tasks_a: usize,
    pub(super) tasks_b: usize,
    pub(super) diff: f64,
    #[serde(flatten)]
    pub(super) ci: CiKeys<'static>,
    pub(super) p_value: Option<f64>,
    pub(super) p_adjusted: Option<f64>,
    /// Beyond SPEC §4.3: the smallest `p_adjusted` the resamples allow
    /// (Holm over the pair's m contrasts: m × 2/(B+1), at most 1).
    pub(super) p_adjusted_floor: Option<f64>,
}

#[derive(Serialize)]
pub(super) struct CausesOut {
    pub(super) budget: u64,
    pub(super) wrong: u64,
    pub(super) error: u64,
    pub(super) invalid: u64,
    pub(super) other: u64,
}

#[derive(Serialize)]
pub(super) struct FailureOut<'a> {
    pub(super) benchmark: &'a str,
    pub(super) run: &'a str,
    pub(super) level: u32,
    pub(super) t_mode: &'static str,
    pub(super) rollouts: u64,
    pub(super) solved: u64,
    pub(super) causes: CausesOut,
}

#[derive(Serialize)]
pub(super) struct LlrTurnRow<'a> {
    pub(super) benchmark: &'a str,
    pub(super) base: &'a str,
    pub(super) rl: &'a str,
    pub(super) run: &'a str,
    pub(super) turn: u32,
    pub(super) steps: u64,
    pub(super) mean: f64,
    #[serde(flatten)]
    pub(super) ci: CiKeys<'static>,
}

#[derive(Serialize)]
pub(super) struct NaturalTurn {
    pub(super) turn: u32,
    pub(super) error_events: u64,
    pub(super) next_ok: Option<f64>,
    pub(super) rollouts: u64,
    pub(super) recovered: Option<f64>,
}

#[derive(Serialize)]
pub(super) struct NaturalRow<'a> {
    pub(super) benchmark: &'a str,
    pub(super) run: &'a str,
    pub(super) rollouts: u64,
    pub(super) rollouts_with_error: u64,
    pub(super) error_events: u64,
    pub(super) next_ok: Option<f64>,
    #[serde(flatten)]
    pub(super) next_ok_ci: CiKeys<'static>,
    pub(super) recovered: Option<f64>,
    #[serde(flatten)]
    pub(super) recovered_ci: CiKeys<'static>,
    pub(super) by_turn: Vec<NaturalTurn>,
}

#[derive(Serialize)]
pub(super) struct NaturalDiffRow<'a> {
    pub(super) benchmark: &'a str,
    pub(super) base: &'a str,
    pub(super) rl: &'a str,
    pub(super) tasks: usize,
    pub(super) next_ok_diff: Option<f64>,
    #[serde(flatten)]
    pub(super) next_ok_ci: CiKeys<'static>,
    pub(super) recovered_diff: Option<f64>,
    #[serde(flatten)]
    pub(super) recovered_ci: CiKeys<'static>,
}

pub(super) fn ci_of(key: &'static str, e: &Option<Estimate>) -> CiKeys<'static> {
    CiKeys(key, e.map_or(Ci::Undefined, |e| e.ci))
}

#[derive(Serialize)]
pub(super) struct GrepOut<'a> {
    pub(super) benchmark: &'a str,
    pub(super) run: &'a str,
    pub(super) pattern: &'a str,
    pub(super) rollouts: u64,
    pub(super) matching: u64,
    pub(super) pass_matching: Option<f64>,
    pub(super) pass_other: Option<f64>,
}

#[derive(Serialize)]
pub(super) struct FindingRow<'a> {
    pub(super) kind: &'static str,
    #[serde(rename = "where")]
    pub(super) place: &'a str,
    pub(super) detail: &'a str,
    pub(super) severity: &'static str,
}

#[derive(Serialize)]
pub(super) struct Tool {
    pub(super) name: &'static str,
    pub(super) version: &'static str,
}

/// The whole report; sections in SPEC §3.1 order (written in key order).
#[derive(Serialize)]
pub(super) struct Report<'a> {
    pub(super) schema_version: u64,
    pub(super) tool: Tool,
    pub(super) inputs: Inputs<'a>,
    pub(super) settings: SettingsOut<'a>,
    pub(super) pass_at_kt: Vec<PassRow<'a>>,
    pub(super) pass_curve: Rows<CurveRow<'a>>,
    pub(super) token_budget: Vec<TokenRow<'a>>,
    pub(super) upper_bound: Vec<UpperRow<'a>>,
    pub(super) upper_bound_curve: Rows<UpperCurveRow<'a>>,
    pub(super) advantage: Vec<AdvantageRow<'a>>,
    pub(super) mode_gap: Vec<ModeGapRow<'a>>,
    pub(super) matched_states: Vec<Named<MatchedHead<'a>>>,
    pub(super) error_recovery: Vec<RecoveryRow<'a>>,
    pub(super) likelihood: Vec<LikelihoodRow<'a>>,
    pub(super) dynamics: Vec<DynamicsRow<'a>>,
    pub(super) divergence: Vec<DivergenceRow<'a>>,
    pub(super) cost_frontier: Vec<CostRow<'a>>,
    pub(super) cost_winners: Vec<WinnerRow<'a>>,
    pub(super) budgetmix: Vec<BudgetMixRow<'a>>,
    pub(super) pass_by_category: Vec<CategoryPassRow<'a>>,
    pub(super) advantage_by_category: Vec<CategoryAdvantageRow<'a>>,
    pub(super) category_contrast: Vec<ContrastRow<'a>>,
    pub(super) failures: Vec<FailureOut<'a>>,
    pub(super) llr_by_turn: Vec<LlrTurnRow<'a>>,
    pub(super) natural_recovery: Vec<NaturalRow<'a>>,
    pub(super) natural_recovery_diff: Vec<NaturalDiffRow<'a>>,
    /// Only with `--grep`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) grep: Option<Vec<GrepOut<'a>>>,
    pub(super) notes: &'a [String],
    /// Beyond SPEC §3.1: the headline, as in the workbench's Overview.
    pub(super) findings: Vec<FindingRow<'a>>,
}
