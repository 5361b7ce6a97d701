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
use crate::analysis::passkt::{every_t, PassReport};
use crate::analysis::recovery::Breakdown;
use crate::analysis::stats::{Ci, Estimate};
use crate::analysis::Audit;
use crate::schema::LogSet;

mod rows;

use rows::*;

pub const SCHEMA_VERSION: u64 = 1;

pub fn report(set: &LogSet, audit: &Audit) -> Value {
    let found = super::findings::findings(audit);
    serde_json::to_value(build(set, audit, &found, false)).unwrap_or(Value::Null)
}

/// The place of each streamed array in the bytes before it is streamed: a
/// text no report holds (names hold no control character).
const PASS_CURVE: &str = "\u{0}pass_curve";
const UPPER_CURVE: &str = "\u{0}upper_bound_curve";

/// report.json's bytes: [`report`] pretty-printed, to the byte, with the
/// curves' rows (one a turn up to the largest full budget: millions where
/// a budget is a million turns) streamed from the audit into their place
/// rather than held as JSON values.
pub fn report_bytes(set: &LogSet, audit: &Audit) -> serde_json::Result<Vec<u8>> {
    let p = &audit.pass;
    let head = serde_json::to_vec_pretty(&report_without_curves(set, audit))?;
    let place = |tag: &str| {
        let quoted = serde_json::to_vec(tag).unwrap_or_default();
        head.windows(quoted.len())
            .position(|w| w == quoted)
            .map(|at| (at, at + quoted.len()))
    };
    let (Some(curve), Some(upper)) = (place(PASS_CURVE), place(UPPER_CURVE)) else {
        return Err(serde::ser::Error::custom(
            "a streamed array's place is missing",
        ));
    };
    // As many rows as every_t gives: each t to `until`, none without values.
    let count = |values: usize, until: u32| if values == 0 { 0 } else { until as usize };
    let rows: usize = p.curve.iter().map(|c| count(c.values.len(), c.until)).sum();
    let mut out = Vec::with_capacity(head.len() + rows * 110);
    out.extend_from_slice(&head[..curve.0]);
    stream(&mut out, rows, curve_rows(p))?;
    out.extend_from_slice(&head[curve.1..upper.0]);
    stream(
        &mut out,
        p.upper_curve
            .iter()
            .map(|u| count(u.values.len(), u.until))
            .sum(),
        upper_curve_rows(p),
    )?;
    out.extend_from_slice(&head[upper.1..]);
    out.push(b'\n');
    Ok(out)
}

/// [`report`] but for the curves, whose places hold a tag (text, not a
/// table): what `--csv` makes its other tables of.
pub fn report_without_curves(set: &LogSet, audit: &Audit) -> Value {
    let found = super::findings::findings(audit);
    serde_json::to_value(build(set, audit, &found, true)).unwrap_or(Value::Null)
}

/// The curves' tables, `pass_curve` and `upper_bound_curve`: each row as
/// [`report`] holds it, one at a time.
pub fn curve_tables(audit: &Audit) -> [(&'static str, Box<dyn Iterator<Item = Value> + '_>); 2] {
    [
        (
            "pass_curve",
            Box::new(
                curve_rows(&audit.pass).map(|r| serde_json::to_value(r).unwrap_or(Value::Null)),
            ),
        ),
        (
            "upper_bound_curve",
            Box::new(
                upper_curve_rows(&audit.pass)
                    .map(|r| serde_json::to_value(r).unwrap_or(Value::Null)),
            ),
        ),
    ]
}

/// SPEC's `pass_curve` rows: every t of every curve.
fn curve_rows(p: &PassReport) -> impl Iterator<Item = CurveRow<'_>> {
    p.curve.iter().flat_map(|c| {
        every_t(&c.values, c.until).map(|(t, value)| CurveRow {
            benchmark: &c.benchmark,
            run: &c.run,
            k: c.k,
            t,
            value,
        })
    })
}

/// SPEC's `upper_bound_curve` rows: every t of every benchmark's bound.
fn upper_curve_rows(p: &PassReport) -> impl Iterator<Item = UpperCurveRow<'_>> {
    p.upper_curve.iter().flat_map(|u| {
        every_t(&u.values, u.until).map(|(t, value)| UpperCurveRow {
            benchmark: &u.benchmark,
            t,
            value,
            kind: u.kind,
        })
    })
}

/// `rows` (`len` of them) as a pretty-printed JSON array at the depth of
/// report.json's top-level keys, as serde_json prints an array of them
/// there (an empty one `[]`).
fn stream<T: Serialize>(
    out: &mut Vec<u8>,
    len: usize,
    rows: impl Iterator<Item = T>,
) -> serde_json::Result<()> {
    use serde::ser::SerializeSeq;
    use serde_json::ser::Formatter;
    let mut f = serde_json::ser::PrettyFormatter::new();
    // Inside the top-level object, as the array's key is.
    f.begin_object(&mut std::io::sink())
        .map_err(serde_json::Error::io)?;
    let mut ser = serde_json::Serializer::with_formatter(out, f);
    let mut seq = ser.serialize_seq(Some(len))?;
    for r in rows {
        seq.serialize_element(&r)?;
    }
    SerializeSeq::end(seq)
}

/// The report's rows, the findings given (they are made from the audit);
/// `streamed`: the curves' places held for [`report_bytes`].
fn build<'a>(
    set: &'a LogSet,
    audit: &'a Audit,
    found: &'a [super::findings::Finding],
    streamed: bool,
) -> Report<'a> {
    let s = &audit.settings;
    let p = &audit.pass;
    Report {
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
        pass_curve: match streamed {
            true => Rows::Streamed(PASS_CURVE),
            false => Rows::Given(curve_rows(p).collect()),
        },
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
        upper_bound_curve: match streamed {
            true => Rows::Streamed(UPPER_CURVE),
            false => Rows::Given(upper_curve_rows(p).collect()),
        },
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
    }
}
