//! Running every analysis: the staged audit, its order (the panel on screen first), the parts computed beside the main sequence, and the closing notes.

use super::*;

/// The parts the workbench's panel reads, which the main sequence computes
/// first once their inputs are in (the Steps panel open while 11 M
/// rollouts load: its matched states before the rollout counts, not after
/// Pass@(K,T), the cost frontier and the BudgetMix audit). The
/// order changes, no figure does: each part draws from its own seeded
/// streams. Likewise the benchmark on screen: Pass@(K,T) counts and draws
/// it first ([`passkt::analyse_staged`]). Every clone of the settings it
/// rides in shares it; empty (the order of [`Part::ALL`], the benchmarks in
/// theirs) unless set.
#[derive(Debug, Clone, Default)]
pub struct Focus {
    parts: std::sync::Arc<std::sync::atomic::AtomicU32>,
    benchmark: std::sync::Arc<std::sync::Mutex<Option<String>>>,
}

impl Focus {
    /// The parts wanted from now on (none: [`Part::ALL`]'s order).
    pub fn set(&self, parts: &[Part]) {
        let bits = parts.iter().fold(0u32, |b, p| b | 1 << *p as u32);
        self.parts.store(bits, std::sync::atomic::Ordering::Relaxed);
    }

    pub fn wants(&self, p: Part) -> bool {
        self.parts.load(std::sync::atomic::Ordering::Relaxed) & (1 << p as u32) != 0
    }

    /// Whether the panel on screen shows `p`'s intervals: it reads `p`, and
    /// not every part (the Overview, which reads them all for its findings
    /// and shows no interval). What provisional intervals
    /// ([`Ci::Provisional`](super::stats::Ci::Provisional)) are drawn for:
    /// no one reads another panel's, and no report holds any.
    pub fn shows(&self, p: Part) -> bool {
        let all = Part::ALL.iter().fold(0u32, |b, p| b | 1 << *p as u32);
        let bits = self.parts.load(std::sync::atomic::Ordering::Relaxed);
        bits & (1 << p as u32) != 0 && bits & all != all
    }

    /// The benchmark on screen from now on (`None`: the benchmarks' order).
    pub fn set_benchmark(&self, name: Option<&str>) {
        if let Ok(mut b) = self.benchmark.lock() {
            if b.as_deref() != name {
                *b = name.map(str::to_string);
            }
        }
    }

    pub fn benchmark(&self) -> Option<String> {
        self.benchmark.lock().ok().and_then(|b| b.clone())
    }

    /// Of the main sequence's parts still to come (`left`, in
    /// [`Part::ALL`]'s order, Pass@(K,T) among them, drawing its
    /// intervals), the one to compute before its next draw: none if the
    /// panel on screen reads Pass@(K,T) (or no panel is), else the first it
    /// reads whose inputs are in — those reading Pass@(K,T) read its values
    /// and K grid alone, in once every benchmark's values are (`values`).
    fn while_pass_draws(&self, left: &[Part], values: bool) -> Option<Part> {
        if self.wants(Part::Pass) {
            return None;
        }
        left.iter()
            .copied()
            .find(|p| *p != Part::Pass && self.wants(*p) && (values || p.reads().is_none()))
    }

    /// Of the main sequence's parts still to come (`left`, in
    /// [`Part::ALL`]'s order), the next to compute: the first wanted whose
    /// inputs are in, else the first.
    pub(super) fn next(&self, left: &[Part]) -> Option<Part> {
        left.iter()
            .copied()
            .find(|p| self.wants(*p) && p.reads().is_none_or(|r| !left.contains(&r)))
            .or_else(|| left.first().copied())
    }
}

/// Runs every analysis.
pub fn run_audit(set: &LogSet, settings: &Settings) -> Result<Audit> {
    run_audit_staged(set, settings, &mut |_| {})
}

