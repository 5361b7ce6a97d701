//! Workbench state: what is loaded, on screen and selected, the tables made
//! from it; `keys` holds the one `step` function that turns commands into
//! changes, `tour` the guided tour.

use std::sync::Arc;

use ratatui::crossterm::event::{
    KeyCode, KeyEvent, KeyModifiers, MouseButton, MouseEvent, MouseEventKind,
};

use super::keymap::{lookup, Command};
use super::panel::Panel;
use super::select::{current, Selection};
use super::table::{Mark, TableData, Target};
use super::views::{analyses, budget, cost, drill, overview, search};
use crate::analysis::passkt::Mode;
use crate::jobs::{Fresh, Loaded};
use crate::schema::{Loc, LogSet};

mod keys;
mod tour;

/// A drill-down level on top of a panel.
#[derive(Debug, Clone, PartialEq)]
pub enum View {
    Tasks {
        k: u64,
        level: u32,
        mode: Mode,
    },
    Rollouts {
        task: String,
        level: u32,
        mode: Mode,
    },
    Trajectory(Loc),
    /// Enter on a trajectory's step: each of its fields whole, its texts
    /// wrapped to the screen, a line a row (`step` counts from 0).
    Step {
        loc: Loc,
        step: usize,
    },
    /// Two trajectories side by side (A, B).
    Compare(Loc, Loc),
    /// Enter on a turn of two trajectories side by side: A's step whole,
    /// then B's (`step` counts from 0; a side without it says so).
    CompareStep {
        a: Loc,
        b: Loc,
        step: usize,
    },
    /// `F`: a regular expression's hits over every loaded trajectory.
    Search(String),
    /// `a`: the records `--follow` read since the set on screen.
    Appended,
    /// Enter on a matched-states row (Steps) or a probe row of error
    /// recovery (Recovery): the pair's states (`error`: the error states),
    /// each run's mean score there and RL − base.
    States {
        pair: crate::analysis::PairNames,
        error: bool,
    },
    /// Enter on a state: its probe, a candidate a row.
    Probe(Loc),
    /// Enter on a Likelihood row, trajectory LLRs shown (`m`): the pair's
    /// length-matched pairs of trajectories.
    LengthMatched {
        pair: crate::analysis::PairNames,
    },
    /// Enter on a Training row: the run's metric at each checkpoint.
    Checkpoints {
        run: String,
        metric: String,
    },
    /// `P`: every run, to pick a pair to compare — Enter on the base
    /// (`base` once picked), then on the RL run.
    Runs {
        base: Option<String>,
    },
    /// `A`: the runs with training rollouts, to audit one as BudgetMix
    /// (Enter) or stop auditing it.
    TrainingRuns,
    RuleRecords {
        run: String,
        rule: usize,
    },
    /// Enter on a natural-recovery row: its runs' rates turn by turn.
    NaturalTurns {
        benchmark: String,
        runs: Vec<String>,
    },
    /// Enter on a Likelihood row: the pair's step LLR turn by turn.
    LlrTurns {
        benchmark: String,
        base: String,
        rl: String,
    },
}

/// What the background work is doing.
#[derive(Debug, Clone, PartialEq)]
pub enum Status {
    Loading,
    Ready,
    Failed(String),
}

