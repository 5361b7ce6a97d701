//! One JSON record → a validated record appended to a (chunk-local) [`LogSet`].

use serde_json::Value;

use super::raw::{diagnose_types, ActionValue, RawCandidate, RawRecord, RawStep};
use super::{
    Candidate, Checkpoint, FrozenLakeSpec, Loc, LogSet, Probe, RunDecl, Span, Step, StepBudget,
    Termination, Trajectory,
};
use crate::error::{RecordError, SkipReason};

/// The largest budget SPEC §1.1 allows.
pub const MAX_BUDGET: i64 = 1_000_000;

/// What a line turned out to be.
pub enum Added {
    Record,
    UnknownKind(String),
    /// A summary's own record (what its load counted).
    Summary,
}

/// Why a name from a log is refused: empty, or holding a control
/// character (names are printed in reports and on terminals, where an
/// escape sequence in one would act).
pub(crate) fn name_error(field: &str, s: &str, why: super::ids::BadName) -> RecordError {
    let message = match why {
        super::ids::BadName::Empty => {
            "empty: a name needs a character (leave an optional field out instead)".to_string()
        }
        super::ids::BadName::Control(c) => format!(
            "{s:?} holds a control character (U+{:04X}); names are printed in reports and on terminals",
            c as u32
        ),
    };
    RecordError::impossible(field, message)
}

/// `s` interned in `strings` as the name given in `field`
/// ([`Interner::intern_name`](super::ids::Interner::intern_name)).
pub(crate) fn named(
    strings: &mut super::ids::Interner,
    field: &str,
    s: &str,
) -> Result<super::Id, RecordError> {
    strings
        .intern_name(s)
        .map_err(|why| name_error(field, s, why))
}

fn required<T>(v: Option<T>, field: &str) -> Result<T, RecordError> {
    v.ok_or_else(|| RecordError::missing(field))
}

fn nonneg_u32(v: i64, field: &str, min: i64) -> Result<u32, RecordError> {
    if v < min {
        return Err(RecordError::impossible(
            field,
            format!("must be ≥ {min}, got {v}"),
        ));
    }
    // u32::MAX itself stands for an absent value in a trajectory.
    u32::try_from(v)
        .ok()
        .filter(|&x| x < u32::MAX)
        .ok_or_else(|| RecordError::impossible(field, format!("{v} is too large")))
}

fn syntax(e: &serde_json::Error) -> RecordError {
    // serde_json's message ends in "at line 1 column N": the line is ours, keep the column.
    let msg = e.to_string();
    let msg = match msg.rfind(" at line ") {
        Some(i) => format!("{} (column {})", &msg[..i], e.column()),
        None => msg,
    };
    RecordError::new(SkipReason::Syntax, "", format!("invalid JSON: {msg}"))
}

impl LogSet {
    /// Parses and validates one record; on success it is appended.
    pub(crate) fn add_json(&mut self, loc: Loc, bytes: &[u8]) -> Result<Added, RecordError> {
        // One UTF-8 check of the whole line rather than one per string (what
        // serde_json's slice reader does for every string it borrows).
        let parsed = match std::str::from_utf8(bytes) {
            Ok(text) => super::fastjson::record(text)
                .map_or_else(|| serde_json::from_str::<RawRecord>(text), Ok),
            Err(_) => serde_json::from_slice::<RawRecord>(bytes),
        };
        match parsed {
            Ok(raw) => match raw.kind.as_deref() {
                Some("checkpoint") => self.add_checkpoint_value(loc, &parse_value(bytes)?),
                Some(super::summary::SUMMARY_KIND) => self.add_summary_value(&parse_value(bytes)?),
                _ => self.add_raw(loc, raw),
            },
            Err(e) => {
                let v: Value = serde_json::from_slice(bytes).map_err(|e| syntax(&e))?;
                if v.get("kind").and_then(Value::as_str) == Some("checkpoint") {
                    return self.add_checkpoint_value(loc, &v);
                }
                if e.is_data() {
                    Err(diagnose_types(&v, &e))
                } else {
                    Err(syntax(&e))
                }
            }
        }
    }

