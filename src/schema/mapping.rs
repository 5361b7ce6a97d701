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

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde_json::{Map, Number, Value};

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

fn parse_source(target: &str, v: &toml::Value) -> Result<FieldMap, String> {
    let bad = |m: &str| format!("{target}: {m}");
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

impl Mapping {
    pub fn parse(name: &str, text: &str) -> Result<Mapping, String> {
        let doc: toml::Table = toml::from_str(text).map_err(|e| e.to_string())?;
        let s = |k: &str| doc.get(k).and_then(|v| v.as_str()).map(str::to_string);
        let shape = match s("shape").as_deref().unwrap_or("trajectory") {
            "trajectory" => Shape::Trajectory,
            "split" => Shape::Split(s("split_on").ok_or("shape = \"split\" needs split_on")?),
            "step" => Shape::Step {
                group_by: s("group_by").ok_or("shape = \"step\" needs group_by")?,
                order_by: s("order_by"),
            },
            other => return Err(format!("shape: {other:?} is not trajectory, split or step")),
        };
        let pattern = |k: &str| {
            s(k).map(|r| regex::Regex::new(&r).map_err(|e| format!("{k}: {e}")))
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
                return Err(format!("unknown key {k:?}"));
            }
        }
        if let Some(t) = doc.get("trajectory").and_then(|t| t.as_table()) {
            for (k, v) in t {
                if !TRAJECTORY_FIELDS.contains(&k.as_str()) {
                    return Err(format!("trajectory.{k}: not a SPEC trajectory field"));
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
                    let runs = v
                        .as_table()
                        .ok_or("step.logp: expected a table of run = source")?;
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
                    return Err(format!("step.{k}: not a SPEC step field"));
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

/// Looks up a dotted path with array indexing (`a.b[0].c`, `[-1]` = last),
/// filters (`messages[role=assistant]`: the array's objects whose `role`
/// is the text `assistant`, or the number or bool it spells) and fields of
/// arrays (`messages[role=tool].cost`: each element's `cost`).
/// A leading `^` reads `outer` instead of `inner`.
pub fn lookup<'a>(
    inner: &'a Value,
    outer: Option<&'a Value>,
    path: &str,
) -> Option<Cow<'a, Value>> {
    let (root, path) = match path.strip_prefix('^') {
        Some(p) => (outer.unwrap_or(inner), p),
        None => (inner, path),
    };
    let mut cur = Cow::Borrowed(root);
    for part in path.split('.').filter(|p| !p.is_empty()) {
        let (key, idx) = match part.find('[') {
            Some(i) => (&part[..i], Some(&part[i..])),
            None => (part, None),
        };
        if !key.is_empty() {
            cur = match cur {
                // A field of an array: that field of each element that has it.
                c if c.is_array() => Cow::Owned(Value::Array(
                    c.as_array()?
                        .iter()
                        .filter_map(|x| x.get(key).cloned())
                        .collect(),
                )),
                Cow::Borrowed(v) => Cow::Borrowed(v.get(key)?),
                Cow::Owned(v) => Cow::Owned(v.get(key)?.clone()),
            };
        }
        if let Some(mut rest) = idx {
            while let Some(close) = rest.find(']') {
                let inside = rest[1..close].trim();
                cur = if let Some((k, want)) = inside.split_once('=') {
                    let (k, want) = (k.trim(), want.trim());
                    let kept: Vec<Value> = cur
                        .as_array()?
                        .iter()
                        .filter(|x| x.get(k).is_some_and(|v| spells(v, want)))
                        .cloned()
                        .collect();
                    Cow::Owned(Value::Array(kept))
                } else {
                    let n: i64 = inside.parse().ok()?;
                    let arr = cur.as_array()?;
                    let i = if n < 0 { arr.len() as i64 + n } else { n };
                    let i = usize::try_from(i).ok()?;
                    match cur {
                        Cow::Borrowed(v) => Cow::Borrowed(v.as_array()?.get(i)?),
                        Cow::Owned(v) => Cow::Owned(v.as_array()?.get(i)?.clone()),
                    }
                };
                rest = &rest[close + 1..];
            }
        }
    }
    Some(cur)
}

/// Does a JSON value spell this filter text (`assistant`, `3`, `true`)?
fn spells(v: &Value, want: &str) -> bool {
    match v {
        Value::String(s) => s == want,
        Value::Bool(b) => want == if *b { "true" } else { "false" },
        Value::Number(n) => n.as_f64().is_some() && want.parse::<f64>().ok() == n.as_f64(),
        _ => false,
    }
}

/// A value's text for hashing, joining and position keys: strings as
/// they are, anything else as JSON.
fn text_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// 64-bit FNV-1a: stable across platforms and releases (unlike the
/// standard library's hasher), so task ids made from it are too.
pub fn fnv1a_hex(text: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{h:016x}")
}

fn non_empty_array(v: Cow<'_, Value>, empty_missing: bool) -> Option<Vec<Value>> {
    let a = v.as_array()?;
    if a.is_empty() && empty_missing {
        return None;
    }
    Some(a.clone())
}

fn eval(f: &FieldMap, inner: &Value, outer: Option<&Value>, cx: &Context) -> Option<Value> {
    let look = |p: &str| lookup(inner, outer, p);
    let v = match &f.source {
        Source::Const(v) => Some(v.clone()),
        Source::Path(p) => look(p).filter(|v| !v.is_null()).map(Cow::into_owned),
        Source::Equals(p, want) => look(p).map(|v| {
            Value::Bool(*v == *want || (v.as_f64().is_some() && v.as_f64() == want.as_f64()))
        }),
        Source::AtLeast(p, x) => look(p)
            .and_then(|v| v.as_f64())
            .map(|v| Value::Bool(v >= *x)),
        Source::Above(p, x) => look(p)
            .and_then(|v| v.as_f64())
            .map(|v| Value::Bool(v > *x)),
        Source::Count(p, em) => look(p)
            .and_then(|v| non_empty_array(v, *em))
            .map(|a| Value::from(a.len() as u64)),
        Source::Sum(p, em) => look(p).and_then(|v| non_empty_array(v, *em)).map(|a| {
            let s: f64 = a.iter().filter_map(Value::as_f64).sum();
            Number::from_f64(s).map_or(Value::Null, Value::Number)
        }),
        Source::Split { path, sep, index } => look(path).and_then(|v| {
            let s = v.as_str()?;
            let parts: Vec<&str> = s.split(sep.as_str()).collect();
            let i = if *index < 0 {
                parts.len() as i64 + index
            } else {
                *index
            };
            parts
                .get(usize::try_from(i).ok()?)
                .map(|p| Value::String(p.to_string()))
        }),
        Source::PathPart(i) => {
            let parts: Vec<&str> = cx
                .path
                .split(['/', '\\'])
                .filter(|p| !p.is_empty())
                .collect();
            let j = if *i < 0 { parts.len() as i64 + i } else { *i };
            usize::try_from(j)
                .ok()
                .and_then(|j| parts.get(j))
                .map(|p| Value::String(p.to_string()))
        }
        Source::PathRegex(re) => re
            .captures(cx.path)
            .and_then(|c| c.get(1))
            .map(|m| Value::String(m.as_str().to_string())),
        Source::PositionIn(p) => cx
            .positions
            .iter()
            .find(|(k, _)| k == p)
            .map(|&(_, n)| Value::from(n)),
        Source::Hash(p) => look(p)
            .filter(|v| !v.is_null())
            .map(|v| Value::String(fnv1a_hex(&text_of(&v)))),
        Source::Join(parts, sep) => {
            let texts: Option<Vec<String>> = parts
                .iter()
                .map(|p| eval(p, inner, outer, cx).map(|v| text_of(&v)))
                .collect();
            texts.map(|t| Value::String(t.join(sep)))
        }
        Source::Json(field, path) => look(field).and_then(|v| {
            let doc: Value = serde_json::from_str(v.as_str()?).ok()?;
            lookup(&doc, None, path)
                .filter(|v| !v.is_null())
                .map(Cow::into_owned)
        }),
        Source::RunLabel(d) => Some(Value::String(cx.run_label.unwrap_or(d).to_string())),
    };
    let v = v.or_else(|| f.default.clone())?;
    Some(match f.cast.as_deref() {
        Some("int") => match &v {
            Value::String(s) => s.trim().parse::<i64>().map(Value::from).unwrap_or(v),
            Value::Number(n) if n.as_f64().is_some_and(|x| x.fract() == 0.0 && !n.is_i64()) => {
                Value::from(n.as_f64().unwrap_or(0.0) as i64)
            }
            _ => v,
        },
        Some("float") => match &v {
            Value::String(s) => s
                .trim()
                .parse::<f64>()
                .ok()
                .and_then(Number::from_f64)
                .map_or(v, Value::Number),
            _ => v,
        },
        Some("string") => match &v {
            Value::String(_) => v,
            other => Value::String(other.to_string()),
        },
        Some("bool") => match &v {
            Value::Number(n) => Value::Bool(n.as_f64().is_some_and(|x| x != 0.0)),
            Value::String(s) => Value::Bool(matches!(
                s.as_str(),
                "true" | "True" | "1" | "yes" | "C" | "correct"
            )),
            _ => v,
        },
        _ => v,
    })
}

/// Counts records by the mapping's `position_in` keys, in file order.
#[derive(Debug, Default)]
pub struct Positions {
    seen: Vec<BTreeMap<String, u64>>,
}

impl Positions {
    /// This record's position for each path (and counts it).
    pub fn next(&mut self, paths: &[String], record: &Value) -> Vec<(String, u64)> {
        self.seen.resize_with(paths.len(), BTreeMap::new);
        paths
            .iter()
            .zip(&mut self.seen)
            .map(|(p, seen)| {
                let key = lookup(record, None, p).map_or_else(|| "null".into(), |v| text_of(&v));
                let n = seen.entry(key).or_insert(0);
                *n += 1;
                (p.clone(), *n - 1)
            })
            .collect()
    }
}

impl Mapping {
    fn fill(
        fields: &[FieldMap],
        inner: &Value,
        outer: Option<&Value>,
        cx: &Context,
        out: &mut Map<String, Value>,
    ) {
        for f in fields {
            if let Some(v) = eval(f, inner, outer, cx) {
                out.insert(f.target.clone(), v);
            }
        }
    }

    fn step_record(&self, s: &Value, outer: Option<&Value>, cx: &Context) -> Value {
        let mut m = Map::new();
        Self::fill(&self.step, s, outer, cx, &mut m);
        if !self.logp.is_empty() {
            let mut lp = Map::new();
            for (run, f) in &self.logp {
                if let Some(v) = eval(f, s, outer, cx) {
                    lp.insert(run.clone(), v);
                }
            }
            if !lp.is_empty() {
                m.insert("logp".into(), Value::Object(lp));
            }
        }
        Value::Object(m)
    }

    fn trajectory_record(&self, t: &Value, outer: Option<&Value>, cx: &Context) -> Value {
        let mut m = Map::new();
        Self::fill(&self.trajectory, t, outer, cx, &mut m);
        if let Some(p) = &self.steps {
            if let Some(arr) = lookup(t, outer, p) {
                if let Some(arr) = arr.as_array() {
                    m.insert(
                        "steps".into(),
                        Value::Array(
                            arr.iter()
                                .map(|s| self.step_record(s, Some(t), cx))
                                .collect(),
                        ),
                    );
                }
            }
        }
        Value::Object(m)
    }

    /// Maps one source record (trajectory and split shapes).
    pub fn map_record(&self, v: &Value, cx: &Context) -> Vec<Value> {
        match &self.shape {
            Shape::Trajectory => vec![self.trajectory_record(v, None, cx)],
            Shape::Split(on) => lookup(v, None, on)
                .and_then(|items| {
                    Some(
                        items
                            .as_array()?
                            .iter()
                            .map(|t| self.trajectory_record(t, Some(v), cx))
                            .collect(),
                    )
                })
                .unwrap_or_default(),
            Shape::Step { .. } => Vec::new(),
        }
    }

    /// Groups step rows into trajectories (step shape): (index of the group's
    /// first row, record), in order of first appearance.
    pub fn map_steps(&self, rows: &[Value], cx: &Context) -> Vec<(usize, Value)> {
        let Shape::Step { group_by, order_by } = &self.shape else {
            return Vec::new();
        };
        let mut groups: BTreeMap<String, Vec<usize>> = BTreeMap::new();
        let mut first: Vec<String> = Vec::new();
        for (i, r) in rows.iter().enumerate() {
            let key =
                lookup(r, None, group_by).map_or_else(|| "null".to_string(), |k| k.to_string());
            let e = groups.entry(key.clone()).or_default();
            if e.is_empty() {
                first.push(key);
            }
            e.push(i);
        }
        first
            .into_iter()
            .map(|key| {
                let mut idx = groups.remove(&key).unwrap_or_default();
                if let Some(o) = order_by {
                    idx.sort_by(|&a, &b| {
                        let f = |i: usize| {
                            lookup(&rows[i], None, o)
                                .and_then(|v| v.as_f64())
                                .unwrap_or(f64::NAN)
                        };
                        f(a).total_cmp(&f(b))
                    });
                }
                let last = &rows[*idx.last().unwrap_or(&0)];
                let mut m = Map::new();
                Self::fill(&self.trajectory, last, None, cx, &mut m);
                let steps: Vec<Value> = idx
                    .iter()
                    .map(|&i| self.step_record(&rows[i], None, cx))
                    .collect();
                m.insert("steps".into(), Value::Array(steps));
                (idx.iter().copied().min().unwrap_or(0), Value::Object(m))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
    fn bad_mappings_say_what_is_wrong() {
        assert!(Mapping::parse("m", "shape = \"split\"\n[trajectory]\n")
            .unwrap_err()
            .contains("split_on"));
        assert!(Mapping::parse("m", "[trajectory]\nbudgett = \"x\"\n")
            .unwrap_err()
            .contains("budgett"));
        assert!(
            Mapping::parse("m", "[trajectory]\nbudget = { frobnicate = 1 }\n")
                .unwrap_err()
                .contains("needs one of")
        );
        assert!(Mapping::parse("m", "[trajectory\n").is_err());
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
}
