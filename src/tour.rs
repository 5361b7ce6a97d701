//! The guided tour and the per-panel explanations: one source.
//!
//! Each idea the paper asks about is a [`Topic`] with its explanation (what
//! the figure is, how to read it, the paper's number to compare with). The
//! workbench's help shows the topics of a panel; the tour (`t`, `--tour`)
//! walks them in order, each step landing on a [`Place`] and reading the
//! loaded audit's own numbers ([`steps`]); `--headless --tour` writes the
//! same steps as the preface of report.md ([`markdown`]). Nothing here
//! computes a statistic: it picks results of the audit and words them.

use std::fmt::Write;

use crate::analysis::passkt::{Advantage, Mode};
use crate::analysis::{Audit, PairNames};
use crate::report::format::{cell_p, cell_p_alone, nats, pct, pp, signed_ci};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Topic {
    Grid,
    Bound,
    Flip,
    Modes,
    Matched,
    Recovery,
    Likelihood,
    Training,
    BudgetMix,
    Cost,
}

/// Where the workbench shows a step: a panel, and what is selected there.
#[derive(Debug, Clone, PartialEq)]
pub enum Place {
    /// A Budget cell: (benchmark, pair), K, level, and the cell's mode
    /// (`None`: the preferred one).
    Budget {
        pair: PairNames,
        k: u64,
        level: u32,
        mode: Option<Mode>,
    },
    /// A panel whose table rows are the audit's results in order: the row
    /// to select, and the pair the panel's second view follows.
    Table {
        topic: Topic,
        row: usize,
        pair: Option<PairNames>,
    },
    /// The BudgetMix panel, which shows one audited run at a time: the
    /// run (its index among the audit's BudgetMix runs) and the rule's row.
    BudgetMix { run: usize, row: usize },
}

/// One step of the tour.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    pub topic: Topic,
    pub place: Place,
    /// The audit's own numbers, as on the screen the step lands on.
    pub reading: String,
}

impl Topic {
    pub const ALL: [Topic; 10] = [
        Topic::Grid,
        Topic::Bound,
        Topic::Flip,
        Topic::Modes,
        Topic::Matched,
        Topic::Recovery,
        Topic::Likelihood,
        Topic::Training,
        Topic::BudgetMix,
        Topic::Cost,
    ];

