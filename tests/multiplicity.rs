//! SPEC §4.2 checked against an independent computation: the joint
//! bootstrap of a family written out here (own generator, own Pass@K),
//! Holm and Benjamini–Hochberg by their textbook definitions (checked
//! against statsmodels' `multipletests` in `analysis::multiplicity`), and
//! the gates.

mod common;
use common::*;
use serde_json::{json, Value};

const B: u32 = 8;
const TASKS: usize = 30;
const N: usize = 8;

/// (run, task, success turn) of every rollout: full budget 8, 8 rollouts a
/// task, success with a per-task chance, at a uniform turn.
fn rollouts() -> Vec<(&'static str, usize, Option<u32>)> {
    let mut g = Mix(7);
    let mut out = Vec::new();
    for t in 0..TASKS {
        let p = g.unit();
        for run in ["base", "rl"] {
            let p = if run == "rl" { (p + 0.1).min(1.0) } else { p };
            for _ in 0..N {
                let st = (g.unit() < p).then(|| 1 + g.below(B as usize) as u32);
                out.push((run, t, st));
            }
        }
    }
    out
}

fn write(dir: &std::path::Path) -> std::path::PathBuf {
    let mut lines = vec![json!({"kind": "run", "run": "base", "method": "base"})];
    for (i, (run, t, st)) in rollouts().into_iter().enumerate() {
        let mut r = json!({"run": run, "benchmark": "b", "task": format!("t{t:02}"), "budget": B,
            "success": st.is_some(), "turns": st.unwrap_or(B), "sample": i});
        if let Some(s) = st {
            r["success_turn"] = json!(s);
        }
        lines.push(r);
    }
    let f = dir.join("l.jsonl");
    write_lines(&f, &lines);
    f
}

/// Per cell (k, level, mode): each task's Pass_RL − Pass_base. Only
/// full-budget rollouts: truncated cells below 100%, native at 100%.
fn diffs(k: usize, level: u32) -> Vec<f64> {
    let t = ((level * B).div_ceil(100)).max(1);
    let r = rollouts();
    (0..TASKS)
        .map(|task| {
            let pass = |run: &str| {
                let c = r
                    .iter()
                    .filter(|x| x.0 == run && x.1 == task && x.2.is_some_and(|s| s <= t))
                    .count();
                pass_at_k_ref(N, c, k)
            };
            pass("rl") - pass("base")
        })
        .collect()
}

fn adv_rows(r: &Value) -> Vec<&Value> {
    r["advantage"].as_array().unwrap().iter().collect()
}