/// [`run_audit`], handing the audit so far to `staged` after each part and
/// once before the first, with the pairs only (`Audit::pending` lists what
/// is still to come). The main sequence's parts come in [`Part::ALL`]
/// order, but for those `settings.focus` wants, which come as soon as the
/// part they read is in ([`Focus`]); those computed beside it ([`Part::beside`]) once they are done,
/// at the main sequence's next hand-over (the likelihood and its LLR by
/// turn together), and grep after them all. The audit it returns is
/// complete, and the same whoever looks on.
pub fn run_audit_staged(
    set: &LogSet,
    settings: &Settings,
    staged: &mut dyn FnMut(&Audit),
) -> Result<Audit> {
    let mut clock = crate::stage::StageClock::from_env();
    let by_bench = super::runs_by_benchmark(set);
    let (pairs, notes) = super::resolve_pairs_of(set, settings, &by_bench)?;
    super::check_budgetmix_vs(set, settings, &by_bench)?;
    // A bad pattern is a usage error: before any analysis runs.
    let patterns: Vec<regex::Regex> = settings
        .grep
        .iter()
        .map(|p| {
            regex::Regex::new(p)
                .map_err(|e| crate::error::Error::Usage(format!("--grep {p:?}: {e}")))
        })
        .collect::<Result<_>>()?;
    let names = pairs
        .iter()
        .map(|p| PairNames::of((set.name(p.benchmark), set.name(p.base), set.name(p.rl))))
        .collect();
    let mut a = Audit {
        settings: settings.clone(),
        pairs: names,
        runs: super::runs_of(set, &by_bench),
        notes,
        pending: Part::ALL.to_vec(),
        ..Default::default()
    };
    staged(&a);
    // After each part: its timing line, then the audit so far. The last
    // part's audit is handed on once the closing notes are in.
    macro_rules! done {
        ($part:expr) => {{
            let part: Part = $part;
            clock.lap(part.title());
            a.pending.retain(|p| *p != part);
            if !a.pending.is_empty() {
                staged(&a);
            }
        }};
    }
    // The checkpoints' trends first: they read nothing else and take no
    // time, and the Training panel need wait neither for the rollouts to be
    // counted (11 M rollouts: 2.3 s) nor for Pass@(K,T) (7 s more).
    (a.dynamics, a.divergence) = dynamics::analyse(set);
    done!(Part::Dynamics);
    // The BudgetMix panel on screen (and not one reading Pass@(K,T)): its
    // rules now — they read the training rollouts alone — and its gains
    // once Pass@(K,T)'s values are in (11 M rollouts: the panel shows
    // with the rollout counts, not after Pass@(K,T)'s values).
    if settings.focus.wants(Part::BudgetMix) && !settings.focus.wants(Part::Pass) {
        a.budgetmix = budgetmix::rules_of(set, settings);
        a.training_runs = budgetmix::training_runs(set, settings);
        a.budgetmix_rules_in = true;
        staged(&a);
    }
    // The matched states and error recovery (§2.2–2.3), sharing the
    // FrozenLake optimal-action cache: their values, counts and Wilson
    // intervals handed on first, then their bootstrap intervals drawn (11 M
    // rollouts: the Steps panel shows 0.9 s sooner).
    let matched_values = |pairs: &[Pair], a: &mut Audit, staged: &mut dyn FnMut(&Audit)| {
        let mut cache = frozenlake::QCache::default();
        let (matched, m) = matched::values(set, pairs, settings, &mut cache);
        let (recovery, r) = recovery::values(set, pairs, settings, &mut cache);
        (a.matched, a.recovery) = (matched, recovery);
        a.matched_values_in = true;
        staged(a);
        (m, r)
    };
    // Their intervals; with the Steps or Recovery panel on screen,
    // provisional ones first (the first 1,000 resamples': 11 M rollouts,
    // ~0.1 s against the 10,000's ~0.75 s).
    let matched_intervals =
        |a: &mut Audit,
         staged: &mut dyn FnMut(&Audit),
         (m, r): (matched::Intervals, recovery::Intervals)| {
            let shows = settings.focus.shows(Part::Matched);
            if let Some(boot) = settings.boot.provisional().filter(|_| shows) {
                matched::with_provisional(&mut a.matched, m.clone(), &boot);
                recovery::with_provisional(&mut a.recovery, r.clone(), &boot);
                staged(a);
            }
            matched::with_intervals(&mut a.matched, m, &settings.boot);
            recovery::with_intervals(&mut a.recovery, r, &settings.boot);
        };
    // The Steps or Recovery panel on screen (and not one reading
    // Pass@(K,T)): the matched states and error recovery now — they read
    // the probes alone, not the rollout counts (11 M rollouts: the Steps
    // panel 1 s sooner) — named as computing in the hand-over before. The
    // Recovery panel (which shows natural recovery's intervals too): their
    // intervals once natural recovery, begun beside, has handed on its
    // values and provisional intervals (`matched_later`).
    let mut matched_later = None;
    if settings.focus.wants(Part::Matched) && !settings.focus.wants(Part::Pass) {
        a.pending.retain(|p| *p != Part::Matched);
        a.pending.insert(0, Part::Matched);
        staged(&a);
        let sets = matched_values(&pairs, &mut a, &mut *staged);
        if settings.focus.shows(Part::NaturalRecovery) {
            matched_later = Some(sets);
        } else {
            matched_intervals(&mut a, &mut *staged, sets);
            done!(Part::Matched);
        }
    }
    // Each task's full budget, alone (11 M rollouts: ~0.06 s): the
    // likelihoods and natural recovery read no more of the rollouts'
    // aggregates, so they need not wait for the rollouts to be counted.
    let task_infos = std::sync::Arc::new(frames::TaskInfos::of(set));
    // The likelihood, its LLR by turn and natural recovery read neither
    // Pass@(K,T) nor each other: they run on threads of their own beside the
    // main sequence (which leaves part of the second core idle), and are
    // handed on once done. Each analysis draws from its own seeded streams,
    // so no figure depends on what runs beside it.
    // Natural recovery (a few counts a task) runs beside the rollout counts
    // and Pass@(K,T), in the background: at a lower priority, so that it
    // takes the CPU they leave idle, not half of what they use (11 M
    // rollouts: Pass@(K,T) and so the Budget panel 9.0 → 7.9 s; it is then
    // the last part to end, 1.5–2 s after the matched states). The
    // likelihood and its LLR by turn wait until Pass@(K,T) has freed its
    // per-cell tables, so that their memory, which grows with steps (one
    // f64 a step for the step NLL median; a window of (turn, task)
    // clusters), does not add to that peak (README, session 21).
    let (pass_done, after_pass) = std::sync::mpsc::channel::<()>();
    // The parts computed beside come back on a channel as each is done.
    enum Beside {
        /// Natural recovery's rows before their intervals are drawn, and
        /// whether they are the last before them (no provisional ones to
        /// come).
        NaturalValues(
            (Vec<natural::RunRecovery>, Vec<natural::RecoveryDiff>),
            bool,
        ),
        /// The likelihoods' rows before their intervals are drawn.
        LikelihoodValues(Vec<likelihood::Likelihood>),
        /// The LLR by turn's rows so far: the pairs' before the last whole,
        /// the last's before its intervals are drawn.
        LlrTurnValues(Vec<likelihood::LlrTurn>, usize),
        Natural((Vec<natural::RunRecovery>, Vec<natural::RecoveryDiff>)),
        Likelihoods(
            Result<Vec<likelihood::Likelihood>>,
            Result<Vec<likelihood::LlrTurn>>,
        ),
    }
    let (beside_tx, beside_rx) = std::sync::mpsc::channel::<Beside>();
    std::thread::scope(|scope| -> Result<()> {
        let (tasks, pairs) = (&*task_infos, &pairs[..]);
        use crate::stage::{beside, in_background};
        let tx = beside_tx.clone();
        let natural = scope.spawn(move || {
            let n = in_background(|| {
                beside("natural recovery", || {
                    natural::analyse_staged(
                        set,
                        tasks,
                        pairs,
                        settings,
                        &mut |runs, diffs, last| {
                            let _ = tx.send(Beside::NaturalValues((runs, diffs), last));
                        },
                    )
                })
            });
            // Err: the main thread is gone (it panicked).
            let _ = tx.send(Beside::Natural(n));
        });
        a.begun.push(Part::NaturalRecovery);
        let tx = beside_tx;
        let likelihoods = scope.spawn(move || {
            // Err: the main thread is gone (it panicked); go on regardless.
            let _ = after_pass.recv();
            // The likelihoods' rows first, a pair a thread (both cores
            // theirs), handed on before their intervals are drawn; then the
            // length-matched intervals and the LLR by turn side by side:
            // the LLR by turn scans the rollouts and reads their
            // log-probabilities back on one core (11 M: 9.4 and 6.3 s one
            // after the other, the main thread waiting for them), and the
            // bootstraps share the pool. Begun with the rows, the LLR by
            // turn took a core from them (11 M, the Likelihood panel on
            // screen: its rows 0.80–0.88 → 0.51–0.58 s after the load, both
            // parts whole 0.15 s later). Both read the same rollouts, found
            // once.
            let successes = likelihood::Successes::of(set, tasks, pairs);
            let (l, t) = std::thread::scope(|inner| {
                let (l, t) = beside("likelihood", || {
                    let values = likelihood::values(set, pairs, &successes);
                    // The Likelihood panel on screen: the LLR by turn's rows
                    // handed on a pair at a time, with their values, then
                    // with provisional intervals, before the rest are drawn
                    // (its drill).
                    let (early_tx, successes) = (tx.clone(), &successes);
                    let t = inner.spawn(move || {
                        beside("likelihood by turn", || {
                            if !settings.focus.shows(Part::LlrByTurn) {
                                return likelihood::by_turn(set, pairs, settings, successes);
                            }
                            let early = likelihood::Early {
                                provisional: settings.boot.provisional(),
                                hand: &mut |rows, n| {
                                    let _ = early_tx.send(Beside::LlrTurnValues(rows, n));
                                },
                            };
                            likelihood::by_turn_staged(set, pairs, settings, successes, early)
                        })
                    });
                    let l = values.map(|(mut rows, sets)| {
                        let _ = tx.send(Beside::LikelihoodValues(rows.clone()));
                        // The Likelihood panel on screen: the length-matched
                        // intervals of the first 1,000 resamples next.
                        let shows = settings.focus.shows(Part::Likelihood);
                        if let Some(boot) = settings.boot.provisional().filter(|_| shows) {
                            let mut early = rows.clone();
                            likelihood::with_provisional(&mut early, sets.clone(), &boot);
                            let _ = tx.send(Beside::LikelihoodValues(early));
                        }
                        likelihood::with_intervals(&mut rows, sets, &settings.boot);
                        rows
                    });
                    (l, t)
                });
                (l, crate::stage::joined(t.join()))
            });
            drop(successes);
            crate::stage::release_freed_memory();
            let _ = tx.send(Beside::Likelihoods(l, t));
        });
        // The parts computed beside are handed on once they are done — seen
        // at the main sequence's next hand-over, or as they come after its
        // last — not after the main sequence: at 11 M rollouts the
        // likelihoods end before the matched states (the Likelihood panel
        // 1.4–2.9 s sooner).
        let mut failed = None;
        // Natural recovery's rows handed on as they will be until its
        // intervals are drawn (its values, or its provisional intervals).
        let natural_early = std::cell::Cell::new(false);
        macro_rules! beside_in {
            ($next:expr) => {{
                while let Ok(part) = $next {
                    match part {
                        Beside::NaturalValues(n, last) => {
                            (a.natural_recovery, a.natural_recovery_diff) = n;
                            a.natural_values_in = true;
                            natural_early.set(natural_early.get() | last);
                            staged(&a);
                        }
                        Beside::LikelihoodValues(l) => {
                            a.likelihood = l;
                            a.likelihood_values_in = true;
                            staged(&a);
                        }
                        Beside::LlrTurnValues(t, n) => {
                            (a.llr_by_turn, a.llr_pairs_in) = (t, n);
                            staged(&a);
                        }
                        Beside::Natural(n) => {
                            (a.natural_recovery, a.natural_recovery_diff) = n;
                            done!(Part::NaturalRecovery);
                        }
                        Beside::Likelihoods(Ok(l), Ok(t)) => {
                            a.likelihood = l;
                            done!(Part::Likelihood);
                            a.llr_by_turn = t;
                            done!(Part::LlrByTurn);
                        }
                        // Reported once the threads are joined.
                        Beside::Likelihoods(Err(e), _) | Beside::Likelihoods(_, Err(e)) => {
                            failed = Some(e);
                        }
                    }
                }
            }};
        }
        // A part of the main sequence handed on, then those computed beside
        // that are done meanwhile.
        macro_rules! main_done {
            ($part:expr) => {{
                done!($part);
                beside_in!(beside_rx.try_recv());
            }};
        }
        // The main sequence waiting: what the parts computed beside hand on
        // taken in while `$cond` holds, none has failed, the audit is not
        // cancelled and the thread awaited is not `$finished`; then what
        // came meanwhile.
        macro_rules! take_in_while {
            ($cond:expr, $finished:expr) => {{
                while $cond
                    && failed.is_none()
                    && !settings.boot.cancel.is_cancelled()
                    && !$finished
                {
                    beside_in!(beside_rx.recv_timeout(std::time::Duration::from_millis(100)));
                }
                beside_in!(beside_rx.try_recv());
            }};
        }
        // [`take_in_while!`] with `$part`, computed beside, named first
        // among those pending meanwhile (the status line's "computing
        // natural recovery…"), then put back where it was.
        macro_rules! first_while {
            ($part:expr, $cond:expr, $finished:expr) => {{
                let part: Part = $part;
                let at = a.pending.iter().position(|p| *p == part);
                a.pending.retain(|p| *p != part);
                a.pending.insert(0, part);
                staged(&a);
                take_in_while!($cond, $finished);
                if let (Some(at), true) = (at, a.is_pending(part)) {
                    a.pending.retain(|p| *p != part);
                    a.pending.insert(at.min(a.pending.len()), part);
                    staged(&a);
                }
            }};
        }
        // The Recovery panel on screen from the start, its matched states'
        // values in: natural recovery's values and provisional intervals
        // before the matched states' intervals (11 M rollouts: natural
        // recovery's scan took ~1 s more, and its 1,000 resamples at its
        // lower priority ~0.5 s, waiting for them), the main sequence
        // waiting meanwhile — natural recovery named first — until they
        // are in, it is done or failed, another panel is on screen, or the
        // audit is cancelled.
        if let Some(sets) = matched_later.take() {
            first_while!(
                Part::NaturalRecovery,
                !natural_early.get() && settings.focus.shows(Part::NaturalRecovery),
                natural.is_finished()
            );
            a.pending.retain(|p| *p != Part::Matched);
            a.pending.insert(0, Part::Matched);
            staged(&a);
            matched_intervals(&mut a, &mut *staged, sets);
            main_done!(Part::Matched);
        }
        // The Likelihood panel on screen from the start (and not a panel
        // reading Pass@(K,T)): the likelihoods begin at once, before the
        // rollouts are counted and Pass@(K,T), and the main sequence waits
        // for them (`wait_beside!`) — both cores theirs, and no counting
        // table of Pass@(K,T) held beside their memory.
        let focus = &settings.focus;
        if a.is_pending(Part::Likelihood)
            && focus.wants(Part::Likelihood)
            && !focus.wants(Part::Pass)
        {
            let _ = pass_done.send(());
            a.begun.extend([Part::Likelihood, Part::LlrByTurn]);
            staged(&a);
        }
        // The panel on screen reads a part computed beside that is running,
        // and every part of the main sequence it reads is in (the Likelihood
        // panel; the Recovery panel once the matched states are in): the
        // main sequence waits for it — both cores its, natural recovery's
        // lower priority then no matter — until it is in (or failed, or its
        // thread gone), another panel is on screen, or the audit is
        // cancelled. It is named first among those pending meanwhile (the
        // status line's "computing natural recovery…"), then put back.
        macro_rules! wait_beside {
            () => {{
                let focus = &settings.focus;
                let awaited = |a: &Audit| {
                    let main_left = Part::ALL
                        .into_iter()
                        .any(|p| p.in_turn() && focus.wants(p) && a.is_pending(p));
                    Part::ALL
                        .into_iter()
                        .find(|p| p.beside() && focus.wants(*p) && a.is_running(*p))
                        .filter(|_| !main_left)
                };
                if let Some(part) = awaited(&a) {
                    first_while!(
                        part,
                        awaited(&a) == Some(part),
                        match part {
                            Part::NaturalRecovery => natural.is_finished(),
                            _ => likelihoods.is_finished(),
                        }
                    );
                }
            }};
        }
        // The Likelihood panel on screen, or the Recovery panel with its
        // matched states in: what it reads before the rollouts are counted.
        wait_beside!();
        let agg = std::sync::Arc::new(eval_aggregates_with(
            set,
            std::sync::Arc::clone(&task_infos),
        ));
        a.agg = std::sync::Arc::clone(&agg);
        a.coinciding_levels = passkt::coinciding_levels(&agg.tasks, &settings.levels)
            .into_iter()
            .map(|(bench, levels, largest)| CoincidingLevels {
                benchmark: set.name(bench).to_string(),
                levels,
                largest,
            })
            .collect();
        let agg = &agg;
        crate::stage::release_freed_memory();
        // The main sequence, in Part::ALL's order but for the parts the
        // panel on screen reads (`settings.focus`), which come as soon as
        // their inputs are in. The part computing is named first among
        // those pending (`Audit::is_running`), also in the hand-over before
        // it begins.
        let mut left: Vec<Part> = Part::ALL
            .into_iter()
            .filter(|p| p.in_turn() && a.is_pending(*p))
            .collect();
        let first_of = |a: &mut Audit, left: &[Part]| {
            if let Some(next) = settings.focus.next(left) {
                a.pending.retain(|p| *p != next);
                a.pending.insert(0, next);
            }
        };
        first_of(&mut a, &left);
        main_done!(Part::Aggregates);
        // A main-sequence part other than Pass@(K,T) (which reads none of
        // them; those reading Pass@(K,T) read its values and K grid alone).
        let run_main = |part: Part, a: &mut Audit, staged: &mut dyn FnMut(&Audit)| match part {
            Part::Categories => {
                a.categories = categories::analyse(
                    &passkt::PassInput { set, agg },
                    pairs,
                    &a.pass.ks,
                    settings,
                );
            }
            Part::Failures => a.failures = failures::analyse(set, agg, &settings.levels),
            Part::Cost => {
                (a.cost_frontier, a.cost_winners) = cost::analyse(set, agg, &a.pass, settings);
            }
            Part::BudgetMix => {
                let rules = match a.budgetmix_rules_in {
                    true => std::mem::take(&mut a.budgetmix),
                    false => {
                        a.training_runs = budgetmix::training_runs(set, settings);
                        budgetmix::rules_of(set, settings)
                    }
                };
                a.budgetmix = budgetmix::with_gains(set, &a.pass, settings, rules);
            }
            Part::Matched => {
                let sets = matched_values(pairs, a, staged);
                matched_intervals(a, staged, sets);
            }
            _ => unreachable!("{part:?} is not of the main sequence"),
        };
        // Every benchmark Pass@(K,T) reports on: once each one's values are
        // in, the parts reading them may run.
        let benchmarks: Vec<String> = passkt::PassInput { set, agg }
            .benchmarks()
            .into_iter()
            .map(|b| set.name(b).to_string())
            .collect();
        loop {
            wait_beside!();
            let Some(&part) = a.pending.first().filter(|p| left.contains(p)) else {
                break;
            };
            if part == Part::Pass {
                // Likelihoods begun before it (above) and still computing,
                // another panel now on screen: Pass@(K,T) waits for them,
                // so that its peak never holds their memory too.
                take_in_while!(
                    a.begun.contains(&Part::Likelihood) && a.is_pending(Part::Likelihood),
                    likelihoods.is_finished()
                );
                // Each benchmark's Pass@(K,T) rows are handed on as they
                // come (the Budget panel shows a benchmark once its values
                // are in, then once its intervals are); the part is in when
                // every benchmark's §4.2 tests are. Between two benchmarks'
                // draws, a part the panel on screen reads comes first if
                // its inputs are in (`Focus::while_pass_draws`: the Cost
                // panel's frontier once every benchmark's values are; the
                // Steps panel's matched states at once) — the workbench
                // only: with no panel on screen the order is
                // `Part::ALL`'s.
                let pass = passkt::analyse_staged(
                    &passkt::PassInput { set, agg },
                    pairs,
                    settings,
                    &mut |so_far| {
                        let values = benchmarks.iter().all(|b| {
                            so_far.values_in.contains(b) || so_far.benchmarks_in.contains(b)
                        });
                        a.pass = so_far;
                        staged(&a);
                        beside_in!(beside_rx.try_recv());
                        // The panel on screen reads the likelihoods (and not
                        // Pass@(K,T)): they begin once every benchmark's
                        // values are in (Pass@(K,T)'s counting tables are
                        // freed then), and its draws wait for them
                        // (`wait_beside!`).
                        let focus = &settings.focus;
                        if values
                            && !a.begun.contains(&Part::Likelihood)
                            && a.is_pending(Part::Likelihood)
                            && focus.wants(Part::Likelihood)
                            && !focus.wants(Part::Pass)
                        {
                            let _ = pass_done.send(());
                            a.begun.extend([Part::Likelihood, Part::LlrByTurn]);
                            staged(&a);
                        }
                        wait_beside!();
                        // The Cost panel on screen (and not one reading
                        // Pass@(K,T)): the benchmark selected — else, none
                        // selected, the first with values — costed once
                        // its values are in, before the others' are
                        // counted (its points and winners are those the
                        // whole part gives it: each benchmark's are its
                        // cells' alone); another selected meanwhile, it
                        // too once its values are in. The part comes
                        // whole once every benchmark's values are.
                        if !values
                            && a.is_pending(Part::Cost)
                            && focus.wants(Part::Cost)
                            && !focus.wants(Part::Pass)
                        {
                            let counted = |b: &String| {
                                a.pass.values_in.contains(b) || a.pass.benchmarks_in.contains(b)
                            };
                            let bench = match focus.benchmark() {
                                Some(b) => Some(b).filter(|b| counted(b) && !a.cost_in.contains(b)),
                                None => benchmarks
                                    .iter()
                                    .find(|b| counted(b))
                                    .filter(|_| a.cost_in.is_empty())
                                    .cloned(),
                            };
                            if let Some(bench) = bench {
                                let one = passkt::PassReport {
                                    cells: a
                                        .pass
                                        .cells
                                        .iter()
                                        .filter(|c| c.benchmark == bench)
                                        .cloned()
                                        .collect(),
                                    ..Default::default()
                                };
                                // Named as computing meanwhile, then put
                                // back where it was (Pass@(K,T) first).
                                let at = a.pending.iter().position(|p| *p == Part::Cost);
                                a.pending.retain(|p| *p != Part::Cost);
                                a.pending.insert(0, Part::Cost);
                                staged(&a);
                                let (points, winners) = cost::analyse(set, agg, &one, settings);
                                a.cost_frontier.extend(points);
                                a.cost_winners.extend(winners);
                                a.cost_in.push(bench);
                                a.pending.retain(|p| *p != Part::Cost);
                                let at = at.unwrap_or(a.pending.len()).min(a.pending.len());
                                a.pending.insert(at, Part::Cost);
                                staged(&a);
                            }
                        }
                        while let Some(next) = settings.focus.while_pass_draws(&left, values) {
                            // Named as computing before it begins, then
                            // Pass@(K,T) again.
                            a.pending.retain(|p| *p != next);
                            a.pending.insert(0, next);
                            staged(&a);
                            run_main(next, &mut a, &mut *staged);
                            left.retain(|p| *p != next);
                            a.pending.retain(|p| *p != next && *p != Part::Pass);
                            a.pending.insert(0, Part::Pass);
                            main_done!(next);
                        }
                    },
                );
                a.pass = pass;
                crate::stage::release_freed_memory();
                let _ = pass_done.send(());
            } else {
                run_main(part, &mut a, &mut *staged);
            }
            left.retain(|p| *p != part);
            a.pending.retain(|p| *p != part);
            first_of(&mut a, &left);
            // `done!` removes it again: a no-op; it laps the clock and hands on.
            main_done!(part);
        }
        // As they come, until both threads are done (a thread that panicked
        // sends nothing, and its panic goes on here, as it would have on
        // this thread).
        beside_in!(beside_rx.recv());
        crate::stage::joined(natural.join());
        crate::stage::joined(likelihoods.join());
        failed.map_or(Ok(()), Err)
    })?;
    if !patterns.is_empty() {
        let trajs = grep::candidates(set, &a.agg);
        let hit = grep::matching(set, &trajs, &patterns)?;
        a.grep = grep::analyse(set, &trajs, &hit, &patterns);
    }
    done!(Part::Grep);
    a.notes.extend(closing_notes(set, &a.agg, &pairs, settings));
    a.notes
        .extend(a.coinciding_levels.iter().map(CoincidingLevels::note));
    staged(&a);
    Ok(a)
}

