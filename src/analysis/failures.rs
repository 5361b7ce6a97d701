//! SPEC §4.4 failure anatomy: why each cell's rollouts failed. Over a
//! (benchmark, run, level, mode) cell's rollouts (not task means): solved
//! within T, or not — `budget` if it used more than T turns or succeeded
//! only after T, otherwise its termination (explicit or derived, §4.1).

use std::collections::BTreeMap;

use super::passkt::{in_cell, t_at_level, Mode};
use crate::schema::frames::{EvalAggregates, TaskInfo};
use crate::schema::{FastMap, Id, LogSet, Termination, Trajectory};

/// Failure causes, the §4.1 terminations other than success.
pub const CAUSES: [Termination; 5] = [
    Termination::Budget,
    Termination::Wrong,
    Termination::Error,
    Termination::Invalid,
    Termination::Other,
];

/// Counts of one cell: solved, and each failure cause (in [`CAUSES`] order).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Causes {
    pub rollouts: u64,
    pub solved: u64,
    pub causes: [u64; 5],
}

impl Causes {
    pub fn failures(&self) -> u64 {
        self.rollouts - self.solved
    }
    pub fn count(&self, t: Termination) -> u64 {
        CAUSES
            .iter()
            .position(|c| *c == t)
            .map_or(0, |i| self.causes[i])
    }
    /// Adds another part's counts.
    fn merge(&mut self, other: &Causes) {
        self.rollouts += other.rollouts;
        self.solved += other.solved;
        for (a, b) in self.causes.iter_mut().zip(other.causes) {
            *a += b;
        }
    }
    fn add(&mut self, r: Outcome) {
        self.rollouts += 1;
        match r {
            Outcome::Solved => self.solved += 1,
            Outcome::Failed(t) => {
                if let Some(i) = CAUSES.iter().position(|c| *c == t) {
                    self.causes[i] += 1;
                }
            }
        }
    }
}

/// How one rollout ended within T.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Solved,
    Failed(Termination),
}

impl Outcome {
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Solved => "solved",
            Outcome::Failed(t) => t.name(),
        }
    }
}

/// A rollout's outcome within T turns (SPEC §4.4).
pub fn outcome(t: &Trajectory, turns: u32) -> Outcome {
    if t.solved_within(turns) {
        return Outcome::Solved;
    }
    let over = t.turns_known && (t.turns > turns || t.success_turn().is_some_and(|s| s > turns));
    if over {
        return Outcome::Failed(Termination::Budget);
    }
    match t.termination {
        // Solved, but not within T: ran out of turns.
        Termination::Success => Outcome::Failed(Termination::Budget),
        other => Outcome::Failed(other),
    }
}

#[derive(Debug, Clone)]
pub struct FailureRow {
    pub benchmark: String,
    pub run: String,
    pub level: u32,
    pub mode: Mode,
    pub counts: Causes,
}

/// Every cell's causes, in (benchmark, run, level, mode) order.
pub fn analyse(set: &LogSet, agg: &EvalAggregates, levels: &[u32]) -> Vec<FailureRow> {
    use rayon::prelude::*;
    type Cells = crate::schema::FastMap<(Id, Id, u32, Mode), Causes>;
    // Counts: the rollouts in parts, one table each, added up (sums of
    // counts, in any order the same).
    let cells: Cells = set
        .trajectories
        .par_chunks(1 << 16)
        .map(|part| {
            let mut cells = Cells::default();
            for t in part.iter().filter(|t| !t.is_training()) {
                let Some(info) = agg.task_info(t.benchmark, t.task) else {
                    continue;
                };
                for &l in levels {
                    for m in Mode::BOTH {
                        if let Some(o) = cell_outcome(t, info, l, m) {
                            cells.entry((t.benchmark, t.run, l, m)).or_default().add(o);
                        }
                    }
                }
            }
            cells
        })
        .reduce(Cells::default, |mut a, b| {
            for (k, c) in b {
                a.entry(k).or_default().merge(&c);
            }
            a
        });
    let cells: BTreeMap<(Id, Id, u32, Mode), Causes> = cells.into_iter().collect();
    let mut out: Vec<FailureRow> = cells
        .into_iter()
        .map(|((b, r, l, m), counts)| FailureRow {
            benchmark: set.name(b).to_string(),
            run: set.name(r).to_string(),
            level: l,
            mode: m,
            counts,
        })
        .collect();
    out.sort_by(|a, b| {
        (&a.benchmark, &a.run, a.level, a.mode).cmp(&(&b.benchmark, &b.run, b.level, b.mode))
    });
    out
}

