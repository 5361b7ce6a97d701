//! The workbench driven by key presses on ratatui's TestBackend, at 80×24
//! and 160×48: every panel, the drill-down to a trajectory, the help overlay,
//! the key map, and the same numbers as the headless report. Whole screens
//! are compared with reviewed snapshots in `tests/screens/`
//! (`UPDATE_SCREENS=1 cargo test --test tui` rewrites them; review the diff).

use std::sync::Arc;

use serde_json::json;

use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use rl_audit::analysis::stats::{Ci, Estimate};
use rl_audit::analysis::{run_audit, Settings};
use rl_audit::jobs::Loaded;
use rl_audit::schema::load::Progress;
use rl_audit::schema::LoadOptions;
use rl_audit::tui::app::App;
use rl_audit::tui::{draw, keymap};

mod common;
use common::{one, rows};

/// The settings the workbench's tests audit with: 200 resamples.
fn quick() -> Settings {
    Settings {
        boot: rl_audit::analysis::stats::Bootstrap {
            resamples: 200,
            ..Default::default()
        },
        ..Default::default()
    }
}

fn demo() -> Arc<Loaded> {
    demo_with(&quick())
}

fn demo_with(settings: &Settings) -> Arc<Loaded> {
    let set = rl_audit::demo::load_demo(&LoadOptions::default()).expect("demo loads");
    let audit = run_audit(&set, settings).expect("audit");
    Arc::new(Loaded {
        set: Arc::new(set),
        audit,
    })
}

struct Screen {
    term: Terminal<TestBackend>,
    app: App,
    progress: Progress,
    /// The clock of the analysis being computed stands still: each frame
    /// is drawn as at the moment it began, so that a slow run (a loaded
    /// machine, a debug build) draws no seconds on a compared screen.
    still: bool,
}

/// A by-turn table's turns (its first column) ascend, each once.
fn turns_ascend(t: &rl_audit::tui::table::TableData) {
    let turns: Vec<u32> = t
        .rows
        .iter()
        .map(|r| r.cells[0].text.parse().unwrap())
        .collect();
    assert!(turns.windows(2).all(|w| w[0] < w[1]), "{turns:?}");
}

/// The demo at 160 × 48 after `keys`, and the table then on screen.
fn demo_table(keys: &str) -> (Arc<Loaded>, Screen, Arc<rl_audit::tui::table::TableData>) {
    let d = demo();
    let mut s = Screen::new(160, 48, d.clone());
    s.keys(keys);
    let t = s.app.table().unwrap();
    (d, s, t)
}

impl Screen {
    fn new(w: u16, h: u16, data: Arc<Loaded>) -> Screen {
        let mut app = App::new(true, false);
        app.set_data(data);
        Screen {
            term: Terminal::new(TestBackend::new(w, h)).unwrap(),
            app,
            progress: Progress::default(),
            still: true,
        }
    }
    fn keys(&mut self, keys: &str) -> String {
        for c in keys.chars() {
            let code = match c {
                '\n' => KeyCode::Enter,
                '\x1b' => KeyCode::Esc,
                '\t' => KeyCode::Tab,
                c => KeyCode::Char(c),
            };
            self.app.on_key(KeyEvent::new(code, KeyModifiers::NONE));
        }
        self.text()
    }
    /// Keys that open a trajectory, then frames until its background
    /// re-read has arrived (at most 60 s: a debug build on a loaded 2-core
    /// machine took over 5 s to search the demo's every action).
    fn keys_then_read(&mut self, keys: &str) -> String {
        let mut screen = self.keys(keys);
        for _ in 0..1200 {
            if !screen.contains("reading") {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
            screen = self.text();
        }
        screen
    }
    fn text(&mut self) -> String {
        if let (true, Some((_, since))) = (self.still, &mut self.app.computing) {
            *since = std::time::Instant::now();
        }
        let (app, progress) = (&mut self.app, &self.progress);
        self.term
            .draw(|f| draw::draw(f, app, progress, "idle"))
            .unwrap();
        let buf = self.term.backend().buffer().clone();
        let w = buf.area.width as usize;
        buf.content
            .chunks(w)
            .map(|row| row.iter().map(|c| c.symbol()).collect::<String>() + "\n")
            .collect()
    }
}

#[test]
fn every_panel_renders_at_both_sizes() {
    let d = demo();
    for (w, h) in [(80, 24), (160, 48)] {
        let mut s = Screen::new(w, h, d.clone());
        let expect = [
            ("1", "Headline findings"),
            ("2", "base% → RL%"),
            ("3", "expected cost"),
            ("4", "Matched states"),
            ("5", "error states"),
            ("6", "step NLL"),
            ("7", "Checkpoint metrics"),
            ("8", "BudgetMix audit"),
        ];
        for (key, want) in expect {
            let screen = s.keys(key);
            assert!(
                screen.contains(want),
                "{w}×{h} panel {key}: {want:?} missing in\n{screen}"
            );
            assert_eq!(screen.lines().count(), h as usize);
            for line in screen.lines() {
                assert_eq!(line.chars().count(), w as usize);
            }
        }
    }
}

#[test]
fn budget_cell_drills_to_tasks_rollouts_and_trajectory() {
    let d = demo();
    let mut s = Screen::new(160, 48, d.clone());
    // Budget, 75% (two steps right from 25%), K=1: Enter opens the tasks.
    let tasks = s.keys("2ll\n");
    assert!(tasks.contains("tasks K=1 75%"), "{tasks}");
    assert!(tasks.contains("share of Δ"));
    let rollouts = s.keys("\n");
    assert!(
        rollouts.contains("rollouts") || rollouts.contains("task fl-"),
        "{rollouts}"
    );
    assert!(rollouts.contains("demo/eval.jsonl.gz:"));
    // The record is re-read in the background; the screen stays live.
    let screen = s.keys_then_read("\n");
    assert!(screen.contains("record "), "{screen}");
    assert!(screen.contains("observation"), "{screen}");
    // Each view's table is kept while it is on the stack: Esc goes back to
    // the very screens, not made again (at 11 M rollouts a cell's tasks
    // take 0.3 s).
    assert_eq!(s.app.cached.len(), 3);
    assert_eq!(s.keys("\x1b"), rollouts);
    assert_eq!(s.keys("\x1b"), tasks);
    assert_eq!(s.app.cached.len(), 1);
    // Esc walks back up, one level at a time.
    let screen = s.keys("\x1b");
    assert!(screen.contains("selected cell"), "{screen}");
}

#[test]
fn a_cells_tasks_come_in_the_direction_of_its_delta() {
    // Every cell of the default pair's grid (fl-base → fl-budgetmix, its
    // preferred mode): the tasks that push Δ the way it points come first —
    // shares descending where Δ > 0, ascending where Δ ≤ 0 (a flip's losses
    // first) — and tasks Δ leaves out last. Both directions occur.
    let d = demo();
    let a = &d.audit;
    let mut s = Screen::new(160, 48, d.clone());
    s.keys("2");
    let (mut up, mut down) = (0, 0);
    for (ki, &k) in a.pass.ks.iter().enumerate() {
        for (li, &level) in a.settings.levels.iter().enumerate() {
            let adv = a
                .pass
                .advantage_at(("frozenlake", "fl-base", "fl-budgetmix"), k, level, None)
                .expect("the cell");
            s.keys("\n");
            let t = s.app.table().unwrap();
            assert!(
                t.title.contains(&format!("tasks at K={k}, {level}%")),
                "{}",
                t.title
            );
            let shares: Vec<Option<f64>> = t.rows.iter().map(|r| r.cells[9].value).collect();
            let known: Vec<f64> = shares.iter().map_while(|x| *x).collect();
            assert!(shares[known.len()..].iter().all(Option::is_none));
            // The shares add up to the cell's Δ (SPEC §2.1's task mean).
            let sum: f64 = known.iter().sum();
            assert!((sum - adv.delta).abs() < 1e-12, "{sum} vs {}", adv.delta);
            let ordered = if adv.delta > 0.0 {
                up += 1;
                known.windows(2).all(|w| w[0] >= w[1])
            } else {
                down += 1;
                known.windows(2).all(|w| w[0] <= w[1])
            };
            assert!(ordered, "K={k} {level}%: Δ {} but {known:?}", adv.delta);
            s.keys("\x1b");
            if li + 1 < a.settings.levels.len() {
                s.keys("l");
            } else if ki + 1 < a.pass.ks.len() {
                s.keys(&format!("{}j", "h".repeat(li)));
            }
        }
    }
    assert!(
        up > 0 && down > 0,
        "{up} cells with Δ > 0, {down} with Δ ≤ 0"
    );
}

#[test]
fn the_cost_tables_pass_is_its_cells_with_interval_and_n() {
    // Each row of the Cost panel's table: the point's pass, and beside it
    // the interval and task count of the Pass@(K,T) cell it is (the same
    // cell of the Budget panel), not a figure of its own.
    let (d, _, t) = demo_table("3");
    let a = &d.audit;
    assert_eq!(
        t.header,
        ["run", "K", "level", "mode", "Pass", "95% CI", "n tasks", "cost", ""]
    );
    assert!(!t.rows.is_empty());
    for r in &t.rows {
        let text = |i: usize| r.cells[i].text.clone();
        let run = text(0);
        let k: u64 = text(1).parse().unwrap();
        let level: u32 = text(2).trim_end_matches('%').parse().unwrap();
        let point = a
            .cost_frontier
            .iter()
            .find(|p| p.run == run && p.k == k && p.level == level && p.mode.name() == text(3))
            .expect("a frontier point");
        let cell = a
            .pass
            .cell("frozenlake", &run, k, level, Some(point.mode))
            .expect("its cell");
        assert_eq!(cell.value, Some(point.pass));
        let rounded = |x: f64| format!("{:.1}", 100.0 * x);
        assert_eq!(text(4), format!("{}%", rounded(point.pass)));
        let Ci::Interval(lo, hi) = cell.ci else {
            panic!("{run} K={k} {level}%: {:?}", cell.ci)
        };
        assert_eq!(text(5), format!("[{}, {}]", rounded(lo), rounded(hi)));
        assert_eq!(text(6), cell.tasks.to_string());
    }
}

/// With trajectory LLRs shown (`m`), Enter on a Likelihood row lists the
/// length-matched pairs: exactly those SPEC §2.4's greedy matching forms,
/// worked out here from the records (successful full-budget rollouts, the
/// LLR and the tokens summed over their steps); their mean d is the row's.
/// Enter on a pair: the two side by side, base as A.
#[test]
fn a_likelihood_row_drills_to_its_length_matched_pairs() {
    use rl_audit::schema::Loc;
    use rl_audit::tui::app::View;
    use std::collections::BTreeMap;
    let d = demo();
    let l = &d.audit.likelihood[0];
    let mut s = Screen::new(120, 40, d.clone());
    s.keys_then_read("6m\n");
    let t = s.app.table().unwrap();
    assert_eq!(t.name, "length-matched");
    let records: Vec<(Loc, serde_json::Value)> = d
        .set
        .trajectories
        .iter()
        .map(|tr| (tr.loc, d.set.read_record(tr.loc).unwrap()))
        .filter(|(_, r)| r.get("train_step").is_none() && r["benchmark"] == l.benchmark.as_str())
        .collect();
    // A task's full budget: its most max_budget (or budget) over the runs.
    let mut full: BTreeMap<String, u64> = BTreeMap::new();
    for (_, r) in &records {
        let b = r["max_budget"]
            .as_u64()
            .unwrap_or(r["budget"].as_u64().unwrap());
        let e = full
            .entry(r["task"].as_str().unwrap().to_string())
            .or_default();
        *e = (*e).max(b);
    }
    // Per task, base's and RL's (record, tokens, LLR).
    type Sides = [Vec<(Loc, u64, f64)>; 2];
    let mut per_task: BTreeMap<String, Sides> = BTreeMap::new();
    for (loc, r) in &records {
        let task = r["task"].as_str().unwrap().to_string();
        let side = if r["run"] == l.base.as_str() {
            0
        } else if r["run"] == l.rl.as_str() {
            1
        } else {
            continue;
        };
        if r["success"] != true || r["budget"].as_u64() != Some(full[&task]) {
            continue;
        }
        let steps = r["steps"].as_array().unwrap();
        let mut llr = Some(0.0);
        let mut len = Some(0u64);
        for st in steps {
            let lp = |run: &str| st["logp"][run].as_f64();
            llr = match (llr, lp(&l.rl), lp(&l.base)) {
                (Some(x), Some(a), Some(b)) => Some(x + (a - b)),
                _ => None,
            };
            len = len.zip(st["output_tokens"].as_u64()).map(|(x, n)| x + n);
        }
        if let (Some(llr), Some(len), false) = (llr, len, steps.is_empty()) {
            per_task.entry(task).or_default()[side].push((*loc, len, llr));
        }
    }
    // Greedy: every cross pair within 10% of the longer, closest first,
    // ties by the RL then the base record's place, each used once.
    let mut want: Vec<(String, Loc, Loc, f64)> = Vec::new();
    for (task, [base, rl]) in &per_task {
        let mut cands = Vec::new();
        for (i, a) in rl.iter().enumerate() {
            for (j, b) in base.iter().enumerate() {
                let gap = a.1.abs_diff(b.1);
                if 10 * gap <= a.1.max(b.1) {
                    cands.push((gap, a.0, b.0, i, j));
                }
            }
        }
        cands.sort();
        let (mut used_rl, mut used_base) = (vec![false; rl.len()], vec![false; base.len()]);
        for (_, _, _, i, j) in cands {
            if !used_rl[i] && !used_base[j] {
                used_rl[i] = true;
                used_base[j] = true;
                want.push((task.clone(), rl[i].0, base[j].0, rl[i].2 - base[j].2));
            }
        }
    }
    let mut got: Vec<(String, String, String)> = t
        .rows
        .iter()
        .map(|r| {
            (
                r.cells[0].text.clone(),
                r.cells[1].text.clone(),
                r.cells[4].text.clone(),
            )
        })
        .collect();
    let mut expected: Vec<(String, String, String)> = want
        .iter()
        .map(|(task, a, b, _)| (task.clone(), d.set.loc_text(*a), d.set.loc_text(*b)))
        .collect();
    got.sort();
    expected.sort();
    assert_eq!(got, expected);
    assert_eq!(t.rows.len() as u64, l.length_matched.pairs);
    let tasks: std::collections::BTreeSet<&str> = want.iter().map(|w| w.0.as_str()).collect();
    assert_eq!(tasks.len() as u64, l.length_matched.tasks);
    let mean = want.iter().map(|w| w.3).sum::<f64>() / want.len() as f64;
    assert!((mean - l.length_matched.mean_diff.unwrap().value).abs() < 1e-9);
    let shown: f64 = t
        .rows
        .iter()
        .map(|r| r.cells[7].value.unwrap())
        .sum::<f64>()
        / t.rows.len() as f64;
    assert!((shown - mean).abs() < 1e-9);
    // Enter: the pair side by side, base as A, RL as B.
    let first = want
        .iter()
        .find(|w| {
            (w.0.as_str(), d.set.loc_text(w.1))
                == (
                    t.rows[0].cells[0].text.as_str(),
                    t.rows[0].cells[1].text.clone(),
                )
        })
        .unwrap();
    s.keys_then_read("\n");
    assert_eq!(s.app.stack.last(), Some(&View::Compare(first.2, first.1)));
}

/// Enter on a Training row lists the run's metric at each checkpoint: the
/// checkpoint records' own steps and values, in step order.
#[test]
fn a_training_row_lists_its_checkpoints() {
    let (d, mut s, t) = demo_table("7");
    let (run, metric) = (
        t.rows[0].cells[0].text.clone(),
        t.rows[0].cells[1].text.clone(),
    );
    s.keys("\n");
    let c = s.app.table().unwrap();
    assert_eq!(c.header, ["step", metric.as_str()]);
    let mut want: Vec<(f64, f64)> = d
        .set
        .checkpoints
        .iter()
        .map(|c| d.set.read_record(c.loc).unwrap())
        .filter(|r| r["run"] == run.as_str() && r.get(metric.as_str()).is_some())
        .map(|r| {
            (
                r["step"].as_f64().unwrap(),
                r[metric.as_str()].as_f64().unwrap(),
            )
        })
        .collect();
    want.sort_by(|x, y| x.0.total_cmp(&y.0));
    let got: Vec<(f64, f64)> = c
        .rows
        .iter()
        .map(|r| (r.cells[0].value.unwrap(), r.cells[1].value.unwrap()))
        .collect();
    assert_eq!(got, want);
    assert!(c.rows.len() > 2);
}

/// Enter on a Cost row opens that cell on the Budget grid — its K, level
/// and mode, in a pair holding the run (the one selected if it does) —
/// where the run's Pass is the row's.
#[test]
fn a_cost_row_opens_its_budget_cell() {
    let (d, _, t) = demo_table("3");
    let a = &d.audit;
    for (i, r) in t.rows.iter().enumerate() {
        let text = |j: usize| r.cells[j].text.clone();
        let mut s = Screen::new(120, 40, d.clone());
        s.keys(&format!("3{}\n", "j".repeat(i)));
        assert_eq!(s.app.panel, rl_audit::tui::panel::Panel::Budget, "row {i}");
        let (_, pair) = rl_audit::tui::select::current(a, &s.app.sel);
        let pair = pair.unwrap();
        assert!(pair.base == text(0) || pair.rl == text(0), "{pair:?}");
        // The demo's selected pair is fl-base → fl-budgetmix: kept for its runs.
        if text(0) != "fl-grpo" {
            assert_eq!(
                (pair.base.as_str(), pair.rl.as_str()),
                ("fl-base", "fl-budgetmix")
            );
        }
        let (k, level) = s.app.sel.k_level(a).unwrap();
        assert_eq!(format!("{k} {level}%"), format!("{} {}", text(1), text(2)));
        assert_eq!(s.app.sel.mode.map(|m| m.name().to_string()), Some(text(3)));
        let box_ = rl_audit::tui::views::budget::detail(a, &s.app.sel).join("\n");
        let want = format!("{}: Pass@({k},{level}%) {} [", text(0), text(4));
        assert!(box_.contains(&want), "{want}\n{box_}");
    }
}

#[test]
fn a_budgetmix_gains_sides_are_the_cells_it_subtracts() {
    // Each gain row shows the two Pass@(1,T) cells whose difference it is:
    // their values differ by exactly the gain, each with its interval and n.
    let d = demo();
    let a = &d.audit;
    let b = &a.budgetmix[0];
    assert!(!b.gains.is_empty());
    let mut s = Screen::new(160, 48, d.clone());
    s.keys("8");
    // The panel's lower table, as drawn.
    let t = rl_audit::tui::views::analyses::gains(a, &s.app.sel);
    assert_eq!(t.rows.len(), b.gains.len() + b.mean_gain.len());
    for (g, row) in b.gains.iter().zip(&t.rows) {
        let (x, y) = (
            g.cell(&a.pass, &b.run).expect("the audited run's cell"),
            g.cell(&a.pass, &g.vs).expect("the other run's cell"),
        );
        assert_eq!(x.k, 1);
        assert_eq!((x.level, y.level), (g.level, g.level));
        assert_eq!(x.value.unwrap() - y.value.unwrap(), g.gain);
        for (cell, text) in [(x, &row.cells[3].text), (y, &row.cells[5].text)] {
            let Ci::Interval(lo, hi) = cell.ci else {
                panic!("{:?}", cell.ci)
            };
            let p = |v: f64| format!("{:.1}", 100.0 * v);
            assert_eq!(
                *text,
                format!(
                    "{}% [{}, {}] n={} {}",
                    p(cell.value.unwrap()),
                    p(lo),
                    p(hi),
                    cell.tasks,
                    cell.mode.name()
                )
            );
        }
    }
    // The mean rows: over how many benchmarks.
    let means: Vec<&str> = t
        .rows
        .iter()
        .filter(|r| r.cells[0].text == "mean")
        .map(|r| r.cells[3].text.as_str())
        .collect();
    assert_eq!(means.len(), b.mean_gain.len());
    assert!(
        means.iter().all(|m| *m == "over n=1 benchmark(s)"),
        "{means:?}"
    );
}

#[test]
fn a_likelihood_row_drills_to_its_llr_turn_by_turn() {
    // Enter on a Likelihood row: one row a turn, each run's rollouts' step
    // LLR with its n and interval — every `llr_by_turn` row of the pair,
    // each once, in its place.
    let (d, mut s, t) = demo_table("6j\n");
    let a = &d.audit;
    let l = &a.likelihood[1];
    assert_eq!(t.name, "llr-by-turn");
    assert_eq!(
        t.header,
        [
            "turn".to_string(),
            format!("steps ({}'s)", l.base),
            format!("LLR ({}'s rollouts)", l.base),
            format!("steps ({}'s)", l.rl),
            format!("LLR ({}'s rollouts)", l.rl),
        ]
    );
    let want: Vec<_> = a
        .llr_by_turn
        .iter()
        .filter(|x| x.benchmark == l.benchmark && x.base == l.base && x.rl == l.rl)
        .collect();
    assert!(want.len() > 10, "{}", want.len());
    let mut seen = 0;
    for x in &want {
        let row = t
            .rows
            .iter()
            .find(|r| r.cells[0].text == x.turn.to_string())
            .unwrap_or_else(|| panic!("turn {} missing", x.turn));
        let at = if x.run == l.rl { 3 } else { 1 };
        assert_eq!(row.cells[at].text, x.steps.to_string());
        // A turn of one task has no spread to resample (§2: degenerate).
        let ci = match x.ci {
            Ci::Interval(lo, hi) => format!("[{lo:+.2}, {hi:+.2}]"),
            Ci::Degenerate => "[degenerate]".into(),
            other => panic!("{other:?}"),
        };
        assert_eq!(row.cells[at + 1].text, format!("{:+.2} {ci}", x.mean));
        seen += 1;
    }
    assert_eq!(seen, want.len());
    turns_ascend(&t);
    // Esc goes back to the panel.
    let screen = s.keys("\x1b");
    assert!(screen.contains("length-matched LLR difference"), "{screen}");
}

/// The LLR by turn drill of a pair whose rows are not in yet reads
/// `computing…`; of one whose rows are in but none (no step with both
/// log-probabilities), says so — while the part computes (a pair at a
/// time) and once it is in.
#[test]
fn the_llr_by_turn_drill_says_computing_or_none() {
    use rl_audit::analysis::Part;
    use rl_audit::tui::views::drill::llr_turns;
    let d = demo();
    let mut a = d.audit.clone();
    let (first, second) = (a.pairs[0].clone(), a.pairs[1].clone());
    let texts = |a: &rl_audit::analysis::Audit, key| -> Vec<Vec<String>> {
        let t = llr_turns(a, key);
        t.rows
            .iter()
            .map(|r| r.cells.iter().map(|c| c.text.clone()).collect())
            .collect()
    };
    let row = |text: &str| {
        vec![vec![
            text.to_string(),
            String::new(),
            String::new(),
            String::new(),
            String::new(),
        ]]
    };
    // The first pair's rows gone: none, the part in or its pair handed on.
    a.llr_by_turn.retain(|r| r.key() != first.key());
    let none = format!(
        "none: no step of a successful full-budget rollout carries both steps[].logp.{} and .{}",
        first.base, first.rl
    );
    assert_eq!(texts(&a, first.key()), row(&none));
    a.pending.push(Part::LlrByTurn);
    a.llr_pairs_in = 1;
    assert_eq!(texts(&a, first.key()), row(&none));
    // The second pair not handed on yet: computing, its rows (say, of a
    // later hand-over) not shown.
    assert!(a.llr_by_turn.iter().any(|r| r.key() == second.key()));
    assert_eq!(texts(&a, second.key()), row("computing…"));
    a.llr_pairs_in = 0;
    assert_eq!(texts(&a, first.key()), row("computing…"));
}

#[test]
fn a_natural_recovery_row_drills_to_its_runs_turn_by_turn() {
    // Enter on the Recovery panel's natural-recovery row: one row a turn,
    // each run's two rates with their n — every `by_turn` row of the pair's
    // two runs, each once, in its place.
    let (d, _, t) = demo_table("5\n");
    let a = &d.audit;
    assert_eq!(t.name, "natural-recovery-by-turn");
    let runs = ["fl-base", "fl-budgetmix"];
    let mut seen = 0;
    for (i, run) in runs.iter().enumerate() {
        let n = a
            .natural_recovery
            .iter()
            .find(|n| n.run == *run)
            .expect("the run's natural recovery");
        assert!(n.by_turn.len() > 5);
        for x in &n.by_turn {
            let row = t
                .rows
                .iter()
                .find(|r| r.cells[0].text == x.turn.to_string())
                .unwrap_or_else(|| panic!("turn {} missing", x.turn));
            let share = |v: Option<f64>, k: u64| {
                if k == 0 {
                    "–".to_string()
                } else {
                    format!("{:.1}% (n={k})", 100.0 * v.unwrap())
                }
            };
            assert_eq!(row.cells[1 + 2 * i].text, share(x.next_ok, x.error_events));
            assert_eq!(row.cells[2 + 2 * i].text, share(x.recovered, x.rollouts));
            seen += 1;
        }
    }
    assert!(seen > 10);
    turns_ascend(&t);
}

#[test]
fn help_overlay_lists_the_real_key_map() {
    // Tall enough for every key (a shorter screen scrolls the help).
    let mut s = Screen::new(160, 60, demo());
    let screen = s.keys("2?");
    // The help box (100 columns, centred on 160): its text with the
    // wrapping undone.
    let inner: String = screen
        .lines()
        .map(|l| l.chars().skip(31).take(98).collect::<String>())
        .collect::<Vec<_>>()
        .join(" ");
    let flat = |t: &str| t.split_whitespace().collect::<Vec<_>>().join(" ");
    let inner = flat(&inner);
    for line in keymap::help_lines() {
        assert!(
            inner.contains(&flat(&line)),
            "help lacks {line:?}\n{screen}"
        );
    }
    assert!(screen.contains("Budget — how to read it"), "{screen}");
    let screen = s.keys("x");
    assert!(!screen.contains("how to read it"));
}

#[test]
fn budget_panel_shows_the_report_numbers() {
    let d = demo();
    let mut s = Screen::new(160, 48, d.clone());
    let screen = s.keys("2ll");
    // The selected cell (K=1, 75%, native) of the first pair, as the JSON report has it.
    let pair = &d.audit.pairs[0];
    let adv = d
        .audit
        .pass
        .advantage
        .iter()
        .find(|a| a.rl == pair.rl && a.k == 1 && a.level == 75 && a.mode.name() == "native")
        .unwrap();
    assert!(
        screen.contains("(native)"),
        "the preferred cell at 75% is native"
    );
    let want = format!("Δ {:+.1} pp", 100.0 * adv.delta);
    assert!(screen.contains(&want), "{want} missing:\n{screen}");
    assert!(screen.contains(&format!("n={} tasks", adv.tasks)));
}

#[test]
fn filter_and_export() {
    // Under the target directory, emptied each run (nothing left in /tmp).
    let dir = common::temp_dir("tui-export");
    let mut s = Screen::new(120, 40, demo());
    s.app.export_dir = dir.clone();
    s.keys("2lll\n");
    // Filter the task table by a substring: the demo's tasks named so
    // stay, and the row count says how many of how many.
    let d = demo();
    let names = |pick: &dyn Fn(&str) -> bool| -> std::collections::BTreeSet<String> {
        d.set
            .trajectories
            .iter()
            .map(|t| d.set.name(t.task).to_string())
            .filter(|n| pick(n))
            .collect()
    };
    let (kept, all) = (names(&|n| n.contains("4x4s")), names(&|_| true));
    let screen = s.keys("/4x4s\n");
    assert!(screen.contains("fl-01-4x4s"));
    assert!(!screen.contains("fl-02-5x5"), "{screen}");
    let top = screen.lines().nth(1).expect("the table's top border");
    let count = format!("({} of {} rows)┐", kept.len(), all.len());
    assert!(top.ends_with(&count), "{top} should end {count}");
    let t = s.app.table().expect("the filtered tasks");
    let shown: std::collections::BTreeSet<String> = (0..t.rows.len())
        .map(|i| t.text(i, 0).to_string())
        .collect();
    assert_eq!(shown, kept);
    let screen = s.keys("e");
    assert!(screen.contains("exported"), "{screen}");
    let csv = std::fs::read_to_string(dir.join("rl-audit-export-tasks.csv")).unwrap();
    assert!(csv.starts_with("task,min_turns,T,"));
    assert!(csv.lines().skip(1).all(|l| l.contains("4x4s")));
}

/// `e` on a panel still computing writes no file (its stand-in lists
/// analyses, not data) and says why; the same panel once its parts are in
/// exports its table.
#[test]
fn export_waits_for_the_panel_to_be_computed() {
    let dir = common::temp_dir("tui-export-pending");
    let d = demo();
    let mut audit = d.audit.clone();
    audit.pending = rl_audit::analysis::Part::ALL.to_vec();
    let waiting = Arc::new(Loaded {
        set: d.set.clone(),
        audit,
    });
    let mut s = Screen::new(120, 40, waiting);
    s.app.export_dir = dir.clone();
    s.keys("3e");
    assert_eq!(
        s.app.message.as_deref(),
        Some("nothing to export yet: the panel's analyses are not in")
    );
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
    s.app.set_data(d);
    s.keys("3");
    let rows = s.app.table().unwrap().rows.len();
    s.keys("e");
    let want = format!("exported {rows} rows to rl-audit-export-cost.csv");
    assert_eq!(s.app.message.as_deref(), Some(want.as_str()));
    assert!(dir.join("rl-audit-export-cost.csv").is_file());
}

#[test]
fn quit_only_from_the_top_with_q() {
    let mut s = Screen::new(80, 24, demo());
    s.keys("2\x1b");
    assert!(!s.app.quit, "Esc at the top must not quit");
    s.keys("l\nq");
    assert!(!s.app.quit, "q in a drill-down goes back");
    s.keys("q");
    assert!(s.app.quit);
}

#[test]
fn rollouts_drill_down_lists_exactly_the_cell_rollouts() {
    use rl_audit::analysis::passkt::Mode;
    use rl_audit::tui::select::Selection;
    use rl_audit::tui::views::budget::{rollouts, tasks};
    let d = demo();
    let sel = Selection::default();
    let pair = rl_audit::tui::select::current(&d.audit, &sel)
        .1
        .expect("the demo's pair");
    for mode in [Mode::Native, Mode::Truncated] {
        for level in [25u32, 50, 75, 100] {
            let t = tasks(&d, &sel, 1, level, mode);
            // At 100% truncated there is no cell (T = B counts as native).
            if level == 100 && mode == Mode::Truncated {
                assert!(t.rows.is_empty(), "no truncated cell at 100%");
                continue;
            }
            assert!(!t.rows.is_empty(), "{level}% {mode:?}");
            let col = |name: &str| t.header.iter().position(|h| h == name).unwrap();
            for (i, row) in t.rows.iter().enumerate() {
                let n = |c: &str| row.cells[col(c)].value.unwrap_or(0.0) as usize;
                let turns = row.cells[col("T")].value.unwrap() as u32;
                let r = rollouts(&d, &sel, t.text(i, 0), level, mode);
                // The tasks table counts come from the aggregates; the
                // rollouts are listed from the raw trajectories.
                assert_eq!(
                    r.rows.len(),
                    n("n base") + n("n RL"),
                    "{level}% {:?}",
                    row.cells
                );
                let rc = |h: &str| r.header.iter().position(|x| x == h).unwrap();
                let within = (0..r.rows.len())
                    .filter(|&j| r.text(j, rc("solved ≤ T")) == "yes")
                    .count();
                assert_eq!(within, n("c base") + n("c RL"), "{:?}", row.cells);
                // The failure causes of the tasks table (one pass over the
                // rollouts for every task) are those of the task's rollouts
                // as listed, one by one, run by run, in CAUSES order.
                let causes = |run: &str| {
                    rl_audit::analysis::failures::CAUSES
                        .iter()
                        .filter_map(|c| {
                            let n = (0..r.rows.len())
                                .filter(|&j| {
                                    r.text(j, rc("run")) == run
                                        && r.text(j, rc("within T")) == c.name()
                                })
                                .count();
                            (n > 0).then(|| format!("{}{n}", &c.name()[..1]))
                        })
                        .collect::<Vec<_>>()
                        .join(" ")
                };
                assert_eq!(
                    t.text(i, col("failures base | RL")),
                    format!("{} | {}", causes(&pair.base), causes(&pair.rl)),
                    "{:?}",
                    row.cells
                );
                for x in &r.rows {
                    let budget = x.cells[rc("budget")].value.unwrap() as u32;
                    if mode == Mode::Native {
                        assert_eq!(budget, turns);
                    } else {
                        assert!(budget > turns);
                    }
                }
            }
        }
    }
}

/// The pid of a direct child of `parent`, from /proc.
fn child_of(parent: u32) -> Option<u32> {
    std::fs::read_dir("/proc").ok()?.flatten().find_map(|e| {
        let pid: u32 = e.file_name().to_str()?.parse().ok()?;
        let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
        // pid (comm) state ppid …
        let ppid: u32 = stat
            .rsplit(')')
            .next()?
            .split_whitespace()
            .nth(1)?
            .parse()
            .ok()?;
        (ppid == parent).then_some(pid)
    })
}

#[test]
fn quit_and_signals_restore_the_terminal_with_the_right_status() {
    // A real pseudo-terminal from util-linux `script`; skipped without it.
    if std::process::Command::new("script")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("no `script` command: skipped");
        return;
    }
    let bin = env!("CARGO_BIN_EXE_rl-audit");
    for (case, code) in [
        ("TERM", 143),
        ("HUP", 129),
        ("q", 0),
        ("panic", 3),
        ("q --no-mouse", 0),
    ] {
        // "panic": the background worker hits a bug (a test hook injects
        // it): the workbench must restore the terminal, say so and exit 3.
        // "q --no-mouse": the mouse left to the terminal.
        let (sig, args) = case.split_once(' ').unwrap_or((case, ""));
        let fault = if sig == "panic" { "worker-panic" } else { "" };
        let mut child = std::process::Command::new("script")
            .args(["-qec", &format!("exec {bin} {args}"), "/dev/null"])
            .env("RL_AUDIT_FAULT", fault)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        // Up to 30 s: six copies of these tests at once on two cores took
        // over 10 s to start `script` and its child.
        let mut pid = None;
        for _ in 0..300 {
            std::thread::sleep(std::time::Duration::from_millis(100));
            pid = child_of(child.id());
            if pid.is_some() {
                break;
            }
        }
        let pid = pid.expect("rl-audit started under script");
        std::thread::sleep(std::time::Duration::from_millis(1500));
        if sig == "panic" {
            // Nothing to do: the worker's first job panics.
        } else if sig == "q" {
            // A key press, through the pseudo-terminal.
            use std::io::Write;
            let mut stdin = child.stdin.take().unwrap();
            stdin.write_all(b"q").unwrap();
            stdin.flush().unwrap();
        } else {
            std::process::Command::new("kill")
                .args([&format!("-{sig}"), &pid.to_string()])
                .status()
                .unwrap();
        }
        let mut waited = 0;
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break s;
            }
            waited += 1;
            assert!(waited < 100, "rl-audit did not leave after SIG{sig}");
            std::thread::sleep(std::time::Duration::from_millis(100));
        };
        let mut out = Vec::new();
        use std::io::Read;
        child.stdout.take().unwrap().read_to_end(&mut out).unwrap();
        let out = String::from_utf8_lossy(&out);
        assert_eq!(status.code(), Some(code), "SIG{sig}");
        // Entered and left the alternate screen, and showed the cursor again.
        assert!(out.contains("\x1b[?1049h"), "SIG{sig}: never drew");
        let left = out.rfind("\x1b[?1049l").expect("left the alternate screen");
        assert!(left > out.rfind("\x1b[?1049h").unwrap());
        assert!(out.contains("\x1b[?25h"), "SIG{sig}: cursor left hidden");
        // The mouse was taken (presses ?1000, drags ?1002, SGR ?1006; not
        // every motion, ?1003) and given back; with --no-mouse, never taken.
        if args == "--no-mouse" {
            assert!(!out.contains("\x1b[?1000h"), "{case}: took the mouse");
        } else {
            assert!(!out.contains("\x1b[?1003h"), "{case}: every motion asked");
            for mode in ["1000", "1002", "1006"] {
                let took = out
                    .rfind(&format!("\x1b[?{mode}h"))
                    .expect("took the mouse");
                let gave = out.rfind(&format!("\x1b[?{mode}l")).expect("gave it back");
                assert!(gave > took, "SIG{sig}: the mouse left captured ({mode})");
            }
        }
        if sig == "panic" {
            // The bug message, after the terminal was restored.
            let msg = out
                .rfind("rl-audit: internal error: background job: injected fault")
                .expect("the bug is reported");
            assert!(msg > left, "reported on the restored terminal");
            assert!(out.contains("please report it"));
            continue;
        }
        // Frames are drawn as synchronized updates (begin … end).
        assert!(
            out.contains("\x1b[?2026h") && out.contains("\x1b[?2026l"),
            "SIG{sig}: no synchronized update"
        );
    }
}

