//! The headless report's figures, one SVG each, grouped by report section.

use std::collections::BTreeSet;

use super::svg::{
    bar_chart, heatmap, line_chart, line_chart_scaled, BarGroup, HeatCell, Series, MARKED_UP_TO,
};
use crate::analysis::passkt::Mode;
use crate::analysis::stats::Ci;
use crate::analysis::Audit;

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

/// §4.6: per benchmark, the share of error events followed by a clean step,
/// by the event's turn, one bar per run.
fn natural_figures(a: &Audit, out: &mut Vec<Figure>) {
    use std::collections::BTreeSet;
    let benches: BTreeSet<&str> = a
        .natural_recovery
        .iter()
        .map(|n| n.benchmark.as_str())
        .collect();
    for b in benches {
        let runs: Vec<_> = a
            .natural_recovery
            .iter()
            .filter(|n| n.benchmark == b)
            .collect();
        let turns: BTreeSet<u32> = runs
            .iter()
            .flat_map(|n| n.by_turn.iter().map(|t| t.turn))
            .collect();
        let cats: Vec<String> = turns.iter().map(|t| format!("turn {t}")).collect();
        let groups: Vec<BarGroup> = runs
            .iter()
            .map(|n| BarGroup {
                name: n.run.clone(),
                values: turns
                    .iter()
                    .map(|t| {
                        n.by_turn
                            .iter()
                            .find(|x| x.turn == *t)
                            .and_then(|x| x.next_ok)
                            .map(|v| (v, None))
                    })
                    .collect(),
            })
            .collect();
        out.push(Figure {
            section: "natural",
            file: format!("natural_recovery_{}.svg", slug(b)),
            caption: format!("After an error step on {b}: the share of error events whose next step is clean, by the event's turn"),
            svg: bar_chart(&format!("{b}: next step clean after an error"), "turn of the error", "share", &cats, &groups, true),
        });
    }
}

