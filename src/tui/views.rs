//! Tables the panels show, built from the audit (never a second
//! computation): the same structs render on screen and export as CSV.

use std::collections::BTreeSet;

use crate::analysis::passkt::{cell_counts, Mode};
use crate::analysis::stats::pass_at_k;
use crate::analysis::{Audit, PairNames};
use crate::jobs::Loaded;
use crate::report::format::{pct, pct_ci, pp, score_diff, signed_ci};
use crate::schema::{Id, Loc, LogSet};

/// How a row should stand out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    None,
    Bad,
    VeryBad,
    Good,
}

/// A table as shown and as exported.
#[derive(Debug, Clone, Default)]
pub struct TableData {
    pub name: String,
    pub title: String,
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
    pub marks: Vec<Mark>,
    /// What Enter on a row opens, if anything.
    pub targets: Vec<Target>,
}

/// Where Enter on a row goes.
#[derive(Debug, Clone, PartialEq)]
pub enum Target {
    None,
    Panel(usize),
    Tasks { k: u64, level: u32 },
    Rollouts { task: String, level: u32 },
    Trajectory(Loc),
    RuleRecords { run: String, rule: usize },
}

impl TableData {
    pub fn new(name: &str, title: impl Into<String>, header: &[&str]) -> Self {
        TableData {
            name: name.into(),
            title: title.into(),
            header: header.iter().map(|h| h.to_string()).collect(),
            ..Default::default()
        }
    }
    pub fn push(&mut self, row: Vec<String>, mark: Mark, target: Target) {
        self.rows.push(row);
        self.marks.push(mark);
        self.targets.push(target);
    }
    /// Keeps rows whose text contains `filter` (case-insensitive).
    pub fn filtered(mut self, filter: &str) -> Self {
        if filter.is_empty() {
            return self;
        }
        let f = filter.to_lowercase();
        let keep: Vec<bool> = self
            .rows
            .iter()
            .map(|r| r.iter().any(|c| c.to_lowercase().contains(&f)))
            .collect();
        let mut i = 0;
        self.rows.retain(|_| {
            i += 1;
            keep[i - 1]
        });
        let mut i = 0;
        self.marks.retain(|_| {
            i += 1;
            keep[i - 1]
        });
        let mut i = 0;
        self.targets.retain(|_| {
            i += 1;
            keep[i - 1]
        });
        self
    }
    /// Rows ordered by column `col` (numbers as numbers — `12.5%`,
    /// `+0.07 pp`, `62.5% [51.0, 72.8]` by their first number — text as
    /// text, `–` last), stable; the title says so.
    pub fn sorted(mut self, col: usize, descending: bool) -> Self {
        let Some(name) = self.header.get(col).cloned() else {
            return self;
        };
        fn key(cell: &str) -> (u8, f64, String) {
            let first = cell.split_whitespace().next().unwrap_or("");
            let num = first
                .trim_start_matches('+')
                .trim_end_matches('%')
                .trim_end_matches(',')
                .parse::<f64>()
                .ok()
                .filter(|x| x.is_finite());
            match num {
                _ if cell.is_empty() || cell == "–" => (2, 0.0, String::new()),
                Some(x) => (0, x, String::new()),
                None => (1, 0.0, cell.to_lowercase()),
            }
        }
        let keys: Vec<(u8, f64, String)> = self
            .rows
            .iter()
            .map(|r| key(r.get(col).map_or("", String::as_str)))
            .collect();
        let mut order: Vec<usize> = (0..self.rows.len()).collect();
        order.sort_by(|&a, &b| {
            let (ka, kb) = (&keys[a], &keys[b]);
            ka.0.cmp(&kb.0).then_with(|| {
                let o = ka.1.total_cmp(&kb.1).then_with(|| ka.2.cmp(&kb.2));
                if descending {
                    o.reverse()
                } else {
                    o
                }
            })
        });
        fn permute<T>(v: &mut Vec<T>, order: &[usize]) {
            let mut old: Vec<Option<T>> = std::mem::take(v).into_iter().map(Some).collect();
            *v = order.iter().filter_map(|&i| old[i].take()).collect();
        }
        permute(&mut self.rows, &order);
        permute(&mut self.marks, &order);
        permute(&mut self.targets, &order);
        // The new order replaces the one the title named, if it named one.
        let base = self.title.split(" — sorted by ").next().unwrap_or_default();
        self.title = format!(
            "{base} — sorted by {name} {}",
            if descending { "▼" } else { "▲" }
        );
        self
    }
    pub fn to_csv(&self) -> String {
        let esc = |s: &str| {
            if s.contains([',', '"', '\n']) {
                format!("\"{}\"", s.replace('"', "\"\""))
            } else {
                s.to_string()
            }
        };
        let mut out = self
            .header
            .iter()
            .map(|h| esc(h))
            .collect::<Vec<_>>()
            .join(",");
        out.push('\n');
        for r in &self.rows {
            out.push_str(&r.iter().map(|c| esc(c)).collect::<Vec<_>>().join(","));
            out.push('\n');
        }
        out
    }
}

