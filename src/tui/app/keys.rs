//! Keys and commands: the one `step` function that turns a command into a
//! change of state, and what each command does (moving, drilling down,
//! comparing, sorting, filtering, searching, exporting).

use super::*;

impl App {
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
                } else if !self.close_view() && cmd == Command::Back {
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
            Command::Copy => self.copy(),
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
            Command::DropPair => self.drop_pair(),
            Command::PickPair => {
                if !matches!(self.stack.last(), Some(View::Runs { .. })) {
                    self.open(View::Runs { base: None });
                }
            }
            Command::PickAudit => {
                if self.stack.last() != Some(&View::TrainingRuns) {
                    self.open(View::TrainingRuns);
                }
            }
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

    pub(super) fn go_panel(&mut self, p: Panel) {
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
            Target::Run(run) => {
                self.pick_run(run);
                return;
            }
            Target::Audit(run) => {
                self.pick_audit(run);
                return;
            }
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
        if t.name == crate::tui::views::pending::STAND_IN {
            self.message = Some("nothing to export yet: the panel's analyses are not in".into());
            return;
        }
        let name = format!("rl-audit-export-{}.csv", t.name);
        let path = self.export_dir.join(&name);
        self.message = Some(match std::fs::write(&path, t.to_csv()) {
            Ok(()) => format!("exported {} rows to {name}", t.rows.len()),
            Err(e) => format!("cannot write {name}: {e}"),
        });
    }

    /// `y`: the selected row as `name: value` lines, on the Budget grid the
    /// selected cell's box, in a step read whole all its lines, for the
    /// terminal loop to hand to the clipboard ([`App::clipboard`]).
    fn copy(&mut self) {
        let Some(d) = self.data.clone() else { return };
        let (text, what) = if self.grid() {
            (
                budget::detail(&d.audit, &self.sel).join("\n"),
                "the cell".to_string(),
            )
        } else if let (Some(View::Step { .. } | View::CompareStep { .. }), Some(t)) =
            (self.stack.last().cloned(), self.table())
        {
            // A step read whole: all of it, as shown.
            let lines: Vec<&str> = t.rows.iter().map(|r| r.cells[0].text.as_str()).collect();
            (lines.join("\n"), "the step".to_string())
        } else {
            let Some(t) = self.table() else { return };
            let Some(r) = t.rows.get(self.row()) else {
                self.message = Some("nothing to copy: the table has no rows".into());
                return;
            };
            let lines: Vec<String> = r
                .cells
                .iter()
                .enumerate()
                .map(|(j, c)| crate::tui::table::named(t.header.get(j), &c.text).0)
                .collect();
            (lines.join("\n"), format!("row {}", self.row() + 1))
        };
        // Whether it arrives is the terminal's to say (OSC 52: README).
        self.message = Some(format!(
            "copied {what} to the clipboard ({} characters, by OSC 52)",
            text.chars().count()
        ));
        self.clipboard = Some(text);
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

    /// The mouse, as the keys it stands for: the wheel as ↑ / ↓ (a table's
    /// selection, the help's or the tour's text); a left click on a tab as
    /// its panel's number; on a table's row, as the moves that select it
    /// (on the Budget grid, its K and level), and on the selected row as
    /// Enter. Ignored while a prompt is typed; over the help, a click
    /// closes it. Whether anything changed (the screen is drawn again).
    pub fn on_mouse(&mut self, m: MouseEvent) -> bool {
        if self.search_editing || self.filter_editing {
            return false;
        }
        let key = |app: &mut App, code: KeyCode| {
            app.on_key(KeyEvent::new(code, KeyModifiers::NONE));
            true
        };
        match m.kind {
            MouseEventKind::ScrollUp => key(self, KeyCode::Up),
            MouseEventKind::ScrollDown => key(self, KeyCode::Down),
            MouseEventKind::Down(MouseButton::Left) if self.help => key(self, KeyCode::Esc),
            MouseEventKind::Down(MouseButton::Left) if m.row == 0 => {
                match crate::tui::draw::tab_at(m.column, self.width, self.panel)
                    .and_then(|p| char::from_digit(p.index() as u32 + 1, 10))
                {
                    Some(d) => key(self, KeyCode::Char(d)),
                    None => false,
                }
            }
            MouseEventKind::Down(MouseButton::Left) if self.tour.is_none() => {
                let Some((row, level)) = self.rows_at.and_then(|r| r.at(m.column, m.row)) else {
                    return false;
                };
                let levels = self
                    .data
                    .as_ref()
                    .map_or(0, |d| d.audit.settings.levels.len());
                let level = level.filter(|&l| l < levels);
                let n = self.table().map_or(0, |t| t.rows.len());
                if row >= n || (self.grid() && level.is_none()) {
                    return false;
                }
                if row == self.row() && level.is_none_or(|l| l == self.sel.level) {
                    return key(self, KeyCode::Enter);
                }
                self.message = None;
                self.move_row(row as i64 - self.row() as i64);
                if let Some(l) = level {
                    self.sel.level = l;
                }
                true
            }
            _ => false,
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
