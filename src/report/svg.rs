//! A small, dependency-free SVG plotter for the headless figures: line
//! charts (with whiskers), grouped bars with intervals, and heatmaps. Text
//! uses a generic font family, so the bytes never depend on the machine.

use std::fmt::Write;

const W: f64 = 720.0;
const H: f64 = 420.0;
const L: f64 = 70.0; // left margin
const R: f64 = 210.0; // right margin (legend)
const T: f64 = 40.0;
const B: f64 = 55.0;
const PALETTE: [&str; 8] = [
    "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf",
];

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn head(title: &str, w: f64, h: f64) -> String {
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="12">
<rect width="{w}" height="{h}" fill="white"/>
<text x="{}" y="22" text-anchor="middle" font-size="15" font-weight="bold">{}</text>
"#,
        w / 2.0,
        esc(title)
    );
    s
}

/// Maps data to pixels inside the plot area; x on a log scale when
/// `log_x`.
struct Frame {
    x0: f64,
    x1: f64,
    y0: f64,
    y1: f64,
    log_x: bool,
}

impl Frame {
    fn new(xs: [f64; 2], ys: [f64; 2]) -> Frame {
        let (mut x0, mut x1, mut y0, mut y1) = (xs[0], xs[1], ys[0], ys[1]);
        if x1.partial_cmp(&x0) != Some(std::cmp::Ordering::Greater) {
            x0 -= 0.5;
            x1 += 0.5;
        }
        if y1.partial_cmp(&y0) != Some(std::cmp::Ordering::Greater) {
            y0 -= 0.5;
            y1 += 0.5;
        }
        Frame {
            x0,
            x1,
            y0,
            y1,
            log_x: false,
        }
    }

    /// x from 1 on a log scale (where the data allow: x ≥ 1 throughout).
    fn with_log_x(self, log: bool) -> Frame {
        let log_x = log && self.x0 >= 1.0 && self.x1 > self.x0;
        Frame { log_x, ..self }
    }

    fn px(&self, x: f64) -> f64 {
        let at = match self.log_x {
            true => (x.ln() - self.x0.ln()) / (self.x1.ln() - self.x0.ln()),
            false => (x - self.x0) / (self.x1 - self.x0),
        };
        L + at * (W - L - R)
    }

    /// The x ticks: five evenly spaced, or on a log scale each power of
    /// ten in reach and the last x.
    fn x_ticks(&self) -> Vec<f64> {
        if !self.log_x {
            return (0..=4)
                .map(|i| self.x0 + (self.x1 - self.x0) * i as f64 / 4.0)
                .collect();
        }
        let mut ticks: Vec<f64> = (0..)
            .map(|e| 10f64.powi(e))
            .take_while(|&t| t <= self.x1)
            .filter(|&t| t >= self.x0)
            .collect();
        // The last x, unless a power of ten sits too near to read apart.
        if ticks
            .last()
            .is_none_or(|&t| self.px(self.x1) - self.px(t) > 40.0)
        {
            ticks.push(self.x1);
        }
        ticks
    }
    fn py(&self, y: f64) -> f64 {
        H - B - (y - self.y0) / (self.y1 - self.y0) * (H - T - B)
    }
}

fn fmt_tick(v: f64, pct: bool) -> String {
    if pct {
        format!("{:.0}%", 100.0 * v)
    } else if v.abs() >= 1000.0 || v == v.round() {
        format!("{v:.0}")
    } else if v.abs() >= 1.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// A bar chart's light horizontal grid with its y ticks.
fn bar_grid(s: &mut String, f: &Frame, y_pct: bool) {
    for i in 0..=4 {
        let yv = f.y0 + (f.y1 - f.y0) * i as f64 / 4.0;
        let _ = writeln!(
            s,
            r##"<line x1="{L}" y1="{y:.1}" x2="{}" y2="{y:.1}" stroke="#eee"/><text x="{}" y="{:.1}" text-anchor="end">{}</text>"##,
            W - R,
            L - 6.0,
            f.py(yv) + 4.0,
            fmt_tick(yv, y_pct),
            y = f.py(yv)
        );
    }
}

fn axes(s: &mut String, f: &Frame, x_label: &str, y_label: &str, y_pct: bool) {
    let _ = writeln!(
        s,
        r##"<line x1="{L}" y1="{}" x2="{}" y2="{}" stroke="#333"/><line x1="{L}" y1="{T}" x2="{L}" y2="{}" stroke="#333"/>"##,
        H - B,
        W - R,
        H - B,
        H - B
    );
    // A y tick, then an x tick, in turn.
    let x_ticks = f.x_ticks();
    for i in 0..x_ticks.len().max(5) {
        if i <= 4 {
            let yv = f.y0 + (f.y1 - f.y0) * i as f64 / 4.0;
            let y = f.py(yv);
            let _ = writeln!(
                s,
                r##"<line x1="{L}" y1="{y:.1}" x2="{}" y2="{y:.1}" stroke="#ddd"/><text x="{}" y="{:.1}" text-anchor="end">{}</text>"##,
                W - R,
                L - 6.0,
                y + 4.0,
                fmt_tick(yv, y_pct)
            );
        }
        let Some(&xv) = x_ticks.get(i) else { continue };
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{}" text-anchor="middle">{}</text>"#,
            f.px(xv),
            H - B + 18.0,
            fmt_tick(if f.x1 - f.x0 >= 8.0 { xv.round() } else { xv }, false)
        );
    }
    axis_titles(s, x_label, y_label);
}

