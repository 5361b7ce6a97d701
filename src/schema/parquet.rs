//! Parquet input (SPEC §1): one kind per file, the same field names as the
//! JSON records; `logp` is a list of `{run, value}` structs. Rows are
//! rendered as JSON Lines so that one validator checks both formats.

use polars::prelude::*;
use serde_json::{Map, Number, Value};

use crate::error::{Error, Result};

pub fn records_from_bytes(name: &str, raw: Vec<u8>) -> Result<Vec<u8>> {
    let bad = |m: String| Error::file(name, m);
    let df = ParquetReader::new(std::io::Cursor::new(raw))
        .finish()
        .map_err(|e| bad(format!("not a readable Parquet file: {e}")))?;
    let mut rows: Vec<Map<String, Value>> = vec![Map::new(); df.height()];
    for col in df.columns() {
        let name = col.name().to_string();
        let s = col.as_materialized_series();
        for (i, av) in s.iter().enumerate() {
            let v = if name == "steps" {
                steps_value(av)
            } else {
                to_json(av)
            };
            if !v.is_null() {
                rows[i].insert(name.clone(), v);
            }
        }
    }
    let mut out = Vec::new();
    for r in rows {
        serde_json::to_writer(&mut out, &Value::Object(r)).map_err(|e| bad(e.to_string()))?;
        out.push(b'\n');
    }
    Ok(out)
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