#[test]
fn overview_and_report_share_the_headline() {
    let d = demo();
    let json = rl_audit::report::json::report(&d.set, &d.audit);
    let found = json["findings"].as_array().unwrap();
    assert!(!found.is_empty());
    let mut s = Screen::new(160, 48, d.clone());
    let screen = s.keys("1");
    for f in found {
        let detail = f["detail"].as_str().unwrap();
        assert!(screen.contains(detail), "{detail:?} missing:\n{screen}");
    }
    // Matched-state shares carry their Wilson 95% interval, worked out here
    // from the count: (p + z²/2n ± z·sqrt(p(1−p)/n + z²/4n²)) / (1 + z²/n).
    let z: f64 = 1.959_963_984_540_054;
    for m in json["matched_states"].as_array().unwrap() {
        let n = m["states"].as_f64().unwrap();
        let k = (m["better"].as_f64().unwrap() * n).round();
        let p = k / n;
        let denom = 1.0 + z * z / n;
        let centre = (p + z * z / (2.0 * n)) / denom;
        let half = z * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt() / denom;
        let want = format!(
            "RL better {:.1}% [{:.1}, {:.1}], n={} states",
            100.0 * p,
            100.0 * (centre - half),
            100.0 * (centre + half),
            n
        );
        assert!(
            found.iter().any(|f| f["detail"] == want.as_str()),
            "{want:?} not among {found:?}"
        );
    }
}

/// Enter on a headline finding lands where it is shown: its panel, and
/// there its cell (K, level, mode and pair, as the finding's text names
/// them) or its pair's row — read off the report's findings and the
/// screen, not the workbench's state.
#[test]
fn every_finding_lands_where_it_is_shown() {
    assert_eq!(
        findings_land(demo()),
        [
            "RL ahead",
            "contrasts cannot reach 0.05",
            "error recovery",
            "error recovery in rollouts",
            "inconclusive at a tight budget",
            "matched states"
        ]
    );
    // Holm over a pair's 35 cells at 200 resamples: no cell can reach
    // 0.05 (35 · 2/201), so none is ahead; each pair says so.
    let holm = Settings {
        adjust: rl_audit::analysis::multiplicity::Adjust::Holm,
        ..quick()
    };
    assert_eq!(
        findings_land(demo_with(&holm)),
        [
            "cells cannot reach 0.05",
            "contrasts cannot reach 0.05",
            "error recovery",
            "error recovery in rollouts",
            "inconclusive at a tight budget",
            "matched states"
        ]
    );
}

/// [`every_finding_lands_where_it_is_shown`] for one audit; the kinds of
/// its findings.
fn findings_land(d: Arc<Loaded>) -> Vec<String> {
    let json = rl_audit::report::json::report(&d.set, &d.audit);
    let found = json["findings"].as_array().unwrap();
    let cell = regex::Regex::new(r"K=(\d+) (\d+)% (native|truncated)").unwrap();
    let pair = regex::Regex::new(r"(\S+) → (\S+)").unwrap();
    let mut kinds = std::collections::BTreeSet::new();
    for (i, f) in found.iter().enumerate() {
        let (kind, place, detail) = (
            f["kind"].as_str().unwrap(),
            f["where"].as_str().unwrap(),
            f["detail"].as_str().unwrap(),
        );
        kinds.insert(kind);
        let mut s = Screen::new(160, 48, d.clone());
        let screen = s.keys(&format!("1{}\n", "j".repeat(i)));
        let status = screen.lines().last().unwrap().to_string();
        let bench = place.split(' ').next().unwrap();
        // The pair: in the place, or at the end of the detail.
        let p = pair
            .captures(place)
            .or_else(|| pair.captures(detail))
            .unwrap_or_else(|| panic!("{kind}: no pair in {place:?} / {detail:?}"));
        let (base, rl) = (&p[1], &p[2]);
        assert!(
            status.contains(&format!("{bench} │ {base}→{rl} │")),
            "{kind} {place}: lands on\n{screen}"
        );
        match kind {
            "matched states" => {
                assert_eq!(s.app.panel, rl_audit::tui::panel::Panel::Steps);
                let row = screen.lines().find(|l| l.contains('▶')).unwrap();
                assert!(
                    row.contains(&format!("{base} → {rl}")),
                    "{place}:\n{screen}"
                );
                // The table below follows the row.
                assert!(
                    screen.contains(&format!("{bench}: {base} → {rl} by turn")),
                    "{place}:\n{screen}"
                );
            }
            "error recovery" | "error recovery in rollouts" => {
                assert_eq!(s.app.panel, rl_audit::tui::panel::Panel::Recovery);
            }
            // A pair's family of category contrasts (these tests' 200
            // resamples are too few for its 210), or of cells: the pair's
            // grid, whose cells list the contrasts and their p-values.
            "contrasts cannot reach 0.05" | "cells cannot reach 0.05" => {
                assert_eq!(s.app.panel, rl_audit::tui::panel::Panel::Budget);
                assert!(!cell.is_match(place), "{place}");
            }
            _ => {
                assert_eq!(s.app.panel, rl_audit::tui::panel::Panel::Budget);
                let c = cell.captures(place).unwrap();
                assert!(
                    status.ends_with(&format!("K={} {}% {}", &c[1], &c[2], &c[3])),
                    "{kind} {place}: lands on\n{screen}"
                );
            }
        }
    }
    kinds.into_iter().map(str::to_string).collect()
}

/// A BudgetMix violation lands on its own run and rule: the panel shows
/// one audited run at a time, and the violating run here is the second
/// (`bm2`: group g2 drawing budgets 4 and 6, a success at turn 3 with
/// budget 2; `bm1` keeps every rule).
#[test]
fn a_budgetmix_violation_lands_on_its_run_and_rule() {
    // Written by hand in rl-audit's own format (SPEC §1), loaded by the
    // path relative to the crate as a user would type it: the screen shows it.
    let file = std::path::PathBuf::from("tests/data/budgetmix/two-runs.jsonl");
    let set = rl_audit::schema::load(&[file], &LoadOptions::default()).expect("loads");
    let audit = run_audit(&set, &quick()).expect("audit");
    let data = on_screen(&Arc::new(set), &audit);
    let json = rl_audit::report::json::report(&data.set, &data.audit);
    let found = json["findings"].as_array().unwrap();
    let violations: Vec<(usize, &str)> = found
        .iter()
        .enumerate()
        .filter(|(_, f)| f["kind"] == "BudgetMix violation")
        .map(|(i, f)| (i, f["where"].as_str().unwrap()))
        .collect();
    assert_eq!(
        violations.iter().map(|v| v.1).collect::<Vec<_>>(),
        ["bm2 group_consistency", "bm2 no_success_past_budget"]
    );
    for (i, place) in violations {
        let mut s = Screen::new(160, 48, data.clone());
        let screen = s.keys(&format!("1{}\n", "j".repeat(i)));
        assert_eq!(s.app.panel, rl_audit::tui::panel::Panel::BudgetMix);
        assert!(screen.contains("BudgetMix audit of bm2 "), "{screen}");
        let rule = place.split(' ').nth(1).unwrap();
        let row = screen.lines().find(|l| l.contains('▶')).unwrap();
        assert!(row.contains(rule), "{place}: lands on\n{screen}");
    }
    snapshot(
        &data,
        "8-budgetmix-violation",
        &format!(
            "1{}\n",
            "j".repeat(
                found
                    .iter()
                    .position(|f| f["kind"] == "BudgetMix violation")
                    .unwrap()
            )
        ),
    );
}

#[test]
fn tables_sort_by_column_and_jump_to_either_end() {
    let d = demo();
    let mut s = Screen::new(160, 48, d.clone());
    s.keys("2ll\n");
    // s: by the first column (task), ascending; S: descending.
    let table = |s: &mut Screen| s.app.table().unwrap();
    s.keys("s");
    let t = table(&mut s);
    assert!(t.title.contains("sorted by task ▲"), "{}", t.title);
    assert!(
        !t.title.contains("share of Δ"),
        "the old order is no longer named"
    );
    let tasks: Vec<String> = t.rows.iter().map(|r| r.cells[0].text.clone()).collect();
    let mut want = tasks.clone();
    want.sort();
    assert_eq!(tasks, want);
    s.keys("S");
    let t = table(&mut s);
    let mut want_desc = want.clone();
    want_desc.reverse();
    assert_eq!(
        t.rows
            .iter()
            .map(|r| r.cells[0].text.clone())
            .collect::<Vec<_>>(),
        want_desc
    );
    // G and g: the last and first rows; Enter opens the selected row's task.
    s.keys("G");
    assert_eq!(s.app.row(), t.rows.len() - 1);
    let screen = s.keys("\n");
    assert!(
        screen.contains(&format!("task {} @ 75%", want_desc[want_desc.len() - 1])),
        "{screen}"
    );
    s.keys("\x1b");
    assert!(
        s.app.sort.is_none(),
        "the sort belongs to the view it was made in"
    );
    s.keys("g");
    assert_eq!(s.app.row(), 0);
    // The Budget grid keeps its K order.
    s.keys("\x1bs");
    assert!(s.app.sort.is_none());
}

/// A table's cells as text, row by row.
fn texts(t: &rl_audit::tui::table::TableData) -> Vec<Vec<&str>> {
    t.rows
        .iter()
        .map(|r| r.cells.iter().map(|c| c.text.as_str()).collect())
        .collect()
}

/// Renders `keys` typed from the top of a fresh workbench and compares the
/// whole screen with `tests/screens/<name>-<w>x<h>.txt`.
fn snapshot(d: &Arc<Loaded>, name: &str, keys: &str) {
    snapshot_after(d, name, keys, &|_| {});
}

/// As [`snapshot`], with `setup` applied to the workbench first.
fn snapshot_after(d: &Arc<Loaded>, name: &str, keys: &str, setup: &dyn Fn(&mut App)) {
    for (w, h) in [(80u16, 24u16), (120, 40)] {
        let mut s = Screen::new(w, h, d.clone());
        setup(&mut s.app);
        // `|`: wait for the re-read before typing the rest.
        let (first, rest) = keys.split_once('|').unwrap_or((keys, ""));
        let mut screen = s.keys_then_read(first);
        if !rest.is_empty() {
            screen = s.keys_then_read(rest);
        }
        let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/screens")
            .join(format!("{name}-{w}x{h}.txt"));
        if std::env::var_os("UPDATE_SCREENS").is_some() {
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(&file, &screen).unwrap();
            continue;
        }
        let want = std::fs::read_to_string(&file).unwrap_or_else(|_| {
            panic!("no snapshot {}: run with UPDATE_SCREENS=1", file.display())
        });
        if screen != want {
            let diff: Vec<String> = want
                .lines()
                .zip(screen.lines())
                .enumerate()
                .filter(|(_, (a, b))| a != b)
                .map(|(i, (a, b))| format!("line {}:\n  want {a}\n  got  {b}", i + 1))
                .collect();
            panic!(
                "{name} {w}×{h} differs from {}:\n{}",
                file.display(),
                diff.join("\n")
            );
        }
    }
}

#[test]
fn whole_screens_match_their_snapshots() {
    let d = demo();
    for (name, keys) in [
        ("1-overview", "1"),
        ("2-budget", "2"),
        ("2-budget-75", "2ll"),
        ("2-budget-tasks", "2ll\n"),
        ("2-budget-tasks-filtered", "2ll\n/4x4s\n"),
        ("2-budget-rollouts", "2ll\n\n"),
        ("2-budget-trajectory", "2ll\n\n\n"),
        ("3-cost", "3"),
        ("4-steps", "4"),
        ("4-steps-second-pair", "4j"),
        ("1-overview-enter", "1j\n"),
        ("5-recovery", "5"),
        ("6-likelihood", "6"),
        ("6-likelihood-by-turn", "6\n"),
        ("5-recovery-by-turn", "5\n"),
        ("7-training", "7"),
        ("8-budgetmix", "8"),
        ("8-budgetmix-records", "8jjj\n"),
        ("2-budget-compare", "2llv"),
        ("2-budget-category", "2c"),
        ("2-budget-rollouts-marked", "2ll\n\nx"),
        ("2-budget-rollouts-compare", "2ll\n\nxjx"),
        ("2-budget-compare-step", "2llv|j\n"),
        ("runs", "P"),
        ("runs-base", "Pj\n"),
        ("4-steps-states", "4\n"),
        ("4-steps-probe", "4\n|\n"),
        ("7-training-checkpoints", "7\n"),
        ("6-likelihood-pairs", "6m\n"),
        ("3-cost-enter", "3\n"),
        ("2-budget-trajectory-lake", "2ll\n\n\n|jjjj"),
        ("2-budget-step", "2ll\n\n\n|j\n"),
        ("search-prompt", "2Fcell"),
        ("search", "2Fcell 1[45]$\n"),
        ("help", "2?"),
    ] {
        snapshot(&d, name, keys);
    }
}

/// The tour, step by step at both sizes: whole screens against their
/// snapshots, and every number a step quotes visible on the panel above
/// its box (the box itself does not count).
#[test]
fn the_tour_lands_on_screens_showing_what_it_quotes() {
    let d = demo();
    let n = rl_audit::tour::steps(&d.audit).len();
    assert_eq!(n, 10);
    let number = regex::Regex::new(r"[+-]?\d+\.\d+").unwrap();
    for i in 0..n {
        snapshot(
            &d,
            &format!("tour-{:02}", i + 1),
            &format!("t{}", "n".repeat(i)),
        );
    }
    for (w, h) in [(80u16, 24u16), (120, 40)] {
        let mut s = Screen::new(w, h, d.clone());
        let mut screen = s.keys("t");
        for i in 0..n {
            let t = s.app.tour.as_ref().expect("the tour runs");
            assert_eq!(t.at, i);
            let step = t.steps[i].clone();
            let title = format!(" tour {}/{n} ", i + 1);
            let lines: Vec<&str> = screen.lines().collect();
            let top = lines
                .iter()
                .position(|l| l.contains(&title))
                .unwrap_or_else(|| panic!("{w}×{h} step {}: no tour box in\n{screen}", i + 1));
            let above = lines[..top].join("\n");
            for m in number.find_iter(&step.reading) {
                assert!(
                    above.contains(m.as_str()),
                    "{w}×{h} step {} quotes {} but the panel does not show it:\n{screen}\nreading: {}",
                    i + 1,
                    m.as_str(),
                    step.reading
                );
            }
            screen = s.keys("n");
        }
        assert!(s.app.tour.is_none(), "n on the last step ends the tour");
        // N goes back, q leaves where it stands.
        s.keys("tnnN");
        assert_eq!(s.app.tour.as_ref().map(|t| t.at), Some(1));
        s.keys("q");
        assert!(s.app.tour.is_none());
        assert_eq!(s.app.panel, rl_audit::tui::panel::Panel::Budget);
    }
}

/// The Budget grid's cells on `screen` as `cell` reads them (its 4th group
/// the mode letter): (K, level, mode, the captures, the row's line), a row
/// per K, a cell per level.
fn grid_cells<'s>(
    screen: &'s str,
    cell: &regex::Regex,
    d: &Loaded,
) -> Vec<(u64, u32, &'static str, regex::Captures<'s>, &'s str)> {
    let mut out = Vec::new();
    for &k in &d.audit.pass.ks {
        let line = screen
            .lines()
            .find(|l| l.starts_with(&format!("│{k} ")))
            .unwrap_or_else(|| panic!("no grid row for K={k}\n{screen}"));
        let cells: Vec<_> = cell.captures_iter(line).collect();
        assert_eq!(cells.len(), d.audit.settings.levels.len(), "K={k}: {line}");
        for (c, &level) in cells.into_iter().zip(&d.audit.settings.levels) {
            let mode = if &c[4] == "n" { "native" } else { "truncated" };
            out.push((k, level, mode, c, line));
        }
    }
    out
}

