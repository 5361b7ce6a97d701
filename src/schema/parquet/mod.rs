//! Parquet input (SPEC §1): one kind per file, the same field names as the
//! JSON records; `logp` is a list of `{run, value}` structs. Rows are
//! rendered as JSON Lines so that one validator checks both formats.

use polars::prelude::*;
use serde_json::{Map, Number, Value};

use rayon::prelude::*;

use super::load::{StepText, Visit};
use super::{Loc, LogSet};
use crate::error::{Error, RecordError, Result};

mod assemble;
mod columns;
mod file;
mod parse;
mod rows;
mod values;

use assemble::*;
use columns::*;
pub use file::*;
pub use parse::*;
pub use rows::*;
use values::*;

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

#[cfg(test)]
mod tests;
