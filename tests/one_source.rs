//! One fact, one place: on a log set with left-out tasks, the Budget
//! drill-down, the cost frontier and the report agree at every level, mode
//! and K; the upper-bound curve bounds the Pass curve; the default grid has
//! a number wherever a cell has rollouts. Expected values are computed here
//! from the records written, not read from the program.

mod common;
use common::*;
use serde_json::{json, Value};
use std::sync::Arc;

use rl_audit::analysis::passkt::{delta_by_task, Mode};
use rl_audit::analysis::{run_audit, Settings};
use rl_audit::jobs::Loaded;
use rl_audit::schema::{load::load, LoadOptions};

/// A task's full budget: 8 (T = 2, 4, 6, 8 at the levels), but t6 has 2
/// (T = 1, 1, 2, 2: no truncated cell at 75% and 100%).
fn full(task: &str) -> u32 {
    if task == "t6" {
        2
    } else {
        8
    }
}

/// (run, task, budget, turns, success_turn) of every rollout: native
/// rollouts at 25% and 50% beside the full-budget ones; task t4 has a
/// single base rollout per cell (left out at K = 2), t5 only RL rollouts,
/// t6 only full-budget rollouts of its small budget.
fn rollouts() -> Vec<(&'static str, &'static str, u32, u32, Option<u32>)> {
    let mut v = Vec::new();
    /// (run, task, each full-budget rollout's (turns, success turn)).
    type Rows = [(&'static str, &'static str, &'static [(u32, Option<u32>)])];
    let table: &Rows = &[
        (
            "base",
            "t1",
            &[(8, None), (3, Some(3)), (8, Some(7)), (5, Some(5))],
        ),
        (
            "rl",
            "t1",
            &[(2, Some(2)), (4, Some(4)), (8, None), (1, Some(1))],
        ),
        ("base", "t2", &[(8, None), (8, None), (6, Some(6))]),
        ("rl", "t2", &[(5, Some(5)), (8, None), (2, Some(2))]),
        ("base", "t3", &[(1, Some(1)), (2, Some(2))]),
        ("rl", "t3", &[(8, None), (8, None)]),
        ("base", "t4", &[(4, Some(4))]),
        ("rl", "t4", &[(3, Some(3)), (6, Some(6)), (8, None)]),
        ("rl", "t5", &[(2, Some(2)), (8, None)]),
        ("base", "t6", &[(2, None), (1, Some(1))]),
        ("rl", "t6", &[(2, Some(2)), (2, None)]),
    ];
    for (run, task, rs) in table {
        for &(turns, st) in rs.iter() {
            v.push((*run, *task, full(task), turns, st));
        }
        if full(task) < 8 {
            continue;
        }
        // Native rollouts at T = 2 (25%) and T = 4 (50%), told their budget.
        for (b, k) in [(2u32, 0usize), (4, 1)] {
            for &(turns, st) in rs.iter().skip(k) {
                let st = st.filter(|&s| s <= b);
                v.push((*run, *task, b, turns.min(b), st));
            }
        }
    }
    v
}

fn write_set(dir: &std::path::Path) -> std::path::PathBuf {
    let mut lines = vec![json!({"kind": "run", "run": "base", "method": "base"})];
    for (i, (run, task, budget, turns, st)) in rollouts().into_iter().enumerate() {
        let mut r = json!({
            "run": run, "benchmark": "b", "task": task, "budget": budget, "max_budget": full(task),
            "success": st.is_some(), "turns": turns, "sample": i,
            "steps": (1..=turns).map(|t| json!({"turn": t, "output_tokens": 10 * t})).collect::<Vec<_>>(),
        });
        if let Some(s) = st {
            r["success_turn"] = json!(s);
        }
        if run == "rl" {
            r["method"] = json!("grpo");
        }
        lines.push(r);
    }
    let f = dir.join("logs.jsonl");
    write_lines(&f, &lines);
    f
}

fn t_at(level: u32, task: &str) -> u32 {
    (level * full(task)).div_ceil(100).max(1)
}

/// The rollouts of a (run, task) in a cell: native at budget T, truncated
/// at the full budget when T < 8.
fn cell(run: &str, task: &str, level: u32, mode: Mode) -> Vec<(u32, Option<u32>)> {
    let t = t_at(level, task);
    let budget = match mode {
        Mode::Native => t,
        Mode::Truncated if t < full(task) => full(task),
        Mode::Truncated => return Vec::new(),
    };
    rollouts()
        .into_iter()
        .filter(|r| r.0 == run && r.1 == task && r.2 == budget)
        .map(|r| (r.3, r.4))
        .collect()
}

const TASKS: [&str; 6] = ["t1", "t2", "t3", "t4", "t5", "t6"];

#[test]
fn shares_rollouts_costs_and_report_agree_everywhere() {
    let d = temp_dir("one_source");
    let f = write_set(&d);
    let report = audit_json(&f, &d.join("out"), &["--resamples", "50"]);
    let set = load(std::slice::from_ref(&f), &LoadOptions::default()).unwrap();
    let audit = run_audit(&set, &Settings::default()).unwrap();
    let id = |s: &str| set.strings.get(s).unwrap();
    let mut checked = 0;
    for level in [25u32, 50, 75, 100] {
        for mode in [Mode::Native, Mode::Truncated] {
            for k in [1usize, 2, 4] {
                // Independently: per task, each run's (n, c) and Pass@K.
                let mut diffs = Vec::new();
                for task in TASKS {
                    let t = t_at(level, task);
                    let pass = |run: &str| {
                        let r = cell(run, task, level, mode);
                        let c = r.iter().filter(|x| x.1.is_some_and(|s| s <= t)).count();
                        (r.len() >= k && !r.is_empty()).then(|| pass_at_k_ref(r.len(), c, k))
                    };
                    if let (Some(b), Some(r)) = (pass("base"), pass("rl")) {
                        diffs.push(r - b);
                    }
                }
                let row = rows(
                    &report,
                    "advantage",
                    &[
                        ("k", json!(k)),
                        ("level", json!(level)),
                        ("t_mode", json!(mode.name())),
                    ],
                );
                if diffs.is_empty() {
                    assert!(row.is_empty(), "{level}% {mode:?} K={k}");
                    continue;
                }
                let want = diffs.iter().sum::<f64>() / diffs.len() as f64;
                close(&row[0]["delta"], want);
                assert_eq!(row[0]["tasks"], diffs.len());
                // The drill-down's shares add up to the same Δ, over the same tasks.
                let shares = delta_by_task(
                    &audit.agg,
                    id("b"),
                    (id("base"), id("rl")),
                    k as u64,
                    level,
                    mode,
                );
                let with: Vec<f64> = shares.iter().filter_map(|s| s.contribution).collect();
                assert_eq!(with.len(), diffs.len());
                assert!(
                    (with.iter().sum::<f64>() - want).abs() < 1e-12,
                    "{level}% {mode:?} K={k}"
                );
                checked += 1;
            }
        }
    }
    assert!(checked >= 10);
    // Cost points: K × the mean cost of one attempt (u turns at T: the
    // success turn when solved within T, else min(T, turns)), averaged over
    // the tasks the cell's Pass includes — so a point's cost and pass come
    // from one task set.
    for p in report["cost_frontier"].as_array().unwrap() {
        let (run, k, level) = (
            p["run"].as_str().unwrap(),
            p["k"].as_u64().unwrap() as usize,
            p["level"].as_u64().unwrap() as u32,
        );
        let mode = if p["t_mode"] == "native" {
            Mode::Native
        } else {
            Mode::Truncated
        };
        let costs: Vec<f64> = TASKS
            .iter()
            .map(|task| (t_at(level, task), cell(run, task, level, mode)))
            .filter(|(_, r)| !r.is_empty() && r.len() >= k)
            .map(|(t, r)| {
                let mean = r
                    .iter()
                    .map(|(turns, st)| match st {
                        Some(s) if *s <= t => *s as f64,
                        _ => (*turns).min(t) as f64,
                    })
                    .sum::<f64>()
                    / r.len() as f64;
                k as f64 * mean
            })
            .collect();
        close(&p["cost"], costs.iter().sum::<f64>() / costs.len() as f64);
        // The point's pass is its Pass@(K,T) cell's value over those same
        // tasks: the Cost panel shows that cell's interval and n beside it.
        let cell = rows(
            &report,
            "pass_at_kt",
            &[
                ("run", json!(run)),
                ("k", json!(k)),
                ("level", json!(level)),
                ("t_mode", p["t_mode"].clone()),
            ],
        );
        assert_eq!(cell.len(), 1, "{p}");
        assert_eq!(cell[0]["tasks"], costs.len(), "{p}");
        assert_eq!(cell[0]["value"], p["pass"], "{p}");
    }
    assert!(report["cost_frontier"]
        .as_array()
        .unwrap()
        .iter()
        .any(|p| p["t_mode"] == "truncated"));
}

/// No Pass@(1,t) point lies above the upper bound at the same t.
fn curve_below_bound(r: &Value) {
    let bound = r["upper_bound_curve"].as_array().unwrap();
    assert!(!bound.is_empty());
    for p in r["pass_curve"].as_array().unwrap() {
        if p["k"] != 1 || p["value"].is_null() {
            continue;
        }
        let u = bound
            .iter()
            .find(|u| u["benchmark"] == p["benchmark"] && u["t"] == p["t"])
            .unwrap_or_else(|| panic!("no bound at {p}"));
        assert!(
            p["value"].as_f64().unwrap() <= u["value"].as_f64().unwrap() + 1e-12,
            "{p} above {u}"
        );
    }
}

#[test]
fn the_upper_bound_curve_bounds_every_pass_curve() {
    let d = temp_dir("upper_curve");
    let f = write_set(&d);
    let r = audit_json(&f, &d.join("out"), &["--resamples", "20"]);
    curve_below_bound(&r);
    // By hand for this set (no min_turns: empirical): tasks solved within t
    // by any rollout — t1 at 1, t2 at 2, t3 at 1, t4 at 3, t5 at 2, t6 at 1
    // (its budget is 2: taken at min(t, 2)).
    let want = [(1, 3.0 / 6.0), (2, 5.0 / 6.0), (3, 1.0), (8, 1.0)];
    for (t, v) in want {
        close(
            &one(&r, "upper_bound_curve", &[("t", json!(t))])["value"],
            v,
        );
    }
}

#[test]
fn the_demo_curve_stays_under_its_bound() {
    let d = temp_dir("upper_curve_demo");
    let o = rl_audit(&[
        "--headless",
        "--out",
        d.join("out").to_str().unwrap(),
        "--resamples",
        "20",
    ]);
    assert!(o.status.success());
    let r: Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("out/report.json")).unwrap()).unwrap();
    curve_below_bound(&r);
}

