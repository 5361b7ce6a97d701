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
    /// Also write every table as DIR/csv/TABLE.csv.
    #[arg(long)]
    pub csv: bool,
    /// Sample counts K, e.g. 1,8 (default: 1, 2, 4, … up to the most rollouts in a cell).
    #[arg(long, value_name = "K,K,…", value_delimiter = ',', value_parser = clap::value_parser!(u64).range(1..))]
    pub k: Option<Vec<u64>>,
    /// Budget levels in percent of each task's full budget.
    #[arg(long, value_name = "L,L,…", value_delimiter = ',', default_values_t = [25u32, 50, 75, 100], value_parser = clap::value_parser!(u32).range(1..=100))]
    pub levels: Vec<u32>,
    /// Compare two runs (repeatable); default: the run with method `base` against every other run. In the workbench, P picks pairs too.
    #[arg(long, value_name = "BASE:RL", value_parser = parse_pair)]
    pub compare: Vec<(String, String)>,
    /// Audit this run's training rollouts as BudgetMix (repeatable).
    #[arg(long, value_name = "RUN")]
    pub audit: Vec<String>,
    /// The full-budget RL run BudgetMix gains are measured against.
    #[arg(long, value_name = "RUN")]
    pub budgetmix_vs: Option<String>,
    /// Keep equal numbers of matched states from the base and RL trajectories.
    #[arg(long)]
    pub balance: bool,
    /// Discount for FrozenLake Q* scoring, in (0, 1].
    #[arg(long, default_value_t = 0.95, value_parser = parse_gamma)]
    pub gamma: f64,
    /// Bootstrap resamples per interval.
    ///
    /// They bound what a p-value can resolve: none falls below 2/(B+1), and
    /// Holm over m cells or contrasts multiplies that by m (a grid of 35
    /// cells under --adjust holm needs B ≥ 1,400 for any adjusted p below
    /// 0.05). The report warns, and says how many would do, where a floor
    /// reaches 0.05.
    #[arg(long, default_value_t = 10_000, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub resamples: usize,
    /// Seed of every random draw (bootstrap, balancing).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Interval method.
    #[arg(long, value_enum, default_value_t = CiChoice::Percentile)]
    pub ci: CiChoice,
    /// Family-wise adjustment of the advantage cells' p-values (SPEC §4.2).
    #[arg(long, value_enum, default_value_t = AdjustChoice::Maxt)]
    pub adjust: AdjustChoice,
    /// Equivalence margin in percentage points: a cell whose 90% interval lies
    /// within ±P is `equivalent` (TOST at 5%).
    #[arg(long, value_name = "P", default_value_t = 5.0, value_parser = parse_min_effect)]
    pub min_effect: f64,
    /// Cost model: price of a turn and of a generated token.
    #[arg(long, default_value = "turn=1,token=0", value_parser = parse_cost)]
    pub cost: CostModel,
    /// Token budgets X for the token view (default: quartiles of full-budget token use).
    #[arg(long, value_name = "N,N,…", value_delimiter = ',')]
    pub token_budgets: Option<Vec<u64>>,
    /// Skip bad records (counted by reason) instead of stopping at the first.
    #[arg(long)]
    pub lenient: bool,
    /// TUI: pick up records appended to the files.
    #[arg(long)]
    pub follow: bool,
    /// Inspect logs and rLLM episodes (and a mapping's `run_label`): the run name (default: the eval's model).
    #[arg(long, value_name = "NAME")]
    pub run_label: Option<String>,
    /// Inspect logs and rLLM episodes: the turn budget the samples ran under (default: the message limit in turns; for rLLM, the most turns seen for the task).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub budget: Option<u32>,
    /// Inspect logs: a numeric score at least this counts as success.
    #[arg(long, default_value_t = 1.0, value_name = "X")]
    pub success_threshold: f64,
    /// Read JSON Lines or Parquet with other field names through a mapping file (see README).
    #[arg(long, value_name = "MAPPING.toml")]
    pub map: Option<PathBuf>,
    /// Also read the log files listed in LIST (one path per line), as files
    /// found in a folder: a shard of many files (see integrations/ray).
    #[arg(long, value_name = "LIST")]
    pub files_from: Option<PathBuf>,
    /// Summarize the logs and exit: OUT.jsonl.zst holds every number each
    /// analysis reads (no texts), OUT.parquet only the Pass@(K,T) per-task
    /// aggregates; shards summarized apart are then audited together.
    #[arg(long, value_name = "OUT.jsonl.zst|OUT.parquet", value_parser = parse_summary_name)]
    pub summarize: Option<PathBuf>,
    /// A behaviour split (repeatable): rollouts with an action matching the
    /// regular expression, and how often they succeed against the others.
    #[arg(long, value_name = "REGEX", value_parser = parse_regex)]
    pub grep: Vec<String>,
    /// A guided tour through the analyses on what is loaded: the workbench
    /// opens on its first step (n next, N back, q leaves); with --headless,
    /// report.md starts with the same tour.
    #[arg(long)]
    pub tour: bool,
    /// The workbench leaves the mouse to the terminal (its own text
    /// selection) instead of taking the wheel and clicks on the tabs.
    #[arg(long)]
    pub no_mouse: bool,
    /// Headless gate (repeatable): flip (after adjustment), flip-unadjusted, budgetmix, "inconclusive@L" or "advantage<X@L".
    #[arg(long, value_name = "GATE", value_parser = parse_gate)]
    pub fail_on: Vec<Gate>,
}

