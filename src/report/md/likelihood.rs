//! `report.md`: likelihood (SPEC §2.4).

use std::fmt::Write;

use crate::analysis::Audit;
use crate::report::format::*;

pub fn likelihood(md: &mut String, audit: &Audit) {
    let _ = writeln!(md, "## Likelihood: locally plausible, globally different\n");
    let _ = writeln!(
        md,
        "On successful full-budget trajectories. *Step NLL*: −log π_base(action) of each step, by producing run; heavily overlapping distributions mean RL's single actions stay inside base's support. *LLR*: Σ over steps of log π_RL − log π_base. *Length-matched*: RL and base trajectories of the same task with output tokens within 10% of the longer, paired greedily by closeness; mean paired LLR difference with a cluster bootstrap over tasks. The paper: step NLL 12.20 (RL) vs 10.25 (base); length-matched 185.9 nats (Terminal) and 805.8 (BFCL).\n"
    );
    if audit.likelihood.is_empty() {
        let _ = writeln!(md, "_No successful full-budget evaluation rollouts for a pair; this needs `steps[].logp` with both runs and `steps[].output_tokens`._\n");
        return;
    }
    let _ = writeln!(md, "| benchmark | base → RL | step NLL base (n) | step NLL RL (n) | overlap | LLR base (n) | LLR RL (n) | length-matched d | tasks / pairs |");
    let _ = writeln!(md, "|---|---|---|---|---|---|---|---|---|");
    for l in &audit.likelihood {
        let s = |x: &Option<crate::analysis::likelihood::Summary>| {
            x.map_or("–".into(), |x| {
                format!("{:.2} (median {:.2}, n={})", x.mean, x.median, x.n)
            })
        };
        let lm = &l.length_matched;
        let _ = writeln!(
            md,
            "| {} | {} → {} | {} | {} | {} | {} | {} | {} | {} / {} |",
            esc(&l.benchmark),
            esc(&l.base),
            esc(&l.rl),
            s(&l.step_nll[0]),
            s(&l.step_nll[1]),
            l.overlap.map_or("–".into(), |o| format!("{o:.3}")),
            s(&l.llr[0]),
            s(&l.llr[1]),
            lm.mean_diff.map_or("–".into(), |e| nats(&e)),
            lm.tasks,
            lm.pairs
        );
    }
    md.push('\n');
    for l in &audit.likelihood {
        if let Some(e) = l.length_matched.mean_diff {
            let _ = writeln!(
                md,
                "- {}: length-matched RL − base LLR is {} over {} pairs from {} tasks: {}.",
                l.benchmark,
                nats(&e),
                l.length_matched.pairs,
                l.length_matched.tasks,
                if e.ci.above_zero() {
                    "above zero"
                } else {
                    "not clearly above zero"
                }
            );
        }
        for n in &l.notes {
            let _ = writeln!(md, "- {}: {n}", l.benchmark);
        }
    }
    md.push('\n');
}
