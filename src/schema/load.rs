//! Finding log files, reading them once, parsing in parallel, and the
//! checks that span records (methods, full budgets, duplicates).

use std::collections::hash_map::Entry;
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use super::validate::Added;
use super::{FastMap, Id, Loc, LogSet, Span};
use crate::error::{Error, RecordError, Result, SkipReason};

/// A line longer than this is a file-level failure (SPEC §1.4).
pub const MAX_LINE: usize = 256 << 20;
/// Guard against exhausting memory on absurd inputs.
pub const MAX_RECORDS: u64 = 200_000_000;
const CHUNK: usize = 4 << 20;

/// Live counters a UI can show while a load runs.
#[derive(Debug, Default)]
pub struct Progress {
    pub bytes_total: std::sync::atomic::AtomicU64,
    pub bytes_done: std::sync::atomic::AtomicU64,
    pub records: std::sync::atomic::AtomicU64,
}

#[derive(Debug, Clone, Default)]
pub struct LoadOptions {
    /// Where to report progress (the TUI's loading gauge).
    pub progress: Option<std::sync::Arc<Progress>>,
    /// Skip bad records (counted by reason) instead of stopping.
    pub lenient: bool,
    /// A report directory being written: never read from it.
    pub skip_dir: Option<PathBuf>,
    /// Live files: a half-written last line is not an error.
    pub follow: bool,
    /// `--map`: source records are translated before validation.
    pub mapping: Option<std::sync::Arc<super::mapping::Mapping>>,
    /// How Inspect eval logs become trajectories.
    pub inspect: super::inspect::InspectOptions,
    /// Bytes per read of a JSON Lines file; default [`WINDOW`] (tests use
    /// small windows to cross many window ends).
    pub window: Option<usize>,
    /// Checked per file and per window: a superseded load stops.
    pub cancel: crate::cancel::Cancel,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Format {
    Jsonl,
    Gzip,
    Zstd,
    Parquet,
    /// Inspect `.eval` archive.
    Eval,
    /// `.json`: an Inspect log, recognised by content.
    Json,
}

/// Is this a file a log set can hold (by its name)? `--follow` watches only these.
pub fn is_log_file(path: &Path) -> bool {
    format_of(path).is_some()
}

pub(super) fn format_of(path: &Path) -> Option<Format> {
    let name = path.file_name()?.to_str()?.to_ascii_lowercase();
    if name.ends_with(".jsonl") || name.ends_with(".ndjson") {
        Some(Format::Jsonl)
    } else if name.ends_with(".jsonl.gz") || name.ends_with(".ndjson.gz") {
        Some(Format::Gzip)
    } else if name.ends_with(".jsonl.zst") || name.ends_with(".ndjson.zst") {
        Some(Format::Zstd)
    } else if name.ends_with(".parquet") {
        Some(Format::Parquet)
    } else if name.ends_with(".eval") {
        Some(Format::Eval)
    } else if name.ends_with(".json") {
        Some(Format::Json)
    } else {
        None
    }
}

/// Expands the command-line paths into the sorted list of log files (SPEC §1).
pub fn discover(
    paths: &[PathBuf],
    opts: &LoadOptions,
    notes: &mut Vec<String>,
    ignored: &mut Vec<String>,
) -> Result<Vec<(PathBuf, bool)>> {
    let skip = opts
        .skip_dir
        .as_ref()
        .and_then(|d| std::fs::canonicalize(d).ok());
    let mut files = Vec::new();
    for p in paths {
        let meta = std::fs::metadata(p).map_err(|e| Error::file(p.display(), io_text(&e)))?;
        if meta.is_dir() {
            let mut found = Vec::new();
            walk(p, skip.as_deref(), &mut found, notes, ignored)?;
            if found.is_empty() {
                return Err(Error::file(
                    p.display(),
                    "no log files found (looked for *.jsonl, *.ndjson, *.jsonl.gz, *.jsonl.zst, *.parquet, *.eval, *.json)",
                ));
            }
            files.extend(found.into_iter().map(|f| (f, false)));
        } else if format_of(p).is_some() {
            files.push((p.clone(), true));
        } else {
            return Err(Error::file(
                p.display(),
                "not a log file: expected .jsonl, .ndjson, .jsonl.gz, .jsonl.zst, .parquet, .eval or .json",
            ));
        }
    }
    // A file named on the command line and found in a directory counts as named.
    files.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
    files.dedup_by(|a, b| a.0 == b.0);
    if let Some(m) = &opts.mapping {
        files.retain(|(p, _)| {
            let name = p.display().to_string();
            let keep = m.reads(&name);
            if !keep {
                notes.push(format!(
                    "{name}: passed over (left out by the `files` / `skip_files` patterns of {})",
                    m.name
                ));
                ignored.push(name);
            }
            keep
        });
    }
    Ok(files)
}

fn walk(
    dir: &Path,
    skip: Option<&Path>,
    out: &mut Vec<PathBuf>,
    notes: &mut Vec<String>,
    ignored: &mut Vec<String>,
) -> Result<()> {
    if let (Some(skip), Ok(c)) = (skip, std::fs::canonicalize(dir)) {
        if c == skip {
            return Ok(());
        }
    }
    let rd = std::fs::read_dir(dir).map_err(|e| Error::file(dir.display(), io_text(&e)))?;
    let mut entries: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for p in entries {
        let Ok(ft) = std::fs::metadata(&p) else {
            continue;
        };
        if ft.is_dir() {
            walk(&p, skip, out, notes, ignored)?;
        } else if format_of(&p).is_some() {
            out.push(p);
        } else if p.extension().is_some_and(|e| e == "json" || e == "eval") {
            notes.push(format!(
                "{}: passed over (not a JSON Lines log)",
                p.display()
            ));
            ignored.push(p.display().to_string());
        }
    }
    Ok(())
}

pub(super) fn io_text(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file or directory".into(),
        std::io::ErrorKind::PermissionDenied => "permission denied".into(),
        _ => e.to_string(),
    }
}

