//! Rendering: state in, frame out. Reflows down to 80×24; honours NO_COLOR.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::symbols::Marker;
use ratatui::text::{Line, Span};
use ratatui::widgets::{
    Axis, Block, Cell, Chart, Clear, Dataset, Gauge, GraphType, Paragraph, Row, Table, TableState,
    Tabs, Wrap,
};
use ratatui::Frame;

use super::app::{App, Status, View};
use super::help::{explain, PANELS};
use super::keys::{command_bar, BINDINGS};
use super::views::{self, Mark, TableData};
use crate::jobs::Loaded;
use crate::schema::load::Progress;

/// (legend name, points, how to draw them).
type Series = (String, Vec<(f64, f64)>, GraphType);

/// What a chart shows besides its data.
struct ChartSpec<'a> {
    title: String,
    x_name: &'a str,
    y_name: &'a str,
    /// y is a share: fixed to [0, 1] and labelled in percent.
    y01: bool,
}

const SERIES: [Color; 6] = [
    Color::Cyan,
    Color::Magenta,
    Color::Yellow,
    Color::Green,
    Color::Blue,
    Color::Red,
];

struct Theme {
    no_color: bool,
}

impl Theme {
    fn mark(&self, m: Mark) -> Style {
        match (m, self.no_color) {
            (Mark::None, _) => Style::default(),
            (Mark::VeryBad, true) => {
                Style::default().add_modifier(Modifier::BOLD | Modifier::UNDERLINED)
            }
            (Mark::Bad, true) => Style::default().add_modifier(Modifier::ITALIC),
            (Mark::Good, true) => Style::default(),
            (Mark::VeryBad, false) => Style::default().fg(Color::Red).add_modifier(Modifier::BOLD),
            (Mark::Bad, false) => Style::default().fg(Color::Yellow),
            (Mark::Good, false) => Style::default().fg(Color::Green),
        }
    }
    fn series(&self, i: usize) -> Style {
        if self.no_color {
            Style::default()
        } else {
            Style::default().fg(SERIES[i % SERIES.len()])
        }
    }
    fn accent(&self) -> Style {
        if self.no_color {
            Style::default().add_modifier(Modifier::BOLD)
        } else {
            Style::default()
                .fg(Color::Cyan)
                .add_modifier(Modifier::BOLD)
        }
    }
}

pub fn draw(f: &mut Frame, app: &mut App, progress: &Progress, phase: &str) {
    let theme = Theme {
        no_color: app.no_color,
    };
    let [top, body, bottom] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(3),
        Constraint::Length(1),
    ])
    .areas(f.area());
    let titles: Vec<Line> = PANELS
        .iter()
        .enumerate()
        .map(|(i, p)| Line::from(format!("{} {p}", i + 1)))
        .collect();
    f.render_widget(
        Tabs::new(titles)
            .select(app.panel)
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
            if app.stack.is_empty() {
                panel(f, body, app, &d, &theme);
            } else {
                let t = app.table().unwrap_or_default();
                let title = format!("{} — {}", drill_title(app), t.title);
                table(f, body, &t, Some(app.row()), &theme, &title);
            }
        }
    }
    status_line(f, bottom, app, progress, phase, &theme);
    if app.help {
        help(f, app.panel);
    }
}

fn drill_title(app: &App) -> String {
    let crumbs: Vec<String> = app
        .stack
        .iter()
        .map(|v| match v {
            View::Tasks { k, level } => format!("tasks K={k} {level}%"),
            View::Rollouts { task, level } => format!("task {task} @ {level}%"),
            View::Trajectory(l) => format!("record {}", l.line),
            View::RuleRecords { rule, .. } => format!("rule {}", rule + 1),
        })
        .collect();
    format!("{} › {} (Esc: back)", PANELS[app.panel], crumbs.join(" › "))
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
            .block(Block::bordered().title(format!("{phase}…")))
            .ratio(ratio)
            .label(format!(
                "{:.1} of {:.1} MB, {rec} records",
                done as f64 / 1e6,
                total as f64 / 1e6
            )),
        a,
    );
    f.render_widget(Paragraph::new("Reading and validating the logs in the background; panels appear as soon as the audit is ready. q quits."), b);
}

