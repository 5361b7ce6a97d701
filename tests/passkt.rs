//! Pass@(K,T), advantage, upper bound and mode gap on a hand-built log set;
//! every expected value below is worked out by hand in the comments.

mod common;
use common::*;
use serde_json::{json, Value};

use rl_audit::analysis::stats::{pass_all_k, pass_at_k};

#[test]
fn estimator_matches_humaneval_product_form() {
    assert!((pass_at_k(10, 3, 1) - 0.3).abs() < 1e-9);
    assert!((pass_at_k(10, 3, 5) - 0.916_666_666_7).abs() < 1e-9); // 1 − C(7,5)/C(10,5) = 1 − 21/252
    assert_eq!(pass_at_k(10, 3, 8), 1.0);
    assert!((pass_at_k(200, 10, 5) - 0.228_284).abs() < 1e-6);
    assert_eq!(pass_at_k(5, 0, 2), 0.0);
    // Pass^K = C(c,K)/C(n,K): C(3,2)/C(10,2) = 3/45.
    assert!((pass_all_k(10, 3, 2) - 3.0 / 45.0).abs() < 1e-12);
    assert_eq!(pass_all_k(10, 3, 4), 0.0);
}

/// base and rl on tasks t1..t3 (full budget 10) plus an oracle benchmark.
fn hand_logs(dir: &std::path::Path) {
    let mut v: Vec<Value> = vec![
        json!({"kind": "run", "run": "base", "method": "base"}),
        json!({"kind": "run", "run": "rl", "method": "grpo"}),
    ];
    let full = |run: &str, task: &str, turns: &[Option<u32>]| -> Vec<Value> {
        turns
            .iter()
            .map(|s| traj(run, "bench", task, 10, 10, *s))
            .collect()
    };
    v.extend(full("base", "t1", &[Some(3), Some(7), None, None]));
    v.extend(full("rl", "t1", &[Some(6), Some(8), Some(9), None]));
    v.extend(full("base", "t2", &[Some(2), Some(2), None, None]));
    v.extend(full("rl", "t2", &[Some(4), Some(6), Some(10), Some(10)]));
    v.extend(full("base", "t3", &[Some(1), None]));
    v.extend(full("rl", "t3", &[Some(5), None, None, None]));
    // rl told its budget: 4 native rollouts at T = 5 on t1.
    for s in [Some(5), Some(5), None, None] {
        v.push(traj("rl", "bench", "t1", 5, 10, s));
    }
    // Empirical benchmark: e1 (B = 8) solved only by a rollout told budget 2
    // (T at 25%), at turn 2; its full-budget rollout fails.
    v.push(traj("base", "emp", "e1", 2, 8, Some(2)));
    v.push(traj("base", "emp", "e1", 8, 8, None));
    // Oracle benchmark: min_turns 2 and 7, full budget 8.
    for (task, mt) in [("o1", 2), ("o2", 7)] {
        for run in ["base", "rl"] {
            let mut t = traj(run, "oracle", task, 8, 8, None);
            t["min_turns"] = mt.into();
            v.push(t);
        }
    }
    write_lines(&dir.join("logs.jsonl"), &v);
}

fn key(bench: &str, run: &str, k: u64, level: u32, mode: &str) -> Vec<(&'static str, Value)> {
    vec![
        ("benchmark", json!(bench)),
        ("run", json!(run)),
        ("k", json!(k)),
        ("level", json!(level)),
        ("t_mode", json!(mode)),
    ]
}

