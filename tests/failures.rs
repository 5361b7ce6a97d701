//! SPEC §4.4 failure anatomy, counted independently from the records.

mod common;
use common::*;
use serde_json::{json, Value};

/// (run, task, budget, turns, success_turn, explicit termination)
type Record = (
    &'static str,
    &'static str,
    u32,
    u32,
    Option<u32>,
    Option<&'static str>,
);

fn records() -> Vec<Record> {
    let mut g = Mix(3);
    let mut out = Vec::new();
    for run in ["base", "rl"] {
        for t in 0..6 {
            let task = ["a", "b", "c", "d", "e", "f"][t];
            for _ in 0..6 {
                // Full budget 8, and native rollouts at T = 2 (25%).
                for budget in [8u32, 2] {
                    let u = g.unit();
                    let (turns, st, term) = if u < 0.3 {
                        let s = 1 + g.below(budget as usize) as u32;
                        (s, Some(s), None)
                    } else if u < 0.45 {
                        (1 + g.below(budget as usize) as u32, None, Some("error"))
                    } else if u < 0.55 {
                        (1 + g.below(budget as usize) as u32, None, Some("invalid"))
                    } else if u < 0.75 {
                        (budget, None, None) // derived: budget
                    } else {
                        (g.below(budget as usize) as u32, None, None) // derived: wrong (turns < budget)
                    };
                    out.push((run, task, budget, turns, st, term));
                }
            }
        }
    }
    out
}

#[test]
fn causes_match_an_independent_count_and_add_up() {
    let d = temp_dir("failures");
    let mut lines = vec![json!({"kind": "run", "run": "base", "method": "base"})];
    for (i, (run, task, budget, turns, st, term)) in records().into_iter().enumerate() {
        let mut r = json!({"run": run, "benchmark": "b", "task": task, "budget": budget, "max_budget": 8,
            "success": st.is_some(), "turns": turns, "sample": i});
        if let Some(s) = st {
            r["success_turn"] = json!(s);
        }
        if let Some(t) = term {
            r["termination"] = json!(t);
        }
        lines.push(r);
    }
    let f = d.join("l.jsonl");
    write_lines(&f, &lines);
    let r = audit_json(&f, &d.join("out"), &["--resamples", "20"]);
    let recs = records();
    for row in r["failures"].as_array().unwrap() {
        let (run, level) = (
            row["run"].as_str().unwrap(),
            row["level"].as_u64().unwrap() as u32,
        );
        let native = row["t_mode"] == "native";
        let t = ((level * 8).div_ceil(100)).max(1);
        // The cell's rollouts: native at budget T, truncated at 8 when T < 8.
        let mine: Vec<_> = recs
            .iter()
            .filter(|x| x.0 == run && if native { x.2 == t } else { x.2 == 8 && t < 8 })
            .collect();
        let mut want = std::collections::BTreeMap::new();
        let mut solved = 0;
        for x in &mine {
            let (budget, turns, st, term) = (x.2, x.3, x.4, x.5);
            let cause = if st.is_some_and(|s| s <= t) {
                solved += 1;
                continue;
            } else if turns > t || st.is_some_and(|s| s > t) {
                "budget"
            } else {
                term.unwrap_or(if turns >= budget { "budget" } else { "wrong" })
            };
            *want.entry(cause).or_insert(0u64) += 1;
        }
        assert_eq!(row["rollouts"], mine.len(), "{row}");
        assert_eq!(row["solved"], solved, "{row}");
        let causes = &row["causes"];
        let mut sum = row["solved"].as_u64().unwrap();
        for c in ["budget", "wrong", "error", "invalid", "other"] {
            assert_eq!(causes[c], want.get(c).copied().unwrap_or(0), "{c} in {row}");
            sum += causes[c].as_u64().unwrap();
        }
        assert_eq!(sum, mine.len() as u64, "counts add up");
    }
    assert!(r["failures"]
        .as_array()
        .unwrap()
        .iter()
        .any(|x| x["t_mode"] == "truncated"));
    let md = std::fs::read_to_string(d.join("out/report.md")).unwrap();
    assert!(md.contains("## Why rollouts fail"));
    assert!(d.join("out/figures/failures_b.svg").exists());
    let _: Value = r;
}

#[test]
fn an_unknown_termination_is_an_input_error() {
    let err = strict_failure(
        "termination_bad",
        "l.jsonl",
        b"{\"run\":\"r\",\"benchmark\":\"b\",\"task\":\"t\",\"budget\":2,\"success\":false,\"turns\":1,\"termination\":\"tired\"}\n",
    );
    assert!(
        err.contains("l.jsonl:1: termination: \"tired\" is not one of"),
        "{err}"
    );
    let err = strict_failure(
        "termination_contradicts",
        "l.jsonl",
        b"{\"run\":\"r\",\"benchmark\":\"b\",\"task\":\"t\",\"budget\":2,\"success\":true,\"turns\":1,\"termination\":\"error\"}\n",
    );
    assert!(
        err.contains("termination: \"error\" contradicts success: true"),
        "{err}"
    );
}
