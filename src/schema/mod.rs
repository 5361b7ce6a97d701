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

/// A hash map with a fast non-cryptographic hash, for the per-record
/// lookups of the load (keys come from the user's own logs).
pub type FastMap<K, V> = HashMap<K, V, foldhash::fast::FixedState>;

/// The first item seen under each key (the load's duplicate check): a hash
/// table of item indices alone — 4 bytes and a control byte a key, where a
/// record's key itself would take 72 with its place. Keys are compared in
/// full through `same` and hashed again through `hash_of` (only when the
/// table grows past the capacity it was made with).
pub struct FirstSeen {
    table: hashbrown::HashTable<u32>,
}

impl FirstSeen {
    pub fn with_capacity(n: usize) -> FirstSeen {
        FirstSeen {
            table: hashbrown::HashTable::with_capacity(n),
        }
    }
    /// Item `i`, whose key hashes to `hash`: the earlier item with the same
    /// key (`same(j)`: item j has i's key), else None and i is remembered.
    /// `hash_of(j)` is item j's key's hash.
    pub fn first(
        &mut self,
        hash: u64,
        i: u32,
        same: impl Fn(u32) -> bool,
        hash_of: impl Fn(u32) -> u64,
    ) -> Option<u32> {
        match self.table.entry(hash, |&j| same(j), |&j| hash_of(j)) {
            hashbrown::hash_table::Entry::Occupied(e) => Some(*e.get()),
            hashbrown::hash_table::Entry::Vacant(e) => {
                e.insert(i);
                None
            }
        }
    }
}

/// Interned string id (run, benchmark, task, state, metric, …).
pub type Id = u32;

/// A string table: every distinct name is stored once.
#[derive(Debug, Default, Clone)]
pub struct Interner {
    names: Vec<String>,
    /// A fast non-cryptographic hash: interning runs for every string of
    /// every record (names come from the user's own logs).
    map: FastMap<String, Id>,
    /// The two names interned last, newest first: the names of a step's
    /// log-probabilities alternate between two runs, and a record's names
    /// repeat the record's before it — compared before hashing.
    recent: [Id; 2],
}

impl Interner {
    pub fn intern(&mut self, s: &str) -> Id {
        let [a, b] = self.recent;
        if self.names.get(a as usize).is_some_and(|n| n == s) {
            return a;
        }
        if self.names.get(b as usize).is_some_and(|n| n == s) {
            self.recent = [b, a];
            return b;
        }
        let id = match self.map.get(s) {
            Some(&id) => id,
            None => {
                let id = self.names.len() as Id;
                self.names.push(s.to_string());
                self.map.insert(s.to_string(), id);
                id
            }
        };
        self.recent = [id, a];
        id
    }
    pub fn get(&self, s: &str) -> Option<Id> {
        self.map.get(s).copied()
    }
    pub fn name(&self, id: Id) -> &str {
        &self.names[id as usize]
    }
    pub fn len(&self) -> usize {
        self.names.len()
    }
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }
}

/// Where a record came from: file index into [`LogSet::files`] and 1-based
/// record number (a line of JSON Lines, a row of Parquet), packed in 8 bytes
/// — the file in the top [`Loc::FILE_BITS`], the record number below — so
/// that a [`Trajectory`] is 8 bytes smaller (issue 20). Ordered by file,
/// then record number.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Loc(u64);

impl Loc {
    /// Bits of the file index (the flag [`Loc::ORIGIN`] included).
    pub const FILE_BITS: u32 = 28;
    /// While a load runs: `file` is `ORIGIN | i`, the i-th name of
    /// [`LogSet::origins`] (a record a summary locates at its own log).
    pub const ORIGIN: u32 = 1 << (Self::FILE_BITS - 1);
    /// Files a log set may hold (indices below [`Loc::ORIGIN`]).
    pub const MAX_FILES: u32 = Self::ORIGIN;
    /// The largest record number (68.7 billion: a file of more lines is
    /// refused with its name).
    pub const MAX_LINE: u64 = (1 << (64 - Self::FILE_BITS)) - 1;

    /// `file` below 2 × [`Loc::ORIGIN`], `line` at most [`Loc::MAX_LINE`]
    /// (the loaders check both first).
    pub const fn new(file: u32, line: u64) -> Loc {
        debug_assert!(file < 1 << Self::FILE_BITS && line <= Self::MAX_LINE);
        Loc((file as u64) << (64 - Self::FILE_BITS) | (line & Self::MAX_LINE))
    }
    pub const fn file(self) -> u32 {
        (self.0 >> (64 - Self::FILE_BITS)) as u32
    }
    pub const fn line(self) -> u64 {
        self.0 & Self::MAX_LINE
    }
}

impl std::fmt::Debug for Loc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Loc")
            .field("file", &self.file())
            .field("line", &self.line())
            .finish()
    }
}

/// A half-open index range into one of the [`LogSet`]'s flat vectors.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Span {
    pub start: u32,
    pub len: u32,
}

impl Span {
    pub fn range(self) -> std::ops::Range<usize> {
        self.start as usize..(self.start + self.len) as usize
    }
}

