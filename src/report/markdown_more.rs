//! `report.md` sections for matched states, error recovery, likelihood,
//! training dynamics, cost frontier and the BudgetMix audit.

use std::fmt::Write;

use super::markdown::{esc, pct, pct_ci, pp};
use crate::analysis::stats::{Ci, Estimate};
use crate::analysis::Audit;

fn est_pp(e: &Option<Estimate>) -> String {
    match e {
        Some(e) => format!("{} {}", pp(e.value), signed_ci(e.ci, 100.0)),
        None => "–".into(),
    }
}

/// `[lo, hi]` scaled, signed, one decimal.
pub fn signed_ci(ci: Ci, scale: f64) -> String {
    signed_ci_prec(ci, scale, 1)
}

/// `[lo, hi]` scaled, signed, with `prec` decimals.
pub fn signed_ci_prec(ci: Ci, scale: f64, prec: usize) -> String {
    match ci {
        Ci::Interval(l, h) => format!("[{:+.prec$}, {:+.prec$}]", scale * l, scale * h),
        Ci::Degenerate => "[degenerate]".into(),
        Ci::Undefined => "[–]".into(),
    }
}

/// A mean score difference with its interval, four decimals: `+0.0123 [-0.0010, +0.0250]`.
pub fn score_diff(e: &Option<Estimate>) -> String {
    e.map_or("–".into(), |e| {
        format!("{:+.4} {}", e.value, signed_ci_prec(e.ci, 1.0, 4))
    })
}

/// A Wilson interval in percent, or nothing.
pub fn wilson_pct(ci: Option<(f64, f64)>) -> String {
    ci.map_or("".into(), |(l, h)| {
        format!("[{:.1}, {:.1}]", 100.0 * l, 100.0 * h)
    })
}

fn verdict(ci: Ci) -> &'static str {
    if ci.above_zero() || ci.below_zero() {
        "significant"
    } else {
        "not significant"
    }
}

pub fn matched(md: &mut String, audit: &Audit) {
    let _ = writeln!(md, "## Single-step quality on matched states\n");
    let _ = writeln!(
        md,
        "From the same non-error state, each run proposes next actions; a candidate's score is the logged `score` or, on FrozenLake probes, the exact Q* of the action (γ = {}). RL is *better* at a state when its mean candidate score beats base's by more than 1e-9. Shares carry Wilson 95% intervals; the mean score difference is bootstrapped over tasks. The paper found RL better in only 46.8% (DeepCoder-MT) and 42.8% (FrozenLake) of states.\n",
        audit.settings.gamma
    );
    if audit.matched.is_empty() {
        let _ = writeln!(md, "_No probes with `error: false` whose candidates include both runs of a pair (fields `kind: \"probe\"`, `candidates[].run`, `score` or a `frozenlake` object)._\n");
        return;
    }
    let _ = writeln!(md, "| benchmark | base → RL | states | by source | better | tie | worse | mean q_RL − q_base |");
    let _ = writeln!(md, "|---|---|---|---|---|---|---|---|");
    for m in &audit.matched {
        let src: Vec<String> = m
            .states_by_source
            .iter()
            .map(|(k, v)| format!("{k}: {v}"))
            .collect();
        let _ = writeln!(
            md,
            "| {} | {} → {} | {} | {} | {} {} | {} {} | {} {} | {} |",
            esc(&m.benchmark),
            esc(&m.base),
            esc(&m.rl),
            m.states,
            src.join(", "),
            pct(m.better),
            wilson_pct(m.shares_ci[0]),
            pct(m.tie),
            wilson_pct(m.shares_ci[1]),
            pct(m.worse),
            wilson_pct(m.shares_ci[2]),
            score_diff(&m.mean_diff)
        );
    }
    md.push('\n');
    for m in &audit.matched {
        let _ = writeln!(
            md,
            "**{}: {} → {} by turn** (early: turn ≤ {}, the median):\n",
            esc(&m.benchmark),
            esc(&m.base),
            esc(&m.rl),
            m.median_turn.map_or("–".into(), |x| format!("{x}"))
        );
        let _ = writeln!(
            md,
            "| turn | states | RL better | mean diff |\n|---|---|---|---|"
        );
        for t in &m.by_turn {
            let _ = writeln!(
                md,
                "| {} | {} | {} | {} |",
                t.turn,
                t.states,
                pct(t.better),
                t.mean_diff.map_or("–".into(), |d| format!("{d:+.4}"))
            );
        }
        for (name, h) in [("early", &m.early), ("late", &m.late)] {
            let _ = writeln!(
                md,
                "| {name} | {} | {} | {} |",
                h.states,
                pct(h.better),
                score_diff(&h.mean_diff)
            );
        }
        if let Some(e) = m.mean_diff {
            let _ = writeln!(
                md,
                "\nFinding: RL is better in {} of {} matched states; its mean score differs from base by {:+.4} {}: {}.",
                pct(m.better),
                m.states,
                e.value,
                signed_ci(e.ci, 1.0),
                verdict(e.ci)
            );
        }
        if m.unscored > 0 {
            let _ = writeln!(md, "\n> {} state(s) had candidates without a `score` and no `frozenlake` object; left out.", m.unscored);
        }
        md.push('\n');
    }
}

