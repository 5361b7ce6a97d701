//! `report.md`: failure anatomy (SPEC §4.4).

use std::fmt::Write;

use crate::analysis::Audit;
use crate::report::format::*;

pub fn failures(md: &mut String, audit: &Audit) {
    let _ = writeln!(md, "## Why rollouts fail\n");
    if audit.failures.is_empty() {
        let _ = writeln!(md, "_No evaluation rollouts._\n");
        return;
    }
    let _ = writeln!(
        md,
        "Over each cell's rollouts (not task means): solved within T, or failed — *budget* when it used more than T turns or succeeded only after T, otherwise its `termination` (given, set by the importer, or derived: `budget` when turns ≥ its budget, else `wrong`). Shares of the cell's rollouts; the counts add up.\n"
    );
    let _ = writeln!(
        md,
        "| benchmark | run | level | mode | rollouts | solved | budget | wrong | error | invalid | other |"
    );
    let _ = writeln!(md, "|---|---|---|---|---|---|---|---|---|---|---|");
    for f in &audit.failures {
        let c = &f.counts;
        let share = |x: u64| format!("{} ({x})", pct(Some(x as f64 / c.rollouts.max(1) as f64)));
        let _ = writeln!(
            md,
            "| {} | {} | {}% | {} | {} | {} | {} | {} | {} | {} | {} |",
            esc(&f.benchmark),
            esc(&f.run),
            f.level,
            f.mode.name(),
            c.rollouts,
            share(c.solved),
            share(c.causes[0]),
            share(c.causes[1]),
            share(c.causes[2]),
            share(c.causes[3]),
            share(c.causes[4])
        );
    }
    md.push('\n');
}
