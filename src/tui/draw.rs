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
use super::table::TableData;
use super::theme::Theme;
use super::views::{analyses, budget, drill, overview};
use super::widgets::lines_box;
use crate::jobs::Loaded;
use crate::schema::load::Progress;

pub fn draw(f: &mut Frame, app: &mut App, progress: &Progress, phase: &str) {
    let theme = Theme {
        no_color: app.no_color,
    };
    if app.width != f.area().width {
        app.width = f.area().width;
        // The compare view's layout depends on the width.
        app.cached.retain(|(v, _)| !matches!(v, View::Compare(..)));
    }
    let [top, body, bottom] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(3),
        Constraint::Length(1),
    ])
    .areas(f.area());
    let titles: Vec<Line> = Panel::ALL
        .iter()
        .enumerate()
        .map(|(i, p)| Line::from(format!("{} {}", i + 1, p.title())))
        .collect();
    f.render_widget(
        Tabs::new(titles)
            .select(app.panel.index())
            .highlight_style(theme.accent().add_modifier(Modifier::REVERSED))
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

/// The tour's box at the bottom of the body; returns the area left above it
/// for the panel the step talks about.
fn tour_box(f: &mut Frame, body: Rect, t: &super::app::Tour, theme: &Theme) -> Rect {
    let Some(step) = t.steps.get(t.at) else {
        return body;
    };
    let inner_w = body.width.saturating_sub(2).max(1) as usize;
    let paragraphs = [step.reading.as_str(), "", step.topic.idea()];
    let needed: usize = paragraphs.iter().map(|p| wrapped_lines(p, inner_w)).sum();
    let cap = if body.height >= 30 { 13 } else { 6 };
    let h = (needed as u16 + 2)
        .min(cap)
        .min(body.height.saturating_sub(6));
    let [rest, area] = Layout::vertical([Constraint::Min(3), Constraint::Length(h)]).areas(body);
    let more = needed as u16 + 2 > h;
    let lines = vec![
        Line::from(Span::styled(
            step.reading.clone(),
            Style::default().add_modifier(Modifier::BOLD),
        )),
        Line::from(""),
        Line::from(step.topic.idea()),
    ];
    let block = Block::bordered()
        .border_style(theme.accent())
        .title(format!(
            " tour {}/{} · {} ",
            t.at + 1,
            t.steps.len(),
            step.topic.title()
        ))
        .title_bottom(if more {
            " n next · N back · ↑↓ more · q leave "
        } else {
            " n next · N back · q leave "
        });
    f.render_widget(Clear, area);
    f.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .scroll((t.scroll, 0))
            .block(block),
        area,
    );
    rest
}

/// Width of the help's keys column (`keymap::help_lines`: 16 right-aligned
/// and two spaces).
const KEYS_COLUMN: usize = 18;

/// A line wrapped at word boundaries to `width`, each line after the first
/// indented by `indent` columns (its first `indent` characters are a
/// column of their own). Too narrow for that: the line as it is.
fn hanging(line: &str, width: usize, indent: usize) -> Vec<String> {
    if line.chars().count() <= width || width < indent + 12 {
        return vec![line.to_string()];
    }
    let head: String = line.chars().take(indent).collect();
    let room = width - indent;
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut used = 0;
    for word in line.chars().skip(indent).collect::<String>().split(' ') {
        let mut word: Vec<char> = word.chars().collect();
        if used > 0 && used + 1 + word.len() > room {
            out.push(std::mem::take(&mut cur));
            used = 0;
        }
        if used > 0 {
            cur.push(' ');
            used += 1;
        }
        // A word longer than the room is cut.
        while used + word.len() > room {
            let rest = word.split_off(room - used);
            cur.extend(word);
            out.push(std::mem::take(&mut cur));
            used = 0;
            word = rest;
        }
        used += word.len();
        cur.extend(word);
    }
    out.push(cur);
    out.into_iter()
        .enumerate()
        .map(|(i, l)| {
            if i == 0 {
                format!("{head}{l}")
            } else {
                format!("{:indent$}{l}", "")
            }
        })
        .collect()
}