/// The user's current choices.
#[derive(Debug, Clone, PartialEq)]
pub struct Selection {
    pub bench: usize,
    pub pair: usize,
    pub k: usize,
    pub level: usize,
    pub mode: Mode,
}

impl Default for Selection {
    fn default() -> Self {
        Selection {
            bench: 0,
            pair: 0,
            k: 0,
            level: 0,
            mode: Mode::Native,
        }
    }
}

pub fn benchmarks(a: &Audit) -> Vec<String> {
    let mut s: BTreeSet<String> = a.pass.cells.iter().map(|c| c.benchmark.clone()).collect();
    s.extend(a.pairs.iter().map(|p| p.benchmark.clone()));
    s.extend(a.matched.iter().map(|m| m.benchmark.clone()));
    s.into_iter().collect()
}

pub fn pairs_of<'a>(a: &'a Audit, bench: &str) -> Vec<&'a PairNames> {
    a.pairs.iter().filter(|p| p.benchmark == bench).collect()
}

/// Current benchmark and pair names.
pub fn current(a: &Audit, sel: &Selection) -> (Option<String>, Option<PairNames>) {
    let b = benchmarks(a);
    let bench = b.get(sel.bench % b.len().max(1)).cloned();
    let pair = bench.as_ref().and_then(|bn| {
        let ps = pairs_of(a, bn);
        (!ps.is_empty()).then(|| ps[sel.pair % ps.len()].clone())
    });
    (bench, pair)
}

/// Overview: headline findings, each leading to its panel.
pub fn findings(l: &Loaded) -> TableData {
    use crate::report::findings::Severity;
    let mut t = TableData::new(
        "findings",
        "Headline findings (Enter: go to panel)",
        &["finding", "where", "detail"],
    );
    for f in crate::report::findings::findings(&l.audit) {
        let mark = match f.severity {
            Severity::Good => Mark::Good,
            Severity::Info => Mark::None,
            Severity::Warning => Mark::Bad,
            Severity::Problem => Mark::VeryBad,
        };
        t.push(
            vec![f.kind.into(), f.place, f.detail],
            mark,
            Target::Panel(f.panel),
        );
    }
    if t.rows.is_empty() {
        t.push(
            vec!["no findings".into(), String::new(), String::new()],
            Mark::None,
            Target::None,
        );
    }
    t
}

/// Overview: what was loaded.
pub fn inputs(set: &LogSet, a: &Audit) -> Vec<String> {
    let c = set.record_counts();
    let eval = set.trajectories.iter().filter(|t| !t.is_training()).count();
    let mut lines = vec![
        format!(
            "{} file(s): {}",
            set.files.len(),
            set.files
                .iter()
                .take(3)
                .cloned()
                .collect::<Vec<_>>()
                .join(", ")
        ),
        format!(
            "records: {} trajectories ({} evaluation, {} training), {} probes, {} checkpoints",
            c["trajectory"],
            eval,
            c["trajectory"] as usize - eval,
            c["probe"],
            c["checkpoint"]
        ),
    ];
    if let Some((_, parts)) = set.skipped_summary() {
        lines.push(format!("skipped (--lenient): {parts}"));
    }
    if !set.unknown_kinds.is_empty() {
        lines.push(format!("unknown kinds: {:?}", set.unknown_kinds));
    }
    let pairs: Vec<String> = a
        .pairs
        .iter()
        .map(|p| format!("{}: {} → {}", p.benchmark, p.base, p.rl))
        .collect();
    lines.push(if pairs.is_empty() {
        "pairs: none (no run says method: base; use --compare BASE:RL)".into()
    } else {
        format!("pairs: {}", pairs.join("; "))
    });
    lines.extend(a.notes.iter().take(4).map(|n| format!("note: {n}")));
    lines
}