#[test]
fn every_number_on_the_grid_is_the_report_s() {
    let d = demo();
    let json = rl_audit::report::json::report(&d.set, &d.audit);
    let mut s = Screen::new(160, 48, d.clone());
    let screen = s.keys("2");
    let cell =
        regex::Regex::new(r"(-?\d+\.\d)→(-?\d+\.\d) ([+-]\d+\.\d) ([nt]) ([▲▼≈?·])").unwrap();
    let pair = &d.audit.pairs[0];
    let mut seen = 0;
    for (k, level, mode, c, _) in grid_cells(&screen, &cell, &d) {
        let cell_in = |m: &str| {
            [
                ("base", json!(pair.base)),
                ("rl", json!(pair.rl)),
                ("k", json!(k)),
                ("level", json!(level)),
                ("t_mode", json!(m)),
            ]
        };
        let row = one(&json, "advantage", &cell_in(mode));
        // Preferred: native wherever the report has a native row.
        let native = rows(&json, "advantage", &cell_in("native"));
        assert_eq!(mode == "native", !native.is_empty(), "K={k} {level}%");
        let delta = row["delta"].as_f64().unwrap();
        assert_eq!(&c[3], format!("{:+.1}", 100.0 * delta), "K={k} {level}%");
        let verdict = match row["verdict"].as_str().unwrap() {
            "ahead" => "▲",
            "flip" => "▼",
            "equivalent" => "≈",
            "inconclusive" => "?",
            _ => "·",
        };
        assert_eq!(&c[5], verdict, "K={k} {level}%");
        // base% → RL% are the two runs' Pass on Δ's tasks.
        let (b, r) = (
            row["delta"].as_f64().unwrap(),
            c[2].parse::<f64>().unwrap() - c[1].parse::<f64>().unwrap(),
        );
        assert!((100.0 * b - r).abs() <= 0.11, "K={k} {level}%: {b} vs {r}");
        seen += 1;
    }
    assert_eq!(seen, d.audit.pass.ks.len() * d.audit.settings.levels.len());
}

/// Each category's grid (`c`, one category after another): every cell's
/// Δ is that category's `advantage_by_category` row's, and its sign says
/// where the row's interval lies — `↑` above 0, `↓` below, none where it
/// holds 0 or is degenerate — so that the cells stand out without colour
/// too; the legend names the signs the grid shows, and only those.
#[test]
fn every_category_cell_is_the_report_s_with_its_sign() {
    let d = demo();
    let json = rl_audit::report::json::report(&d.set, &d.audit);
    let cell =
        regex::Regex::new(r"(-?\d+\.\d)→(-?\d+\.\d) ([+-]\d+\.\d) ([nt])(?: ([↑↓]))?").unwrap();
    let title = regex::Regex::new(r"^┌(\S+) \[(\S+)\]: (\S+) → (\S+) \(").unwrap();
    let pass_line = regex::Regex::new(
        r"^│(\S+) \[(\S+)\]: Pass@\((\d+),(\d+)%\) (\d+\.\d)% \[(\d+\.\d), (\d+\.\d)\] n=(\d+) tasks \((\w+)\)",
    )
    .unwrap();
    let mut s = Screen::new(200, 48, d.clone());
    s.keys("2");
    let bench = d.audit.benchmarks()[0].clone();
    let want: Vec<String> = d
        .audit
        .categories
        .categories(&bench)
        .iter()
        .map(|c| c.to_string())
        .collect();
    let mut shown = Vec::new();
    let mut signs = [0usize; 2];
    for _ in &want {
        let screen = s.keys("c");
        let t = screen
            .lines()
            .find_map(|l| title.captures(l))
            .unwrap_or_else(|| panic!("no category grid\n{screen}"));
        assert_eq!(&t[1], bench);
        let (cat, base, rl) = (&t[2], &t[3], &t[4]);
        shown.push(cat.to_string());
        let mut here = [false; 2];
        for (k, level, mode, c, line) in grid_cells(&screen, &cell, &d) {
            let row = one(
                &json,
                "advantage_by_category",
                &[
                    ("benchmark", json!(bench)),
                    ("category", json!(cat)),
                    ("base", json!(base)),
                    ("rl", json!(rl)),
                    ("k", json!(k)),
                    ("level", json!(level)),
                    ("t_mode", json!(mode)),
                ],
            );
            let at = format!("{cat} K={k} {level}%: {line}");
            let delta = row["delta"].as_f64().unwrap();
            assert_eq!(&c[3], format!("{:+.1}", 100.0 * delta), "{at}");
            let sign = match row["ci"].as_array() {
                Some(b) if b[0].as_f64().unwrap() > 0.0 => Some(0),
                Some(b) if b[1].as_f64().unwrap() < 0.0 => Some(1),
                _ => None,
            };
            assert_eq!(
                c.get(5).map(|m| m.as_str()),
                sign.map(|i| ["↑", "↓"][i]),
                "{at}"
            );
            if let Some(i) = sign {
                here[i] = true;
                signs[i] += 1;
            }
        }
        // The selected cell gives each run's Pass in the category: the
        // report's `pass_by_category` row, its value, interval and n.
        let runs: Vec<_> = screen
            .lines()
            .filter_map(|l| pass_line.captures(l))
            .collect();
        assert_eq!(runs.len(), 2, "{screen}");
        for (r, run) in runs.iter().zip([base, rl]) {
            assert_eq!((&r[1], &r[2]), (run, cat), "{screen}");
            let row = one(
                &json,
                "pass_by_category",
                &[
                    ("benchmark", json!(bench)),
                    ("category", json!(cat)),
                    ("run", json!(run)),
                    ("k", json!(r[3].parse::<u64>().unwrap())),
                    ("level", json!(r[4].parse::<u64>().unwrap())),
                    ("t_mode", json!(&r[9])),
                ],
            );
            let pct = |v: &serde_json::Value| format!("{:.1}", 100.0 * v.as_f64().unwrap());
            assert_eq!(&r[5], pct(&row["value"]), "{screen}");
            assert_eq!(&r[6], pct(&row["ci"][0]), "{screen}");
            assert_eq!(&r[7], pct(&row["ci"][1]), "{screen}");
            assert_eq!(r[8].parse::<u64>().unwrap(), row["tasks"].as_u64().unwrap());
        }
        let legend = screen
            .lines()
            .find(|l| l.starts_with('└') && l.contains(" native"))
            .unwrap_or_else(|| panic!("no legend\n{screen}"));
        assert_eq!(legend.contains("↑ 95% CI above 0"), here[0], "{legend}");
        assert_eq!(legend.contains("↓ 95% CI below 0"), here[1], "{legend}");
    }
    assert_eq!(shown, want);
    assert!(want.len() >= 2 && signs[0] > 0, "{want:?} {signs:?}");
    // `c` after the last category: the whole grid again.
    let screen = s.keys("c");
    assert!(screen.lines().all(|l| !title.is_match(l)), "{screen}");
}

/// What a key press can change, as one comparable text.
fn state(app: &App) -> String {
    format!(
        "{:?} {:?}",
        (
            app.panel,
            &app.stack,
            &app.rows,
            &app.sel,
            app.hscroll,
            app.help
        ),
        (
            app.filter_editing,
            &app.message,
            app.quit,
            app.sort,
            app.ceiling,
            app.llr_view,
            app.pending,
            app.balance,
            app.search_editing,
            app.tour.as_ref().map(|t| (t.at, t.scroll)),
            &app.clipboard,
        )
    )
}

#[test]
fn every_key_in_the_map_does_something() {
    use keymap::{Command, Key, KEYMAP};
    let d = demo();
    let dir = common::temp_dir("tui-keys");
    for b in KEYMAP {
        for key in b.keys {
            // A state in which the command has something to act on.
            let setup = match b.command {
                Command::Back | Command::Escape => "2\n",
                Command::Up | Command::PageUp | Command::Top => "2jj",
                Command::Sort | Command::SortReverse => "2\n",
                Command::Mode
                    if b.panels.contains(&rl_audit::tui::panel::Panel::Likelihood)
                        && matches!(key, Key::Char('m')) =>
                {
                    "2"
                }
                Command::ToggleBalance => "4",
                Command::DropPair => "P\nj",
                Command::GoPanel if matches!(key, Key::Char('1')) => "2",
                Command::GoPanel => "1",
                Command::NextPanel | Command::PrevPanel => "3",
                Command::Left | Command::Right => "2",
                _ => "2",
            };
            let mut s = Screen::new(120, 40, d.clone());
            s.app.export_dir = dir.clone();
            s.keys(setup);
            let before = state(&s.app);
            let ev = match *key {
                Key::Char(c) => KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE),
                Key::Ctrl(c) => KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL),
                Key::Code(c) => KeyEvent::new(c, KeyModifiers::NONE),
            };
            s.app.on_key(ev);
            s.text();
            assert_ne!(
                state(&s.app),
                before,
                "{} did nothing after {setup:?}",
                key.label()
            );
        }
    }
    // Likelihood: m switches the histogram.
    let mut s = Screen::new(120, 40, d.clone());
    s.keys("6");
    s.keys("m");
    assert!(s.app.llr_view);
    // Ctrl-C while typing a filter quits rather than typing "c".
    let mut s = Screen::new(120, 40, d.clone());
    s.keys("2\n/");
    s.app
        .on_key(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL));
    assert!(s.app.quit);
    assert_eq!(s.app.filter, "");
}

#[test]
fn long_cells_scroll_sideways_and_a_step_reads_whole() {
    let d = demo();
    let mut s = Screen::new(120, 40, d.clone());
    let screen = s.keys_then_read("2ll\n\n\n");
    assert!(screen.contains("whole"), "{screen}");
    let screen = s.keys("l");
    assert_eq!(s.app.hscroll, 16);
    assert!(screen.contains("scrolled 16"), "{screen}");
    let screen = s.keys("h");
    assert_eq!(s.app.hscroll, 0);
    assert!(!screen.contains("scrolled"));
}

/// The steps' actions of a record, read straight from its JSON.
fn actions(set: &rl_audit::schema::LogSet, loc: rl_audit::schema::Loc) -> Vec<String> {
    let v = set.read_record(loc).unwrap();
    v["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["action"].to_string())
        .collect()
}

#[test]
fn two_trajectories_side_by_side() {
    use rl_audit::tui::app::View;
    let d = demo();
    // `v` on the 75% K=1 cell: a base failure and an RL success of one task.
    let mut s = Screen::new(120, 40, d.clone());
    let screen = s.keys_then_read("2llv");
    let Some(View::Compare(a, b)) = s.app.stack.last().cloned() else {
        panic!("v opened no comparison:\n{screen}");
    };
    let (ra, rb) = (d.set.read_record(a).unwrap(), d.set.read_record(b).unwrap());
    assert_eq!(ra["task"], rb["task"]);
    let (_, pair) = rl_audit::tui::select::current(&d.audit, &s.app.sel);
    let pair = pair.unwrap();
    assert_eq!(ra["run"], pair.base.as_str());
    assert_eq!(rb["run"], pair.rl.as_str());
    // T at 75% of the task's full budget (SPEC §2.1: ceil).
    let full = ra["max_budget"]
        .as_u64()
        .unwrap_or(ra["budget"].as_u64().unwrap());
    let t = (full * 75).div_ceil(100);
    let solved = |r: &serde_json::Value| {
        r["success"] == true && r["success_turn"].as_u64().is_some_and(|x| x <= t)
    };
    assert!(!solved(&ra) && solved(&rb), "{ra}\n{rb}");
    // The first turn where the actions differ, counted here from the records.
    let (xa, xb) = (actions(&d.set, a), actions(&d.set, b));
    let first = (0..xa.len().max(xb.len()))
        .find(|&i| xa.get(i) != xb.get(i))
        .expect("a failure and a success differ somewhere");
    assert!(
        screen.contains(&format!("actions part at turn {} (≠)", first + 1)),
        "{screen}"
    );
    // One row per turn of the longer trajectory; stacked at 80 columns: two.
    let rows = s.app.table().unwrap().rows.len();
    assert_eq!(rows, xa.len().max(xb.len()));
    let mut narrow = Screen::new(80, 24, d.clone());
    narrow.keys_then_read("2llv");
    assert_eq!(narrow.app.table().unwrap().rows.len(), 2 * rows);
    // `x` on a rollout, `x` on another: the two, in that order.
    let mut s = Screen::new(120, 40, d.clone());
    s.keys("2ll\n\n");
    let t = s.app.table().unwrap();
    let (p, q) = (t.target(0), t.target(1));
    let screen = s.keys("x");
    assert!(screen.contains("marked record"), "{screen}");
    s.keys("jx");
    match (p, q, s.app.stack.last()) {
        (
            rl_audit::tui::table::Target::Trajectory(p),
            rl_audit::tui::table::Target::Trajectory(q),
            Some(View::Compare(x, y)),
        ) => assert_eq!((p, q), (*x, *y)),
        other => panic!("x x did not compare the two rollouts: {other:?}"),
    }
    // Esc goes back to the rollouts.
    s.keys("\x1b");
    assert!(matches!(s.app.stack.last(), Some(View::Rollouts { .. })));
}

/// Every (trajectory, step, field) whose text matches `re`, counted here
/// from the records.
fn independent_hits(d: &Loaded, re: &regex::Regex) -> Vec<(rl_audit::schema::Loc, usize, String)> {
    let mut out = Vec::new();
    for tr in &d.set.trajectories {
        let v = d.set.read_record(tr.loc).unwrap();
        for (i, st) in v["steps"].as_array().into_iter().flatten().enumerate() {
            for field in ["action", "observation"] {
                let text = match &st[field] {
                    serde_json::Value::String(s) => s.clone(),
                    serde_json::Value::Null => String::new(),
                    x => x.to_string(),
                };
                if re.is_match(&text) {
                    out.push((tr.loc, i, field.to_string()));
                }
            }
        }
    }
    out
}

/// A search over many files (read a file per core at once) gives the
/// hits of reading them one after another: every hit in file order, and
/// with a limit the first `limit`, the trajectories read up to the one
/// holding the last kept hit, those with hits among them, and `truncated`
/// where some were left — counted here from the lines as written.
#[test]
fn a_search_over_many_files_is_the_files_read_in_order() {
    let d = common::temp_dir("search_files");
    let mut rng = common::Mix(11);
    // (file, line, step, field) of each hit, in file order.
    let mut want: Vec<(String, u64, usize, &str)> = Vec::new();
    let mut records = 0usize;
    for f in 0..7 {
        let name = format!("s-{f}.jsonl");
        // Files of unequal length, one with no hit at all.
        let lines: Vec<serde_json::Value> = (0..10 + 7 * f)
            .map(|i| {
                let mut v = common::traj("r", "b", &format!("t{i}"), 4, 4, None);
                v["sample"] = (f as u64).into();
                let steps: Vec<serde_json::Value> = (0..3)
                    .map(|k| {
                        let mut hit = |field: &'static str| {
                            let yes = f != 3 && rng.below(9) == 0;
                            if yes {
                                want.push((name.clone(), i as u64 + 1, k, field));
                            }
                            if yes {
                                "the NEEDLE here"
                            } else {
                                "hay"
                            }
                        };
                        let action = hit("action");
                        let observation = hit("observation");
                        json!({"turn": k + 1, "action": action, "observation": observation})
                    })
                    .collect();
                v["steps"] = steps.into();
                v
            })
            .collect();
        records += lines.len();
        common::write_lines(&d.join(&name), &lines);
    }
    let set = rl_audit::schema::load::load(std::slice::from_ref(&d), &Default::default()).unwrap();
    assert_eq!(set.trajectories.len(), records);
    let re = regex::Regex::new("NEEDLE").unwrap();
    let record_of = |h: &(String, u64, usize, &str)| (h.0.clone(), h.1);
    // A trajectory's (file name, line).
    let place = |i: usize| {
        let loc = set.trajectories[i].loc;
        let file = std::path::Path::new(set.file_name(loc))
            .file_name()
            .unwrap();
        (file.to_string_lossy().to_string(), loc.line())
    };
    // Each record's place in file order (0-based), from the file names.
    let ordinal = |file: &str, line: u64| {
        let f: usize = file[2..file.len() - 6].parse().unwrap();
        (0..f).map(|g| 10 + 7 * g).sum::<usize>() + line as usize - 1
    };
    assert!(want.len() > 20, "{}", want.len());
    for limit in [
        1,
        2,
        5,
        9,
        want.len() / 2,
        want.len() - 1,
        want.len(),
        want.len() + 3,
    ] {
        let progress = rl_audit::analysis::grep::Progress::default();
        let found =
            rl_audit::analysis::grep::search(&set, &re, limit, &|| true, &progress).unwrap();
        let kept = &want[..limit.min(want.len())];
        let got: Vec<(String, u64, usize, &str)> = found
            .hits
            .iter()
            .map(|h| {
                let (file, line) = place(h.traj);
                (file, line, h.step, h.field)
            })
            .collect();
        assert_eq!(got, kept, "limit {limit}");
        // Reaching the limit stops the search, even at the last hit.
        let read = if limit <= want.len() {
            let last = &kept[kept.len() - 1];
            ordinal(&last.0, last.1) + 1
        } else {
            records
        };
        assert_eq!(found.read, read, "limit {limit}");
        assert_eq!(found.truncated, read < records, "limit {limit}");
        let mut with_hits: Vec<_> = kept.iter().map(record_of).collect();
        with_hits.dedup();
        assert_eq!(found.matching, with_hits.len(), "limit {limit}");
    }
    // `--grep`'s split, read the same way: which of every other trajectory
    // (backwards, so not in file order) has an action matching.
    let some: Vec<usize> = (0..records).rev().step_by(2).collect();
    let hit = rl_audit::analysis::grep::matching(&set, &some, std::slice::from_ref(&re)).unwrap();
    let expect: Vec<bool> = some
        .iter()
        .map(|&i| {
            let at = place(i);
            want.iter().any(|h| record_of(h) == at && h.3 == "action")
        })
        .collect();
    assert!(expect.iter().any(|&x| x) && !expect.iter().all(|&x| x));
    assert_eq!(hit, vec![expect]);
}

#[test]
fn search_finds_every_match_and_opens_its_turn() {
    use rl_audit::tui::app::View;
    let d = demo();
    let mut s = Screen::new(120, 40, d.clone());
    s.keys("2");
    let screen = s.keys("F");
    assert!(screen.contains("regex over actions"), "{screen}");
    // An invalid pattern says why and keeps the prompt.
    let screen = s.keys("(\n");
    assert!(s.app.search_editing);
    assert!(screen.contains("invalid pattern \"(\""), "{screen}");
    s.app
        .on_key(KeyEvent::new(KeyCode::Backspace, KeyModifiers::NONE));
    let pattern = r"edge at cell 6\d$";
    let screen = s.keys_then_read(&format!("{pattern}\n"));
    assert!(matches!(s.app.stack.last(), Some(View::Search(p)) if p == pattern));
    let want = independent_hits(&d, &regex::Regex::new(pattern).unwrap());
    assert!(!want.is_empty() && want.len() < rl_audit::tui::views::search::LIMIT);
    let t = s.app.table().unwrap();
    let got: Vec<_> = t
        .rows
        .iter()
        .map(|r| match &r.target {
            rl_audit::tui::table::Target::Step(loc, step) => (*loc, *step, r.cells[4].text.clone()),
            other => panic!("a hit row without its step: {other:?}"),
        })
        .collect();
    assert_eq!(got, want);
    let trajs: std::collections::BTreeSet<_> = want.iter().map(|h| h.0).collect();
    assert!(
        screen.contains(&format!(
            "{} hits in {} of {} trajectories",
            want.len(),
            trajs.len(),
            d.set.trajectories.len()
        )),
        "{screen}"
    );
    assert!(screen.contains("«edge at cell 6"), "{screen}");
    // A search no longer wanted stops (leaving the view drops the wish).
    let re = regex::Regex::new(pattern).unwrap();
    assert!(matches!(
        rl_audit::analysis::grep::search(&d.set, &re, 10, &|| false, &Default::default()),
        Err(rl_audit::error::Error::Cancelled)
    ));
    let few =
        rl_audit::analysis::grep::search(&d.set, &re, 10, &|| true, &Default::default()).unwrap();
    assert_eq!(few.hits.len(), 10);
    assert!(few.truncated);
    // Enter on the third hit: its trajectory, at that turn.
    let screen = s.keys_then_read("jj\n");
    assert!(matches!(s.app.stack.last(), Some(View::Trajectory(l)) if *l == want[2].0));
    assert_eq!(s.app.row(), want[2].1, "{screen}");
}

#[test]
fn a_frozenlake_trajectory_is_drawn_on_its_lake() {
    use rl_audit::tui::app::View;
    let d = demo();
    let mut s = Screen::new(120, 40, d.clone());
    // A task of the K=1 75% cell whose first rollout there is 5 turns or
    // more: fl-05-5x5s, found by its name in the tasks table.
    let mut screen = s.keys_then_read("2ll\n");
    for i in 0..=48 {
        assert!(i < 48, "fl-05-5x5s not in the cell's tasks:\n{screen}");
        let selected = screen
            .lines()
            .find_map(|l| l.split_once("│▶"))
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .unwrap_or_default()
            .to_string();
        if selected == "fl-05-5x5s" {
            break;
        }
        screen = s.keys_then_read("j");
    }
    s.keys_then_read("\n\n");
    let screen = s.keys("jjjj");
    let Some(View::Trajectory(loc)) = s.app.stack.last().cloned() else {
        panic!("no trajectory:\n{screen}");
    };
    let v = d.set.read_record(loc).unwrap();
    // The map: a probe of the same task carries it (the demo's records do not).
    let task = d.set.strings.get(v["task"].as_str().unwrap()).unwrap();
    let map = d
        .set
        .probes
        .iter()
        .filter(|p| p.task == task)
        .find_map(|p| p.frozenlake.as_ref())
        .unwrap()
        .map
        .clone();
    let cols = map[0].len();
    let state = |i: usize| -> usize { v["steps"][i]["state"].as_str().unwrap().parse().unwrap() };
    // Turn 5: `@` at step 5's cell, `*` on the cells of steps 1–4.
    let want: Vec<String> = (0..map.len())
        .map(|r| {
            (0..cols)
                .map(|c| {
                    let i = r * cols + c;
                    if i == state(4) {
                        "@".to_string()
                    } else if (0..4).any(|k| state(k) == i) {
                        "*".to_string()
                    } else {
                        map[r][c..c + 1].replace('F', ".")
                    }
                })
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    for line in &want {
        assert!(
            screen.contains(&format!("│{line}")),
            "{line:?} not in\n{screen}"
        );
    }
    assert!(
        screen.contains(&format!("@ cell {} at turn 5", state(4))),
        "{screen}"
    );
}

/// The workbench's data: the set with one of its (partial) audits.
/// The report files of an audit, to compare two audits' reports byte for
/// byte.
fn report_of(
    set: &rl_audit::schema::LogSet,
    a: &rl_audit::analysis::Audit,
) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    rl_audit::report::render(set, a, false, None)
        .expect("render")
        .0
}

fn on_screen(set: &Arc<rl_audit::schema::LogSet>, a: &rl_audit::analysis::Audit) -> Arc<Loaded> {
    Arc::new(Loaded {
        set: set.clone(),
        audit: a.clone(),
    })
}

/// On the Overview, which reads every analysis, the one to come next is
/// just `next`, not `next (on screen)`: no panel on screen asked for it.
#[test]
fn the_overview_calls_the_next_analysis_next() {
    use rl_audit::analysis::Part;
    let set = rl_audit::demo::load_demo(&LoadOptions::default()).expect("demo loads");
    let settings = quick();
    settings
        .focus
        .set(rl_audit::tui::panel::Panel::Overview.parts());
    let mut drawing = None;
    rl_audit::analysis::run_audit_staged(&set, &settings, &mut |a| {
        if drawing.is_none() && a.is_running(Part::Pass) {
            drawing = Some(a.clone());
        }
    })
    .expect("audit");
    let drawing = drawing.expect("Pass@(K,T) begun");
    let t = rl_audit::tui::views::overview::findings(&on_screen(&Arc::new(set), &drawing), false);
    let states: Vec<(String, String)> = (0..t.rows.len())
        .filter(|&i| t.text(i, 0) == "to come")
        .map(|i| (t.text(i, 1).to_string(), t.text(i, 2).to_string()))
        .collect();
    // Pass@(K,T) computing, categories next, the rest waiting (natural
    // recovery may have begun beside).
    let state = |name: &str| {
        states
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, s)| s.as_str())
    };
    assert_eq!(
        state("Pass@(K,T), Δ, curves, token budgets"),
        Some("computing…")
    );
    assert_eq!(state("categories"), Some("next"), "{states:?}");
    for (name, s) in &states[2..] {
        assert!(
            s == "waiting" || (name == "natural recovery" && s == "computing beside…"),
            "{states:?}"
        );
    }
}

/// The demo's audit as the workbench sees it while it computes: every
/// partial audit handed on, in order, and the complete one.
fn demo_staged() -> (
    Arc<rl_audit::schema::LogSet>,
    Vec<rl_audit::analysis::Audit>,
) {
    let set = rl_audit::demo::load_demo(&LoadOptions::default()).expect("demo loads");
    let settings = quick();
    let mut seen = Vec::new();
    let done = rl_audit::analysis::run_audit_staged(&set, &settings, &mut |a| seen.push(a.clone()))
        .expect("audit");
    assert!(done.is_complete());
    (Arc::new(set), seen)
}

/// The hand-over with `next` the main sequence's part to compute next, as
/// it is while the parts computed beside are still running — how a large
/// set's audit hands it on (at 11 M rollouts they end after the matched
/// states); on the demo they may have ended sooner and been handed on: then
/// they are pending again here, their results not there yet.
fn hand_over_at(
    seen: &[rl_audit::analysis::Audit],
    next: rl_audit::analysis::Part,
) -> rl_audit::analysis::Audit {
    let a = seen
        .iter()
        .find(|a| a.pending.first() == Some(&next))
        .expect("a hand-over")
        .clone();
    beside_running(a)
}

/// A hand-over as it is while the parts computed beside are still running
/// (see [`hand_over_at`]).
fn beside_running(mut a: rl_audit::analysis::Audit) -> rl_audit::analysis::Audit {
    use rl_audit::analysis::Part;
    a.pending = Part::ALL
        .into_iter()
        .filter(|p| a.is_pending(*p) || p.beside())
        .collect();
    a.likelihood.clear();
    a.llr_by_turn.clear();
    a.natural_recovery.clear();
    a.natural_recovery_diff.clear();
    a.natural_values_in = false;
    a.llr_pairs_in = 0;
    a
}

