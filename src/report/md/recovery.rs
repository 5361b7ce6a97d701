//! `report.md`: error recovery (SPEC §2.3).

use std::fmt::Write;

use crate::analysis::stats::Estimate;
use crate::analysis::Audit;
use crate::report::format::*;

pub fn recovery(md: &mut String, audit: &Audit) {
    let _ = writeln!(md, "## Error recovery\n");
    let _ = writeln!(
        md,
        "States right after an error action (`error: true` probes), the same prefixes for both runs. *Correction*: share of a run's candidates that fix the error (`corrects`); *terminal success*: share whose continuation ended in success (`terminal_success`); both averaged over states, bootstrapped over tasks, and differenced per state (paired). The paper: RL better in 65.7% / 67.3% of error states; correction 41.4% vs 27.2% on BFCL.\n"
    );
    if audit.recovery.is_empty() {
        let _ = writeln!(
            md,
            "_No probes with `error: true` whose candidates include both runs of a pair._\n"
        );
        return;
    }
    for r in &audit.recovery {
        let _ = writeln!(
            md,
            "### {}: {} → {}\n",
            esc(&r.benchmark),
            esc(&r.base),
            esc(&r.rl)
        );
        let _ = writeln!(
            md,
            "Error states: {} ({} with scores for both runs). RL better: {} {}.\n",
            r.states,
            r.scored,
            pct(r.better),
            wilson_pct(r.better_ci)
        );
        let _ = writeln!(
            md,
            "| figure | {} | {} | RL − base |\n|---|---|---|---|",
            esc(&r.base),
            esc(&r.rl)
        );
        for (name, field, v, d) in [
            ("correction", "corrects", &r.correction, &r.correction_diff),
            (
                "terminal success",
                "terminal_success",
                &r.terminal_success,
                &r.terminal_success_diff,
            ),
        ] {
            if v.iter().all(Option::is_none) {
                let _ = writeln!(md, "| {name} | – | – | – (no candidate has `{field}`) |");
                continue;
            }
            let cell = |e: &Option<Estimate>| {
                e.map_or("–".into(), |e| {
                    format!("{} {}", pct(Some(e.value)), pct_ci(e.ci))
                })
            };
            let _ = writeln!(
                md,
                "| {name} | {} | {} | {} |",
                cell(&v[0]),
                cell(&v[1]),
                est_pp(d)
            );
        }
        let _ = writeln!(md, "\n| by | states | RL better | correction base / RL | terminal success base / RL |\n|---|---|---|---|---|");
        for (label, b) in r.breakdowns() {
            let _ = writeln!(
                md,
                "| {} | {} | {} | {} / {} | {} / {} |",
                esc(&label),
                b.states,
                share_ci(b.better, b.better_ci),
                pct(b.correction[0]),
                pct(b.correction[1]),
                pct(b.terminal_success[0]),
                pct(b.terminal_success[1])
            );
        }
        md.push('\n');
    }
}