    pub(crate) fn add_raw(&mut self, loc: Loc, raw: RawRecord) -> Result<Added, RecordError> {
        let loc = self.located(loc, raw.log_file.as_deref(), raw.log_line)?;
        match raw.kind.as_deref().unwrap_or("trajectory") {
            "trajectory" => self.add_trajectory(loc, raw).map(|_| Added::Record),
            "probe" => self.add_probe(loc, raw).map(|_| Added::Record),
            "run" => {
                let run = required(raw.run, "run")?;
                let method = required(raw.method, "method")?;
                let decl = RunDecl {
                    loc,
                    run: named(&mut self.strings, "run", &run)?,
                    method: named(&mut self.strings, "method", &method)?,
                };
                self.run_decls.push(decl);
                Ok(Added::Record)
            }
            other => Ok(Added::UnknownKind(other.to_string())),
        }
    }

    /// A record a summary carries is located at the log it summarizes
    /// (`log_file`, `log_line`); any other where it was read.
    fn located(
        &mut self,
        loc: Loc,
        file: Option<&str>,
        line: Option<i64>,
    ) -> Result<Loc, RecordError> {
        match (file, line) {
            (None, None) => Ok(loc),
            (Some(_), None) => Err(RecordError::missing("log_line")),
            (None, Some(_)) => Err(RecordError::missing("log_file")),
            (Some(f), Some(l)) => {
                if l < 1 {
                    return Err(RecordError::impossible(
                        "log_line",
                        format!("must be ≥ 1, got {l}"),
                    ));
                }
                if l as u64 > Loc::MAX_LINE {
                    return Err(RecordError::impossible(
                        "log_line",
                        format!("must be ≤ {}, got {l}", Loc::MAX_LINE),
                    ));
                }
                let id = self.origins.intern(f);
                if id >= Loc::ORIGIN {
                    return Err(RecordError::impossible("log_file", "too many log files"));
                }
                Ok(Loc::new(Loc::ORIGIN | id, l as u64))
            }
        }
    }

