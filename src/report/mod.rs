//! Headless output: result structs → Markdown, JSON (and later SVG, CSV),
//! written atomically so a failed run never leaves half a report.

pub mod csv;
pub mod figures;
pub mod findings;
pub mod format;
pub mod json;
pub mod markdown;
pub mod md;
pub mod svg;

use std::path::{Path, PathBuf};

use crate::analysis::Audit;
use crate::error::{Error, Result};
use crate::schema::LogSet;

/// The files of one report, relative to the report directory.
pub struct ReportFiles(pub Vec<(PathBuf, Vec<u8>)>);

/// The report's files; `preface` (the guided tour, `--tour`) opens report.md
/// after its title.
pub fn render(
    set: &LogSet,
    audit: &Audit,
    csv: bool,
    preface: Option<&str>,
) -> Result<ReportFiles> {
    let json_bytes = json::report_bytes(set, audit)
        .map_err(|e| Error::Internal(format!("JSON encoding: {e}")))?;
    let figs = figures::all(audit);
    let mut md = markdown::report(set, audit, &figs);
    if let Some(p) = preface {
        let at = md.find('\n').map_or(0, |i| i + 1);
        let at = at + md[at..].chars().take_while(|c| *c == '\n').count();
        md.insert_str(at, p);
    }
    let md = format::no_raw_html(&md);
    let mut files = vec![
        (PathBuf::from("report.md"), md.into_bytes()),
        (PathBuf::from("report.json"), json_bytes),
    ];
    for f in figs {
        files.push((PathBuf::from("figures").join(&f.file), f.svg.into_bytes()));
    }
    if csv {
        // The curves' rows (one a turn) streamed, the other tables whole.
        let curves = json::curve_tables(audit)
            .into_iter()
            .filter_map(|(name, rows)| Some((name.to_string(), csv::streamed_table(rows)?)));
        let mut tables = csv::tables(&json::report_without_curves(set, audit));
        tables.extend(curves);
        tables.sort_by(|a, b| a.0.cmp(&b.0));
        for (name, text) in tables {
            files.push((
                PathBuf::from("csv").join(format!("{name}.csv")),
                text.into_bytes(),
            ));
        }
    }
    Ok(ReportFiles(files))
}

fn out_err(path: &Path, e: std::io::Error) -> Error {
    Error::Output {
        path: path.display().to_string(),
        message: format!("cannot write: {e}"),
    }
}

/// Writes every file to a staging directory beside `dir`, then renames them
/// into place (report.json last), so readers never see a half-written report.
/// A figure or table an earlier report left in `dir` that this one lacks (a
/// benchmark or run no longer in the logs) is removed before report.json is
/// put in place: a pipeline writing to the same folder after each
/// evaluation would otherwise find the old ones beside the new report.
pub fn write_atomic(dir: &Path, files: &ReportFiles) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| out_err(dir, e))?;
    let stage = dir.join(format!(".rl-audit-staging-{}", std::process::id()));
    let result = (|| {
        if stage.exists() {
            std::fs::remove_dir_all(&stage).map_err(|e| out_err(&stage, e))?;
        }
        for (rel, bytes) in &files.0 {
            let p = stage.join(rel);
            if let Some(parent) = p.parent() {
                std::fs::create_dir_all(parent).map_err(|e| out_err(parent, e))?;
            }
            std::fs::write(&p, bytes).map_err(|e| out_err(&p, e))?;
        }
        let json = Path::new("report.json");
        let put = |rel: &Path| -> Result<()> {
            let target = dir.join(rel);
            if let Some(parent) = target.parent() {
                std::fs::create_dir_all(parent).map_err(|e| out_err(parent, e))?;
            }
            std::fs::rename(stage.join(rel), &target).map_err(|e| out_err(&target, e))
        };
        for (rel, _) in files.0.iter().filter(|f| f.0 != json) {
            put(rel)?;
        }
        remove_stale(dir, files)?;
        if files.0.iter().any(|f| f.0 == json) {
            put(json)?;
        }
        Ok(())
    })();
    let _ = std::fs::remove_dir_all(&stage);
    result
}

/// The folders of a report's own files, and their files' extension: only
/// such files there are an earlier report's (anything else is left alone).
const OWN_FOLDERS: [(&str, &str); 2] = [("figures", "svg"), ("csv", "csv")];

/// Removes the files of [`OWN_FOLDERS`] in `dir` that `files` does not hold.
fn remove_stale(dir: &Path, files: &ReportFiles) -> Result<()> {
    let kept: std::collections::BTreeSet<&Path> = files.0.iter().map(|f| f.0.as_path()).collect();
    for (folder, ext) in OWN_FOLDERS {
        let Ok(entries) = std::fs::read_dir(dir.join(folder)) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let rel = Path::new(folder).join(entry.file_name());
            let ours = path.extension().is_some_and(|e| e == ext)
                && entry.file_type().is_ok_and(|t| t.is_file());
            if ours && !kept.contains(rel.as_path()) {
                std::fs::remove_file(&path).map_err(|e| out_err(&path, e))?;
            }
        }
    }
    Ok(())
}
