//! Drill-downs that show records: one trajectory step by step (re-read
//! from its file), the rollouts breaking a BudgetMix rule, and the records
//! `--follow` read since the audit on screen.

use std::collections::BTreeSet;

use crate::analysis::likelihood::LlrTurn;
use crate::analysis::Audit;
use crate::jobs::Loaded;
use crate::report::format::{share_n, signed_ci_prec};
use crate::schema::{at_loc, Loc, LogSet};
use crate::tui::app::Appended;
use crate::tui::table::{Cell, LakeDraw, Mark, TableData, Target};

/// What the trajectory view shows while its record is being re-read.
pub fn reading(set: &LogSet, loc: Loc) -> TableData {
    let name = set.file_name(loc).to_string();
    let mut t = TableData::new(
        "trajectory",
        format!("{name}:{} — reading…", loc.line()),
        &["turn"],
    );
    t.push_text(
        vec![format!(
            "reading {name} (a compressed file is decoded once, then kept)…"
        )],
        Mark::None,
        Target::None,
    );
    t
}

/// The step-by-step view of one record, re-read from its file.
pub fn trajectory(set: &LogSet, loc: Loc) -> TableData {
    let name = set.file_name(loc).to_string();
    let mut t = TableData::new(
        "trajectory",
        format!("{name}:{}", loc.line()),
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
    match set.read_record(loc) {
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
                "termination",
                "reward",
                "train_step",
                "group",
            ]
            .iter()
            .filter_map(|k| v.get(*k).map(|x| format!("{k}={x}")))
            .collect();
            t.title = format!("{name}:{} — {}", loc.line(), head.join(" "));
            for st in v
                .get("steps")
                .and_then(|s| s.as_array())
                .into_iter()
                .flatten()
            {
                // Absent or null (a Parquet column without a value): `–`.
                let s = |k: &str| {
                    st.get(k)
                        .filter(|x| !x.is_null())
                        .map_or("–".to_string(), |x| {
                            x.as_str().map_or(x.to_string(), str::to_string)
                        })
                };
                let n = |k: &str| st.get(k).and_then(|x| x.as_f64());
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
                t.push(
                    vec![
                        Cell::num(s("turn"), n("turn")),
                        Cell::text(s("action")),
                        Cell::text(s("observation")),
                        Cell::num(s("output_tokens"), n("output_tokens")),
                        Cell::text(logp),
                        Cell::text(match flag {
                            Some(true) => "ERROR",
                            Some(false) => "no",
                            None => "–",
                        }),
                        Cell::text(format!("{}/{}", s("budget_total"), s("budget_remaining"))),
                    ],
                    if flag == Some(true) {
                        Mark::Bad
                    } else {
                        Mark::None
                    },
                    Target::Open(crate::tui::app::View::Step {
                        loc,
                        step: t.rows.len(),
                    }),
                );
            }
            if t.rows.is_empty() {
                t.push_text(vec!["(no steps)".into()], Mark::None, Target::None);
                // An outcome-only dump's prompt and response are in its
                // source row alone: its fields, as the file holds them.
                if set.mapped.is_some() {
                    source_rows(&mut t, set, loc);
                }
            }
            t.lake = lake_of(set, &v);
        }
        Err(e) => t.push_text(
            vec![format!("cannot re-read the record: {e}")],
            Mark::Bad,
            Target::None,
        ),
    }
    t
}

/// Two stepless `--map` records' source rows side by side, a field a row
/// (every field of either, in name order; `≠` where they differ), as
/// their files hold them.
fn compare_sources(set: &LogSet, locs: [Loc; 2], who: String) -> TableData {
    let rows = locs.map(|l| match set.read_source(l) {
        Ok(serde_json::Value::Object(m)) => m,
        _ => serde_json::Map::new(),
    });
    let mut t = TableData::new(
        "compare",
        format!("no steps: their source rows; {who}"),
        &["field", "A", "B"],
    );
    let keys: BTreeSet<&String> = rows.iter().flat_map(|r| r.keys()).collect();
    for k in keys {
        let [x, y] = [&rows[0], &rows[1]].map(|r| r.get(k).map_or("–".into(), source_text));
        let name = if x != y {
            format!("{k} ≠")
        } else {
            k.clone()
        };
        t.push(
            vec![Cell::text(name), Cell::text(x), Cell::text(y)],
            Mark::None,
            Target::None,
        );
    }
    t
}

/// A source row's field as its views show it: a text as it is, its line
/// breaks as `⏎`; any other value as JSON.
fn source_text(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.replace('\n', " ⏎ "),
        other => other.to_string(),
    }
}

