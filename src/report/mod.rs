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
    let json = json::report(set, audit);
    let mut json_bytes = serde_json::to_vec_pretty(&json)
        .map_err(|e| Error::Internal(format!("JSON encoding: {e}")))?;
    json_bytes.push(b'\n');
    let figs = figures::all(audit);
    let mut md = markdown::report(set, audit, &figs);
    if let Some(p) = preface {
        let at = md.find('\n').map_or(0, |i| i + 1);
        let at = at + md[at..].chars().take_while(|c| *c == '\n').count();
        md.insert_str(at, p);
    }
    let mut files = vec![
        (PathBuf::from("report.md"), md.into_bytes()),
        (PathBuf::from("report.json"), json_bytes),
    ];
    for f in figs {
        files.push((PathBuf::from("figures").join(&f.file), f.svg.into_bytes()));
    }
    if csv {
        for (name, text) in csv::tables(&json) {
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
        let mut order: Vec<&PathBuf> = files.0.iter().map(|f| &f.0).collect();
        order.sort_by_key(|p| p.as_path() == Path::new("report.json"));
        for rel in order {
            let target = dir.join(rel);
            if let Some(parent) = target.parent() {
                std::fs::create_dir_all(parent).map_err(|e| out_err(parent, e))?;
            }
            std::fs::rename(stage.join(rel), &target).map_err(|e| out_err(&target, e))?;
        }
        Ok(())
    })();
    let _ = std::fs::remove_dir_all(&stage);
    result
}