pub struct App {
    pub data: Option<Arc<Loaded>>,
    pub status: Status,
    pub panel: Panel,
    pub sel: Selection,
    pub stack: Vec<View>,
    /// Selected row of the current table, per depth.
    pub rows: Vec<usize>,
    /// Text `y` copied, for the terminal loop to hand to the clipboard.
    pub clipboard: Option<String>,
    /// Where the last frame drew the current table's rows, for a click.
    pub rows_at: Option<crate::tui::draw::RowsAt>,
    /// Characters the long cells of a table are scrolled sideways.
    pub hscroll: usize,
    pub help: bool,
    /// Lines the help overlay is scrolled down.
    pub help_scroll: u16,
    pub filter: String,
    pub filter_editing: bool,
    /// The `F` prompt: the pattern being typed.
    pub search: String,
    pub search_editing: bool,
    pub message: Option<String>,
    pub quit: bool,
    /// Cost panel: index into the distinct costs.
    pub ceiling: usize,
    pub balance: bool,
    /// Likelihood panel: show trajectory LLRs instead of step NLLs.
    pub llr_view: bool,
    /// A recompute or reload the main loop should request.
    pub pending: Option<Pending>,
    pub no_color: bool,
    /// The tables of the drill-down views on the stack, made once each
    /// (re-reading a record is I/O; at 11 M rollouts a cell's tasks take
    /// 0.3 s): back to a view with Esc shows it at once.
    pub cached: Vec<(View, Arc<TableData>)>,
    /// The last table filtered or sorted, and what from: a redraw or a key
    /// press in a large sorted table (26,000 tasks) does not sort it again.
    shaped: Option<Shaped>,
    /// A view's table being made in the background (a record re-read — a
    /// compressed file is decoded whole the first time — or a search): the
    /// screen stays live meanwhile.
    /// Dropping it (leaving the view) tells the job it is no longer wanted.
    reading: Option<(View, std::sync::mpsc::Receiver<TableData>, Arc<()>)>,
    /// How far the search being made in the background has gone.
    searched: Option<Arc<crate::analysis::grep::Progress>>,
    /// The current table's sort: (column, descending), until the view changes.
    pub sort: Option<(usize, bool)>,
    /// Where `e` writes its CSV (the current directory).
    pub export_dir: std::path::PathBuf,
    /// A rollout marked with `x`, waiting for the second to compare with.
    pub marked: Option<Loc>,
    /// The pairs picked with `P` (`--compare` for the next audit), once
    /// one is; None: the pairs as started.
    pub compare: Option<Vec<(String, String)>>,
    /// The pair picked last, selected once an audit holds it.
    want_pair: Option<(String, String)>,
    /// The runs named to audit as BudgetMix since the start (`A`:
    /// `--audit` for the next audit); None: as started.
    pub audit: Option<Vec<String>>,
    /// The run `A` audited last, selected once an audit holds it.
    want_audit: Option<String>,
    /// The terminal's width at the last draw (the compare view stacks its
    /// two sides below 100 columns).
    pub width: u16,
    /// The guided tour, while it runs.
    pub tour: Option<Tour>,
    /// `--tour`: start the tour as soon as the logs are loaded.
    pub tour_on_load: bool,
    /// `--follow`: records read on since the set on screen, until an audit
    /// of a set holding them replaces it.
    pub appended: Option<Appended>,
    /// The analysis being computed and since when (the status line counts
    /// its seconds: at 10 M rollouts Pass@(K,T) takes several).
    pub computing: Option<(crate::analysis::Part, std::time::Instant)>,
}

/// The message after `--follow` loaded the logs again whole.
pub const REREAD: &str = "logs re-read";

/// Records `--follow` read since the audit on screen.
pub struct Appended {
    /// What each read found (its serial number, its records as a set of
    /// their own): the appended records' details.
    pub sets: Vec<(u64, Arc<LogSet>)>,
    /// Each record's place and the serial number of the read that found it.
    pub records: Vec<(u64, Loc)>,
    /// When the newest of them was read.
    pub at: std::time::SystemTime,
}

/// The guided tour's state: its steps (made from the audit by
/// [`crate::tour::steps`]), the current one, and how far its text is scrolled.
#[derive(Debug, Clone, PartialEq)]
pub struct Tour {
    pub steps: Vec<crate::tour::Step>,
    pub at: usize,
    pub scroll: u16,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pending {
    Reload,
    Recompute,
}

/// A table filtered and sorted ([`App::table`]), what it was made from and how.
struct Shaped {
    from: Arc<TableData>,
    filter: String,
    sort: Option<(usize, bool)>,
    table: Arc<TableData>,
}

impl App {
    pub fn new(no_color: bool, balance: bool) -> App {
        App {
            data: None,
            status: Status::Loading,
            panel: Panel::Overview,
            sel: Selection::default(),
            stack: Vec::new(),
            rows: vec![0],
            rows_at: None,
            clipboard: None,
            hscroll: 0,
            help: false,
            help_scroll: 0,
            filter: String::new(),
            filter_editing: false,
            search: String::new(),
            search_editing: false,
            message: None,
            quit: false,
            ceiling: usize::MAX,
            balance,
            llr_view: false,
            pending: None,
            no_color,
            cached: Vec::new(),
            shaped: None,
            reading: None,
            searched: None,
            sort: None,
            export_dir: std::path::PathBuf::from("."),
            marked: None,
            compare: None,
            want_pair: None,
            audit: None,
            want_audit: None,
            computing: None,
            width: 120,
            tour: None,
            tour_on_load: false,
            appended: None,
        }
    }

