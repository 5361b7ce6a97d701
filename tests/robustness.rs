//! Hostile and broken input end to end (strict exit 2 with file[:line],
//! lenient counts), live files, and property tests of the estimators.

mod common;
use common::*;
use proptest::prelude::*;
use serde_json::json;

use rl_audit::analysis::bootstrap::cluster_bootstrap;
use rl_audit::analysis::likelihood::{length_matched_pairs, Scored};
use rl_audit::analysis::stats::{pass_at_k, Bootstrap, Cluster};
use rl_audit::schema::Loc;

fn good_line() -> String {
    traj("a", "b", "t", 4, 4, Some(2)).to_string()
}

fn strict(name: &str, bytes: &[u8], file: &str) -> String {
    strict_failure(name, file, bytes)
}

/// A strict audit of `bytes` as `x.jsonl` fails with exactly `want` (its
/// `x.jsonl:line: field: …` tail).
fn refused_as(name: &str, bytes: &[u8], want: &str) {
    let err = strict(name, bytes, "x.jsonl");
    let err = err.trim_end();
    assert!(
        err.starts_with("rl-audit: ") && err.ends_with(&format!("/{want}")),
        "{err:?} should end in {want:?}"
    );
}

/// `bytes` loaded as a log set of its own (file `x.jsonl`).
fn loaded(name: &str, bytes: Vec<u8>) -> rl_audit::schema::LogSet {
    let f = temp_dir(name).join("x.jsonl");
    std::fs::write(&f, bytes).unwrap();
    rl_audit::schema::load(&[f], &Default::default()).unwrap()
}

#[test]
fn hostile_records_fail_cleanly() {
    let g = good_line();
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("nan_literal", format!("{g}\n{{\"run\": \"a\", \"benchmark\": \"b\", \"task\": \"t\", \"budget\": NaN, \"success\": true}}\n").into_bytes(), ":2:"),
        ("infinity", format!("{g}\n{{\"run\": \"a\", \"benchmark\": \"b\", \"task\": \"t\", \"budget\": 4, \"success\": true, \"reward\": Infinity}}\n").into_bytes(), ":2:"),
        ("huge_int", format!("{g}\n{{\"run\": \"a\", \"benchmark\": \"b\", \"task\": \"t\", \"budget\": 99999999999999999999999, \"success\": true}}\n").into_bytes(), ":2: budget"),
        ("huge_float", format!("{g}\n{{\"run\": \"a\", \"benchmark\": \"b\", \"task\": \"t\", \"budget\": 4, \"success\": true, \"reward\": 1e999}}\n").into_bytes(), ":2:"),
        ("deep_nesting", format!("{g}\n{}\n", "[".repeat(100_000)).into_bytes(), ":2:"),
        ("non_utf8", [g.as_bytes(), b"\n{\"run\": \"a\xff\xfe\", \"benchmark\": \"b\", \"task\": \"t\", \"budget\": 4, \"success\": true}\n"].concat(), ":2:"),
        ("negative_turns", format!("{g}\n{{\"run\": \"a\", \"benchmark\": \"b\", \"task\": \"t\", \"budget\": 4, \"success\": false, \"turns\": -1}}\n").into_bytes(), ":2: turns"),
        ("min_turns_zero", format!("{g}\n{{\"run\": \"a\", \"benchmark\": \"b\", \"task\": \"t\", \"budget\": 4, \"success\": false, \"min_turns\": 0}}\n").into_bytes(), ":2: min_turns"),
        ("step_turn_zero", format!("{g}\n{{\"run\": \"a\", \"benchmark\": \"b\", \"task\": \"t\", \"budget\": 4, \"success\": false, \"steps\": [{{\"turn\": 0}}]}}\n").into_bytes(), ":2: steps[0].turn"),
        ("bad_frozenlake", format!("{g}\n{{\"kind\": \"probe\", \"benchmark\": \"b\", \"task\": \"t\", \"state\": \"s\", \"source\": \"a\", \"turn\": 1, \"frozenlake\": {{\"map\": [\"SFX\"], \"pos\": 0, \"steps_left\": 2}}, \"candidates\": []}}\n").into_bytes(), ":2: frozenlake.map"),
        ("frozenlake_pos", format!("{g}\n{{\"kind\": \"probe\", \"benchmark\": \"b\", \"task\": \"t\", \"state\": \"s\", \"source\": \"a\", \"turn\": 1, \"frozenlake\": {{\"map\": [\"SFG\"], \"pos\": 9, \"steps_left\": 2}}, \"candidates\": []}}\n").into_bytes(), ":2: frozenlake.pos"),
    ];
    for (name, bytes, want) in cases {
        let err = strict(name, &bytes, "x.jsonl");
        assert!(err.contains(want), "{name}: {err:?} lacks {want:?}");
    }
}

