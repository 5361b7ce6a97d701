//! UK AISI Inspect (`inspect_ai`) eval logs, read directly: `.eval` (a zip
//! of `header.json` and `samples/*.json`) and `.json` logs, recognised by
//! content. Each sample becomes one SPEC trajectory:
//!
//! run = the eval's model (or `--run-label`), benchmark = its task name,
//! task = sample id, sample = epoch − 1, success = the first score's value
//! (`C`, `correct`, true, or a number ≥ `--success-threshold`); each
//! assistant message is a step (action = its text and tool calls,
//! observation = the tool results that follow, error = a tool result with an
//! error, output_tokens and log-probabilities from the matching model call);
//! turns = assistant messages; budget = `--budget`, else the message limit
//! in turns, else the most turns seen for the task.

use std::io::Read;

use serde_json::{json, Map, Value};

use crate::error::{Error, Result};

/// How Inspect samples become trajectories (`--run-label`, `--budget`, `--success-threshold`).
#[derive(Debug, Clone)]
pub struct InspectOptions {
    pub run_label: Option<String>,
    pub budget: Option<u32>,
    pub success_threshold: f64,
}

impl Default for InspectOptions {
    fn default() -> Self {
        InspectOptions {
            run_label: None,
            budget: None,
            success_threshold: 1.0,
        }
    }
}

/// Is this JSON document an Inspect log?
pub fn is_inspect_json(v: &Value) -> bool {
    v.get("eval").is_some_and(|e| e.get("task").is_some())
        && (v.get("samples").is_some() || v.get("version").is_some())
}

/// Reads an `.eval` archive or a `.json` log into SPEC records (JSON Lines);
/// record n is the log's n-th sample. Also returns notes on absent fields.
pub fn read(name: &str, bytes: &[u8], opts: &InspectOptions) -> Result<(Vec<u8>, Vec<String>)> {
    let bad = |m: String| Error::file(name, m);
    let (header, samples): (Value, Vec<Value>) = if bytes.starts_with(b"PK") {
        let mut z = zip::ZipArchive::new(std::io::Cursor::new(bytes))
            .map_err(|e| bad(format!("not a readable .eval archive: {e}")))?;
        let mut read_entry = |n: &str| -> Result<Value> {
            let mut f = z.by_name(n).map_err(|e| bad(format!("{n}: {e}")))?;
            let mut s = Vec::new();
            f.read_to_end(&mut s)
                .map_err(|e| bad(format!("{n}: corrupt archive entry: {e}")))?;
            serde_json::from_slice(&s).map_err(|e| bad(format!("{n}: invalid JSON: {e}")))
        };
        let header = read_entry("header.json").or_else(|_| read_entry("_journal/start.json"))?;
        let mut names: Vec<String> = (0..z.len())
            .filter_map(|i| z.by_index(i).ok().map(|f| f.name().to_string()))
            .filter(|n| n.starts_with("samples/") && n.ends_with(".json"))
            .collect();
        // Sample order: by epoch, then id, as Inspect lists them.
        names.sort_by_key(|n| sample_sort_key(n));
        let mut samples = Vec::new();
        for n in names {
            let mut f = z.by_name(&n).map_err(|e| bad(format!("{n}: {e}")))?;
            let mut s = Vec::new();
            f.read_to_end(&mut s)
                .map_err(|e| bad(format!("{n}: corrupt archive entry: {e}")))?;
            samples.push(
                serde_json::from_slice(&s).map_err(|e| bad(format!("{n}: invalid JSON: {e}")))?,
            );
        }
        (header, samples)
    } else {
        let v: Value =
            serde_json::from_slice(bytes).map_err(|e| bad(format!("invalid JSON: {e}")))?;
        if !is_inspect_json(&v) {
            return Err(bad("not an Inspect eval log (no `eval.task`)".into()));
        }
        let samples = v
            .get("samples")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        (v, samples)
    };
    let eval = header
        .get("eval")
        .ok_or_else(|| bad("no `eval` section in the log header".into()))?;
    let task_name = eval
        .get("task")
        .and_then(Value::as_str)
        .unwrap_or("inspect")
        .to_string();
    let run = opts
        .run_label
        .clone()
        .or_else(|| {
            eval.get("model")
                .and_then(Value::as_str)
                .map(str::to_string)
        })
        .unwrap_or_else(|| "model".into());
    let message_limit = eval
        .get("config")
        .and_then(|c| c.get("message_limit"))
        .and_then(Value::as_u64);
    let mut recs: Vec<Map<String, Value>> = Vec::new();
    let (mut any_logp, mut any_tokens) = (false, false);
    for s in &samples {
        let (rec, has_logp, has_tokens) = sample_record(s, &run, &task_name, message_limit, opts);
        any_logp |= has_logp;
        any_tokens |= has_tokens;
        recs.push(rec);
    }
    // Without --budget or a message limit: the most turns seen for the task.
    if opts.budget.is_none() && message_limit.is_none() {
        let mut most: std::collections::HashMap<String, u64> = Default::default();
        for r in &recs {
            let t = r.get("task").map(|t| t.to_string()).unwrap_or_default();
            let turns = r.get("turns").and_then(Value::as_u64).unwrap_or(0);
            let e = most.entry(t).or_default();
            *e = (*e).max(turns);
        }
        for r in &mut recs {
            let t = r.get("task").map(|t| t.to_string()).unwrap_or_default();
            r.insert(
                "budget".into(),
                json!(most.get(&t).copied().unwrap_or(1).max(1)),
            );
        }
    }
    let mut notes = Vec::new();
    if !samples.is_empty() {
        if !any_logp {
            notes.push(format!(
                "{name}: Inspect log without token logprobs: the likelihood analysis needs them"
            ));
        }
        if !any_tokens {
            notes.push(format!("{name}: Inspect log without model usage: token budgets and token costs need output_tokens"));
        }
        notes.push(format!(
            "{name}: Inspect logs carry no min_turns (upper bound is empirical), no probes (matched states and error recovery need them) and no checkpoints"
        ));
        if opts.budget.is_none() && message_limit.is_none() {
            notes.push(format!("{name}: no --budget and no message limit: each task's budget is the most turns seen for it"));
        }
    }
    let mut out = Vec::new();
    for r in recs {
        serde_json::to_writer(&mut out, &Value::Object(r))
            .map_err(|e| Error::Internal(e.to_string()))?;
        out.push(b'\n');
    }
    if out.is_empty() {
        return Err(bad("the log has no samples".into()));
    }
    Ok((out, notes))
}

