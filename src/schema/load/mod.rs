//! Loading a log set: finding the files ([`discover`]), reading each once
//! (`decode`), parsing in parallel (`parse`), merging with the checks
//! that span records (`merge`), and re-reading one record on demand
//! (`reread`).

use std::collections::hash_map::Entry;
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use super::validate::Added;
use super::{FastMap, Id, Loc, LogSet, Span};
use crate::error::{Error, RecordError, Result, SkipReason};

mod checks;
mod decode;
mod discover;
mod merge;
mod parse;
mod reread;

pub(crate) use crate::error::io_text;
use checks::cross_checks;
pub(crate) use decode::*;
pub use discover::{discover, is_log_file, read_list};
pub(crate) use discover::{format_of, Format};
pub(crate) use merge::*;
pub(crate) use parse::*;
pub(crate) use reread::stamp;
#[cfg(test)]
pub(crate) use reread::steps_field;
pub use reread::{read_record, steps_text, StepText, Visit};

/// A line longer than this is a file-level failure (SPEC §1.4).
pub const MAX_LINE: usize = 256 << 20;
/// Guard against exhausting memory on absurd inputs.
pub const MAX_RECORDS: u64 = 200_000_000;
/// The piece of a file one parse thread takes at a time. A window's
/// chunks are parsed on both cores and the next window waits for the last
/// of them, so the smaller the chunks the less a core waits at each window's
/// end: 256 KiB took the load + validate stage from 2.49–2.61 to 2.38–2.40 s
/// on gen_large 1.1 M and from 0.60–0.62 to 0.56–0.58 s on `c200k` (1 MiB
/// before; 128 KiB gave no more), the peak unchanged.
const CHUNK: usize = 256 << 10;

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
    /// `--files-from`: log files read as if found in a folder.
    pub listed: Vec<PathBuf>,
    /// Keep every step's log-probabilities (what `--summarize` writes);
    /// otherwise only those an analysis reads, of successful evaluation
    /// rollouts, stay in memory.
    pub all_logps: bool,
    /// Write the log-probabilities out of memory as they are loaded
    /// ([`LogSet::spill_logps`]): for a set nothing is merged into later.
    pub spill_logps: bool,
}

/// Loads a log set: every file read once, parsed in parallel, validated.
pub fn load(paths: &[PathBuf], opts: &LoadOptions) -> Result<LogSet> {
    load_tracked(paths, opts).map(|(set, _)| set)
}