/// The x title under the plot and the y title turned along the left edge.
fn axis_titles(s: &mut String, x_label: &str, y_label: &str) {
    let _ = writeln!(
        s,
        r#"<text x="{:.1}" y="{}" text-anchor="middle">{}</text><text x="18" y="{:.1}" text-anchor="middle" transform="rotate(-90 18 {:.1})">{}</text>"#,
        (L + W - R) / 2.0,
        H - 12.0,
        esc(x_label),
        (T + H - B) / 2.0,
        (T + H - B) / 2.0,
        esc(y_label)
    );
}

fn legend(s: &mut String, names: &[String]) {
    for (i, n) in names.iter().enumerate() {
        let y = T + 10.0 + 18.0 * i as f64;
        let _ = writeln!(
            s,
            r#"<rect x="{}" y="{:.1}" width="12" height="12" fill="{}"/><text x="{}" y="{:.1}" font-size="11">{}</text>"#,
            W - R + 12.0,
            y - 10.0,
            PALETTE[i % PALETTE.len()],
            W - R + 30.0,
            y,
            esc(n)
        );
    }
}

/// One line series with optional whiskers (x, lo, hi) and markers.
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
    pub whiskers: Vec<(f64, f64, f64)>,
    pub dashed: bool,
    /// How many points the line stands for, where more than it holds (a
    /// curve given by its vertices): a dot marks each point of a series
    /// of at most [`MARKED_UP_TO`].
    pub stands_for: Option<usize>,
}

/// The most points a series may have for a dot to mark each.
pub const MARKED_UP_TO: usize = 60;

fn extent(it: impl Iterator<Item = f64>) -> [f64; 2] {
    it.filter(|x| x.is_finite())
        .fold([f64::INFINITY, f64::NEG_INFINITY], |a, x| {
            [a[0].min(x), a[1].max(x)]
        })
}

pub fn line_chart(
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[Series],
    y_pct: bool,
) -> String {
    line_chart_scaled(title, x_label, y_label, series, y_pct, false)
}

/// [`line_chart`] with x on a log scale when `log_x` (and every x ≥ 1).
pub fn line_chart_scaled(
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[Series],
    y_pct: bool,
    log_x: bool,
) -> String {
    let xs = extent(series.iter().flat_map(|s| s.points.iter().map(|p| p.0)));
    let mut ys = extent(series.iter().flat_map(|s| {
        s.points
            .iter()
            .map(|p| p.1)
            .chain(s.whiskers.iter().flat_map(|w| [w.1, w.2]))
    }));
    if y_pct {
        ys = [0.0, 1.0];
    }
    if !xs[0].is_finite() {
        return empty(title);
    }
    let f = Frame::new(xs, ys).with_log_x(log_x);
    let mut s = head(title, W, H);
    axes(&mut s, &f, x_label, y_label, y_pct);
    for (i, se) in series.iter().enumerate() {
        let c = PALETTE[i % PALETTE.len()];
        let pts: Vec<String> = se
            .points
            .iter()
            .map(|(x, y)| format!("{:.1},{:.1}", f.px(*x), f.py(*y)))
            .collect();
        let dash = if se.dashed {
            r#" stroke-dasharray="6 4""#
        } else {
            ""
        };
        if pts.len() > 1 {
            let _ = writeln!(
                s,
                r#"<polyline fill="none" stroke="{c}" stroke-width="2"{dash} points="{}"/>"#,
                pts.join(" ")
            );
        }
        if se.stands_for.unwrap_or(pts.len()) <= MARKED_UP_TO {
            for (x, y) in &se.points {
                let _ = writeln!(
                    s,
                    r#"<circle cx="{:.1}" cy="{:.1}" r="3" fill="{c}"/>"#,
                    f.px(*x),
                    f.py(*y)
                );
            }
        }
        for (x, lo, hi) in &se.whiskers {
            let px = f.px(*x);
            let _ = writeln!(
                s,
                r#"<line x1="{px:.1}" y1="{:.1}" x2="{px:.1}" y2="{:.1}" stroke="{c}" stroke-width="1.5"/><line x1="{:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="{c}"/><line x1="{:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="{c}"/>"#,
                f.py(*lo),
                f.py(*hi),
                px - 4.0,
                f.py(*lo),
                px + 4.0,
                f.py(*lo),
                px - 4.0,
                f.py(*hi),
                px + 4.0,
                f.py(*hi)
            );
        }
    }
    legend(
        &mut s,
        &series.iter().map(|x| x.name.clone()).collect::<Vec<_>>(),
    );
    s.push_str("</svg>\n");
    s
}