/// A value with one bit pattern set aside to stand for none.
trait Sentinel: Copy + PartialEq {
    const NONE: Self;
}

/// No stored `u32` can be `u32::MAX`: the validator rejects it as too
/// large (turn counts), budgets stop at a million, and interned ids count
/// distinct names.
impl Sentinel for u32 {
    const NONE: u32 = u32::MAX;
}

/// A length of `u32::MAX`: no trajectory has that many steps (the set
/// indexes all its steps in 32 bits).
impl Sentinel for Span {
    const NONE: Span = Span {
        start: 0,
        len: u32::MAX,
    };
}

/// An `Option<T>` in the size of `T` (`Option<u32>` takes 8 bytes,
/// `Option<Span>` 12): the sentinel stands for none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Compact<T>(T);

impl<T: Sentinel> Compact<T> {
    const NONE: Self = Compact(T::NONE);
    fn get(self) -> Option<T> {
        (self.0 != T::NONE).then_some(self.0)
    }
}

impl<T: Sentinel> From<Option<T>> for Compact<T> {
    fn from(v: Option<T>) -> Self {
        debug_assert!(v != Some(T::NONE), "the sentinel stands for none");
        Compact(v.unwrap_or(T::NONE))
    }
}

/// SPEC §1.1: one rollout of one policy on one task.
#[derive(Debug, Clone)]
pub struct Trajectory {
    pub loc: Loc,
    pub run: Id,
    pub benchmark: Id,
    pub task: Id,
    pub budget: u32,
    pub success: bool,
    /// Turns used (`turns`, else the number of steps).
    pub turns: u32,
    // The optional small fields, 4 bytes each (read them through the
    // methods of the same names): `method`, `max_budget`, `success_turn`
    // (first solving turn; set exactly when `success`, defaulting to
    // `turns`), `min_turns`, `group`, `seed` (SPEC §4.3: the training seed
    // of the policy, its text interned) and `category` (SPEC §4.3).
    method: Compact<u32>,
    max_budget: Compact<u32>,
    success_turn: Compact<u32>,
    min_turns: Compact<u32>,
    group: Compact<u32>,
    seed: Compact<u32>,
    category: Compact<u32>,
    /// `None` when the record has no `steps` array (read it through
    /// [`Trajectory::steps`]).
    steps: Compact<Span>,
    /// Where its steps' log-probabilities start in [`LogSet::logp_runs`].
    pub logp_start: u32,
    /// Why the rollout ended: explicit, set by an importer, or derived (SPEC §4.1).
    pub termination: Termination,
    /// False for an outcome-only record (neither `turns` nor `steps`, SPEC
    /// §4.1): it counts only in the native cells of its own budget.
    pub turns_known: bool,
    // `sample`, `reward` and `train_step` (read them through the methods):
    // their presence in one byte beside the other small fields, so the three
    // take 24 bytes where `Option`s would take 48.
    sample: i64,
    reward: f64,
    train_step: i64,
    present: u8,
}

/// SPEC §4.1 `termination`: why a rollout ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Termination {
    Success,
    Budget,
    Wrong,
    Error,
    Invalid,
    Other,
}

impl Termination {
    pub const ALL: [Termination; 6] = [
        Termination::Success,
        Termination::Budget,
        Termination::Wrong,
        Termination::Error,
        Termination::Invalid,
        Termination::Other,
    ];
    pub fn name(self) -> &'static str {
        match self {
            Termination::Success => "success",
            Termination::Budget => "budget",
            Termination::Wrong => "wrong",
            Termination::Error => "error",
            Termination::Invalid => "invalid",
            Termination::Other => "other",
        }
    }
    pub fn parse(s: &str) -> Option<Termination> {
        Self::ALL.into_iter().find(|t| t.name() == s)
    }
}

