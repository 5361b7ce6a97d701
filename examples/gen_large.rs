//! Writes a large, realistic log set for benchmarks: N evaluation
//! trajectories (default 1,000,000; ~8 steps each with log-probabilities
//! under two runs) over four benchmarks and three runs, at full budget and
//! natively at 25/50/75%, plus probes, checkpoints and BudgetMix training
//! rollouts — as JSON Lines and as Parquet. Deterministic (seeded).
//!
//!     cargo run --release --example gen_large -- [N] [OUTDIR] [STEPS] [TEXT]
//!
//! STEPS scales every budget (evaluation and training) by STEPS / 8, so
//! rollouts take about STEPS steps each; without it the set is exactly the
//! one this example always wrote. TEXT (characters) makes every step's
//! observation that long and its action a quarter of it, as real agents'
//! are (without it: `call_3()`, `ok 5`); `-` for STEPS keeps the budgets.
//!
//! OUTDIR/jsonl/*.jsonl and OUTDIR/parquet/*.parquet hold the same records.

use std::fmt::Write as _;
use std::io::Write;
use std::path::{Path, PathBuf};

use polars::prelude::*;
use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};

const BENCHES: [&str; 4] = ["bfcl-v3", "deepcoder-mt", "intercode-sql", "terminal"];
const RUNS: [(&str, &str, f64); 3] = [
    ("qwen3-4b", "base", 0.45),
    ("qwen3-4b-grpo", "grpo", 0.62),
    ("qwen3-4b-budgetmix", "budgetmix", 0.58),
];
const SAMPLES: usize = 8;
const CHUNK: usize = 100_000;

struct Traj {
    run: &'static str,
    method: &'static str,
    bench: &'static str,
    task: String,
    sample: usize,
    budget: u32,
    max_budget: u32,
    min_turns: u32,
    success_turn: Option<u32>,
    turns: u32,
    train: Option<(u32, String)>,
    steps: Vec<Step>,
}

/// TEXT, when given.
static TEXT: std::sync::OnceLock<Option<usize>> = std::sync::OnceLock::new();

/// `base` padded with lorem ipsum to `len` characters.
fn padded(base: String, len: usize) -> String {
    const FILL: &str = " lorem ipsum dolor sit amet, consectetur adipiscing elit,";
    let mut s = base;
    while s.len() < len {
        s.push_str(FILL);
    }
    s.truncate(len.max(1));
    s
}

/// Step `i`'s action.
fn action(i: usize) -> String {
    let a = format!("call_{}()", i % 7);
    match TEXT.get().copied().flatten() {
        Some(n) => padded(a, n / 4),
        None => a,
    }
}

/// Step `i`'s observation.
fn observation(i: usize) -> String {
    let o = format!("ok {i}");
    match TEXT.get().copied().flatten() {
        Some(n) => padded(o, n),
        None => o,
    }
}

struct Step {
    tokens: u32,
    logp_base: f64,
    logp_rl: f64,
    error: bool,
}

fn simulate(
    rng: &mut Xoshiro256PlusPlus,
    run: usize,
    difficulty: f64,
    budget: u32,
    max_budget: u32,
    min_turns: u32,
) -> (Option<u32>, u32, Vec<Step>) {
    let (_, method, skill) = RUNS[run];
    let tight = budget < max_budget;
    // Budget-aware training helps at tight budgets; full-budget RL drifts long.
    let skill = match (method, tight) {
        ("budgetmix", true) => skill + 0.05,
        ("grpo", true) => skill - 0.08,
        _ => skill,
    };
    let p = (skill * (1.0 - 0.7 * difficulty)).clamp(0.02, 0.98);
    let extra = (rng.random::<f64>() * (max_budget - min_turns + 1) as f64 * (1.0 - p)) as u32;
    let need = min_turns + extra;
    let success = rng.random::<f64>() < p + 0.2 && need <= budget;
    let turns = if success {
        need
    } else {
        budget.min(need + rng.random_range(0..3))
    };
    let steps = (0..turns)
        .map(|_| {
            let error = rng.random::<f64>() < 0.12;
            let base_nll = 8.0 + 6.0 * rng.random::<f64>() + if error { 4.0 } else { 0.0 };
            let shift = if run == 0 { -1.5 } else { 2.0 };
            // Rounded as the JSON writer prints them, so both formats hold equal values.
            let r3 = |x: f64| (x * 1000.0).round() / 1000.0;
            Step {
                tokens: 60 + rng.random_range(0..300),
                logp_base: r3(-(base_nll + if run == 0 { 0.0 } else { 1.5 })),
                logp_rl: r3(-(base_nll - shift).max(0.5)),
                error,
            }
        })
        .collect();
    (success.then_some(turns), turns, steps)
}