pub fn recovery(md: &mut String, audit: &Audit) {
    let _ = writeln!(md, "## Error recovery\n");
    let _ = writeln!(
        md,
        "States right after an error action (`error: true` probes), the same prefixes for both runs. *Correction*: share of a run's candidates that fix the error (`corrects`); *terminal success*: share whose continuation ended in success (`terminal_success`); both averaged over states, bootstrapped over tasks, and differenced per state (paired). The paper: RL better in 65.7% / 67.3% of error states; correction 41.4% vs 27.2% on BFCL.\n"
    );
    if audit.recovery.is_empty() {
        let _ = writeln!(
            md,
            "_No probes with `error: true` whose candidates include both runs of a pair._\n"
        );
        return;
    }
    for r in &audit.recovery {
        let _ = writeln!(
            md,
            "### {}: {} → {}\n",
            esc(&r.benchmark),
            esc(&r.base),
            esc(&r.rl)
        );
        let _ = writeln!(
            md,
            "Error states: {} ({} with scores for both runs). RL better: {} {}.\n",
            r.states,
            r.scored,
            pct(r.better),
            wilson_pct(r.better_ci)
        );
        let _ = writeln!(
            md,
            "| figure | {} | {} | RL − base |\n|---|---|---|---|",
            esc(&r.base),
            esc(&r.rl)
        );
        for (name, field, v, d) in [
            ("correction", "corrects", &r.correction, &r.correction_diff),
            (
                "terminal success",
                "terminal_success",
                &r.terminal_success,
                &r.terminal_success_diff,
            ),
        ] {
            if v.iter().all(Option::is_none) {
                let _ = writeln!(md, "| {name} | – | – | – (no candidate has `{field}`) |");
                continue;
            }
            let cell = |e: &Option<Estimate>| {
                e.map_or("–".into(), |e| {
                    format!("{} {}", pct(Some(e.value)), pct_ci(e.ci))
                })
            };
            let _ = writeln!(
                md,
                "| {name} | {} | {} | {} |",
                cell(&v[0]),
                cell(&v[1]),
                est_pp(d)
            );
        }
        let _ = writeln!(md, "\n| by | states | RL better | correction base / RL | terminal success base / RL |\n|---|---|---|---|---|");
        for (label, b) in r.breakdowns() {
            let _ = writeln!(
                md,
                "| {} | {} | {} | {} / {} | {} / {} |",
                esc(&label),
                b.states,
                pct(b.better),
                pct(b.correction[0]),
                pct(b.correction[1]),
                pct(b.terminal_success[0]),
                pct(b.terminal_success[1])
            );
        }
        md.push('\n');
    }
}