#[test]
fn step_numbers_beyond_what_a_step_can_hold_are_impossible_not_truncated() {
    // A step keeps tokens in 32 bits and budgets in ±2³¹ (past a step's 3
    // bytes, in its extras and budgets):
    // larger values are refused by name, never stored wrapped.
    let g = good_line();
    let step = |s: &str| {
        format!("{g}\n{{\"run\": \"a\", \"benchmark\": \"b\", \"task\": \"t\", \"budget\": 4, \"success\": false, \"steps\": [{{{s}}}]}}\n").into_bytes()
    };
    let cases = [
        (
            step("\"output_tokens\": 4294967295"),
            "x.jsonl:2: steps[0].output_tokens: 4294967295 is more than a step can generate (at most 4294967294)",
        ),
        (
            step("\"budget_total\": 2147483648"),
            "x.jsonl:2: steps[0].budget_total: out of range",
        ),
        (
            step("\"budget_remaining\": -9223372036854775808"),
            "x.jsonl:2: steps[0].budget_remaining: out of range",
        ),
    ];
    for (i, (bytes, want)) in cases.iter().enumerate() {
        refused_as(&format!("step_limit_{i}"), bytes, want);
    }
    // The largest values that fit are kept exactly.
    let set = loaded(
        "step_limits",
        step("\"output_tokens\": 4294967294, \"budget_total\": 2147483647, \"budget_remaining\": -2147483647"),
    );
    let t = set
        .trajectories
        .iter()
        .find(|t| t.steps().is_some())
        .unwrap();
    let s = set.steps_of(t).iter().next().unwrap();
    assert_eq!(s.output_tokens(), Some(4_294_967_294));
    assert_eq!(s.budget(), (Some(2_147_483_647), Some(-2_147_483_647)));
    // Either side of the 16 bits a step holds its count in (65,533 the
    // largest kept there; 65,534 and up in its extras), between steps that
    // hold theirs: each read back as written.
    let tokens = [0u64, 65_533, 65_534, 65_535, 65_536, 7, 16_777_216];
    let steps: Vec<String> = tokens
        .iter()
        .map(|t| format!("{{\"output_tokens\": {t}}}"))
        .collect();
    let set = loaded(
        "step_token_bits",
        format!("{g}\n{{\"run\": \"a\", \"benchmark\": \"b\", \"task\": \"t\", \"budget\": 9, \"success\": false, \"steps\": [{}, {{}}]}}\n", steps.join(", ")).into_bytes(),
    );
    let t = set.trajectories.iter().find(|t| t.budget == 9).unwrap();
    let read: Vec<Option<u64>> = set.steps_of(t).iter().map(|s| s.output_tokens()).collect();
    let mut want: Vec<Option<u64>> = tokens.iter().copied().map(Some).collect();
    want.push(None);
    assert_eq!(read, want);
}

