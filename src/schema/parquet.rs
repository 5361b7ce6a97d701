//! Parquet input (SPEC §1): one kind per file, the same field names as the
//! JSON records; `logp` is a list of `{run, value}` structs. Rows are
//! rendered as JSON Lines so that one validator checks both formats.

use polars::prelude::*;
use serde_json::{Map, Number, Value};

use rayon::prelude::*;

use super::{Loc, LogSet};
use crate::error::{Error, RecordError, Result};

/// Renders any Parquet frame's rows as JSON Lines (the slow, general path).
fn records_from_frame(name: &str, df: &DataFrame) -> Result<Vec<u8>> {
    let bad = |m: String| Error::file(name, m);
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

/// Records parsed from a slice of rows: the chunk-local set, (row, error)
/// for rejected rows, and how many rows the slice had.
pub type ParsedRows = (LogSet, Vec<(u64, RecordError)>, u64);

/// A trajectory Parquet file read by columns, or any other kind as records.
pub enum ParquetData {
    /// Trajectory rows, in slices of consecutive rows, for
    /// [`parse_trajectories`].
    Trajectories(Vec<DataFrame>),
    /// A `--summarize` shard: per-task aggregates.
    Aggregates(Box<ParsedRows>),
    Lines(Vec<u8>),
}

/// Every row of a Parquet file as a JSON record, for `--map`: the mapping
/// reads the file's own columns.
pub fn read_parquet_records(name: &str, raw: Vec<u8>) -> Result<Vec<u8>> {
    records_from_frame(name, &read_frame(name, &raw, None)?)
}

/// A Parquet file's rows (or `slice` = (first, count) of them) as a frame.
fn read_frame(name: &str, raw: &[u8], slice: Option<(usize, usize)>) -> Result<DataFrame> {
    ParquetReader::new(std::io::Cursor::new(raw))
        .with_slice(slice)
        .finish()
        .map_err(|e| Error::file(name, format!("not a readable Parquet file: {e}")))
}

/// Rows a Parquet file has at least per slice decoded on its own.
const SLICE_ROWS: usize = 16384;

/// Reads a Parquet file; trajectory files (no `kind` column, or every row
/// `trajectory`) take the columnar fast path, validated by the same rules.
/// The rows are decoded in slices side by side, one a core: a frame's
/// decoding is otherwise one core's work (its `steps` column is most of
/// it) — 186 → 125–135 ms a gen_large file of 100,000 rows in two slices,
/// the frames as big together as the whole. Each slice decodes every page
/// of its row group before its own rows too (polars' ranged filter), so
/// two slices cost ~15 % more CPU than one whole decode (README, session
/// 20: slices one after another and decoding ahead were tried).
pub fn read_parquet(name: &str, raw: Vec<u8>) -> Result<ParquetData> {
    let unreadable =
        |e: PolarsError| Error::file(name, format!("not a readable Parquet file: {e}"));
    let mut reader = ParquetReader::new(std::io::Cursor::new(&raw[..]));
    let rows = reader.num_rows().map_err(unreadable)?;
    // The kinds of rows, from that column alone when there is one.
    let kinds = match reader.schema().map_err(unreadable)?.get("kind") {
        None => None,
        Some(_) => Some(
            ParquetReader::new(std::io::Cursor::new(&raw[..]))
                .with_columns(Some(vec!["kind".into()]))
                .finish()
                .map_err(unreadable)?,
        ),
    };
    let all = |ok: &dyn Fn(Option<&str>) -> bool| {
        kinds.as_ref().map(|df| {
            df.column("kind").is_ok_and(|c| {
                c.as_materialized_series()
                    .str()
                    .is_ok_and(|s| s.iter().all(ok))
            })
        })
    };
    let all_aggregates = all(&|k| k == Some("aggregate")).unwrap_or(false);
    let all_trajectories = all(&|k| matches!(k, None | Some("trajectory"))).unwrap_or(true);
    drop(kinds);
    if all_trajectories && rows > 0 {
        let pieces = rayon::current_num_threads().min(rows / SLICE_ROWS).max(1);
        // The first failing slice's error, in row order (the same whichever
        // core fails first).
        let file = TrajectoryFile::new(raw).map_err(unreadable)?;
        let parts: Vec<Result<Vec<DataFrame>>> = (0..pieces)
            .into_par_iter()
            .map(|k| {
                let (a, b) = (rows * k / pieces, rows * (k + 1) / pieces);
                file.frames(a..b).map_err(unreadable)
            })
            .collect();
        let parts = parts.into_iter().collect::<Result<Vec<_>>>()?;
        return Ok(ParquetData::Trajectories(
            parts.into_iter().flatten().collect(),
        ));
    }
    let df = read_frame(name, &raw, None)?;
    drop(raw);
    if all_aggregates && rows > 0 {
        return aggregates_by_columns(name, &df).map(|p| ParquetData::Aggregates(Box::new(p)));
    }
    records_from_frame(name, &df).map(ParquetData::Lines)
}

/// The step fields [`parse_trajectories`] reads (checked there in debug
/// builds): the only ones [`TrajectoryFile`] decodes.
const STEP_FIELDS: &[&str] = &[
    "turn",
    "output_tokens",
    "error",
    "reward",
    "budget_total",
    "budget_remaining",
    "logp",
];

/// A trajectory file read by the columns [`parse_trajectories`] reads:
/// the trajectory fields, and of `steps` (a list of structs) only
/// [`STEP_FIELDS`]. The other leaves (actions, observations, whatever else
/// a trainer stores) are neither decompressed nor decoded: polars' reader
/// projects whole top-level columns only, and the steps' other fields were
/// most of a load's decoding. Each column is decoded by polars-io's own
/// deserializer (`_internal::to_deserializer`, what its reader calls per
/// column and row group) from the column chunks of the leaves kept.
struct TrajectoryFile {
    bytes: polars_buffer::Buffer<u8>,
    meta: polars_parquet::read::FileMetadata,
    /// Each column read: its field as decoded, and which of its leaves
    /// (in the file's order) are kept (`None`: all).
    columns: Vec<(ArrowField, Option<Vec<bool>>)>,
}

impl TrajectoryFile {
    fn new(raw: Vec<u8>) -> PolarsResult<TrajectoryFile> {
        let meta = polars_parquet::read::read_metadata(&mut std::io::Cursor::new(&raw[..]))?;
        let schema = polars_io::parquet::read::infer_schema(&meta)?;
        let columns = schema
            .iter_values()
            .filter(|f| f.name == "steps" || super::TRAJECTORY_FIELDS.contains(&f.name.as_str()))
            .map(|f| match pruned_steps(f) {
                Some((f, keep)) => (f, Some(keep)),
                None => (f.clone(), None),
            })
            .collect();
        Ok(TrajectoryFile {
            bytes: polars_buffer::Buffer::from_vec(raw),
            meta,
            columns,
        })
    }

    /// Rows `rows`, one frame per row group they meet.
    fn frames(&self, rows: std::ops::Range<usize>) -> PolarsResult<Vec<DataFrame>> {
        use polars_io::parquet::read::_internal::to_deserializer;
        let mut frames = Vec::new();
        let mut first = 0;
        for rg in &self.meta.row_groups {
            let (start, end) = (first, first + rg.num_rows());
            first = end;
            let (a, b) = (rows.start.max(start), rows.end.min(end));
            if a >= b {
                continue;
            }
            let columns = self
                .columns
                .iter()
                .map(|(field, keep)| {
                    let Some(leaves) = rg.columns_under_root_iter(&field.name) else {
                        return Ok(Column::full_null(
                            field.name.clone(),
                            b - a,
                            &DataType::from_arrow_field(field),
                        ));
                    };
                    if keep.as_ref().is_some_and(|k| k.len() != leaves.len()) {
                        polars_bail!(ComputeError: "steps: {} column chunks in a row group, the schema has {}", leaves.len(), keep.as_ref().map_or(0, Vec::len));
                    }
                    let chunks = leaves
                        .enumerate()
                        .filter(|(i, _)| keep.as_ref().is_none_or(|k| k[*i]))
                        .map(|(_, m)| {
                            let r = m.byte_range();
                            (m, self.bytes.clone().sliced(r.start as usize..r.end as usize))
                        })
                        .collect();
                    let filter = polars_parquet::read::Filter::new_ranged(a - start, b - start);
                    let (arrays, _) = to_deserializer(chunks, field.clone(), Some(filter))?;
                    Ok(Series::try_from((field, arrays))?.into_column())
                })
                .collect::<PolarsResult<Vec<Column>>>()?;
            frames.push(DataFrame::new(b - a, columns)?);
        }
        Ok(frames)
    }
}

/// `steps` as a list of structs of the [`STEP_FIELDS`] it has, and which
/// of its leaves (in the file's order) those are; `None` when it is not a
/// list of structs (it is then read whole, and its type reported).
fn pruned_steps(steps: &ArrowField) -> Option<(ArrowField, Vec<bool>)> {
    if steps.name != "steps" {
        return None;
    }
    let (ArrowDataType::List(item) | ArrowDataType::LargeList(item)) = &steps.dtype else {
        return None;
    };
    let ArrowDataType::Struct(fields) = &item.dtype else {
        return None;
    };
    let mut keep = Vec::new();
    let mut kept = Vec::new();
    for f in fields {
        let wanted = STEP_FIELDS.contains(&f.name.as_str());
        keep.extend(std::iter::repeat_n(
            wanted,
            polars_parquet::read::n_columns(&f.dtype),
        ));
        if wanted {
            kept.push(f.clone());
        }
    }
    if kept.is_empty() || kept.len() == fields.len() {
        return None;
    }
    let item = Box::new(ArrowField {
        dtype: ArrowDataType::Struct(kept),
        ..(**item).clone()
    });
    let dtype = match &steps.dtype {
        ArrowDataType::LargeList(_) => ArrowDataType::LargeList(item),
        _ => ArrowDataType::List(item),
    };
    Some((
        ArrowField {
            dtype,
            ..steps.clone()
        },
        keep,
    ))
}

/// A column as typed values, or the reason every row's value is the wrong
/// type. The values stay polars' own array (one chunk), read row by row:
/// copying a file's columns out would double its memory during the load.
enum Col<T: PolarsDataType> {
    Absent,
    Values(ChunkedArray<T>),
    Wrong(String),
}

impl<T: PolarsDataType> Col<T> {
    /// One chunk, so that reading a row is one array lookup.
    fn of(ca: &ChunkedArray<T>) -> Col<T> {
        Col::Values(ca.rechunk().into_owned())
    }

    fn get(
        &self,
        i: usize,
        field: &str,
        want: &str,
    ) -> std::result::Result<Option<T::Physical<'_>>, RecordError> {
        match self {
            Col::Absent => Ok(None),
            Col::Values(v) => Ok(v.get(i)),
            Col::Wrong(dtype) => Err(RecordError::wrong_type(
                field,
                format!("expected {want}, the column is {dtype}"),
            )),
        }
    }

    /// [`Col::get`] for field `name` of step `k`: the field's path is
    /// written only when there is an error to report.
    fn get_step(
        &self,
        i: usize,
        k: usize,
        name: &str,
        want: &str,
    ) -> std::result::Result<Option<T::Physical<'_>>, RecordError> {
        match self {
            Col::Wrong(_) => self.get(i, &format!("steps[{k}].{name}"), want),
            _ => self.get(i, name, want),
        }
    }
}