#[test]
fn the_audit_is_handed_on_part_by_part_and_each_part_is_final() {
    use rl_audit::analysis::Part;
    let (_, all) = demo_staged();
    // Four hand-overs come within a part, none leaving: Pass@(K,T)'s rows
    // of the demo's one benchmark before its part is in, the matched
    // states' and error recovery's values before their bootstrap intervals
    // (both checked below), and natural recovery's values and the
    // likelihoods' before their intervals, while they run beside the main
    // sequence, whenever that is (checked in
    // `natural_recovery_values_come_before_their_intervals` and
    // `likelihood_values_come_before_their_intervals`).
    let within: Vec<usize> = (1..all.len())
        .filter(|&i| all[i].pending == all[i - 1].pending)
        .collect();
    assert_eq!(within.len(), 4, "{within:?}");
    let rows = |i: &&usize| {
        all[**i].is_pending(Part::Pass)
            && !all[**i].pass.benchmarks_in.is_empty()
            && all[**i - 1].pass.benchmarks_in.is_empty()
    };
    let values = |i: &&usize| all[**i].natural_values_in && !all[**i - 1].natural_values_in;
    let matched_values = |i: &&usize| all[**i].matched_values_in && !all[**i - 1].matched_values_in;
    let rows_at = *within.iter().find(rows).expect("the benchmark's rows");
    let matched_at = *within.iter().find(matched_values).expect("matched values");
    assert!(
        within
            .iter()
            .any(|i| values(&i) && !rows(&i) && !matched_values(&i)),
        "{within:?}"
    );
    // Right after the rollout counts' hand-over (Pass@(K,T) named first),
    // but for hand-overs of the parts computed beside, which come whenever
    // they are done (natural recovery's values may come first on the demo).
    assert_eq!(all[2].pending.first(), Some(&Part::Pass));
    assert!(!all[2].is_pending(Part::Aggregates) && all[1].is_pending(Part::Aggregates));
    let main_left = |a: &rl_audit::analysis::Audit| -> Vec<Part> {
        a.pending.iter().copied().filter(|p| !p.beside()).collect()
    };
    assert!(rows_at > 2);
    for i in 3..rows_at {
        assert_eq!(main_left(&all[i]), main_left(&all[2]), "hand-over {i}");
        assert!(all[i].pass.benchmarks_in.is_empty(), "hand-over {i}");
    }
    let seen: Vec<rl_audit::analysis::Audit> = (0..all.len())
        .filter(|i| !within.contains(i))
        .map(|i| all[i].clone())
        .collect();
    // Before the first part, then after each: one part leaves at each
    // hand-over, the pending ones always in Part::ALL's order.
    assert_eq!(seen.len(), Part::ALL.len() + 1);
    assert_eq!(seen[0].pending, Part::ALL.to_vec());
    assert!(seen.last().unwrap().pending.is_empty());
    let left: Vec<Part> = seen
        .windows(2)
        .map(|w| {
            let in_order: Vec<Part> = Part::ALL
                .into_iter()
                .filter(|p| w[1].is_pending(*p))
                .collect();
            assert_eq!(w[1].pending, in_order);
            let gone: Vec<Part> = w[0]
                .pending
                .iter()
                .copied()
                .filter(|p| !w[1].is_pending(*p))
                .collect();
            assert_eq!(gone.len(), 1, "{:?} → {:?}", w[0].pending, w[1].pending);
            assert_eq!(w[1].pending.len() + 1, w[0].pending.len());
            gone[0]
        })
        .collect();
    // The main sequence's parts in Part::ALL's order; those computed beside
    // once begun (natural recovery from the start, handed on no sooner
    // than the rollout counts, the next hand-over of the main sequence;
    // the likelihoods after Pass@(K,T)), whenever they end; grep last.
    let main: Vec<Part> = left.iter().copied().filter(|p| !p.beside()).collect();
    let want: Vec<Part> = Part::ALL.into_iter().filter(|p| !p.beside()).collect();
    assert_eq!(main, want);
    let at = |p: Part| left.iter().position(|x| *x == p).expect("left once");
    assert!(at(Part::NaturalRecovery) > at(Part::Aggregates), "{left:?}");
    assert!(at(Part::Likelihood) > at(Part::Pass), "{left:?}");
    assert_eq!(at(Part::LlrByTurn), at(Part::Likelihood) + 1, "{left:?}");
    assert_eq!(left.last(), Some(&Part::Grep));
    let last = seen.last().unwrap();
    // The benchmark's rows, final but for their §4.2 tests (not drawn yet);
    // the pass curves once their thread is done.
    let so_far = &all[rows_at];
    assert_eq!(so_far.pass.benchmarks_in, vec!["frozenlake".to_string()]);
    assert_eq!(last.pass.benchmarks_in, so_far.pass.benchmarks_in);
    let untested = |rows: &[rl_audit::analysis::passkt::Advantage]| {
        let mut rows = rows.to_vec();
        for r in &mut rows {
            r.test = rl_audit::analysis::multiplicity::CellTest::DEGENERATE;
        }
        format!("{rows:?}")
    };
    assert_eq!(
        format!("{:?}", so_far.pass.advantage),
        untested(&last.pass.advantage)
    );
    assert!(last.pass.advantage.iter().any(|r| r.test.p_value.is_some()));
    let mut whole = so_far.pass.clone();
    whole.advantage = last.pass.advantage.clone();
    if whole.curve.is_empty() {
        whole.curve = last.pass.curve.clone();
    }
    assert_eq!(format!("{whole:?}"), format!("{:?}", last.pass));
    assert!(!so_far.pass.cells.is_empty() && !so_far.pass.upper.is_empty());
    // The matched states' and error recovery's rows while their part is
    // computed: the complete audit's, every bootstrap interval pending
    // (undefined where it is undefined), the values to the bit.
    let early = &all[matched_at];
    assert!(early.is_running(Part::Matched));
    let pending = |e: &mut Option<Estimate>| {
        if let Some(e) = e.as_mut().filter(|e| e.ci != Ci::Undefined) {
            e.ci = Ci::Pending;
        }
    };
    let mut matched = last.matched.clone();
    for m in &mut matched {
        pending(&mut m.mean_diff);
        pending(&mut m.early.mean_diff);
        pending(&mut m.late.mean_diff);
        for t in &mut m.by_turn {
            if t.ci != Ci::Undefined {
                t.ci = Ci::Pending;
            }
        }
    }
    let mut recovery = last.recovery.clone();
    for r in &mut recovery {
        let [c0, c1] = &mut r.correction;
        let [t0, t1] = &mut r.terminal_success;
        for e in [
            c0,
            c1,
            t0,
            t1,
            &mut r.correction_diff,
            &mut r.terminal_success_diff,
        ] {
            pending(e);
        }
    }
    assert!(!matched.is_empty() && !recovery.is_empty());
    assert_eq!(format!("{:?}", early.matched), format!("{matched:?}"));
    assert_eq!(format!("{:?}", early.recovery), format!("{recovery:?}"));
    assert!(last.matched.iter().any(|m| m
        .mean_diff
        .is_some_and(|e| matches!(e.ci, Ci::Interval(..)))));
    let full = demo();
    // The complete one is run_audit's, to the byte of the report.
    let render = |a: &rl_audit::analysis::Audit| report_of(&full.set, a);
    assert_eq!(render(last), render(&full.audit));
    // A part, once in, is already what the complete audit holds; before,
    // it is empty.
    for a in &seen {
        let pass = format!("{:?}", a.pass);
        if a.is_pending(Part::Pass) {
            // Empty, or the benchmark's rows (a part computed beside may
            // end while Pass@(K,T) draws its tests).
            assert!(a.pass.cells.is_empty() || pass == format!("{:?}", so_far.pass));
        } else {
            assert_eq!(pass, format!("{:?}", last.pass));
        }
        if a.is_pending(Part::Matched) {
            assert!(a.matched.is_empty() && a.recovery.is_empty());
        } else {
            assert_eq!(format!("{:?}", a.matched), format!("{:?}", last.matched));
        }
        if a.is_pending(Part::Cost) {
            assert!(a.cost_frontier.is_empty());
        } else {
            assert_eq!(
                format!("{:?}", a.cost_frontier),
                format!("{:?}", last.cost_frontier)
            );
        }
    }
    assert!(!last.pass.cells.is_empty() && !last.matched.is_empty());
}

/// The benchmark selected is the one Pass@(K,T) counts and draws first
/// (`Focus::set_benchmark`, set by the workbench to the selection's), and
/// no figure changes: on the test set of several benchmarks, the last of
/// the default order first, the report byte-equal to the default order's.
#[test]
fn the_benchmark_on_screen_is_counted_first_and_no_figure_changes() {
    use rl_audit::analysis::Part;
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/large/jsonl");
    let set = rl_audit::schema::load(&[file], &LoadOptions::default()).expect("loads");
    let full = run_audit(&set, &quick()).expect("audit");
    let render = |a: &rl_audit::analysis::Audit| report_of(&set, a);
    // The order the benchmarks came in, unfocused.
    let order = full.pass.benchmarks_in.clone();
    assert!(order.len() >= 3, "{order:?}");
    let last = order.last().unwrap().clone();
    let settings = quick();
    settings.focus.set_benchmark(Some(&last));
    let mut firsts = Vec::new();
    let done = rl_audit::analysis::run_audit_staged(&set, &settings, &mut |a| {
        if a.is_pending(Part::Pass) && !a.pass.benchmarks_in.is_empty() {
            firsts.push(a.pass.benchmarks_in.clone());
        }
    })
    .expect("audit");
    assert_eq!(firsts[0], std::slice::from_ref(&last));
    let mut rest = order.clone();
    rest.retain(|b| *b != last);
    rest.insert(0, last);
    assert_eq!(done.pass.benchmarks_in, rest);
    // File by file (a failure names the file rather than print its bytes).
    let (got, want) = (render(&done), render(&full));
    assert_eq!(got.len(), want.len());
    for ((name, g), (_, w)) in got.iter().zip(&want) {
        assert!(g == w, "{} differs", name.display());
    }
}

/// Pass@(K,T) hands on every benchmark's values before it draws any
/// interval: the Budget panel shows each benchmark's grid once its cells
/// are counted, its intervals `[…]` (`Ci::Pending`) and verdicts `…` until
/// they are drawn. Each value handed on early is the finished audit's, to
/// the bit, and no interval of the finished audit is pending.
#[test]
fn pass_values_come_before_their_intervals_and_are_the_final_values() {
    use rl_audit::analysis::stats::Ci;
    use rl_audit::analysis::Part;
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/large/jsonl");
    let set = rl_audit::schema::load(&[file], &LoadOptions::default()).expect("loads");
    let mut previews = Vec::new();
    let done = rl_audit::analysis::run_audit_staged(&set, &quick(), &mut |a| {
        if a.is_pending(Part::Pass) && !a.pass.values_in.is_empty() {
            previews.push(a.pass.clone());
        }
    })
    .expect("audit");
    let p = &done.pass;
    let order = p.benchmarks_in.clone();
    assert!(order.len() >= 3, "{order:?}");
    assert!(p.values_in.is_empty());
    // Every benchmark's values in before any benchmark's intervals; their
    // token budgets in the hand-over after (the last before an interval),
    // none before it: they wait for the token scan, the values do not.
    // (Parts computed beside may be handed on between, with the same
    // values: the first hand-over with the token rows is the one.)
    let at = previews
        .iter()
        .position(|v| v.benchmarks_in.is_empty() && v.values_in == order && !v.token.is_empty())
        .expect("a hand-over with every benchmark's values, their tokens and no interval");
    let all = &previews[at];
    assert!(previews[..at].iter().all(|v| v.token.is_empty()));
    assert!(previews[..at].iter().any(|v| v.values_in == order));
    let pending = |c: Ci| matches!(c, Ci::Pending | Ci::Undefined);
    let bits = |x: Option<f64>| x.map(f64::to_bits);
    assert_eq!(all.cells.len(), p.cells.len());
    for (e, f) in all.cells.iter().zip(&p.cells) {
        let key = (&e.benchmark, &e.run, e.k, e.level, e.mode);
        assert_eq!(key, (&f.benchmark, &f.run, f.k, f.level, f.mode));
        assert!(pending(e.ci), "{key:?}: {:?}", e.ci);
        assert_eq!(bits(e.value), bits(f.value), "{key:?}");
        assert_eq!(bits(e.pass_all), bits(f.pass_all), "{key:?}");
        assert_eq!((e.tasks, e.tasks_left_out), (f.tasks, f.tasks_left_out));
        assert_eq!(e.seeds, f.seeds);
    }
    assert!(all.cells.iter().any(|c| c.ci == Ci::Pending));
    assert_eq!(all.advantage.len(), p.advantage.len());
    assert!(!all.advantage.is_empty());
    for (e, f) in all.advantage.iter().zip(&p.advantage) {
        let key = (&e.benchmark, &e.base, &e.rl, e.k, e.level, e.mode);
        assert_eq!(key, (&f.benchmark, &f.base, &f.rl, f.k, f.level, f.mode));
        assert!(pending(e.ci), "{key:?}: {:?}", e.ci);
        assert_eq!(e.delta.to_bits(), f.delta.to_bits(), "{key:?}");
        assert_eq!(e.base_pass.to_bits(), f.base_pass.to_bits());
        assert_eq!(e.rl_pass.to_bits(), f.rl_pass.to_bits());
        assert_eq!(bits(e.headroom), bits(f.headroom));
        assert_eq!((e.tasks, e.flip), (f.tasks, f.flip));
        assert!(!e.significant_flip);
        assert_eq!(
            e.test,
            rl_audit::analysis::multiplicity::CellTest::DEGENERATE
        );
    }
    assert_eq!(all.mode_gap.len(), p.mode_gap.len());
    for e in &all.mode_gap {
        let f = p
            .mode_gap
            .iter()
            .find(|f| (&f.benchmark, &f.run, f.k, f.level) == (&e.benchmark, &e.run, e.k, e.level))
            .expect("the same gap");
        assert!(pending(e.ci));
        assert_eq!((e.diff.to_bits(), e.tasks), (f.diff.to_bits(), f.tasks));
    }
    assert_eq!(all.token.len(), p.token.len());
    for e in &all.token {
        let f = p
            .token
            .iter()
            .find(|f| {
                (&f.benchmark, &f.run, f.k, f.tokens) == (&e.benchmark, &e.run, e.k, e.tokens)
            })
            .expect("the same token cell");
        assert!(pending(e.ci));
        assert_eq!((bits(e.value), e.tasks), (bits(f.value), f.tasks));
    }
    assert_eq!(all.token_budgets, p.token_budgets);
    // Then a benchmark at a time: its intervals in, the others' values.
    let second = previews
        .iter()
        .find(|v| v.benchmarks_in.len() == 1)
        .expect("a hand-over with one benchmark whole");
    assert_eq!(second.benchmarks_in[0], order[0]);
    assert_eq!(second.values_in, order[1..]);
    for c in &second.cells {
        match c.benchmark == order[0] {
            true => assert_ne!(c.ci, Ci::Pending),
            false => assert!(pending(c.ci)),
        }
    }
    // The finished audit has no interval pending.
    let cis = p
        .cells
        .iter()
        .map(|c| c.ci)
        .chain(p.advantage.iter().map(|a| a.ci));
    assert!(cis
        .chain(p.mode_gap.iter().map(|g| g.ci))
        .all(|c| c != Ci::Pending));
}

/// The panel on screen is computed first once its inputs are in
/// (`Settings::focus`, set by the workbench to the panel's parts), and no
/// figure changes: the Steps panel's matched states right after the rollout
/// counts, named as computing in the hand-over before they begin; the Cost
/// panel's frontier right after Pass@(K,T), which it reads. The reports
/// are the default order's, to the byte.
#[test]
fn the_panel_on_screen_is_computed_first_and_no_figure_changes() {
    use rl_audit::analysis::Part;
    use rl_audit::tui::panel::Panel;
    let full = demo();
    let render = |a: &rl_audit::analysis::Audit| report_of(&full.set, a);
    // The main sequence's parts in the order they left the pending list.
    let main_order = |seen: &[rl_audit::analysis::Audit]| -> Vec<Part> {
        let mut order = Vec::new();
        for w in seen.windows(2) {
            for p in &w[0].pending {
                if !w[1].is_pending(*p) && !p.beside() && !order.contains(p) {
                    order.push(*p);
                }
            }
        }
        order
    };
    for (panel, want) in [
        // The matched states read the probes alone: before the rollout
        // counts.
        (
            Panel::Steps,
            [
                Part::Dynamics,
                Part::Matched,
                Part::Aggregates,
                Part::Pass,
                Part::Categories,
                Part::Failures,
                Part::Cost,
                Part::BudgetMix,
                Part::Grep,
            ],
        ),
        // The frontier reads Pass@(K,T)'s values alone: it comes once every
        // benchmark's are in, before their intervals are drawn.
        (
            Panel::Cost,
            [
                Part::Dynamics,
                Part::Aggregates,
                Part::Cost,
                Part::Pass,
                Part::Categories,
                Part::Failures,
                Part::BudgetMix,
                Part::Matched,
                Part::Grep,
            ],
        ),
    ] {
        let settings = quick();
        settings.focus.set(panel.parts());
        let mut seen = Vec::new();
        let done = rl_audit::analysis::run_audit_staged(&full.set, &settings, &mut |a| {
            seen.push(a.clone())
        })
        .expect("audit");
        assert_eq!(main_order(&seen), want, "{panel:?}");
        // The first part after the counts is named as computing before it
        // begins (Pass@(K,T): the Cost panel's frontier reads its values;
        // the Steps panel's matched states are in already).
        let next = Part::Pass;
        if panel == Panel::Steps {
            // Named as computing in a hand-over of its own before they
            // begin, the counts still to come.
            assert!(seen.iter().any(|a| a.is_running(Part::Matched)
                && !a.is_pending(Part::Dynamics)
                && a.is_pending(Part::Aggregates)));
            let came = seen
                .iter()
                .find(|a| !a.is_pending(Part::Matched))
                .expect("the matched states' hand-over");
            assert!(came.is_pending(Part::Aggregates));
            assert_eq!(came.matched.len(), full.audit.matched.len());
        }
        let before = seen
            .iter()
            .find(|a| !a.is_pending(Part::Aggregates))
            .expect("the counts' hand-over");
        assert!(
            before.is_pending(next) && before.is_running(next),
            "{panel:?}: {:?}",
            before.pending
        );
        assert!(!before.is_running(Part::Categories));
        // Waiting for Pass@(K,T), the Cost panel's stand-in says its
        // frontier comes next; it is computed once every benchmark's values
        // are in, before any benchmark's intervals, and named as computing
        // in the hand-over before.
        if panel == Panel::Cost {
            let at = seen
                .iter()
                .position(|a| !a.is_pending(Part::Cost))
                .expect("the frontier's hand-over");
            let (ran, came) = (&seen[at - 1], &seen[at]);
            assert!(ran.is_running(Part::Cost) && !ran.is_running(Part::Pass));
            assert!(came.is_running(Part::Pass), "{:?}", came.pending);
            // The demo's one benchmark has a run of several seeds: its
            // values come with its intervals (§4.3), the §4.2 tests after.
            assert_eq!(came.pass.benchmarks_in, full.audit.pass.benchmarks_in);
            assert_eq!(came.cost_frontier, full.audit.cost_frontier);
            assert!(before.is_next(Part::Cost) && !before.is_next(Part::Categories));
            let t =
                rl_audit::tui::views::pending::waiting(before, panel, &Default::default(), false)
                    .expect("a stand-in");
            assert_eq!(
                (t.text(0, 0), t.text(0, 1)),
                ("cost frontier", "next (on screen)")
            );
        }
        assert_eq!(render(&done), render(&full.audit), "{panel:?}");
    }
}

/// A panel opened while Pass@(K,T) draws its intervals is computed before
/// the next draw once its inputs are in (on the test set of several
/// benchmarks, one seed a run, so their values come before their
/// intervals): the Cost panel on screen from the start, its frontier once
/// every benchmark's values are in and before any interval; the Budget
/// panel on screen, then the Steps panel as soon as the first benchmark's
/// values are shown, its matched states before that benchmark's intervals;
/// the Likelihood panel opened once Pass@(K,T) has begun, the likelihoods
/// (computed beside) begun once every benchmark's values are in, before any
/// interval — on screen from the start, before Pass@(K,T) (which waits for
/// them even once another panel is opened), in before the rollouts are
/// counted. Each named
/// as computing in the hand-over before; the Recovery panel on screen,
/// natural recovery (computed beside) in before the rollouts are counted. The
/// report the default order's, to the byte.
#[test]
fn a_panel_opened_while_pass_draws_comes_before_the_next_draw() {
    use rl_audit::analysis::{Audit, Part};
    use rl_audit::tui::panel::Panel;
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/large/jsonl");
    let set = rl_audit::schema::load(&[file], &LoadOptions::default()).expect("loads");
    let full = run_audit(&set, &quick()).expect("audit");
    let render = |a: &rl_audit::analysis::Audit| report_of(&set, a);
    let order = full.pass.benchmarks_in.clone();
    assert!(order.len() >= 3, "{order:?}");
    for (first, then, part, values) in [
        (Panel::Cost, Panel::Cost, Part::Cost, order.clone()),
        (
            Panel::Budget,
            Panel::Steps,
            Part::Matched,
            order[..1].to_vec(),
        ),
        // The Likelihood panel opened once Pass@(K,T) has begun: the
        // likelihoods (computed beside) begin once every benchmark's values
        // are in, and the draws wait for them.
        (
            Panel::Budget,
            Panel::Likelihood,
            Part::Likelihood,
            order.clone(),
        ),
        // On screen from the start: they begin before Pass@(K,T), which
        // waits for them.
        (
            Panel::Likelihood,
            Panel::Likelihood,
            Part::Likelihood,
            Vec::new(),
        ),
    ] {
        let settings = quick();
        settings.focus.set(first.parts());
        let focus = settings.focus.clone();
        let mut seen: Vec<Audit> = Vec::new();
        let done = rl_audit::analysis::run_audit_staged(&set, &settings, &mut |a| {
            if a.is_running(Part::Pass) && !a.pass.values_in.is_empty() {
                focus.set(then.parts());
            }
            seen.push(a.clone())
        })
        .expect("audit");
        let at = seen
            .iter()
            .position(|a| !a.is_pending(part))
            .expect("the part's hand-over");
        let (ran, came) = (&seen[at - 1], &seen[at]);
        // Named first (the status line's "computing …") while it runs.
        assert!(ran.is_running(part), "{then:?}: {:?}", ran.pending);
        assert_eq!(ran.pending.first(), Some(&part), "{then:?}");
        assert_eq!(came.pass.values_in, values, "{first:?} → {then:?}");
        assert!(came.pass.benchmarks_in.is_empty(), "{then:?}");
        if first == Panel::Likelihood {
            // Begun before the rollouts are counted (they read each task's
            // full budget alone), and in before they are: no benchmark
            // counted, none previewed, the counts next.
            let begun = seen.iter().position(|a| a.is_running(part)).expect("begun");
            assert!(seen[begun..at]
                .iter()
                .all(|a| a.pass.values_in.is_empty() && a.pass.benchmarks_in.is_empty()));
            assert!(seen[begun..=at]
                .iter()
                .all(|a| a.is_pending(Part::Aggregates)));
            assert!(came.is_running(Part::Aggregates), "{:?}", came.pending);
        } else {
            assert!(came.is_running(Part::Pass), "{then:?}: {:?}", came.pending);
        }
        assert_eq!(render(&done), render(&full), "{then:?}");
    }
    // Begun before Pass@(K,T) for the Likelihood panel, then the Budget
    // panel opened: Pass@(K,T) still waits for them (its counting tables
    // never held beside their memory).
    let settings = quick();
    settings.focus.set(Panel::Likelihood.parts());
    let focus = settings.focus.clone();
    let mut seen: Vec<Audit> = Vec::new();
    let done = rl_audit::analysis::run_audit_staged(&set, &settings, &mut |a| {
        if a.is_running(Part::Likelihood) {
            focus.set(Panel::Budget.parts());
        }
        seen.push(a.clone())
    })
    .expect("audit");
    let begun = seen
        .iter()
        .position(|a| a.is_running(Part::Likelihood))
        .expect("begun");
    let counted = seen
        .iter()
        .position(|a| !a.pass.values_in.is_empty() || !a.pass.benchmarks_in.is_empty())
        .expect("a benchmark counted");
    assert!(begun < counted);
    assert!(!seen[counted].is_pending(Part::Likelihood));
    assert_eq!(render(&done), render(&full));
    // At the checkpoints' hand-over, before the likelihoods begin, the
    // Likelihood panel's stand-in says they come next.
    let settings = quick();
    settings.focus.set(Panel::Likelihood.parts());
    let mut before = None;
    rl_audit::analysis::run_audit_staged(&set, &settings, &mut |a| {
        if before.is_none() && !a.is_pending(Part::Dynamics) {
            before = Some(a.clone());
        }
    })
    .expect("audit");
    let before = before.expect("the checkpoints' hand-over");
    assert!(before.is_running(Part::Aggregates) && !before.is_running(Part::Likelihood));
    let t = rl_audit::tui::views::pending::waiting(
        &before,
        Panel::Likelihood,
        &Default::default(),
        false,
    )
    .expect("a stand-in");
    assert_eq!(
        (t.text(0, 0), t.text(0, 1), t.text(1, 0), t.text(1, 1)),
        (
            "likelihood",
            "next (on screen)",
            "likelihood by turn",
            "next (on screen)"
        )
    );
    // The Recovery panel on screen: the matched states' values first, then
    // natural recovery's (computed beside, at a lower priority, the main
    // sequence waiting for them) before the matched states' intervals; the
    // main sequence waits for natural recovery before it counts the
    // rollouts.
    let settings = quick();
    settings.focus.set(Panel::Recovery.parts());
    let mut seen: Vec<Audit> = Vec::new();
    let done = rl_audit::analysis::run_audit_staged(&set, &settings, &mut |a| seen.push(a.clone()))
        .expect("audit");
    let at = seen
        .iter()
        .position(|a| !a.is_pending(Part::NaturalRecovery))
        .expect("natural recovery's hand-over");
    let came = &seen[at];
    assert!(came.is_pending(Part::Aggregates));
    assert!(came.pass.values_in.is_empty() && came.pass.benchmarks_in.is_empty());
    // Its values came first, in a hand-over of their own, with the matched
    // states' values and before their intervals.
    let values = seen
        .iter()
        .position(|a| a.natural_values_in)
        .expect("natural recovery's values");
    assert!(values < at && seen[values].is_pending(Part::NaturalRecovery));
    assert!(seen[values].matched_values_in && seen[values].is_pending(Part::Matched));
    assert_eq!(render(&done), render(&full));
}

