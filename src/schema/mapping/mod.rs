//! `--map mapping.toml`: read any JSON Lines whose field names differ from
//! SPEC §1. A mapping names a source for each SPEC field (a dotted path with
//! array indexing, or a simple transform) and one of three shapes:
//!
//! - `trajectory`: one source record per trajectory, steps from an array;
//! - `split`: one record holding several trajectories (`split_on`), as in
//!   rLLM episodes; paths starting with `^` read the enclosing record;
//! - `step`: one record per step, grouped into trajectories by `group_by`
//!   and ordered by `order_by`, as in verl-agent; trajectory fields are read
//!   from the group's last row.
//!
//! Mapped records then pass the same validation as native ones; errors name
//! the file, the source record and the source field.

use serde_json::Value;

/// Where a SPEC field's value comes from.
#[derive(Debug, Clone)]
pub enum Source {
    Path(String),
    Const(Value),
    Equals(String, Value),
    AtLeast(String, f64),
    /// A number strictly above a threshold (→ bool).
    Above(String, f64),
    /// Length of an array; `empty_missing`: an empty array is no value.
    Count(String, bool),
    /// Sum of an array's numbers; `empty_missing` as for `Count`.
    Sum(String, bool),
    Split {
        path: String,
        sep: String,
        index: i64,
    },
    /// A component of the source file's path (−1 = the file name).
    PathPart(i64),
    /// The first capture group of a regular expression over the file's path.
    PathRegex(regex::Regex),
    /// The record's position (0-based) among the file's records with the
    /// same value at this path.
    PositionIn(String),
    /// A stable 64-bit FNV-1a hash (16 hex digits) of the value at a path.
    Hash(String),
    /// Several sources' texts joined with a separator.
    Join(Vec<FieldMap>, String),
    /// A JSON document held in a string field, then a path inside it.
    Json(String, String),
    /// `--run-label` when given, else this default.
    RunLabel(String),
}

#[derive(Debug, Clone)]
pub struct FieldMap {
    pub target: String,
    pub source: Source,
    pub default: Option<Value>,
    /// Convert the value: "int", "float", "string" or "bool".
    pub cast: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Shape {
    Trajectory,
    Split(String),
    Step {
        group_by: String,
        order_by: Option<String>,
    },
}

#[derive(Debug, Clone)]
pub struct Mapping {
    pub name: String,
    pub shape: Shape,
    /// Array of step objects inside a trajectory (trajectory and split shapes).
    pub steps: Option<String>,
    pub trajectory: Vec<FieldMap>,
    pub step: Vec<FieldMap>,
    /// run → source of that run's log-probability per step.
    pub logp: Vec<(String, FieldMap)>,
    /// Only files whose path matches are read; others are passed over.
    pub files: Option<regex::Regex>,
    /// Files whose path matches are passed over (a dump's summary files).
    pub skip_files: Option<regex::Regex>,
}

/// What a source record's mapping may read besides the record itself.
#[derive(Debug, Default, Clone, Copy)]
pub struct Context<'a> {
    /// The source file's path, as given.
    pub path: &'a str,
    /// `--run-label`.
    pub run_label: Option<&'a str>,
    /// Positions of this record for the mapping's `position_in` paths.
    pub positions: &'a [(String, u64)],
}

const SOURCE_KEYS: &[&str] = &[
    "path",
    "const",
    "count",
    "sum",
    "equals",
    "at_least",
    "above",
    "split",
    "index",
    "default",
    "as",
    "empty",
    "path_part",
    "path_regex",
    "position_in",
    "hash",
    "join",
    "sep",
    "json",
    "run_label",
];