/// Budget: the K × level grid of the current pair (or of each run when there is no pair).
pub fn budget_grid(a: &Audit, sel: &Selection) -> TableData {
    let (bench, pair) = current(a, sel);
    let bench = bench.unwrap_or_default();
    let levels = &a.settings.levels;
    let mut header = vec!["K".to_string()];
    header.extend(levels.iter().map(|l| format!("{l}%")));
    let mode = sel.mode;
    let title = match &pair {
        Some(p) => format!(
            "{bench}: {} → {} ({}) — base% → RL%, Δ points",
            p.base,
            p.rl,
            mode.name()
        ),
        None => format!("{bench} ({}) — no pair: Pass per run", mode.name()),
    };
    let mut t = TableData {
        name: "budget-grid".into(),
        title,
        header,
        ..Default::default()
    };
    let cell = |run: &str, k: u64, level: u32| {
        a.pass.cells.iter().find(|c| {
            c.benchmark == bench && c.run == run && c.k == k && c.level == level && c.mode == mode
        })
    };
    for &k in &a.pass.ks {
        let mut row = vec![format!("{k}")];
        let mut mark = Mark::None;
        for &l in levels {
            let text = match &pair {
                Some(p) => {
                    let adv = a.pass.advantage.iter().find(|x| {
                        x.benchmark == bench
                            && x.base == p.base
                            && x.rl == p.rl
                            && x.k == k
                            && x.level == l
                            && x.mode == mode
                    });
                    match adv {
                        Some(x) => {
                            if x.significant_flip {
                                mark = Mark::VeryBad;
                            } else if x.flip && mark == Mark::None {
                                mark = Mark::Bad;
                            }
                            format!(
                                "{:.0}→{:.0} {:+.1}{}",
                                100.0 * x.base_pass,
                                100.0 * x.rl_pass,
                                100.0 * x.delta,
                                if x.significant_flip {
                                    "!"
                                } else if x.flip {
                                    "*"
                                } else {
                                    ""
                                }
                            )
                        }
                        None => "–".into(),
                    }
                }
                None => {
                    let runs: BTreeSet<&String> = a
                        .pass
                        .cells
                        .iter()
                        .filter(|c| c.benchmark == bench)
                        .map(|c| &c.run)
                        .collect();
                    runs.iter()
                        .filter_map(|r| cell(r, k, l).and_then(|c| c.value))
                        .map(|v| format!("{:.0}", 100.0 * v))
                        .collect::<Vec<_>>()
                        .join("/")
                }
            };
            row.push(text);
        }
        t.push(row, mark, Target::Tasks { k, level: 0 });
    }
    t
}

/// Budget: text about the selected cell.
pub fn cell_detail(a: &Audit, sel: &Selection) -> Vec<String> {
    let (bench, pair) = current(a, sel);
    let (Some(bench), Some(&k), Some(&level)) = (
        bench,
        a.pass.ks.get(sel.k),
        a.settings.levels.get(sel.level),
    ) else {
        return vec!["no evaluation rollouts".into()];
    };
    let mut out = Vec::new();
    let runs: Vec<String> = match &pair {
        Some(p) => vec![p.base.clone(), p.rl.clone()],
        None => a
            .pass
            .cells
            .iter()
            .filter(|c| c.benchmark == bench)
            .map(|c| c.run.clone())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect(),
    };
    for r in &runs {
        match a.pass.cells.iter().find(|c| {
            c.benchmark == bench
                && &c.run == r
                && c.k == k
                && c.level == level
                && c.mode == sel.mode
        }) {
            Some(c) => out.push(format!(
                "{r}: Pass@({k},{level}%) {} {} n={} tasks{}  Pass^ {}",
                pct(c.value),
                pct_ci(c.ci),
                c.tasks,
                if c.tasks_left_out > 0 {
                    format!(" ({} left out: < K rollouts)", c.tasks_left_out)
                } else {
                    String::new()
                },
                pct(c.pass_all)
            )),
            None => out.push(format!("{r}: no {} rollouts at {level}%", sel.mode.name())),
        }
    }
    if let Some(p) = &pair {
        if let Some(x) = a.pass.advantage.iter().find(|x| {
            x.benchmark == bench
                && x.base == p.base
                && x.rl == p.rl
                && x.k == k
                && x.level == level
                && x.mode == sel.mode
        }) {
            out.push(format!(
                "Δ {} {} over n={} tasks{}; headroom {}",
                pp(x.delta),
                signed_ci(x.ci, 100.0),
                x.tasks,
                if x.significant_flip {
                    " — SIGNIFICANT FLIP"
                } else if x.flip {
                    " — flip"
                } else {
                    ""
                },
                x.headroom
                    .map_or("–".into(), |h| format!("{:.1} pp", 100.0 * h))
            ));
        }
    }
    if let Some(u) = a
        .pass
        .upper
        .iter()
        .find(|u| u.benchmark == bench && u.level == level)
    {
        out.push(format!(
            "upper bound U(T) {} ({}, n={})",
            pct(Some(u.value)),
            u.kind,
            u.tasks
        ));
    }
    for g in
        a.pass.mode_gap.iter().filter(|g| {
            g.benchmark == bench && g.k == k && g.level == level && runs.contains(&g.run)
        })
    {
        out.push(format!(
            "{}: native − truncated {} {} (n={})",
            g.run,
            pp(g.diff),
            signed_ci(g.ci, 100.0),
            g.tasks
        ));
    }
    out
}