/// The getter (`t.name()`) and setter (`t.set_name(v)`) of each compact
/// optional field of [`Trajectory`].
macro_rules! optional_fields {
    ($($(#[$doc:meta])* $name:ident, $set:ident: $t:ty;)*) => {
        impl Trajectory {
            $(
                $(#[$doc])*
                pub fn $name(&self) -> Option<$t> {
                    self.$name.get()
                }
                pub fn $set(&mut self, v: Option<$t>) {
                    self.$name = v.into();
                }
            )*
        }
    };
}

optional_fields! {
    method, set_method: Id;
    max_budget, set_max_budget: u32;
    /// First solving turn; set exactly when `success` (defaults to `turns`).
    success_turn, set_success_turn: u32;
    min_turns, set_min_turns: u32;
    group, set_group: Id;
    /// SPEC §4.3: the training seed of the policy (its text, interned).
    seed, set_seed: Id;
    /// SPEC §4.3: the task's category.
    category, set_category: Id;
    /// Where its steps are in [`LogSet::steps`]; `None` when the record
    /// has no `steps` array.
    steps, set_steps: Span;
}

impl Trajectory {
    const SAMPLE: u8 = 1;
    const REWARD: u8 = 2;
    const TRAIN_STEP: u8 = 4;

    /// An evaluation rollout with no optional field set (the loader fills
    /// the rest in; tests build on it).
    pub fn bare(loc: Loc, run: Id, benchmark: Id, task: Id, budget: u32) -> Trajectory {
        Trajectory {
            loc,
            run,
            method: Compact::NONE,
            benchmark,
            task,
            budget,
            max_budget: Compact::NONE,
            success: false,
            turns: 0,
            success_turn: Compact::NONE,
            min_turns: Compact::NONE,
            group: Compact::NONE,
            steps: Compact::NONE,
            logp_start: 0,
            termination: Termination::Wrong,
            turns_known: true,
            seed: Compact::NONE,
            category: Compact::NONE,
            sample: 0,
            reward: 0.0,
            train_step: 0,
            present: 0,
        }
    }
    /// Sets `sample`, `reward` and `train_step`.
    pub fn set_extras(
        &mut self,
        sample: Option<i64>,
        reward: Option<f64>,
        train_step: Option<i64>,
    ) {
        let bit = |on: bool, b: u8| if on { b } else { 0 };
        self.present = bit(sample.is_some(), Self::SAMPLE)
            | bit(reward.is_some(), Self::REWARD)
            | bit(train_step.is_some(), Self::TRAIN_STEP);
        self.sample = sample.unwrap_or(0);
        self.reward = reward.unwrap_or(0.0);
        self.train_step = train_step.unwrap_or(0);
    }
    pub fn sample(&self) -> Option<i64> {
        (self.present & Self::SAMPLE != 0).then_some(self.sample)
    }
    pub fn reward(&self) -> Option<f64> {
        (self.present & Self::REWARD != 0).then_some(self.reward)
    }
    pub fn train_step(&self) -> Option<i64> {
        (self.present & Self::TRAIN_STEP != 0).then_some(self.train_step)
    }
    pub fn is_training(&self) -> bool {
        self.present & Self::TRAIN_STEP != 0
    }
    /// Solved within T turns (SPEC §2.1).
    pub fn solved_within(&self, t: u32) -> bool {
        matches!(self.success_turn(), Some(s) if s <= t)
    }
}

/// SPEC §1.1 `steps[]` element, as stored: texts are re-read on demand and
/// a step's `reward` is validated but not kept. Steps are most of a log
/// set's memory, so a step is 3 bytes (issue 20): its token count in 16
/// bits, its error flag, two flag bits and its number of log-probabilities
/// in 4 bits; what does not fit (a turn that is not its position + 1, more
/// than 2^16 − 3 tokens, 15 or more log-probabilities) is in
/// [`LogSet::step_extras`]. What a step does not hold is found from where
/// it is — read steps through [`LogSet::steps_of`], whose [`StepRef`]s
/// carry them: its log-probabilities follow its trajectory's earlier steps'
/// in [`LogSet::logp_runs`] / [`LogSet::logp_values`] (12 bytes an entry,
/// the value an exact f64) from [`Trajectory::logp_start`]; its
/// `budget_total` / `budget_remaining`, which few logs write, are in
/// [`LogSet::step_budgets`].
#[derive(Debug, Clone, Copy)]
pub struct Step {
    /// The token count, a little-endian u16 (bytes, so that a step is 3
    /// bytes, not 4: 92 MiB over 11 M trajectories' 96 M steps):
    /// [`Step::NO_TOKENS`] when absent, [`Step::BIG_TOKENS`] when in
    /// [`LogSet::step_extras`].
    tokens: [u8; 2],
    /// Bits 0–1: error (0 absent, 1 false, 2 true); [`Step::BUDGET`],
    /// [`Step::TURN`]; bits 4–7: how many log-probability entries it has
    /// ([`Step::MANY_LOGPS`]: the count is in [`LogSet::step_extras`]).
    bits: u8,
}

/// What does not fit in a step's 3 bytes, for the steps that need it;
/// `step` is its index in [`LogSet::steps`]. Each field is read only when
/// the step says so (its turn when `Step::TURN`, its tokens when
/// `Step::BIG_TOKENS`, its count when `Step::MANY_LOGPS`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepExtra {
    pub step: u32,
    pub turn: u32,
    pub tokens: u32,
    pub logp_len: u32,
}

/// A step's `budget_total` and `budget_remaining` (`i32::MIN`: absent), for
/// the steps that have either; `step` is its index in [`LogSet::steps`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepBudget {
    pub step: u32,
    total: i32,
    remaining: i32,
}

impl StepBudget {
    /// Values are in range (validation checks them first); None when both
    /// are absent.
    pub fn new(step: u32, total: Option<i64>, remaining: Option<i64>) -> Option<StepBudget> {
        let field = |v: Option<i64>| v.map_or(i32::MIN, |v| v as i32);
        (total.is_some() || remaining.is_some()).then(|| StepBudget {
            step,
            total: field(total),
            remaining: field(remaining),
        })
    }
    pub fn total(&self) -> Option<i64> {
        (self.total != i32::MIN).then_some(self.total as i64)
    }
    pub fn remaining(&self) -> Option<i64> {
        (self.remaining != i32::MIN).then_some(self.remaining as i64)
    }
}

impl StepExtra {
    /// Step `index`'s entry in `extras` (it has one).
    fn of(extras: &[StepExtra], index: usize) -> &StepExtra {
        let i = extras.partition_point(|e| (e.step as usize) < index);
        debug_assert_eq!(extras[i].step as usize, index);
        &extras[i]
    }
}

impl Step {
    /// The most generated tokens a step may record (validation rejects more).
    pub const MAX_TOKENS: u64 = u32::MAX as u64 - 1;
    /// The largest |budget_total| or |budget_remaining| a step may record.
    pub const MAX_BUDGET_FIELD: i64 = i32::MAX as i64;
    /// The most log-probabilities one step may carry.
    pub const MAX_LOGPS: usize = u16::MAX as usize;
    const NO_TOKENS: u16 = 0xFFFF;
    const BIG_TOKENS: u16 = 0xFFFE;
    const ERROR: u8 = 0b11;
    /// It has `budget_total` or `budget_remaining`: an entry in
    /// [`LogSet::step_budgets`], or its run's first step has one
    /// ([`StepRef::budget`]).
    const BUDGET: u8 = 1 << 2;
    /// Its turn is not its position + 1: [`LogSet::step_extras`] has it.
    const TURN: u8 = 1 << 3;
    const LOGPS_SHIFT: u32 = 4;
    const MANY_LOGPS: u8 = 15;

    /// Values are in range (validation checks them first); `budget`: it has
    /// budget fields (`Step::BUDGET`); `odd_turn`: its turn
    /// is not its position + 1. Returns the step and whether it needs an
    /// entry in [`LogSet::step_extras`] (see [`Step::extra`]).
    pub fn new(
        output_tokens: Option<u64>,
        error: Option<bool>,
        budget: bool,
        odd_turn: bool,
        logp_len: usize,
    ) -> (Step, bool) {
        let tokens = match output_tokens {
            None => Self::NO_TOKENS,
            Some(t) if t >= u64::from(Self::BIG_TOKENS) => Self::BIG_TOKENS,
            Some(t) => t as u16,
        };
        let logps = (logp_len.min(usize::from(Self::MANY_LOGPS))) as u8;
        let step = Step {
            tokens: tokens.to_le_bytes(),
            bits: match error {
                None => 0,
                Some(false) => 1,
                Some(true) => 2,
            } | if budget { Self::BUDGET } else { 0 }
                | if odd_turn { Self::TURN } else { 0 }
                | logps << Self::LOGPS_SHIFT,
        };
        let extra = odd_turn || tokens == Self::BIG_TOKENS || logps == Self::MANY_LOGPS;
        (step, extra)
    }
    /// The entry in [`LogSet::step_extras`] of step `index`, as [`Step::new`]
    /// was given its fields.
    pub fn extra(index: u32, turn: u32, output_tokens: Option<u64>, logp_len: usize) -> StepExtra {
        StepExtra {
            step: index,
            turn,
            tokens: output_tokens.map_or(0, |t| t as u32),
            logp_len: logp_len as u32,
        }
    }
    fn tokens(&self) -> u16 {
        u16::from_le_bytes(self.tokens)
    }
    pub fn error(&self) -> Option<bool> {
        match self.bits & Self::ERROR {
            0 => None,
            e => Some(e == 2),
        }
    }
    fn logps(&self) -> u8 {
        self.bits >> Self::LOGPS_SHIFT
    }
    /// How many log-probability entries it has: it is step `index` of a set
    /// whose [`LogSet::step_extras`] are `extras`.
    pub(crate) fn logp_len(&self, index: usize, extras: &[StepExtra]) -> usize {
        match self.logps() {
            Self::MANY_LOGPS => StepExtra::of(extras, index).logp_len as usize,
            n => usize::from(n),
        }
    }
    /// It keeps no log-probability (the load drops those no analysis reads).
    pub(crate) fn drop_logps(&mut self) {
        self.bits &= !(Self::MANY_LOGPS << Self::LOGPS_SHIFT);
    }
}

/// A trajectory's steps ([`LogSet::steps_of`]): iterate for [`StepRef`]s.
#[derive(Clone, Copy)]
pub struct Steps<'a> {
    set: &'a LogSet,
    steps: &'a [Step],
    /// Index of the first in [`LogSet::steps`].
    first: usize,
    /// The log-probability entries they are in, and where their first is.
    logps: LogpSlice<'a>,
    logp: usize,
}

