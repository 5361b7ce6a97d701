//! Steps, Recovery, Likelihood, Training and BudgetMix panels: tables of
//! the audit's results, formatted as report.md formats them.

use crate::analysis::dynamics::DIVERGENT_MEANS;
use crate::analysis::stats::Estimate;
use crate::analysis::{for_pair, Audit, PairNames, Part};
use crate::report::format::{
    nats, pass_cell, pct, pct_ci, pp, score_diff, share_ci, signed_ci, wilson_pct,
};
use crate::tui::app::View;
use crate::tui::select::{current, Selection};
use crate::tui::table::{Cell, Mark, TableData, Target};

fn share(x: Option<f64>, ci: Option<(f64, f64)>) -> Cell {
    Cell::num(
        format!("{} {}", pct(x), wilson_pct(ci))
            .trim_end()
            .to_string(),
        x,
    )
}

pub fn matched(a: &Audit) -> TableData {
    let mut t = TableData::new(
        "matched-states",
        "Matched states: is RL's next action better? (Wilson CIs; mean diff bootstrapped)",
        &[
            "benchmark",
            "base → RL",
            "states",
            "better",
            "tie",
            "worse",
            "mean q_RL − q_base",
        ],
    );
    for m in &a.matched {
        t.push(
            vec![
                Cell::text(&*m.benchmark),
                Cell::text(format!("{} → {}", m.base, m.rl)),
                Cell::count(m.states),
                share(m.better, m.shares_ci[0]),
                share(m.tie, m.shares_ci[1]),
                share(m.worse, m.shares_ci[2]),
                Cell::num(score_diff(&m.mean_diff), m.mean_diff.map(|e| e.value)),
            ],
            Mark::None,
            Target::Open(View::States {
                pair: PairNames::of((&m.benchmark, &m.base, &m.rl)),
                error: false,
            }),
        );
    }
    let shown = a.matched.iter().filter_map(|m| m.mean_diff).map(|e| e.ci);
    super::provisional_title(&mut t, a.settings.boot.resamples, shown);
    t
}

/// The matched states of the pair selected in the table above (`row`), by
/// turn position — the row the cursor is on, as the Likelihood and
/// Training panels' second views follow theirs.
pub fn matched_turns(a: &Audit, row: usize) -> TableData {
    let mut t = TableData::new(
        "matched-by-turn",
        "By turn position (early = turn ≤ median)",
        &["turn", "states", "RL better", "mean diff"],
    );
    let Some(m) = a.matched.get(row.min(a.matched.len().saturating_sub(1))) else {
        return t;
    };
    t.title = format!(
        "{}: {} → {} by turn (median turn {})",
        m.benchmark,
        m.base,
        m.rl,
        m.median_turn.map_or("–".into(), |x| x.to_string())
    );
    for r in &m.by_turn {
        t.push(
            vec![
                Cell::count(r.turn),
                Cell::count(r.states),
                Cell::num(share_ci(r.better, r.better_ci), r.better),
                Cell::num(score_diff(&r.estimate()), r.mean_diff),
            ],
            Mark::None,
            Target::None,
        );
    }
    for (name, h) in [("early", &m.early), ("late", &m.late)] {
        t.push(
            vec![
                Cell::text(name),
                Cell::count(h.states),
                Cell::num(share_ci(h.better, h.better_ci), h.better),
                Cell::num(score_diff(&h.mean_diff), h.mean_diff.map(|e| e.value)),
            ],
            Mark::None,
            Target::None,
        );
    }
    let halves = [m.early.mean_diff, m.late.mean_diff].into_iter().flatten();
    let shown = m.by_turn.iter().map(|r| r.ci).chain(halves.map(|e| e.ci));
    super::provisional_title(&mut t, a.settings.boot.resamples, shown);
    t
}

fn est(e: &Option<Estimate>) -> Cell {
    Cell::num(
        e.map_or("– (field absent)".into(), |e| {
            format!("{} {}", pct(Some(e.value)), pct_ci(e.ci))
        }),
        e.map(|e| e.value),
    )
}

