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
    let prob = |x: Option<f64>| x.map_or("–".into(), |x| format!("{x:.4}"));
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
            prob(x.p_value),
            prob(x.p_adjusted)
        );
    }
    md.push('\n');
}
