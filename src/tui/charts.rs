//! Charts: Pass vs T with its upper bound, cost frontier, likelihood
//! histograms, the length-matched interval, checkpoint metrics.

use ratatui::layout::Rect;
use ratatui::symbols::Marker;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Axis, Block, Chart, Dataset, GraphType};
use ratatui::Frame;

use super::app::App;
use super::select::current;
use super::theme::Theme;
use super::views::cost;
use super::widgets::{lines_box, title_lines, with_lines_inside};
use crate::jobs::Loaded;

/// One line or set of dots on a chart: its entry in the legend (`None`:
/// none, e.g. the cells beside a run's frontier, drawn in its colour), its
/// points, how they are drawn, and its colour (an index into the theme's).
struct Series {
    name: Option<String>,
    points: Vec<(f64, f64)>,
    graph: GraphType,
    colour: usize,
}

impl Series {
    /// A line of its own colour, in the legend.
    fn line(name: String, points: Vec<(f64, f64)>, colour: usize) -> Self {
        Series {
            name: Some(name),
            points,
            graph: GraphType::Line,
            colour,
        }
    }
}

/// How series `colour` is drawn: braille in its colour, or without colour
/// (NO_COLOR) a marker of its own, so that the legend still tells them
/// apart. With the legend's sample of it.
fn marker(colour: usize, theme: &Theme) -> (Marker, &'static str) {
    if !theme.no_color {
        return (Marker::Braille, "━━");
    }
    [
        (Marker::Braille, "⣿"),
        (Marker::Dot, "•"),
        (Marker::Bar, "▄"),
        (Marker::Block, "█"),
    ][colour % 4]
}

/// The legend, on the chart's bottom border: every series with a name, in
/// its colour. (ratatui's own legend box hides itself once it would take
/// more than a quarter of the chart: three runs and a bound on a 40-line
/// screen.)
fn legend(series: &[Series], theme: &Theme) -> Line<'static> {
    let mut spans = Vec::new();
    for s in series {
        let Some(name) = &s.name else { continue };
        let (_, sample) = marker(s.colour, theme);
        spans.push(Span::raw(" "));
        spans.push(Span::styled(sample, theme.series(s.colour)));
        spans.push(Span::raw(format!(" {name} ")));
    }
    Line::from(spans)
}

/// What a chart shows besides its data.
struct ChartSpec<'a> {
    title: String,
    x_name: &'a str,
    y_name: &'a str,
    /// y is a share: fixed to [0, 1] and labelled in percent.
    y01: bool,
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
    let all = series.iter().flat_map(|s| s.points.iter().copied());
    let (xb, mut yb) = bounds(all);
    if y01 {
        yb = [0.0, 1.0];
    }
    let datasets: Vec<Dataset> = series
        .iter()
        .map(|s| {
            Dataset::default()
                .marker(marker(s.colour, theme).0)
                .graph_type(s.graph)
                .style(theme.series(s.colour))
                .data(&s.points)
        })
        .collect();
    let yfmt = move |v: f64| {
        if y01 {
            format!("{:.0}%", 100.0 * v)
        } else {
            format!("{v:.3}")
        }
    };
    // The title's words that do not fit the border, on a line inside.
    let inner = usize::from(area.width.saturating_sub(2));
    let (top, inside) = title_lines(&title, inner, inner, 1);
    let block = Block::bordered()
        .title(top)
        .title_bottom(legend(&series, theme));
    let area = with_lines_inside(f, area, block, inside);
    let c = Chart::new(datasets)
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

pub fn pass_chart(f: &mut Frame, area: Rect, d: &Loaded, app: &App, theme: &Theme) {
    let a = &d.audit;
    let (bench, pair) = current(a, &app.sel);
    let bench = bench.unwrap_or_default();
    let k = a.pass.ks.get(app.sel.k).copied().unwrap_or(1);
    let runs: Vec<String> = match pair {
        Some(p) => vec![p.base, p.rl],
        None => a.pass.runs(&bench).iter().map(|r| r.to_string()).collect(),
    };
    let shown = a.pass.curve_flat_tail(&bench).map(|(last, until)| {
        // A quarter past the last change.
        (last + last.div_ceil(4), last, until)
    });
    let cut = |points: Vec<(f64, f64)>| match shown {
        Some((x, _, _)) => cut_at(points, x as f64),
        None => points,
    };
    let mut series: Vec<Series> = runs
        .iter()
        .enumerate()
        .map(|(i, r)| Series::line(r.clone(), cut(a.pass.curve_of(&bench, r, k)), i))
        .collect();
    let computing = a.is_pending(crate::analysis::Part::Pass) && a.pass.curve.is_empty();
    if !computing && series.iter().all(|s| s.points.is_empty()) {
        let why = if a.pass.curve.iter().all(|c| c.benchmark != bench) {
            // An outcome-only dump (verl's generations, say).
            vec![
                "no curve: it cuts full-budget rollouts at each turn t, and these".into(),
                "have unknown turns (no `turns`, no `steps`: see the Overview's notes)".into(),
            ]
        } else {
            vec![format!(
                "no curve at K={k}: no task has {k} rollouts at its full budget (K: +/-)"
            )]
        };
        lines_box(f, area, &format!("Pass@({k},t) vs t"), why);
        return;
    }
    // The bound per absolute t, computed like the curves (upper_bound_curve).
    let colour = series.len();
    series.push(Series::line(
        "U(t)".into(),
        cut(a.pass.upper_curve_of(&bench, false)),
        colour,
    ));
    let x_name = match shown {
        Some((_, last, until)) => format!("t (turns; all flat from {last} to {until})"),
        None => "t (turns)".into(),
    };
    chart(
        f,
        area,
        ChartSpec {
            title: if computing {
                format!("Pass@({k},t) vs t: the curves are computing…; U(t) the bound")
            } else {
                format!(
                    "Pass@({k},t) vs t, {}full-budget rollouts cut at t; U(t) the bound (K: +/-)",
                    // Beside one category's grid, the curves are still the
                    // benchmark's (SPEC §4.3 has no curve by category).
                    if app.sel.category.is_some() {
                        "all tasks' "
                    } else {
                        ""
                    }
                )
            },
            x_name: &x_name,
            y_name: "Pass",
            y01: true,
        },
        series,
        theme,
    );
}

