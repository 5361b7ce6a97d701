//! Any Parquet frame's rows as JSON values: the slow, general path, and the rows the trajectory view shows.

use super::*;

/// Renders any Parquet frame's rows as JSON Lines (the slow, general path).
pub(super) fn records_from_frame(name: &str, df: &DataFrame) -> Result<Vec<u8>> {
    let bad = |m: String| Error::file(name, m);
    let mut out = Vec::new();
    for r in values_from_frame(df, None) {
        serde_json::to_writer(&mut out, &r).map_err(|e| bad(e.to_string()))?;
        out.push(b'\n');
    }
    Ok(out)
}

/// A Parquet frame's rows as the JSON records [`records_from_frame`]
/// writes; `step_fields`: of each step those fields alone (a search reads
/// a step's action and observation, not its log-probabilities).
pub(super) fn values_from_frame(df: &DataFrame, step_fields: Option<&[&str]>) -> Vec<Value> {
    let mut rows: Vec<Map<String, Value>> = vec![Map::new(); df.height()];
    for col in df.columns() {
        let name = col.name().to_string();
        let s = col.as_materialized_series();
        for (i, av) in s.iter().enumerate() {
            let v = match (name.as_str(), step_fields) {
                ("steps", Some(keep)) => steps_with(av, keep),
                ("steps", None) => steps_value(av),
                _ => to_json(av),
            };
            if !v.is_null() {
                rows[i].insert(name.clone(), v);
            }
        }
    }
    rows.into_iter().map(Value::Object).collect()
}

/// `steps` list with each step's fields `keep` alone.
fn steps_with(av: AnyValue, keep: &[&str]) -> Value {
    let AnyValue::List(steps) = av else {
        return to_json(av);
    };
    let step = |st: AnyValue| match st {
        AnyValue::Struct(_, _, fields) => {
            let mut m = Map::new();
            for (f, v) in fields.iter().zip(st._iter_struct_av()) {
                if keep.contains(&f.name().as_str()) {
                    m.insert(f.name().to_string(), to_json(v));
                }
            }
            Value::Object(m)
        }
        other => to_json(other),
    };
    Value::Array(steps.iter().map(step).collect())
}

/// `steps` list: each step's `logp` list of `{run, value}` becomes `{run: value}`.
fn steps_value(av: AnyValue) -> Value {
    let mut v = to_json(av);
    if let Value::Array(steps) = &mut v {
        for s in steps {
            if let Some(lp) = s.get_mut("logp") {
                if let Value::Array(entries) = lp {
                    let mut m = Map::new();
                    for e in entries.iter() {
                        if let (Some(run), Some(x)) =
                            (e.get("run").and_then(Value::as_str), e.get("value"))
                        {
                            m.insert(run.to_string(), x.clone());
                        }
                    }
                    *lp = Value::Object(m);
                }
            }
        }
    }
    v
}

fn float(x: f64) -> Value {
    // JSON has no NaN/Infinity: pass them on as text so validation names the field.
    Number::from_f64(x).map_or_else(|| Value::String(x.to_string()), Value::Number)
}

fn to_json(av: AnyValue) -> Value {
    match av {
        AnyValue::Null => Value::Null,
        AnyValue::Boolean(b) => Value::Bool(b),
        AnyValue::Int8(x) => x.into(),
        AnyValue::Int16(x) => x.into(),
        AnyValue::Int32(x) => x.into(),
        AnyValue::Int64(x) => x.into(),
        AnyValue::UInt8(x) => x.into(),
        AnyValue::UInt16(x) => x.into(),
        AnyValue::UInt32(x) => x.into(),
        AnyValue::UInt64(x) => x.into(),
        AnyValue::Float32(x) => float(x as f64),
        AnyValue::Float64(x) => float(x),
        AnyValue::String(s) => Value::String(s.to_string()),
        AnyValue::StringOwned(s) => Value::String(s.to_string()),
        AnyValue::List(s) => Value::Array(s.iter().map(to_json).collect()),
        AnyValue::Struct(_, _, fields) => {
            let mut m = Map::new();
            for (f, v) in fields.iter().zip(av._iter_struct_av()) {
                m.insert(f.name().to_string(), to_json(v));
            }
            Value::Object(m)
        }
        AnyValue::StructOwned(b) => {
            let (vals, fields) = *b;
            let mut m = Map::new();
            for (f, v) in fields.iter().zip(vals) {
                m.insert(f.name().to_string(), to_json(v));
            }
            Value::Object(m)
        }
        other => Value::String(other.to_string()),
    }
}

/// A window's steps' actions and observations read where they were
/// decoded: its `steps` lists' offsets and validity, the steps' validity
/// and their string leaves — what [`values_from_frame`] makes of them, and
/// [`crate::schema::load::steps_text`] reads back, without a value a step.
pub(super) struct StepTextLeaves {
    lists: polars_arrow::array::ListArray<i64>,
    steps: polars_arrow::array::StructArray,
    /// `action` and `observation` (`None`: the steps have no such field).
    leaves: [Option<polars_arrow::array::Utf8ViewArray>; 2],
}

impl StepTextLeaves {
    /// Of a frame whose `steps` are a list of structs whose `action` and
    /// `observation`, those they have, are strings; else `None` (a step
    /// field of another type is its JSON: read as values).
    pub(super) fn of(frame: &DataFrame) -> Option<StepTextLeaves> {
        use polars_arrow::array::{StructArray, Utf8ViewArray};
        let lists = frame
            .column("steps")
            .ok()?
            .as_materialized_series()
            .list()
            .ok()?;
        let lists = lists.rechunk().downcast_iter().next()?.clone();
        let steps = lists
            .values()
            .as_any()
            .downcast_ref::<StructArray>()?
            .clone();
        let leaf = |name: &str| match steps.fields().iter().position(|f| f.name == name) {
            None => Some(None),
            Some(i) => steps.values()[i]
                .as_any()
                .downcast_ref::<Utf8ViewArray>()
                .map(|a| Some(a.clone())),
        };
        let leaves = [leaf("action")?, leaf("observation")?];
        Some(StepTextLeaves {
            lists,
            steps,
            leaves,
        })
    }

    /// Row `i`'s step texts (`observations` false: those `None`), or
    /// `None` past the window's rows.
    pub(super) fn row(&self, i: usize, observations: bool) -> Option<Vec<StepText<'_>>> {
        use polars_arrow::array::Array;
        if i >= self.lists.len() {
            return None;
        }
        if !self.lists.is_valid(i) {
            return Some(Vec::new());
        }
        let (a, b) = self.lists.offsets().start_end(i);
        let observed = |s| if observations { self.text(1, s) } else { None };
        Some((a..b).map(|s| [self.text(0, s), observed(s)]).collect())
    }

    /// Step `s`'s leaf `j` (0: action, 1: observation).
    fn text(&self, j: usize, s: usize) -> Option<std::borrow::Cow<'_, str>> {
        use polars_arrow::array::Array;
        self.leaves[j]
            .as_ref()
            .filter(|l| self.steps.is_valid(s) && l.is_valid(s))
            .map(|l| std::borrow::Cow::Borrowed(l.value(s)))
    }
}
