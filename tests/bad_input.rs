//! SPEC §1.4: every malformed input gets exit 2 and `file:line: field: why`
//! in strict mode, a count by reason with --lenient, and never a panic.

mod common;
use common::*;
use serde_json::json;

fn good() -> String {
    let mut t = traj("base", "b", "t1", 4, 4, Some(2));
    t["method"] = json!("base");
    t.to_string()
}

/// Runs strict on a two-line file (a good line, then `bad`) and returns stderr.
fn strict_error(name: &str, bad: &str) -> String {
    strict_failure(name, "x.jsonl", format!("{}\n{bad}\n", good()).as_bytes())
}

#[test]
fn each_bad_record_names_file_line_and_field() {
    let cases = [
        ("syntax", "{\"run\": \"a\",", "x.jsonl:2: invalid JSON"),
        (
            "type",
            r#"{"run": "a", "benchmark": "b", "task": "t", "budget": "4", "success": true}"#,
            "x.jsonl:2: budget: expected an integer",
        ),
        (
            "missing",
            r#"{"run": "a", "benchmark": "b", "task": "t", "success": true}"#,
            "x.jsonl:2: budget: required field is missing",
        ),
        (
            "success_turn",
            r#"{"run": "a", "benchmark": "b", "task": "t", "budget": 4, "success": true, "turns": 2, "success_turn": 3}"#,
            "x.jsonl:2: success_turn:",
        ),
        (
            "budget_over_max",
            r#"{"run": "a", "benchmark": "b", "task": "t", "budget": 5, "max_budget": 4, "success": true}"#,
            "x.jsonl:2: max_budget:",
        ),
        (
            "budget_huge",
            r#"{"run": "a", "benchmark": "b", "task": "t", "budget": 1000001, "success": true}"#,
            "x.jsonl:2: budget:",
        ),
        (
            "negative_tokens",
            r#"{"run": "a", "benchmark": "b", "task": "t", "budget": 4, "success": false, "steps": [{"turn": 1, "output_tokens": -3}]}"#,
            "x.jsonl:2: steps[0].output_tokens:",
        ),
        (
            "nan_logp",
            r#"{"run": "a", "benchmark": "b", "task": "t", "budget": 4, "success": false, "steps": [{"turn": 1, "logp": {"a": "NaN"}}]}"#,
            "x.jsonl:2: steps[0].logp.a: expected a number",
        ),
        ("not_object", "[1, 2]", "x.jsonl:2:"),
        (
            "duplicate_field",
            r#"{"run": "a", "benchmark": "b", "task": "t", "budget": 4, "budget": 5, "success": true}"#,
            "x.jsonl:2: duplicate field `budget` (column 65)",
        ),
        (
            "duplicate_step_field",
            r#"{"run": "a", "benchmark": "b", "task": "t", "budget": 4, "success": false, "steps": [{"turn": 1, "turn": 2}]}"#,
            "x.jsonl:2: duplicate field `turn` (column 103)",
        ),
        (
            "probe_missing_candidates",
            r#"{"kind": "probe", "benchmark": "b", "task": "t", "state": "s", "source": "a", "turn": 1}"#,
            "x.jsonl:2: candidates: required field is missing",
        ),
        (
            "checkpoint_no_step",
            r#"{"kind": "checkpoint", "run": "a", "r_multi": 0.5}"#,
            "x.jsonl:2: step: required field is missing",
        ),
        (
            "max_budget_conflict",
            r#"{"run": "a", "benchmark": "b", "task": "t1", "budget": 4, "max_budget": 5, "success": true}"#,
            "x.jsonl:2: max_budget:",
        ),
        (
            "method_conflict",
            r#"{"run": "base", "method": "grpo", "benchmark": "b", "task": "t1", "budget": 4, "success": true}"#,
            "x.jsonl:2: method:",
        ),
    ];
    for (name, bad, want) in cases {
        let err = strict_error(name, bad);
        assert!(err.contains(want), "{name}: {err:?} lacks {want:?}");
    }
}

#[test]
fn lenient_counts_skips_by_reason() {
    let d = temp_dir("lenient_counts");
    let f = d.join("x.jsonl");
    let lines = [
        good(),
        "{oops".to_string(),
        r#"{"run": "a", "benchmark": "b", "task": "t", "budget": true, "success": true}"#.to_string(),
        r#"{"run": "a", "benchmark": "b", "task": "t", "success": true}"#.to_string(),
        r#"{"run": "a", "benchmark": "b", "task": "t", "budget": 0, "success": true}"#.to_string(),
        json!({"run": "a", "benchmark": "b", "task": "t", "budget": 4, "success": true, "sample": 0}).to_string(),
        json!({"run": "a", "benchmark": "b", "task": "t", "budget": 4, "success": false, "sample": 0}).to_string(),
        r#"{"kind": "mystery"}"#.to_string(),
        String::new(),
    ];
    std::fs::write(&f, lines.join("\n")).unwrap();
    let r = audit_json(&f, &d.join("out"), &["--lenient", "--resamples", "20"]);
    assert_eq!(
        r["inputs"]["skipped"],
        json!({"syntax": 1, "type": 1, "missing_field": 1, "impossible_value": 1, "duplicate": 1})
    );
    assert_eq!(r["inputs"]["records"]["trajectory"], 2);
    assert_eq!(r["inputs"]["unknown_kinds"], json!({"mystery": 1}));
}

