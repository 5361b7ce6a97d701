//! Headline findings: what stands out in an audit, in a few lines — the
//! Overview panel of the workbench, the top of `report.md` and `findings`
//! in `report.json`, from one list so they always agree.

use crate::analysis::dynamics::DIVERGENT_MEANS;
use crate::analysis::{Audit, PairNames, Part};
use crate::tour::{budget_place, Place, Topic};

use super::format::{cell_p, contrast, pct, pp, signed_ci, undecided, wilson_pct};

/// How a finding reads: good news, neutral, a warning, or a problem.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    Good,
    Info,
    Warning,
    Problem,
}

impl Severity {
    pub fn name(self) -> &'static str {
        match self {
            Severity::Good => "good",
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Problem => "problem",
        }
    }
}

/// Which analysis a finding comes from (the workbench maps each to the
/// panel that explains it; report.md to its section).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Section {
    /// Pass@(K,T), the advantage grid and its flips (SPEC §2.1).
    Budget,
    /// Matched states (§2.2).
    Matched,
    /// Error recovery (§2.3).
    Recovery,
    /// Training dynamics (§2.5).
    Training,
    /// The BudgetMix audit (§2.6).
    BudgetMix,
}

/// One line of the headline.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    pub kind: &'static str,
    pub place: String,
    pub detail: String,
    pub severity: Severity,
    /// The analysis it comes from.
    pub section: Section,
    /// The part of the audit it reads (one only; see [`findings`]).
    pub part: Part,
    /// Where the workbench shows it (its cell, or its row and pair), if
    /// one place does.
    pub at: Option<Place>,
}

/// Where a cell of a pair's grid is, as a finding names it: the cell first
/// (a narrow column cuts the end), then the pair, which tells apart the
/// same cell of two pairs.
fn cell_place(
    (benchmark, base, rl): (&str, &str, &str),
    k: u64,
    level: u32,
    mode: crate::analysis::passkt::Mode,
) -> String {
    format!("{benchmark} K={k} {level}% {}, {base} → {rl}", mode.name())
}

