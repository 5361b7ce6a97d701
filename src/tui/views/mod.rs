//! Tables and texts the panels show, built from the audit (never a second
//! computation): one file per panel, plus the record drill-downs.

pub mod analyses;
pub mod budget;
pub mod cost;
pub mod drill;
pub mod empty;
pub mod overview;
pub mod pending;
pub mod search;

use crate::analysis::stats::Ci;
use crate::tui::table::TableData;

/// A table showing provisional intervals ([`Ci::Provisional`]) says what
/// they are first in its title (a title is cut at its right; no row of the
/// table, nor of its export, is added). `resamples`: the audit's.
pub fn provisional_title(t: &mut TableData, resamples: usize, shown: impl IntoIterator<Item = Ci>) {
    if crate::report::format::any_provisional(shown) {
        let note = crate::report::format::provisional_note(resamples);
        t.title = format!("{note} · {}", t.title);
    }
}
