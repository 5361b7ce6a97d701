//! What each panel measures, how to read it, and the paper's figure to
//! compare with — shown under the key list in the help overlay.

pub const PANELS: [&str; 8] = [
    "Overview",
    "Budget",
    "Cost",
    "Steps",
    "Recovery",
    "Likelihood",
    "Training",
    "BudgetMix",
];

pub fn explain(panel: usize) -> &'static str {
    match panel {
        0 => "Overview — what was loaded (files, records by kind, records skipped with --lenient and why), which runs are compared, and the headline findings: significant flips, divergent training runs, BudgetMix violations. Enter on a finding jumps to its panel.",
        1 => "Budget — Pass@(K,T): the chance that at least one of K attempts solves a task within T turns, T a percentage of each task's full budget (unbiased estimator 1 − C(n−c,K)/C(n,K), mean over tasks, 95% cluster-bootstrap CI over tasks). Each cell reads base% → RL% and Δ in points; red cells are flips (Δ < 0), bold red ones significant (CI below 0). native: rollouts that ran with budget T; truncated: full-budget rollouts cut at T (m toggles). U(T) is the structural upper bound: the share of tasks solvable within T. Paper: at K=8 and 25% budget, BFCL-v3 base 3.0 vs GRPO 2.5; FrozenLake 30.3 vs 28.7 — RL's edge shrinks or flips when T is tight. Enter: the tasks behind a cell, sorted by their contribution to Δ; Enter on a task: its rollouts in that cell (its n and c), then a trajectory step by step.",
        2 => "Cost — every (run, K, level, mode) cell as a point: expected cost per task (K attempts in parallel × mean cost of one attempt; --cost turn=A,token=B) against Pass@(K,T). Points not dominated by a cheaper, better point of the same run form the frontier. ←→ moves a cost ceiling: the table shows each run's best cell under it and the winner. Question answered: is more K, more T, or the RL model the better buy?",
        3 => "Steps — single-step quality on matched states: from the same state, does RL's next action score higher than base's? Score: the logged score, or exact Q* on FrozenLake (finite-horizon DP, γ from --gamma). Shares better/tie/worse with Wilson 95% CIs, mean score difference with a cluster bootstrap. By turn: RL's edge is expected to be small early and grow later. Paper: RL better in only 46.8% (DeepCoder-MT) and 42.8% (FrozenLake) of states.",
        4 => "Recovery — states right after an error action, the same prefixes for both runs. RL-better share, correction rate (candidates that fix the error) and terminal success (continuations that end in success), per run with CIs, RL − base paired. Paper: RL better in 65.7% (FrozenLake) / 67.3% (DeepCoder-MT) of error states; terminal success 51.3% vs 38.6%; BFCL correction 41.4% vs 27.2%.",
        5 => "Likelihood — per-step NLL under base of each run's actions (overlapping histograms: RL's single actions stay plausible to base), trajectory log-likelihood ratio log π_RL − log π_base, and the length-matched difference (pairs within 10% output tokens, greedy by closeness) with its bootstrap CI drawn as an interval. Paper: step NLL 12.20 vs 10.25; LLR ≈228 vs ≈26; length-matched 185.9 and 805.8 nats, CIs above zero.",
        6 => "Training — each checkpoint metric against step with its least-squares slope and 95% t-interval. Divergent: r_multi (trajectory reward) rising while r_single (single-step reward) falls, both significant. Paper: DeepCoder-MT R_multi +0.331, R_single −0.097. ↑↓ picks the metric plotted.",
        7 => "BudgetMix — audits training rollouts of BudgetMix runs: budgets from the 10% candidates, drawn uniformly (chi-square test, flagged at p < 0.01), one budget per GRPO group, budget disclosed in every step, zero reward when out of budget, no success past the budget. Enter on a rule lists its violating records. The gain table compares Pass@(1,T) with the full-budget RL run (paper: +7.5, +5.3, +4.0 points at 25/50/75%, ±0 at 100%).",
        _ => "",
    }
}