#[test]
fn se_p_values_and_max_t_match_an_independent_joint_bootstrap() {
    let d = temp_dir("multiplicity");
    let f = write(&d);
    let resamples = 4000;
    let r = audit_json(&f, &d.join("out"), &["--resamples", &resamples.to_string()]);
    let rows: Vec<&Value> = adv_rows(&r)
        .into_iter()
        .filter(|a| a["verdict"] != "degenerate")
        .collect();
    assert!(rows.len() >= 12, "a family of many cells");
    let cells: Vec<(Vec<f64>, f64)> = rows
        .iter()
        .map(|a| {
            let d = diffs(
                a["k"].as_u64().unwrap() as usize,
                a["level"].as_u64().unwrap() as u32,
            );
            let mean = d.iter().sum::<f64>() / d.len() as f64;
            // Δ̂ by hand first.
            assert!((a["delta"].as_f64().unwrap() - mean).abs() < 1e-9);
            (d, mean)
        })
        .collect();
    // Every cell has all 30 tasks: U is those 30; one draw per resample.
    let mut g = Mix(12345);
    let mut reps = vec![Vec::with_capacity(resamples); cells.len()];
    for _ in 0..resamples {
        let draw: Vec<usize> = (0..TASKS).map(|_| g.below(TASKS)).collect();
        for (c, (d, _)) in cells.iter().enumerate() {
            let x = draw.iter().map(|&i| d[i]).sum::<f64>() / TASKS as f64;
            reps[c].push(if x.abs() <= 1e-12 { 0.0 } else { x });
        }
    }
    let sd = |v: &[f64]| {
        let m = v.iter().sum::<f64>() / v.len() as f64;
        (v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (v.len() - 1) as f64).sqrt()
    };
    let ses: Vec<f64> = reps.iter().map(|v| sd(v)).collect();
    let mut m_b: Vec<f64> = (0..resamples)
        .map(|b| {
            (0..cells.len())
                .map(|c| (reps[c][b] - cells[c].1).abs() / ses[c])
                .fold(0.0, f64::max)
        })
        .collect();
    m_b.sort_by(f64::total_cmp);
    let q = quantile_linear(&m_b, 0.95);
    for (c, a) in rows.iter().enumerate() {
        let n = resamples as f64;
        let lo = (1.0 + reps[c].iter().filter(|&&x| x <= 0.0).count() as f64) / (n + 1.0);
        let hi = (1.0 + reps[c].iter().filter(|&&x| x >= 0.0).count() as f64) / (n + 1.0);
        let p = (2.0 * lo.min(hi)).min(1.0);
        let t = cells[c].1.abs() / ses[c];
        let p_max = (1.0 + m_b.iter().filter(|&&m| m >= t).count() as f64) / (n + 1.0);
        let p_adj = p.max(p_max);
        let mde = (q + 0.8416) * ses[c];
        let what = format!("K={} {}%", a["k"], a["level"]);
        let got = |k: &str| a[k].as_f64().unwrap();
        assert!(
            (got("se") / ses[c] - 1.0).abs() < 0.05,
            "{what} se {} vs {}",
            got("se"),
            ses[c]
        );
        assert!(
            (got("p_value") - p).abs() < 0.04,
            "{what} p {} vs {p}",
            got("p_value")
        );
        assert!(
            (got("p_adjusted") - p_adj).abs() < 0.05,
            "{what} p_adj {} vs {p_adj}",
            got("p_adjusted")
        );
        assert!(
            (got("mde") / mde - 1.0).abs() < 0.07,
            "{what} mde {} vs {mde}",
            got("mde")
        );
        // The simultaneous interval is Δ̂ ± q·se, wider than the cell's own.
        let sim = a["ci_simultaneous"].as_array().unwrap();
        let half = (sim[1].as_f64().unwrap() - sim[0].as_f64().unwrap()) / 2.0;
        assert!((half / (q * ses[c]) - 1.0).abs() < 0.07, "{what}");
    }
}

/// Holm's adjustment straight from its definition: the i-th smallest p
/// times (m − i + 1), made non-decreasing, capped at 1 (tied p-values take
/// the first of their ranks, as after statsmodels' sort and running max).
fn holm(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    (0..m)
        .map(|i| {
            let rank = |j: usize| p.iter().filter(|&&x| x < p[j]).count() + 1;
            // max over every p_j ≤ p_i of (m − rank_j + 1)·p_j
            (0..m)
                .filter(|&j| p[j] <= p[i])
                .map(|j| ((m - rank(j) + 1) as f64 * p[j]).min(1.0))
                .fold(0.0, f64::max)
        })
        .collect()
}

/// BH from its definition: min over every p_j ≥ p_i of m·p_j / rank_j, capped at 1.
fn bh(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    (0..m)
        .map(|i| {
            (0..m)
                .filter(|&j| p[j] >= p[i])
                .map(|j| {
                    let rank = p.iter().filter(|&&x| x <= p[j]).count();
                    (m as f64 * p[j] / rank as f64).min(1.0)
                })
                .fold(1.0, f64::min)
        })
        .collect()
}