fn parse_source(target: &str, v: &toml::Value) -> Result<FieldMap, BadMapping> {
    let bad = |m: &str| BadMapping::at(target, m);
    let to_json = |v: &toml::Value| serde_json::to_value(v).map_err(|e| bad(&e.to_string()));
    match v {
        toml::Value::String(p) => Ok(FieldMap {
            target: target.into(),
            source: Source::Path(p.clone()),
            default: None,
            cast: None,
        }),
        toml::Value::Table(t) => {
            let get_str = |k: &str| t.get(k).and_then(|x| x.as_str()).map(str::to_string);
            let empty_missing = match get_str("empty").as_deref() {
                None => false,
                Some("missing") => true,
                Some(o) => {
                    return Err(bad(&format!(
                        "empty = {o:?}: the only choice is \"missing\""
                    )))
                }
            };
            let path = get_str("path");
            let source = if let Some(c) = t.get("const") {
                Source::Const(to_json(c)?)
            } else if let Some(p) = get_str("count") {
                Source::Count(p, empty_missing)
            } else if let Some(p) = get_str("sum") {
                Source::Sum(p, empty_missing)
            } else if let Some(i) = t.get("path_part") {
                Source::PathPart(
                    i.as_integer()
                        .ok_or_else(|| bad("path_part must be an integer (−1 = file name)"))?,
                )
            } else if let Some(r) = get_str("path_regex") {
                let re = regex::Regex::new(&r).map_err(|e| bad(&format!("path_regex: {e}")))?;
                if re.captures_len() < 2 {
                    return Err(bad(
                        "path_regex needs a capture group, e.g. \"step_(\\d+)\"",
                    ));
                }
                Source::PathRegex(re)
            } else if let Some(p) = get_str("position_in") {
                Source::PositionIn(p)
            } else if let Some(p) = get_str("hash") {
                Source::Hash(p)
            } else if let Some(parts) = t.get("join") {
                let parts = parts
                    .as_array()
                    .ok_or_else(|| bad("join must be a list of sources"))?;
                let parts = parts
                    .iter()
                    .enumerate()
                    .map(|(i, p)| parse_source(&format!("{target}.join[{i}]"), p))
                    .collect::<Result<Vec<_>, _>>()?;
                Source::Join(parts, get_str("sep").unwrap_or_default())
            } else if let Some(j) = get_str("json") {
                Source::Json(j, path.clone().unwrap_or_default())
            } else if let Some(d) = get_str("run_label") {
                Source::RunLabel(d)
            } else if let Some(p) = path.clone() {
                if let Some(e) = t.get("equals") {
                    Source::Equals(p, to_json(e)?)
                } else if let Some(x) = t.get("at_least") {
                    let x = x
                        .as_float()
                        .or_else(|| x.as_integer().map(|i| i as f64))
                        .ok_or_else(|| bad("at_least must be a number"))?;
                    Source::AtLeast(p, x)
                } else if let Some(x) = t.get("above") {
                    let x = x
                        .as_float()
                        .or_else(|| x.as_integer().map(|i| i as f64))
                        .ok_or_else(|| bad("above must be a number"))?;
                    Source::Above(p, x)
                } else if let Some(sep) = get_str("split") {
                    Source::Split {
                        path: p,
                        sep,
                        index: t.get("index").and_then(|i| i.as_integer()).unwrap_or(0),
                    }
                } else {
                    Source::Path(p)
                }
            } else {
                return Err(bad(
                    "needs one of path, const, count, sum, path_part, path_regex, position_in, hash, join, json or run_label",
                ));
            };
            for k in t.keys() {
                if !SOURCE_KEYS.contains(&k.as_str()) {
                    return Err(bad(&format!("unknown key {k:?}")));
                }
            }
            if empty_missing && !matches!(source, Source::Count(..) | Source::Sum(..)) {
                return Err(bad("empty = \"missing\" goes with count or sum"));
            }
            let cast = get_str("as");
            if let Some(c) = &cast {
                if !["int", "float", "string", "bool"].contains(&c.as_str()) {
                    return Err(bad("as must be int, float, string or bool"));
                }
            }
            Ok(FieldMap {
                target: target.into(),
                source,
                default: t.get("default").map(to_json).transpose()?,
                cast,
            })
        }
        _ => Err(bad("expected a path string or a table")),
    }
}

use super::TRAJECTORY_FIELDS;
const STEP_FIELDS: &[&str] = &[
    "turn",
    "action",
    "observation",
    "output_tokens",
    "error",
    "reward",
    "budget_total",
    "budget_remaining",
    "state",
];

/// What is wrong with a mapping file, and the key it is wrong at (dotted,
/// as the file spells it; `join[i]` for a part of a join), if one.
#[derive(Debug, Clone, PartialEq)]
pub struct BadMapping {
    pub key: Option<String>,
    pub message: String,
    /// The line, where the TOML parser itself gave the place.
    line: Option<usize>,
}