/// A rollout's outcome in its task's (level, mode) cell (SPEC §4.4); `None`
/// when it is not one of the cell's rollouts.
fn cell_outcome(t: &Trajectory, info: TaskInfo, level: u32, mode: Mode) -> Option<Outcome> {
    in_cell(t, info, level, mode).then(|| outcome(t, t_at_level(level, info.full_budget)))
}

/// Each task's causes in the (level, mode) cell of a benchmark, for each of
/// `runs` (the drill-down's column; a task's are its share of the cell's
/// row): one pass over the rollouts. A pass a task made the drill-down
/// take ~20 s at 1.1 M rollouts (2,600 tasks a benchmark), the screen
/// frozen meanwhile, and hours at 11 M.
pub fn task_causes<const R: usize>(
    set: &LogSet,
    agg: &EvalAggregates,
    bench: Id,
    runs: [Id; R],
    level: u32,
    mode: Mode,
) -> [FastMap<Id, Causes>; R] {
    let mut out: [FastMap<Id, Causes>; R] = std::array::from_fn(|_| FastMap::default());
    for t in set.trajectories.iter().filter(|t| t.benchmark == bench) {
        let Some(i) = runs.iter().position(|r| *r == t.run) else {
            continue;
        };
        let o = agg
            .task_info(bench, t.task)
            .and_then(|info| cell_outcome(t, info, level, mode));
        if let Some(o) = o {
            out[i].entry(t.task).or_default().add(o);
        }
    }
    out
}

/// The rows of a cell, found by name.
pub fn row<'a>(
    rows: &'a [FailureRow],
    bench: &str,
    run: &str,
    level: u32,
    mode: Mode,
) -> Option<&'a FailureRow> {
    rows.iter()
        .find(|r| r.benchmark == bench && r.run == run && r.level == level && r.mode == mode)
}

/// `solved 12, budget 5, wrong 3` — the non-zero parts.
pub fn summary(c: &Causes) -> String {
    let mut parts = vec![format!("solved {}", c.solved)];
    for (t, n) in CAUSES.iter().zip(c.causes) {
        if n > 0 {
            parts.push(format!("{} {n}", t.name()));
        }
    }
    parts.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn traj(turns: u32, success_turn: Option<u32>, termination: Termination) -> Trajectory {
        let mut t = Trajectory::bare(crate::schema::Loc::new(0, 1), 0, 0, 0, 8);
        t.success = success_turn.is_some();
        t.turns = turns;
        t.set_success_turn(success_turn);
        t.termination = termination;
        t
    }

    #[test]
    fn causes_follow_the_spec() {
        // Solved within T.
        assert_eq!(
            outcome(&traj(3, Some(3), Termination::Success), 4),
            Outcome::Solved
        );
        // Solved after T, or more turns than T: budget.
        assert_eq!(
            outcome(&traj(6, Some(6), Termination::Success), 4),
            Outcome::Failed(Termination::Budget)
        );
        assert_eq!(
            outcome(&traj(6, None, Termination::Error), 4),
            Outcome::Failed(Termination::Budget)
        );
        // Within T and unsolved: its termination.
        assert_eq!(
            outcome(&traj(2, None, Termination::Error), 4),
            Outcome::Failed(Termination::Error)
        );
        assert_eq!(
            outcome(&traj(4, None, Termination::Wrong), 4),
            Outcome::Failed(Termination::Wrong)
        );
    }
}