    /// Whole seconds the analysis being computed has taken so far, while
    /// one is.
    pub fn computing_secs(&self) -> Option<u64> {
        self.computing.map(|(_, since)| since.elapsed().as_secs())
    }

    /// Work under way whose result should be drawn when it arrives.
    pub fn busy(&self) -> bool {
        matches!((&self.reading, self.stack.last()), (Some((l, _, _)), Some(v)) if l == v)
    }

    /// The top of a panel (no drill-down).
    pub fn at_top(&self) -> bool {
        self.stack.is_empty()
    }

    /// The trajectory at `loc` re-read from its file in the background
    /// ([`drill::trajectory`]), or None while it is being read.
    fn read_trajectory(&mut self, d: &Loaded, loc: Loc) -> Option<TableData> {
        let set = self.set_of(loc).unwrap_or(d.set.clone());
        self.in_background(
            &View::Trajectory(loc),
            move |_: &(dyn Fn() -> bool + Sync)| drill::trajectory(&set, loc),
        )
    }

    /// The table of `view` made by `job` in a background thread, or None
    /// while it is still being made. The job is handed a "still wanted?"
    /// check (false once the view is left) for long work to stop early.
    fn in_background(
        &mut self,
        view: &View,
        job: impl FnOnce(&(dyn Fn() -> bool + Sync)) -> TableData + Send + 'static,
    ) -> Option<TableData> {
        use std::sync::mpsc::TryRecvError;
        if let Some((v, rx, _)) = &self.reading {
            if v == view {
                return match rx.try_recv() {
                    Ok(t) => {
                        self.reading = None;
                        Some(t)
                    }
                    Err(TryRecvError::Empty) => None,
                    Err(TryRecvError::Disconnected) => {
                        self.reading = None;
                        let mut t = TableData::new("error", "error", &["error"]);
                        t.push_text(
                            vec!["the records could not be re-read".into()],
                            Mark::Bad,
                            Target::None,
                        );
                        Some(t)
                    }
                };
            }
        }
        let (tx, rx) = std::sync::mpsc::channel();
        let alive = Arc::new(());
        let weak = Arc::downgrade(&alive);
        let spawned = std::thread::Builder::new()
            .name("rl-audit-reread".into())
            .spawn(move || {
                let _ = tx.send(job(&|| weak.strong_count() > 0));
            });
        if let Err(e) = spawned {
            let mut t = TableData::new("error", "error", &["error"]);
            t.push_text(
                vec![format!("cannot start a thread: {e}")],
                Mark::Bad,
                Target::None,
            );
            return Some(t);
        }
        self.reading = Some((view.clone(), rx, alive));
        None
    }

    pub fn set_data(&mut self, d: Arc<Loaded>) {
        let now = d.audit.pending.first().copied();
        if self.computing.map(|c| c.0) != now {
            self.computing = now.map(|p| (p, std::time::Instant::now()));
        }
        self.data = Some(d);
        self.status = Status::Ready;
        self.forget_tables();
        self.select_wanted_pair();
        self.select_wanted_audit();
        self.clamp();
        if !self.data.as_ref().is_some_and(|d| d.audit.is_complete()) {
            // The audit so far: the tour waits for all of it.
        } else if self.tour_on_load {
            self.tour_on_load = false;
            self.start_tour();
        } else if let Some(at) = self.tour.as_ref().map(|t| t.at) {
            // A recompute: the same step, with the new numbers.
            self.start_tour();
            self.tour_go(at);
        }
    }