/// A file's bytes as JSON Lines of records, or why it is passed over.
pub(super) enum Decoded {
    Lines(Vec<u8>, Vec<String>),
    /// Already parsed by columns (Parquet trajectories).
    Parsed(Vec<super::parquet::ParsedRows>),
    Skip(String),
}

/// Decompresses (or converts) a file's bytes, read once, into JSON Lines.
/// A `.json` that is not an Inspect log is an error when it was named on the
/// command line and passed over with a note when found in a directory.
pub(super) fn decode(
    name: &str,
    fmt: Format,
    raw: Vec<u8>,
    opts: &LoadOptions,
    named: bool,
) -> Result<Decoded> {
    let lines = |b: Vec<u8>| Ok(Decoded::Lines(b, Vec::new()));
    match fmt {
        Format::Jsonl => lines(raw),
        // A mapping reads the file's own columns, row by row.
        Format::Parquet if opts.mapping.is_some() => {
            lines(super::parquet::read_parquet_records(name, raw)?)
        }
        Format::Parquet => match super::parquet::read_parquet(name, 0, raw)? {
            super::parquet::ParquetData::Lines(b) => lines(b),
            super::parquet::ParquetData::Trajectories(parts) => Ok(Decoded::Parsed(parts)),
            super::parquet::ParquetData::Aggregates(part) => Ok(Decoded::Parsed(vec![*part])),
        },
        Format::Gzip => {
            let mut out = Vec::with_capacity(raw.len() * 4);
            flate2::read::MultiGzDecoder::new(&raw[..])
                .read_to_end(&mut out)
                .map_err(|e| Error::file(name, format!("corrupt or truncated gzip stream: {e}")))?;
            lines(out)
        }
        Format::Zstd => lines(
            zstd::stream::decode_all(&raw[..])
                .map_err(|e| Error::file(name, format!("corrupt or truncated zstd stream: {e}")))?,
        ),
        Format::Eval => {
            let (b, notes) = super::inspect::read(name, &raw, &opts.inspect)?;
            Ok(Decoded::Lines(b, notes))
        }
        // A mapping reads a whole `.json` file as one record.
        Format::Json if opts.mapping.is_some() => {
            let one_line: Vec<u8> = raw
                .iter()
                .map(|&b| if b == b'\n' || b == b'\r' { b' ' } else { b })
                .chain(std::iter::once(b'\n'))
                .collect();
            lines(one_line)
        }
        Format::Json => {
            let is_inspect = serde_json::from_slice::<serde_json::Value>(&raw)
                .map(|v| super::inspect::is_inspect_json(&v))
                .unwrap_or(false);
            if is_inspect {
                let (b, notes) = super::inspect::read(name, &raw, &opts.inspect)?;
                Ok(Decoded::Lines(b, notes))
            } else if named {
                Err(Error::file(name, "not an Inspect eval log (a .json log must be one; JSON Lines files end in .jsonl)"))
            } else {
                Ok(Decoded::Skip(format!(
                    "{name}: passed over (a .json file that is not an Inspect eval log)"
                )))
            }
        }
    }
}

/// One piece of one file, parsed on its own thread.
pub(super) struct Chunk {
    file: u32,
    set: LogSet,
    /// (local line, error), in line order.
    errors: Vec<(u64, RecordError)>,
    /// Lines in this chunk (to number the next chunk's lines).
    lines: u64,
    pub(super) records: u64,
    too_long: Option<u64>,
    /// The chunk ends in a half-written line left for the writer to finish
    /// (`--follow`).
    pub(super) deferred: bool,
}

