//! `report.md`: each analysis explained, tabled (percent, CI, n) and summed up.

use std::fmt::Write;

use super::format::{cell_p, cell_p_alone, code, esc, pct, pct_ci, pp, signed_ci};
use crate::analysis::passkt::Mode;
use crate::analysis::stats::Ci;
use crate::analysis::Audit;
use crate::schema::LogSet;

pub fn report(set: &LogSet, audit: &Audit, figs: &[super::figures::Figure]) -> String {
    let mut md = String::new();
    let s = &audit.settings;
    let _ = writeln!(md, "# rl-audit report\n");
    headline(&mut md, audit);
    inputs(&mut md, set, audit);
    let _ = writeln!(
        md,
        "Settings: levels {:?} (% of each task's full budget), K {:?}, {} bootstrap resamples over tasks (seed {}, {} intervals), γ = {}.\n",
        s.levels,
        audit.pass.ks,
        s.boot.resamples,
        s.boot.seed,
        s.boot.method.name(),
        s.gamma
    );
    use super::md as more;
    pass_section(&mut md, audit);
    images(&mut md, figs, "pass");
    advantage_section(&mut md, audit);
    images(&mut md, figs, "advantage");
    more::categories(&mut md, audit);
    more::failures(&mut md, audit);
    images(&mut md, figs, "failures");
    mode_gap_section(&mut md, audit);
    token_section(&mut md, audit);
    more::cost(&mut md, audit);
    images(&mut md, figs, "cost");
    more::matched(&mut md, audit);
    images(&mut md, figs, "matched");
    more::recovery(&mut md, audit);
    images(&mut md, figs, "recovery");
    more::natural(&mut md, audit);
    images(&mut md, figs, "natural");
    more::grep(&mut md, audit);
    more::likelihood(&mut md, audit);
    images(&mut md, figs, "likelihood");
    more::dynamics(&mut md, audit);
    images(&mut md, figs, "dynamics");
    more::budgetmix(&mut md, audit);
    images(&mut md, figs, "budgetmix");
    md
}

/// The headline findings (the workbench's Overview), each with its n and interval.
fn headline(md: &mut String, audit: &Audit) {
    let _ = writeln!(md, "## Headline findings\n");
    let found = super::findings::findings(audit);
    if found.is_empty() {
        let _ = writeln!(
            md,
            "Nothing stands out: no flips, no BudgetMix violations, no divergent training.\n"
        );
        return;
    }
    let _ = writeln!(md, "| finding | where | detail |\n|---|---|---|");
    for f in found {
        let _ = writeln!(
            md,
            "| {} | {} | {} |",
            esc(f.kind),
            esc(&f.place),
            esc(&f.detail)
        );
    }
    md.push('\n');
}

fn inputs(md: &mut String, set: &LogSet, audit: &Audit) {
    let _ = writeln!(md, "## Inputs\n");
    let _ = writeln!(md, "{} file(s):\n", set.files.len());
    for f in set.files.iter().take(50) {
        let _ = writeln!(md, "- {}", code(f));
    }
    if set.files.len() > 50 {
        let _ = writeln!(md, "- … and {} more", set.files.len() - 50);
    }
    let counts = set.record_counts();
    let _ = writeln!(
        md,
        "\nRecords: {} trajectories ({} evaluation, {} training), {} probes, {} checkpoints, {} run declarations.",
        counts["trajectory"],
        audit.agg.evaluation,
        audit.agg.training,
        counts["probe"],
        counts["checkpoint"],
        counts["run"]
    );
    if let Some((n, parts)) = set.skipped_summary() {
        let _ = writeln!(md, "\n**Skipped {n} bad record(s) (--lenient):** {parts}.");
    }
    if !set.unknown_kinds.is_empty() {
        let parts: Vec<String> = set
            .unknown_kinds
            .iter()
            .map(|(k, n)| format!("{n} × {}", code(k)))
            .collect();
        let _ = writeln!(
            md,
            "\nUnknown record kinds (ignored): {}.",
            parts.join(", ")
        );
    }
    if audit.pairs.is_empty() {
        let _ = writeln!(md, "\nNo run pairs are compared.");
    } else {
        let _ = writeln!(md, "\nCompared pairs (base → RL):\n");
        for p in &audit.pairs {
            let _ = writeln!(
                md,
                "- {}: {} → {}",
                esc(&p.benchmark),
                code(&p.base),
                code(&p.rl)
            );
        }
    }
    for n in &audit.notes {
        let _ = writeln!(md, "\n> Note: {n}");
    }
    md.push('\n');
}

