//! The log format of SPEC §1: record types, validation and loading.
//!
//! Records are parsed with serde into borrowed structs, validated, and stored
//! in flat, interned columns ([`LogSet`]); Parquet is read through polars'
//! decoders; [`frames`] reduces the columns to the per-task aggregates that
//! the analyses share.

mod dense_leaf;
#[doc(hidden)]
pub mod fastjson;
pub mod follow;
pub mod frames;
pub mod inspect;
pub mod load;
pub mod mapping;
mod parquet;
#[doc(hidden)]
pub mod raw;
pub mod rllm;
pub mod summary;
mod validate;

use std::collections::{BTreeMap, HashMap};

pub use load::{load, LoadOptions};

mod ids;
mod logp;
mod records;
mod trajectory;

pub use ids::*;
pub use logp::*;
pub use records::*;
pub use trajectory::*;

/// The record at `loc` in `records`, sorted by place (found by bisection).
pub fn at_loc<T>(records: &[T], loc_of: impl Fn(&T) -> Loc, loc: Loc) -> Option<&T> {
    let i = records.partition_point(|r| loc_of(r) < loc);
    records.get(i).filter(|r| loc_of(r) == loc)
}

/// Validates one JSON record on its own, as the loader would (for fuzzing
/// and tools); cross-record checks (duplicates, conflicts) are not run.
pub fn check_record(bytes: &[u8]) -> Result<(), crate::error::RecordError> {
    let mut set = LogSet::default();
    set.add_json(Loc::new(0, 1), bytes).map(|_| ())
}

/// The top-level scalar fields of a SPEC §1.1 trajectory record (besides `steps`).
pub const TRAJECTORY_FIELDS: &[&str] = &[
    "kind",
    "run",
    "method",
    "benchmark",
    "task",
    "sample",
    "budget",
    "max_budget",
    "success",
    "turns",
    "success_turn",
    "reward",
    "min_turns",
    "train_step",
    "group",
    "termination",
    "seed",
    "category",
];

/// Fields that locate a record read from a `--summarize` summary at the log
/// it summarizes (file as the summarizing load named it, 1-based record).
pub const LOCATION_FIELDS: [&str; 2] = ["log_file", "log_line"];

pub use crate::env::frozenlake::FrozenLakeSpec;

/// Everything loaded from a log set, validated.
#[derive(Debug, Default, Clone)]
pub struct LogSet {
    pub files: Vec<String>,
    pub strings: Interner,
    pub trajectories: Vec<Trajectory>,
    pub steps: Vec<Step>,
    /// Log-probabilities of every step, as two columns: the run (interned)
    /// and the value in nats, a trajectory's from its
    /// [`Trajectory::logp_start`], step after step ([`StepRef::logps`]).
    pub logp_runs: Vec<Id>,
    pub logp_values: Vec<f64>,
    /// Budget fields of the steps that have them, in step order — but for
    /// steps that go on counting down from the step before
    /// ([`StepRef::budget`]): a budget-aware rollout's steps are one entry.
    pub step_budgets: Vec<StepBudget>,
    /// What does not fit in their 3 bytes, of the steps that need it (an
    /// odd turn, a large token count, many log-probabilities), in step
    /// order.
    pub step_extras: Vec<StepExtra>,
    /// Where the log-probability entries are when they are not in
    /// `logp_runs` / `logp_values` ([`LogSet::spill_logps`]).
    pub logp_spill: Option<LogpSpill>,
    pub probes: Vec<Probe>,
    pub candidates: Vec<Candidate>,
    pub checkpoints: Vec<Checkpoint>,
    pub metrics: Vec<(Id, f64)>,
    pub run_decls: Vec<RunDecl>,
    /// Per-task aggregates read from `--summarize` shards.
    pub aggregates: Vec<AggregateRow>,
    /// Method of each run: declared by a `run` record or by its trajectories.
    pub run_methods: BTreeMap<Id, Id>,
    /// `--lenient` skip counts by reason.
    pub skipped: BTreeMap<&'static str, u64>,
    pub unknown_kinds: BTreeMap<String, u64>,
    /// Things worth telling the reader about the load (passed-over files, …).
    pub notes: Vec<String>,
    /// Files found but holding no records to read (rLLM's `meta.json` and
    /// `batch_summary.json`, `.json` files that are not logs, files a
    /// mapping's `files` pattern leaves out), in path order.
    pub ignored_files: Vec<String>,
    /// Per file: the bytes it was loaded from when it is embedded in the
    /// binary (the demo), else nothing (an empty list: every file is on disk).
    pub embedded: Vec<Option<&'static [u8]>>,
    /// While a load runs: the logs that summaries locate records at
    /// ([`Loc::ORIGIN`]); empty once loaded, when `files` names them.
    pub origins: Interner,
    /// `--summarize` summaries this set was read from (empty for raw logs).
    pub summaries: Vec<String>,
    /// `--map`: how its files were translated, which re-reading a record
    /// ([`LogSet::read_record`]) translates again.
    pub mapped: Option<Mapped>,
}

