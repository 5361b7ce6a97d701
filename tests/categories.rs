//! SPEC §4.3 categories: per-category Δ with its own paired bootstrap, the
//! contrast between categories by a stratified bootstrap, Holm over a
//! pair's contrasts — each checked against an independent computation.

mod common;
use common::*;
use serde_json::{json, Value};

/// 40 tasks: "compositional" (t00–t19) where RL gains 0.3, "lookup"
/// (t20–t39) where it gains nothing; 8 rollouts per run per task.
fn rollouts() -> Vec<(&'static str, usize, bool)> {
    let mut g = Mix(5);
    let mut out = Vec::new();
    for t in 0..40 {
        let p = 0.2 + 0.5 * g.unit();
        let gain = if t < 20 { 0.3 } else { 0.0 };
        for (run, q) in [("base", p), ("rl", (p + gain).min(1.0))] {
            for _ in 0..8 {
                out.push((run, t, g.unit() < q));
            }
        }
    }
    out
}

fn category(t: usize) -> &'static str {
    if t < 20 {
        "compositional"
    } else {
        "lookup"
    }
}

fn write(dir: &std::path::Path) -> std::path::PathBuf {
    let mut lines = vec![json!({"kind": "run", "run": "base", "method": "base"})];
    for (i, (run, t, ok)) in rollouts().into_iter().enumerate() {
        lines.push(json!({"run": run, "benchmark": "b", "task": format!("t{t:02}"), "category": category(t),
            "budget": 4, "success": ok, "turns": if ok { 1 } else { 4 }, "sample": i}));
    }
    let f = dir.join("l.jsonl");
    write_lines(&f, &lines);
    f
}