/// The Cost panel on screen while Pass@(K,T) counts (the test set: several
/// benchmarks, one seed a run, so each benchmark's values come before the
/// next is counted): the benchmark selected is counted first and costed as
/// soon as its values are in, before any other benchmark is counted — its
/// points and winners those the whole audit gives it, no other
/// benchmark's. The panel shows for it, and for another benchmark says
/// which are costed; another benchmark selected then is counted next and
/// costed in turn. The part comes whole once every benchmark's values are
/// in, and the report is the default order's to the byte.
#[test]
fn the_cost_panel_shows_the_benchmark_selected_once_its_values_are_in() {
    use rl_audit::analysis::{Audit, Part};
    use rl_audit::tui::panel::Panel;
    use rl_audit::tui::views::pending::{is_waiting, waiting};
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/large/jsonl");
    let set = rl_audit::schema::load(&[file], &LoadOptions::default()).expect("loads");
    let full = run_audit(&set, &quick()).expect("audit");
    let order = full.pass.benchmarks_in.clone();
    assert!(order.len() >= 3, "{order:?}");
    // Not the benchmark the default order counts first.
    let chosen = order[1].clone();
    // Selected once the first is costed.
    let second = order[2].clone();
    let settings = quick();
    settings.focus.set(Panel::Cost.parts());
    settings.focus.set_benchmark(Some(&chosen));
    let focus = settings.focus.clone();
    let mut seen: Vec<Audit> = Vec::new();
    let done = rl_audit::analysis::run_audit_staged(&set, &settings, &mut |a| {
        if a.cost_in.len() == 1 {
            focus.set_benchmark(Some(&second));
        }
        seen.push(a.clone())
    })
    .expect("audit");
    let at = seen
        .iter()
        .position(|a| !a.cost_in.is_empty())
        .expect("the benchmark selected costed");
    let (ran, came) = (&seen[at - 1], &seen[at]);
    // Named as computing meanwhile, Pass@(K,T) after it.
    assert_eq!(
        ran.pending[..2],
        [Part::Cost, Part::Pass],
        "{:?}",
        ran.pending
    );
    assert!(came.is_running(Part::Pass) && came.is_pending(Part::Cost));
    assert_eq!(came.cost_in, std::slice::from_ref(&chosen));
    // Only the benchmark selected counted so far.
    assert_eq!(came.pass.values_in, std::slice::from_ref(&chosen));
    assert!(came.pass.benchmarks_in.is_empty());
    let of = |b: &str| {
        (
            full.cost_frontier
                .iter()
                .filter(|p| p.benchmark == b)
                .cloned()
                .collect::<Vec<_>>(),
            full.cost_winners
                .iter()
                .filter(|w| w.benchmark == b)
                .cloned()
                .collect::<Vec<_>>(),
        )
    };
    let (points, winners) = of(&chosen);
    assert!(!points.is_empty() && !winners.is_empty());
    assert_eq!(came.cost_frontier, points);
    assert_eq!(came.cost_winners, winners);
    // The panel: shown for the benchmark selected, a stand-in for another
    // one naming the benchmark costed.
    let index = |b: &str| {
        came.benchmarks()
            .iter()
            .position(|x| x == b)
            .expect("a benchmark of the audit")
    };
    let select = |b: &str| rl_audit::tui::select::Selection {
        bench: index(b),
        ..Default::default()
    };
    assert!(!is_waiting(came, Panel::Cost, &select(&chosen)));
    let other = select(&order[0]);
    assert!(is_waiting(came, Panel::Cost, &other));
    let t = waiting(came, Panel::Cost, &other, false).expect("a stand-in");
    let cells: Vec<(String, String)> = (0..t.rows.len())
        .map(|r| (t.text(r, 0).to_string(), t.text(r, 1).to_string()))
        .collect();
    assert_eq!(
        cells,
        [
            ("cost frontier".to_string(), "next (on screen)".to_string()),
            (
                "  benchmarks costed (Cost shows each)".to_string(),
                chosen.clone()
            ),
        ]
    );
    // The second benchmark selected: counted next, costed in turn, its
    // points and winners after the first's.
    let next = seen
        .iter()
        .position(|a| a.cost_in.len() == 2)
        .expect("the second benchmark costed");
    let came = &seen[next];
    assert_eq!(came.cost_in, [chosen.clone(), second.clone()]);
    assert_eq!(came.pass.values_in, [chosen.clone(), second.clone()]);
    let (more_points, more_winners) = of(&second);
    assert!(!more_points.is_empty());
    assert_eq!(came.cost_frontier, [points, more_points].concat());
    assert_eq!(came.cost_winners, [winners, more_winners].concat());
    assert!(came.is_pending(Part::Cost) && came.is_running(Part::Pass));
    // Whole once every benchmark's values are in, before any interval.
    let whole = seen
        .iter()
        .position(|a| !a.is_pending(Part::Cost))
        .expect("the part's hand-over");
    assert!(whole > at);
    assert_eq!(seen[whole].pass.values_in.len(), order.len());
    assert!(seen[whole].pass.benchmarks_in.is_empty());
    assert_eq!(seen[whole].cost_frontier, full.cost_frontier);
    assert_eq!(seen[whole].cost_winners, full.cost_winners);
    assert_eq!(report_of(&set, &done), report_of(&set, &full));
}

/// After the matched states, natural recovery still computing (at 11 M
/// rollouts it ends last, 2 s after them): the Recovery panel of a pair
/// shows, its natural-recovery rows one row reading "computing…", the rest
/// the complete audit's; without a pair (natural recovery is then all it
/// shows) it waits.
#[test]
fn the_recovery_panel_shows_before_natural_recovery_is_in() {
    use rl_audit::analysis::Part;
    use rl_audit::tui::panel::Panel;
    use rl_audit::tui::select::Selection;
    use rl_audit::tui::views::{analyses, pending};
    let (set, seen) = demo_staged();
    let last = seen.last().unwrap();
    // The hand-over before grep's (everything else in), natural recovery
    // as if it were still running.
    let mut partial = seen
        .iter()
        .find(|a| a.pending == vec![Part::Grep])
        .expect("a hand-over")
        .clone();
    partial.pending = vec![Part::NaturalRecovery, Part::Grep];
    partial.natural_recovery.clear();
    partial.natural_recovery_diff.clear();
    partial.natural_values_in = false;
    let first = Selection::default();
    assert!(!pending::is_waiting(&partial, Panel::Recovery, &first));
    let (whole, part) = (
        analyses::recovery(last, &first),
        analyses::recovery(&partial, &first),
    );
    let text = |r: &rl_audit::tui::table::Row| -> Vec<String> {
        r.cells.iter().map(|c| c.text.clone()).collect()
    };
    // The demo's pair has both natural-recovery rows (next step clean,
    // recovered), then the probes' rows.
    assert_eq!(
        text(&whole.rows[0])[0],
        "rollouts: next step clean after an error"
    );
    assert_eq!(
        text(&whole.rows[1])[0],
        "rollouts: recovered (succeeded after an error)"
    );
    assert_eq!(
        text(&part.rows[0]),
        vec![
            "rollouts: error recovery (natural recovery)",
            "computing…",
            "computing…",
            "computing…"
        ]
    );
    assert_eq!(part.rows[1..], whole.rows[2..]);
    assert_eq!((&part.title, &part.header), (&whole.title, &whole.header));
    snapshot(&on_screen(&set, &partial), "partial-5-recovery", "5");
    // Without a pair the panel is natural recovery's rows alone: it waits.
    let mut unpaired = partial.clone();
    unpaired.pairs.clear();
    assert!(pending::is_waiting(&unpaired, Panel::Recovery, &first));
    unpaired.pending = vec![Part::Grep];
    assert!(!pending::is_waiting(&unpaired, Panel::Recovery, &first));
}

/// Natural recovery hands on its rows before their intervals are drawn: in
/// that hand-over the part is pending, every estimate has its final value
/// (to the bit) and count and its interval pending; the pair's Recovery
/// panel shows those values with `[…]` for their intervals (whole screen),
/// and without a pair the panel no longer waits.
#[test]
fn natural_recovery_values_come_before_their_intervals() {
    use rl_audit::analysis::stats::{Ci, Estimate};
    use rl_audit::analysis::Part;
    use rl_audit::tui::panel::Panel;
    use rl_audit::tui::select::Selection;
    use rl_audit::tui::views::pending;
    let (set, last, values) = demo_values(|a| a.natural_values_in);
    let last = &last;
    assert!(values.is_pending(Part::NaturalRecovery));
    assert!(last.natural_values_in && !last.natural_recovery.is_empty());
    let bits = |e: &Option<Estimate>| e.map(|e| e.value.to_bits());
    let pending = |e: &Option<Estimate>| e.is_none_or(|e| e.ci == Ci::Pending);
    assert_eq!(values.natural_recovery.len(), last.natural_recovery.len());
    for (v, f) in values.natural_recovery.iter().zip(&last.natural_recovery) {
        assert_eq!((&v.benchmark, &v.run), (&f.benchmark, &f.run));
        assert_eq!(
            (v.rollouts, v.rollouts_with_error, v.error_events),
            (f.rollouts, f.rollouts_with_error, f.error_events)
        );
        assert_eq!(bits(&v.next_ok), bits(&f.next_ok));
        assert_eq!(bits(&v.recovered), bits(&f.recovered));
        assert!(pending(&v.next_ok) && pending(&v.recovered));
        assert!(f.next_ok.is_some_and(|e| e.ci != Ci::Pending));
    }
    assert_eq!(
        values.natural_recovery_diff.len(),
        last.natural_recovery_diff.len()
    );
    for (v, f) in values
        .natural_recovery_diff
        .iter()
        .zip(&last.natural_recovery_diff)
    {
        assert_eq!(v.tasks, f.tasks);
        assert_eq!(bits(&v.next_ok), bits(&f.next_ok));
        assert_eq!(bits(&v.recovered), bits(&f.recovered));
        assert!(pending(&v.next_ok) && pending(&v.recovered));
    }
    // On screen as the matched states' hand-over would show it with these
    // rows: the other parts the complete audit's.
    let mut partial = last.clone();
    partial.pending = vec![Part::NaturalRecovery];
    partial.natural_recovery = values.natural_recovery.clone();
    partial.natural_recovery_diff = values.natural_recovery_diff.clone();
    let first = Selection::default();
    assert!(!pending::is_waiting(&partial, Panel::Recovery, &first));
    let mut unpaired = partial.clone();
    unpaired.pairs.clear();
    assert!(!pending::is_waiting(&unpaired, Panel::Recovery, &first));
    unpaired.natural_values_in = false;
    assert!(pending::is_waiting(&unpaired, Panel::Recovery, &first));
    snapshot(&on_screen(&set, &partial), "partial-5-recovery-values", "5");
}

/// The Steps panel, and a pair's Recovery panel, show once the matched
/// states' and error recovery's values are in, their bootstrap intervals
/// `[…]` until drawn (the values, counts and Wilson intervals those of the
/// complete audit: checked in
/// `the_audit_is_handed_on_part_by_part_and_each_part_is_final`).
#[test]
fn matched_state_values_come_before_their_intervals() {
    use rl_audit::analysis::Part;
    use rl_audit::tui::panel::Panel;
    let (set, last, values) = demo_values(|a| a.matched_values_in);
    let last = &last;
    assert!(values.is_pending(Part::Matched) && !values.matched.is_empty());
    // On screen with these rows, the other parts the complete audit's.
    let mut partial = last.clone();
    partial.pending = vec![Part::Matched];
    partial.matched = values.matched.clone();
    partial.recovery = values.recovery.clone();
    shown_with_values(
        &set,
        &partial,
        &[Panel::Steps, Panel::Recovery],
        |a| a.matched_values_in = false,
        &[
            ("partial-4-steps-values", "4"),
            ("partial-5-recovery-matched-values", "5"),
        ],
    );
}

/// The demo's set, its complete audit and the first hand-over of its
/// staged audit where `values_in` holds (a part's values, before its
/// intervals).
fn demo_values(
    values_in: fn(&rl_audit::analysis::Audit) -> bool,
) -> (
    Arc<rl_audit::schema::LogSet>,
    rl_audit::analysis::Audit,
    rl_audit::analysis::Audit,
) {
    let (set, seen) = demo_staged();
    let values = seen
        .iter()
        .find(|a| values_in(a))
        .expect("a hand-over with the part's values")
        .clone();
    let last = seen.last().expect("the complete audit").clone();
    (set, last, values)
}

/// A partial audit holding a part's values (not its intervals) shows on
/// each of `panels` — and waits without them (`unmark`) — and its screens
/// are `screens` (name, keys).
fn shown_with_values(
    set: &Arc<rl_audit::schema::LogSet>,
    partial: &rl_audit::analysis::Audit,
    panels: &[rl_audit::tui::panel::Panel],
    unmark: fn(&mut rl_audit::analysis::Audit),
    screens: &[(&str, &str)],
) {
    use rl_audit::tui::views::pending::is_waiting;
    let first = rl_audit::tui::select::Selection::default();
    for &panel in panels {
        assert!(!is_waiting(partial, panel, &first), "{panel:?}");
        let mut before = partial.clone();
        unmark(&mut before);
        assert!(is_waiting(&before, panel, &first), "{panel:?}");
    }
    for (name, keys) in screens {
        snapshot(&on_screen(set, partial), name, keys);
    }
}

/// The Likelihood panel shows once the likelihoods' rows are in, before
/// their length-matched intervals are drawn (`[…]`) and the LLR by turn is
/// in (`computing…`, on its line and in its drill): every value the
/// complete audit's, to the bit.
#[test]
fn likelihood_values_come_before_their_intervals() {
    use rl_audit::analysis::Part;
    use rl_audit::tui::panel::Panel;
    let (set, last, values) = demo_values(|a| a.likelihood_values_in);
    let last = &last;
    assert!(values.is_pending(Part::Likelihood) && values.is_pending(Part::LlrByTurn));
    let mut want = last.likelihood.clone();
    for l in &mut want {
        if let Some(e) = l.length_matched.mean_diff.as_mut() {
            assert!(matches!(e.ci, Ci::Interval(..)), "{e:?}");
            e.ci = Ci::Pending;
        }
    }
    assert!(!want.is_empty());
    assert_eq!(format!("{:?}", values.likelihood), format!("{want:?}"));
    // On screen with these rows, the other parts the complete audit's.
    let mut partial = last.clone();
    partial.pending = vec![Part::Likelihood, Part::LlrByTurn];
    partial.likelihood = values.likelihood.clone();
    partial.llr_by_turn.clear();
    shown_with_values(
        &set,
        &partial,
        &[Panel::Likelihood],
        |a| a.likelihood_values_in = false,
        &[
            ("partial-6-likelihood-values", "6"),
            ("partial-6-likelihood-values-by-turn", "6\n"),
        ],
    );
}

/// Which parts a partial audit says are being computed: the main sequence's
/// next, natural recovery once begun (beside the rollout counts), the likelihood and its LLR by turn
/// once Pass@(K,T) is in — each until handed on; grep after all of them.
#[test]
fn a_partial_audit_says_which_parts_are_being_computed() {
    use rl_audit::analysis::Part::{self, *};
    let (_, seen) = demo_staged();
    let running = |a: &rl_audit::analysis::Audit| -> Vec<Part> {
        Part::ALL.into_iter().filter(|p| a.is_running(*p)).collect()
    };
    let want: Vec<Vec<Part>> = vec![vec![Dynamics], vec![Aggregates]];
    let got: Vec<Vec<Part>> = seen.iter().map(running).collect();
    assert_eq!(got[..want.len()], want[..]);
    // Pass@(K,T) named as computing before it begins, and again once the
    // demo's one benchmark's rows are in, its tests not.
    let pass: Vec<&rl_audit::analysis::Audit> =
        seen.iter().filter(|a| a.is_running(Pass)).collect();
    assert!(pass.len() >= 2 && pass[0].pass.benchmarks_in.is_empty());
    assert_eq!(pass[pass.len() - 1].pass.benchmarks_in, ["frozenlake"]);
    // Then the main sequence's next part, and the parts computed beside
    // that are not in yet (they end when they end: the demo's natural
    // recovery may be handed on while Pass@(K,T) computes, or after all
    // the main sequence; the likelihoods begin once Pass@(K,T) is in);
    // grep once nothing else is pending.
    let main = [Pass, Categories, Failures, Cost, BudgetMix, Matched];
    for (i, a) in seen.iter().enumerate().skip(want.len()) {
        let mut expect: Vec<Part> = main
            .iter()
            .copied()
            .filter(|p| a.is_pending(*p))
            .take(1)
            .collect();
        let begun = |p: &Part| *p == NaturalRecovery || !a.is_pending(Pass);
        expect.extend(
            [Likelihood, LlrByTurn, NaturalRecovery]
                .into_iter()
                .filter(|p| a.is_pending(*p) && begun(p)),
        );
        if expect.is_empty() && a.is_pending(Grep) {
            expect.push(Grep);
        }
        assert_eq!(got[i], expect, "hand-over {i}: pending {:?}", a.pending);
    }
    // The complete audit: nothing.
    assert!(got.last().unwrap().is_empty());
    // One before the first part, one with the benchmark's Pass@(K,T) rows,
    // one with the matched states' and error recovery's values, one with
    // natural recovery's, one with the likelihoods' (each before its
    // intervals).
    assert_eq!(got.len(), Part::ALL.len() + 5);
}

/// A partial audit's headline findings are the complete audit's findings of
/// the parts it holds, in the same order; the Overview shows them, then a
/// row for each part to come.
#[test]
fn the_overview_shows_the_findings_that_are_in() {
    use rl_audit::report::findings::findings;
    let (set, seen) = demo_staged();
    let last = seen.last().unwrap();
    let all = findings(last);
    // The demo has findings from several parts: the check is not empty.
    let parts: std::collections::BTreeSet<_> = all.iter().map(|f| f.part).collect();
    assert!(parts.len() >= 3, "{parts:?}");
    for a in &seen {
        let want: Vec<_> = all
            .iter()
            .filter(|f| !a.is_pending(f.part))
            .cloned()
            .collect();
        assert_eq!(findings(a), want, "pending {:?}", a.pending);
        // On screen: those findings, then the parts to come.
        let t = rl_audit::tui::views::overview::findings(&on_screen(&set, a), false);
        let rows: Vec<String> = t.rows.iter().map(|r| r.cells[0].text.clone()).collect();
        let mut kinds: Vec<String> = want.iter().map(|f| f.kind.to_string()).collect();
        kinds.extend(a.pending.iter().map(|_| "to come".to_string()));
        if kinds.is_empty() {
            kinds.push("no findings".into());
        }
        assert_eq!(rows, kinds, "pending {:?}", a.pending);
    }
}

/// A screen but its last line, the status line (which tells how far an
/// audit is).
fn above_status(screen: &str) -> String {
    let lines: Vec<&str> = screen.lines().collect();
    lines[..lines.len().saturating_sub(1)].join("\n")
}

/// While the audit computes, a panel whose parts are in is the very screen
/// the complete audit gives (all but the status line, which tells how far
/// the audit is); one whose parts are not says which it waits for.
#[test]
fn panels_show_as_their_parts_come_in() {
    use rl_audit::analysis::Part;
    let (set, seen) = demo_staged();
    let loaded = |a: &rl_audit::analysis::Audit| on_screen(&set, a);
    // After training dynamics, the rollout counts, Pass@(K,T), categories
    // and failures (5 parts): the Budget panel is whole.
    // The hand-over that has `next` to compute next.
    let at = |next: Part| hand_over_at(&seen, next);
    let partial = &at(Part::Cost);
    let full = demo();
    for (w, h) in [(80u16, 24u16), (120, 40)] {
        let mut p = Screen::new(w, h, loaded(partial));
        let mut f = Screen::new(w, h, full.clone());
        for keys in ["2", "ll", "\n", "\n"] {
            assert_eq!(
                above_status(&p.keys(keys)),
                above_status(&f.keys(keys)),
                "{w}×{h} after {keys:?}"
            );
        }
        let status = p.keys("").lines().last().unwrap().to_string();
        let want = format!(
            "computing cost frontier… (5 of {} analyses ready)",
            Part::ALL.len()
        );
        // Whole, the selection beside it as much as fits (at 80 columns
        // its cell alone, at 120 the whole).
        let sel = if w >= 120 {
            "frozenlake │ fl-base→fl-budgetmix │ K=1 75% preferred"
        } else {
            "K=1 75% preferred"
        };
        let gap = usize::from(w) - want.chars().count() - sel.chars().count();
        assert_eq!(status, format!("{want}{}{sel}", " ".repeat(gap)));
    }
    // After Pass@(K,T) alone the Budget panel shows too: the very screen
    // but for the box's last line where it has room for it (120×40), and
    // of the box's lines only the failure causes differ, still being
    // computed.
    let after_pass = &at(Part::Categories);
    for (w, h) in [(80u16, 24u16), (120, 40)] {
        let mut p = Screen::new(w, h, loaded(after_pass));
        let mut f = Screen::new(w, h, full.clone());
        let (ps, fs) = (above_status(&p.keys("2")), above_status(&f.keys("2")));
        let differ: Vec<(&str, &str)> =
            ps.lines().zip(fs.lines()).filter(|(a, b)| a != b).collect();
        assert_eq!(ps.lines().count(), fs.lines().count());
        assert!(differ.len() <= 1, "{w}×{h}: {differ:#?}");
        assert!(
            differ
                .iter()
                .all(|(a, _)| a.contains("rollouts — failure causes: computing…")),
            "{w}×{h}: {differ:#?}"
        );
        assert_eq!(differ.len(), usize::from(w == 120), "{w}×{h}");
        let (dp, df) = (
            rl_audit::tui::views::budget::detail(after_pass, &p.app.sel),
            rl_audit::tui::views::budget::detail(&full.audit, &f.app.sel),
        );
        assert_eq!(dp.len(), df.len());
        let differ: Vec<usize> = (0..dp.len()).filter(|&i| dp[i] != df[i]).collect();
        assert_eq!(differ, vec![dp.len() - 1], "{dp:?}");
        assert_eq!(dp[dp.len() - 1], "rollouts — failure causes: computing…");
        assert!(df[df.len() - 1].starts_with("rollouts — "), "{df:?}");
        // Its category grids are not in yet either.
        p.keys("c");
        assert_eq!(
            p.app.message.as_deref(),
            Some("task categories: still being computed")
        );
    }
    snapshot(&loaded(partial), "partial-4-steps", "4");
    snapshot(&loaded(partial), "partial-1-overview", "1");
    // Before the rollouts are counted: the Training panel is whole, and the
    // Overview says what is still being counted (its findings so far: the
    // training runs').
    let counting = &at(Part::Aggregates);
    assert_eq!(counting.pending, Part::ALL[1..].to_vec());
    for (w, h) in [(80u16, 24u16), (120, 40)] {
        let mut p = Screen::new(w, h, loaded(counting));
        let mut f = Screen::new(w, h, full.clone());
        assert_eq!(above_status(&p.keys("7")), above_status(&f.keys("7")));
    }
    snapshot(&loaded(counting), "partial-0-overview", "1");
    // The tour waits for the whole audit, then starts by itself.
    let mut s = Screen::new(80, 24, loaded(partial));
    s.keys("t");
    assert!(s.app.tour.is_none());
    assert_eq!(
        s.app.message.as_deref(),
        Some("the tour starts when the audit is complete")
    );
    s.app.set_data(full.clone());
    assert!(s.app.tour.is_some());
}

/// While Pass@(K,T) computes, the Budget panel shows a benchmark as soon as
/// its rows are in: the complete audit's grid (each cell's base% → RL%, Δ
/// and mode) with `…` for the verdict until the §4.2 tests are drawn; a
/// benchmark not in yet shows the stand-in, with the benchmarks that are.
#[test]
fn the_budget_panel_shows_a_benchmark_once_its_rows_are_in() {
    use rl_audit::analysis::Part;
    use rl_audit::tui::views::{budget, pending};
    let (set, seen) = demo_staged();
    let loaded = |a: &rl_audit::analysis::Audit| on_screen(&set, a);
    let mid = seen
        .iter()
        .find(|a| a.is_pending(Part::Pass) && !a.pass.benchmarks_in.is_empty())
        .expect("a hand-over within Pass@(K,T)");
    let full = demo();
    for (w, h) in [(80u16, 24u16), (120, 40)] {
        let mut p = Screen::new(w, h, loaded(mid));
        let mut f = Screen::new(w, h, full.clone());
        p.keys("2");
        f.keys("2");
        assert!(!pending::is_waiting(
            mid,
            rl_audit::tui::panel::Panel::Budget,
            &p.app.sel
        ));
        let (gp, gf) = (
            budget::grid(mid, &p.app.sel),
            budget::grid(&full.audit, &f.app.sel),
        );
        assert_eq!((&gp.title, &gp.header), (&gf.title, &gf.header));
        assert_eq!(gp.rows.len(), gf.rows.len());
        let mut verdicts = 0;
        for (rp, rf) in gp.rows.iter().zip(&gf.rows) {
            for (cp, cf) in rp.cells.iter().zip(&rf.cells) {
                // `38.2→78.1 +39.9 n ▲`: all but the last symbol.
                let want = match cf.text.rsplit_once(' ') {
                    Some((head, _)) if cf.text.contains('→') => {
                        verdicts += 1;
                        format!("{head} …")
                    }
                    _ => cf.text.clone(),
                };
                assert_eq!(cp.text, want);
                assert_eq!(cp.value, cf.value);
            }
        }
        assert!(verdicts >= 4, "{verdicts}");
    }
    // As it is while the parts beside are still running: how many of them
    // had finished by this hand-over (the status line's count) depends on
    // the machine's load.
    snapshot(
        &loaded(&beside_running(mid.clone())),
        "partial-2-budget",
        "2",
    );
    // Before the benchmark is in: the stand-in, which names those that are.
    let before = seen
        .iter()
        .find(|a| {
            a.is_pending(Part::Pass)
                && a.pass.benchmarks_in.is_empty()
                && !a.is_pending(Part::Aggregates)
        })
        .expect("the hand-over before Pass@(K,T)");
    let s = Screen::new(80, 24, loaded(before));
    // The Budget panel's stand-in, cell by cell.
    let stand_in = |a: &rl_audit::analysis::Audit| -> Vec<Vec<String>> {
        pending::waiting(a, rl_audit::tui::panel::Panel::Budget, &s.app.sel, false)
            .expect("the stand-in")
            .rows
            .iter()
            .map(|r| r.cells.iter().map(|c| c.text.clone()).collect())
            .collect()
    };
    assert_eq!(
        stand_in(before),
        vec![vec![
            "Pass@(K,T), Δ, curves, token budgets".to_string(),
            "computing…".into()
        ]]
    );
    let mut other = mid.clone();
    other.pass.benchmarks_in = vec!["alfworld".into()];
    // frozenlake, the selected benchmark, is not in.
    assert_eq!(
        stand_in(&other),
        vec![
            vec![
                "Pass@(K,T), Δ, curves, token budgets".to_string(),
                "computing…".into()
            ],
            vec![
                "  benchmarks in (Budget shows each as it comes)".into(),
                "alfworld".into()
            ],
        ]
    );
}

