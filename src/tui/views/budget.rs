//! Budget panel: the K × level grid, the selected cell's figures, and the
//! drill-down to its tasks and rollouts — all read from the audit (and, for
//! a cell's tasks and rollouts, from the analysis functions that decide
//! them), never worked out here.

use crate::analysis::failures::Causes;
use crate::analysis::multiplicity::Verdict;
use crate::analysis::passkt::{delta_by_task, in_cell, t_at_level, Advantage, Mode, TaskDelta};
use crate::analysis::stats::Ci;
use crate::analysis::{Audit, Part};
use crate::jobs::Loaded;
use crate::report::format::{
    any_provisional, cell_p, cell_p_alone, contrast, held_by_resamples, pct, pct_ci, pp,
    provisional_note, share_pp, signed_ci, tasks_to_resolve,
};
use crate::schema::{FastMap, Id, Loc};
use crate::tui::select::{current, Selection};
use crate::tui::table::{Cell, Mark, TableData, Target};

/// `n` or `t`: which mode a preferred cell shows.
pub fn mode_letter(m: Mode) -> &'static str {
    match m {
        Mode::Native => "n",
        Mode::Truncated => "t",
    }
}

/// The verdict's sign on the grid (SPEC §4.2, after the family-wise adjustment).
pub fn verdict_symbol(v: Verdict) -> &'static str {
    match v {
        Verdict::Ahead => "▲",
        Verdict::Flip => "▼",
        Verdict::Equivalent => "≈",
        Verdict::Inconclusive => "?",
        Verdict::Degenerate => "·",
    }
}

fn verdict_mark(x: &Advantage, tested: bool) -> Mark {
    match x.test.verdict {
        Verdict::Flip if tested => Mark::VeryBad,
        Verdict::Ahead if tested => Mark::Good,
        _ if x.flip => Mark::Bad,
        _ => Mark::None,
    }
}

/// Whether the §4.2 tests are in: they are drawn once every benchmark's
/// Pass@(K,T) rows are, which the Budget panel shows before.
fn tested(a: &Audit) -> bool {
    !a.is_pending(Part::Pass)
}

/// The signs a Budget grid shows, for its legend: only those in its cells,
/// in a fixed order.
#[derive(Default)]
struct Legend {
    modes: Vec<Mode>,
    verdicts: Vec<Verdict>,
    /// A verdict still to come (`…`).
    pending: bool,
    /// A category cell's interval above 0 (`↑`), below 0 (`↓`).
    above: bool,
    below: bool,
}

/// A category cell's sign: its 95 % interval above 0 (`↑`) or below 0
/// (`↓`), none where it holds 0 — so that the cell stands out without
/// colour too (`NO_COLOR`).
fn ci_sign(ci: Ci) -> &'static str {
    if ci.above_zero() {
        "↑"
    } else if ci.below_zero() {
        "↓"
    } else {
        ""
    }
}

impl Legend {
    fn mode(&mut self, m: Mode) {
        if !self.modes.contains(&m) {
            self.modes.push(m);
        }
    }

    fn advantage(&mut self, x: &Advantage, tested: bool) {
        self.mode(x.mode);
        if !tested {
            self.pending = true;
        } else if !self.verdicts.contains(&x.test.verdict) {
            self.verdicts.push(x.test.verdict);
        }
    }

    fn ci(&mut self, ci: Ci) {
        self.above |= ci.above_zero();
        self.below |= ci.below_zero();
    }

    fn text(&self) -> String {
        let modes = [Mode::Native, Mode::Truncated]
            .into_iter()
            .filter(|m| self.modes.contains(m))
            .map(|m| format!("{} {}", mode_letter(m), m.name()));
        let verdicts = [
            Verdict::Ahead,
            Verdict::Flip,
            Verdict::Equivalent,
            Verdict::Inconclusive,
            Verdict::Degenerate,
        ]
        .into_iter()
        .filter(|v| self.verdicts.contains(v))
        .map(|v| format!("{} {}", verdict_symbol(v), v.name()));
        let pending = self.pending.then(|| "… verdict computing".to_string());
        let cis = [
            (self.above, "↑ 95% CI above 0"),
            (self.below, "↓ 95% CI below 0"),
        ]
        .into_iter()
        .filter(|(shown, _)| *shown)
        .map(|(_, text)| text.to_string());
        modes
            .chain(verdicts)
            .chain(pending)
            .chain(cis)
            .collect::<Vec<_>>()
            .join("  ")
    }
}

