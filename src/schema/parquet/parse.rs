//! Trajectory rows parsed into the set by columns, through the validator JSON Lines use; `--summarize` shards read back.

use super::*;
use crate::schema::validate::named;

/// Rows parsed into one chunk-local set.
const PART_ROWS: usize = 8192;
/// Steps a part holds at most (but for one longer row): a part's raw
/// records and chunk-local set, a few of them at once, stay a few MB
/// however long the trajectories.
const PART_STEPS: usize = 1 << 15;

/// Parses a trajectory frame's rows by columns, validated by the same rules
/// as JSON records, and hands `sink` one chunk-local set per [`PART_ROWS`]
/// rows, in row order. A part is handed over while the next ones are
/// parsed, so only a few parts' sets exist beside the frame at once.
/// `row0`: the file's rows before the frame's first.
pub fn parse_trajectories(
    file: u32,
    row0: usize,
    df: &DataFrame,
    sink: &mut (dyn FnMut(ParsedRows) -> Result<()> + Send),
) -> Result<()> {
    use crate::schema::raw::{GroupKey, LogpMap, RawRecord, RawStep};
    use std::borrow::Cow;
    let c = |n: &str| {
        df.column(n)
            .ok()
            .map(|c| as_strings(c.as_materialized_series().clone()))
    };
    let owned: Vec<(&str, Option<Series>)> = crate::schema::TRAJECTORY_FIELDS
        .iter()
        .chain(&["steps"])
        .map(|n| (*n, c(n)))
        .collect();
    let s = |n: &str| owned.iter().find(|x| x.0 == n).and_then(|x| x.1.as_ref());
    let (run, method, benchmark, task) = (
        strs(s("run")),
        strs(s("method")),
        strs(s("benchmark")),
        strs(s("task")),
    );
    let (termination, category, seed) = (
        strs(s("termination")),
        strs(s("category")),
        groups(s("seed")),
    );
    let (sample, budget, max_budget, turns, success_turn, min_turns, train_step) = (
        ints(s("sample")),
        ints(s("budget")),
        ints(s("max_budget")),
        ints(s("turns")),
        ints(s("success_turn")),
        ints(s("min_turns")),
        ints(s("train_step")),
    );
    let (success, reward, group) = (bools(s("success")), floats(s("reward")), groups(s("group")));
    let steps = struct_lists(s("steps"), &[]);
    let step_lists: Option<&Lists> = steps.as_ref().ok().and_then(|o| o.as_ref());
    let f = |n: &str| {
        debug_assert!(STEP_FIELDS.contains(&n), "{n}: not decoded (STEP_FIELDS)");
        step_lists.and_then(|l| field(&l.inner, n))
    };
    let (t_s, o_s, e_s, r_s, bt_s, br_s, lp_s) = (
        f("turn"),
        f("output_tokens"),
        f("error"),
        f("reward"),
        f("budget_total"),
        f("budget_remaining"),
        f("logp"),
    );
    // SPEC §1: a list of {run, value} structs. Another layout (a map, a
    // struct of runs) is named at the first step that holds one, not read
    // as no log-probabilities.
    let (logp_lists, logp_wrong) = match struct_lists(lp_s.as_ref(), &["run", "value"]) {
        Ok(l) => (l, None),
        Err(d) => (None, lp_s.as_ref().map(|c| (d, c.is_not_null()))),
    };
    let (run_s, val_s) = match &logp_lists {
        Some(ll) => (field(&ll.inner, "run"), field(&ll.inner, "value")),
        None => (None, None),
    };
    let step_cols: Option<(&Lists, StepCols)> = step_lists.map(|l| {
        (
            l,
            StepCols {
                turn: ints(t_s.as_ref()),
                output_tokens: ints(o_s.as_ref()),
                error: bools(e_s.as_ref()),
                reward: floats(r_s.as_ref()),
                budget_total: ints(bt_s.as_ref()),
                budget_remaining: ints(br_s.as_ref()),
                logp: logp_lists
                    .as_ref()
                    .map(|ll| (ll, strs(run_s.as_ref()), floats(val_s.as_ref()))),
            },
        )
    });
    let steps_wrong = steps.as_ref().err().cloned();
    let n = df.height();
    // Parts of at most PART_ROWS rows and (but for a longer row) PART_STEPS steps.
    let mut ranges: Vec<(usize, usize)> = Vec::new();
    let mut a = 0;
    while a < n {
        let mut b = (a + PART_ROWS).min(n);
        if let Some(l) = step_lists {
            let cap = l.offsets[a] + PART_STEPS as i64;
            let k = l.offsets[a + 1..=b].partition_point(|&o| o <= cap);
            b = (a + k.max(1)).min(b);
        }
        ranges.push((a, b));
        a = b;
    }
    let parse = |&(a, b): &(usize, usize)| -> ParsedRows {
        let mut set = LogSet::default();
        let mut errors = Vec::new();
        for i in a..b {
            let loc = Loc::new(file, (row0 + i) as u64 + 1);
            let row = (|| -> std::result::Result<RawRecord, RecordError> {
                let mut raw = RawRecord {
                    run: run.get(i, "run", "a string")?.map(Cow::Borrowed),
                    method: method.get(i, "method", "a string")?.map(Cow::Borrowed),
                    benchmark: benchmark
                        .get(i, "benchmark", "a string")?
                        .map(Cow::Borrowed),
                    task: task.get(i, "task", "a string")?.map(Cow::Borrowed),
                    sample: sample.get(i, "sample", "an integer")?,
                    budget: budget.get(i, "budget", "an integer")?,
                    max_budget: max_budget.get(i, "max_budget", "an integer")?,
                    success: success.get(i, "success", "true or false")?,
                    turns: turns.get(i, "turns", "an integer")?,
                    success_turn: success_turn.get(i, "success_turn", "an integer")?,
                    reward: reward.get(i, "reward", "a number")?,
                    min_turns: min_turns.get(i, "min_turns", "an integer")?,
                    train_step: train_step.get(i, "train_step", "an integer")?,
                    group: group
                        .get(i, "group", "a string or an integer")?
                        .map(GroupKey),
                    termination: termination
                        .get(i, "termination", "a string")?
                        .map(Cow::Borrowed),
                    category: category.get(i, "category", "a string")?.map(Cow::Borrowed),
                    seed: seed.get(i, "seed", "a string or an integer")?.map(GroupKey),
                    ..Default::default()
                };
                if let Some(d) = &steps_wrong {
                    return Err(RecordError::wrong_type(
                        "steps",
                        format!("expected a list of step structs, the column is {d}"),
                    ));
                }
                if let Some((l, sc)) = &step_cols {
                    if l.valid[i] {
                        let (s0, s1) = (l.offsets[i] as usize, l.offsets[i + 1] as usize);
                        let mut v = Vec::with_capacity(s1 - s0);
                        for (k, j) in (s0..s1).enumerate() {
                            // The step is written in place (a step is ~180
                            // bytes: built aside and moved in, the moves were
                            // 2 % of a 1 M-trajectory audit's CPU), its fields
                            // read in the order they always were (the first
                            // of two wrong columns is the one named).
                            let step = v.push_mut(RawStep::default());
                            if let Some((d, given)) = &logp_wrong {
                                if given.get(j) == Some(true) {
                                    return Err(RecordError::wrong_type(
                                        format!("steps[{k}].logp"),
                                        format!("expected a list of {{run, value}} structs, the column is {d}"),
                                    ));
                                }
                            }
                            if let Some((ll, runs, vals)) = &sc.logp {
                                if ll.valid[j] {
                                    let m = step.logp.insert(LogpMap::default());
                                    for q in ll.offsets[j] as usize..ll.offsets[j + 1] as usize {
                                        let r = runs.get_step(q, k, "logp.run", "a string")?;
                                        let x = vals.get_step(q, k, "logp.value", "a number")?;
                                        if let (Some(r), Some(x)) = (r, x) {
                                            m.push(Cow::Borrowed(r), x);
                                        }
                                    }
                                }
                            }
                            step.turn = sc.turn.get_step(j, k, "turn", "an integer")?;
                            step.output_tokens =
                                sc.output_tokens
                                    .get_step(j, k, "output_tokens", "an integer")?;
                            step.error = sc.error.get_step(j, k, "error", "true or false")?;
                            step.reward = sc.reward.get_step(j, k, "reward", "a number")?;
                            step.budget_total =
                                sc.budget_total
                                    .get_step(j, k, "budget_total", "an integer")?;
                            step.budget_remaining = sc.budget_remaining.get_step(
                                j,
                                k,
                                "budget_remaining",
                                "an integer",
                            )?;
                        }
                        raw.steps = Some(v);
                    }
                }
                Ok(raw)
            })();
            let added = row.and_then(|raw| set.add_raw(loc, raw));
            if let Err(e) = added {
                errors.push((loc.line(), e));
            }
        }
        (set, errors, (b - a) as u64)
    };
    let mut pending: Vec<ParsedRows> = Vec::new();
    for group in ranges.chunks(rayon::current_num_threads().max(1)) {
        let (sunk, parsed) = rayon::join(
            || -> Result<()> {
                for p in std::mem::take(&mut pending) {
                    sink(p)?;
                }
                Ok(())
            },
            || group.par_iter().map(parse).collect::<Vec<_>>(),
        );
        sunk?;
        pending = parsed;
    }
    for p in pending {
        sink(p)?;
    }
    Ok(())
}

