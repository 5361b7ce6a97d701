//! `report.md`: task categories (SPEC §4.3).

use std::fmt::Write;

use crate::analysis::Audit;
use crate::report::format::*;

pub fn categories(md: &mut String, audit: &Audit) {
    let c = &audit.categories;
    let _ = writeln!(md, "## Task categories\n");
    if c.pass.is_empty() {
        let _ = writeln!(
            md,
            "_No task carries a `category`: give trajectories a `category` (e.g. `compositional`, `sql-join`) to see Pass and Δ per kind of task and whether RL's edge differs between kinds._\n"
        );
        return;
    }
    let _ = writeln!(
        md,
        "Δ(K,T) restricted to each category's tasks, with its own paired bootstrap; and the contrast Δ_a − Δ_b between two categories, by a stratified bootstrap (tasks drawn within each category), its bootstrap p-value, and Holm's adjustment over all the contrasts of a pair. (The Pass@(K,T) paper finds RL widens the boundary only on compositional tasks.)\n"
    );
    let _ = writeln!(
        md,
        "| benchmark | category | base → RL | K | level | mode | n | Δ | 95% CI |"
    );
    let _ = writeln!(md, "|---|---|---|---|---|---|---|---|---|");
    for a in c.advantage.iter().filter(|a| a.k == 1) {
        let _ = writeln!(
            md,
            "| {} | {} | {} → {} | {} | {}% | {} | {} | {} | {} |",
            esc(&a.benchmark),
            esc(&a.category),
            esc(&a.base),
            esc(&a.rl),
            a.k,
            a.level,
            a.mode.name(),
            a.tasks,
            pp(a.delta),
            signed_ci(a.ci, 100.0)
        );
    }
    md.push('\n');
    if c.contrast.is_empty() {
        let _ = writeln!(
            md,
            "_Contrasts need two categories with tasks in a cell._\n"
        );
        return;
    }
    let _ = writeln!(
        md,
        "| benchmark | base → RL | K | level | mode | a − b | n | difference | 95% CI | p | p (Holm) |"
    );
    let _ = writeln!(md, "|---|---|---|---|---|---|---|---|---|---|---|");
    for x in c.contrast.iter().filter(|x| x.k == 1) {
        let _ = writeln!(
            md,
            "| {} | {} → {} | {} | {}% | {} | {} − {} | {}+{} | {} | {} | {} | {} |",
            esc(&x.benchmark),
            esc(&x.base),
            esc(&x.rl),
            x.k,
            x.level,
            x.mode.name(),
            esc(&x.a),
            esc(&x.b),
            x.tasks_a,
            x.tasks_b,
            pp(x.diff),
            signed_ci(x.ci, 100.0),
            p_floored(x.p_value, x.p_value_floor),
            holm_p(x)
        );
    }
    md.push('\n');
    // What the resamples allow: Holm multiplies the smallest p-value,
    // 2/(B+1) at best, by the pair's m contrasts.
    for f in &c.families {
        let _ = writeln!(
            md,
            "- {}, {} → {}: Holm over {} contrasts at {} resamples cannot give an adjusted p below **{:.4}**{}",
            esc(&f.benchmark),
            esc(&f.base),
            esc(&f.rl),
            f.contrasts,
            audit.settings.boot.resamples,
            f.p_floor,
            if f.p_floor >= 0.05 {
                format!(
                    ": no contrast can be significant at 0.05, whatever the data (`--resamples {}` or more lets one)",
                    f.resamples_needed
                )
            } else {
                "; a `≤` marks a contrast at that floor: no resample crossed 0, so its adjusted p is at most that, and more resamples would tell how far below it lies".to_string()
            }
        );
    }
    if !c.families.is_empty() {
        md.push('\n');
    }
}
