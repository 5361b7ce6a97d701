//! `--map`: the shipped mappings load dumps laid out exactly as verl, SkyRL,
//! AReaL and (patched) verl-agent write them — each fixture made by a script
//! following the framework's own writer (`tests/data/<framework>/make.py`,
//! commit and lines in its header), with `expected.json` computed there
//! from the rows; broken mappings and bad source records are reported with
//! the file, the record and the source field.

mod common;
use common::*;
use serde_json::{json, Value};

fn root() -> &'static std::path::Path {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A headless audit of a fixture folder through a shipped mapping.
fn mapped(data: &str, mapping: &str, out: &std::path::Path, extra: &[&str]) -> Value {
    let m = root().join("assets/mappings").join(mapping);
    let mut args = vec!["--map", m.to_str().unwrap(), "--resamples", "50"];
    args.extend_from_slice(extra);
    audit_json(&root().join("tests/data").join(data), out, &args)
}

fn expected(framework: &str) -> Value {
    let p = root()
        .join("tests/data")
        .join(framework)
        .join("expected.json");
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

/// Each expected run's task count and Pass@1 at its own budget (100%),
/// and the total rollouts; `key` names (run, benchmark) of an expected entry.
fn check_outcome_runs(r: &Value, exp: &Value, key: impl Fn(&str) -> (String, Option<String>)) {
    let (mut rows, mut most) = (0, 0u64);
    for (name, e) in exp["runs"].as_object().unwrap() {
        let (run, bench) = key(name);
        let mut keys = vec![
            ("run", json!(run)),
            ("k", json!(1)),
            ("level", json!(100)),
            ("t_mode", json!("native")),
        ];
        if let Some(b) = bench {
            keys.push(("benchmark", json!(b)));
        }
        let c = one(r, "pass_at_kt", &keys);
        close(&c["value"], e["pass1"].as_f64().unwrap());
        assert_eq!(c["tasks"], e["tasks"], "{name}");
        most = most.max(e["samples_per_task"][0].as_u64().unwrap());
        rows += e["rows"].as_u64().unwrap();
    }
    // Samples per task (the row's position among its prompt's rows) set
    // the K grid: powers of two up to the most samples of any task.
    let top = 1u64 << (63 - most.leading_zeros());
    assert_eq!(
        r["settings"]["ks"].as_array().unwrap().last(),
        Some(&json!(top))
    );
    assert_eq!(r["inputs"]["records"]["trajectory"], rows);
    // Outcome only: nothing truncated, no curve, and the report says why.
    assert!(rows_of(r, "pass_at_kt")
        .iter()
        .all(|c| c["t_mode"] == "native"));
    assert!(rows_of(r, "pass_curve").is_empty());
    assert!(rows_of(r, "token_budget").is_empty());
    assert!(rows_of(r, "cost_frontier").is_empty());
}

fn rows_of<'a>(r: &'a Value, section: &str) -> &'a Vec<Value> {
    r[section].as_array().unwrap()
}

fn says_turns_unknown(out: &std::path::Path) {
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        md.contains("have unknown turns") && md.contains("need per-turn logs"),
        "report.md does not say what is missing"
    );
}

#[test]
fn verl_generation_dumps() {
    let d = temp_dir("map_verl_gen");
    let r = mapped("verl/val", "verl-generations.toml", &d.join("out"), &[]);
    check_outcome_runs(&r, &expected("verl"), |n| (n.to_string(), None));
    says_turns_unknown(&d.join("out"));
    // --run-label names the runs' label part.
    let r = mapped(
        "verl/val",
        "verl-generations.toml",
        &d.join("lab"),
        &["--run-label", "qwen3-grpo"],
    );
    assert!(rows_of(&r, "pass_at_kt")
        .iter()
        .all(|c| c["run"].as_str().unwrap().starts_with("qwen3-grpo@")));
}

#[test]
fn skyrl_eval_dumps() {
    let d = temp_dir("map_skyrl");
    let r = mapped("skyrl/export", "skyrl-evals.toml", &d.join("out"), &[]);
    // Keys are "<run>/<data_source>" (data sources may hold a '/').
    check_outcome_runs(&r, &expected("skyrl"), |n| {
        let (run, bench) = n.split_once('/').unwrap();
        (run.to_string(), Some(bench.to_string()))
    });
    // The metrics files hold no rollouts: passed over and listed.
    let ignored = rows_of(&r["inputs"], "ignored_files");
    assert_eq!(ignored.len(), 3);
    assert!(ignored
        .iter()
        .all(|f| f.as_str().unwrap().ends_with("/aggregated_results.jsonl")));
    says_turns_unknown(&d.join("out"));
}