/// Drill-down from a Budget cell: tasks by contribution to Δ.
pub fn tasks_table(l: &Loaded, sel: &Selection, k: u64, level: u32) -> TableData {
    let a = &l.audit;
    let set = &l.set;
    let (bench, pair) = current(a, sel);
    let bench = bench.unwrap_or_default();
    let mut t = TableData::new(
        "tasks",
        format!(
            "{bench}: tasks at K={k}, {level}% ({}) — sorted by contribution to Δ",
            sel.mode.name()
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
            "Δ contrib",
        ],
    );
    let (Some(b), Some(p)) = (set.strings.get(&bench), pair) else {
        return t;
    };
    let (Some(base), Some(rl)) = (set.strings.get(&p.base), set.strings.get(&p.rl)) else {
        return t;
    };
    let mut rows = Vec::new();
    let tasks: Vec<_> = a.agg.tasks.range((b, 0)..=(b, u32::MAX)).collect();
    let n_tasks = tasks.len().max(1) as f64;
    for (&(_, task), info) in tasks {
        let get = |run| {
            a.agg
                .groups
                .get(&(b, run, task))
                .and_then(|g| cell_counts(g, *info, level, sel.mode))
        };
        let (bc, rc) = (get(base), get(rl));
        let pass =
            |x: Option<(u64, u64)>| x.filter(|(n, _)| *n >= k).map(|(n, c)| pass_at_k(n, c, k));
        let (pb, pr) = (pass(bc), pass(rc));
        let contrib = match (pb, pr) {
            (Some(x), Some(y)) => Some((y - x) / n_tasks),
            _ => None,
        };
        let fmt_n = |x: Option<(u64, u64)>| {
            (
                x.map_or("–".into(), |v| v.0.to_string()),
                x.map_or("–".into(), |v| v.1.to_string()),
            )
        };
        let (nb, cb) = fmt_n(bc);
        let (nr, cr) = fmt_n(rc);
        let name = set.name(task).to_string();
        rows.push((
            contrib.unwrap_or(f64::INFINITY),
            vec![
                name.clone(),
                info.min_turns.map_or("–".into(), |m| m.to_string()),
                crate::analysis::passkt::t_at_level(level, info.full_budget).to_string(),
                nb,
                cb,
                pct(pb),
                nr,
                cr,
                pct(pr),
                contrib.map_or("–".into(), |c| format!("{:+.2} pp", 100.0 * c)),
            ],
            contrib.is_some_and(|c| c < 0.0),
            name,
        ));
    }
    rows.sort_by(|x, y| x.0.total_cmp(&y.0));
    for (_, row, neg, name) in rows {
        t.push(
            row,
            if neg { Mark::Bad } else { Mark::None },
            Target::Rollouts { task: name, level },
        );
    }
    t
}

/// Drill-down from a task: the pair's evaluation rollouts that make up its
/// cell — at budget T (native) or at the full budget, counted as solved
/// when the success turn is ≤ T (truncated) — as many rows as the tasks
/// table's n.
pub fn rollouts_table(l: &Loaded, sel: &Selection, task: &str, level: u32) -> TableData {
    let a = &l.audit;
    let set = &l.set;
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
            "record",
        ],
    );
    let (Some(b), Some(task_id)) = (set.strings.get(&bench), set.strings.get(task)) else {
        return t;
    };
    let Some(info) = a.agg.tasks.get(&(b, task_id)) else {
        return t;
    };
    let full = info.full_budget;
    let tt = crate::analysis::passkt::t_at_level(level, full);
    let budget = match sel.mode {
        Mode::Native => tt,
        Mode::Truncated => full,
    };
    t.title = format!(
        "{bench} / {task}: the rollouts of the {level}% cell — T = {tt} of {full}, {} (budget {budget}); Enter: the trajectory",
        sel.mode.name()
    );
    let runs: Vec<Id> = pair
        .map(|p| {
            [p.base, p.rl]
                .iter()
                .filter_map(|r| set.strings.get(r))
                .collect()
        })
        .unwrap_or_default();
    for tr in set.trajectories.iter().filter(|x| {
        !x.is_training()
            && x.benchmark == b
            && x.task == task_id
            && x.budget == budget
            && (runs.is_empty() || runs.contains(&x.run))
    }) {
        let within = tr.success_turn.is_some_and(|s| s <= tt);
        t.push(
            vec![
                set.name(tr.run).into(),
                tr.budget.to_string(),
                tr.sample.map_or("–".into(), |s| s.to_string()),
                if tr.success { "yes" } else { "no" }.into(),
                tr.success_turn.map_or("–".into(), |s| s.to_string()),
                if within { "yes" } else { "no" }.into(),
                tr.turns.to_string(),
                tr.reward.map_or("–".into(), |r| format!("{r}")),
                set.steps_of(tr).len().to_string(),
                set.loc_text(tr.loc),
            ],
            if within { Mark::Good } else { Mark::None },
            Target::Trajectory(tr.loc),
        );
    }
    t
}

