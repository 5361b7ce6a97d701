//! Rendering: state in, frame out. Reflows down to 80×24; honours NO_COLOR.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Cell, Clear, Gauge, Paragraph, Row, Table, TableState, Tabs, Wrap};
use ratatui::Frame;

use super::app::{App, Status, View};
use super::charts;
use super::keymap::{command_bar, help_lines};
use super::panel::Panel;
use super::select::current;
use super::table::{TableData, Target};
use super::theme::Theme;
use super::views::{analyses, budget, drill, overview};
use super::widgets::lines_box;
use super::widgets::{cut, cut_start, title_lines, with_lines_inside};
use crate::jobs::Loaded;
use crate::schema::load::Progress;

mod cells;
mod overlay;

pub use cells::*;
use overlay::*;

pub fn draw(f: &mut Frame, app: &mut App, progress: &Progress, phase: &str) {
    let theme = Theme {
        no_color: app.no_color,
    };
    if app.width != f.area().width {
        app.width = f.area().width;
        // The compare view's layout and a step's wrapped lines depend on
        // the width.
        app.cached.retain(|(v, _)| {
            !matches!(
                v,
                View::Compare(..) | View::Step { .. } | View::CompareStep { .. }
            )
        });
    }
    let [top, body, bottom] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(3),
        Constraint::Length(1),
    ])
    .areas(f.area());
    // The rows a click may pick: the selected table's, once drawn below.
    app.rows_at = None;
    let tabs = Tabbed::new(top.width, app.panel);
    let pad = if tabs.padded { " " } else { "" };
    f.render_widget(
        Tabs::new(tabs.titles.into_iter().map(Line::from))
            .select(app.panel.index())
            .highlight_style(theme.accent().add_modifier(Modifier::REVERSED))
            .padding(pad, pad)
            .divider("│"),
        top,
    );
    match (&app.data, &app.status) {
        (None, Status::Failed(e)) => {
            let p = Paragraph::new(format!(
                "Could not load the logs:\n\n{e}\n\nq quits; r retries."
            ))
            .wrap(Wrap { trim: false })
            .block(Block::bordered().title("error"));
            f.render_widget(p, body);
        }
        (None, _) => loading(f, body, progress, phase),
        (Some(d), _) => {
            let d = d.clone();
            let body = match &app.tour {
                Some(t) if app.at_top() => tour_box(f, body, t, &theme),
                _ => body,
            };
            if app.at_top() {
                panel(f, body, app, &d, &theme);
            } else {
                drill(f, body, app, &theme);
            }
        }
    }
    status_line(f, bottom, app, progress, phase, &theme);
    if app.help {
        help(f, app.panel, app.help_scroll);
    }
}

/// The panels' tabs on the top line as drawn `width` columns wide with
/// `selected` on screen: `1 Overview`, `2 Budget`, … each with a space
/// either side and `│` between; where that is too wide (80 columns), no
/// spaces, and then the longest names but the selected one's cut with `…`
/// a character at a time (`6 Likeliho…`), so that every panel's number
/// shows.
struct Tabbed {
    titles: Vec<String>,
    /// Whether each title has a space either side.
    padded: bool,
}

impl Tabbed {
    fn new(width: u16, selected: Panel) -> Tabbed {
        let whole: Vec<String> = Panel::ALL
            .iter()
            .enumerate()
            .map(|(i, p)| format!("{} {}", i + 1, p.title()))
            .collect();
        let width = usize::from(width);
        let dividers = whole.len() - 1;
        let lens: Vec<usize> = whole.iter().map(|t| t.chars().count()).collect();
        if lens.iter().map(|l| l + 2).sum::<usize>() + dividers <= width {
            return Tabbed {
                titles: whole,
                padded: true,
            };
        }
        let mut lens = lens;
        // `6 L…`: a number, its space, a letter and the ellipsis at least.
        while lens.iter().sum::<usize>() + dividers > width {
            let longest = (0..lens.len())
                .filter(|&i| Panel::ALL[i] != selected && lens[i] > 4)
                .max_by_key(|&i| (lens[i], std::cmp::Reverse(i)));
            match longest {
                Some(i) => lens[i] -= 1,
                None => break,
            }
        }
        Tabbed {
            titles: whole.iter().zip(&lens).map(|(t, &l)| cut(t, l)).collect(),
            padded: false,
        }
    }
}

