//! One row read back on demand (the trajectory view), and every row's step texts visited (the `F` search).

use super::*;

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

/// The steps' texts of rows of the Parquet file at `path` — `rows`, each
/// (1-based row, the caller's key), ascending — visited as
/// [`read_row_in_file`]'s records hold them, but a row group read once for
/// all its rows (a file under 1 MiB, or one whose footer cannot be read,
/// whole), of it only the column `steps`, decoded in windows of up to
/// 4,096 rows from each row wanted. `tick()` before each row: its error is
/// returned. `Ok(false)`: `visit` returned false and stopped it. Of a
/// trajectory file only the steps' texts are read and decoded, as the load
/// reads its own ([`visit_step_fields`]).
pub fn visit_rows_in_file(
    name: &str,
    path: &std::path::Path,
    rows: &[(u64, usize)],
    visit: &mut Visit,
    tick: &mut dyn FnMut() -> Result<()>,
) -> Result<bool> {
    // Of the column `steps`, of each step its `action` (and `observation`).
    let keep: &[&str] = match visit.observations {
        true => &["action", "observation"],
        false => &["action"],
    };
    if let Some(all) = visit_step_fields(name, path, rows, keep, TEXT_WINDOW_VALUES, visit, tick)? {
        return Ok(all);
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
    let mut group: Option<(usize, Vec<u8>, Vec<String>)> = None;
    // The window decoded: its first row and its records' steps' texts. (As values: the
    // text [`read_row_in_file`] writes and parses again reads as the same
    // values — serde_json writes a float's shortest form and reads it back
    // correctly rounded — in twice the time.)
    let mut window: Option<(usize, Vec<Value>)> = None;
    let mut g = 0usize;
    for &(row, k) in rows {
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
            let read = columns_in(name, &raw, &["steps"])?;
            group = Some((g, raw, read));
            window = None;
        }
        let Some((_, raw, read)) = &group else {
            unreachable!("read above")
        };
        let inside = |w: &(usize, Vec<Value>)| i >= w.0 && i - w.0 < w.1.len();
        if !window.as_ref().is_some_and(inside) {
            let len = WINDOW.min(first.saturating_add(n) - i);
            let frame = frame_of(name, raw, Some((i, len)), Some(read.clone()))?;
            window = Some((i, values_from_frame(&frame, Some(keep))));
        }
        let Some((start, records)) = &window else {
            unreachable!("decoded above")
        };
        let Some(v) = records.get(i - *start) else {
            return Err(bad(format!("row {row} is gone")));
        };
        tick()?;
        if !visit.value(k, v) {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Values of a step leaf a window of [`visit_step_fields`] decodes at most,
/// about: of texts of a few thousand characters, tens of megabytes.
const TEXT_WINDOW_VALUES: usize = 1 << 14;

/// [`visit_rows_in_file`] of the steps' fields `keep` alone, by the load's
/// decoder ([`TrajectoryFile`]): of `steps` only those leaves read and
/// decoded, window by window — polars' reader reads a whole top-level
/// column, every step's numbers and log-probabilities (1.1 M rollouts
/// searched for a text: 36 s, most of it those) — and their strings read
/// where they were decoded ([`StepTextLeaves`]; a window's records made
/// values only where its leaves are not strings). A file whose steps hold
/// none of them (their structs lack them, or by the statistics no value)
/// is not decoded: each row is visited with nothing. `None`: a file of rows of other kinds too (a
/// `kind` column) or without steps, left to the caller, nothing visited;
/// else as [`visit_rows_in_file`].
pub(super) fn visit_step_fields(
    name: &str,
    path: &std::path::Path,
    rows: &[(u64, usize)],
    keep: &[&str],
    window_values: usize,
    visit: &mut Visit,
    tick: &mut dyn FnMut() -> Result<()>,
) -> Result<Option<bool>> {
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
        return Ok(None);
    };
    if schema.contains("kind") {
        return Ok(None);
    }
    // Row `row` (1-based) as an index, if the file has it.
    let index = |row: u64| {
        row.checked_sub(1)
            .and_then(|i| usize::try_from(i).ok())
            .filter(|&i| i < meta.num_rows)
            .ok_or_else(|| bad(format!("row {row} is gone")))
    };
    if !steps_may_hold(steps, keep.steps, &meta) {
        let nothing = Value::Object(Map::new());
        for &(row, k) in rows {
            index(row)?;
            tick()?;
            if !visit.value(k, &nothing) {
                return Ok(Some(false));
            }
        }
        return Ok(Some(true));
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
        // The texts where they were decoded, or the records as values.
        let texts = StepTextLeaves::of(&frame);
        let records = match texts {
            Some(_) => Vec::new(),
            None => values_from_frame(&frame, Some(keep.steps)),
        };
        while let Some(&(row, k)) = rows.get(at) {
            let i = index(row)?;
            if i >= hi {
                break;
            }
            let j = i.checked_sub(lo);
            let gone = || bad(format!("row {row} is gone"));
            at += 1;
            tick()?;
            let go_on = match &texts {
                Some(leaves) => {
                    let steps = leaves.row(j.ok_or_else(gone)?, visit.observations);
                    (visit.visit)(k, &steps.ok_or_else(gone)?)
                }
                None => visit.value(k, j.and_then(|j| records.get(j)).ok_or_else(gone)?),
            };
            if !go_on {
                return Ok(Some(false));
            }
        }
    }
    if let Some(&(row, _)) = rows.get(at) {
        return Err(bad(format!("row {row} is gone")));
    }
    Ok(Some(true))
}

/// The bytes [`read_row_in_file`] reads and the row group of `row`
/// (1-based), or `None` to read whole (files of fewer than `whole_below`
/// bytes).
#[cfg(unix)]
pub(super) fn read_row_group(
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
pub(super) fn row_of(name: &str, raw: &[u8], row: u64, group: Option<usize>) -> Result<Value> {
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