#[test]
fn holm_and_bh_adjust_the_report_s_own_p_values() {
    let d = temp_dir("multiplicity_holm");
    let f = write(&d);
    for (method, rule) in [("holm", holm as fn(&[f64]) -> Vec<f64>), ("bh", bh)] {
        let r = audit_json(
            &f,
            &d.join(method),
            &["--resamples", "500", "--adjust", method],
        );
        assert_eq!(r["settings"]["adjust"], method);
        let rows: Vec<&Value> = adv_rows(&r)
            .into_iter()
            .filter(|a| a["verdict"] != "degenerate")
            .collect();
        let p: Vec<f64> = rows
            .iter()
            .map(|a| a["p_value"].as_f64().unwrap())
            .collect();
        // Ties in p are common with bootstrap p-values; the definitions above
        // treat tied p-values as statsmodels does after its sort.
        let want = rule(&p);
        for (a, w) in rows.iter().zip(want) {
            assert!(
                (a["p_adjusted"].as_f64().unwrap() - w).abs() < 1e-12,
                "{method}: {a}"
            );
            assert!(a["ci_simultaneous"].is_null());
            // mde without max-|t|: (z_0.975 + z_0.80)·se.
            assert!(
                (a["mde"].as_f64().unwrap() - 2.8016 * a["se"].as_f64().unwrap()).abs() < 1e-12
            );
        }
    }
    let r = audit_json(
        &f,
        &d.join("none"),
        &["--resamples", "500", "--adjust", "none"],
    );
    for a in adv_rows(&r)
        .into_iter()
        .filter(|a| a["verdict"] != "degenerate")
    {
        assert_eq!(a["p_adjusted"], a["p_value"]);
    }
}

#[test]
fn verdicts_follow_their_definitions() {
    let d = temp_dir("multiplicity_verdicts");
    let f = write(&d);
    let r = audit_json(
        &f,
        &d.join("out"),
        &["--resamples", "1000", "--min-effect", "3"],
    );
    assert_eq!(r["settings"]["min_effect"], 0.03);
    for a in adv_rows(&r) {
        let v = a["verdict"].as_str().unwrap();
        if v == "degenerate" {
            for k in [
                "se",
                "p_value",
                "p_adjusted",
                "ci_simultaneous",
                "mde",
                "tasks_needed",
            ] {
                assert!(a[k].is_null(), "{k} of a degenerate cell");
            }
            assert_eq!(a["significant_flip_adjusted"], false);
            continue;
        }
        let (delta, p_adj) = (
            a["delta"].as_f64().unwrap(),
            a["p_adjusted"].as_f64().unwrap(),
        );
        match v {
            "ahead" => assert!(delta > 0.0 && p_adj < 0.05),
            "flip" => assert!(delta < 0.0 && p_adj < 0.05),
            "equivalent" | "inconclusive" => assert!(p_adj >= 0.05),
            _ => panic!("verdict {v}"),
        }
        assert_eq!(a["significant_flip_adjusted"], delta < 0.0 && p_adj < 0.05);
        let mde = a["mde"].as_f64().unwrap();
        let want = (v == "inconclusive" && mde > 0.03)
            .then(|| (a["tasks"].as_f64().unwrap() * (mde / 0.03).powi(2)).ceil());
        assert_eq!(a["tasks_needed"].as_f64(), want, "{a}");
    }
}

