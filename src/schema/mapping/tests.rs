//! Tests of the mapping: its parse, paths, transforms and shapes.

use super::*;
use serde_json::json;
use std::borrow::Cow;

#[test]
fn paths_with_indexing_and_parents() {
    let v = json!({"a": {"b": [1, {"c": "x"}, 3]}});
    let get = |v, o, p| lookup(v, o, p).map(Cow::into_owned);
    assert_eq!(get(&v, None, "a.b[1].c"), Some(json!("x")));
    assert_eq!(get(&v, None, "a.b[-1]"), Some(json!(3)));
    assert_eq!(get(&v, None, "a.b[7]"), None);
    let outer = json!({"id": "t:3"});
    assert_eq!(get(&v, Some(&outer), "^id"), Some(json!("t:3")));
}

#[test]
fn transforms() {
    let m = Mapping::parse(
        "m",
        r#"
        [trajectory]
        run = { const = "r" }
        task = { path = "id", split = ":", index = 0 }
        sample = { path = "id", split = ":", index = 1, as = "int" }
        success = { path = "score", at_least = 1 }
        turns = { count = "steps" }
        reward = { sum = "rewards" }
        budget = { path = "missing", default = 9 }
        "#,
    )
    .unwrap();
    let out = m.map_record(
        &json!({"id": "t7:3", "score": 1.0, "steps": [1, 2], "rewards": [0.5, 0.25]}),
        &Context::default(),
    );
    assert_eq!(
        out,
        vec![
            json!({"run": "r", "task": "t7", "sample": 3, "success": true, "turns": 2, "reward": 0.75, "budget": 9})
        ]
    );
}

#[test]
fn bad_mappings_say_what_is_wrong_and_where() {
    // (mapping, its error as printed, the line it names)
    let cases: &[(&str, &str, Option<usize>)] = &[
        (
            "shape = \"split\"\n[trajectory]\n",
            "shape: \"split\" needs split_on",
            Some(1),
        ),
        (
            "[trajectory]\nbudgett = \"x\"\n",
            "trajectory.budgett: not a SPEC trajectory field",
            Some(2),
        ),
        (
            "[trajectory]\ntask = \"id\"\nbudget = { frobnicate = 1 }\n",
            "trajectory.budget: needs one of path, const, count, sum, path_part, path_regex, position_in, hash, join, json or run_label",
            Some(3),
        ),
        (
            "# verl\n\n[trajectory]\nsuccess = { path = \"score\", above = \"x\" }\n",
            "trajectory.success: above must be a number",
            Some(4),
        ),
        // A part of a join is found at its join's key; a dotted key at the
        // top level, and a run name with dots under step.logp, at theirs.
        (
            "[trajectory]\nrun = { join = [{ run_label = \"a\" }, { path = 5 }] }\n",
            "trajectory.run.join[1]: needs one of path, const, count, sum, path_part, path_regex, position_in, hash, join, json or run_label",
            Some(2),
        ),
        (
            "trajectory.task = \"id\"\n\ntrajectory.budget = { as = \"int\" }\n",
            "trajectory.budget: needs one of path, const, count, sum, path_part, path_regex, position_in, hash, join, json or run_label",
            Some(3),
        ),
        (
            "[trajectory]\ntask = \"id\"\n[step.logp]\n\"qwen2.5\" = { path = \"lp\", as = \"num\" }\n",
            "step.logp.qwen2.5: as must be int, float, string or bool",
            Some(4),
        ),
        ("frobs = 1\n[trajectory]\n", "frobs: not a mapping key", Some(1)),
        ("files = \"x\"\n", "a [trajectory] table is required", None),
        (
            "files = \"(\"\n[trajectory]\n",
            "files: regex parse error:\n    (\n    ^\nerror: unclosed group",
            Some(1),
        ),
    ];
    for (text, want, line) in cases {
        let e = Mapping::parse("m", text).unwrap_err();
        assert_eq!(
            (e.to_string().as_str(), e.line(text)),
            (*want, *line),
            "{text}"
        );
    }
    // The TOML parser's own errors keep its place.
    let text = "[trajectory]\ntask = \"id\"\n[trajectory\n";
    let e = Mapping::parse("m", text).unwrap_err();
    assert_eq!(e.line(text), Some(3), "{e}");
}

fn one(m: &str, v: Value, cx: &Context) -> Value {
    let m = Mapping::parse("m", m).unwrap();
    m.map_record(&v, cx).remove(0)
}

