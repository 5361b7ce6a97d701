//! Command line (SPEC §3): clap parses, [`Options`] is what the rest reads.

use std::path::PathBuf;

use clap::Parser;

use crate::analysis::stats::{Bootstrap, CiMethod};
use crate::analysis::{CostModel, Settings};
use crate::error::{Error, Result};

#[derive(Parser, Debug)]
#[command(
    name = "rl-audit",
    version,
    about = "Audit multi-turn agentic RL: tight-budget Pass@(K,T), matched states, error recovery, likelihood, training dynamics, BudgetMix.",
    long_about = "Audit multi-turn agentic RL logs.\n\nWith no PATH, opens the bundled FrozenLake demo. With --headless, writes report.md, report.json and figures/ to --out instead of opening the terminal workbench.\n\nExit codes: 0 the audit ran; 1 a --fail-on gate tripped; 2 bad invocation or input, or an unwritable output directory; 3 an internal error (a bug)."
)]
pub struct Cli {
    /// Log files and directories (searched recursively for *.jsonl, *.ndjson, *.jsonl.gz, *.jsonl.zst, *.parquet).
    pub paths: Vec<PathBuf>,
    /// Write the report without a terminal.
    #[arg(long)]
    pub headless: bool,
    /// Report directory for --headless.
    #[arg(long, default_value = "rl-audit-report")]
    pub out: PathBuf,
    /// Also write every table as DIR/csv/<table>.csv.
    #[arg(long)]
    pub csv: bool,
    /// Sample counts K, e.g. 1,8 (default: 1, 2, 4, … up to the most rollouts in a cell).
    #[arg(long, value_name = "K,K,…")]
    pub k: Option<String>,
    /// Budget levels in percent of each task's full budget.
    #[arg(long, value_name = "L,L,…", default_value = "25,50,75,100")]
    pub levels: String,
    /// Compare two runs (repeatable); default: the run with method `base` against every other run.
    #[arg(long, value_name = "BASE:RL")]
    pub compare: Vec<String>,
    /// Audit this run's training rollouts as BudgetMix (repeatable).
    #[arg(long, value_name = "RUN")]
    pub audit: Vec<String>,
    /// The full-budget RL run BudgetMix gains are measured against.
    #[arg(long, value_name = "RUN")]
    pub budgetmix_vs: Option<String>,
    /// Keep equal numbers of matched states from the base and RL trajectories.
    #[arg(long)]
    pub balance: bool,
    /// Discount for FrozenLake Q* scoring.
    #[arg(long, default_value_t = 0.95)]
    pub gamma: f64,
    /// Bootstrap resamples per interval.
    #[arg(long, default_value_t = 10_000)]
    pub resamples: usize,
    /// Seed of every random draw (bootstrap, balancing).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Interval method: percentile or bca.
    #[arg(long, default_value = "percentile")]
    pub ci: String,
    /// Cost model: price of a turn and of a generated token.
    #[arg(long, default_value = "turn=1,token=0")]
    pub cost: String,
    /// Token budgets X for the token view (default: quartiles of full-budget token use).
    #[arg(long, value_name = "N,N,…")]
    pub token_budgets: Option<String>,
    /// Skip bad records (counted by reason) instead of stopping at the first.
    #[arg(long)]
    pub lenient: bool,
    /// TUI: pick up records appended to the files.
    #[arg(long)]
    pub follow: bool,
    /// Inspect logs: the run name (default: the eval's model).
    #[arg(long, value_name = "NAME")]
    pub run_label: Option<String>,
    /// Inspect logs: the turn budget the samples ran under (default: the message limit in turns).
    #[arg(long, value_name = "N")]
    pub budget: Option<u32>,
    /// Inspect logs: a numeric score at least this counts as success.
    #[arg(long, default_value_t = 1.0, value_name = "X")]
    pub success_threshold: f64,
    /// Read JSON Lines or Parquet with other field names through a mapping file (see README).
    #[arg(long, value_name = "MAPPING.toml")]
    pub map: Option<PathBuf>,
    /// Reduce the logs to mergeable per-task aggregates (Parquet) and exit;
    /// shards summarized in parallel elsewhere can then be audited together.
    #[arg(long, value_name = "OUT.parquet")]
    pub summarize: Option<PathBuf>,
    /// Headless gate (repeatable): flip, budgetmix, or "advantage<X@L".
    #[arg(long, value_name = "GATE")]
    pub fail_on: Vec<String>,
}

/// A `--fail-on` gate.
#[derive(Debug, Clone, PartialEq)]
pub enum Gate {
    /// Any significant flip.
    Flip,
    /// Any BudgetMix audit violation.
    Budgetmix,
    /// Δ at K=1, level L, preferred mode, below X percentage points.
    AdvantageBelow { points: f64, level: u32 },
}

/// What the program does, parsed and checked.
#[derive(Debug, Clone)]
pub struct Options {
    pub paths: Vec<PathBuf>,
    pub headless: bool,
    pub out: PathBuf,
    pub csv: bool,
    pub lenient: bool,
    pub follow: bool,
    pub gates: Vec<Gate>,
    pub map: Option<PathBuf>,
    pub summarize: Option<PathBuf>,
    pub inspect: crate::schema::inspect::InspectOptions,
    pub settings: Settings,
}