/// While an analysis has taken two seconds or more, the status line counts
/// them (the screen is alive through Pass@(K,T)'s several seconds at 10 M
/// rollouts); the rest of the screen is what it was. The count starts
/// again only when another analysis is the one being computed.
#[test]
fn the_status_line_counts_an_analysiss_seconds() {
    use rl_audit::analysis::Part;
    use std::time::{Duration, Instant};
    let (set, seen) = demo_staged();
    let at = |first: Part| on_screen(&set, &hand_over_at(&seen, first));
    let (w, h) = (120u16, 40u16);
    let mut fresh = Screen::new(w, h, at(Part::Cost));
    let mut long = Screen::new(w, h, at(Part::Cost));
    let started = Instant::now() - Duration::from_secs(7);
    long.app.computing = Some((Part::Cost, started));
    long.still = false;
    let (before, after) = (fresh.keys(""), long.keys(""));
    let split = |s: &str| {
        let lines: Vec<&str> = s.lines().collect();
        (
            lines[..h as usize - 1].join("\n"),
            lines[h as usize - 1].to_string(),
        )
    };
    let ((body_before, status_before), (body_after, status_after)) =
        (split(&before), split(&after));
    assert_eq!(body_after, body_before);
    // Left: what is being computed; right: the selection (the demo's first
    // benchmark), the same in both.
    let halves = |s: &str| {
        let (l, r) = s
            .split_once(" frozenlake │")
            .expect("the selection on the right");
        (l.trim_end().to_string(), r.to_string())
    };
    let n = Part::ALL.len();
    assert_eq!(
        halves(&status_before),
        (
            format!("computing cost frontier… (5 of {n} analyses ready)"),
            halves(&status_after).1
        )
    );
    assert_eq!(
        halves(&status_after).0,
        format!("computing cost frontier… 7 s (5 of {n} analyses ready)")
    );
    // The same analysis handed on again keeps its start; the next starts anew.
    long.app.set_data(at(Part::Cost));
    assert_eq!(long.app.computing, Some((Part::Cost, started)));
    long.app.set_data(at(Part::BudgetMix));
    assert!(long
        .app
        .computing
        .is_some_and(|(p, t)| p == Part::BudgetMix && t > started));
    assert_eq!(long.app.computing_secs(), Some(0));
}

/// A panel with nothing to read in the logs (a checkpoint log alone,
/// rollouts without probes) says so in place of its tables and charts —
/// what it reads, what was loaded, which panels have something to show —
/// instead of an empty grid over an empty chart. Which panels are empty is
/// what SPEC §1 says each reads: with checkpoints alone, all but Training;
/// with one evaluation file (errors flagged, log-probabilities of both
/// runs; no probes, checkpoints or training rollouts), Steps and Training
/// (BudgetMix lists its rules, none checked); with verl's generation dumps
/// (outcome-only: no turns, no steps, no method), everything but the
/// Budget grid, whose pass-curve chart says why it has no curve.
#[test]
fn a_panel_with_nothing_to_show_says_what_it_reads() {
    use rl_audit::tui::panel::Panel;
    use rl_audit::tui::views::empty;
    let file = |f: &str| {
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/large/jsonl")
            .join(f)
    };
    let audited = |set: rl_audit::schema::LogSet| {
        let audit = run_audit(&set, &quick()).expect("audit");
        assert!(audit.is_complete());
        on_screen(&Arc::new(set), &audit)
    };
    let loaded = |f: &str| {
        audited(rl_audit::schema::load(&[file(f)], &LoadOptions::default()).expect("loads"))
    };
    let empty_panels = |d: &Arc<Loaded>| -> Vec<Panel> {
        Panel::ALL
            .into_iter()
            .filter(|p| empty::is_empty(d, *p))
            .collect()
    };
    let checkpoints = loaded("checkpoints.jsonl");
    assert!(checkpoints.set.trajectories.is_empty() && checkpoints.set.probes.is_empty());
    assert_eq!(
        empty_panels(&checkpoints),
        [
            Panel::Budget,
            Panel::Cost,
            Panel::Steps,
            Panel::Recovery,
            Panel::Likelihood,
            Panel::BudgetMix
        ]
    );
    // While the audit computes, a panel still computing is named as such
    // (it may yet have something); once in, an empty one is not named.
    let see = |d: &Arc<Loaded>| {
        let t = empty::why(d, Panel::Budget).expect("the Budget panel is empty");
        let row = (0..t.rows.len())
            .find(|&i| t.text(i, 0) == "see")
            .expect("a see row");
        t.text(row, 1).to_string()
    };
    let mut seen = Vec::new();
    rl_audit::analysis::run_audit_staged(&checkpoints.set, &quick(), &mut |a| seen.push(a.clone()))
        .expect("audit");
    let mid = seen
        .iter()
        .find(|a| {
            !a.is_pending(rl_audit::analysis::Part::Pass)
                && a.is_pending(rl_audit::analysis::Part::Likelihood)
        })
        .expect("a hand-over with Pass@(K,T) in, the likelihood not");
    assert!(
        see(&on_screen(&checkpoints.set, mid)).contains("Likelihood (6, computing)"),
        "{}",
        see(&on_screen(&checkpoints.set, mid))
    );
    assert_eq!(see(&checkpoints), "Training (7)");
    let rollouts = loaded("eval-000.jsonl");
    assert!(rollouts.set.probes.is_empty() && !rollouts.audit.pairs.is_empty());
    assert_eq!(empty_panels(&rollouts), [Panel::Steps, Panel::Training]);
    // The grid's status line still names its first cell (K=1 at the
    // tightest level): the K grid begins at 1 with or without rollouts.
    assert_eq!(checkpoints.audit.pass.ks, [1]);
    let mut s = Screen::new(120, 40, checkpoints.clone());
    let status = s.keys("2").lines().last().unwrap_or_default().to_string();
    assert!(
        status.ends_with(" – │ no pair │ K=1 25% preferred"),
        "{status:?}"
    );
    snapshot(&checkpoints, "empty-budget", "2");
    snapshot(&rollouts, "empty-steps", "4");
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let outcomes = audited(common::load_mapped_by(
        &root.join("tests/data/verl/val"),
        &root.join("assets/mappings/verl-generations.toml"),
    ));
    assert!(outcomes.set.trajectories.iter().all(|t| !t.turns_known));
    assert!(!outcomes.audit.pass.cells.is_empty() && outcomes.audit.pass.curve.is_empty());
    assert_eq!(
        empty_panels(&outcomes),
        [
            Panel::Cost,
            Panel::Steps,
            Panel::Recovery,
            Panel::Likelihood,
            Panel::Training,
            Panel::BudgetMix
        ]
    );
    snapshot(&outcomes, "empty-curve", "2");
    snapshot(&outcomes, "empty-cost", "3");
}

/// Without a pair (one model's Inspect log), the Recovery panel lists §4.6
/// for each run of the benchmark — the next step clean after an error and
/// the rollouts recovered, with their intervals and n — instead of an
/// empty base-versus-RL table. The n are counted here from the steps' error
/// flags (SPEC §4.6): events are errors with a step after them; rollouts
/// with an error are those with such an event.
#[test]
fn without_a_pair_the_recovery_panel_lists_each_run() {
    use rl_audit::tui::views::analyses;
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/inspect/calc.eval");
    let set = rl_audit::schema::load(&[path], &LoadOptions::default()).expect("loads");
    let audit = run_audit(&set, &quick()).expect("audit");
    assert!(audit.pairs.is_empty());
    // One budget for every rollout: each is at its task's full budget, as
    // §4.6 asks.
    let budget = set.trajectories[0].budget;
    assert!(set.trajectories.iter().all(|t| t.budget == budget));
    // Every step flagged: (error events, rollouts with one) by hand.
    let (mut events, mut with_error) = (0u64, 0u64);
    for t in &set.trajectories {
        let flags: Vec<bool> = set
            .steps_of(t)
            .iter()
            .map(|s| s.error().expect("every step says"))
            .collect();
        let n = flags.iter().rev().skip(1).filter(|e| **e).count() as u64;
        events += n;
        with_error += u64::from(n > 0);
    }
    assert!(events > 0);
    let d = on_screen(&Arc::new(set), &audit);
    let t = analyses::recovery(&d.audit, &Default::default());
    let runs: Vec<&str> = (0..t.rows.len()).map(|i| t.text(i, 0)).collect();
    assert_eq!(runs, ["mockllm/model"]);
    let n_of = |col: usize| t.text(0, col).rsplit_once(" n=").map(|x| x.1.to_string());
    assert_eq!(n_of(1), Some(events.to_string()));
    assert_eq!(n_of(2), Some(with_error.to_string()));
    snapshot(&d, "recovery-no-pair", "5");
}

/// A K no task of the benchmark reaches (rLLM's folders: the eval
/// episodes' benchmark has Pass@4 values, so the K grid runs to 4; the
/// training validation episodes' `bfcl`, shown first, has none) draws no
/// empty chart: the chart says which K has no curve, and why.
#[test]
fn a_k_without_a_curve_says_so() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/rllm");
    let set = rl_audit::schema::load(&[path], &LoadOptions::default()).expect("loads");
    let audit = run_audit(&set, &quick()).expect("audit");
    assert_eq!(audit.pass.ks, [1, 2, 4]);
    assert_eq!(audit.benchmarks().first().map(String::as_str), Some("bfcl"));
    let k4 = |b: &str| {
        audit
            .pass
            .cells
            .iter()
            .any(|c| c.benchmark == b && c.k == 4 && c.value.is_some())
    };
    assert!(!k4("bfcl") && audit.benchmarks().iter().any(|b| k4(b)));
    assert!(audit
        .pass
        .curve
        .iter()
        .all(|c| c.benchmark != "bfcl" || c.k < 4 || c.values.iter().all(Option::is_none)));
    let d = on_screen(&Arc::new(set), &audit);
    snapshot(&d, "curve-no-k", "2++");
}

/// A first audit that stops partway (a log file cut while its
/// log-probabilities are read back, say): the parts on screen stay as they
/// were, the status line says the rest will not come (it counted their
/// seconds for ever), and quitting is a failed run. After a whole audit a
/// failed recompute keeps it; before any results, the error screen.
#[test]
fn a_first_audit_that_stops_partway_says_so_and_quitting_fails() {
    use rl_audit::analysis::Part;
    let (set, seen) = demo_staged();
    let partial = on_screen(&set, &hand_over_at(&seen, Part::Cost));
    let why = "runs/eval-003.jsonl:812: logp: the file changed";
    let (w, h) = (160u16, 40u16);
    let mut before = Screen::new(w, h, partial.clone());
    let mut after = Screen::new(w, h, partial);
    after.app.failed(why);
    for keys in ["1", "2", "4", "7"] {
        let (b, a) = (before.keys(keys), after.keys(keys));
        // The panels that are in are as they were; the Overview's rows to
        // come and the Steps panel's stand-in say "not computed" (the
        // snapshots below).
        if ["2", "7"].contains(&keys) {
            assert_eq!(above_status(&a), above_status(&b), "after {keys:?}");
        } else {
            assert!(a.contains("not computed") && !b.contains("not computed"));
        }
        let status = a.lines().last().unwrap();
        let left = status.split(" frozenlake │").next().unwrap().trim_end();
        assert_eq!(left, format!("the audit stopped · r re-reads · {why}"));
    }
    assert_eq!(
        after.app.failure().as_deref(),
        Some(format!("the audit stopped: {why}").as_str())
    );
    let shown = after.app.data.clone().expect("the partial audit stays");
    snapshot_after(&shown, "stopped-1-overview", "1", &|a| a.failed(why));
    snapshot_after(&shown, "stopped-4-steps", "4", &|a| a.failed(why));
    // A new partial audit (r re-read) clears it.
    after.app.set_data(Arc::new(Loaded {
        set: set.clone(),
        audit: seen[1].clone(),
    }));
    assert_eq!(after.app.failure(), None);
    // After a whole audit: kept, with a message; quitting is fine.
    let mut whole = Screen::new(w, h, demo());
    whole.app.failed(why);
    assert_eq!(
        whole.app.message.as_deref(),
        Some(format!("kept the previous results: {why}").as_str())
    );
    assert_eq!(whole.app.failure(), None);
    // Before any results: the load failed.
    let mut none = rl_audit::tui::app::App::new(true, false);
    none.failed(why);
    assert_eq!(
        none.failure().as_deref(),
        Some(format!("could not load the logs: {why}").as_str())
    );
}

/// The background worker sends the audit part by part before the whole:
/// the first two hand-overs at once (nothing computed, then training
/// dynamics), the last complete.
#[test]
fn the_worker_sends_partial_audits_then_the_whole() {
    use rl_audit::jobs::{Jobs, Outcome, Request};
    let jobs = Jobs::start(rl_audit::loading::Source::default()).expect("worker");
    let settings = quick();
    let g = jobs.request(Request::Load(settings));
    let mut partials = Vec::new();
    let done = loop {
        let r = jobs
            .results
            .recv_timeout(std::time::Duration::from_secs(300))
            .expect("a result");
        assert_eq!(r.generation, g);
        match r.outcome {
            Outcome::Partial(d) => {
                let a = &d.audit;
                // What is in, beyond the parts done: each count or flag
                // only grows (Pass@(K,T)'s benchmarks, whole and values;
                // the rows handed on before their intervals).
                let rows_in = [
                    a.pass.benchmarks_in.len(),
                    // Those with values alone move on to the whole.
                    a.pass.benchmarks_in.len() + a.pass.values_in.len(),
                    usize::from(a.matched_values_in),
                    usize::from(a.natural_values_in),
                    usize::from(a.likelihood_values_in),
                    usize::from(a.budgetmix_rules_in),
                    a.cost_in.len(),
                    a.llr_pairs_in,
                ];
                partials.push((a.pending.clone(), rows_in))
            }
            Outcome::Done(d) => break d,
            _ => panic!("the demo loads"),
        }
    };
    assert!(done.audit.is_complete());
    assert_eq!(
        partials.first(),
        Some(&(rl_audit::analysis::Part::ALL.to_vec(), [0; 8]))
    );
    // The second at once too, however soon: training dynamics (the Training
    // panel), which takes no time, before Pass@(K,T), which may take long.
    assert_eq!(
        partials.get(1).map(|p| &p.0[..]),
        Some(&rl_audit::analysis::Part::ALL[1..])
    );
    // Each later hand-over brings something: no part comes back to pending
    // and nothing in goes out, and a part is done or more rows are in
    // (say the matched states' values, their part still pending; which
    // come between two hand-overs depends on what runs beside, on the
    // machine's load); never the whole.
    for w in partials.windows(2) {
        let (before, after) = (&w[0], &w[1]);
        let fewer = after.0.len() < before.0.len();
        let more = after.1 != before.1;
        assert!(
            after.0.iter().all(|p| before.0.contains(p))
                && after.1.iter().zip(&before.1).all(|(x, y)| x >= y)
                && (fewer || more),
            "{partials:?}"
        );
    }
    assert!(partials.iter().all(|p| !p.0.is_empty()));
}

/// `--follow` read records on while the audit on screen is of the set
/// before: the status line counts them, `a` lists them (newest first) and
/// opens their trajectories; the audit of a set holding them retires them.
#[test]
fn records_read_on_show_before_their_audit() {
    use rl_audit::jobs::Fresh;
    let full = rl_audit::demo::load_demo(&LoadOptions::default()).expect("demo loads");
    let n = full.trajectories.len();
    // The set on screen: all but the last three trajectories, audited.
    let mut before = full.clone();
    before.trajectories.truncate(n - 3);
    let audit = run_audit(&before, &quick()).expect("audit");
    let on_screen = Arc::new(Loaded {
        set: Arc::new(before),
        audit,
    });
    let last: Vec<_> = full.trajectories[n - 3..].iter().map(|t| t.loc).collect();
    let full = Arc::new(full);
    let read_on = |app: &mut App| {
        app.read_on(
            2,
            Arc::new(Fresh {
                set: full.clone(),
                records: last[..2].to_vec(),
            }),
        );
        app.read_on(
            3,
            Arc::new(Fresh {
                set: full.clone(),
                records: last[2..].to_vec(),
            }),
        );
        // 09:30:00 UTC.
        app.appended.as_mut().unwrap().at =
            std::time::UNIX_EPOCH + std::time::Duration::from_secs(9 * 3600 + 1800);
    };
    snapshot_after(&on_screen, "follow-1-status", "2", &read_on);
    snapshot_after(&on_screen, "follow-2-appended", "a", &read_on);
    snapshot_after(&on_screen, "follow-3-trajectory", "aj\n", &read_on);
    let mut s = Screen::new(80, 24, on_screen.clone());
    read_on(&mut s.app);
    s.keys("a");
    // The newest first: the last trajectory of the set.
    let t = s.app.table().unwrap();
    let targets: Vec<_> = (0..t.rows.len()).map(|i| t.target(i)).collect();
    use rl_audit::tui::table::Target::Trajectory;
    assert_eq!(
        targets,
        vec![
            Trajectory(last[2]),
            Trajectory(last[1]),
            Trajectory(last[0])
        ]
    );
    s.keys("\x1b");
    // The audit of set 2 holds the first two; set 3's record stays.
    s.app.audited(2);
    assert_eq!(s.app.appended.as_ref().unwrap().records, vec![(3, last[2])]);
    s.app.audited(3);
    assert!(s.app.appended.is_none());
    // All audited: the list says so.
    snapshot_after(&on_screen, "follow-4-audited", "a", &|app: &mut App| {
        read_on(app);
        app.audited(3);
    });
}

/// In a category's grid, the selected cell lists that category's contrasts
/// with their Holm p: `≤` exactly where the report's `p_adjusted` is at
/// its `p_adjusted_floor` (210 contrasts a pair at 1,000 resamples: 420/1,001).
#[test]
fn a_contrast_at_holms_floor_reads_at_most() {
    let set = rl_audit::demo::load_demo(&LoadOptions::default()).expect("demo loads");
    let mut settings = quick();
    settings.boot.resamples = 1000;
    let audit = run_audit(&set, &settings).expect("audit");
    let d = Arc::new(Loaded {
        set: Arc::new(set),
        audit,
    });
    let json = rl_audit::report::json::report(&d.set, &d.audit);
    let mut s = Screen::new(160, 80, d.clone());
    // The native cell (m: preferred → native), whose contrasts it lists.
    let screen = s.keys("2cm");
    let status = screen.lines().last().unwrap().to_string();
    let cell =
        regex::Regex::new(r"(\S+) │ (\S+)→(\S+) │.*K=(\d+) (\d+)% (native|truncated)$").unwrap();
    let c = cell.captures(&status).unwrap_or_else(|| panic!("{status}"));
    let cat = d.audit.categories.categories(&c[1])[0].to_string();
    let shown: Vec<&str> = screen
        .lines()
        .filter_map(|l| l.split(", Holm p ").nth(1))
        .map(|rest| rest.split_whitespace().next().unwrap())
        .collect();
    let mut want: Vec<String> = Vec::new();
    for x in json["category_contrast"].as_array().unwrap() {
        let here = x["benchmark"] == c[1]
            && x["base"] == c[2]
            && x["rl"] == c[3]
            && x["k"].as_u64() == c[4].parse().ok()
            && x["level"].as_u64() == c[5].parse().ok()
            && x["t_mode"] == c[6]
            && (x["a"] == cat.as_str() || x["b"] == cat.as_str());
        if !here {
            continue;
        }
        let (p, floor) = (
            x["p_adjusted"].as_f64().unwrap(),
            x["p_adjusted_floor"].as_f64().unwrap(),
        );
        assert_eq!(floor, 420.0 / 1001.0);
        want.push(if p == floor {
            format!("≤{p:.4}")
        } else {
            format!("{p:.4}")
        });
    }
    assert!(want.len() >= 2, "{status}\n{screen}");
    assert!(want.iter().any(|w| w.starts_with('≤')), "{want:?}");
    assert_eq!(shown, want, "{screen}");
}

/// Under Holm at 200 resamples no cell of a 35-cell grid can reach 0.05
/// (35 · 2/201): the selected cell's box says so after its verdict, and
/// writes its p-values `≤` at their floors — read against report.json.
#[test]
fn a_cell_held_by_the_resamples_says_so() {
    let holm = Settings {
        adjust: rl_audit::analysis::multiplicity::Adjust::Holm,
        ..quick()
    };
    let d = demo_with(&holm);
    let json = rl_audit::report::json::report(&d.set, &d.audit);
    let mut s = Screen::new(160, 48, d.clone());
    let screen = s.keys("2");
    let status = screen.lines().last().unwrap().to_string();
    let cell = regex::Regex::new(r"(\S+) │ (\S+)→(\S+) │.*K=(\d+) (\d+)% (\w+)$").unwrap();
    let c = cell.captures(&status).unwrap_or_else(|| panic!("{status}"));
    let rows = json["advantage"].as_array().unwrap();
    let family: Vec<&serde_json::Value> = rows
        .iter()
        .filter(|x| x["base"] == c[2] && x["rl"] == c[3] && !x["p_value"].is_null())
        .collect();
    let floor = family.len() as f64 * 2.0 / 201.0;
    assert!(floor >= 0.05);
    // The preferred mode: native where the cell has it.
    let here = |mode: &str| {
        rows.iter().find(|x| {
            x["base"] == c[2]
                && x["rl"] == c[3]
                && x["k"].as_u64() == c[4].parse().ok()
                && x["level"].as_u64() == c[5].parse().ok()
                && x["t_mode"] == mode
        })
    };
    let x = here("native").or_else(|| here("truncated")).unwrap();
    let got = x["p_adjusted_floor"].as_f64().unwrap();
    assert!((got - floor).abs() < 1e-15, "{got} {floor}");
    let floor = got;
    let verdict = x["verdict"].as_str().unwrap();
    let line = format!(
        "over n={} tasks — {verdict}, adjusted p ≥{floor:.4} at B=200;",
        x["tasks"]
    );
    assert!(screen.contains(&line), "{line}\n{screen}");
    let p = x["p_adjusted"].as_f64().unwrap();
    let alone = x["p_value"].as_f64().unwrap();
    let at = |v: f64, f: f64| {
        if v == f {
            format!("≤{v:.4}")
        } else {
            format!("{v:.4}")
        }
    };
    let se_line = format!(
        " · p {} · adjusted p {} (holm) · ",
        // 2/201 as the program's p-value gives it: 2 · (1/201).
        at(alone, 2.0 * (1.0 / 201.0)),
        at(p, floor)
    );
    assert!(screen.contains(&se_line), "{se_line}\n{screen}");
    // The first cell (K=1, the tightest level, RL 14 points ahead): no
    // resample crosses 0.
    assert!(se_line.contains("adjusted p ≤"), "{se_line}");
    // Its task count holds only once the resamples allow 0.05.
    let n = x["tasks_needed"]
        .as_u64()
        .expect("an inconclusive cell's count");
    let need = format!("≈{n} tasks would resolve this cell once the resamples allow");
    assert!(screen.contains(&need), "{need}\n{screen}");
}

/// The BudgetMix panel on screen from the start: its rules come before the
/// rollout counts and Pass@(K,T) (they read the training rollouts alone),
/// the very rules of the complete audit; the panel shows them with its
/// gain table saying the gains are to come; the gains follow Pass@(K,T)'s
/// values, and the report is the default order's, to the byte.
#[test]
fn the_budgetmix_rules_come_before_pass_when_its_panel_is_on_screen() {
    use rl_audit::analysis::{Audit, Part};
    use rl_audit::tui::panel::Panel;
    let set = Arc::new(rl_audit::demo::load_demo(&LoadOptions::default()).expect("demo loads"));
    let full = demo();
    let settings = quick();
    settings.focus.set(Panel::BudgetMix.parts());
    let mut seen: Vec<Audit> = Vec::new();
    let done = rl_audit::analysis::run_audit_staged(&set, &settings, &mut |a| seen.push(a.clone()))
        .expect("audit");
    let at = seen
        .iter()
        .position(|a| a.budgetmix_rules_in)
        .expect("the rules' hand-over");
    let early = &seen[at];
    assert!(early.is_pending(Part::Aggregates) && early.is_pending(Part::BudgetMix));
    assert!(early.pass.values_in.is_empty() && early.pass.benchmarks_in.is_empty());
    assert!(!early.budgetmix.is_empty());
    assert_eq!(early.budgetmix.len(), full.audit.budgetmix.len());
    for (e, f) in early.budgetmix.iter().zip(&full.audit.budgetmix) {
        assert_eq!(e.run, f.run);
        assert_eq!(format!("{:?}", e.rules), format!("{:?}", f.rules));
        assert!(e.gains.is_empty() && e.mean_gain.is_empty() && e.notes.is_empty());
    }
    // Every hand-over until the part is in holds those rules, no gain.
    let whole = seen
        .iter()
        .position(|a| !a.is_pending(Part::BudgetMix))
        .expect("the part's hand-over");
    assert!(at < whole);
    assert!(seen[at..whole]
        .iter()
        .all(|a| a.budgetmix_rules_in && a.budgetmix.iter().all(|b| b.gains.is_empty())));
    // On screen: the rules table is the complete audit's, row for row; the
    // gain table one line saying what the gains wait for.
    assert!(!rl_audit::tui::views::pending::is_waiting(
        early,
        Panel::BudgetMix,
        &Default::default()
    ));
    let sel = Default::default();
    let (e, f) = (
        rl_audit::tui::views::analyses::budgetmix(early, &sel),
        rl_audit::tui::views::analyses::budgetmix(&full.audit, &sel),
    );
    assert_eq!(e.rows.len(), f.rows.len());
    for i in 0..e.rows.len() {
        for j in 0..e.header.len() {
            assert_eq!(e.text(i, j), f.text(i, j), "row {i} column {j}");
        }
    }
    let g = rl_audit::tui::views::analyses::gains(early, &sel);
    assert_eq!(g.rows.len(), 1);
    assert_eq!(
        g.text(0, 0),
        "gains: computing… (they read Pass@(K,T)'s values)"
    );
    let render = |a: &rl_audit::analysis::Audit| report_of(&set, a);
    assert_eq!(render(&done), render(&full.audit));
}