/// What the trajectory view shows while its record is being re-read.
pub fn reading_table(set: &LogSet, loc: Loc) -> TableData {
    let name = set.file_name(loc).to_string();
    let mut t = TableData::new(
        "trajectory",
        format!("{name}:{} — reading…", loc.line),
        &["turn"],
    );
    t.push(
        vec![format!(
            "reading {name} (a compressed file is decoded once, then kept)…"
        )],
        Mark::None,
        Target::None,
    );
    t
}

/// The step-by-step view of one record, re-read from its file.
pub fn trajectory_table(set: &LogSet, loc: Loc) -> TableData {
    let name = set.file_name(loc).to_string();
    let mut t = TableData::new(
        "trajectory",
        format!("{name}:{}", loc.line),
        &[
            "turn",
            "action",
            "observation",
            "tokens",
            "logp",
            "error",
            "budget total/remaining",
        ],
    );
    match crate::schema::load::read_record(&name, loc.line) {
        Ok(v) => {
            let head: Vec<String> = [
                "run",
                "benchmark",
                "task",
                "budget",
                "max_budget",
                "success",
                "success_turn",
                "turns",
                "reward",
                "train_step",
                "group",
            ]
            .iter()
            .filter_map(|k| v.get(*k).map(|x| format!("{k}={x}")))
            .collect();
            t.title = format!("{name}:{} — {}", loc.line, head.join(" "));
            for st in v
                .get("steps")
                .and_then(|s| s.as_array())
                .into_iter()
                .flatten()
            {
                let s = |k: &str| {
                    st.get(k).map_or("–".to_string(), |x| {
                        x.as_str().map_or(x.to_string(), str::to_string)
                    })
                };
                let logp = st
                    .get("logp")
                    .and_then(|l| l.as_object())
                    .map(|m| {
                        m.iter()
                            .map(|(r, x)| format!("{r}:{x}"))
                            .collect::<Vec<_>>()
                            .join(" ")
                    })
                    .unwrap_or_else(|| "–".into());
                let flag = st.get("error").and_then(|e| e.as_bool());
                let err = flag == Some(true);
                t.push(
                    vec![
                        s("turn"),
                        s("action"),
                        s("observation"),
                        s("output_tokens"),
                        logp,
                        match flag {
                            Some(true) => "ERROR".into(),
                            Some(false) => "no".into(),
                            None => "–".into(),
                        },
                        format!("{}/{}", s("budget_total"), s("budget_remaining")),
                    ],
                    if err { Mark::Bad } else { Mark::None },
                    Target::None,
                );
            }
            if t.rows.is_empty() {
                t.push(vec!["(no steps)".into()], Mark::None, Target::None);
            }
        }
        Err(e) => t.push(
            vec![format!("cannot re-read the record: {e}")],
            Mark::Bad,
            Target::None,
        ),
    }
    t
}

/// Records violating one BudgetMix rule.
pub fn rule_records(l: &Loaded, run: &str, rule: usize) -> TableData {
    let mut t = TableData::new(
        "violations",
        format!("{run}: violations"),
        &[
            "record",
            "train_step",
            "group",
            "budget",
            "max_budget",
            "success",
            "turns",
            "reward",
        ],
    );
    let Some(b) = l.audit.budgetmix.iter().find(|b| b.run == run) else {
        return t;
    };
    let Some(r) = b.rules.get(rule) else { return t };
    t.title = format!(
        "{run}: {} — {} of {} checked",
        r.rule, r.violations, r.checked
    );
    let set = &l.set;
    let mut seen = BTreeSet::new();
    for loc in &r.locations {
        if !seen.insert(*loc) {
            continue;
        }
        let tr = set.trajectories.iter().find(|x| x.loc == *loc);
        let row = match tr {
            Some(tr) => vec![
                set.loc_text(*loc),
                tr.train_step.map_or("–".into(), |s| s.to_string()),
                tr.group.map_or("–".into(), |g| set.name(g).to_string()),
                tr.budget.to_string(),
                tr.max_budget.map_or("–".into(), |m| m.to_string()),
                tr.success.to_string(),
                tr.turns.to_string(),
                tr.reward.map_or("missing".into(), |r| format!("{r}")),
            ],
            None => vec![set.loc_text(*loc)],
        };
        t.push(row, Mark::Bad, Target::Trajectory(*loc));
    }
    t
}