    pub fn title(self) -> &'static str {
        match self {
            Topic::Grid => "Pass@(K,T) and the budget grid",
            Topic::Bound => "The upper bound and headroom",
            Topic::Flip => "A flip, and whether it survives adjustment",
            Topic::Modes => "Native vs truncated budgets",
            Topic::Matched => "Single steps on matched states",
            Topic::Recovery => "Error recovery",
            Topic::Likelihood => "Likelihood and length matching",
            Topic::Training => "Training dynamics",
            Topic::BudgetMix => "BudgetMix: its rules and its gains",
            Topic::Cost => "The cost frontier",
        }
    }

    /// What the figure is, how to read it, and the paper's number.
    pub fn idea(self) -> &'static str {
        match self {
            Topic::Grid => "Pass@(K,T) is the chance that at least one of K attempts solves a task within T turns, T a percentage of each task's full budget: per task the unbiased 1 − C(n−c,K)/C(n,K), averaged over tasks, with a 95% cluster-bootstrap interval over tasks. The usual single success rate is one cell of this grid (K=1 at 100%); the grid asks whether RL's edge holds at every K and T. Paper: at K=8 and 25%, BFCL-v3 base 3.0 vs GRPO 2.5 and FrozenLake 30.3 vs 28.7 — the edge shrinks or flips when T is tight.",
            Topic::Bound => "U(T), the structural upper bound, is the share of tasks that can be solved at all within T turns (their fewest turns, min_turns, fit in T). Headroom is U(T) minus the better run's Pass: a tight budget with a large headroom is a limit of the policies, not of the tasks. Paper: the flips at 25% happen where the bound leaves plenty of room.",
            Topic::Flip => "A flip is a cell where RL is behind base (Δ < 0). A grid holds dozens of cells, so some fall below zero by chance alone: every cell's p-value is adjusted over the pair's whole grid (max-|t| by default, SPEC §4.2). A p written ≤ sits at the smallest value B resamples allow — 2/(B+1), with Holm the grid's m cells times that: no resample crossed 0, and more would tell how far below. ▼ marks a flip that survives the adjustment, ≈ a cell whose 90% interval lies inside ±--min-effect, ? an inconclusive one (with about how many tasks would settle it), ▲ RL ahead, · degenerate.",
            Topic::Modes => "Native cells count rollouts that really ran with budget T (the agent may have been told T); truncated cells cut full-budget rollouts at turn T. A policy blind to its budget gives the same Pass both ways up to noise; one that reads its budget (BudgetMix) may plan differently when told it is short. The paper leaves this open; the mode gap (native − truncated, paired over tasks) measures it.",
            Topic::Matched => "Single-step quality: on states drawn in equal numbers from base and RL trajectories, each model proposes next actions, each scored (exact Q* on FrozenLake). RL better is the share of states where RL's mean score is higher (Wilson 95% CI). Paper: RL is better in only 46.8% (DeepCoder-MT) and 42.8% (FrozenLake) of states — single steps do not get better.",
            Topic::Recovery => "States right after an error (an injected bad move), the same states for both models: RL better, the correction rate (candidates that fix the error) and terminal success (continuations that end solved). Paper: RL better in 65.7% (FrozenLake) and 67.3% (DeepCoder-MT) of error states, terminal success 51.3% vs 38.6% — the gain is error recovery. The natural-recovery rows ask the same of ordinary rollouts' error flags.",
            Topic::Likelihood => "Per-step NLL under base asks whether RL's single actions look strange to base (they overlap heavily); the trajectory log-likelihood ratio log π_RL − log π_base sums the small per-step differences. Length matching pairs RL and base successes within 10% output tokens, so a longer trajectory cannot win by length alone; the mean paired difference d has a cluster-bootstrap CI. Paper: step NLL 12.20 vs 10.25, LLR ≈228 vs ≈26, length-matched 185.9 and 805.8 nats with CIs above zero.",
            Topic::Training => "Each checkpoint metric against training step, with its least-squares slope and 95% t-interval. A run is divergent when trajectory reward r_multi rises while single-step reward r_single falls, both significantly: training buys whole trajectories, not better single steps. Paper: DeepCoder-MT R_multi +0.331, R_single −0.097.",
            Topic::BudgetMix => "BudgetMix changes only the budget distribution of RL training: per task, candidate budgets at 10% steps of the full budget, drawn uniformly; one budget per GRPO group; total and remaining budget in the prompt; zero reward when out of budget. The audit checks each rule on the training rollouts, and the gain table compares Pass@(1,T) with the full-budget RL run. Paper: +7.5, +5.3, +4.0 points at 25/50/75%, ±0 at 100%.",
            Topic::Cost => "Every (run, K, T) cell as a point: expected cost per task (K attempts × the mean cost of one, --cost turn=A,token=B) against Pass. The frontier keeps the points no cheaper, better point of the same run dominates; under each cost ceiling the table names each run's best cell and the winner. It answers: is more K, more T, or the RL model the better buy?",
        }
    }

    /// The topics a panel's help explains, by the panel's title.
    pub fn of_panel(title: &str) -> Vec<Topic> {
        let t: &[Topic] = match title {
            "Budget" => &[Topic::Grid, Topic::Bound, Topic::Flip, Topic::Modes],
            "Cost" => &[Topic::Cost],
            "Steps" => &[Topic::Matched],
            "Recovery" => &[Topic::Recovery],
            "Likelihood" => &[Topic::Likelihood],
            "Training" => &[Topic::Training],
            "BudgetMix" => &[Topic::BudgetMix],
            _ => &[],
        };
        t.to_vec()
    }
}