/// `--ci`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CiChoice {
    Percentile,
    Bca,
}

/// `--adjust`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum AdjustChoice {
    /// single-step max-|t| (Romano–Wolf), with simultaneous intervals
    Maxt,
    /// Holm's step-down
    Holm,
    /// Benjamini–Hochberg step-up
    Bh,
    /// no adjustment
    None,
}

fn parse_min_effect(s: &str) -> std::result::Result<f64, String> {
    s.parse::<f64>()
        .ok()
        .filter(|x| x.is_finite() && *x > 0.0 && *x < 100.0)
        .ok_or_else(|| format!("{s:?}: the margin is in points, more than 0 and less than 100"))
}

/// A `--fail-on` gate.
#[derive(Debug, Clone, PartialEq)]
pub enum Gate {
    /// Any flip significant after the family-wise adjustment (§4.2).
    Flip,
    /// Any flip whose own 95% interval lies below 0 (no adjustment).
    FlipUnadjusted,
    /// The K=1 cell at level L (preferred mode) is inconclusive for a pair.
    Inconclusive { level: u32 },
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
    pub files_from: Option<PathBuf>,
    pub summarize: Option<PathBuf>,
    pub tour: bool,
    /// `--no-mouse`.
    pub no_mouse: bool,
    pub inspect: crate::schema::inspect::InspectOptions,
    pub settings: Settings,
}

impl Options {
    /// Where the logs come from, for [`crate::loading`].
    pub fn source(&self) -> crate::loading::Source {
        crate::loading::Source {
            paths: self.paths.clone(),
            files_from: self.files_from.clone(),
            map: self.map.clone(),
            lenient: self.lenient,
            follow: self.follow,
            inspect: self.inspect.clone(),
            skip_dir: self.headless.then(|| self.out.clone()),
            cancel: Default::default(),
            // A summary holds every number; an audit only what it reads.
            all_logps: self
                .summarize
                .as_deref()
                .is_some_and(crate::schema::summary::is_summary_name),
            // Read once, by the likelihood analyses: out of memory from the
            // load on (a `--follow` set stays in memory, to merge into).
            spill_logps: true,
        }
    }
}

fn parse_pair(s: &str) -> std::result::Result<(String, String), String> {
    s.split_once(':')
        .filter(|(a, b)| !a.is_empty() && !b.is_empty())
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .ok_or_else(|| format!("{s:?}: expected BASE:RL"))
        .and_then(|(a, b)| match a == b {
            true => Err(format!("{s:?}: BASE and RL are the same run")),
            false => Ok((a, b)),
        })
}

/// `--summarize OUT`: a name the load finds again and whose form it says
/// (a summary the audit could not read back would be silently lost).
fn parse_summary_name(s: &str) -> std::result::Result<PathBuf, String> {
    let p = PathBuf::from(s);
    let parquet = s.to_ascii_lowercase().ends_with(".parquet");
    match crate::schema::summary::is_summary_name(&p) || parquet {
        true => Ok(p),
        false => Err(format!(
            "{s:?}: expected a name ending in .jsonl.zst, .jsonl.gz or .jsonl (the summary) or .parquet (the Pass@(K,T) aggregates)"
        )),
    }
}