#[test]
fn areal_eval_rollouts() {
    let d = temp_dir("map_areal");
    let r = mapped("areal/fileroot", "areal-rollouts.toml", &d.join("out"), &[]);
    check_outcome_runs(&r, &expected("areal"), |n| {
        (n.to_string(), Some("gsm8k-grpo".to_string()))
    });
    // The training `rollout/` folder is not this mapping's.
    assert_eq!(rows_of(&r["inputs"], "ignored_files").len(), 1);
}

#[test]
fn verl_agent_patched_step_rows() {
    let d = temp_dir("map_verl_agent");
    let r = mapped(
        "verl-agent/rollout_data",
        "verl-agent-steps.toml",
        &d.join("out"),
        &["--run-label", "gigpo", "--audit", "gigpo"],
    );
    let exp = &expected("verl-agent")["steps"];
    let sum = |k: &str| -> u64 {
        exp.as_object()
            .unwrap()
            .values()
            .map(|s| s[k].as_u64().unwrap())
            .sum()
    };
    // Rows shuffled by the trainer's balancing regroup into trajectories.
    assert_eq!(r["inputs"]["records"]["trajectory"], sum("trajectories"));
    let rules = rows_of(&r["budgetmix"][0], "rules");
    let rule = |n: &str| rules.iter().find(|x| x["rule"] == n).unwrap();
    // One GRPO group per (training step, uid).
    assert_eq!(rule("group_consistency")["checked"], sum("groups"));
    // Successful rollouts: the patch's traj_success.
    assert_eq!(rule("no_success_past_budget")["checked"], sum("solved"));
    // Every kept row is one step.
    assert_eq!(rule("budget_disclosure")["checked"], sum("rows"));
    let set = load_mapped("verl-agent/rollout_data", "verl-agent-steps.toml");
    let steps = || set.trajectories.iter().flat_map(|t| set.steps_of(t));
    let tokens: u64 = steps().filter_map(|s| s.output_tokens()).sum();
    let invalid = steps().filter(|s| s.error() == Some(true)).count() as u64;
    assert_eq!(tokens, sum("tokens"));
    assert_eq!(invalid, sum("invalid_steps"));
    // Steps in env_step order within each trajectory.
    for t in &set.trajectories {
        let turns: Vec<u32> = set.steps_of(t).iter().map(|s| s.turn).collect();
        assert_eq!(turns, (1..=turns.len() as u32).collect::<Vec<_>>());
        assert_eq!(t.turns as usize, turns.len());
    }
    // Audited by name, with no evaluation rollouts: report.md says why
    // there is no gain table.
    let md = std::fs::read_to_string(d.join("out/report.md")).unwrap();
    assert!(md.contains("> Note: no gain table for gigpo: it has no evaluation rollouts (a gain is its Pass@(1,T) less the full-budget RL run's)\n"));
    // Not audited: report.md names the run and its training rollouts, so
    // that --audit can name it.
    mapped(
        "verl-agent/rollout_data",
        "verl-agent-steps.toml",
        &d.join("plain"),
        &["--run-label", "gigpo", "--tour"],
    );
    let md = std::fs::read_to_string(d.join("plain/report.md")).unwrap();
    // The tour's BudgetMix step says so too.
    let step = format!(
        "No run is audited as BudgetMix (method `budgetmix`, or --audit RUN), but gigpo's {} training rollouts could be: --audit RUN (A in the workbench) checks the six rules on them.",
        sum("trajectories")
    );
    assert!(md.contains(&step), "{md}");
    let line = format!(
        "\nTraining rollouts not audited: `gigpo` ({} rollouts). `--audit RUN` audits a run's.\n",
        sum("trajectories")
    );
    assert!(md.contains(&line), "{md}");
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
    let mt = m.display();
    assert_eq!(
        err.lines().next().unwrap(),
        format!("rl-audit: {mt}:1: shape: \"split\" needs split_on")
    );
    // `file:line: key: what is wrong`, the line where the key is given; a
    // TOML syntax error at the parser's place; no line for the file as a
    // whole.
    for (text, want) in [
        (
            "# verl\n[trajectory]\nrun = \"r\"\nsuccess = { path = \"score\", above = \"x\" }\n",
            format!("rl-audit: {mt}:4: trajectory.success: above must be a number"),
        ),
        (
            "[trajectory]\nrun = \"r\"\n[trajectory\n",
            format!("rl-audit: {mt}:3: unclosed table, expected `]`"),
        ),
        (
            "files = 'x'\n",
            format!("rl-audit: {mt}: bad mapping: a [trajectory] table is required"),
        ),
    ] {
        std::fs::write(&m, text).unwrap();
        let err = mapped_failure(&src, &m, &d.join("o"));
        assert_eq!(err.lines().next().unwrap(), want, "{text}");
    }

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
    // A verl-agent dump written as Parquet by pandas 3.1 / pyarrow 26
    // (tests/data/pyarrow/make.py): the same audit as from its JSONL.
    let d = temp_dir("map_parquet");
    let got = mapped(
        "pyarrow/verl-agent/1.parquet",
        "verl-agent-steps.toml",
        &d.join("pq"),
        &[],
    );
    let want = mapped(
        "verl-agent/rollout_data/1.jsonl",
        "verl-agent-steps.toml",
        &d.join("jsonl"),
        &[],
    );
    assert_eq!(got["inputs"]["records"]["trajectory"], 6);
    for (k, v) in want.as_object().unwrap() {
        if k != "inputs" {
            assert_eq!(v, &got[k], "section {k} differs between Parquet and JSONL");
        }
    }
    // Re-read, each trajectory is the same record from either file.
    let pq = load_mapped("pyarrow/verl-agent/1.parquet", "verl-agent-steps.toml");
    let js = load_mapped("verl-agent/rollout_data/1.jsonl", "verl-agent-steps.toml");
    assert_eq!(pq.trajectories.len(), js.trajectories.len());
    for (a, b) in pq.trajectories.iter().zip(&js.trajectories) {
        let (va, vb) = (
            pq.read_record(a.loc).unwrap(),
            js.read_record(b.loc).unwrap(),
        );
        assert_eq!(va, vb, "{} / {}", pq.loc_text(a.loc), js.loc_text(b.loc));
    }
}