pub fn likelihood(md: &mut String, audit: &Audit) {
    let _ = writeln!(md, "## Likelihood: locally plausible, globally different\n");
    let _ = writeln!(
        md,
        "On successful full-budget trajectories. *Step NLL*: −log π_base(action) of each step, by producing run; heavily overlapping distributions mean RL's single actions stay inside base's support. *LLR*: Σ over steps of log π_RL − log π_base. *Length-matched*: RL and base trajectories of the same task with output tokens within 10% of the longer, paired greedily by closeness; mean paired LLR difference with a cluster bootstrap over tasks. The paper: step NLL 12.20 (RL) vs 10.25 (base); length-matched 185.9 nats (Terminal) and 805.8 (BFCL).\n"
    );
    if audit.likelihood.is_empty() {
        let _ = writeln!(md, "_No successful full-budget evaluation rollouts for a pair; this needs `steps[].logp` with both runs and `steps[].output_tokens`._\n");
        return;
    }
    let _ = writeln!(md, "| benchmark | base → RL | step NLL base (n) | step NLL RL (n) | overlap | LLR base (n) | LLR RL (n) | length-matched d | tasks / pairs |");
    let _ = writeln!(md, "|---|---|---|---|---|---|---|---|---|");
    for l in &audit.likelihood {
        let s = |x: &Option<crate::analysis::likelihood::Summary>| {
            x.map_or("–".into(), |x| {
                format!("{:.2} (median {:.2}, n={})", x.mean, x.median, x.n)
            })
        };
        let lm = &l.length_matched;
        let _ = writeln!(
            md,
            "| {} | {} → {} | {} | {} | {} | {} | {} | {} | {} / {} |",
            esc(&l.benchmark),
            esc(&l.base),
            esc(&l.rl),
            s(&l.step_nll[0]),
            s(&l.step_nll[1]),
            l.overlap.map_or("–".into(), |o| format!("{o:.3}")),
            s(&l.llr[0]),
            s(&l.llr[1]),
            lm.mean_diff.map_or("–".into(), |e| format!(
                "{:.2} nats {}",
                e.value,
                signed_ci(e.ci, 1.0)
            )),
            lm.tasks,
            lm.pairs
        );
    }
    md.push('\n');
    for l in &audit.likelihood {
        if let Some(e) = l.length_matched.mean_diff {
            let _ = writeln!(
                md,
                "- {}: length-matched RL − base LLR is {:.1} nats over {} pairs from {} tasks {}: {}.",
                l.benchmark,
                e.value,
                l.length_matched.pairs,
                l.length_matched.tasks,
                signed_ci(e.ci, 1.0),
                if e.ci.above_zero() { "above zero" } else { "not clearly above zero" }
            );
        }
        for n in &l.notes {
            let _ = writeln!(md, "- {}: {n}", l.benchmark);
        }
    }
    md.push('\n');
}

pub fn dynamics(md: &mut String, audit: &Audit) {
    let _ = writeln!(md, "## Training dynamics\n");
    let _ = writeln!(
        md,
        "Every numeric checkpoint metric against `step`: first, last, change and the least-squares slope with its 95% t-interval (n − 2 degrees of freedom; none below 3 checkpoints). A run is *divergent* when `r_multi`'s slope interval is above 0 while `r_single`'s is below 0 — the paper's DeepCoder-MT run: R_multi +0.331, R_single −0.097.\n"
    );
    if audit.dynamics.is_empty() {
        let _ = writeln!(md, "_No `checkpoint` records (`{{kind: \"checkpoint\", run, step, r_multi, r_single, …}}`)._\n");
        return;
    }
    let _ = writeln!(md, "| run | metric | checkpoints | first | last | change | slope per step | 95% CI |\n|---|---|---|---|---|---|---|---|");
    for t in &audit.dynamics {
        let _ = writeln!(
            md,
            "| {} | {} | {} | {:.4} | {:.4} | {:+.4} | {} | {} |",
            esc(&t.run),
            esc(&t.metric),
            t.checkpoints,
            t.first,
            t.last,
            t.change,
            t.slope.map_or("–".into(), |s| format!("{s:+.3e}")),
            t.slope_ci
                .map_or("–".into(), |(l, h)| format!("[{l:+.3e}, {h:+.3e}]"))
        );
    }
    md.push('\n');
    for d in &audit.divergence {
        let text = if !d.has_metrics {
            "needs both r_multi and r_single".to_string()
        } else if d.divergent {
            "**divergent**: trajectory reward rises while single-step reward falls".to_string()
        } else {
            "not divergent".to_string()
        };
        let _ = writeln!(md, "- {}: {text}.", d.run);
    }
    md.push('\n');
}