fn diff(e: &Option<Estimate>) -> Cell {
    Cell::num(
        e.map_or("–".into(), |e| {
            format!("{} {}", pp(e.value), signed_ci(e.ci, 100.0))
        }),
        e.map(|e| e.value),
    )
}

pub fn recovery(a: &Audit, sel: &Selection) -> TableData {
    let (bench, pair) = current(a, sel);
    if pair.is_none() {
        return natural_by_run(a, bench.as_deref());
    }
    let mut t = TableData::new(
        "error-recovery",
        "Error recovery",
        &["figure", "base", "RL", "RL − base"],
    );
    // Said in the title once it is set (below).
    let shown = natural_rows(&mut t, a, bench.as_deref(), pair.as_ref());
    let resamples = a.settings.boot.resamples;
    let Some(r) = bench.and_then(|b| {
        for_pair(&a.recovery, &b, pair.as_ref(), |r| {
            (&r.benchmark, &r.base, &r.rl)
        })
    }) else {
        super::provisional_title(&mut t, resamples, shown);
        return t;
    };
    t.title = format!(
        "{}: {} → {} — {} error states ({} scored)",
        r.benchmark, r.base, r.rl, r.states, r.scored
    );
    // Each probe row opens the pair's error states.
    let states = || {
        Target::Open(View::States {
            pair: PairNames::of((&r.benchmark, &r.base, &r.rl)),
            error: true,
        })
    };
    t.push(
        vec![
            Cell::text("RL better"),
            Cell::text(""),
            share(r.better, r.better_ci),
            Cell::text(""),
        ],
        Mark::None,
        states(),
    );
    t.push(
        vec![
            Cell::text("correction"),
            est(&r.correction[0]),
            est(&r.correction[1]),
            diff(&r.correction_diff),
        ],
        Mark::None,
        states(),
    );
    t.push(
        vec![
            Cell::text("terminal success"),
            est(&r.terminal_success[0]),
            est(&r.terminal_success[1]),
            diff(&r.terminal_success_diff),
        ],
        Mark::None,
        states(),
    );
    for (label, b) in r.breakdowns() {
        // The row's n in its label: the last column keeps RL better's
        // interval whole at 120 columns.
        let n = if b.scored == b.states {
            format!("n={}", b.states)
        } else {
            format!("n={}, {} scored", b.states, b.scored)
        };
        t.push_text(
            vec![
                format!("{label} ({n})"),
                format!(
                    "corr {} term {}",
                    pct(b.correction[0]),
                    pct(b.terminal_success[0])
                ),
                format!(
                    "corr {} term {}",
                    pct(b.correction[1]),
                    pct(b.terminal_success[1])
                ),
                format!("RL better {}", share_ci(b.better, b.better_ci)),
            ],
            Mark::None,
            states(),
        );
    }
    let matched = r.estimates().into_iter().flatten().map(|e| e.ci);
    super::provisional_title(&mut t, resamples, shown.into_iter().chain(matched));
    t
}