/// One grid cell of a pair: `38.2→78.1 +39.9 n ▲` — base% → RL%, Δ in
/// points, the mode, the verdict (`…` while the tests compute).
pub fn advantage_cell(x: &Advantage, tested: bool) -> Cell {
    Cell::num(
        format!(
            "{:.1}→{:.1} {:+.1} {} {}",
            100.0 * x.base_pass,
            100.0 * x.rl_pass,
            100.0 * x.delta,
            mode_letter(x.mode),
            if tested {
                verdict_symbol(x.test.verdict)
            } else {
                "…"
            }
        ),
        Some(x.delta),
    )
    .marked(verdict_mark(x, tested))
}

/// The K × level grid of the current pair (or each run's Pass when there is no pair).
pub fn grid(a: &Audit, sel: &Selection) -> TableData {
    if let Some(t) = category_grid(a, sel) {
        return t;
    }
    let (bench, pair) = current(a, sel);
    let bench = bench.unwrap_or_default();
    let levels = &a.settings.levels;
    let mut header = vec!["K"];
    let names: Vec<String> = levels.iter().map(|l| format!("{l}%")).collect();
    header.extend(names.iter().map(String::as_str));
    let title = match &pair {
        Some(p) => format!(
            "{bench}: {} → {} ({}) — base% → RL%, Δ points",
            p.base,
            p.rl,
            sel.mode_name()
        ),
        None => format!("{bench} ({}) — no pair: Pass% per run", sel.mode_name()),
    };
    let mut t = TableData::new("budget-grid", title, &header);
    let mut legend = Legend::default();
    let tested = tested(a);
    let runs = a.pass.runs(&bench);
    for &k in &a.pass.ks {
        let mut cells = vec![Cell::count(k)];
        for &l in levels {
            let cell = match &pair {
                Some(p) => a.pass.advantage_at(p.key(), k, l, sel.mode).map_or_else(
                    || Cell::text("–"),
                    |x| {
                        legend.advantage(x, tested);
                        advantage_cell(x, tested)
                    },
                ),
                None => {
                    let found: Vec<_> = runs
                        .iter()
                        .filter_map(|r| a.pass.cell(&bench, r, k, l, sel.mode))
                        .filter(|c| c.value.is_some())
                        .collect();
                    if found.is_empty() {
                        Cell::text("–")
                    } else {
                        let vals: Vec<String> = found
                            .iter()
                            .map(|c| format!("{:.1}", 100.0 * c.value.unwrap_or(0.0)))
                            .collect();
                        legend.mode(found[0].mode);
                        Cell::num(
                            format!("{} {}", vals.join("/"), mode_letter(found[0].mode)),
                            found[0].value,
                        )
                    }
                }
            };
            cells.push(cell);
        }
        let mark = cells
            .iter()
            .map(|c| c.mark)
            .find(|m| *m == Mark::VeryBad)
            .or_else(|| cells.iter().map(|c| c.mark).find(|m| *m == Mark::Bad))
            .unwrap_or(Mark::None);
        t.push(cells, mark, Target::None);
    }
    t.legend = legend.text();
    // Levels that are one cell, said where the eye reads them as several.
    for c in a.coinciding_levels.iter().filter(|c| c.benchmark == bench) {
        let sep = if t.legend.is_empty() { "" } else { "  " };
        t.legend = format!("{}{sep}{}: one T for every task", t.legend, c.joined());
    }
    t
}