    fn add_trajectory(&mut self, loc: Loc, r: RawRecord) -> Result<(), RecordError> {
        let run = required(r.run, "run")?;
        let benchmark = required(r.benchmark, "benchmark")?;
        let task = required(r.task, "task")?;
        let budget = required(r.budget, "budget")?;
        let success = required(r.success, "success")?;
        if !(1..=MAX_BUDGET).contains(&budget) {
            return Err(RecordError::impossible(
                "budget",
                format!("must be between 1 and {MAX_BUDGET}, got {budget}"),
            ));
        }
        let budget = budget as u32;
        let max_budget = match r.max_budget {
            Some(m) if m < budget as i64 => {
                return Err(RecordError::impossible(
                    "max_budget",
                    format!("{m} is below budget {budget}"),
                ))
            }
            Some(m) if m > MAX_BUDGET => {
                return Err(RecordError::impossible(
                    "max_budget",
                    format!("must be at most {MAX_BUDGET}, got {m}"),
                ))
            }
            Some(m) => Some(m as u32),
            None => None,
        };
        let min_turns = r
            .min_turns
            .map(|m| nonneg_u32(m, "min_turns", 1))
            .transpose()?;
        let n_steps = r.steps.as_ref().map(|s| s.len() as u32);
        let turns_known = r.turns.is_some() || n_steps.is_some();
        let turns = match r.turns {
            Some(t) => nonneg_u32(t, "turns", 0)?,
            None => n_steps.unwrap_or(0),
        };
        let success_turn = match (success, r.success_turn) {
            (true, Some(s)) => {
                let s = nonneg_u32(s, "success_turn", 1)?;
                if s > turns {
                    return Err(RecordError::impossible(
                        "success_turn",
                        format!("{s} is after the last turn ({turns})"),
                    ));
                }
                Some(s)
            }
            // Outcome-only: solved iff success, within its own budget only.
            (true, None) if !turns_known => Some(budget),
            (true, None) => Some(turns),
            (false, Some(s)) => {
                nonneg_u32(s, "success_turn", 1)?;
                None
            }
            (false, None) => None,
        };
        if let Some(s) = r.sample {
            if s < 0 {
                return Err(RecordError::impossible(
                    "sample",
                    format!("must be ≥ 0, got {s}"),
                ));
            }
        }
        if let Some(x) = r.reward {
            if !x.is_finite() {
                return Err(RecordError::impossible("reward", "must be finite"));
            }
        }
        let termination = match r.termination.as_deref() {
            Some(name) => {
                let t = Termination::parse(name).ok_or_else(|| {
                    RecordError::impossible(
                        "termination",
                        format!(
                            "{name:?} is not one of success, budget, wrong, error, invalid, other"
                        ),
                    )
                })?;
                if (t == Termination::Success) != success {
                    return Err(RecordError::impossible(
                        "termination",
                        format!("{name:?} contradicts success: {success}"),
                    ));
                }
                t
            }
            None if success => Termination::Success,
            None if turns_known && turns >= budget => Termination::Budget,
            None => Termination::Wrong,
        };
        // The names, interned before the steps (a set's ids are renumbered
        // by name once it is whole): a new one holding a control character
        // rejects the record.
        let run = named(&mut self.strings, "run", &run)?;
        let benchmark = named(&mut self.strings, "benchmark", &benchmark)?;
        let task = named(&mut self.strings, "task", &task)?;
        let method = r
            .method
            .map(|m| named(&mut self.strings, "method", &m))
            .transpose()?;
        let group = r
            .group
            .map(|g| named(&mut self.strings, "group", &g.0))
            .transpose()?;
        let seed = r
            .seed
            .map(|g| named(&mut self.strings, "seed", &g.0))
            .transpose()?;
        let category = r
            .category
            .map(|c| named(&mut self.strings, "category", &c))
            .transpose()?;
        // Steps go last: everything that can reject the record is checked above.
        let logp_start = self.logp_runs.len() as u32;
        let steps = match &r.steps {
            Some(raw_steps) => Some(self.add_steps(raw_steps)?),
            None => None,
        };
        let mut t = Trajectory {
            method: method.into(),
            max_budget: max_budget.into(),
            success,
            turns,
            success_turn: success_turn.into(),
            min_turns: min_turns.into(),
            group: group.into(),
            steps: steps.into(),
            logp_start,
            termination,
            turns_known,
            seed: seed.into(),
            category: category.into(),
            ..Trajectory::bare(loc, run, benchmark, task, budget)
        };
        t.set_extras(r.sample, r.reward, r.train_step);
        self.trajectories.push(t);
        Ok(())
    }

    fn add_steps(&mut self, raw: &[RawStep]) -> Result<Span, RecordError> {
        let start = self.steps.len();
        let logp_start = self.logp_runs.len();
        let res = self.push_steps(raw);
        if res.is_err() {
            self.steps.truncate(start);
            self.logp_runs.truncate(logp_start);
            self.logp_values.truncate(logp_start);
            let kept = self
                .step_budgets
                .partition_point(|b| (b.step as usize) < start);
            self.step_budgets.truncate(kept);
            let kept = self
                .step_extras
                .partition_point(|e| (e.step as usize) < start);
            self.step_extras.truncate(kept);
        }
        res
    }