/// A line's points up to x, the line carried flat to x from its last point
/// before (a curve given by its vertices is flat between them).
fn cut_at(mut points: Vec<(f64, f64)>, x: f64) -> Vec<(f64, f64)> {
    points.retain(|p| p.0 <= x);
    if let Some(&(px, y)) = points.last() {
        if px < x {
            points.push((x, y));
        }
    }
    points
}

pub fn cost_chart(f: &mut Frame, area: Rect, d: &Loaded, app: &App, theme: &Theme) {
    let a = &d.audit;
    let (bench, _) = current(a, &app.sel);
    let bench = bench.unwrap_or_default();
    let runs: std::collections::BTreeSet<&String> = a
        .cost_frontier
        .iter()
        .filter(|p| p.benchmark == bench)
        .map(|p| &p.run)
        .collect();
    let mut series = Vec::new();
    for (colour, r) in runs.into_iter().enumerate() {
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
        series.push(Series::line(r.clone(), front, colour));
        series.push(Series {
            name: None,
            points: all,
            graph: GraphType::Scatter,
            colour,
        });
    }
    let stops = cost::stops(a, &bench);
    if let Some(&c) = stops.get(app.ceiling.min(stops.len().saturating_sub(1))) {
        let colour = series.len() / 2;
        series.push(Series::line(
            "ceiling".into(),
            vec![(c, 0.0), (c, 1.0)],
            colour,
        ));
    }
    chart(
        f,
        area,
        ChartSpec {
            title: format!(
                "{bench}: Pass@(K,T) vs expected cost per task — a run's frontier, its cells as dots"
            ),
            x_name: "cost",
            y_name: "Pass",
            y01: true,
        },
        series,
        theme,
    );
}

pub fn nll_chart(f: &mut Frame, area: Rect, d: &Loaded, app: &App, theme: &Theme) {
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
        Series::line(format!("{} (n={})", l.base, h.n(0)), base, 0),
        Series::line(format!("{} (n={})", l.rl, h.n(1)), rl, 1),
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

pub fn interval_line(f: &mut Frame, area: Rect, d: &Loaded, app: &App) {
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
            None if e.ci == crate::analysis::stats::Ci::Pending => {
                format!("d {:.2} […] (its interval computing)", e.value)
            }
            None if crate::report::format::any_provisional([e.ci]) => format!(
                "d {:.2} {} ({}, until all are drawn)",
                e.value,
                crate::report::format::signed_ci_prec(e.ci, 1.0, 2),
                crate::report::format::provisional_note(a.settings.boot.resamples)
            ),
            None => format!("d {:.2} (no interval)", e.value),
        },
        None => "no length-matched pairs".into(),
    };
    // §4.5 in one line: RL's rollouts, the step LLR at the first and last
    // turns — the pair's rows once in, their intervals maybe still to come
    // (the Likelihood panel on screen: a pair at a time).
    let l_key = (&*l.benchmark, &*l.base, &*l.rl);
    let turns: Vec<_> = a
        .llr_by_turn
        .iter()
        .filter(|t| t.key() == l_key && t.run == l.rl)
        .collect();
    let drawing = turns.iter().any(|t| {
        use crate::analysis::stats::Ci;
        matches!(t.ci, Ci::Pending | Ci::Provisional(..))
    });
    let by_turn = match (turns.first(), turns.last()) {
        _ if !a.llr_in(l_key) => "by turn: computing…".into(),
        (Some(f0), Some(f1)) => format!(
            "by turn ({}'s rollouts): turn {} {:+.2} (n={}) … turn {} {:+.2} (n={}) — Enter: every turn{}",
            l.rl,
            f0.turn,
            f0.mean,
            f0.steps,
            f1.turn,
            f1.mean,
            f1.steps,
            if drawing { " (intervals […])" } else { "" }
        ),
        _ => "by turn: no steps with both log-probabilities".into(),
    };
    lines_box(
        f,
        area,
        &format!(
            "length-matched LLR difference ({} pairs, {} tasks)",
            l.length_matched.pairs, l.length_matched.tasks
        ),
        vec![text, by_turn],
    );
}

pub fn metric_chart(f: &mut Frame, area: Rect, d: &Loaded, app: &App, theme: &Theme) {
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
        .enumerate()
        .map(|(i, t)| Series::line(t.run.clone(), t.points.clone(), i))
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