/// Lines a paragraph takes when wrapped at word boundaries to `width`.
fn wrapped_lines(text: &str, width: usize) -> usize {
    let (mut lines, mut used) = (1, 0);
    for word in text.split(' ') {
        let w = word.chars().count();
        if used > 0 && used + 1 + w > width {
            lines += 1;
            used = 0;
        }
        used += if used > 0 { 1 + w } else { w };
        while used > width {
            lines += 1;
            used -= width;
        }
    }
    lines
}

fn drill_title(app: &App) -> String {
    let crumbs: Vec<String> = app
        .stack
        .iter()
        .map(|v| match v {
            View::Tasks { k, level, mode } => format!("tasks K={k} {level}% {}", mode.name()),
            View::Rollouts { task, level, .. } => format!("task {task} @ {level}%"),
            View::Trajectory(l) => format!("record {}", l.line()),
            View::RuleRecords { rule, .. } => format!("rule {}", rule + 1),
            View::LlrTurns { base, rl, .. } => format!("{base} → {rl} by turn"),
            View::NaturalTurns { runs, .. } => format!("{} by turn", runs.join(" → ")),
            View::Compare(x, y) => format!("records {} | {}", x.line(), y.line()),
            View::Search(p) => format!("search /{p}/"),
            View::Appended => "appended".into(),
        })
        .collect();
    let marked = match (app.marked, app.stack.last()) {
        (Some(m), Some(View::Rollouts { .. })) => {
            format!(" · marked record {} (x on another compares)", m.line())
        }
        _ => String::new(),
    };
    format!(
        "{} › {}{marked} (Esc: back)",
        app.panel.title(),
        crumbs.join(" › ")
    )
}

/// A drill-down: its table, and for a trajectory the selected step whole.
fn drill(f: &mut Frame, area: Rect, app: &mut App, theme: &Theme) {
    let t = app.table().unwrap_or_default();
    let title = format!("{} — {}", drill_title(app), t.title);
    let row = app.row();
    let lines = match app.stack.last() {
        Some(View::Trajectory(_)) if t.header.len() >= 3 => vec![
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
        Some(View::Compare(..)) if t.header.len() >= 4 => vec![
            format!("{} action: {}", t.text(row, 1), t.text(row, 2)),
            format!("{} observation: {}", t.text(row, 1), t.text(row, 3)),
        ],
        _ => {
            table(f, area, &t, Some(app.row()), theme, &title, app.hscroll);
            return;
        }
    };
    // A FrozenLake trajectory: the lake at the selected turn beside it.
    let lake = match (&t.lake, app.stack.last()) {
        (Some(l), Some(View::Trajectory(_))) => t
            .text(row, 0)
            .parse::<usize>()
            .ok()
            .and_then(|turn| turn.checked_sub(1))
            .map(|at| drill::lake_lines(l, at)),
        _ => None,
    };
    let lake_h = lake.as_ref().map_or(0, |l| l.len() as u16 + 2);
    let box_h = (lines.len() as u16 * 2 + 3).max(lake_h);
    let [a1, a2] =
        Layout::vertical([Constraint::Min(5), Constraint::Length(box_h.min(12))]).areas(area);
    table(f, a1, &t, Some(app.row()), theme, &title, app.hscroll);
    let whole = format!("turn {} whole", t.text(row, 0));
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
    f.render_widget(Paragraph::new("Reading and validating the logs in the background; the panels appear once they are in, each filling in as its analyses finish. q quits."), b);
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
        let mut s = command_bar(app.panel);
        if !app.filter.is_empty() {
            s = format!("filter: {}  {s}", app.filter);
        }
        s
    };
    let sel = app.data.as_ref().map(|d| {
        let (b, pair) = current(&d.audit, &app.sel);
        // Before Pass@(K,T) is in there is no K grid: no cell to name.
        let cell = app
            .sel
            .k_level(&d.audit)
            .map_or("K=…".into(), |(k, l)| format!("K={k} {l}%"));
        format!(
            " {} │ {} │ {cell} {}{}",
            b.unwrap_or_else(|| "–".into()),
            pair.map_or("no pair".into(), |p| format!("{}→{}", p.base, p.rl)),
            app.sel.mode_name(),
            if app.balance { " │ balanced" } else { "" }
        )
    });
    let sel = sel.unwrap_or_default();
    let right = (sel.chars().count() as u16).min(area.width * 3 / 5);
    let [l, r] = Layout::horizontal([Constraint::Min(10), Constraint::Length(right)]).areas(area);
    let text = match appended {
        Some(short) if text.chars().count() > l.width as usize => short,
        _ => text,
    };
    f.render_widget(Paragraph::new(text), l);
    f.render_widget(Paragraph::new(sel).style(theme.accent()), r);
}