/// Log-probability entries as two columns (runs, values): the set's own, or
/// one trajectory's read back into a [`LogpWindow`].
#[derive(Clone, Copy)]
struct LogpSlice<'a> {
    runs: &'a [Id],
    values: &'a [f64],
}

impl<'a> Steps<'a> {
    pub fn len(&self) -> usize {
        self.steps.len()
    }
    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }
    pub fn iter(&self) -> StepIter<'a> {
        StepIter {
            set: self.set,
            steps: self.steps.iter(),
            index: self.first,
            position: 0,
            logps: self.logps,
            logp: self.logp,
        }
    }
}

impl<'a> IntoIterator for Steps<'a> {
    type Item = StepRef<'a>;
    type IntoIter = StepIter<'a>;
    fn into_iter(self) -> StepIter<'a> {
        self.iter()
    }
}

pub struct StepIter<'a> {
    set: &'a LogSet,
    steps: std::slice::Iter<'a, Step>,
    index: usize,
    position: u32,
    logps: LogpSlice<'a>,
    logp: usize,
}

impl<'a> Iterator for StepIter<'a> {
    type Item = StepRef<'a>;
    fn next(&mut self) -> Option<StepRef<'a>> {
        let step = *self.steps.next()?;
        let turn = if step.bits & Step::TURN != 0 {
            self.set.extra(self.index).turn
        } else {
            self.position + 1
        };
        let logp_len = self.set.logp_len(self.index, step);
        let r = StepRef {
            set: self.set,
            step,
            index: self.index as u32,
            logps: self.logps,
            logp: self.logp as u32,
            logp_len: logp_len as u32,
            turn,
        };
        self.index += 1;
        self.position += 1;
        self.logp += logp_len;
        Some(r)
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.steps.size_hint()
    }
}