fn is_int(d: &DataType) -> bool {
    matches!(
        d,
        DataType::Int8
            | DataType::Int16
            | DataType::Int32
            | DataType::Int64
            | DataType::UInt8
            | DataType::UInt16
            | DataType::UInt32
            | DataType::UInt64
    )
}

fn ints(s: Option<&Series>) -> Col<Int64Type> {
    match s {
        None => Col::Absent,
        Some(s) if s.dtype() == &DataType::Null => Col::Absent,
        Some(s) if is_int(s.dtype()) => match s.cast(&DataType::Int64) {
            Ok(c) => match c.i64() {
                Ok(c) => Col::of(c),
                Err(_) => Col::Values(Int64Chunked::from_slice(PlSmallStr::EMPTY, &[])),
            },
            Err(e) => Col::Wrong(e.to_string()),
        },
        // pandas writes an integer column with missing values as floats:
        // whole numbers are taken as the integers they stand for.
        Some(s) if s.dtype().is_float() => {
            let Ok(c) = s.cast(&DataType::Float64) else {
                return Col::Wrong(s.dtype().to_string());
            };
            let Ok(c) = c.f64() else {
                return Col::Wrong(s.dtype().to_string());
            };
            let mut out = Vec::with_capacity(c.len());
            for (row, x) in c.iter().enumerate() {
                match x {
                    None => out.push(None),
                    Some(x) if x.fract() == 0.0 && x.abs() < 9.0e15 => out.push(Some(x as i64)),
                    Some(x) => {
                        return Col::Wrong(format!("{} and row {} holds {x}", s.dtype(), row + 1))
                    }
                }
            }
            Col::Values(Int64Chunked::from_iter_options(
                PlSmallStr::EMPTY,
                out.into_iter(),
            ))
        }
        Some(s) => Col::Wrong(s.dtype().to_string()),
    }
}

