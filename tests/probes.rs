//! SPEC §2.2 and §2.3 on hand-built probe sets; expected values worked out
//! by hand in the comments (Wilson intervals from the textbook formula).

mod common;
use common::*;
use serde_json::{json, Value};

fn cand(run: &str, score: f64) -> Value {
    json!({"run": run, "action": "x", "score": score})
}

fn probe(
    task: &str,
    state: &str,
    source: &str,
    turn: u32,
    error: bool,
    cands: Vec<Value>,
) -> Value {
    json!({"kind": "probe", "benchmark": "b", "task": task, "state": state, "source": source,
           "turn": turn, "error": error, "candidates": cands})
}

fn runs() -> Vec<Value> {
    vec![
        json!({"kind": "run", "run": "base", "method": "base"}),
        json!({"kind": "run", "run": "rl", "method": "grpo"}),
    ]
}

/// Wilson 95% interval, written out independently of the crate.
fn wilson(k: f64, n: f64) -> (f64, f64) {
    let z: f64 = 1.959963984540054;
    let p = k / n;
    let c = (p + z * z / (2.0 * n)) / (1.0 + z * z / n);
    let h = z * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt() / (1.0 + z * z / n);
    (c - h, c + h)
}

fn matched_logs(dir: &std::path::Path) {
    let mut v = runs();
    v.push(probe(
        "t1",
        "s1",
        "base",
        1,
        false,
        vec![cand("base", 0.2), cand("base", 0.4), cand("rl", 0.5)],
    )); // +0.2 better
    v.push(probe(
        "t1",
        "s2",
        "rl",
        2,
        false,
        vec![cand("base", 0.6), cand("rl", 0.6)],
    )); // tie
    v.push(probe(
        "t2",
        "s3",
        "rl",
        3,
        false,
        vec![
            cand("base", 0.9),
            cand("base", 0.7),
            cand("rl", 0.1),
            cand("rl", 0.3),
            cand("rl", 0.2),
        ],
    )); // 0.2 − 0.8 = −0.6 worse
        // FrozenLake corridor S F G, one step left from the middle: left → Q 0, right → Q 1.
    let mut fl = probe(
        "t2",
        "s4",
        "base",
        4,
        false,
        vec![
            json!({"run": "base", "action": 0}),
            json!({"run": "rl", "action": 2}),
        ],
    );
    fl["frozenlake"] = json!({"map": ["SFG"], "pos": 1, "steps_left": 1, "slippery": false});
    v.push(fl); // +1 better
    v.push(probe("t3", "s5", "base", 1, false, vec![cand("base", 0.5)])); // rl absent → not a pair state
    v.push(probe(
        "t3",
        "s6",
        "other",
        5,
        false,
        vec![cand("base", 0.5), cand("rl", 0.5)],
    )); // tie
    write_lines(&dir.join("probes.jsonl"), &v);
}

#[test]
fn matched_states_by_hand() {
    let d = temp_dir("matched_hand");
    matched_logs(&d);
    let r = audit_json(
        &d.join("probes.jsonl"),
        &d.join("out"),
        &["--resamples", "300"],
    );
    let m = one(
        &r,
        "matched_states",
        &[("base", json!("base")), ("rl", json!("rl"))],
    );
    assert_eq!(m["states"], 5);
    assert_eq!(
        m["states_by_source"],
        json!({"base": 2, "rl": 2, "other": 1})
    );
    close(&m["better"], 0.4);
    close(&m["tie"], 0.4);
    close(&m["worse"], 0.2);
    let (lo, hi) = wilson(2.0, 5.0);
    close(&m["shares_ci"]["better"][0], lo);
    close(&m["shares_ci"]["better"][1], hi);
    close(&m["mean_diff"], (0.2 + 0.0 - 0.6 + 1.0 + 0.0) / 5.0);
    let by_turn = m["by_turn"].as_array().unwrap();
    // Turns 1, 2, 3, 4 and 5 (s6); turn 1 holds s1 only.
    assert_eq!(by_turn.len(), 5);
    close(&by_turn[0]["mean_diff"], 0.2);
    close(&by_turn[3]["better"], 1.0);
    // Median turn of [1, 2, 3, 4, 5] is 3: early = turns 1–3, late = 4–5.
    assert_eq!(m["early"]["states"], 3);
    close(&m["early"]["better"], 1.0 / 3.0);
    close(&m["early"]["mean_diff"], (0.2 + 0.0 - 0.6) / 3.0);
    assert_eq!(m["late"]["states"], 2);
    close(&m["late"]["mean_diff"], 0.5);
    // Every share per turn and early vs late with its Wilson interval
    // (SPEC §2.2; `better_ci`, a key added to schema version 1).
    let (lo, hi) = wilson(1.0, 3.0);
    close(&m["early"]["better_ci"][0], lo);
    close(&m["early"]["better_ci"][1], hi);
    let (lo, hi) = wilson(1.0, 2.0);
    close(&m["late"]["better"], 0.5);
    close(&m["late"]["better_ci"][0], lo);
    close(&m["late"]["better_ci"][1], hi);
    // One state a turn: better at turns 1 (s1) and 4, not at 2, 3 and 5;
    // one task, nothing to resample: each turn's mean_diff interval is
    // degenerate (SPEC §2).
    for (t, k) in by_turn.iter().zip([1.0, 0.0, 0.0, 1.0, 0.0]) {
        assert_eq!(t["states"], 1);
        assert_eq!(t["ci"], Value::Null, "{t}");
        assert_eq!(t["ci_degenerate"], true, "{t}");
        let (lo, hi) = wilson(k, 1.0);
        close(&t["better_ci"][0], lo.max(0.0));
        close(&t["better_ci"][1], hi.min(1.0));
    }
}