/// A `--map` record's source row under its (stepless) trajectory: a note a
/// field, `name: value`, a text's line breaks shown as `⏎`.
fn source_rows(t: &mut TableData, set: &LogSet, loc: Loc) {
    match set.read_source(loc) {
        Ok(serde_json::Value::Object(fields)) => {
            t.push_note(format!("source row {}:", set.loc_text(loc)));
            for (k, v) in &fields {
                t.push_note(format!("  {k}: {}", source_text(v)));
            }
        }
        Ok(_) => {}
        Err(e) => t.push_note(format!("cannot re-read the source row: {e}")),
    }
}

/// One step of a trajectory's table (`traj`, [`trajectory`]) whole: each
/// field's name on a line, then its text on lines of its own, wrapped at
/// its spaces to a screen `width` columns wide, two columns in (↑↓ and
/// PgUp / PgDn read on; `/` keeps the lines holding a word).
pub fn step(traj: &TableData, step: usize, width: u16) -> TableData {
    let record = traj.title.split(" — ").next().unwrap_or_default();
    let mut t = TableData::new(
        "step",
        format!("{record} — turn {} whole", traj.text(step, 0)),
        &["field: text"],
    );
    let Some(row) = traj.rows.get(step) else {
        return t;
    };
    // Borders, the selection mark, the indent and a column spare.
    let room = usize::from(width).saturating_sub(6).max(20);
    for (h, c) in traj.header.iter().zip(&row.cells) {
        t.push_text(vec![format!("{h}:")], Mark::None, Target::None);
        for line in c
            .text
            .split('\n')
            .flat_map(|l| crate::tui::widgets::wrap_words(l, room, room))
        {
            t.push_text(vec![format!("  {line}")], row.mark, Target::None);
        }
    }
    t
}

/// The states behind a matched-states row (SPEC §2.2) or an
/// error-recovery row (§2.3, `error`): the pair's states as the analysis
/// chooses them ([`crate::analysis::probes::states_of`], `--balance` and all), in file order,
/// each run's mean candidate score, RL − base and the verdict, and for
/// error states each run's correcting and terminal-success shares. Enter
/// opens the probe.
pub fn states(
    set: &LogSet,
    settings: &crate::analysis::Settings,
    pair: &crate::analysis::PairNames,
    error: bool,
) -> TableData {
    use crate::analysis::probes::{self, Verdict};
    let states = probes::states_of(set, pair, error, settings);
    let refs: Vec<&probes::PairState> = states.iter().collect();
    let (scored, better, tie, worse) = probes::verdict_counts(&refs);
    let what = if error {
        "error states"
    } else {
        "matched states"
    };
    let mut header = vec![
        "task",
        "state",
        "source",
        "turn",
        "q base",
        "q RL",
        "RL − base",
        "verdict",
    ];
    if error {
        header.extend([
            "corrects base",
            "corrects RL",
            "terminal base",
            "terminal RL",
        ]);
    }
    let mut t = TableData::new(
        "states",
        format!(
            "{}: {} → {} — {} {what}, {scored} scored: {better} better, {tie} tie, {worse} worse (Enter: the probe)",
            pair.benchmark,
            pair.base,
            pair.rl,
            states.len()
        ),
        &header,
    );
    // A mean score with the candidates it averages.
    let score =
        |x: Option<f64>, n: usize| Cell::num(x.map_or("–".into(), |x| format!("{x:.4} n={n}")), x);
    let share =
        |x: Option<f64>| Cell::num(x.map_or("–".into(), |x| format!("{:.1}%", 100.0 * x)), x);
    for s in &states {
        let Some(p) = set.probes.get(s.probe) else {
            continue;
        };
        let (verdict, mark) = match s.verdict() {
            Some(Verdict::Better) => ("better", Mark::Good),
            Some(Verdict::Tie) => ("tie", Mark::None),
            Some(Verdict::Worse) => ("worse", Mark::Bad),
            None => ("unscored", Mark::None),
        };
        let d = s.diff();
        let mut cells = vec![
            Cell::text(set.name(s.task)),
            Cell::text(set.name(p.state)),
            Cell::text(set.name(s.source)),
            Cell::count(s.turn),
            score(s.q[0], s.scored[0]),
            score(s.q[1], s.scored[1]),
            Cell::num(d.map_or("–".into(), |x| format!("{x:+.4}")), d),
            Cell::text(verdict),
        ];
        if error {
            cells.extend([
                share(s.corrects[0]),
                share(s.corrects[1]),
                share(s.terminal[0]),
                share(s.terminal[1]),
            ]);
        }
        t.push(
            cells,
            mark,
            Target::Open(crate::tui::app::View::Probe(p.loc)),
        );
    }
    if t.rows.is_empty() {
        t.push_note(format!(
            "none: no probe of {} has candidates of both runs",
            pair.benchmark
        ));
    }
    t
}