fn floats(s: Option<&Series>) -> Col<Float64Type> {
    match s {
        None => Col::Absent,
        Some(s) if s.dtype() == &DataType::Null => Col::Absent,
        Some(s) if s.dtype().is_primitive_numeric() => match s.cast(&DataType::Float64) {
            Ok(c) => match c.f64() {
                Ok(c) => Col::of(c),
                Err(_) => Col::Values(Float64Chunked::from_slice(PlSmallStr::EMPTY, &[])),
            },
            Err(e) => Col::Wrong(e.to_string()),
        },
        Some(s) => Col::Wrong(s.dtype().to_string()),
    }
}

fn bools(s: Option<&Series>) -> Col<BooleanType> {
    match s {
        None => Col::Absent,
        Some(s) if s.dtype() == &DataType::Null => Col::Absent,
        Some(s) => match s.bool() {
            Ok(c) => Col::of(c),
            Err(_) => Col::Wrong(s.dtype().to_string()),
        },
    }
}

fn strs(s: Option<&Series>) -> Col<StringType> {
    match s {
        None => Col::Absent,
        Some(s) if s.dtype() == &DataType::Null => Col::Absent,
        Some(s) => match s.str() {
            Ok(c) => Col::of(c),
            Err(_) => Col::Wrong(s.dtype().to_string()),
        },
    }
}