/// Grouped bars: categories on x, one bar per group, optional intervals.
pub struct BarGroup {
    pub name: String,
    /// Per category: the bar's value and its interval, if any.
    pub values: Vec<Option<Bar>>,
}

pub type Bar = (f64, Option<(f64, f64)>);

pub fn bar_chart(
    title: &str,
    x_label: &str,
    y_label: &str,
    categories: &[String],
    groups: &[BarGroup],
    y_pct: bool,
) -> String {
    if categories.is_empty() || groups.is_empty() {
        return empty(title);
    }
    let vals = groups.iter().flat_map(|g| {
        g.values.iter().flatten().flat_map(|(v, ci)| {
            let mut x = vec![*v];
            if let Some((l, h)) = ci {
                x.extend([*l, *h]);
            }
            x
        })
    });
    let mut ys = extent(vals.chain([0.0]));
    if y_pct {
        ys = [ys[0].min(0.0), ys[1].max(1.0)];
    }
    let f = Frame::new([0.0, categories.len() as f64], ys);
    let mut s = head(title, W, H);
    // y axis only; categories label the x axis.
    let _ = writeln!(
        s,
        r##"<line x1="{L}" y1="{:.1}" x2="{}" y2="{:.1}" stroke="#333"/><line x1="{L}" y1="{T}" x2="{L}" y2="{}" stroke="#333"/>"##,
        f.py(0.0),
        W - R,
        f.py(0.0),
        H - B
    );
    bar_grid(&mut s, &f, y_pct);
    let slot = (W - L - R) / categories.len() as f64;
    let bw = slot * 0.8 / groups.len() as f64;
    for (ci, cat) in categories.iter().enumerate() {
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{}" text-anchor="middle">{}</text>"#,
            L + slot * (ci as f64 + 0.5),
            H - B + 18.0,
            esc(cat)
        );
        for (gi, g) in groups.iter().enumerate() {
            let Some(Some((v, interval))) = g.values.get(ci) else {
                continue;
            };
            let x = L + slot * ci as f64 + slot * 0.1 + bw * gi as f64;
            let (y_top, y_bot) = (f.py(v.max(0.0)), f.py(v.min(0.0)));
            let _ = writeln!(
                s,
                r#"<rect x="{x:.1}" y="{y_top:.1}" width="{bw:.1}" height="{:.1}" fill="{}"/>"#,
                (y_bot - y_top).max(0.5),
                PALETTE[gi % PALETTE.len()]
            );
            if let Some((lo, hi)) = interval {
                let cx = x + bw / 2.0;
                let _ = writeln!(
                    s,
                    r##"<line x1="{cx:.1}" y1="{:.1}" x2="{cx:.1}" y2="{:.1}" stroke="#000"/>"##,
                    f.py(*lo),
                    f.py(*hi)
                );
            }
        }
    }
    axis_titles(&mut s, x_label, y_label);
    legend(
        &mut s,
        &groups.iter().map(|g| g.name.clone()).collect::<Vec<_>>(),
    );
    s.push_str("</svg>\n");
    s
}

/// Stacked bars: one bar per (label), each a stack of shares (in
/// `segments` order) summing to at most 1; bars grouped under `categories`.
pub struct Stack {
    pub category: usize,
    pub label: String,
    pub shares: Vec<f64>,
}

