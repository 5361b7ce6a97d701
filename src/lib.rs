//! rl-audit: audits multi-turn agentic RL logs (see SPEC in the README).
//!
//! Layers: [`schema`] reads and validates logs (Parquet through polars)
//! into columns and per-task aggregates; [`analysis`] computes every statistic (no terminal, no printing);
//! [`report`] renders headless reports; [`tui`] is the terminal workbench.

pub mod analysis;
pub mod cancel;
pub mod cli;
pub mod demo;
pub mod env;
pub mod error;
pub mod headless;
pub mod jobs;
pub mod loading;
pub mod report;
pub mod schema;
pub mod stage;
pub mod tour;
pub mod tui;