    /// Reads the steps in place (moving each ~180-byte step out of the
    /// list was a memcpy per step).
    fn push_steps(&mut self, raw: &[RawStep]) -> Result<Span, RecordError> {
        let start = self.steps.len() as u32;
        // The step before's (budget_total, budget_remaining), both given.
        let mut before: Option<(i64, i64)> = None;
        for (i, s) in raw.iter().enumerate() {
            let field = |f: &str| format!("steps[{i}].{f}");
            let turn = match s.turn {
                Some(t) if (1..=i64::from(u32::MAX)).contains(&t) => t as u32,
                Some(t) => nonneg_u32(t, &field("turn"), 1)?,
                None => i as u32 + 1,
            };
            let output_tokens = match s.output_tokens {
                Some(t) if t < 0 => {
                    return Err(RecordError::impossible(
                        field("output_tokens"),
                        format!("must be ≥ 0, got {t}"),
                    ))
                }
                Some(t) if t as u64 > Step::MAX_TOKENS => {
                    return Err(RecordError::impossible(
                        field("output_tokens"),
                        format!(
                            "{t} is more than a step can generate (at most {})",
                            Step::MAX_TOKENS
                        ),
                    ))
                }
                t => t.map(|t| t as u64),
            };
            let lp_start = self.logp_runs.len() as u32;
            if let Some(lp) = &s.logp {
                if lp.len() > Step::MAX_LOGPS {
                    return Err(RecordError::impossible(
                        field("logp"),
                        format!("{} runs; at most {} per step", lp.len(), Step::MAX_LOGPS),
                    ));
                }
                for (run, x) in lp.iter() {
                    if !x.is_finite() {
                        return Err(RecordError::impossible(
                            format!("steps[{i}].logp.{run}"),
                            "must be a finite number",
                        ));
                    }
                    let id = self
                        .strings
                        .intern_name(run)
                        .map_err(|why| name_error(&format!("steps[{i}].logp"), run, why))?;
                    self.logp_runs.push(id);
                    self.logp_values.push(*x);
                }
            }
            let logp_len = (self.logp_runs.len() as u32 - lp_start) as usize;
            if s.reward.is_some_and(|r| !r.is_finite()) {
                return Err(RecordError::impossible(
                    field("reward"),
                    "must be a finite number",
                ));
            }
            for (name, v) in [
                ("budget_total", s.budget_total),
                ("budget_remaining", s.budget_remaining),
            ] {
                if v.is_some_and(|v| v.unsigned_abs() > Step::MAX_BUDGET_FIELD as u64) {
                    return Err(RecordError::impossible(field(name), "out of range"));
                }
            }
            let index = self.steps.len() as u32;
            // A step that goes on from the one before — the same total, one
            // turn less remaining, as a budget-aware prompt counts down —
            // needs no entry: its entry is the run's first (see
            // [`crate::schema::StepRef::budget`]).
            let (total, remaining) = (s.budget_total, s.budget_remaining);
            let goes_on = matches!((before, total, remaining),
                (Some((t0, r0)), Some(t), Some(r)) if t == t0 && r == r0 - 1);
            let has_budget = total.is_some() || remaining.is_some();
            if !goes_on {
                self.step_budgets
                    .extend(StepBudget::new(index, total, remaining));
            }
            before = total.zip(remaining);
            let (step, extra) = Step::new(
                output_tokens,
                s.error,
                has_budget,
                turn != i as u32 + 1,
                logp_len,
            );
            if extra {
                self.step_extras
                    .push(Step::extra(index, turn, output_tokens, logp_len));
            }
            self.steps.push(step);
        }
        Ok(Span {
            start,
            len: self.steps.len() as u32 - start,
        })
    }