pub fn matched_table(a: &Audit) -> TableData {
    let mut t = TableData::new(
        "matched-states",
        "Matched states: is RL's next action better? (Wilson CIs; mean diff bootstrapped)",
        &[
            "benchmark",
            "base → RL",
            "states",
            "better",
            "tie",
            "worse",
            "mean q_RL − q_base",
        ],
    );
    for m in &a.matched {
        let w = |i: usize| {
            m.shares_ci[i].map_or(String::new(), |(l, h)| {
                format!(" [{:.0},{:.0}]", 100.0 * l, 100.0 * h)
            })
        };
        t.push(
            vec![
                m.benchmark.clone(),
                format!("{} → {}", m.base, m.rl),
                m.states.to_string(),
                format!("{}{}", pct(m.better), w(0)),
                format!("{}{}", pct(m.tie), w(1)),
                format!("{}{}", pct(m.worse), w(2)),
                score_diff(&m.mean_diff),
            ],
            Mark::None,
            Target::None,
        );
    }
    t
}

/// The result of the selected benchmark and pair among per-pair results.
fn for_pair<'a, T>(
    items: &'a [T],
    a: &Audit,
    sel: &Selection,
    key: impl Fn(&T) -> (&str, &str, &str),
) -> Option<&'a T> {
    let (bench, pair) = current(a, sel);
    items.iter().find(|x| {
        let (b, base, rl) = key(x);
        Some(b) == bench.as_deref() && pair.as_ref().is_none_or(|p| p.base == base && p.rl == rl)
    })
}

pub fn matched_turns(a: &Audit, sel: &Selection) -> TableData {
    let mut t = TableData::new(
        "matched-by-turn",
        "By turn position (early = turn ≤ median)",
        &["turn", "states", "RL better", "mean diff"],
    );
    let Some(m) = for_pair(&a.matched, a, sel, |m| (&m.benchmark, &m.base, &m.rl)) else {
        return t;
    };
    t.title = format!(
        "{}: {} → {} by turn (median turn {})",
        m.benchmark,
        m.base,
        m.rl,
        m.median_turn.map_or("–".into(), |x| x.to_string())
    );
    for r in &m.by_turn {
        t.push(
            vec![
                r.turn.to_string(),
                r.states.to_string(),
                pct(r.better),
                r.mean_diff.map_or("–".into(), |d| format!("{d:+.4}")),
            ],
            Mark::None,
            Target::None,
        );
    }
    for (name, h) in [("early", &m.early), ("late", &m.late)] {
        t.push(
            vec![
                name.into(),
                h.states.to_string(),
                pct(h.better),
                score_diff(&h.mean_diff),
            ],
            Mark::None,
            Target::None,
        );
    }
    t
}

pub fn recovery_table(a: &Audit, sel: &Selection) -> TableData {
    let mut t = TableData::new(
        "error-recovery",
        "Error recovery",
        &["figure", "base", "RL", "RL − base"],
    );
    let Some(r) = for_pair(&a.recovery, a, sel, |r| (&r.benchmark, &r.base, &r.rl)) else {
        return t;
    };
    t.title = format!(
        "{}: {} → {} — {} error states ({} scored)",
        r.benchmark, r.base, r.rl, r.states, r.scored
    );
    let est = |e: &Option<crate::analysis::stats::Estimate>| {
        e.map_or("– (field absent)".into(), |e| {
            format!("{} {}", pct(Some(e.value)), pct_ci(e.ci))
        })
    };
    let diff = |e: &Option<crate::analysis::stats::Estimate>| {
        e.map_or("–".into(), |e| {
            format!("{} {}", pp(e.value), signed_ci(e.ci, 100.0))
        })
    };
    t.push(
        vec![
            "RL better".into(),
            String::new(),
            format!(
                "{}{}",
                pct(r.better),
                r.better_ci.map_or(String::new(), |(l, h)| format!(
                    " [{:.1}, {:.1}]",
                    100.0 * l,
                    100.0 * h
                ))
            ),
            String::new(),
        ],
        Mark::None,
        Target::None,
    );
    t.push(
        vec![
            "correction".into(),
            est(&r.correction[0]),
            est(&r.correction[1]),
            diff(&r.correction_diff),
        ],
        Mark::None,
        Target::None,
    );
    t.push(
        vec![
            "terminal success".into(),
            est(&r.terminal_success[0]),
            est(&r.terminal_success[1]),
            diff(&r.terminal_success_diff),
        ],
        Mark::None,
        Target::None,
    );
    for (label, b) in r.breakdowns() {
        t.push(
            vec![
                label,
                format!(
                    "corr {} term {}",
                    pct(b.correction[0]),
                    pct(b.terminal_success[0])
                ),
                format!(
                    "corr {} term {}",
                    pct(b.correction[1]),
                    pct(b.terminal_success[1])
                ),
                format!("n={}, RL better {}", b.states, pct(b.better)),
            ],
            Mark::None,
            Target::None,
        );
    }
    t
}