impl BadMapping {
    fn at(key: &str, message: &str) -> BadMapping {
        BadMapping {
            key: Some(key.to_string()),
            message: message.to_string(),
            line: None,
        }
    }
    /// The 1-based line of `text` (the mapping file) the error is at: the
    /// TOML parser's place, or the line where the key is given (a key of a
    /// join's part is found at its join's key).
    pub fn line(&self, text: &str) -> Option<usize> {
        if let Some(l) = self.line {
            return Some(l);
        }
        let key = self.key.as_deref()?;
        let key = key.split('[').next().unwrap_or(key);
        let doc = toml::de::DeTable::parse(text).ok()?;
        let mut table = doc.get_ref();
        let mut rest = key;
        loop {
            // The longest key of this table that starts what is left: a
            // key may itself hold dots (a run name under step.logp).
            let (k, v) = table
                .iter()
                .filter(|(k, _)| {
                    let k: &str = k.get_ref();
                    rest == k || rest.strip_prefix(k).is_some_and(|r| r.starts_with('.'))
                })
                .max_by_key(|(k, _)| k.get_ref().len())?;
            rest = rest[k.get_ref().len()..].trim_start_matches('.');
            match (rest.is_empty(), v.get_ref().as_table()) {
                (true, _) => return Some(line_at(text, k.span().start)),
                (false, Some(t)) => table = t,
                (false, None) => return Some(line_at(text, k.span().start)),
            }
        }
    }
}

