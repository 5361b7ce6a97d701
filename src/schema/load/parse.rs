//! Parsing a file's records in parallel chunks (plain, mapped or step rows) into chunk-local sets.

use super::*;

/// One piece of one file, parsed on its own thread.
pub(crate) struct Chunk {
    pub(super) file: u32,
    pub(super) set: LogSet,
    /// (local line, error), in line order.
    pub(super) errors: Vec<(u64, RecordError)>,
    /// Lines in this chunk (to number the next chunk's lines).
    pub(super) lines: u64,
    pub(crate) records: u64,
    pub(super) too_long: Option<u64>,
    /// The chunk ends in a half-written line left for the writer to finish
    /// (`--follow`).
    pub(crate) deferred: bool,
}

impl Chunk {
    pub(super) fn new(file: u32) -> Chunk {
        Chunk {
            file,
            set: LogSet::default(),
            errors: Vec::new(),
            lines: 0,
            records: 0,
            too_long: None,
            deferred: false,
        }
    }
}

pub(super) fn split_chunks(bytes: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < bytes.len() {
        let mut end = (start + CHUNK).min(bytes.len());
        if end < bytes.len() {
            end = match memchr::memchr(b'\n', &bytes[end..]) {
                Some(i) => end + i + 1,
                None => bytes.len(),
            };
        }
        out.push(&bytes[start..end]);
        start = end;
    }
    out
}

pub(super) fn parse_chunk(
    file: u32,
    name: &str,
    bytes: &[u8],
    last: bool,
    opts: &LoadOptions,
) -> Chunk {
    let follow = opts.follow;
    let mut c = Chunk::new(file);
    let position_paths = opts
        .mapping
        .as_ref()
        .map(|m| m.position_paths())
        .unwrap_or_default();
    let mut positions = crate::schema::mapping::Positions::default();
    let mut rest = bytes;
    while !rest.is_empty() {
        let (line, terminated) = match memchr::memchr(b'\n', rest) {
            Some(i) => {
                let l = &rest[..i];
                rest = &rest[i + 1..];
                (l, true)
            }
            None => {
                let l = rest;
                rest = &[];
                (l, false)
            }
        };
        c.lines += 1;
        if line.len() > MAX_LINE {
            c.too_long.get_or_insert(c.lines);
            continue;
        }
        let line = without_bom(line.strip_suffix(b"\r").unwrap_or(line));
        if line.iter().all(|b| b.is_ascii_whitespace()) {
            continue;
        }
        c.records += 1;
        let loc = Loc::new(file, c.lines);
        let added = match &opts.mapping {
            Some(m) => add_mapped(&mut c.set, m, loc, line, |v| {
                let positions = positions.next(&position_paths, v);
                let cx = crate::schema::mapping::Context {
                    path: name,
                    run_label: opts.inspect.run_label.as_deref(),
                    positions: &positions,
                };
                m.map_record(v, &cx)
            }),
            None => c.set.add_json(loc, line),
        };
        match added {
            Ok(Added::Record | Added::Summary) => {}
            Ok(Added::UnknownKind(k)) => *c.set.unknown_kinds.entry(k).or_default() += 1,
            Err(e) => {
                let half_written = follow && last && !terminated && e.reason == SkipReason::Syntax;
                if !half_written {
                    c.errors.push((c.lines, e));
                } else {
                    c.records -= 1;
                    c.deferred = true;
                }
            }
        }
    }
    c
}

/// Validates the records a mapping makes of one source record.
pub(super) fn add_mapped(
    set: &mut LogSet,
    m: &crate::schema::mapping::Mapping,
    loc: Loc,
    line: &[u8],
    map: impl FnOnce(&serde_json::Value) -> Vec<serde_json::Value>,
) -> std::result::Result<Added, RecordError> {
    let v: serde_json::Value = serde_json::from_slice(line)
        .map_err(|e| RecordError::new(SkipReason::Syntax, "", format!("invalid JSON: {e}")))?;
    let mut last = Ok(Added::Record);
    for rec in map(&v) {
        let bytes = serde_json::to_vec(&rec).unwrap_or_default();
        last = set.add_json(loc, &bytes).map_err(|e| explain_mapped(m, e));
        last.as_ref().map_err(Clone::clone)?;
    }
    last
}

