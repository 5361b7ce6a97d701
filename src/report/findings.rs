//! Headline findings: what stands out in an audit, in a few lines — the
//! Overview panel of the workbench, the top of `report.md` and `findings`
//! in `report.json`, from one list so they always agree.

use crate::analysis::Audit;

use super::format::{pct, pp, signed_ci, wilson_pct};

/// How a finding reads: good news, neutral, a warning, or a problem.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    Good,
    Info,
    Warning,
    Problem,
}

impl Severity {
    pub fn name(self) -> &'static str {
        match self {
            Severity::Good => "good",
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Problem => "problem",
        }
    }
}

/// One line of the headline.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    pub kind: &'static str,
    pub place: String,
    pub detail: String,
    pub severity: Severity,
    /// The workbench panel that explains it (0-based).
    pub panel: usize,
}

pub fn findings(a: &Audit) -> Vec<Finding> {
    let mut out = Vec::new();
    let delta = |adv: &crate::analysis::passkt::Advantage| {
        // Numbers first: a narrow terminal cuts the end of the line.
        format!(
            "Δ {} {}, n={} tasks: {} → {}",
            pp(adv.delta),
            signed_ci(adv.ci, 100.0),
            adv.tasks,
            adv.base,
            adv.rl
        )
    };
    for adv in a.pass.advantage.iter().filter(|x| x.significant_flip) {
        out.push(Finding {
            kind: "significant flip",
            place: format!(
                "{} K={} {}% {}",
                adv.benchmark,
                adv.k,
                adv.level,
                adv.mode.name()
            ),
            detail: delta(adv),
            severity: Severity::Problem,
            panel: 1,
        });
    }
    let flips = a
        .pass
        .advantage
        .iter()
        .filter(|x| x.flip && !x.significant_flip)
        .count();
    if flips > 0 {
        out.push(Finding {
            kind: "flips (not significant)",
            place: format!("{flips} cell(s)"),
            detail: "Δ < 0 with a CI reaching 0".into(),
            severity: Severity::Warning,
            panel: 1,
        });
    }
    for adv in a
        .pass
        .advantage
        .iter()
        .filter(|x| x.k == 1 && x.ci.above_zero())
        .take(6)
    {
        out.push(Finding {
            kind: "RL ahead",
            place: format!("{} K=1 {}% {}", adv.benchmark, adv.level, adv.mode.name()),
            detail: delta(adv),
            severity: Severity::Good,
            panel: 1,
        });
    }
    // "RL better in x% [l, h] of n states", for matched and error states.
    let share = |kind, place, better, ci, n: u64, states, panel| Finding {
        kind,
        place,
        detail: format!(
            "RL better {} {}, n={n} {states}",
            pct(better),
            wilson_pct(ci)
        ),
        severity: Severity::Info,
        panel,
    };
    for m in &a.matched {
        let place = format!("{} {} → {}", m.benchmark, m.base, m.rl);
        out.push(share(
            "matched states",
            place,
            m.better,
            m.shares_ci[0],
            m.states,
            "states",
            3,
        ));
    }
    for r in &a.recovery {
        let place = format!("{} {} → {}", r.benchmark, r.base, r.rl);
        out.push(share(
            "error recovery",
            place,
            r.better,
            r.better_ci,
            r.scored,
            "error states",
            4,
        ));
    }
    for d in a.divergence.iter().filter(|d| d.divergent) {
        out.push(Finding {
            kind: "divergent training",
            place: d.run.clone(),
            detail: "r_multi ↑ while r_single ↓ (both significant)".into(),
            severity: Severity::Warning,
            panel: 6,
        });
    }
    for b in &a.budgetmix {
        for r in b.rules.iter().filter(|r| r.violations > 0) {
            out.push(Finding {
                kind: "BudgetMix violation",
                place: format!("{} {}", b.run, r.rule),
                detail: format!("{} of {} checked", r.violations, r.checked),
                severity: Severity::Problem,
                panel: 7,
            });
        }
    }
    out
}