/// The pair a tour follows: the first whose RL run is not a BudgetMix run
/// (the full-budget RL of the paper), else the first.
fn main_pair(a: &Audit) -> Option<&PairNames> {
    let bmix: Vec<&str> = a.budgetmix.iter().map(|b| b.run.as_str()).collect();
    a.pairs
        .iter()
        .find(|p| !bmix.contains(&p.rl.as_str()))
        .or(a.pairs.first())
}

fn ahead(x: f64) -> &'static str {
    if x >= 0.0 {
        "ahead of"
    } else {
        "behind"
    }
}

/// The tour over an audit: one step per topic that has something to show
/// (a topic without data says so and stays on its panel).
pub fn steps(a: &Audit) -> Vec<Step> {
    let pair = main_pair(a).cloned();
    let levels = &a.settings.levels;
    let (lo, hi) = (
        levels.first().copied().unwrap_or(100),
        levels.last().copied().unwrap_or(100),
    );
    let k1 = a.pass.ks.first().copied().unwrap_or(1);
    let table = |topic, row, pair: Option<PairNames>| Place::Table { topic, row, pair };
    let mut out = Vec::new();
    for topic in Topic::ALL {
        let step = match topic {
            Topic::Grid => pair.as_ref().map(|p| grid(a, p, k1, lo, hi)),
            Topic::Bound => pair.as_ref().map(|p| bound(a, p, k1, lo)),
            Topic::Flip => flip(a),
            Topic::Modes => modes(a, lo),
            Topic::Matched => Some(matched(a, pair.as_ref())),
            Topic::Recovery => Some(recovery(a, pair.as_ref())),
            Topic::Likelihood => Some(likelihood(a, pair.as_ref())),
            Topic::Training => Some(training(a)),
            Topic::BudgetMix => Some(budgetmix(a, lo, hi)),
            Topic::Cost => Some(cost(a, pair.as_ref())),
        };
        let (place, reading) = step.unwrap_or_else(|| {
            (
                table(topic, 0, pair.clone()),
                "These logs have no base → RL pair with evaluation rollouts (a run with `method: base`, or --compare BASE:RL; in the workbench P picks one), so this step has nothing to read.".into(),
            )
        });
        out.push(Step {
            topic,
            place,
            reading,
        });
    }
    out
}

/// The Budget cell of `x`'s pair, K and level, in `mode` (`None`: the
/// preferred).
pub fn budget_place(x: &Advantage, mode: Option<Mode>) -> Place {
    Place::Budget {
        pair: PairNames::of((&x.benchmark, &x.base, &x.rl)),
        k: x.k,
        level: x.level,
        mode,
    }
}

fn grid(a: &Audit, p: &PairNames, k: u64, lo: u32, hi: u32) -> (Place, String) {
    let (Some(top), low) = (
        a.pass.advantage_at(p.key(), k, hi, None),
        a.pass.advantage_at(p.key(), k, lo, None),
    ) else {
        return no_cell(p, k, hi);
    };
    let mut s = format!(
        "Here {} is {} {} by {} at {hi}% (K={k}, {}: {} → {}, 95% CI {}, n={} tasks) — the one number a paper would report.",
        p.rl,
        ahead(top.delta),
        p.base,
        pp(top.delta),
        top.mode.name(),
        pct(Some(top.base_pass)),
        pct(Some(top.rl_pass)),
        signed_ci(top.ci, 100.0),
        top.tasks
    );
    if let Some(l) = low.filter(|_| lo != hi) {
        let _ = write!(
            s,
            " At {lo}% the same comparison reads {} → {}, Δ {}: look along the row, and down the K column, for where the edge {}.",
            pct(Some(l.base_pass)),
            pct(Some(l.rl_pass)),
            pp(l.delta),
            if l.delta < top.delta { "shrinks" } else { "holds" }
        );
    }
    (budget_place(top, None), s)
}