/// The audit's notes on the set as a whole: outcome-only rollouts, one seed
/// per run, `--audit` runs that are not there.
fn closing_notes(
    set: &LogSet,
    agg: &EvalAggregates,
    pairs: &[Pair],
    settings: &Settings,
) -> Vec<String> {
    let mut notes: Vec<String> = set.notes.clone();
    let outcome_only = set
        .trajectories
        .iter()
        .filter(|t| !t.is_training() && !t.turns_known)
        .count();
    if outcome_only > 0 {
        notes.push(format!(
            "{outcome_only} evaluation rollouts have unknown turns (no `turns`, no `steps`: an outcome-only dump): they count only in the native cells of their own budget; Pass@(K,T) at tighter budgets, pass curves, token budgets, costs and likelihood need per-turn logs"
        ));
    }
    let one_seed: Vec<String> = pairs
        .iter()
        .filter(|p| {
            [p.base, p.rl].iter().all(|r| {
                agg.seeds
                    .get(&(p.benchmark, *r))
                    .is_none_or(|s| s.len() < 2)
            })
        })
        .map(|p| format!("{} → {}", set.name(p.base), set.name(p.rl)))
        .collect();
    if !one_seed.is_empty() {
        // Each pair named once, with how many benchmarks it is compared on
        // when more than one (a pair on 4 benchmarks was listed 4 times).
        let mut named: Vec<(&str, usize)> = Vec::new();
        for p in &one_seed {
            match named.iter_mut().find(|(q, _)| q == p) {
                Some((_, n)) => *n += 1,
                None => named.push((p, 1)),
            }
        }
        let named: Vec<String> = named
            .into_iter()
            .map(|(p, n)| match n {
                1 => p.to_string(),
                n => format!("{p} on {n} benchmarks"),
            })
            .collect();
        notes.push(format!(
            "{} of {} comparison(s) rest on one training seed per run ({}): their intervals cover task-to-task variation, not seed-to-seed; rollouts of several seeds with a `seed` field give two-stage intervals",
            one_seed.len(),
            pairs.len(),
            named.join(", ")
        ));
    }
    for name in &settings.audit {
        if set.strings.get(name).is_none() {
            notes.push(format!("--audit {name}: no run of that name in the logs"));
        }
    }
    notes
}