/// The grid of one task category (`c`): each cell that category's Δ with
/// its own paired bootstrap (§4.3), signed and marked when its CI clears 0
/// (`↑` above, `↓` below; unadjusted — the contrasts between categories
/// are the adjusted tests).
fn category_grid(a: &Audit, sel: &Selection) -> Option<TableData> {
    let cat = crate::tui::select::category(a, sel)?;
    let (bench, pair) = current(a, sel);
    let (bench, pair) = (bench?, pair?);
    let names: Vec<String> = a.settings.levels.iter().map(|l| format!("{l}%")).collect();
    let mut header = vec!["K"];
    header.extend(names.iter().map(String::as_str));
    let mut t = TableData::new(
        "budget-grid",
        format!(
            "{bench} [{cat}]: {} → {} ({}) — base% → RL%, Δ points",
            pair.base,
            pair.rl,
            sel.mode_name()
        ),
        &header,
    );
    let mut legend = Legend::default();
    for &k in &a.pass.ks {
        let mut cells = vec![Cell::count(k)];
        for &l in &a.settings.levels {
            cells.push(
                match a.categories.advantage_at(pair.key(), &cat, k, l, sel.mode) {
                    Some(x) => {
                        legend.mode(x.mode);
                        legend.ci(x.ci);
                        let sign = ci_sign(x.ci);
                        Cell::num(
                            format!(
                                "{:.1}→{:.1} {:+.1} {}{}{sign}",
                                100.0 * x.base_pass,
                                100.0 * x.rl_pass,
                                100.0 * x.delta,
                                mode_letter(x.mode),
                                if sign.is_empty() { "" } else { " " },
                            ),
                            Some(x.delta),
                        )
                        .marked(if x.ci.below_zero() {
                            Mark::VeryBad
                        } else if x.ci.above_zero() {
                            Mark::Good
                        } else {
                            Mark::None
                        })
                    }
                    None => Cell::text("–"),
                },
            );
        }
        t.push(cells, Mark::None, Target::None);
    }
    t.legend = legend.text();
    Some(t)
}

/// The mode the selected cell shows: the chosen one, or the preferred one
/// the results have there.
pub fn cell_mode(a: &Audit, sel: &Selection) -> Option<Mode> {
    let (bench, pair) = current(a, sel);
    let (k, l) = sel.k_level(a)?;
    if let Some(m) = sel.mode {
        return Some(m);
    }
    match pair {
        Some(p) => a.pass.advantage_at(p.key(), k, l, None).map(|x| x.mode),
        None => {
            let bench = bench?;
            a.pass
                .runs(&bench)
                .iter()
                .find_map(|r| a.pass.cell(&bench, r, k, l, None))
                .map(|c| c.mode)
        }
    }
}