impl ExactSizeIterator for StepIter<'_> {}

/// One step with what is found from where it is: its turn, its
/// log-probabilities, its budget fields.
#[derive(Clone, Copy)]
pub struct StepRef<'a> {
    set: &'a LogSet,
    step: Step,
    /// Its index in [`LogSet::steps`].
    index: u32,
    /// Its first log-probability entry, in `logps`.
    logps: LogpSlice<'a>,
    logp: u32,
    logp_len: u32,
    pub turn: u32,
}

impl<'a> StepRef<'a> {
    pub fn error(&self) -> Option<bool> {
        self.step.error()
    }
    pub fn output_tokens(&self) -> Option<u64> {
        match self.step.tokens() {
            Step::NO_TOKENS => None,
            Step::BIG_TOKENS => Some(u64::from(self.set.extra(self.index as usize).tokens)),
            t => Some(u64::from(t)),
        }
    }
    /// Its entries' runs and values. (Steps of a set whose entries are out
    /// of memory carry theirs only when read through
    /// [`LogSet::steps_with_logps`].)
    fn entries(&self) -> (&'a [Id], &'a [f64]) {
        let r = self.logp as usize..self.logp as usize + self.logp_len as usize;
        debug_assert!(
            r.is_empty() || r.end <= self.logps.runs.len(),
            "log-probabilities not read back"
        );
        (
            self.logps.runs.get(r.clone()).unwrap_or_default(),
            self.logps.values.get(r).unwrap_or_default(),
        )
    }
    /// Its log-probability under `run`: the first entry for it.
    pub fn logp_of(&self, run: Id) -> Option<f64> {
        let (runs, values) = self.entries();
        runs.iter().position(|&x| x == run).map(|i| values[i])
    }
    /// Its (run, log-probability) entries, in the order read.
    pub fn logps(&self) -> impl Iterator<Item = (Id, f64)> + 'a {
        let (runs, values) = self.entries();
        runs.iter().copied().zip(values.iter().copied())
    }
    pub fn logp_len(&self) -> usize {
        self.logp_len as usize
    }
    /// The log set it is in.
    pub fn set(&self) -> &'a LogSet {
        self.set
    }
    /// Its (`budget_total`, `budget_remaining`): its entry in
    /// [`LogSet::step_budgets`], or — a step without one goes on from the
    /// steps before it in its trajectory (validation keeps no entry for a
    /// step whose total is the step before's and whose remaining is one
    /// less) — the entry of the run's first step, its remaining less one a
    /// step since.
    pub fn budget(&self) -> (Option<i64>, Option<i64>) {
        if self.step.bits & Step::BUDGET == 0 {
            return (None, None);
        }
        let index = self.index;
        let i = self.set.step_budgets.partition_point(|b| b.step <= index);
        let b = &self.set.step_budgets[i - 1];
        if b.step == index {
            return (b.total(), b.remaining());
        }
        let since = i64::from(index - b.step);
        (b.total(), b.remaining().map(|r| r - since))
    }
}

/// Log-probability entries written out of memory: an unlinked temporary
/// file of 12-byte entries (the run's id, then the value's bits, both
/// little-endian), in entry order. Ids renumbered after they were written
/// (the load puts them in name order at its end) are renumbered as they
/// are read back, by `map`.
#[derive(Debug, Clone)]
pub struct LogpSpill {
    file: std::sync::Arc<std::fs::File>,
    len: usize,
    map: Option<std::sync::Arc<Vec<Id>>>,
}

/// What [`LogSet::steps_with_logps`] reads one trajectory's entries into:
/// kept and reused from trajectory to trajectory.
#[derive(Debug, Default)]
pub struct LogpWindow {
    runs: Vec<Id>,
    values: Vec<f64>,
    /// The file's bytes last read: entries `at..` of the spill whose file
    /// is at address `of` — read ahead while the reads go forward.
    bytes: Vec<u8>,
    at: usize,
    of: usize,
    /// Where the last read ended (entries).
    end: usize,
}

impl LogpSpill {
    const ENTRY: usize = 12;