#[test]
fn a_mapping_reads_whole_json_files() {
    // One pretty-printed document per file (as rLLM, OpenPipe ART
    // conversions and many harnesses write): one record each.
    let d = temp_dir("map_json_files");
    let logs = d.join("logs");
    std::fs::create_dir_all(&logs).unwrap();
    for (i, ok) in [(0, true), (1, false), (2, true)] {
        let doc = json!({"id": format!("task-a:{i}"), "result": {"correct": ok}, "messages": [
            {"role": "user", "content": "q"}, {"role": "assistant", "content": "a"},
            {"role": "tool", "content": "r"}, {"role": "assistant", "content": "b"}]});
        std::fs::write(
            logs.join(format!("ep{i}.json")),
            serde_json::to_string_pretty(&doc).unwrap(),
        )
        .unwrap();
    }
    let m = d.join("m.toml");
    std::fs::write(
        &m,
        r#"
[trajectory]
run = { run_label = "agent" }
benchmark = { const = "b" }
task = { path = "id", split = ":", index = 0 }
sample = { path = "id", split = ":", index = -1, as = "int" }
budget = { const = 4 }
success = "result.correct"
turns = { count = "messages[role=assistant]" }
"#,
    )
    .unwrap();
    let r = audit_json(
        &logs,
        &d.join("out"),
        &["--map", m.to_str().unwrap(), "--resamples", "20"],
    );
    assert_eq!(r["inputs"]["records"]["trajectory"], 3);
    // 2 of 3 solved, each at its 2 assistant turns: Pass@1 at 50% (T = 2) is 2/3.
    let c = one(
        &r,
        "pass_at_kt",
        &[
            ("k", json!(1)),
            ("level", json!(50)),
            ("t_mode", json!("truncated")),
        ],
    );
    close(&c["value"], 2.0 / 3.0);
    // Re-read (the trajectory view), a file is its document translated.
    let set = load_mapped_by(&logs, &m);
    for t in &set.trajectories {
        let v = set.read_record(t.loc).unwrap();
        let doc: Value =
            serde_json::from_str(&std::fs::read_to_string(set.file_name(t.loc)).unwrap()).unwrap();
        let id = doc["id"].as_str().unwrap();
        assert_eq!(v["task"], id.split(':').next().unwrap());
        assert_eq!(
            v["sample"],
            id.rsplit(':').next().unwrap().parse::<u64>().unwrap()
        );
        assert_eq!(v["success"], doc["result"]["correct"]);
        assert_eq!(v["turns"], 2);
    }
}