/// The panel whose tab covers column `x` of the top line drawn `width`
/// columns wide with `selected` on screen, as [`draw`] lays the tabs out
/// (`Tabbed`, in ratatui's `Tabs`); none on a divider or past the last
/// tab.
pub fn tab_at(x: u16, width: u16, selected: Panel) -> Option<Panel> {
    let tabs = Tabbed::new(width, selected);
    let pad = if tabs.padded { 2 } else { 0 };
    let mut start = 0usize;
    for (title, p) in tabs.titles.iter().zip(Panel::ALL) {
        let end = start + title.chars().count() + pad;
        if (start..end).contains(&usize::from(x)) {
            return Some(p);
        }
        start = end + 1;
    }
    None
}

/// Where the drill-down stands: the panel, each view opened (`›`), Esc.
/// With `room` columns too few for it and `rest` after it, the views before
/// the last give way to `…`, so that the view's own title shows.
fn drill_title(app: &App, room: usize, rest: &str) -> String {
    let mut crumbs: Vec<String> = app
        .stack
        .iter()
        .map(|v| match v {
            View::Tasks { k, level, mode } => format!("tasks K={k} {level}% {}", mode.name()),
            View::Rollouts { task, level, .. } => format!("task {task} @ {level}%"),
            View::Trajectory(l) => format!("record {}", l.line()),
            View::Step { step, .. } => format!("step {}", step + 1),
            View::CompareStep { step, .. } => format!("turn {}", step + 1),
            View::RuleRecords { rule, .. } => format!("rule {}", rule + 1),
            View::LlrTurns { base, rl, .. } => format!("{base} → {rl} by turn"),
            View::NaturalTurns { runs, .. } => format!("{} by turn", runs.join(" → ")),
            View::Compare(x, y) => format!("records {} | {}", x.line(), y.line()),
            View::Search(p) => format!("search /{p}/"),
            View::Appended => "appended".into(),
            View::States { error: false, .. } => "matched states".into(),
            View::States { error: true, .. } => "error states".into(),
            View::Probe(l) => format!("probe {}", l.line()),
            View::LengthMatched { .. } => "length-matched pairs".into(),
            View::Checkpoints { run, metric } => format!("{run} {metric}"),
            View::Runs { base: None } => "runs".into(),
            View::Runs { base: Some(b) } => format!("runs, base {b}"),
            View::TrainingRuns => "training runs".into(),
        })
        .collect();
    let marked = match (app.marked, app.stack.last()) {
        (Some(m), Some(View::Rollouts { .. })) => {
            format!(" · marked record {} (x on another compares)", m.line())
        }
        _ => String::new(),
    };
    let title = |crumbs: &[String]| {
        format!(
            "{} › {}{marked} (Esc: back) — {rest}",
            app.panel.title(),
            crumbs.join(" › ")
        )
    };
    let whole = title(&crumbs);
    if crumbs.len() < 2 || whole.chars().count() <= room {
        return whole;
    }
    let last = crumbs.pop().unwrap_or_default();
    title(&["…".to_string(), last])
}

