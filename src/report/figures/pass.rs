//! Pass@(K,T) figures: the grids, the advantage, the Pass-vs-T curves,
//! and the cost frontier built on them.

use super::*;

pub(super) fn modes_present(a: &Audit, bench: &str) -> Vec<Mode> {
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

pub(super) fn pass_figures(a: &Audit, out: &mut Vec<Figure>) {
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

pub(super) fn cost_figures(a: &Audit, out: &mut Vec<Figure>) {
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