/// Adds which source field a mapped SPEC field came from.
pub(super) fn explain_mapped(
    m: &crate::schema::mapping::Mapping,
    mut e: RecordError,
) -> RecordError {
    if let Some(src) = m.describe(&e.field) {
        e.message = format!("{} (mapped from {src} by {})", e.message, m.name);
    } else if e.reason == SkipReason::MissingField {
        e.message = format!("{} (mapping {} has no source for it)", e.message, m.name);
    }
    e
}

/// Step-shaped sources: every row of the file is read, rows are grouped
/// into trajectories, each located at its first row.
pub(super) fn parse_step_rows(
    file: u32,
    name: &str,
    bytes: &[u8],
    m: &crate::schema::mapping::Mapping,
    opts: &LoadOptions,
) -> Chunk {
    let mut c = Chunk::new(file);
    let mut rows = Vec::new();
    let mut row_lines = Vec::new();
    for line in bytes.split(|&b| b == b'\n') {
        c.lines += 1;
        if line.len() > MAX_LINE {
            c.too_long.get_or_insert(c.lines);
            continue;
        }
        if line.iter().all(|b| b.is_ascii_whitespace()) {
            continue;
        }
        c.records += 1;
        match serde_json::from_slice::<serde_json::Value>(line) {
            Ok(v) => {
                rows.push(v);
                row_lines.push(c.lines);
            }
            Err(e)
                if opts.follow
                    && !bytes.ends_with(b"\n")
                    && line.as_ptr_range().end == bytes.as_ptr_range().end =>
            {
                let _ = e;
                c.records -= 1;
            }
            Err(e) => c.errors.push((
                c.lines,
                RecordError::new(SkipReason::Syntax, "", format!("invalid JSON: {e}")),
            )),
        }
    }
    if bytes.ends_with(b"\n") {
        c.lines -= 1;
    }
    let cx = crate::schema::mapping::Context {
        path: name,
        run_label: opts.inspect.run_label.as_deref(),
        positions: &[],
    };
    for (first, rec) in m.map_steps(&rows, &cx) {
        let loc = Loc::new(file, row_lines[first]);
        let bytes = serde_json::to_vec(&rec).unwrap_or_default();
        if let Err(e) = c.set.add_json(loc, &bytes) {
            c.errors.push((loc.line(), explain_mapped(m, e)));
        }
    }
    c.errors.sort_by_key(|e| e.0);
    c
}