#[test]
fn gates_read_the_adjusted_verdicts() {
    let d = temp_dir("multiplicity_gates");
    let f = write(&d);
    let run = |gate: &str| {
        rl_audit(&[
            "--headless",
            f.to_str().unwrap(),
            "--out",
            d.join(gate.replace(['@', '<'], "_")).to_str().unwrap(),
            "--resamples",
            "500",
            "--fail-on",
            gate,
        ])
    };
    let r: Value = {
        let o = run("flip");
        let out = d.join("flip");
        assert!(o.status.code().is_some());
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap()
    };
    let any = |key: &str| adv_rows(&r).iter().any(|a| a[key] == true);
    assert_eq!(
        run("flip").status.code(),
        Some(if any("significant_flip_adjusted") {
            1
        } else {
            0
        })
    );
    assert_eq!(
        run("flip-unadjusted").status.code(),
        Some(if any("significant_flip") { 1 } else { 0 })
    );
    // The K=1 cell at 25% (truncated: no native rollouts there).
    let cell = one(&r, "advantage", &[("k", json!(1)), ("level", json!(25))]);
    let o = run("inconclusive@25");
    assert_eq!(
        o.status.code(),
        Some(if cell["verdict"] == "inconclusive" {
            1
        } else {
            0
        })
    );
    // A level with no cell is named, not tripped, by either gate.
    let o = run("inconclusive@30");
    assert_eq!(o.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no K=1 cell at 30%"));
    let o = run("advantage<100@30");
    assert_eq!(o.status.code(), Some(0));
    let err = String::from_utf8_lossy(&o.stderr);
    let notes: Vec<&str> = err.lines().filter(|l| l.contains("gate note")).collect();
    assert!(!notes.is_empty(), "{err}");
    for l in notes {
        assert!(
            l.starts_with("rl-audit: gate note: advantage<100@30: ")
                && l.ends_with(": no K=1 cell at 30% (not judged)"),
            "{l}"
        );
    }
    assert_eq!(run("inconclusive@x").status.code(), Some(2));
}

/// The floor the resamples put under an adjusted p (beyond SPEC §4.2):
/// no bootstrap p-value is below 2/(B+1) (no replicate on the far side of
/// 0), and Holm multiplies a family's smallest by its m cells. Where that
/// floor reaches 0.05 no cell can be ahead or flip, whatever the data: a
/// warning finding says so and names the resamples that would let one
/// through, `--fail-on flip` notes that it cannot trip there, and report.md
/// marks a p at the floor with `≤`.
#[test]
fn the_floor_under_adjusted_p_values_is_said_where_it_reaches_alpha() {
    let d = temp_dir("multiplicity_floor");
    let f = write(&d);
    // A second log where RL succeeds at turn 1 on every other task and
    // base never: every cell's Δ is 0.5 and no resample crosses 0.
    let strong = d.join("strong.jsonl");
    let mut lines = vec![json!({"kind": "run", "run": "base", "method": "base"})];
    for t in 0..TASKS {
        for (run, ok) in [("base", false), ("rl", t % 2 == 0)] {
            for i in 0..N {
                let mut r = json!({"run": run, "benchmark": "b", "task": format!("t{t:02}"),
                    "budget": B, "success": ok, "turns": if ok { 1 } else { B }, "sample": i});
                if ok {
                    r["success_turn"] = json!(1);
                }
                lines.push(r);
            }
        }
    }
    write_lines(&strong, &lines);
    let run_on = |f: &std::path::Path, adjust: &str, b: usize, gate: &str| {
        let out = d.join(format!(
            "{}-{adjust}-{b}-{}",
            f.file_stem().unwrap().to_str().unwrap(),
            gate.replace('@', "_")
        ));
        let o = rl_audit(&[
            "--headless",
            f.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--resamples",
            &b.to_string(),
            "--adjust",
            adjust,
            "--fail-on",
            gate,
        ]);
        let r: Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap())
                .unwrap();
        let md = std::fs::read_to_string(out.join("report.md")).unwrap();
        (o, r, md)
    };
    let run = |adjust: &str, b: usize| run_on(&f, adjust, b, "flip");
    // The findings of one kind.
    let of_kind = |r: &Value, kind: &str| -> Vec<Value> {
        r["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["kind"] == kind)
            .cloned()
            .collect()
    };
    let warnings = |r: &Value| of_kind(r, "cells cannot reach 0.05");
    let live = |r: &Value| -> Vec<Value> {
        adv_rows(r)
            .into_iter()
            .filter(|a| a["verdict"] != "degenerate")
            .cloned()
            .collect()
    };
    // Each live cell's floor is `floor`; report.md's advantage table
    // writes its p adj. (the 12th column) with `≤` exactly when at it, and
    // its p (the 11th) when at 2/(B+1) (every cell here has a replicate in
    // each of the B resamples). Returns how many p adj. are at the floor.
    let check = |r: &Value, md: &str, floor: f64, b: usize| -> usize {
        let mut at = 0;
        for a in live(r) {
            assert!((a["p_adjusted_floor"].as_f64().unwrap() - floor).abs() < 1e-15);
            let p = a["p_adjusted"].as_f64().unwrap();
            assert!(p >= floor - 1e-15);
            let row = format!(
                "| b | base → rl | {} | {}% | {} | ",
                a["k"],
                a["level"],
                a["t_mode"].as_str().unwrap()
            );
            let line = md.lines().find(|l| l.starts_with(&row)).expect(&row);
            let shown = line.split(" | ").nth(11).unwrap();
            let alone = a["p_value"].as_f64().unwrap();
            let want = if alone == 2.0 / (b as f64 + 1.0) {
                format!("≤{alone:.4}")
            } else {
                format!("{alone:.4}")
            };
            assert_eq!(line.split(" | ").nth(10).unwrap(), want, "{line}");
            if p == floor {
                at += 1;
                assert_eq!(shown, format!("≤{p:.4}"), "{line}");
            } else {
                assert_eq!(shown, format!("{p:.4}"), "{line}");
            }
        }
        for a in adv_rows(r)
            .into_iter()
            .filter(|a| a["verdict"] == "degenerate")
        {
            assert!(a["p_adjusted_floor"].is_null());
        }
        at
    };
    // Holm at 400 resamples: every cell has all 30 tasks, so a replicate
    // in every resample, and the floor is m·2/401 for the m live cells.
    let (o, r, md) = run("holm", 400);
    let m = live(&r).len();
    assert!(m >= 10, "{m}");
    let floor = (m as f64 * 2.0 / 401.0).min(1.0);
    assert!(floor >= 0.05, "{floor}");
    check(&r, &md, floor, 400);
    for a in live(&r) {
        assert!(matches!(
            a["verdict"].as_str(),
            Some("equivalent" | "inconclusive")
        ));
    }
    let (_, rs, mds) = run_on(&strong, "holm", 400, "flip");
    let ms = live(&rs).len();
    assert!(ms >= 4, "{ms}");
    assert_eq!(check(&rs, &mds, ms as f64 * 2.0 / 401.0, 400), ms);
    // The fewest resamples with m·2/(B+1) < 0.05, searched here.
    let needed = (1..)
        .find(|&b| m as f64 * 2.0 / (b as f64 + 1.0) < 0.05)
        .unwrap();
    assert!(needed == 40 * m || needed == 40 * m - 1, "{needed}");
    let detail = format!("holm, m={m}, B=400: p≥{floor:.4}; --resamples ≥{needed}");
    let w = warnings(&r);
    assert_eq!(w.len(), 1, "{w:#?}");
    assert_eq!(w[0]["severity"], "warning");
    assert_eq!(w[0]["where"], "b base → rl");
    assert_eq!(w[0]["detail"], detail);
    assert!(md.contains(&format!("\n- b base → rl: {detail}\n")), "{md}");
    // An inconclusive tight-budget cell says what holds it back.
    let tight = |r: &Value| -> Vec<String> {
        of_kind(r, "inconclusive at a tight budget")
            .iter()
            .map(|f| f["detail"].as_str().unwrap().to_string())
            .collect()
    };
    // The K=1 50% cell's finding (in `r`, at `b` resamples) and its
    // `inconclusive@50` gate line, whole, from its row: Δ, interval and n,
    // then its adjusted p, mde and the tasks that would resolve it — or,
    // where the resamples hold it (`held`), the tasks "once the resamples
    // allow" and the held clause in place of the p.
    let said = |cell: &Value, held: &str, b: usize| {
        let num = |k: &str| cell[k].as_f64().unwrap();
        let p = num("p_adjusted");
        let p = if p == num("p_adjusted_floor") {
            format!("≤{p:.4}")
        } else {
            format!("{p:.4}")
        };
        let then = if held.is_empty() {
            ""
        } else {
            " once the resamples allow"
        };
        let tasks = match cell["tasks_needed"].as_u64() {
            Some(n) => format!(", ≈{n} tasks would resolve it{then}"),
            None => String::new(),
        };
        let mde = 100.0 * num("mde");
        let why = if held.is_empty() {
            format!("adjusted p {p} (holm), mde {mde:.1} pp{tasks}")
        } else {
            format!("mde {mde:.1} pp{tasks}{held}")
        };
        let (lo, hi) = (
            100.0 * cell["ci"][0].as_f64().unwrap(),
            100.0 * cell["ci"][1].as_f64().unwrap(),
        );
        let (delta, n) = (100.0 * num("delta"), &cell["tasks"]);
        let finding = format!("Δ {delta:+.1} pp [{lo:+.1}, {hi:+.1}], n={n} tasks, {why}");
        let (o, r, _) = run_on(&f, "holm", b, "inconclusive@50");
        assert!(tight(&r).contains(&finding), "{finding}\n{:?}", tight(&r));
        assert_eq!(o.status.code(), Some(1));
        let want = format!(
            "rl-audit: gate tripped: inconclusive@50: base → rl on b at K=1 level 50% ({}): \
             Δ = {delta:+.1} pp [{lo:+.1}, {hi:+.1}], n={n} tasks, {why}",
            cell["t_mode"].as_str().unwrap()
        );
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.lines().any(|l| l == want), "{want}\n{err}");
    };
    let t = tight(&r);
    assert!(!t.is_empty());
    for x in &t {
        assert!(
            x.ends_with(&format!(", adjusted p ≥{floor:.4} at B=400")),
            "{x}"
        );
    }
    // The gate: not tripped (no flip can be found), but said.
    assert_eq!(o.status.code(), Some(0));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(&format!(
            "flip: b base → rl: no cell's adjusted p can fall below 0.05 ({detail}), so this gate cannot trip there"
        )),
        "{err}"
    );
    // An inconclusive gate's line says what holds the cell back, whole.
    let cell = one(&r, "advantage", &[("k", json!(1)), ("level", json!(50))]);
    assert_eq!(cell["verdict"], "inconclusive");
    said(cell, &format!(", adjusted p ≥{floor:.4} at B=400"), 400);
    // At the resamples named, the floor is below 0.05: nothing said.
    let (o, r, md) = run("holm", needed);
    assert!(warnings(&r).is_empty());
    assert!(!md.contains("No cell can reach 0.05"));
    assert!(!String::from_utf8_lossy(&o.stderr).contains("cannot trip"));
    assert!(tight(&r).iter().all(|x| !x.contains("adjusted p ≥")));
    // There an inconclusive cell's finding and gate line give its Δ, its
    // interval and n, then the adjusted p that keeps it from a verdict,
    // its mde and the tasks that would resolve it: each the row's own.
    let cell = one(&r, "advantage", &[("k", json!(1)), ("level", json!(50))]);
    assert_eq!(cell["verdict"], "inconclusive");
    said(cell, "", needed);
    check(&r, &md, m as f64 * 2.0 / (needed as f64 + 1.0), needed);
    // Max-|t| (the default): a cell's own floor, 2/(B+1), whatever m. At
    // 30 resamples 2/31 ≥ 0.05; 40 is the fewest below it.
    let (_, r, md) = run("maxt", 30);
    check(&r, &md, 2.0 / 31.0, 30);
    let w = warnings(&r);
    assert_eq!(w.len(), 1, "{w:#?}");
    assert_eq!(
        w[0]["detail"],
        format!(
            "maxt, m={}, B=30: p≥{:.4}; --resamples ≥40",
            live(&r).len(),
            2.0 / 31.0
        )
    );
    let (_, r, md) = run("maxt", 40);
    assert!(warnings(&r).is_empty());
    check(&r, &md, 2.0 / 41.0, 40);
}