/// Text about the selected cell: each run's Pass with CI and n, Δ, U(T),
/// headroom and the mode gap.
pub fn detail(a: &Audit, sel: &Selection) -> Vec<String> {
    let (bench, pair) = current(a, sel);
    let (Some(bench), Some((k, level))) = (bench, sel.k_level(a)) else {
        return vec!["no evaluation rollouts".into()];
    };
    let mode = cell_mode(a, sel);
    let mode_name = mode.map_or("no", Mode::name);
    let runs: Vec<String> = match &pair {
        Some(p) => vec![p.base.clone(), p.rl.clone()],
        None => a.pass.runs(&bench).iter().map(|r| r.to_string()).collect(),
    };
    let mut out = Vec::new();
    // Whether an interval shown is provisional (the note below says so).
    let mut provisional = Vec::new();
    let category = crate::tui::select::category(a, sel);
    for r in &runs {
        // In one category's grid (`c`), each run's Pass in that category,
        // as the grid's cell reads it.
        if let Some(name) = &category {
            match mode.and_then(|m| a.categories.pass_at(&bench, name, r, k, level, Some(m))) {
                Some(c) => out.push(format!(
                    "{r} [{name}]: Pass@({k},{level}%) {} {} n={} tasks ({})",
                    pct(Some(c.value)),
                    pct_ci(c.ci),
                    c.tasks,
                    c.mode.name()
                )),
                None => out.push(format!("{r} [{name}]: no {mode_name} rollouts at {level}%")),
            }
            continue;
        }
        let cell = mode.and_then(|m| a.pass.cell(&bench, r, k, level, Some(m)));
        provisional.extend(cell.map(|c| c.ci));
        match cell {
            Some(c) => out.push(format!(
                "{r}: Pass@({k},{level}%) {} {} n={} tasks ({}){}  Pass^ {}",
                pct(c.value),
                pct_ci(c.ci),
                c.tasks,
                c.mode.name(),
                if c.tasks_left_out > 0 {
                    format!(", {} left out: < K rollouts", c.tasks_left_out)
                } else {
                    String::new()
                },
                pct(c.pass_all)
            )),
            None => out.push(format!("{r}: no {mode_name} rollouts at {level}%")),
        }
    }
    // In one category's grid (`c`), that category's Δ and its contrasts
    // with the others come next: the grid is about them.
    let mut cat = Vec::new();
    if let (Some(name), Some(p)) = (&category, &pair) {
        if let Some(x) = a.categories.advantage_at(p.key(), name, k, level, mode) {
            cat.push(format!(
                "category {name}: Δ {} {} over n={} tasks",
                pp(x.delta),
                signed_ci(x.ci, 100.0),
                x.tasks
            ));
        }
        for c in a.categories.contrast.iter().filter(|c| {
            c.benchmark == bench
                && c.base == p.base
                && c.rl == p.rl
                && c.k == k
                && c.level == level
                && Some(c.mode) == mode
                && (&c.a == name || &c.b == name)
        }) {
            cat.push(contrast(c));
        }
    }
    out.extend(cat);
    let mut later = Vec::new();
    if let Some(x) = pair
        .as_ref()
        .and_then(|p| a.pass.advantage_at(p.key(), k, level, mode))
    {
        provisional.push(x.ci);
        out.push(format!(
            "{}Δ {} {} over n={} tasks — {}{}; headroom {}",
            // Beside a category's lines, the benchmark's Δ says so.
            if category.is_some() {
                "all tasks: "
            } else {
                ""
            },
            pp(x.delta),
            signed_ci(x.ci, 100.0),
            x.tasks,
            if tested(a) {
                x.test.verdict.name()
            } else {
                "§4.2 test computing…"
            },
            held_by_resamples(&x.test, a.settings.boot.resamples),
            x.headroom
                .map_or("–".into(), |h| format!("{:.1} pp", 100.0 * h))
        ));
        let t = &x.test;
        if let (Some(se), Some(_), Some(_), Some(mde)) = (t.se, t.p_value, t.p_adjusted, t.mde) {
            out.push(format!(
                "se {:.1} pp · p {} · adjusted p {} ({}) · mde {:.1} pp",
                100.0 * se,
                cell_p_alone(t),
                cell_p(t),
                a.settings.adjust.name(),
                100.0 * mde,
            ));
        }
        let sim = t
            .ci_simultaneous
            .map(|(l, h)| format!("simultaneous 95% [{:+.1}, {:+.1}] pp", 100.0 * l, 100.0 * h));
        let need = tasks_to_resolve(t, a.settings.boot.resamples, "this cell");
        later.extend(
            sim.into_iter()
                .chain(need)
                .reduce(|a, b| format!("{a}; {b}")),
        );
    }
    // The bound and the mode gaps before the rest: short screens keep them.
    if let Some(u) = a.pass.upper_at(&bench, level) {
        out.push(format!(
            "upper bound U(T) {} ({}, n={})",
            pct(Some(u.value)),
            u.kind,
            u.tasks
        ));
    }
    // The RL run's gap first: it is the one a comparison is about.
    for r in runs.iter().rev() {
        for g in a
            .pass
            .mode_gaps_at(&bench, k, level)
            .filter(|g| &g.run == r)
        {
            provisional.push(g.ci);
            out.push(format!(
                "{}: native − truncated {} {} (n={})",
                g.run,
                pp(g.diff),
                signed_ci(g.ci, 100.0),
                g.tasks
            ));
        }
    }
    if any_provisional(provisional) {
        let note = provisional_note(a.settings.boot.resamples);
        out.push(format!("{note}, until all are drawn"));
    }
    out.extend(later);
    if a.is_pending(crate::analysis::Part::Failures) {
        out.push("rollouts — failure causes: computing…".into());
    } else if let Some(m) = mode {
        let causes: Vec<String> = runs
            .iter()
            .filter_map(|r| {
                crate::analysis::failures::row(&a.failures, &bench, r, level, m).map(|f| {
                    format!(
                        "{r}: {} of {}",
                        crate::analysis::failures::summary(&f.counts),
                        f.counts.rollouts
                    )
                })
            })
            .collect();
        if !causes.is_empty() {
            out.push(format!("rollouts — {}", causes.join("; ")));
        }
    }

    out
}