    fn add_probe(&mut self, loc: Loc, r: RawRecord) -> Result<(), RecordError> {
        let benchmark = required(r.benchmark, "benchmark")?;
        let task = required(r.task, "task")?;
        let state = required(r.state, "state")?;
        let source = required(r.source, "source")?;
        let turn = nonneg_u32(required(r.turn, "turn")?, "turn", 1)?;
        let raw_candidates = required(r.candidates, "candidates")?;
        let frozenlake = match r.frozenlake {
            Some(fl) => {
                let map: Vec<String> = required(fl.map, "frozenlake.map")?
                    .into_iter()
                    .map(|s| s.into_owned())
                    .collect();
                let pos = required(fl.pos, "frozenlake.pos")?;
                let steps_left = nonneg_u32(
                    required(fl.steps_left, "frozenlake.steps_left")?,
                    "frozenlake.steps_left",
                    0,
                )?;
                let spec = FrozenLakeSpec {
                    map,
                    pos: usize::try_from(pos).unwrap_or(usize::MAX),
                    steps_left,
                    slippery: fl.slippery.unwrap_or(false),
                };
                crate::env::frozenlake::validate_spec(&spec)
                    .map_err(|(f, m)| RecordError::impossible(format!("frozenlake.{f}"), m))?;
                Some(spec)
            }
            None => None,
        };
        let start = self.candidates.len() as u32;
        for (i, c) in raw_candidates.into_iter().enumerate() {
            let cand = self.candidate(i, c, frozenlake.is_some());
            if let Err(e) = cand {
                self.candidates.truncate(start as usize);
                return Err(e);
            }
        }
        let candidates = Span {
            start,
            len: self.candidates.len() as u32 - start,
        };
        let p = Probe {
            loc,
            benchmark: named(&mut self.strings, "benchmark", &benchmark)?,
            task: named(&mut self.strings, "task", &task)?,
            state: named(&mut self.strings, "state", &state)?,
            source: named(&mut self.strings, "source", &source)?,
            turn,
            error: r.error.unwrap_or(false),
            frozenlake,
            candidates,
        };
        self.probes.push(p);
        Ok(())
    }

    fn candidate(
        &mut self,
        i: usize,
        c: RawCandidate,
        frozenlake: bool,
    ) -> Result<(), RecordError> {
        let f = |name: &str| format!("candidates[{i}].{name}");
        let run = c.run.ok_or_else(|| RecordError::missing(&f("run")))?;
        let move_index = match &c.action {
            Some(ActionValue::Int(a)) if (0..=3).contains(a) => Some(*a as u8),
            Some(ActionValue::Text(t)) => t.trim().parse::<u8>().ok().filter(|a| *a <= 3),
            _ => None,
        };
        if let Some(s) = c.score {
            if !s.is_finite() {
                return Err(RecordError::impossible(f("score"), "must be finite"));
            }
        } else if frozenlake && move_index.is_none() {
            return Err(match c.action {
                None => RecordError::missing(&f("action")),
                Some(_) => RecordError::impossible(
                    f("action"),
                    "a FrozenLake action without a score must be 0 (left), 1 (down), 2 (right) or 3 (up)",
                ),
            });
        }
        let cand = Candidate {
            run: self
                .strings
                .intern_name(&run)
                .map_err(|why| name_error(&f("run"), &run, why))?,
            move_index,
            score: c.score,
            corrects: c.corrects,
            terminal_success: c.terminal_success,
        };
        self.candidates.push(cand);
        Ok(())
    }

