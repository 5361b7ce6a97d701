//! `report.md`: matched states (SPEC §2.2).

use std::fmt::Write;

use crate::analysis::Audit;
use crate::report::format::*;

pub fn matched(md: &mut String, audit: &Audit) {
    let _ = writeln!(md, "## Single-step quality on matched states\n");
    let _ = writeln!(
        md,
        "From the same non-error state, each run proposes next actions; a candidate's score is the logged `score` or, on FrozenLake probes, the exact Q* of the action (γ = {}). RL is *better* at a state when its mean candidate score beats base's by more than 1e-9. Shares carry Wilson 95% intervals; the mean score difference is bootstrapped over tasks. The paper found RL better in only 46.8% (DeepCoder-MT) and 42.8% (FrozenLake) of states.\n",
        audit.settings.gamma
    );
    if audit.matched.is_empty() {
        let _ = writeln!(md, "_No probes with `error: false` whose candidates include both runs of a pair (fields `kind: \"probe\"`, `candidates[].run`, `score` or a `frozenlake` object)._\n");
        return;
    }
    let _ = writeln!(md, "| benchmark | base → RL | states | by source | better | tie | worse | mean q_RL − q_base |");
    let _ = writeln!(md, "|---|---|---|---|---|---|---|---|");
    for m in &audit.matched {
        let src: Vec<String> = m
            .states_by_source
            .iter()
            .map(|(k, v)| format!("{k}: {v}"))
            .collect();
        let _ = writeln!(
            md,
            "| {} | {} → {} | {} | {} | {} {} | {} {} | {} {} | {} |",
            esc(&m.benchmark),
            esc(&m.base),
            esc(&m.rl),
            m.states,
            src.join(", "),
            pct(m.better),
            wilson_pct(m.shares_ci[0]),
            pct(m.tie),
            wilson_pct(m.shares_ci[1]),
            pct(m.worse),
            wilson_pct(m.shares_ci[2]),
            score_diff(&m.mean_diff)
        );
    }
    md.push('\n');
    for m in &audit.matched {
        let _ = writeln!(
            md,
            "**{}: {} → {} by turn** (early: turn ≤ {}, the median):\n",
            esc(&m.benchmark),
            esc(&m.base),
            esc(&m.rl),
            m.median_turn.map_or("–".into(), |x| format!("{x}"))
        );
        let _ = writeln!(
            md,
            "| turn | states | RL better | mean diff |\n|---|---|---|---|"
        );
        for t in &m.by_turn {
            let _ = writeln!(
                md,
                "| {} | {} | {} | {} |",
                t.turn,
                t.states,
                share_ci(t.better, t.better_ci),
                score_diff(&t.estimate())
            );
        }
        for (name, h) in [("early", &m.early), ("late", &m.late)] {
            let _ = writeln!(
                md,
                "| {name} | {} | {} | {} |",
                h.states,
                share_ci(h.better, h.better_ci),
                score_diff(&h.mean_diff)
            );
        }
        if let Some(e) = m.mean_diff {
            let _ = writeln!(
                md,
                "\nFinding: RL is better in {} of {} matched states; its mean score differs from base by {}: {}.",
                pct(m.better),
                m.states,
                score_diff(&Some(e)),
                verdict(e.ci)
            );
        }
        if m.unscored > 0 {
            let _ = writeln!(md, "\n> {} state(s) had candidates without a `score` and no `frozenlake` object; left out.", m.unscored);
        }
        md.push('\n');
    }
}