/// Reads a `--summarize` shard back: one [`AggregateRow`](crate::schema::AggregateRow) per row.
pub(super) fn aggregates_by_columns(name: &str, df: &DataFrame) -> Result<ParsedRows> {
    let bad = |m: String| Error::file(name, m);
    let col = |n: &str| {
        df.column(n)
            .ok()
            .map(|c| c.as_materialized_series().clone())
    };
    let need =
        |n: &str| col(n).ok_or_else(|| bad(format!("aggregate shard without a `{n}` column")));
    let (b, r, m, t) = (
        need("benchmark")?,
        need("run")?,
        col("method"),
        need("task")?,
    );
    let (budget, full, min_turns, n) = (
        need("budget")?,
        need("full_budget")?,
        col("min_turns"),
        need("n")?,
    );
    let turns = need("success_turns")?;
    let (oo, oo_solved) = (col("outcome_only"), col("outcome_only_solved"));
    let (oo, oo_solved) = (ints(oo.as_ref()), ints(oo_solved.as_ref()));
    let (b, r, m, t) = (
        strs(Some(&b)),
        strs(Some(&r)),
        strs(m.as_ref()),
        strs(Some(&t)),
    );
    let (budget, full, min_turns, n) = (
        ints(Some(&budget)),
        ints(Some(&full)),
        ints(min_turns.as_ref()),
        ints(Some(&n)),
    );
    let lists = lists(Some(&turns))
        .map_err(|d| bad(format!("success_turns: expected a list, the column is {d}")))?;
    let inner = lists.as_ref().map(|l| ints(Some(&l.inner)));
    let mut set = LogSet::default();
    let mut errors = Vec::new();
    for i in 0..df.height() {
        let row = (|| -> std::result::Result<crate::schema::AggregateRow, RecordError> {
            fn s<'a>(
                c: &'a Col<StringType>,
                i: usize,
                f: &str,
            ) -> std::result::Result<&'a str, RecordError> {
                c.get(i, f, "a string")?
                    .ok_or_else(|| RecordError::missing(f))
            }
            let u = |c: &Col<Int64Type>, f: &str| -> std::result::Result<u32, RecordError> {
                let v = c
                    .get(i, f, "an integer")?
                    .ok_or_else(|| RecordError::missing(f))?;
                u32::try_from(v)
                    .map_err(|_| RecordError::impossible(f, format!("{v} is out of range")))
            };
            let mut success_turns = Vec::new();
            if let (Some(l), Some(inner)) = (&lists, &inner) {
                for q in l.offsets[i] as usize..l.offsets[i + 1] as usize {
                    if let Some(x) = inner.get(q, "success_turns", "an integer")? {
                        success_turns.push(u32::try_from(x).map_err(|_| {
                            RecordError::impossible("success_turns", "out of range")
                        })?);
                    }
                }
            }
            success_turns.sort_unstable();
            let n_rows =
                u32::try_from(n.get(i, "n", "an integer")?.unwrap_or(0)).unwrap_or(0) as u64;
            if (success_turns.len() as u64) > n_rows {
                return Err(RecordError::impossible(
                    "n",
                    "fewer rollouts than successes",
                ));
            }
            Ok(crate::schema::AggregateRow {
                benchmark: named(&mut set.strings, "benchmark", s(&b, i, "benchmark")?)?,
                run: named(&mut set.strings, "run", s(&r, i, "run")?)?,
                method: match m.get(i, "method", "a string")? {
                    Some(x) => Some(named(&mut set.strings, "method", x)?),
                    None => None,
                },
                task: named(&mut set.strings, "task", s(&t, i, "task")?)?,
                budget: u(&budget, "budget")?,
                full_budget: u(&full, "full_budget")?,
                min_turns: min_turns
                    .get(i, "min_turns", "an integer")?
                    .and_then(|x| u32::try_from(x).ok()),
                n: n_rows,
                success_turns,
                outcome_only: oo
                    .get(i, "outcome_only", "an integer")?
                    .map_or(0, |x| x.max(0) as u64),
                outcome_only_solved: oo_solved
                    .get(i, "outcome_only_solved", "an integer")?
                    .map_or(0, |x| x.max(0) as u64),
            })
        })();
        match row {
            Ok(a) => set.aggregates.push(a),
            Err(e) => errors.push((i as u64 + 1, e)),
        }
    }
    Ok((set, errors, df.height() as u64))
}
