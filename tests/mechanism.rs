//! SPEC §2.4–§2.7 on hand-built logs: likelihood pairing, training slopes,
//! the six BudgetMix rules and gains, and the cost frontier. Every expected
//! value is worked out by hand in the comments.

mod common;
use common::*;
use serde_json::{json, Value};

/// A successful full-budget trajectory with steps of (logp base, logp rl, tokens).
fn lt(run: &str, task: &str, steps: &[(f64, f64, u64)]) -> Value {
    let mut t = traj(run, "b", task, 10, 10, Some(steps.len() as u32));
    t["steps"] = steps
        .iter()
        .enumerate()
        .map(|(i, (b, r, tok))| json!({"turn": i + 1, "logp": {"base": b, "rl": r}, "output_tokens": tok}))
        .collect();
    t
}

#[test]
fn likelihood_by_hand() {
    let d = temp_dir("likelihood_hand");
    let v = vec![
        json!({"kind": "run", "run": "base", "method": "base"}),
        json!({"kind": "run", "run": "rl", "method": "grpo"}),
        // Task L1. r1: len 100, LLR (−1+2)+(−1+3) = 3; r2: len 109, LLR 2.
        lt("rl", "L1", &[(-2.0, -1.0, 50), (-3.0, -1.0, 50)]),
        lt("rl", "L1", &[(-4.0, -2.0, 109)]),
        // b1: len 95, LLR −2; b2: len 120, LLR 0.
        lt("base", "L1", &[(-1.0, -3.0, 95)]),
        lt("base", "L1", &[(-1.0, -1.0, 120)]),
        // Task L2: r3 len 100 LLR 1; b3 len 100 LLR 0 and b4 len 100 LLR 5 tie on length;
        // line order picks b3.
        lt("rl", "L2", &[(-2.0, -1.0, 100)]),
        lt("base", "L2", &[(-2.0, -2.0, 100)]),
        lt("base", "L2", &[(-6.0, -1.0, 100)]),
        // Ignored: a failure, and a success below the full budget.
        json!({"run": "rl", "benchmark": "b", "task": "L1", "budget": 10, "max_budget": 10, "success": false,
               "steps": [{"turn": 1, "logp": {"base": -50.0, "rl": -1.0}, "output_tokens": 100}]}),
        json!({"run": "rl", "benchmark": "b", "task": "L1", "budget": 5, "max_budget": 10, "success": true,
               "steps": [{"turn": 1, "logp": {"base": -50.0, "rl": -1.0}, "output_tokens": 100}]}),
    ];
    write_lines(&d.join("l.jsonl"), &v);
    let r = audit_json(&d.join("l.jsonl"), &d.join("out"), &["--resamples", "400"]);
    let l = one(&r, "likelihood", &[("rl", json!("rl"))]);
    // Step NLL under base: base-produced 1, 1, 2, 6; RL-produced 2, 3, 4, 2.
    close(&l["step_nll"]["base"]["mean"], 2.5);
    close(&l["step_nll"]["base"]["median"], 1.5);
    assert_eq!(l["step_nll"]["base"]["n"], 4);
    close(&l["step_nll"]["rl"]["mean"], 2.75);
    close(&l["step_nll"]["rl"]["median"], 2.5);
    // 50 bins over [1, 6]: only bin 10 (value 2) is shared: min(1/4, 2/4).
    close(&l["overlap"], 0.25);
    // LLR: base −2, 0, 0, 5; RL 3, 2, 1.
    close(&l["llr"]["base"]["mean"], 0.75);
    close(&l["llr"]["base"]["median"], 0.0);
    close(&l["llr"]["rl"]["mean"], 2.0);
    // Pairs: (r1, b1) |5| within 10 of 100; (r2, b2) |11|·10 ≤ 120; (r3, b3).
    // d = 3 − (−2), 2 − 0, 1 − 0.
    let lm = &l["length_matched"];
    assert_eq!(lm["tasks"], 2);
    assert_eq!(lm["pairs"], 3);
    close(&lm["mean_diff"], 8.0 / 3.0);
}