fn no_cell(p: &PairNames, k: u64, level: u32) -> (Place, String) {
    (
        Place::Budget {
            pair: p.clone(),
            k,
            level,
            mode: None,
        },
        format!(
            "{} → {} has no cell at K={k}, {level}%: no tasks with rollouts of both runs there.",
            p.base, p.rl
        ),
    )
}

fn bound(a: &Audit, p: &PairNames, k: u64, lo: u32) -> (Place, String) {
    let Some(x) = a.pass.advantage_at(p.key(), k, lo, None) else {
        return no_cell(p, k, lo);
    };
    let s = match a.pass.upper_at(&p.benchmark, lo) {
        Some(u) => format!(
            "At {lo}% the bound U(T) is {} (n={} tasks): {}. {} reaches {} and {} {}; the headroom is {}{}",
            pct(Some(u.value)),
            u.tasks,
            if u.value < 1.0 {
                "some tasks cannot be solved within this budget at all"
            } else {
                "every task can still be solved within this budget"
            },
            p.base,
            pct(Some(x.base_pass)),
            p.rl,
            pct(Some(x.rl_pass)),
            x.headroom
                .map_or("–".into(), |h| format!("{:.1} pp", 100.0 * h)),
            match x.headroom {
                Some(h) if h > 0.2 => " — far below the bound: the policies, not the tasks, are the limit here.",
                Some(_) => " — close to the bound: the budget itself is the limit.",
                None => ".",
            }
        ),
        None => format!(
            "These logs carry no min_turns, so U(T) is unknown at {lo}%: log each task's fewest turns to see how much of the gap is the budget's."
        ),
    };
    (budget_place(x, None), s)
}

fn flip(a: &Audit) -> Option<(Place, String)> {
    // The most negative non-degenerate cell of every pair's grid; without
    // one, the cell the adjustment changes most (alone p < 0.05, adjusted
    // not), else the smallest Δ.
    let tested = || a.pass.advantage.iter().filter(|x| x.test.p_value.is_some());
    let smallest = tested().min_by(|x, y| x.delta.total_cmp(&y.delta))?;
    let changed = tested()
        .filter(|x| {
            x.test.p_value.is_some_and(|p| p < 0.05) && x.test.p_adjusted.is_some_and(|p| p >= 0.05)
        })
        .min_by(|x, y| {
            let p = |a: &Advantage| a.test.p_value.unwrap_or(1.0);
            p(x).total_cmp(&p(y))
        });
    let x = match changed {
        Some(c) if smallest.delta >= 0.0 => c,
        _ => smallest,
    };
    let t = &x.test;
    let adj = a.settings.adjust.name();
    let fam = a
        .pass
        .advantage
        .iter()
        .filter(|y| {
            y.benchmark == x.benchmark
                && y.base == x.base
                && y.rl == x.rl
                && y.test.p_value.is_some()
        })
        .count();
    let s = if x.delta < 0.0 || x.test.p_value.is_some_and(|p| p < 0.05) {
        format!(
            "{}: {} → {} at K={}, {}% ({}): Δ {} {}, n={} tasks. Alone it has p {}; adjusted over the pair's {fam} cells ({adj}) p is {} — {}",
            if x.delta < 0.0 {
                "The most negative cell of the grids"
            } else {
                "No cell has RL behind base, but see what the adjustment does"
            },
            x.base,
            x.rl,
            x.k,
            x.level,
            x.mode.name(),
            pp(x.delta),
            signed_ci(x.ci, 100.0),
            x.tasks,
            cell_p_alone(t),
            cell_p(t),
            match t.verdict {
                crate::analysis::multiplicity::Verdict::Flip =>
                    "a flip that survives: RL is behind here.".to_string(),
                v if x.delta < 0.0 => format!(
                    "verdict {}: {}",
                    v.name(),
                    if x.ci.below_zero() {
                        "its own interval is below 0, but among this many cells that is what chance alone produces."
                    } else {
                        "not a flip one can claim."
                    }
                ),
                v => format!(
                    "verdict {}: alone it looks significant, but among this many cells one such p is what chance alone produces.",
                    v.name()
                ),
            }
        )
    } else {
        format!(
            "No cell of these grids has RL behind base: the smallest Δ is {} at {} → {}, K={}, {}% ({}).",
            pp(x.delta),
            x.base,
            x.rl,
            x.k,
            x.level,
            x.mode.name()
        )
    };
    Some((budget_place(x, Some(x.mode)), s))
}

