//! Loading a log set: the one entry point that `--headless`, `--summarize`,
//! the background jobs and the workbench call. It knows where the logs
//! come from ([`Source`]) — paths or the embedded demo — and nothing of
//! the command line.

use std::path::PathBuf;
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::schema::follow::{read_more, Read};
use crate::schema::load::{load_tracked, Progress, Tracked};
use crate::schema::{load, LoadOptions, LogSet};

/// Where the logs come from and how to read them.
#[derive(Debug, Clone, Default)]
pub struct Source {
    /// Files and directories; none means the embedded demo.
    pub paths: Vec<PathBuf>,
    /// `--files-from`: a list of log files, read as if found in a folder.
    pub files_from: Option<PathBuf>,
    /// `--map`.
    pub map: Option<PathBuf>,
    pub lenient: bool,
    pub follow: bool,
    pub inspect: crate::schema::inspect::InspectOptions,
    /// A report directory being written (headless): never read from it.
    pub skip_dir: Option<PathBuf>,
    /// The job's token (the workbench cancels superseded loads).
    pub cancel: crate::cancel::Cancel,
    /// Keep every log-probability (`--summarize`).
    pub all_logps: bool,
    /// Write the log-probabilities out of memory as they are loaded: for a
    /// set nothing is merged into later (not `--follow`'s).
    pub spill_logps: bool,
}

impl Source {
    fn options(&self, progress: Option<Arc<Progress>>) -> Result<LoadOptions> {
        let mapping = match &self.map {
            Some(p) => {
                let text = std::fs::read_to_string(p)
                    .map_err(|e| Error::file(p.display(), e.to_string()))?;
                // `file:line: key: what is wrong`, where the key (or the
                // TOML parser) gives the line.
                let m = crate::schema::mapping::Mapping::parse(&p.display().to_string(), &text)
                    .map_err(|e| match e.line(&text) {
                        Some(l) => Error::file(format!("{}:{l}", p.display()), e.to_string()),
                        None => Error::file(p.display(), format!("bad mapping: {e}")),
                    })?;
                Some(Arc::new(m))
            }
            None => None,
        };
        let listed = match &self.files_from {
            Some(list) => crate::schema::load::read_list(list)?,
            None => Vec::new(),
        };
        Ok(LoadOptions {
            listed,
            lenient: self.lenient,
            skip_dir: self.skip_dir.clone(),
            follow: self.follow,
            progress,
            mapping,
            inspect: self.inspect.clone(),
            window: None,
            cancel: self.cancel,
            all_logps: self.all_logps,
            spill_logps: self.spill_logps && !self.follow,
        })
    }

    /// No paths and no list: the bundled demo.
    pub fn is_demo(&self) -> bool {
        self.paths.is_empty() && self.files_from.is_none()
    }

    /// Loads the log set (the bundled demo when no path is given).
    pub fn load(&self, progress: Option<Arc<Progress>>) -> Result<LogSet> {
        let lo = self.options(progress)?;
        if self.is_demo() {
            crate::demo::load_demo(&lo)
        } else {
            load(&self.paths, &lo)
        }
    }

    /// `--follow`'s read-on: the records appended to the files (named
    /// `files`) since `tracked`, parsed and not merged; `summarized`: the
    /// set read before holds records of summaries.
    pub fn read_on(&self, files: &[String], summarized: bool, tracked: &Tracked) -> Result<Read> {
        let lo = self.options(None)?;
        read_more(files, summarized, tracked, &self.paths, &lo)
    }

    /// For `--follow`: a full load that notes how far each file was read,
    /// to read on from there ([`Source::read_on`]); the demo is not
    /// followed.
    pub fn load_following(
        &self,
        progress: Option<Arc<Progress>>,
    ) -> Result<(LogSet, Option<Tracked>)> {
        let lo = self.options(progress)?;
        if self.is_demo() {
            return Ok((crate::demo::load_demo(&lo)?, None));
        }
        let (set, t) = load_tracked(&self.paths, &lo)?;
        Ok((set, Some(t)))
    }
}
