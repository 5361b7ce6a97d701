//! Reading a source record through a mapping: paths, transforms, and the
//! three shapes turned into SPEC §1 records.

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde_json::{Map, Number, Value};

use super::{Context, FieldMap, Mapping, Shape, Source};

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