pub fn stacked_bars(
    title: &str,
    y_label: &str,
    categories: &[String],
    segments: &[String],
    bars: &[Stack],
) -> String {
    if categories.is_empty() || bars.is_empty() {
        return empty(title);
    }
    let f = Frame::new([0.0, categories.len() as f64], [0.0, 1.0]);
    let mut s = head(title, W, H);
    bar_grid(&mut s, &f, true);
    let slot = (W - L - R) / categories.len() as f64;
    for (ci, cat) in categories.iter().enumerate() {
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{}" text-anchor="middle">{}</text>"#,
            L + slot * (ci as f64 + 0.5),
            H - B + 32.0,
            esc(cat)
        );
        let in_cat: Vec<&Stack> = bars.iter().filter(|b| b.category == ci).collect();
        let bw = slot * 0.8 / in_cat.len().max(1) as f64;
        for (bi, b) in in_cat.iter().enumerate() {
            let x = L + slot * ci as f64 + slot * 0.1 + bw * bi as f64;
            let mut acc = 0.0;
            for (si, sh) in b.shares.iter().enumerate() {
                let (top, bot) = (f.py(acc + sh), f.py(acc));
                let _ = writeln!(
                    s,
                    r##"<rect x="{x:.1}" y="{top:.1}" width="{:.1}" height="{:.1}" fill="{}" stroke="#fff" stroke-width="0.5"/>"##,
                    bw * 0.92,
                    (bot - top).max(0.0),
                    PALETTE[si % PALETTE.len()]
                );
                acc += sh;
            }
            let _ = writeln!(
                s,
                r#"<text x="{:.1}" y="{}" text-anchor="middle" font-size="9">{}</text>"#,
                x + bw * 0.46,
                H - B + 14.0,
                esc(&b.label)
            );
        }
    }
    axis_titles(&mut s, "", y_label);
    legend(&mut s, segments);
    s.push_str("</svg>\n");
    s
}

/// A heatmap cell: value for the colour, its text, and whether to mark it.
pub struct HeatCell {
    pub value: f64,
    pub text: String,
    pub marked: bool,
}

/// Rows × columns; `diverging` colours negative red and positive blue around 0.
pub fn heatmap(
    title: &str,
    rows: &[String],
    cols: &[String],
    cells: &[Vec<Option<HeatCell>>],
    diverging: bool,
    note: &str,
) -> String {
    let cw = 110.0;
    let ch = 34.0;
    let w = 90.0 + cw * cols.len() as f64 + 20.0;
    let h = 70.0 + ch * rows.len() as f64 + 40.0;
    let mut s = head(title, w.max(360.0), h);
    let max_abs = cells
        .iter()
        .flatten()
        .flatten()
        .map(|c| c.value.abs())
        .fold(1e-9, f64::max);
    for (j, c) in cols.iter().enumerate() {
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="56" text-anchor="middle" font-weight="bold">{}</text>"#,
            90.0 + cw * (j as f64 + 0.5),
            esc(c)
        );
    }
    for (i, r) in rows.iter().enumerate() {
        let y = 66.0 + ch * i as f64;
        let _ = writeln!(
            s,
            r#"<text x="80" y="{:.1}" text-anchor="end" font-weight="bold">{}</text>"#,
            y + ch / 2.0 + 4.0,
            esc(r)
        );
        for (j, cell) in cells
            .get(i)
            .map(|r| r.as_slice())
            .unwrap_or(&[])
            .iter()
            .enumerate()
        {
            let x = 90.0 + cw * j as f64;
            let (fill, text, marked) = match cell {
                Some(c) => {
                    let fill = if diverging {
                        let t = (c.value / max_abs).clamp(-1.0, 1.0);
                        if t < 0.0 {
                            format!("rgb(255,{0},{0})", (255.0 * (1.0 + t * 0.7)) as u8)
                        } else {
                            format!("rgb({0},{0},255)", (255.0 * (1.0 - t * 0.7)) as u8)
                        }
                    } else {
                        let t = c.value.clamp(0.0, 1.0);
                        let g = (255.0 - 150.0 * t) as u8;
                        format!("rgb({g},{},255)", (255.0 - 60.0 * t) as u8)
                    };
                    (fill, c.text.clone(), c.marked)
                }
                None => ("#f4f4f4".to_string(), "–".to_string(), false),
            };
            let stroke = if marked {
                r##" stroke="#b00" stroke-width="3""##
            } else {
                r##" stroke="#fff""##
            };
            let _ = writeln!(
                s,
                r#"<rect x="{x:.1}" y="{y:.1}" width="{cw}" height="{ch}" fill="{fill}"{stroke}/><text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
                x + cw / 2.0,
                y + ch / 2.0 + 4.0,
                esc(&text)
            );
        }
    }
    let _ = writeln!(
        s,
        r#"<text x="10" y="{:.1}" font-size="11">{}</text>"#,
        h - 14.0,
        esc(note)
    );
    s.push_str("</svg>\n");
    s
}

fn empty(title: &str) -> String {
    let mut s = head(title, 480.0, 120.0);
    s.push_str("<text x=\"240\" y=\"70\" text-anchor=\"middle\">no data</text>\n</svg>\n");
    s
}
