//! Finding log files: by name and format, directories searched in path order.

use super::*;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Format {
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

pub(crate) fn format_of(path: &Path) -> Option<Format> {
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

/// `--files-from LIST`: one log file per line (blank lines skipped), each
/// relative to the working directory as on the command line.
pub fn read_list(list: &Path) -> Result<Vec<PathBuf>> {
    let text =
        std::fs::read_to_string(list).map_err(|e| Error::file(list.display(), io_text(&e)))?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim_end_matches('\r');
        if line.trim().is_empty() {
            continue;
        }
        let p = PathBuf::from(line);
        if format_of(&p).is_none() {
            return Err(Error::file(
                format!("{}:{}", list.display(), i + 1),
                format!(
                    "{line:?} is not a log file: expected .jsonl, .ndjson, .jsonl.gz, .jsonl.zst, .parquet, .eval or .json"
                ),
            ));
        }
        out.push(p);
    }
    if out.is_empty() {
        return Err(Error::file(list.display(), "lists no log files"));
    }
    Ok(out)
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
            // The report's directory is passed over as logs: one that holds
            // this directory would leave nothing to read.
            if let Some(s) = skip.as_deref() {
                if std::fs::canonicalize(p).is_ok_and(|c| c.starts_with(s)) {
                    return Err(Error::file(
                        p.display(),
                        format!(
                            "the report is to be written here (--out {}), and its directory is never read as logs: write it elsewhere, e.g. --out {}",
                            opts.skip_dir.as_deref().unwrap_or(s).display(),
                            p.join("report").display()
                        ),
                    ));
                }
            }
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
    for p in &opts.listed {
        std::fs::metadata(p).map_err(|e| Error::file(p.display(), io_text(&e)))?;
        files.push((p.clone(), false));
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

pub(super) fn walk(
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