#[test]
fn turn_counts_up_to_the_largest_a_trajectory_holds_are_kept_exactly() {
    // A trajectory keeps its optional counts in 4 bytes each, u32::MAX
    // standing for "absent": that value is refused by name, the one below
    // it kept as given.
    let g = good_line();
    let rec = |s: &str| {
        format!(
            "{g}\n{{\"run\": \"a\", \"benchmark\": \"b\", \"task\": \"u\", \"budget\": 4, {s}}}\n"
        )
        .into_bytes()
    };
    for (i, (fields, want)) in [
        (
            "\"success\": false, \"turns\": 4294967295",
            "x.jsonl:2: turns: 4294967295 is too large",
        ),
        (
            "\"success\": false, \"min_turns\": 4294967295",
            "x.jsonl:2: min_turns: 4294967295 is too large",
        ),
        (
            "\"success\": true, \"turns\": 3, \"success_turn\": 4294967295",
            "x.jsonl:2: success_turn: 4294967295 is too large",
        ),
        // Past 64 bits (serde_json: a u64, then a float with no fraction):
        // still an integer, too large — not "expected an integer".
        (
            "\"success\": false, \"turns\": 9223372036854775808",
            "x.jsonl:2: turns: 9223372036854775808 is too large",
        ),
        (
            "\"success\": false, \"sample\": 18446744073709551616",
            "x.jsonl:2: sample: 1.8446744073709552e+19 is too large",
        ),
        (
            "\"success\": false, \"sample\": -18446744073709551616",
            "x.jsonl:2: sample: -1.8446744073709552e+19 is too small",
        ),
    ]
    .iter()
    .enumerate()
    {
        refused_as(&format!("count_limit_{i}"), &rec(fields), want);
    }
    let set = loaded(
        "count_limits",
        rec("\"success\": true, \"turns\": 4294967294, \"success_turn\": 4294967294, \"min_turns\": 4294967294, \"max_budget\": 1000000"),
    );
    let t = set
        .trajectories
        .iter()
        .find(|t| set.name(t.task) == "u")
        .unwrap();
    assert_eq!(t.turns, 4_294_967_294);
    assert_eq!(t.success_turn(), Some(4_294_967_294));
    assert_eq!(t.min_turns(), Some(4_294_967_294));
    assert_eq!(t.max_budget(), Some(1_000_000));
    assert_eq!(
        (t.method(), t.group(), t.seed(), t.category()),
        (None, None, None, None)
    );
}

#[test]
fn a_50_mb_line_is_read_not_choked_on() {
    let d = temp_dir("long_line");
    let f = d.join("x.jsonl");
    let big = "x".repeat(50 << 20);
    let mut t = traj("a", "b", "t", 4, 4, Some(2));
    t["note"] = json!(big);
    std::fs::write(&f, format!("{}\n{t}\n", good_line())).unwrap();
    let r = audit_json(&f, &d.join("out"), &["--resamples", "20"]);
    assert_eq!(r["inputs"]["records"]["trajectory"], 2);
}

#[test]
fn broken_archives_and_empty_files() {
    let mut gz = Vec::new();
    {
        use std::io::Write;
        let mut e = flate2::write::GzEncoder::new(&mut gz, flate2::Compression::default());
        for _ in 0..2000 {
            writeln!(e, "{}", good_line()).unwrap();
        }
        e.finish().unwrap();
    }
    let half = gz.len() / 2;
    strict("truncated_gz", &gz[..half], "x.jsonl.gz");
    let zst = zstd::stream::encode_all(good_line().repeat(2000).as_bytes(), 3).unwrap();
    strict("truncated_zst", &zst[..zst.len() / 2], "x.jsonl.zst");
    strict("garbage_zst", b"not zstd at all", "x.jsonl.zst");
    strict("blank_only", b"\n\n   \n", "x.jsonl");
}

#[test]
fn unreadable_file_when_permissions_bind() {
    use std::os::unix::fs::PermissionsExt;
    let d = temp_dir("unreadable");
    let f = d.join("x.jsonl");
    std::fs::write(&f, good_line()).unwrap();
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o000)).unwrap();
    if std::fs::read(&f).is_ok() {
        return; // running as root: permissions do not bind
    }
    let err = strict_existing(&f, &d);
    assert!(err.contains("permission denied"), "{err}");
}