#[test]
fn balance_keeps_equal_sources() {
    let d = temp_dir("matched_balance");
    matched_logs(&d);
    let r = audit_json(
        &d.join("probes.jsonl"),
        &d.join("out"),
        &["--resamples", "100", "--balance"],
    );
    let m = one(&r, "matched_states", &[("rl", json!("rl"))]);
    assert_eq!(m["states"], 4);
    assert_eq!(m["states_by_source"], json!({"base": 2, "rl": 2}));
    close(&m["mean_diff"], (0.2 + 0.0 - 0.6 + 1.0) / 4.0);
    assert_eq!(r["settings"]["balance"], true);
}

fn ecand(run: &str, score: f64, corrects: Option<bool>, terminal: Option<bool>) -> Value {
    let mut c = cand(run, score);
    if let Some(x) = corrects {
        c["corrects"] = x.into();
    }
    if let Some(x) = terminal {
        c["terminal_success"] = x.into();
    }
    c
}

#[test]
fn error_recovery_by_hand() {
    let d = temp_dir("recovery_hand");
    let mut v = runs();
    // E1: base q 0.2, corrects 1/2, terminal 1/2; rl q 0.5, corrects 1, terminal 1 → better.
    v.push(probe(
        "e1",
        "x1",
        "base",
        2,
        true,
        vec![
            ecand("base", 0.1, Some(false), Some(false)),
            ecand("base", 0.3, Some(true), Some(true)),
            ecand("rl", 0.5, Some(true), Some(true)),
        ],
    ));
    // E2: base corrects 1; rl corrects 0 (one of two candidates has the field) → worse.
    v.push(probe(
        "e2",
        "x2",
        "rl",
        3,
        true,
        vec![
            ecand("base", 0.5, Some(true), None),
            ecand("rl", 0.4, Some(false), None),
            ecand("rl", 0.4, None, None),
        ],
    ));
    // E3: tie; terminal base 0, rl 1; no corrects.
    v.push(probe(
        "e2",
        "x3",
        "rl",
        3,
        true,
        vec![
            ecand("base", 0.2, None, Some(false)),
            ecand("rl", 0.2, None, Some(true)),
        ],
    ));
    write_lines(&d.join("p.jsonl"), &v);
    let r = audit_json(&d.join("p.jsonl"), &d.join("out"), &["--resamples", "300"]);
    let e = one(&r, "error_recovery", &[("rl", json!("rl"))]);
    assert_eq!(e["states"], 3);
    close(&e["better"], 1.0 / 3.0);
    let (lo, hi) = wilson(1.0, 3.0);
    close(&e["better_ci"][0], lo);
    close(&e["better_ci"][1], hi);
    close(&e["correction"]["base"]["value"], (0.5 + 1.0) / 2.0);
    close(&e["correction"]["rl"]["value"], (1.0 + 0.0) / 2.0);
    close(&e["correction_diff"]["value"], (0.5 - 1.0) / 2.0);
    close(&e["terminal_success"]["base"]["value"], 0.25);
    close(&e["terminal_success"]["rl"]["value"], 1.0);
    close(&e["terminal_success_diff"]["value"], 0.75);
    let by_source = e["by_source"].as_array().unwrap();
    assert_eq!(by_source[0]["source"], "base");
    assert_eq!(by_source[0]["states"], 1);
    close(&by_source[0]["correction"]["base"], 0.5);
    assert_eq!(by_source[1]["source"], "rl");
    assert_eq!(by_source[1]["states"], 2);
    close(&by_source[1]["better"], 0.0);
    close(&by_source[1]["terminal_success"]["rl"], 1.0);
    let by_turn = e["by_turn"].as_array().unwrap();
    assert_eq!(by_turn.len(), 2);
    assert_eq!(by_turn[1]["turn"], 3);
    // Each row's share with its Wilson interval: the rl-source states and
    // turn 3 are x2 (worse) and x3 (tie), 0 of 2 better.
    let (lo, hi) = wilson(0.0, 2.0);
    for row in [&by_source[1], &by_turn[1]] {
        close(&row["better"], 0.0);
        close(&row["better_ci"][0], lo.max(0.0));
        close(&row["better_ci"][1], hi);
    }
}