/// [`load`], also noting how far each file was read, so that a later
/// `--follow` load can read only what was appended (`schema::follow`).
pub fn load_tracked(paths: &[PathBuf], opts: &LoadOptions) -> Result<(LogSet, Tracked)> {
    let mut notes = Vec::new();
    let mut ignored = Vec::new();
    let files = discover(paths, opts, &mut notes, &mut ignored)?;
    if files.len() >= Loc::MAX_FILES as usize {
        return Err(Error::Usage(format!(
            "{} log files: at most {} can be read together; audit them in shards (see README: going past one machine)",
            files.len(),
            Loc::MAX_FILES - 1
        )));
    }
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
    // The gauge's bytes: each file's on disk.
    let sizes: Vec<u64> = match &opts.progress {
        Some(p) => {
            let sizes: Vec<u64> = files
                .iter()
                .map(|f| std::fs::metadata(&f.0).map_or(0, |m| m.len()))
                .collect();
            p.bytes_total
                .store(sizes.iter().sum(), std::sync::atomic::Ordering::Relaxed);
            sizes
        }
        None => Vec::new(),
    };
    // Records parsed by columns, counted as they go into the set, with their
    // share of the file's bytes (`of`: the file's bytes on disk and rows).
    let count_rows = |rows: u64, of: (u64, u64)| {
        if let Some(p) = &opts.progress {
            use std::sync::atomic::Ordering::Relaxed;
            p.records.fetch_add(rows, Relaxed);
            p.bytes_done.fetch_add(on_disk(rows, of), Relaxed);
        }
    };
    // One file at a time, each parsed in parallel chunks, while a reader
    // thread reads ahead. Plain JSON Lines come in windows of whole lines,
    // so a big file's bytes are never all in memory beside its records;
    // other files (compressed, Parquet, Inspect) whole.
    let mut names = Vec::new();
    // Chunks go into the set as they are parsed (their memory freed at once).
    let mut merger = Merger::new(LogSet::default(), &[], &[], opts);
    let mut clock = crate::stage::StageClock::from_env();
    let mut tracked = Tracked::default();
    let windowed = |p: &Path| format_of(p) == Some(Format::Jsonl) && appendable_mapping(opts);
    std::thread::scope(|scope| -> Result<()> {
        let (tx, rx) = std::sync::mpsc::sync_channel::<Piece>(1);
        // Parsed windows come back to be read into again: a load holds at
        // most three windows of text, and never frees and reallocates them.
        let (back_tx, back_rx) = std::sync::mpsc::channel::<Vec<u8>>();
        let reader_files = &files;
        let already: std::collections::BTreeSet<PathBuf> = prepared.keys().cloned().collect();
        scope.spawn(move || {
            for (p, _) in reader_files {
                let sent = if already.contains(p) {
                    tx.send(Piece::Whole(Ok(Vec::new()))).is_ok()
                } else if windowed(p) {
                    send_windows(p, opts.window.unwrap_or(WINDOW).max(1), &tx, &back_rx)
                } else if format_of(p) == Some(Format::Parquet) && opts.mapping.is_none() {
                    tx.send(Piece::Whole(crate::schema::parquet::read_file(p)))
                        .is_ok()
                } else {
                    tx.send(Piece::Whole(std::fs::read(p))).is_ok()
                };
                if !sent {
                    break;
                }
            }
        });
        // Locked: the next file is also read beside a file's last window.
        let rx = std::sync::Mutex::new(rx);
        let next = |name: &str| {
            rx.lock()
                .map_err(|_| std::sync::mpsc::RecvError)
                .and_then(|rx| rx.recv())
                .unwrap_or_else(|_| Piece::Whole(Err(std::io::Error::other("the reader stopped"))))
                .into_result()
                .map_err(|e| Error::file(name, io_text(&e)))
        };
        // A file read whole, as its format reads it.
        let read_whole = |name: &str, fmt: Format, named: bool| {
            next(name).and_then(|(raw, _)| decode(name, fmt, raw, opts, named))
        };
        // The next file, read and set up beside this one's last window (a
        // Parquet trajectory file followed by another file read whole).
        let mut ahead: Option<Result<Decoded>> = None;
        for (i, (p, named)) in files.iter().enumerate() {
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
            // Read whole (not in windows of its own bytes): its bytes count
            // in the gauge in shares as it is parsed, exactly once it is done.
            let whole = prepared.contains_key(p) || !windowed(p);
            let size = sizes.get(i).copied().unwrap_or(0);
            let before = opts
                .progress
                .as_ref()
                .map(|p| p.bytes_done.load(std::sync::atomic::Ordering::Relaxed));
            if let Some(prep) = prepared.remove(p) {
                next(&name)?;
                match prep {
                    super::rllm::Prepared::Record(line) => {
                        for c in parse_file(index, &name, &line, (size, line.len() as u64), opts) {
                            merger.push(c, &name)?;
                        }
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
                // The window before, parsed, goes into the set while this
                // one is parsed (the merge would leave a core idle).
                let mut pending: Vec<Chunk> = Vec::new();
                loop {
                    if opts.cancel.is_cancelled() {
                        return Err(Error::Cancelled);
                    }
                    let (bytes, last) = next(&name)?;
                    let (merged, parsed) = rayon::join(
                        || -> Result<()> {
                            for c in std::mem::take(&mut pending) {
                                merger.push(c, &name)?;
                            }
                            Ok(())
                        },
                        || parse_file(index, &name, &bytes, (1, 1), opts),
                    );
                    merged?;
                    // The window before's chunk-local sets are freed: hand that back.
                    crate::stage::release_freed_memory_in_loop();
                    reading.records += parsed.iter().map(|c| c.records).sum::<u64>();
                    if last {
                        if opts.follow {
                            let deferred = parsed.last().is_some_and(|c| c.deferred);
                            file.loaded = Some(reading.finish(index, &bytes, deferred));
                        }
                        let _ = back_tx.send(bytes);
                        for c in parsed {
                            merger.push(c, &name)?;
                        }
                        break;
                    }
                    reading.pass(&bytes);
                    let _ = back_tx.send(bytes);
                    pending = parsed;
                }
                names.push(name);
            } else {
                let decoded = match ahead.take() {
                    Some(d) => d,
                    None => read_whole(&name, fmt, *named),
                };
                match decoded? {
                    Decoded::Skip(note) => {
                        notes.push(note);
                        ignored.push(name);
                    }
                    Decoded::Lines(bytes, more) => {
                        notes.extend(more);
                        let parsed =
                            parse_file(index, &name, &bytes, (size, bytes.len() as u64), opts);
                        drop(bytes);
                        for c in parsed {
                            merger.push(c, &name)?;
                        }
                        names.push(name);
                    }
                    Decoded::Parsed(parts) => {
                        let mut base = 0;
                        let rows = parts.iter().map(|p| p.2).sum();
                        for part in parts {
                            count_rows(part.2, (size, rows));
                            merger.push(parsed_chunk(index, part, &mut base), &name)?;
                        }
                        names.push(name);
                    }
                    Decoded::Trajectories(mut file) => {
                        let mut base = 0;
                        let rows = file.rows() as u64;
                        // The next file, when it is read whole (not an rLLM
                        // episode, not JSON Lines read in windows).
                        let following = files
                            .get(i + 1)
                            .filter(|(q, _)| !prepared.contains_key(q) && !windowed(q));
                        let parsed = file.parse(
                            &name,
                            index,
                            &mut |part| {
                                count_rows(part.2, (size, rows));
                                merger.push(parsed_chunk(index, part, &mut base), &name)
                            },
                            &mut || {
                                let Some((q, named)) = following else {
                                    return;
                                };
                                let name = q.display().to_string();
                                let Some(fmt) = format_of(q) else {
                                    return;
                                };
                                let mut d = read_whole(&name, fmt, *named);
                                if let Ok(Decoded::Trajectories(f)) = &mut d {
                                    f.decode_first();
                                }
                                ahead = Some(d);
                            },
                        );
                        super::dense_leaf::release_scratch();
                        parsed?;
                        names.push(name);
                    }
                }
                // The file's frame and chunk-local sets are freed: hand that back.
                crate::stage::release_freed_memory_in_loop();
            }
            if let (true, Some(pr), Some(before)) = (whole, &opts.progress, before) {
                pr.bytes_done
                    .store(before + size, std::sync::atomic::Ordering::Relaxed);
            }
            tracked.files.push(file);
        }
        Ok(())
    })?;
    clock.lap("load: read, parse, validate");
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
    let mut clock = crate::stage::StageClock::from_env();
    let mut set = merger.finish(&names, opts)?;
    clock.lap("load: checks across records");
    set.notes.extend(notes);
    for r in lenient_skips {
        *set.skipped.entry(r.name()).or_default() += 1;
    }
    // With the files summaries passed over (the same file may be named by two).
    ignored.append(&mut set.ignored_files);
    ignored.sort();
    ignored.dedup();
    set.ignored_files = ignored;
    set.notes.extend(super::summary::summaries_note(&set));
    crate::stage::release_freed_memory();
    Ok((set, tracked))
}

/// What the reader thread hands over: a whole file, or a window of whole
/// lines of a JSON Lines file (`true` for its last).
pub(super) enum Piece {
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
pub const WINDOW: usize = 8 << 20;

/// Sends a file as windows ending at line ends; false when the receiver is gone.
pub(super) fn send_windows(
    path: &Path,
    window: usize,
    tx: &std::sync::mpsc::SyncSender<Piece>,
    recycled: &std::sync::mpsc::Receiver<Vec<u8>>,
) -> bool {
    use std::io::Read;
    let mut file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) => return tx.send(Piece::Window(Err(e))).is_ok(),
    };
    let mut carry: Vec<u8> = Vec::new();
    loop {
        let mut buf = if carry.capacity() > 1 << 20 {
            // A line longer than a window: read on into the same buffer.
            std::mem::take(&mut carry)
        } else {
            // A window the parser is done with (else a new one), after the
            // part line the last window ended in.
            let mut b = recycled.try_recv().unwrap_or_default();
            b.clear();
            b.reserve(carry.len() + window);
            b.extend_from_slice(&carry);
            carry.clear();
            b
        };
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
                carry.extend_from_slice(&buf[i + 1..]);
                buf.truncate(i + 1);
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
pub(super) struct Reading {
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
    pub(crate) files: Vec<TrackedFile>,
}

#[derive(Debug, Clone)]
pub(crate) struct TrackedFile {
    pub(crate) path: PathBuf,
    pub(crate) named: bool,
    pub(crate) stamp: Option<(std::time::SystemTime, u64)>,
    /// Plain JSON Lines that can be read on from where the last load
    /// stopped; None for every other file (a change means a full reload).
    pub(crate) loaded: Option<Appended>,
}

/// Where the next read of an appendable file starts.
#[derive(Debug, Clone)]
pub(crate) struct Appended {
    /// Index into [`LogSet::files`].
    pub(crate) index: u32,
    /// Bytes read: up to the end, or to the start of a half-written last
    /// line left for the writer to finish.
    pub(crate) consumed: u64,
    /// Newlines within those bytes: the next line's number is this + 1.
    pub(crate) lines: u64,
    /// Records in the file so far.
    pub(crate) records: u64,
    /// The last bytes before `consumed`, to notice a file rewritten in place.
    pub(crate) edge: Vec<u8>,
}

impl Appended {
    pub(crate) fn after(index: u32, raw: &[u8], deferred: bool, records: u64) -> Appended {
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
pub(crate) const EDGE: usize = 256;

/// Record-per-line mappings can be read on; step rows are grouped over the
/// whole file.
pub(crate) fn appendable_mapping(opts: &LoadOptions) -> bool {
    opts.mapping.as_ref().is_none_or(|m| !m.sequential())
}

/// Loads one in-memory JSON Lines file (simulations, tools): the same
/// parse, validation and checks as a file on disk.
pub fn load_bytes(name: &str, bytes: Vec<u8>, opts: &LoadOptions) -> Result<LogSet> {
    parse_all(&[name.to_string()], &[bytes], opts)
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
                Decoded::Parsed(_) | Decoded::Trajectories(_) => {
                    Err(Error::file(name, "embedded Parquet is not supported"))
                }
                Decoded::Skip(note) => Err(Error::file(name, note)),
            }
        })
        .collect::<Result<_>>()?;
    let mut set = parse_all(&names, &contents, opts)?;
    set.embedded = sources.iter().map(|s| Some(s.1)).collect();
    Ok(set)
}

pub(super) fn parse_all(
    names: &[String],
    contents: &[Vec<u8>],
    opts: &LoadOptions,
) -> Result<LogSet> {
    if let Some(p) = &opts.progress {
        let total = contents.iter().map(|c| c.len() as u64).sum();
        p.bytes_total
            .store(total, std::sync::atomic::Ordering::Relaxed);
    }
    let chunks = contents
        .iter()
        .enumerate()
        .flat_map(|(i, bytes)| parse_file(i as u32, &names[i], bytes, (1, 1), opts))
        .collect();
    merge(chunks, names, opts)
}