fn strict_existing(f: &std::path::Path, d: &std::path::Path) -> String {
    let o = rl_audit(&[
        "--headless",
        f.to_str().unwrap(),
        "--out",
        d.join("out").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    String::from_utf8_lossy(&o.stderr).to_string()
}

/// Each conflict between records (SPEC §1: one method per run, one
/// `max_budget` and one `min_turns` per task) stops the audit at the later
/// record, naming its field, both values and where the first was given.
#[test]
fn conflicts_between_records_name_both_values_and_the_first_place() {
    let d = temp_dir("conflicts");
    let f = d.join("x.jsonl");
    let first = format!("{}:1", f.display());
    let with = |method: &str, max_budget: u32, min_turns: u32| {
        let mut t = traj("r", "b", "t", 4, max_budget, Some(2));
        t["method"] = json!(method);
        t["min_turns"] = json!(min_turns);
        t
    };
    let cases = [
        (
            with("grpo", 8, 2),
            format!(
                "{}:2: method: run \"r\" is declared as method \"base\" elsewhere, \
                 this record says \"grpo\" (first seen at {first})",
                f.display()
            ),
        ),
        (
            with("base", 9, 2),
            format!(
                "{}:2: max_budget: 9 differs from this task's max_budget 8 given elsewhere \
                 (first seen at {first})",
                f.display()
            ),
        ),
        (
            with("base", 8, 3),
            format!(
                "{}:2: min_turns: 3 differs from this task's min_turns 2 given elsewhere \
                 (first seen at {first})",
                f.display()
            ),
        ),
    ];
    for (second, want) in cases {
        let mut second = second;
        second["sample"] = json!(1);
        write_lines(&f, &[with("base", 8, 2), second]);
        let err = strict_existing(&f, &d);
        let want = format!("rl-audit: {want}");
        assert_eq!(err.lines().next(), Some(want.as_str()), "{err}");
    }
}

#[test]
fn training_logs_with_groups_are_not_duplicates() {
    let d = temp_dir("dup_training");
    let mut v = Vec::new();
    // Same (run, task, budget, sample) in different train steps and groups: all distinct.
    for step in 0..3 {
        for group in 0..2 {
            let mut t = traj("bm", "b", "t", 4, 4, Some(2));
            t["sample"] = json!(0);
            t["train_step"] = json!(step);
            t["group"] = json!(group);
            v.push(t);
        }
    }
    // `1` and `"1"` are the same group: this one duplicates step 0, group 1.
    let mut dup = traj("bm", "b", "t", 4, 4, Some(2));
    dup["sample"] = json!(0);
    dup["train_step"] = json!(0);
    dup["group"] = json!("1");
    v.push(dup);
    write_lines(&d.join("x.jsonl"), &v);
    let o = rl_audit(&[
        "--headless",
        d.join("x.jsonl").to_str().unwrap(),
        "--out",
        d.join("out").to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2));
    assert!(err.contains("x.jsonl:7: sample: duplicate"), "{err}");
    v.pop();
    write_lines(&d.join("x.jsonl"), &v);
    let r = audit_json(&d.join("x.jsonl"), &d.join("out"), &["--resamples", "20"]);
    assert_eq!(r["inputs"]["records"]["trajectory"], 6);
}

/// The checks across records, duplicates included, name the first
/// violation in file order; a record is a duplicate only of an earlier one
/// that passed the other checks (lenient: a twin dropped for another
/// reason leaves the next one in).
#[test]
fn duplicates_and_other_conflicts_are_named_in_file_order() {
    let d = temp_dir("dup_order");
    let sample = |task: &str, max_budget: u32, s: u32| {
        let mut t = traj("base", "b", task, 4, max_budget, Some(2));
        t["sample"] = json!(s);
        t
    };
    let fails = |lines: &[serde_json::Value]| {
        write_lines(&d.join("x.jsonl"), lines);
        strict_existing(&d.join("x.jsonl"), &d)
    };
    // Line 2 repeats line 1; line 3 gives t another max_budget: the duplicate first.
    let err = fails(&[sample("t", 8, 0), sample("t", 8, 0), sample("t", 9, 1)]);
    let first = d.join("x.jsonl:1").display().to_string();
    assert!(
        err.contains(&format!(
            "x.jsonl:2: sample: duplicate trajectory (first seen at {first})"
        )),
        "{err}"
    );
    // The conflict first (line 2), the duplicate after it (line 3).
    let err = fails(&[sample("t", 8, 0), sample("t", 9, 1), sample("t", 8, 0)]);
    assert!(err.contains("x.jsonl:2: max_budget:"), "{err}");
    // One record both: its max_budget is checked first.
    let err = fails(&[sample("t", 8, 0), sample("t", 9, 0)]);
    assert!(err.contains("x.jsonl:2: max_budget:"), "{err}");
    // Lenient: line 2 (max_budget 9) is dropped, so line 3, its twin, is
    // no duplicate; line 4 repeats line 3.
    let lines = [
        sample("t", 8, 0),
        sample("t", 9, 1),
        sample("t", 8, 1),
        sample("t", 8, 1),
        sample("u", 8, 0),
    ];
    write_lines(&d.join("x.jsonl"), &lines);
    let r = audit_json(
        &d.join("x.jsonl"),
        &d.join("out"),
        &["--lenient", "--resamples", "20"],
    );
    assert_eq!(r["inputs"]["skipped"]["impossible_value"], 1);
    assert_eq!(r["inputs"]["skipped"]["duplicate"], 1);
    assert_eq!(r["inputs"]["records"]["trajectory"], 3);
}

#[test]
fn lenient_counts_match_a_mixed_corpus() {
    let d = temp_dir("lenient_corpus");
    let g = good_line();
    let lines = [
        g.clone(),
        "{\"run\": ".to_string(),                                                                          // syntax
        "\u{7f}garbage".to_string(),                                                                         // syntax
        r#"{"run": 5, "benchmark": "b", "task": "t", "budget": 4, "success": true}"#.to_string(),           // type
        r#"{"benchmark": "b", "task": "t", "budget": 4, "success": true}"#.to_string(),                     // missing
        r#"{"run": "a", "benchmark": "b", "task": "t", "budget": 4, "success": true, "turns": 1, "success_turn": 2}"#.to_string(), // impossible
        r#"{"run": "a", "benchmark": "b", "task": "t", "budget": 4, "max_budget": 9, "success": true}"#.to_string(), // impossible (conflict)
        r#"{"kind": "weird"}"#.to_string(),
        r#"{"kind": "weird"}"#.to_string(),
    ];
    std::fs::write(d.join("x.jsonl"), lines.join("\n")).unwrap();
    let r = audit_json(
        &d.join("x.jsonl"),
        &d.join("out"),
        &["--lenient", "--resamples", "20"],
    );
    assert_eq!(
        r["inputs"]["skipped"],
        json!({"syntax": 2, "type": 1, "missing_field": 1, "impossible_value": 2, "duplicate": 0})
    );
    assert_eq!(r["inputs"]["unknown_kinds"], json!({"weird": 2}));
    let md = std::fs::read_to_string(d.join("out/report.md")).unwrap();
    assert!(md.contains("Skipped 6 bad record(s)"), "{md}");
}

#[test]
fn follow_mode_tolerates_a_half_written_last_line() {
    let d = temp_dir("follow_half");
    let f = d.join("live.jsonl");
    let g = good_line();
    std::fs::write(&f, format!("{g}\n{}", &g[..g.len() / 2])).unwrap();
    let out = d.join("out");
    // Strict without --follow: the half line is an error.
    let o = rl_audit(&[
        "--headless",
        f.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    // With --follow it is the writer's next line, not an error.
    let o = rl_audit(&[
        "--headless",
        "--follow",
        f.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--resamples",
        "20",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn pass_at_k_is_a_monotone_probability(n in 1u64..60, c_frac in 0.0f64..=1.0, k in 1u64..60) {
        let c = ((n as f64) * c_frac).round() as u64;
        let p = pass_at_k(n, c, k.min(n));
        prop_assert!((0.0..=1.0).contains(&p));
        prop_assert!((pass_at_k(n, c, 1) - c as f64 / n as f64).abs() < 1e-12);
        if k < n {
            prop_assert!(pass_at_k(n, c, k + 1) + 1e-12 >= pass_at_k(n, c, k));
        }
        if c < n {
            // More solved within a larger T never lowers Pass.
            prop_assert!(pass_at_k(n, c + 1, k.min(n)) + 1e-12 >= p);
        }
    }

    #[test]
    fn bootstrap_interval_contains_the_estimate_for_symmetric_data(half in prop::collection::vec(-5.0f64..5.0, 2..30)) {
        let mut v: Vec<Cluster> = half.iter().map(|x| Cluster::one(*x)).collect();
        v.extend(half.iter().map(|x| Cluster::one(-*x)));
        let cfg = Bootstrap { resamples: 400, ..Default::default() };
        let e = cluster_bootstrap(&v, &cfg);
        if let Some((l, h)) = e.ci.bounds() {
            prop_assert!(l <= e.value + 1e-12 && e.value <= h + 1e-12, "{l} {} {h}", e.value);
        }
    }

    #[test]
    fn pairing_never_reuses_and_stays_within_ten_percent(
        rl in prop::collection::vec(1u64..200, 0..12),
        base in prop::collection::vec(1u64..200, 0..12),
    ) {
        let s = |v: &[u64], off: u64| v.iter().enumerate().map(|(i, &len)| Scored { loc: Loc::new(0, off + i as u64), len, llr: 0.0 }).collect::<Vec<_>>();
        let (a, b) = (s(&rl, 0), s(&base, 100));
        let pairs = length_matched_pairs(&a, &b);
        let mut used_a = std::collections::HashSet::new();
        let mut used_b = std::collections::HashSet::new();
        for (i, j) in &pairs {
            prop_assert!(used_a.insert(*i) && used_b.insert(*j));
            let (x, y) = (a[*i].len, b[*j].len);
            prop_assert!(10 * x.abs_diff(y) <= x.max(y));
        }
    }
}

#[test]
fn a_frozenlake_probe_too_large_to_solve_is_reported_not_attempted() {
    let map: Vec<String> = vec!["F".repeat(200); 200];
    let line = serde_json::json!({
        "kind": "probe", "benchmark": "frozenlake", "task": "m", "state": "s",
        "source": "base", "turn": 1, "error": false,
        "frozenlake": {"map": map, "pos": 0, "steps_left": 4_000_000u32, "slippery": true},
        "candidates": [{"run": "base", "action": 1}, {"run": "rl", "action": 2}]
    });
    let err = strict_failure("huge_lake", "p.jsonl", format!("{line}\n").as_bytes());
    assert!(
        err.contains("p.jsonl:1: frozenlake.steps_left:") && err.contains("200×200"),
        "{err}"
    );
}

/// A step holds 4 bytes: its turn (when not its position + 1), a token
/// count past 24 bits, a 15th log-probability, its log-probabilities and
/// its budget fields are found from where it is.
/// Checked against the records as written, across parse chunks (1 MiB),
/// with the audit's load (log-probabilities of successful evaluation
/// rollouts only) and a summary's (every one).
#[test]
fn what_a_step_does_not_hold_is_found_again_exactly() {
    // (turn, logp a/b, budget fields) of rollout i's step j.
    let turn = |i: usize, j: usize| {
        if i.is_multiple_of(3) {
            j + 1
        } else {
            2 * j + 1
        }
    };
    let logp = |i: usize, j: usize| {
        (i + j)
            .is_multiple_of(2)
            .then(|| (-((i * 7 + j) as f64) / 8.0, 0.1 - (i + 3 * j) as f64 / 1e4))
    };
    let budget = |i: usize, j: usize| (j == 1).then_some((i % 5) as i64 - 2);
    // Around the most a step holds itself (2^24 − 3 tokens, 14 entries).
    let tokens = |i: usize, j: usize| match i % 7 {
        5 => 16_777_213 + j,
        6 => 4_294_967_294 - j,
        _ => i + j,
    };
    let more_runs = |i: usize| match i % 11 {
        1 => 13,
        2 => 12,
        _ => 0,
    };
    let n = 40_000;
    let mut lines = Vec::with_capacity(n);
    for i in 0..n {
        let steps: Vec<serde_json::Value> = (0..1 + i % 4)
            .map(|j| {
                let mut s = json!({"output_tokens": tokens(i, j), "error": j % 2 == 1});
                if i % 3 != 0 {
                    s["turn"] = json!(turn(i, j));
                }
                if let Some((a, b)) = logp(i, j) {
                    s["logp"] = json!({"a": a, "b": b});
                    for k in 0..more_runs(i) {
                        s["logp"][format!("c{k:02}")] = json!(k as f64 / 3.0);
                    }
                }
                if let Some(r) = budget(i, j) {
                    s["budget_total"] = json!(8);
                    s["budget_remaining"] = json!(r);
                }
                s
            })
            .collect();
        let last = turn(i, i % 4);
        let mut r = json!({"run": "a", "benchmark": "b", "task": format!("t{}", i / 4),
            "sample": i % 4, "budget": 8, "turns": last, "success": i % 2 == 0, "steps": steps});
        if i % 10 == 4 {
            r["train_step"] = json!(1);
            r["group"] = json!(i);
        }
        lines.push(r.to_string());
    }
    let d = temp_dir("step_places");
    let f = d.join("x.jsonl");
    std::fs::write(&f, lines.join("\n") + "\n").unwrap();
    assert!(
        std::fs::metadata(&f).unwrap().len() > 9 << 20,
        "three chunks at least"
    );
    for all_logps in [false, true] {
        let opts = rl_audit::schema::LoadOptions {
            all_logps,
            ..Default::default()
        };
        let set = rl_audit::schema::load(std::slice::from_ref(&f), &opts).unwrap();
        let (a, b) = (set.strings.get("a").unwrap(), set.strings.get("b").unwrap());
        assert_eq!(set.trajectories.len(), n);
        for (i, t) in set.trajectories.iter().enumerate() {
            assert_eq!(t.loc.line(), i as u64 + 1);
            let read = all_logps || (i % 2 == 0 && i % 10 != 4);
            let steps = set.steps_of(t);
            assert_eq!(steps.len(), 1 + i % 4);
            for (j, st) in steps.into_iter().enumerate() {
                assert_eq!(st.turn as usize, turn(i, j), "rollout {i} step {j}");
                assert_eq!(st.output_tokens(), Some(tokens(i, j) as u64));
                assert_eq!(st.error(), Some(j % 2 == 1));
                let want = logp(i, j).filter(|_| read);
                assert_eq!(
                    st.logp_of(a).zip(st.logp_of(b)),
                    want,
                    "rollout {i} step {j}"
                );
                let got: Vec<(rl_audit::schema::Id, f64)> = st.logps().collect();
                let mut all = want.map_or(vec![], |(x, y)| vec![(a, x), (b, y)]);
                if want.is_some() {
                    all.extend((0..more_runs(i)).map(|k| {
                        let c = set.strings.get(&format!("c{k:02}")).unwrap();
                        (c, k as f64 / 3.0)
                    }));
                }
                assert_eq!(st.logp_len(), all.len(), "rollout {i} step {j}");
                assert_eq!(got, all, "rollout {i} step {j}");
                let (total, left) = st.budget();
                assert_eq!(left, budget(i, j));
                assert_eq!(total, budget(i, j).map(|_| 8));
            }
        }
    }
}

/// A JSON Lines file as Windows tools write it — a UTF-8 byte order mark
/// first, CRLF line ends — audits as the plain file does (every section
/// but `inputs`, which names the files), and its first record is re-read
/// for the trajectory view.
#[test]
fn a_byte_order_mark_and_crlf_line_ends_change_nothing() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/large/jsonl");
    let d = temp_dir("bom_crlf");
    let (plain, windows) = (d.join("plain"), d.join("windows"));
    for dir in [&plain, &windows] {
        std::fs::create_dir_all(dir).unwrap();
    }
    for f in [
        "eval-000.jsonl",
        "probes.jsonl",
        "checkpoints.jsonl",
        "train-000.jsonl",
    ] {
        let text = std::fs::read_to_string(root.join(f)).unwrap();
        std::fs::write(plain.join(f), &text).unwrap();
        let crlf = format!("\u{feff}{}", text.replace('\n', "\r\n"));
        std::fs::write(windows.join(f), crlf).unwrap();
    }
    let a = audit_json(&plain, &d.join("a"), &["--resamples", "200"]);
    let b = audit_json(&windows, &d.join("b"), &["--resamples", "200"]);
    assert_eq!(a["inputs"]["records"]["trajectory"], 448);
    assert_eq!(a["inputs"]["records"], b["inputs"]["records"]);
    for (k, v) in a.as_object().unwrap() {
        if k != "inputs" {
            assert_eq!(v, &b[k], "section {k} differs");
        }
    }
    let first = |dir: &std::path::Path| {
        rl_audit::schema::load::read_record(dir.join("eval-000.jsonl").to_str().unwrap(), 1)
            .unwrap()
    };
    assert_eq!(first(&plain), first(&windows));
}

/// A name holding a control character — an escape sequence that would act
/// on the terminal where a report or an error is read, a newline, C1's
/// NEL — is refused by field, the name shown escaped, and so is an empty
/// one; texts (actions, observations) may hold them.
#[test]
fn a_name_with_a_control_character_is_refused_by_field() {
    let g = good_line();
    let cases = [
        (
            json!({"run": "grpo\u{1b}[31m", "benchmark": "b", "task": "t", "budget": 4, "success": false}),
            r#"x.jsonl:2: run: "grpo\u{1b}[31m" holds a control character (U+001B); names are printed in reports and on terminals"#,
        ),
        (
            json!({"run": "a", "benchmark": "b", "task": "line\nbreak", "budget": 4, "success": false}),
            r#"x.jsonl:2: task: "line\nbreak" holds a control character (U+000A); names are printed in reports and on terminals"#,
        ),
        (
            json!({"run": "a", "benchmark": "b", "task": "t", "budget": 4, "success": false,
                   "steps": [{"turn": 1, "logp": {"a": -1.0, "b\u{85}": -2.0}}]}),
            r#"x.jsonl:2: steps[0].logp: "b\u{85}" holds a control character (U+0085); names are printed in reports and on terminals"#,
        ),
        (
            json!({"kind": "probe", "benchmark": "b", "task": "t", "state": "s", "source": "a\u{7}",
                   "turn": 1, "candidates": [{"run": "a", "action": "x", "score": 1.0}]}),
            r#"x.jsonl:2: source: "a\u{7}" holds a control character (U+0007); names are printed in reports and on terminals"#,
        ),
    ];
    for (i, (rec, want)) in cases.iter().enumerate() {
        refused_as(
            &format!("control_{i}"),
            format!("{g}\n{rec}\n").as_bytes(),
            want,
        );
    }
    // An empty name: a run, or an optional field given empty.
    let empty = "empty: a name needs a character (leave an optional field out instead)";
    for (i, (rec, field)) in [
        (
            json!({"run": "", "benchmark": "b", "task": "t", "budget": 4, "success": false}),
            "run",
        ),
        (
            json!({"run": "a", "benchmark": "b", "task": "t", "budget": 4, "success": false, "category": ""}),
            "category",
        ),
    ]
    .iter()
    .enumerate()
    {
        refused_as(
            &format!("empty_{i}"),
            format!("{g}\n{rec}\n").as_bytes(),
            &format!("x.jsonl:2: {field}: {empty}"),
        );
    }
    // A text may: an observation with a newline and a tab loads.
    let text = json!({"run": "a", "benchmark": "b", "task": "u", "budget": 4, "success": false,
        "steps": [{"turn": 1, "action": "ls\t-l", "observation": "a\nb\u{1b}[0m"}]});
    let set = loaded("control_text", format!("{g}\n{text}\n").into_bytes());
    assert_eq!(set.trajectories.len(), 2);
}
