//! What a panel shows while the parts of the audit it reads are still being
//! computed: which they are, and how far the audit has come.

use crate::analysis::{Audit, Part};
use crate::tui::panel::Panel;
use crate::tui::select::{current, Selection};
use crate::tui::table::{Mark, TableData, Target};

/// The name of the stand-in table: nothing to export.
pub const STAND_IN: &str = "computing";

/// The panel's stand-in table while any of its parts is pending; `None` once
/// they are all in. `stopped`: the audit stopped partway, and the parts
/// pending will not come.
pub fn waiting(a: &Audit, panel: Panel, sel: &Selection, stopped: bool) -> Option<TableData> {
    if !is_waiting(a, panel, sel) {
        return None;
    }
    let parts = panel.parts();
    let (done, all) = (a.parts_done(), Part::ALL.len());
    let title = if stopped {
        format!(
            "The audit stopped with {done} of {all} analyses ready; the panel's were not computed"
        )
    } else {
        format!("Computing: {done} of {all} analyses ready; the panel shows when these are")
    };
    let mut t = TableData::new(STAND_IN, title, &["analysis", "state"]);
    for p in parts {
        t.push_text(
            vec![p.title().to_string(), state(a, *p, stopped).to_string()],
            Mark::None,
            Target::None,
        );
        if *p == Part::Cost && a.is_pending(*p) && !a.cost_in.is_empty() {
            t.push_text(
                vec![
                    "  benchmarks costed (Cost shows each)".into(),
                    a.cost_in.join(", "),
                ],
                Mark::None,
                Target::None,
            );
        }
        if *p != Part::Pass || !a.is_pending(*p) {
            continue;
        }
        let rows = [
            (
                "  values in, intervals to come (Budget shows each)",
                &a.pass.values_in,
            ),
            (
                "  benchmarks in (Budget shows each as it comes)",
                &a.pass.benchmarks_in,
            ),
        ];
        for (what, names) in rows.into_iter().filter(|(_, n)| !n.is_empty()) {
            t.push_text(
                vec![what.into(), names.join(", ")],
                Mark::None,
                Target::None,
            );
        }
    }
    Some(t)
}

/// Whether any part the panel reads is still pending (it shows its
/// stand-in). The Budget panel shows a benchmark once its Pass@(K,T) rows
/// are in, before the other benchmarks' and the §4.2 tests. The Steps
/// panel shows once the matched states' values are in, before their
/// bootstrap intervals. The Recovery panel of a pair shows once the values
/// of the matched states and error recovery are in, its rows of natural
/// recovery saying "computing…" until theirs are; without a pair it is
/// those rows alone.
pub fn is_waiting(a: &Audit, panel: Panel, sel: &Selection) -> bool {
    match panel {
        Panel::Budget => match current(a, sel).0 {
            Some(b) => !a.pass_in(&b),
            None => a.is_pending(Part::Pass),
        },
        // The benchmark selected once its points are in (the Cost panel on
        // screen: before the other benchmarks' Pass@(K,T) values).
        Panel::Cost => match current(a, sel).0 {
            Some(b) => !a.cost_in(&b),
            None => a.is_pending(Part::Cost),
        },
        // The matched states' and error recovery's values come before
        // their bootstrap intervals (`[…]` until drawn).
        Panel::Steps => a.is_pending(Part::Matched) && !a.matched_values_in,
        Panel::Recovery if current(a, sel).1.is_some() => {
            a.is_pending(Part::Matched) && !a.matched_values_in
        }
        Panel::Recovery => a.is_pending(Part::NaturalRecovery) && !a.natural_values_in,
        // Its rows before their intervals and the LLR by turn.
        Panel::Likelihood => a.is_pending(Part::Likelihood) && !a.likelihood_values_in,
        // Its rules come first (the gain table says its gains are to come).
        Panel::BudgetMix => a.is_pending(Part::BudgetMix) && !a.budgetmix_rules_in,
        _ => panel.parts().iter().any(|p| a.is_pending(*p)),
    }
}

/// Where a part of the audit stands, as the workbench words it.
pub fn state(a: &Audit, p: Part, stopped: bool) -> &'static str {
    if !a.is_pending(p) {
        "ready"
    } else if stopped {
        "not computed"
    } else if a.is_running(p) && p.beside() {
        "computing beside…"
    } else if a.is_running(p) {
        "computing…"
    } else if a.is_next(p) && a.settings.focus.shows(p) {
        "next (on screen)"
    } else if a.is_next(p) {
        // Next in the order (the Overview, which reads every part, or
        // a part the panel on screen does not read).
        "next"
    } else {
        "waiting"
    }
}