/// A probe (SPEC §1.2) re-read: its state, source, turn and error in the
/// title, a row per candidate — its run, action, score (the log's, or on
/// FrozenLake the exact Q* the analysis scores it by, with γ `gamma`),
/// whether it corrects the error and whether its continuation succeeded —
/// and on FrozenLake the lake with the agent at the state.
pub fn probe(set: &LogSet, loc: Loc, gamma: f64) -> TableData {
    let mut t = TableData::new(
        "probe",
        set.loc_text(loc),
        &["run", "action", "score", "corrects", "terminal success"],
    );
    let Some(p) = set.probes.iter().find(|p| p.loc == loc) else {
        t.push_note("no such probe in the logs on screen");
        return t;
    };
    let record = set.read_record(loc);
    let field = |k: &str| -> Option<String> {
        let x = record.as_ref().ok()?.get(k)?;
        Some(x.as_str().map_or(x.to_string(), str::to_string))
    };
    let injected =
        field("injected_action").map_or(String::new(), |a| format!(" injected_action={a}"));
    t.title = format!(
        "{} — task={} state={} source={} turn={} error={}{injected}",
        set.loc_text(loc),
        set.name(p.task),
        set.name(p.state),
        set.name(p.source),
        p.turn,
        p.error
    );
    let actions: Vec<String> = match &record {
        Ok(v) => v["candidates"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|c| match &c["action"] {
                serde_json::Value::String(s) => s.clone(),
                serde_json::Value::Null => "–".into(),
                x => x.to_string(),
            })
            .collect(),
        Err(e) => {
            t.push_note(format!("cannot re-read the record: {e}"));
            Vec::new()
        }
    };
    let yes_no = |x: Option<bool>| Cell::text(x.map_or("–", |b| if b { "yes" } else { "no" }));
    let mut cache = crate::analysis::frozenlake::QCache::default();
    for (j, c) in set.candidates_of(p).iter().enumerate() {
        let score = crate::analysis::probes::score_of(c, p, gamma, &mut cache);
        let how = if c.score.is_none() && score.is_some() {
            " (Q*)"
        } else {
            ""
        };
        // A FrozenLake move by number: its name beside it.
        let action = actions.get(j).cloned().unwrap_or_else(|| "–".into());
        let named = (c.move_index.map(usize::from))
            .and_then(|a| crate::env::frozenlake::MOVES.get(a))
            .filter(|_| p.frozenlake.is_some());
        let action = match named {
            Some(m) if action != *m => format!("{action} ({m})"),
            _ => action,
        };
        t.push(
            vec![
                Cell::text(set.name(c.run)),
                Cell::text(action),
                Cell::num(score.map_or("–".into(), |x| format!("{x:.4}{how}")), score),
                yes_no(c.corrects),
                yes_no(c.terminal_success),
            ],
            Mark::None,
            Target::None,
        );
    }
    // The agent at the state, at its turn.
    t.lake = p.frozenlake.as_ref().map(|f| LakeDraw {
        map: f.map.clone(),
        states: vec![Some(f.pos)],
        offset: p.turn.saturating_sub(1),
    });
    t
}

/// A Likelihood row's length-matched pairs (SPEC §2.4), as the analysis
/// forms them ([`crate::analysis::likelihood::matched_pairs`]): task by
/// task, each pair's RL and base trajectory with its length (tokens) and
/// LLR, and d; the title gives the row's mean d with its interval. Enter
/// opens the two side by side (A base, B RL).
pub fn length_matched(set: &LogSet, a: &Audit, pair: &crate::analysis::PairNames) -> TableData {
    let mut t = TableData::new(
        "length-matched",
        format!(
            "{}: {} → {} — length-matched pairs",
            pair.benchmark, pair.base, pair.rl
        ),
        &[
            "task",
            "RL record",
            "RL tokens",
            "RL LLR",
            "base record",
            "base tokens",
            "base LLR",
            "d",
        ],
    );
    let row = a
        .likelihood
        .iter()
        .find(|l| (l.benchmark.as_str(), l.base.as_str(), l.rl.as_str()) == pair.key());
    if let Some(lm) = row.map(|l| &l.length_matched) {
        t.title = format!(
            "{}: {} → {} — {} length-matched pairs over {} tasks, mean d {} (Enter: the two side by side)",
            pair.benchmark,
            pair.base,
            pair.rl,
            lm.pairs,
            lm.tasks,
            lm.mean_diff.map_or("–".into(), |e| crate::report::format::nats(&e)),
        );
    }
    let pairs = match crate::analysis::likelihood::matched_pairs(set, pair) {
        Ok(p) => p,
        Err(e) => {
            t.push_note(format!("cannot read the log-probabilities back: {e}"));
            return t;
        }
    };
    let num = |x: f64, text: String| Cell::num(text, Some(x));
    for p in &pairs {
        let d = p.d();
        t.push(
            vec![
                Cell::text(set.name(p.task)),
                Cell::place(set.loc_text(p.rl.loc)),
                Cell::count(p.rl.len),
                num(p.rl.llr, format!("{:+.3}", p.rl.llr)),
                Cell::place(set.loc_text(p.base.loc)),
                Cell::count(p.base.len),
                num(p.base.llr, format!("{:+.3}", p.base.llr)),
                num(d, format!("{d:+.3}")),
            ],
            Mark::None,
            Target::Open(crate::tui::app::View::Compare(p.base.loc, p.rl.loc)),
        );
    }
    if t.rows.is_empty() {
        t.push_note("none: no task has a successful RL and base trajectory within 10% of each other's length, both with every step's log-probabilities");
    }
    t
}