fn pass_section(md: &mut String, audit: &Audit) {
    let p = &audit.pass;
    let _ = writeln!(md, "## Pass@(K,T): success within a turn budget\n");
    let _ = writeln!(
        md,
        "Pass@(K,T) is the chance that at least one of K attempts solves the task within T turns, estimated per task with the unbiased estimator 1 − C(n−c, K)/C(n, K) and averaged over tasks. T is a percentage of each task's full budget. *native*: rollouts that ran with budget T; *truncated*: full-budget rollouts cut at T. Intervals: 95% cluster bootstrap over tasks. `n` is the number of tasks; tasks with fewer than K rollouts are left out and counted.\n"
    );
    if p.cells.is_empty() {
        let _ = writeln!(
            md,
            "_No evaluation rollouts (trajectories without `train_step`; fields `run`, `benchmark`, `task`, `budget`, `success`) — nothing to show._\n"
        );
        return;
    }
    let benches: std::collections::BTreeSet<&String> =
        p.cells.iter().map(|c| &c.benchmark).collect();
    for b in benches {
        let _ = writeln!(md, "### {}\n", esc(b));
        for &k in &p.ks {
            let cells: Vec<_> = p
                .cells
                .iter()
                .filter(|c| &c.benchmark == b && c.k == k)
                .collect();
            if cells.is_empty() {
                continue;
            }
            let _ = writeln!(md, "**K = {k}**\n");
            let mut header = "| run | mode |".to_string();
            let mut sep = "|---|---|".to_string();
            for l in &audit.settings.levels {
                let _ = write!(header, " {l}% |");
                sep.push_str("---|");
            }
            let _ = writeln!(md, "{header}\n{sep}");
            let rows: std::collections::BTreeSet<(&String, Mode)> =
                cells.iter().map(|c| (&c.run, c.mode)).collect();
            for (run, mode) in rows {
                let mut line = format!("| {} | {} |", esc(run), mode.name());
                for &l in &audit.settings.levels {
                    match cells
                        .iter()
                        .find(|c| &c.run == run && c.mode == mode && c.level == l)
                    {
                        Some(c) => {
                            let left = if c.tasks_left_out > 0 {
                                format!(", {} left out", c.tasks_left_out)
                            } else {
                                String::new()
                            };
                            let _ = write!(
                                line,
                                " {} {} (n={}{left}) |",
                                pct(c.value),
                                pct_ci(c.ci),
                                c.tasks
                            );
                        }
                        None => line.push_str(" – |"),
                    }
                }
                let _ = writeln!(md, "{line}");
            }
            let mut ub = "| upper bound U(T) | |".to_string();
            for &l in &audit.settings.levels {
                match p.upper.iter().find(|u| &u.benchmark == b && u.level == l) {
                    Some(u) => {
                        let _ = write!(ub, " {} ({}, n={}) |", pct(Some(u.value)), u.kind, u.tasks);
                    }
                    None => ub.push_str(" – |"),
                }
            }
            let _ = writeln!(md, "{ub}\n");
        }
    }
}

