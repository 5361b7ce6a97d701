//! SPEC §4.5 (LLR by turn) and §4.6 (error recovery in ordinary rollouts),
//! each against an independent computation from the records written.

mod common;
use common::*;
use serde_json::{json, Value};

/// (run, task, success, steps as (logp base, logp rl, error)), budget 6.
type Rollout = (&'static str, usize, bool, Vec<(f64, f64, bool)>);

fn rollouts() -> Vec<Rollout> {
    let mut g = Mix(21);
    let mut out = Vec::new();
    for task in 0..8 {
        for run in ["base", "rl"] {
            for _ in 0..5 {
                let n = 2 + g.below(5);
                let steps: Vec<(f64, f64, bool)> = (0..n)
                    .map(|i| {
                        let lb = -g.unit() * 3.0;
                        let gap = if run == "rl" { 0.2 * i as f64 } else { -0.1 };
                        (lb, lb + gap + (g.unit() - 0.5), g.unit() < 0.25)
                    })
                    .collect();
                let ok = g.unit() < if run == "rl" { 0.6 } else { 0.4 };
                out.push((run, task, ok, steps));
            }
        }
    }
    out
}

fn write(dir: &std::path::Path) -> std::path::PathBuf {
    let mut lines = vec![json!({"kind": "run", "run": "base", "method": "base"})];
    for (i, (run, task, ok, steps)) in rollouts().into_iter().enumerate() {
        let st: Vec<Value> = steps
            .iter()
            .enumerate()
            .map(|(j, (lb, lr, err))| {
                json!({"turn": j + 1, "logp": {"base": lb, "rl": lr}, "error": err, "output_tokens": 5,
                       "action": if *err { "retry(x)" } else { "move(y)" }})
            })
            .collect();
        lines.push(
            json!({"run": run, "benchmark": "b", "task": format!("t{task}"), "budget": 6,
            "success": ok, "sample": i, "steps": st}),
        );
    }
    let f = dir.join("l.jsonl");
    write_lines(&f, &lines);
    f
}

#[test]
fn llr_by_turn_pools_the_steps_of_successful_rollouts() {
    let d = temp_dir("llr_turn");
    let r = audit_json(&write(&d), &d.join("out"), &["--resamples", "200"]);
    let rows = r["llr_by_turn"].as_array().unwrap();
    assert!(!rows.is_empty());
    for row in rows {
        let (run, turn) = (
            row["run"].as_str().unwrap(),
            row["turn"].as_u64().unwrap() as usize,
        );
        let diffs: Vec<f64> = rollouts()
            .iter()
            .filter(|x| x.0 == run && x.2 && x.3.len() >= turn)
            .map(|x| x.3[turn - 1].1 - x.3[turn - 1].0)
            .collect();
        assert_eq!(row["steps"], diffs.len(), "{row}");
        close(&row["mean"], diffs.iter().sum::<f64>() / diffs.len() as f64);
    }
}

#[test]
fn natural_recovery_counts_error_events_and_recovered_rollouts() {
    let d = temp_dir("natural");
    let r = audit_json(&write(&d), &d.join("out"), &["--resamples", "200"]);
    let all = rollouts();
    // Per run: events (error, not last), clean next steps; rollouts with an
    // event, and those that succeeded.
    let counts = |run: &str, task: Option<usize>| {
        let (mut ev, mut ok, mut with, mut rec) = (0u64, 0u64, 0u64, 0u64);
        for x in all
            .iter()
            .filter(|x| x.0 == run && task.is_none_or(|t| x.1 == t))
        {
            let flags: Vec<bool> = x.3.iter().map(|s| s.2).collect();
            let mut any = false;
            for i in 0..flags.len() - 1 {
                if flags[i] {
                    ev += 1;
                    ok += u64::from(!flags[i + 1]);
                    any = true;
                }
            }
            if any {
                with += 1;
                rec += u64::from(x.2);
            }
        }
        (ev, ok, with, rec)
    };
    for run in ["base", "rl"] {
        let row = one(&r, "natural_recovery", &[("run", json!(run))]);
        let (ev, ok, with, rec) = counts(run, None);
        assert_eq!(row["rollouts"], 40);
        assert_eq!(row["error_events"], ev);
        assert_eq!(row["rollouts_with_error"], with);
        close(&row["next_ok"], ok as f64 / ev as f64);
        close(&row["recovered"], rec as f64 / with as f64);
        assert!(row["next_ok_ci"].is_array());
    }
    // The pair: mean over tasks with events in both runs of RL's share − base's.
    let diff = |f: &dyn Fn((u64, u64, u64, u64)) -> (u64, u64)| {
        let v: Vec<f64> = (0..8)
            .filter_map(|t| {
                let (kb, nb) = f(counts("base", Some(t)));
                let (kr, nr) = f(counts("rl", Some(t)));
                (nb > 0 && nr > 0).then(|| kr as f64 / nr as f64 - kb as f64 / nb as f64)
            })
            .collect();
        (v.len(), v.iter().sum::<f64>() / v.len() as f64)
    };
    let row = &r["natural_recovery_diff"][0];
    let (n, next) = diff(&|c| (c.1, c.0));
    let (_, recovered) = diff(&|c| (c.3, c.2));
    assert_eq!(row["tasks"], n);
    close(&row["next_ok_diff"], next);
    close(&row["recovered_diff"], recovered);
}

#[test]
fn grep_splits_rollouts_by_their_actions() {
    let d = temp_dir("grep");
    let f = write(&d);
    let r = audit_json(
        &f,
        &d.join("out"),
        &["--resamples", "20", "--grep", r"retry\("],
    );
    // Independently: the records written, as text, grepped.
    let all = rollouts();
    for run in ["base", "rl"] {
        let row = one(&r, "grep", &[("run", json!(run))]);
        let mine: Vec<_> = all.iter().filter(|x| x.0 == run).collect();
        let hit = |x: &&Rollout| x.3.iter().any(|s| s.2); // the error steps act "retry(x)"
        assert_eq!(row["rollouts"], mine.len());
        assert_eq!(row["matching"], mine.iter().filter(|x| hit(x)).count());
        let split = |want: bool| {
            let v: Vec<f64> = (0..8)
                .filter_map(|t| {
                    let s: Vec<_> = mine.iter().filter(|x| x.1 == t && hit(x) == want).collect();
                    (!s.is_empty())
                        .then(|| s.iter().filter(|x| x.2).count() as f64 / s.len() as f64)
                })
                .collect();
            v.iter().sum::<f64>() / v.len() as f64
        };
        close(&row["pass_matching"], split(true));
        close(&row["pass_other"], split(false));
        assert_eq!(row["pattern"], r"retry\(");
    }
    let md = std::fs::read_to_string(d.join("out/report.md")).unwrap();
    assert!(md.contains("match a pattern (`--grep`)"));
    // No --grep, no key.
    let r = audit_json(&f, &d.join("plain"), &["--resamples", "20"]);
    assert!(r.get("grep").is_none());
    // A bad pattern is a usage error naming it.
    let o = rl_audit(&["--headless", f.to_str().unwrap(), "--grep", "retry("]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("\"retry(\" is not a regular expression"));
}