/// A Training row's series: the run's metric at each checkpoint, in step
/// order, as the trend's slope is fitted to it (SPEC §2.5).
pub fn checkpoints(a: &Audit, run: &str, metric: &str) -> TableData {
    let mut t = TableData::new(
        "checkpoints",
        format!("{run}: {metric} at each checkpoint"),
        &["step", metric],
    );
    let Some(d) = a
        .dynamics
        .iter()
        .find(|d| d.run == run && d.metric == metric)
    else {
        t.push_note("not in the audit on screen");
        return t;
    };
    t.title = format!("{run}: {metric} at each of {} checkpoints", d.checkpoints);
    for &(step, value) in &d.points {
        t.push(
            vec![
                Cell::num(format!("{step}"), Some(step)),
                Cell::num(format!("{value}"), Some(value)),
            ],
            Mark::None,
            Target::None,
        );
    }
    t
}

/// `P`'s pair picker: every run with its declared method, its benchmarks
/// and the pairs it is in now; the base once picked (`base`) marked, and
/// the runs sharing no benchmark with it say so. Enter picks
/// ([`Target::Run`]).
pub fn runs(a: &Audit, base: Option<&str>) -> TableData {
    let title = match base {
        None => "pick a pair to compare: Enter on the base run".to_string(),
        Some(b) => {
            format!("base {b}: Enter on the RL run to compare it with (d: stop comparing them)")
        }
    };
    let mut t = TableData::new(
        "runs",
        title,
        &["run", "method", "benchmarks", "compared now"],
    );
    let shared = |r: &crate::analysis::RunOn| {
        base.and_then(|b| a.run(b))
            .is_none_or(|b| b.benchmarks.iter().any(|x| r.benchmarks.contains(x)))
    };
    for r in &a.runs {
        // Each pair once, whichever benchmarks compare it.
        let mut now: Vec<String> = Vec::new();
        for p in &a.pairs {
            let s = if p.base == r.run {
                format!("base of {}", p.rl)
            } else if p.rl == r.run {
                format!("RL against {}", p.base)
            } else {
                continue;
            };
            if !now.contains(&s) {
                now.push(s);
            }
        }
        let mark = if base == Some(r.run.as_str()) {
            Mark::Good
        } else {
            Mark::None
        };
        let benchmarks = if shared(r) {
            r.benchmarks.join(", ")
        } else {
            format!("{} (none with the base)", r.benchmarks.join(", "))
        };
        let run = if mark == Mark::Good {
            format!("{} (the base)", r.run)
        } else {
            r.run.clone()
        };
        t.push(
            vec![
                Cell::text(run),
                Cell::text(r.method.clone().unwrap_or_else(|| "–".into())),
                Cell::text(benchmarks),
                Cell::text(if now.is_empty() {
                    "–".to_string()
                } else {
                    now.join("; ")
                }),
            ],
            mark,
            Target::Run(r.run.clone()),
        );
    }
    if t.rows.is_empty() {
        t.push_note(if a.training_runs.is_empty() {
            "no runs: the logs hold no evaluation rollouts or probes"
        } else {
            "no runs: the logs hold no evaluation rollouts or probes (their training rollouts: A on the BudgetMix panel)"
        });
    }
    t
}

/// `A`: the runs with training rollouts, each with its method, how many
/// and whether it is audited as BudgetMix; Enter audits one, or stops
/// auditing it ([`Target::Audit`]).
pub fn training_runs(a: &Audit) -> TableData {
    use crate::analysis::budgetmix::Audited;
    let mut t = TableData::new(
        "training-runs",
        "runs with training rollouts: Enter audits one as BudgetMix, or stops auditing it",
        &["run", "method", "training rollouts", "audited"],
    );
    if a.is_pending(crate::analysis::Part::BudgetMix) && !a.budgetmix_rules_in {
        t.push_note("computing… (the runs are counted with the BudgetMix audit's rules)");
        return t;
    }
    for r in &a.training_runs {
        let (audited, mark) = match r.audited {
            Audited::ByMethod => ("yes: method budgetmix", Mark::Good),
            Audited::ByName => ("yes: --audit (Enter: stop)", Mark::Good),
            Audited::No => ("no (Enter: audit it)", Mark::None),
        };
        t.push(
            vec![
                Cell::text(r.run.clone()),
                Cell::text(r.method.clone().unwrap_or_else(|| "–".into())),
                Cell::count(r.rollouts),
                Cell::text(audited),
            ],
            mark,
            Target::Audit(r.run.clone()),
        );
    }
    if t.rows.is_empty() {
        t.push_note("no training rollouts: trajectory records with train_step (SPEC §1.1)");
    }
    t
}