/// Drill-down from a cell: its tasks, by share of Δ (the shares add up to
/// Δ; a task Δ leaves out has none), those that push Δ the way it points
/// first: a flip's losses, an advantage's gains.
pub fn tasks(l: &Loaded, sel: &Selection, k: u64, level: u32, mode: Mode) -> TableData {
    let (a, set) = (&l.audit, &l.set);
    let (bench, pair) = current(a, sel);
    let bench = bench.unwrap_or_default();
    let gains_first = pair.as_ref().is_some_and(|p| {
        a.pass
            .advantage_at((&bench, &p.base, &p.rl), k, level, Some(mode))
            .is_some_and(|adv| adv.delta > 0.0)
    });
    let mut t = TableData::new(
        "tasks",
        format!(
            "{bench}: tasks at K={k}, {level}% ({}) — sorted by share of Δ, {} first",
            mode.name(),
            if gains_first { "largest" } else { "smallest" }
        ),
        &[
            "task",
            "min_turns",
            "T",
            "n base",
            "c base",
            "Pass base",
            "n RL",
            "c RL",
            "Pass RL",
            "share of Δ",
            "failures base | RL",
        ],
    );
    let (Some(b), Some(p)) = (set.strings.get(&bench), pair) else {
        return t;
    };
    let (Some(base), Some(rl)) = (set.strings.get(&p.base), set.strings.get(&p.rl)) else {
        return t;
    };
    let mut rows = delta_by_task(&a.agg, b, (base, rl), k, level, mode);
    let causes = crate::analysis::failures::task_causes(set, &a.agg, b, [base, rl], level, mode);
    // Toward Δ's sign first; a task Δ leaves out last either way.
    let sign = if gains_first { -1.0 } else { 1.0 };
    rows.sort_by(|x, y| {
        // (+ 0.0: a zero share of either sign ties, keeping task order.)
        let key = |r: &TaskDelta| r.contribution.map_or(f64::INFINITY, |c| sign * c + 0.0);
        key(x).total_cmp(&key(y))
    });
    let counts = |x: Option<(u64, u64)>| match x {
        Some((n, c)) => (Cell::count(n), Cell::count(c)),
        None => (Cell::text("–"), Cell::text("–")),
    };
    for r in rows {
        let name = set.name(r.task).to_string();
        let (nb, cb) = counts(r.base);
        let (nr, cr) = counts(r.rl);
        let share = Cell::num(r.contribution.map_or("–".into(), share_pp), r.contribution);
        let t_turns = t_at_level(level, r.info.full_budget);
        let fails = |of: &FastMap<Id, Causes>| {
            let c = of.get(&r.task).copied().unwrap_or_default();
            crate::analysis::failures::CAUSES
                .iter()
                .zip(c.causes)
                .filter(|(_, n)| *n > 0)
                .map(|(t, n)| format!("{}{n}", &t.name()[..1]))
                .collect::<Vec<_>>()
                .join(" ")
        };
        let failures = Cell::text(format!("{} | {}", fails(&causes[0]), fails(&causes[1])));
        t.push(
            vec![
                Cell::text(&*name),
                r.info.min_turns.map_or(Cell::text("–"), Cell::count),
                Cell::count(t_turns),
                nb,
                cb,
                Cell::num(pct(r.pass_base), r.pass_base),
                nr,
                cr,
                Cell::num(pct(r.pass_rl), r.pass_rl),
                share,
                failures,
            ],
            if r.contribution.is_some_and(|c| c < 0.0) {
                Mark::Bad
            } else {
                Mark::None
            },
            Target::Rollouts { task: name, level },
        );
    }
    t
}