    /// What the user chose since the start (`B`'s --balance, `P`'s pairs,
    /// `A`'s audited runs) set in the settings of the next audit or load.
    pub fn chosen(&self, settings: &mut crate::analysis::Settings) {
        settings.balance = self.balance;
        if let Some(c) = &self.compare {
            settings.compare = c.clone();
        }
        if let Some(a) = &self.audit {
            settings.audit = a.clone();
        }
    }

    /// The run audited with `A`, once the audit on screen holds its
    /// rules: the one the BudgetMix panel shows.
    fn select_wanted_audit(&mut self) {
        let (Some(run), Some(d)) = (&self.want_audit, &self.data) else {
            return;
        };
        if let Some(i) = d.audit.budgetmix.iter().position(|b| b.run == *run) {
            self.sel.pair = i;
            self.want_audit = None;
        }
    }

    /// Enter on a run in `A`'s list (or the empty BudgetMix panel's): its
    /// training rollouts audited as BudgetMix (added to `--audit`), or,
    /// audited by name, no longer; the audit recomputed in the background.
    pub(super) fn pick_audit(&mut self, run: String) {
        use crate::analysis::budgetmix::Audited;
        let Some(d) = self.data.clone() else { return };
        let Some(r) = d.audit.training_runs.iter().find(|r| r.run == run) else {
            return;
        };
        let mut names = self
            .audit
            .clone()
            .unwrap_or_else(|| d.audit.settings.audit.clone());
        let what = match r.audited {
            Audited::ByMethod => {
                self.message = Some(format!(
                    "{run} declares method: budgetmix, so it is always audited"
                ));
                return;
            }
            Audited::ByName => {
                names.retain(|n| *n != run);
                format!("without --audit {run}")
            }
            Audited::No => {
                names.push(run.clone());
                self.want_audit = Some(run.clone());
                format!("with --audit {run}")
            }
        };
        self.message = Some(format!("recomputing {what}"));
        self.audit = Some(names);
        self.pending = Some(Pending::Recompute);
        if self.stack.last() == Some(&View::TrainingRuns) {
            self.close_view();
        } else {
            // The empty panel's row: the audit's rules show from the top.
            self.set_row(0);
        }
    }

    /// The pair picked with `P`, once the audit on screen holds it: on
    /// the benchmark selected if it is compared there, else the first
    /// that compares it.
    fn select_wanted_pair(&mut self) {
        let (Some((base, rl)), Some(d)) = (&self.want_pair, &self.data) else {
            return;
        };
        let a = &d.audit;
        let benches = a.benchmarks();
        let of = |bench: &str| {
            a.pairs_of(bench)
                .iter()
                .position(|p| p.base == *base && p.rl == *rl)
        };
        let (now, _) = current(a, &self.sel);
        let at = benches
            .iter()
            .position(|b| Some(b) == now.as_ref() && of(b).is_some())
            .or_else(|| benches.iter().position(|b| of(b).is_some()));
        if let Some(i) = at {
            self.sel.bench = i;
            self.sel.pair = of(&benches[i]).unwrap_or(0);
            self.want_pair = None;
        }
    }

    /// Enter on a run in the pair picker: the first the base, the second
    /// the RL run — the pair then added to those compared (`--compare`,
    /// the pairs on screen kept) and the audit recomputed; a pair compared
    /// now is selected.
    pub(super) fn pick_run(&mut self, run: String) {
        let Some(d) = self.data.clone() else { return };
        let Some(View::Runs { base }) = self.stack.last().cloned() else {
            return;
        };
        let Some(base) = base else {
            self.message = Some(format!(
                "base: {run} — Enter on the RL run to compare it with (Esc: back)"
            ));
            if let Some(v) = self.stack.last_mut() {
                *v = View::Runs { base: Some(run) };
            }
            self.drop_unwanted();
            return;
        };
        if run == base {
            self.message = Some(format!("{run} is the base: pick another run as RL"));
            return;
        }
        let on = |r: &str| d.audit.run(r).map_or(Vec::new(), |x| x.benchmarks.clone());
        if !on(&base).iter().any(|b| on(&run).contains(b)) {
            self.message = Some(format!(
                "{base} and {run} share no benchmark: pick a run on {}",
                on(&base).join(", ")
            ));
            return;
        }
        let mut pairs = self.pairs_asked(&d);
        let pair = (base.clone(), run.clone());
        self.want_pair = Some(pair.clone());
        if pairs.contains(&pair) {
            // Compared already: selected, once an audit holds it.
            self.select_wanted_pair();
            self.message = Some(format!("{base} → {run} (d in P drops it)"));
            self.close_view();
        } else {
            pairs.push(pair);
            self.recompute_with(pairs, format!("with --compare {base}:{run}"));
        }
    }