/// A turn of two trajectories ([`compare`]) read whole: under each
/// record's line (`A: file:line — run=… …`, wrapped), its step as [`step`]
/// gives it from the trajectory's table (`ta`, `tb`), or why there is none.
pub fn compare_step(ta: &TableData, tb: &TableData, step: usize, width: u16) -> TableData {
    let record = |t: &TableData| t.title.split(" — ").next().unwrap_or_default().to_string();
    let mut t = TableData::new(
        "compare-step",
        format!("{} | {} — turn {} whole", record(ta), record(tb), step + 1),
        &["field: text"],
    );
    let room = usize::from(width).saturating_sub(4).max(20);
    for (side, tr) in [("A", ta), ("B", tb)] {
        let head = format!("{side}: {}", tr.title);
        for line in crate::tui::widgets::wrap_words(&head, room, room) {
            t.push_text(vec![line], Mark::None, Target::None);
        }
        // A step's row opens it; "(no steps)" and a read's error do not.
        let steps = tr.rows.iter().filter(|r| r.target != Target::None).count();
        if step < steps {
            t.rows.extend(self::step(tr, step, width).rows);
        } else {
            let why = match tr.rows.first() {
                Some(r) if steps == 0 => r.cells[0].text.clone(),
                _ => format!("its trajectory has {steps} steps"),
            };
            t.push_text(
                vec![format!("  (no turn {}: {why})", step + 1)],
                Mark::None,
                Target::None,
            );
        }
    }
    t
}

/// A pair's step log-likelihood ratio log π_RL − log π_base turn by turn
/// (SPEC §4.5, `llr_by_turn`): one row a turn, over the base run's
/// rollouts and over the RL run's, each the pooled mean over the steps at
/// that turn with its cluster-bootstrap interval over tasks and its n.
pub fn llr_turns(a: &Audit, (benchmark, base, rl): (&str, &str, &str)) -> TableData {
    let mut t = TableData::new(
        "llr-by-turn",
        // The pair and "by turn" are in the breadcrumb before it.
        format!("{benchmark}: step LLR, log π_RL − log π_base"),
        &[
            "turn",
            &format!("steps ({base}'s)"),
            &format!("LLR ({base}'s rollouts)"),
            &format!("steps ({rl}'s)"),
            &format!("LLR ({rl}'s rollouts)"),
        ],
    );
    let mut turns: std::collections::BTreeMap<u32, [Option<&LlrTurn>; 2]> = Default::default();
    for x in a
        .llr_by_turn
        .iter()
        .filter(|x| x.key() == (benchmark, base, rl))
    {
        let side = usize::from(x.run == rl);
        turns.entry(x.turn).or_default()[side] = Some(x);
    }
    // The pair's rows once in, while the part is pending (the Likelihood
    // panel on screen, a pair at a time): with their values (`[…]`), then
    // provisional intervals, before their intervals are drawn. Until then,
    // computing.
    if !a.llr_in((benchmark, base, rl)) {
        t.push_note("computing…");
        return t;
    }
    if turns.is_empty() {
        t.push_note(format!("none: no step of a successful full-budget rollout carries both steps[].logp.{base} and .{rl}"));
    }
    let shown = turns
        .values()
        .flatten()
        .flatten()
        .map(|x| x.ci)
        .collect::<Vec<_>>();
    for (turn, sides) in turns {
        let mut cells = vec![Cell::count(turn)];
        for x in sides {
            match x {
                Some(x) => {
                    cells.push(Cell::count(x.steps));
                    cells.push(Cell::num(
                        format!("{:+.2} {}", x.mean, signed_ci_prec(x.ci, 1.0, 2)),
                        Some(x.mean),
                    ));
                }
                None => cells.extend([Cell::text("–"), Cell::text("–")]),
            }
        }
        t.push(cells, Mark::None, Target::None);
    }
    super::provisional_title(&mut t, a.settings.boot.resamples, shown);
    t
}