/// Per task of a category: Pass@1_RL − Pass@1_base at 100%.
fn diffs(cat: &str) -> Vec<f64> {
    let r = rollouts();
    (0..40)
        .filter(|&t| category(t) == cat)
        .map(|t| {
            let rate = |run: &str| {
                let mine: Vec<_> = r.iter().filter(|x| x.0 == run && x.1 == t).collect();
                mine.iter().filter(|x| x.2).count() as f64 / mine.len() as f64
            };
            rate("rl") - rate("base")
        })
        .collect()
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

fn boot_mean(g: &mut Mix, v: &[f64]) -> f64 {
    (0..v.len()).map(|_| v[g.below(v.len())]).sum::<f64>() / v.len() as f64
}

#[test]
fn category_tables_and_contrasts_match_an_independent_computation() {
    let d = temp_dir("categories");
    let f = write(&d);
    let b = 4000;
    let r = audit_json(
        &f,
        &d.join("out"),
        &["--resamples", &b.to_string(), "--k", "1"],
    );
    let (dc, dl) = (diffs("compositional"), diffs("lookup"));
    let mut g = Mix(77);
    for (cat, v) in [("compositional", &dc), ("lookup", &dl)] {
        let row = one(
            &r,
            "advantage_by_category",
            &[
                ("category", json!(cat)),
                ("k", json!(1)),
                ("level", json!(100)),
            ],
        );
        close(&row["delta"], mean(v));
        assert_eq!(row["tasks"], 20);
        let mut reps: Vec<f64> = (0..b).map(|_| boot_mean(&mut g, v)).collect();
        reps.sort_by(f64::total_cmp);
        let ci = row["ci"].as_array().unwrap();
        assert!(
            (ci[0].as_f64().unwrap() - quantile_linear(&reps, 0.025)).abs() < 0.02,
            "{cat}"
        );
        assert!(
            (ci[1].as_f64().unwrap() - quantile_linear(&reps, 0.975)).abs() < 0.02,
            "{cat}"
        );
    }
    // Pass of each run per category: the mean of its tasks' rates.
    let pass = one(
        &r,
        "pass_by_category",
        &[
            ("category", json!("lookup")),
            ("run", json!("rl")),
            ("k", json!(1)),
            ("level", json!(100)),
        ],
    );
    assert_eq!(pass["tasks"], 20);
    // The contrast, by a stratified bootstrap.
    let c = one(
        &r,
        "category_contrast",
        &[("k", json!(1)), ("level", json!(100))],
    );
    assert_eq!(
        (c["a"].as_str(), c["b"].as_str()),
        (Some("compositional"), Some("lookup"))
    );
    close(&c["diff"], mean(&dc) - mean(&dl));
    let mut reps: Vec<f64> = (0..b)
        .map(|_| boot_mean(&mut g, &dc) - boot_mean(&mut g, &dl))
        .collect();
    reps.sort_by(f64::total_cmp);
    let ci = c["ci"].as_array().unwrap();
    assert!((ci[0].as_f64().unwrap() - quantile_linear(&reps, 0.025)).abs() < 0.025);
    assert!((ci[1].as_f64().unwrap() - quantile_linear(&reps, 0.975)).abs() < 0.025);
    // Holm over every contrast of the pair (one per level and mode here).
    let rows: Vec<&Value> = r["category_contrast"].as_array().unwrap().iter().collect();
    let p: Vec<f64> = rows
        .iter()
        .map(|x| x["p_value"].as_f64().unwrap())
        .collect();
    let m = p.len();
    for (i, x) in rows.iter().enumerate() {
        let want = (0..m)
            .filter(|&j| p[j] <= p[i])
            .map(|j| ((m - p.iter().filter(|&&y| y < p[j]).count()) as f64 * p[j]).min(1.0))
            .fold(0.0, f64::max);
        assert!((x["p_adjusted"].as_f64().unwrap() - want).abs() < 1e-12);
    }
    // A real difference (0.3 vs 0) is found and named in the findings.
    assert!(c["p_adjusted"].as_f64().unwrap() < 0.05);
    let findings = r["findings"].as_array().unwrap();
    assert!(findings.iter().any(|f| f["kind"] == "categories differ"));
    // They close the headline (here after the Pass@(K,T) findings): a grid
    // of categories can hold dozens.
    assert!(findings[0]["kind"] != "categories differ", "{findings:#?}");
    let first = findings
        .iter()
        .position(|f| f["kind"] == "categories differ")
        .unwrap();
    assert!(
        findings[first..]
            .iter()
            .all(|f| f["kind"] == "categories differ"),
        "{findings:#?}"
    );
}

/// Holm over m contrasts cannot go below m × 2/(B+1) (the smallest
/// bootstrap p-value times m): each row carries that floor, a p at it reads
/// `≤`, and where it reaches 0.05 the headline says no contrast can be
/// found — and names none.
#[test]
fn holms_floor_is_m_times_the_smallest_p_and_a_floor_at_alpha_is_said() {
    let d = temp_dir("categories-floor");
    let f = write(&d);
    let run = |b: usize, out: &str| {
        let r = audit_json(
            &f,
            &d.join(out),
            &["--resamples", &b.to_string(), "--k", "1"],
        );
        let md = std::fs::read_to_string(d.join(out).join("report.md")).unwrap();
        (r, md)
    };
    let (r, md) = run(4000, "b4000");
    let rows = r["category_contrast"].as_array().unwrap().clone();
    let m = rows.iter().filter(|x| x["p_value"].is_number()).count();
    assert!(m >= 2, "{rows:#?}");
    let floor = (m as f64 * 2.0 / 4001.0).min(1.0);
    let mut at_floor = 0;
    for x in &rows {
        let got = x["p_adjusted_floor"].as_f64().unwrap();
        assert!((got - floor).abs() < 1e-15, "{got} vs {floor}");
        let p = x["p_adjusted"].as_f64().unwrap();
        assert!(p >= got, "{p} below the floor {got}");
        // report.md's K=1 table writes it with `≤` exactly when at it.
        let cell = format!(
            "| {}% | {} | {} − {} |",
            x["level"],
            x["t_mode"].as_str().unwrap(),
            x["a"].as_str().unwrap(),
            x["b"].as_str().unwrap()
        );
        let line = md.lines().find(|l| l.contains(&cell)).expect(&cell);
        let shown = line.trim_end_matches(" |").rsplit("| ").next().unwrap();
        // Its own p beside it: `≤` at 2/(B+1), as `p_value` gives it
        // (every resample draws within both categories: B replicates).
        let alone = x["p_value"].as_f64().unwrap();
        let own = line.trim_end_matches(" |").rsplit(" | ").nth(1).unwrap();
        if alone == 2.0 * (1.0 / 4001.0) {
            assert_eq!(own, format!("≤{alone:.4}"), "{line}");
        } else {
            assert_eq!(own, format!("{alone:.4}"), "{line}");
        }
        if p == got {
            at_floor += 1;
            assert_eq!(shown, format!("≤{p:.4}"), "{line}");
        } else {
            assert_eq!(shown, format!("{p:.4}"), "{line}");
        }
    }
    // The 0.3 gain against none: no resample of the 100% contrast crosses 0.
    assert!(at_floor >= 1, "{rows:#?}");
    assert!(md.contains(&format!(
        "Holm over {m} contrasts at 4000 resamples cannot give an adjusted p below **{floor:.4}**;"
    )));
    // B = 40m − 1: the floor is 2m/(40m) = 0.05 exactly — nothing can be
    // below 0.05, whatever the data; B = 40m is the fewest that can.
    let b = 40 * m - 1;
    let (r, _) = run(b, "floor");
    let findings = r["findings"].as_array().unwrap();
    assert!(
        !findings.iter().any(|f| f["kind"] == "categories differ"),
        "{findings:#?}"
    );
    let warn: Vec<&Value> = findings
        .iter()
        .filter(|f| f["kind"] == "contrasts cannot reach 0.05")
        .collect();
    assert_eq!(warn.len(), 1, "{findings:#?}");
    assert_eq!(warn[0]["severity"], "warning");
    assert_eq!(warn[0]["where"], "b base → rl");
    assert_eq!(
        warn[0]["detail"],
        format!("m={m}, B={b}: p≥0.0500; --resamples ≥{}", 40 * m)
    );
    let (r, _) = run(40 * m, "above");
    assert!(!r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f["kind"] == "contrasts cannot reach 0.05"));
}