fn modes(a: &Audit, lo: u32) -> Option<(Place, String)> {
    // The RL run with the largest |native − truncated| at the tightest
    // level, K = the first.
    let k = *a.pass.ks.first()?;
    let (g, pair) = a
        .pass
        .mode_gap
        .iter()
        .filter(|g| g.level == lo && g.k == k)
        .filter_map(|g| {
            let p = a
                .pairs
                .iter()
                .find(|p| p.benchmark == g.benchmark && p.rl == g.run)?;
            Some((g, p))
        })
        .max_by(|(x, _), (y, _)| x.diff.abs().total_cmp(&y.diff.abs()))?;
    let n = a
        .pass
        .cell(&g.benchmark, &g.run, k, lo, Some(Mode::Native))?;
    let s = format!(
        "{} at {lo}%, K={k}: natively (run with budget T) it passes {}; paired over tasks with its own full-budget rollouts cut at T, native − truncated is {} {} over n={} tasks{}",
        g.run,
        pct(n.value),
        pp(g.diff),
        signed_ci(g.ci, 100.0),
        g.tasks,
        if g.ci.above_zero() || g.ci.below_zero() {
            ": told its budget, it behaves differently from its own full-budget runs cut at T."
        } else {
            ": within noise of its own full-budget runs cut at T."
        }
    );
    Some((
        Place::Budget {
            pair: pair.clone(),
            k,
            level: lo,
            mode: Some(Mode::Native),
        },
        s,
    ))
}

fn row_of<T>(items: &[T], p: Option<&PairNames>, key: impl Fn(&T) -> (&str, &str, &str)) -> usize {
    p.and_then(|p| items.iter().position(|x| key(x) == p.key()))
        .unwrap_or(0)
}

fn matched(a: &Audit, p: Option<&PairNames>) -> (Place, String) {
    let row = row_of(&a.matched, p, |m| (&m.benchmark, &m.base, &m.rl));
    let s = match a.matched.get(row) {
        Some(m) => format!(
            "On {} matched states, {}'s next action scores higher than {}'s in {} of them, ties in {} and is worse in {}; mean score difference {}. {}",
            m.states,
            m.rl,
            m.base,
            pct(m.better),
            pct(m.tie),
            pct(m.worse),
            m.mean_diff
                .map_or("–".into(), |e| format!("{:+.4}", e.value)),
            match m.better {
                Some(b) if b < 0.5 => "Fewer than half: as in the paper, single steps did not get better.",
                Some(_) => "More than half: here single steps did get better, unlike in the paper.",
                None => "",
            }
        ),
        None => "No probes in these logs: matched-state experiments need `probe` records (SPEC §1.2).".into(),
    };
    let pair = a
        .matched
        .get(row)
        .map(|m| PairNames::of((&m.benchmark, &m.base, &m.rl)));
    (
        Place::Table {
            topic: Topic::Matched,
            row,
            pair,
        },
        s,
    )
}

