//! `--follow`: after a full load, read on from where each file stopped.
//! Only plain JSON Lines that grew are read again, and only their new
//! bytes; anything else that changed (a file rewritten, truncated, removed,
//! added, compressed or Parquet) asks for a full reload.

use std::io::{Read, Seek, SeekFrom};
use std::path::PathBuf;

use super::load::{
    discover, io_text, merge_into, parse_file, stamp, Appended, LoadOptions, Tracked, EDGE,
};
use super::LogSet;
use crate::error::{Error, Result};

/// What a follow-up load found.
pub enum More {
    /// Nothing changed since the last load.
    Unchanged,
    /// Records were appended: the whole set with them, and where to go on.
    Grown(Box<LogSet>, Tracked),
    /// Something other than appending happened: load everything again.
    Reload,
}

/// Reads what was appended to the files of `prev` since it was loaded.
pub fn load_more(
    prev: &LogSet,
    tracked: &Tracked,
    paths: &[PathBuf],
    opts: &LoadOptions,
) -> Result<More> {
    let mut notes = Vec::new();
    let files = discover(paths, opts, &mut notes, &mut Vec::new())?;
    let old = &tracked.files;
    if files.len() != old.len()
        || files
            .iter()
            .zip(old)
            .any(|(f, t)| f.0 != t.path || f.1 != t.named)
    {
        return Ok(More::Reload);
    }
    // Records read from summaries are numbered by the logs they summarize,
    // not by the summaries' lines: a changed summary is read again whole.
    if !prev.summaries.is_empty() {
        let changed = old.iter().any(|t| stamp(&t.path) != t.stamp);
        return Ok(if changed {
            More::Reload
        } else {
            More::Unchanged
        });
    }
    let n = prev.files.len();
    let mut lines = vec![0u64; n];
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
            return Ok(More::Reload);
        };
        let from = a.consumed - a.edge.len() as u64;
        if len < a.consumed {
            return Ok(More::Reload);
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
            return Ok(More::Reload);
        }
        let tail = &bytes[a.edge.len()..];
        if let Some(p) = &opts.progress {
            p.bytes_total
                .fetch_add(tail.len() as u64, std::sync::atomic::Ordering::Relaxed);
        }
        let parsed = parse_file(a.index, &name, tail, opts);
        let deferred = parsed.last().is_some_and(|c| c.deferred);
        let added: u64 = parsed.iter().map(|c| c.records).sum();
        let rel = Appended::after(a.index, tail, deferred, added);
        let mut edge = a.edge.clone();
        edge.extend_from_slice(&tail[..rel.consumed as usize]);
        let edge = edge[edge.len().saturating_sub(EDGE)..].to_vec();
        lines[a.index as usize] = a.lines;
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
        return Ok(More::Unchanged);
    }
    let set = merge_into(prev.clone(), &lines, &records, chunks, &prev.files, opts)?;
    Ok(More::Grown(Box::new(set), next))
}