/// Natural recovery turn by turn (SPEC §4.6's `by_turn`), one row a turn,
/// for each run: the share of error events at that turn whose next step is
/// clean, and the share of rollouts whose first error event is at that turn
/// that succeeded — point figures, each with its n.
pub fn natural_turns(a: &Audit, benchmark: &str, runs: &[String]) -> TableData {
    let mut header = vec!["turn".to_string()];
    for r in runs {
        header.push(format!("{r} next_ok"));
        header.push(format!("{r} recovered"));
    }
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    let mut t = TableData::new(
        "natural-recovery-by-turn",
        // The runs and "by turn" are in the breadcrumb before it.
        format!("{benchmark}: natural recovery — next_ok (n error events), recovered (n rollouts, by first error)"),
        &header,
    );
    let of: Vec<Option<&crate::analysis::natural::RunRecovery>> = runs
        .iter()
        .map(|r| {
            a.natural_recovery
                .iter()
                .find(|n| n.benchmark == benchmark && &n.run == r)
        })
        .collect();
    let turns: BTreeSet<u32> = of
        .iter()
        .flatten()
        .flat_map(|n| n.by_turn.iter().map(|t| t.turn))
        .collect();
    let share = |x: Option<f64>, n: u64| Cell::num(share_n(x, n), x.filter(|_| n > 0));
    for turn in turns {
        let mut cells = vec![Cell::count(turn)];
        for n in &of {
            match n.and_then(|n| n.by_turn.iter().find(|t| t.turn == turn)) {
                Some(x) => {
                    cells.push(share(x.next_ok, x.error_events));
                    cells.push(share(x.recovered, x.rollouts));
                }
                None => cells.extend([Cell::text("–"), Cell::text("–")]),
            }
        }
        t.push(cells, Mark::None, Target::None);
    }
    t
}

/// The rollouts violating one BudgetMix rule (each once, in file order).
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
    let Some(r) = l
        .audit
        .budgetmix
        .iter()
        .find(|b| b.run == run)
        .and_then(|b| b.rules.get(rule))
    else {
        return t;
    };
    t.title = format!(
        "{run}: {} — {} of {} checked",
        r.rule, r.violations, r.checked
    );
    let set = &l.set;
    let mut seen = BTreeSet::new();
    for &i in &r.trajectories {
        if !seen.insert(i) {
            continue;
        }
        let Some(tr) = set.trajectories.get(i as usize) else {
            continue;
        };
        let opt = |x: Option<i64>| {
            x.map_or(Cell::text("–"), |v| {
                Cell::num(v.to_string(), Some(v as f64))
            })
        };
        t.push(
            vec![
                Cell::place(set.loc_text(tr.loc)),
                opt(tr.train_step()),
                Cell::text(tr.group().map_or("–".into(), |g| set.name(g).to_string())),
                Cell::count(tr.budget),
                opt(tr.max_budget().map(i64::from)),
                Cell::text(tr.success.to_string()),
                Cell::count(tr.turns),
                tr.reward().map_or(Cell::text("missing"), |x| {
                    Cell::num(format!("{x}"), Some(x))
                }),
            ],
            Mark::Bad,
            Target::Trajectory(tr.loc),
        );
    }
    t
}