/// Drill-down from a task: exactly the pair's rollouts that make up its
/// cell (the tasks table's n), decided by [`in_cell`].
pub fn rollouts(l: &Loaded, sel: &Selection, task: &str, level: u32, mode: Mode) -> TableData {
    let (a, set) = (&l.audit, &l.set);
    let (bench, pair) = current(a, sel);
    let bench = bench.unwrap_or_default();
    let mut t = TableData::new(
        "rollouts",
        format!("{bench} / {task}: rollouts (Enter: the trajectory)"),
        &[
            "run",
            "budget",
            "sample",
            "success",
            "success_turn",
            "solved ≤ T",
            "turns",
            "reward",
            "steps",
            "within T",
            "record",
        ],
    );
    let (Some(b), Some(task_id)) = (set.strings.get(&bench), set.strings.get(task)) else {
        return t;
    };
    let Some(&info) = a.agg.tasks.get(&(b, task_id)) else {
        return t;
    };
    let tt = t_at_level(level, info.full_budget);
    t.title = format!(
        "{bench} / {task}: the rollouts of the {level}% cell — T = {tt} of {}, {}; Enter: the trajectory",
        info.full_budget,
        mode.name()
    );
    let runs: Vec<u32> = pair
        .map(|p| {
            [p.base, p.rl]
                .iter()
                .filter_map(|r| set.strings.get(r))
                .collect()
        })
        .unwrap_or_default();
    for tr in set.trajectories.iter().filter(|x| {
        x.benchmark == b
            && x.task == task_id
            && (runs.is_empty() || runs.contains(&x.run))
            && in_cell(x, info, level, mode)
    }) {
        let within = tr.solved_within(tt);
        let yes_no = |b: bool| Cell::text(if b { "yes" } else { "no" });
        t.push(
            vec![
                Cell::text(set.name(tr.run)),
                Cell::count(tr.budget),
                tr.sample().map_or(Cell::text("–"), |s| {
                    Cell::num(s.to_string(), Some(s as f64))
                }),
                yes_no(tr.success),
                tr.success_turn()
                    .filter(|_| tr.turns_known)
                    .map_or(Cell::text("–"), Cell::count),
                yes_no(within),
                if tr.turns_known {
                    Cell::count(tr.turns)
                } else {
                    Cell::text("unknown")
                },
                tr.reward()
                    .map_or(Cell::text("–"), |r| Cell::num(format!("{r}"), Some(r))),
                Cell::count(set.steps_of(tr).len() as u64),
                Cell::text(crate::analysis::failures::outcome(tr, tt).name()),
                Cell::place(set.loc_text(tr.loc)),
            ],
            if within { Mark::Good } else { Mark::None },
            Target::Trajectory(tr.loc),
        );
    }
    t
}

/// The two trajectories `v` compares for the selected Budget cell: of the
/// task with the largest Δ contribution (from [`delta_by_task`]), a base
/// rollout that failed within T and an RL rollout that succeeded within T,
/// both in the cell. An error message when the cell has no such pair.
pub fn contrast_pair(l: &Loaded, sel: &Selection) -> Result<(Loc, Loc), String> {
    let (a, set) = (&l.audit, &l.set);
    let (bench, pair) = current(a, sel);
    let (Some(bench), Some(p)) = (bench, pair) else {
        return Err("no run pair on this benchmark: nothing to compare".into());
    };
    let (Some((k, level)), Some(mode)) = (sel.k_level(a), cell_mode(a, sel)) else {
        return Err("no rollouts in this cell".into());
    };
    let ids = (
        set.strings.get(&bench),
        set.strings.get(&p.base),
        set.strings.get(&p.rl),
    );
    let (Some(b), Some(base), Some(rl)) = ids else {
        return Err("no rollouts in this cell".into());
    };
    let rows = delta_by_task(&a.agg, b, (base, rl), k, level, mode);
    let best = rows
        .iter()
        .filter(|r| r.contribution.is_some_and(|c| c > 0.0))
        .max_by(|x, y| x.contribution.unwrap().total_cmp(&y.contribution.unwrap()));
    let Some(best) = best else {
        return Err(format!(
            "no task where RL gains at K={k}, {level}%: nothing to contrast"
        ));
    };
    let tt = t_at_level(level, best.info.full_budget);
    let find = |run: Id, solved: bool| {
        set.trajectories
            .iter()
            .find(|x| {
                x.benchmark == b
                    && x.task == best.task
                    && x.run == run
                    && in_cell(x, best.info, level, mode)
                    && x.solved_within(tt) == solved
            })
            .map(|x| x.loc)
    };
    match (find(base, false), find(rl, true)) {
        (Some(x), Some(y)) => Ok((x, y)),
        _ => Err(format!(
            "task {}: no base failure and RL success in this cell",
            set.name(best.task)
        )),
    }
}