#[test]
fn pairing_rule_ties_reuse_and_boundary() {
    use rl_audit::analysis::likelihood::{length_matched_pairs, Scored};
    use rl_audit::schema::Loc;
    let s = |line: u64, len: u64| Scored {
        loc: Loc::new(0, line),
        len,
        llr: 0.0,
    };
    // Exactly 10% of the longer (100 vs 110: 10·10 ≤ 110) pairs; 100 vs 112 does not.
    assert_eq!(
        length_matched_pairs(&[s(1, 100)], &[s(2, 110)]),
        vec![(0, 0)]
    );
    assert!(length_matched_pairs(&[s(1, 100)], &[s(2, 112)]).is_empty());
    // One RL trajectory, two equally close base ones: the earlier base line wins, once.
    assert_eq!(
        length_matched_pairs(&[s(5, 100)], &[s(9, 100), s(7, 100)]),
        vec![(0, 1)]
    );
    // Greedy by closeness: r0–b1 (diff 0) first, then r1 takes b0 (diff 3), never reusing b1.
    assert_eq!(
        length_matched_pairs(&[s(1, 50), s(2, 53)], &[s(3, 56), s(4, 50)]),
        vec![(0, 1), (1, 0)]
    );
}

#[test]
fn dynamics_slopes_and_divergence() {
    let d = temp_dir("dynamics_hand");
    let mut v = Vec::new();
    // run r: r_multi 1, 3, 2 at steps 0, 1, 2 (slope 0.5, CI 0.5 ± 12.7062·0.8660).
    for (s, m, si) in [(0, 1.0, 3.0), (1, 3.0, 2.0), (2, 2.0, 1.0)] {
        v.push(json!({"kind": "checkpoint", "run": "r", "step": s, "r_multi": m, "r_single": si}));
    }
    // run d: r_multi 0, 1, 2.1 → slope 1.05, SSE 1/600, se 0.028868, CI [0.6832, 1.4168];
    // r_single mirrored: CI below 0 → divergent. Logged out of step order on purpose.
    for (s, m, si) in [(2, 2.1, -0.1), (0, 0.0, 2.0), (1, 1.0, 1.0)] {
        v.push(json!({"kind": "checkpoint", "run": "d", "step": s, "r_multi": m, "r_single": si}));
    }
    write_lines(&d.join("c.jsonl"), &v);
    let r = audit_json(&d.join("c.jsonl"), &d.join("out"), &[]);
    let m = one(
        &r,
        "dynamics",
        &[("run", json!("r")), ("metric", json!("r_multi"))],
    );
    assert_eq!(m["checkpoints"], 3);
    close(&m["first"], 1.0);
    close(&m["last"], 2.0);
    close(&m["change"], 1.0);
    close(&m["slope"], 0.5);
    let half = 12.706_204_736_174_7 * (0.75f64).sqrt();
    assert!((m["slope_ci"][0].as_f64().unwrap() - (0.5 - half)).abs() < 1e-6);
    let dm = one(
        &r,
        "dynamics",
        &[("run", json!("d")), ("metric", json!("r_multi"))],
    );
    close(&dm["first"], 0.0);
    close(&dm["slope"], 1.05);
    let se = (1.0f64 / 600.0 / 2.0).sqrt();
    assert!(
        (dm["slope_ci"][0].as_f64().unwrap() - (1.05 - 12.706_204_736_174_7 * se)).abs() < 1e-6
    );
    assert_eq!(
        one(&r, "divergence", &[("run", json!("d"))])["divergent"],
        true
    );
    assert_eq!(
        one(&r, "divergence", &[("run", json!("r"))])["divergent"],
        false
    );
}

fn train(
    task: &str,
    budget: u32,
    max: u32,
    group: Option<&str>,
    success_turn: Option<u32>,
    turns: u32,
) -> Value {
    let mut t = json!({"run": "bm", "method": "budgetmix", "benchmark": "b", "task": task, "budget": budget,
                       "max_budget": max, "success": success_turn.is_some(), "turns": turns, "train_step": 1});
    if let Some(g) = group {
        t["group"] = json!(g);
    }
    if let Some(s) = success_turn {
        t["success_turn"] = json!(s);
    }
    t
}