/// The 1-based line of `text` that byte `at` is on.
fn line_at(text: &str, at: usize) -> usize {
    text.as_bytes()[..at.min(text.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

impl std::fmt::Display for BadMapping {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.key {
            Some(k) => write!(f, "{k}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl From<&str> for BadMapping {
    fn from(message: &str) -> BadMapping {
        BadMapping {
            key: None,
            message: message.to_string(),
            line: None,
        }
    }
}

impl Mapping {
    pub fn parse(name: &str, text: &str) -> Result<Mapping, BadMapping> {
        let doc: toml::Table = toml::from_str(text).map_err(|e: toml::de::Error| BadMapping {
            key: None,
            message: e.message().trim_end().to_string(),
            line: e.span().map(|r| line_at(text, r.start)),
        })?;
        let s = |k: &str| doc.get(k).and_then(|v| v.as_str()).map(str::to_string);
        let shape = match s("shape").as_deref().unwrap_or("trajectory") {
            "trajectory" => Shape::Trajectory,
            "split" => Shape::Split(
                s("split_on").ok_or_else(|| BadMapping::at("shape", "\"split\" needs split_on"))?,
            ),
            "step" => Shape::Step {
                group_by: s("group_by")
                    .ok_or_else(|| BadMapping::at("shape", "\"step\" needs group_by"))?,
                order_by: s("order_by"),
            },
            other => {
                return Err(BadMapping::at(
                    "shape",
                    &format!("{other:?} is not trajectory, split or step"),
                ))
            }
        };
        let pattern = |k: &str| {
            s(k).map(|r| regex::Regex::new(&r).map_err(|e| BadMapping::at(k, &e.to_string())))
                .transpose()
        };
        let (files, skip_files) = (pattern("files")?, pattern("skip_files")?);
        let mut m = Mapping {
            name: name.into(),
            shape,
            steps: s("steps"),
            trajectory: Vec::new(),
            step: Vec::new(),
            logp: Vec::new(),
            files,
            skip_files,
        };
        for k in doc.keys() {
            if ![
                "shape",
                "split_on",
                "group_by",
                "order_by",
                "steps",
                "files",
                "skip_files",
                "trajectory",
                "step",
            ]
            .contains(&k.as_str())
            {
                return Err(BadMapping::at(k, "not a mapping key"));
            }
        }
        if let Some(t) = doc.get("trajectory").and_then(|t| t.as_table()) {
            for (k, v) in t {
                if !TRAJECTORY_FIELDS.contains(&k.as_str()) {
                    return Err(BadMapping::at(
                        &format!("trajectory.{k}"),
                        "not a SPEC trajectory field",
                    ));
                }
                m.trajectory
                    .push(parse_source(&format!("trajectory.{k}"), v).map(|mut f| {
                        f.target = k.clone();
                        f
                    })?);
            }
        } else {
            return Err("a [trajectory] table is required".into());
        }
        if let Some(t) = doc.get("step").and_then(|t| t.as_table()) {
            for (k, v) in t {
                if k == "logp" {
                    let runs = v.as_table().ok_or_else(|| {
                        BadMapping::at("step.logp", "expected a table of run = source")
                    })?;
                    for (run, src) in runs {
                        m.logp
                            .push((run.clone(), parse_source(&format!("step.logp.{run}"), src)?));
                    }
                } else if STEP_FIELDS.contains(&k.as_str()) {
                    m.step
                        .push(parse_source(&format!("step.{k}"), v).map(|mut f| {
                            f.target = k.clone();
                            f
                        })?);
                } else {
                    return Err(BadMapping::at(
                        &format!("step.{k}"),
                        "not a SPEC step field",
                    ));
                }
            }
        }
        if !matches!(m.shape, Shape::Trajectory) && !m.position_paths().is_empty() {
            return Err("position_in is for shape = \"trajectory\" (one record per row)".into());
        }
        Ok(m)
    }

    /// The source text of a SPEC field, for error messages.
    pub fn describe(&self, spec_field: &str) -> Option<String> {
        let (list, name) = match spec_field.split_once('.') {
            Some((head, rest)) if head.starts_with("steps[") => {
                if let Some(run) = rest.strip_prefix("logp.") {
                    return self
                        .logp
                        .iter()
                        .find(|(r, _)| r == run)
                        .map(|(_, f)| describe_source(&f.source));
                }
                (&self.step, rest)
            }
            _ => (&self.trajectory, spec_field),
        };
        list.iter()
            .find(|f| f.target == name)
            .map(|f| describe_source(&f.source))
    }

    /// The paths `position_in` counts records by (trajectory fields only).
    pub fn position_paths(&self) -> Vec<String> {
        fn walk(f: &FieldMap, out: &mut Vec<String>) {
            match &f.source {
                Source::PositionIn(p) if !out.contains(p) => out.push(p.clone()),
                Source::Join(parts, _) => parts.iter().for_each(|p| walk(p, out)),
                _ => {}
            }
        }
        let mut out = Vec::new();
        self.trajectory.iter().for_each(|f| walk(f, &mut out));
        out
    }

    /// A file must be read whole and in order: rows are grouped (step
    /// shape) or numbered by position.
    pub fn sequential(&self) -> bool {
        matches!(self.shape, Shape::Step { .. }) || !self.position_paths().is_empty()
    }

    /// Does this mapping read that file (its `files` pattern)?
    pub fn reads(&self, path: &str) -> bool {
        self.files.as_ref().is_none_or(|r| r.is_match(path))
            && !self.skip_files.as_ref().is_some_and(|r| r.is_match(path))
    }
}

fn describe_source(s: &Source) -> String {
    match s {
        Source::Path(p)
        | Source::Equals(p, _)
        | Source::AtLeast(p, _)
        | Source::Above(p, _)
        | Source::Split { path: p, .. } => format!("`{p}`"),
        Source::Count(p, _) => format!("count of `{p}`"),
        Source::Sum(p, _) => format!("sum of `{p}`"),
        Source::Const(v) => format!("constant {v}"),
        Source::PathPart(i) => format!("path component {i}"),
        Source::PathRegex(r) => format!("path pattern `{r}`"),
        Source::PositionIn(p) => format!("position among records with the same `{p}`"),
        Source::Hash(p) => format!("hash of `{p}`"),
        Source::Join(parts, sep) => {
            let parts: Vec<String> = parts.iter().map(|p| describe_source(&p.source)).collect();
            format!("{} joined with {sep:?}", parts.join(", "))
        }
        Source::Json(f, p) => format!("`{p}` inside the JSON text of `{f}`"),
        Source::RunLabel(d) => format!("--run-label (default {d:?})"),
    }
}

mod eval;
#[cfg(test)]
mod tests;

pub use eval::{fnv1a_hex, lookup, Positions};
