//! The other kinds of record: probes and their candidates, checkpoints, run declarations, and `--summarize`'s aggregate rows.

use super::*;

/// SPEC §1.2: one evaluated state with candidate next actions.
#[derive(Debug, Clone)]
pub struct Probe {
    pub loc: Loc,
    pub benchmark: Id,
    pub task: Id,
    pub state: Id,
    pub source: Id,
    pub turn: u32,
    pub error: bool,
    pub frozenlake: Option<FrozenLakeSpec>,
    pub candidates: Span,
}

#[derive(Debug, Clone)]
pub struct Candidate {
    pub run: Id,
    /// The action as a FrozenLake move (0=left 1=down 2=right 3=up), when it is one.
    pub move_index: Option<u8>,
    pub score: Option<f64>,
    pub corrects: Option<bool>,
    pub terminal_success: Option<bool>,
}

/// SPEC §1.3: one evaluation point during training.
#[derive(Debug, Clone)]
pub struct Checkpoint {
    pub loc: Loc,
    pub run: Id,
    pub step: i64,
    /// Range into [`LogSet::metrics`]: (metric name, value).
    pub metrics: Span,
}

/// A `run` record declaring a run's method.
#[derive(Debug, Clone)]
pub struct RunDecl {
    pub loc: Loc,
    pub run: Id,
    pub method: Id,
}

/// One (benchmark, run, task, budget) group of evaluation rollouts reduced
/// to what Pass@(K,T) needs: mergeable across shards (counts add, success
/// turns concatenate).
#[derive(Debug, Clone, PartialEq)]
pub struct AggregateRow {
    pub benchmark: Id,
    pub run: Id,
    pub method: Option<Id>,
    pub task: Id,
    pub budget: u32,
    pub full_budget: u32,
    pub min_turns: Option<u32>,
    pub n: u64,
    pub success_turns: Vec<u32>,
    /// Outcome-only rollouts (unknown turns) and their successes.
    pub outcome_only: u64,
    pub outcome_only_solved: u64,
}