/// Two trajectories of one task side by side, aligned by turn: action,
/// observation, error and tokens of each, and per step logp\[rl\] −
/// logp\[base\] where both exist; the first turn where the actions differ is
/// marked. `stacked` (narrow terminals): one row per side per turn.
pub fn compare(
    set: &LogSet,
    a: Loc,
    b: Loc,
    pair: Option<(&str, &str)>,
    stacked: bool,
) -> TableData {
    let read = |loc: Loc| set.read_record(loc).ok();
    let (va, vb) = (read(a), read(b));
    let steps = |v: &Option<serde_json::Value>| -> Vec<serde_json::Value> {
        v.as_ref()
            .and_then(|v| v.get("steps"))
            .and_then(|s| s.as_array())
            .cloned()
            .unwrap_or_default()
    };
    let (sa, sb) = (steps(&va), steps(&vb));
    let field = |st: Option<&serde_json::Value>, k: &str| match st.and_then(|s| s.get(k)) {
        None | Some(serde_json::Value::Null) => "–".to_string(),
        Some(serde_json::Value::Bool(b)) => if *b { "yes" } else { "" }.to_string(),
        Some(serde_json::Value::String(x)) => x.clone(),
        Some(x) => x.to_string(),
    };
    let dlogp = |st: Option<&serde_json::Value>| -> Option<f64> {
        let (base, rl) = pair?;
        let lp = st?.get("logp")?;
        Some(lp.get(rl)?.as_f64()? - lp.get(base)?.as_f64()?)
    };
    let who = |v: &Option<serde_json::Value>| {
        let run = v
            .as_ref()
            .and_then(|v| v.get("run"))
            .and_then(|r| r.as_str())
            .unwrap_or("?")
            .to_string();
        let ok = v
            .as_ref()
            .and_then(|v| v.get("success"))
            .and_then(|s| s.as_bool())
            .map_or("?", |s| if s { "solved" } else { "failed" });
        format!("{run}, {ok}")
    };
    // Outcome-only records of a `--map` dump: no steps to align, so their
    // source rows side by side.
    if sa.is_empty() && sb.is_empty() && set.mapped.is_some() {
        return compare_sources(set, [a, b], format!("A {}; B {}", who(&va), who(&vb)));
    }
    let first_diff = (0..sa.len().max(sb.len()))
        .find(|&i| field(sa.get(i), "action") != field(sb.get(i), "action"));
    // Where they part first: a narrow screen cuts the title's end.
    let title = format!(
        "{}; A {}; B {}",
        first_diff.map_or("the same actions".into(), |i| format!(
            "actions part at turn {} (≠)",
            i + 1
        )),
        who(&va),
        who(&vb),
    );
    let mut t = if stacked {
        TableData::new(
            "compare",
            title,
            &[
                "turn",
                "side",
                "action",
                "observation",
                "error",
                "tokens",
                "Δlogp",
            ],
        )
    } else {
        TableData::new(
            "compare",
            title,
            &[
                "turn",
                "A action",
                "A observation",
                "A err",
                "B action",
                "B observation",
                "B err",
                "A tok",
                "B tok",
                "Δlogp A",
                "Δlogp B",
            ],
        )
    };
    let num = |x: Option<f64>| Cell::num(x.map_or("–".into(), |x| format!("{x:+.2}")), x);
    // Enter on a turn: both steps whole, whichever side the row shows.
    let open = |step| Target::Open(crate::tui::app::View::CompareStep { a, b, step });
    for i in 0..sa.len().max(sb.len()) {
        let mark = if Some(i) == first_diff {
            Mark::Bad
        } else {
            Mark::None
        };
        let (x, y) = (sa.get(i), sb.get(i));
        let turn = Cell::num(
            format!("{}{}", i + 1, if mark == Mark::Bad { " ≠" } else { "" }),
            Some(i as f64 + 1.0),
        );
        if stacked {
            for (side, st) in [("A", x), ("B", y)] {
                t.push(
                    vec![
                        turn.clone(),
                        Cell::text(side),
                        Cell::text(field(st, "action")),
                        Cell::text(field(st, "observation")),
                        Cell::text(field(st, "error")),
                        Cell::text(field(st, "output_tokens")),
                        num(dlogp(st)),
                    ],
                    mark,
                    open(i),
                );
            }
        } else {
            t.push(
                vec![
                    turn,
                    Cell::text(field(x, "action")),
                    Cell::text(field(x, "observation")),
                    Cell::text(field(x, "error")),
                    Cell::text(field(y, "action")),
                    Cell::text(field(y, "observation")),
                    Cell::text(field(y, "error")),
                    Cell::text(field(x, "output_tokens")),
                    Cell::text(field(y, "output_tokens")),
                    num(dlogp(x)),
                    num(dlogp(y)),
                ],
                mark,
                open(i),
            );
        }
    }
    t
}

/// The map a FrozenLake record walks on — its own `frozenlake` object, else
/// that of a probe of its task — and its cell before each step (a step's
/// `state` as a cell number, or its `frozenlake.pos`).
fn lake_of(set: &LogSet, v: &serde_json::Value) -> Option<LakeDraw> {
    let rows = |m: &serde_json::Value| -> Option<Vec<String>> {
        m.as_array()?
            .iter()
            .map(|r| r.as_str().map(str::to_string))
            .collect()
    };
    let map = match v.get("frozenlake").and_then(|f| rows(&f["map"])) {
        Some(m) => m,
        None => {
            let id = |k: &str| set.strings.get(v.get(k)?.as_str()?);
            let (b, task) = (id("benchmark")?, id("task")?);
            set.probes
                .iter()
                .filter(|p| p.benchmark == b && p.task == task)
                .find_map(|p| p.frozenlake.as_ref())?
                .map
                .clone()
        }
    };
    let lake = crate::env::frozenlake::Lake::parse(&map, false).ok()?;
    let cell = |x: &serde_json::Value| -> Option<usize> {
        let n = x
            .as_u64()
            .map(|n| n as usize)
            .or_else(|| x.as_str()?.parse().ok())?;
        (n < lake.cells.len()).then_some(n)
    };
    let states: Vec<Option<usize>> = v
        .get("steps")?
        .as_array()?
        .iter()
        .map(|st| cell(&st["state"]).or_else(|| cell(&st["frozenlake"]["pos"])))
        .collect();
    states.iter().any(Option::is_some).then_some(LakeDraw {
        map,
        states,
        offset: 0,
    })
}