fn disclosed(mut t: Value, budget: u32, turns: u32, bad_turn: Option<u32>) -> Value {
    t["steps"] = (1..=turns)
        .map(|turn| {
            let rem = if Some(turn) == bad_turn {
                budget - turn
            } else {
                budget - turn + 1
            };
            json!({"turn": turn, "budget_total": budget, "budget_remaining": rem})
        })
        .collect();
    t
}

#[test]
fn budgetmix_rules_each_fault_once() {
    let d = temp_dir("budgetmix_hand");
    let mut v = vec![
        json!({"kind": "run", "run": "grpo", "method": "grpo"}),
        json!({"kind": "run", "run": "base", "method": "base"}),
    ];
    // line 3–4: group g1, budget 5, disclosed correctly, not out of budget.
    v.push(disclosed(
        train("t", 5, 10, Some("g1"), None, 2),
        5,
        2,
        None,
    ));
    v.push(disclosed(
        train("t", 5, 10, Some("g1"), None, 2),
        5,
        2,
        None,
    ));
    // line 5: g2 budget 3, out of budget with reward 0 (rule 5 in order).
    let mut t = disclosed(train("t", 3, 10, Some("g2"), None, 3), 3, 3, None);
    t["reward"] = json!(0.0);
    v.push(t);
    // line 6: g2's second rollout runs with budget 4: group inconsistent.
    v.push(train("t", 4, 10, Some("g2"), Some(4), 4));
    // line 7: g3 budget 7, turn 1 discloses the wrong remaining budget.
    v.push(disclosed(
        train("t", 7, 10, Some("g3"), Some(1), 1),
        7,
        1,
        Some(1),
    ));
    // line 8: no group, B = 20, budget 5 is not a candidate (2, 4, …, 20); out of budget, no reward.
    v.push(train("u", 5, 20, None, None, 5));
    // line 9: g4 budget 2, success at turn 3: success past the budget.
    v.push(train("t", 2, 10, Some("g4"), Some(3), 3));
    // Evaluation for the gain table: bm native at T=5 solves 1/2; grpo's full-budget
    // rollouts cut at 5 solve 1/2 → gain 0 at 50%; at 100% bm 1/2, grpo 2/2 → −0.5.
    v.push(json!({"run": "bm", "benchmark": "b", "task": "e", "budget": 5, "max_budget": 10, "success": true, "turns": 3, "success_turn": 3}));
    v.push(json!({"run": "bm", "benchmark": "b", "task": "e", "budget": 5, "max_budget": 10, "success": false, "turns": 5}));
    v.push(json!({"run": "bm", "benchmark": "b", "task": "e", "budget": 10, "max_budget": 10, "success": true, "turns": 9}));
    v.push(json!({"run": "bm", "benchmark": "b", "task": "e", "budget": 10, "max_budget": 10, "success": false, "turns": 10}));
    v.push(json!({"run": "grpo", "benchmark": "b", "task": "e", "budget": 10, "max_budget": 10, "success": true, "turns": 4}));
    v.push(json!({"run": "grpo", "benchmark": "b", "task": "e", "budget": 10, "max_budget": 10, "success": true, "turns": 8}));
    write_lines(&d.join("bm.jsonl"), &v);
    let r = audit_json(
        &d.join("bm.jsonl"),
        &d.join("out"),
        &["--levels", "50,100", "--resamples", "50"],
    );
    let b = one(&r, "budgetmix", &[("run", json!("bm"))]);
    let rules = b["rules"].as_array().unwrap();
    let names: Vec<&str> = rules.iter().map(|r| r["rule"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "candidate_budgets",
            "uniform_sampling",
            "group_consistency",
            "budget_disclosure",
            "zero_reward_out_of_budget",
            "no_success_past_budget"
        ]
    );
    let f = d.join("bm.jsonl").display().to_string();
    let expect = [
        (7, 1, Some(8)), // 7 rollouts; u's budget 5 ∉ {2, 4, …, 20}
        (5, 0, None),    // 5 groups; not flagged
        (5, 1, Some(6)), // g2 mixes budgets 3 and 4
        (8, 1, Some(7)), // 2+2+3+1 steps; g3's step
        (2, 1, Some(8)), // g2 (reward 0) and u (no reward)
        (3, 1, Some(9)), // successes at 4 ≤ 4, 1 ≤ 7, 3 > 2
    ];
    for (rule, (checked, violations, line)) in rules.iter().zip(expect) {
        assert_eq!(rule["checked"], checked, "{rule}");
        assert_eq!(rule["violations"], violations, "{rule}");
        match line {
            Some(l) => assert_eq!(rule["examples"], json!([format!("{f}:{l}")]), "{rule}"),
            None => assert_eq!(rule["examples"], json!([])),
        }
    }
    // In-set draws 5, 3, 7, 2 with B = 10: expected 0.4 per level;
    // X² = 4·0.6²/0.4 + 6·0.4²/0.4 = 6, df 9, p = chi2.sf(6, 9) = 0.739918.
    assert!((rules[1]["p_value"].as_f64().unwrap() - 0.739_918_29).abs() < 1e-6);
    for rule in &rules[2..] {
        assert_eq!(rule["p_value"], Value::Null);
    }
    let gains = b["gains"].as_array().unwrap();
    assert_eq!(gains.len(), 2);
    close(&gains[0]["gain"], 0.0);
    assert_eq!(
        gains[0]["modes"],
        json!({"bm": "native", "grpo": "truncated"})
    );
    assert_eq!(gains[0]["vs"], "grpo");
    close(&gains[1]["gain"], -0.5);
    assert_eq!(
        b["mean_gain"],
        json!([{"level": 50, "gain": 0.0}, {"level": 100, "gain": -0.5}])
    );

    // The gate trips on the violations.
    let o = rl_audit(&[
        "--headless",
        d.join("bm.jsonl").to_str().unwrap(),
        "--out",
        d.join("out2").to_str().unwrap(),
        "--resamples",
        "20",
        "--fail-on",
        "budgetmix",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.matches("gate tripped: budgetmix").count(), 5, "{err}");

    // The same run declaring method grpo, audited by --audit: its gains
    // are still against the other RL run, never against itself.
    let renamed: Vec<Value> = v
        .iter()
        .map(|r| {
            let mut r = r.clone();
            if r["method"] == "budgetmix" {
                r["method"] = json!("grpo");
            }
            r
        })
        .collect();
    write_lines(&d.join("named.jsonl"), &renamed);
    let r = audit_json(
        &d.join("named.jsonl"),
        &d.join("named"),
        &["--levels", "50,100", "--resamples", "50", "--audit", "bm"],
    );
    let named = one(&r, "budgetmix", &[("run", json!("bm"))]);
    assert_eq!(named["gains"], b["gains"]);
    // The same rules, the examples naming this file.
    assert_eq!(
        named["rules"].to_string(),
        b["rules"].to_string().replace("bm.jsonl", "named.jsonl")
    );
    // grpo audited by name: no other full-budget RL run to gain over (not
    // itself), and no training rollouts for its rules, both said.
    let r = audit_json(
        &d.join("bm.jsonl"),
        &d.join("grpo"),
        &["--levels", "50,100", "--resamples", "50", "--audit", "grpo"],
    );
    let g = one(&r, "budgetmix", &[("run", json!("grpo"))]);
    assert_eq!(g["gains"], json!([]));
    let md = std::fs::read_to_string(d.join("grpo/report.md")).unwrap();
    for note in [
        "> Note: grpo has no training rollouts (trajectories with train_step): its rules check nothing\n",
        "> Note: b: no gain table for grpo: no full-budget RL run (method neither base nor budgetmix) (name one with --budgetmix-vs RUN)\n",
    ] {
        assert!(md.contains(note), "{note}\n{md}");
    }
    // --budgetmix-vs naming the audited run itself: no gains, said; naming
    // no run of the logs: a usage error, and no report.
    let r = audit_json(
        &d.join("bm.jsonl"),
        &d.join("self"),
        &[
            "--levels",
            "50,100",
            "--resamples",
            "50",
            "--budgetmix-vs",
            "bm",
        ],
    );
    assert_eq!(
        one(&r, "budgetmix", &[("run", json!("bm"))])["gains"],
        json!([])
    );
    let md = std::fs::read_to_string(d.join("self/report.md")).unwrap();
    assert!(md.contains("> Note: b: no gain table for bm: --budgetmix-vs names bm itself\n"));
    let o = rl_audit(&[
        "--headless",
        d.join("bm.jsonl").to_str().unwrap(),
        "--out",
        d.join("nope").to_str().unwrap(),
        "--budgetmix-vs",
        "nope",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        "rl-audit: --budgetmix-vs nope: no such run in the logs (runs: bm, grpo)\n"
    );
    assert!(!d.join("nope/report.json").exists());
}

fn ct(bench: &str, run: &str, budget: u32, success_turn: Option<u32>, turns: u32) -> Value {
    let mut t = json!({"run": run, "benchmark": bench, "task": "c1", "budget": budget, "max_budget": 4,
                       "success": success_turn.is_some(), "turns": turns});
    if let Some(s) = success_turn {
        t["success_turn"] = json!(s);
    }
    t
}

#[test]
fn cost_frontier_and_winners_by_hand() {
    let d = temp_dir("cost_hand");
    let mut v = Vec::new();
    for bench in ["x", "y"] {
        // a: full budget 4: [success 1, fail after 4]; native at T=2: [success 2, fail after 2].
        v.push(ct(bench, "a", 4, Some(1), 1));
        v.push(ct(bench, "a", 4, None, 4));
        v.push(ct(bench, "a", 2, Some(2), 2));
        v.push(ct(bench, "a", 2, None, 2));
    }
    // x: b strong (two successes at turn 1). y: b weak ([success 3, fail after 4]).
    v.push(ct("x", "b", 4, Some(1), 1));
    v.push(ct("x", "b", 4, Some(1), 1));
    v.push(ct("y", "b", 4, Some(3), 3));
    v.push(ct("y", "b", 4, None, 4));
    write_lines(&d.join("c.jsonl"), &v);
    let r = audit_json(
        &d.join("c.jsonl"),
        &d.join("out"),
        &["--levels", "50,100", "--k", "1,2", "--resamples", "20"],
    );
    let pt = |bench: &str, run: &str, k: u64, level: u32, mode: &str| {
        one(
            &r,
            "cost_frontier",
            &[
                ("benchmark", json!(bench)),
                ("run", json!(run)),
                ("k", json!(k)),
                ("level", json!(level)),
                ("t_mode", json!(mode)),
            ],
        )
        .clone()
    };
    // a at 100% (T=4): attempts cost 1 and 4 → 2.5 per attempt.
    let p = pt("x", "a", 1, 100, "native");
    close(&p["cost"], 2.5);
    close(&p["pass"], 0.5);
    assert_eq!(p["on_frontier"], false);
    close(&pt("x", "a", 2, 100, "native")["cost"], 5.0);
    // a native at 50% (T=2): 2 and 2; truncated at 2: min(1) and min(2, 4) → 1.5.
    close(&pt("x", "a", 1, 50, "native")["cost"], 2.0);
    let p = pt("x", "a", 1, 50, "truncated");
    close(&p["cost"], 1.5);
    assert_eq!(p["on_frontier"], true);
    let p = pt("x", "a", 2, 50, "truncated");
    close(&p["cost"], 3.0);
    close(&p["pass"], 1.0);
    assert_eq!(p["on_frontier"], true);
    assert_eq!(pt("x", "a", 2, 50, "native")["on_frontier"], false);
    // x, b: (1, 1) twice (100% native and 50% truncated): exact duplicates both stay on.
    assert_eq!(pt("x", "b", 1, 100, "native")["on_frontier"], true);
    assert_eq!(pt("x", "b", 1, 50, "truncated")["on_frontier"], true);
    assert_eq!(pt("x", "b", 2, 100, "native")["on_frontier"], false);
    // Winners on x: from cost 1 up, b with K=1; the tie goes to native (100%).
    let wx = rows(&r, "cost_winners", &[("benchmark", json!("x"))]);
    assert_eq!(wx.len(), 1);
    assert_eq!(wx[0]["run"], "b");
    assert_eq!(wx[0]["t_mode"], "native");
    assert_eq!(wx[0]["level"], 100);
    close(&wx[0]["from_cost"], 1.0);
    assert_eq!(wx[0]["to_cost"], Value::Null);
    // y: b's points are (3.5, .5), (7, 1), (2, 0), (4, 0); a K=1 at 50% truncated wins
    // from 1.5, and a K=2 at 50% truncated (pass 1) from 3 on.
    let wy = rows(&r, "cost_winners", &[("benchmark", json!("y"))]);
    assert_eq!(wy.len(), 2);
    assert_eq!(
        (wy[0]["run"].clone(), wy[0]["k"].clone()),
        (json!("a"), json!(1))
    );
    close(&wy[0]["from_cost"], 1.5);
    close(&wy[0]["to_cost"], 3.0);
    assert_eq!(
        (wy[1]["k"].clone(), wy[1]["t_mode"].clone()),
        (json!(2), json!("truncated"))
    );
    assert_eq!(wy[1]["to_cost"], Value::Null);
}

/// SPEC §2.7 with a price on tokens (`--cost turn=1,token=0.01`): an
/// attempt at T costs its u turns plus 0.01 × the output tokens of its
/// steps with turn ≤ u. Worked by hand below; at `token=0` the same logs
/// cost turns only (the steps are then not read at all).
#[test]
fn cost_frontier_prices_tokens_by_hand() {
    let d = temp_dir("cost_tokens");
    let step = |turn: u32, tok: u64| json!({"turn": turn, "output_tokens": tok});
    let rollout = |success: Option<u32>, turns: u32, toks: &[u64]| {
        let mut t = ct("x", "a", 4, success, turns);
        t["steps"] = json!(toks
            .iter()
            .enumerate()
            .map(|(i, &k)| step(i as u32 + 1, k))
            .collect::<Vec<_>>());
        t
    };
    // Full budget 4: solved at turn 2 (tokens 10, 20, then 30 after
    // success), and failed after 4 turns (tokens 40 each).
    let v = vec![
        rollout(Some(2), 3, &[10, 20, 30]),
        rollout(None, 4, &[40, 40, 40, 40]),
    ];
    write_lines(&d.join("c.jsonl"), &v);
    let cost_of = |price: &str, level: u32, mode: &str| {
        let r = audit_json(
            &d.join("c.jsonl"),
            &d.join(format!("out-{price}")),
            &[
                "--levels",
                "50,100",
                "--k",
                "1",
                "--resamples",
                "20",
                "--cost",
                price,
            ],
        );
        one(
            &r,
            "cost_frontier",
            &[
                ("run", json!("a")),
                ("k", json!(1)),
                ("level", json!(level)),
                ("t_mode", json!(mode)),
            ],
        )["cost"]
            .as_f64()
            .unwrap()
    };
    // T = 4: u = 2 (30 tokens) and u = 4 (160 tokens):
    // (2 + 0.3 + 4 + 1.6) / 2 = 3.95.
    let c = cost_of("turn=1,token=0.01", 100, "native");
    assert!((c - 3.95).abs() < 1e-9, "{c}");
    // Truncated at T = 2: u = 2 (30 tokens) and u = min(2, 4) = 2 (80):
    // (2 + 0.3 + 2 + 0.8) / 2 = 2.55.
    let c = cost_of("turn=1,token=0.01", 50, "truncated");
    assert!((c - 2.55).abs() < 1e-9, "{c}");
    // Tokens alone: (30 + 160) / 2 × 0.01 = 0.95; turns alone: 3.
    let c = cost_of("turn=0,token=0.01", 100, "native");
    assert!((c - 0.95).abs() < 1e-9, "{c}");
    assert_eq!(cost_of("turn=1,token=0", 100, "native"), 3.0);
}
