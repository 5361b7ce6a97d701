//! `report.md`: error recovery in ordinary rollouts (SPEC §4.6).

use std::fmt::Write;

use crate::analysis::stats::Estimate;
use crate::analysis::Audit;
use crate::report::format::*;

fn share(e: &Option<Estimate>) -> String {
    e.map_or("–".into(), |e| {
        format!("{} {}", pct(Some(e.value)), pct_ci(e.ci))
    })
}

pub fn natural(md: &mut String, audit: &Audit) {
    let _ = writeln!(md, "## Error recovery in ordinary rollouts\n");
    if audit.natural_recovery.is_empty() {
        let _ = writeln!(
            md,
            "_Needs full-budget evaluation rollouts whose steps all carry `error` (failed tool calls, invalid moves)._\n"
        );
        return;
    }
    let _ = writeln!(
        md,
        "The paper's question — is RL's gain recovery? — asked of ordinary rollouts, without probe experiments. An *error event* is a step with `error: true` that is not the rollout's last; *next step clean* is the share of error events followed by a step without an error; *recovered* the share of rollouts with an error event that still succeeded. Pooled over a run's rollouts, 95% cluster-bootstrap intervals over tasks; RL − base is the mean, over the tasks where both runs have error events, of each task's difference (paired): weighted by task, not by event or rollout, so it can differ from the difference of the pooled shares above.\n"
    );
    let _ = writeln!(md, "| benchmark | run | rollouts | with an error | error events | next step clean | recovered |");
    let _ = writeln!(md, "|---|---|---|---|---|---|---|");
    for n in &audit.natural_recovery {
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} | {} | {} |",
            esc(&n.benchmark),
            esc(&n.run),
            n.rollouts,
            n.rollouts_with_error,
            n.error_events,
            share(&n.next_ok),
            share(&n.recovered)
        );
    }
    md.push('\n');
    if !audit.natural_recovery_diff.is_empty() {
        let _ = writeln!(
            md,
            "| benchmark | base → RL | tasks | next step clean, RL − base | recovered, RL − base |"
        );
        let _ = writeln!(md, "|---|---|---|---|---|");
        for d in &audit.natural_recovery_diff {
            let _ = writeln!(
                md,
                "| {} | {} → {} | {} | {} | {} |",
                esc(&d.benchmark),
                esc(&d.base),
                esc(&d.rl),
                d.tasks,
                est_pp(&d.next_ok),
                est_pp(&d.recovered)
            );
        }
        md.push('\n');
    }
    // §4.6's `by_turn`: next step clean by the turn of the error event,
    // recovered by the turn of a rollout's first error event.
    for n in audit
        .natural_recovery
        .iter()
        .filter(|n| !n.by_turn.is_empty())
    {
        let _ = writeln!(
            md,
            "**{}: {} by turn** (point figures, each with its n):\n\n| turn | next step clean (n error events) | recovered (n rollouts, by first error) |\n|---|---|---|",
            esc(&n.benchmark),
            esc(&n.run)
        );
        for t in &n.by_turn {
            let _ = writeln!(
                md,
                "| {} | {} | {} |",
                t.turn,
                share_n(t.next_ok, t.error_events),
                share_n(t.recovered, t.rollouts)
            );
        }
        md.push('\n');
    }
}

/// `--grep`: the behaviour split.
pub fn grep(md: &mut String, audit: &Audit) {
    if audit.settings.grep.is_empty() {
        return;
    }
    let _ = writeln!(md, "## Rollouts whose actions match a pattern (`--grep`)\n");
    let _ = writeln!(
        md,
        "Full-budget evaluation rollouts with at least one action matching the regular expression, and how often they succeed: the mean over tasks having such rollouts of the share of them that succeeded, against the same for the other rollouts.\n"
    );
    let _ = writeln!(
        md,
        "| benchmark | run | pattern | rollouts | matching | success, matching | success, others |"
    );
    let _ = writeln!(md, "|---|---|---|---|---|---|---|");
    for g in &audit.grep {
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} | {} | {} |",
            esc(&g.benchmark),
            esc(&g.run),
            code_cell(&g.pattern),
            g.rollouts,
            g.matching,
            pct(g.pass_matching),
            pct(g.pass_other)
        );
    }
    md.push('\n');
}
