//! The headless report's figures, one SVG each, grouped by report section.

use std::collections::BTreeSet;

use super::svg::{
    bar_chart, heatmap, line_chart, line_chart_scaled, BarGroup, HeatCell, Series, MARKED_UP_TO,
};
use crate::analysis::passkt::Mode;
use crate::analysis::stats::Ci;
use crate::analysis::Audit;

mod pass;
mod steps;

use pass::*;
use steps::*;

pub struct Figure {
    /// Report section: pass, advantage, cost, matched, recovery, likelihood, dynamics, budgetmix.
    pub section: &'static str,
    pub file: String,
    pub caption: String,
    pub svg: String,
}

/// A file-name-safe version of a name.
pub fn slug(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// `<prefix>_<benchmark>_<base>_<rl>.svg`.
fn pair_file(prefix: &str, bench: &str, base: &str, rl: &str) -> String {
    format!("{prefix}_{}_{}_{}.svg", slug(bench), slug(base), slug(rl))
}

fn ci_bounds(ci: Ci) -> Option<(f64, f64)> {
    ci.bounds()
}

/// A K × level heatmap: one cell per (K, level), absent where `cell` is None.
fn grid(
    ks: &[u64],
    levels: &[u32],
    cell: impl Fn(u64, u32) -> Option<HeatCell>,
) -> Vec<Vec<Option<HeatCell>>> {
    ks.iter()
        .map(|&k| levels.iter().map(|&l| cell(k, l)).collect())
        .collect()
}

pub fn all(a: &Audit) -> Vec<Figure> {
    let mut out = Vec::new();
    pass_figures(a, &mut out);
    cost_figures(a, &mut out);
    matched_figures(a, &mut out);
    likelihood_figures(a, &mut out);
    dynamics_figures(a, &mut out);
    budgetmix_figures(a, &mut out);
    failure_figures(a, &mut out);
    llr_turn_figures(a, &mut out);
    natural_figures(a, &mut out);
    unique_files(&mut out);
    out
}

/// Names that differ only in characters [`slug`] replaces (`Qwen/Qwen3-4B`
/// and `Qwen_Qwen3-4B`) would share a file, the later figure replacing the
/// earlier: each file name after the first is numbered (`…-2.svg`).
fn unique_files(figs: &mut [Figure]) {
    let mut taken: BTreeSet<String> = BTreeSet::new();
    for f in figs {
        let stem = f.file.strip_suffix(".svg").unwrap_or(&f.file).to_string();
        let mut name = f.file.clone();
        let mut n = 1;
        while !taken.insert(name.clone()) {
            n += 1;
            name = format!("{stem}-{n}.svg");
        }
        f.file = name;
    }
}

/// Failure anatomy (§4.4): per benchmark, a stacked bar per run and level
/// (its preferred mode) of solved / budget / wrong / error / invalid / other.
fn failure_figures(a: &Audit, out: &mut Vec<Figure>) {
    use crate::analysis::failures::{row, CAUSES};
    use std::collections::BTreeSet;
    let benches: BTreeSet<&str> = a.failures.iter().map(|f| f.benchmark.as_str()).collect();
    for b in benches {
        let runs: BTreeSet<&str> = a
            .failures
            .iter()
            .filter(|f| f.benchmark == b)
            .map(|f| f.run.as_str())
            .collect();
        let levels = &a.settings.levels;
        let mut bars = Vec::new();
        for (li, &l) in levels.iter().enumerate() {
            for r in &runs {
                let f = row(&a.failures, b, r, l, Mode::Native)
                    .or_else(|| row(&a.failures, b, r, l, Mode::Truncated));
                let Some(f) = f else { continue };
                let n = f.counts.rollouts.max(1) as f64;
                let mut shares = vec![f.counts.solved as f64 / n];
                shares.extend(f.counts.causes.iter().map(|&c| c as f64 / n));
                bars.push(crate::report::svg::Stack {
                    category: li,
                    label: r.to_string(),
                    shares,
                });
            }
        }
        let mut segments = vec!["solved".to_string()];
        segments.extend(CAUSES.iter().map(|c| c.name().to_string()));
        let cats: Vec<String> = levels.iter().map(|l| format!("{l}%")).collect();
        out.push(Figure {
            section: "failures",
            file: format!("failures_{}.svg", slug(b)),
            caption: format!("Why rollouts fail on {b}: share of each cell's rollouts solved within T or failed by each cause, per level (preferred mode) and run"),
            svg: crate::report::svg::stacked_bars(&format!("{b}: why rollouts fail"), "share of rollouts", &cats, &segments, &bars),
        });
    }
}

fn dynamics_figures(a: &Audit, out: &mut Vec<Figure>) {
    let metrics: BTreeSet<&String> = a.dynamics.iter().map(|d| &d.metric).collect();
    for m in metrics {
        let series: Vec<Series> = a
            .dynamics
            .iter()
            .filter(|d| &d.metric == m)
            .map(|d| Series {
                name: d.run.clone(),
                points: d.points.clone(),
                whiskers: Vec::new(),
                dashed: false,
                stands_for: None,
            })
            .collect();
        out.push(Figure {
            section: "dynamics",
            file: format!("training_{}.svg", slug(m)),
            caption: format!("{m} against training step"),
            svg: line_chart(&format!("{m} during training"), "step", m, &series, false),
        });
    }
}

fn budgetmix_figures(a: &Audit, out: &mut Vec<Figure>) {
    for b in a.budgetmix.iter().filter(|b| !b.gains.is_empty()) {
        let benches: BTreeSet<&String> = b.gains.iter().map(|g| &g.benchmark).collect();
        let cats: Vec<String> = a.settings.levels.iter().map(|l| format!("{l}%")).collect();
        let mut groups: Vec<BarGroup> = benches
            .iter()
            .map(|bench| BarGroup {
                name: bench.to_string(),
                values: a
                    .settings
                    .levels
                    .iter()
                    .map(|l| {
                        b.gains
                            .iter()
                            .find(|g| &g.benchmark == *bench && g.level == *l)
                            .map(|g| (100.0 * g.gain, None))
                    })
                    .collect(),
            })
            .collect();
        groups.push(BarGroup {
            name: "mean".into(),
            values: a
                .settings
                .levels
                .iter()
                .map(|l| {
                    b.mean_gain
                        .iter()
                        .find(|x| x.0 == *l)
                        .map(|x| (100.0 * x.1, None))
                })
                .collect(),
        });
        out.push(Figure {
            section: "budgetmix",
            file: format!("budgetmix_gain_{}.svg", slug(&b.run)),
            caption: format!(
                "Pass@(1,T) gain of {} over the full-budget RL run, points",
                b.run
            ),
            svg: bar_chart(
                &format!("{}: gain over full-budget RL", b.run),
                "budget level",
                "points",
                &cats,
                &groups,
                false,
            ),
        });
    }
}
