//! Workbench state and the one `step` function that turns commands into
//! changes.

use std::sync::Arc;

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::keymap::{lookup, Command};
use super::panel::Panel;
use super::select::{current, Selection};
use super::table::{Mark, TableData, Target};
use super::views::{analyses, budget, cost, drill, overview, search};
use crate::analysis::passkt::Mode;
use crate::jobs::{Fresh, Loaded};
use crate::schema::{Loc, LogSet};

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
    /// Two trajectories side by side (A, B).
    Compare(Loc, Loc),
    /// `F`: a regular expression's hits over every loaded trajectory.
    Search(String),
    /// `a`: the records `--follow` read since the set on screen.
    Appended,
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

    /// The table of `view` made by `job` in a background thread, or None
    /// while it is still being made. The job is handed a "still wanted?"
    /// check (false once the view is left) for long work to stop early.
    fn in_background(
        &mut self,
        view: &View,
        job: impl FnOnce(&dyn Fn() -> bool) -> TableData + Send + 'static,
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

    /// `t` / `--tour`: the tour from its first step (once the logs are in).
    pub fn start_tour(&mut self) {
        let Some(d) = self.data.clone().filter(|d| d.audit.is_complete()) else {
            self.tour_on_load = true;
            self.message = Some("the tour starts when the audit is complete".into());
            return;
        };
        self.help = false;
        self.tour = Some(Tour {
            steps: crate::tour::steps(&d.audit),
            at: 0,
            scroll: 0,
        });
        self.tour_go(0);
    }

    /// Moves the tour to step `at` and the workbench to where it looks.
    fn tour_go(&mut self, at: usize) {
        let Some(t) = self.tour.as_mut() else { return };
        let at = at.min(t.steps.len().saturating_sub(1));
        t.at = at;
        t.scroll = 0;
        let Some(step) = t.steps.get(at).cloned() else {
            return;
        };
        self.land(&step.place);
    }

    /// The workbench where `place` is shown: its panel, benchmark and pair,
    /// and the cell or row (a tour's step, a headline finding).
    fn land(&mut self, place: &crate::tour::Place) {
        let Some(d) = self.data.clone() else { return };
        let a = &d.audit;
        let locate = |sel: &mut Selection, p: &crate::analysis::PairNames| {
            let benches = a.benchmarks();
            sel.bench = benches.iter().position(|b| *b == p.benchmark).unwrap_or(0);
            sel.pair = a
                .pairs_of(&p.benchmark)
                .iter()
                .position(|q| q.base == p.base && q.rl == p.rl)
                .unwrap_or(0);
        };
        self.filter.clear();
        self.sel.category = None;
        match place {
            crate::tour::Place::Budget {
                pair,
                k,
                level,
                mode,
            } => {
                locate(&mut self.sel, pair);
                self.sel.k = a.pass.ks.iter().position(|x| x == k).unwrap_or(0);
                self.sel.level = a
                    .settings
                    .levels
                    .iter()
                    .position(|x| x == level)
                    .unwrap_or(0);
                self.sel.mode = *mode;
                self.go_panel(Panel::Budget);
            }
            crate::tour::Place::Table { topic, row, pair } => {
                use crate::tour::Topic;
                let panel = match topic {
                    Topic::Cost => Panel::Cost,
                    Topic::Matched => Panel::Steps,
                    Topic::Recovery => Panel::Recovery,
                    Topic::Likelihood => Panel::Likelihood,
                    Topic::Training => Panel::Training,
                    Topic::BudgetMix => Panel::BudgetMix,
                    _ => Panel::Budget,
                };
                if let Some(p) = pair {
                    locate(&mut self.sel, p);
                }
                self.sel.mode = None;
                self.llr_view = false;
                self.ceiling = usize::MAX;
                self.go_panel(panel);
                self.set_row(*row);
            }
            crate::tour::Place::BudgetMix { run, row } => {
                // The panel's run is the selection's pair index (p).
                self.sel.pair = *run;
                self.sel.mode = None;
                self.go_panel(Panel::BudgetMix);
                self.set_row(*row);
            }
        }
    }

    /// A key while the tour runs: n / Space next, N back, ↑↓ scroll its
    /// text, q / Esc leave it (the workbench stays where it is), ? help.
    fn tour_key(&mut self, k: &KeyEvent) -> bool {
        let Some(t) = &self.tour else { return false };
        let (at, n) = (t.at, t.steps.len());
        self.message = None;
        match k.code {
            KeyCode::Char('n') | KeyCode::Char(' ') => {
                if at + 1 < n {
                    self.tour_go(at + 1);
                } else {
                    self.tour = None;
                    self.message =
                        Some("tour done — you are on its last panel; t starts it again".into());
                }
            }
            KeyCode::Char('N') => self.tour_go(at.saturating_sub(1)),
            KeyCode::Down | KeyCode::Char('j') => {
                if let Some(t) = self.tour.as_mut() {
                    t.scroll = t.scroll.saturating_add(1);
                }
            }
            KeyCode::Up | KeyCode::Char('k') => {
                if let Some(t) = self.tour.as_mut() {
                    t.scroll = t.scroll.saturating_sub(1);
                }
            }
            KeyCode::Char('q') | KeyCode::Esc => {
                self.tour = None;
                self.message = Some("left the tour — t starts it again".into());
            }
            _ => return false,
        }
        true
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
                    View::Trajectory(loc) => {
                        let (set, loc) = (self.set_of(*loc).unwrap_or(d.set.clone()), *loc);
                        match self.in_background(&v, move |_: &dyn Fn() -> bool| {
                            drill::trajectory(&set, loc)
                        }) {
                            Some(t) => t,
                            None => return Some(Arc::new(drill::reading(&d.set, loc))),
                        }
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
                        match self.in_background(&v, move |wanted: &dyn Fn() -> bool| {
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
                    View::Compare(x, y) => {
                        let (_, pair) = current(&d.audit, &self.sel);
                        let (set, x, y, stacked) = (d.set.clone(), *x, *y, self.width < 100);
                        let job = move |_: &dyn Fn() -> bool| {
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
                        let (bench, _) = current(a, &self.sel);
                        let c = self.ceiling_cost(&d).unwrap_or(0.0);
                        cost::table(a, &bench.unwrap_or_default(), c)
                    }
                    Panel::Steps => analyses::matched(a),
                    Panel::Recovery => analyses::recovery(a, &self.sel),
                    Panel::Likelihood => analyses::likelihood(a),
                    Panel::Training => analyses::dynamics(a),
                    Panel::BudgetMix => analyses::budgetmix(a, &self.sel),
                })
            }
        };
        Some(self.shaped(t))
    }

    /// Applies one command; `digit` is the key's number for `GoPanel`.
    pub fn step(&mut self, cmd: Command, digit: Option<usize>) {
        self.message = None;
        if self.help {
            match cmd {
                Command::Quit => self.quit = true,
                Command::Down | Command::PageDown => {
                    self.help_scroll += if cmd == Command::Down { 1 } else { 10 }
                }
                Command::Up | Command::PageUp => {
                    let by = if cmd == Command::Up { 1 } else { 10 };
                    self.help_scroll = self.help_scroll.saturating_sub(by)
                }
                _ => self.help = false,
            }
            return;
        }
        match cmd {
            Command::Quit => self.quit = true,
            Command::Back | Command::Escape => {
                if !self.filter.is_empty() {
                    self.filter.clear();
                } else if self.stack.pop().is_some() {
                    self.rows.pop();
                    self.drop_unwanted();
                    self.sort = None;
                    self.hscroll = 0;
                } else if cmd == Command::Back {
                    self.quit = true;
                }
            }
            Command::Help => {
                self.help = true;
                self.help_scroll = 0;
            }
            Command::NextPanel => self.go_panel(self.panel.next()),
            Command::PrevPanel => self.go_panel(self.panel.prev()),
            Command::GoPanel => {
                if let Some(p) = digit.and_then(Panel::numbered) {
                    self.go_panel(p)
                }
            }
            Command::Up => self.move_row(-1),
            Command::Down => self.move_row(1),
            Command::PageUp => self.move_row(-10),
            Command::PageDown => self.move_row(10),
            Command::Top => self.move_row(i64::MIN / 2),
            Command::Bottom => self.move_row(i64::MAX / 2),
            Command::Sort | Command::SortReverse => self.sort_command(cmd),
            Command::Left => self.horizontal(-1),
            Command::Right => self.horizontal(1),
            Command::Enter => self.enter(),
            Command::Filter => self.filter_editing = true,
            Command::Search => {
                self.search.clear();
                self.search_editing = true;
            }
            Command::Export => self.export(),
            Command::NextBenchmark => {
                self.sel.bench += 1;
                self.sel.pair = 0;
                self.ceiling = usize::MAX;
                self.reset_depth();
            }
            Command::NextPair => {
                self.sel.pair += 1;
                self.reset_depth();
            }
            Command::KUp | Command::KDown => {
                let n = self
                    .data
                    .as_ref()
                    .map_or(1, |d| d.audit.pass.ks.len().max(1));
                self.sel.k = if cmd == Command::KUp {
                    (self.sel.k + 1) % n
                } else {
                    (self.sel.k + n - 1) % n
                };
                if self.grid() {
                    self.set_row(self.sel.k);
                }
            }
            Command::Mode => match self.panel {
                Panel::Likelihood if self.at_top() => self.llr_view = !self.llr_view,
                _ => {
                    self.sel.next_mode();
                    self.forget_tables();
                    self.message = Some(format!("cells: {}", self.sel.mode_name()));
                }
            },
            Command::Category => {
                let n = self.data.as_ref().map_or(0, |d| {
                    let (bench, _) = current(&d.audit, &self.sel);
                    d.audit
                        .categories
                        .categories(&bench.unwrap_or_default())
                        .len()
                });
                self.sel.category = match self.sel.category {
                    _ if n == 0 => None,
                    None => Some(0),
                    Some(i) if i + 1 < n => Some(i + 1),
                    Some(_) => None,
                };
                self.forget_tables();
                let computing = self
                    .data
                    .as_ref()
                    .is_some_and(|d| d.audit.is_pending(crate::analysis::Part::Categories));
                self.message = Some(match (n, self.sel.category) {
                    (0, _) if computing => "task categories: still being computed".into(),
                    (0, _) => "no task carries a category".into(),
                    (_, None) => "grid: every task".into(),
                    (_, Some(i)) => format!("grid: category {} of {n}", i + 1),
                });
            }
            Command::ToggleBalance => {
                self.balance = !self.balance;
                self.pending = Some(Pending::Recompute);
                self.message = Some(format!(
                    "recomputing with --balance {}",
                    if self.balance { "on" } else { "off" }
                ));
            }
            Command::MarkCompare => self.mark_compare(),
            Command::CompareCell => self.compare_cell(),
            Command::Tour => self.start_tour(),
            Command::Appended => {
                if self.stack.last() != Some(&View::Appended) {
                    self.open(View::Appended);
                }
            }
            Command::Reload => {
                self.pending = Some(Pending::Reload);
                self.message = Some("re-reading the logs".into());
            }
        }
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

    fn go_panel(&mut self, p: Panel) {
        self.panel = p;
        self.reset_depth();
        if self.panel == Panel::Budget {
            self.rows = vec![self.sel.k];
        }
    }

    fn sort_command(&mut self, cmd: Command) {
        if self.grid() {
            self.message = Some("the Budget grid keeps its K order (drill down to sort)".into());
            return;
        }
        let cols = self.table().map_or(0, |t| t.header.len());
        if cols == 0 {
            return;
        }
        self.sort = match (cmd, self.sort) {
            (Command::SortReverse, Some((c, d))) => Some((c, !d)),
            (Command::SortReverse, None) => Some((0, true)),
            (_, Some((c, _))) if c + 1 < cols => Some((c + 1, false)),
            (_, Some(_)) => None,
            (_, None) => Some((0, false)),
        };
        self.set_row(0);
    }

    fn move_row(&mut self, by: i64) {
        let n = self.table().map_or(0, |t| t.rows.len());
        if n == 0 {
            return;
        }
        let r = (self.row() as i64 + by).clamp(0, n as i64 - 1) as usize;
        self.set_row(r);
        if self.grid() {
            self.sel.k = r;
        }
    }

    fn horizontal(&mut self, by: i64) {
        match (self.panel, self.at_top()) {
            (Panel::Budget, true) => {
                let n = self
                    .data
                    .as_ref()
                    .map_or(1, |d| d.audit.settings.levels.len().max(1))
                    as i64;
                self.sel.level = (self.sel.level as i64 + by).rem_euclid(n) as usize;
            }
            (Panel::Cost, true) => {
                let n = self
                    .data
                    .as_ref()
                    .map(|d| {
                        let (b, _) = current(&d.audit, &self.sel);
                        cost::stops(&d.audit, &b.unwrap_or_default()).len()
                    })
                    .unwrap_or(0);
                if n > 0 {
                    let cur = self.ceiling.min(n - 1) as i64;
                    self.ceiling = (cur + by).clamp(0, n as i64 - 1) as usize;
                }
            }
            // Long cells (actions, observations, details) scroll sideways.
            _ => self.hscroll = (self.hscroll as i64 + 16 * by).max(0) as usize,
        }
    }

    fn enter(&mut self) {
        let Some(t) = self.table() else { return };
        let target = if self.grid() {
            self.cell_target()
        } else {
            t.target(self.row())
        };
        let view = match target {
            Target::None => return,
            Target::Panel(p) => {
                self.go_panel(p);
                return;
            }
            Target::At(place) => {
                self.land(&place);
                return;
            }
            Target::Tasks { k, level, mode } => View::Tasks { k, level, mode },
            Target::Rollouts { task, level } => {
                let Some(View::Tasks { mode, .. }) = self.stack.last() else {
                    return;
                };
                View::Rollouts {
                    task,
                    level,
                    mode: *mode,
                }
            }
            Target::Trajectory(loc) => View::Trajectory(loc),
            Target::Step(loc, step) => {
                self.open(View::Trajectory(loc));
                self.set_row(step);
                return;
            }
            Target::Open(view) => view,
        };
        self.open(view);
    }

    /// Pushes a drill-down view.
    fn open(&mut self, view: View) {
        self.stack.push(view);
        self.rows.push(0);
        self.sort = None;
        self.hscroll = 0;
        self.filter.clear();
    }

    /// `x` in a task's rollouts: mark the selected rollout, or compare it
    /// with the one marked before.
    fn mark_compare(&mut self) {
        if !matches!(self.stack.last(), Some(View::Rollouts { .. })) {
            self.message =
                Some("x marks a rollout to compare: drill into a task's rollouts first".into());
            return;
        }
        let Some(t) = self.table() else { return };
        let Target::Trajectory(loc) = t.target(self.row()) else {
            return;
        };
        match self.marked.take() {
            None => {
                self.marked = Some(loc);
                self.message = Some(format!(
                    "marked record {}: x on another rollout compares the two",
                    loc.line()
                ));
            }
            Some(m) if m == loc => self.message = Some("unmarked".into()),
            Some(m) => self.open(View::Compare(m, loc)),
        }
    }

    /// `v` on the Budget grid: the base failure and RL success of the task
    /// with the largest Δ contribution, side by side.
    fn compare_cell(&mut self) {
        if !self.grid() {
            self.message = Some("v compares within a Budget cell: use it on the grid".into());
            return;
        }
        let Some(d) = self.data.clone() else { return };
        match budget::contrast_pair(&d, &self.sel) {
            Ok((x, y)) => self.open(View::Compare(x, y)),
            Err(e) => self.message = Some(e),
        }
    }

    /// Enter on the Budget grid: the selected cell's tasks, in the mode the
    /// cell shows.
    fn cell_target(&mut self) -> Target {
        let Some(d) = self.data.clone() else {
            return Target::None;
        };
        let a = &d.audit;
        if current(a, &self.sel).1.is_none() {
            self.message = Some("no run pair on this benchmark: nothing to drill into".into());
            return Target::None;
        }
        match (self.sel.k_level(a), budget::cell_mode(a, &self.sel)) {
            (Some((k, level)), Some(mode)) => Target::Tasks { k, level, mode },
            _ => {
                self.message = Some("no rollouts in this cell".into());
                Target::None
            }
        }
    }

    fn export(&mut self) {
        let Some(t) = self.table() else { return };
        let name = format!("rl-audit-export-{}.csv", t.name);
        let path = self.export_dir.join(&name);
        self.message = Some(match std::fs::write(&path, t.to_csv()) {
            Ok(()) => format!("exported {} rows to {name}", t.rows.len()),
            Err(e) => format!("cannot write {name}: {e}"),
        });
    }

    /// One key press: the filter prompt, the help overlay (any key closes
    /// it), or a command from the key map.
    pub fn on_key(&mut self, k: KeyEvent) {
        if self.search_editing {
            if k.modifiers.contains(KeyModifiers::CONTROL) && k.code == KeyCode::Char('c') {
                self.quit = true;
                return;
            }
            match k.code {
                KeyCode::Enter => self.search_key(None, true),
                KeyCode::Esc => {
                    self.search.clear();
                    self.search_editing = false;
                }
                KeyCode::Backspace => {
                    self.search.pop();
                }
                KeyCode::Char(c) => self.search_key(Some(c), false),
                _ => {}
            }
        } else if self.filter_editing {
            if k.modifiers.contains(KeyModifiers::CONTROL) && k.code == KeyCode::Char('c') {
                self.quit = true;
                return;
            }
            match k.code {
                KeyCode::Enter => self.filter_key(None, true, false),
                KeyCode::Esc => self.filter_key(None, false, true),
                KeyCode::Backspace => self.filter_key(None, false, false),
                KeyCode::Char(c) => self.filter_key(Some(c), false, false),
                _ => {}
            }
        } else if !self.help && self.tour_key(&k) {
        } else if let Some((cmd, digit)) = lookup(&k) {
            if self.tour.is_some() && !matches!(cmd, Command::Quit | Command::Help | Command::Tour)
            {
                self.message = Some(
                    "in the tour: n next · N back · ↑↓ scroll its text · q leaves the tour".into(),
                );
                return;
            }
            self.step(cmd, digit);
        } else if self.help {
            self.help = false;
        }
    }

    /// A typed character of the `F` prompt, or Enter: a valid pattern opens
    /// its results; an invalid one says why and stays in the prompt.
    pub fn search_key(&mut self, c: Option<char>, done: bool) {
        self.message = None;
        if let Some(c) = c {
            self.search.push(c);
            return;
        }
        if !done || self.search.is_empty() {
            return;
        }
        match regex::Regex::new(&self.search) {
            Ok(_) => {
                self.search_editing = false;
                self.open(View::Search(self.search.clone()));
            }
            Err(e) => {
                let first = e.to_string();
                let first = first.lines().last().unwrap_or("").trim().to_string();
                self.message = Some(format!("invalid pattern {:?}: {first}", self.search));
            }
        }
    }

    /// A typed character while editing the filter.
    pub fn filter_key(&mut self, c: Option<char>, done: bool, cancel: bool) {
        if cancel {
            self.filter.clear();
            self.filter_editing = false;
        } else if done {
            self.filter_editing = false;
        } else if let Some(c) = c {
            self.filter.push(c);
        } else {
            self.filter.pop();
        }
        self.set_row(0);
    }
}
