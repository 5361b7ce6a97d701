//! rLLM episode folders, read natively (recognised by layout and content).
//!
//! rLLM writes one pretty-printed `.json` per episode, never JSON Lines:
//!
//! - `rllm eval` (`EvalEpisodeStore.write`, `rllm/eval/episode_store.py`):
//!   `<run_dir>/episodes/episode_<idx:06d>_<id>.json`, an `Episode`'s
//!   pydantic `model_dump(mode="json")` plus `eval_idx`, beside
//!   `<run_dir>/meta.json` (`benchmark`, `model`, `agent`, `attempts`, …);
//! - training (`EpisodeLogger.log_episode`, `rllm/utils/episode_logger.py`):
//!   `<base>/episodes/{train|val}_step_<N>_epoch_<E>/episode_hash<h>_id<id>.json`
//!   (`episode_id`, `task_hash`, `is_correct`, `termination_reason`,
//!   `trajectories[].steps[]` without token ids or log-probabilities) plus a
//!   `batch_summary.json` per step folder.
//!
//! One episode is one rollout: its trajectories' steps (solver, judge, …)
//! in order. Budgets need every episode of a task (the most turns seen over
//! all loaded runs), so episodes are converted in one pass before the load
//! and handed to it as one SPEC record per file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use serde_json::{json, Map, Value};

use crate::error::{Error, RecordError, SkipReason};

/// What the rLLM pass made of one `.json` file.
pub enum Prepared {
    /// One SPEC trajectory record, as a JSON line.
    Record(Vec<u8>),
    /// rLLM's own bookkeeping (`meta.json`, `batch_summary.json`): no rollouts.
    Ignored,
    /// A bad episode (`--lenient` skips and counts it).
    Bad(RecordError),
}

/// Is this the name of a file rLLM writes?
fn rllm_name(path: &Path) -> Option<&'static str> {
    let name = path.file_name()?.to_str()?;
    if name == "meta.json" || name == "batch_summary.json" {
        Some("bookkeeping")
    } else if name.starts_with("episode_") && name.ends_with(".json") {
        Some("episode")
    } else {
        None
    }
}

/// `train_step_<N>_epoch_<E>` / `val_step_<N>_epoch_<E>` → (is training, N).
fn step_folder(path: &Path) -> Option<(bool, i64)> {
    let dir = path.parent()?.file_name()?.to_str()?;
    let (train, rest) = if let Some(r) = dir.strip_prefix("train_step_") {
        (true, r)
    } else {
        (false, dir.strip_prefix("val_step_")?)
    };
    let (n, _) = rest.split_once("_epoch_")?;
    Some((train, n.parse().ok()?))
}

/// Is this JSON document an rLLM episode?
pub fn is_episode(v: &Value) -> bool {
    v.get("trajectories").is_some_and(Value::is_array)
        && v.get("is_correct").is_some()
        && (v.get("id").is_some() || v.get("episode_id").is_some())
}

fn is_bookkeeping(path: &Path, v: &Value) -> bool {
    match path.file_name().and_then(|n| n.to_str()) {
        Some("batch_summary.json") => v.get("episode_files").is_some(),
        Some("meta.json") => v.get("model").is_some() || v.get("benchmark").is_some(),
        _ => false,
    }
}

/// The fields of an episode that do not depend on other episodes.
struct Episode {
    run: String,
    benchmark: String,
    task: String,
    sample: i64,
    train_step: Option<i64>,
    group: Option<String>,
    success: bool,
    termination: &'static str,
    steps: Vec<Value>,
}

/// How rLLM's `termination_reason` maps to SPEC §4.1 `termination`.
pub fn termination(correct: bool, reason: Option<&str>) -> &'static str {
    if correct {
        return "success";
    }
    match reason {
        Some(
            "max_turns_exceeded"
            | "max_prompt_length_exceeded"
            | "max_response_length_exceeded"
            | "timeout",
        ) => "budget",
        Some("error") => "error",
        _ => "wrong",
    }
}

fn text(v: &Value) -> Option<String> {
    match v {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    }
}

/// A non-empty array, else nothing: rLLM writes `[]` when it did not record
/// token ids or log-probabilities, which means unknown, never 0.
fn non_empty<'a>(step: &'a Value, key: &str) -> Option<&'a Vec<Value>> {
    step.get(key)
        .and_then(Value::as_array)
        .filter(|a| !a.is_empty())
}

