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
fn values_from_frame(df: &DataFrame, step_fields: Option<&[&str]>) -> Vec<Value> {
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

/// Records parsed from a slice of rows: the chunk-local set, (row, error)
/// for rejected rows, and how many rows the slice had.
pub type ParsedRows = (LogSet, Vec<(u64, RecordError)>, u64);

/// A trajectory Parquet file read by columns, or any other kind as records.
pub enum ParquetData {
    /// Trajectory rows, decoded a window at a time
    /// ([`TrajectoryFile::frame`]) for [`parse_trajectories`].
    Trajectories(Box<TrajectoryFile>),
    /// A `--summarize` shard: per-task aggregates.
    Aggregates(Box<ParsedRows>),
    Lines(Vec<u8>),
}

/// Every row of a Parquet file as a JSON record, for `--map`: the mapping
/// reads the file's own columns.
pub fn read_parquet_records(name: &str, raw: Vec<u8>) -> Result<Vec<u8>> {
    records_from_frame(name, &read_frame(name, &raw, None, None)?)
}

/// Why file `name` could not be read as Parquet.
fn unreadable(name: &str, e: PolarsError) -> Error {
    Error::file(name, format!("not a readable Parquet file: {e}"))
}

/// A Parquet file's rows (or `slice` = (first, count) of them) as a frame.
/// The file in `raw` as polars reads it (`slice`: those rows only). Where
/// only row group `group`'s chunks are in `raw` ([`read_row_in_file`]),
/// only its pages are checked (polars reads no other for a slice in it).
fn read_frame(
    name: &str,
    raw: &[u8],
    slice: Option<(usize, usize)>,
    group: Option<usize>,
) -> Result<DataFrame> {
    check_page_counts(raw, None, group).map_err(|e| unreadable(name, e))?;
    frame_of(name, raw, slice, None)
}

/// [`read_frame`] of pages already checked; `columns`: those top-level
/// columns only (each one the file has: [`columns_in`]).
fn frame_of(
    name: &str,
    raw: &[u8],
    slice: Option<(usize, usize)>,
    columns: Option<Vec<String>>,
) -> Result<DataFrame> {
    let mut reader = ParquetReader::new(std::io::Cursor::new(raw))
        .with_slice(slice)
        .with_columns(columns);
    if slice.is_some() {
        // Row group by row group: those before the slice passed over
        // unread. (By columns — polars' choice for a file of fewer row
        // groups than columns and threads — it parses every row group's
        // pages from the first, and a row past the first row group of a
        // file read only where its own row group is could not be read.)
        reader = reader.read_parallel(ParallelStrategy::RowGroups);
    }
    reader.finish().map_err(|e| unreadable(name, e))
}

/// Of `wanted`, the top-level columns the file in `raw` has (polars fails
/// on one it has not).
fn columns_in(name: &str, raw: &[u8], wanted: &[&str]) -> Result<Vec<String>> {
    let schema = ParquetReader::new(std::io::Cursor::new(raw))
        .schema()
        .map_err(|e| unreadable(name, e))?;
    let have = wanted.iter().filter(|c| schema.contains(c));
    Ok(have.map(|c| c.to_string()).collect())
}

/// Whether the `steps` column `f` may hold a value of one of the step
/// fields `keep`: it is not a list of structs (read it to see), or one of
/// its structs' fields is one of them and holds a value in some row group,
/// or may (a field of several leaves, or without statistics).
fn steps_may_hold(
    f: &ArrowField,
    keep: &[&str],
    meta: &polars_parquet::read::FileMetadata,
) -> bool {
    let (ArrowDataType::List(item) | ArrowDataType::LargeList(item)) = &f.dtype else {
        return true;
    };
    let ArrowDataType::Struct(fields) = &item.dtype else {
        return true;
    };
    let mut leaf = 0;
    for x in fields {
        let leaves = polars_parquet::read::n_columns(&x.dtype);
        if keep.contains(&x.name.as_str()) && (leaves != 1 || !holds_no_value(meta, &f.name, leaf))
        {
            return true;
        }
        leaf += leaves;
    }
    false
}

/// [`TrajectoryFile::check_page_counts`] on the column chunks of a file
/// that polars reads itself (every column for `--map` and a file of
/// several kinds of rows; `only` the `kind` column to tell which; `group`
/// one row group's, the others', unread, left): a damaged page count would
/// abort the process there too.
fn check_page_counts(raw: &[u8], only: Option<&str>, group: Option<usize>) -> PolarsResult<()> {
    let meta = polars_parquet::read::read_metadata(&mut std::io::Cursor::new(raw))?;
    for (g, rg) in meta.row_groups.iter().enumerate() {
        if group.is_some_and(|k| k != g) {
            continue;
        }
        let columns = rg.parquet_columns().iter().filter(|m| {
            only.is_none_or(|c| {
                m.descriptor()
                    .path_in_schema
                    .first()
                    .is_some_and(|p| p == c)
            })
        });
        for m in columns {
            let r = m.byte_range();
            let chunk = usize::try_from(r.start)
                .ok()
                .zip(usize::try_from(r.end).ok())
                .and_then(|(a, b)| raw.get(a..b))
                .ok_or_else(|| polars_err!(ComputeError: "a column chunk past the file's end"))?;
            let chunk = polars_buffer::Buffer::from_vec(chunk.to_vec());
            TrajectoryFile::check_page_counts(m, chunk)?;
        }
    }
    Ok(())
}

/// A Parquet file's bytes as [`read_parquet`] reads them (no `--map`: a
/// mapping reads every column). A file of trajectories with no `kind`
/// column — every row a trajectory, read by [`TrajectoryFile`] — is read
/// only where that reads: its footer, and of each row group the kept
/// leaves' column chunks and their offset indexes, into a buffer of the
/// file's length whose other bytes are zeros never written (glibc maps an
/// allocation of more than its mmap threshold, 32 MiB at most, as fresh
/// pages, which take no memory until touched; a smaller one may be zeroed
/// in place, as resident as the whole file read would be). The
/// actions, observations and whatever else a trainer stores are then
/// neither read nor resident: the file was read whole, its texts held
/// while it was indexed. Any other file, one smaller than
/// [`READ_WHOLE_BELOW`], one whose footer cannot be read (its error is
/// then the whole file's) and one that changed while it was read are read
/// whole.
pub fn read_file(path: &std::path::Path) -> std::io::Result<Vec<u8>> {
    #[cfg(unix)]
    if let Some(raw) = read_kept(path, READ_WHOLE_BELOW, LOAD)? {
        return Ok(raw);
    }
    std::fs::read(path)
}

/// Files smaller than this are read whole by [`read_file`].
const READ_WHOLE_BELOW: u64 = 1 << 20;

/// [`read_file`]'s reading of the kept parts, or `None` to read whole
/// (files of fewer than `whole_below` bytes).
#[cfg(unix)]
fn read_kept(
    path: &std::path::Path,
    whole_below: u64,
    keep: Keep,
) -> std::io::Result<Option<Vec<u8>>> {
    let Some((f, before, meta)) = open_footer(path, whole_below)? else {
        return Ok(None);
    };
    match TrajectoryFile::kept_ranges(meta, keep) {
        Some(ranges) => read_sparse(&f, &before, ranges),
        None => Ok(None),
    }
}

/// A Parquet file of `whole_below` bytes or more, open, as it was when
/// opened, and its metadata; `None` for a smaller one or one whose footer
/// cannot be read (read whole, its error is then the whole file's).
#[cfg(unix)]
fn open_footer(
    path: &std::path::Path,
    whole_below: u64,
) -> std::io::Result<
    Option<(
        std::fs::File,
        std::fs::Metadata,
        polars_parquet::read::FileMetadata,
    )>,
> {
    let mut f = std::fs::File::open(path)?;
    let before = f.metadata()?;
    if before.len() < whole_below.max(8) {
        return Ok(None);
    }
    Ok(polars_parquet::read::read_metadata(&mut f)
        .ok()
        .map(|meta| (f, before, meta)))
}

/// The file's bytes with only `ranges` and its footer read, the others
/// zeros never written ([`read_file`]: no memory for them, in a buffer
/// past glibc's mmap threshold); `None` (read it whole) when a range is
/// past its end or it changed while read.
#[cfg(unix)]
fn read_sparse(
    f: &std::fs::File,
    before: &std::fs::Metadata,
    mut ranges: Vec<std::ops::Range<u64>>,
) -> std::io::Result<Option<Vec<u8>>> {
    use std::os::unix::fs::FileExt;
    let len = before.len();
    // The footer: the metadata, its length (4 bytes) and `PAR1`.
    let mut tail = [0u8; 8];
    f.read_exact_at(&mut tail, len - 8)?;
    let footer = u64::from(u32::from_le_bytes([tail[0], tail[1], tail[2], tail[3]])) + 8;
    ranges.push(len.saturating_sub(footer)..len);
    let Ok(size) = usize::try_from(len) else {
        return Ok(None);
    };
    if ranges.iter().any(|r| r.start > r.end || r.end > len) {
        return Ok(None);
    }
    let mut raw = vec![0u8; size];
    for r in ranges {
        f.read_exact_at(&mut raw[r.start as usize..r.end as usize], r.start)?;
    }
    let after = f.metadata()?;
    if after.len() != len || after.modified().ok() != before.modified().ok() {
        return Ok(None);
    }
    Ok(Some(raw))
}

/// Reads a Parquet file; trajectory files (no `kind` column, or every row
/// `trajectory`) take the columnar fast path ([`TrajectoryFile`]),
/// validated by the same rules.
pub fn read_parquet(name: &str, raw: Vec<u8>) -> Result<ParquetData> {
    let unreadable = |e: PolarsError| unreadable(name, e);
    let mut reader = ParquetReader::new(std::io::Cursor::new(&raw[..]));
    let rows = reader.num_rows().map_err(unreadable)?;
    // The kinds of rows, from that column alone when there is one.
    let kinds = match reader.schema().map_err(unreadable)?.get("kind") {
        None => None,
        Some(_) => {
            check_page_counts(&raw, Some("kind"), None).map_err(unreadable)?;
            Some(
                ParquetReader::new(std::io::Cursor::new(&raw[..]))
                    .with_columns(Some(vec!["kind".into()]))
                    .finish()
                    .map_err(unreadable)?,
            )
        }
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
        let file = TrajectoryFile::new(raw).map_err(unreadable)?;
        return Ok(ParquetData::Trajectories(Box::new(file)));
    }
    let df = read_frame(name, &raw, None, None)?;
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

/// What a [`TrajectoryFile`] decodes: the top-level columns of `columns`
/// the file has, and of `steps` (a list of structs) the fields of `steps`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Keep<'a> {
    columns: &'a [&'a str],
    steps: &'a [&'a str],
}

/// What the load decodes: the trajectory fields, the [`STEP_FIELDS`].
const LOAD: Keep<'static> = Keep {
    columns: super::TRAJECTORY_FIELDS,
    steps: STEP_FIELDS,
};

/// Values (levels) of one column chunk a window of rows decodes at most,
/// about: a row group whose step leaves hold more is decoded in windows
/// of consecutive rows, each parsed and dropped before the one after the
/// next is decoded. A decoded step is ~100 bytes (the log-probabilities'
/// run names as 16-byte string views are a quarter of it): a window of
/// 2¹⁷ log-probabilities, 65,536 steps of two runs, is ~6 MB whatever the
/// file's size.
const WINDOW_VALUES: usize = 1 << 17;

/// The most values (levels) the pages of a leaf's window may hold to be
/// decoded straight ([`super::dense_leaf`]), which decodes them whole: four
/// windows' worth.
const DENSE_VALUES: usize = 4 * WINDOW_VALUES;

/// A kept leaf of a row group ([`TrajectoryFile::leaves`]): its column,
/// the field to decode it alone with (`None` when the column is decoded
/// whole) and its column chunk (`None` when the row group lacks the column).
type Leaf<'a> = (
    usize,
    Option<ArrowField>,
    Option<&'a polars_parquet::read::ColumnChunkMetadata>,
);