/// A gate with nothing to read — no pair compared, no run audited — is
/// named on stderr as not judged, never silently passed: rLLM's eval
/// folders declare no base run and no BudgetMix run.
#[test]
fn gates_with_nothing_to_read_say_so() {
    let d = temp_dir("gates_nothing");
    let logs = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/rllm/eval");
    let mut args = vec![
        "--headless".to_string(),
        logs.display().to_string(),
        "--out".into(),
        d.join("out").display().to_string(),
        "--resamples".into(),
        "50".into(),
    ];
    for g in ["flip", "budgetmix", "advantage<-2.5@25", "inconclusive@50"] {
        args.extend(["--fail-on".to_string(), g.to_string()]);
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = rl_audit(&args);
    assert_eq!(o.status.code(), Some(0));
    let pairs =
        "no pair of runs is compared (a run says method: base, or --compare BASE:RL, makes one) (not judged)";
    let want = format!(
        "rl-audit: report written to {}\n\
         rl-audit: gate note: flip: {pairs}\n\
         rl-audit: gate note: budgetmix: no run is audited as BudgetMix (method budgetmix, or --audit RUN) (not judged)\n\
         rl-audit: gate note: advantage<-2.5@25: {pairs}\n\
         rl-audit: gate note: inconclusive@50: {pairs}\n",
        d.join("out").display()
    );
    assert_eq!(String::from_utf8_lossy(&o.stderr), want);
}
