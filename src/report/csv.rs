//! `--csv`: every table of report.json as `csv/<table>.csv`, one row per
//! record, nested objects flattened to dotted columns, lists as `a;b`.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

fn flatten(prefix: &str, v: &Value, out: &mut Vec<(String, String)>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                let key = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten(&key, x, out);
            }
        }
        Value::Array(a) if a.iter().all(|x| !x.is_object() && !x.is_array()) => {
            out.push((
                prefix.to_string(),
                a.iter().map(scalar).collect::<Vec<_>>().join(";"),
            ));
        }
        Value::Array(_) => {} // nested tables (by_turn, rules, …) get their own CSV
        x => out.push((prefix.to_string(), scalar(x))),
    }
}

fn scalar(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        x => x.to_string(),
    }
}

/// Header and rows as CSV (RFC 4180 quoting by the `csv` crate, which also
/// quotes `\r`).
fn write(cols: &[String], rows: impl Iterator<Item = Vec<String>>) -> String {
    let mut w = csv::WriterBuilder::new().from_writer(Vec::new());
    let _ = w.write_record(cols);
    for r in rows {
        let _ = w.write_record(&r);
    }
    String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
}

fn table(rows: &[Map<String, Value>]) -> String {
    let flat: Vec<Vec<(String, String)>> = rows
        .iter()
        .map(|r| {
            let mut out = Vec::new();
            flatten("", &Value::Object(r.clone()), &mut out);
            out
        })
        .collect();
    let mut cols: Vec<String> = Vec::new();
    let mut seen = BTreeSet::new();
    for r in &flat {
        for (k, _) in r {
            if seen.insert(k.clone()) {
                cols.push(k.clone());
            }
        }
    }
    let lines = flat.iter().map(|r| {
        cols.iter()
            .map(|c| {
                r.iter()
                    .find(|(k, _)| k == c)
                    .map_or(String::new(), |(_, v)| v.clone())
            })
            .collect()
    });
    write(&cols, lines)
}

/// (table name, CSV text) for every list of records in the report,
/// including nested lists (e.g. `budgetmix.rules`) with their parent's keys.
pub fn tables(report: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let Some(obj) = report.as_object() else {
        return out;
    };
    for (name, v) in obj {
        let Some(arr) = v.as_array() else { continue };
        let rows: Vec<Map<String, Value>> =
            arr.iter().filter_map(|x| x.as_object().cloned()).collect();
        if rows.is_empty() {
            continue;
        }
        out.push((name.clone(), table(&rows)));
        // Nested tables: parent identity columns + child fields.
        let nested: BTreeSet<String> = rows
            .iter()
            .flat_map(|r| {
                r.iter()
                    .filter(|(_, x)| x.as_array().is_some_and(|a| a.iter().any(Value::is_object)))
                    .map(|(k, _)| k.clone())
            })
            .collect();
        for child in nested {
            let mut crow = Vec::new();
            for r in &rows {
                let ids: Map<String, Value> = r
                    .iter()
                    .filter(|(k, x)| {
                        matches!(k.as_str(), "benchmark" | "base" | "rl" | "run") && x.is_string()
                    })
                    .map(|(k, x)| (k.clone(), x.clone()))
                    .collect();
                for c in r
                    .get(&child)
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    if let Some(co) = c.as_object() {
                        let mut m = ids.clone();
                        m.extend(co.clone());
                        crow.push(m);
                    }
                }
            }
            if !crow.is_empty() {
                out.push((format!("{name}.{child}"), table(&crow)));
            }
        }
    }
    out
}

/// A table of rows that share their keys (a curve's), made one row at a
/// time: the CSV the private `table` makes of them all at once, without
/// holding them.
pub fn streamed_table(rows: impl Iterator<Item = Value>) -> Option<String> {
    let mut rows = rows.map(|r| {
        let mut out = Vec::new();
        flatten("", &r, &mut out);
        out
    });
    let first = rows.next()?;
    let cols: Vec<String> = first.iter().map(|(k, _)| k.clone()).collect();
    let cells = |r: Vec<(String, String)>| r.into_iter().map(|(_, v)| v).collect::<Vec<_>>();
    Some(write(
        &cols,
        std::iter::once(cells(first)).chain(rows.map(cells)),
    ))
}
