//! The workbench's panels: one enum, their titles and what each measures
//! (shown under the keys in the help overlay).

use crate::analysis::Part;
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

    /// The parts of the audit the panel reads: it shows once they are in.
    /// The Overview's headline findings draw on every part.
    pub fn parts(self) -> &'static [Part] {
        match self {
            Panel::Overview => &Part::ALL,
            // Its category grids and failure causes say when they are still
            // being computed: the grid need not wait for them.
            Panel::Budget => &[Part::Pass],
            Panel::Cost => &[Part::Cost],
            Panel::Steps => &[Part::Matched],
            Panel::Recovery => &[Part::Matched, Part::NaturalRecovery],
            Panel::Likelihood => &[Part::Likelihood, Part::LlrByTurn],
            Panel::Training => &[Part::Dynamics],
            Panel::BudgetMix => &[Part::BudgetMix],
        }
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

    /// What the panel measures and how to read it: the tour's explanation
    /// of each of its topics (one source, [`crate::tour`]), then how to use
    /// the panel here.
    pub fn explain(self) -> String {
        let mut parts: Vec<String> = crate::tour::Topic::of_panel(self.title())
            .into_iter()
            .map(|t| format!("{}: {}", t.title(), t.idea()))
            .collect();
        parts.push(self.usage().to_string());
        parts.join("\n\n")
    }

    /// How the panel shows its figures and what its keys do.
    fn usage(self) -> &'static str {
        match self {
            Panel::Overview => "Overview — what was loaded (files, records by kind, records skipped with --lenient and why), which runs are compared, and the headline findings: significant flips, divergent training runs, BudgetMix violations, category contrasts that differ — and a pair whose contrasts are too many for the resamples (\"contrasts cannot reach 0.05\": m contrasts at B resamples, the smallest adjusted p Holm can give, m × 2/(B+1), and the --resamples that would let one reach 0.05), and likewise a pair whose grid cells no adjusted p can bring below 0.05 (\"cells cannot reach 0.05\": the method, its m cells, B, the floor — 2/(B+1), with Holm m × 2/(B+1) — and the --resamples needed; there no verdict can be ahead or flip and --fail-on flip cannot trip). While the audit computes, the findings of the analyses that are in, then those to come. Enter on a finding lands where it is shown: a Budget finding on its own cell (pair, K, level and mode), a matched-state or recovery finding on its pair. t starts a guided tour through every panel.",
            Panel::Budget => "On screen: each cell reads base% → RL% and Δ in points, one decimal, then n (native) or t (truncated). By default each cell shows its preferred mode — native where it exists, else truncated; m cycles preferred → native → truncated; c restricts the grid to one task category — each cell that category's Δ with its own 95% interval, ↑ where the interval lies above 0, ↓ below (unadjusted; the contrasts are the adjusted tests) — and the selected cell then gives each run's Pass in that category, then that category's contrasts with the others, each with its Holm-adjusted p over the pair's m contrasts — never below m × 2/(B+1) with B resamples, so a p at that floor reads ≤ (more --resamples would tell how far below), and the Overview warns when the floor reaches 0.05. The last sign is the cell's verdict after adjustment (the grid's bottom border names each sign it shows: ▲ ahead, ▼ flip, ≈ equivalent, ? inconclusive, · degenerate, … while the tests compute); the selected-cell box gives se, p and adjusted p (each ≤ at the floor the resamples allow: 2/(B+1), and for the adjusted p under --adjust holm the pair's m cells times that), the minimum detectable effect and, for an inconclusive cell, about how many tasks would resolve it. The chart draws Pass per turn beside U(t). Enter: the cell's tasks sorted by their share of Δ (the shares add up to Δ), those pushing Δ the way it points first (an advantage's gains, a flip's losses); Enter on a task: its rollouts in that cell (its n and c), then a trajectory step by step; v: a base failure and an RL success side by side. While the audit computes, each benchmark shows once its cells are counted: their values first, every interval […] until its bootstrap is drawn (benchmark by benchmark, the one selected first; while this panel is on screen, the one selected shows provisional intervals ~[…] meanwhile — those of the first 1,000 resamples, what --resamples 1000 would report — never judged on), the verdicts (…) with the §4.2 tests after every benchmark's.",
            Panel::Cost => "On screen: the points of every cell, and under the current ceiling each run's best cell and the winner (the best point estimate, not a test between runs: read its interval beside the others'); ←→ moves the ceiling. A row's Pass is its Pass@(K,T) cell's, with that cell's interval and n tasks; its cost is the mean over the same tasks (a point figure, SPEC §3.1). Enter on a row: that cell on the Budget grid, in a pair holding the run (the one selected if it does). While the audit computes, the benchmark selected comes as soon as its Pass@(K,T) values are in (the frontier reads no interval), the others once every benchmark's values are, before their intervals are drawn (each […] until drawn; the benchmark selected then shows provisional intervals ~[…] — the first 1,000 resamples', what --resamples 1000 would report — the title saying so).",
            Panel::Steps => "On screen: one row per pair (states, better/tie/worse with Wilson CIs, the mean score difference with a cluster bootstrap), and, below, the pair under the cursor by turn position, each turn's share RL better with its Wilson interval and its mean difference with its cluster-bootstrap interval over the turn's tasks (a turn late in the game holds few states: read its interval, not its value), then early vs late — RL's edge is expected to be small early and grow later. Enter on a row: the pair's states themselves, in file order — task, state, source, turn, each run's mean candidate score q, RL − base and the verdict — and Enter on a state its probe, a candidate a row (its action, its score: the log's, or on FrozenLake the exact Q* it is judged by), the lake beside. While the audit computes, the panel shows once the matched states' values are in, every bootstrap interval […] until drawn (with this panel on screen they come first, before the rollouts are counted, and provisional intervals ~[…] — the first 1,000 resamples', what --resamples 1000 would report, the title saying so — before the rest are drawn).",
            Panel::Recovery => "On screen: for the selected pair (p), the natural-recovery rows of ordinary rollouts (Enter: both runs turn by turn — next_ok by the turn of the error event, recovered by the turn of a rollout's first error, each with its n; SPEC §4.6), their RL − base the mean over the n tasks where both runs have error events of each task's difference (paired; SPEC §4.6) — weighted by task, not by event or rollout, so it can differ from the difference of the pooled shares beside it; then RL better, correction and terminal success per run with CIs and RL − base, by source run and by turn (each row's n, and RL better with its Wilson interval); Enter on one of these: the pair's error states, each with its runs' q, correcting and terminal-success shares (their means are the rates above), and on a state its probe; without a pair, each run's natural recovery. While the audit computes, a pair's panel shows once the values of the matched states and error recovery are in, their bootstrap intervals […] until drawn, its natural-recovery rows reading computing… until their values are in, their intervals […] too (with this panel on screen, each ~[…] first: provisional, from the first 1,000 resamples — the title says so — until all are drawn); with this panel on screen the matched states' values come first, then natural recovery's values and provisional intervals, then the matched states' intervals, and the other analyses wait for natural recovery.",
            Panel::Likelihood => "On screen: one row per pair; the chart overlays the per-step NLL histograms (m: the trajectory LLRs instead); the line below draws the length-matched d with its interval, and the LLR by turn at the first and last turns; Enter on a row: the pair's step LLR (log π_RL − log π_base) turn by turn over each run's rollouts, each with its n steps and cluster-bootstrap interval over tasks (SPEC §4.5: where along a trajectory RL departs from base — the paper: late); with trajectory LLRs shown (m), Enter lists the length-matched pairs themselves, task by task — each pair's RL and base trajectory, their lengths in tokens and LLRs, and d, whose mean is the row's — and Enter on a pair opens the two trajectories side by side. While the audit computes, the panel shows once the likelihoods' values are in, the length-matched interval […] (then, with this panel on screen, ~[…]: provisional, from the first 1,000 resamples, the title and the line below saying so) and the LLR by turn computing… until drawn (with this panel on screen, a pair at a time: its turns once its rollouts are read, their intervals […], then ~[…] — the first 1,000 resamples' — until all are drawn, the drill's title saying so; a pair of more than 2 million (turn, task) cells comes whole); with this panel on screen the likelihoods begin at once, before the rollouts are counted and Pass@(K,T) (or, opened once Pass@(K,T) has begun, as soon as every benchmark's values are in), the other analyses waiting for them.",
            Panel::Training => "On screen: one row per (run, metric) with first, last, change, slope and its interval; ↑↓ picks the metric plotted; Enter lists its value at each checkpoint.",
            Panel::BudgetMix => "On screen: the rules of the audited run (p: the next audited run) with checked records, violations and the uniformity p-value; Enter on a rule lists its violating records. A run is audited when it declares method: budgetmix or --audit names it; A lists every run with training rollouts (a trainer's dump declares no method), and Enter on one audits it, or stops auditing it, recomputing in the background. Below, the gain table: per benchmark and level, the audited run's Pass@(1,T) minus the full-budget RL run's (a point figure), beside the two cells it subtracts, each with its interval, n tasks and mode; the mean rows say over how many benchmarks. While the audit computes, with this panel on screen the rules come first — before the rollout counts: they read the training rollouts alone — and the gain table says its gains are computing until Pass@(K,T)'s values are in.",
        }
    }
}