/// A mapped set loaded through a shipped mapping, as the workbench loads it.
fn load_mapped(data: &str, mapping: &str) -> rl_audit::schema::LogSet {
    load_mapped_by(
        &root().join("tests/data").join(data),
        &root().join("assets/mappings").join(mapping),
    )
}

/// A file's non-blank lines as JSON, by line number (1-based).
fn raw_rows(path: &str) -> std::collections::BTreeMap<u64, Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .zip(1u64..)
        .filter(|(l, _)| !l.trim().is_empty())
        .map(|(l, n)| (n, serde_json::from_str(l).unwrap()))
        .collect()
}

/// Re-reading a record of a `--map` load (the trajectory view, `F`)
/// translates its source again: every trajectory of the shipped mappings'
/// fixtures comes back as the record the load made — its run, task and
/// success as loaded, its success from the source row's own field, and its
/// sample the row's position among the rows with its prompt before it
/// (verl, SkyRL, AReaL: `position_in`), counted here from the files.
#[test]
fn mapped_records_are_reread_as_translated() {
    for (data, mapping, prompt, score) in [
        ("verl/val", "verl-generations.toml", "input", "score"),
        ("skyrl/export", "skyrl-evals.toml", "input_prompt", "score"),
        ("areal/fileroot", "areal-rollouts.toml", "prompt", "reward"),
    ] {
        let set = load_mapped(data, mapping);
        assert!(!set.trajectories.is_empty());
        for t in &set.trajectories {
            let v = set.read_record(t.loc).unwrap();
            let what = format!("{data}: {}", set.loc_text(t.loc));
            assert_eq!(v["run"], set.name(t.run), "{what}");
            assert_eq!(v["task"], set.name(t.task), "{what}");
            assert_eq!(v["success"], t.success, "{what}");
            let rows = raw_rows(set.file_name(t.loc));
            let row = &rows[&t.loc.line()];
            assert_eq!(t.success, row[score].as_f64().unwrap() > 0.0, "{what}");
            let before = rows
                .range(..t.loc.line())
                .filter(|(_, r)| r[prompt] == row[prompt])
                .count();
            assert_eq!(v["sample"], before, "{what}");
        }
    }
}

/// verl-agent's step rows: a trajectory re-read is its rows (one traj_uid)
/// in env_step order, each row's output its step's action — as the files
/// hold them — and `F`'s walk over every trajectory's texts
/// (`visit_step_texts`) reads the same actions and observations.
#[test]
fn mapped_step_rows_are_reread_as_trajectories() {
    let set = load_mapped("verl-agent/rollout_data", "verl-agent-steps.toml");
    let mut want: Vec<Vec<(String, String)>> = Vec::new();
    for t in &set.trajectories {
        let rows = raw_rows(set.file_name(t.loc));
        let uid = &rows[&t.loc.line()]["traj_uid"];
        let mut mine: Vec<&Value> = rows.values().filter(|r| r["traj_uid"] == *uid).collect();
        mine.sort_by_key(|r| r["env_step"].as_u64().unwrap());
        let steps: Vec<(String, String)> = mine
            .iter()
            .map(|r| {
                let s = |k: &str| r[k].as_str().unwrap().to_string();
                (s("output"), s("input"))
            })
            .collect();
        let v = set.read_record(t.loc).unwrap();
        let got: Vec<(String, String)> = v["steps"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                let s = |k: &str| s[k].as_str().unwrap().to_string();
                (s("action"), s("observation"))
            })
            .collect();
        assert_eq!(got, steps, "{}", set.loc_text(t.loc));
        want.push(steps);
    }
    let all: Vec<usize> = (0..set.trajectories.len()).collect();
    let mut seen: Vec<Vec<(String, String)>> = vec![Vec::new(); all.len()];
    set.visit_step_texts(&all, true, &|| true, &mut |k, steps| {
        seen[k] = steps
            .iter()
            .map(|[a, o]| {
                let s = |x: &Option<std::borrow::Cow<str>>| x.as_deref().unwrap().to_string();
                (s(a), s(o))
            })
            .collect();
        true
    })
    .unwrap();
    assert_eq!(seen, want);
}
