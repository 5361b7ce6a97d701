//! Re-reading one record on demand (the trajectory view): streamed from
//! plain files, decoded once and kept for compressed ones.

use super::*;

/// Re-reads one record (a trajectory's text for the browser): `name` as
/// listed in [`LogSet::files`], `line` its 1-based record number.
pub fn read_record(name: &str, line: u64) -> Result<serde_json::Value> {
    read_record_from(name, line, None)
}

impl LogSet {
    /// Re-reads the record at `loc` from where it was loaded: its file, or
    /// the embedded bytes it came from (the bundled demo).
    pub fn read_record(&self, loc: Loc) -> Result<serde_json::Value> {
        let embedded = self.embedded.get(loc.file() as usize).copied().flatten();
        read_record_from(self.file_name(loc), loc.line(), embedded)
    }
}

pub(super) fn read_record_from(
    name: &str,
    line: u64,
    embedded: Option<&[u8]>,
) -> Result<serde_json::Value> {
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
            Some(b) => crate::schema::parquet::read_row(name, b, line),
            None => crate::schema::parquet::read_row_in_file(name, path, line),
        };
    }
    if fmt == Format::Json && embedded.is_none() {
        if let Some(v) = crate::schema::rllm::reread(path)? {
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
                Decoded::Parsed(_) | Decoded::Trajectories(_) | Decoded::Skip(_) => {
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
pub(super) struct Recent {
    name: String,
    stamp: Option<(std::time::SystemTime, u64)>,
    text: std::sync::Arc<(Vec<u8>, Vec<usize>)>,
}

pub(super) static RECENT: std::sync::Mutex<Option<Recent>> = std::sync::Mutex::new(None);

/// A file's modification time and size: a cached copy is used only while
/// they are unchanged.
pub(crate) fn stamp(path: &Path) -> Option<(std::time::SystemTime, u64)> {
    let m = std::fs::metadata(path).ok()?;
    Some((m.modified().ok()?, m.len()))
}

/// Line `line` (1-based) of a text stream, without its newline.
pub(super) fn nth_line(
    mut r: impl std::io::BufRead,
    line: u64,
) -> std::io::Result<Option<Vec<u8>>> {
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

impl LogSet {
    /// The step actions of some trajectories (indices into `trajectories`),
    /// re-read from their files: a plain JSON Lines file is streamed once,
    /// other files re-read record by record (a compressed one is decoded
    /// once and kept). Used by `--grep`; the texts are never resident.
    pub fn actions_of(&self, trajs: &[usize]) -> Result<Vec<Vec<String>>> {
        self.records_map(trajs, |v| {
            // Steps without an action are skipped.
            steps_field(v, "action").into_iter().flatten().collect()
        })
    }

    /// Each step's (action, observation) of the trajectories `trajs`, as
    /// text ("" where absent), re-read from their files.
    pub fn step_texts_of(&self, trajs: &[usize]) -> Result<Vec<Vec<(String, String)>>> {
        self.records_map(trajs, |v| {
            let a = steps_field(v, "action");
            let o = steps_field(v, "observation");
            a.into_iter()
                .zip(o)
                .map(|(a, o)| (a.unwrap_or_default(), o.unwrap_or_default()))
                .collect()
        })
    }

    /// `of` each record of `trajs`, re-read from their files in one pass
    /// per file (a plain JSON Lines file is streamed; others go through
    /// [`LogSet::read_record`]); a record that does not parse gives the
    /// default.
    fn records_map<T: Default + Clone>(
        &self,
        trajs: &[usize],
        of: impl Fn(&serde_json::Value) -> T,
    ) -> Result<Vec<T>> {
        let mut out = vec![T::default(); trajs.len()];
        let mut by_file: BTreeMap<u32, Vec<(u64, usize)>> = BTreeMap::new();
        for (k, &i) in trajs.iter().enumerate() {
            let loc = self.trajectories[i].loc;
            by_file.entry(loc.file()).or_default().push((loc.line(), k));
        }
        for (file, mut wanted) in by_file {
            wanted.sort_unstable();
            let name = self.files[file as usize].as_str();
            let plain = self
                .embedded
                .get(file as usize)
                .copied()
                .flatten()
                .is_none()
                && format_of(Path::new(name)) == Some(Format::Jsonl);
            if plain {
                let f = std::fs::File::open(name).map_err(|e| Error::file(name, io_text(&e)))?;
                let mut lines =
                    std::io::BufRead::split(std::io::BufReader::with_capacity(1 << 20, f), b'\n');
                let mut at = 0u64;
                // The current line (several trajectories may share one).
                let mut text: Option<Vec<u8>> = None;
                for (line, k) in wanted {
                    while at < line {
                        text = lines
                            .next()
                            .transpose()
                            .map_err(|e| Error::file(name, io_text(&e)))?;
                        at += 1;
                    }
                    let Some(t) = &text else { break };
                    if let Ok(v) = serde_json::from_slice::<serde_json::Value>(t) {
                        out[k] = of(&v);
                    }
                }
            } else {
                for (line, k) in wanted {
                    let v = self.read_record(Loc::new(file, line))?;
                    out[k] = of(&v);
                }
            }
        }
        Ok(out)
    }
}

/// One field of every step of a record, as text (a non-string as its JSON).
fn steps_field(v: &serde_json::Value, k: &str) -> Vec<Option<String>> {
    v.get("steps")
        .and_then(|s| s.as_array())
        .into_iter()
        .flatten()
        .map(|s| {
            s.get(k)
                .filter(|a| !a.is_null())
                .map(|a| a.as_str().map_or_else(|| a.to_string(), str::to_string))
        })
        .collect()
}
