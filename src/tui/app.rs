//! TUI state and the one `step` function that turns commands into changes.

use std::sync::Arc;

use ratatui::crossterm::event::{KeyCode, KeyEvent};

use super::keys::Command;
use super::views::{self, Selection, TableData, Target};
use crate::analysis::passkt::Mode;
use crate::jobs::Loaded;
use crate::schema::Loc;

pub const PANELS: usize = 8;

/// A drill-down level on top of a panel.
#[derive(Debug, Clone, PartialEq)]
pub enum View {
    Tasks { k: u64, level: u32 },
    Rollouts { task: String, level: u32 },
    Trajectory(Loc),
    RuleRecords { run: String, rule: usize },
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
    pub panel: usize,
    pub sel: Selection,
    pub stack: Vec<View>,
    /// Selected row of the current table, per depth.
    pub rows: Vec<usize>,
    pub scroll: u16,
    pub help: bool,
    pub filter: String,
    pub filter_editing: bool,
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
    /// Cached table of a drill-down (re-reading a record is I/O).
    pub cached: Option<(View, TableData)>,
    /// A record being re-read in the background (a compressed file is
    /// decoded whole the first time): the screen stays live meanwhile.
    reading: Option<(Loc, std::sync::mpsc::Receiver<TableData>)>,
    /// The current table's sort: (column, descending), until the view changes.
    pub sort: Option<(usize, bool)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pending {
    Reload,
    Recompute,
}

impl App {
    pub fn new(no_color: bool, balance: bool) -> App {
        App {
            data: None,
            status: Status::Loading,
            panel: 0,
            sel: Selection::default(),
            stack: Vec::new(),
            rows: vec![0],
            scroll: 0,
            help: false,
            filter: String::new(),
            filter_editing: false,
            message: None,
            quit: false,
            ceiling: usize::MAX,
            balance,
            llr_view: false,
            pending: None,
            no_color,
            cached: None,
            reading: None,
            sort: None,
        }
    }

    /// Work under way whose result should be drawn when it arrives.
    pub fn busy(&self) -> bool {
        matches!((&self.reading, self.stack.last()),
            (Some((l, _)), Some(View::Trajectory(v))) if l == v)
    }

    /// The trajectory view of `loc`, or None while it is still being read.
    fn trajectory(&mut self, d: &Arc<Loaded>, loc: Loc) -> Option<TableData> {
        use std::sync::mpsc::TryRecvError;
        if let Some((l, rx)) = &self.reading {
            if *l == loc {
                return match rx.try_recv() {
                    Ok(t) => {
                        self.reading = None;
                        Some(t)
                    }
                    Err(TryRecvError::Empty) => None,
                    Err(TryRecvError::Disconnected) => {
                        self.reading = None;
                        let mut t = TableData::new("trajectory", "trajectory", &["error"]);
                        t.push(
                            vec!["the record could not be re-read".into()],
                            views::Mark::Bad,
                            Target::None,
                        );
                        Some(t)
                    }
                };
            }
        }
        let (tx, rx) = std::sync::mpsc::channel();
        let set = d.set.clone();
        let spawned = std::thread::Builder::new()
            .name("rl-audit-reread".into())
            .spawn(move || {
                let _ = tx.send(views::trajectory_table(&set, loc));
            });
        if spawned.is_err() {
            return Some(views::trajectory_table(&d.set, loc));
        }
        self.reading = Some((loc, rx));
        None
    }

    pub fn set_data(&mut self, d: Arc<Loaded>) {
        self.data = Some(d);
        self.status = Status::Ready;
        self.cached = None;
        self.clamp();
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

    /// The main table of the current view (what Enter and export act on).
    pub fn table(&mut self) -> Option<TableData> {
        let d = self.data.clone()?;
        let t = match self.stack.last().cloned() {
            Some(v) => {
                if let Some((cv, t)) = &self.cached {
                    if *cv == v {
                        return Some(self.shaped(t.clone()));
                    }
                }
                let t = match &v {
                    View::Tasks { k, level } => views::tasks_table(&d, &self.sel, *k, *level),
                    View::Rollouts { task, level } => {
                        views::rollouts_table(&d, &self.sel, task, *level)
                    }
                    View::Trajectory(loc) => match self.trajectory(&d, *loc) {
                        Some(t) => t,
                        None => return Some(views::reading_table(&d.set, *loc)),
                    },
                    View::RuleRecords { run, rule } => views::rule_records(&d, run, *rule),
                };
                self.cached = Some((v, t.clone()));
                t
            }
            None => match self.panel {
                0 => views::findings(&d),
                1 => views::budget_grid(&d.audit, &self.sel),
                2 => {
                    let (bench, _) = views::current(&d.audit, &self.sel);
                    let bench = bench.unwrap_or_default();
                    let stops = views::cost_stops(&d.audit, &bench);
                    let c = stops
                        .get(self.ceiling.min(stops.len().saturating_sub(1)))
                        .copied()
                        .unwrap_or(0.0);
                    views::cost_table(&d.audit, &bench, c)
                }
                3 => views::matched_table(&d.audit),
                4 => views::recovery_table(&d.audit, &self.sel),
                5 => views::likelihood_table(&d.audit),
                6 => views::dynamics_table(&d.audit),
                _ => views::budgetmix_table(&d.audit, &self.sel),
            },
        };
        Some(self.shaped(t))
    }

    /// Applies one command.
    pub fn step(&mut self, cmd: Command) {
        self.message = None;
        if self.help {
            match cmd {
                Command::Quit => self.quit = true,
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
                    self.sort = None;
                    self.scroll = 0;
                } else if cmd == Command::Back {
                    self.quit = true;
                }
            }
            Command::Help => self.help = true,
            Command::NextPanel => self.go_panel((self.panel + 1) % PANELS),
            Command::PrevPanel => self.go_panel((self.panel + PANELS - 1) % PANELS),
            Command::Panel(p) => self.go_panel(p),
            Command::Up => self.move_row(-1),
            Command::Down => self.move_row(1),
            Command::PageUp => self.move_row(-10),
            Command::PageDown => self.move_row(10),
            Command::Top => self.move_row(i64::MIN / 2),
            Command::Bottom => self.move_row(i64::MAX / 2),
            Command::Sort | Command::SortReverse => self.sort_command(cmd),
            Command::Left | Command::Right => {
                self.horizontal(if cmd == Command::Left { -1 } else { 1 })
            }
            Command::Enter => self.enter(),
            Command::Filter => self.filter_editing = true,
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
                if self.panel == 1 && self.stack.is_empty() {
                    self.set_row(self.sel.k);
                }
            }
            Command::ToggleMode if self.panel == 5 && self.stack.is_empty() => {
                self.llr_view = !self.llr_view
            }
            Command::ToggleMode => {
                self.sel.mode = match self.sel.mode {
                    Mode::Native => Mode::Truncated,
                    Mode::Truncated => Mode::Native,
                };
                self.cached = None;
            }
            Command::ToggleBalance => {
                self.balance = !self.balance;
                self.pending = Some(Pending::Recompute);
                self.message = Some(format!(
                    "recomputing with --balance {}",
                    if self.balance { "on" } else { "off" }
                ));
            }
            Command::Reload => self.pending = Some(Pending::Reload),
        }
    }

