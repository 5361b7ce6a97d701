//! The workbench's panels: one enum, their titles and what each measures
//! (shown under the keys in the help overlay).

use crate::report::findings::Section;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Panel {
    Overview,
    Budget,
    Cost,
    Steps,
    Recovery,
    Likelihood,
    Training,
    BudgetMix,
}

impl Panel {
    pub const ALL: [Panel; 8] = [
        Panel::Overview,
        Panel::Budget,
        Panel::Cost,
        Panel::Steps,
        Panel::Recovery,
        Panel::Likelihood,
        Panel::Training,
        Panel::BudgetMix,
    ];

    pub fn index(self) -> usize {
        Panel::ALL.iter().position(|p| *p == self).unwrap_or(0)
    }

    /// The panel numbered `n` on screen (1–8).
    pub fn numbered(n: usize) -> Option<Panel> {
        n.checked_sub(1).and_then(|i| Panel::ALL.get(i).copied())
    }

    pub fn next(self) -> Panel {
        Panel::ALL[(self.index() + 1) % Panel::ALL.len()]
    }

    pub fn prev(self) -> Panel {
        Panel::ALL[(self.index() + Panel::ALL.len() - 1) % Panel::ALL.len()]
    }

    pub fn title(self) -> &'static str {
        match self {
            Panel::Overview => "Overview",
            Panel::Budget => "Budget",
            Panel::Cost => "Cost",
            Panel::Steps => "Steps",
            Panel::Recovery => "Recovery",
            Panel::Likelihood => "Likelihood",
            Panel::Training => "Training",
            Panel::BudgetMix => "BudgetMix",
        }
    }

    /// The panel that explains findings of a report section.
    pub fn of(section: Section) -> Panel {
        match section {
            Section::Budget => Panel::Budget,
            Section::Matched => Panel::Steps,
            Section::Recovery => Panel::Recovery,
            Section::Training => Panel::Training,
            Section::BudgetMix => Panel::BudgetMix,
        }
    }

    /// What the panel measures, how to read it, and the paper's figure.
    pub fn explain(self) -> &'static str {
        match self {
            Panel::Overview => "Overview — what was loaded (files, records by kind, records skipped with --lenient and why), which runs are compared, and the headline findings: significant flips, divergent training runs, BudgetMix violations. Enter on a finding jumps to its panel.",
            Panel::Budget => "Budget — Pass@(K,T): the chance that at least one of K attempts solves a task within T turns, T a percentage of each task's full budget (unbiased estimator 1 − C(n−c,K)/C(n,K), mean over tasks, 95% cluster-bootstrap CI over tasks). Each cell reads base% → RL% and Δ in points, one decimal, then n (native: rollouts that ran with budget T, the agent may have been told) or t (truncated: full-budget rollouts cut at T). By default each cell shows its preferred mode — native where it exists, else truncated; m cycles preferred → native → truncated. The last sign is the cell's verdict after the family-wise adjustment of the pair's whole grid (SPEC §4.2): ▲ ahead, ▼ flip (Δ < 0 with adjusted p < 0.05), ≈ equivalent (the 90% interval inside ±--min-effect), ? inconclusive, · degenerate; the selected-cell box gives se, p, adjusted p, the minimum detectable effect and, for an inconclusive cell, about how many tasks would resolve it. U(T) is the structural upper bound: the share of tasks solvable within T; the chart draws it per turn beside the Pass curves. Paper: at K=8 and 25% budget, BFCL-v3 base 3.0 vs GRPO 2.5; FrozenLake 30.3 vs 28.7 — RL's edge shrinks or flips when T is tight. Enter: the cell's tasks sorted by their share of Δ (the shares add up to Δ); Enter on a task: its rollouts in that cell (its n and c), then a trajectory step by step.",
            Panel::Cost => "Cost — every (run, K, level, mode) cell as a point: expected cost per task (K attempts in parallel × mean cost of one attempt; --cost turn=A,token=B) against Pass@(K,T). Points not dominated by a cheaper, better point of the same run form the frontier. ←→ moves a cost ceiling: the table shows each run's best cell under it and the winner. Question answered: is more K, more T, or the RL model the better buy?",
            Panel::Steps => "Steps — single-step quality on matched states: from the same state, does RL's next action score higher than base's? Score: the logged score, or exact Q* on FrozenLake (finite-horizon DP, γ from --gamma). Shares better/tie/worse with Wilson 95% CIs, mean score difference with a cluster bootstrap. By turn: RL's edge is expected to be small early and grow later. Paper: RL better in only 46.8% (DeepCoder-MT) and 42.8% (FrozenLake) of states.",
            Panel::Recovery => "Recovery — states right after an error action, the same prefixes for both runs. RL-better share, correction rate (candidates that fix the error) and terminal success (continuations that end in success), per run with CIs, RL − base paired. Paper: RL better in 65.7% (FrozenLake) / 67.3% (DeepCoder-MT) of error states; terminal success 51.3% vs 38.6%; BFCL correction 41.4% vs 27.2%.",
            Panel::Likelihood => "Likelihood — per-step NLL under base of each run's actions (overlapping histograms: RL's single actions stay plausible to base), trajectory log-likelihood ratio log π_RL − log π_base, and the length-matched difference (pairs within 10% output tokens, greedy by closeness) with its bootstrap CI drawn as an interval. Paper: step NLL 12.20 vs 10.25; LLR ≈228 vs ≈26; length-matched 185.9 and 805.8 nats, CIs above zero.",
            Panel::Training => "Training — each checkpoint metric against step with its least-squares slope and 95% t-interval. Divergent: r_multi (trajectory reward) rising while r_single (single-step reward) falls, both significant. Paper: DeepCoder-MT R_multi +0.331, R_single −0.097. ↑↓ picks the metric plotted.",
            Panel::BudgetMix => "BudgetMix — audits training rollouts of BudgetMix runs: budgets from the 10% candidates, drawn uniformly (chi-square test, flagged at p < 0.01), one budget per GRPO group, budget disclosed in every step, zero reward when out of budget, no success past the budget. Enter on a rule lists its violating records. The gain table compares Pass@(1,T) with the full-budget RL run (paper: +7.5, +5.3, +4.0 points at 25/50/75%, ±0 at 100%).",
        }
    }
}