fn help(f: &mut Frame, panel: Panel, scroll: u16) {
    let area = f.area();
    let w = area.width.saturating_sub(4).min(100);
    let h = area.height.saturating_sub(2);
    let rect = Rect::new(area.x + (area.width - w) / 2, area.y + 1, w, h);
    let bold = Style::default().add_modifier(Modifier::BOLD);
    // Keys first (they fit), then what the panel measures.
    let mut lines: Vec<Line> = vec![Line::from(Span::styled("Keys", bold))];
    // A key's description wraps under itself, past the keys column.
    let inner = usize::from(w.saturating_sub(2));
    lines.extend(
        help_lines()
            .iter()
            .flat_map(|l| hanging(l, inner, KEYS_COLUMN))
            .map(Line::from),
    );
    lines.push(Line::from(""));
    lines.push(Line::from(Span::styled(
        format!("{} — how to read it", panel.title()),
        bold,
    )));
    for l in panel.explain().lines() {
        lines.push(Line::from(l.to_string()));
    }
    lines.push(Line::from(""));
    lines.push(Line::from("Every figure carries its n; intervals are 95% (cluster bootstrap over tasks unless noted). ↑↓ scroll; any other key closes."));
    f.render_widget(Clear, rect);
    f.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .scroll((scroll, 0))
            .block(Block::bordered().title("help")),
        rect,
    );
}

fn widths(t: &TableData, total: u16) -> Vec<u16> {
    let n = t
        .header
        .len()
        .max(t.rows.iter().map(|r| r.cells.len()).max().unwrap_or(0));
    let natural: Vec<usize> = (0..n)
        .map(|i| {
            let h = t.header.get(i).map_or(0, |x| x.chars().count());
            let c = t
                .rows
                .iter()
                .take(500)
                .filter_map(|r| r.cells.get(i))
                .map(|x| x.text.chars().count())
                .max()
                .unwrap_or(0);
            h.max(c).max(2)
        })
        .collect();
    let mut w: Vec<usize> = natural.iter().map(|&x| x.min(60)).collect();
    // Shrink the widest columns until the table fits.
    let budget = total.saturating_sub(3 + n as u16) as usize;
    while w.iter().sum::<usize>() > budget {
        let (i, &m) = w.iter().enumerate().max_by_key(|x| *x.1).unwrap_or((0, &0));
        if m <= 6 {
            break;
        }
        w[i] = m - 1;
    }
    // Room to spare goes to the columns cut at 60 (long details, titles).
    let mut spare = budget.saturating_sub(w.iter().sum::<usize>());
    for (x, &want) in w.iter_mut().zip(&natural) {
        let more = want.saturating_sub(*x).min(spare);
        *x += more;
        spare -= more;
    }
    w.into_iter().map(|x| x as u16).collect()
}

/// A grid cell as it fits `width` columns: its spaces dropped from the
/// right first (`42.8→53.4 +10.5 n ▲` → `42.8→53.4 +10.5n▲`), so that the
/// verdict at its end stays; then cut.
fn squeezed(text: &str, width: usize) -> String {
    let mut s = text.to_string();
    while s.chars().count() > width {
        match s.rfind(' ') {
            Some(i) => {
                s.remove(i);
            }
            None => break,
        }
    }
    cut(&s, width)
}