/// The headline, in a fixed order. Each finding reads one part of the
/// audit, and a part once in is final (`run_audit_staged`; none is read
/// before), so a partial
/// audit's findings are the complete audit's findings of the parts it
/// holds, in the same order: the workbench's Overview shows them as they
/// come.
pub fn findings(a: &Audit) -> Vec<Finding> {
    let mut out = Vec::new();
    let delta = |adv: &crate::analysis::passkt::Advantage| {
        format!(
            "Δ {} {}, n={} tasks",
            pp(adv.delta),
            signed_ci(adv.ci, 100.0),
            adv.tasks
        )
    };
    use crate::analysis::multiplicity::Verdict;
    let place = |adv: &crate::analysis::passkt::Advantage| {
        cell_place(
            (&adv.benchmark, &adv.base, &adv.rl),
            adv.k,
            adv.level,
            adv.mode,
        )
    };
    let p_adj = |adv: &crate::analysis::passkt::Advantage| match adv.test.p_adjusted {
        Some(_) => format!(", adjusted p {}", cell_p(&adv.test)),
        None => String::new(),
    };
    for adv in a
        .pass
        .advantage
        .iter()
        .filter(|x| x.test.verdict == Verdict::Flip)
    {
        out.push(Finding {
            kind: "significant flip",
            place: place(adv),
            detail: format!("{}{}", delta(adv), p_adj(adv)),
            severity: Severity::Problem,
            section: Section::Budget,
            part: Part::Pass,
            at: Some(budget_place(adv, Some(adv.mode))),
        });
    }
    for adv in a
        .pass
        .advantage
        .iter()
        .filter(|x| x.significant_flip && x.test.verdict != Verdict::Flip)
    {
        out.push(Finding {
            kind: "flip, not after adjustment",
            place: place(adv),
            detail: format!("{}{}", delta(adv), p_adj(adv)),
            severity: Severity::Warning,
            section: Section::Budget,
            part: Part::Pass,
            at: Some(budget_place(adv, Some(adv.mode))),
        });
    }
    // A pair whose cells' adjusted p cannot fall below 0.05, whatever the
    // data: no verdict there can be ahead or flip, and `--fail-on flip`
    // cannot trip on it; the resamples are too few for the method.
    for f in a.pass.families_out_of_reach(a.settings.adjust, 0.05) {
        out.push(Finding {
            kind: "cells cannot reach 0.05",
            place: format!("{} {} → {}", f.first.benchmark, f.first.base, f.first.rl),
            detail: out_of_reach(a, &f),
            severity: Severity::Warning,
            section: Section::Budget,
            part: Part::Pass,
            at: Some(budget_place(f.first, Some(f.first.mode))),
        });
    }
    let flips = a
        .pass
        .advantage
        .iter()
        .filter(|x| x.flip && !x.significant_flip)
        .count();
    if flips > 0 {
        out.push(Finding {
            kind: "flips (not significant)",
            place: format!("{flips} cell(s)"),
            detail: "Δ < 0 with a CI reaching 0".into(),
            severity: Severity::Warning,
            section: Section::Budget,
            part: Part::Pass,
            at: None,
        });
    }
    // Tight budgets where the data cannot tell: the K=1 cells of every
    // level below 100%, preferred mode, inconclusive.
    for p in &a.pairs {
        for &level in a.settings.levels.iter().filter(|&&l| l < 100) {
            let Some(adv) = a.pass.advantage_at(p.key(), 1, level, None) else {
                continue;
            };
            if adv.test.verdict != Verdict::Inconclusive {
                continue;
            }
            out.push(Finding {
                kind: "inconclusive at a tight budget",
                place: place(adv),
                detail: format!(
                    "{}, {}",
                    delta(adv),
                    undecided(&adv.test, a.settings.adjust, a.settings.boot.resamples)
                ),
                severity: Severity::Info,
                section: Section::Budget,
                part: Part::Pass,
                at: Some(budget_place(adv, Some(adv.mode))),
            });
        }
    }
    for adv in a
        .pass
        .advantage
        .iter()
        .filter(|x| x.k == 1 && x.test.verdict == Verdict::Ahead)
        .take(6)
    {
        out.push(Finding {
            kind: "RL ahead",
            place: place(adv),
            detail: delta(adv),
            severity: Severity::Good,
            section: Section::Budget,
            part: Part::Pass,
            at: Some(budget_place(adv, Some(adv.mode))),
        });
    }
    // Failure anatomy: at a tight level, one cause dominating the gap
    // between the pair's failures (§4.4).
    for p in &a.pairs {
        for &level in a.settings.levels.iter().filter(|&&l| l < 100) {
            use crate::analysis::failures::{row, CAUSES};
            use crate::analysis::passkt::Mode;
            let get = |run: &str| {
                row(&a.failures, &p.benchmark, run, level, Mode::Native)
                    .or_else(|| row(&a.failures, &p.benchmark, run, level, Mode::Truncated))
            };
            let (Some(fb), Some(fr)) = (get(&p.base), get(&p.rl)) else {
                continue;
            };
            let (nb, nr) = (fb.counts.failures(), fr.counts.failures());
            if nb < 5 || nr < 5 {
                continue;
            }
            let share = |c: &crate::analysis::failures::Causes, i: usize, n: u64| {
                c.causes[i] as f64 / n as f64
            };
            let best = (0..CAUSES.len()).max_by(|&i, &j| {
                let d = |k| (share(&fb.counts, k, nb) - share(&fr.counts, k, nr)).abs();
                d(i).total_cmp(&d(j))
            });
            let Some(i) = best else { continue };
            let (sb, sr) = (share(&fb.counts, i, nb), share(&fr.counts, i, nr));
            if (sb - sr).abs() < 0.2 || sb.max(sr) < 0.5 {
                continue;
            }
            let what = match CAUSES[i].name() {
                "budget" => "running out of turns",
                "wrong" => "a wrong answer",
                "error" => "an environment or tool error",
                "invalid" => "an invalid action",
                _ => "other causes",
            };
            out.push(Finding {
                kind: "failure causes",
                place: format!(
                    "{} {}% {}, {} → {}",
                    p.benchmark,
                    level,
                    fb.mode.name(),
                    p.base,
                    p.rl
                ),
                detail: format!(
                    "{} fails by {what} in {:.0}% of its {nb} failures, {} {:.0}% of {nr}",
                    p.base,
                    100.0 * sb,
                    p.rl,
                    100.0 * sr
                ),
                severity: Severity::Info,
                section: Section::Budget,
                part: Part::Failures,
                // The causes are the level's, for any K: its first.
                at: Some(Place::Budget {
                    pair: p.clone(),
                    k: a.pass.ks.first().copied().unwrap_or(1),
                    level,
                    mode: Some(fb.mode),
                }),
            });
        }
    }
    // §4.6: RL recovers from its own errors more (or less) often.
    for d in a
        .natural_recovery_diff
        .iter()
        .filter(|d| crate::analysis::natural::significant(d))
    {
        if let Some(e) = d.recovered {
            out.push(Finding {
                kind: "error recovery in rollouts",
                place: format!("{} {} → {}", d.benchmark, d.base, d.rl),
                detail: format!(
                    "recovered after an error {} {}, n={} tasks",
                    pp(e.value),
                    signed_ci(e.ci, 100.0),
                    d.tasks
                ),
                severity: if e.value > 0.0 {
                    Severity::Good
                } else {
                    Severity::Warning
                },
                section: Section::Recovery,
                part: Part::NaturalRecovery,
                at: Some(Place::Table {
                    topic: Topic::Recovery,
                    row: 0,
                    pair: Some(PairNames::of((&d.benchmark, &d.base, &d.rl))),
                }),
            });
        }
    }
    // "RL better in x% [l, h] of n states", for matched and error states.
    let share = |kind, place, better, ci, n: u64, states, section, at| Finding {
        kind,
        place,
        detail: format!(
            "RL better {} {}, n={n} {states}",
            pct(better),
            wilson_pct(ci)
        ),
        severity: Severity::Info,
        section,
        part: Part::Matched,
        at: Some(at),
    };
    for (row, m) in a.matched.iter().enumerate() {
        let place = format!("{} {} → {}", m.benchmark, m.base, m.rl);
        let pair = PairNames::of((&m.benchmark, &m.base, &m.rl));
        out.push(share(
            "matched states",
            place,
            m.better,
            m.shares_ci[0],
            m.states,
            "states",
            Section::Matched,
            Place::Table {
                topic: Topic::Matched,
                row,
                pair: Some(pair),
            },
        ));
    }
    for r in &a.recovery {
        let place = format!("{} {} → {}", r.benchmark, r.base, r.rl);
        let pair = PairNames::of((&r.benchmark, &r.base, &r.rl));
        out.push(share(
            "error recovery",
            place,
            r.better,
            r.better_ci,
            r.scored,
            "error states",
            Section::Recovery,
            Place::Table {
                topic: Topic::Recovery,
                row: 0,
                pair: Some(pair),
            },
        ));
    }
    for d in a.divergence.iter().filter(|d| d.divergent) {
        out.push(Finding {
            kind: "divergent training",
            place: d.run.clone(),
            detail: format!("{DIVERGENT_MEANS} (both significant)"),
            severity: Severity::Warning,
            section: Section::Training,
            part: Part::Dynamics,
            // The run's r_multi row.
            at: a
                .dynamics
                .iter()
                .position(|t| t.run == d.run && t.metric == "r_multi")
                .map(|row| Place::Table {
                    topic: Topic::Training,
                    row,
                    pair: None,
                }),
        });
    }
    for (run, b) in a.budgetmix.iter().enumerate() {
        for (row, r) in b.rules.iter().enumerate().filter(|(_, r)| r.violations > 0) {
            out.push(Finding {
                kind: "BudgetMix violation",
                place: format!("{} {}", b.run, r.rule),
                detail: format!("{} of {} checked", r.violations, r.checked),
                severity: Severity::Problem,
                section: Section::BudgetMix,
                part: Part::BudgetMix,
                at: Some(Place::BudgetMix { run, row }),
            });
        }
    }
    // A family of contrasts whose floor is at 0.05 or above: Holm cannot
    // find any contrast, whatever the data; the resamples are too few for
    // its size.
    for f in a.categories.families.iter().filter(|f| f.p_floor >= 0.05) {
        out.push(Finding {
            kind: "contrasts cannot reach 0.05",
            place: format!("{} {} → {}", f.benchmark, f.base, f.rl),
            detail: format!(
                "m={}, B={}: p≥{:.4}; --resamples ≥{}",
                f.contrasts, a.settings.boot.resamples, f.p_floor, f.resamples_needed
            ),
            severity: Severity::Warning,
            section: Section::Budget,
            part: Part::Categories,
            // The family's first contrast's cell, where the Budget panel
            // lists its contrasts.
            at: a
                .categories
                .contrast
                .iter()
                .find(|c| (&c.benchmark, &c.base, &c.rl) == (&f.benchmark, &f.base, &f.rl))
                .map(|c| Place::Budget {
                    pair: PairNames::of((&c.benchmark, &c.base, &c.rl)),
                    k: c.k,
                    level: c.level,
                    mode: Some(c.mode),
                }),
        });
    }
    // Categories that differ (Holm over the pair's contrasts), last: a
    // grid of categories can hold dozens, and the headline's other lines
    // are one or two an analysis.
    for c in a
        .categories
        .contrast
        .iter()
        .filter(|c| c.p_adjusted.is_some_and(|p| p < 0.05))
    {
        out.push(Finding {
            kind: "categories differ",
            place: cell_place((&c.benchmark, &c.base, &c.rl), c.k, c.level, c.mode),
            detail: contrast(c),
            severity: Severity::Info,
            section: Section::Budget,
            part: Part::Categories,
            at: Some(Place::Budget {
                pair: PairNames::of((&c.benchmark, &c.base, &c.rl)),
                k: c.k,
                level: c.level,
                mode: Some(c.mode),
            }),
        });
    }
    // A part still computing may hold some of its rows (Pass@(K,T) hands
    // on each benchmark's before their §4.2 tests): its findings come when
    // it is in.
    out.retain(|f| !a.is_pending(f.part));
    out
}

/// Why a §4.2 family's cells cannot reach 0.05: `holm, m=40, B=1000:
/// p≥0.0799; --resamples ≥1600` (the findings and `--fail-on flip`'s note).
pub fn out_of_reach(a: &Audit, f: &crate::analysis::passkt::OutOfReach) -> String {
    format!(
        "{}, m={}, B={}: p≥{:.4}; --resamples ≥{}",
        a.settings.adjust.name(),
        f.cells,
        a.settings.boot.resamples,
        f.p_floor,
        f.resamples_needed
    )
}