    /// The audit recomputed with `pairs` as `--compare` (`what` changed,
    /// for the status line), back where `P` was pressed.
    fn recompute_with(&mut self, pairs: Vec<(String, String)>, what: String) {
        self.message = Some(format!(
            "recomputing {what} ({} pair(s) of runs)",
            pairs.len()
        ));
        self.compare = Some(pairs);
        self.pending = Some(Pending::Recompute);
        self.close_view();
    }

    /// Back out of the view on top (its selected row with it), to the one
    /// below as it was; false at the top.
    pub(super) fn close_view(&mut self) -> bool {
        if self.stack.pop().is_none() {
            return false;
        }
        self.rows.pop();
        self.drop_unwanted();
        self.sort = None;
        self.hscroll = 0;
        true
    }

    /// `d` in the pair picker, its base picked: the pair of the base and
    /// the run under the cursor no longer compared (the audit recomputed),
    /// unless it is the last (no `--compare` at all would bring back the
    /// pairs by method).
    pub(super) fn drop_pair(&mut self) {
        let (Some(d), Some(View::Runs { base: Some(base) })) =
            (self.data.clone(), self.stack.last().cloned())
        else {
            self.message =
                Some("d drops a pair: in P, Enter on its base, then d on its RL run".into());
            return;
        };
        let Some(t) = self.table() else { return };
        let Target::Run(run) = t.target(self.row()) else {
            return;
        };
        let mut pairs = self.pairs_asked(&d);
        let pair = (base.clone(), run.clone());
        let Some(i) = pairs.iter().position(|p| *p == pair) else {
            self.message = Some(format!("{base} → {run} is not compared"));
            return;
        };
        if pairs.len() == 1 {
            self.message = Some(format!(
                "{base} → {run} is the only pair: pick another before dropping it"
            ));
            return;
        }
        pairs.remove(i);
        self.recompute_with(pairs, format!("without {base} → {run}"));
    }

    /// The pairs of runs asked for: those picked with `P`, else those of
    /// `--compare`, else those formed by method (the audit's, each once).
    fn pairs_asked(&self, d: &Loaded) -> Vec<(String, String)> {
        if let Some(c) = &self.compare {
            return c.clone();
        }
        if !d.audit.settings.compare.is_empty() {
            return d.audit.settings.compare.clone();
        }
        let mut ps: Vec<(String, String)> = Vec::new();
        for p in &d.audit.pairs {
            let p = (p.base.clone(), p.rl.clone());
            if !ps.contains(&p) {
                ps.push(p);
            }
        }
        ps
    }

    /// `--follow` read on (set number `read`): its records show at once.
    pub fn read_on(&mut self, read: u64, f: Arc<Fresh>) {
        if f.records.is_empty() {
            return;
        }
        // The status line counts them, no longer the last re-read.
        if self.message.as_deref() == Some(REREAD) {
            self.message = None;
        }
        let a = self.appended.get_or_insert_with(|| Appended {
            sets: Vec::new(),
            records: Vec::new(),
            at: std::time::SystemTime::now(),
        });
        a.sets.push((read, f.set.clone()));
        a.at = std::time::SystemTime::now();
        // A last line read before its newline came is read again.
        let had: std::collections::HashSet<Loc> = a.records.iter().map(|r| r.1).collect();
        a.records.extend(
            f.records
                .iter()
                .filter(|l| !had.contains(l))
                .map(|&l| (read, l)),
        );
        if self.stack.last() == Some(&View::Appended) {
            self.forget_tables();
        }
    }