/// String-like columns that are not plain strings (pandas categoricals are
/// written as dictionaries) become plain strings; others stay as they are.
fn as_strings(s: Series) -> Series {
    if s.dtype().is_categorical() || s.dtype().is_enum() {
        s.cast(&DataType::String).unwrap_or(s)
    } else {
        s
    }
}

/// A group id column: strings as they are, integers as their decimal text.
enum Groups {
    Ints(Col<Int64Type>),
    Strs(Col<StringType>),
}

impl Groups {
    fn get(
        &self,
        i: usize,
        field: &str,
        want: &str,
    ) -> std::result::Result<Option<std::borrow::Cow<'_, str>>, RecordError> {
        use std::borrow::Cow;
        Ok(match self {
            Groups::Ints(c) => c.get(i, field, want)?.map(|x| Cow::Owned(x.to_string())),
            Groups::Strs(c) => c.get(i, field, want)?.map(Cow::Borrowed),
        })
    }
}

fn groups(s: Option<&Series>) -> Groups {
    match s {
        Some(s) if is_int(s.dtype()) => match ints(Some(s)) {
            c @ Col::Values(_) => Groups::Ints(c),
            _ => Groups::Ints(Col::Absent),
        },
        other => Groups::Strs(strs(other)),
    }
}

/// A list column: offsets into its flat inner values (after rechunking),
/// null rows marked.
struct Lists {
    offsets: Vec<i64>,
    valid: Vec<bool>,
    inner: Series,
}

fn lists(s: Option<&Series>) -> std::result::Result<Option<Lists>, String> {
    let Some(s) = s else { return Ok(None) };
    if s.dtype() == &DataType::Null {
        return Ok(None);
    }
    let lc = s.list().map_err(|_| s.dtype().to_string())?.rechunk();
    let offsets = lc.offsets().map_err(|e| e.to_string())?.as_slice().to_vec();
    let valid = lc
        .is_not_null()
        .iter()
        .map(|v| v.unwrap_or(false))
        .collect();
    Ok(Some(Lists {
        offsets,
        valid,
        inner: lc.get_inner(),
    }))
}

fn field(s: &Series, name: &str) -> Option<Series> {
    s.struct_().ok().and_then(|sc| sc.field_by_name(name).ok())
}

/// The step columns, flat over every step of the file.
struct StepCols<'a> {
    turn: Col<Int64Type>,
    output_tokens: Col<Int64Type>,
    error: Col<BooleanType>,
    reward: Col<Float64Type>,
    budget_total: Col<Int64Type>,
    budget_remaining: Col<Int64Type>,
    logp: Option<(&'a Lists, Col<StringType>, Col<Float64Type>)>,
}