impl Chunk {
    fn new(file: u32) -> Chunk {
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

fn split_chunks(bytes: &[u8]) -> Vec<&[u8]> {
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

fn parse_chunk(file: u32, name: &str, bytes: &[u8], last: bool, opts: &LoadOptions) -> Chunk {
    let follow = opts.follow;
    let mut c = Chunk::new(file);
    let position_paths = opts
        .mapping
        .as_ref()
        .map(|m| m.position_paths())
        .unwrap_or_default();
    let mut positions = super::mapping::Positions::default();
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
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.iter().all(|b| b.is_ascii_whitespace()) {
            continue;
        }
        c.records += 1;
        let loc = Loc {
            file,
            line: c.lines,
        };
        let added = match &opts.mapping {
            Some(m) => add_mapped(&mut c.set, m, loc, line, |v| {
                let positions = positions.next(&position_paths, v);
                let cx = super::mapping::Context {
                    path: name,
                    run_label: opts.inspect.run_label.as_deref(),
                    positions: &positions,
                };
                m.map_record(v, &cx)
            }),
            None => c.set.add_json(loc, line),
        };
        match added {
            Ok(Added::Record) => {}
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
fn add_mapped(
    set: &mut LogSet,
    m: &super::mapping::Mapping,
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
fn explain_mapped(m: &super::mapping::Mapping, mut e: RecordError) -> RecordError {
    if let Some(src) = m.describe(&e.field) {
        e.message = format!("{} (mapped from {src} by {})", e.message, m.name);
    } else if e.reason == SkipReason::MissingField {
        e.message = format!("{} (mapping {} has no source for it)", e.message, m.name);
    }
    e
}

/// Step-shaped sources: every row of the file is read, rows are grouped
/// into trajectories, each located at its first row.
fn parse_step_rows(
    file: u32,
    name: &str,
    bytes: &[u8],
    m: &super::mapping::Mapping,
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
    let cx = super::mapping::Context {
        path: name,
        run_label: opts.inspect.run_label.as_deref(),
        positions: &[],
    };
    for (first, rec) in m.map_steps(&rows, &cx) {
        let loc = Loc {
            file,
            line: row_lines[first],
        };
        let bytes = serde_json::to_vec(&rec).unwrap_or_default();
        if let Err(e) = c.set.add_json(loc, &bytes) {
            c.errors.push((loc.line, explain_mapped(m, e)));
        }
    }
    c.errors.sort_by_key(|e| e.0);
    c
}

/// Loads a log set: every file read once, parsed in parallel, validated.
pub fn load(paths: &[PathBuf], opts: &LoadOptions) -> Result<LogSet> {
    load_tracked(paths, opts).map(|(set, _)| set)
}

/// [`load`], also noting how far each file was read, so that a later
/// `--follow` load can read only what was appended ([`super::follow`]).
pub fn load_tracked(paths: &[PathBuf], opts: &LoadOptions) -> Result<(LogSet, Tracked)> {
    let mut notes = Vec::new();
    let mut ignored = Vec::new();
    let files = discover(paths, opts, &mut notes, &mut ignored)?;
    // rLLM episode folders: converted in one pass (budgets span every run).
    let mut prepared = match &opts.mapping {
        Some(_) => BTreeMap::new(),
        None => super::rllm::prepare(
            &files,
            opts.inspect.run_label.as_deref(),
            opts.inspect.budget,
            opts.lenient,
            &mut notes,
        )?,
    };
    let mut lenient_skips: Vec<SkipReason> = Vec::new();
    if let Some(p) = &opts.progress {
        let total = files
            .iter()
            .filter_map(|f| std::fs::metadata(&f.0).ok())
            .map(|m| m.len())
            .sum();
        p.bytes_total
            .store(total, std::sync::atomic::Ordering::Relaxed);
    }
    // One file at a time, each parsed in parallel chunks, while a reader
    // thread reads ahead. Plain JSON Lines come in windows of whole lines,
    // so a big file's bytes are never all in memory beside its records;
    // other files (compressed, Parquet, Inspect) whole.
    let mut names = Vec::new();
    let mut chunks = Vec::new();
    let mut tracked = Tracked::default();
    let windowed = |p: &Path| format_of(p) == Some(Format::Jsonl) && appendable_mapping(opts);
    std::thread::scope(|scope| -> Result<()> {
        let (tx, rx) = std::sync::mpsc::sync_channel::<Piece>(1);
        let reader_files = &files;
        let already: std::collections::BTreeSet<PathBuf> = prepared.keys().cloned().collect();
        scope.spawn(move || {
            for (p, _) in reader_files {
                let sent = if already.contains(p) {
                    tx.send(Piece::Whole(Ok(Vec::new()))).is_ok()
                } else if windowed(p) {
                    send_windows(p, opts.window.unwrap_or(WINDOW).max(1), &tx)
                } else {
                    tx.send(Piece::Whole(std::fs::read(p))).is_ok()
                };
                if !sent {
                    break;
                }
            }
        });
        let next = |name: &str| {
            rx.recv()
                .unwrap_or_else(|_| Piece::Whole(Err(std::io::Error::other("the reader stopped"))))
                .into_result()
                .map_err(|e| Error::file(name, io_text(&e)))
        };
        for (p, named) in &files {
            if opts.cancel.is_cancelled() {
                return Err(Error::Cancelled);
            }
            let name = p.display().to_string();
            let fmt = format_of(p).ok_or_else(|| Error::file(&name, "not a log file"))?;
            let mut file = TrackedFile {
                path: p.clone(),
                named: *named,
                stamp: stamp(p),
                loaded: None,
            };
            let index = names.len() as u32;
            if let Some(prep) = prepared.remove(p) {
                next(&name)?;
                match prep {
                    super::rllm::Prepared::Record(line) => {
                        chunks.extend(parse_file(index, &name, &line, opts));
                        names.push(name);
                    }
                    super::rllm::Prepared::Ignored => ignored.push(name),
                    super::rllm::Prepared::Bad(e) if opts.lenient => lenient_skips.push(e.reason),
                    super::rllm::Prepared::Bad(e) => {
                        let what = if e.field.is_empty() {
                            e.message
                        } else {
                            format!("{}: {}", e.field, e.message)
                        };
                        return Err(Error::file(name, what));
                    }
                }
            } else if windowed(p) {
                let mut reading = Reading::default();
                loop {
                    if opts.cancel.is_cancelled() {
                        return Err(Error::Cancelled);
                    }
                    let (bytes, last) = next(&name)?;
                    let parsed = parse_file(index, &name, &bytes, opts);
                    reading.records += parsed.iter().map(|c| c.records).sum::<u64>();
                    if last {
                        if opts.follow {
                            let deferred = parsed.last().is_some_and(|c| c.deferred);
                            file.loaded = Some(reading.finish(index, &bytes, deferred));
                        }
                        chunks.extend(parsed);
                        break;
                    }
                    reading.pass(&bytes);
                    chunks.extend(parsed);
                }
                names.push(name);
            } else {
                let (raw, _) = next(&name)?;
                match decode(&name, fmt, raw, opts, *named)? {
                    Decoded::Skip(note) => {
                        notes.push(note);
                        ignored.push(name);
                    }
                    Decoded::Lines(bytes, more) => {
                        notes.extend(more);
                        chunks.extend(parse_file(index, &name, &bytes, opts));
                        names.push(name);
                    }
                    Decoded::Parsed(parts) => {
                        chunks.extend(parsed_chunks(index, parts));
                        names.push(name);
                    }
                }
            }
            tracked.files.push(file);
        }
        Ok(())
    })?;
    if names.is_empty() {
        let what = paths
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", ");
        return Err(Error::file(
            what,
            "no log files found (only .json files that are not Inspect logs)",
        ));
    }
    let mut set = merge(chunks, &names, opts)?;
    set.notes.extend(notes);
    for r in lenient_skips {
        *set.skipped.entry(r.name()).or_default() += 1;
    }
    ignored.sort();
    set.ignored_files = ignored;
    Ok((set, tracked))
}

/// What the reader thread hands over: a whole file, or a window of whole
/// lines of a JSON Lines file (`true` for its last).
enum Piece {
    Whole(std::io::Result<Vec<u8>>),
    Window(std::io::Result<(Vec<u8>, bool)>),
}

impl Piece {
    fn into_result(self) -> std::io::Result<(Vec<u8>, bool)> {
        match self {
            Piece::Whole(r) => r.map(|b| (b, true)),
            Piece::Window(r) => r,
        }
    }
}

/// Bytes read at a time from a JSON Lines file (a window grows to hold a
/// longer line).
pub const WINDOW: usize = 64 << 20;

/// Sends a file as windows ending at line ends; false when the receiver is gone.
fn send_windows(path: &Path, window: usize, tx: &std::sync::mpsc::SyncSender<Piece>) -> bool {
    use std::io::Read;
    let mut file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) => return tx.send(Piece::Window(Err(e))).is_ok(),
    };
    let mut carry: Vec<u8> = Vec::new();
    loop {
        let mut buf = std::mem::take(&mut carry);
        let want = buf.len() + window;
        let got = (&mut file).take(window as u64).read_to_end(&mut buf);
        let eof = match got {
            Ok(n) => n == 0 || buf.len() < want,
            Err(e) => return tx.send(Piece::Window(Err(e))).is_ok(),
        };
        if eof {
            return tx.send(Piece::Window(Ok((buf, true)))).is_ok();
        }
        match memchr::memrchr(b'\n', &buf) {
            Some(i) => {
                carry = buf.split_off(i + 1);
                if tx.send(Piece::Window(Ok((buf, false)))).is_err() {
                    return false;
                }
            }
            // No line end yet: read on into the same window.
            None => carry = buf,
        }
    }
}

/// How far a windowed JSON Lines file has been read (for `--follow`).
#[derive(Default)]
struct Reading {
    len: u64,
    newlines: u64,
    records: u64,
    /// The last bytes before the current window.
    before: Vec<u8>,
}

impl Reading {
    /// A window that is not the last.
    fn pass(&mut self, window: &[u8]) {
        self.len += window.len() as u64;
        self.newlines += memchr::memchr_iter(b'\n', window).count() as u64;
        self.before
            .extend_from_slice(&window[window.len().saturating_sub(EDGE)..]);
        let cut = self.before.len().saturating_sub(EDGE);
        self.before.drain(..cut);
    }

    /// The last window: where the next `--follow` read starts.
    fn finish(mut self, index: u32, last: &[u8], deferred: bool) -> Appended {
        let rel = Appended::after(index, last, deferred, 0);
        self.before
            .extend_from_slice(&last[..rel.consumed as usize]);
        let cut = self.before.len().saturating_sub(EDGE);
        Appended {
            index,
            consumed: self.len + rel.consumed,
            lines: self.newlines + rel.lines,
            records: self.records,
            edge: self.before[cut..].to_vec(),
        }
    }
}

/// How far each discovered file was read (SPEC §1's file order).
#[derive(Debug, Clone, Default)]
pub struct Tracked {
    pub(super) files: Vec<TrackedFile>,
}

#[derive(Debug, Clone)]
pub(super) struct TrackedFile {
    pub(super) path: PathBuf,
    pub(super) named: bool,
    pub(super) stamp: Option<(std::time::SystemTime, u64)>,
    /// Plain JSON Lines that can be read on from where the last load
    /// stopped; None for every other file (a change means a full reload).
    pub(super) loaded: Option<Appended>,
}

/// Where the next read of an appendable file starts.
#[derive(Debug, Clone)]
pub(super) struct Appended {
    /// Index into [`LogSet::files`].
    pub(super) index: u32,
    /// Bytes read: up to the end, or to the start of a half-written last
    /// line left for the writer to finish.
    pub(super) consumed: u64,
    /// Newlines within those bytes: the next line's number is this + 1.
    pub(super) lines: u64,
    /// Records in the file so far.
    pub(super) records: u64,
    /// The last bytes before `consumed`, to notice a file rewritten in place.
    pub(super) edge: Vec<u8>,
}

impl Appended {
    pub(super) fn after(index: u32, raw: &[u8], deferred: bool, records: u64) -> Appended {
        let consumed = if deferred {
            memchr::memrchr(b'\n', raw).map_or(0, |i| i + 1)
        } else {
            raw.len()
        };
        Appended {
            index,
            consumed: consumed as u64,
            lines: memchr::memchr_iter(b'\n', &raw[..consumed]).count() as u64,
            records,
            edge: raw[consumed.saturating_sub(EDGE)..consumed].to_vec(),
        }
    }
}

/// Bytes kept from before the read position of an appendable file.
pub(super) const EDGE: usize = 256;

/// Record-per-line mappings can be read on; step rows are grouped over the
/// whole file.
pub(super) fn appendable_mapping(opts: &LoadOptions) -> bool {
    opts.mapping.as_ref().is_none_or(|m| !m.sequential())
}

/// Loads files embedded in the binary (the demo): (name, bytes). The set
/// keeps where each file came from, so its records are re-read from there.
pub fn load_sources(sources: &[(&str, &'static [u8])], opts: &LoadOptions) -> Result<LogSet> {
    let names: Vec<String> = sources.iter().map(|s| s.0.to_string()).collect();
    let contents: Vec<Vec<u8>> = sources
        .par_iter()
        .map(|&(name, raw)| {
            let raw = raw.to_vec();
            let fmt =
                format_of(Path::new(name)).ok_or_else(|| Error::file(name, "not a log file"))?;
            match decode(name, fmt, raw, opts, true)? {
                Decoded::Lines(b, _) => Ok(b),
                Decoded::Parsed(_) => Err(Error::file(name, "embedded Parquet is not supported")),
                Decoded::Skip(note) => Err(Error::file(name, note)),
            }
        })
        .collect::<Result<_>>()?;
    let mut set = parse_all(&names, &contents, opts)?;
    set.embedded = sources.iter().map(|s| Some(s.1)).collect();
    Ok(set)
}

fn parse_all(names: &[String], contents: &[Vec<u8>], opts: &LoadOptions) -> Result<LogSet> {
    if let Some(p) = &opts.progress {
        let total = contents.iter().map(|c| c.len() as u64).sum();
        p.bytes_total
            .store(total, std::sync::atomic::Ordering::Relaxed);
    }
    let chunks = contents
        .iter()
        .enumerate()
        .flat_map(|(i, bytes)| parse_file(i as u32, &names[i], bytes, opts))
        .collect();
    merge(chunks, names, opts)
}

/// Chunks from a file parsed by columns; their records are numbered by row.
pub(super) fn parsed_chunks(file: u32, parts: Vec<super::parquet::ParsedRows>) -> Vec<Chunk> {
    let mut base = 0;
    parts
        .into_iter()
        .map(|(mut set, errors, rows)| {
            // Rows were numbered from 1 across the file; chunk line bases are added later.
            for t in &mut set.trajectories {
                t.loc.file = file;
                t.loc.line -= base;
            }
            let errors = errors.into_iter().map(|(l, e)| (l - base, e)).collect();
            base += rows;
            Chunk {
                file,
                set,
                errors,
                lines: rows,
                records: rows,
                too_long: None,
                deferred: false,
            }
        })
        .collect()
}

/// Parses one file's bytes in parallel chunks.
pub(super) fn parse_file(file: u32, name: &str, bytes: &[u8], opts: &LoadOptions) -> Vec<Chunk> {
    use std::sync::atomic::Ordering::Relaxed;
    if let Some(m) = opts
        .mapping
        .as_ref()
        .filter(|m| matches!(m.shape, super::mapping::Shape::Step { .. }))
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
                p.bytes_done.fetch_add(b.len() as u64, Relaxed);
                p.records.fetch_add(c.records, Relaxed);
            }
            c
        })
        .collect()
}

fn merge(chunks: Vec<Chunk>, names: &[String], opts: &LoadOptions) -> Result<LogSet> {
    let zeros = vec![0u64; names.len()];
    merge_into(LogSet::default(), &zeros, &zeros, chunks, names, opts)
}

/// Adds parsed chunks to a set: `lines[f]` lines and `records[f]` records
/// of file f are already in it. Then the cross-record checks over all.
pub(super) fn merge_into(
    mut out: LogSet,
    lines: &[u64],
    records: &[u64],
    chunks: Vec<Chunk>,
    names: &[String],
    opts: &LoadOptions,
) -> Result<LogSet> {
    out.files = names.to_vec();
    for r in SkipReason::ALL {
        out.skipped.entry(r.name()).or_insert(0);
    }
    let mut per_file_records = records.to_vec();
    let mut first_error: Option<(Loc, RecordError)> = None;
    let mut line_base = lines.to_vec();
    let mut total = out.trajectories.len() as u64
        + out.probes.len() as u64
        + out.checkpoints.len() as u64
        + out.run_decls.len() as u64;
    // Room for everything at once: growing by doubling would copy the
    // largest vectors (steps, log-probabilities) several times.
    let sum = |f: &dyn Fn(&LogSet) -> usize| chunks.iter().map(|c| f(&c.set)).sum::<usize>();
    out.trajectories
        .reserve_exact(sum(&|s| s.trajectories.len()));
    out.steps.reserve_exact(sum(&|s| s.steps.len()));
    out.logps.reserve_exact(sum(&|s| s.logps.len()));
    out.probes.reserve_exact(sum(&|s| s.probes.len()));
    out.candidates.reserve_exact(sum(&|s| s.candidates.len()));
    for c in chunks {
        let base = line_base[c.file as usize];
        line_base[c.file as usize] += c.lines;
        per_file_records[c.file as usize] += c.records;
        total += c.records;
        if total > MAX_RECORDS {
            return Err(Error::file(
                &names[c.file as usize],
                format!("more than {MAX_RECORDS} records in the log set; split it (see README: going past one machine)"),
            ));
        }
        if let Some(l) = c.too_long {
            return Err(Error::file(
                &names[c.file as usize],
                format!("line {}: longer than {} MiB", base + l, MAX_LINE >> 20),
            ));
        }
        for (line, e) in c.errors {
            let loc = Loc {
                file: c.file,
                line: base + line,
            };
            if opts.lenient {
                *out.skipped.entry(e.reason.name()).or_default() += 1;
            } else if first_error.is_none() {
                first_error = Some((loc, e));
            }
        }
        append(&mut out, c.set, base);
    }
    // Records read on from several files (--follow) go back into file order,
    // the order a full load has them in.
    if !out.trajectories.is_sorted_by_key(|t| t.loc) {
        out.trajectories.sort_by_key(|t| t.loc);
    }
    if !out.probes.is_sorted_by_key(|p| p.loc) {
        out.probes.sort_by_key(|p| p.loc);
    }
    if !out.checkpoints.is_sorted_by_key(|c| c.loc) {
        out.checkpoints.sort_by_key(|c| c.loc);
    }
    if !out.run_decls.is_sorted_by_key(|d| d.loc) {
        out.run_decls.sort_by_key(|d| d.loc);
    }
    if let Some(i) = per_file_records.iter().position(|&n| n == 0) {
        return Err(Error::file(&names[i], "no records (the file is empty)"));
    }
    let limit = first_error.as_ref().map(|(l, _)| *l);
    if let Some((loc, e)) = cross_checks(&mut out, opts.lenient, limit) {
        return Err(record_error(names, loc, e));
    }
    if let Some((loc, e)) = first_error {
        return Err(record_error(names, loc, e));
    }
    canonicalize_ids(&mut out);
    Ok(out)
}

fn record_error(names: &[String], loc: Loc, error: RecordError) -> Error {
    Error::Record {
        file: names[loc.file as usize].clone(),
        line: loc.line,
        error,
    }
}

/// Appends a chunk-local set, renumbering ids, spans and lines.
fn append(out: &mut LogSet, mut set: LogSet, line_base: u64) {
    let map: Vec<Id> = (0..set.strings.len() as Id)
        .map(|i| out.strings.intern(set.strings.name(i)))
        .collect();
    remap_ids(&mut set, &map);
    let shift = |s: Span, by: usize| Span {
        start: s.start + by as u32,
        len: s.len,
    };
    let (steps0, logp0, cand0, met0) = (
        out.steps.len(),
        out.logps.len(),
        out.candidates.len(),
        out.metrics.len(),
    );
    out.logps.extend(set.logps);
    out.steps.extend(set.steps.into_iter().map(|mut s| {
        s.logp = shift(s.logp, logp0);
        s
    }));
    out.candidates.extend(set.candidates);
    out.metrics.extend(set.metrics);
    out.trajectories
        .extend(set.trajectories.into_iter().map(|mut t| {
            t.loc.line += line_base;
            t.steps = t.steps.map(|s| shift(s, steps0));
            t
        }));
    out.probes.extend(set.probes.into_iter().map(|mut p| {
        p.loc.line += line_base;
        p.candidates = shift(p.candidates, cand0);
        p
    }));
    out.checkpoints
        .extend(set.checkpoints.into_iter().map(|mut c| {
            c.loc.line += line_base;
            c.metrics = shift(c.metrics, met0);
            c
        }));
    out.run_decls.extend(set.run_decls.into_iter().map(|mut d| {
        d.loc.line += line_base;
        d
    }));
    out.aggregates.extend(set.aggregates);
    for (k, n) in set.unknown_kinds {
        *out.unknown_kinds.entry(k).or_default() += n;
    }
}

/// Rewrites every interned id of a set: `map[old] = new`.
fn remap_ids(set: &mut LogSet, map: &[Id]) {
    let m = |id: Id| map[id as usize];
    for (r, _) in &mut set.logps {
        *r = m(*r);
    }
    for c in &mut set.candidates {
        c.run = m(c.run);
    }
    for (k, _) in &mut set.metrics {
        *k = m(*k);
    }
    for t in &mut set.trajectories {
        t.run = m(t.run);
        t.method = t.method.map(m);
        t.benchmark = m(t.benchmark);
        t.task = m(t.task);
        t.group = t.group.map(m);
    }
    for p in &mut set.probes {
        p.benchmark = m(p.benchmark);
        p.task = m(p.task);
        p.state = m(p.state);
        p.source = m(p.source);
    }
    for c in &mut set.checkpoints {
        c.run = m(c.run);
    }
    for d in &mut set.run_decls {
        d.run = m(d.run);
        d.method = m(d.method);
    }
    for a in &mut set.aggregates {
        a.benchmark = m(a.benchmark);
        a.run = m(a.run);
        a.method = a.method.map(m);
        a.task = m(a.task);
    }
    set.run_methods = std::mem::take(&mut set.run_methods)
        .into_iter()
        .map(|(r, x)| (m(r), m(x)))
        .collect();
}

/// Numbers the names in sorted order, so that everything ordered by id is
/// ordered by name, however the set was built (one load, or a load and what
/// `--follow` read on).
fn canonicalize_ids(set: &mut LogSet) {
    let n = set.strings.len() as Id;
    let mut order: Vec<Id> = (0..n).collect();
    order.sort_by(|&a, &b| set.strings.name(a).cmp(set.strings.name(b)));
    if order.iter().enumerate().all(|(i, &o)| i as Id == o) {
        return;
    }
    let mut sorted = super::Interner::default();
    let mut map = vec![0 as Id; n as usize];
    for &old in &order {
        map[old as usize] = sorted.intern(set.strings.name(old));
    }
    remap_ids(set, &map);
    set.strings = sorted;
}

/// Checks that span records, in file order: one method per run, one explicit
/// `max_budget` and `min_turns` per task, no duplicate trajectories. In strict
/// mode returns the first violation before `limit`; in lenient mode drops the
/// offending records and counts them.
fn cross_checks(set: &mut LogSet, lenient: bool, limit: Option<Loc>) -> Option<(Loc, RecordError)> {
    // Events in file order: run declarations and trajectories.
    let mut order: Vec<(Loc, bool, usize)> = set
        .run_decls
        .iter()
        .enumerate()
        .map(|(i, d)| (d.loc, true, i))
        .chain(
            set.trajectories
                .iter()
                .enumerate()
                .map(|(i, t)| (t.loc, false, i)),
        )
        .collect();
    order.sort_unstable_by_key(|x| x.0);
    let mut methods: FastMap<Id, (Id, Loc)> = FastMap::default();
    let mut max_budgets: FastMap<(Id, Id), (u32, Loc)> = FastMap::default();
    let mut min_turns: FastMap<(Id, Id), (u32, Loc)> = FastMap::default();
    type DupKey = (Id, Id, Id, u32, i64, Option<i64>, Option<Id>);
    let mut seen: FastMap<DupKey, Loc> = FastMap::default();
    let mut drop_decl = vec![false; set.run_decls.len()];
    let mut drop_traj = vec![false; set.trajectories.len()];
    for (loc, is_decl, i) in order {
        if !lenient && limit.is_some_and(|l| loc >= l) {
            break;
        }
        let check = if is_decl {
            let d = &set.run_decls[i];
            check_method(&set.strings, &mut methods, d.run, d.method, loc)
        } else {
            let t = &set.trajectories[i];
            let key = (t.benchmark, t.task);
            let dup_key = t.sample.map(|s| {
                (
                    t.run,
                    t.benchmark,
                    t.task,
                    t.budget,
                    s,
                    t.train_step,
                    t.group,
                )
            });
            let mut r = Ok(());
            if let Some(m) = t.method {
                r = check_method(&set.strings, &mut methods, t.run, m, loc);
            }
            if r.is_ok() {
                if let Some(mb) = t.max_budget {
                    r = check_same(&mut max_budgets, key, mb, loc, "max_budget");
                }
            }
            if r.is_ok() {
                if let Some(mt) = t.min_turns {
                    r = check_same(&mut min_turns, key, mt, loc, "min_turns");
                }
            }
            if r.is_ok() {
                if let Some(k) = dup_key {
                    match seen.entry(k) {
                        Entry::Occupied(e) => {
                            r = Err((
                                *e.get(),
                                RecordError::new(
                                    SkipReason::Duplicate,
                                    "sample",
                                    "duplicate trajectory",
                                ),
                            ))
                        }
                        Entry::Vacant(e) => {
                            e.insert(loc);
                        }
                    }
                }
            }
            r
        };
        if let Err((prev, mut e)) = check {
            e.message = format!("{} (first seen at {})", e.message, set.loc_text(prev));
            if !lenient {
                return Some((loc, e));
            }
            *set.skipped.entry(e.reason.name()).or_default() += 1;
            if is_decl {
                drop_decl[i] = true;
            } else {
                drop_traj[i] = true;
            }
        }
    }
    if lenient {
        let mut i = 0;
        set.trajectories.retain(|_| {
            i += 1;
            !drop_traj[i - 1]
        });
        let mut i = 0;
        set.run_decls.retain(|_| {
            i += 1;
            !drop_decl[i - 1]
        });
    }
    set.run_methods = methods
        .into_iter()
        .map(|(r, (m, _))| (r, m))
        .collect::<BTreeMap<_, _>>();
    for a in &set.aggregates {
        if let Some(m) = a.method {
            set.run_methods.entry(a.run).or_insert(m);
        }
    }
    None
}

type Check = std::result::Result<(), (Loc, RecordError)>;

fn check_method(
    strings: &super::Interner,
    methods: &mut FastMap<Id, (Id, Loc)>,
    run: Id,
    method: Id,
    loc: Loc,
) -> Check {
    match methods.entry(run) {
        Entry::Occupied(e) if e.get().0 != method => Err((
            e.get().1,
            RecordError::impossible(
                "method",
                format!(
                    "run {:?} is declared as method {:?} elsewhere, this record says {:?}",
                    strings.name(run),
                    strings.name(e.get().0),
                    strings.name(method)
                ),
            ),
        )),
        Entry::Occupied(_) => Ok(()),
        Entry::Vacant(e) => {
            e.insert((method, loc));
            Ok(())
        }
    }
}

fn check_same(
    map: &mut FastMap<(Id, Id), (u32, Loc)>,
    key: (Id, Id),
    v: u32,
    loc: Loc,
    field: &str,
) -> Check {
    match map.entry(key) {
        Entry::Occupied(e) if e.get().0 != v => Err((
            e.get().1,
            RecordError::impossible(
                field,
                format!(
                    "{v} differs from this task's {field} {} given elsewhere",
                    e.get().0
                ),
            ),
        )),
        Entry::Occupied(_) => Ok(()),
        Entry::Vacant(e) => {
            e.insert((v, loc));
            Ok(())
        }
    }
}

/// Re-reads one record (a trajectory's text for the browser): `name` as
/// listed in [`LogSet::files`], `line` its 1-based record number.
pub fn read_record(name: &str, line: u64) -> Result<serde_json::Value> {
    read_record_from(name, line, None)
}

impl LogSet {
    /// Re-reads the record at `loc` from where it was loaded: its file, or
    /// the embedded bytes it came from (the bundled demo).
    pub fn read_record(&self, loc: Loc) -> Result<serde_json::Value> {
        let embedded = self.embedded.get(loc.file as usize).copied().flatten();
        read_record_from(self.file_name(loc), loc.line, embedded)
    }
}

fn read_record_from(name: &str, line: u64, embedded: Option<&[u8]>) -> Result<serde_json::Value> {
    let path = Path::new(name);
    let fmt = format_of(path).ok_or_else(|| Error::file(name, "not a log file"))?;
    let gone = || {
        Error::file(
            name,
            format!("line {line} is gone (was the file rewritten?)"),
        )
    };
    let parse = |text: &[u8]| {
        serde_json::from_slice(text).map_err(|e| Error::file(name, format!("line {line}: {e}")))
    };
    if fmt == Format::Parquet {
        return match embedded {
            Some(b) => super::parquet::read_row(name, b, line),
            None => {
                let raw = std::fs::read(path).map_err(|e| Error::file(name, io_text(&e)))?;
                super::parquet::read_row(name, &raw, line)
            }
        };
    }
    if fmt == Format::Json && embedded.is_none() {
        if let Some(v) = super::rllm::reread(path)? {
            return Ok(v);
        }
    }
    if fmt == Format::Jsonl && embedded.is_none() {
        // Plain text: stream to the line, holding one buffer at a time.
        let file = std::fs::File::open(path).map_err(|e| Error::file(name, io_text(&e)))?;
        let text = nth_line(std::io::BufReader::with_capacity(1 << 20, file), line)
            .map_err(|e| Error::file(name, io_text(&e)))?
            .ok_or_else(gone)?;
        return parse(&text);
    }
    // Compressed (or embedded): decode once, then keep the text and its line
    // starts for the next record of the same file.
    let cached = RECENT.lock().ok().and_then(|c| {
        c.as_ref()
            .filter(|r| r.name == name && r.stamp == stamp(path))
            .map(|r| r.text.clone())
    });
    let text = match cached {
        Some(t) => t,
        None => {
            let raw = match embedded {
                Some(b) => b.to_vec(),
                None => std::fs::read(path).map_err(|e| Error::file(name, io_text(&e)))?,
            };
            let bytes = match decode(name, fmt, raw, &LoadOptions::default(), true)? {
                Decoded::Lines(b, _) => b,
                Decoded::Parsed(_) | Decoded::Skip(_) => {
                    return Err(Error::file(name, "cannot re-read this record"))
                }
            };
            let mut starts = vec![0usize];
            starts.extend(memchr::memchr_iter(b'\n', &bytes).map(|i| i + 1));
            let t = std::sync::Arc::new((bytes, starts));
            if let Ok(mut c) = RECENT.lock() {
                *c = Some(Recent {
                    name: name.to_string(),
                    stamp: stamp(path),
                    text: t.clone(),
                });
            }
            t
        }
    };
    let (bytes, starts) = (&text.0, &text.1);
    let i = usize::try_from(line.saturating_sub(1)).unwrap_or(usize::MAX);
    let start = *starts
        .get(i)
        .filter(|&&s| s < bytes.len())
        .ok_or_else(gone)?;
    let end = starts.get(i + 1).map_or(bytes.len(), |e| e - 1);
    parse(&bytes[start..end])
}

/// The most recently decoded compressed file, for the trajectory browser.
struct Recent {
    name: String,
    stamp: Option<(std::time::SystemTime, u64)>,
    text: std::sync::Arc<(Vec<u8>, Vec<usize>)>,
}

static RECENT: std::sync::Mutex<Option<Recent>> = std::sync::Mutex::new(None);

/// A file's modification time and size: a cached copy is used only while
/// they are unchanged.
pub(super) fn stamp(path: &Path) -> Option<(std::time::SystemTime, u64)> {
    let m = std::fs::metadata(path).ok()?;
    Some((m.modified().ok()?, m.len()))
}

/// Line `line` (1-based) of a text stream, without its newline.
fn nth_line(mut r: impl std::io::BufRead, line: u64) -> std::io::Result<Option<Vec<u8>>> {
    let mut seen = 1u64;
    let mut out = Vec::new();
    loop {
        let buf = r.fill_buf()?;
        if buf.is_empty() {
            return Ok((seen == line && !out.is_empty()).then_some(out));
        }
        let n = buf.len();
        let mut pos = 0;
        while let Some(i) = memchr::memchr(b'\n', &buf[pos..]) {
            if seen == line {
                out.extend_from_slice(&buf[pos..pos + i]);
                return Ok(Some(out));
            }
            seen += 1;
            pos += i + 1;
        }
        if seen == line {
            out.extend_from_slice(&buf[pos..]);
        }
        r.consume(n);
    }
}
