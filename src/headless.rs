//! `--headless`: load, audit, write the report, evaluate gates.

use crate::analysis::{run_audit, Audit};
use crate::cli::{Gate, Options};
use crate::error::Result;
use crate::report;

/// What the gates say: one line per tripped gate, and notes on gates that
/// could not be judged (a missing or degenerate cell).
#[derive(Debug, Default, PartialEq)]
pub struct Gates {
    pub tripped: Vec<String>,
    pub notes: Vec<String>,
}

/// Runs the headless audit; returns what the gates say.
pub fn run(opts: &Options) -> Result<Gates> {
    run_holding(opts).map(|(gates, _)| gates)
}

/// [`run`] for a process that exits as soon as it returns (the command
/// line): the loaded rollouts and the audit are never freed one by one —
/// the exit hands their pages back at once, where freeing them took 0.02 s
/// at 1.1 M rollouts and 0.23 s at 11 M (README, session 39).
pub fn run_to_exit(opts: &Options) -> Result<Gates> {
    let (gates, held) = run_holding(opts)?;
    std::mem::forget(held);
    Ok(gates)
}

/// [`run`], handing back what it loaded and found beside the gates.
fn run_holding(opts: &Options) -> Result<(Gates, (crate::schema::LogSet, Audit))> {
    let mut clock = crate::stage::StageClock::from_env();
    let mut set = opts.source().load(None)?;
    // Read once, by the likelihood analyses: out of memory until then.
    set.spill_logps();
    clock.lap("load + validate");
    let audit = run_audit(&set, &opts.settings)?;
    let mut clock = crate::stage::StageClock::from_env();
    let files = report::render(
        &set,
        &audit,
        opts.csv,
        opts.tour.then(|| crate::tour::markdown(&audit)).as_deref(),
    )?;
    clock.lap("report and figures");
    report::write_atomic(&opts.out, &files)?;
    clock.lap("write");
    Ok((check_gates(&audit, &opts.gates), (set, audit)))
}

/// A gate's cell: `base → rl on bench at K=1 level 50% (native): Δ = -75.0 pp
/// [-100.0, -50.0], n=40 tasks, {why}`, every gate's line alike. Δ has one
/// decimal, or `decimals` where a gate compares it with a threshold given
/// to more (`advantage<X@L`: −3.704 below −3.7 reads `-3.70`, not `-3.7`).
fn cell_line(a: &crate::analysis::passkt::Advantage, decimals: usize, why: &str) -> String {
    format!(
        "{} → {} on {} at K={} level {}% ({}): Δ = {:+.decimals$} pp {}, n={} tasks, {why}",
        a.base,
        a.rl,
        a.benchmark,
        a.k,
        a.level,
        a.mode.name(),
        100.0 * a.delta,
        crate::report::format::signed_ci(a.ci, 100.0),
        a.tasks
    )
}

