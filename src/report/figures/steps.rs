//! Figures of single steps: matched states, natural recovery, the
//! likelihoods and their LLR by turn.

use super::*;

/// §4.6: per benchmark, the share of error events followed by a clean step,
/// by the event's turn, one bar per run.
pub(super) fn natural_figures(a: &Audit, out: &mut Vec<Figure>) {
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
pub(super) fn llr_turn_figures(a: &Audit, out: &mut Vec<Figure>) {
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

pub(super) fn matched_figures(a: &Audit, out: &mut Vec<Figure>) {
    for m in &a.matched {
        let cats: Vec<String> = m
            .by_turn
            .iter()
            .map(|t| format!("turn {}", t.turn))
            .collect();
        let g = better_bars(m.by_turn.iter().map(|t| (t.better, t.better_ci)));
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
        let better = better_bars(r.by_turn.iter().map(|t| (t.better, t.better_ci)));
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

pub(super) fn likelihood_figures(a: &Audit, out: &mut Vec<Figure>) {
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

/// The bars of "RL better" by turn, each with the analysis's Wilson
/// interval (matched states and error states alike).
fn better_bars(by_turn: impl Iterator<Item = (Option<f64>, Option<(f64, f64)>)>) -> BarGroup {
    BarGroup {
        name: "RL better (Wilson 95%)".into(),
        values: by_turn.map(|(v, ci)| v.map(|v| (v, ci))).collect(),
    }
}