fn status_line(f: &mut Frame, area: Rect, app: &App, p: &Progress, phase: &str, theme: &Theme) {
    use std::sync::atomic::Ordering::Relaxed;
    let text = if app.filter_editing {
        format!("/{}▏ (Enter keeps, Esc clears)", app.filter)
    } else if let Some(m) = &app.message {
        m.clone()
    } else if app.data.is_some() && phase != "idle" {
        format!("{phase}… {} records", p.records.load(Relaxed))
    } else {
        let mut s = command_bar();
        if !app.filter.is_empty() {
            s = format!("filter: {}  {s}", app.filter);
        }
        s
    };
    let sel = app.data.as_ref().map(|d| {
        let (b, pair) = views::current(&d.audit, &app.sel);
        let k = d.audit.pass.ks.get(app.sel.k).copied().unwrap_or(1);
        let l = d
            .audit
            .settings
            .levels
            .get(app.sel.level)
            .copied()
            .unwrap_or(100);
        format!(
            " {} │ {} │ K={k} {l}% {}{}",
            b.unwrap_or_else(|| "–".into()),
            pair.map_or("no pair".into(), |p| format!("{}→{}", p.base, p.rl)),
            app.sel.mode.name(),
            if app.balance { " │ balanced" } else { "" }
        )
    });
    let sel = sel.unwrap_or_default();
    let right = (sel.chars().count() as u16).min(area.width * 3 / 5);
    let [l, r] = Layout::horizontal([Constraint::Min(10), Constraint::Length(right)]).areas(area);
    f.render_widget(Paragraph::new(text), l);
    f.render_widget(Paragraph::new(sel).style(theme.accent()), r);
}

fn help(f: &mut Frame, panel: usize) {
    let area = f.area();
    let w = area.width.saturating_sub(4).min(100);
    let h = area.height.saturating_sub(2);
    let rect = Rect::new(area.x + (area.width - w) / 2, area.y + 1, w, h);
    let mut lines: Vec<Line> = vec![Line::from(Span::styled(
        format!("{} — how to read it", PANELS[panel]),
        Style::default().add_modifier(Modifier::BOLD),
    ))];
    lines.push(Line::from(explain(panel)));
    lines.push(Line::from(""));
    lines.push(Line::from(Span::styled(
        "Keys",
        Style::default().add_modifier(Modifier::BOLD),
    )));
    for b in BINDINGS {
        lines.push(Line::from(format!("{:>16}  {}", b.keys, b.help)));
    }
    lines.push(Line::from(""));
    lines.push(Line::from("Every figure carries its n; intervals are 95% (cluster bootstrap over tasks unless noted). Any key closes."));
    f.render_widget(Clear, rect);
    f.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .block(Block::bordered().title("help")),
        rect,
    );
}