/// §4.6 rows: error recovery in the pair's ordinary rollouts; the
/// intervals they show.
fn natural_rows(
    t: &mut TableData,
    a: &Audit,
    bench: Option<&str>,
    pair: Option<&crate::analysis::PairNames>,
) -> Vec<crate::analysis::stats::Ci> {
    let (Some(bench), Some(p)) = (bench, pair) else {
        return Vec::new();
    };
    // Their values come before their intervals (`[…]` until drawn).
    if a.is_pending(Part::NaturalRecovery) && !a.natural_values_in {
        let computing = || Cell::text("computing…");
        t.push(
            vec![
                Cell::text("rollouts: error recovery (natural recovery)"),
                computing(),
                computing(),
                computing(),
            ],
            Mark::None,
            Target::None,
        );
        return Vec::new();
    }
    let run = |name: &str| {
        a.natural_recovery
            .iter()
            .find(|n| n.benchmark == bench && n.run == name)
    };
    let (b, r) = (run(&p.base), run(&p.rl));
    if b.is_none() && r.is_none() {
        return Vec::new();
    }
    let d = a
        .natural_recovery_diff
        .iter()
        .find(|d| d.benchmark == bench && d.base == p.base && d.rl == p.rl);
    let by_turn = || {
        Target::Open(View::NaturalTurns {
            benchmark: bench.to_string(),
            runs: vec![p.base.clone(), p.rl.clone()],
        })
    };
    t.push(
        vec![
            Cell::text("rollouts: next step clean after an error"),
            with_n(b.and_then(|x| x.next_ok), b.map(|x| x.error_events)),
            with_n(r.and_then(|x| x.next_ok), r.map(|x| x.error_events)),
            paired_diff(d, |d| d.next_ok),
        ],
        Mark::None,
        by_turn(),
    );
    t.push(
        vec![
            Cell::text("rollouts: recovered (succeeded after an error)"),
            with_n(
                b.and_then(|x| x.recovered),
                b.map(|x| x.rollouts_with_error),
            ),
            with_n(
                r.and_then(|x| x.recovered),
                r.map(|x| x.rollouts_with_error),
            ),
            paired_diff(d, |d| d.recovered),
        ],
        Mark::None,
        by_turn(),
    );
    let shown = [b, r]
        .into_iter()
        .flatten()
        .flat_map(|x| [x.next_ok, x.recovered]);
    let diffs = d.into_iter().flat_map(|d| [d.next_ok, d.recovered]);
    shown.chain(diffs).flatten().map(|e| e.ci).collect()
}

/// RL − base of a natural-recovery figure: the mean over the tasks where
/// both runs have error events of each task's difference (SPEC §4.6), with
/// its n of tasks — not the difference of the pooled shares beside it.
fn paired_diff(
    d: Option<&crate::analysis::natural::RecoveryDiff>,
    figure: impl Fn(&crate::analysis::natural::RecoveryDiff) -> Option<Estimate>,
) -> Cell {
    let mut c = diff(&d.and_then(&figure));
    if let Some(d) = d.filter(|d| figure(d).is_some()) {
        // Said in the cell: beside two pooled shares, it is not their
        // difference (the demo: 80.3% → 64.2%, RL − base -3.4 pp).
        c.text = format!(
            "{} n={} tasks, mean of per-task differences",
            c.text, d.tasks
        );
    }
    c
}

/// A share with its interval and its n (`–` without an estimate).
fn with_n(e: Option<Estimate>, n: Option<u64>) -> Cell {
    let mut c = est(&e);
    if let Some(n) = n {
        c.text = format!("{} n={n}", c.text);
    }
    c
}

/// §4.6 for each run of the benchmark, where no pair sets two side by side
/// (one model's Inspect logs, say).
fn natural_by_run(a: &Audit, bench: Option<&str>) -> TableData {
    let mut t = TableData::new(
        "error-recovery",
        format!(
            "{}: error recovery in ordinary rollouts, per run (no pair: P picks one, as --compare BASE:RL, to set two side by side)",
            bench.unwrap_or("–")
        ),
        &[
            "run",
            "next step clean after an error",
            "recovered (succeeded after an error)",
        ],
    );
    for n in a
        .natural_recovery
        .iter()
        .filter(|n| Some(n.benchmark.as_str()) == bench)
    {
        t.push(
            vec![
                Cell::text(&*n.run),
                with_n(n.next_ok, Some(n.error_events)),
                with_n(n.recovered, Some(n.rollouts_with_error)),
            ],
            Mark::None,
            Target::Open(View::NaturalTurns {
                benchmark: n.benchmark.clone(),
                runs: vec![n.run.clone()],
            }),
        );
    }
    let shown = a
        .natural_recovery
        .iter()
        .filter(|n| Some(n.benchmark.as_str()) == bench)
        .flat_map(|n| [n.next_ok, n.recovered])
        .flatten()
        .map(|e| e.ci);
    super::provisional_title(&mut t, a.settings.boot.resamples, shown);
    t
}