    /// The background job failed with `e`. Before any results: the error
    /// screen. A first audit that stopped partway (a log file gone or cut
    /// while its log-probabilities were read back, say): its parts on screen
    /// stay — each is final — and the status line says the rest will not
    /// come, instead of counting their seconds. After a whole audit: it
    /// stays, and a message says why the new one is not there.
    pub fn failed(&mut self, e: &str) {
        // Records read on that could not be merged are in no set to be
        // audited (the next read loads whole).
        self.appended = None;
        match &self.data {
            Some(d) if d.audit.is_complete() => {
                self.message = Some(format!("kept the previous results: {e}"));
            }
            _ => {
                self.status = Status::Failed(e.to_string());
                // The stand-ins say their analyses will not come.
                self.forget_tables();
            }
        }
    }

    /// The audit on screen stopped partway: what is pending will not come.
    pub fn stopped(&self) -> bool {
        self.data.is_some() && matches!(self.status, Status::Failed(_))
    }

    /// Why quitting now is a failed run (exit 2): the logs could not be
    /// loaded, or their first audit stopped partway.
    pub fn failure(&self) -> Option<String> {
        match (&self.data, &self.status) {
            (None, Status::Failed(e)) => Some(format!("could not load the logs: {e}")),
            (Some(_), Status::Failed(e)) => Some(format!("the audit stopped: {e}")),
            _ => None,
        }
    }

    /// An audit of set number `read` is on screen: the records read by then
    /// are in it.
    pub fn audited(&mut self, read: u64) {
        if let Some(a) = &mut self.appended {
            a.records.retain(|&(r, _)| r > read);
            a.sets.retain(|&(r, _)| r > read);
            if a.records.is_empty() {
                self.appended = None;
            }
        }
        if self.stack.last() == Some(&View::Appended) {
            self.forget_tables();
        }
    }

    /// The set a trajectory is re-read from: the read that found it if it
    /// is not yet audited, else the set on screen.
    fn set_of(&self, loc: Loc) -> Option<Arc<LogSet>> {
        let fresh = self.appended.as_ref().and_then(|a| {
            let (read, _) = a.records.iter().find(|r| r.1 == loc)?;
            a.sets.iter().find(|s| s.0 == *read).map(|s| s.1.clone())
        });
        fresh.or_else(|| self.data.as_ref().map(|d| d.set.clone()))
    }

    fn clamp(&mut self) {
        let Some(d) = &self.data else { return };
        let a = &d.audit;
        self.sel.k = self.sel.k.min(a.pass.ks.len().saturating_sub(1));
        self.sel.level = self
            .sel
            .level
            .min(a.settings.levels.len().saturating_sub(1));
    }

    pub fn row(&self) -> usize {
        *self.rows.last().unwrap_or(&0)
    }

    fn set_row(&mut self, r: usize) {
        if let Some(x) = self.rows.last_mut() {
            *x = r;
        }
    }

    /// The Cost panel's ceiling: one of the benchmark's distinct costs.
    pub fn ceiling_cost(&self, d: &Loaded) -> Option<f64> {
        let (bench, _) = current(&d.audit, &self.sel);
        let stops = cost::stops(&d.audit, &bench.unwrap_or_default());
        stops
            .get(self.ceiling.min(stops.len().saturating_sub(1)))
            .copied()
    }

