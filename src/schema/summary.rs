//! `--summarize`: a shard of logs reduced to what every analysis reads, as
//! SPEC §1 records without their texts, so that shards summarized apart
//! (a Ray task each, say) audit together exactly as their logs would.
//!
//! A summary is JSON Lines (zstd-compressed when its name ends in `.zst`):
//! one `summary` record (the load's skip counts, unknown kinds, passed-over
//! files and notes), then every run declaration, trajectory, probe and
//! checkpoint of the shard. Each carries `log_file` and `log_line`, where the
//! summarizing load read it, and the loader locates it there: file order,
//! the tie-breaks that use it and the examples a report cites are those of
//! the logs themselves. A trajectory keeps every number of SPEC §1.1 but
//! its texts (step actions and observations, a step's `reward`, which no
//! analysis reads); values that were derived (turns from the steps,
//! `success_turn`, `termination`) are written out. Numbers go through
//! serde_json's shortest round-trip form and its correctly rounded parse
//! (`float_roundtrip`), so every f64 comes back bit for bit.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::ser::{SerializeMap, SerializeSeq, Serializer};
use serde::Serialize;

use super::{Checkpoint, Loc, LogSet, Probe, RunDecl, StepRef, Steps, Trajectory};
use crate::error::{Error, Result};

/// The `kind` of a summary's first record.
pub const SUMMARY_KIND: &str = "summary";
/// The summary format this build writes and reads.
pub const SUMMARY_VERSION: i64 = 1;

/// What [`write()`] wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Written {
    pub records: u64,
    pub bytes: u64,
}

/// Is `path` a name a full summary is written under (JSON Lines, plain or
/// compressed)? Any other name (`.parquet`) gets the Pass@(K,T) aggregates.
pub fn is_summary_name(path: &Path) -> bool {
    let name = path.to_string_lossy().to_ascii_lowercase();
    [".jsonl", ".jsonl.zst", ".jsonl.gz"]
        .iter()
        .any(|e| name.ends_with(e))
}

/// Writes the summary of `set` to `path` (through a temporary file renamed
/// into place: never a half-written summary).
pub fn write(set: &LogSet, path: &Path) -> Result<Written> {
    let out_err = |e: String| Error::Output {
        path: path.display().to_string(),
        message: format!("cannot write: {e}"),
    };
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    let file = std::fs::File::create(&tmp).map_err(|e| out_err(e.to_string()))?;
    let buffered = std::io::BufWriter::with_capacity(1 << 20, file);
    let name = path.to_string_lossy().to_ascii_lowercase();
    let result = if name.ends_with(".zst") {
        zstd::Encoder::new(buffered, 3)
            .map_err(|e| out_err(e.to_string()))
            .and_then(|mut w| {
                let n = records(set, &mut w).map_err(|e| out_err(e.to_string()))?;
                w.finish()
                    .and_then(|b| b.into_inner().map_err(|e| e.into_error()))
                    .map_err(|e| out_err(e.to_string()))?;
                Ok(n)
            })
    } else if name.ends_with(".gz") {
        let mut w = flate2::write::GzEncoder::new(buffered, flate2::Compression::default());
        records(set, &mut w)
            .and_then(|n| {
                w.finish()?
                    .into_inner()
                    .map_err(|e| e.into_error())
                    .map(|_| n)
            })
            .map_err(|e| out_err(e.to_string()))
    } else {
        let mut w = buffered;
        records(set, &mut w)
            .and_then(|n| w.flush().map(|_| n))
            .map_err(|e| out_err(e.to_string()))
    };
    let records = match result {
        Ok(n) => n,
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            return Err(e);
        }
    };
    std::fs::rename(&tmp, path).map_err(|e| out_err(e.to_string()))?;
    let bytes = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    Ok(Written { records, bytes })
}

/// The note a load that read summaries adds (not carried into a summary of
/// summaries: it is about that load, not the logs).
pub fn summaries_note(set: &LogSet) -> Option<String> {
    let n = set.summaries.len();
    if n == 0 {
        return None;
    }
    let mut shown = set.summaries[..n.min(3)].join(", ");
    if n > 3 {
        shown.push_str(&format!(" and {} more", n - 3));
    }
    Some(format!(
        "read {n} summar{} ({shown}): records are located at the {} log file(s) they summarize",
        if n == 1 { "y" } else { "ies" },
        set.files.len()
    ))
}

/// Every record of the summary, one per line; returns how many.
fn records(set: &LogSet, w: &mut impl Write) -> std::io::Result<u64> {
    let mut n = 0u64;
    let mut line = |w: &mut dyn Write, v: &dyn erased::Json| -> std::io::Result<()> {
        v.write_json(w)?;
        n += 1;
        w.write_all(b"\n")
    };
    let own = summaries_note(set);
    let notes: Vec<&String> = set
        .notes
        .iter()
        .filter(|n| Some(*n) != own.as_ref())
        .collect();
    let header = Header {
        kind: SUMMARY_KIND,
        version: SUMMARY_VERSION,
        tool: concat!("rl-audit ", env!("CARGO_PKG_VERSION")),
        skipped: &set.skipped,
        unknown_kinds: &set.unknown_kinds,
        ignored_files: &set.ignored_files,
        notes: &notes,
    };
    line(w, &header)?;
    for d in &set.run_decls {
        line(w, &RunOut { set, d })?;
    }
    for t in &set.trajectories {
        line(w, &TrajOut::new(set, t))?;
    }
    for p in &set.probes {
        line(w, &ProbeOut { set, p })?;
    }
    for c in &set.checkpoints {
        line(w, &CheckpointOut { set, c })?;
    }
    Ok(n)
}