fn json_line(t: &Traj, out: &mut String) {
    let _ = write!(
        out,
        r#"{{"run":"{}","method":"{}","benchmark":"{}","task":"{}","sample":{},"budget":{},"max_budget":{},"min_turns":{},"success":{},"turns":{}"#,
        t.run,
        t.method,
        t.bench,
        t.task,
        t.sample,
        t.budget,
        t.max_budget,
        t.min_turns,
        t.success_turn.is_some(),
        t.turns
    );
    if let Some(s) = t.success_turn {
        let _ = write!(out, r#","success_turn":{s},"reward":1.0"#);
    } else {
        out.push_str(r#","reward":0.0"#);
    }
    if let Some((step, group)) = &t.train {
        let _ = write!(out, r#","train_step":{step},"group":"{group}""#);
    }
    out.push_str(r#","steps":["#);
    for (i, s) in t.steps.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let _ = write!(
            out,
            r#"{{"turn":{},"action":"{}","observation":"{}","output_tokens":{},"logp":{{"qwen3-4b":{:.3},"qwen3-4b-grpo":{:.3}}},"error":{}"#,
            i + 1,
            action(i),
            observation(i),
            s.tokens,
            s.logp_base,
            s.logp_rl,
            s.error
        );
        if t.train.is_some() {
            let _ = write!(
                out,
                r#","budget_total":{},"budget_remaining":{}"#,
                t.budget,
                t.budget - i as u32
            );
        }
        out.push('}');
    }
    out.push_str("]}\n");
}

/// The same trajectories as one Parquet file: `steps` is a list of structs,
/// `logp` a list of `{run, value}` structs.
fn parquet(trajs: &[Traj], path: &Path) -> PolarsResult<()> {
    let n_steps: usize = trajs.iter().map(|t| t.steps.len()).sum();
    let mut turn = Vec::with_capacity(n_steps);
    let mut actions = Vec::with_capacity(n_steps);
    let mut observations = Vec::with_capacity(n_steps);
    let mut tokens = Vec::with_capacity(n_steps);
    let mut error = Vec::with_capacity(n_steps);
    let mut lp_run: Vec<&str> = Vec::with_capacity(2 * n_steps);
    let mut lp_val = Vec::with_capacity(2 * n_steps);
    let mut total = Vec::with_capacity(n_steps);
    let mut remaining = Vec::with_capacity(n_steps);
    for t in trajs {
        for (i, s) in t.steps.iter().enumerate() {
            turn.push(i as i64 + 1);
            actions.push(action(i));
            observations.push(observation(i));
            tokens.push(s.tokens as i64);
            error.push(s.error);
            lp_run.extend(["qwen3-4b", "qwen3-4b-grpo"]);
            lp_val.extend([s.logp_base, s.logp_rl]);
            total.push(t.train.as_ref().map(|_| t.budget as i64));
            remaining.push(t.train.as_ref().map(|_| t.budget as i64 - i as i64));
        }
    }
    let lp_struct = StructChunked::from_series(
        "logp".into(),
        lp_run.len(),
        [
            Series::new("run".into(), lp_run),
            Series::new("value".into(), lp_val),
        ]
        .iter(),
    )?
    .into_series();
    let logp_lists: ListChunked = (0..n_steps)
        .map(|i| Some(lp_struct.slice(2 * i as i64, 2)))
        .collect();
    let step_struct = StructChunked::from_series(
        "steps".into(),
        n_steps,
        [
            Series::new("turn".into(), turn),
            Series::new("action".into(), actions),
            Series::new("observation".into(), observations),
            Series::new("output_tokens".into(), tokens),
            logp_lists.with_name("logp".into()).into_series(),
            Series::new("error".into(), error),
            Series::new("budget_total".into(), total),
            Series::new("budget_remaining".into(), remaining),
        ]
        .iter(),
    )?
    .into_series();
    let mut offset = 0i64;
    let steps: ListChunked = trajs
        .iter()
        .map(|t| {
            let s = step_struct.slice(offset, t.steps.len());
            offset += t.steps.len() as i64;
            Some(s)
        })
        .collect();
    let col_str = |name: &str, f: &dyn Fn(&Traj) -> String| {
        Column::new(name.into(), trajs.iter().map(f).collect::<Vec<_>>())
    };
    let col_i64 = |name: &str, f: &dyn Fn(&Traj) -> Option<i64>| {
        Column::new(name.into(), trajs.iter().map(f).collect::<Vec<_>>())
    };
    let mut columns = vec![
        col_str("run", &|t| t.run.into()),
        col_str("method", &|t| t.method.into()),
        col_str("benchmark", &|t| t.bench.into()),
        col_str("task", &|t| t.task.clone()),
        col_i64("sample", &|t| Some(t.sample as i64)),
        col_i64("budget", &|t| Some(t.budget as i64)),
        col_i64("max_budget", &|t| Some(t.max_budget as i64)),
        col_i64("min_turns", &|t| Some(t.min_turns as i64)),
        Column::new(
            "success".into(),
            trajs
                .iter()
                .map(|t| t.success_turn.is_some())
                .collect::<Vec<_>>(),
        ),
        col_i64("turns", &|t| Some(t.turns as i64)),
        col_i64("success_turn", &|t| t.success_turn.map(|s| s as i64)),
        Column::new(
            "reward".into(),
            trajs
                .iter()
                .map(|t| if t.success_turn.is_some() { 1.0 } else { 0.0 })
                .collect::<Vec<f64>>(),
        ),
    ];
    if trajs.iter().any(|t| t.train.is_some()) {
        columns.push(col_i64("train_step", &|t| {
            t.train.as_ref().map(|x| x.0 as i64)
        }));
        columns.push(Column::new(
            "group".into(),
            trajs
                .iter()
                .map(|t| t.train.as_ref().map(|x| x.1.clone()))
                .collect::<Vec<_>>(),
        ));
    }
    columns.push(steps.with_name("steps".into()).into_series().into());
    let mut df = DataFrame::new_infer_height(columns)?;
    let f =
        std::fs::File::create(path).map_err(|e| PolarsError::ComputeError(e.to_string().into()))?;
    ParquetWriter::new(f)
        .with_compression(ParquetCompression::Zstd(None))
        .finish(&mut df)?;
    Ok(())
}

fn flush(trajs: &mut Vec<Traj>, name: &str, part: usize, out: &Path) {
    if trajs.is_empty() {
        return;
    }
    let mut text = String::with_capacity(trajs.len() * 1500);
    for t in trajs.iter() {
        json_line(t, &mut text);
    }
    let jsonl = out.join("jsonl").join(format!("{name}-{part:03}.jsonl"));
    std::fs::File::create(&jsonl)
        .and_then(|mut f| f.write_all(text.as_bytes()))
        .expect("write JSONL");
    parquet(
        trajs,
        &out.join("parquet")
            .join(format!("{name}-{part:03}.parquet")),
    )
    .expect("write Parquet");
    trajs.clear();
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n: usize = args
        .get(1)
        .and_then(|x| x.parse().ok())
        .unwrap_or(1_000_000);
    let out = PathBuf::from(args.get(2).cloned().unwrap_or_else(|| "large-logs".into()));
    let steps: Option<u32> = args
        .get(3)
        .filter(|x| *x != "-")
        .map(|x| x.parse().expect("STEPS: a whole number"));
    let text: Option<usize> = args
        .get(4)
        .map(|x| x.parse().expect("TEXT: a whole number of characters"));
    TEXT.set(text).expect("set once");
    // Budgets of ~8-step rollouts, scaled to `steps`.
    let scaled = |b: u32| steps.map_or(b, |s| (b * s).div_ceil(8).max(1));
    for d in ["jsonl", "parquet"] {
        std::fs::create_dir_all(out.join(d)).expect("create output directory");
    }
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
    let per_task = RUNS.len() * SAMPLES * 4; // 4 budgets: full + 3 native levels
    let tasks_per_bench = (n / per_task / BENCHES.len()).max(1);
    let mut buf = Vec::with_capacity(CHUNK);
    let (mut part, mut written) = (0, 0usize);
    let mut probes = String::new();
    'outer: for bench in BENCHES {
        for ti in 0..tasks_per_bench {
            let difficulty: f64 = rng.random();
            let max_budget = scaled(14 + rng.random_range(0..11u32));
            let min_turns = 1 + (difficulty * (max_budget - 1) as f64 * 0.6) as u32;
            let task = format!("{bench}-{ti:05}");
            for (ri, (run, method, _)) in RUNS.iter().enumerate() {
                let mut budgets = vec![max_budget];
                for l in [25u32, 50, 75] {
                    let b = (l * max_budget).div_ceil(100).max(1);
                    if !budgets.contains(&b) {
                        budgets.push(b);
                    }
                }
                for budget in budgets {
                    for sample in 0..SAMPLES {
                        let (success_turn, turns, steps) =
                            simulate(&mut rng, ri, difficulty, budget, max_budget, min_turns);
                        buf.push(Traj {
                            run,
                            method,
                            bench,
                            task: task.clone(),
                            sample,
                            budget,
                            max_budget,
                            min_turns,
                            success_turn,
                            turns,
                            train: None,
                            steps,
                        });
                        written += 1;
                        if buf.len() == CHUNK {
                            flush(&mut buf, "eval", part, &out);
                            part += 1;
                        }
                        if written >= n {
                            break 'outer;
                        }
                    }
                }
            }
            // Two probes per task: a matched state and an error state.
            for (k, error) in [(0, false), (1, true)] {
                let _ = write!(
                    probes,
                    r#"{{"kind":"probe","benchmark":"{bench}","task":"{task}","state":"s{k}","source":"{}","turn":{},"error":{error},"candidates":["#,
                    RUNS[k].0,
                    1 + k * 2
                );
                for (ri, (run, _, skill)) in RUNS.iter().take(2).enumerate() {
                    for g in 0..4 {
                        let score: f64 = (rng.random::<f64>() * skill).min(1.0);
                        let _ = write!(
                            probes,
                            r#"{}{{"run":"{run}","action":"a{g}","score":{score:.4},"corrects":{},"terminal_success":{}}}"#,
                            if ri + g == 0 { "" } else { "," },
                            rng.random::<f64>() < *skill,
                            rng.random::<f64>() < skill * 0.8
                        );
                    }
                }
                probes.push_str("]}\n");
            }
        }
    }
    flush(&mut buf, "eval", part, &out);
    // BudgetMix training rollouts: 10% of N, groups of 8 sharing one budget.
    let mut part = 0;
    let train_n = n / 10;
    let mut t = 0;
    let mut step = 0;
    while t < train_n {
        step += 1;
        for bench in BENCHES {
            let max_budget = scaled(10);
            let budget = (max_budget * rng.random_range(1..=10u32)).div_ceil(10);
            let task = format!("{bench}-train-{:05}", rng.random_range(0..tasks_per_bench));
            for sample in 0..SAMPLES {
                let (success_turn, turns, steps) =
                    simulate(&mut rng, 2, 0.5, budget, max_budget, 2);
                buf.push(Traj {
                    run: RUNS[2].0,
                    method: RUNS[2].1,
                    bench,
                    task: task.clone(),
                    sample,
                    budget,
                    max_budget,
                    min_turns: 2,
                    success_turn,
                    turns,
                    train: Some((step, format!("g{step}-{bench}"))),
                    steps,
                });
                t += 1;
            }
            if buf.len() >= CHUNK {
                flush(&mut buf, "train", part, &out);
                part += 1;
            }
        }
    }
    flush(&mut buf, "train", part, &out);
    let mut ck = String::new();
    for (run, method, skill) in RUNS {
        let _ = writeln!(ck, r#"{{"kind":"run","run":"{run}","method":"{method}"}}"#);
        for s in 0..200 {
            let x = s as f64 / 200.0;
            let _ = writeln!(
                ck,
                r#"{{"kind":"checkpoint","run":"{run}","step":{},"r_multi":{:.4},"r_single":{:.4},"loss":{:.4}}}"#,
                s * 10,
                skill * (0.6 + 0.4 * x) + 0.02 * rng.random::<f64>(),
                0.7 - 0.1 * x + 0.02 * rng.random::<f64>(),
                1.0 / (1.0 + x)
            );
        }
    }
    std::fs::write(out.join("jsonl/probes.jsonl"), &probes).expect("write probes");
    std::fs::write(out.join("jsonl/checkpoints.jsonl"), &ck).expect("write checkpoints");
    // Probes and checkpoints are small: the Parquet set reuses the JSONL files.
    std::fs::write(out.join("parquet/probes.jsonl"), &probes).expect("write probes");
    std::fs::write(out.join("parquet/checkpoints.jsonl"), &ck).expect("write checkpoints");
    eprintln!(
        "wrote {written} evaluation and {train_n} training trajectories to {}",
        out.display()
    );
}