/// A full budget of 3,000 turns whose rollouts all end by turn 6 (solved
/// at (i + j + r) mod 6 + 1, or failed at 6): the Pass-vs-t chart draws
/// the turns where its curves move, to 6 and a quarter of 6 more (t = 8),
/// and says that all is flat from there to 3,000 — not the whole budget
/// with every change in its first column.
#[test]
fn a_long_flat_tail_leaves_the_turns_that_move_the_chart() {
    let d = common::temp_dir("tui_long_budget");
    let (tasks, samples, budget) = (6usize, 4usize, 3000u32);
    let mut text = String::new();
    for (r, run) in ["base", "rl"].iter().enumerate() {
        let method = if r == 0 { "base" } else { "grpo" };
        text += &format!("{{\"kind\": \"run\", \"run\": \"{run}\", \"method\": \"{method}\"}}\n");
        for i in 0..tasks {
            for j in 0..samples {
                let x = i + j + r;
                let solved = (!x.is_multiple_of(3)).then_some((x % 6 + 1) as u32);
                let mut v = common::traj(run, "b", &format!("t{i}"), budget, budget, solved);
                v["sample"] = j.into();
                if solved.is_none() {
                    v["turns"] = 6.into();
                }
                text += &format!("{v}\n");
            }
        }
    }
    let file = d.join("a.jsonl");
    std::fs::write(&file, text).unwrap();
    let set = rl_audit::schema::load(&[file], &LoadOptions::default()).expect("loads");
    let audit = run_audit(&set, &quick()).expect("audit");
    let d = on_screen(&Arc::new(set), &audit);
    for (w, h) in [(80u16, 24u16), (120, 40)] {
        let screen = {
            let mut s = Screen::new(w, h, d.clone());
            s.keys("2")
        };
        assert!(
            screen.contains("t (turns; all flat from 6 to 3000)"),
            "{screen}"
        );
        let axis = screen
            .lines()
            .rev()
            .find(|l| l.contains("│    1 "))
            .unwrap_or_else(|| panic!("no x-axis labels:\n{screen}"));
        let labels: Vec<&str> = axis.trim_matches(['│', ' ']).split_whitespace().collect();
        assert_eq!(labels.first(), Some(&"1"), "{axis}");
        assert_eq!(labels.last(), Some(&"8"), "{axis}");
    }
    snapshot(&d, "2-budget-long-flat-tail", "2");
}

/// Every hand-over of the staged audit with `panel` on screen (and `bench`
/// selected); its complete audit's reports those of `whole`, to the byte.
fn focused_hand_overs(
    set: &rl_audit::schema::LogSet,
    settings: Settings,
    panel: rl_audit::tui::panel::Panel,
    bench: Option<&str>,
    whole: &rl_audit::analysis::Audit,
) -> Vec<rl_audit::analysis::Audit> {
    settings.focus.set(panel.parts());
    settings.focus.set_benchmark(bench);
    let mut seen = Vec::new();
    let done = rl_audit::analysis::run_audit_staged(set, &settings, &mut |a| seen.push(a.clone()))
        .expect("audit");
    assert_eq!(report_of(set, &done), report_of(set, whole));
    seen
}

/// With the Budget, Cost, Steps, Recovery or Likelihood panel on screen
/// (its LLR by turn too), the intervals it shows come first provisional —
/// those of the first 1,000 resamples, which are exactly what `--resamples
/// 1000` reports (resample b is seeded from (seed, b)) — then whole; each value is the final one, no report changes,
/// and an audit no panel looks at (headless) hands on none.
#[test]
fn the_panel_on_screen_shows_provisional_intervals_first() {
    use rl_audit::analysis::stats::PROVISIONAL_RESAMPLES;
    use rl_audit::analysis::Part;
    use rl_audit::tui::panel::Panel;
    // Two benchmarks of 40 tasks, a base and an RL run, one seed (a run of
    // several seeds takes its values from §4.3's two-stage bootstrap: no
    // values before its intervals, so none provisional).
    let dir = common::temp_dir("provisional");
    let mut mix = common::Mix(7);
    let mut lines = Vec::new();
    for bench in ["alpha", "beta"] {
        for task in 0..40 {
            let p = mix.unit();
            for (run, lift) in [("base", 0.0), ("rl", 0.15)] {
                for _ in 0..4 {
                    let solved = mix.unit() < p + lift;
                    let turn = solved.then(|| 1 + mix.below(8) as u32);
                    lines.push(common::traj(run, bench, &format!("t{task}"), 8, 8, turn));
                }
            }
        }
    }
    common::write_lines(&dir.join("eval.jsonl"), &lines);
    let set = Arc::new(rl_audit::schema::load(&[dir], &LoadOptions::default()).expect("loads"));
    let with = |resamples: usize| Settings {
        boot: rl_audit::analysis::stats::Bootstrap {
            resamples,
            ..Default::default()
        },
        compare: vec![("base".into(), "rl".into())],
        ..Default::default()
    };
    assert!(with(PROVISIONAL_RESAMPLES).boot.provisional().is_none());
    let whole = run_audit(&set, &with(2000)).expect("audit");
    let thousand = run_audit(&set, &with(PROVISIONAL_RESAMPLES)).expect("audit");
    // What a provisional interval must be: the 1,000-resample interval, a
    // degenerate one still pending (more resamples may not all agree).
    let want = |c: Ci| match c {
        Ci::Interval(l, h) => Ci::Provisional(l, h),
        Ci::Degenerate => Ci::Pending,
        c => c,
    };
    let provisional = |c: Ci| matches!(c, Ci::Provisional(..));
    // Estimates shown: each value the complete audit's, each interval the
    // 1,000-resample audit's as `want` has it.
    let agrees =
        |shown: &[Option<Estimate>], final_: &[Option<Estimate>], of_1000: &[Option<Estimate>]| {
            assert_eq!(shown.len(), of_1000.len());
            for ((e, f), t) in shown.iter().zip(final_).zip(of_1000) {
                assert_eq!(e.map(|e| e.value.to_bits()), f.map(|f| f.value.to_bits()));
                assert_eq!(e.map(|e| e.ci), t.map(|t| want(t.ci)));
            }
        };
    // Headless: no panel on screen, none provisional.
    let mut any = false;
    rl_audit::analysis::run_audit_staged(&set, &with(2000), &mut |a| {
        any |= a.pass.cells.iter().any(|c| provisional(c.ci))
            || a.natural_recovery
                .iter()
                .flat_map(|n| [n.next_ok, n.recovered])
                .flatten()
                .any(|e| provisional(e.ci));
    })
    .expect("audit");
    assert!(!any, "a provisional interval with no panel on screen");
    // Nor for the Overview, which reads every part and shows no interval.
    let overview = with(2000);
    overview.focus.set(Panel::Overview.parts());
    assert!(!overview.focus.shows(Part::Pass) && !overview.focus.shows(Part::NaturalRecovery));
    overview.focus.set(Panel::Budget.parts());
    assert!(overview.focus.shows(Part::Pass) && !overview.focus.shows(Part::NaturalRecovery));

    // The Budget panel on screen, the second benchmark selected.
    let chosen = whole.pass.benchmarks_in[1].clone();
    let seen = focused_hand_overs(&set, with(2000), Panel::Budget, Some(&chosen), &whole);
    let at = seen
        .iter()
        .position(|a| a.pass.cells.iter().any(|c| provisional(c.ci)))
        .expect("a hand-over with provisional intervals");
    let early = &seen[at].pass;
    // The chosen benchmark's, as soon as its values are in: before another
    // benchmark is counted, none whole yet.
    assert!(early.benchmarks_in.is_empty());
    assert_eq!(early.values_in, std::slice::from_ref(&chosen));
    // A report's rows of the chosen benchmark.
    fn of<T: Clone>(rows: &[T], bench: &str, name: impl Fn(&T) -> &str) -> Vec<T> {
        rows.iter().filter(|x| name(x) == bench).cloned().collect()
    }
    let cells =
        |p: &rl_audit::analysis::passkt::PassReport| of(&p.cells, &chosen, |c| &c.benchmark);
    let (shown, final_, of_1000) = (cells(early), cells(&whole.pass), cells(&thousand.pass));
    assert!(!shown.is_empty());
    assert_eq!(shown.len(), of_1000.len());
    for ((e, f), t) in shown.iter().zip(&final_).zip(&of_1000) {
        let key = (&e.run, e.k, e.level, e.mode);
        assert_eq!(key, (&t.run, t.k, t.level, t.mode));
        assert_eq!(e.ci, want(t.ci), "{key:?}");
        assert_eq!(e.value.map(f64::to_bits), f.value.map(f64::to_bits));
        assert_eq!(e.tasks, f.tasks);
    }
    assert!(shown.iter().filter(|c| provisional(c.ci)).count() > shown.len() / 2);
    for c in early.cells.iter().filter(|c| c.benchmark != chosen) {
        assert!(matches!(c.ci, Ci::Pending | Ci::Undefined), "{c:?}");
    }
    let deltas =
        |p: &rl_audit::analysis::passkt::PassReport| of(&p.advantage, &chosen, |x| &x.benchmark);
    let (shown_d, of_1000_d) = (deltas(early), deltas(&thousand.pass));
    assert!(!shown_d.is_empty());
    assert_eq!(shown_d.len(), of_1000_d.len());
    for (e, t) in shown_d.iter().zip(&of_1000_d) {
        assert_eq!((e.k, e.level, e.mode), (t.k, t.level, t.mode));
        assert_eq!(e.ci, want(t.ci));
        assert!(!e.significant_flip);
        assert_eq!(
            e.test,
            rl_audit::analysis::multiplicity::CellTest::DEGENERATE
        );
    }
    for (e, t) in early.mode_gap.iter().zip(&thousand.pass.mode_gap) {
        if e.benchmark == chosen {
            assert_eq!(e.ci, want(t.ci));
        }
    }
    // Then that benchmark whole, before any other.
    let next = seen[at..]
        .iter()
        .find(|a| !a.pass.benchmarks_in.is_empty())
        .expect("a benchmark whole");
    assert_eq!(next.pass.benchmarks_in, std::slice::from_ref(&chosen));
    let cis =
        |c: Vec<rl_audit::analysis::passkt::PassCell>| c.iter().map(|c| c.ci).collect::<Vec<_>>();
    assert_eq!(cis(cells(&next.pass)), cis(final_));
    // On screen: `~[…]` in the selected cell's box, and a line saying what
    // it is (`b`: the second benchmark). The pass curves, computed on a
    // thread of their own, are in or not by then: the complete audit's; the
    // parts computed beside as if still running.
    let mut shown = beside_running(seen[at].clone());
    shown.pass.curve = whole.pass.curve.clone();
    snapshot(
        &on_screen(&set, &shown),
        "partial-2-budget-provisional",
        "2b",
    );

    // The Cost panel on screen: its rows show their cells' intervals, so
    // the benchmark selected has them provisional too, once costed.
    let seen = focused_hand_overs(&set, with(2000), Panel::Cost, Some(&chosen), &whole);
    let costed = seen
        .iter()
        .position(|a| a.cost_in.contains(&chosen))
        .expect("the benchmark selected costed early");
    let at = seen
        .iter()
        .position(|a| a.pass.cells.iter().any(|c| provisional(c.ci)))
        .expect("a hand-over with provisional intervals");
    assert!(costed < at && seen[at].pass.benchmarks_in.is_empty());
    let cis =
        |c: Vec<rl_audit::analysis::passkt::PassCell>| c.iter().map(|c| c.ci).collect::<Vec<_>>();
    let want_cis: Vec<Ci> = cis(cells(&thousand.pass)).into_iter().map(want).collect();
    assert_eq!(cis(cells(&seen[at].pass)), want_cis);
    let mut shown = beside_running(seen[at].clone());
    shown.pass.curve = whole.pass.curve.clone();
    snapshot(&on_screen(&set, &shown), "partial-3-cost-provisional", "3b");

    // The Recovery panel on screen: natural recovery's intervals likewise,
    // on the demo (its rollouts have error flags).
    let set = Arc::new(rl_audit::demo::load_demo(&LoadOptions::default()).expect("demo loads"));
    let with = |resamples| Settings {
        compare: Vec::new(),
        ..with(resamples)
    };
    let (whole, thousand) = (
        run_audit(&set, &with(2000)).expect("audit"),
        run_audit(&set, &with(PROVISIONAL_RESAMPLES)).expect("audit"),
    );
    let seen = focused_hand_overs(&set, with(2000), Panel::Recovery, None, &whole);
    let ests = |a: &rl_audit::analysis::Audit| -> Vec<Option<Estimate>> {
        let runs = a
            .natural_recovery
            .iter()
            .flat_map(|n| [n.next_ok, n.recovered]);
        let diffs = a
            .natural_recovery_diff
            .iter()
            .flat_map(|d| [d.next_ok, d.recovered]);
        runs.chain(diffs).collect()
    };
    type Of<'a> = &'a dyn Fn(&rl_audit::analysis::Audit) -> Vec<Option<Estimate>>;
    // The first of `seen` whose estimates (`of`) show a provisional
    // interval, those checked (`agrees`); the 1,000-resample audit has
    // intervals there to show.
    let first_provisional = |seen: &[rl_audit::analysis::Audit], of: Of| {
        let of_1000 = of(&thousand);
        assert!(of_1000
            .iter()
            .flatten()
            .any(|e| matches!(e.ci, Ci::Interval(..))));
        let at = seen
            .iter()
            .position(|a| of(a).iter().flatten().any(|e| provisional(e.ci)))
            .expect("a hand-over with provisional intervals");
        agrees(&of(&seen[at]), &of(&whole), &of_1000);
        at
    };
    let early = &seen[first_provisional(&seen, &ests)];
    // Before the matched states' intervals (their rows `[…]` on screen).
    assert!(early.is_pending(Part::NaturalRecovery) && early.is_pending(Part::Matched));
    assert!(early.matched_values_in);
    snapshot(
        &on_screen(&set, early),
        "partial-5-recovery-provisional",
        "5",
    );

    // The matched states' and error recovery's intervals (the Steps and
    // Recovery panels'): provisional too once natural recovery's are in,
    // before their own are drawn; with the Steps panel on screen, once
    // their values are in.
    let matched = |a: &rl_audit::analysis::Audit| -> Vec<Option<Estimate>> {
        let means = a.matched.iter().flat_map(|m| {
            let halves = [m.mean_diff, m.early.mean_diff, m.late.mean_diff];
            halves
                .into_iter()
                .chain(m.by_turn.iter().map(|r| r.estimate()))
        });
        means
            .chain(a.recovery.iter().flat_map(|r| r.estimates()))
            .collect()
    };
    let at = first_provisional(&seen, &matched);
    assert!(seen[at].is_pending(Part::Matched));
    assert!(seen[..at].iter().any(|a| std::ptr::eq(a, early)));
    let seen = focused_hand_overs(&set, with(2000), Panel::Steps, None, &whole);
    let at = first_provisional(&seen, &matched);
    assert!(seen[at].is_pending(Part::Matched) && seen[at].is_pending(Part::Aggregates));
    snapshot(
        &on_screen(&set, &beside_running(seen[at].clone())),
        "partial-4-steps-provisional",
        "4",
    );

    // The Likelihood panel: its length-matched intervals, once its rows
    // are in, before the LLR by turn.
    let lengths = |a: &rl_audit::analysis::Audit| -> Vec<Option<Estimate>> {
        a.likelihood
            .iter()
            .map(|l| l.length_matched.mean_diff)
            .collect()
    };
    let seen = focused_hand_overs(&set, with(2000), Panel::Likelihood, None, &whole);
    let at = first_provisional(&seen, &lengths);
    assert!(seen[at].is_pending(Part::Likelihood) && seen[at].is_pending(Part::LlrByTurn));
    // Natural recovery, beside at a lower priority, as if still running
    // (the part computing still named first).
    let mut shown = seen[at].clone();
    if !shown.is_pending(Part::NaturalRecovery) {
        shown.pending.push(Part::NaturalRecovery);
    }
    (shown.natural_recovery, shown.natural_recovery_diff) = (Vec::new(), Vec::new());
    shown.natural_values_in = false;
    // The LLR by turn, beside, as if still reading the rollouts.
    (shown.llr_by_turn, shown.llr_pairs_in) = (Vec::new(), 0);
    snapshot(
        &on_screen(&set, &shown),
        "partial-6-likelihood-provisional",
        "6",
    );

    // Its LLR by turn (the drill), a pair at a time: the first pair's
    // turns, each value with its interval `[…]`, then provisional, before
    // the part is in.
    let llr = |a: &rl_audit::analysis::Audit| -> Vec<Option<Estimate>> {
        let e = |r: &rl_audit::analysis::likelihood::LlrTurn| Estimate {
            value: r.mean,
            ci: r.ci,
        };
        a.llr_by_turn.iter().map(|r| Some(e(r))).collect()
    };
    let pair = |a: &rl_audit::analysis::Audit| {
        let p = &a.pairs[0];
        let of = |r: &&rl_audit::analysis::likelihood::LlrTurn| r.key() == p.key();
        a.llr_by_turn.iter().filter(of).count()
    };
    let in_ = |a: &rl_audit::analysis::Audit| !a.llr_by_turn.is_empty();
    let values = seen.iter().position(in_).expect("the LLR by turn's rows");
    let at = seen
        .iter()
        .position(|a| llr(a).iter().flatten().any(|e| provisional(e.ci)));
    let at = at.expect("a hand-over with provisional intervals");
    let (early, n) = (&seen[values], pair(&whole));
    assert!(early.is_pending(Part::LlrByTurn) && seen[at].is_pending(Part::LlrByTurn));
    assert!(values < at && n < whole.llr_by_turn.len());
    assert_eq!((pair(early), early.llr_by_turn.len()), (n, n));
    assert_eq!(seen[at].llr_by_turn.len(), n);
    // The first pair's rows in, the second's still to come.
    assert_eq!((early.llr_pairs_in, seen[at].llr_pairs_in), (1, 1));
    assert!(seen[at].llr_in(whole.pairs[0].key()) && !seen[at].llr_in(whole.pairs[1].key()));
    let pending = Estimate {
        value: f64::NAN,
        ci: Ci::Pending,
    };
    agrees(&llr(early), &llr(&whole)[..n], &vec![Some(pending); n]);
    agrees(&llr(&seen[at]), &llr(&whole)[..n], &llr(&thousand)[..n]);
    // On screen, Enter on the first pair: the drill's rows provisional and
    // its title saying so; the rest as in the snapshot above.
    (shown.llr_by_turn, shown.llr_pairs_in) = (seen[at].llr_by_turn.clone(), 1);
    snapshot(
        &on_screen(&set, &shown),
        "partial-7-llr-by-turn-provisional",
        "6\n",
    );
    // The panel itself: the line under the chart gives the first pair's
    // first and last turns, saying their intervals are still computing.
    snapshot(
        &on_screen(&set, &shown),
        "partial-8-likelihood-by-turn-in",
        "6",
    );
}

/// A left click at (`x`, `y`), through the workbench's mouse handling,
/// then the screen.
fn click(s: &mut Screen, x: usize, y: usize) -> String {
    use ratatui::crossterm::event::{MouseButton, MouseEvent, MouseEventKind};
    s.app.on_mouse(MouseEvent {
        kind: MouseEventKind::Down(MouseButton::Left),
        column: x as u16,
        row: y as u16,
        modifiers: KeyModifiers::NONE,
    });
    s.text()
}

/// The column and line where `text` first shows on `screen`, on a line
/// starting with `line_start`.
fn place_of(screen: &str, line_start: &str, text: &str) -> (usize, usize) {
    screen
        .lines()
        .enumerate()
        .find_map(|(y, l)| {
            let at = l.find(text).filter(|_| l.starts_with(line_start))?;
            Some((l[..at].chars().count(), y))
        })
        .unwrap_or_else(|| panic!("no {text:?} on a line starting {line_start:?}\n{screen}"))
}

/// The mouse does what the keys do: a click on a tab opens its panel, the
/// wheel moves as ↑↓, a click on the Budget grid's cell selects its K and
/// level, on a table's row selects it, and on the selected one drills
/// down; over the help, a click closes it. Every screen is compared whole
/// with the one the keys give.
#[test]
fn the_mouse_picks_tabs_rows_and_grid_cells_as_the_keys_do() {
    use ratatui::crossterm::event::{MouseEvent, MouseEventKind};
    let d = demo();
    let keyed = |keys: &str| Screen::new(120, 40, d.clone()).keys(keys);
    // Each tab is its stretch of the top line between the dividers, as
    // drawn (at 120 columns a space either side of its name; at 80 none,
    // and the longest other names cut); the dividers and the rest of the
    // line are no tab. At 80 columns every number shows, and the panel on
    // screen's name whole.
    for (w, keys, whole) in [
        (120, "", "1 Overview"),
        (80, "", "1 Overview"),
        (80, "6", "6 Likelihood"),
    ] {
        let mut s = Screen::new(w, 24, d.clone());
        let top: String = s.keys(keys).lines().next().unwrap().to_string();
        let panel = s.app.panel;
        assert_eq!(top.split('│').count(), 8, "{top:?}");
        let mut want = Vec::new();
        for (i, seg) in top.split('│').enumerate() {
            let extent = seg.trim_end().chars().count() + usize::from(seg.starts_with(' '));
            assert!(
                seg.trim_start().starts_with(&format!("{} ", i + 1)),
                "{top:?}"
            );
            want.extend(std::iter::repeat_n(
                Some(rl_audit::tui::panel::Panel::ALL[i]),
                extent,
            ));
            want.extend(std::iter::repeat_n(None, seg.chars().count() - extent));
            want.push(None);
        }
        assert_eq!(want.len(), top.chars().count() + 1, "{top:?}");
        assert!(top.contains(whole), "{top:?}");
        for (x, p) in want.iter().enumerate() {
            assert_eq!(
                draw::tab_at(x as u16, w, panel),
                *p,
                "column {x} of {top:?}"
            );
        }
    }
    let mut s = Screen::new(120, 40, d.clone());
    let first = s.text();
    // A click on `2 Budget`.
    let (x, _) = place_of(&first, " ", "2 Budget");
    assert_eq!(click(&mut s, x, 0), keyed("2"));
    // The wheel: two notches down, one up.
    let mut wheel = |kind| {
        s.app.on_mouse(MouseEvent {
            kind,
            column: 10,
            row: 5,
            modifiers: KeyModifiers::NONE,
        })
    };
    assert!(wheel(MouseEventKind::ScrollDown));
    assert!(wheel(MouseEventKind::ScrollDown));
    assert!(wheel(MouseEventKind::ScrollUp));
    assert_eq!(s.text(), keyed("2j"));
    // The grid's cell at K=4, 75%: under the `75%` heading, on K=4's line.
    let screen = s.text();
    let (x, _) = place_of(&screen, "│K ", "75%");
    let (_, y) = place_of(&screen, "│4 ", "4");
    let grid = click(&mut s, x, y);
    assert_eq!(grid, keyed("2jjll"));
    // Again: its tasks.
    let tasks = click(&mut s, x, y);
    assert_eq!(tasks, keyed("2jjll\n"));
    // The third task's line, then again: its rollouts.
    let third = s.app.table().unwrap().rows[2].cells[0].text.clone();
    let (x, y) = place_of(&tasks, "│ ", &third);
    assert_eq!(click(&mut s, x, y), keyed("2jjll\njj"));
    assert_eq!(click(&mut s, x, y), keyed("2jjll\njj\n"));
    // Past the rows, on the border or the status line: nothing.
    assert!(!s.app.on_mouse(MouseEvent {
        kind: MouseEventKind::Down(ratatui::crossterm::event::MouseButton::Left),
        column: 0,
        row: 39,
        modifiers: KeyModifiers::NONE,
    }));
    // Over the help, a click closes it.
    s.keys("?");
    assert_eq!(click(&mut s, 50, 20), keyed("2jjll\njj\n"));
}

/// `y` copies the selected row as `name: value` lines (each cell whole,
/// as the table holds it) or, on the Budget grid, the selected cell's box
/// as drawn; the status line says how much.
#[test]
fn y_copies_the_selected_row_or_cell() {
    let d = demo();
    let mut s = Screen::new(160, 48, d.clone());
    // The Overview's second finding.
    let screen = s.keys("jy");
    let t = s.app.table().unwrap();
    let want: Vec<String> = t
        .header
        .iter()
        .zip(&t.rows[1].cells)
        .map(|(h, c)| format!("{h}: {}", c.text))
        .collect();
    let got = s.app.clipboard.take().expect("copied");
    assert_eq!(got, want.join("\n"));
    assert_eq!(got.lines().count(), 3);
    assert!(
        screen.contains(&format!(
            "copied row 2 to the clipboard ({} characters, by OSC 52)",
            got.chars().count()
        )),
        "{screen}"
    );
    // The grid's K=2 25% cell: the box's lines as drawn at 160 columns
    // (none wraps there).
    let screen = s.keys("2jy");
    let got = s.app.clipboard.take().expect("copied");
    let boxed: Vec<String> = screen
        .lines()
        .skip_while(|l| !l.starts_with("┌selected cell"))
        .skip(1)
        .take_while(|l| !l.starts_with('└'))
        .map(|l| {
            l.trim_start_matches('│')
                .trim_end_matches('│')
                .trim_end()
                .to_string()
        })
        .collect();
    assert!(boxed.len() >= 4, "{screen}");
    assert_eq!(got.lines().collect::<Vec<_>>(), boxed);
    assert!(got.contains("Pass@(2,25%)"), "{got}");
}