fn steps_of(v: &Value, run: &str) -> Result<Vec<Value>, RecordError> {
    let mut out = Vec::new();
    let trajectories = v.get("trajectories").and_then(Value::as_array);
    for (i, t) in trajectories.into_iter().flatten().enumerate() {
        let Some(steps) = t.get("steps").and_then(Value::as_array) else {
            continue;
        };
        for (j, s) in steps.iter().enumerate() {
            let field = |f: &str| format!("trajectories[{i}].steps[{j}].{f}");
            let mut m = Map::new();
            m.insert("turn".into(), json!(out.len() + 1));
            if let Some(a) = s.get("action").and_then(text) {
                m.insert("action".into(), json!(a));
            }
            if let Some(o) = s.get("observation").and_then(text) {
                m.insert("observation".into(), json!(o));
            }
            if let Some(ids) = non_empty(s, "response_ids") {
                m.insert("output_tokens".into(), json!(ids.len()));
            }
            if let Some(lp) = non_empty(s, "logprobs") {
                let mut sum = 0.0;
                for x in lp {
                    sum += x.as_f64().ok_or_else(|| {
                        RecordError::wrong_type(field("logprobs"), "expected numbers")
                    })?;
                }
                m.insert("logp".into(), json!({ run: sum }));
            }
            if let Some(r) = s.get("reward").and_then(Value::as_f64) {
                m.insert("reward".into(), json!(r));
            }
            out.push(Value::Object(m));
        }
    }
    Ok(out)
}

/// Splits an rLLM rollout id at its last `:` into (task, attempt index).
/// (rLLM's own `Episode.task_id` splits at the first `:`, which breaks task
/// ids that contain one; the attempt index is always the suffix.)
pub fn split_id(id: &str) -> Result<(String, i64), RecordError> {
    let (task, n) = id.rsplit_once(':').ok_or_else(|| {
        RecordError::impossible(
            "id",
            format!("{id:?} has no ':' (rLLM ids are \"<task id>:<attempt>\")"),
        )
    })?;
    let n = n.parse::<i64>().map_err(|_| {
        RecordError::impossible("id", format!("{id:?} does not end in ':<attempt number>'"))
    })?;
    Ok((task.to_string(), n))
}

/// The run folder's `meta.json` of an `rllm eval` episode, read once per folder.
type Metas = BTreeMap<PathBuf, Result<Value, String>>;

fn meta_path(episode: &Path) -> Option<PathBuf> {
    let episodes = episode.parent()?;
    Some(episodes.parent()?.join("meta.json"))
}

fn read_meta(path: &Path) -> Result<Value, String> {
    let raw = std::fs::read(path).map_err(|e| crate::error::io_text(&e))?;
    serde_json::from_slice(&raw).map_err(|e| format!("invalid JSON: {e}"))
}

/// The experiment folder a training `episodes/` folder sits in.
fn experiment_name(path: &Path) -> Option<String> {
    let episodes = path.parent()?.parent()?;
    if episodes.file_name()? != "episodes" {
        return None;
    }
    let base = std::fs::canonicalize(episodes.parent()?).ok()?;
    base.file_name()?.to_str().map(str::to_string)
}

fn benchmark_of_task(v: &Value) -> Option<String> {
    v.get("task")
        .and_then(|t| t.get("data_source"))
        .and_then(Value::as_str)
        .map(str::to_string)
}