/// A table's header row, each column's name cut to `width_of` it.
fn header_row(header: &[String], width_of: impl Fn(usize) -> usize) -> Row<'static> {
    Row::new(
        header
            .iter()
            .enumerate()
            .map(|(j, h)| Cell::from(cut(h, width_of(j)))),
    )
    .style(Style::default().add_modifier(Modifier::BOLD))
}

/// `text` as it fits `width` columns: cut with an ellipsis, so that a cut
/// number (`n=10003` in 7 columns) is not read as another (`n=1000`).
fn cut(text: &str, width: usize) -> String {
    match text.char_indices().nth(width) {
        Some(_) if width > 0 => {
            let end = text.char_indices().nth(width - 1).map_or(0, |(i, _)| i);
            format!("{}…", &text[..end])
        }
        Some(_) => String::new(),
        None => text.to_string(),
    }
}

/// The cells of a row that `widths` cut (after a sideways scroll of
/// `hscroll`), each in full after its column's name — `length-matched d:
/// 3.26 [+2.0, +4.9] · benchmark: frozenlake` — the most hidden first, so
/// that what a narrow screen hides most is what its border shows; empty
/// when every cell fits.
fn uncut(
    header: &[String],
    cells: &[super::table::Cell],
    widths: &[u16],
    hscroll: usize,
) -> String {
    let mut hidden: Vec<(usize, String)> = cells
        .iter()
        .enumerate()
        .filter_map(|(j, c)| {
            let shown = if j == 0 {
                c.text.as_str()
            } else {
                scrolled(&c.text, hscroll)
            };
            // A cut cell shows width − 1 characters and the ellipsis.
            let over = shown
                .chars()
                .count()
                .checked_sub(usize::from(*widths.get(j)?))
                .filter(|&o| o > 0)?;
            let text = match header.get(j) {
                Some(h) if !h.is_empty() => format!("{h}: {}", c.text),
                _ => c.text.clone(),
            };
            Some((over, text))
        })
        .collect();
    // Stable: columns hiding as much stay in their order.
    hidden.sort_by_key(|(over, _)| std::cmp::Reverse(*over));
    hidden
        .into_iter()
        .map(|(_, t)| t)
        .collect::<Vec<_>>()
        .join(" · ")
}

/// `text` from character `skip` on (the sideways scroll of long cells).
fn scrolled(text: &str, skip: usize) -> &str {
    match text.char_indices().nth(skip) {
        Some((i, _)) => &text[i..],
        None if skip == 0 => text,
        None => "",
    }
}