/// A record serialized straight to a writer.
mod erased {
    pub trait Json {
        fn write_json(&self, w: &mut dyn std::io::Write) -> std::io::Result<()>;
    }
    impl<T: serde::Serialize> Json for T {
        fn write_json(&self, w: &mut dyn std::io::Write) -> std::io::Result<()> {
            serde_json::to_writer(w, self).map_err(std::io::Error::other)
        }
    }
}

#[derive(Serialize)]
struct Header<'a> {
    kind: &'static str,
    version: i64,
    tool: &'static str,
    skipped: &'a std::collections::BTreeMap<&'static str, u64>,
    unknown_kinds: &'a std::collections::BTreeMap<String, u64>,
    ignored_files: &'a [String],
    notes: &'a [&'a String],
}

/// Where a record was read (the summarized load's file and record number).
fn at(set: &LogSet, loc: Loc) -> (&str, u64) {
    (set.file_name(loc), loc.line())
}

/// Ends a record's map with where it was read.
fn end_at<M: SerializeMap>(
    mut m: M,
    set: &LogSet,
    loc: Loc,
) -> std::result::Result<M::Ok, M::Error> {
    let (file, line) = at(set, loc);
    m.serialize_entry("log_file", file)?;
    m.serialize_entry("log_line", &line)?;
    m.end()
}

struct RunOut<'a> {
    set: &'a LogSet,
    d: &'a RunDecl,
}

impl Serialize for RunOut<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(5))?;
        m.serialize_entry("kind", "run")?;
        m.serialize_entry("run", self.set.name(self.d.run))?;
        m.serialize_entry("method", self.set.name(self.d.method))?;
        end_at(m, self.set, self.d.loc)
    }
}

#[derive(Serialize)]
struct TrajOut<'a> {
    kind: &'static str,
    run: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    method: Option<&'a str>,
    benchmark: &'a str,
    task: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    sample: Option<i64>,
    budget: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_budget: Option<u32>,
    success: bool,
    /// Absent for an outcome-only record (SPEC §4.1).
    #[serde(skip_serializing_if = "Option::is_none")]
    turns: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    success_turn: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reward: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    min_turns: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    train_step: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    group: Option<&'a str>,
    termination: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    seed: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    category: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    steps: Option<StepsOut<'a>>,
    log_file: &'a str,
    log_line: u64,
}

impl<'a> TrajOut<'a> {
    fn new(set: &'a LogSet, t: &'a Trajectory) -> TrajOut<'a> {
        let name = |id: Option<super::Id>| id.map(|i| set.name(i));
        let (log_file, log_line) = at(set, t.loc);
        TrajOut {
            kind: "trajectory",
            run: set.name(t.run),
            method: name(t.method()),
            benchmark: set.name(t.benchmark),
            task: set.name(t.task),
            sample: t.sample(),
            budget: t.budget,
            max_budget: t.max_budget(),
            success: t.success,
            turns: t.turns_known.then_some(t.turns),
            // An outcome-only success is solved at its budget by the loader.
            success_turn: t.success_turn().filter(|_| t.turns_known),
            reward: t.reward(),
            min_turns: t.min_turns(),
            train_step: t.train_step(),
            group: name(t.group()),
            termination: t.termination.name(),
            seed: name(t.seed()),
            category: name(t.category()),
            steps: t.steps().map(|_| StepsOut(set.steps_of(t))),
            log_file,
            log_line,
        }
    }
}

struct StepsOut<'a>(Steps<'a>);

impl Serialize for StepsOut<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.0.len()))?;
        for st in self.0 {
            let (budget_total, budget_remaining) = st.budget();
            seq.serialize_element(&StepOut {
                turn: st.turn,
                output_tokens: st.output_tokens(),
                error: st.error(),
                budget_total,
                budget_remaining,
                logp: LogpOut(st),
            })?;
        }
        seq.end()
    }
}

#[derive(Serialize)]
struct StepOut<'a> {
    turn: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    output_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    budget_total: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    budget_remaining: Option<i64>,
    #[serde(skip_serializing_if = "LogpOut::is_empty")]
    logp: LogpOut<'a>,
}

/// `{run: log-probability}` in the order read (a repeated run stays repeated).
struct LogpOut<'a>(StepRef<'a>);

impl LogpOut<'_> {
    fn is_empty(&self) -> bool {
        self.0.logp_len() == 0
    }
}

impl Serialize for LogpOut<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.logp_len()))?;
        for (run, x) in self.0.logps() {
            m.serialize_entry(self.0.set().name(run), &x)?;
        }
        m.end()
    }
}