    /// The table as shown: filtered, then sorted if asked.
    fn shaped(&self, t: TableData) -> TableData {
        let t = t.filtered(&self.filter);
        match self.sort {
            Some((col, desc)) if self.sortable() => t.sorted(col, desc),
            _ => t,
        }
    }

    /// The Budget grid's rows are the K values: it keeps its order.
    fn sortable(&self) -> bool {
        !(self.panel == 1 && self.stack.is_empty())
    }

    fn reset_depth(&mut self) {
        self.sort = None;
        self.stack.clear();
        self.rows = vec![0];
        self.cached = None;
        self.scroll = 0;
    }

    fn go_panel(&mut self, p: usize) {
        self.panel = p.min(PANELS - 1);
        self.reset_depth();
        if self.panel == 1 {
            self.rows = vec![self.sel.k];
        }
    }

    fn sort_command(&mut self, cmd: Command) {
        if !self.sortable() {
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
        if self.panel == 1 && self.stack.is_empty() {
            self.sel.k = r;
        }
    }

    fn horizontal(&mut self, by: i64) {
        match (self.panel, self.stack.is_empty()) {
            (1, true) => {
                let n = self
                    .data
                    .as_ref()
                    .map_or(1, |d| d.audit.settings.levels.len().max(1))
                    as i64;
                self.sel.level = (self.sel.level as i64 + by).rem_euclid(n) as usize;
            }
            (2, true) => {
                let n = self
                    .data
                    .as_ref()
                    .map(|d| {
                        let (b, _) = views::current(&d.audit, &self.sel);
                        views::cost_stops(&d.audit, &b.unwrap_or_default()).len()
                    })
                    .unwrap_or(0);
                if n > 0 {
                    let cur = self.ceiling.min(n - 1) as i64;
                    self.ceiling = (cur + by).clamp(0, n as i64 - 1) as usize;
                }
            }
            _ => self.scroll = (self.scroll as i64 + 8 * by).max(0) as u16,
        }
    }

    fn enter(&mut self) {
        let Some(t) = self.table() else { return };
        let target = t.targets.get(self.row()).cloned().unwrap_or(Target::None);
        let view = match target {
            Target::None => return,
            Target::Panel(p) => {
                self.go_panel(p);
                return;
            }
            Target::Tasks { k, .. } => {
                let Some(d) = self.data.clone() else { return };
                let level = d
                    .audit
                    .settings
                    .levels
                    .get(self.sel.level)
                    .copied()
                    .unwrap_or(100);
                if views::current(&d.audit, &self.sel).1.is_none() {
                    self.message =
                        Some("no run pair on this benchmark: nothing to drill into".into());
                    return;
                }
                View::Tasks { k, level }
            }
            Target::Rollouts { task, level } => View::Rollouts { task, level },
            Target::Trajectory(loc) => View::Trajectory(loc),
            Target::RuleRecords { run, rule } => View::RuleRecords { run, rule },
        };
        self.stack.push(view);
        self.rows.push(0);
        self.sort = None;
        self.scroll = 0;
        self.filter.clear();
    }

    fn export(&mut self) {
        let Some(t) = self.table() else { return };
        let path = format!("rl-audit-export-{}.csv", t.name);
        self.message = Some(match std::fs::write(&path, t.to_csv()) {
            Ok(()) => format!("exported {} rows to {path}", t.rows.len()),
            Err(e) => format!("cannot write {path}: {e}"),
        });
    }

    /// One key press: the filter prompt, the help overlay (any key closes
    /// it), or a command from the key map.
    pub fn on_key(&mut self, k: KeyEvent) {
        if self.filter_editing {
            match k.code {
                KeyCode::Enter => self.filter_key(None, true, false),
                KeyCode::Esc => self.filter_key(None, false, true),
                KeyCode::Backspace => self.filter_key(None, false, false),
                KeyCode::Char(c) => self.filter_key(Some(c), false, false),
                _ => {}
            }
        } else if let Some(cmd) = super::keys::command_for(k) {
            self.step(cmd);
        } else if self.help {
            self.help = false;
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