/// The lake as text at step `at` (0-based): `@` the agent's cell then, `*`
/// the cells walked before, `.` ice, `S` `H` `G` as on the map; a legend.
pub fn lake_lines(l: &LakeDraw, at: usize) -> Vec<String> {
    let walked: std::collections::BTreeSet<usize> =
        l.states.iter().take(at).flatten().copied().collect();
    let here = l.states.get(at).copied().flatten();
    let turn = u64::from(l.offset) + at as u64 + 1;
    let cols = l.map.first().map_or(0, |r| r.chars().count());
    let mut out: Vec<String> = l
        .map
        .iter()
        .enumerate()
        .map(|(r, row)| {
            row.chars()
                .enumerate()
                .map(|(c, ch)| {
                    let i = r * cols + c;
                    if Some(i) == here {
                        '@'
                    } else if walked.contains(&i) {
                        '*'
                    } else if ch == 'F' {
                        '.'
                    } else {
                        ch
                    }
                })
                .map(String::from)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    out.push(match here {
        Some(i) => format!("@ cell {i} at turn {turn}, * walked"),
        None => format!("turn {turn}: cell not recorded"),
    });
    out
}

/// `a`: the records `--follow` read since the audit on screen, newest
/// first, found in the newest set (a trajectory opens on Enter).
pub fn appended(on_screen: &LogSet, a: Option<&Appended>) -> TableData {
    let head = &[
        "record",
        "kind",
        "run",
        "benchmark",
        "task",
        "budget",
        "success",
        "turns",
    ];
    let Some(a) = a else {
        let mut t = TableData::new(
            "appended",
            format!(
                "none appended since the audit on screen ({} trajectories)",
                on_screen.trajectories.len()
            ),
            head,
        );
        t.push_text(
            vec![
                "with --follow, records appended to the logs show here at once, before their audit"
                    .into(),
            ],
            Mark::None,
            Target::None,
        );
        return t;
    };
    let at =
        a.at.duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
    let set_of = |read: u64| a.sets.iter().find(|s| s.0 == read).map(|s| s.1.as_ref());
    let trajectory = |&(read, loc): &(u64, Loc)| {
        set_of(read).and_then(|s| at_loc(&s.trajectories, |x| x.loc, loc).map(|t| (s, t)))
    };
    let fresh = a.records.iter().filter(|r| trajectory(r).is_some()).count();
    let mut t = TableData::new(
        "appended",
        format!(
            "{} records appended since the audit on screen ({} trajectories; with them {}), the newest read at {:02}:{:02}:{:02} UTC — being audited; Enter: the trajectory",
            a.records.len(),
            on_screen.trajectories.len(),
            on_screen.trajectories.len() + fresh,
            at / 3600 % 24,
            at / 60 % 60,
            at % 60
        ),
        head,
    );
    let dash = || Cell::text("–");
    let yes_no = |b: bool| Cell::text(if b { "yes" } else { "no" });
    for r in a.records.iter().rev() {
        let (read, loc) = *r;
        let Some(set) = set_of(read) else { continue };
        let place = Cell::place(set.loc_text(loc));
        if let Some((set, tr)) = trajectory(r) {
            t.push(
                vec![
                    place,
                    Cell::text(if tr.is_training() {
                        "training rollout"
                    } else {
                        "trajectory"
                    }),
                    Cell::text(set.name(tr.run)),
                    Cell::text(set.name(tr.benchmark)),
                    Cell::text(set.name(tr.task)),
                    Cell::count(tr.budget),
                    yes_no(tr.success),
                    if tr.turns_known {
                        Cell::count(tr.turns)
                    } else {
                        dash()
                    },
                ],
                Mark::None,
                Target::Trajectory(loc),
            );
        } else if let Some(p) = at_loc(&set.probes, |x| x.loc, loc) {
            t.push(
                vec![
                    place,
                    Cell::text("probe"),
                    dash(),
                    Cell::text(set.name(p.benchmark)),
                    Cell::text(set.name(p.task)),
                    dash(),
                    dash(),
                    dash(),
                ],
                Mark::None,
                Target::None,
            );
        } else {
            let run = at_loc(&set.checkpoints, |x| x.loc, loc)
                .map(|c| (c.run, "checkpoint"))
                .or_else(|| at_loc(&set.run_decls, |x| x.loc, loc).map(|d| (d.run, "run")));
            let (run, kind) = run.map_or((dash(), "record"), |(r, k)| (Cell::text(set.name(r)), k));
            t.push(
                vec![
                    place,
                    Cell::text(kind),
                    run,
                    dash(),
                    dash(),
                    dash(),
                    dash(),
                    dash(),
                ],
                Mark::None,
                Target::None,
            );
        }
    }
    t
}