/// The Likelihood panel's rows. Enter on one drills into the level the
/// chart shows (`llr_view`, `m`): step NLL — the pair's step LLR turn by
/// turn; trajectory LLR — the length-matched pairs.
pub fn likelihood(a: &Audit, llr_view: bool) -> TableData {
    let mut t = TableData::new(
        "likelihood",
        "Likelihood under base (successful full-budget trajectories)",
        &[
            "benchmark",
            "base → RL",
            "step NLL base",
            "step NLL RL",
            "overlap",
            "LLR base",
            "LLR RL",
            "length-matched d",
            "tasks/pairs",
        ],
    );
    for l in &a.likelihood {
        let s = |x: &Option<crate::analysis::likelihood::Summary>| {
            Cell::num(
                x.map_or("–".into(), |x| format!("{:.2} (n={})", x.mean, x.n)),
                x.map(|x| x.mean),
            )
        };
        let lm = &l.length_matched;
        t.push(
            vec![
                Cell::text(&*l.benchmark),
                Cell::text(format!("{} → {}", l.base, l.rl)),
                s(&l.step_nll[0]),
                s(&l.step_nll[1]),
                Cell::num(
                    l.overlap.map_or("–".into(), |o| format!("{o:.3}")),
                    l.overlap,
                ),
                s(&l.llr[0]),
                s(&l.llr[1]),
                Cell::num(
                    lm.mean_diff.map_or("–".into(), |e| nats(&e)),
                    lm.mean_diff.map(|e| e.value),
                ),
                Cell::text(format!("{}/{}", lm.tasks, lm.pairs)),
            ],
            if lm.mean_diff.is_some_and(|e| e.ci.above_zero()) {
                Mark::Good
            } else {
                Mark::None
            },
            Target::Open(if llr_view {
                View::LengthMatched {
                    pair: PairNames::of((&l.benchmark, &l.base, &l.rl)),
                }
            } else {
                View::LlrTurns {
                    benchmark: l.benchmark.clone(),
                    base: l.base.clone(),
                    rl: l.rl.clone(),
                }
            }),
        );
    }
    let shown = a
        .likelihood
        .iter()
        .filter_map(|l| l.length_matched.mean_diff);
    super::provisional_title(&mut t, a.settings.boot.resamples, shown.map(|e| e.ci));
    t
}

pub fn dynamics(a: &Audit) -> TableData {
    let divergent: Vec<&str> = a
        .divergence
        .iter()
        .filter(|d| d.divergent)
        .map(|d| d.run.as_str())
        .collect();
    let verdict = if divergent.is_empty() {
        format!("no run divergent ({DIVERGENT_MEANS})")
    } else {
        format!("DIVERGENT ({DIVERGENT_MEANS}): {}", divergent.join(", "))
    };
    let mut t = TableData::new(
        "dynamics",
        format!("Checkpoint metrics (slope per step, 95% t-interval) — {verdict}"),
        &[
            "run", "metric", "n", "first", "last", "change", "slope", "95% CI",
        ],
    );
    for d in &a.dynamics {
        let sig = d.slope_ci.map_or(Mark::None, |(l, h)| {
            if l > 0.0 {
                Mark::Good
            } else if h < 0.0 {
                Mark::Bad
            } else {
                Mark::None
            }
        });
        t.push(
            vec![
                Cell::text(&*d.run),
                Cell::text(&*d.metric),
                Cell::count(d.checkpoints),
                Cell::num(format!("{:.4}", d.first), Some(d.first)),
                Cell::num(format!("{:.4}", d.last), Some(d.last)),
                Cell::num(format!("{:+.4}", d.change), Some(d.change)),
                Cell::num(d.slope.map_or("–".into(), |s| format!("{s:+.2e}")), d.slope),
                Cell::text(d.slope_ci.map_or("– (< 3 points)".into(), |(l, h)| {
                    format!("[{l:+.2e}, {h:+.2e}]")
                })),
            ],
            sig,
            Target::Open(View::Checkpoints {
                run: d.run.clone(),
                metric: d.metric.clone(),
            }),
        );
    }
    t
}

