//! rLLM episode folders read natively. The folders in `tests/data/rllm/`
//! are written by `make.py` following rLLM's own models and writers (commit
//! and lines in its header); `expected.json` beside them is computed there,
//! from the files written, with HumanEval's pass@k.

mod common;
use common::*;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

fn data(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/rllm")
        .join(p)
}

fn expected() -> Value {
    serde_json::from_str(&std::fs::read_to_string(data("expected.json")).unwrap()).unwrap()
}

fn episode_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(episode_files(&p));
        } else if p
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .starts_with("episode_")
        {
            out.push(p);
        }
    }
    out.sort();
    out
}

#[test]
fn eval_folders_audit_to_the_independent_figures() {
    let d = temp_dir("rllm_eval");
    let r = audit_json(&data("eval"), &d.join("out"), &["--resamples", "50"]);
    let exp = expected();
    assert_eq!(r["inputs"]["records"]["trajectory"], exp["trajectories"]);
    // meta.json carries no rollouts: listed as ignored.
    let ignored: Vec<&str> = r["inputs"]["ignored_files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(ignored.len(), 2);
    assert!(ignored.iter().all(|f| f.ends_with("/meta.json")));
    let rows = r["pass_at_kt"].as_array().unwrap();
    let want = exp["pass_at_kt"].as_array().unwrap();
    assert_eq!(rows.len(), want.len());
    for w in want {
        let got = rows
            .iter()
            .find(|x| {
                x["run"] == w["run"]
                    && x["level"] == w["level"]
                    && x["t_mode"] == w["t_mode"]
                    && x["k"] == w["k"]
            })
            .unwrap_or_else(|| panic!("no row for {w}"));
        close(&got["value"], w["value"].as_f64().unwrap());
        assert_eq!(got["tasks"], w["tasks"], "{w}");
    }
    // The task id holding a ':' is split at its last one.
    let md = std::fs::read_to_string(d.join("out/report.md")).unwrap();
    assert!(md.contains("most turns seen for it over every loaded run"));
}

#[test]
fn empty_token_arrays_are_missing_never_zero() {
    use rl_audit::schema::load::{load, LoadOptions};
    // Every log-probability read (what a summary keeps).
    let all = LoadOptions {
        all_logps: true,
        ..Default::default()
    };
    let set = load(&[data("eval")], &all).unwrap();
    // Independently: each episode file's steps, in order, with their arrays.
    let mut want: Vec<(Option<usize>, Option<f64>)> = Vec::new();
    for f in episode_files(&data("eval")) {
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
        for t in v["trajectories"].as_array().unwrap() {
            for s in t["steps"].as_array().unwrap() {
                let ids = s["response_ids"].as_array().unwrap();
                let lp = s["logprobs"].as_array().unwrap();
                want.push((
                    (!ids.is_empty()).then_some(ids.len()),
                    (!lp.is_empty()).then(|| lp.iter().map(|x| x.as_f64().unwrap()).sum()),
                ));
            }
        }
    }
    assert!(want.iter().any(|w| w.0.is_none()) && want.iter().any(|w| w.0.is_some()));
    let mut got = Vec::new();
    for t in &set.trajectories {
        for s in set.steps_of(t) {
            let lp = s.logp_of(t.run);
            got.push((s.output_tokens().map(|x| x as usize), lp));
        }
    }
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(&want) {
        assert_eq!(g.0, w.0);
        match (g.1, w.1) {
            (Some(a), Some(b)) => assert!((a - b).abs() < 1e-9),
            (a, b) => assert_eq!(a, b),
        }
    }
    // An audit's load keeps only what the likelihood analyses read: the
    // log-probabilities of successful evaluation rollouts.
    let audit = load(&[data("eval")], &LoadOptions::default()).unwrap();
    let mut kept = Vec::new();
    for t in &audit.trajectories {
        for s in audit.steps_of(t) {
            kept.push((t.success && !t.is_training(), s.logp_of(t.run)));
        }
    }
    assert_eq!(kept.len(), want.len());
    assert!(kept.iter().any(|k| k.0) && kept.iter().any(|k| !k.0));
    for ((read, lp), w) in kept.iter().zip(&want) {
        assert_eq!(lp.is_some(), *read && w.1.is_some());
        if let (Some(a), Some(b)) = (lp, w.1) {
            assert!((a - b).abs() < 1e-9);
        }
    }
}

#[test]
fn multi_trajectory_episodes_are_one_rollout() {
    use rl_audit::schema::load::{load, LoadOptions};
    let run_dir = data("eval/bfcl-mt_Qwen3-4B-grpo_20261201_000000");
    let set = load(std::slice::from_ref(&run_dir), &LoadOptions::default()).unwrap();
    assert_eq!(set.trajectories.len(), 20);
    // Task 1 has a solver and a judge trajectory: steps of both, in order.
    for f in episode_files(&run_dir) {
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
        let n: usize = v["trajectories"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["steps"].as_array().unwrap().len())
            .sum();
        let name = f.display().to_string();
        let t = set
            .trajectories
            .iter()
            .find(|t| set.file_name(t.loc) == name)
            .unwrap();
        assert_eq!(t.turns as usize, n, "{name}");
        let (task, attempt) = v["id"].as_str().unwrap().rsplit_once(':').unwrap();
        assert_eq!(set.name(t.task), task);
        assert_eq!(t.sample(), Some(attempt.parse().unwrap()));
        assert_eq!(set.name(t.run), "Qwen3-4B-grpo");
        assert_eq!(set.name(t.benchmark), "bfcl-mt");
        let reason = v["termination_reason"].as_str().unwrap();
        let want = match (v["is_correct"].as_bool().unwrap(), reason) {
            (true, _) => "success",
            (false, "max_turns_exceeded") => "budget",
            (false, "error") => "error",
            _ => "wrong",
        };
        assert_eq!(t.termination.name(), want, "{name}");
    }
}

#[test]
fn training_folders_give_checkpoints_and_training_rollouts() {
    let d = temp_dir("rllm_train");
    let r = audit_json(
        &data("train"),
        &d.join("out"),
        &[
            "--resamples",
            "50",
            "--compare",
            "grpo-run@10:grpo-run@20",
            "--audit",
            "grpo-run",
        ],
    );
    // 3 tasks × (4 train + 3 val@10 + 3 val@20) episodes.
    assert_eq!(r["inputs"]["records"]["trajectory"], 30);
    let ignored = r["inputs"]["ignored_files"].as_array().unwrap();
    assert_eq!(ignored.len(), 3);
    assert!(ignored
        .iter()
        .all(|f| f.as_str().unwrap().ends_with("/batch_summary.json")));
    // Independent count of val episodes solved, per checkpoint.
    for step in [10, 20] {
        let dir = data(&format!(
            "train/logs/bfcl-agent/grpo-run/episodes/val_step_{step}_epoch_0"
        ));
        let mut by_task: std::collections::BTreeMap<String, (u32, u32)> = Default::default();
        for f in episode_files(&dir) {
            let v: Value = serde_json::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
            let e = by_task
                .entry(v["task_hash"].as_str().unwrap().to_string())
                .or_default();
            e.0 += 1;
            e.1 += v["is_correct"].as_bool().unwrap() as u32;
        }
        let want: f64 = by_task
            .values()
            .map(|(n, c)| *c as f64 / *n as f64)
            .sum::<f64>()
            / by_task.len() as f64;
        let c = one(
            &r,
            "pass_at_kt",
            &[
                ("run", json!(format!("grpo-run@{step}"))),
                ("k", json!(1)),
                ("level", json!(100)),
            ],
        );
        close(&c["value"], want);
    }
    // Training rollouts feed the BudgetMix audit: one group per (step, task).
    let rules = r["budgetmix"][0]["rules"].as_array().unwrap();
    let groups = rules
        .iter()
        .find(|x| x["rule"] == "group_consistency")
        .unwrap();
    assert_eq!(groups["checked"], 3);
    assert_eq!(rules[0]["checked"], 12);
    // The training run has no evaluation rollouts of its own: its
    // checkpoints' (the val_step_N folders) are runs of their own, named.
    let mut steps: Vec<u32> = std::fs::read_dir(data("train/logs/bfcl-agent/grpo-run/episodes"))
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().into_string().unwrap();
            name.strip_prefix("val_step_")?
                .split('_')
                .next()?
                .parse()
                .ok()
        })
        .collect();
    steps.sort();
    let named: Vec<String> = steps.iter().map(|s| format!("grpo-run@{s}")).collect();
    let md = std::fs::read_to_string(d.join("out/report.md")).unwrap();
    let note = format!(
        "> Note: no gain table for grpo-run: it has no evaluation rollouts (a gain is its Pass@(1,T) less the full-budget RL run's); its checkpoints' are runs of their own: {}\n",
        named.join(", ")
    );
    assert!(md.contains(&note), "{md}");
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let p = e.unwrap().path();
        let q = to.join(p.file_name().unwrap());
        if p.is_dir() {
            copy_dir(&p, &q);
        } else {
            std::fs::copy(&p, &q).unwrap();
        }
    }
}

