//! `--headless`: load, audit, write the report, evaluate gates.

use crate::analysis::{run_audit, Audit};
use crate::cli::{Gate, Options};
use crate::error::Result;
use crate::report;

/// Runs the headless audit; returns the reasons of tripped gates.
pub fn run(opts: &Options) -> Result<Vec<String>> {
    let set = opts.source().load(None)?;
    let audit = run_audit(&set, &opts.settings)?;
    let files = report::render(&set, &audit, opts.csv)?;
    report::write_atomic(&opts.out, &files)?;
    Ok(check_gates(&audit, &opts.gates))
}

/// One line per tripped gate.
pub fn check_gates(audit: &Audit, gates: &[Gate]) -> Vec<String> {
    let mut out = Vec::new();
    for g in gates {
        match g {
            Gate::Flip => {
                for a in audit.pass.advantage.iter().filter(|a| a.significant_flip) {
                    out.push(format!(
                        "flip: {} {} → {} at K={} level {}% ({}): Δ = {:+.1} pp with its CI below 0",
                        a.benchmark,
                        a.base,
                        a.rl,
                        a.k,
                        a.level,
                        a.mode.name(),
                        100.0 * a.delta
                    ));
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
                    if let Some(a) = audit.pass.advantage_at(p.key(), 1, *level, None) {
                        if 100.0 * a.delta < *points {
                            out.push(format!(
                                "advantage<{points}@{level}: {} {} → {} ({}): Δ = {:+.2} pp",
                                a.benchmark,
                                a.base,
                                a.rl,
                                a.mode.name(),
                                100.0 * a.delta
                            ));
                        }
                    }
                }
            }
        }
    }
    out
}

/// `--summarize OUT.parquet`: writes the per-task aggregates of the logs.
pub fn summarize(opts: &Options, out: &std::path::Path) -> Result<usize> {
    let set = opts.source().load(None)?;
    let agg = crate::schema::frames::eval_aggregates(&set)?;
    crate::schema::frames::write_aggregates(&set, &agg, out)?;
    Ok(agg.groups.values().map(Vec::len).sum())
}
