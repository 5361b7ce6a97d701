//! `--follow`: after a full load, read on from where each file stopped.
//! Only plain JSON Lines that grew are read again, and only their new
//! bytes; anything else that changed (a file rewritten, truncated, removed,
//! added, compressed or Parquet) asks for a full reload.

use std::io::{Read as _, Seek, SeekFrom};
use std::path::PathBuf;

use super::load::{
    discover, io_text, merge_parts, parse_file, preview, stamp, Appended, Chunk, LoadOptions,
    Tracked, EDGE,
};
use super::{at_loc, Loc, LogSet};
use crate::error::{Error, Result};

/// What a follow-up load found.
pub enum More {
    /// Nothing changed since the last load.
    Unchanged,
    /// Records were appended: the whole set with them, where to go on, and
    /// where the appended records are (in file order).
    Grown(Box<LogSet>, Tracked, Vec<Loc>),
    /// Something other than appending happened: load everything again.
    Reload,
}

/// Reads what was appended to the files of `prev` since it was loaded and
/// merges it in.
pub fn load_more(
    prev: &LogSet,
    tracked: &Tracked,
    paths: &[PathBuf],
    opts: &LoadOptions,
) -> Result<More> {
    Ok(
        match read_more(
            &prev.files,
            !prev.summaries.is_empty(),
            tracked,
            paths,
            opts,
        )? {
            Read::Unchanged => More::Unchanged,
            Read::Reload => More::Reload,
            Read::Parsed(batch, next) => {
                let (set, fresh) = (*batch).merge(prev)?;
                More::Grown(Box::new(set), next, fresh)
            }
        },
    )
}

/// What reading on found, before anything is merged.
pub enum Read {
    Unchanged,
    /// The appended records, parsed, and where to go on.
    Parsed(Box<Batch>, Tracked),
    Reload,
}

/// Records appended to the files, parsed but not yet merged into the set:
/// what they are shows at once ([`Batch::preview`]); merging them in
/// ([`Batch::merge`]) costs what the set holds.
pub struct Batch {
    /// Lines and records each file had before them.
    lines: Vec<u64>,
    records: Vec<u64>,
    /// The files that grew.
    grew: Vec<bool>,
    chunks: Vec<Chunk>,
    names: Vec<String>,
    /// How they were read (and are to be merged).
    opts: LoadOptions,
}

/// Parses what was appended to the files (named `files`, read as far as
/// `tracked` says) since they were read: nothing is merged.
/// `summarized`: the set holds records of `--summarize` summaries.
pub fn read_more(
    prev_files: &[String],
    summarized: bool,
    tracked: &Tracked,
    paths: &[PathBuf],
    opts: &LoadOptions,
) -> Result<Read> {
    let mut notes = Vec::new();
    let files = discover(paths, opts, &mut notes, &mut Vec::new())?;
    let old = &tracked.files;
    if files.len() != old.len()
        || files
            .iter()
            .zip(old)
            .any(|(f, t)| f.0 != t.path || f.1 != t.named)
    {
        return Ok(Read::Reload);
    }
    // Records read from summaries are numbered by the logs they summarize,
    // not by the summaries' lines: a changed summary is read again whole.
    if summarized {
        let changed = old.iter().any(|t| stamp(&t.path) != t.stamp);
        return Ok(if changed {
            Read::Reload
        } else {
            Read::Unchanged
        });
    }
    let n = prev_files.len();
    let mut lines = vec![0u64; n];
    let mut grew = vec![false; n];
    // Every file of a successful load had records.
    let mut records = vec![1u64; n];
    let mut chunks = Vec::new();
    let mut next = Tracked::default();
    let mut grown = false;
    for t in old {
        let now = stamp(&t.path);
        let mut nt = t.clone();
        if now == t.stamp {
            next.files.push(nt);
            continue;
        }
        let (Some(a), Some((_, len))) = (&t.loaded, now) else {
            return Ok(Read::Reload);
        };
        let from = a.consumed - a.edge.len() as u64;
        if len < a.consumed {
            return Ok(Read::Reload);
        }
        let name = t.path.display().to_string();
        let mut bytes = Vec::with_capacity((len - from) as usize);
        std::fs::File::open(&t.path)
            .and_then(|mut f| {
                f.seek(SeekFrom::Start(from))?;
                f.read_to_end(&mut bytes)
            })
            .map_err(|e| Error::file(&name, io_text(&e)))?;
        if !bytes.starts_with(&a.edge) {
            return Ok(Read::Reload);
        }
        let tail = &bytes[a.edge.len()..];
        if let Some(p) = &opts.progress {
            p.bytes_total
                .fetch_add(tail.len() as u64, std::sync::atomic::Ordering::Relaxed);
        }
        let parsed = parse_file(a.index, &name, tail, (1, 1), opts);
        let deferred = parsed.last().is_some_and(|c| c.deferred);
        let added: u64 = parsed.iter().map(|c| c.records).sum();
        let rel = Appended::after(a.index, tail, deferred, added);
        let mut edge = a.edge.clone();
        edge.extend_from_slice(&tail[..rel.consumed as usize]);
        let edge = edge[edge.len().saturating_sub(EDGE)..].to_vec();
        lines[a.index as usize] = a.lines;
        grew[a.index as usize] = true;
        records[a.index as usize] = a.records;
        nt.loaded = Some(Appended {
            index: a.index,
            consumed: a.consumed + rel.consumed,
            lines: a.lines + rel.lines,
            records: a.records + added,
            edge,
        });
        nt.stamp = now;
        grown |= !parsed.is_empty();
        chunks.extend(parsed);
        next.files.push(nt);
    }
    if !grown {
        return Ok(Read::Unchanged);
    }
    let batch = Batch {
        lines,
        records,
        grew,
        chunks,
        names: prev_files.to_vec(),
        opts: opts.clone(),
    };
    Ok(Read::Parsed(Box::new(batch), next))
}

