//! A trajectory as the load keeps it (96 bytes) and its steps (3 bytes each, the rest read on demand).

use super::*;

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
    pub(super) method: Compact<u32>,
    pub(super) max_budget: Compact<u32>,
    pub(super) success_turn: Compact<u32>,
    pub(super) min_turns: Compact<u32>,
    pub(super) group: Compact<u32>,
    pub(super) seed: Compact<u32>,
    pub(super) category: Compact<u32>,
    /// `None` when the record has no `steps` array (read it through
    /// [`Trajectory::steps`]).
    pub(super) steps: Compact<Span>,
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
    pub(super) sample: i64,
    pub(super) reward: f64,
    pub(super) train_step: i64,
    pub(super) present: u8,
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
    pub(super) tokens: [u8; 2],
    /// Bits 0–1: error (0 absent, 1 false, 2 true); [`Step::BUDGET`],
    /// [`Step::TURN`]; bits 4–7: how many log-probability entries it has
    /// ([`Step::MANY_LOGPS`]: the count is in [`LogSet::step_extras`]).
    pub(super) bits: u8,
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
    pub(super) fn of(extras: &[StepExtra], index: usize) -> &StepExtra {
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
    pub(super) const NO_TOKENS: u16 = 0xFFFF;
    pub(super) const BIG_TOKENS: u16 = 0xFFFE;
    pub(super) const ERROR: u8 = 0b11;
    /// It has `budget_total` or `budget_remaining`: an entry in
    /// [`LogSet::step_budgets`], or its run's first step has one
    /// ([`StepRef::budget`]).
    pub(super) const BUDGET: u8 = 1 << 2;
    /// Its turn is not its position + 1: [`LogSet::step_extras`] has it.
    pub(super) const TURN: u8 = 1 << 3;
    const LOGPS_SHIFT: u32 = 4;
    pub(super) const MANY_LOGPS: u8 = 15;

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
    pub(super) fn tokens(&self) -> u16 {
        u16::from_le_bytes(self.tokens)
    }
    pub fn error(&self) -> Option<bool> {
        match self.bits & Self::ERROR {
            0 => None,
            e => Some(e == 2),
        }
    }
    pub(super) fn logps(&self) -> u8 {
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
    pub(super) set: &'a LogSet,
    pub(super) steps: &'a [Step],
    /// Index of the first in [`LogSet::steps`].
    pub(super) first: usize,
    /// The log-probability entries they are in, and where their first is.
    pub(super) logps: LogpSlice<'a>,
    pub(super) logp: usize,
}

/// Log-probability entries as two columns (runs, values): the set's own, or
/// one trajectory's read back into a [`LogpWindow`].
#[derive(Clone, Copy)]
pub(super) struct LogpSlice<'a> {
    pub(super) runs: &'a [Id],
    pub(super) values: &'a [f64],
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
    pub(super) set: &'a LogSet,
    pub(super) steps: std::slice::Iter<'a, Step>,
    index: usize,
    position: u32,
    pub(super) logps: LogpSlice<'a>,
    pub(super) logp: usize,
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
    pub(super) set: &'a LogSet,
    step: Step,
    /// Its index in [`LogSet::steps`].
    index: u32,
    /// Its first log-probability entry, in `logps`.
    pub(super) logps: LogpSlice<'a>,
    pub(super) logp: u32,
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