/// §4.5: mean LLR by turn with its 95% interval, one line per producing run.
fn llr_turn_figures(a: &Audit, out: &mut Vec<Figure>) {
    for p in &a.pairs {
        let rows: Vec<_> = a
            .llr_by_turn
            .iter()
            .filter(|l| l.benchmark == p.benchmark && l.base == p.base && l.rl == p.rl)
            .collect();
        if rows.is_empty() {
            continue;
        }
        let series: Vec<Series> = [&p.base, &p.rl]
            .iter()
            .map(|run| {
                let mine: Vec<_> = rows.iter().filter(|l| &&l.run == run).collect();
                Series {
                    name: format!("{run}'s rollouts"),
                    points: mine.iter().map(|l| (l.turn as f64, l.mean)).collect(),
                    whiskers: mine
                        .iter()
                        .filter_map(|l| ci_bounds(l.ci).map(|(lo, hi)| (l.turn as f64, lo, hi)))
                        .collect(),
                    dashed: false,
                    stands_for: None,
                }
            })
            .filter(|s| !s.points.is_empty())
            .collect();
        out.push(Figure {
            section: "likelihood",
            file: pair_file("llr_by_turn", &p.benchmark, &p.base, &p.rl),
            caption: format!(
                "log π_RL − log π_base per step by turn on {} ({} → {}): where RL departs from base (95% intervals over tasks)",
                p.benchmark, p.base, p.rl
            ),
            svg: line_chart(
                &format!("{}: step LLR by turn", p.benchmark),
                "turn",
                "mean logp[RL] − logp[base] (nats)",
                &series,
                false,
            ),
        });
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

fn modes_present(a: &Audit, bench: &str) -> Vec<Mode> {
    Mode::BOTH
        .into_iter()
        .filter(|m| {
            a.pass
                .cells
                .iter()
                .any(|c| c.benchmark == bench && c.mode == *m)
        })
        .collect()
}

fn pass_figures(a: &Audit, out: &mut Vec<Figure>) {
    let p = &a.pass;
    let benches: BTreeSet<&String> = p.cells.iter().map(|c| &c.benchmark).collect();
    let levels = &a.settings.levels;
    let cols: Vec<String> = levels.iter().map(|l| format!("{l}%")).collect();
    let rows: Vec<String> = p.ks.iter().map(|k| format!("K={k}")).collect();
    for b in benches {
        let runs: BTreeSet<&String> = p
            .cells
            .iter()
            .filter(|c| &c.benchmark == b)
            .map(|c| &c.run)
            .collect();
        for m in modes_present(a, b) {
            for r in &runs {
                let cells = grid(&p.ks, levels, |k, l| {
                    let c = p.cells.iter().find(|c| {
                        &c.benchmark == b && &c.run == *r && c.k == k && c.level == l && c.mode == m
                    })?;
                    let v = c.value?;
                    Some(HeatCell {
                        value: v,
                        text: format!("{:.1}% (n={})", 100.0 * v, c.tasks),
                        marked: false,
                    })
                });
                if cells.iter().flatten().all(Option::is_none) {
                    continue;
                }
                out.push(Figure {
                    section: "pass",
                    file: format!("pass_{}_{}_{}.svg", slug(b), slug(r), m.name()),
                    caption: format!("Pass@(K,T) of {r} on {b} ({} budgets)", m.name()),
                    svg: heatmap(
                        &format!("{b}: Pass@(K,T) of {r}, {}", m.name()),
                        &rows,
                        &cols,
                        &cells,
                        false,
                        "cell: Pass (n = tasks); T = % of each task's full budget",
                    ),
                });
            }
            for pair in a.pairs.iter().filter(|x| &x.benchmark == b) {
                let cells = grid(&p.ks, levels, |k, l| {
                    let x = p.advantage.iter().find(|x| {
                        &x.benchmark == b
                            && x.base == pair.base
                            && x.rl == pair.rl
                            && x.k == k
                            && x.level == l
                            && x.mode == m
                    })?;
                    let mark = if x.significant_flip {
                        " !"
                    } else if x.flip {
                        " *"
                    } else {
                        ""
                    };
                    Some(HeatCell {
                        value: x.delta,
                        text: format!("{:+.1}{mark}", 100.0 * x.delta),
                        marked: x.flip,
                    })
                });
                if cells.iter().flatten().all(Option::is_none) {
                    continue;
                }
                out.push(Figure {
                    section: "advantage",
                    file: format!(
                        "delta_{}_{}_{}_{}.svg",
                        slug(b),
                        slug(&pair.base),
                        slug(&pair.rl),
                        m.name()
                    ),
                    caption: format!(
                        "Δ(K,T) = {} − {} on {b} ({}), in points; flips outlined",
                        pair.rl,
                        pair.base,
                        m.name()
                    ),
                    svg: heatmap(
                        &format!("{b}: Δ {} − {} ({}), points", pair.rl, pair.base, m.name()),
                        &rows,
                        &cols,
                        &cells,
                        true,
                        "red outline: flip (Δ < 0); ! significant (CI below 0), * not significant",
                    ),
                });
            }
        }
        // Pass-vs-T: truncated curves, CI whiskers at the levels, the upper bound.
        let max_b = p.curve_until(b).unwrap_or(1);
        // A long flat tail: T on a log scale, so that both the turns where
        // the curves move and the levels' intervals can be read.
        let tail = p.curve_flat_tail(b);
        let x_label = match tail {
            Some((last, until)) => format!("T (turns, log scale; levels at % of the largest full budget; all flat from {last} to {until})"),
            None => "T (turns; levels at % of the largest full budget)".into(),
        };
        for &k in &p.ks {
            let mut series: Vec<Series> = runs
                .iter()
                .map(|r| {
                    // A short curve point by point (each t marked), a
                    // long one by its vertices (a flat tail by its end).
                    let points = match max_b as usize <= MARKED_UP_TO {
                        true => p.curve_points_of(b, r, k),
                        false => p.curve_of(b, r, k),
                    };
                    let whiskers = p
                        .cells
                        .iter()
                        .filter(|c| {
                            &c.benchmark == b
                                && &c.run == *r
                                && c.k == k
                                && (c.mode == Mode::Truncated || c.level == 100)
                        })
                        .filter_map(|c| {
                            ci_bounds(c.ci).map(|(lo, hi)| {
                                ((c.level as f64 / 100.0 * max_b as f64).ceil(), lo, hi)
                            })
                        })
                        .collect();
                    // Given by its vertices: it stands for every t.
                    Series {
                        name: r.to_string(),
                        points,
                        whiskers,
                        dashed: false,
                        stands_for: Some(max_b as usize),
                    }
                })
                .filter(|s: &Series| !s.points.is_empty())
                .collect();
            if series.is_empty() {
                continue;
            }
            // The bound per absolute t, computed like the curve (a task at min(t, B)).
            let ub = p.upper_curve_of(b, max_b as usize <= MARKED_UP_TO);
            series.push(Series {
                name: "upper bound U(T)".into(),
                points: ub,
                whiskers: Vec::new(),
                dashed: true,
                stands_for: Some(max_b as usize),
            });
            out.push(Figure {
                section: "pass",
                file: format!("pass_curve_{}_k{k}.svg", slug(b)),
                caption: format!("Pass@({k},T) against T on {b}: full-budget rollouts cut at T, 95% CIs at the levels, structural upper bound"),
                svg: line_chart_scaled(&format!("{b}: Pass@({k},T) vs T (truncated)"), &x_label, "Pass", &series, true, tail.is_some()),
            });
        }
    }
}

fn cost_figures(a: &Audit, out: &mut Vec<Figure>) {
    let benches: BTreeSet<&String> = a.cost_frontier.iter().map(|p| &p.benchmark).collect();
    for b in benches {
        let runs: BTreeSet<&String> = a
            .cost_frontier
            .iter()
            .filter(|p| &p.benchmark == b)
            .map(|p| &p.run)
            .collect();
        let series: Vec<Series> = runs
            .iter()
            .map(|r| {
                let mut pts: Vec<(f64, f64)> = a
                    .cost_frontier
                    .iter()
                    .filter(|p| &p.benchmark == b && &p.run == *r && p.on_frontier)
                    .map(|p| (p.cost, p.pass))
                    .collect();
                pts.sort_by(|x, y| x.0.total_cmp(&y.0).then(x.1.total_cmp(&y.1)));
                Series {
                    name: format!("{r} frontier"),
                    points: pts,
                    whiskers: Vec::new(),
                    dashed: false,
                    stands_for: None,
                }
            })
            .collect();
        out.push(Figure {
            section: "cost",
            file: format!("cost_{}.svg", slug(b)),
            caption: format!(
                "Pass@(K,T) against expected cost per task on {b}: each run's frontier"
            ),
            svg: line_chart(
                &format!("{b}: Pass vs expected cost (frontier)"),
                "expected cost per task",
                "Pass",
                &series,
                true,
            ),
        });
    }
}

fn matched_figures(a: &Audit, out: &mut Vec<Figure>) {
    for m in &a.matched {
        let cats: Vec<String> = m
            .by_turn
            .iter()
            .map(|t| format!("turn {}", t.turn))
            .collect();
        let g = BarGroup {
            name: "RL better (Wilson 95%)".into(),
            values: m
                .by_turn
                .iter()
                .map(|t| {
                    t.better.map(|v| {
                        (
                            v,
                            crate::analysis::stats::wilson(
                                (v * t.states as f64).round() as u64,
                                t.states,
                            ),
                        )
                    })
                })
                .collect(),
        };
        out.push(Figure {
            section: "matched",
            file: pair_file("matched", &m.benchmark, &m.base, &m.rl),
            caption: format!(
                "Share of matched states where {} beats {} on {}, by turn",
                m.rl, m.base, m.benchmark
            ),
            svg: bar_chart(
                &format!("{}: {} better than {}, by turn", m.benchmark, m.rl, m.base),
                "turn position",
                "share of states",
                &cats,
                &[g],
                true,
            ),
        });
    }
    for r in &a.recovery {
        let cats: Vec<String> = r
            .by_turn
            .iter()
            .map(|t| format!("turn {}", t.key))
            .collect();
        let g = |i: usize, name: &str| BarGroup {
            name: format!("terminal success {name}"),
            values: r
                .by_turn
                .iter()
                .map(|t| t.terminal_success[i].map(|v| (v, None)))
                .collect(),
        };
        let better = BarGroup {
            name: "RL better (Wilson 95%)".into(),
            values: r
                .by_turn
                .iter()
                .map(|t| {
                    t.better.map(|v| {
                        let k = (v * t.scored as f64).round() as u64;
                        (v, crate::analysis::stats::wilson(k, t.scored))
                    })
                })
                .collect(),
        };
        out.push(Figure {
            section: "recovery",
            file: pair_file("recovery", &r.benchmark, &r.base, &r.rl),
            caption: format!(
                "Error states on {}: RL-better share and terminal success by turn",
                r.benchmark
            ),
            svg: bar_chart(
                &format!("{}: error recovery by turn", r.benchmark),
                "turn position",
                "share",
                &cats,
                &[better, g(0, &r.base), g(1, &r.rl)],
                true,
            ),
        });
    }
}

fn likelihood_figures(a: &Audit, out: &mut Vec<Figure>) {
    for l in &a.likelihood {
        for (h, kind, file, x) in [
            (
                &l.histogram,
                "per-step NLL under base",
                "step_nll",
                "−log π_base(action), nats",
            ),
            (
                &l.llr_histogram,
                "trajectory LLR (RL − base)",
                "llr",
                "log π_RL(τ) − log π_base(τ), nats",
            ),
        ] {
            let Some(h) = h else { continue };
            let [b, r] = h.shares();
            let series = vec![
                Series {
                    name: format!("{} (n={})", l.base, h.n(0)),
                    points: b,
                    whiskers: Vec::new(),
                    dashed: false,
                    stands_for: None,
                },
                Series {
                    name: format!("{} (n={})", l.rl, h.n(1)),
                    points: r,
                    whiskers: Vec::new(),
                    dashed: false,
                    stands_for: None,
                },
            ];
            out.push(Figure {
                section: "likelihood",
                file: pair_file(file, &l.benchmark, &l.base, &l.rl),
                caption: format!(
                    "{kind} on {}, successful full-budget trajectories of each run",
                    l.benchmark
                ),
                svg: line_chart(
                    &format!("{}: {kind}", l.benchmark),
                    x,
                    "share",
                    &series,
                    false,
                ),
            });
        }
    }
    let rows: Vec<&crate::analysis::likelihood::Likelihood> = a
        .likelihood
        .iter()
        .filter(|l| l.length_matched.mean_diff.is_some())
        .collect();
    if !rows.is_empty() {
        let cats: Vec<String> = rows
            .iter()
            .map(|l| format!("{} {}", l.benchmark, l.rl))
            .collect();
        let g = BarGroup {
            name: "mean paired LLR difference (95% CI)".into(),
            values: rows
                .iter()
                .map(|l| l.length_matched.mean_diff.map(|e| (e.value, e.ci.bounds())))
                .collect(),
        };
        out.push(Figure {
            section: "likelihood",
            file: "length_matched.svg".into(),
            caption: "Length-matched LLR difference (RL − base) with its 95% cluster-bootstrap CI"
                .into(),
            svg: bar_chart(
                "Length-matched LLR difference",
                "benchmark and RL run",
                "nats",
                &cats,
                &[g],
                false,
            ),
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