/// Merges reads made one after another (oldest first) into `prev`, the set
/// read before the first, in one pass: checked as a full load checks.
pub fn merge_all(batches: Vec<Batch>, prev: &LogSet) -> Result<LogSet> {
    let Some(first) = batches.first() else {
        return Ok(prev.clone());
    };
    let (records, names, opts) = (
        first.records.clone(),
        first.names.clone(),
        first.opts.clone(),
    );
    let parts = batches.into_iter().map(|b| (b.lines, b.chunks)).collect();
    merge_parts(prev.clone(), &records, parts, &names, &opts)
}

impl Batch {
    /// The appended records alone, as a set of their own (file places as
    /// in the whole set; no check across records has run on them).
    pub fn preview(&self) -> LogSet {
        let mut set = preview(&self.chunks, &self.lines, &self.names);
        set.mapped = crate::schema::Mapped::of(&self.opts);
        set
    }

    /// The set `prev` (the one read before) with the records merged in,
    /// checked as a full load checks, and where the appended records are
    /// (file order).
    pub fn merge(self, prev: &LogSet) -> Result<(LogSet, Vec<Loc>)> {
        let (lines, grew) = (self.lines.clone(), self.grew.clone());
        let set = merge_all(vec![self], prev)?;
        let mut fresh = Vec::new();
        for f in (0..grew.len()).filter(|&f| grew[f]) {
            let from = Loc::new(f as u32, lines[f] + 1);
            let to = Loc::new(f as u32 + 1, 0);
            let span = (from, to);
            appended(
                &set.trajectories,
                &prev.trajectories,
                |t| t.loc,
                span,
                &mut fresh,
            );
            appended(&set.probes, &prev.probes, |p| p.loc, span, &mut fresh);
            appended(
                &set.checkpoints,
                &prev.checkpoints,
                |c| c.loc,
                span,
                &mut fresh,
            );
            appended(&set.run_decls, &prev.run_decls, |d| d.loc, span, &mut fresh);
        }
        fresh.sort_unstable();
        Ok((set, fresh))
    }
}

/// The places in `span` of `records` that `had` (the set before) did not
/// hold — a last line read before its newline came is read again — both
/// sorted by place, found by bisection: a follow-up read costs what was
/// appended, not the set.
fn appended<T>(
    records: &[T],
    had: &[T],
    loc: impl Fn(&T) -> Loc,
    (from, to): (Loc, Loc),
    out: &mut Vec<Loc>,
) {
    let a = records.partition_point(|r| loc(r) < from);
    let b = records.partition_point(|r| loc(r) < to);
    let known = |l: Loc| at_loc(had, &loc, l).is_some();
    out.extend(records[a..b].iter().map(&loc).filter(|&l| !known(l)));
}