/// How a `--map` load translated its files: the mapping and `--run-label`.
#[derive(Debug, Clone)]
pub struct Mapped {
    pub mapping: std::sync::Arc<mapping::Mapping>,
    pub run_label: Option<String>,
}

impl Mapped {
    /// What a load with `opts` translates by, if anything.
    pub fn of(opts: &LoadOptions) -> Option<Mapped> {
        opts.mapping.as_ref().map(|m| Mapped {
            mapping: m.clone(),
            run_label: opts.inspect.run_label.clone(),
        })
    }
}

impl LogSet {
    pub fn name(&self, id: Id) -> &str {
        self.strings.name(id)
    }
    /// The file a record came from.
    pub fn file_name(&self, loc: Loc) -> &str {
        self.files
            .get(loc.file() as usize)
            .map_or("?", String::as_str)
    }
    pub fn loc_text(&self, loc: Loc) -> String {
        format!("{}:{}", self.file_name(loc), loc.line())
    }
    pub fn steps_of(&self, t: &Trajectory) -> Steps<'_> {
        let span = t.steps().unwrap_or(Span { start: 0, len: 0 });
        Steps {
            set: self,
            steps: &self.steps[span.range()],
            first: span.start as usize,
            logps: LogpSlice {
                runs: &self.logp_runs,
                values: &self.logp_values,
            },
            logp: t.logp_start as usize,
        }
    }
    /// A trajectory's steps with their log-probabilities: the set's own, or,
    /// when they are out of memory ([`LogSet::spill_logps`]), read back
    /// into `window`.
    pub fn steps_with_logps<'a>(
        &'a self,
        t: &Trajectory,
        window: &'a mut LogpWindow,
    ) -> crate::error::Result<Steps<'a>> {
        let mut steps = self.steps_of(t);
        let Some(spill) = &self.logp_spill else {
            return Ok(steps);
        };
        let n: usize = steps.iter().map(|s| s.logp_len()).sum();
        spill.read(t.logp_start as usize, n, window)?;
        steps.logps = LogpSlice {
            runs: &window.runs,
            values: &window.values,
        };
        steps.logp = 0;
        Ok(steps)
    }
    /// Moves the log-probability entries out of memory, into an unlinked
    /// temporary file that [`LogSet::steps_with_logps`] reads back
    /// trajectory by trajectory (an audit reads each once). Where no such
    /// file can be made (or off Unix) they stay in memory. Not for a set
    /// that is merged into afterwards (`--follow`'s): merging appends
    /// entries to memory only.
    pub fn spill_logps(&mut self) {
        if self.logp_spill.is_some() || self.logp_runs.is_empty() {
            return;
        }
        if let Some(spill) = LogpSpill::write(&self.logp_runs, &self.logp_values) {
            self.logp_spill = Some(spill);
            self.logp_runs = Vec::new();
            self.logp_values = Vec::new();
        }
    }
    /// The entry in [`LogSet::step_extras`] of step `index` (it has one).
    fn extra(&self, index: usize) -> &StepExtra {
        StepExtra::of(&self.step_extras, index)
    }
    /// How many log-probability entries step `index` has.
    fn logp_len(&self, index: usize, step: Step) -> usize {
        step.logp_len(index, &self.step_extras)
    }
    pub fn candidates_of(&self, p: &Probe) -> &[Candidate] {
        &self.candidates[p.candidates.range()]
    }
    pub fn metrics_of(&self, c: &Checkpoint) -> &[(Id, f64)] {
        &self.metrics[c.metrics.range()]
    }
    pub fn method_of(&self, run: Id) -> Option<&str> {
        self.run_methods.get(&run).map(|&m| self.name(m))
    }
    /// `--lenient` skips as (total, "2 syntax, 1 type"), when there were any.
    pub fn skipped_summary(&self) -> Option<(u64, String)> {
        let total: u64 = self.skipped.values().sum();
        let parts: Vec<String> = self
            .skipped
            .iter()
            .filter(|(_, n)| **n > 0)
            .map(|(k, n)| format!("{n} {k}"))
            .collect();
        (total > 0).then(|| (total, parts.join(", ")))
    }

    /// Number of loaded records of a kind, by the names used in `inputs.records`.
    pub fn record_counts(&self) -> BTreeMap<&'static str, u64> {
        let mut m = BTreeMap::new();
        m.insert("trajectory", self.trajectories.len() as u64);
        m.insert("probe", self.probes.len() as u64);
        m.insert("checkpoint", self.checkpoints.len() as u64);
        m.insert("run", self.run_decls.len() as u64);
        m
    }
}

#[cfg(test)]
mod tests;
