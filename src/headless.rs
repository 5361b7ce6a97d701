//! `--headless`: load, audit, write the report, evaluate gates.

use crate::analysis::{run_audit, Audit};
use crate::cli::{Gate, Options};
use crate::error::Result;
use crate::report;
use crate::schema::{load, LoadOptions, LogSet};

/// Loads the log set named by the options (the bundled demo when no path is given).
pub fn load_logs(opts: &Options) -> Result<LogSet> {
    load_logs_with(opts, None)
}

/// As [`load_logs`], reporting progress to `progress`.
pub fn load_logs_with(
    opts: &Options,
    progress: Option<std::sync::Arc<crate::schema::load::Progress>>,
) -> Result<LogSet> {
    let lo = load_options(opts, progress)?;
    if opts.paths.is_empty() {
        crate::demo::load_demo(&lo)
    } else {
        load(&opts.paths, &lo)
    }
}

/// For `--follow`: a full load that notes how far each file was read, or —
/// given the previous load — only what was appended since (falling back to
/// a full load when anything else changed).
pub fn load_logs_following(
    opts: &Options,
    progress: Option<std::sync::Arc<crate::schema::load::Progress>>,
    previous: Option<(&LogSet, &crate::schema::load::Tracked)>,
) -> Result<(Option<LogSet>, Option<crate::schema::load::Tracked>)> {
    use crate::schema::follow::{load_more, More};
    let lo = load_options(opts, progress)?;
    if opts.paths.is_empty() {
        return Ok((Some(crate::demo::load_demo(&lo)?), None));
    }
    if let Some((set, tracked)) = previous {
        match load_more(set, tracked, &opts.paths, &lo)? {
            More::Unchanged => return Ok((None, Some(tracked.clone()))),
            More::Grown(set, t) => return Ok((Some(*set), Some(t))),
            More::Reload => {}
        }
    }
    let (set, t) = crate::schema::load::load_tracked(&opts.paths, &lo)?;
    Ok((Some(set), Some(t)))
}

fn load_options(
    opts: &Options,
    progress: Option<std::sync::Arc<crate::schema::load::Progress>>,
) -> Result<LoadOptions> {
    let mapping = match &opts.map {
        Some(p) => {
            let text = std::fs::read_to_string(p)
                .map_err(|e| crate::error::Error::file(p.display(), e.to_string()))?;
            let m = crate::schema::mapping::Mapping::parse(&p.display().to_string(), &text)
                .map_err(|e| crate::error::Error::file(p.display(), format!("bad mapping: {e}")))?;
            Some(std::sync::Arc::new(m))
        }
        None => None,
    };
    Ok(LoadOptions {
        lenient: opts.lenient,
        skip_dir: opts.headless.then(|| opts.out.clone()),
        follow: opts.follow,
        progress,
        mapping,
        inspect: opts.inspect.clone(),
        window: None,
    })
}

/// Runs the headless audit; returns the reasons of tripped gates.
pub fn run(opts: &Options) -> Result<Vec<String>> {
    let set = load_logs(opts)?;
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
                    let rows: Vec<_> = audit
                        .pass
                        .advantage
                        .iter()
                        .filter(|a| {
                            a.benchmark == p.benchmark
                                && a.base == p.base
                                && a.rl == p.rl
                                && a.k == 1
                                && a.level == *level
                        })
                        .collect();
                    // Preferred mode: native where it exists.
                    let pick = rows
                        .iter()
                        .find(|a| a.mode == crate::analysis::passkt::Mode::Native)
                        .or_else(|| rows.first());
                    if let Some(a) = pick {
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
    let set = load_logs(opts)?;
    let agg = crate::schema::frames::eval_aggregates(&set)?;
    crate::schema::frames::write_aggregates(&set, &agg, out)?;
    Ok(agg.groups.values().map(Vec::len).sum())
}