pub fn table(
    f: &mut Frame,
    area: Rect,
    t: &TableData,
    selected: Option<usize>,
    theme: &Theme,
    title: &str,
    hscroll: usize,
) {
    let widths = widths(t, area.width);
    let width_of = |j: usize| widths.get(j).map_or(usize::MAX, |&w| usize::from(w));
    let header = header_row(&t.header, width_of);
    // Only the rows on screen are made (a cell's tasks at 11 M rollouts are
    // 26,000 rows: made whole, 0.1 s a redraw): the window ratatui's table
    // would scroll to, the selected row at its bottom once past the first
    // screenful (borders and header take three lines; a row one).
    let n = t.rows.len();
    let height = usize::from(area.height.saturating_sub(3)).max(1);
    let offset = selected.map_or(0, |s| s.min(n.saturating_sub(1)).saturating_sub(height - 1));
    let rows: Vec<Row> = t
        .rows
        .iter()
        .skip(offset)
        .take(height)
        .map(|r| {
            // The first column stays put; the others scroll sideways.
            Row::new(r.cells.iter().enumerate().map(|(j, c)| {
                let text = if j == 0 {
                    &c.text
                } else {
                    scrolled(&c.text, hscroll)
                };
                Cell::from(cut(text, width_of(j))).style(theme.mark(c.mark))
            }))
            .style(theme.mark(r.mark))
        })
        .collect();
    // The scroll shows first: long titles are cut at the right.
    let title = format!(
        "{}{} ({} row{})",
        if hscroll > 0 {
            format!("[scrolled {hscroll} →] ")
        } else {
            String::new()
        },
        if title.is_empty() { &t.title } else { title },
        n,
        if n == 1 { "" } else { "s" },
    );
    // The selected row's cells that are cut, in full on the bottom border.
    let whole = selected
        .and_then(|s| t.rows.get(s.min(n.saturating_sub(1))))
        .map(|r| uncut(&t.header, &r.cells, &widths, hscroll))
        .unwrap_or_default();
    let mut block = Block::bordered().title(title);
    if !whole.is_empty() {
        let room = usize::from(area.width.saturating_sub(2));
        block = block.title_bottom(cut(&whole, room));
    }
    let widget = Table::new(rows, widths.into_iter().map(Constraint::Length))
        .header(header)
        .block(block)
        .row_highlight_style(Style::default().add_modifier(Modifier::REVERSED))
        .highlight_symbol("▶");
    let mut state = TableState::default()
        .with_selected(selected.filter(|_| n > 0).map(|s| s.min(n - 1) - offset));
    f.render_stateful_widget(widget, area, &mut state);
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
        // has nothing to show.
        table(f, area, &t, None, theme, "", hs);
        return;
    }
    // A table over a second view, the table taking what it needs up to a share.
    let split = |area: Rect, rows: usize, share: u16| {
        let h = (rows as u16 + 3).min(area.height / share);
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
            table(f, rest, &t, Some(row), theme, "", hs);
        }
        Panel::Budget => {
            let grid_h = (t.rows.len() as u16 + 3).min(area.height / 2);
            let detail = budget::detail(a, &app.sel);
            // The selected cell takes all its lines on a tall screen (a
            // chart of 12 lines still below), else up to 7 when a real chart
            // still fits below, 5 beside a small one, and what there is (no
            // chart) on a short screen, such as under the tour's box.
            let rest = area.height.saturating_sub(grid_h);
            let want = detail.len() as u16 + 2;
            let det_h = if rest >= want + 12 {
                want
            } else if rest >= want.min(9) + 8 {
                want.min(9)
            } else if rest >= 7 + 6 {
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
            budget_grid(f, g, &t, app, theme);
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
            let (a1, a2) = split(area, t.rows.len(), 2);
            table(f, a1, &t, Some(row), theme, "", hs);
            let turns = analyses::matched_turns(a, row);
            table(f, a2, &turns, None, theme, "", hs);
        }
        Panel::Likelihood => {
            let h = (t.rows.len() as u16 + 3).min(area.height / 3);
            let [a1, a2, a3] = Layout::vertical([
                Constraint::Length(h),
                Constraint::Min(4),
                Constraint::Length(4),
            ])
            .areas(area);
            table(f, a1, &t, Some(row), theme, "", hs);
            charts::nll_chart(f, a2, d, app, theme);
            charts::interval_line(f, a3, d, app);
        }
        Panel::Training => {
            let (a1, a2) = split(area, t.rows.len(), 2);
            table(f, a1, &t, Some(row), theme, "", hs);
            charts::metric_chart(f, a2, d, app, theme);
        }
        Panel::BudgetMix => {
            let (a1, a2) = split(area, t.rows.len(), 2);
            table(f, a1, &t, Some(row), theme, "", hs);
            table(f, a2, &analyses::gains(a, &app.sel), None, theme, "", hs);
        }
        Panel::Recovery => table(f, area, &t, Some(row), theme, "", hs),
    }
}