fn episode(path: &Path, v: &Value, metas: &Metas, label: Option<&str>) -> Result<Episode, Error> {
    let name = path.display().to_string();
    let rec = |e: RecordError| Error::file(&name, format!("{}: {}", e.field, e.message));
    let success = v
        .get("is_correct")
        .and_then(Value::as_bool)
        .ok_or_else(|| {
            rec(RecordError::wrong_type(
                "is_correct",
                "expected true or false",
            ))
        })?;
    let reason = v.get("termination_reason").and_then(Value::as_str);
    let termination = termination(success, reason);
    if let Some(episode_id) = v.get("episode_id") {
        // A training EpisodeLogger file.
        let id = episode_id
            .as_str()
            .ok_or_else(|| rec(RecordError::wrong_type("episode_id", "expected a string")))?;
        let (_, sample) = split_id(id).map_err(|mut e| {
            e.field = "episode_id".into();
            rec(e)
        })?;
        let task = v
            .get("task_hash")
            .and_then(Value::as_str)
            .ok_or_else(|| rec(RecordError::missing("task_hash")))?
            .to_string();
        let (train, step) = step_folder(path).ok_or_else(|| {
            Error::file(
                &name,
                "not inside a train_step_<N>_epoch_<E> or val_step_<N>_epoch_<E> folder (as rLLM's EpisodeLogger writes)",
            )
        })?;
        let label = match label {
            Some(l) => l.to_string(),
            None => experiment_name(path).ok_or_else(|| {
                Error::file(
                    &name,
                    "run: the folder does not name the run (no <experiment>/episodes/ above it): pass --run-label NAME",
                )
            })?,
        };
        let run = if train {
            label
        } else {
            format!("{label}@{step}")
        };
        return Ok(Episode {
            steps: steps_of(v, &run).map_err(rec)?,
            run,
            benchmark: benchmark_of_task(v).unwrap_or_else(|| "rllm".into()),
            group: train.then(|| task.clone()),
            task,
            sample,
            train_step: train.then_some(step),
            success,
            termination,
        });
    }
    let id = v
        .get("id")
        .and_then(Value::as_str)
        .ok_or_else(|| rec(RecordError::wrong_type("id", "expected a string")))?;
    let (task, sample) = split_id(id).map_err(rec)?;
    let meta = meta_path(path).and_then(|p| metas.get(&p).map(|m| (p, m)));
    let (meta_name, meta) = match meta {
        Some((p, Ok(m))) => (p.display().to_string(), Some(m)),
        Some((p, Err(e))) if label.is_none() => {
            return Err(Error::file(p.display(), e.clone()));
        }
        Some((p, Err(_))) => (p.display().to_string(), None),
        None => (String::new(), None),
    };
    let run = match (label, meta.and_then(|m| m.get("model")).and_then(Value::as_str)) {
        (Some(l), _) => l.to_string(),
        (None, Some(m)) => m.to_string(),
        (None, None) if meta.is_some() => {
            return Err(Error::file(
                meta_name,
                "model: required field is missing (or pass --run-label NAME)",
            ))
        }
        (None, None) => {
            return Err(Error::file(
                &name,
                "run: no meta.json in the run folder above episodes/ to name the model: pass --run-label NAME",
            ))
        }
    };
    let benchmark = meta
        .and_then(|m| m.get("benchmark"))
        .and_then(Value::as_str)
        .map(str::to_string)
        .or_else(|| benchmark_of_task(v))
        .unwrap_or_else(|| "rllm".into());
    Ok(Episode {
        steps: steps_of(v, &run).map_err(rec)?,
        run,
        benchmark,
        task,
        sample,
        train_step: None,
        group: None,
        success,
        termination,
    })
}