#[test]
fn file_level_failures() {
    let d = temp_dir("file_level");
    let out = d.join("out");
    let empty = d.join("empty.jsonl");
    std::fs::write(&empty, "").unwrap();
    let gz = d.join("broken.jsonl.gz");
    std::fs::write(&gz, [0x1f, 0x8b, 8, 0, 0, 0]).unwrap();
    let pq = d.join("broken.parquet");
    std::fs::write(&pq, b"PAR1 not really").unwrap();
    let nologs = d.join("nologs");
    std::fs::create_dir_all(&nologs).unwrap();
    std::fs::write(nologs.join("readme.txt"), "hi").unwrap();
    let missing = d.join("missing.jsonl");
    for (path, want) in [
        (&empty, "no records"),
        (&gz, "gzip"),
        (&pq, "Parquet"),
        (&nologs, "no log files"),
        (&missing, "no such file"),
    ] {
        for lenient in [false, true] {
            let mut args = vec![
                "--headless",
                path.to_str().unwrap(),
                "--out",
                out.to_str().unwrap(),
            ];
            if lenient {
                args.push("--lenient");
            }
            let o = rl_audit(&args);
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(2), "{path:?}: {err}");
            assert!(
                err.contains(path.to_str().unwrap()) && err.contains(want),
                "{path:?}: {err}"
            );
            assert!(!err.contains("internal error"), "{path:?}: {err}");
        }
    }
}

/// A log directory that is the report's (`--out`) or inside it: the
/// report's directory is never read as logs, so this is said, not "no log
/// files found"; a report directory inside the logs is passed over as
/// before.
#[test]
fn logs_in_the_report_directory_are_named_as_such() {
    let d = temp_dir("logs_in_out");
    let logs = d.join("runs");
    std::fs::create_dir_all(&logs).unwrap();
    std::fs::copy(
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/data/large/jsonl/eval-000.jsonl"
        ),
        logs.join("eval.jsonl"),
    )
    .unwrap();
    let l = logs.display();
    for out in [logs.clone(), d.clone()] {
        let o = rl_audit(&[
            "--headless",
            logs.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(2));
        assert_eq!(
            String::from_utf8_lossy(&o.stderr).lines().next().unwrap(),
            format!(
                "rl-audit: {l}: the report is to be written here (--out {}), and its directory is never read as logs: write it elsewhere, e.g. --out {l}/report",
                out.display()
            )
        );
    }
    let inside = logs.join("report");
    let o = rl_audit(&[
        "--headless",
        logs.to_str().unwrap(),
        "--out",
        inside.to_str().unwrap(),
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(inside.join("report.json").is_file());
}

#[test]
fn bad_invocation_exits_2() {
    for args in [
        vec!["--headless", "--levels", "0"],
        vec!["--headless", "--ci", "magic"],
        vec!["--headless", "--fail-on", "whatever"],
        vec!["--no-such-flag"],
    ] {
        let o = rl_audit(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
    }
    // What clap says, the value's own reason in it: a run compared with
    // itself (every Δ 0 by construction), and a summary under a name the
    // load would not find again.
    for (args, why) in [
        (
            vec!["--headless", "--compare", "fl-base:fl-base"],
            "invalid value 'fl-base:fl-base' for '--compare <BASE:RL>': \"fl-base:fl-base\": BASE and RL are the same run",
        ),
        (
            vec!["--summarize", "shard.txt"],
            "invalid value 'shard.txt' for '--summarize <OUT.jsonl.zst|OUT.parquet>': \"shard.txt\": expected a name ending in .jsonl.zst, .jsonl.gz or .jsonl (the summary) or .parquet (the Pass@(K,T) aggregates)",
        ),
    ] {
        let o = rl_audit(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(err.lines().next(), Some(format!("error: {why}").as_str()));
    }
}

/// A Parquet page header whose value count is damaged into a negative
/// number (one byte of a pyarrow-written test file changed, as
/// `scripts/fuzz_parquet.py` found them): polars reads the count as a
/// `usize`, reserved exabytes for it and aborted the process. It is the
/// file's error: exit 2, the page named, no report written — for a
/// trajectory file (rows that begin pages or not) and for a file read
/// through `--map` (polars' own reader).
#[test]
fn a_page_header_counting_negative_values_is_an_error_not_an_abort() {
    let d = temp_dir("negative_page_count");
    let data = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/pyarrow/");
    let map = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/assets/mappings/verl-agent-steps.toml"
    );
    for (file, at, was, now, values, left, mapping) in [
        ("eval-step-nulls.parquet", 2342, 0x0c, 0x15, -11, 6, None),
        ("eval-page-index.parquet", 1885, 0xac, 0x85, -131, 150, None),
        // env_step's data page: 17 values (zigzag 0x22) made -17 (0x21).
        ("verl-agent/1.parquet", 1328, 0x22, 0x21, -17, 17, Some(map)),
    ] {
        let mut raw = std::fs::read(format!("{data}{file}")).unwrap();
        assert_eq!(raw[at], was, "{file}: not the byte this test changes");
        raw[at] = now;
        let dir = d.join(file.replace('/', "-"));
        std::fs::create_dir_all(&dir).unwrap();
        let bad = dir.join(file.rsplit('/').next().unwrap());
        std::fs::write(&bad, &raw).unwrap();
        let out = dir.join("out");
        let mut args = vec![
            "--headless",
            dir.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ];
        args.extend(mapping.map(|m| ["--map", m]).into_iter().flatten());
        let o = rl_audit(&args);
        assert_eq!(o.status.code(), Some(2), "{file}");
        assert_eq!(
            String::from_utf8_lossy(&o.stderr),
            format!(
                "rl-audit: {}: not a readable Parquet file: a data page's header counts \
                 {values} values, its column chunk has {left} left (a damaged page header)\n",
                bad.display()
            )
        );
        assert!(!out.exists(), "{file}: a report was written");
    }
}