fn parse_regex(s: &str) -> std::result::Result<String, String> {
    regex::Regex::new(s)
        .map(|_| s.to_string())
        .map_err(|e| format!("{s:?} is not a regular expression: {e}"))
}

fn parse_gamma(s: &str) -> std::result::Result<f64, String> {
    s.parse::<f64>()
        .ok()
        .filter(|g| *g > 0.0 && *g <= 1.0)
        .ok_or_else(|| format!("{s:?}: γ must be in (0, 1]"))
}

impl Gate {
    /// The gate as `--fail-on` writes it ([`parse_gate`] reads it back).
    pub fn name(&self) -> String {
        match self {
            Gate::Flip => "flip".into(),
            Gate::FlipUnadjusted => "flip-unadjusted".into(),
            Gate::Inconclusive { level } => format!("inconclusive@{level}"),
            Gate::Budgetmix => "budgetmix".into(),
            Gate::AdvantageBelow { points, level } => format!("advantage<{points}@{level}"),
        }
    }
}

pub fn parse_gate(s: &str) -> std::result::Result<Gate, String> {
    match s.trim() {
        "flip" => Ok(Gate::Flip),
        "flip-unadjusted" => Ok(Gate::FlipUnadjusted),
        "budgetmix" => Ok(Gate::Budgetmix),
        g => {
            let bad = || {
                format!("{g:?}: expected flip, flip-unadjusted, budgetmix, inconclusive@L or advantage<X@L (e.g. advantage<0@25)")
            };
            if let Some(l) = g.strip_prefix("inconclusive@") {
                let level: u32 = l.trim().trim_end_matches('%').parse().map_err(|_| bad())?;
                if !(1..=100).contains(&level) {
                    return Err(bad());
                }
                return Ok(Gate::Inconclusive { level });
            }
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

pub fn parse_cost(s: &str) -> std::result::Result<CostModel, String> {
    let mut c = CostModel::default();
    for part in s.split(',').filter(|p| !p.trim().is_empty()) {
        let (k, v) = part
            .split_once('=')
            .ok_or_else(|| format!("{part:?} is not name=value"))?;
        let v: f64 = v
            .trim()
            .parse()
            .ok()
            .filter(|v: &f64| v.is_finite() && *v >= 0.0)
            .ok_or_else(|| format!("{v:?} is not a price ≥ 0"))?;
        match k.trim() {
            "turn" => c.turn = v,
            "token" => c.token = v,
            other => return Err(format!("unknown price {other:?} (turn, token)")),
        }
    }
    Ok(c)
}

impl Cli {
    pub fn into_options(self) -> Result<Options> {
        let mut levels = self.levels;
        levels.sort_unstable();
        levels.dedup();
        let ks = self.k.map(|mut ks| {
            ks.sort_unstable();
            ks.dedup();
            ks
        });
        let method = match self.ci {
            CiChoice::Percentile => CiMethod::Percentile,
            CiChoice::Bca => CiMethod::Bca,
        };
        let gates = self.fail_on;
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
            files_from: self.files_from,
            summarize: self.summarize,
            tour: self.tour,
            no_mouse: self.no_mouse,
            inspect: crate::schema::inspect::InspectOptions {
                run_label: self.run_label,
                budget: self.budget,
                success_threshold: self.success_threshold,
            },
            settings: Settings {
                levels,
                ks,
                compare: self.compare,
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
                cost: self.cost,
                token_budgets: self.token_budgets,
                adjust: match self.adjust {
                    AdjustChoice::Maxt => crate::analysis::multiplicity::Adjust::MaxT,
                    AdjustChoice::Holm => crate::analysis::multiplicity::Adjust::Holm,
                    AdjustChoice::Bh => crate::analysis::multiplicity::Adjust::Bh,
                    AdjustChoice::None => crate::analysis::multiplicity::Adjust::None,
                },
                min_effect: self.min_effect / 100.0,
                grep: self.grep,
                focus: Default::default(),
            },
        })
    }
}