pub fn budgetmix(a: &Audit, sel: &Selection) -> TableData {
    let mut t = TableData::new(
        "budgetmix-rules",
        "BudgetMix audit (Enter: violating records)",
        &["rule", "checked", "violations", "rate", "p-value", "first"],
    );
    if a.budgetmix.is_empty() {
        return t;
    }
    let b = &a.budgetmix[sel.pair % a.budgetmix.len()];
    t.title = format!(
        "BudgetMix audit of {} (p: next audited run; Enter: violating records)",
        b.run
    );
    for (i, r) in b.rules.iter().enumerate() {
        t.push(
            vec![
                Cell::text(r.rule),
                Cell::count(r.checked),
                Cell::count(r.violations),
                Cell::num(pct(r.rate()), r.rate()),
                Cell::num(
                    r.p_value.map_or("–".into(), |p| format!("{p:.4}")),
                    r.p_value,
                ),
                Cell::text(r.examples.first().cloned().unwrap_or_default()),
            ],
            if r.violations > 0 {
                Mark::VeryBad
            } else {
                Mark::Good
            },
            if r.violations > 0 && !r.trajectories.is_empty() {
                Target::Open(View::RuleRecords {
                    run: b.run.clone(),
                    rule: i,
                })
            } else {
                Target::None
            },
        );
    }
    t
}

pub fn gains(a: &Audit, sel: &Selection) -> TableData {
    let mut t = TableData::new(
        "budgetmix-gains",
        "Gain over the full-budget RL run, Pass@(1,T)",
        &[
            "benchmark",
            "level",
            "gain",
            "BudgetMix Pass@(1,T)",
            "vs",
            "its Pass@(1,T)",
        ],
    );
    if a.budgetmix.is_empty() {
        return t;
    }
    // The rules in before the gains (`budgetmix_rules_in`): what they wait
    // for.
    if a.is_pending(Part::BudgetMix) {
        t.push_text(
            vec!["gains: computing… (they read Pass@(K,T)'s values)".into()],
            Mark::None,
            Target::None,
        );
        return t;
    }
    let b = &a.budgetmix[sel.pair % a.budgetmix.len()];
    // Each side of a gain: the Pass@(1,T) cell it reads, with its interval,
    // n and mode (the gain itself is a point figure, SPEC §3.1).
    let side = |g: &crate::analysis::budgetmix::Gain, run: &str| match g.cell(&a.pass, run) {
        Some(c) => Cell::num(pass_cell(c), c.value),
        None => Cell::text("–"),
    };
    for g in &b.gains {
        t.push(
            vec![
                Cell::text(&*g.benchmark),
                Cell::num(format!("{}%", g.level), Some(g.level as f64)),
                Cell::num(pp(g.gain), Some(g.gain)),
                side(g, &b.run),
                Cell::text(&*g.vs),
                side(g, &g.vs),
            ],
            if g.gain < 0.0 { Mark::Bad } else { Mark::None },
            Target::None,
        );
    }
    for (l, g) in &b.mean_gain {
        let benchmarks = b.benchmarks_at(*l);
        t.push(
            vec![
                Cell::text("mean"),
                Cell::num(format!("{l}%"), Some(*l as f64)),
                Cell::num(pp(*g), Some(*g)),
                Cell::text(format!("over n={benchmarks} benchmark(s)")),
                Cell::text(""),
                Cell::text(""),
            ],
            Mark::None,
            Target::None,
        );
    }
    for n in &b.notes {
        t.push_text(vec![format!("note: {n}")], Mark::None, Target::None);
    }
    t
}