fn sample_sort_key(n: &str) -> (u64, String) {
    let stem = n.trim_start_matches("samples/").trim_end_matches(".json");
    match stem.rsplit_once("_epoch_") {
        Some((id, e)) => (e.parse().unwrap_or(0), id.to_string()),
        None => (0, stem.to_string()),
    }
}

fn text_of(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str).or_else(|| p.as_str()))
            .collect::<Vec<_>>()
            .join(" "),
        _ => String::new(),
    }
}

/// Success from a score value: `C`/`correct`/true, or a number ≥ threshold.
pub fn score_success(v: &Value, threshold: f64) -> bool {
    match v {
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|x| x >= threshold),
        Value::String(s) => matches!(
            s.trim().to_ascii_lowercase().as_str(),
            "c" | "correct" | "true" | "yes"
        ),
        _ => false,
    }
}

/// SPEC §4.1 `termination` of a sample: an `error` ended it (the harness,
/// a tool or the model API failed), a `limit` (messages, tokens, time,
/// cost…) cut it off, or it ended unsolved within its limits.
fn termination(s: &Value, success: bool) -> &'static str {
    let set = |k: &str| s.get(k).is_some_and(|v| !v.is_null());
    if success {
        "success"
    } else if set("error") {
        "error"
    } else if set("limit") {
        "budget"
    } else {
        "wrong"
    }
}