/// A trajectory file read by the columns [`parse_trajectories`] reads:
/// the trajectory fields, and of `steps` (a list of structs) only
/// [`STEP_FIELDS`]. The other leaves (actions, observations, whatever else
/// a trainer stores) are neither decompressed nor decoded: polars' reader
/// projects whole top-level columns only, and the steps' other fields were
/// most of a load's decoding.
///
/// The rows are decoded in windows ([`WINDOW_VALUES`]) leaf by leaf, one
/// leaf a core, by polars-parquet's own decoder (`column_iter_to_arrays`,
/// what polars-io's reader calls per column and row group), each leaf from
/// only the data pages that hold the window's rows: polars' row filter
/// decodes the levels of every page of a column chunk, so windows over a
/// whole chunk would cost quadratic time (README, session 20). The step
/// leaves of a window are put back together as one `steps` list of structs.
pub struct TrajectoryFile {
    /// The kept column chunks of the row groups decoded whole, one after
    /// another (the whole file while it is indexed).
    bytes: polars_buffer::Buffer<u8>,
    /// Each chunk kept: (its first byte in the file, in `bytes`, its length).
    chunks: Vec<(usize, usize, usize)>,
    meta: polars_parquet::read::FileMetadata,
    /// Each column read: its field as decoded, and which of its leaves
    /// (in the file's order) are kept (`None`: all).
    columns: Vec<(ArrowField, Option<Vec<bool>>)>,
    /// The windows: (row group, its rows).
    windows: Vec<(usize, std::ops::Range<usize>)>,
    /// Per row group decoded in more than one window, each kept leaf's
    /// pages (columns in order, leaves in the file's order); and the
    /// leaf's last decoded rows, for the next windows they cover.
    pages: Vec<Option<Vec<std::sync::Mutex<LeafPages>>>>,
    /// The first window, decoded ahead ([`TrajectoryFile::decode_first`]).
    first: Option<PolarsResult<DataFrame>>,
}

/// A column chunk's pages, their rows, and its last decoded rows.
struct LeafPages {
    /// The dictionary page, header included (empty without one).
    dict: polars_buffer::Buffer<u8>,
    pages: Vec<PageSpan>,
    /// Pages before this one are decoded and their bytes freed.
    freed: usize,
    /// Rows (in the row group) decoded last, and their array.
    last: Option<(std::ops::Range<usize>, ArrayRef)>,
    /// A window of this leaf had a null or an empty list: polars decodes
    /// it from then on ([`super::dense_leaf`] decodes it until then).
    sparse: bool,
}

/// A data page: its bytes (header included; a copy, freed once decoded),
/// its values (levels), the rows (records) begun before it, and whether
/// its first value begins one.
struct PageSpan {
    bytes: polars_buffer::Buffer<u8>,
    values: usize,
    row: usize,
    starts: bool,
}

impl TrajectoryFile {
    fn new(raw: Vec<u8>) -> PolarsResult<TrajectoryFile> {
        Self::with_window(raw, WINDOW_VALUES)
    }

    /// [`TrajectoryFile::new`] with windows of about `window_values`
    /// values of a column chunk.
    fn with_window(raw: Vec<u8>, window_values: usize) -> PolarsResult<TrajectoryFile> {
        Self::keeping(raw, window_values, LOAD)
    }

    /// [`TrajectoryFile::with_window`] decoding what `keep` says.
    fn keeping(raw: Vec<u8>, window_values: usize, keep: Keep) -> PolarsResult<TrajectoryFile> {
        let mut file = Self::whole_keeping(raw, keep)?;
        for (g, rg) in file.meta.row_groups.iter().enumerate() {
            let rows = rg.num_rows();
            let leaves = file.leaves(g)?;
            let values = leaves
                .iter()
                .filter_map(|l| l.2)
                .map(|m| m.num_values().max(0) as usize)
                .max()
                .unwrap_or(0);
            let n = values.div_ceil(window_values.max(1)).clamp(1, rows.max(1));
            let pages = if n > 1 && leaves.iter().all(|l| l.1.is_some()) {
                let pages = leaves
                    .par_iter()
                    .map(|l| match l.2 {
                        Some(m) => {
                            let located = file.page_locations(m).unwrap_or_default();
                            file.index_pages(m, rows, &located)
                                .map(std::sync::Mutex::new)
                        }
                        None => Ok(std::sync::Mutex::new(LeafPages {
                            dict: polars_buffer::Buffer::from_vec(Vec::new()),
                            pages: Vec::new(),
                            freed: 0,
                            last: None,
                            sparse: false,
                        })),
                    })
                    .collect::<PolarsResult<Vec<_>>>()?;
                Some(pages)
            } else {
                None
            };
            // Without a page index (a column not split into leaves), one window.
            let n = if pages.is_some() { n } else { 1 };
            file.pages.push(pages);
            file.windows
                .extend((0..n).map(|k| (g, rows * k / n..rows * (k + 1) / n)));
        }
        file.windows.retain(|(_, r)| !r.is_empty());
        // Only the kept leaves' column chunks stay (of a file of actions and
        // observations, a small part): a row group decoded in windows holds
        // its pages one by one (freed as the windows pass them), the others
        // their chunks.
        let mut kept: Vec<std::ops::Range<usize>> = (0..file.meta.row_groups.len())
            .filter(|&g| file.pages[g].is_none())
            .map(|g| file.leaves(g))
            .collect::<PolarsResult<Vec<_>>>()?
            .into_iter()
            .flatten()
            .filter_map(|l| l.2)
            .map(|m| {
                let r = m.byte_range();
                r.start as usize..r.end as usize
            })
            .collect();
        kept.sort_by_key(|r| r.start);
        let mut bytes = Vec::with_capacity(kept.iter().map(|r| r.len()).sum());
        let mut chunks: Vec<(usize, usize, usize)> = Vec::new();
        for r in kept {
            if chunks.last().is_some_and(|c| c.0 + c.2 > r.start) {
                continue;
            }
            let slice = file.bytes.get(r.clone()).ok_or_else(
                || polars_err!(ComputeError: "a column chunk at bytes {r:?}, past the file's end"),
            )?;
            chunks.push((r.start, bytes.len(), r.len()));
            bytes.extend_from_slice(slice);
        }
        file.bytes = polars_buffer::Buffer::from_vec(bytes);
        file.chunks = chunks;
        Ok(file)
    }

    #[cfg(test)]
    fn whole(raw: Vec<u8>) -> PolarsResult<TrajectoryFile> {
        Self::whole_keeping(raw, LOAD)
    }

    /// The file as read, its metadata and kept columns, no windows yet:
    /// the bytes are all the file's until its pages and chunks are copied
    /// out.
    fn whole_keeping(raw: Vec<u8>, keep: Keep) -> PolarsResult<TrajectoryFile> {
        let meta = polars_parquet::read::read_metadata(&mut std::io::Cursor::new(&raw[..]))?;
        let len = raw.len();
        Self::of(meta, polars_buffer::Buffer::from_vec(raw), len, keep)
    }

    /// The file of `meta`, its `len` bytes in `bytes` (empty: the
    /// metadata alone, to ask [`Self::leaves`] where they are).
    fn of(
        meta: polars_parquet::read::FileMetadata,
        bytes: polars_buffer::Buffer<u8>,
        len: usize,
        keep: Keep,
    ) -> PolarsResult<TrajectoryFile> {
        let schema = polars_io::parquet::read::infer_schema(&meta)?;
        let columns: Vec<(ArrowField, Option<Vec<bool>>)> = schema
            .iter_values()
            .filter(|f| f.name == "steps" || keep.columns.contains(&f.name.as_str()))
            .map(|f| match pruned_steps(f, &meta, keep.steps) {
                Some((f, keep)) => (f, Some(keep)),
                None => (f.clone(), None),
            })
            .collect();
        Ok(TrajectoryFile {
            bytes,
            chunks: vec![(0, 0, len)],
            meta,
            columns,
            windows: Vec::new(),
            pages: Vec::new(),
            first: None,
        })
    }

    /// Where in the file [`Self::new`] reads, apart from the footer: each
    /// row group's kept leaves' column chunks and their offset indexes.
    /// `None` where the file is not read that way (rows of other kinds may
    /// be in it, or it has no rows).
    #[cfg(unix)]
    fn kept_ranges(
        meta: polars_parquet::read::FileMetadata,
        keep: Keep,
    ) -> Option<Vec<std::ops::Range<u64>>> {
        let schema = polars_io::parquet::read::infer_schema(&meta).ok()?;
        if meta.num_rows == 0 || schema.iter_values().any(|f| f.name == "kind") {
            return None;
        }
        let file = Self::of(meta, polars_buffer::Buffer::from_vec(Vec::new()), 0, keep).ok()?;
        let mut out = Vec::new();
        for g in 0..file.meta.row_groups.len() {
            for (_, _, m) in file.leaves(g).ok()? {
                let Some(m) = m else { continue };
                out.push(m.byte_range());
                if let (Some(at), Some(n)) = (m.offset_index_offset(), m.offset_index_length()) {
                    let at = u64::try_from(at).ok()?;
                    out.push(at..at.checked_add(u64::try_from(n).ok()?)?);
                }
            }
        }
        Some(out)
    }

    /// Decodes the first window now: while the file before's last window
    /// is parsed (a load's files one after another would otherwise begin
    /// each with a window decoded before anything else runs, 9–14 ms a
    /// file of a 1 M-trajectory set).
    pub fn decode_first(&mut self) {
        if self.windows() > 0 && self.first.is_none() {
            self.first = Some(self.frame(0));
        }
    }

    /// The file's rows.
    pub fn rows(&self) -> usize {
        self.meta.num_rows
    }

    /// How many windows the rows are decoded in.
    fn windows(&self) -> usize {
        self.windows.len()
    }

    /// Every window parsed in row order ([`parse_trajectories`], `sink` as
    /// there), the next one decoded while one is parsed; the memory the
    /// windows freed is handed back as [`crate::stage::release_freed_memory_in_loop`] says.
    /// `beside` runs beside the last window's parse (or at once without
    /// windows): the next file's set-up. `name`: the file's, for errors;
    /// `file`: its index.
    pub fn parse(
        &mut self,
        name: &str,
        file: u32,
        sink: &mut (dyn FnMut(ParsedRows) -> Result<()> + Send),
        beside: &mut (dyn FnMut() + Send),
    ) -> Result<()> {
        let (mut row0, mut w) = (0, 0);
        let first = self.first.take();
        let this = &*self;
        let mut next = (this.windows() > 0).then(|| first.unwrap_or_else(|| this.frame(0)));
        if next.is_none() {
            beside();
        }
        while let Some(df) = next.take() {
            let df = df.map_err(|e| unreadable(name, e))?;
            let (parsed, following) = rayon::join(
                || parse_trajectories(file, row0, &df, &mut *sink),
                || {
                    if w + 1 < this.windows() {
                        Some(this.frame(w + 1))
                    } else {
                        beside();
                        None
                    }
                },
            );
            parsed?;
            (next, row0, w) = (following, row0 + df.height(), w + 1);
            drop(df);
            crate::stage::release_freed_memory_in_loop();
        }
        Ok(())
    }

