//! `--map`: the shipped mappings load their sample files with the values
//! worked out by hand; broken mappings and bad source records are reported
//! with the file, the record and the source field.

mod common;
use common::*;
use serde_json::json;

fn mapped(sample: &str, mapping: &str, out: &std::path::Path) -> serde_json::Value {
    let root = env!("CARGO_MANIFEST_DIR");
    let s = format!("{root}/assets/mappings/{sample}");
    let m = format!("{root}/assets/mappings/{mapping}");
    audit_json(
        std::path::Path::new(&s),
        out,
        &["--map", &m, "--resamples", "50"],
    )
}

#[test]
fn rllm_episodes_sample() {
    let d = temp_dir("map_rllm");
    let r = mapped(
        "rllm-episodes.sample.jsonl",
        "rllm-episodes.toml",
        &d.join("out"),
    );
    assert_eq!(r["inputs"]["records"]["trajectory"], 3);
    // Budget 8; at 25% T = 2: lc-101 solved by 1 of 2 rollouts (at turn 2), lc-202 by 1 of 1.
    let c = one(
        &r,
        "pass_at_kt",
        &[
            ("k", json!(1)),
            ("level", json!(25)),
            ("t_mode", json!("truncated")),
        ],
    );
    close(&c["value"], (0.5 + 1.0) / 2.0);
    assert_eq!(c["tasks"], 2);
    // Token budgets from response_ids counts: lc-101:0 uses 3 + 2 = 5 tokens.
    let t = &r["settings"]["token_budgets"]["deepcoder-mt"];
    assert_eq!(t, &json!([1, 4, 5]));
}

#[test]
fn verl_agent_step_rows_sample() {
    let d = temp_dir("map_verl");
    let r = mapped(
        "verl-agent-steps.sample.jsonl",
        "verl-agent-steps.toml",
        &d.join("out"),
    );
    // Rows group into a1 (2 steps, reward 10 → success) and b2 (3 steps, failure).
    assert_eq!(r["inputs"]["records"]["trajectory"], 2);
    let c = one(&r, "pass_at_kt", &[("k", json!(1)), ("level", json!(100))]);
    close(&c["value"], 0.5);
    // U(T) at 25% of 50 (T = 13): a1 succeeded at turn 2.
    close(
        &one(&r, "upper_bound", &[("level", json!(25))])["value"],
        1.0,
    );
}

/// Runs a strict mapped audit that must fail with exit 2; returns stderr.
fn mapped_failure(src: &std::path::Path, m: &std::path::Path, out: &std::path::Path) -> String {
    let o = rl_audit(&[
        "--headless",
        src.to_str().unwrap(),
        "--map",
        m.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    String::from_utf8_lossy(&o.stderr).to_string()
}

#[test]
fn broken_mapping_and_bad_source_records() {
    let d = temp_dir("map_broken");
    let m = d.join("m.toml");
    std::fs::write(&m, "shape = \"split\"\n[trajectory]\nrun = \"r\"\n").unwrap();
    let src = d.join("x.jsonl");
    std::fs::write(&src, "{\"r\": \"a\"}\n").unwrap();
    let err = mapped_failure(&src, &m, &d.join("o"));
    assert!(err.contains("m.toml") && err.contains("split_on"), "{err}");

    std::fs::write(&m, "[trajectory]\nrun = \"who\"\nbenchmark = { const = \"b\" }\ntask = \"id\"\nbudget = \"meta.turns\"\nsuccess = \"ok\"\n").unwrap();
    std::fs::write(&src, "{\"who\": \"a\", \"id\": \"t\", \"meta\": {\"turns\": 4}, \"ok\": true}\n{\"who\": \"a\", \"id\": \"t\", \"meta\": {}, \"ok\": true}\n").unwrap();
    let err = mapped_failure(&src, &m, &d.join("o"));
    assert!(
        err.contains("x.jsonl:2: budget: required field is missing (mapped from `meta.turns`"),
        "{err}"
    );
}

#[test]
fn a_mapping_reads_parquet_too() {
    // The verl-agent sample written as Parquet by pandas 3.1 / pyarrow 26
    // (tests/data/pyarrow/make.py): the same audit as from its JSONL.
    let d = temp_dir("map_parquet");
    let root = env!("CARGO_MANIFEST_DIR");
    let m = format!("{root}/assets/mappings/verl-agent-steps.toml");
    let pq = format!("{root}/tests/data/pyarrow/verl-agent-steps.sample.parquet");
    let got = audit_json(
        std::path::Path::new(&pq),
        &d.join("pq"),
        &["--map", &m, "--resamples", "50"],
    );
    let want = mapped(
        "verl-agent-steps.sample.jsonl",
        "verl-agent-steps.toml",
        &d.join("jsonl"),
    );
    assert_eq!(got["inputs"]["records"]["trajectory"], 2);
    for (k, v) in want.as_object().unwrap() {
        if k != "inputs" {
            assert_eq!(v, &got[k], "section {k} differs between Parquet and JSONL");
        }
    }
}
