//! `report.md` sections past the Pass@(K,T) family, one file each.

mod budgetmix;
mod categories;
mod cost;
mod dynamics;
mod failures;
mod likelihood;
mod matched;
mod natural;
mod recovery;

pub use budgetmix::budgetmix;
pub use categories::categories;
pub use cost::cost;
pub use dynamics::dynamics;
pub use failures::failures;
pub use likelihood::likelihood;
pub use matched::matched;
pub use natural::{grep, natural};
pub use recovery::recovery;