pub fn likelihood_table(a: &Audit) -> TableData {
    let mut t = TableData::new(
        "likelihood",
        "Likelihood under base (successful full-budget trajectories)",
        &[
            "benchmark",
            "base → RL",
            "step NLL base",
            "step NLL RL",
            "overlap",
            "LLR base",
            "LLR RL",
            "length-matched d",
            "tasks/pairs",
        ],
    );
    for l in &a.likelihood {
        let s = |x: &Option<crate::analysis::likelihood::Summary>| {
            x.map_or("–".into(), |x| format!("{:.2} (n={})", x.mean, x.n))
        };
        let lm = &l.length_matched;
        t.push(
            vec![
                l.benchmark.clone(),
                format!("{} → {}", l.base, l.rl),
                s(&l.step_nll[0]),
                s(&l.step_nll[1]),
                l.overlap.map_or("–".into(), |o| format!("{o:.3}")),
                s(&l.llr[0]),
                s(&l.llr[1]),
                lm.mean_diff.map_or("–".into(), |e| {
                    format!("{:.2} {}", e.value, signed_ci(e.ci, 1.0))
                }),
                format!("{}/{}", lm.tasks, lm.pairs),
            ],
            if lm.mean_diff.is_some_and(|e| e.ci.above_zero()) {
                Mark::Good
            } else {
                Mark::None
            },
            Target::None,
        );
    }
    t
}

pub fn dynamics_table(a: &Audit) -> TableData {
    let divergent: Vec<&str> = a
        .divergence
        .iter()
        .filter(|d| d.divergent)
        .map(|d| d.run.as_str())
        .collect();
    let verdict = if divergent.is_empty() {
        "no run divergent".to_string()
    } else {
        format!("DIVERGENT: {}", divergent.join(", "))
    };
    let mut t = TableData::new(
        "dynamics",
        format!("Checkpoint metrics (slope per step, 95% t-interval) — {verdict}"),
        &[
            "run", "metric", "n", "first", "last", "change", "slope", "95% CI",
        ],
    );
    for d in &a.dynamics {
        let sig = d.slope_ci.map(|(l, h)| {
            if l > 0.0 {
                Mark::Good
            } else if h < 0.0 {
                Mark::Bad
            } else {
                Mark::None
            }
        });
        t.push(
            vec![
                d.run.clone(),
                d.metric.clone(),
                d.checkpoints.to_string(),
                format!("{:.4}", d.first),
                format!("{:.4}", d.last),
                format!("{:+.4}", d.change),
                d.slope.map_or("–".into(), |s| format!("{s:+.2e}")),
                d.slope_ci.map_or("– (< 3 points)".into(), |(l, h)| {
                    format!("[{l:+.2e}, {h:+.2e}]")
                }),
            ],
            sig.unwrap_or(Mark::None),
            Target::None,
        );
    }
    t
}

pub fn budgetmix_table(a: &Audit, sel: &Selection) -> TableData {
    let mut t = TableData::new(
        "budgetmix-rules",
        "BudgetMix audit (Enter: violating records)",
        &["rule", "checked", "violations", "rate", "p-value", "first"],
    );
    if a.budgetmix.is_empty() {
        return t;
    }
    let b = &a.budgetmix[sel.pair % a.budgetmix.len()];
    t.title = format!(
        "BudgetMix audit of {} (p: next audited run; Enter: violating records)",
        b.run
    );
    for (i, r) in b.rules.iter().enumerate() {
        t.push(
            vec![
                r.rule.into(),
                r.checked.to_string(),
                r.violations.to_string(),
                pct(r.rate()),
                r.p_value.map_or("–".into(), |p| format!("{p:.4}")),
                r.examples.first().cloned().unwrap_or_default(),
            ],
            if r.violations > 0 {
                Mark::VeryBad
            } else {
                Mark::Good
            },
            if r.violations > 0 && !r.locations.is_empty() {
                Target::RuleRecords {
                    run: b.run.clone(),
                    rule: i,
                }
            } else {
                Target::None
            },
        );
    }
    t
}

