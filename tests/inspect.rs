//! Inspect eval logs read directly. `tests/data/inspect/calc.eval` was made
//! by inspect_ai 0.3.285 itself (`make_logs.py`: a tool-using task, 4
//! samples × 3 epochs, tool errors, a message limit of 6 that some samples
//! hit); `calc.json` is the same log converted by `inspect log convert`.
//! inspect_ai's own reader (`read_eval_log`) gives, per sample id, the
//! (correct, assistant turns) of epochs 1–3:
//!   q1 (F,2) (F,2) (F,3); q2 (F,3) (T,1) (T,2); q3 (T,1) (F,3) (F,1); q4 (F,3) (T,1) (F,3)
//! and message_limit 6 after one user message → a budget of 3 turns.

mod common;
use common::*;
use serde_json::json;

fn data(f: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/inspect")
        .join(f)
}

fn check(r: &serde_json::Value) {
    assert_eq!(r["inputs"]["records"]["trajectory"], 12);
    // T = 1 (25% of 3): solved at turn 1 by q2 1/3, q3 1/3, q4 1/3, q1 0.
    close(
        &one(r, "pass_at_kt", &[("k", json!(1)), ("level", json!(25))])["value"],
        (1.0 / 3.0) * 3.0 / 4.0,
    );
    // T = 2: q2 2/3, q3 1/3, q4 1/3.
    close(
        &one(r, "pass_at_kt", &[("k", json!(1)), ("level", json!(50))])["value"],
        (2.0 / 3.0 + 2.0 / 3.0) / 4.0,
    );
    let full = one(r, "pass_at_kt", &[("k", json!(1)), ("level", json!(100))]);
    assert_eq!(full["t_mode"], "native");
    close(&full["value"], 1.0 / 3.0);
    // K=2 at full budget: q1 0; q2 1 − C(1,2)/C(3,2) = 1; q3 and q4 1 − C(2,2)/C(3,2) = 2/3.
    close(
        &one(r, "pass_at_kt", &[("k", json!(2)), ("level", json!(100))])["value"],
        (1.0 + 4.0 / 3.0) / 4.0,
    );
}

#[test]
fn eval_archive_from_inspect_ai() {
    let d = temp_dir("inspect_eval");
    let r = audit_json(&data("calc.eval"), &d.join("out"), &["--resamples", "50"]);
    check(&r);
    assert_eq!(r["pass_at_kt"][0]["run"], "mockllm/model");
    assert_eq!(r["pass_at_kt"][0]["benchmark"], "calc");
    // Steps carry the model calls' usage and log-probabilities.
    let notes = r["notes"].as_array().unwrap();
    assert!(
        !notes
            .iter()
            .any(|n| n.as_str().unwrap().contains("without token logprobs")),
        "{notes:?}"
    );
}

#[test]
fn json_log_and_labels() {
    let d = temp_dir("inspect_json");
    let r = audit_json(
        &data("calc.json"),
        &d.join("out"),
        &[
            "--resamples",
            "50",
            "--run-label",
            "agent-v2",
            "--budget",
            "3",
        ],
    );
    check(&r);
    assert_eq!(r["pass_at_kt"][0]["run"], "agent-v2");
}

#[test]
fn json_that_is_not_inspect() {
    let d = temp_dir("inspect_not");
    std::fs::copy(data("calc.eval"), d.join("calc.eval")).unwrap();
    std::fs::write(d.join("config.json"), "{\"lr\": 0.1}").unwrap();
    // In a directory: passed over with a note.
    let r = audit_json(&d, &d.join("out"), &["--resamples", "20"]);
    assert_eq!(r["inputs"]["files"].as_array().unwrap().len(), 1);
    assert!(r["notes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|n| n.as_str().unwrap().contains("config.json: passed over")));
    // Named on the command line: an error.
    let o = rl_audit(&[
        "--headless",
        d.join("config.json").to_str().unwrap(),
        "--out",
        d.join("o2").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("config.json: not an Inspect eval log"));
    // A broken archive names the file.
    std::fs::write(d.join("broken.eval"), b"PK\x03\x04 not really a zip").unwrap();
    let o = rl_audit(&[
        "--headless",
        d.join("broken.eval").to_str().unwrap(),
        "--out",
        d.join("o3").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("broken.eval: not a readable .eval archive")
    );
}

#[test]
fn samples_cut_off_by_a_limit_end_in_budget() {
    use rl_audit::schema::load::{load, LoadOptions};
    let set = load(&[data("calc.json")], &LoadOptions::default()).unwrap();
    // Independently, from the log: each sample's `limit`, `error` and score.
    let log: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(data("calc.json")).unwrap()).unwrap();
    let samples = log["samples"].as_array().unwrap();
    assert_eq!(set.trajectories.len(), samples.len());
    let mut limited = 0;
    for s in samples {
        let id = s["id"].as_str().unwrap();
        let epoch = s["epoch"].as_i64().unwrap();
        let t = set
            .trajectories
            .iter()
            .find(|t| set.name(t.task) == id && t.sample() == Some(epoch - 1))
            .unwrap();
        let want = if t.success {
            "success"
        } else if !s["error"].is_null() {
            "error"
        } else if !s["limit"].is_null() {
            limited += 1;
            "budget"
        } else {
            "wrong"
        };
        assert_eq!(t.termination.name(), want, "{id} epoch {epoch}");
    }
    assert!(
        limited > 0,
        "the log has samples that hit the message limit"
    );
}
