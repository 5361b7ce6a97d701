//! Cost panel: each run's best cell under the ceiling and the winner, read
//! from the cost frontier and `cost_winners`; each cell's interval and n
//! from its Pass@(K,T) cell (the point's pass is that cell's value, its cost
//! the mean over the same tasks).

use crate::analysis::cost::{approx_eq, best_per_run, winner_at};
use crate::analysis::{Audit, PairNames};
use crate::report::format::{pct, pct_ci};
use crate::tui::table::{Cell, Mark, TableData, Target};

/// Distinct costs of a benchmark's points, ascending: the ceiling cursor's stops.
pub fn stops(a: &Audit, bench: &str) -> Vec<f64> {
    let mut c: Vec<f64> = a
        .cost_frontier
        .iter()
        .filter(|p| p.benchmark == bench)
        .map(|p| p.cost)
        .collect();
    c.sort_by(f64::total_cmp);
    c.dedup_by(|x, y| approx_eq(*x, *y));
    c
}

/// The best cell per run under `ceiling` on `bench`; Enter on a run's row
/// opens its Budget cell, in a pair holding the run — the one selected
/// (`pair`) if it does, else the benchmark's first that does.
pub fn table(a: &Audit, bench: &str, ceiling: f64, pair: Option<&PairNames>) -> TableData {
    let mut t = TableData::new(
        "cost",
        format!("{bench}: best cell per run under a cost of {ceiling:.2} (←→ moves the ceiling)"),
        &[
            "run", "K", "level", "mode", "Pass", "95% CI", "n tasks", "cost", "",
        ],
    );
    let winner = winner_at(&a.cost_winners, bench, ceiling);
    let holds = |p: &&PairNames, run: &str| p.base == run || p.rl == run;
    let in_pair = |run: &str| {
        pair.filter(|p| holds(p, run))
            .or_else(|| a.pairs_of(bench).into_iter().find(|p| holds(p, run)))
            .cloned()
    };
    let mut shown = Vec::new();
    for b in best_per_run(&a.cost_frontier, bench, ceiling) {
        let win = winner.is_some_and(|w| {
            w.run == b.run && w.k == b.k && w.level == b.level && w.mode == b.mode
        });
        let cell = a.pass.cell(bench, &b.run, b.k, b.level, Some(b.mode));
        shown.extend(cell.map(|c| c.ci));
        t.push(
            vec![
                Cell::text(&*b.run),
                Cell::count(b.k),
                Cell::num(format!("{}%", b.level), Some(b.level as f64)),
                Cell::text(b.mode.name()),
                Cell::num(pct(Some(b.pass)), Some(b.pass)),
                cell.map_or(Cell::text("–"), |c| Cell::text(pct_ci(c.ci))),
                cell.map_or(Cell::text("–"), |c| Cell::count(c.tasks as u64)),
                Cell::num(format!("{:.2}", b.cost), Some(b.cost)),
                Cell::text(if win { "winner" } else { "" }),
            ],
            if win { Mark::Good } else { Mark::None },
            match in_pair(&b.run) {
                Some(pair) => Target::At(crate::tour::Place::Budget {
                    pair,
                    k: b.k,
                    level: b.level,
                    mode: Some(b.mode),
                }),
                None => Target::None,
            },
        );
    }
    super::provisional_title(&mut t, a.settings.boot.resamples, shown);
    t
}