struct ProbeOut<'a> {
    set: &'a LogSet,
    p: &'a Probe,
}

#[derive(Serialize)]
struct FrozenLakeOut<'a> {
    map: &'a [String],
    pos: usize,
    steps_left: u32,
    slippery: bool,
}

#[derive(Serialize)]
struct CandidateOut<'a> {
    run: &'a str,
    /// The FrozenLake move; a free-text action is not kept (no analysis reads it).
    #[serde(skip_serializing_if = "Option::is_none")]
    action: Option<u8>,
    #[serde(skip_serializing_if = "Option::is_none")]
    score: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    corrects: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    terminal_success: Option<bool>,
}

impl Serialize for ProbeOut<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let (set, p) = (self.set, self.p);
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("kind", "probe")?;
        m.serialize_entry("benchmark", set.name(p.benchmark))?;
        m.serialize_entry("task", set.name(p.task))?;
        m.serialize_entry("state", set.name(p.state))?;
        m.serialize_entry("source", set.name(p.source))?;
        m.serialize_entry("turn", &p.turn)?;
        m.serialize_entry("error", &p.error)?;
        if let Some(fl) = &p.frozenlake {
            m.serialize_entry(
                "frozenlake",
                &FrozenLakeOut {
                    map: &fl.map,
                    pos: fl.pos,
                    steps_left: fl.steps_left,
                    slippery: fl.slippery,
                },
            )?;
        }
        let cands: Vec<CandidateOut> = set
            .candidates_of(p)
            .iter()
            .map(|c| CandidateOut {
                run: set.name(c.run),
                action: c.move_index,
                score: c.score,
                corrects: c.corrects,
                terminal_success: c.terminal_success,
            })
            .collect();
        m.serialize_entry("candidates", &cands)?;
        end_at(m, set, p.loc)
    }
}

struct CheckpointOut<'a> {
    set: &'a LogSet,
    c: &'a Checkpoint,
}

impl Serialize for CheckpointOut<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let (set, c) = (self.set, self.c);
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("kind", "checkpoint")?;
        m.serialize_entry("run", set.name(c.run))?;
        m.serialize_entry("step", &c.step)?;
        for (k, x) in set.metrics_of(c) {
            m.serialize_entry(set.name(*k), x)?;
        }
        end_at(m, set, c.loc)
    }
}

/// After a load that read summaries: every record is located at the log it
/// was first read from, and `files` lists those logs (with any plain log
/// loaded beside the summaries) in path order, as a load of the logs
/// themselves would. `names` are the files this load read; returns, for
/// each, its index in the new list (`None` for a summary).
pub(crate) fn relocate(set: &mut LogSet, names: &[String]) -> Vec<Option<u32>> {
    let mut plain = vec![false; names.len()];
    for loc in locs(set) {
        if loc.file() & Loc::ORIGIN == 0 {
            plain[loc.file() as usize] = true;
        }
    }
    let mut all: Vec<String> = names
        .iter()
        .zip(&plain)
        .filter(|(_, p)| **p)
        .map(|(n, _)| n.clone())
        .chain((0..set.origins.len() as u32).map(|i| set.origins.name(i).to_string()))
        .collect();
    all.sort_by(|a, b| Path::new(a).cmp(Path::new(b)));
    all.dedup();
    let index = |name: &str| {
        all.binary_search_by(|x| Path::new(x).cmp(Path::new(name)))
            .map(|i| i as u32)
            .ok()
    };
    let loaded: Vec<Option<u32>> = names
        .iter()
        .zip(&plain)
        .map(|(n, p)| if *p { index(n) } else { None })
        .collect();
    let origin: Vec<u32> = (0..set.origins.len() as u32)
        .map(|i| index(set.origins.name(i)).unwrap_or(0))
        .collect();
    for loc in locs_mut(set) {
        let file = if loc.file() & Loc::ORIGIN != 0 {
            origin[(loc.file() & !Loc::ORIGIN) as usize]
        } else {
            loaded[loc.file() as usize].unwrap_or(0)
        };
        *loc = Loc::new(file, loc.line());
    }
    set.summaries = names
        .iter()
        .zip(&plain)
        .filter(|(_, p)| !**p)
        .map(|(n, _)| n.clone())
        .collect();
    set.files = all;
    set.origins = super::Interner::default();
    loaded
}

fn locs(set: &LogSet) -> impl Iterator<Item = Loc> + '_ {
    (set.trajectories.iter().map(|t| t.loc))
        .chain(set.probes.iter().map(|p| p.loc))
        .chain(set.checkpoints.iter().map(|c| c.loc))
        .chain(set.run_decls.iter().map(|d| d.loc))
}

fn locs_mut(set: &mut LogSet) -> impl Iterator<Item = &mut Loc> + '_ {
    (set.trajectories.iter_mut().map(|t| &mut t.loc))
        .chain(set.probes.iter_mut().map(|p| &mut p.loc))
        .chain(set.checkpoints.iter_mut().map(|c| &mut c.loc))
        .chain(set.run_decls.iter_mut().map(|d| &mut d.loc))
}