    /// The main table of the current view (what Enter and export act on),
    /// shared: a drill-down's is made once.
    pub fn table(&mut self) -> Option<Arc<TableData>> {
        let d = self.data.clone()?;
        let t = match self.stack.last().cloned() {
            Some(v) => {
                if let Some((_, t)) = self.cached.iter().find(|(cv, _)| *cv == v) {
                    let t = Arc::clone(t);
                    return Some(self.shaped(t));
                }
                let t = match &v {
                    View::Tasks { k, level, mode } => {
                        budget::tasks(&d, &self.sel, *k, *level, *mode)
                    }
                    View::Rollouts { task, level, mode } => {
                        budget::rollouts(&d, &self.sel, task, *level, *mode)
                    }
                    View::Trajectory(loc) => match self.read_trajectory(&d, *loc) {
                        Some(t) => t,
                        None => return Some(Arc::new(drill::reading(&d.set, *loc))),
                    },
                    View::Step { loc, step } => {
                        // The trajectory's table, in unless a new audit let
                        // go of every table: then read again, kept as the
                        // trajectory's.
                        let tv = View::Trajectory(*loc);
                        let traj = match self.cached.iter().find(|(cv, _)| *cv == tv) {
                            Some((_, t)) => Arc::clone(t),
                            None => match self.read_trajectory(&d, *loc) {
                                Some(t) => {
                                    let t = Arc::new(t);
                                    self.cached.push((tv, Arc::clone(&t)));
                                    t
                                }
                                None => return Some(Arc::new(drill::reading(&d.set, *loc))),
                            },
                        };
                        drill::step(&traj, *step, self.width)
                    }
                    View::Search(p) => {
                        // A search starting counts afresh; one running goes on.
                        let running = matches!(&self.reading, Some((r, ..)) if *r == v);
                        let progress = match &self.searched {
                            Some(p) if running => Arc::clone(p),
                            _ => Arc::new(Default::default()),
                        };
                        self.searched = Some(Arc::clone(&progress));
                        let (set, pat, counts) = (d.set.clone(), p.clone(), Arc::clone(&progress));
                        match self.in_background(&v, move |wanted: &(dyn Fn() -> bool + Sync)| {
                            search::table(&set, &pat, wanted, &counts)
                        }) {
                            Some(t) => t,
                            None => {
                                let total = d.set.trajectories.len();
                                return Some(Arc::new(search::searching(p, &progress, total)));
                            }
                        }
                    }
                    View::RuleRecords { run, rule } => drill::rule_records(&d, run, *rule),
                    View::NaturalTurns { benchmark, runs } => {
                        drill::natural_turns(&d.audit, benchmark, runs)
                    }
                    View::LlrTurns {
                        benchmark,
                        base,
                        rl,
                    } => drill::llr_turns(&d.audit, (benchmark, base, rl)),
                    View::Appended => drill::appended(&d.set, self.appended.as_ref()),
                    View::Runs { base } => drill::runs(&d.audit, base.as_deref()),
                    View::TrainingRuns => drill::training_runs(&d.audit),
                    View::Checkpoints { run, metric } => drill::checkpoints(&d.audit, run, metric),
                    View::States { pair, error } => {
                        // Exact Q* of FrozenLake candidates: a DP a map.
                        let (set, pair, error) = (d.set.clone(), pair.clone(), *error);
                        let settings = d.audit.settings.clone();
                        let job = move |_: &(dyn Fn() -> bool + Sync)| {
                            drill::states(&set, &settings, &pair, error)
                        };
                        match self.in_background(&v, job) {
                            Some(t) => t,
                            None => {
                                return Some(Arc::new(TableData::new(
                                    "states",
                                    "reading the states…",
                                    &[],
                                )))
                            }
                        }
                    }
                    View::LengthMatched { pair } => {
                        let (set, audit, pair) = (d.set.clone(), d.clone(), pair.clone());
                        let job = move |_: &(dyn Fn() -> bool + Sync)| {
                            drill::length_matched(&set, &audit.audit, &pair)
                        };
                        match self.in_background(&v, job) {
                            Some(t) => t,
                            None => {
                                return Some(Arc::new(TableData::new(
                                    "length-matched",
                                    "reading the pairs' trajectories…",
                                    &[],
                                )))
                            }
                        }
                    }
                    View::Probe(loc) => {
                        let (set, loc, gamma) = (d.set.clone(), *loc, d.audit.settings.gamma);
                        let job =
                            move |_: &(dyn Fn() -> bool + Sync)| drill::probe(&set, loc, gamma);
                        match self.in_background(&v, job) {
                            Some(t) => t,
                            None => return Some(Arc::new(drill::reading(&d.set, loc))),
                        }
                    }
                    View::CompareStep { a, b, step } => {
                        let (set, a, b, step, width) = (d.set.clone(), *a, *b, *step, self.width);
                        let job = move |_: &(dyn Fn() -> bool + Sync)| {
                            let (ta, tb) = (drill::trajectory(&set, a), drill::trajectory(&set, b));
                            drill::compare_step(&ta, &tb, step, width)
                        };
                        match self.in_background(&v, job) {
                            Some(t) => t,
                            None => return Some(Arc::new(drill::reading(&d.set, a))),
                        }
                    }
                    View::Compare(x, y) => {
                        let (_, pair) = current(&d.audit, &self.sel);
                        let (set, x, y, stacked) = (d.set.clone(), *x, *y, self.width < 100);
                        let job = move |_: &(dyn Fn() -> bool + Sync)| {
                            let names = pair.as_ref().map(|p| (p.base.as_str(), p.rl.as_str()));
                            drill::compare(&set, x, y, names, stacked)
                        };
                        match self.in_background(&v, job) {
                            Some(t) => t,
                            None => return Some(Arc::new(drill::reading(&d.set, x))),
                        }
                    }
                };
                let t = Arc::new(t);
                self.cached.push((v, Arc::clone(&t)));
                t
            }
            None => {
                let a = &d.audit;
                // The Overview shows the findings that are in as they come.
                if self.panel != Panel::Overview {
                    if let Some(t) =
                        super::views::pending::waiting(a, self.panel, &self.sel, self.stopped())
                    {
                        return Some(Arc::new(t));
                    }
                    if let Some(t) = super::views::empty::why(&d, self.panel) {
                        return Some(Arc::new(t));
                    }
                }
                Arc::new(match self.panel {
                    Panel::Overview => overview::findings(&d, self.stopped()),
                    Panel::Budget => budget::grid(a, &self.sel),
                    Panel::Cost => {
                        let (bench, pair) = current(a, &self.sel);
                        let c = self.ceiling_cost(&d).unwrap_or(0.0);
                        cost::table(a, &bench.unwrap_or_default(), c, pair.as_ref())
                    }
                    Panel::Steps => analyses::matched(a),
                    Panel::Recovery => analyses::recovery(a, &self.sel),
                    Panel::Likelihood => analyses::likelihood(a, self.llr_view),
                    Panel::Training => analyses::dynamics(a),
                    Panel::BudgetMix => analyses::budgetmix(a, &self.sel),
                })
            }
        };
        Some(self.shaped(t))
    }