/// The records a mapping makes of a file's JSON Lines (`bytes`, as
/// [`super::decode`] makes them), made again as the load made them, with
/// the line each is located at, in line order; only those at a line
/// `want` takes are made. Record and split shapes: each line's records
/// ([`parse_chunk`]: `position_in` counts the parsed records before it);
/// step shape: each trajectory at its first row ([`parse_step_rows`]).
/// Lines that no longer parse are passed over.
pub(crate) fn mapped_records(
    name: &str,
    bytes: &[u8],
    m: &crate::schema::mapping::Mapping,
    run_label: Option<&str>,
    want: &dyn Fn(u64) -> bool,
) -> Vec<(u64, serde_json::Value)> {
    use crate::schema::mapping::{Context, Positions, Shape};
    let cx = Context {
        path: name,
        run_label,
        positions: &[],
    };
    // Each line with its number, as the load counts them.
    let lines = bytes
        .split(|&b| b == b'\n')
        .zip(1u64..)
        .filter(|(l, _)| l.len() <= MAX_LINE && !l.iter().all(|b| b.is_ascii_whitespace()));
    let parse = |l: &[u8]| {
        let l = without_bom(l.strip_suffix(b"\r").unwrap_or(l));
        serde_json::from_slice::<serde_json::Value>(l).ok()
    };
    if let Shape::Step { .. } = m.shape {
        let (rows, at): (Vec<_>, Vec<u64>) =
            lines.filter_map(|(l, n)| Some((parse(l)?, n))).unzip();
        return m
            .map_steps(&rows, &cx)
            .into_iter()
            .map(|(first, rec)| (at[first], rec))
            .filter(|(n, _)| want(*n))
            .collect();
    }
    let paths = m.position_paths();
    let mut positions = Positions::default();
    let mut out = Vec::new();
    for (l, n) in lines {
        // Without positions to count, only the lines wanted are parsed.
        if paths.is_empty() && !want(n) {
            continue;
        }
        let Some(v) = parse(l) else { continue };
        let at = positions.next(&paths, &v);
        if want(n) {
            let cx = Context {
                positions: &at,
                ..cx
            };
            out.extend(m.map_record(&v, &cx).into_iter().map(|r| (n, r)));
        }
    }
    out
}

/// A chunk of a file parsed by columns; its records are numbered by row
/// across the file, `base` the rows of the chunks before it.
pub(crate) fn parsed_chunk(
    file: u32,
    (mut set, errors, rows): crate::schema::parquet::ParsedRows,
    base: &mut u64,
) -> Chunk {
    // Chunk line bases are added later.
    for t in &mut set.trajectories {
        t.loc = Loc::new(file, t.loc.line() - *base);
    }
    let errors = errors.into_iter().map(|(l, e)| (l - *base, e)).collect();
    *base += rows;
    Chunk {
        file,
        set,
        errors,
        lines: rows,
        records: rows,
        too_long: None,
        deferred: false,
    }
}

/// `n` of a file's `of.1` units (bytes parsed, rows) as bytes on disk (`of.0`
/// in all).
pub(crate) fn on_disk(n: u64, of: (u64, u64)) -> u64 {
    if of.0 == of.1 {
        n
    } else {
        (u128::from(n) * u128::from(of.0) / u128::from(of.1.max(1))) as u64
    }
}

/// Parses one file's bytes in parallel chunks, counting its records and
/// bytes into the progress counters. The gauge counts bytes on disk: `disk`
/// = (the file's bytes on disk, the bytes parsed here) scales each chunk's
/// when they differ (decompressed or converted); (1, 1) for a file's own.
pub(crate) fn parse_file(
    file: u32,
    name: &str,
    bytes: &[u8],
    disk: (u64, u64),
    opts: &LoadOptions,
) -> Vec<Chunk> {
    use std::sync::atomic::Ordering::Relaxed;
    if let Some(m) = opts
        .mapping
        .as_ref()
        .filter(|m| matches!(m.shape, crate::schema::mapping::Shape::Step { .. }))
    {
        return vec![parse_step_rows(file, name, bytes, m, opts)];
    }
    // Positions count records in file order: one chunk.
    if opts.mapping.as_ref().is_some_and(|m| m.sequential()) {
        return vec![parse_chunk(file, name, bytes, true, opts)];
    }
    let pieces = split_chunks(bytes);
    let n = pieces.len();
    pieces
        .into_par_iter()
        .enumerate()
        .map(|(j, b)| {
            let c = parse_chunk(file, name, b, j + 1 == n, opts);
            if let Some(p) = &opts.progress {
                p.bytes_done
                    .fetch_add(on_disk(b.len() as u64, disk), Relaxed);
                p.records.fetch_add(c.records, Relaxed);
            }
            c
        })
        .collect()
}

/// A line without the UTF-8 byte order mark that Windows tools (PowerShell,
/// Notepad, .NET writers) put at the start of a file: JSON has none.
pub(crate) fn without_bom(line: &[u8]) -> &[u8] {
    line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line)
}
