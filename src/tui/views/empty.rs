//! What a panel shows when the logs hold nothing it reads (a checkpoint log
//! alone, rollouts without probes, runs without a pair, an outcome-only
//! dump with no turns to cost): what the panel reads, what was loaded, and
//! which panels have something to show — not an empty grid over an empty
//! chart.

use crate::analysis::Part;
use crate::jobs::Loaded;
use crate::tui::panel::Panel;
use crate::tui::table::{Cell, Mark, TableData, Target};

/// Why the panel has nothing to show, as (title, what it reads, in lines
/// that fit an 80-column screen); `None` when it has something. Asked only
/// of a panel whose parts are in.
fn missing(d: &Loaded, panel: Panel) -> Option<(&'static str, &'static [&'static str])> {
    let (set, a) = (&*d.set, &d.audit);
    let no_pair: (&str, &[&str]) = (
        "no pair of runs to compare",
        &[
            "a pair of runs: a base run (method: base) and an RL run",
            "of one benchmark, or --compare BASE:RL (P picks one here)",
        ],
    );
    match panel {
        Panel::Budget | Panel::Cost if a.agg.evaluation == 0 => Some((
            "no evaluation rollouts in these logs",
            &[
                "evaluation rollouts: trajectory records without",
                "train_step (SPEC §1.1), at one or more turn budgets",
            ],
        )),
        // While the part is pending, the points of the benchmark selected
        // alone may be in (`Audit::cost_in`): none there says nothing of
        // the others.
        Panel::Cost if a.cost_frontier.is_empty() && !a.is_pending(Part::Cost) => Some((
            "no rollout with known turns",
            &[
                "the cost of an attempt (SPEC §2.7): rollouts with turns",
                "or steps — an outcome-only dump has neither",
            ],
        )),
        Panel::Steps if a.matched.is_empty() && set.probes.is_empty() => Some((
            "no probes in these logs",
            &[
                "probe records (SPEC §1.2): states with candidate next",
                "actions from both runs of a pair",
            ],
        )),
        Panel::Steps if a.matched.is_empty() && a.pairs.is_empty() => Some(no_pair),
        Panel::Recovery
            if a.recovery.is_empty()
                && (!a.is_pending(Part::NaturalRecovery) || a.natural_values_in)
                && a.natural_recovery.is_empty()
                && a.natural_recovery_diff.is_empty() =>
        {
            Some((
                "no error events in these logs",
                &[
                    "probe records at error states (error: true, SPEC §1.2),",
                    "or rollouts whose every step says error: true or false",
                    "(natural recovery, SPEC §4.6)",
                ],
            ))
        }
        Panel::Likelihood
            if a.likelihood.is_empty() && a.llr_by_turn.is_empty() && a.pairs.is_empty() =>
        {
            Some(no_pair)
        }
        Panel::Likelihood if a.likelihood.is_empty() && a.llr_by_turn.is_empty() => Some((
            "no successful full-budget rollouts of a pair's runs",
            &[
                "successful full-budget evaluation rollouts of both runs",
                "of a pair, their steps' logp naming both (SPEC §2.4)",
            ],
        )),
        Panel::Training if set.checkpoints.is_empty() => Some((
            "no checkpoints in these logs",
            &["checkpoint records: run, step and metrics (SPEC §1.3)"],
        )),
        Panel::BudgetMix if a.budgetmix.is_empty() => Some((
            "no run to audit",
            &[
                "a run trained with mixed budgets: method: budgetmix,",
                "or --audit RUN (SPEC §2.6; A picks one here): its",
                "training rollouts",
            ],
        )),
        Panel::BudgetMix
            if a.budgetmix
                .iter()
                .all(|b| b.gains.is_empty() && b.rules.iter().all(|r| r.checked == 0)) =>
        {
            Some((
                "no rollouts of the audited runs",
                &[
                    "the audited run's training rollouts (its rules) and",
                    "evaluation rollouts (the gain over the full-budget run)",
                ],
            ))
        }
        _ => None,
    }
}

/// The panel's explanation in place of its tables and charts, or `None`
/// when it has something to show.
pub fn why(d: &Loaded, panel: Panel) -> Option<TableData> {
    let (title, reads) = missing(d, panel)?;
    let mut t = TableData::new(
        "empty",
        format!("{}: nothing to show — {title}", panel.title()),
        &["", "what the panel reads, and what these logs hold"],
    );
    // A panel whose parts are still computing may yet have something.
    let computing = |p: Panel| p.parts().iter().any(|x| d.audit.is_pending(*x));
    let others: Vec<String> = Panel::ALL
        .into_iter()
        .filter(|p| *p != Panel::Overview && *p != panel)
        .filter_map(|p| match (computing(p), missing(d, p)) {
            (true, _) => Some(format!("{} ({}, computing)", p.title(), p.index() + 1)),
            (false, None) => Some(format!("{} ({})", p.title(), p.index() + 1)),
            (false, Some(_)) => None,
        })
        .collect();
    // No run audited: the runs it could audit first, Enter on one to.
    if panel == Panel::BudgetMix && d.audit.budgetmix.is_empty() {
        for r in &d.audit.training_runs {
            t.push(
                vec![
                    Cell::text("audit"),
                    Cell::text(format!(
                        "{}: {} training rollouts (Enter: audit it)",
                        r.run, r.rollouts
                    )),
                ],
                Mark::None,
                Target::Audit(r.run.clone()),
            );
        }
    }
    for (i, line) in reads.iter().enumerate() {
        let key = if i == 0 { "reads" } else { "" };
        t.push_text(vec![key.into(), line.to_string()], Mark::None, Target::None);
    }
    let rows = [
        ("loaded", super::overview::records(&d.set, &d.audit)),
        (
            "see",
            if others.is_empty() {
                "the Overview (1): what was loaded and the notes".into()
            } else {
                others.join(", ")
            },
        ),
    ];
    for (k, v) in rows {
        t.push_text(vec![k.into(), v], Mark::None, Target::None);
    }
    Some(t)
}

/// Whether the panel shows [`why`] in place of its own views.
pub fn is_empty(d: &Loaded, panel: Panel) -> bool {
    missing(d, panel).is_some()
}