    /// The table as shown: filtered, then sorted if asked.
    fn shaped(&mut self, t: Arc<TableData>) -> Arc<TableData> {
        let sort = self.sort.filter(|_| !self.grid());
        if self.filter.is_empty() && sort.is_none() {
            return t;
        }
        if let Some(s) = &self.shaped {
            if Arc::ptr_eq(&s.from, &t) && s.filter == self.filter && s.sort == sort {
                return Arc::clone(&s.table);
            }
        }
        let mut out = (*t).clone().filtered(&self.filter);
        if let Some((col, desc)) = sort {
            out = out.sorted(col, desc);
        }
        let out = Arc::new(out);
        self.shaped = Some(Shaped {
            from: t,
            filter: self.filter.clone(),
            sort,
            table: Arc::clone(&out),
        });
        out
    }

    /// The Budget grid (its rows are the K values: it keeps its order).
    pub fn grid(&self) -> bool {
        self.panel == Panel::Budget && self.at_top()
    }

    /// Lets go of every view's table (the audit, the selection or the
    /// cells shown changed): each is made again when next drawn.
    fn forget_tables(&mut self) {
        self.cached.clear();
        self.shaped = None;
    }

    /// Lets go of what views no longer on the stack had: their background
    /// work (told to stop), their tables.
    fn drop_unwanted(&mut self) {
        if matches!(&self.reading, Some((v, _, _)) if !self.stack.contains(v)) {
            self.reading = None;
        }
        let stack = &self.stack;
        self.cached.retain(|(v, _)| stack.contains(v));
        self.shaped = None;
    }

    fn reset_depth(&mut self) {
        self.sort = None;
        self.stack.clear();
        self.reading = None;
        self.rows = vec![0];
        self.forget_tables();
        self.hscroll = 0;
    }
}