    /// Row group `g`'s kept leaves ([`Leaf`]), columns in order.
    fn leaves(&self, g: usize) -> PolarsResult<Vec<Leaf<'_>>> {
        let rg = &self.meta.row_groups[g];
        let mut out = Vec::new();
        for (c, (field, keep)) in self.columns.iter().enumerate() {
            let Some(leaves) = rg.columns_under_root_iter(&field.name) else {
                out.push((c, Some(field.clone()), None));
                continue;
            };
            let leaves: Vec<_> = leaves.collect();
            if keep.as_ref().is_some_and(|k| k.len() != leaves.len()) {
                polars_bail!(ComputeError: "steps: {} column chunks in a row group, the schema has {}", leaves.len(), keep.as_ref().map_or(0, Vec::len));
            }
            let kept: Vec<_> = leaves
                .into_iter()
                .enumerate()
                .filter(|(i, _)| keep.as_ref().is_none_or(|k| k[*i]))
                .map(|(_, m)| m)
                .collect();
            let split = kept.len() == 1 || splittable(&field.dtype);
            for (j, m) in kept.into_iter().enumerate() {
                out.push((c, split.then(|| only_leaf(field, j)), Some(m)));
            }
        }
        Ok(out)
    }

    /// A column chunk's bytes: of a row group decoded whole (a windowed
    /// one's pages are in its [`LeafPages`]); empty when not kept.
    fn chunk(&self, m: &polars_parquet::read::ColumnChunkMetadata) -> polars_buffer::Buffer<u8> {
        let r = m.byte_range();
        let (start, len) = (r.start as usize, (r.end - r.start) as usize);
        let k = self
            .chunks
            .partition_point(|c| c.0 <= start)
            .saturating_sub(1);
        match self.chunks.get(k) {
            Some(&(at, to, n)) if at <= start && start + len <= at + n => {
                let to = to + (start - at);
                self.bytes.clone().sliced(to..to + len)
            }
            _ => polars_buffer::Buffer::from_vec(Vec::new()),
        }
    }

    /// A reader of `values` values of the pages in `bytes`.
    fn page_reader(
        m: &polars_parquet::read::ColumnChunkMetadata,
        bytes: polars_buffer::Buffer<u8>,
        values: usize,
    ) -> polars_parquet::read::PageReader {
        let meta = polars_parquet::parquet::read::PageMetaData::new(
            0,
            values as i64,
            m.compression(),
            m.descriptor().descriptor.clone(),
        );
        polars_parquet::read::PageReader::new_with_page_meta(
            std::io::Cursor::new(bytes),
            meta,
            vec![],
            usize::MAX,
        )
    }

    /// Whether every data page of a column chunk holds no more values than
    /// the chunk has left: polars reads a page header's count (an `i32`) as
    /// a `usize`, so a damaged, negative count has its decoder reserve
    /// exabytes and abort the process (`scripts/fuzz_parquet.py`: two of
    /// 1,800 damaged files, README sessions 30–31). Headers only: nothing
    /// is decompressed.
    fn check_page_counts(
        m: &polars_parquet::read::ColumnChunkMetadata,
        chunk: polars_buffer::Buffer<u8>,
    ) -> PolarsResult<()> {
        use polars_parquet::parquet::page::CompressedPage;
        let total = m.num_values().max(0) as usize;
        let mut reader = Self::page_reader(m, chunk, total);
        reader.read_dict()?;
        let mut seen = 0;
        for page in reader {
            if let CompressedPage::Data(page) = page? {
                let values = page.num_values();
                if values > total - seen {
                    polars_bail!(ComputeError: "{}", Self::page_count_error(values, total - seen));
                }
                seen += values;
            }
        }
        Ok(())
    }

    /// What is wrong with a page of `values` values where its column chunk
    /// has `left` (the header's count as written: an `i32`).
    fn page_count_error(values: usize, left: usize) -> String {
        format!(
            "a data page's header counts {} values, its column chunk has {left} left \
             (a damaged page header)",
            values as i32
        )
    }

    /// A column chunk's offset index (the Parquet page index's): each data
    /// page's place in the file and the first row it holds; `None` when the
    /// file has none or it cannot be read (the pages are then counted).
    /// Read while the file is whole.
    fn page_locations(
        &self,
        m: &polars_parquet::read::ColumnChunkMetadata,
    ) -> Option<Vec<polars_parquet_format::PageLocation>> {
        use polars_parquet_format::thrift::protocol::TCompactInputProtocol;
        let at = usize::try_from(m.offset_index_offset()?).ok()?;
        let len = usize::try_from(m.offset_index_length()?).ok()?;
        let mut bytes = self.bytes.get(at..at.checked_add(len)?)?;
        // What reading may allocate: a page's location is 24 bytes, at
        // least 3 of the index's.
        let mut prot = TCompactInputProtocol::new(&mut bytes, len.saturating_mul(8));
        let index = polars_parquet_format::OffsetIndex::read_from_in_protocol(&mut prot).ok()?;
        Some(index.page_locations)
    }

    /// A column chunk's pages and the rows each begins: page headers read
    /// one by one; the rows from the chunk's offset index where it has one
    /// (pages it lists begin a row: the Parquet format requires it), else,
    /// in nested columns, from the repetition levels, decoded. `rows`: the
    /// row group's; `located`: the offset index ([`Self::page_locations`]).
    fn index_pages(
        &self,
        m: &polars_parquet::read::ColumnChunkMetadata,
        rows: usize,
        located: &[polars_parquet_format::PageLocation],
    ) -> PolarsResult<LeafPages> {
        use polars_parquet::parquet::compression::DecompressionContext;
        use polars_parquet::parquet::encoding::hybrid_rle::{HybridRleChunk, HybridRleDecoder};
        use polars_parquet::parquet::page::{split_buffer, CompressedPage, Page};
        let chunk = self.chunk(m);
        let total = m.num_values().max(0) as usize;
        let mut r = Self::page_reader(m, chunk.clone(), total);
        r.read_dict()?;
        let dict_end = r.into_inner().0.position() as usize;
        let max_rep = m.descriptor().descriptor.max_rep_level;
        let bits = polars_parquet::parquet::read::levels::get_bit_width(max_rep);
        let chunk_at = m.byte_range().start;
        // The first row of the `k`th data page, which begins at byte `at`
        // of the chunk, by the offset index (`None` if it lists another).
        let listed = |k: usize, at: usize| {
            located
                .get(k)
                .filter(|l| u64::try_from(l.offset).ok() == Some(chunk_at + at as u64))
                .and_then(|l| usize::try_from(l.first_row_index).ok())
        };
        let (mut pages, mut pos, mut row, mut seen) = (Vec::new(), dict_end, 0, 0);
        let (mut ctx, mut buf, mut levels) = (DecompressionContext::Unset, Vec::new(), Vec::new());
        while seen < total && pos < chunk.len() {
            let mut r = Self::page_reader(m, chunk.clone().sliced(pos..chunk.len()), 1);
            let Some(page) = r.next() else { break };
            let end = pos + r.into_inner().0.position() as usize;
            let CompressedPage::Data(page) = page? else {
                polars_bail!(ComputeError: "a dictionary page after the first page of a column chunk");
            };
            let values = page.num_values();
            if values > total - seen {
                polars_bail!(ComputeError: "{}", Self::page_count_error(values, total - seen));
            }
            // This page's rows by the offset index: from its first to the
            // next page's (or the row group's end).
            let k = pages.len();
            let indexed = listed(k, pos).filter(|&f| f == row).and_then(|first| {
                let next = if seen + values < total {
                    listed(k + 1, end)
                } else {
                    Some(rows)
                };
                next.filter(|&n| n > first).map(|n| n - first)
            });
            let (begun, starts) = if max_rep == 0 {
                (values, true)
            } else if let Some(begun) = indexed {
                (begun, true)
            } else {
                let Page::Data(page) = polars_parquet::parquet::read::decompress(
                    CompressedPage::Data(page),
                    &mut buf,
                    &mut ctx,
                )?
                else {
                    polars_bail!(ComputeError: "a data page decompressed as a dictionary");
                };
                let rep = split_buffer(&page)?.rep;
                let (mut begun, mut first) = (0, None);
                for c in HybridRleDecoder::new(rep, bits, values).into_chunk_iter() {
                    match c? {
                        HybridRleChunk::Rle(v, n) => {
                            if n > 0 {
                                first.get_or_insert(v);
                            }
                            begun += if v == 0 { n } else { 0 };
                        }
                        HybridRleChunk::Bitpacked(d) => {
                            levels.clear();
                            d.collect_into(&mut levels);
                            if let Some(&v) = levels.first() {
                                first.get_or_insert(v);
                            }
                            begun += levels.iter().filter(|&&v| v == 0).count();
                        }
                    }
                }
                (begun, first == Some(0))
            };
            pages.push(PageSpan {
                bytes: polars_buffer::Buffer::from_vec(chunk[pos..end].to_vec()),
                values,
                row,
                starts,
            });
            (row, seen, pos) = (row + begun, seen + values, end);
        }
        Ok(LeafPages {
            dict: polars_buffer::Buffer::from_vec(chunk[..dict_end].to_vec()),
            pages,
            freed: 0,
            last: None,
            sparse: false,
        })
    }

    /// Window `w`'s rows as a frame.
    fn frame(&self, w: usize) -> PolarsResult<DataFrame> {
        let (g, ref rows) = self.windows[w];
        let (a, b) = (rows.start, rows.end);
        let leaves = self.leaves(g)?;
        let group_rows = self.meta.row_groups[g].num_rows();
        // The costliest leaves first (strings, then the most values), each
        // a task of its own: the longest must not start last and leave a
        // core idle at the window's end.
        let mut order: Vec<usize> = (0..leaves.len()).collect();
        order.sort_by_key(|&i| {
            leaves[i].2.map_or((true, 0), |m| {
                let strings = m.descriptor().descriptor.primitive_type.physical_type
                    == polars_parquet::parquet::schema::types::PhysicalType::ByteArray;
                (!strings, -m.num_values())
            })
        });
        let mut decoded: Vec<(usize, PolarsResult<Option<ArrayRef>>)> = order
            .par_iter()
            .with_max_len(1)
            .map(|&i| (i, self.window_leaf(&leaves, i, g, a..b, group_rows)))
            .collect();
        decoded.sort_by_key(|d| d.0);
        let decoded = decoded
            .into_iter()
            .map(|d| d.1)
            .collect::<PolarsResult<Vec<_>>>()?;
        let mut columns = Vec::new();
        for (c, (field, _)) in self.columns.iter().enumerate() {
            let parts: Vec<ArrayRef> = leaves
                .iter()
                .zip(&decoded)
                .filter(|(l, _)| l.0 == c)
                .filter_map(|(_, d)| d.clone())
                .collect();
            if parts.is_empty() {
                columns.push(Column::full_null(
                    field.name.clone(),
                    b - a,
                    &DataType::from_arrow_field(field),
                ));
                continue;
            }
            let array = assemble(&field.dtype, parts)?;
            let series = if array.dtype() == &field.dtype {
                Series::try_from((field, vec![array]))?
            } else {
                // A dictionary column as its strings ([`one_array`]).
                Series::try_from((field.name.clone(), array))?
            };
            columns.push(series.into_column());
        }
        DataFrame::new(b - a, columns)
    }

    /// Leaf `i` of `leaves` (row group `g`'s) over rows `rows` of the
    /// group: `None` for a leaf the file lacks or one decoded with the
    /// column before it.
    fn window_leaf(
        &self,
        leaves: &[Leaf<'_>],
        i: usize,
        g: usize,
        rows: std::ops::Range<usize>,
        group_rows: usize,
    ) -> PolarsResult<Option<ArrayRef>> {
        use polars_io::parquet::read::_internal::to_deserializer;
        let (a, b) = (rows.start, rows.end);
        let (c, leaf, m) = &leaves[i];
        let Some(m) = m else { return Ok(None) };
        let Some(leaf) = leaf else {
            // A column decoded whole: all its kept leaves at once.
            if leaves[..i].iter().any(|l| l.0 == *c) {
                return Ok(None);
            }
            let (field, _) = &self.columns[*c];
            let chunks: Vec<_> = leaves
                .iter()
                .filter(|l| l.0 == *c)
                .filter_map(|l| l.2.map(|m| (m, self.chunk(m))))
                .collect();
            for (m, chunk) in &chunks {
                Self::check_page_counts(m, chunk.clone())?;
            }
            let filter = polars_parquet::read::Filter::new_ranged(a, b);
            let (arrays, _) = to_deserializer(chunks, field.clone(), Some(filter))?;
            return one_array(arrays).map(Some);
        };
        match &self.pages[g] {
            None => {
                let filter = polars_parquet::read::Filter::new_ranged(a, b);
                Self::check_page_counts(m, self.chunk(m))?;
                let chunks = vec![(*m, self.chunk(m))];
                let (arrays, _) = to_deserializer(chunks, leaf.clone(), Some(filter))?;
                one_array(arrays).map(Some)
            }
            Some(pages) => {
                let mut p = pages[i].lock().unwrap_or_else(|e| e.into_inner());
                self.window_of_leaf(m, leaf, &mut p, a..b, group_rows)
                    .map(Some)
            }
        }
    }

    /// Rows `rows` of one leaf, from the pages that hold them; the rows up
    /// to the end of the last of those pages are kept for the next windows.
    fn window_of_leaf(
        &self,
        m: &polars_parquet::read::ColumnChunkMetadata,
        leaf: &ArrowField,
        p: &mut LeafPages,
        rows: std::ops::Range<usize>,
        group_rows: usize,
    ) -> PolarsResult<ArrayRef> {
        let (a, b) = (rows.start, rows.end);
        // The rows decoded last that this window begins with; the pages
        // decoded next begin where they end, so each page is decoded about
        // once.
        let mut from = a;
        let mut head = None;
        if let Some((r, array)) = p.last.take() {
            if r.start <= a && b <= r.end {
                let out = array.sliced(a - r.start, b - a);
                p.last = Some((r, array));
                return Ok(out);
            }
            if r.start <= a && a < r.end {
                head = Some(array.sliced(a - r.start, r.end - a));
                from = r.end;
            }
        }
        let pages = &p.pages;
        polars_ensure!(!pages.is_empty(), ComputeError: "{}: a column chunk without data pages", leaf.name);
        // From the last page that begins a row at or before `from` to the
        // first after it that begins a row at or after `b` (exclusive).
        let first = pages
            .iter()
            .rposition(|s| s.starts && s.row <= from)
            .unwrap_or(0);
        let end = pages[first + 1..]
            .iter()
            .position(|s| s.starts && s.row >= b)
            .map_or(pages.len(), |k| first + 1 + k);
        let base = pages[first].row;
        let last_row = pages.get(end).map_or(group_rows, |s| s.row);
        let values = pages[first..end].iter().map(|s| s.values).sum();
        let size = pages[first..end]
            .iter()
            .map(|s| s.bytes.len())
            .sum::<usize>();
        let mut v = Vec::with_capacity(p.dict.len() + size);
        v.extend_from_slice(&p.dict);
        for s in &pages[first..end] {
            polars_ensure!(!s.bytes.is_empty(), ComputeError: "{}: a page read again after its bytes were freed", leaf.name);
            v.extend_from_slice(&s.bytes);
        }
        let buffer = polars_buffer::Buffer::from_vec(v);
        // Windows go forward: the pages before this window's first are done.
        for s in &mut p.pages[p.freed.min(first)..first] {
            s.bytes = polars_buffer::Buffer::from_vec(Vec::new());
        }
        p.freed = p.freed.max(first);
        // Rows past `b` up to the end of those pages are kept for the next
        // windows, at most three windows' worth: a page of a dense leaf
        // (a dictionary of a few run names, 2 bits a value) can hold the
        // whole row group.
        let stop = last_row.min(b.saturating_add(3 * (b - a)));
        let rows_there = from - base..stop - base;
        // Pages of more values than DENSE_VALUES are left to polars, which
        // decodes only the rows: decoded whole, their levels and values
        // would raise the load's peak — but for flags (a page of them can
        // hold a row group), a byte a level and a bit a value: polars took
        // 5–7 ms a window over such a page, the window's longest leaf.
        let dense = if p.sparse || (values > DENSE_VALUES && !super::dense_leaf::holds_bits(leaf)) {
            None
        } else {
            let dense = super::dense_leaf::decode(
                Self::page_reader(m, buffer.clone(), values),
                &m.descriptor().descriptor,
                leaf,
                rows_there.clone(),
            );
            p.sparse = dense.is_none();
            #[cfg(test)]
            if dense.is_some() && values > DENSE_VALUES {
                tests::LARGE_PAGES_STRAIGHT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
            dense
        };
        let arrays = match dense {
            Some(array) => vec![array?],
            None => {
                let filter =
                    polars_parquet::read::Filter::new_ranged(rows_there.start, rows_there.end);
                let (arrays, _) = polars_parquet::read::column_iter_to_arrays(
                    vec![polars_parquet::read::BasicDecompressor::new(
                        Self::page_reader(m, buffer, values),
                        vec![],
                    )],
                    vec![&m.descriptor().descriptor.primitive_type],
                    leaf.clone(),
                    Some(filter),
                )?;
                arrays
            }
        };
        let array = one_array(arrays)?;
        polars_ensure!(array.len() == stop - from, ComputeError: "{}: {} rows decoded from pages that hold {}", leaf.name, array.len(), stop - from);
        // Only the window's rows are put together with the kept ones: the
        // rows decoded past it are kept as decoded, not copied.
        let out = match head {
            Some(head) => one_array(vec![head, array.sliced(0, b - from)])?,
            None => array.sliced(0, b - a),
        };
        p.last = Some((from..stop, array));
        Ok(out)
    }
}

/// Decoded chunks as one array.
fn one_array(arrays: Vec<ArrayRef>) -> PolarsResult<ArrayRef> {
    match arrays.len() {
        1 => Ok(arrays.into_iter().next().expect("one array")),
        _ if matches!(arrays[0].dtype(), ArrowDataType::Dictionary(..)) => {
            // polars-arrow does not concatenate dictionary arrays (pandas'
            // categoricals, as pyarrow writes them, over several pages of
            // a window: an internal error at 57,600 rows): their strings.
            let mut out: Option<Series> = None;
            for a in arrays {
                let field = ArrowField::new(PlSmallStr::EMPTY, a.dtype().clone(), true);
                let s = Series::try_from((&field, vec![a]))?.cast(&DataType::String)?;
                match &mut out {
                    Some(o) => {
                        o.append(&s)?;
                    }
                    None => out = Some(s),
                }
            }
            let s = out.expect("two or more arrays").rechunk();
            Ok(s.to_arrow(0, CompatLevel::newest()))
        }
        _ => {
            let refs: Vec<&dyn polars_arrow::array::Array> =
                arrays.iter().map(|a| a.as_ref()).collect();
            polars_arrow::compute::concatenate::concatenate(&refs)
        }
    }
}

/// [`assemble`] for lists (`item`: their values' type).
fn assemble_lists<O: polars_arrow::offset::Offset>(
    dtype: &ArrowDataType,
    item: &ArrowDataType,
    parts: Vec<ArrayRef>,
) -> PolarsResult<ArrayRef> {
    use polars_arrow::array::ListArray;
    let lists = parts
        .iter()
        .map(|p| p.as_any().downcast_ref::<ListArray<O>>())
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| polars_err!(ComputeError: "a leaf decoded as another type"))?;
    // A list kept from an earlier window is a slice: its offsets start
    // past 0 into its whole values. Each part's values are cut to its rows
    // and the first part's offsets rebased to 0.
    let values = lists
        .iter()
        .map(|l| {
            let (a, b) = (
                l.offsets().first().to_usize(),
                l.offsets().last().to_usize(),
            );
            l.values().sliced(a, b - a)
        })
        .collect();
    let values = assemble(item, values)?;
    let l0 = lists[0];
    let a = *l0.offsets().first();
    let offsets: Vec<O> = l0.offsets().iter().map(|&o| o - a).collect();
    Ok(ListArray::<O>::try_new(
        dtype.clone(),
        offsets.try_into()?,
        values,
        l0.validity().cloned(),
    )?
    .boxed())
}