pub fn gains_table(a: &Audit, sel: &Selection) -> TableData {
    let mut t = TableData::new(
        "budgetmix-gains",
        "Gain over the full-budget RL run, Pass@(1,T)",
        &["benchmark", "level", "gain", "vs", "modes"],
    );
    if a.budgetmix.is_empty() {
        return t;
    }
    let b = &a.budgetmix[sel.pair % a.budgetmix.len()];
    for g in &b.gains {
        t.push(
            vec![
                g.benchmark.clone(),
                format!("{}%", g.level),
                pp(g.gain),
                g.vs.clone(),
                g.modes
                    .iter()
                    .map(|(r, m)| format!("{r}:{m}"))
                    .collect::<Vec<_>>()
                    .join(" "),
            ],
            if g.gain < 0.0 { Mark::Bad } else { Mark::None },
            Target::None,
        );
    }
    for (l, g) in &b.mean_gain {
        t.push(
            vec![
                "mean".into(),
                format!("{l}%"),
                pp(*g),
                String::new(),
                String::new(),
            ],
            Mark::None,
            Target::None,
        );
    }
    for n in &b.notes {
        t.push(vec![format!("note: {n}")], Mark::None, Target::None);
    }
    t
}

/// Cost: distinct costs of the current benchmark, ascending (the ceiling cursor's stops).
pub fn cost_stops(a: &Audit, bench: &str) -> Vec<f64> {
    let mut c: Vec<f64> = a
        .cost_frontier
        .iter()
        .filter(|p| p.benchmark == bench)
        .map(|p| p.cost)
        .collect();
    c.sort_by(f64::total_cmp);
    c.dedup_by(|x, y| crate::analysis::cost::approx_eq(*x, *y));
    c
}

/// Cost: each run's best point under the ceiling, and the winner.
pub fn cost_table(a: &Audit, bench: &str, ceiling: f64) -> TableData {
    use crate::analysis::cost::better;
    let mut t = TableData::new(
        "cost",
        format!("{bench}: best cell per run under a cost of {ceiling:.2} (←→ moves the ceiling)"),
        &["run", "K", "level", "mode", "Pass", "cost", ""],
    );
    let runs: BTreeSet<&String> = a
        .cost_frontier
        .iter()
        .filter(|p| p.benchmark == bench)
        .map(|p| &p.run)
        .collect();
    let mut bests = Vec::new();
    for r in runs {
        let best = a
            .cost_frontier
            .iter()
            .filter(|p| {
                p.benchmark == bench
                    && &p.run == r
                    && (p.cost <= ceiling || crate::analysis::cost::approx_eq(p.cost, ceiling))
            })
            .min_by(|x, y| better(x, y));
        if let Some(b) = best {
            bests.push(b);
        }
    }
    let winner = bests.iter().copied().min_by(|x, y| better(x, y));
    for b in &bests {
        let win = winner.is_some_and(|w| std::ptr::eq(w, *b));
        t.push(
            vec![
                b.run.clone(),
                b.k.to_string(),
                format!("{}%", b.level),
                b.mode.name().into(),
                pct(Some(b.pass)),
                format!("{:.2}", b.cost),
                if win { "winner".into() } else { String::new() },
            ],
            if win { Mark::Good } else { Mark::None },
            Target::None,
        );
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorting_reads_numbers_as_numbers_and_keeps_rows_whole() {
        let mut t = TableData::new("t", "title", &["name", "value"]);
        for (name, v) in [
            ("a", "12.5%"),
            ("b", "–"),
            ("c", "9.0% [1.0, 20.0]"),
            ("d", "+0.07 pp"),
            ("e", "-3"),
            ("f", "100"),
        ] {
            let target = Target::Rollouts {
                task: name.into(),
                level: 25,
            };
            t.push(vec![name.into(), v.into()], Mark::None, target);
        }
        let names = |t: &TableData| t.rows.iter().map(|r| r[0].clone()).collect::<String>();
        let up = t.clone().sorted(1, false);
        // -3 < 0.07 < 9.0 < 12.5 < 100, and the missing value last.
        assert_eq!(names(&up), "edcafb");
        assert!(up.title.ends_with("sorted by value ▲"));
        // Each row keeps its own target.
        for (row, target) in up.rows.iter().zip(&up.targets) {
            assert_eq!(
                target,
                &Target::Rollouts {
                    task: row[0].clone(),
                    level: 25
                }
            );
        }
        // Descending: numbers reversed, the missing value still last.
        assert_eq!(names(&t.clone().sorted(1, true)), "facdeb");
        // Text columns sort as text.
        assert_eq!(names(&t.sorted(0, true)), "fedcba");
    }
}