fn recovery(a: &Audit, p: Option<&PairNames>) -> (Place, String) {
    let r = p.and_then(|p| {
        a.recovery
            .iter()
            .find(|r| (r.benchmark.as_str(), r.base.as_str(), r.rl.as_str()) == p.key())
    });
    let est = |e: &Option<crate::analysis::stats::Estimate>| pct(e.map(|e| e.value));
    let s = match r {
        Some(r) => format!(
            "On {} error states, {} picks the better action in {} of them; terminal success {} ({}) vs {} ({}), correction {} vs {}. {}",
            r.states,
            r.rl,
            pct(r.better),
            est(&r.terminal_success[0]),
            r.base,
            est(&r.terminal_success[1]),
            r.rl,
            est(&r.correction[0]),
            est(&r.correction[1]),
            "Compare with the matched states of the step before: the paper's RL is no better on ordinary states but clearly better right after an error."
        ),
        None => "No error-state probes for this pair: see the rollouts' natural-recovery rows, if their steps carry `error`.".into(),
    };
    (
        Place::Table {
            topic: Topic::Recovery,
            row: 0,
            pair: p.cloned(),
        },
        s,
    )
}

fn likelihood(a: &Audit, p: Option<&PairNames>) -> (Place, String) {
    let row = row_of(&a.likelihood, p, |l| (&l.benchmark, &l.base, &l.rl));
    let s = match a.likelihood.get(row) {
        Some(l) => {
            let mean = |s: &Option<crate::analysis::likelihood::Summary>| {
                s.as_ref().map_or("–".into(), |s| format!("{:.2}", s.mean))
            };
            let lm = &l.length_matched;
            format!(
                "Per step, base's NLL of {}'s actions is {} against {} for its own (overlap {}); summed over a successful trajectory the LLR is {} for {}'s trajectories and {} for {}'s. Length-matched ({} pairs over {} tasks): d {}.",
                l.rl,
                mean(&l.step_nll[1]),
                mean(&l.step_nll[0]),
                l.overlap.map_or("–".into(), |o| format!("{o:.3}")),
                mean(&l.llr[1]),
                l.rl,
                mean(&l.llr[0]),
                l.base,
                lm.pairs,
                lm.tasks,
                lm.mean_diff.map_or("–".into(), |e| format!(
                    "{}{}",
                    nats(&e),
                    match e.ci.bounds() {
                        Some((lo, _)) if lo > 0.0 =>
                            ", above zero: globally different, as in the paper",
                        Some(_) => ", an interval that reaches zero",
                        None => "",
                    }
                ))
            )
        }
        None => "No successful full-budget trajectories with log-probabilities under both runs: log `steps[].logp` to see this.".into(),
    };
    (
        Place::Table {
            topic: Topic::Likelihood,
            row,
            pair: p.cloned(),
        },
        s,
    )
}

fn training(a: &Audit) -> (Place, String) {
    // The run with the largest r_multi change (else the first trend).
    let row = a
        .dynamics
        .iter()
        .enumerate()
        .filter(|(_, t)| t.metric == "r_multi")
        .max_by(|(_, x), (_, y)| x.change.abs().total_cmp(&y.change.abs()))
        .map(|(i, _)| i);
    // Its r_single row is selected: the table keeps it and the r_multi
    // row above it in view, however short the screen.
    let single_row = row.and_then(|i| {
        let run = &a.dynamics[i].run;
        a.dynamics
            .iter()
            .position(|t| &t.run == run && t.metric == "r_single")
    });
    let s = match row.map(|i| &a.dynamics[i]) {
        Some(m) => {
            let single = a
                .dynamics
                .iter()
                .find(|t| t.run == m.run && t.metric == "r_single");
            let div = a.divergence.iter().any(|d| d.run == m.run && d.divergent);
            let mut s = format!(
                "{}: r_multi went from {:.4} to {:.4} over {} checkpoints (change {:+.4})",
                m.run, m.first, m.last, m.checkpoints, m.change
            );
            if let Some(r) = single {
                let _ = write!(
                    s,
                    ", r_single from {:.4} to {:.4} (change {:+.4})",
                    r.first, r.last, r.change
                );
            }
            let _ = write!(
                s,
                ". {}",
                if div {
                    "Divergent: trajectory reward up, single-step reward down, both significant — the paper's pattern."
                } else {
                    "Not divergent: the two do not move apart significantly here."
                }
            );
            s
        }
        None => "No checkpoint records with r_multi: log `checkpoint` records during training to see this.".into(),
    };
    (
        Place::Table {
            topic: Topic::Training,
            row: single_row.or(row).unwrap_or(0),
            pair: None,
        },
        s,
    )
}

