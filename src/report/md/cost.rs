//! `report.md`: the cost frontier (SPEC §2.7).

use std::fmt::Write;

use crate::analysis::Audit;
use crate::report::format::*;

pub fn cost(md: &mut String, audit: &Audit) {
    let c = audit.settings.cost;
    let _ = writeln!(
        md,
        "## Cost frontier: more samples, more turns, or a better model?\n"
    );
    let _ = writeln!(
        md,
        "Each (run, K, level, mode) cell is a point: expected cost per task = K × the mean cost of one attempt (a turn costs {}, a token {}), against its Pass@(K,T). A point is on its run's frontier unless another point of the same run costs no more and passes no less. The winner at a cost ceiling is the best point affordable under it: the best point estimate, not a test between runs — read its 95% interval and n beside the others'.\n",
        c.turn, c.token
    );
    if audit.cost_frontier.is_empty() {
        let _ = writeln!(md, "_No Pass@(K,T) cells to price._\n");
        return;
    }
    let _ = writeln!(md, "| benchmark | cost from | cost to | winner | K | level | mode | Pass | 95% CI | n tasks |\n|---|---|---|---|---|---|---|---|---|---|");
    for w in &audit.cost_winners {
        // The winning point's Pass@(K,T) cell: its interval and n.
        let cell = audit
            .pass
            .cell(&w.benchmark, &w.run, w.k, w.level, Some(w.mode));
        let _ = writeln!(
            md,
            "| {} | {:.2} | {} | {} | {} | {}% | {} | {} | {} | {} |",
            esc(&w.benchmark),
            w.from_cost,
            w.to_cost.map_or("∞".into(), |t| format!("{t:.2}")),
            esc(&w.run),
            w.k,
            w.level,
            w.mode.name(),
            pct(Some(w.pass)),
            cell.map_or("–".into(), |c| pct_ci(c.ci)),
            cell.map_or("–".into(), |c| c.tasks.to_string())
        );
    }
    md.push('\n');
    let unit = if c.token == 0.0 && c.turn == 1.0 {
        "turns"
    } else {
        "cost units"
    };
    let benches: std::collections::BTreeSet<&String> =
        audit.cost_winners.iter().map(|w| &w.benchmark).collect();
    for b in benches {
        let rows: Vec<_> = audit
            .cost_winners
            .iter()
            .filter(|w| &w.benchmark == b)
            .collect();
        let parts: Vec<String> = rows
            .iter()
            .map(|w| {
                let choice = format!(
                    "{} with K={} at {}% budget ({})",
                    w.run,
                    w.k,
                    w.level,
                    w.mode.name()
                );
                match w.to_cost {
                    Some(t) => format!(
                        "from {:.2} to {:.2} {unit} per task, {choice} wins",
                        w.from_cost, t
                    ),
                    None => format!("from {:.2} {unit} per task up, {choice} wins", w.from_cost),
                }
            })
            .collect();
        let _ = writeln!(md, "- {b}: {}.", parts.join("; "));
    }
    md.push('\n');
}