/// Evaluates the `--fail-on` gates.
pub fn check_gates(audit: &Audit, gates: &[Gate]) -> Gates {
    let mut g_out = Gates::default();
    let out = &mut g_out.tripped;
    for g in gates {
        // A gate with nothing to read cannot trip: said, so that a pipeline
        // gating on it does not pass for want of a pair or an audited run.
        let nothing = match g {
            Gate::Budgetmix if audit.budgetmix.is_empty() => {
                Some("no run is audited as BudgetMix (method budgetmix, or --audit RUN)")
            }
            Gate::Budgetmix => None,
            _ if audit.pairs.is_empty() => {
                Some("no pair of runs is compared (a run says method: base, or --compare BASE:RL, makes one)")
            }
            _ => None,
        };
        if let Some(why) = nothing {
            g_out
                .notes
                .push(format!("{}: {why} (not judged)", g.name()));
            continue;
        }
        match g {
            Gate::Flip => {
                for a in audit
                    .pass
                    .advantage
                    .iter()
                    .filter(|a| a.test.significant_flip_adjusted)
                {
                    out.push(format!(
                        "flip: {}",
                        cell_line(
                            a,
                            1,
                            &format!(
                                "with adjusted p {} ({})",
                                crate::report::format::cell_p(&a.test),
                                audit.settings.adjust.name()
                            )
                        )
                    ));
                }
                // Where no adjusted p can fall below 0.05, the gate is
                // blind, whatever the data: said, not tripped.
                for f in audit
                    .pass
                    .families_out_of_reach(audit.settings.adjust, 0.05)
                {
                    g_out.notes.push(format!(
                        "flip: {} {} → {}: no cell's adjusted p can fall below 0.05 ({}), so this gate cannot trip there",
                        f.first.benchmark,
                        f.first.base,
                        f.first.rl,
                        crate::report::findings::out_of_reach(audit, &f)
                    ));
                }
            }
            Gate::FlipUnadjusted => {
                for a in audit.pass.advantage.iter().filter(|a| a.significant_flip) {
                    out.push(format!(
                        "flip-unadjusted: {}",
                        cell_line(a, 1, "with its CI below 0")
                    ));
                }
            }
            Gate::Inconclusive { level } => {
                use crate::analysis::multiplicity::Verdict;
                for p in &audit.pairs {
                    let what = format!("{} → {} on {}", p.base, p.rl, p.benchmark);
                    match audit.pass.advantage_at(p.key(), 1, *level, None) {
                        Some(a) if a.test.verdict == Verdict::Inconclusive => out.push(format!(
                            "inconclusive@{level}: {}",
                            cell_line(
                                a,
                                1,
                                &crate::report::format::undecided(
                                    &a.test,
                                    audit.settings.adjust,
                                    audit.settings.boot.resamples
                                )
                            )
                        )),
                        Some(a) if a.test.verdict == Verdict::Degenerate => {
                            g_out.notes.push(format!(
                            "inconclusive@{level}: {what}: the K=1 cell is degenerate (not judged)"
                        ))
                        }
                        Some(_) => {}
                        None => g_out.notes.push(format!(
                            "inconclusive@{level}: {what}: no K=1 cell at {level}% (not judged)"
                        )),
                    }
                }
            }
            Gate::Budgetmix => {
                for b in &audit.budgetmix {
                    for r in b.rules.iter().filter(|r| r.violations > 0) {
                        out.push(format!(
                            "budgetmix: {} {}: {} violation(s) of {} checked",
                            b.run, r.rule, r.violations, r.checked
                        ));
                    }
                }
            }
            Gate::AdvantageBelow { points, level } => {
                for p in &audit.pairs {
                    // Preferred mode: native where it exists.
                    let Some(a) = audit.pass.advantage_at(p.key(), 1, *level, None) else {
                        g_out.notes.push(format!(
                            "{}: {} → {} on {}: no K=1 cell at {level}% (not judged)",
                            g.name(),
                            p.base,
                            p.rl,
                            p.benchmark
                        ));
                        continue;
                    };
                    if 100.0 * a.delta < *points {
                        // The gate reads Δ itself; where its interval
                        // reaches the threshold, the trip is within noise,
                        // and the line says so.
                        let noise = match a.ci {
                            crate::analysis::stats::Ci::Interval(_, hi)
                                if 100.0 * hi >= *points =>
                            {
                                format!("; its 95% interval reaches {points} pp: within noise of the threshold")
                            }
                            _ => String::new(),
                        };
                        out.push(format!(
                            "{}: {}",
                            g.name(),
                            cell_line(a, 2, &format!("below {points} pp{noise}"))
                        ));
                    }
                }
            }
        }
    }
    g_out
}

/// What `--summarize` wrote.
pub enum Summarized {
    /// A full summary: records and bytes.
    Summary(crate::schema::summary::Written),
    /// Pass@(K,T) per-task aggregate rows (`.parquet`).
    Aggregates(usize),
}

/// `--summarize OUT`: the full summary (`.jsonl`, `.jsonl.zst`, `.jsonl.gz`)
/// or the Pass@(K,T) per-task aggregates (`.parquet`; the CLI takes no
/// other name).
pub fn summarize(opts: &Options, out: &std::path::Path) -> Result<Summarized> {
    let set = opts.source().load(None)?;
    if crate::schema::summary::is_summary_name(out) {
        return crate::schema::summary::write(&set, out).map(Summarized::Summary);
    }
    let agg = crate::schema::frames::eval_aggregates(&set);
    crate::schema::frames::write_aggregates(&set, &agg, out)?;
    Ok(Summarized::Aggregates(
        agg.groups.values().map(Vec::len).sum(),
    ))
}