pub fn cost(md: &mut String, audit: &Audit) {
    let c = audit.settings.cost;
    let _ = writeln!(
        md,
        "## Cost frontier: more samples, more turns, or a better model?\n"
    );
    let _ = writeln!(
        md,
        "Each (run, K, level, mode) cell is a point: expected cost per task = K × the mean cost of one attempt (a turn costs {}, a token {}), against its Pass@(K,T). A point is on its run's frontier unless another point of the same run costs no more and passes no less. The winner at a cost ceiling is the best point affordable under it.\n",
        c.turn, c.token
    );
    if audit.cost_frontier.is_empty() {
        let _ = writeln!(md, "_No Pass@(K,T) cells to price._\n");
        return;
    }
    let _ = writeln!(md, "| benchmark | cost from | cost to | winner | K | level | mode | Pass |\n|---|---|---|---|---|---|---|---|");
    for w in &audit.cost_winners {
        let _ = writeln!(
            md,
            "| {} | {:.2} | {} | {} | {} | {}% | {} | {} |",
            esc(&w.benchmark),
            w.from_cost,
            w.to_cost.map_or("∞".into(), |t| format!("{t:.2}")),
            esc(&w.run),
            w.k,
            w.level,
            w.mode.name(),
            pct(Some(w.pass))
        );
    }
    md.push('\n');
    let unit = if c.token == 0.0 && c.turn == 1.0 {
        "turns"
    } else {
        "cost units"
    };
    let benches: std::collections::BTreeSet<&String> =
        audit.cost_winners.iter().map(|w| &w.benchmark).collect();
    for b in benches {
        let rows: Vec<_> = audit
            .cost_winners
            .iter()
            .filter(|w| &w.benchmark == b)
            .collect();
        let parts: Vec<String> = rows
            .iter()
            .map(|w| {
                let choice = format!(
                    "{} with K={} at {}% budget ({})",
                    w.run,
                    w.k,
                    w.level,
                    w.mode.name()
                );
                match w.to_cost {
                    Some(t) => format!(
                        "from {:.1} to {:.1} {unit} per task, {choice} wins",
                        w.from_cost, t
                    ),
                    None => format!("from {:.2} {unit} per task up, {choice} wins", w.from_cost),
                }
            })
            .collect();
        let _ = writeln!(md, "- {b}: {}.", parts.join("; "));
    }
    md.push('\n');
}

pub fn budgetmix(md: &mut String, audit: &Audit) {
    let _ = writeln!(md, "## BudgetMix audit\n");
    let _ = writeln!(
        md,
        "BudgetMix trains with budgets drawn uniformly from 10% steps of the full budget, one budget per GRPO group, the budget disclosed in the prompt, and zero reward for running out. The six rules check that the training rollouts did so; the gain table compares Pass@(1,T) against the full-budget RL run (paper: +7.5, +5.3, +4.0 points at 25/50/75%, ±0 at 100%).\n"
    );
    if audit.budgetmix.is_empty() {
        let _ = writeln!(md, "_No audited run: give a run `method: \"budgetmix\"` or name it with `--audit RUN`; rules read training rollouts (`train_step`, `group`, `steps[].budget_total`, `steps[].budget_remaining`, `reward`)._\n");
        return;
    }
    for b in &audit.budgetmix {
        let _ = writeln!(md, "### {}\n", esc(&b.run));
        let _ = writeln!(md, "| rule | checked | violations | rate | p-value | first violations |\n|---|---|---|---|---|---|");
        for r in &b.rules {
            let _ = writeln!(
                md,
                "| {} | {} | {} | {} | {} | {} |",
                r.rule,
                r.checked,
                r.violations,
                pct(r.rate()),
                r.p_value.map_or("–".into(), |p| format!("{p:.4}")),
                r.examples
                    .iter()
                    .take(3)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
        if !b.gains.is_empty() {
            let _ = writeln!(md, "\n| benchmark | level | gain | vs |\n|---|---|---|---|");
            for g in &b.gains {
                let _ = writeln!(
                    md,
                    "| {} | {}% | {} | {} |",
                    esc(&g.benchmark),
                    g.level,
                    pp(g.gain),
                    esc(&g.vs)
                );
            }
            for (l, g) in &b.mean_gain {
                let _ = writeln!(md, "| mean | {l}% | {} | |", pp(*g));
            }
        }
        for n in &b.notes {
            let _ = writeln!(md, "\n> Note: {n}");
        }
        md.push('\n');
    }
}
