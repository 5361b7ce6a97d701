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