/// Whether a column's leaves can be decoded one by one and put back
/// together ([`assemble`]): lists and structs down to plain leaves.
fn splittable(dtype: &ArrowDataType) -> bool {
    match dtype {
        ArrowDataType::List(item) | ArrowDataType::LargeList(item) => splittable(&item.dtype),
        ArrowDataType::Struct(fields) => fields.iter().all(|f| splittable(&f.dtype)),
        d => {
            polars_parquet::read::n_columns(d) == 1
                && !matches!(d, ArrowDataType::FixedSizeList(..) | ArrowDataType::Map(..))
        }
    }
}

/// `field` with only its leaf `j` (in the file's order).
fn only_leaf(field: &ArrowField, j: usize) -> ArrowField {
    let dtype = match &field.dtype {
        ArrowDataType::List(item) => ArrowDataType::List(Box::new(only_leaf(item, j))),
        ArrowDataType::LargeList(item) => ArrowDataType::LargeList(Box::new(only_leaf(item, j))),
        ArrowDataType::Struct(fields) => {
            let mut j = j;
            let mut one = Vec::new();
            for f in fields {
                let n = polars_parquet::read::n_columns(&f.dtype);
                if j < n {
                    one.push(only_leaf(f, j));
                    break;
                }
                j -= n;
            }
            ArrowDataType::Struct(one)
        }
        d => d.clone(),
    };
    ArrowField {
        dtype,
        ..field.clone()
    }
}

/// Leaves decoded one by one ([`only_leaf`], in the file's order) put back
/// together as one array of `dtype`: the lists' offsets and validity and
/// the structs' validity are the first part's (every leaf's levels carry
/// them alike).
fn assemble(dtype: &ArrowDataType, parts: Vec<ArrayRef>) -> PolarsResult<ArrayRef> {
    use polars_arrow::array::StructArray;
    if parts.is_empty() {
        polars_bail!(ComputeError: "no leaf decoded for {dtype:?}");
    }
    // A dictionary column's strings ([`one_array`]) stand for it.
    let strings_for = |d: &ArrowDataType| {
        matches!(dtype, ArrowDataType::Dictionary(..))
            && matches!(
                d,
                ArrowDataType::Utf8View | ArrowDataType::LargeUtf8 | ArrowDataType::Utf8
            )
    };
    if parts.len() == 1 && (parts[0].dtype() == dtype || strings_for(parts[0].dtype())) {
        return Ok(parts.into_iter().next().expect("one part"));
    }
    match dtype {
        ArrowDataType::List(item) => assemble_lists::<i32>(dtype, &item.dtype, parts),
        ArrowDataType::LargeList(item) => assemble_lists::<i64>(dtype, &item.dtype, parts),
        ArrowDataType::Struct(fields) => {
            let structs = parts
                .iter()
                .map(|p| p.as_any().downcast_ref::<StructArray>())
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| polars_err!(ComputeError: "a leaf decoded as another type"))?;
            let children = fields
                .iter()
                .map(|f| {
                    let group = structs
                        .iter()
                        .filter(|s| s.fields().first().is_some_and(|g| g.name == f.name))
                        .map(|s| s.values()[0].clone())
                        .collect();
                    assemble(&f.dtype, group)
                })
                .collect::<PolarsResult<Vec<_>>>()?;
            let s0 = structs[0];
            Ok(
                StructArray::try_new(dtype.clone(), s0.len(), children, s0.validity().cloned())?
                    .boxed(),
            )
        }
        _ => polars_bail!(ComputeError: "{} leaves put together as {dtype:?}", parts.len()),
    }
}

/// Whether leaf `leaf` (in the file's order) of column `name` holds no
/// value in any row group: every row group's statistics say so
/// (`null_count` = `num_values`; false without statistics).
fn holds_no_value(meta: &polars_parquet::read::FileMetadata, name: &str, leaf: usize) -> bool {
    meta.row_groups.iter().all(|rg| {
        rg.columns_under_root_iter(name)
            .and_then(|mut leaves| leaves.nth(leaf))
            .and_then(|m| {
                let n = m.statistics(&meta.footer_buf)?.ok()?.null_count()?;
                Some(n == m.num_values())
            })
            .unwrap_or(false)
    })
}

/// Whether a step field of type `dtype` holding no value reads as if it
/// were absent: its reader in [`parse_trajectories`] ([`ints`], [`floats`],
/// [`bools`]) takes the type. Another type is reported, null or not, so
/// such a field is decoded.
fn reads_as_absent(name: &str, dtype: &ArrowDataType) -> bool {
    let d = DataType::from_arrow_dtype(dtype);
    d == DataType::Null
        || match name {
            "turn" | "output_tokens" | "budget_total" | "budget_remaining" => {
                is_int(&d) || d.is_float()
            }
            "reward" => d.is_primitive_numeric(),
            "error" => d == DataType::Boolean,
            _ => false,
        }
}