    /// An empty spill file, or `None` where none can be made (or off Unix).
    #[cfg(unix)]
    pub(crate) fn create() -> Option<LogpSpill> {
        static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let path = std::env::temp_dir().join(format!(
            "rl-audit-logps-{}-{}",
            std::process::id(),
            N.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
            .ok()?;
        // Unlinked at once: the file goes when the process does.
        std::fs::remove_file(&path).ok()?;
        Some(LogpSpill {
            file: std::sync::Arc::new(file),
            len: 0,
            map: None,
        })
    }
    #[cfg(not(unix))]
    pub(crate) fn create() -> Option<LogpSpill> {
        None
    }

    fn write(runs: &[Id], values: &[f64]) -> Option<LogpSpill> {
        let mut s = LogpSpill::create()?;
        s.append(runs, values).ok()?;
        Some(s)
    }

    /// Entries written so far.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Writes entries after those already written (ids as they are now).
    pub(crate) fn append(&mut self, runs: &[Id], values: &[f64]) -> std::io::Result<()> {
        debug_assert!(
            self.map.is_none(),
            "entries are appended before any renumbering"
        );
        const AT_ONCE: usize = 1 << 16;
        let mut bytes = Vec::with_capacity(AT_ONCE.min(runs.len()) * Self::ENTRY);
        for (r, v) in runs.chunks(AT_ONCE).zip(values.chunks(AT_ONCE)) {
            bytes.clear();
            for (r, v) in r.iter().zip(v) {
                bytes.extend_from_slice(&r.to_le_bytes());
                bytes.extend_from_slice(&v.to_bits().to_le_bytes());
            }
            #[cfg(unix)]
            std::os::unix::fs::FileExt::write_all_at(
                &*self.file,
                &bytes,
                (self.len * Self::ENTRY) as u64,
            )?;
            self.len += r.len();
        }
        Ok(())
    }

    /// Forgets the entries from `len` on.
    pub(crate) fn truncate(&mut self, len: usize) {
        self.len = self.len.min(len);
    }

    /// Every entry back in memory (what a set falls back to when the file
    /// cannot grow).
    pub(crate) fn read_all(&self) -> crate::error::Result<(Vec<Id>, Vec<f64>)> {
        let mut w = LogpWindow::default();
        self.read(0, self.len, &mut w)?;
        Ok((w.runs, w.values))
    }

    /// Ids renumbered: `map[old] = new`.
    pub(crate) fn remap(&mut self, map: &[Id]) {
        let composed = match &self.map {
            Some(m) => m.iter().map(|&i| map[i as usize]).collect(),
            None => map.to_vec(),
        };
        self.map = Some(std::sync::Arc::new(composed));
    }

    /// Entries `start..start + n` into `w`.
    fn read(&self, start: usize, n: usize, w: &mut LogpWindow) -> crate::error::Result<()> {
        let failed = |what: String| {
            crate::error::Error::file("(the log-probabilities' temporary file)", what)
        };
        if start + n > self.len {
            return Err(failed(format!(
                "entries {start}..{} past its {}",
                start + n,
                self.len
            )));
        }
        // A scan that goes forward (the likelihood's, trajectory by
        // trajectory in load order, skipping other runs' and benchmarks')
        // reads AHEAD entries (192 KB) at a time, not one trajectory's: a
        // 1 M audit made 360,106 reads, now 2,212. Other reads read what
        // they need.
        const AHEAD: usize = 16 << 10;
        let of = std::sync::Arc::as_ptr(&self.file) as usize;
        let held = w.of == of && w.at <= start && start + n <= w.at + w.bytes.len() / Self::ENTRY;
        if !held {
            let forward = w.of == of && start >= w.end && start - w.end <= AHEAD;
            let m = if forward {
                n.max(AHEAD).min(self.len - start)
            } else {
                n
            };
            w.bytes.resize(m * Self::ENTRY, 0);
            #[cfg(unix)]
            std::os::unix::fs::FileExt::read_exact_at(
                &*self.file,
                &mut w.bytes,
                (start * Self::ENTRY) as u64,
            )
            .map_err(|e| failed(e.to_string()))?;
            (w.at, w.of) = (start, of);
        }
        w.end = start + n;
        w.runs.clear();
        w.values.clear();
        let from = (start - w.at) * Self::ENTRY;
        for e in w.bytes[from..from + n * Self::ENTRY].chunks_exact(Self::ENTRY) {
            let (r, v) = e.split_at(4);
            let r = Id::from_le_bytes(r.try_into().expect("4 bytes"));
            w.runs.push(match &self.map {
                Some(m) => m[r as usize],
                None => r,
            });
            w.values.push(f64::from_bits(u64::from_le_bytes(
                v.try_into().expect("8 bytes"),
            )));
        }
        Ok(())
    }
}

pub use crate::env::frozenlake::FrozenLakeSpec;

/// SPEC §1.2: one evaluated state with candidate next actions.
#[derive(Debug, Clone)]
pub struct Probe {
    pub loc: Loc,
    pub benchmark: Id,
    pub task: Id,
    pub state: Id,
    pub source: Id,
    pub turn: u32,
    pub error: bool,
    pub frozenlake: Option<FrozenLakeSpec>,
    pub candidates: Span,
}

#[derive(Debug, Clone)]
pub struct Candidate {
    pub run: Id,
    /// The action as a FrozenLake move (0=left 1=down 2=right 3=up), when it is one.
    pub move_index: Option<u8>,
    pub score: Option<f64>,
    pub corrects: Option<bool>,
    pub terminal_success: Option<bool>,
}

/// SPEC §1.3: one evaluation point during training.
#[derive(Debug, Clone)]
pub struct Checkpoint {
    pub loc: Loc,
    pub run: Id,
    pub step: i64,
    /// Range into [`LogSet::metrics`]: (metric name, value).
    pub metrics: Span,
}

/// A `run` record declaring a run's method.
#[derive(Debug, Clone)]
pub struct RunDecl {
    pub loc: Loc,
    pub run: Id,
    pub method: Id,
}

/// One (benchmark, run, task, budget) group of evaluation rollouts reduced
/// to what Pass@(K,T) needs: mergeable across shards (counts add, success
/// turns concatenate).
#[derive(Debug, Clone, PartialEq)]
pub struct AggregateRow {
    pub benchmark: Id,
    pub run: Id,
    pub method: Option<Id>,
    pub task: Id,
    pub budget: u32,
    pub full_budget: u32,
    pub min_turns: Option<u32>,
    pub n: u64,
    pub success_turns: Vec<u32>,
    /// Outcome-only rollouts (unknown turns) and their successes.
    pub outcome_only: u64,
    pub outcome_only_solved: u64,
}

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
mod tests {
    use super::*;

    /// Steps that count their budget down from the step before keep no
    /// entry of their own, and every step reads back the fields it was
    /// written with: runs broken by a repeated remaining, a step without
    /// fields, a missing total, a new total; a trajectory's first step
    /// never goes on from the trajectory before.
    #[test]
    fn budgets_counted_down_are_one_entry_and_read_back_as_written() {
        let one = |t: Option<i64>, r: Option<i64>| (t, r);
        let first = [
            one(Some(10), Some(10)),
            one(Some(10), Some(9)),
            one(Some(10), Some(8)),
            one(Some(10), Some(8)),
            one(Some(10), Some(7)),
            one(None, None),
            one(Some(10), Some(5)),
            one(None, Some(4)),
            one(Some(10), Some(3)),
            one(Some(9), Some(2)),
            one(Some(9), Some(1)),
        ];
        // Would go on from the first trajectory's last step.
        let second = [one(Some(9), Some(0)), one(Some(9), Some(-1))];
        let line = |steps: &[(Option<i64>, Option<i64>)], task: &str| {
            let steps: Vec<serde_json::Value> = steps
                .iter()
                .map(|&(t, r)| {
                    let mut s = serde_json::json!({"action": "a"});
                    if let Some(t) = t {
                        s["budget_total"] = t.into();
                    }
                    if let Some(r) = r {
                        s["budget_remaining"] = r.into();
                    }
                    s
                })
                .collect();
            serde_json::json!({"run": "r", "benchmark": "b", "task": task, "budget": 20,
                "success": false, "steps": steps, "train_step": 1})
            .to_string()
        };
        let text = format!("{}\n{}\n", line(&first, "t1"), line(&second, "t2"));
        let set = load::load_bytes("a.jsonl", text.into_bytes(), &Default::default()).unwrap();
        // Entries: steps 1, 4, 7, 8, 9 and 10 of the first; the second's first.
        assert_eq!(set.step_budgets.len(), 7);
        for (t, want) in set.trajectories.iter().zip([&first[..], &second[..]]) {
            let got: Vec<_> = set.steps_of(t).iter().map(|s| s.budget()).collect();
            assert_eq!(got, want);
        }
    }

    /// The two names interned last are compared before the table is
    /// looked up: names alternating, repeating, coming back after others
    /// and new ones each get the one id of their name, numbered in order
    /// of first appearance, each stored once.
    #[test]
    fn interning_gives_each_name_one_id_whatever_came_just_before() {
        let mut i = Interner::default();
        let names = ["a", "b", "a", "b", "b", "c", "a", "d", "c", "", "a", ""];
        let ids: Vec<Id> = names.iter().map(|n| i.intern(n)).collect();
        assert_eq!(ids, [0, 1, 0, 1, 1, 2, 0, 3, 2, 4, 0, 4]);
        assert_eq!(i.len(), 5);
        for (n, id) in names.iter().zip(&ids) {
            assert_eq!(i.name(*id), *n);
            assert_eq!(i.get(n), Some(*id));
        }
        // An empty table: the remembered ids name nothing yet.
        let mut e = Interner::default();
        assert_eq!(e.intern("x"), 0);
        assert_eq!(e.intern("y"), 1);
    }

    /// Reads forward (read ahead), with gaps shorter and longer than what
    /// is read ahead, backward, longer than it, to the file's end, and
    /// from two files by turns through one window: each gives the entries
    /// written, and a read ahead serves the reads it holds.
    #[cfg(unix)]
    #[test]
    fn spilled_entries_read_back_in_any_order_are_the_entries_written() {
        let n = 50_000;
        let runs: Vec<Id> = (0..n).map(|i| (i % 7) as Id).collect();
        let values: Vec<f64> = (0..n).map(|i| -(i as f64) * 0.001 - 0.5).collect();
        let (a, b) = (
            LogpSpill::write(&runs, &values).expect("a temporary file"),
            LogpSpill::write(&values.iter().map(|_| 3).collect::<Vec<_>>(), &values)
                .expect("a temporary file"),
        );
        let mut w = LogpWindow::default();
        let mut check = |spill: &LogpSpill, start: usize, len: usize| {
            spill.read(start, len, &mut w).unwrap();
            let want: Vec<Id> = if std::ptr::eq(spill, &a) {
                runs[start..start + len].to_vec()
            } else {
                vec![3; len]
            };
            assert_eq!(w.runs, want, "{start}+{len}");
            assert_eq!(w.values, values[start..start + len], "{start}+{len}");
            (w.at, w.bytes.len() / LogpSpill::ENTRY)
        };
        // Forward: the first read reads what it needs, the next reads ahead
        // and the ones after it are served from there.
        assert_eq!(check(&a, 0, 10).0, 0);
        assert_eq!(check(&a, 10, 5).0, 10);
        assert_eq!(check(&a, 15, 8).0, 10);
        assert_eq!(check(&a, 40, 12).0, 10);
        // A gap shorter than a read ahead, past what is held: read ahead
        // again; one longer: a read of what it needs.
        assert_eq!(check(&a, 20_000, 9).0, 20_000);
        assert_eq!(check(&a, 45_000, 6), (45_000, 6));
        // Backward, then forward again, longer than a read ahead.
        assert_eq!(check(&a, 300, 4).0, 300);
        assert_eq!(check(&a, 310, 20_000).0, 310);
        // Reads ahead of 16 K entries, the last cut at the file's end and
        // serving a read at its end.
        assert_eq!(check(&a, 30_000, 5), (30_000, 16 << 10));
        assert_eq!(check(&a, 46_380, 5), (46_380, 3_620));
        assert_eq!(check(&a, 49_997, 3).0, 46_380);
        // Another file through the same window: never served from the
        // first one's bytes.
        assert_eq!(check(&b, 49_997, 3).0, 49_997);
        assert_eq!(check(&a, 49_997, 3).0, 49_997);
        assert_eq!(check(&b, 100, 3).0, 100);
        assert!(a.read(49_999, 2, &mut w).is_err());
    }

    #[test]
    fn a_step_stays_small_and_keeps_its_optional_fields() {
        // Steps are most of a log set's memory (issue 20: a few bytes each).
        assert_eq!(std::mem::size_of::<Step>(), 3);
        assert_eq!(std::mem::size_of::<StepBudget>(), 12);
        assert!(std::mem::size_of::<Trajectory>() <= 96);
        assert_eq!(std::mem::size_of::<Loc>(), 8);
        // A location keeps its file and line, flag included, and orders by
        // file, then line.
        let far = Loc::new(Loc::ORIGIN | (Loc::MAX_FILES - 1), Loc::MAX_LINE);
        assert_eq!((far.file(), far.line()), ((1 << 28) - 1, (1 << 36) - 1));
        let mut locs = [(3, 1), (0, Loc::MAX_LINE), (3, 0), (1, 7), (0, 2)];
        let mut packed: Vec<Loc> = locs.iter().map(|&(f, l)| Loc::new(f, l)).collect();
        locs.sort();
        packed.sort();
        let back: Vec<(u32, u64)> = packed.iter().map(|l| (l.file(), l.line())).collect();
        assert_eq!(back, locs);
        let (full, extra) = Step::new(Some(0), Some(true), true, true, 2);
        assert!(extra);
        assert_eq!(full.error(), Some(true));
        assert_eq!(full.logps(), 2);
        assert_eq!(full.tokens(), 0);
        assert_eq!(full.bits & !Step::ERROR, Step::BUDGET | Step::TURN | 2 << 4);
        let (bare, extra) = Step::new(None, None, false, false, 0);
        assert!(!extra);
        assert_eq!(bare.error(), None);
        assert_eq!(bare.tokens(), Step::NO_TOKENS);
        assert_eq!(bare.bits, 0);
        // The largest counts held in the step itself, and the first that are not.
        let (s, extra) = Step::new(Some(0xFFFD), Some(false), false, false, 14);
        assert!(!extra);
        assert_eq!(
            (s.tokens(), s.logps(), s.error()),
            (0xFFFD, 14, Some(false))
        );
        let (mut s, extra) = Step::new(Some(0xFFFE), None, false, false, 15);
        assert!(extra);
        assert_eq!(
            (s.tokens(), s.logps()),
            (Step::BIG_TOKENS, Step::MANY_LOGPS)
        );
        s.drop_logps();
        assert_eq!(
            (s.tokens(), s.logps(), s.error()),
            (Step::BIG_TOKENS, 0, None)
        );
        let b = StepBudget::new(7, Some(5), Some(-1)).unwrap();
        assert_eq!((b.step, b.total(), b.remaining()), (7, Some(5), Some(-1)));
        let half = StepBudget::new(8, None, Some(0)).unwrap();
        assert_eq!((half.total(), half.remaining()), (None, Some(0)));
        assert_eq!(StepBudget::new(9, None, None), None);
    }
}