impl Options {
    /// Where the logs come from, for [`crate::loading`].
    pub fn source(&self) -> crate::loading::Source {
        crate::loading::Source {
            paths: self.paths.clone(),
            map: self.map.clone(),
            lenient: self.lenient,
            follow: self.follow,
            inspect: self.inspect.clone(),
            skip_dir: self.headless.then(|| self.out.clone()),
            cancel: Default::default(),
        }
    }
}

fn list<T: std::str::FromStr>(flag: &str, s: &str) -> Result<Vec<T>> {
    s.split(',')
        .map(|x| x.trim())
        .filter(|x| !x.is_empty())
        .map(|x| {
            x.parse::<T>()
                .map_err(|_| Error::Usage(format!("{flag}: {x:?} is not a valid number")))
        })
        .collect()
}

pub fn parse_gate(s: &str) -> Result<Gate> {
    match s.trim() {
        "flip" => Ok(Gate::Flip),
        "budgetmix" => Ok(Gate::Budgetmix),
        g => {
            let bad = || {
                Error::Usage(format!(
                    "--fail-on {g:?}: expected flip, budgetmix or advantage<X@L (e.g. advantage<0@25)"
                ))
            };
            let rest = g.strip_prefix("advantage<").ok_or_else(bad)?;
            let (x, l) = rest.split_once('@').ok_or_else(bad)?;
            let points: f64 = x.trim().parse().map_err(|_| bad())?;
            let level: u32 = l.trim().trim_end_matches('%').parse().map_err(|_| bad())?;
            if !points.is_finite() {
                return Err(bad());
            }
            Ok(Gate::AdvantageBelow { points, level })
        }
    }
}

pub fn parse_cost(s: &str) -> Result<CostModel> {
    let mut c = CostModel::default();
    for part in s.split(',').filter(|p| !p.trim().is_empty()) {
        let (k, v) = part
            .split_once('=')
            .ok_or_else(|| Error::Usage(format!("--cost: {part:?} is not name=value")))?;
        let v: f64 = v
            .trim()
            .parse()
            .ok()
            .filter(|v: &f64| v.is_finite() && *v >= 0.0)
            .ok_or_else(|| Error::Usage(format!("--cost: {v:?} is not a price ≥ 0")))?;
        match k.trim() {
            "turn" => c.turn = v,
            "token" => c.token = v,
            other => {
                return Err(Error::Usage(format!(
                    "--cost: unknown price {other:?} (turn, token)"
                )))
            }
        }
    }
    Ok(c)
}

impl Cli {
    pub fn into_options(self) -> Result<Options> {
        let levels: Vec<u32> = list("--levels", &self.levels)?;
        if levels.is_empty() || levels.iter().any(|&l| l == 0 || l > 100) {
            return Err(Error::Usage(
                "--levels: each level must be a percent from 1 to 100".into(),
            ));
        }
        let mut levels = levels;
        levels.sort_unstable();
        levels.dedup();
        let ks = match &self.k {
            Some(k) => {
                let mut ks: Vec<u64> = list("--k", k)?;
                if ks.is_empty() || ks.contains(&0) {
                    return Err(Error::Usage("--k: each K must be at least 1".into()));
                }
                ks.sort_unstable();
                ks.dedup();
                Some(ks)
            }
            None => None,
        };
        let compare = self
            .compare
            .iter()
            .map(|c| {
                c.split_once(':')
                    .filter(|(a, b)| !a.is_empty() && !b.is_empty())
                    .map(|(a, b)| (a.to_string(), b.to_string()))
                    .ok_or_else(|| Error::Usage(format!("--compare {c:?}: expected BASE:RL")))
            })
            .collect::<Result<Vec<_>>>()?;
        let method = match self.ci.as_str() {
            "percentile" => CiMethod::Percentile,
            "bca" => CiMethod::Bca,
            other => {
                return Err(Error::Usage(format!(
                    "--ci {other:?}: expected percentile or bca"
                )))
            }
        };
        if self.budget == Some(0) {
            return Err(Error::Usage("--budget must be at least 1".into()));
        }
        if self.resamples == 0 {
            return Err(Error::Usage("--resamples must be at least 1".into()));
        }
        if !(self.gamma > 0.0 && self.gamma <= 1.0) {
            return Err(Error::Usage("--gamma must be in (0, 1]".into()));
        }
        let token_budgets = match &self.token_budgets {
            Some(t) => Some(list::<u64>("--token-budgets", t)?),
            None => None,
        };
        let gates = self
            .fail_on
            .iter()
            .map(|g| parse_gate(g))
            .collect::<Result<Vec<_>>>()?;
        if !gates.is_empty() && !self.headless && self.summarize.is_none() {
            return Err(Error::Usage("--fail-on needs --headless".into()));
        }
        Ok(Options {
            paths: self.paths,
            headless: self.headless,
            out: self.out,
            csv: self.csv,
            lenient: self.lenient,
            follow: self.follow,
            gates,
            map: self.map,
            summarize: self.summarize,
            inspect: crate::schema::inspect::InspectOptions {
                run_label: self.run_label,
                budget: self.budget,
                success_threshold: self.success_threshold,
            },
            settings: Settings {
                levels,
                ks,
                compare,
                audit: self.audit,
                budgetmix_vs: self.budgetmix_vs,
                balance: self.balance,
                gamma: self.gamma,
                boot: Bootstrap {
                    resamples: self.resamples,
                    seed: self.seed,
                    method,
                    ..Default::default()
                },
                cost: parse_cost(&self.cost)?,
                token_budgets,
            },
        })
    }
}