/// Rows parsed into one chunk-local set.
const PART_ROWS: usize = 8192;

/// Parses a trajectory frame's rows by columns, validated by the same rules
/// as JSON records, and hands `sink` one chunk-local set per [`PART_ROWS`]
/// rows, in row order. A part is handed over while the next ones are
/// parsed, so only a few parts' sets exist beside the frame at once.
/// `row0`: the file's rows before the frame's first.
pub fn parse_trajectories(
    file: u32,
    row0: usize,
    df: &DataFrame,
    sink: &mut (dyn FnMut(ParsedRows) -> Result<()> + Send),
) -> Result<()> {
    use super::raw::{GroupKey, LogpMap, RawRecord, RawStep};
    use std::borrow::Cow;
    let c = |n: &str| {
        df.column(n)
            .ok()
            .map(|c| as_strings(c.as_materialized_series().clone()))
    };
    let owned: Vec<(&str, Option<Series>)> = super::TRAJECTORY_FIELDS
        .iter()
        .chain(&["steps"])
        .map(|n| (*n, c(n)))
        .collect();
    let s = |n: &str| owned.iter().find(|x| x.0 == n).and_then(|x| x.1.as_ref());
    let (run, method, benchmark, task) = (
        strs(s("run")),
        strs(s("method")),
        strs(s("benchmark")),
        strs(s("task")),
    );
    let (termination, category, seed) = (
        strs(s("termination")),
        strs(s("category")),
        groups(s("seed")),
    );
    let (sample, budget, max_budget, turns, success_turn, min_turns, train_step) = (
        ints(s("sample")),
        ints(s("budget")),
        ints(s("max_budget")),
        ints(s("turns")),
        ints(s("success_turn")),
        ints(s("min_turns")),
        ints(s("train_step")),
    );
    let (success, reward, group) = (bools(s("success")), floats(s("reward")), groups(s("group")));
    let steps = lists(s("steps"));
    let step_lists: Option<&Lists> = steps.as_ref().ok().and_then(|o| o.as_ref());
    let f = |n: &str| {
        debug_assert!(STEP_FIELDS.contains(&n), "{n}: not decoded (STEP_FIELDS)");
        step_lists.and_then(|l| field(&l.inner, n))
    };
    let (t_s, o_s, e_s, r_s, bt_s, br_s, lp_s) = (
        f("turn"),
        f("output_tokens"),
        f("error"),
        f("reward"),
        f("budget_total"),
        f("budget_remaining"),
        f("logp"),
    );
    let logp_lists = lists(lp_s.as_ref()).ok().flatten();
    let (run_s, val_s) = match &logp_lists {
        Some(ll) => (field(&ll.inner, "run"), field(&ll.inner, "value")),
        None => (None, None),
    };
    let step_cols: Option<(&Lists, StepCols)> = step_lists.map(|l| {
        (
            l,
            StepCols {
                turn: ints(t_s.as_ref()),
                output_tokens: ints(o_s.as_ref()),
                error: bools(e_s.as_ref()),
                reward: floats(r_s.as_ref()),
                budget_total: ints(bt_s.as_ref()),
                budget_remaining: ints(br_s.as_ref()),
                logp: logp_lists
                    .as_ref()
                    .map(|ll| (ll, strs(run_s.as_ref()), floats(val_s.as_ref()))),
            },
        )
    });
    let steps_wrong = steps.as_ref().err().cloned();
    let n = df.height();
    let ranges: Vec<(usize, usize)> = (0..n)
        .step_by(PART_ROWS)
        .map(|a| (a, (a + PART_ROWS).min(n)))
        .collect();
    let parse = |&(a, b): &(usize, usize)| -> ParsedRows {
        let mut set = LogSet::default();
        let mut errors = Vec::new();
        for i in a..b {
            let loc = Loc::new(file, (row0 + i) as u64 + 1);
            let row = (|| -> std::result::Result<RawRecord, RecordError> {
                let mut raw = RawRecord {
                    run: run.get(i, "run", "a string")?.map(Cow::Borrowed),
                    method: method.get(i, "method", "a string")?.map(Cow::Borrowed),
                    benchmark: benchmark
                        .get(i, "benchmark", "a string")?
                        .map(Cow::Borrowed),
                    task: task.get(i, "task", "a string")?.map(Cow::Borrowed),
                    sample: sample.get(i, "sample", "an integer")?,
                    budget: budget.get(i, "budget", "an integer")?,
                    max_budget: max_budget.get(i, "max_budget", "an integer")?,
                    success: success.get(i, "success", "true or false")?,
                    turns: turns.get(i, "turns", "an integer")?,
                    success_turn: success_turn.get(i, "success_turn", "an integer")?,
                    reward: reward.get(i, "reward", "a number")?,
                    min_turns: min_turns.get(i, "min_turns", "an integer")?,
                    train_step: train_step.get(i, "train_step", "an integer")?,
                    group: group
                        .get(i, "group", "a string or an integer")?
                        .map(GroupKey),
                    termination: termination
                        .get(i, "termination", "a string")?
                        .map(Cow::Borrowed),
                    category: category.get(i, "category", "a string")?.map(Cow::Borrowed),
                    seed: seed.get(i, "seed", "a string or an integer")?.map(GroupKey),
                    ..Default::default()
                };
                if let Some(d) = &steps_wrong {
                    return Err(RecordError::wrong_type(
                        "steps",
                        format!("expected a list of step structs, the column is {d}"),
                    ));
                }
                if let Some((l, sc)) = &step_cols {
                    if l.valid[i] {
                        let (s0, s1) = (l.offsets[i] as usize, l.offsets[i + 1] as usize);
                        let mut v = Vec::with_capacity(s1 - s0);
                        for (k, j) in (s0..s1).enumerate() {
                            let logp = match &sc.logp {
                                Some((ll, runs, vals)) if ll.valid[j] => {
                                    let mut m = Vec::new();
                                    for q in ll.offsets[j] as usize..ll.offsets[j + 1] as usize {
                                        let r = runs.get_step(q, k, "logp.run", "a string")?;
                                        let x = vals.get_step(q, k, "logp.value", "a number")?;
                                        if let (Some(r), Some(x)) = (r, x) {
                                            m.push((Cow::Borrowed(r), x));
                                        }
                                    }
                                    Some(LogpMap(m))
                                }
                                _ => None,
                            };
                            v.push(RawStep {
                                turn: sc.turn.get_step(j, k, "turn", "an integer")?,
                                output_tokens: sc.output_tokens.get_step(
                                    j,
                                    k,
                                    "output_tokens",
                                    "an integer",
                                )?,
                                logp,
                                error: sc.error.get_step(j, k, "error", "true or false")?,
                                reward: sc.reward.get_step(j, k, "reward", "a number")?,
                                budget_total: sc.budget_total.get_step(
                                    j,
                                    k,
                                    "budget_total",
                                    "an integer",
                                )?,
                                budget_remaining: sc.budget_remaining.get_step(
                                    j,
                                    k,
                                    "budget_remaining",
                                    "an integer",
                                )?,
                            });
                        }
                        raw.steps = Some(v);
                    }
                }
                Ok(raw)
            })();
            let added = row.and_then(|raw| set.add_raw(loc, raw));
            if let Err(e) = added {
                errors.push((loc.line(), e));
            }
        }
        (set, errors, (b - a) as u64)
    };
    let mut pending: Vec<ParsedRows> = Vec::new();
    for group in ranges.chunks(rayon::current_num_threads().max(1)) {
        let (sunk, parsed) = rayon::join(
            || -> Result<()> {
                for p in std::mem::take(&mut pending) {
                    sink(p)?;
                }
                Ok(())
            },
            || group.par_iter().map(parse).collect::<Vec<_>>(),
        );
        sunk?;
        pending = parsed;
    }
    for p in pending {
        sink(p)?;
    }
    Ok(())
}