fn budgetmix(a: &Audit, lo: u32, hi: u32) -> (Place, String) {
    let s = match a.budgetmix.first() {
        Some(b) => {
            let broken: Vec<&str> = b
                .rules
                .iter()
                .filter(|r| r.violations > 0)
                .map(|r| r.rule)
                .collect();
            let rolls = b.rules.first().map_or(0, |r| r.checked);
            let mut s = format!(
                "{}'s {} training rollouts {}.",
                b.run,
                rolls,
                if broken.is_empty() {
                    "keep all six rules".to_string()
                } else {
                    format!("break {}", broken.join(", "))
                }
            );
            let gain = |l: u32| b.gains.iter().find(|g| g.level == l);
            if let (Some(g), Some(h)) = (gain(lo), gain(hi)) {
                let _ = write!(
                    s,
                    " Against {}, Pass@(1,T) gains {} at {lo}% and {} at {hi}%{}",
                    g.vs,
                    pp(g.gain),
                    pp(h.gain),
                    if g.gain > h.gain {
                        ": the gain sits at tight budgets, as the paper reports."
                    } else {
                        ": no larger at tight budgets than at the full one."
                    }
                );
            }
            s
        }
        None => {
            let could: Vec<String> = a
                .unaudited_training()
                .map(|r| format!("{}'s {} training rollouts", r.run, r.rollouts))
                .collect();
            match could.is_empty() {
                true => "No BudgetMix runs here (method `budgetmix`, or --audit RUN): nothing to audit.".into(),
                false => format!(
                    "No run is audited as BudgetMix (method `budgetmix`, or --audit RUN), but {} could be: --audit RUN (A in the workbench) checks the six rules on them.",
                    could.join(", ")
                ),
            }
        }
    };
    // The first audited run, as the step reads it.
    (Place::BudgetMix { run: 0, row: 0 }, s)
}

fn cost(a: &Audit, p: Option<&PairNames>) -> (Place, String) {
    let bench = p
        .map(|p| p.benchmark.clone())
        .or_else(|| a.benchmarks().first().cloned());
    // The winner under the largest ceiling: the last winner interval.
    let w = a
        .cost_winners
        .iter()
        .rfind(|w| Some(&w.benchmark) == bench.as_ref());
    let s = match w {
        Some(w) => format!(
            "With every cell affordable, the best buy is {} at K={}, {}% ({}): Pass {} at an expected cost of {:.2} per task. ←→ lowers the ceiling: watch which run wins when money is short.",
            w.run,
            w.k,
            w.level,
            w.mode.name(),
            pct(Some(w.pass)),
            w.from_cost
        ),
        None => "No cost points: they need evaluation rollouts with turns (and tokens, for a token price).".into(),
    };
    (
        Place::Table {
            topic: Topic::Cost,
            row: 0,
            pair: p.cloned(),
        },
        s,
    )
}

/// The tour as the preface of report.md (`--headless --tour`).
pub fn markdown(a: &Audit) -> String {
    let mut md = String::from("## A guided tour of this report\n\n");
    md.push_str("Each step names one idea of the paper, explains it, and reads this audit's own numbers; the sections below hold the full tables.\n\n");
    for (i, s) in steps(a).iter().enumerate() {
        let _ = writeln!(md, "### {}. {}\n", i + 1, s.topic.title());
        let _ = writeln!(md, "{}\n", s.reading);
        let _ = writeln!(md, "_{}_\n", s.topic.idea());
    }
    md
}