#[test]
fn missing_fields_leave_figures_out() {
    let d = temp_dir("recovery_missing");
    let mut v = runs();
    v.push(probe(
        "e1",
        "x1",
        "base",
        1,
        true,
        vec![cand("base", 0.1), cand("rl", 0.2)],
    ));
    write_lines(&d.join("p.jsonl"), &v);
    let r = audit_json(&d.join("p.jsonl"), &d.join("out"), &["--resamples", "50"]);
    let e = one(&r, "error_recovery", &[("rl", json!("rl"))]);
    assert_eq!(e["correction"], json!({}));
    assert_eq!(e["correction_diff"]["value"], Value::Null);
    assert_eq!(e["terminal_success"], json!({}));
    let md = std::fs::read_to_string(d.join("out/report.md")).unwrap();
    assert!(md.contains("no candidate has `corrects`"), "{md}");
}

#[test]
fn a_turns_mean_difference_has_its_own_cluster_bootstrap() {
    // Turn 2 holds four states of three tasks: t1 +0.25, t2 −0.5, t3 +0.125
    // and +0.375 (exact in binary). Its mean difference is the mean over
    // states, 0.0625, and its interval the cluster bootstrap over those
    // three tasks alone (SPEC §2.2: per turn too), as
    // `cluster_bootstrap` gives it for the clusters (sum, states) in task
    // order: (0.25, 1), (−0.5, 1), (0.5, 2).
    let d = temp_dir("matched_turn_ci");
    let mut v = runs();
    let diff = |task: &str, state: &str, turn: u32, base: f64, rl: f64| {
        probe(
            task,
            state,
            "base",
            turn,
            false,
            vec![cand("base", base), cand("rl", rl)],
        )
    };
    v.push(diff("t1", "a", 2, 0.0, 0.25));
    v.push(diff("t2", "b", 2, 0.5, 0.0));
    v.push(diff("t3", "c", 2, 0.0, 0.125));
    v.push(diff("t3", "d", 2, 0.0, 0.375));
    v.push(diff("t1", "e", 5, 0.0, 0.5));
    write_lines(&d.join("p.jsonl"), &v);
    let r = audit_json(&d.join("p.jsonl"), &d.join("out"), &["--resamples", "300"]);
    let m = one(&r, "matched_states", &[("rl", json!("rl"))]);
    let turn2 = m["by_turn"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["turn"] == 2)
        .unwrap()
        .clone();
    assert_eq!(turn2["states"], 4);
    close(&turn2["mean_diff"], 0.0625);
    use rl_audit::analysis::stats::{Bootstrap, Ci, Cluster};
    let clusters =
        [(0.25, 1.0), (-0.5, 1.0), (0.5, 2.0)].map(|(sum, weight)| Cluster { sum, weight });
    let alone = rl_audit::analysis::bootstrap::cluster_bootstrap(
        &clusters,
        &Bootstrap {
            resamples: 300,
            ..Default::default()
        },
    );
    let Ci::Interval(lo, hi) = alone.ci else {
        panic!("{alone:?}")
    };
    assert!(lo < 0.0625 && 0.0625 < hi, "{lo} {hi}");
    close(&turn2["ci"][0], lo);
    close(&turn2["ci"][1], hi);
}