fn widths(t: &TableData, total: u16) -> Vec<Constraint> {
    let n = t
        .header
        .len()
        .max(t.rows.iter().map(|r| r.len()).max().unwrap_or(0));
    let natural: Vec<usize> = (0..n)
        .map(|i| {
            let h = t.header.get(i).map_or(0, |x| x.chars().count());
            let c = t
                .rows
                .iter()
                .take(500)
                .filter_map(|r| r.get(i))
                .map(|x| x.chars().count())
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
    w.into_iter()
        .map(|x| Constraint::Length(x as u16))
        .collect()
}

fn table(
    f: &mut Frame,
    area: Rect,
    t: &TableData,
    selected: Option<usize>,
    theme: &Theme,
    title: &str,
) {
    let header = Row::new(t.header.iter().map(|h| Cell::from(h.as_str())))
        .style(Style::default().add_modifier(Modifier::BOLD));
    let rows: Vec<Row> = t
        .rows
        .iter()
        .zip(&t.marks)
        .map(|(r, m)| Row::new(r.iter().map(|c| Cell::from(c.as_str()))).style(theme.mark(*m)))
        .collect();
    let n = t.rows.len();
    let title = format!(
        "{} ({} row{})",
        if title.is_empty() { &t.title } else { title },
        n,
        if n == 1 { "" } else { "s" }
    );
    let widget = Table::new(rows, widths(t, area.width))
        .header(header)
        .block(Block::bordered().title(title))
        .row_highlight_style(Style::default().add_modifier(Modifier::REVERSED))
        .highlight_symbol("▶");
    let mut state = TableState::default().with_selected(selected.filter(|_| n > 0));
    f.render_stateful_widget(widget, area, &mut state);
}

fn lines_box(f: &mut Frame, area: Rect, title: &str, lines: Vec<String>) {
    let p = Paragraph::new(lines.into_iter().map(Line::from).collect::<Vec<_>>())
        .wrap(Wrap { trim: true })
        .block(Block::bordered().title(title.to_string()));
    f.render_widget(p, area);
}

fn panel(f: &mut Frame, area: Rect, app: &mut App, d: &Loaded, theme: &Theme) {
    let t = app.table().unwrap_or_default();
    let row = app.row();
    let a = &d.audit;
    match app.panel {
        0 => {
            let info = views::inputs(&d.set, a);
            let h = (info.len() as u16 + 2).min(area.height / 2);
            let [top, rest] =
                Layout::vertical([Constraint::Length(h), Constraint::Min(3)]).areas(area);
            lines_box(f, top, "loaded", info);
            table(f, rest, &t, Some(row), theme, "");
        }
        1 => {
            let grid_h = (t.rows.len() as u16 + 3).min(area.height / 2);
            let detail = views::cell_detail(a, &app.sel);
            let det_h = (detail.len() as u16 + 2).min(6);
            let [g, det, chart] = Layout::vertical([
                Constraint::Length(grid_h),
                Constraint::Length(det_h),
                Constraint::Min(3),
            ])
            .areas(area);
            budget_grid(f, g, &t, app, theme);
            lines_box(f, det, "selected cell", detail);
            pass_chart(f, chart, d, app, theme);
        }
        2 => {
            let [c, tb] =
                Layout::vertical([Constraint::Percentage(55), Constraint::Min(4)]).areas(area);
            cost_chart(f, c, d, app, theme);
            table(f, tb, &t, None, theme, "");
        }
        3 => {
            let h = (t.rows.len() as u16 + 3).min(area.height / 2);
            let [a1, a2] =
                Layout::vertical([Constraint::Length(h), Constraint::Min(3)]).areas(area);
            table(f, a1, &t, Some(row), theme, "");
            table(f, a2, &views::matched_turns(a, &app.sel), None, theme, "");
        }
        5 => {
            let h = (t.rows.len() as u16 + 3).min(area.height / 3);
            let [a1, a2, a3] = Layout::vertical([
                Constraint::Length(h),
                Constraint::Min(4),
                Constraint::Length(3),
            ])
            .areas(area);
            table(f, a1, &t, Some(row), theme, "");
            nll_chart(f, a2, d, app, theme);
            interval_line(f, a3, d, app);
        }
        6 => {
            let h = (t.rows.len() as u16 + 3).min(area.height / 2);
            let [a1, a2] =
                Layout::vertical([Constraint::Length(h), Constraint::Min(3)]).areas(area);
            table(f, a1, &t, Some(row), theme, "");
            metric_chart(f, a2, d, app, theme);
        }
        7 => {
            let h = (t.rows.len() as u16 + 3).min(area.height / 2);
            let [a1, a2] =
                Layout::vertical([Constraint::Length(h), Constraint::Min(3)]).areas(area);
            table(f, a1, &t, Some(row), theme, "");
            table(f, a2, &views::gains_table(a, &app.sel), None, theme, "");
        }
        _ => table(f, area, &t, Some(row), theme, ""),
    }
}

fn budget_grid(f: &mut Frame, area: Rect, t: &TableData, app: &App, theme: &Theme) {
    let header = Row::new(t.header.iter().map(|h| Cell::from(h.as_str())))
        .style(Style::default().add_modifier(Modifier::BOLD));
    let sel_row = app.row();
    let rows: Vec<Row> = t
        .rows
        .iter()
        .enumerate()
        .map(|(i, r)| {
            Row::new(r.iter().enumerate().map(|(j, c)| {
                let mut st = if c.ends_with('!') {
                    theme.mark(Mark::VeryBad)
                } else if c.ends_with('*') {
                    theme.mark(Mark::Bad)
                } else {
                    Style::default()
                };
                if i == sel_row && j == app.sel.level + 1 {
                    st = st.add_modifier(Modifier::REVERSED);
                }
                Cell::from(c.as_str()).style(st)
            }))
        })
        .collect();
    let mut w = vec![Constraint::Length(4)];
    let each = (area.width.saturating_sub(8) / (t.header.len().max(2) as u16 - 1)).clamp(6, 22);
    w.extend((1..t.header.len()).map(|_| Constraint::Length(each)));
    let widget = Table::new(rows, w)
        .header(header)
        .block(Block::bordered().title(format!("{}  (* flip, ! significant flip)", t.title)));
    f.render_widget(widget, area);
}

fn bounds(points: impl Iterator<Item = (f64, f64)>) -> ([f64; 2], [f64; 2]) {
    let mut x = [f64::INFINITY, f64::NEG_INFINITY];
    let mut y = [f64::INFINITY, f64::NEG_INFINITY];
    for (a, b) in points {
        x = [x[0].min(a), x[1].max(a)];
        y = [y[0].min(b), y[1].max(b)];
    }
    if !x[0].is_finite() {
        return ([0.0, 1.0], [0.0, 1.0]);
    }
    if x[1] <= x[0] {
        x[1] = x[0] + 1.0;
    }
    if y[1] <= y[0] {
        y[1] = y[0] + 1.0;
    }
    (x, y)
}

fn axis_labels(b: [f64; 2], fmt: impl Fn(f64) -> String) -> Vec<Line<'static>> {
    vec![
        Line::from(fmt(b[0])),
        Line::from(fmt((b[0] + b[1]) / 2.0)),
        Line::from(fmt(b[1])),
    ]
}

fn chart(f: &mut Frame, area: Rect, spec: ChartSpec, series: Vec<Series>, theme: &Theme) {
    let ChartSpec {
        title,
        x_name,
        y_name,
        y01,
    } = spec;
    let all = series.iter().flat_map(|s| s.1.iter().copied());
    let (xb, mut yb) = bounds(all);
    if y01 {
        yb = [0.0, 1.0];
    }
    let datasets: Vec<Dataset> = series
        .iter()
        .enumerate()
        .map(|(i, (name, pts, g))| {
            Dataset::default()
                .name(name.clone())
                .marker(Marker::Braille)
                .graph_type(*g)
                .style(theme.series(i))
                .data(pts)
        })
        .collect();
    let yfmt = move |v: f64| {
        if y01 {
            format!("{:.0}%", 100.0 * v)
        } else {
            format!("{v:.3}")
        }
    };
    let c = Chart::new(datasets)
        .block(Block::bordered().title(title))
        .x_axis(
            Axis::default()
                .title(x_name.to_string())
                .bounds(xb)
                .labels(axis_labels(xb, |v| format!("{v:.0}"))),
        )
        .y_axis(
            Axis::default()
                .title(y_name.to_string())
                .bounds(yb)
                .labels(axis_labels(yb, yfmt)),
        );
    f.render_widget(c, area);
}

fn pass_chart(f: &mut Frame, area: Rect, d: &Loaded, app: &App, theme: &Theme) {
    let a = &d.audit;
    let (bench, pair) = views::current(a, &app.sel);
    let bench = bench.unwrap_or_default();
    let k = a.pass.ks.get(app.sel.k).copied().unwrap_or(1);
    let runs: Vec<String> = match pair {
        Some(p) => vec![p.base, p.rl],
        None => a
            .pass
            .curve
            .iter()
            .filter(|c| c.benchmark == bench)
            .map(|c| c.run.clone())
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect(),
    };
    let mut series: Vec<Series> = runs
        .iter()
        .map(|r| {
            let pts = a
                .pass
                .curve
                .iter()
                .filter(|c| c.benchmark == bench && &c.run == r && c.k == k)
                .filter_map(|c| c.value.map(|v| (c.t as f64, v)))
                .collect();
            (r.clone(), pts, GraphType::Line)
        })
        .collect();
    let max_b = a
        .agg
        .tasks
        .iter()
        .filter(|(key, _)| d.set.name(key.0) == bench)
        .map(|(_, i)| i.full_budget)
        .max()
        .unwrap_or(1);
    let ub: Vec<(f64, f64)> = a
        .pass
        .upper
        .iter()
        .filter(|u| u.benchmark == bench)
        .map(|u| ((u.level as f64 / 100.0 * max_b as f64).ceil(), u.value))
        .collect();
    series.push(("U(T)".into(), ub, GraphType::Scatter));
    chart(
        f,
        area,
        ChartSpec {
            title: format!("Pass@({k},T) vs T, truncated full-budget rollouts (K: +/-)"),
            x_name: "T (turns)",
            y_name: "Pass",
            y01: true,
        },
        series,
        theme,
    );
}

fn cost_chart(f: &mut Frame, area: Rect, d: &Loaded, app: &App, theme: &Theme) {
    let a = &d.audit;
    let (bench, _) = views::current(a, &app.sel);
    let bench = bench.unwrap_or_default();
    let runs: std::collections::BTreeSet<&String> = a
        .cost_frontier
        .iter()
        .filter(|p| p.benchmark == bench)
        .map(|p| &p.run)
        .collect();
    let mut series = Vec::new();
    for r in runs {
        let mut front: Vec<(f64, f64)> = a
            .cost_frontier
            .iter()
            .filter(|p| p.benchmark == bench && &p.run == r && p.on_frontier)
            .map(|p| (p.cost, p.pass))
            .collect();
        front.sort_by(|x, y| x.0.total_cmp(&y.0));
        let all: Vec<(f64, f64)> = a
            .cost_frontier
            .iter()
            .filter(|p| p.benchmark == bench && &p.run == r)
            .map(|p| (p.cost, p.pass))
            .collect();
        series.push((format!("{r} frontier"), front, GraphType::Line));
        series.push((format!("{r} cells"), all, GraphType::Scatter));
    }
    let stops = views::cost_stops(a, &bench);
    if let Some(&c) = stops.get(app.ceiling.min(stops.len().saturating_sub(1))) {
        series.push(("ceiling".into(), vec![(c, 0.0), (c, 1.0)], GraphType::Line));
    }
    chart(
        f,
        area,
        ChartSpec {
            title: format!("{bench}: Pass@(K,T) vs expected cost per task"),
            x_name: "cost",
            y_name: "Pass",
            y01: true,
        },
        series,
        theme,
    );
}

fn nll_chart(f: &mut Frame, area: Rect, d: &Loaded, app: &App, theme: &Theme) {
    let a = &d.audit;
    let Some(l) = a
        .likelihood
        .get(app.row().min(a.likelihood.len().saturating_sub(1)))
    else {
        lines_box(
            f,
            area,
            "step NLL",
            vec!["no likelihood data: needs steps[].logp for both runs of a pair".into()],
        );
        return;
    };
    let (h, what, x_name) = if app.llr_view {
        (
            &l.llr_histogram,
            "trajectory LLR log π_RL − log π_base",
            "nats",
        )
    } else {
        (
            &l.histogram,
            "per-step NLL under base",
            "−log π_base(action)",
        )
    };
    let Some(h) = h else { return };
    let [base, rl] = h.shares();
    let series = vec![
        (format!("{} (n={})", l.base, h.n(0)), base, GraphType::Line),
        (format!("{} (n={})", l.rl, h.n(1)), rl, GraphType::Line),
    ];
    chart(
        f,
        area,
        ChartSpec {
            title: format!(
                "{}: {what}, share per bin (overlap of step NLL {}; m toggles NLL/LLR)",
                l.benchmark,
                l.overlap.map_or("–".into(), |o| format!("{o:.3}"))
            ),
            x_name,
            y_name: "share",
            y01: false,
        },
        series,
        theme,
    );
}

fn interval_line(f: &mut Frame, area: Rect, d: &Loaded, app: &App) {
    let a = &d.audit;
    let Some(l) = a
        .likelihood
        .get(app.row().min(a.likelihood.len().saturating_sub(1)))
    else {
        return;
    };
    let text = match l.length_matched.mean_diff {
        Some(e) => match e.ci.bounds() {
            Some((lo, hi)) => {
                let span = (hi.max(0.0) - lo.min(0.0)).max(1e-9);
                let w = area.width.saturating_sub(30).max(10) as f64;
                let pos = |x: f64| ((x - lo.min(0.0)) / span * w) as usize;
                let mut bar: Vec<char> = vec![' '; w as usize + 1];
                for c in bar
                    .iter_mut()
                    .take(pos(hi).min(w as usize) + 1)
                    .skip(pos(lo))
                {
                    *c = '─';
                }
                bar[pos(0.0).min(w as usize)] = '0';
                bar[pos(e.value).min(w as usize)] = '●';
                format!(
                    "d {:.2} [{lo:.2}, {hi:.2}] {}",
                    e.value,
                    bar.into_iter().collect::<String>()
                )
            }
            None => format!("d {:.2} (no interval)", e.value),
        },
        None => "no length-matched pairs".into(),
    };
    lines_box(
        f,
        area,
        &format!(
            "length-matched LLR difference ({} pairs, {} tasks)",
            l.length_matched.pairs, l.length_matched.tasks
        ),
        vec![text],
    );
}

fn metric_chart(f: &mut Frame, area: Rect, d: &Loaded, app: &App, theme: &Theme) {
    let a = &d.audit;
    let Some(sel) = a
        .dynamics
        .get(app.row().min(a.dynamics.len().saturating_sub(1)))
    else {
        lines_box(f, area, "training", vec!["no checkpoint records".into()]);
        return;
    };
    let series = a
        .dynamics
        .iter()
        .filter(|t| t.metric == sel.metric)
        .map(|t| (t.run.clone(), t.points.clone(), GraphType::Line))
        .collect();
    chart(
        f,
        area,
        ChartSpec {
            title: format!("{} against step (↑↓ picks the metric)", sel.metric),
            x_name: "step",
            y_name: &sel.metric,
            y01: false,
        },
        series,
        theme,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_cells_use_the_width_there_is() {
        let mut t = TableData::new("t", "t", &["what", "detail"]);
        t.push(
            vec!["x".into(), "d".repeat(100)],
            views::Mark::None,
            views::Target::None,
        );
        // 160 columns: borders and gaps take 3 + 2; both columns fit whole.
        assert_eq!(
            widths(&t, 160),
            vec![Constraint::Length(4), Constraint::Length(100)]
        );
        // 80 columns: the detail gets what is left.
        assert_eq!(
            widths(&t, 80),
            vec![Constraint::Length(4), Constraint::Length(71)]
        );
    }
}