/// The rLLM files among the discovered ones, each converted (or why not).
/// `budget`: `--budget`, else each task's most turns over every run.
pub fn prepare(
    files: &[(PathBuf, bool)],
    label: Option<&str>,
    budget: Option<u32>,
    lenient: bool,
    notes: &mut Vec<String>,
) -> Result<BTreeMap<PathBuf, Prepared>, Error> {
    let candidates: Vec<&PathBuf> = files
        .iter()
        .map(|f| &f.0)
        .filter(|p| rllm_name(p).is_some())
        .collect();
    if candidates.is_empty() {
        return Ok(BTreeMap::new());
    }
    let parsed: Vec<(&PathBuf, Result<Value, String>)> = candidates
        .par_iter()
        .map(|p| {
            let v = std::fs::read(p)
                .map_err(|e| crate::error::io_text(&e))
                .and_then(|raw| {
                    serde_json::from_slice::<Value>(&raw).map_err(|e| format!("invalid JSON: {e}"))
                });
            (*p, v)
        })
        .collect();
    let mut metas: Metas = BTreeMap::new();
    for (p, v) in &parsed {
        if rllm_name(p) == Some("episode") && v.as_ref().is_ok_and(|v| v.get("id").is_some()) {
            if let Some(m) = meta_path(p) {
                metas.entry(m.clone()).or_insert_with(|| read_meta(&m));
            }
        }
    }
    let mut out = BTreeMap::new();
    let mut episodes: Vec<(PathBuf, Episode)> = Vec::new();
    for (p, v) in parsed {
        let kind = rllm_name(p);
        match v {
            // Not JSON at all: an rLLM episode file by its name, so it is
            // reported as one (a stray `meta.json` is left to the usual path).
            Err(e) if kind == Some("episode") => {
                out.insert(
                    p.clone(),
                    Prepared::Bad(RecordError::new(SkipReason::Syntax, "", e)),
                );
            }
            Err(_) => {}
            Ok(v) if kind == Some("bookkeeping") && is_bookkeeping(p, &v) => {
                out.insert(p.clone(), Prepared::Ignored);
            }
            Ok(v) if is_episode(&v) => match episode(p, &v, &metas, label) {
                Ok(e) => episodes.push((p.clone(), e)),
                Err(e) if !lenient => return Err(e),
                Err(Error::File { message, .. }) => {
                    let (field, msg) = message
                        .split_once(": ")
                        .map_or((String::new(), message.clone()), |(f, m)| {
                            (f.to_string(), m.to_string())
                        });
                    let reason = if msg.contains("missing") || field == "run" {
                        SkipReason::MissingField
                    } else if msg.starts_with("expected") {
                        SkipReason::Type
                    } else {
                        SkipReason::ImpossibleValue
                    };
                    out.insert(
                        p.clone(),
                        Prepared::Bad(RecordError::new(reason, field, msg)),
                    );
                }
                Err(e) => return Err(e),
            },
            Ok(_) => {}
        }
    }
    if episodes.is_empty() {
        return Ok(out);
    }
    let mut most: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    for (_, e) in &episodes {
        let n = most.entry((&e.benchmark, &e.task)).or_insert(0);
        *n = (*n).max(e.steps.len());
    }
    notes.push(match budget {
        Some(b) => format!("rLLM episodes: budget {b} turns for every task (--budget)"),
        None => "rLLM episodes: no --budget, so each task's budget is the most turns seen for it over every loaded run".into(),
    });
    let mut with_tokens = false;
    let mut with_logp = false;
    let records: Vec<(PathBuf, Vec<u8>)> = episodes
        .iter()
        .map(|(p, e)| {
            let b = budget
                .map_or_else(
                    || most[&(e.benchmark.as_str(), e.task.as_str())],
                    |b| b as usize,
                )
                .max(1);
            with_tokens |= e.steps.iter().any(|s| s.get("output_tokens").is_some());
            with_logp |= e.steps.iter().any(|s| s.get("logp").is_some());
            let mut r = json!({
                "run": e.run, "benchmark": e.benchmark, "task": e.task, "sample": e.sample,
                "budget": b, "success": e.success, "termination": e.termination,
                "steps": e.steps,
            });
            if let Some(s) = e.train_step {
                r["train_step"] = json!(s);
            }
            if let Some(g) = &e.group {
                r["group"] = json!(g);
            }
            let mut line = serde_json::to_vec(&r).unwrap_or_default();
            line.push(b'\n');
            (p.clone(), line)
        })
        .collect();
    if !with_tokens {
        notes.push("rLLM episodes carry no response_ids: token budgets, token costs and length matching need output_tokens".into());
    }
    if !with_logp {
        notes.push("rLLM episodes carry no logprobs: the likelihood analysis needs log-probabilities under both policies".into());
    }
    for (p, line) in records {
        out.insert(p, Prepared::Record(line));
    }
    Ok(out)
}

/// One rLLM episode file as the SPEC record the load made of it (for the
/// trajectory view), or `None` when the file is not an rLLM episode.
pub fn reread(path: &Path) -> Result<Option<Value>, Error> {
    let name = path.display().to_string();
    let mut notes = Vec::new();
    let files = [(path.to_path_buf(), true)];
    match prepare(&files, None, None, true, &mut notes)?.remove(path) {
        Some(Prepared::Record(line)) => serde_json::from_slice(&line)
            .map(Some)
            .map_err(|e| Error::file(name, e.to_string())),
        Some(Prepared::Bad(e)) => Err(Error::file(name, format!("{}: {}", e.field, e.message))),
        Some(Prepared::Ignored) | None => Ok(None),
    }
}
