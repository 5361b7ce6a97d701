//! `report.md`: the BudgetMix audit (SPEC §2.6).

use std::fmt::Write;

use crate::analysis::Audit;
use crate::report::format::*;

pub fn budgetmix(md: &mut String, audit: &Audit) {
    let _ = writeln!(md, "## BudgetMix audit\n");
    let _ = writeln!(
        md,
        "BudgetMix trains with budgets drawn uniformly from 10% steps of the full budget, one budget per GRPO group, the budget disclosed in the prompt, and zero reward for running out. The six rules check that the training rollouts did so; the gain table compares Pass@(1,T) against the full-budget RL run (paper: +7.5, +5.3, +4.0 points at 25/50/75%, ±0 at 100%).\n"
    );
    if audit.budgetmix.is_empty() {
        let _ = writeln!(md, "_No audited run: give a run `method: \"budgetmix\"` or name it with `--audit RUN`; rules read training rollouts (`train_step`, `group`, `steps[].budget_total`, `steps[].budget_remaining`, `reward`)._\n");
        unaudited(md, audit);
        return;
    }
    for b in &audit.budgetmix {
        let _ = writeln!(md, "### {}\n", esc(&b.run));
        let _ = writeln!(md, "| rule | checked | violations | rate | p-value | first violations |\n|---|---|---|---|---|---|");
        for r in &b.rules {
            let _ = writeln!(
                md,
                "| {} | {} | {} | {} | {} | {} |",
                r.rule,
                r.checked,
                r.violations,
                pct(r.rate()),
                r.p_value.map_or("–".into(), |p| format!("{p:.4}")),
                r.examples
                    .iter()
                    .take(3)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
        if !b.gains.is_empty() {
            let _ = writeln!(
                md,
                "\n| benchmark | level | gain | {} Pass@(1,T) | vs | its Pass@(1,T) |\n|---|---|---|---|---|---|",
                esc(&b.run)
            );
            let side = |g: &crate::analysis::budgetmix::Gain, run: &str| {
                g.cell(&audit.pass, run).map_or("–".into(), pass_cell)
            };
            for g in &b.gains {
                let _ = writeln!(
                    md,
                    "| {} | {}% | {} | {} | {} | {} |",
                    esc(&g.benchmark),
                    g.level,
                    pp(g.gain),
                    side(g, &b.run),
                    esc(&g.vs),
                    side(g, &g.vs)
                );
            }
            for (l, g) in &b.mean_gain {
                let _ = writeln!(
                    md,
                    "| mean | {l}% | {} | over n={} benchmark(s) | | |",
                    pp(*g),
                    b.benchmarks_at(*l)
                );
            }
        }
        for n in &b.notes {
            let _ = writeln!(md, "\n> Note: {n}");
        }
        md.push('\n');
    }
    unaudited(md, audit);
}

/// The runs whose training rollouts are not audited, and how to audit
/// one: a trainer's dump names no method, so its run is found here.
fn unaudited(md: &mut String, audit: &Audit) {
    let runs: Vec<String> = audit
        .unaudited_training()
        .map(|r| format!("{} ({} rollouts)", code(&r.run), r.rollouts))
        .collect();
    if !runs.is_empty() {
        let _ = writeln!(
            md,
            "Training rollouts not audited: {}. `--audit RUN` audits a run's.\n",
            runs.join(", ")
        );
    }
}