#[test]
fn pass_cells_advantage_and_bounds_by_hand() {
    let d = temp_dir("passkt_hand");
    hand_logs(&d);
    let r = audit_json(
        &d.join("logs.jsonl"),
        &d.join("out"),
        &["--resamples", "500"],
    );
    // Default K grid: most rollouts in a cell is 4 → K ∈ {1, 2, 4}.
    assert_eq!(r["settings"]["ks"], json!([1, 2, 4]));

    // Level 50 → T = 5, truncated (full-budget rollouts cut at 5).
    // base: t1 1/4, t2 2/4, t3 1/2 → K=1 mean (0.25+0.5+0.5)/3.
    let c = one(&r, "pass_at_kt", &key("bench", "base", 1, 50, "truncated"));
    close(&c["value"], (0.25 + 0.5 + 0.5) / 3.0);
    assert_eq!(c["tasks"], 3);
    assert_eq!(c["tasks_left_out"], 0);
    // K=2: t1 1−C(3,2)/C(4,2)=0.5, t2 1−1/6, t3 (n=2,c=1) 1.
    close(
        &one(&r, "pass_at_kt", &key("bench", "base", 2, 50, "truncated"))["value"],
        (0.5 + 5.0 / 6.0 + 1.0) / 3.0,
    );
    // K=4: t3 has only 2 rollouts → left out; t1 and t2 have n−c < 4 → 1.
    let c = one(&r, "pass_at_kt", &key("bench", "base", 4, 50, "truncated"));
    close(&c["value"], 1.0);
    assert_eq!(c["tasks"], 2);
    assert_eq!(c["tasks_left_out"], 1);
    // rl truncated at 5: t1 0/4, t2 1/4, t3 1/4.
    close(
        &one(&r, "pass_at_kt", &key("bench", "rl", 1, 50, "truncated"))["value"],
        0.5 / 3.0,
    );
    // Pass^2 of rl: t2 and t3 have c=1 < 2 → 0 everywhere.
    close(
        &one(&r, "pass_at_kt", &key("bench", "rl", 2, 50, "truncated"))["pass_all"],
        0.0,
    );
    // rl native at 50: only t1, 2 of 4 solved.
    let c = one(&r, "pass_at_kt", &key("bench", "rl", 1, 50, "native"));
    close(&c["value"], 0.5);
    assert_eq!(c["tasks"], 1);
    // Level 100: T = B, the full-budget rollouts count once, as native.
    assert!(rows(&r, "pass_at_kt", &key("bench", "rl", 1, 100, "truncated")).is_empty());
    close(
        &one(&r, "pass_at_kt", &key("bench", "rl", 1, 100, "native"))["value"],
        (0.75 + 1.0 + 0.25) / 3.0,
    );
    close(
        &one(&r, "pass_at_kt", &key("bench", "base", 1, 100, "native"))["value"],
        0.5,
    );

    // Advantage at 50% truncated, K=1: every task differs by −0.25 → a flip
    // whose bootstrap is degenerate (all resamples equal), so not significant.
    let adv = |k: u64, level: u32, mode: &str| {
        one(
            &r,
            "advantage",
            &[
                ("benchmark", json!("bench")),
                ("base", json!("base")),
                ("rl", json!("rl")),
                ("k", json!(k)),
                ("level", json!(level)),
                ("t_mode", json!(mode)),
            ],
        )
        .clone()
    };
    let a = adv(1, 50, "truncated");
    close(&a["delta"], -0.25);
    assert_eq!(a["tasks"], 3);
    assert_eq!(a["flip"], true);
    assert_eq!(a["significant_flip"], false);
    assert_eq!(a["ci"], Value::Null);
    assert_eq!(a["ci_degenerate"], true);
    // K=4: only t1 and t2 have ≥ 4 rollouts for both: (0 − 1 + 1 − 1)/2.
    let a = adv(4, 50, "truncated");
    close(&a["delta"], -0.5);
    assert_eq!(a["tasks"], 2);
    // U(5) = 1 (every task solved within 5 by some rollout); better run's Pass = 1.
    close(&a["headroom"], 0.0);
    // 100% native, K=1: (0.25 + 0.5 − 0.25)/3.
    let a = adv(1, 100, "native");
    close(&a["delta"], 0.5 / 3.0);
    assert_eq!(a["flip"], false);
    let ci = a["ci"].as_array().unwrap();
    assert!(ci[0].as_f64().unwrap() <= 0.5 / 3.0 && ci[1].as_f64().unwrap() >= 0.5 / 3.0);
    // No native rollouts of base at 50% → no native advantage row there.
    assert!(rows(
        &r,
        "advantage",
        &[("level", json!(50)), ("t_mode", json!("native"))]
    )
    .is_empty());

    // Mode gap of rl at 50%, K=1: native 0.5 − truncated 0 on t1.
    let g = one(
        &r,
        "mode_gap",
        &[("run", json!("rl")), ("k", json!(1)), ("level", json!(50))],
    );
    close(&g["diff"], 0.5);
    assert_eq!(g["tasks"], 1);

    // Upper bounds. bench is empirical: at 25% (T = 3) t1 (base solved at 3),
    // t2 (2) and t3 (1) are all solvable.
    let u = one(
        &r,
        "upper_bound",
        &[("benchmark", json!("bench")), ("level", json!(25))],
    );
    close(&u["value"], 1.0);
    assert_eq!(u["kind"], "empirical");
    // Solved within 2 turns is solved within 4, 6 and 8: the bound is monotone in T.
    for level in [25, 50, 75, 100] {
        close(
            &one(
                &r,
                "upper_bound",
                &[("benchmark", json!("emp")), ("level", json!(level))],
            )["value"],
            1.0,
        );
    }
    // oracle: min_turns 2 and 7 with B = 8: T = 2, 4, 6, 8.
    for (level, want) in [(25, 0.5), (50, 0.5), (75, 0.5), (100, 1.0)] {
        let u = one(
            &r,
            "upper_bound",
            &[("benchmark", json!("oracle")), ("level", json!(level))],
        );
        close(&u["value"], want);
        assert_eq!(u["kind"], "oracle");
    }
    // Truncated curve of rl, K=1: at t = 6, t1 1/4, t2 2/4, t3 1/4.
    let p = one(
        &r,
        "pass_curve",
        &[
            ("benchmark", json!("bench")),
            ("run", json!("rl")),
            ("k", json!(1)),
            ("t", json!(6)),
        ],
    );
    close(&p["value"], 1.0 / 3.0);
}