/// Enter on a trajectory's step opens it whole: each field's name on a
/// line, then its text wrapped under it, two columns in, within the
/// screen's width; the lines put back together are the step's cells.
#[test]
fn a_step_opens_whole_each_field_under_its_name() {
    let d = demo();
    let mut s = Screen::new(80, 24, d.clone());
    s.keys_then_read("2ll\n\n\n");
    let traj = s.app.table().unwrap();
    assert_eq!(traj.name, "trajectory");
    let screen = s.keys("j\n");
    let step = s.app.table().unwrap();
    assert_eq!(step.name, "step", "{screen}");
    assert!(step
        .title
        .ends_with(&format!("turn {} whole", traj.text(1, 0))));
    // Field by field: `name:` then its text's lines.
    let mut fields: Vec<(String, Vec<String>)> = Vec::new();
    for r in &step.rows {
        let line = &r.cells[0].text;
        match line.strip_prefix("  ") {
            Some(text) => fields.last_mut().unwrap().1.push(text.to_string()),
            None => fields.push((line.trim_end_matches(':').to_string(), Vec::new())),
        }
        assert!(line.chars().count() <= 80 - 6 + 2, "{line:?}");
    }
    let names: Vec<&str> = fields.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        traj.header.iter().map(String::as_str).collect::<Vec<_>>()
    );
    for ((name, lines), cell) in fields.iter().zip(&traj.rows[1].cells) {
        assert_eq!(lines.join(" "), cell.text, "{name}");
    }
    // `y` copies the step as shown, every line.
    s.keys("y");
    let lines: Vec<&str> = step.rows.iter().map(|r| r.cells[0].text.as_str()).collect();
    assert_eq!(s.app.clipboard.take().unwrap(), lines.join("\n"));
    // A new audit (the workbench's partial ones while it computes) lets go
    // of every table: the step comes back, its trajectory read again.
    s.app.set_data(d.clone());
    let again = s.keys_then_read("");
    assert_eq!(s.app.table().unwrap().rows, step.rows, "{again}");
    // Esc: back on the trajectory, the step still selected.
    s.keys("\x1b");
    assert_eq!(
        (s.app.table().unwrap().name.as_str(), s.app.row()),
        ("trajectory", 1)
    );
}

/// Enter on a turn of two trajectories side by side opens both steps
/// whole, whichever side's row it is on (stacked at 80 columns): A's record
/// line, then its fields, then B's — each field's text as the record holds
/// it; a turn one trajectory does not reach says so.
#[test]
fn both_steps_of_a_compared_turn_open_whole() {
    use rl_audit::tui::app::View;
    let d = demo();
    let mut s = Screen::new(80, 24, d.clone());
    s.keys_then_read("2llv");
    let Some(View::Compare(a, b)) = s.app.stack.last().cloned() else {
        panic!("v opened no comparison");
    };
    // Stacked: turn 1 A, turn 1 B, turn 2 A, turn 2 B — B's row of turn 2.
    let screen = s.keys_then_read("jjj\n");
    assert_eq!(
        s.app.stack.last(),
        Some(&View::CompareStep { a, b, step: 1 }),
        "{screen}"
    );
    let t = s.app.table().unwrap();
    assert!(t.title.ends_with("turn 2 whole"), "{}", t.title);
    let lines: Vec<&str> = t.rows.iter().map(|r| r.cells[0].text.as_str()).collect();
    // Each side: its record's line (wrapped) up to `turn:`, then each field
    // as `name:` and its text's lines two columns in.
    let b_at = lines.iter().position(|l| l.starts_with("B: ")).unwrap();
    for (side, loc, part) in [("A", a, &lines[..b_at]), ("B", b, &lines[b_at..])] {
        let record = d.set.read_record(loc).unwrap();
        let head_end = part.iter().position(|l| *l == "turn:").unwrap();
        let head = part[..head_end].join(" ");
        assert!(
            head.starts_with(&format!("{side}: {} — ", d.set.loc_text(loc))),
            "{head}"
        );
        assert!(head.contains(&format!("run={}", record["run"])), "{head}");
        let mut fields: Vec<(&str, Vec<&str>)> = Vec::new();
        for l in &part[head_end..] {
            match l.strip_prefix("  ") {
                Some(text) => fields.last_mut().unwrap().1.push(text),
                None => fields.push((l.trim_end_matches(':'), Vec::new())),
            }
        }
        let field = |name: &str| {
            let (_, text) = fields.iter().find(|(n, _)| *n == name).unwrap();
            text.join(" ")
        };
        let st = &record["steps"][1];
        assert_eq!(field("turn"), st["turn"].to_string());
        assert_eq!(field("action"), st["action"].as_str().unwrap());
        assert_eq!(field("observation"), st["observation"].as_str().unwrap());
        assert_eq!(field("tokens"), st["output_tokens"].to_string());
        let error = if st["error"] == true { "ERROR" } else { "no" };
        assert_eq!(field("error"), error);
        for (run, lp) in st["logp"].as_object().unwrap() {
            assert!(field("logp").contains(&format!("{run}:{lp}")), "{run}");
        }
    }
    // `y` copies every line; Esc goes back to the comparison, on B's row.
    s.keys("y");
    assert_eq!(s.app.clipboard.take().unwrap(), lines.join("\n"));
    s.keys("\x1b");
    assert_eq!(
        (s.app.stack.last(), s.app.row()),
        (Some(&View::Compare(a, b)), 3)
    );
    // Past the end of the shorter trajectory: its side says so.
    let by_steps = |n: usize| {
        d.set
            .trajectories
            .iter()
            .map(|tr| tr.loc)
            .find(|&l| {
                d.set.read_record(l).unwrap()["steps"]
                    .as_array()
                    .unwrap()
                    .len()
                    == n
            })
            .unwrap()
    };
    let (long, short) = (by_steps(6), by_steps(2));
    use rl_audit::tui::views::drill;
    let (tl, ts) = (
        drill::trajectory(&d.set, long),
        drill::trajectory(&d.set, short),
    );
    let t = drill::compare_step(&tl, &ts, 4, 80);
    let last = t.rows.last().unwrap().cells[0].text.as_str();
    assert_eq!(last, "  (no turn 5: its trajectory has 2 steps)");
}

/// `P` on logs no run of which says `method: base` (rLLM's eval folders):
/// every run, with the benchmark its `meta.json` names; Enter on a base,
/// then on an RL run, asks for an audit comparing them (`--compare`), which
/// then holds that pair, selected. A second pick adds to the first.
#[test]
fn p_picks_a_pair_to_compare() {
    use rl_audit::tui::app::View;
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/rllm/eval");
    // The runs and benchmarks as the folders' meta.json files say.
    let mut metas: Vec<(String, String)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| {
            let m: serde_json::Value = serde_json::from_str(
                &std::fs::read_to_string(e.unwrap().path().join("meta.json")).unwrap(),
            )
            .unwrap();
            (
                m["model"].as_str().unwrap().to_string(),
                m["benchmark"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    metas.sort();
    let (base, rl) = (metas[0].0.clone(), metas[1].0.clone());
    let set = Arc::new(rl_audit::schema::load(&[dir], &LoadOptions::default()).expect("loads"));
    let audit = run_audit(&set, &quick()).expect("audit");
    assert!(audit.pairs.is_empty());
    let mut s = Screen::new(120, 40, on_screen(&set, &audit));
    s.keys("P");
    let t = s.app.table().unwrap();
    let rows = texts(&t);
    let want: Vec<Vec<&str>> = metas
        .iter()
        .map(|(run, bench)| vec![run.as_str(), "–", bench.as_str(), "–"])
        .collect();
    assert_eq!(rows, want);
    // The base, then the same run again (refused), then the RL run.
    s.keys("\n");
    assert_eq!(
        s.app.stack.last(),
        Some(&View::Runs {
            base: Some(base.clone())
        })
    );
    s.keys("\n");
    assert_eq!(
        s.app.message.as_deref(),
        Some(format!("{base} is the base: pick another run as RL").as_str())
    );
    assert!(s.app.pending.is_none());
    s.keys("j\n");
    assert!(s.app.stack.is_empty(), "back where P was pressed");
    // The picker's selected row went with it: the Overview's is the first.
    assert_eq!(s.app.rows, [0]);
    assert!(matches!(
        s.app.pending,
        Some(rl_audit::tui::app::Pending::Recompute)
    ));
    let pair = (base.clone(), rl.clone());
    assert_eq!(s.app.compare, Some(vec![pair.clone()]));
    // The next audit's settings, as the terminal loop makes them.
    let mut settings = quick();
    s.app.chosen(&mut settings);
    assert_eq!(settings.compare, vec![pair.clone()]);
    let audit = run_audit(&set, &settings).expect("audit");
    s.app.set_data(on_screen(&set, &audit));
    let (bench, p) =
        rl_audit::tui::select::current(&s.app.data.as_ref().unwrap().audit, &s.app.sel);
    let p = p.expect("the pair picked is selected");
    assert_eq!(
        (bench.as_deref(), p.base.as_str(), p.rl.as_str()),
        (Some(metas[0].1.as_str()), base.as_str(), rl.as_str())
    );
    // The picker now says who is compared; the reverse pair is added.
    s.keys("P");
    let t = s.app.table().unwrap();
    assert_eq!(t.rows[0].cells[3].text, format!("base of {rl}"));
    assert_eq!(t.rows[1].cells[3].text, format!("RL against {base}"));
    s.keys("j\nk\n");
    let reverse = (rl.clone(), base.clone());
    assert_eq!(s.app.compare, Some(vec![pair.clone(), reverse.clone()]));
    let mut settings = quick();
    s.app.chosen(&mut settings);
    let audit = run_audit(&set, &settings).expect("audit");
    s.app.set_data(on_screen(&set, &audit));
    let selected = |s: &Screen| {
        let a = &s.app.data.as_ref().unwrap().audit;
        let p = rl_audit::tui::select::current(a, &s.app.sel).1.unwrap();
        (p.base, p.rl)
    };
    assert_eq!(selected(&s), reverse);
    // A pair compared now, picked again, is selected: no new audit.
    s.app.pending = None;
    s.keys("P\nj\n");
    assert_eq!(selected(&s), pair);
    assert!(s.app.pending.is_none() && s.app.stack.is_empty());
    // d drops the pair of the base and the run under the cursor; not the last.
    s.keys("P\nd");
    assert_eq!(
        s.app.message.as_deref(),
        Some(format!("{base} → {base} is not compared").as_str())
    );
    s.keys("jd");
    assert_eq!(s.app.compare, Some(vec![reverse]));
    assert!(s.app.pending.is_some() && s.app.stack.is_empty());
    s.app.pending = None;
    s.keys("Pj\nkd");
    assert_eq!(
        s.app.message.as_deref(),
        Some(format!("{rl} → {base} is the only pair: pick another before dropping it").as_str())
    );
    assert!(s.app.pending.is_none());
}

/// On the demo (its base run declared), a pair picked joins the pairs it
/// compared already: all three are asked for.
#[test]
fn a_pair_picked_joins_the_pairs_compared() {
    let d = demo();
    let mut s = Screen::new(120, 40, d.clone());
    s.keys("P");
    let t = s.app.table().unwrap();
    let names: Vec<&str> = t.rows.iter().map(|r| r.cells[0].text.as_str()).collect();
    assert_eq!(names, ["fl-base", "fl-budgetmix", "fl-grpo"]);
    assert_eq!(
        t.rows[0].cells[3].text,
        "base of fl-budgetmix; base of fl-grpo"
    );
    // fl-budgetmix as the base, fl-grpo as RL.
    s.keys("j\nj\n");
    let own = |a: &str, b: &str| (a.to_string(), b.to_string());
    assert_eq!(
        s.app.compare,
        Some(vec![
            own("fl-base", "fl-budgetmix"),
            own("fl-base", "fl-grpo"),
            own("fl-budgetmix", "fl-grpo")
        ])
    );
}

/// Enter on a matched-states row (Steps) lists the pair's states: exactly
/// the probes, read from their records, where both runs have candidates;
/// their verdicts and RL − base give the panel's shares and mean. Enter on
/// a state opens its probe: its candidates as the record lists them, each
/// run's mean score the state's q. From Recovery, the error states, their
/// correcting shares averaging to the panel's correction rates.
#[test]
fn a_matched_states_row_drills_to_its_states_and_probes() {
    let d = demo();
    let mut s = Screen::new(120, 40, d.clone());
    s.keys_then_read("4\n");
    let t = s.app.table().unwrap();
    assert_eq!(t.name, "states");
    let m = &d.audit.matched[0];
    // The states from the records: error false, candidates of both runs.
    let mut want = Vec::new();
    for p in &d.set.probes {
        let r = d.set.read_record(p.loc).unwrap();
        let runs: Vec<&str> = r["candidates"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["run"].as_str().unwrap())
            .collect();
        if r["benchmark"] == m.benchmark.as_str()
            && r["error"] != true
            && runs.contains(&m.base.as_str())
            && runs.contains(&m.rl.as_str())
        {
            want.push((
                r["task"].as_str().unwrap().to_string(),
                r["state"].as_str().unwrap().to_string(),
            ));
        }
    }
    let got: Vec<(String, String)> = t
        .rows
        .iter()
        .map(|r| (r.cells[0].text.clone(), r.cells[1].text.clone()))
        .collect();
    assert_eq!(got, want);
    // Their verdicts and differences make the panel's figures.
    let n = t.rows.len() as f64;
    let count = |v: &str| t.rows.iter().filter(|r| r.cells[7].text == v).count() as f64;
    assert_eq!(m.states as f64, n);
    for (v, share) in [("better", m.better), ("tie", m.tie), ("worse", m.worse)] {
        assert!((count(v) / n - share.unwrap()).abs() < 1e-12, "{v}");
    }
    let mean = t
        .rows
        .iter()
        .map(|r| r.cells[6].value.unwrap())
        .sum::<f64>()
        / n;
    assert!((mean - m.mean_diff.unwrap().value).abs() < 1e-12);
    // The first state's probe: its candidates as recorded.
    let (q_base, q_rl) = (
        t.rows[0].cells[4].value.unwrap(),
        t.rows[0].cells[5].value.unwrap(),
    );
    let shown_n = |j: usize| {
        t.rows[0].cells[j]
            .text
            .rsplit_once(" n=")
            .unwrap()
            .1
            .to_string()
    };
    let (n_base, n_rl) = (shown_n(4), shown_n(5));
    s.keys_then_read("\n");
    let p = s.app.table().unwrap();
    assert_eq!(p.name, "probe");
    let loc = d
        .set
        .probes
        .iter()
        .find(|p| d.set.name(p.task) == want[0].0 && d.set.name(p.state) == want[0].1)
        .unwrap()
        .loc;
    let record = d.set.read_record(loc).unwrap();
    let cands = record["candidates"].as_array().unwrap();
    assert_eq!(p.rows.len(), cands.len());
    for (row, c) in p.rows.iter().zip(cands) {
        assert_eq!(row.cells[0].text, c["run"].as_str().unwrap());
        assert!(row.cells[1].text.starts_with(&c["action"].to_string()));
    }
    let mean_of = |run: &str| {
        let xs: Vec<f64> = p
            .rows
            .iter()
            .filter(|r| r.cells[0].text == run)
            .map(|r| r.cells[2].value.unwrap())
            .collect();
        xs.iter().sum::<f64>() / xs.len() as f64
    };
    assert!((mean_of(&m.base) - q_base).abs() < 1e-12);
    assert!((mean_of(&m.rl) - q_rl).abs() < 1e-12);
    // Each q's n: its run's candidates in the record (all scored here).
    let n_of = |run: &str| cands.iter().filter(|c| c["run"] == run).count().to_string();
    assert_eq!((n_base, n_rl), (n_of(&m.base), n_of(&m.rl)));
    // Recovery: a probe row opens the error states.
    let mut s = Screen::new(120, 40, d.clone());
    s.keys("5");
    let at = s
        .app
        .table()
        .unwrap()
        .rows
        .iter()
        .position(|r| r.cells[0].text == "correction")
        .unwrap();
    s.keys_then_read(&format!("{}\n", "j".repeat(at)));
    let t = s.app.table().unwrap();
    assert_eq!(t.name, "states");
    let r = &d.audit.recovery[0];
    assert_eq!(t.rows.len() as u64, r.states);
    for (col, side) in [(8, 0), (9, 1)] {
        let xs: Vec<f64> = t.rows.iter().filter_map(|r| r.cells[col].value).collect();
        let mean = xs.iter().sum::<f64>() / xs.len() as f64;
        assert!(
            (mean - r.correction[side].unwrap().value).abs() < 1e-12,
            "{col}"
        );
    }
}

/// A step field a Parquet file holds as null (its column is there, this
/// step has no value) reads `–` in the trajectory view, as an absent one
/// does in JSON Lines — not `null`.
#[test]
fn a_null_step_field_reads_as_absent() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/large/parquet");
    let set = rl_audit::schema::load(&[dir], &LoadOptions::default()).expect("loads");
    let loc = set.trajectories[0].loc;
    let record = set.read_record(loc).unwrap();
    let steps = record["steps"].as_array().unwrap();
    let t = rl_audit::tui::views::drill::trajectory(&set, loc);
    assert_eq!(t.rows.len(), steps.len());
    let mut nulls = 0;
    for (row, st) in t.rows.iter().zip(steps) {
        let shown = |v: &serde_json::Value| match v {
            serde_json::Value::Null => "–".to_string(),
            v => v.to_string(),
        };
        let want = format!(
            "{}/{}",
            shown(&st["budget_total"]),
            shown(&st["budget_remaining"])
        );
        assert_eq!(row.cells[6].text, want);
        nulls += usize::from(st["budget_total"].is_null());
    }
    // The fixture's steps do hold nulls there.
    assert!(nulls > 0);
}

/// A trainer's dump declares no method (verl-agent's step rows, mapped):
/// the BudgetMix panel lists the runs with training rollouts — as many as
/// the files hold distinct `traj_uid`s — and Enter on one asks for an
/// audit naming it (`--audit`), whose rules the panel then shows; `A` lists
/// the same runs, and Enter on an audited one stops auditing it.
#[test]
fn a_run_with_training_rollouts_is_picked_to_audit() {
    use rl_audit::tui::app::{Pending, View};
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    // Relative, as a user types it: the screens show it.
    let dir = std::path::PathBuf::from("tests/data/verl-agent/rollout_data");
    let mut uids = std::collections::BTreeSet::new();
    for e in std::fs::read_dir(&dir).unwrap() {
        for line in std::fs::read_to_string(e.unwrap().path()).unwrap().lines() {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            uids.insert(v["traj_uid"].as_str().unwrap().to_string());
        }
    }
    let set = Arc::new(common::load_mapped_by(
        &dir,
        &root.join("assets/mappings/verl-agent-steps.toml"),
    ));
    let audit = run_audit(&set, &quick()).expect("audit");
    assert!(audit.budgetmix.is_empty());
    // The Overview names it too; the empty panel and A list it.
    for (name, keys) in [
        ("training-only-overview", "1"),
        ("training-only-8-budgetmix", "8"),
        ("training-only-runs", "8A"),
    ] {
        snapshot(&on_screen(&set, &audit), name, keys);
    }
    let mut s = Screen::new(100, 24, on_screen(&set, &audit));
    s.keys("8");
    let t = s.app.table().unwrap();
    let want = format!(
        "verl-agent: {} training rollouts (Enter: audit it)",
        uids.len()
    );
    let at = t
        .rows
        .iter()
        .position(|r| r.cells[0].text == "audit")
        .expect("the run to audit is listed");
    assert_eq!(t.rows[at].cells[1].text, want);
    assert_eq!(at, 0, "first, where the selection starts");
    s.keys("\n");
    assert_eq!(s.app.pending, Some(Pending::Recompute));
    assert_eq!(s.app.audit, Some(vec!["verl-agent".to_string()]));
    // The next audit's settings, as the terminal loop makes them.
    let mut settings = quick();
    s.app.chosen(&mut settings);
    assert_eq!(settings.audit, ["verl-agent"]);
    let audit = run_audit(&set, &settings).expect("audit");
    s.app.set_data(on_screen(&set, &audit));
    let t = s.app.table().unwrap();
    assert_eq!(t.name, "budgetmix-rules");
    assert_eq!(s.app.row(), 0);
    // A violating record re-read: the step rows of its trajectory, mapped.
    snapshot(
        &on_screen(&set, &audit),
        "training-only-trajectory",
        "8jjj\n\n",
    );
    // candidate_budgets checks every training rollout.
    assert_eq!(t.rows[0].cells[1].text, uids.len().to_string());
    // A: the same run, audited by name; Enter stops auditing it.
    s.app.pending = None;
    s.keys("A");
    assert_eq!(s.app.stack.last(), Some(&View::TrainingRuns));
    let t = s.app.table().unwrap();
    let rows = texts(&t);
    let n = uids.len().to_string();
    assert_eq!(
        rows,
        [["verl-agent", "–", n.as_str(), "yes: --audit (Enter: stop)"]]
    );
    s.keys("\n");
    assert!(s.app.stack.is_empty());
    assert_eq!(s.app.audit, Some(Vec::new()));
    assert_eq!(s.app.pending, Some(Pending::Recompute));
}

/// On the demo, the run declaring `method: budgetmix` is audited whatever
/// `A` says: Enter on it changes nothing.
#[test]
fn a_run_declaring_budgetmix_stays_audited() {
    let d = demo();
    let mut s = Screen::new(120, 40, d.clone());
    s.keys("8A");
    let t = s.app.table().unwrap();
    let rows = texts(&t);
    // The demo's training records (those with train_step), counted from
    // its files: every one fl-budgetmix's.
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/demo");
    let mut runs: std::collections::BTreeMap<String, usize> = Default::default();
    for f in std::fs::read_dir(root).unwrap() {
        use std::io::Read;
        let mut text = String::new();
        flate2::read::GzDecoder::new(std::fs::File::open(f.unwrap().path()).unwrap())
            .read_to_string(&mut text)
            .unwrap();
        for line in text.lines() {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            if v.get("train_step").is_some_and(|x| !x.is_null()) {
                *runs
                    .entry(v["run"].as_str().unwrap().to_string())
                    .or_default() += 1;
            }
        }
    }
    assert_eq!(runs.keys().collect::<Vec<_>>(), ["fl-budgetmix"]);
    let n = runs["fl-budgetmix"].to_string();
    assert_eq!(
        rows,
        [[
            "fl-budgetmix",
            "budgetmix",
            n.as_str(),
            "yes: method budgetmix"
        ]]
    );
    s.keys("\n");
    assert!(s.app.pending.is_none());
    assert_eq!(
        s.app.message.as_deref(),
        Some("fl-budgetmix declares method: budgetmix, so it is always audited")
    );
}

/// An outcome-only dump read through a mapping (verl's generations): a
/// rollout's trajectory has no steps, so its view lists its source row —
/// the prompt and the response — field by field as the file holds it
/// (line breaks as `⏎`), and no step box below.
#[test]
fn an_outcome_only_mapped_rollout_shows_its_source_row() {
    let dir = std::path::PathBuf::from("tests/data/verl/val");
    let mapping = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("assets/mappings/verl-generations.toml");
    let set = Arc::new(common::load_mapped_by(&dir, &mapping));
    let settings = Settings {
        compare: vec![("verl@20".into(), "verl@40".into())],
        ..quick()
    };
    let audit = run_audit(&set, &settings).expect("audit");
    let data = on_screen(&set, &audit);
    // A budget of 1 turn: every level one cell, which the grid's legend says.
    let mut s = Screen::new(120, 40, data.clone());
    s.keys("2");
    let legend = s.app.table().unwrap().legend.clone();
    assert!(
        legend.ends_with("  25%=50%=75%=100%: one T for every task"),
        "{legend}"
    );
    snapshot(&data, "mapped-outcome-only-budget", "2");
    let mut s = Screen::new(120, 40, data.clone());
    s.keys_then_read("2\n\n\n");
    let t = s.app.table().unwrap();
    assert_eq!(t.name, "trajectory");
    let place = t.title.split(" — ").next().unwrap().to_string();
    let (file, line) = place.rsplit_once(':').unwrap();
    let raw: serde_json::Value = serde_json::from_str(
        std::fs::read_to_string(file)
            .unwrap()
            .lines()
            .nth(line.parse::<usize>().unwrap() - 1)
            .unwrap(),
    )
    .unwrap();
    let mut want = vec!["(no steps)".to_string(), format!("source row {place}:")];
    let mut fields: Vec<(&String, &serde_json::Value)> = raw.as_object().unwrap().iter().collect();
    fields.sort_by_key(|f| f.0);
    for (k, v) in fields {
        let text = v.as_str().map_or(v.to_string(), str::to_string);
        want.push(format!("  {k}: {}", text.replace('\n', " ⏎ ")));
    }
    let got: Vec<&str> = t.rows.iter().map(|r| r.cells[0].text.as_str()).collect();
    assert_eq!(got, want);
    snapshot(&data, "mapped-outcome-only-trajectory", "2\n\n\n");
    // v: a base failure and an RL success side by side — their source
    // rows, field by field, `≠` where they differ.
    let mut s = Screen::new(120, 40, data.clone());
    s.keys_then_read("2v");
    let Some(rl_audit::tui::app::View::Compare(a, b)) = s.app.stack.last().cloned() else {
        panic!("v opens two rollouts side by side");
    };
    let row_at = |loc: rl_audit::schema::Loc| -> serde_json::Map<String, serde_json::Value> {
        let text = std::fs::read_to_string(set.file_name(loc)).unwrap();
        let line = text.lines().nth(loc.line() as usize - 1).unwrap();
        serde_json::from_str(line).unwrap()
    };
    let (ra, rb) = (row_at(a), row_at(b));
    let mut keys: Vec<&String> = ra.keys().chain(rb.keys()).collect();
    keys.sort();
    keys.dedup();
    let text = |v: Option<&serde_json::Value>| match v {
        None => "–".to_string(),
        Some(serde_json::Value::String(s)) => s.replace('\n', " ⏎ "),
        Some(v) => v.to_string(),
    };
    let want: Vec<Vec<String>> = keys
        .iter()
        .map(|k| {
            let (x, y) = (text(ra.get(*k)), text(rb.get(*k)));
            let name = if x != y {
                format!("{k} ≠")
            } else {
                k.to_string()
            };
            vec![name, x, y]
        })
        .collect();
    let t = s.app.table().unwrap();
    let got: Vec<Vec<String>> = texts(&t)
        .into_iter()
        .map(|r| r.into_iter().map(str::to_string).collect())
        .collect();
    assert_eq!(got, want);
    // The fixture's base answers wrong where RL answers right.
    assert!(t.rows.iter().any(|r| r.cells[0].text == "output ≠"));
    snapshot(&data, "mapped-outcome-only-compare", "2v");
}

/// The Overview's box shows four notes; more are counted, not dropped in
/// silence.
#[test]
fn the_overview_counts_the_notes_it_leaves_out() {
    let d = demo();
    let mut a = d.audit.clone();
    a.notes = (1..=6).map(|i| format!("n{i}")).collect();
    let lines = rl_audit::tui::views::overview::inputs(&d.set, &a);
    let tail: Vec<&str> = lines
        .iter()
        .rev()
        .take(5)
        .rev()
        .map(String::as_str)
        .collect();
    assert_eq!(
        tail,
        [
            "note: n1",
            "note: n2",
            "note: n3",
            "note: n4",
            "… 2 more notes (report.md lists every one: --headless)"
        ]
    );
}