fn advantage_section(md: &mut String, audit: &Audit) {
    let _ = writeln!(md, "## Advantage Δ(K,T) = Pass(RL) − Pass(base)\n");
    let _ = writeln!(
        md,
        "Mean over the tasks where both runs have at least K rollouts in the same mode, with a paired bootstrap interval (the same tasks are resampled for both runs). A *flip* is Δ < 0; a *significant flip* has its whole interval below 0. Headroom = U(T) − the better run's Pass on those tasks: how far from the structural ceiling the pair still is.\n"
    );
    if audit.pass.advantage.is_empty() {
        let _ = writeln!(
            md,
            "_No pair has rollouts on common tasks. A pair needs a run with `method: \"base\"` (or `--compare BASE:RL`) and evaluation rollouts of both runs on the same tasks._\n"
        );
        return;
    }
    many_cells(md, audit);
    let _ = writeln!(
        md,
        "| benchmark | base → RL | K | level | mode | n | Δ | 95% CI | headroom | se (pp) | p | p adj. | mde (pp) | verdict | |"
    );
    let _ = writeln!(
        md,
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
    );
    let pts = |x: Option<f64>| x.map_or("–".into(), |x| format!("{:.1}", 100.0 * x));
    for a in &audit.pass.advantage {
        let mark = if a.test.significant_flip_adjusted {
            "**flip (adjusted)**"
        } else if a.significant_flip {
            "flip (CI below 0, not after adjustment)"
        } else if a.flip {
            "flip"
        } else {
            ""
        };
        let few = if a.tasks < FEW_TASKS {
            " few tasks: intervals run narrow"
        } else {
            ""
        };
        let verdict = match a.test.tasks_needed {
            Some(n) => format!("{} (≈{n} tasks)", a.test.verdict.name()),
            None => a.test.verdict.name().to_string(),
        };
        let ci = signed_ci(a.ci, 100.0);
        let _ = writeln!(
            md,
            "| {} | {} → {} | {} | {}% | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {}{} |",
            esc(&a.benchmark),
            esc(&a.base),
            esc(&a.rl),
            a.k,
            a.level,
            a.mode.name(),
            a.tasks,
            pp(a.delta),
            ci,
            a.headroom
                .map_or("–".into(), |h| format!("{:.1} pp", 100.0 * h)),
            pts(a.test.se),
            cell_p_alone(&a.test),
            cell_p(&a.test),
            pts(a.test.mde),
            verdict,
            mark,
            few
        );
    }
    md.push('\n');
    for a in audit.pass.advantage.iter().filter(|a| a.k == 1) {
        let verdict = match a.ci {
            Ci::Interval(l, _) if l > 0.0 => "significant".to_string(),
            Ci::Interval(_, h) if h < 0.0 => "significant (a flip)".to_string(),
            Ci::Interval(..) => "not significant".to_string(),
            Ci::Degenerate => "the same difference on every task, so no interval".to_string(),
            Ci::Undefined => "no interval".to_string(),
            // Never in a finished audit.
            Ci::Pending | Ci::Provisional(..) => "interval pending".to_string(),
        };
        let dir = if a.delta >= 0.0 { "leads" } else { "trails" };
        let ci = match a.ci {
            Ci::Interval(l, h) => format!(" [CI {:+.1}, {:+.1}]", 100.0 * l, 100.0 * h),
            _ => String::new(),
        };
        let _ = writeln!(
            md,
            "- {} at {}% budget ({}, K=1, n={}): {} {dir} {} by {:.1} points{ci}: {verdict}.",
            a.benchmark,
            a.level,
            a.mode.name(),
            a.tasks,
            a.rl,
            a.base,
            100.0 * a.delta.abs()
        );
    }
    md.push('\n');
}

/// Below this many tasks, a note says the intervals run narrow (the
/// coverage example measures it: README, "How good are the intervals?").
pub const FEW_TASKS: usize = 20;

/// SPEC §4.2 in one paragraph: what adjusted means here, how many families
/// and how many cells were inconclusive.
fn many_cells(md: &mut String, audit: &Audit) {
    use crate::analysis::multiplicity::{Adjust, Verdict};
    let adv = &audit.pass.advantage;
    let families: std::collections::BTreeSet<(&str, &str, &str)> = adv
        .iter()
        .map(|a| (a.benchmark.as_str(), a.base.as_str(), a.rl.as_str()))
        .collect();
    let count = |v: Verdict| adv.iter().filter(|a| a.test.verdict == v).count();
    let s = &audit.settings;
    let how = match s.adjust {
        Adjust::MaxT => "the single-step max-|t| method (Romano–Wolf), which also gives simultaneous intervals (`ci_simultaneous`)",
        Adjust::Holm => "Holm's step-down method",
        Adjust::Bh => "the Benjamini–Hochberg step-up method (it controls the false discovery rate, not the chance of any false flip)",
        Adjust::None => "no adjustment (`--adjust none`): each cell is judged alone",
    };
    let _ = writeln!(
        md,
        "**Many cells at once.** Each pair's grid is one *family* of {} cells on average; judged one at a time at 95%, some would flip by chance alone. Every cell therefore also carries a standard error and a bootstrap p-value from *joint* resamples of the family's tasks, and an adjusted p-value by {how}. A flip counts (`significant_flip_adjusted`, what `--fail-on flip` trips on) when Δ < 0 and the adjusted p < 0.05: the chance of a false flip in a family is then at most 5%; this report has {} famil{}, so a false trip somewhere is possible with chance up to {}%. mde is the smallest difference the cell would detect with 80% power. Verdicts: {} ahead, {} flip, {} equivalent (the 90% interval inside ±{:.1} points), {} inconclusive, {} degenerate; an inconclusive cell names about how many tasks would resolve it. Cells with fewer than {FEW_TASKS} tasks are marked: there the intervals run narrow.\n",
        if families.is_empty() { 0 } else { adv.len() / families.len() },
        families.len(),
        if families.len() == 1 { "y" } else { "ies" },
        5 * families.len(),
        count(Verdict::Ahead),
        count(Verdict::Flip),
        count(Verdict::Equivalent),
        100.0 * s.min_effect,
        count(Verdict::Inconclusive),
        count(Verdict::Degenerate),
    );
    // The floor the resamples put under the adjusted p-values, and the
    // families it keeps from any verdict.
    let floors = adv.iter().filter_map(|a| a.test.p_adjusted_floor);
    let (lo, hi) = floors.fold((f64::INFINITY, 0.0f64), |(l, h), f| (l.min(f), h.max(f)));
    if lo.is_finite() {
        let range = if lo == hi {
            format!("{lo:.4}")
        } else {
            format!("{lo:.4} to {hi:.4}")
        };
        let _ = writeln!(
            md,
            "With B = {} resamples no bootstrap p-value is below 2/(B+1){}, so no adjusted p here is below {range}; `≤` marks one at that floor (more resamples would tell how far below).\n",
            s.boot.resamples,
            if s.adjust == Adjust::Holm {
                ", and Holm multiplies a family's smallest by its m cells"
            } else {
                ""
            },
        );
    }
    let out = audit.pass.families_out_of_reach(s.adjust, 0.05);
    if !out.is_empty() {
        let _ = writeln!(
            md,
            "**No cell can reach 0.05** in {} famil{}, whatever the data: no verdict there can be ahead or flip, and `--fail-on flip` cannot trip on it.\n",
            out.len(),
            if out.len() == 1 { "y" } else { "ies" },
        );
        for f in &out {
            let _ = writeln!(
                md,
                "- {} {} → {}: {}",
                esc(&f.first.benchmark),
                esc(&f.first.base),
                esc(&f.first.rl),
                super::findings::out_of_reach(audit, f)
            );
        }
        md.push('\n');
    }
}