#[test]
fn pairs_follow_compare_flag() {
    let d = temp_dir("passkt_compare");
    hand_logs(&d);
    let r = audit_json(
        &d.join("logs.jsonl"),
        &d.join("out"),
        &[
            "--resamples",
            "50",
            "--compare",
            "rl:base",
            "--k",
            "1",
            "--levels",
            "50",
        ],
    );
    assert_eq!(
        r["settings"]["pairs"],
        json!([{"benchmark": "bench", "base": "rl", "rl": "base"}, {"benchmark": "oracle", "base": "rl", "rl": "base"}])
    );
    let a = one(
        &r,
        "advantage",
        &[
            ("benchmark", json!("bench")),
            ("t_mode", json!("truncated")),
        ],
    );
    close(&a["delta"], 0.25);
    assert_eq!(r["settings"]["ks"], json!([1]));
}

/// Pass@(K,T) hands on its report after each benchmark is counted, then
/// after each benchmark's intervals are drawn: each time the benchmarks in
/// so far, in order, with the complete report's rows for exactly those —
/// values final, and intervals final for the benchmarks whose intervals are
/// in (`Ci::Pending` for the others' until then: the values first) — their
/// §4.2 tests still the placeholder; the complete report is the same
/// whoever looks on.
#[test]
fn each_benchmarks_rows_are_handed_on_final_but_for_their_tests() {
    use rl_audit::analysis::multiplicity::CellTest;
    use rl_audit::analysis::passkt::{analyse, analyse_staged, PassInput, PassReport};
    use rl_audit::analysis::{resolve_pairs, Settings};
    // Three benchmarks of 16 tasks, base and RL, 6 rollouts a task at full
    // budget 10 and 6 at T = 5, simulated.
    let dir = temp_dir("passkt-staged");
    let mut v: Vec<Value> = vec![
        json!({"kind": "run", "run": "base", "method": "base"}),
        json!({"kind": "run", "run": "rl", "method": "grpo"}),
    ];
    let mut rng = Mix(11);
    let benches = ["alpha", "beta", "gamma"];
    for b in benches {
        for t in 0..16 {
            for (run, p) in [("base", 0.4), ("rl", 0.6)] {
                for budget in [10, 5] {
                    for _ in 0..6 {
                        let turn = (rng.unit() < p).then(|| 1 + rng.below(budget as usize) as u32);
                        let mut x = traj(run, b, &format!("t{t}"), budget, 10, turn);
                        // Each turn's output tokens: the token budgets too.
                        let turns = x["turns"].as_u64().unwrap();
                        x["steps"] = (1..=turns)
                            .map(|k| json!({"turn": k, "output_tokens": 20 + rng.below(80)}))
                            .collect();
                        v.push(x);
                    }
                }
            }
        }
    }
    write_lines(&dir.join("eval.jsonl"), &v);
    let set = rl_audit::schema::load(&[dir], &Default::default()).expect("the logs load");
    let settings = Settings {
        boot: rl_audit::analysis::stats::Bootstrap {
            resamples: 400,
            ..Default::default()
        },
        ..Default::default()
    };
    let agg = rl_audit::schema::frames::eval_aggregates(&set);
    let (pairs, _) = resolve_pairs(&set, &settings).expect("pairs");
    let input = PassInput {
        set: &set,
        agg: &agg,
    };
    let mut seen: Vec<PassReport> = Vec::new();
    let done = analyse_staged(&input, &pairs, &settings, &mut |r| seen.push(r));
    let plain = analyse(&input, &pairs, &settings);
    assert_eq!(format!("{done:?}"), format!("{plain:?}"));
    assert_eq!(done.benchmarks_in, benches);
    assert!(done.values_in.is_empty());
    // Every benchmark's values, then their token budgets (registered once
    // every benchmark's values are in: the first benchmark's values do not
    // wait for the token scan), then every benchmark's intervals.
    assert_eq!(seen.len(), 2 * benches.len() + 1);
    // The complete report's rows of the benchmarks in, tests reset.
    let of = |r: &PassReport, n: usize| {
        let inb = |b: &String| benches[..n].contains(&b.as_str());
        let mut adv: Vec<_> = r
            .advantage
            .iter()
            .filter(|x| inb(&x.benchmark))
            .cloned()
            .collect();
        for x in &mut adv {
            x.test = CellTest::DEGENERATE;
        }
        format!(
            "{:?} {adv:?} {:?} {:?} {:?} {:?} {:?}",
            r.cells
                .iter()
                .filter(|c| inb(&c.benchmark))
                .collect::<Vec<_>>(),
            r.mode_gap
                .iter()
                .filter(|g| inb(&g.benchmark))
                .collect::<Vec<_>>(),
            r.token
                .iter()
                .filter(|c| inb(&c.benchmark))
                .collect::<Vec<_>>(),
            r.token_budgets
                .iter()
                .filter(|(b, _)| inb(b))
                .collect::<Vec<_>>(),
            r.upper,
            r.ks,
        )
    };
    // The complete report with the intervals of the benchmarks after the
    // first `whole` pending, as a preview has them.
    let with_pending = |whole: usize| {
        use rl_audit::analysis::stats::Ci;
        let later = |b: &String| !benches[..whole].contains(&b.as_str());
        let pend = |c: &mut Ci| {
            if *c != Ci::Undefined {
                *c = Ci::Pending;
            }
        };
        let mut r = done.clone();
        r.cells
            .iter_mut()
            .filter(|c| later(&c.benchmark))
            .for_each(|c| pend(&mut c.ci));
        for x in r.advantage.iter_mut().filter(|x| later(&x.benchmark)) {
            pend(&mut x.ci);
            x.significant_flip = false;
        }
        r.mode_gap
            .iter_mut()
            .filter(|g| later(&g.benchmark))
            .for_each(|g| pend(&mut g.ci));
        r.token
            .iter_mut()
            .filter(|c| later(&c.benchmark))
            .for_each(|c| pend(&mut c.ci));
        r
    };
    let n = benches.len();
    for (i, r) in seen.iter().enumerate() {
        // (benchmarks with values, of them with intervals)
        let (shown, whole) = if i <= n {
            (i.min(n - 1) + 1, 0)
        } else {
            (n, i - n)
        };
        assert_eq!(r.benchmarks_in, benches[..whole], "hand-over {i}");
        assert_eq!(r.values_in, benches[whole..shown], "hand-over {i}");
        let mut want = with_pending(whole);
        if i < n {
            // No token budgets yet.
            want.token.clear();
            want.token_budgets.clear();
        }
        assert_eq!(i < n, r.token.is_empty(), "hand-over {i}");
        assert_eq!(of(r, shown), of(&want, shown), "hand-over {i}");
        assert!(r.curve.is_empty() || format!("{:?}", r.curve) == format!("{:?}", done.curve));
        // Nothing of the benchmarks to come.
        assert!(r
            .cells
            .iter()
            .all(|c| benches[..shown].contains(&c.benchmark.as_str())));
        assert!(r.advantage.iter().all(|x| x.test == CellTest::DEGENERATE));
    }
    // The check is not empty: each benchmark has cells and Δ rows, and the
    // complete report has tests.
    for b in benches {
        assert!(done.cells.iter().any(|c| c.benchmark == b));
        assert!(done.advantage.iter().any(|x| x.benchmark == b));
        assert!(done.token.iter().any(|x| x.benchmark == b));
        assert!(done.token_budgets.contains_key(b));
    }
    assert!(done.advantage.iter().any(|x| x.test.p_value.is_some()));
}