/// One row of a Parquet file as a JSON record (the trajectory browser):
/// only that row is decoded.
pub fn read_row(name: &str, raw: &[u8], row: u64) -> Result<Value> {
    let bad = |m: String| Error::file(name, m);
    let i = row
        .checked_sub(1)
        .and_then(|i| usize::try_from(i).ok())
        .ok_or_else(|| bad(format!("row {row} is gone")))?;
    let one = read_frame(name, raw, Some((i, 1)))?;
    if one.height() == 0 {
        return Err(bad(format!("row {row} is gone")));
    }
    let lines = records_from_frame(name, &one)?;
    serde_json::from_slice(lines.split(|&b| b == b'\n').next().unwrap_or(b"{}"))
        .map_err(|e| bad(e.to_string()))
}

/// Reads a `--summarize` shard back: one [`AggregateRow`](super::AggregateRow) per row.
fn aggregates_by_columns(name: &str, df: &DataFrame) -> Result<ParsedRows> {
    let bad = |m: String| Error::file(name, m);
    let col = |n: &str| {
        df.column(n)
            .ok()
            .map(|c| c.as_materialized_series().clone())
    };
    let need =
        |n: &str| col(n).ok_or_else(|| bad(format!("aggregate shard without a `{n}` column")));
    let (b, r, m, t) = (
        need("benchmark")?,
        need("run")?,
        col("method"),
        need("task")?,
    );
    let (budget, full, min_turns, n) = (
        need("budget")?,
        need("full_budget")?,
        col("min_turns"),
        need("n")?,
    );
    let turns = need("success_turns")?;
    let (oo, oo_solved) = (col("outcome_only"), col("outcome_only_solved"));
    let (oo, oo_solved) = (ints(oo.as_ref()), ints(oo_solved.as_ref()));
    let (b, r, m, t) = (
        strs(Some(&b)),
        strs(Some(&r)),
        strs(m.as_ref()),
        strs(Some(&t)),
    );
    let (budget, full, min_turns, n) = (
        ints(Some(&budget)),
        ints(Some(&full)),
        ints(min_turns.as_ref()),
        ints(Some(&n)),
    );
    let lists = lists(Some(&turns))
        .map_err(|d| bad(format!("success_turns: expected a list, the column is {d}")))?;
    let inner = lists.as_ref().map(|l| ints(Some(&l.inner)));
    let mut set = LogSet::default();
    let mut errors = Vec::new();
    for i in 0..df.height() {
        let row = (|| -> std::result::Result<super::AggregateRow, RecordError> {
            fn s<'a>(
                c: &'a Col<StringType>,
                i: usize,
                f: &str,
            ) -> std::result::Result<&'a str, RecordError> {
                c.get(i, f, "a string")?
                    .ok_or_else(|| RecordError::missing(f))
            }
            let u = |c: &Col<Int64Type>, f: &str| -> std::result::Result<u32, RecordError> {
                let v = c
                    .get(i, f, "an integer")?
                    .ok_or_else(|| RecordError::missing(f))?;
                u32::try_from(v)
                    .map_err(|_| RecordError::impossible(f, format!("{v} is out of range")))
            };
            let mut success_turns = Vec::new();
            if let (Some(l), Some(inner)) = (&lists, &inner) {
                for q in l.offsets[i] as usize..l.offsets[i + 1] as usize {
                    if let Some(x) = inner.get(q, "success_turns", "an integer")? {
                        success_turns.push(u32::try_from(x).map_err(|_| {
                            RecordError::impossible("success_turns", "out of range")
                        })?);
                    }
                }
            }
            success_turns.sort_unstable();
            let n_rows =
                u32::try_from(n.get(i, "n", "an integer")?.unwrap_or(0)).unwrap_or(0) as u64;
            if (success_turns.len() as u64) > n_rows {
                return Err(RecordError::impossible(
                    "n",
                    "fewer rollouts than successes",
                ));
            }
            Ok(super::AggregateRow {
                benchmark: set.strings.intern(s(&b, i, "benchmark")?),
                run: set.strings.intern(s(&r, i, "run")?),
                method: m
                    .get(i, "method", "a string")?
                    .map(|x| set.strings.intern(x)),
                task: set.strings.intern(s(&t, i, "task")?),
                budget: u(&budget, "budget")?,
                full_budget: u(&full, "full_budget")?,
                min_turns: min_turns
                    .get(i, "min_turns", "an integer")?
                    .and_then(|x| u32::try_from(x).ok()),
                n: n_rows,
                success_turns,
                outcome_only: oo
                    .get(i, "outcome_only", "an integer")?
                    .map_or(0, |x| x.max(0) as u64),
                outcome_only_solved: oo_solved
                    .get(i, "outcome_only_solved", "an integer")?
                    .map_or(0, |x| x.max(0) as u64),
            })
        })();
        match row {
            Ok(a) => set.aggregates.push(a),
            Err(e) => errors.push((i as u64 + 1, e)),
        }
    }
    Ok((set, errors, df.height() as u64))
}