fn mode_gap_section(md: &mut String, audit: &Audit) {
    let _ = writeln!(md, "## Native vs truncated budgets\n");
    let _ = writeln!(
        md,
        "Does a model told its budget behave differently from the same model's full-budget runs cut off at T? Mode gap = mean over tasks present in both modes of Pass(native) − Pass(truncated), paired bootstrap interval.\n"
    );
    if audit.pass.mode_gap.is_empty() {
        let _ = writeln!(
            md,
            "_No run has both native rollouts (`budget` = T) and full-budget rollouts on the same tasks at a level below 100%._\n"
        );
        return;
    }
    let _ = writeln!(
        md,
        "| benchmark | run | K | level | n | native − truncated | 95% CI |"
    );
    let _ = writeln!(md, "|---|---|---|---|---|---|---|");
    for g in &audit.pass.mode_gap {
        let _ = writeln!(
            md,
            "| {} | {} | {} | {}% | {} | {} | {} |",
            esc(&g.benchmark),
            esc(&g.run),
            g.k,
            g.level,
            g.tasks,
            pp(g.diff),
            signed_ci(g.ci, 100.0)
        );
    }
    md.push('\n');
}

fn token_section(md: &mut String, audit: &Audit) {
    let p = &audit.pass;
    let _ = writeln!(md, "## Token budgets\n");
    let _ = writeln!(
        md,
        "A turn is not a fixed cost. Here the budget is X generated tokens: a full-budget rollout counts as solved within X when it succeeded and its `output_tokens` up to the success turn sum to at most X. Default X: quartiles (nearest rank) of the full-budget rollouts' total tokens.\n"
    );
    if p.token.is_empty() {
        let _ = writeln!(
            md,
            "_No full-budget evaluation rollouts with `steps[].output_tokens` on every step._\n"
        );
        return;
    }
    for (b, n) in &p.token_left_out {
        let _ = writeln!(
            md,
            "- {b}: {n} rollout(s) left out (no steps, or a step without `output_tokens`)."
        );
    }
    let _ = writeln!(
        md,
        "\n| benchmark | run | K | tokens X | Pass | 95% CI | n |"
    );
    let _ = writeln!(md, "|---|---|---|---|---|---|---|");
    for c in &p.token {
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} | {} | {} |",
            esc(&c.benchmark),
            esc(&c.run),
            c.k,
            c.tokens,
            pct(c.value),
            pct_ci(c.ci),
            c.tasks
        );
    }
    md.push('\n');
}

/// Embeds a section's figures.
fn images(md: &mut String, figs: &[super::figures::Figure], section: &str) {
    for f in figs.iter().filter(|f| f.section == section) {
        let _ = writeln!(
            md,
            "![{}](figures/{})\n",
            esc(&f.caption.replace(['[', ']'], "")),
            f.file
        );
    }
}
