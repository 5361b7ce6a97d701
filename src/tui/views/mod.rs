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
use crate::tui::table::{Cell, Mark, TableData, Target};

/// Below a table showing provisional intervals ([`Ci::Provisional`]), a row
/// saying what they are (`resamples`: the audit's).
pub fn provisional_row(t: &mut TableData, resamples: usize, shown: impl IntoIterator<Item = Ci>) {
    if crate::report::format::any_provisional(shown) {
        let mut cells: Vec<Cell> = crate::report::format::provisional_note(resamples)
            .into_iter()
            .map(Cell::text)
            .collect();
        cells.resize_with(t.header.len().max(cells.len()), || Cell::text(""));
        t.push(cells, Mark::None, Target::None);
    }
}
