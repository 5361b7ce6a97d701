//! Environments whose dynamics rl-audit knows exactly.

pub mod frozenlake;