    fn add_checkpoint_value(&mut self, loc: Loc, v: &Value) -> Result<Added, RecordError> {
        let obj = v
            .as_object()
            .ok_or_else(|| RecordError::wrong_type("", "expected a JSON object"))?;
        let run = match obj.get("run") {
            None | Some(Value::Null) => return Err(RecordError::missing("run")),
            Some(Value::String(s)) => s.as_str(),
            Some(other) => {
                return Err(RecordError::wrong_type(
                    "run",
                    format!("expected a string, got {other}"),
                ))
            }
        };
        let step = match obj.get("step") {
            None | Some(Value::Null) => return Err(RecordError::missing("step")),
            Some(s) => s.as_i64().ok_or_else(|| {
                RecordError::wrong_type("step", format!("expected an integer, got {s}"))
            })?,
        };
        let file = match obj.get("log_file") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.as_str()),
            Some(other) => {
                return Err(RecordError::wrong_type(
                    "log_file",
                    format!("expected a string, got {other}"),
                ))
            }
        };
        let line = match obj.get("log_line") {
            None | Some(Value::Null) => None,
            Some(l) => Some(l.as_i64().ok_or_else(|| {
                RecordError::wrong_type("log_line", format!("expected an integer, got {l}"))
            })?),
        };
        let loc = self.located(loc, file, line)?;
        let run = named(&mut self.strings, "run", run)?;
        let start = self.metrics.len() as u32;
        for (k, x) in obj {
            if matches!(
                k.as_str(),
                "kind" | "run" | "step" | "log_file" | "log_line"
            ) {
                continue;
            }
            if let Some(x) = x.as_f64() {
                let id = self.strings.intern(k);
                self.metrics.push((id, x));
            }
        }
        let metrics = Span {
            start,
            len: self.metrics.len() as u32 - start,
        };
        self.checkpoints.push(Checkpoint {
            loc,
            run,
            step,
            metrics,
        });
        Ok(Added::Record)
    }
}

fn parse_value(bytes: &[u8]) -> Result<Value, RecordError> {
    serde_json::from_slice(bytes).map_err(|e| syntax(&e))
}

impl LogSet {
    /// A summary's `summary` record: what its load counted, added to this set's.
    pub(crate) fn add_summary_value(&mut self, v: &Value) -> Result<Added, RecordError> {
        use super::summary::SUMMARY_VERSION;
        let version = v.get("version").and_then(Value::as_i64);
        if version != Some(SUMMARY_VERSION) {
            return Err(RecordError::impossible(
                "version",
                format!(
                    "a summary of format {} (this rl-audit reads format {SUMMARY_VERSION}: summarize the logs again with it)",
                    v.get("version").map_or("?".to_string(), Value::to_string)
                ),
            ));
        }
        let counts = |field: &str| -> std::result::Result<Vec<(String, u64)>, RecordError> {
            match v.get(field) {
                None | Some(Value::Null) => Ok(Vec::new()),
                Some(Value::Object(m)) => m
                    .iter()
                    .map(|(k, n)| {
                        n.as_u64().map(|n| (k.clone(), n)).ok_or_else(|| {
                            RecordError::wrong_type(
                                format!("{field}.{k}"),
                                format!("expected a count, got {n}"),
                            )
                        })
                    })
                    .collect(),
                Some(other) => Err(RecordError::wrong_type(
                    field,
                    format!("expected an object, got {other}"),
                )),
            }
        };
        let texts = |field: &str| -> std::result::Result<Vec<String>, RecordError> {
            match v.get(field) {
                None | Some(Value::Null) => Ok(Vec::new()),
                Some(Value::Array(a)) => a
                    .iter()
                    .enumerate()
                    .map(|(i, x)| {
                        x.as_str().map(str::to_string).ok_or_else(|| {
                            RecordError::wrong_type(
                                format!("{field}[{i}]"),
                                format!("expected a string, got {x}"),
                            )
                        })
                    })
                    .collect(),
                Some(other) => Err(RecordError::wrong_type(
                    field,
                    format!("expected an array, got {other}"),
                )),
            }
        };
        for (k, n) in counts("skipped")? {
            let reason = SkipReason::ALL
                .into_iter()
                .find(|r| r.name() == k)
                .ok_or_else(|| {
                    RecordError::impossible(
                        format!("skipped.{k}"),
                        "not a reason records are skipped for",
                    )
                })?;
            *self.skipped.entry(reason.name()).or_default() += n;
        }
        for (k, n) in counts("unknown_kinds")? {
            *self.unknown_kinds.entry(k).or_default() += n;
        }
        self.ignored_files.extend(texts("ignored_files")?);
        self.notes.extend(texts("notes")?);
        Ok(Added::Summary)
    }
}