/// A copy of one eval run folder, with `edit` applied; returns its path.
fn broken_run(name: &str, edit: impl Fn(&Path)) -> PathBuf {
    let d = temp_dir(name);
    let run = d.join("run");
    copy_dir(&data("eval/bfcl-mt_Qwen3-4B-grpo_20261201_000000"), &run);
    edit(&run);
    run
}

fn first_episode(run: &Path) -> PathBuf {
    episode_files(run).remove(0)
}

fn fails_with(run: &Path, extra: &[&str], want: &str) {
    let out = run.parent().unwrap().join("out");
    let mut args = vec![
        "--headless",
        run.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let o = rl_audit(&args);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains(want), "{err}");
    assert!(!out.join("report.json").exists(), "nothing is written");
}

#[test]
fn bad_episodes_name_the_file_and_field() {
    let run = broken_run("rllm_bad_json", |r| {
        std::fs::write(first_episode(r), "{\"id\": \"t:0\", \"trajectories\": [").unwrap()
    });
    let f = first_episode(&run).display().to_string();
    fails_with(&run, &[], &format!("{f}: invalid JSON"));
    // --lenient skips that episode and counts it.
    let r = audit_json(
        &run,
        &run.parent().unwrap().join("len"),
        &["--lenient", "--resamples", "20"],
    );
    assert_eq!(r["inputs"]["records"]["trajectory"], 19);
    assert_eq!(r["inputs"]["skipped"]["syntax"], 1);

    let run = broken_run("rllm_no_colon", |r| {
        let p = first_episode(r);
        let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
        v["id"] = json!("multi_turn_base_0");
        std::fs::write(&p, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    });
    let f = first_episode(&run).display().to_string();
    fails_with(
        &run,
        &[],
        &format!("{f}: id: \"multi_turn_base_0\" has no ':'"),
    );
    let r = audit_json(
        &run,
        &run.parent().unwrap().join("len"),
        &["--lenient", "--resamples", "20"],
    );
    assert_eq!(r["inputs"]["records"]["trajectory"], 19);
    assert_eq!(r["inputs"]["skipped"]["impossible_value"], 1);

    let run = broken_run("rllm_no_model", |r| {
        std::fs::write(
            r.join("meta.json"),
            "{\"benchmark\": \"bfcl-mt\", \"attempts\": 4}",
        )
        .unwrap()
    });
    let meta = run.join("meta.json").display().to_string();
    fails_with(
        &run,
        &[],
        &format!("{meta}: model: required field is missing (or pass --run-label NAME)"),
    );
    // --run-label names the run instead.
    let r = audit_json(
        &run,
        &run.parent().unwrap().join("lab"),
        &["--run-label", "mine", "--resamples", "20"],
    );
    assert_eq!(r["pass_at_kt"][0]["run"], "mine");
}

#[test]
fn the_trajectory_view_rereads_an_episode() {
    let f = episode_files(&data("eval/bfcl-mt_Qwen3-4B-grpo_20261201_000000")).remove(4);
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
    let rec = rl_audit::schema::load::read_record(f.to_str().unwrap(), 1).unwrap();
    let steps: Vec<&Value> = v["trajectories"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|t| t["steps"].as_array().unwrap())
        .collect();
    assert_eq!(rec["steps"].as_array().unwrap().len(), steps.len());
    for (got, want) in rec["steps"].as_array().unwrap().iter().zip(steps) {
        let action = match &want["action"] {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        assert_eq!(got["action"], json!(action));
    }
}