/// A full budget of 3,000 turns whose rollouts end within 6: SPEC's curve
/// has a row for every t to 3,000, each Pass@(K,t) as HumanEval's
/// estimator gives it from the rollouts solved within t (flat past the
/// last success turn), and the bound U(t) a row for every t too; the
/// report's bytes streamed (report_bytes) are those of the whole report
/// printed (report), and so are the curves' CSV tables, here and on the
/// demo.
#[test]
fn a_long_full_budget_gives_every_turn_its_row_and_the_same_bytes() {
    use rl_audit::analysis::{run_audit, Settings};
    let d = temp_dir("passkt_long_budget");
    let (runs, tasks, samples, budget) = (["base", "rl"], 6usize, 4usize, 3000u32);
    // Task i, sample j of run r: solved at turn (i + j + r) % 6 + 1 unless
    // (i + j + r) % 3 == 0.
    let solved_at = |r: usize, i: usize, j: usize| {
        let x = i + j + r;
        (!x.is_multiple_of(3)).then_some((x % 6 + 1) as u32)
    };
    let mut text = String::new();
    for (r, run) in runs.iter().enumerate() {
        text += &format!(
            "{{\"kind\": \"run\", \"run\": \"{run}\", \"method\": \"{}\"}}\n",
            if r == 0 { "base" } else { "grpo" }
        );
        for i in 0..tasks {
            for j in 0..samples {
                let mut v = traj(
                    run,
                    "b",
                    &format!("t{i}"),
                    budget,
                    budget,
                    solved_at(r, i, j),
                );
                v["sample"] = j.into();
                if v["success"] == false {
                    v["turns"] = 6.into();
                }
                text += &format!("{v}\n");
            }
        }
    }
    std::fs::write(d.join("a.jsonl"), &text).unwrap();
    let out = d.join("out");
    let r = audit_json(&d.join("a.jsonl"), &out, &["--resamples", "100"]);
    let ks = [1u64, 2, 4];
    assert_eq!(r["settings"]["ks"], json!(ks));
    let curve = r["pass_curve"].as_array().unwrap();
    assert_eq!(curve.len(), runs.len() * ks.len() * budget as usize);
    for (ri, run) in runs.iter().enumerate() {
        for k in ks {
            for t in [1u32, 2, 3, 5, 6, 7, 100, 2999, 3000] {
                let want = (0..tasks)
                    .map(|i| {
                        let c = (0..samples)
                            .filter(|&j| solved_at(ri, i, j).is_some_and(|s| s <= t))
                            .count();
                        pass_at_k_ref(samples, c, k as usize)
                    })
                    .sum::<f64>()
                    / tasks as f64;
                let row = rows(
                    &r,
                    "pass_curve",
                    &[("run", json!(run)), ("k", json!(k)), ("t", json!(t))],
                );
                assert_eq!(row.len(), 1);
                let got = row[0]["value"].as_f64().unwrap();
                assert!(
                    (got - want).abs() < 1e-12,
                    "{run} K={k} t={t}: {got} vs {want}"
                );
            }
        }
    }
    // U(t): no min_turns, so a task is solvable at t once any rollout of
    // any run solved it within t.
    let bound = r["upper_bound_curve"].as_array().unwrap();
    assert_eq!(bound.len(), budget as usize);
    for t in [1u32, 2, 4, 6, 3000] {
        let want = (0..tasks)
            .filter(|&i| {
                (0..runs.len())
                    .any(|ri| (0..samples).any(|j| solved_at(ri, i, j).is_some_and(|s| s <= t)))
            })
            .count() as f64
            / tasks as f64;
        let row = rows(&r, "upper_bound_curve", &[("t", json!(t))]);
        assert_eq!(row[0]["value"].as_f64().unwrap(), want, "U({t})");
        assert_eq!(row[0]["kind"], "empirical");
    }
    // The figure: every curve's changes are by t = 6 of 3,000, so T is on
    // a log scale from 1 (x = 70 px) to 3,000 (x = 510 px) — a turn t at
    // 70 + 440 ln t / ln 3000 — ticked at the powers of ten and 3,000, and
    // the axis says so.
    let svg = std::fs::read_to_string(out.join("figures/pass_curve_b_k1.svg")).unwrap();
    let px = |t: f64| 70.0 + 440.0 * t.ln() / 3000f64.ln();
    let ticks: Vec<String> = [1.0, 10.0, 100.0, 1000.0, 3000.0]
        .iter()
        .map(|&t| {
            format!(
                r#"<text x="{:.1}" y="383" text-anchor="middle">{t}</text>"#,
                px(t)
            )
        })
        .collect();
    let drawn: Vec<&str> = svg
        .lines()
        .filter(|l| l.ends_with("</text>") && l.contains(r#" y="383" "#))
        .collect();
    assert_eq!(drawn, ticks);
    assert!(svg.contains(
        ">T (turns, log scale; levels at % of the largest full budget; all flat from 6 to 3000)<"
    ));
    // Base's line: its vertices (t, Pass@(1,t)), each at its place.
    let line = svg.lines().find(|l| l.starts_with("<polyline")).unwrap();
    let points: Vec<(f64, f64)> = line
        .split("points=\"")
        .nth(1)
        .unwrap()
        .trim_end_matches("\"/>")
        .split(' ')
        .map(|p| {
            let (x, y) = p.split_once(',').unwrap();
            (x.parse().unwrap(), y.parse().unwrap())
        })
        .collect();
    let value = |t: u32| {
        let row = rows(
            &r,
            "pass_curve",
            &[("run", json!("base")), ("k", json!(1)), ("t", json!(t))],
        );
        row[0]["value"].as_f64().unwrap()
    };
    let ts: Vec<u32> = (1..=6)
        .filter(|&t| t == 1 || t == 6 || value(t) != value(t - 1) || value(t + 1) != value(t))
        .chain([3000])
        .collect();
    assert_eq!(points.len(), ts.len(), "{line}");
    for (&(x, y), &t) in points.iter().zip(&ts) {
        assert!((x - px(t as f64)).abs() <= 0.051, "t={t}: x {x}");
        // y: 0 at 365 px, 1 at 40.
        assert!(
            (y - (365.0 - 325.0 * value(t))).abs() <= 0.051,
            "t={t}: y {y}"
        );
    }
    // The bytes streamed are the report printed whole, here and on the demo.
    let settings = Settings {
        boot: rl_audit::analysis::stats::Bootstrap {
            resamples: 100,
            ..Default::default()
        },
        ..Default::default()
    };
    let long = rl_audit::schema::load(&[d.join("a.jsonl")], &Default::default()).unwrap();
    let demo = rl_audit::demo::load_demo(&Default::default()).unwrap();
    for set in [long, demo] {
        let audit = run_audit(&set, &settings).unwrap();
        let mut whole =
            serde_json::to_vec_pretty(&rl_audit::report::json::report(&set, &audit)).unwrap();
        whole.push(b'\n');
        assert!(rl_audit::report::json::report_bytes(&set, &audit).unwrap() == whole);
        // --csv's curve tables, streamed a row at a time, are those made of
        // the whole report.
        use rl_audit::report::{csv, json};
        let tables: std::collections::BTreeMap<String, String> =
            csv::tables(&json::report(&set, &audit))
                .into_iter()
                .collect();
        for (name, rows) in json::curve_tables(&audit) {
            assert!(
                csv::streamed_table(rows) == tables.get(name).cloned(),
                "{name}"
            );
        }
    }
}

/// Levels that give every task of a benchmark the same T are one cell shown
/// several times, and the report says so: with every full budget 2 turns,
/// T = ⌈L·2/100⌉ is 1 at 25% and 50%, 2 at 75% and 100% (worked by hand);
/// a benchmark with budgets 2 and 4 (T = 1, 2, 3, 4 for the latter) has
/// no two levels alike.
#[test]
fn levels_with_one_turn_budget_are_named() {
    let d = temp_dir("passkt_coinciding");
    let mut v = Vec::new();
    for (bench, task, b) in [
        ("two", "a", 2),
        ("two", "b", 2),
        ("mixed", "a", 2),
        ("mixed", "b", 4),
    ] {
        for s in [Some(1), None] {
            v.push(traj("m", bench, task, b, b, s));
        }
    }
    write_lines(&d.join("logs.jsonl"), &v);
    let r = audit_json(
        &d.join("logs.jsonl"),
        &d.join("out"),
        &["--resamples", "20"],
    );
    let notes: Vec<&str> = r["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .filter(|n| n.contains("the same turn budget"))
        .collect();
    let note = |levels: &str| {
        format!("two: levels {levels} give every task the same turn budget T (its tasks' full budgets are at most 2 turns): their Pass@(K,T) cells are one cell, shown under each level — not an edge that holds across budgets")
    };
    assert_eq!(notes, [note("25%, 50%"), note("75%, 100%")]);
    // The cells themselves: each pair of levels the same figure (T < B:
    // the full-budget rollouts cut at T; T = B: those rollouts, native).
    for (k, mode) in [(25, "truncated"), (75, "native")] {
        let cell = |level: u32| {
            one(
                &r,
                "pass_at_kt",
                &[
                    ("benchmark", json!("two")),
                    ("k", json!(1)),
                    ("level", json!(level)),
                    ("t_mode", json!(mode)),
                ],
            )["value"]
                .clone()
        };
        assert_eq!(cell(k), cell(k + 25));
    }
}