/// A drill-down: its table, and for a trajectory the selected step whole.
fn drill(f: &mut Frame, area: Rect, app: &mut App, theme: &Theme) {
    let t = app.table().unwrap_or_default();
    // The row count's room kept (`(1000 rows)`).
    let title = drill_title(app, usize::from(area.width).saturating_sub(14), &t.title);
    let row = app.row();
    // A trajectory's row that is no step (`(no steps)`, a source row's
    // field) has no step to show whole.
    let a_step = t.rows.get(row).is_some_and(|r| r.target != Target::None);
    let lines = match app.stack.last() {
        Some(View::Trajectory(_)) if t.header.len() >= 3 && a_step => vec![
            format!("action: {}", t.text(row, 1)),
            format!("observation: {}", t.text(row, 2)),
        ],
        // Split: A's action and observation are columns 1–2, B's 4–5;
        // stacked: one side per row, columns 2–3.
        Some(View::Compare(..)) if t.header.len() >= 9 => vec![
            format!("A action: {}", t.text(row, 1)),
            format!("A observation: {}", t.text(row, 2)),
            format!("B action: {}", t.text(row, 4)),
            format!("B observation: {}", t.text(row, 5)),
        ],
        Some(View::Probe(_)) if t.header.len() >= 2 => {
            vec![format!("{} action: {}", t.text(row, 0), t.text(row, 1))]
        }
        Some(View::Compare(..)) if t.header.len() >= 4 => vec![
            format!("{} action: {}", t.text(row, 1), t.text(row, 2)),
            format!("{} observation: {}", t.text(row, 1), t.text(row, 3)),
        ],
        _ => Vec::new(),
    };
    // A FrozenLake trajectory: the lake at the selected turn beside it.
    let lake = match (&t.lake, app.stack.last()) {
        (Some(l), Some(View::Trajectory(_))) => t
            .text(row, 0)
            .parse::<usize>()
            .ok()
            .and_then(|turn| turn.checked_sub(1))
            .map(|at| drill::lake_lines(l, at)),
        // A probe's lake: the agent at the state.
        (Some(l), Some(View::Probe(_))) => Some(drill::lake_lines(l, 0)),
        _ => None,
    };
    // The selected step whole below (none for other views): the table's
    // own box then keeps its cut cells to its border.
    let lake_h = lake.as_ref().map_or(0, |l| l.len() as u16 + 2);
    let box_h = if lines.is_empty() {
        0
    } else {
        (lines.len() as u16 * 2 + 3).max(lake_h).min(12)
    };
    let [a1, a2] = Layout::vertical([Constraint::Min(5), Constraint::Length(box_h)]).areas(area);
    let selected = (Some(row), lines.is_empty());
    app.rows_at = Some(table_in(f, a1, &t, selected, theme, &title, app.hscroll));
    if lines.is_empty() {
        return;
    }
    // A step opens whole (every field, scrollable) on Enter; two
    // trajectories' turn, both steps.
    let whole = match app.stack.last() {
        Some(View::Trajectory(_)) => format!("turn {} (Enter: the step whole)", t.text(row, 0)),
        Some(View::Probe(_)) => format!("candidate {}", row + 1),
        _ => format!("turn {} (Enter: both steps whole)", t.text(row, 0)),
    };
    match lake {
        Some(l) => {
            let w = l.iter().map(|x| x.chars().count()).max().unwrap_or(0) as u16 + 2;
            let [b1, b2] =
                Layout::horizontal([Constraint::Min(20), Constraint::Length(w)]).areas(a2);
            lines_box(f, b1, &whole, lines);
            lines_box(f, b2, "the lake", l);
        }
        None => lines_box(f, a2, &whole, lines),
    }
}