/// `steps` as a list of structs of the `step_fields` it has ([`STEP_FIELDS`] for the load), and which
/// of its leaves (in the file's order) those are; `None` when it is not a
/// list of structs (it is then read whole, and its type reported). A field
/// of one leaf that holds no value in any row group ([`holds_no_value`]:
/// budget fields most trainers leave empty) and
/// [`reads_as_absent`] is left out too: it reads as the absent field it
/// stands for (gen_large's files: 2 of the 7 step leaves read).
/// One field is always kept: the steps' lists come from a kept leaf.
fn pruned_steps(
    steps: &ArrowField,
    meta: &polars_parquet::read::FileMetadata,
    step_fields: &[&str],
) -> Option<(ArrowField, Vec<bool>)> {
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
    let mut first_wanted = None;
    for f in fields {
        let leaves = polars_parquet::read::n_columns(&f.dtype);
        let mut wanted = step_fields.contains(&f.name.as_str());
        if wanted {
            first_wanted.get_or_insert((keep.len(), f));
        }
        // Statistics read only for a field that could be left out.
        if wanted && leaves == 1 && reads_as_absent(&f.name, &f.dtype) {
            wanted = !holds_no_value(meta, &steps.name, keep.len());
        }
        keep.extend(std::iter::repeat_n(wanted, leaves));
        if wanted {
            kept.push(f.clone());
        }
    }
    if kept.is_empty() {
        if let Some((leaf, f)) = first_wanted {
            keep[leaf] = true;
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
/// type. The values stay polars' own array (one chunk, its concrete type),
/// read row by row: copying a file's columns out would double its memory
/// during the load.
enum Col<T: PolarsDataType> {
    Absent,
    Values(T::Array),
    Wrong(String),
}

impl<T: PolarsDataType> Col<T> {
    /// One chunk, so that reading a row is one lookup in a typed array
    /// (not through the chunked array's dynamic chunks: a tenth of a
    /// Parquet load's CPU).
    fn of(ca: &ChunkedArray<T>) -> Col<T> {
        let ca = ca.rechunk();
        let array = ca.downcast_iter().next().cloned();
        array.map_or(Col::Absent, Col::Values)
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
                Err(_) => Col::of(&Int64Chunked::from_slice(PlSmallStr::EMPTY, &[])),
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
            Col::of(&Int64Chunked::from_iter_options(
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
                Err(_) => Col::of(&Float64Chunked::from_slice(PlSmallStr::EMPTY, &[])),
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
/// Steps a part holds at most (but for one longer row): a part's raw
/// records and chunk-local set, a few of them at once, stay a few MB
/// however long the trajectories.
const PART_STEPS: usize = 1 << 15;

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
    // Parts of at most PART_ROWS rows and (but for a longer row) PART_STEPS steps.
    let mut ranges: Vec<(usize, usize)> = Vec::new();
    let mut a = 0;
    while a < n {
        let mut b = (a + PART_ROWS).min(n);
        if let Some(l) = step_lists {
            let cap = l.offsets[a] + PART_STEPS as i64;
            let k = l.offsets[a + 1..=b].partition_point(|&o| o <= cap);
            b = (a + k.max(1)).min(b);
        }
        ranges.push((a, b));
        a = b;
    }
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
                            // The step is written in place (a step is ~180
                            // bytes: built aside and moved in, the moves were
                            // 2 % of a 1 M-trajectory audit's CPU), its fields
                            // read in the order they always were (the first
                            // of two wrong columns is the one named).
                            let step = v.push_mut(RawStep::default());
                            if let Some((ll, runs, vals)) = &sc.logp {
                                if ll.valid[j] {
                                    let m = step.logp.insert(LogpMap::default());
                                    for q in ll.offsets[j] as usize..ll.offsets[j + 1] as usize {
                                        let r = runs.get_step(q, k, "logp.run", "a string")?;
                                        let x = vals.get_step(q, k, "logp.value", "a number")?;
                                        if let (Some(r), Some(x)) = (r, x) {
                                            m.push(Cow::Borrowed(r), x);
                                        }
                                    }
                                }
                            }
                            step.turn = sc.turn.get_step(j, k, "turn", "an integer")?;
                            step.output_tokens =
                                sc.output_tokens
                                    .get_step(j, k, "output_tokens", "an integer")?;
                            step.error = sc.error.get_step(j, k, "error", "true or false")?;
                            step.reward = sc.reward.get_step(j, k, "reward", "a number")?;
                            step.budget_total =
                                sc.budget_total
                                    .get_step(j, k, "budget_total", "an integer")?;
                            step.budget_remaining = sc.budget_remaining.get_step(
                                j,
                                k,
                                "budget_remaining",
                                "an integer",
                            )?;
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
    row_of(name, raw, row, None)
}

/// [`read_row`] from the file at `path`, reading of a file of 1 MiB or
/// more only its footer and the column chunks of the row group that holds
/// the row (all its columns: the trajectory view shows every field): the
/// other row groups' bytes are zeros never written ([`read_file`]), and
/// neither checked nor decoded. A file of 1.1 GB in five row groups: one
/// fifth of it read to show a trajectory, not the whole.
pub fn read_row_in_file(name: &str, path: &std::path::Path, row: u64) -> Result<Value> {
    #[cfg(unix)]
    if let Some((raw, group)) = read_row_group(path, row, READ_WHOLE_BELOW)
        .map_err(|e| Error::file(name, crate::error::io_text(&e)))?
    {
        return row_of(name, &raw, row, Some(group));
    }
    let raw = std::fs::read(path).map_err(|e| Error::file(name, crate::error::io_text(&e)))?;
    read_row(name, &raw, row)
}

/// Rows of the Parquet file at `path` — `rows`, each (1-based row, the
/// caller's key), ascending — visited with their records as
/// [`read_row_in_file`] makes them, but a row group read once for all its
/// rows (a file under 1 MiB, or one whose footer cannot be read, whole) and
/// decoded in windows of up to 4,096 rows from each row wanted (`fields`:
/// those alone, `steps.action` a step's; the record holds at least them).
/// `visit` returning false stops. Of a trajectory file, only steps' fields
/// wanted are read and decoded as the load reads its own
/// ([`visit_step_fields`]).
pub fn visit_rows_in_file(
    name: &str,
    path: &std::path::Path,
    rows: &[(u64, usize)],
    fields: Option<&[&str]>,
    visit: &mut dyn FnMut(usize, Value) -> bool,
) -> Result<()> {
    // `steps.action`: the column `steps`, of each step its `action`.
    let columns: Option<Vec<&str>> = fields.map(|f| {
        let mut c: Vec<&str> = f.iter().map(|x| x.split('.').next().unwrap_or(x)).collect();
        c.dedup();
        c
    });
    let columns = columns.as_deref();
    let step_fields: Option<Vec<&str>> = fields
        .map(|f| {
            f.iter()
                .filter_map(|x| x.strip_prefix("steps."))
                .collect::<Vec<_>>()
        })
        .filter(|s| !s.is_empty());
    let step_fields = step_fields.as_deref();
    if let (Some(["steps"]), Some(keep)) = (columns, step_fields) {
        if visit_step_fields(name, path, rows, keep, TEXT_WINDOW_VALUES, visit)? {
            return Ok(());
        }
    }
    const WINDOW: usize = 4096;
    let bad = |m: String| Error::file(name, m);
    let io = |e: std::io::Error| bad(crate::error::io_text(&e));
    #[cfg(unix)]
    let footer = open_footer(path, READ_WHOLE_BELOW).map_err(io)?;
    #[cfg(not(unix))]
    let footer: Option<(
        std::fs::File,
        std::fs::Metadata,
        polars_parquet::read::FileMetadata,
    )> = None;
    // Each row group's first row and its rows; read whole: one of them all.
    let groups: Vec<(usize, usize)> = match &footer {
        Some((_, _, meta)) => {
            let mut first = 0usize;
            meta.row_groups
                .iter()
                .map(|rg| {
                    let g = (first, rg.num_rows());
                    first += rg.num_rows();
                    g
                })
                .collect()
        }
        None => vec![(0, usize::MAX)],
    };
    // The bytes of row group `g` (`Some(g)`: its chunks alone), or the file.
    let read_group = |g: usize| -> Result<(Vec<u8>, Option<usize>)> {
        #[cfg(unix)]
        if let Some((f, before, meta)) = &footer {
            if let Some(raw) = read_sparse(f, before, group_ranges(meta, g)).map_err(io)? {
                return Ok((raw, Some(g)));
            }
        }
        Ok((std::fs::read(path).map_err(io)?, None))
    };
    // The row group read: its index, bytes and the columns read of it.
    let mut group: Option<(usize, Vec<u8>, Option<Vec<String>>)> = None;
    // The window decoded: its first row and its records. (As values: the
    // text [`read_row_in_file`] writes and parses again reads as the same
    // values — serde_json writes a float's shortest form and reads it back
    // correctly rounded — in twice the time.)
    let mut window: Option<(usize, Vec<Value>)> = None;
    let mut g = 0usize;
    for (at, &(row, k)) in rows.iter().enumerate() {
        let i = row
            .checked_sub(1)
            .and_then(|i| usize::try_from(i).ok())
            .ok_or_else(|| bad(format!("row {row} is gone")))?;
        while g < groups.len() && i >= groups[g].0.saturating_add(groups[g].1) {
            g += 1;
        }
        let Some(&(first, n)) = groups.get(g) else {
            return Err(bad(format!("row {row} is gone")));
        };
        if group.as_ref().is_none_or(|x| x.0 != g) {
            let (raw, only) = read_group(g)?;
            // Its pages checked once, for all its windows.
            check_page_counts(&raw, None, only).map_err(|e| unreadable(name, e))?;
            let read = columns.map(|c| columns_in(name, &raw, c)).transpose()?;
            group = Some((g, raw, read));
            window = None;
        }
        let Some((_, raw, read)) = &group else {
            unreachable!("read above")
        };
        let inside = |w: &(usize, Vec<Value>)| i >= w.0 && i - w.0 < w.1.len();
        if !window.as_ref().is_some_and(inside) {
            let len = WINDOW.min(first.saturating_add(n) - i);
            let frame = frame_of(name, raw, Some((i, len)), read.clone())?;
            window = Some((i, values_from_frame(&frame, step_fields)));
        }
        let Some((start, records)) = &mut window else {
            unreachable!("decoded above")
        };
        let Some(v) = records.get_mut(i - *start) else {
            return Err(bad(format!("row {row} is gone")));
        };
        // Taken, unless the next row wanted is this one again.
        let v = if rows.get(at + 1).is_some_and(|r| r.0 == row) {
            v.clone()
        } else {
            std::mem::take(v)
        };
        if !visit(k, v) {
            break;
        }
    }
    Ok(())
}

/// Values of a step leaf a window of [`visit_step_fields`] decodes at most,
/// about: of texts of a few thousand characters, tens of megabytes.
const TEXT_WINDOW_VALUES: usize = 1 << 14;

/// [`visit_rows_in_file`] of the steps' fields `keep` alone, by the load's
/// decoder ([`TrajectoryFile`]): of `steps` only those leaves read and
/// decoded, window by window — polars' reader reads a whole top-level
/// column, every step's numbers and log-probabilities (1.1 M rollouts
/// searched for a text: 36 s, most of it those). A file whose steps hold
/// none of them (their structs lack them, or by the statistics no value)
/// is not decoded: each row is visited with nothing. `Ok(false)`: a file of
/// rows of other kinds too (a `kind` column) or without steps, left to the
/// caller, nothing visited.
fn visit_step_fields(
    name: &str,
    path: &std::path::Path,
    rows: &[(u64, usize)],
    keep: &[&str],
    window_values: usize,
    visit: &mut dyn FnMut(usize, Value) -> bool,
) -> Result<bool> {
    let bad = |m: String| Error::file(name, m);
    let io = |e: std::io::Error| bad(crate::error::io_text(&e));
    let keep = Keep {
        columns: &[],
        steps: keep,
    };
    // What the file holds, from its footer: nothing else is read of a file
    // left to the caller, or of one whose steps hold no text.
    let meta = std::fs::File::open(path).map_err(io).and_then(|mut f| {
        polars_parquet::read::read_metadata(&mut f).map_err(|e| unreadable(name, e))
    })?;
    let schema = polars_io::parquet::read::infer_schema(&meta).map_err(|e| unreadable(name, e))?;
    let Some(steps) = schema.get("steps") else {
        return Ok(false);
    };
    if schema.contains("kind") {
        return Ok(false);
    }
    // Row `row` (1-based) as an index, if the file has it.
    let index = |row: u64| {
        row.checked_sub(1)
            .and_then(|i| usize::try_from(i).ok())
            .filter(|&i| i < meta.num_rows)
            .ok_or_else(|| bad(format!("row {row} is gone")))
    };
    if !steps_may_hold(steps, keep.steps, &meta) {
        for &(row, k) in rows {
            index(row)?;
            if !visit(k, Value::Object(Map::new())) {
                break;
            }
        }
        return Ok(true);
    }
    #[cfg(unix)]
    let kept = read_kept(path, READ_WHOLE_BELOW, keep).map_err(io)?;
    #[cfg(not(unix))]
    let kept: Option<Vec<u8>> = None;
    let raw = match kept {
        Some(raw) => raw,
        None => std::fs::read(path).map_err(io)?,
    };
    let firsts: Vec<usize> = meta
        .row_groups
        .iter()
        .scan(0usize, |first, rg| {
            let at = *first;
            *first += rg.num_rows();
            Some(at)
        })
        .collect();
    let file =
        TrajectoryFile::keeping(raw, window_values, keep).map_err(|e| unreadable(name, e))?;
    let mut at = 0usize;
    for w in 0..file.windows() {
        let Some(&(row, _)) = rows.get(at) else {
            break;
        };
        let (g, ref within) = file.windows[w];
        let (lo, hi) = (firsts[g] + within.start, firsts[g] + within.end);
        if index(row)? >= hi {
            continue;
        }
        let frame = file.frame(w).map_err(|e| unreadable(name, e))?;
        let mut records = values_from_frame(&frame, Some(keep.steps));
        while let Some(&(row, k)) = rows.get(at) {
            let i = index(row)?;
            if i >= hi {
                break;
            }
            let Some(v) = i.checked_sub(lo).and_then(|j| records.get_mut(j)) else {
                return Err(bad(format!("row {row} is gone")));
            };
            at += 1;
            // Taken, unless the next row wanted is this one again.
            let v = if rows.get(at).is_some_and(|r| r.0 == row) {
                v.clone()
            } else {
                std::mem::take(v)
            };
            if !visit(k, v) {
                return Ok(true);
            }
        }
    }
    if let Some(&(row, _)) = rows.get(at) {
        return Err(bad(format!("row {row} is gone")));
    }
    Ok(true)
}

/// The bytes [`read_row_in_file`] reads and the row group of `row`
/// (1-based), or `None` to read whole (files of fewer than `whole_below`
/// bytes).
#[cfg(unix)]
fn read_row_group(
    path: &std::path::Path,
    row: u64,
    whole_below: u64,
) -> std::io::Result<Option<(Vec<u8>, usize)>> {
    let Some((f, before, meta)) = open_footer(path, whole_below)? else {
        return Ok(None);
    };
    let Some(i) = row.checked_sub(1) else {
        return Ok(None);
    };
    let (mut first, mut found) = (0u64, None);
    for (g, rg) in meta.row_groups.iter().enumerate() {
        let rows = rg.num_rows() as u64;
        if i < first + rows {
            found = Some(g);
            break;
        }
        first += rows;
    }
    let Some(g) = found else { return Ok(None) };
    Ok(read_sparse(&f, &before, group_ranges(&meta, g))?.map(|raw| (raw, g)))
}

/// Where row group `g`'s bytes are: its column chunks.
#[cfg(unix)]
fn group_ranges(meta: &polars_parquet::read::FileMetadata, g: usize) -> Vec<std::ops::Range<u64>> {
    meta.row_groups[g]
        .parquet_columns()
        .iter()
        .map(|m| m.byte_range())
        .collect()
}

/// Row `row` (1-based) of the file in `raw`; where only row group `group`'s
/// chunks are in it, only that row group's pages are checked.
fn row_of(name: &str, raw: &[u8], row: u64, group: Option<usize>) -> Result<Value> {
    let bad = |m: String| Error::file(name, m);
    let i = row
        .checked_sub(1)
        .and_then(|i| usize::try_from(i).ok())
        .ok_or_else(|| bad(format!("row {row} is gone")))?;
    let one = read_frame(name, raw, Some((i, 1)), group)?;
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

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` lists of `flat`'s values in order, list `i` of `len(i)` of them,
    /// null where `null(i)` (its values passed over all the same).
    fn lists(
        flat: &Series,
        n: usize,
        len: impl Fn(usize) -> usize,
        null: impl Fn(usize) -> bool,
    ) -> ListChunked {
        let mut at = 0i64;
        (0..n)
            .map(|i| {
                let s = flat.slice(at, len(i));
                at += len(i) as i64;
                (!null(i)).then_some(s)
            })
            .collect()
    }

    /// `n` trajectory rows whose steps hold every shape a window must cut
    /// right: null and empty step lists, rows of up to 40 steps, null
    /// fields, log-probability lists of 0 to 3 entries or null.
    fn frame(n: usize) -> DataFrame {
        let steps_of = |i: usize| (i * 7) % 41;
        let logp_of = |j: usize| j % 4;
        let n_steps: usize = (0..n).map(steps_of).sum();
        let n_logp: usize = (0..n_steps).map(logp_of).sum();
        let runs: Vec<&str> = (0..n_logp)
            .map(|q| ["base", "grpo", "sft"][q % 3])
            .collect();
        let values: Vec<Option<f64>> = (0..n_logp)
            .map(|q| (q % 11 != 0).then(|| -(q as f64) / 7.0))
            .collect();
        let lp = StructChunked::from_series(
            "logp".into(),
            n_logp,
            [
                Series::new("run".into(), runs),
                Series::new("value".into(), values),
            ]
            .iter(),
        )
        .unwrap()
        .into_series();
        let logp = lists(&lp, n_steps, logp_of, |j| j % 9 == 4);
        let turn: Vec<i64> = (0..n).flat_map(|i| 1..=steps_of(i) as i64).collect();
        let tokens: Vec<Option<i64>> = (0..n_steps)
            .map(|j| (j % 13 != 0).then_some(10 + (j % 17) as i64))
            .collect();
        let error: Vec<bool> = (0..n_steps).map(|j| j % 5 == 0).collect();
        let fields = [
            Series::new("turn".into(), turn),
            Series::new("output_tokens".into(), tokens),
            Series::new("error".into(), error),
            logp.into_series().with_name("logp".into()),
        ];
        let st = StructChunked::from_series("steps".into(), n_steps, fields.iter())
            .unwrap()
            .into_series();
        let steps = lists(&st, n, steps_of, |i| i % 23 == 5);
        let mut df = df!(
            "run" => (0..n).map(|i| ["a", "b"][i % 2]).collect::<Vec<_>>(),
            "task" => (0..n).map(|i| format!("t{}", i / 16)).collect::<Vec<_>>(),
            "budget" => (0..n).map(|i| (i % 10 != 3).then_some(4i64)).collect::<Vec<_>>(),
            "success" => (0..n).map(|i| i % 3 != 1).collect::<Vec<_>>(),
        )
        .unwrap();
        df.with_column(steps.into_series().with_name("steps".into()).into_column())
            .unwrap();
        df
    }

    /// A search for the steps' texts reads no `steps` column whose steps
    /// hold no text field (`frame`'s: turn, tokens, error, log-probabilities)
    /// or only null ones: each row visited with nothing in it; a file whose
    /// steps have an action reads them.
    #[test]
    fn steps_without_texts_are_not_read_for_a_search() {
        let texts: &[&str] = &["action", "observation"];
        let raw = written(&mut frame(300), None);
        // Whether a file's steps may hold a text, from its footer.
        let may_hold = |raw: &[u8]| {
            let meta = polars_parquet::read::read_metadata(&mut std::io::Cursor::new(raw)).unwrap();
            let schema = polars_io::parquet::read::infer_schema(&meta).unwrap();
            steps_may_hold(schema.get("steps").unwrap(), texts, &meta)
        };
        assert!(!may_hold(&raw));
        let dir =
            std::env::temp_dir().join(format!("rl-audit-steps-no-texts-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("numbers.parquet");
        std::fs::write(&path, &raw).unwrap();
        let rows: Vec<(u64, usize)> = (1..=300u64).map(|r| (r, r as usize)).collect();
        let mut seen = Vec::new();
        visit_rows_in_file(
            "f",
            &path,
            &rows,
            Some(&["steps.action", "steps.observation"]),
            &mut |k, v| {
                seen.push((k, v));
                true
            },
        )
        .unwrap();
        assert_eq!(seen.len(), 300);
        assert!(seen
            .iter()
            .enumerate()
            .all(|(i, (k, v))| *k == i + 1 && *v == serde_json::json!({})));
        // Two rows of one step each, in row groups of one: a turn and an
        // action.
        let two_rows = |action: Series| {
            let st = StructChunked::from_series(
                "steps".into(),
                2,
                [Series::new("turn".into(), [1i64, 1]), action].iter(),
            )
            .unwrap()
            .into_series();
            let mut df = df!("run" => ["a", "a"]).unwrap();
            df.with_column(
                lists(&st, 2, |_| 1, |_| false)
                    .into_series()
                    .with_name("steps".into())
                    .into_column(),
            )
            .unwrap();
            written(&mut df, Some(1))
        };
        // With an action among the step fields, the steps are read.
        let raw = two_rows(Series::new("action".into(), ["go", "stop"]));
        assert!(may_hold(&raw));
        std::fs::write(&path, &raw).unwrap();
        let mut seen = Vec::new();
        visit_rows_in_file(
            "f",
            &path,
            &[(2, 0)],
            Some(&["steps.action", "steps.observation"]),
            &mut |_, v| {
                seen.push(v);
                true
            },
        )
        .unwrap();
        assert_eq!(seen, [serde_json::json!({"steps": [{"action": "stop"}]})]);
        // Actions null in one row group of two: read; null in both, by the
        // statistics: not, each row visited empty.
        assert!(may_hold(&two_rows(Series::new(
            "action".into(),
            [None, Some("stop")]
        ))));
        let raw = two_rows(Series::new("action".into(), [None::<&str>, None]));
        assert!(!may_hold(&raw));
        std::fs::write(&path, &raw).unwrap();
        let mut seen = Vec::new();
        visit_rows_in_file(
            "f",
            &path,
            &[(1, 0), (2, 1)],
            Some(&["steps.action"]),
            &mut |k, v| {
                seen.push((k, v));
                true
            },
        )
        .unwrap();
        assert_eq!(
            seen,
            [(0, serde_json::json!({})), (1, serde_json::json!({}))]
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// The steps' texts visited window by window ([`visit_step_fields`],
    /// of a file in small pages: several windows a row group) are each
    /// record's as the trajectory view re-reads it whole: 2,000 rows of 0
    /// to 40 steps (some lists null), actions and observations some null,
    /// every third row and one twice.
    #[test]
    fn step_texts_visited_by_windows_are_the_records_texts() {
        let n = 2000;
        let steps_of = |i: usize| (i * 7) % 41;
        let n_steps: usize = (0..n).map(steps_of).sum();
        let text = |j: usize, every: usize, k: usize, what: &str| {
            (j % every != k).then(|| format!("{what} {j} é{}", "x".repeat(j % 13)))
        };
        let fields = [
            Series::new("turn".into(), (0..n_steps as i64).collect::<Vec<_>>()),
            Series::new(
                "action".into(),
                (0..n_steps)
                    .map(|j| text(j, 6, 2, "call"))
                    .collect::<Vec<_>>(),
            ),
            Series::new(
                "observation".into(),
                (0..n_steps)
                    .map(|j| text(j, 9, 4, "saw"))
                    .collect::<Vec<_>>(),
            ),
            Series::new("output_tokens".into(), vec![3i64; n_steps]),
        ];
        let st = StructChunked::from_series("steps".into(), n_steps, fields.iter())
            .unwrap()
            .into_series();
        let steps = lists(&st, n, steps_of, |i| i % 23 == 5);
        let mut df = df!("run" => vec!["a"; n], "task" => (0..n).map(|i| format!("t{i}")).collect::<Vec<_>>()).unwrap();
        df.with_column(steps.into_series().with_name("steps".into()).into_column())
            .unwrap();
        let raw = written_in_small_pages(&mut df, 700, 1024);
        let texts: &[&str] = &["action", "observation"];
        let keep = Keep {
            columns: &[],
            steps: texts,
        };
        let file = TrajectoryFile::keeping(raw.clone(), 50, keep).unwrap();
        assert!(file.meta.row_groups.len() >= 2);
        assert!(file.windows() > 30, "{} windows", file.windows());
        let dir = std::env::temp_dir().join(format!("rl-audit-step-texts-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("texts.parquet");
        std::fs::write(&path, &raw).unwrap();
        let mut rows: Vec<(u64, usize)> =
            (1..=n as u64).step_by(3).map(|r| (r, r as usize)).collect();
        rows.insert(5, (rows[5].0, 0));
        let mut got = Vec::new();
        let read = visit_step_fields("f", &path, &rows, texts, 50, &mut |k, v| {
            got.push((k, v));
            true
        })
        .unwrap();
        assert!(read);
        assert_eq!(got.len(), rows.len());
        let of = |v: &Value| {
            texts
                .iter()
                .map(|f| crate::schema::load::steps_field(v, f))
                .collect::<Vec<_>>()
        };
        let mut texts_seen = 0;
        for ((row, k), (k2, v)) in rows.iter().zip(&got) {
            assert_eq!(k, k2);
            let whole = read_row_in_file("f", &path, *row).unwrap();
            assert_eq!(of(v), of(&whole), "row {row}");
            texts_seen += of(v)[0].iter().flatten().count();
        }
        assert!(texts_seen > 5000, "{texts_seen}");
        // A row past the file's end is named.
        let err =
            visit_step_fields("f", &path, &[(2001, 0)], texts, 50, &mut |_, _| true).unwrap_err();
        assert_eq!(err.to_string(), "f: row 2001 is gone");
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// The steps field [`TrajectoryFile`] decodes, and which of the file's
    /// step leaves: of a file of two rows (row groups of one) whose steps
    /// have `fields` (step 0 of row 0 and step 0 of row 1).
    fn decoded_steps(fields: &[Series]) -> (Vec<String>, Vec<bool>) {
        let st = StructChunked::from_series("steps".into(), 2, fields.iter())
            .unwrap()
            .into_series();
        let steps = lists(&st, 2, |_| 1, |_| false);
        let mut df = df!("run" => ["a", "a"], "task" => ["t", "u"]).unwrap();
        df.with_column(steps.into_series().with_name("steps".into()).into_column())
            .unwrap();
        let file = TrajectoryFile::new(written(&mut df, Some(1))).unwrap();
        assert_eq!(file.meta.row_groups.len(), 2);
        let (field, keep) = file.columns.iter().find(|c| c.0.name == "steps").unwrap();
        let (ArrowDataType::List(item) | ArrowDataType::LargeList(item)) = &field.dtype else {
            panic!("{field:?}")
        };
        let ArrowDataType::Struct(kept) = &item.dtype else {
            panic!("{item:?}")
        };
        let names = kept.iter().map(|f| f.name.to_string()).collect();
        let all = vec![true; fields.len()];
        (names, keep.clone().unwrap_or(all))
    }

    /// A step field with no value in any row group is not decoded when
    /// it reads as absent (numbers, flags); of another type (texts where
    /// `error` is a flag) it is, to be reported; one with a value in one
    /// row group is; one field is always decoded (the lists come from it).
    #[test]
    fn step_fields_holding_no_value_are_not_decoded() {
        let none_i = || vec![None::<i64>; 2];
        let (names, keep) = decoded_steps(&[
            Series::new("turn".into(), [1i64, 1]),
            Series::new("budget_total".into(), none_i()),
            Series::new("reward".into(), vec![None::<f64>; 2]),
            Series::new("error".into(), vec![None::<&str>; 2]),
            Series::new("budget_remaining".into(), [None, Some(3i64)]),
            Series::new("output_tokens".into(), none_i()),
        ]);
        assert_eq!(names, ["turn", "error", "budget_remaining"]);
        assert_eq!(keep, [true, false, false, true, true, false]);
        let (names, keep) = decoded_steps(&[
            Series::new("action".into(), ["x", "y"]),
            Series::new("turn".into(), none_i()),
            Series::new("output_tokens".into(), none_i()),
        ]);
        assert_eq!(
            (names, keep),
            (vec!["turn".to_string()], vec![false, true, false])
        );
    }

    #[test]
    fn windows_over_small_pages_decode_what_polars_reads() {
        let mut df = frame(700);
        let raw = written_in_small_pages(&mut df, 300, 1024);
        // The reference: polars' own reader, every row at once.
        let want = ParquetReader::new(std::io::Cursor::new(&raw[..]))
            .finish()
            .unwrap();
        assert_eq!(want.height(), 700);
        for window in [1, 50, 700, 5000, usize::MAX] {
            let file = TrajectoryFile::with_window(raw.clone(), window).unwrap();
            // Rows of up to 40 steps and 3 log-probabilities: 1 value a
            // window is a window a row.
            let windows = file.windows();
            match window {
                1 => assert_eq!(windows, 700),
                usize::MAX => assert_eq!(windows, file.meta.row_groups.len()),
                _ => assert!(windows > 3, "{window}: {windows} windows"),
            }
            let got = all_windows(&file);
            assert_eq!(got.get_column_names(), want.get_column_names());
            assert!(got.equals_missing(&want), "window {window}:\n{got}\n{want}");
        }
    }

    /// Every window of a file, one after another.
    fn all_windows(file: &TrajectoryFile) -> DataFrame {
        let mut got = file.frame(0).unwrap();
        for w in 1..file.windows() {
            got.vstack_mut(&file.frame(w).unwrap()).unwrap();
        }
        got
    }

    /// `got` holds what `want` holds in the fields `got` has: list offsets
    /// (from 0) and nulls, struct fields by name, values.
    fn assert_same(got: &Series, want: &Series, path: &str) {
        assert_eq!(got.len(), want.len(), "{path}: length");
        let nulls = |s: &Series| s.is_null().iter().collect::<Vec<_>>();
        assert_eq!(nulls(got), nulls(want), "{path}: nulls");
        match (got.dtype(), want.dtype()) {
            (DataType::List(_), DataType::List(_)) => {
                let (g, w) = (
                    got.list().unwrap().rechunk(),
                    want.list().unwrap().rechunk(),
                );
                let from0 = |l: &ListChunked| {
                    let o = l.offsets().unwrap();
                    let first = o.first();
                    o.iter().map(|x| x - first).collect::<Vec<i64>>()
                };
                assert_eq!(from0(&g), from0(&w), "{path}: list offsets");
                assert_same(&g.get_inner(), &w.get_inner(), &format!("{path}[]"));
            }
            (DataType::Struct(fields), DataType::Struct(_)) => {
                for f in fields {
                    let field = |s: &Series| s.struct_().unwrap().field_by_name(&f.name).unwrap();
                    assert_same(&field(got), &field(want), &format!("{path}.{}", f.name));
                }
            }
            _ => assert!(got.equals_missing(want), "{path}: values differ"),
        }
    }

    /// Each nested leaf of `raw` (every row group) decoded by
    /// [`super::super::dense_leaf`] over several ranges of rows, wherever
    /// it applies, equals polars' decoding of those rows: how many
    /// (leaf, rows) it decoded, of how many.
    fn dense_leaves_are_what_polars_decodes(raw: &[u8]) -> (usize, usize) {
        use polars_parquet::read::{column_iter_to_arrays, BasicDecompressor, Filter};
        let file = TrajectoryFile::whole(raw.to_vec()).unwrap();
        let (mut dense, mut all) = (0, 0);
        for (g, rg) in file.meta.row_groups.iter().enumerate() {
            let rows = rg.num_rows();
            for (_, leaf, m) in file.leaves(g).unwrap() {
                let (Some(leaf), Some(m)) = (leaf, m) else {
                    continue;
                };
                let d = &m.descriptor().descriptor;
                if d.max_rep_level == 0 {
                    continue;
                }
                let total = m.num_values() as usize;
                let reader = || TrajectoryFile::page_reader(m, file.chunk(m), total);
                for r in [0..rows, 0..1, rows / 3..rows / 2, rows - 1..rows, 1..1] {
                    let filter = Some(Filter::new_ranged(r.start, r.end));
                    let decompressor = BasicDecompressor::new(reader(), vec![]);
                    let (want, _) = column_iter_to_arrays(
                        vec![decompressor],
                        vec![&d.primitive_type],
                        leaf.clone(),
                        filter,
                    )
                    .unwrap();
                    let want = one_array(want).unwrap();
                    all += 1;
                    // Buffers left by a leaf before, of some size or none.
                    super::super::dense_leaf::soil_scratch((all % 3) << 19);
                    let Some(got) = super::super::dense_leaf::decode(reader(), d, &leaf, r.clone())
                    else {
                        continue;
                    };
                    dense += 1;
                    let got = got.unwrap();
                    assert_eq!(got.dtype(), want.dtype(), "{}", leaf.name);
                    assert!(got.as_ref() == want.as_ref(), "{}: rows {r:?}", leaf.name);
                }
            }
        }
        (dense, all)
    }

    /// Where no list is null or empty and no value null, every step leaf
    /// is decoded straight from its pages (polars' writer: plain values,
    /// small pages; pyarrow's: dictionary-encoded values, rows running
    /// over pages) and holds what polars decodes; a window with a null
    /// anywhere is left to polars (pyarrow's and polars' files with nulls).
    #[test]
    fn leaves_with_every_level_present_decode_as_polars_does() {
        let n = 400;
        let steps_of = |i: usize| 1 + i % 6;
        let n_steps: usize = (0..n).map(steps_of).sum();
        let logp_of = |j: usize| 1 + j % 3;
        let n_logp: usize = (0..n_steps).map(logp_of).sum();
        let lp = StructChunked::from_series(
            "logp".into(),
            n_logp,
            [
                Series::new(
                    "run".into(),
                    (0..n_logp)
                        .map(|q| {
                            super::super::dense_leaf::RUN_NAMES[[0, 1, 2, 3, 4, 0, 2, 3][q % 8]]
                        })
                        .collect::<Vec<_>>(),
                ),
                Series::new(
                    "value".into(),
                    (0..n_logp).map(|q| -(q as f64) / 7.0).collect::<Vec<_>>(),
                ),
            ]
            .iter(),
        )
        .unwrap()
        .into_series();
        let logp = lists(&lp, n_steps, logp_of, |_| false);
        let fields = [
            Series::new(
                "turn".into(),
                (0..n)
                    .flat_map(|i| 1..=steps_of(i) as i64)
                    .collect::<Vec<_>>(),
            ),
            Series::new(
                "output_tokens".into(),
                (0..n_steps).map(|j| (j % 17) as i32).collect::<Vec<_>>(),
            ),
            Series::new(
                "error".into(),
                (0..n_steps).map(|j| j % 5 == 0).collect::<Vec<_>>(),
            ),
            Series::new(
                "reward".into(),
                (0..n_steps).map(|j| j as f32 / 3.0).collect::<Vec<_>>(),
            ),
            logp.into_series().with_name("logp".into()),
        ];
        let st = StructChunked::from_series("steps".into(), n_steps, fields.iter())
            .unwrap()
            .into_series();
        let steps = lists(&st, n, steps_of, |_| false);
        let mut df = df!("run" => (0..n).map(|i| ["a", "b"][i % 2]).collect::<Vec<_>>()).unwrap();
        df.with_column(steps.into_series().with_name("steps".into()).into_column())
            .unwrap();
        let raw = written_in_small_pages(&mut df, 150, 512);
        // 6 leaves (turn, output_tokens, error, reward, logp.run,
        // logp.value) a row group, 5 ranges of rows each.
        let groups = TrajectoryFile::whole(raw.clone())
            .unwrap()
            .meta
            .row_groups
            .len();
        assert!(groups > 1);
        let all = 6 * groups * 5;
        assert_eq!(dense_leaves_are_what_polars_decodes(&raw), (all, all));
        for name in ["eval-small-pages.parquet", "eval-pyarrow.parquet"] {
            let (dense, all) = dense_leaves_are_what_polars_decodes(&pyarrow_file(name));
            assert_eq!(dense, all, "{name}");
            assert!(all >= 25, "{name}: {all}");
        }
        // pyarrow's small pages with a null step field here and there
        // (make.py): a page holds fewer values than levels, its dictionary
        // indices and booleans bit-packed with padding — only the levels
        // tell which windows to leave to polars.
        let nulls = pyarrow_file("eval-step-nulls.parquet");
        let (dense, all) = dense_leaves_are_what_polars_decodes(&nulls);
        assert!(0 < dense && dense < all && all >= 25, "{dense} of {all}");
        // Nulls and empty lists in most windows: polars decodes those.
        let raw = written(&mut frame(300), None);
        let (dense, all) = dense_leaves_are_what_polars_decodes(&raw);
        assert!(dense < all && all == 25, "{dense} of {all}");
    }

    /// `df` as polars writes it with row groups of `rows` and data pages
    /// of about `page` bytes.
    /// Windows over pages of more than [`DENSE_VALUES`] values decoded
    /// straight (counted by `window_of_leaf`).
    pub(super) static LARGE_PAGES_STRAIGHT: std::sync::atomic::AtomicUsize =
        std::sync::atomic::AtomicUsize::new(0);

    /// A row group's flags in one page (a bit each: 540,000 of them) are
    /// decoded straight window by window, as polars reads them; a page of
    /// as many integers is left to polars.
    #[test]
    fn a_page_of_a_row_groups_flags_decodes_straight_in_windows() {
        let (n, per) = (60_000, 9);
        let turn: Vec<i64> = (0..n).flat_map(|_| 1..=per as i64).collect();
        let error: Vec<bool> = (0..n * per).map(|j| j % 7 == 0 || j % 11 == 3).collect();
        let fields = [
            Series::new("turn".into(), turn),
            Series::new("error".into(), error),
        ];
        let st = StructChunked::from_series("steps".into(), n * per, fields.iter())
            .unwrap()
            .into_series();
        let steps = lists(&st, n, |_| per, |_| false);
        let mut df =
            df!("task" => (0..n).map(|i| format!("t{}", i % 97)).collect::<Vec<_>>()).unwrap();
        df.with_column(steps.into_series().with_name("steps".into()).into_column())
            .unwrap();
        let raw = written_in_small_pages(&mut df, n, 1 << 30);
        let want = ParquetReader::new(std::io::Cursor::new(&raw[..]))
            .finish()
            .unwrap();
        let file = TrajectoryFile::new(raw).unwrap();
        assert_eq!(file.meta.row_groups.len(), 1);
        assert!(file.windows() > 3, "{}", file.windows());
        let before = LARGE_PAGES_STRAIGHT.load(std::sync::atomic::Ordering::Relaxed);
        let got = all_windows(&file);
        assert!(got.equals_missing(&want), "{got}\n{want}");
        let straight = LARGE_PAGES_STRAIGHT.load(std::sync::atomic::Ordering::Relaxed) - before;
        // The flags' windows (each decodes up to four windows' rows, the
        // next three read from those), not the turns'.
        assert!((1..file.windows()).contains(&straight), "{straight}");
    }

    /// `df` as a Parquet file's bytes (polars' writer; `rows` a row group).
    fn written(df: &mut DataFrame, rows: Option<usize>) -> Vec<u8> {
        let mut raw = Vec::new();
        ParquetWriter::new(&mut raw)
            .with_row_group_size(rows)
            .finish(df)
            .unwrap();
        raw
    }

    fn written_in_small_pages(df: &mut DataFrame, rows: usize, page: usize) -> Vec<u8> {
        let mut raw = Vec::new();
        ParquetWriter::new(&mut raw)
            .with_row_group_size(Some(rows))
            .with_data_page_size(Some(page))
            .finish(df)
            .unwrap();
        raw
    }

    /// A page header whose value count is damaged into a negative number
    /// (tests/bad_input.rs has the same two files through the command) is
    /// an error where row groups are read in windows too: the page walk
    /// that indexes them checks each count.
    #[test]
    fn a_negative_page_count_is_an_error_in_windows_too() {
        for (file, at, was, now, values, left) in [
            ("eval-step-nulls.parquet", 2342, 0x0c, 0x15, -11, 6),
            ("eval-page-index.parquet", 1885, 0xac, 0x85, -131, 150),
        ] {
            let mut raw = pyarrow_file(file);
            assert_eq!(raw[at], was, "{file}");
            raw[at] = now;
            let windowed = TrajectoryFile::with_window(raw.clone(), 50);
            let err = windowed.err().map(|e| e.to_string()).unwrap_or_default();
            let want = format!("a data page's header counts {values} values, its column chunk has {left} left (a damaged page header)");
            assert!(err.contains(&want), "{file}: {err}");
            // Whole, the file opens; its windows' decode refuses the page.
            let whole = TrajectoryFile::new(raw).unwrap();
            let err = (0..whole.windows()).find_map(|w| whole.frame(w).err());
            assert!(err.is_some_and(|e| e.to_string().contains(&want)), "{file}");
        }
    }

    /// A pyarrow-written file of `tests/data/pyarrow` (make.py there), read
    /// whole.
    fn pyarrow_file(name: &str) -> Vec<u8> {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/pyarrow/");
        std::fs::read(format!("{dir}{name}")).unwrap()
    }

    /// Files of trajectories read only where their kept leaves are (the
    /// step texts left unread: zeros where the file has them) decode as
    /// the whole file does, window by window; pyarrow's files of every
    /// layout here (page index or none, one row group or three, large
    /// types, pandas categoricals), read with no size below which to read
    /// whole.
    #[cfg(unix)]
    #[test]
    fn files_read_only_where_kept_decode_as_read_whole() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/pyarrow/");
        for name in [
            "eval-pyarrow.parquet",
            "eval-small-pages.parquet",
            "eval-page-index.parquet",
            "eval-large-types.parquet",
            "eval-pandas-categorical.parquet",
            "eval-step-nulls.parquet",
        ] {
            let path = std::path::PathBuf::from(format!("{dir}{name}"));
            let whole = std::fs::read(&path).unwrap();
            let kept = super::read_kept(&path, 0, LOAD).unwrap().expect(name);
            assert_eq!(kept.len(), whole.len(), "{name}");
            // The action and observation column chunks were not read.
            let meta =
                polars_parquet::read::read_metadata(&mut std::io::Cursor::new(&whole[..])).unwrap();
            let mut texts = 0;
            for rg in &meta.row_groups {
                for m in rg.parquet_columns() {
                    let path = m.descriptor().path_in_schema.join(".");
                    if path.contains("action") || path.contains("observation") {
                        let r = m.byte_range();
                        let r = r.start as usize..r.end as usize;
                        assert!(whole[r.clone()].iter().any(|&b| b != 0), "{name}: {path}");
                        assert!(kept[r].iter().all(|&b| b == 0), "{name}: {path} was read");
                        texts += 1;
                    }
                }
            }
            assert!(texts >= 2, "{name}: {texts} text chunks");
            for window in [150, usize::MAX] {
                let got = TrajectoryFile::with_window(kept.clone(), window).unwrap();
                let want = TrajectoryFile::with_window(whole.clone(), window).unwrap();
                assert_eq!(got.windows(), want.windows());
                for w in 0..got.windows() {
                    let (g, h) = (got.frame(w).unwrap(), want.frame(w).unwrap());
                    assert!(g.equals_missing(&h), "{name}, window {window}: {w}");
                }
            }
        }
        // A file with a `kind` column may hold rows of other kinds: whole.
        let mixed =
            std::env::temp_dir().join(format!("rl-audit-kind-{}.parquet", std::process::id()));
        let mut df = df!("kind" => ["trajectory"], "run" => ["a"]).unwrap();
        ParquetWriter::new(std::fs::File::create(&mixed).unwrap())
            .finish(&mut df)
            .unwrap();
        assert!(super::read_kept(&mixed, 0, LOAD).unwrap().is_none());
        std::fs::remove_file(&mixed).unwrap();
    }

    /// A row re-read from its row group alone (the others' bytes zeros,
    /// unread) is the row read from the whole file: every row of files in
    /// three row groups, with and without a page index; past the last row,
    /// the file is read whole (and the row is gone).
    #[cfg(unix)]
    #[test]
    fn a_row_read_from_its_row_group_is_the_row_of_the_whole_file() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/pyarrow/");
        for name in ["eval-small-pages.parquet", "eval-page-index.parquet"] {
            let path = std::path::PathBuf::from(format!("{dir}{name}"));
            let whole = std::fs::read(&path).unwrap();
            let mut groups = std::collections::BTreeSet::new();
            for row in 1..=384u64 {
                let (raw, g) = super::read_row_group(&path, row, 0).unwrap().expect(name);
                groups.insert(g);
                let got = super::row_of(name, &raw, row, Some(g)).unwrap();
                let want = super::read_row(name, &whole, row).unwrap();
                assert_eq!(got, want, "{name}: row {row}");
                if row == 1 {
                    // Of three row groups, two were not read.
                    let unread = raw.iter().zip(&whole).filter(|(a, b)| a != b).count();
                    assert!(unread > whole.len() / 3, "{name}: {unread} bytes unread");
                }
            }
            assert_eq!(groups.len(), 3, "{name}");
            assert!(super::read_row_group(&path, 385, 0).unwrap().is_none());
        }
    }

    /// pandas' categoricals (pyarrow's dictionary columns) over several
    /// pages of a window: polars-arrow cannot concatenate them (the load
    /// of a 57,600-row file stopped with an internal error); the window
    /// holds their strings, those polars reads.
    #[test]
    fn categoricals_over_several_pages_read_as_their_strings() {
        let raw = pyarrow_file("eval-pandas-categorical.parquet");
        let want = ParquetReader::new(std::io::Cursor::new(&raw[..]))
            .finish()
            .unwrap();
        let file = TrajectoryFile::with_window(raw, 150).unwrap();
        assert!(file.windows() > 1);
        let strings = |s: &Series| -> Vec<Option<String>> {
            let s = s.cast(&DataType::String).unwrap();
            s.str()
                .unwrap()
                .iter()
                .map(|x| x.map(str::to_string))
                .collect()
        };
        let mut row = 0;
        for w in 0..file.windows() {
            let got = file.frame(w).unwrap();
            for name in ["run", "method", "benchmark", "task"] {
                let g = got.column(name).unwrap().as_materialized_series();
                let h = want.column(name).unwrap().as_materialized_series();
                let h = h.slice(row as i64, got.height());
                assert_eq!(strings(g), strings(&h), "{name}, window {w}");
            }
            row += got.height();
        }
        assert_eq!(row, want.height());
    }

    /// Windows of 1 row to a whole row group, cut at every alignment with
    /// the pages of `raw` (384 rows in 3 row groups), hold what polars'
    /// reader reads of the kept columns; the steps' texts are not decoded.
    fn windows_hold_what_polars_reads(raw: &[u8]) {
        let want = ParquetReader::new(std::io::Cursor::new(raw))
            .finish()
            .unwrap();
        for window in [1, 150, 300, 450, 700, 1100, 2000, 5000, usize::MAX] {
            let file = TrajectoryFile::with_window(raw.to_vec(), window).unwrap();
            match window {
                1 => assert_eq!(file.windows(), 384),
                usize::MAX => assert_eq!(file.windows(), 3),
                _ => {}
            }
            let got = all_windows(&file);
            assert_eq!(got.height(), 384);
            for c in got.columns() {
                let name = c.name().as_str();
                let want = want.column(name).unwrap().as_materialized_series();
                assert_same(c.as_materialized_series(), want, name);
            }
            let steps = got.column("steps").unwrap().as_materialized_series();
            let DataType::List(item) = steps.dtype() else {
                panic!("{}", steps.dtype())
            };
            let DataType::Struct(fields) = item.as_ref() else {
                panic!("{item}")
            };
            let mut names: Vec<&str> = fields.iter().map(|f| f.name.as_str()).collect();
            names.sort();
            assert_eq!(
                names,
                ["error", "logp", "output_tokens", "turn"],
                "window {window}"
            );
        }
    }

    /// A file pyarrow 14 wrote with small V1 data pages, whose rows' steps
    /// run over from one page into the next, in three row groups
    /// (tests/data/pyarrow/make.py), without an offset index: the rows
    /// each page begins are counted from its repetition levels.
    #[test]
    fn windows_cut_rows_that_run_over_pages_as_pyarrow_writes_them() {
        let raw = pyarrow_file("eval-small-pages.parquet");
        let file = TrajectoryFile::with_window(raw.clone(), 1).unwrap();
        // Pages that begin inside a row: the case a window must start
        // before, at the page that begins the row.
        let inside: usize = file
            .pages
            .iter()
            .flatten()
            .flatten()
            .map(|p| p.lock().unwrap().pages.iter().filter(|s| !s.starts).count())
            .sum();
        assert!(inside > 0, "{inside} pages begin inside a row");
        assert!(file.meta.row_groups.len() >= 2);
        windows_hold_what_polars_reads(&raw);
    }

    /// A file with the Parquet page index (pyarrow 26 asked for it, small
    /// pages; make.py): each nested page's rows are read from the offset
    /// index — the rows its repetition levels count, taken from the index
    /// (an index with every first row doubled doubles them all) — and the
    /// windows hold what polars reads.
    #[test]
    fn pages_rows_come_from_the_offset_index() {
        use polars_parquet_format::PageLocation;
        let raw = pyarrow_file("eval-page-index.parquet");
        let file = TrajectoryFile::whole(raw.clone()).unwrap();
        let spans = |p: LeafPages| -> Vec<(usize, usize, bool)> {
            p.pages
                .iter()
                .map(|s| (s.values, s.row, s.starts))
                .collect()
        };
        let (mut nested, mut pages) = (0, 0);
        for (g, rg) in file.meta.row_groups.iter().enumerate() {
            let rows = rg.num_rows();
            for (_, _, m) in file.leaves(g).unwrap() {
                let m = m.unwrap();
                if m.descriptor().descriptor.max_rep_level == 0 {
                    continue;
                }
                nested += 1;
                let located = file.page_locations(m).unwrap();
                let by_levels = spans(file.index_pages(m, rows, &[]).unwrap());
                pages += by_levels.len();
                let by_index = spans(file.index_pages(m, rows, &located).unwrap());
                assert_eq!(by_index, by_levels);
                let firsts: Vec<usize> =
                    located.iter().map(|l| l.first_row_index as usize).collect();
                let rows_of =
                    |v: &[(usize, usize, bool)]| v.iter().map(|s| s.1).collect::<Vec<_>>();
                assert_eq!(rows_of(&by_index), firsts);
                let doubled: Vec<PageLocation> = located
                    .iter()
                    .map(|l| {
                        PageLocation::new(l.offset, l.compressed_page_size, 2 * l.first_row_index)
                    })
                    .collect();
                let by_doubled = spans(file.index_pages(m, 2 * rows, &doubled).unwrap());
                let twice: Vec<usize> = firsts.iter().map(|r| 2 * r).collect();
                assert_eq!(rows_of(&by_doubled), twice);
            }
        }
        // turn, output_tokens, logp.run, logp.value, error; 3 row groups.
        assert_eq!(nested, 15);
        assert!(pages > 3 * nested, "{pages} pages");
        windows_hold_what_polars_reads(&raw);
    }
}