fn budget_grid(f: &mut Frame, area: Rect, t: &TableData, app: &App, theme: &Theme) {
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
    let widget = Table::new(rows, w)
        .header(header)
        .block(Block::bordered().title(format!(
            "{}  (n native, t truncated; ▲ ahead ▼ flip ≈ equivalent ? inconclusive · degenerate)",
            t.title
        )));
    f.render_widget(widget, area);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::table::{Mark, Target};

    #[test]
    fn long_cells_use_the_width_there_is() {
        let mut t = TableData::new("t", "t", &["what", "detail"]);
        t.push_text(vec!["x".into(), "d".repeat(100)], Mark::None, Target::None);
        // 160 columns: borders and gaps take 3 + 2; both columns fit whole.
        assert_eq!(widths(&t, 160), vec![4, 100]);
        // 80 columns: the detail gets what is left.
        assert_eq!(widths(&t, 80), vec![4, 71]);
    }

    #[test]
    fn a_help_line_wraps_under_its_description() {
        let l = format!(
            "{:>16}  {}",
            "← / h", "Budget: tighter level; Cost: lower ceiling"
        );
        // Fits: as it is.
        assert_eq!(hanging(&l, 60, 18), vec![l.clone()]);
        // 40 columns: 22 for the description, broken at spaces.
        assert_eq!(
            hanging(&l, 40, 18),
            vec![
                "           ← / h  Budget: tighter level;".to_string(),
                "                  Cost: lower ceiling".to_string(),
            ]
        );
        // A word longer than the room is cut; too narrow a screen: as is.
        assert_eq!(
            hanging(&format!("{:>16}  abcdefghijklmnop qr", "x"), 30, 18),
            vec![
                format!("{:>16}  abcdefghijkl", "x"),
                format!("{:18}mnop qr", ""),
            ]
        );
        assert_eq!(hanging(&l, 25, 18), vec![l.clone()]);
    }

    #[test]
    fn a_grid_cell_keeps_its_verdict() {
        assert_eq!(squeezed("42.8→53.4 +10.5 n ▲", 19), "42.8→53.4 +10.5 n ▲");
        assert_eq!(squeezed("42.8→53.4 +10.5 n ▲", 18), "42.8→53.4 +10.5 n▲");
        assert_eq!(squeezed("42.8→53.4 +10.5 n ▲", 17), "42.8→53.4 +10.5n▲");
        assert_eq!(squeezed("42.8→53.4 +10.5 n ▲", 16), "42.8→53.4+10.5n▲");
        assert_eq!(squeezed("42.8→53.4 +10.5 n ▲", 10), "42.8→53.4…");
    }

    #[test]
    fn a_cut_cell_ends_in_an_ellipsis() {
        assert_eq!(cut("11.47 (n=10003)", 13), "11.47 (n=100…");
        assert_eq!(cut("11.47 (n=10003)", 15), "11.47 (n=10003)");
        assert_eq!(cut("11.47 (n=10003)", 14), "11.47 (n=1000…");
        assert_eq!(cut("héllo", 3), "hé…");
        assert_eq!(cut("ab", 1), "…");
        assert_eq!(cut("ab", 0), "");
        assert_eq!(cut("", 0), "");
        // Drawn in 20 columns: borders, the highlight column and the gaps
        // leave the two columns 15, "what" takes 4, the detail 11.
        use ratatui::backend::TestBackend;
        let mut t = TableData::new("t", "t", &["what", "detail"]);
        t.push_text(
            vec!["x".into(), "n=1234567890123456".into()],
            Mark::None,
            Target::None,
        );
        let mut term = ratatui::Terminal::new(TestBackend::new(20, 4)).unwrap();
        let theme = Theme { no_color: true };
        term.draw(|f| table(f, f.area(), &t, Some(0), &theme, "", 0))
            .unwrap();
        let line: String = (0..20)
            .map(|x| term.backend().buffer()[(x, 2)].symbol().to_string())
            .collect();
        assert_eq!(line, "│▶x    n=12345678… │");
        // The cut cell in full on the bottom border, itself cut to fit.
        let border: String = (0..20)
            .map(|x| term.backend().buffer()[(x, 3)].symbol().to_string())
            .collect();
        assert_eq!(border, "└detail: n=1234567…┘");
    }

    #[test]
    fn a_rows_cut_cells_are_named_most_hidden_first() {
        use crate::tui::table::Cell;
        let header = ["a", "b", "", "d"].map(String::from);
        let cells = ["abcdef", "xy", "0123456789", "12345"].map(Cell::text);
        // Widths 4, 2, 5, 4: a hides 2, b fits, the third hides 5, d 1.
        assert_eq!(
            uncut(&header, &cells, &[4, 2, 5, 4], 0),
            "0123456789 · a: abcdef · d: 12345"
        );
        // Scrolled 3 sideways, the first column stays: the third shows
        // 3456789 (hides 2), d shows 45 (fits); a and the third tie and
        // keep their order.
        assert_eq!(
            uncut(&header, &cells, &[4, 2, 5, 4], 3),
            "a: abcdef · 0123456789"
        );
        assert_eq!(uncut(&header, &cells, &[6, 2, 10, 5], 0), "");
    }

    /// The rows on screen alone make the screen ratatui's table makes of
    /// every row with its own scrolling: for every length, height and
    /// selection (past the end included), the same buffer.
    #[test]
    fn a_table_drawn_from_its_visible_rows_is_the_whole_tables_screen() {
        use ratatui::backend::TestBackend;
        use ratatui::buffer::Buffer;
        let theme = Theme { no_color: false };
        // ratatui's Table of all the rows, scrolled by its own state (the
        // way `table` drew before it made only the visible rows).
        let whole = |f: &mut Frame, t: &TableData, selected: Option<usize>| {
            let rows: Vec<Row> = t
                .rows
                .iter()
                .map(|r| {
                    Row::new(
                        r.cells
                            .iter()
                            .map(|c| Cell::from(c.text.clone()).style(theme.mark(c.mark))),
                    )
                    .style(theme.mark(r.mark))
                })
                .collect();
            let n = t.rows.len();
            let title = format!("{} ({} row{})", t.title, n, if n == 1 { "" } else { "s" });
            let header = Row::new(t.header.iter().map(|h| Cell::from(h.as_str())))
                .style(Style::default().add_modifier(Modifier::BOLD));
            let widths = widths(t, f.area().width)
                .into_iter()
                .map(Constraint::Length);
            let widget = Table::new(rows, widths)
                .header(header)
                .block(Block::bordered().title(title))
                .row_highlight_style(Style::default().add_modifier(Modifier::REVERSED))
                .highlight_symbol("▶");
            let mut state = TableState::default().with_selected(selected.filter(|_| n > 0));
            f.render_stateful_widget(widget, f.area(), &mut state);
        };
        let screen = |h: u16, draw: &dyn Fn(&mut Frame)| -> Buffer {
            let mut term = ratatui::Terminal::new(TestBackend::new(40, h)).unwrap();
            term.draw(|f| draw(f)).unwrap();
            term.backend().buffer().clone()
        };
        for n in [0usize, 1, 2, 5, 9, 10, 11, 30] {
            let mut t = TableData::new("t", "rows", &["task", "n"]);
            for i in 0..n {
                let mark = if i % 3 == 0 { Mark::Bad } else { Mark::None };
                t.push_text(vec![format!("task-{i}"), i.to_string()], mark, Target::None);
            }
            for h in [3u16, 4, 5, 8, 12, 40] {
                for selected in [
                    None,
                    Some(0),
                    Some(1),
                    Some(4),
                    Some(9),
                    Some(10),
                    Some(29),
                    Some(35),
                ] {
                    let want = screen(h, &|f| whole(f, &t, selected));
                    let got = screen(h, &|f| table(f, f.area(), &t, selected, &theme, "", 0));
                    assert_eq!(got, want, "{n} rows, height {h}, selected {selected:?}");
                }
            }
        }
    }

    #[test]
    fn sideways_scroll_counts_characters() {
        assert_eq!(scrolled("héllo wörld", 6), "wörld");
        assert_eq!(scrolled("abc", 0), "abc");
        assert_eq!(scrolled("abc", 9), "");
    }
}