#[test]
fn the_default_grid_has_a_number_in_every_cell_with_rollouts() {
    use rl_audit::tui::select::Selection;
    use rl_audit::tui::views::budget::grid;
    // rLLM eval folders: only full-budget rollouts (no native cells below 100%).
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let set = load(
        &[root.join("tests/data/rllm/eval")],
        &LoadOptions::default(),
    )
    .unwrap();
    let settings = Settings {
        compare: vec![("Qwen/Qwen3-4B".into(), "Qwen3-4B-grpo".into())],
        ..Default::default()
    };
    let audit = run_audit(&set, &settings).unwrap();
    let l = Loaded {
        set: Arc::new(set),
        audit,
    };
    let g = grid(&l.audit, &Selection::default());
    assert_eq!(g.rows.len(), l.audit.pass.ks.len());
    for (i, r) in g.rows.iter().enumerate() {
        for (j, c) in r.cells.iter().enumerate().skip(1) {
            let level = l.audit.settings.levels[j - 1];
            let k = l.audit.pass.ks[i];
            // Preferred: truncated below 100% (no native rollouts there), native at 100%.
            let want = l
                .audit
                .pass
                .advantage
                .iter()
                .find(|a| {
                    a.k == k
                        && a.level == level
                        && a.mode
                            == if level == 100 {
                                Mode::Native
                            } else {
                                Mode::Truncated
                            }
                })
                .unwrap();
            assert_eq!(
                c.text,
                format!(
                    "{:.1}→{:.1} {:+.1} {} {}",
                    100.0 * want.base_pass,
                    100.0 * want.rl_pass,
                    100.0 * want.delta,
                    if level == 100 { "n" } else { "t" },
                    match want.test.verdict.name() {
                        "ahead" => "▲",
                        "flip" => "▼",
                        "equivalent" => "≈",
                        "inconclusive" => "?",
                        _ => "·",
                    }
                ),
                "K={k} {level}%"
            );
        }
    }
}