#[test]
fn values_from_the_path() {
    let cx = Context {
        path: "runs/exp/dumped_evals/global_step_40_evals/openai_gsm8k.jsonl",
        ..Default::default()
    };
    let got = one(
        r#"
        [trajectory]
        benchmark = { path_part = -1 }
        task = { path_part = -3 }
        train_step = { path_regex = 'global_step_([0-9]+)_evals', as = "int" }
        group = { path_regex = 'nowhere_([0-9]+)', default = "none" }
        "#,
        json!({}),
        &cx,
    );
    assert_eq!(
        got,
        json!({"benchmark": "openai_gsm8k.jsonl", "task": "dumped_evals", "train_step": 40, "group": "none"})
    );
    assert!(
        Mapping::parse("m", "[trajectory]\ntask = { path_regex = 'x' }\n")
            .unwrap_err()
            .to_string()
            .contains("capture group")
    );
}

#[test]
fn positions_hashes_and_joins() {
    let m = Mapping::parse(
        "m",
        r#"
        [trajectory]
        task = { hash = "input" }
        sample = { position_in = "input" }
        run = { join = [{ run_label = "verl" }, { path = "step", as = "string" }], sep = "@" }
        "#,
    )
    .unwrap();
    let paths = m.position_paths();
    let mut pos = Positions::default();
    let rows = [
        json!({"input": "a", "step": 3}),
        json!({"input": "b", "step": 3}),
        json!({"input": "a", "step": 3}),
    ];
    let got: Vec<Value> = rows
        .iter()
        .map(|r| {
            let p = pos.next(&paths, r);
            let cx = Context {
                positions: &p,
                run_label: Some("grpo"),
                ..Default::default()
            };
            m.map_record(r, &cx).remove(0)
        })
        .collect();
    // FNV-1a 64 of "a" and "b" (reference values of the FNV spec).
    assert_eq!(
        got[0],
        json!({"task": "af63dc4c8601ec8c", "sample": 0, "run": "grpo@3"})
    );
    assert_eq!(
        got[1],
        json!({"task": "af63df4c8601f1a5", "sample": 0, "run": "grpo@3"})
    );
    assert_eq!(got[2]["sample"], 1);
    assert!(m.sequential());
    // Without --run-label, the default.
    assert_eq!(
        m.map_record(&rows[0], &Context::default()).remove(0)["run"],
        "verl@3"
    );
}

#[test]
fn json_strings_filters_and_empty_arrays() {
    let got = one(
        r#"
        [trajectory]
        turns = { json = "metadata", path = "turns" }
        task = { json = "metadata", path = "task.id" }
        min_turns = { count = "messages[role=assistant]" }
        reward = { sum = "messages[role=tool].cost" }
        success = { path = "messages[role=assistant][-1].done" }
        sample = { count = "ids", empty = "missing" }
        max_budget = { sum = "lp", empty = "missing", default = 7 }
        "#,
        json!({
            "metadata": "{\"turns\": 3, \"task\": {\"id\": \"t9\"}}",
            "messages": [
                {"role": "user"},
                {"role": "assistant", "done": false},
                {"role": "tool", "cost": 0.5},
                {"role": "assistant", "done": true},
                {"role": "tool", "cost": 0.25}
            ],
            "ids": [],
            "lp": []
        }),
        &Context::default(),
    );
    assert_eq!(
        got,
        json!({"turns": 3, "task": "t9", "min_turns": 2, "reward": 0.75, "success": true, "max_budget": 7})
    );
    // Without empty = "missing", an empty array counts 0.
    let got = one(
        "[trajectory]\nsample = { count = \"ids\" }\nreward = { path = \"s\", above = 0 }\n",
        json!({"ids": [], "s": 0}),
        &Context::default(),
    );
    assert_eq!(got, json!({"sample": 0, "reward": false}));
    assert!(Mapping::parse(
        "m",
        "[trajectory]\ntask = { path = \"x\", empty = \"missing\" }\n"
    )
    .unwrap_err()
    .to_string()
    .contains("goes with count or sum"));
}

#[test]
fn file_patterns() {
    let m = Mapping::parse(
        "m",
        "files = 'dumped_evals/'\nskip_files = 'aggregated_results'\n[trajectory]\nrun = \"r\"\n",
    )
    .unwrap();
    assert!(m.reads("x/dumped_evals/a/gsm8k.jsonl"));
    assert!(!m.reads("x/dumped_evals/a/aggregated_results.jsonl"));
    assert!(!m.reads("x/other/gsm8k.jsonl"));
}