fn sample_record(
    s: &Value,
    run: &str,
    task_name: &str,
    message_limit: Option<u64>,
    opts: &InspectOptions,
) -> (Map<String, Value>, bool, bool) {
    let id = match s.get("id") {
        Some(Value::String(x)) => x.clone(),
        Some(other) => other.to_string(),
        None => "?".into(),
    };
    let epoch = s.get("epoch").and_then(Value::as_u64).unwrap_or(1);
    let score = s
        .get("scores")
        .and_then(Value::as_object)
        .and_then(|m| m.values().next())
        .and_then(|sc| sc.get("value"));
    let success = score.is_some_and(|v| score_success(v, opts.success_threshold));
    let messages: Vec<&Value> = s
        .get("messages")
        .and_then(Value::as_array)
        .map(|a| a.iter().collect())
        .unwrap_or_default();
    let model_outputs: Vec<&Value> = s
        .get("events")
        .and_then(Value::as_array)
        .map(|ev| {
            ev.iter()
                .filter(|e| e.get("event").and_then(Value::as_str) == Some("model"))
                .filter_map(|e| e.get("output"))
                .collect()
        })
        .unwrap_or_default();
    let initial = messages
        .iter()
        .take_while(|m| m.get("role").and_then(Value::as_str) != Some("assistant"))
        .count() as u64;
    let mut steps = Vec::new();
    let (mut has_logp, mut has_tokens) = (false, false);
    let mut i = 0;
    while i < messages.len() {
        let m = messages[i];
        if m.get("role").and_then(Value::as_str) != Some("assistant") {
            i += 1;
            continue;
        }
        let turn = steps.len() + 1;
        let mut action = text_of(m.get("content").unwrap_or(&Value::Null));
        for call in m
            .get("tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let f = call.get("function").and_then(Value::as_str).unwrap_or("?");
            let args = call
                .get("arguments")
                .map(|a| a.to_string())
                .unwrap_or_default();
            action = format!("{action}\n{f}({args})").trim().to_string();
        }
        let mut observation = Vec::new();
        let mut error = false;
        let mut j = i + 1;
        while j < messages.len() && messages[j].get("role").and_then(Value::as_str) == Some("tool")
        {
            let t = messages[j];
            if let Some(e) = t.get("error").filter(|e| !e.is_null()) {
                error = true;
                observation.push(format!(
                    "error: {}",
                    e.get("message")
                        .and_then(Value::as_str)
                        .unwrap_or("tool error")
                ));
            } else {
                observation.push(text_of(t.get("content").unwrap_or(&Value::Null)));
            }
            j += 1;
        }
        let mut step = json!({"turn": turn, "action": action, "observation": observation.join("\n"), "error": error});
        if let Some(out) = model_outputs.get(steps.len()) {
            if let Some(n) = out
                .get("usage")
                .and_then(|u| u.get("output_tokens"))
                .and_then(Value::as_u64)
            {
                step["output_tokens"] = json!(n);
                has_tokens = true;
            }
            let lp: Option<f64> = out
                .get("choices")
                .and_then(|c| c.get(0))
                .and_then(|c| c.get("logprobs"))
                .and_then(|l| l.get("content"))
                .and_then(Value::as_array)
                .map(|toks| {
                    toks.iter()
                        .filter_map(|t| t.get("logprob").and_then(Value::as_f64))
                        .sum()
                });
            if let Some(lp) = lp {
                step["logp"] = json!({ run: lp });
                has_logp = true;
            }
        }
        steps.push(step);
        i = j;
    }
    let turns = steps.len() as u64;
    let budget = match (opts.budget, message_limit) {
        (Some(b), _) => Some(b as u64),
        // Each turn is an assistant message and its tool results: a limit of
        // M messages after k opening ones leaves ceil((M − k) / 2) turns.
        (None, Some(m)) => Some(m.saturating_sub(initial).div_ceil(2).max(1)),
        (None, None) => None,
    };
    let mut r = Map::new();
    r.insert("run".into(), json!(run));
    r.insert("benchmark".into(), json!(task_name));
    r.insert("task".into(), json!(id));
    r.insert("sample".into(), json!(epoch.saturating_sub(1)));
    r.insert("success".into(), json!(success));
    r.insert("turns".into(), json!(turns));
    if let Some(b) = budget {
        // A rollout can overrun a limit it hits mid-turn: never below its turns.
        r.insert("budget".into(), json!(b.max(1)));
    }
    if let Some(v) = score.and_then(Value::as_f64) {
        r.insert("reward".into(), json!(v));
    }
    r.insert("termination".into(), json!(termination(s, success)));
    r.insert("steps".into(), Value::Array(steps));
    (r, has_logp, has_tokens)
}