fn loading(f: &mut Frame, area: Rect, p: &Progress, phase: &str) {
    use std::sync::atomic::Ordering::Relaxed;
    let (done, total, rec) = (
        p.bytes_done.load(Relaxed),
        p.bytes_total.load(Relaxed),
        p.records.load(Relaxed),
    );
    let ratio = if total > 0 {
        (done as f64 / total as f64).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let [a, b] = Layout::vertical([Constraint::Length(3), Constraint::Min(1)]).areas(area);
    f.render_widget(
        Gauge::default()
            // Before the worker has picked the request up it is "idle".
            .block(Block::bordered().title(if phase == "idle" {
                "loading…".to_string()
            } else {
                format!("{phase}…")
            }))
            .ratio(ratio)
            .label(format!(
                "{:.1} of {:.1} MB, {rec} records",
                done as f64 / 1e6,
                total as f64 / 1e6
            )),
        a,
    );
    f.render_widget(
        Paragraph::new(
            "Reading and validating the logs in the background; the panels appear once they \
             are in, each filling in as its analyses finish. q quits.",
        )
        .wrap(Wrap { trim: true }),
        b,
    );
}

/// From how many seconds on the status line counts an analysis's time.
const COUNT_FROM: u64 = 2;

fn status_line(f: &mut Frame, area: Rect, app: &App, p: &Progress, phase: &str, theme: &Theme) {
    use std::sync::atomic::Ordering::Relaxed;
    let mut appended = None;
    let text = if app.search_editing {
        match &app.message {
            Some(m) => format!("F {}▏ {m}", app.search),
            None => format!(
                "F {}▏ (regex over actions, observations; Enter: search, Esc: cancel)",
                app.search
            ),
        }
    } else if app.filter_editing {
        format!("/{}▏ (Enter keeps, Esc clears)", app.filter)
    } else if let Some(m) = &app.message {
        m.clone()
    } else if let Some(t) = &app.tour {
        format!(
            "tour step {} of {}: n next  N back  ↑↓ scroll  q leave  ? help",
            t.at + 1,
            t.steps.len()
        )
    } else if let Some(a) = &app.appended {
        // The long form where it fits beside the selection, else the short
        // (the `a` list's title has the counts).
        let n = a.records.len();
        appended = Some(format!("+{n} appended, not yet audited · a"));
        format!("+{n} records appended, not yet in the figures ({phase}) · a: list")
    } else if let (Some(_), Status::Failed(e)) = (&app.data, &app.status) {
        // The key first: the error may be longer than the line.
        format!("the audit stopped · r re-reads · {e}")
    } else if let Some((a, now)) = app
        .data
        .as_ref()
        .and_then(|d| Some((&d.audit, d.audit.pending.first()?)))
    {
        // Its seconds once they are worth counting: the screen is alive.
        let secs = app
            .computing_secs()
            .filter(|s| *s >= COUNT_FROM)
            .map_or(String::new(), |s| format!(" {s} s"));
        // Pass@(K,T) hands on each benchmark's rows as they come, values
        // first: how many first (a narrow screen cuts the line's end).
        let (whole, values) = (a.pass.benchmarks_in.len(), a.pass.values_in.len());
        let benchmarks = match (whole + values, whole) {
            _ if *now != crate::analysis::Part::Pass => String::new(),
            (0, _) => String::new(),
            (n, k) if values > 0 => format!(
                "{n} benchmark{} in, {k} with intervals · ",
                if n == 1 { "" } else { "s" }
            ),
            (1, _) => "1 benchmark in · ".into(),
            (n, _) => format!("{n} benchmarks in · "),
        };
        format!(
            "{benchmarks}computing {}…{secs} ({} of {} analyses ready)",
            now.title(),
            a.parts_done(),
            crate::analysis::Part::ALL.len()
        )
    } else if app.data.is_some() && phase != "idle" {
        format!("{phase}… {} records", p.records.load(Relaxed))
    } else {
        // Its keys once the selection's width is known (below).
        String::new()
    };
    // The selection, whole and then shorter: without its benchmark (the
    // Budget grid's title names it), then its cell alone.
    let sels: Vec<String> = app.data.as_ref().map_or_else(Vec::new, |d| {
        let (b, pair) = current(&d.audit, &app.sel);
        // Before Pass@(K,T) is in there is no K grid: no cell to name.
        let cell = app
            .sel
            .k_level(&d.audit)
            .map_or("K=…".into(), |(k, l)| format!("K={k} {l}%"));
        let cell = format!(
            "{cell} {}{}",
            app.sel.mode_name(),
            if app.balance { " │ balanced" } else { "" }
        );
        let pair = pair.map_or("no pair".into(), |p| format!("{}→{}", p.base, p.rl));
        vec![
            format!(" {} │ {pair} │ {cell}", b.unwrap_or_else(|| "–".into())),
            format!(" {pair} │ {cell}"),
            format!(" {cell}"),
        ]
    });
    // No message, progress or prompt: the panel's keys (made below).
    let keys = text.is_empty();
    // The selection whole beside the key hints (`?` lists them all); a
    // message or progress whole beside as much of the selection as fits
    // with it, else two fifths of the line at least.
    let width = |s: &str| u16::try_from(s.chars().count()).unwrap_or(u16::MAX);
    let needs = if keys {
        10
    } else {
        width(&text).saturating_add(1)
    };
    let cap = area.width - needs.min(area.width * 2 / 5).max(10).min(area.width);
    let sel = sels
        .iter()
        .find(|s| width(s).saturating_add(needs) <= area.width)
        .or_else(|| sels.iter().find(|s| width(s) <= cap))
        .or(sels.last())
        .cloned()
        .unwrap_or_default();
    let right = width(&sel).min(cap);
    let [l, r] = Layout::horizontal([Constraint::Min(10), Constraint::Length(right)]).areas(area);
    let text = match appended {
        Some(short) if text.chars().count() > l.width as usize => short,
        _ if keys => {
            let filter = if app.filter.is_empty() {
                String::new()
            } else {
                format!("filter: {}  ", app.filter)
            };
            let room = usize::from(l.width).saturating_sub(filter.chars().count());
            format!("{filter}{}", command_bar(app.panel, room))
        }
        // A message or progress cut ends in `…`, as the selection does: a
        // cut count (`5 of 1`) is not read as another.
        _ => cut(&text, l.width.into()),
    };
    f.render_widget(Paragraph::new(text), l);
    f.render_widget(
        Paragraph::new(cut(&sel, r.width.into())).style(theme.accent()),
        r,
    );
}

fn panel(f: &mut Frame, area: Rect, app: &mut App, d: &Loaded, theme: &Theme) {
    let t = app.table().unwrap_or_default();
    let row = app.row();
    let hs = app.hscroll;
    let a = &d.audit;
    if app.panel != Panel::Overview
        && (super::views::pending::is_waiting(a, app.panel, &app.sel)
            || super::views::empty::is_empty(d, app.panel))
    {
        // `t` is the stand-in: which parts the panel waits for, or why it
        // has nothing to show — with a selection where a row leads
        // somewhere (the runs BudgetMix could audit).
        let leads = t.rows.iter().any(|r| r.target != Target::None);
        let at = table(f, area, &t, leads.then_some(row), theme, "", hs);
        app.rows_at = leads.then_some(at);
        return;
    }
    // A table over a second view, the table taking what it needs up to a share.
    let split = |area: Rect, t: &TableData, share: u16| {
        let h = table_height(t, "", hs, area.width).min(area.height / share);
        let [a1, a2] = Layout::vertical([Constraint::Length(h), Constraint::Min(3)]).areas(area);
        (a1, a2)
    };
    match app.panel {
        Panel::Overview => {
            let info = overview::inputs(&d.set, a);
            // Its lines as wrapped (a long path takes two), up to half.
            let h = super::widgets::lines_box_height(&info, area.width).min(area.height / 2);
            let [top, rest] =
                Layout::vertical([Constraint::Length(h), Constraint::Min(3)]).areas(area);
            lines_box(f, top, "loaded", info);
            app.rows_at = Some(table(f, rest, &t, Some(row), theme, "", hs));
        }
        Panel::Budget => {
            let grid_h = (t.rows.len() + 3 + grid_title(&t, area.width).1.len()) as u16;
            let grid_h = grid_h.min(area.height / 2);
            let detail = budget::detail(a, &app.sel);
            // The selected cell takes all its lines on a tall screen (a
            // chart of 12 lines still below), else up to 7 when a real chart
            // still fits below, 5 beside a small one (three rows of plot),
            // and what there is (no chart) on a short screen, such as under
            // the tour's box or beside a category's grid at 80×24.
            let rest = area.height.saturating_sub(grid_h);
            let want = detail.len() as u16 + 2;
            let det_h = if rest >= want + 12 {
                want
            } else if rest >= want.min(9) + 8 {
                want.min(9)
            } else if rest >= 7 + 7 {
                want.min(7)
            } else {
                want.min(rest)
            };
            let [g, det, chart] = Layout::vertical([
                Constraint::Length(grid_h),
                Constraint::Length(det_h),
                Constraint::Min(0),
            ])
            .areas(area);
            app.rows_at = Some(budget_grid(f, g, &t, app, theme));
            lines_box(f, det, "selected cell", detail);
            // Under the tour's box a short screen keeps the grid and the
            // selected cell whole, and drops the chart.
            if chart.height >= 3 {
                charts::pass_chart(f, chart, d, app, theme);
            }
        }
        Panel::Cost => {
            let [c, tb] =
                Layout::vertical([Constraint::Percentage(55), Constraint::Min(4)]).areas(area);
            charts::cost_chart(f, c, d, app, theme);
            table(f, tb, &t, None, theme, "", hs);
        }
        Panel::Steps => {
            let (a1, a2) = split(area, &t, 2);
            app.rows_at = Some(table(f, a1, &t, Some(row), theme, "", hs));
            let turns = analyses::matched_turns(a, row);
            table(f, a2, &turns, None, theme, "", hs);
        }
        Panel::Likelihood => {
            let h = table_height(&t, "", hs, area.width).min(area.height / 3);
            let [a1, a2, a3] = Layout::vertical([
                Constraint::Length(h),
                Constraint::Min(4),
                Constraint::Length(4),
            ])
            .areas(area);
            app.rows_at = Some(table(f, a1, &t, Some(row), theme, "", hs));
            charts::nll_chart(f, a2, d, app, theme);
            charts::interval_line(f, a3, d, app);
        }
        Panel::Training => {
            let (a1, a2) = split(area, &t, 2);
            app.rows_at = Some(table(f, a1, &t, Some(row), theme, "", hs));
            charts::metric_chart(f, a2, d, app, theme);
        }
        Panel::BudgetMix => {
            let (a1, a2) = split(area, &t, 2);
            app.rows_at = Some(table(f, a1, &t, Some(row), theme, "", hs));
            table(f, a2, &analyses::gains(a, &app.sel), None, theme, "", hs);
        }
        Panel::Recovery => app.rows_at = Some(table(f, area, &t, Some(row), theme, "", hs)),
    }
}

fn budget_grid(f: &mut Frame, area: Rect, t: &TableData, app: &App, theme: &Theme) -> RowsAt {
    let sel_row = app.row();
    // K's column, then the levels' alike: what the borders, K and the gaps
    // between the columns leave.
    let levels = t.header.len().max(2) as u16 - 1;
    let each = (area.width.saturating_sub(2 + 4 + levels) / levels).clamp(6, 22);
    let header = header_row(&t.header, |j| if j == 0 { 4 } else { usize::from(each) });
    let rows: Vec<Row> = t
        .rows
        .iter()
        .enumerate()
        .map(|(i, r)| {
            Row::new(r.cells.iter().enumerate().map(|(j, c)| {
                let mut st = theme.mark(c.mark);
                if i == sel_row && j == app.sel.level + 1 {
                    st = st.add_modifier(Modifier::REVERSED);
                }
                let width = if j == 0 { 4 } else { usize::from(each) };
                Cell::from(squeezed(&c.text, width)).style(st)
            }))
        })
        .collect();
    let mut w = vec![Constraint::Length(4)];
    w.extend((1..t.header.len()).map(|_| Constraint::Length(each)));
    // The signs shown, on the bottom border; the title's words that do
    // not fit the top one, inside.
    let (top, inside) = grid_title(t, area.width);
    let room = usize::from(area.width.saturating_sub(2));
    let block = Block::bordered()
        .title(top)
        .title_bottom(cut(&t.legend, room));
    let area = with_lines_inside(f, area, block, inside);
    let n = u16::try_from(t.rows.len()).unwrap_or(u16::MAX);
    f.render_widget(Table::new(rows, w).header(header), area);
    // Below the header, a row a K; the level columns after K's 4 and a gap.
    RowsAt {
        area: Rect {
            y: area.y + 1,
            height: area.height.saturating_sub(1).min(n),
            ..area
        },
        first: 0,
        levels: Some((area.x + 5, each + 1)),
    }
}

/// The Budget grid's title as drawn `width` columns wide: on its top
/// border, then up to two lines inside ([`title_lines`]).
fn grid_title(t: &TableData, width: u16) -> (String, Vec<String>) {
    let inner = usize::from(width.saturating_sub(2));
    title_lines(&t.title, inner, inner, TITLE_LINES_INSIDE)
}

#[cfg(test)]
mod tests;
