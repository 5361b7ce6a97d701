//! Regenerates `assets/demo/`: a real, small agentic-RL experiment on
//! FrozenLake, logged in rl-audit's format.
//!
//! The environment: 48 maps in four families (`category`): small (4×4, 5×5)
//! or large (6×6 to 8×8), still or slippery. Every slippery map is one where
//! time pressure changes the best move: somewhere on it the best action with
//! the full budget left (the safe way round the holes, where a slip cannot
//! drop the agent in) differs from the best with a quarter of it left (the
//! risky short way). A task's full budget is 4× its fewest moves on still
//! lakes (3× on a quarter of them, where 25% cannot reach the goal) and 6×
//! on slippery ones, so the 25% budget is tight — no room for a detour — but
//! possible on most maps.
//!
//! The policies, all tabular softmax over (state, remaining-budget bucket):
//! - *base*: a fixed single-step competence — it heads for the goal along the
//!   shortest path and avoids stepping straight into a hole, with a fixed
//!   per-state bias; it knows nothing of slips.
//! - *GRPO*: trained from base with group-relative advantages on full-budget
//!   rollouts, from three seeds (the rollouts carry `seed`). Nothing in its
//!   training penalises a long route.
//! - *BudgetMix*: trained the same way, but each group runs under one budget
//!   drawn from the 10% candidates, the remaining budget is part of what the
//!   policy sees, and a rollout out of budget earns 0.
//!
//! Evaluation: 16 rollouts per (run, seed, task, budget) at 100% and natively
//! at 25/50/75%; matched-state and error-state probes (an injected worst
//! move, real continuations); checkpoints. Nothing here was tuned toward the
//! paper's numbers: the seeds were fixed first, and the constants changed
//! once, so that training learns at all (a first try with per-step-normalised
//! advantages barely moved the policies). Everything is seeded: running it
//! twice gives identical bytes.
//!
//!     cargo run --release --example gen_demo            # writes assets/demo/
//!     cargo run --release --example gen_demo -- OUTDIR

use std::collections::VecDeque;
use std::io::Write;
use std::path::PathBuf;

use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};
use rl_audit::env::frozenlake::Lake;
use serde_json::{json, Value};

const G: usize = 8; // rollouts per GRPO group
const CANDIDATES: usize = 12; // next actions per run on a probe
const EVAL_N: usize = 16; // evaluation rollouts per (run, seed, task, budget)
const ITERS: usize = 200;
const LR: f64 = 0.3;
const BUCKETS: usize = 8;
const BASE_SHARPNESS: f64 = 1.0;
const BASE_NOISE: f64 = 1.0;
const GRPO_SEEDS: u32 = 3;
const PROBES_PER_SOURCE: usize = 96;
const NAMES: [&str; 4] = ["left", "down", "right", "up"];
const BASE: &str = "fl-base";
const GRPO: &str = "fl-grpo";
const BMIX: &str = "fl-budgetmix";

struct Task {
    id: String,
    category: &'static str,
    lake: Lake,
    map: Vec<String>,
    budget: u32,
    min_turns: u32,
    /// V*_h with γ = 0.95, h = 0..=budget (for r_single and the probes).
    v: Vec<Vec<f64>>,
}

fn bucket(remaining: u32) -> usize {
    match remaining {
        0..=1 => 0,
        2 => 1,
        3 => 2,
        4..=5 => 3,
        6..=8 => 4,
        9..=13 => 5,
        14..=21 => 6,
        _ => 7,
    }
}

/// One tabular softmax policy: logits per task × (state, bucket) × action.
/// A budget-blind policy reads bucket 7 (the "plenty left" row) always.
#[derive(Clone)]
struct Table {
    logits: Vec<Vec<[f64; 4]>>,
    sees_budget: bool,
}

impl Table {
    fn row_index(&self, s: usize, remaining: u32) -> usize {
        s * BUCKETS
            + if self.sees_budget {
                bucket(remaining)
            } else {
                BUCKETS - 1
            }
    }
    fn probs(&self, task: usize, s: usize, remaining: u32) -> [f64; 4] {
        softmax(&self.logits[task][self.row_index(s, remaining)])
    }
    fn update(&mut self, task: usize, s: usize, remaining: u32, a: u8, adv: f64) {
        let p = self.probs(task, s, remaining);
        let i = self.row_index(s, remaining);
        let row = &mut self.logits[task][i];
        for (j, x) in row.iter_mut().enumerate() {
            let ind = if j == a as usize { 1.0 } else { 0.0 };
            *x += LR * adv * (ind - p[j]);
        }
    }
}

fn softmax(l: &[f64; 4]) -> [f64; 4] {
    let m = l.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let e = l.map(|x| (x - m).exp());
    let z: f64 = e.iter().sum();
    e.map(|x| x / z)
}

/// A run's policy: one table, or several seeds' tables acting as one
/// (probabilities averaged: the run's policy is the mixture of its seeds).
struct Policy<'a> {
    tables: Vec<&'a Table>,
}

impl Policy<'_> {
    fn probs(&self, task: usize, s: usize, remaining: u32) -> [f64; 4] {
        let mut p = [0.0; 4];
        for t in &self.tables {
            let q = t.probs(task, s, remaining);
            for i in 0..4 {
                p[i] += q[i] / self.tables.len() as f64;
            }
        }
        p
    }
}

fn sample(p: [f64; 4], rng: &mut Xoshiro256PlusPlus) -> u8 {
    let mut u: f64 = rng.random();
    for (a, pa) in p.iter().enumerate() {
        if u < *pa {
            return a as u8;
        }
        u -= pa;
    }
    3
}

/// A policy's action probabilities at (task, state, remaining budget).
type Probs<'a> = &'a dyn Fn(usize, usize, u32) -> [f64; 4];
/// A run name and the policy that scores a step's log-probability for it.
type Scorer<'a> = (&'a str, Probs<'a>);

struct Step {
    state: usize,
    action: u8,
    next: usize,
    remaining: u32,
    tokens: u64,
}

struct Rollout {
    steps: Vec<Step>,
    success_turn: Option<u32>,
}

fn step_env(lake: &Lake, s: usize, a: u8, rng: &mut Xoshiro256PlusPlus) -> usize {
    let outs = lake.outcomes(s, a);
    outs[rng.random_range(0..outs.len())].0
}

fn rollout(
    task: usize,
    t: &Task,
    probs: Probs,
    budget: u32,
    start: usize,
    rng: &mut Xoshiro256PlusPlus,
) -> Rollout {
    let mut s = start;
    let mut steps = Vec::new();
    for turn in 1..=budget {
        let remaining = budget - turn + 1;
        let a = sample(probs(task, s, remaining), rng);
        let next = step_env(&t.lake, s, a, rng);
        // A drawn "reasoning" length per step: what a token budget pays for.
        let tokens = 12 + rng.random_range(0..40u64);
        steps.push(Step {
            state: s,
            action: a,
            next,
            remaining,
            tokens,
        });
        s = next;
        if t.lake.cells[s] == b'G' {
            return Rollout {
                steps,
                success_turn: Some(turn),
            };
        }
        if t.lake.cells[s] == b'H' {
            break;
        }
    }
    Rollout {
        steps,
        success_turn: None,
    }
}

/// Fewest moves from every cell to G (breadth-first on deterministic moves;
/// holes block), `u32::MAX` where G is unreachable.
fn distances(lake: &Lake) -> Vec<u32> {
    let n = lake.n_states();
    let blocked = |s: usize| lake.cells[s] == b'H';
    let mut dist = vec![u32::MAX; n];
    let goal = lake.cells.iter().position(|&c| c == b'G').expect("a goal");
    dist[goal] = 0;
    let mut q = VecDeque::from([goal]);
    while let Some(s) = q.pop_front() {
        for p in 0..n {
            if dist[p] == u32::MAX
                && !blocked(p)
                && lake.cells[p] != b'G'
                && (0..4).any(|a| lake.moved(p, a) == s)
            {
                dist[p] = dist[s] + 1;
                q.push_back(p);
            }
        }
    }
    dist
}

/// A random map of holes. A slippery one is kept only when time pressure
/// changes the best move somewhere: a state where the best action with the
/// full budget left (the safe way round) differs, by a margin of 5% either
/// way, from the best with a quarter of it left (the risky short way).
fn random_map(n: usize, slippery: bool, rng: &mut Xoshiro256PlusPlus) -> (Vec<String>, u32) {
    loop {
        let mut cells = vec![b'F'; n * n];
        for c in cells.iter_mut() {
            if rng.random_range(0..100) < if slippery { 10 } else { 18 } {
                *c = b'H';
            }
        }
        cells[0] = b'S';
        cells[n * n - 1] = b'G';
        let rows: Vec<String> = cells
            .chunks(n)
            .map(|r| String::from_utf8_lossy(r).into_owned())
            .collect();
        let lake = Lake::parse(&rows, slippery).expect("valid map");
        let d = distances(&lake)[0];
        if d == u32::MAX {
            continue;
        }
        if !slippery || time_pressure_matters(&lake, 6 * d, d * 3 / 2) {
            return (rows, d);
        }
    }
}

fn time_pressure_matters(lake: &Lake, full: u32, tight: u32) -> bool {
    let v = lake.values(0.95, full);
    let best = |s: usize, h: u32| {
        (0..4u8)
            .max_by(|&a, &b| {
                let qa = lake.q_from(s, a, 0.95, &v[h as usize - 1]);
                let qb = lake.q_from(s, b, 0.95, &v[h as usize - 1]);
                qa.total_cmp(&qb)
            })
            .expect("four actions")
    };
    let q = |s: usize, a: u8, h: u32| lake.q_from(s, a, 0.95, &v[h as usize - 1]);
    (0..lake.n_states()).any(|s| {
        if lake.is_terminal(s) || v[tight as usize][s] <= 0.0 {
            return false;
        }
        let (a_full, a_tight) = (best(s, full), best(s, tight));
        q(s, a_full, full) > 1.05 * q(s, a_tight, full)
            && q(s, a_tight, tight) > 1.05 * q(s, a_full, tight)
    })
}

fn make_tasks(rng: &mut Xoshiro256PlusPlus) -> Vec<Task> {
    let families: [(&str, &[usize], bool); 4] = [
        ("small-still", &[4, 5], false),
        ("small-slippery", &[4, 5], true),
        ("large-still", &[6, 7, 8], false),
        ("large-slippery", &[6, 7, 8], true),
    ];
    let mut tasks = Vec::new();
    for i in 0..48 {
        let (category, sizes, slippery) = families[i % 4];
        let n = sizes[(i / 4) % sizes.len()];
        let (map, d) = random_map(n, slippery, rng);
        let lake = Lake::parse(&map, slippery).expect("valid map");
        let budget = match (slippery, i % 16 >= 12) {
            (true, _) => 6 * d,
            (false, true) => 3 * d,
            (false, false) => 4 * d,
        };
        let v = lake.values(0.95, budget);
        tasks.push(Task {
            id: format!("fl-{i:02}-{n}x{n}{}", if slippery { "s" } else { "" }),
            category,
            lake,
            map,
            budget,
            min_turns: d,
            v,
        });
    }
    tasks
}

fn q(t: &Task, s: usize, a: u8, h: u32) -> f64 {
    if h == 0 {
        return 0.0;
    }
    t.lake.q_from(s, a, 0.95, &t.v[h as usize - 1])
}

/// Base: head for the goal along the shortest path, never straight into a
/// hole; sharpness fixes its single-step competence, the noise a fixed bias
/// per (state, action). It ignores slips and the budget.
fn base_table(tasks: &[Task], rng: &mut Xoshiro256PlusPlus) -> Table {
    let logits = tasks
        .iter()
        .map(|t| {
            let dist = distances(&t.lake);
            let mut rows = Vec::new();
            for s in 0..t.lake.n_states() {
                let score = |a: u8| {
                    let n = t.lake.moved(s, a);
                    match t.lake.cells[n] {
                        b'H' => -20.0,
                        b'G' => 1.0,
                        _ if n == s => -(dist[s].min(99) as f64) - 1.0,
                        _ => -(dist[n].min(99) as f64),
                    }
                };
                let best = (0..4).map(score).fold(f64::NEG_INFINITY, f64::max);
                let mut row = [0.0; 4];
                for (a, x) in row.iter_mut().enumerate() {
                    let noise: f64 = rng.random::<f64>() * 2.0 - 1.0;
                    *x = BASE_SHARPNESS * (score(a as u8) - best) + BASE_NOISE * noise;
                }
                rows.extend(std::iter::repeat_n(row, BUCKETS));
            }
            rows
        })
        .collect();
    Table {
        logits,
        sees_budget: false,
    }
}

fn candidate_budgets(b: u32) -> Vec<u32> {
    (1..=10u32).map(|i| (b * i).div_ceil(10)).collect()
}

/// The three runs' policies, and for each its name and how to score a step.
struct Runs<'a> {
    base: Policy<'a>,
    grpo: Policy<'a>,
    bmix: Policy<'a>,
}

impl<'a> Runs<'a> {
    fn named(&self) -> [(&'static str, &Policy<'a>); 3] {
        [(BASE, &self.base), (GRPO, &self.grpo), (BMIX, &self.bmix)]
    }
}

#[derive(Default)]
struct Out {
    eval: Vec<Value>,
    train: Vec<Value>,
    probes: Vec<Value>,
    checkpoints: Vec<Value>,
}

fn round(x: f64, digits: i32) -> f64 {
    let m = 10f64.powi(digits);
    (x * m).round() / m
}

fn steps_json(
    task: usize,
    t: &Task,
    r: &Rollout,
    scorers: &[Scorer],
    budget: u32,
    disclose: bool,
) -> Vec<Value> {
    r.steps
        .iter()
        .enumerate()
        .map(|(i, st)| {
            let turn = i as u32 + 1;
            let mut logp = serde_json::Map::new();
            for (name, p) in scorers {
                let lp = p(task, st.state, st.remaining)[st.action as usize].ln();
                logp.insert(name.to_string(), json!(round(lp, 4)));
            }
            let obs = match t.lake.cells[st.next] {
                b'G' => "reached the goal".to_string(),
                b'H' => "fell into a hole".to_string(),
                _ if st.next == st.state => format!("bumped into the edge at cell {}", st.next),
                _ => format!("at cell {}", st.next),
            };
            // An error: a move into the edge (it stays put) or into a hole.
            let bumped = t.lake.moved(st.state, st.action) == st.state
                || t.lake.cells[t.lake.moved(st.state, st.action)] == b'H';
            let mut v = json!({
                "turn": turn, "action": NAMES[st.action as usize], "observation": obs,
                "output_tokens": st.tokens, "logp": logp, "error": bumped, "state": format!("{}", st.state),
            });
            if disclose {
                v["budget_total"] = json!(budget);
                v["budget_remaining"] = json!(budget - turn + 1);
            }
            v
        })
        .collect()
}

struct Meta<'a> {
    run: &'a str,
    method: &'a str,
    seed: Option<u32>,
    budget: u32,
    sample: usize,
}

fn traj_json(m: &Meta, t: &Task, r: &Rollout, steps: Vec<Value>) -> Value {
    let mut v = json!({
        "run": m.run, "method": m.method, "benchmark": "frozenlake", "task": t.id, "category": t.category,
        "sample": m.sample, "budget": m.budget, "max_budget": t.budget, "success": r.success_turn.is_some(),
        "turns": r.steps.len(), "min_turns": t.min_turns,
        "reward": if r.success_turn.is_some() { 1.0 } else { 0.0 }, "steps": steps,
    });
    if let Some(s) = m.seed {
        v["seed"] = json!(s);
    }
    if let Some(s) = r.success_turn {
        v["success_turn"] = json!(s);
    }
    v
}

/// Mean Q*-optimality of one step on a fixed state set: Σ_a π(a|s) Q*(s,a) / V*(s).
fn r_single(tasks: &[Task], pol: &Table, states: &[(usize, usize, u32)]) -> f64 {
    let mut total = 0.0;
    for &(ti, s, h) in states {
        let t = &tasks[ti];
        let p = pol.probs(ti, s, h);
        let best = (0..4).map(|a| q(t, s, a, h)).fold(0.0, f64::max);
        let got: f64 = (0..4).map(|a| p[a as usize] * q(t, s, a, h)).sum();
        total += if best > 0.0 { got / best } else { 1.0 };
    }
    total / states.len() as f64
}

/// Success rate at full budget, 4 rollouts per task.
fn r_multi(tasks: &[Task], pol: &Table, rng: &mut Xoshiro256PlusPlus) -> f64 {
    let mut wins = 0;
    let mut n = 0;
    let probs = |ti: usize, s: usize, h: u32| pol.probs(ti, s, h);
    for (ti, t) in tasks.iter().enumerate() {
        for _ in 0..4 {
            n += 1;
            if rollout(ti, t, &probs, t.budget, t.lake.start(), rng)
                .success_turn
                .is_some()
            {
                wins += 1;
            }
        }
    }
    wins as f64 / n as f64
}

struct Training<'a> {
    name: &'a str,
    checkpoint_run: String,
    budget_mix: bool,
    seed: u64,
}

fn train(
    cfg: &Training,
    tasks: &[Task],
    init: &Table,
    probe_states: &[(usize, usize, u32)],
    out: &mut Out,
) -> Table {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(cfg.seed);
    let mut pol = init.clone();
    pol.sees_budget = cfg.budget_mix;
    for it in 1..=ITERS {
        for (ti, t) in tasks.iter().enumerate() {
            let budget = if cfg.budget_mix {
                let c = candidate_budgets(t.budget);
                c[rng.random_range(0..c.len())]
            } else {
                t.budget
            };
            let group: Vec<Rollout> = {
                let probs = |ti: usize, s: usize, h: u32| pol.probs(ti, s, h);
                (0..G)
                    .map(|_| rollout(ti, t, &probs, budget, t.lake.start(), &mut rng))
                    .collect()
            };
            let rewards: Vec<f64> = group
                .iter()
                .map(|r| if r.success_turn.is_some() { 1.0 } else { 0.0 })
                .collect();
            let mean = rewards.iter().sum::<f64>() / G as f64;
            let sd = (rewards.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / G as f64).sqrt();
            if cfg.budget_mix && it % 25 == 0 {
                for (g, r) in group.iter().enumerate() {
                    let probs = |ti: usize, s: usize, h: u32| pol.probs(ti, s, h);
                    let steps = steps_json(ti, t, r, &[(cfg.name, &probs)], budget, true);
                    let meta = Meta {
                        run: cfg.name,
                        method: "budgetmix",
                        seed: None,
                        budget,
                        sample: g,
                    };
                    let mut v = traj_json(&meta, t, r, steps);
                    v["train_step"] = json!(it);
                    v["group"] = json!(format!("{}-{it}", t.id));
                    out.train.push(v);
                }
            }
            for (r, rew) in group.iter().zip(&rewards) {
                let adv = (rew - mean) / (sd + 1e-6);
                if adv != 0.0 {
                    for st in &r.steps {
                        pol.update(ti, st.state, st.remaining, st.action, adv);
                    }
                }
            }
        }
        if it % 10 == 0 || it == 1 {
            let rm = r_multi(tasks, &pol, &mut rng);
            out.checkpoints.push(json!({
                "kind": "checkpoint", "run": cfg.checkpoint_run, "step": it,
                "r_multi": round(rm, 6),
                "r_single": round(r_single(tasks, &pol, probe_states), 6),
            }));
        }
    }
    pol
}

fn main() {
    let dir = std::env::args()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("assets/demo"));
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(20261201);
    let tasks = make_tasks(&mut rng);
    let base = base_table(&tasks, &mut rng);
    // A fixed state set for r_single: non-terminal cells with a full horizon.
    let mut single_states = Vec::new();
    for (ti, t) in tasks.iter().enumerate() {
        for s in 0..t.lake.n_states() {
            if !t.lake.is_terminal(s) && t.v[t.budget as usize][s] > 0.0 {
                single_states.push((ti, s, t.budget));
            }
        }
    }
    let mut out = Out::default();
    for (run, method) in [(BASE, "base"), (GRPO, "grpo"), (BMIX, "budgetmix")] {
        out.eval
            .push(json!({"kind": "run", "run": run, "method": method}));
    }
    let grpo: Vec<Table> = (0..GRPO_SEEDS)
        .map(|seed| {
            let cfg = Training {
                name: GRPO,
                checkpoint_run: format!("{GRPO}-seed{seed}"),
                budget_mix: false,
                seed: 1000 + u64::from(seed),
            };
            train(&cfg, &tasks, &base, &single_states, &mut out)
        })
        .collect();
    let cfg = Training {
        name: BMIX,
        checkpoint_run: BMIX.to_string(),
        budget_mix: true,
        seed: 2000,
    };
    let bmix = train(&cfg, &tasks, &base, &single_states, &mut out);
    let runs = Runs {
        base: Policy {
            tables: vec![&base],
        },
        grpo: Policy {
            tables: grpo.iter().collect(),
        },
        bmix: Policy {
            tables: vec![&bmix],
        },
    };
    let kept = evaluate(&tasks, &runs, &grpo, &mut rng, &mut out);
    probes(&tasks, &runs, &kept, &mut rng, &mut out);
    std::fs::create_dir_all(&dir).expect("create output directory");
    write_gz(&dir.join("eval.jsonl.gz"), &out.eval);
    write_gz(&dir.join("train.jsonl.gz"), &out.train);
    write_gz(&dir.join("probes.jsonl.gz"), &out.probes);
    write_gz(&dir.join("checkpoints.jsonl.gz"), &out.checkpoints);
    eprintln!(
        "wrote {}: {} evaluation records, {} training rollouts, {} probes, {} checkpoints",
        dir.display(),
        out.eval.len(),
        out.train.len(),
        out.probes.len(),
        out.checkpoints.len()
    );
}

/// Who logs evaluation rollouts: a run (one of GRPO's seeds, for GRPO), the
/// policy that samples them, and the policies their steps are scored under.
struct Producer<'a> {
    run: &'static str,
    method: &'static str,
    seed: Option<u32>,
    sampler: Probs<'a>,
    scorers: Vec<Scorer<'a>>,
}

/// Evaluation rollouts at full budget and natively at 25/50/75%: base,
/// each GRPO seed, BudgetMix. Every step carries its log-probability under
/// base and under the run that produced it (base's steps under all three
/// runs); a run's log-probability is that of its policy (for GRPO, the
/// mixture of its seeds, so base and GRPO trajectories are scored by the
/// same two policies). Returns the full-budget rollouts (source run, task,
/// rollout) the probes draw their states from.
fn evaluate(
    tasks: &[Task],
    runs: &Runs,
    grpo: &[Table],
    rng: &mut Xoshiro256PlusPlus,
    out: &mut Out,
) -> Vec<(&'static str, usize, Rollout)> {
    let base_p = |ti: usize, s: usize, h: u32| runs.base.probs(ti, s, h);
    let grpo_p = |ti: usize, s: usize, h: u32| runs.grpo.probs(ti, s, h);
    let bmix_p = |ti: usize, s: usize, h: u32| runs.bmix.probs(ti, s, h);
    let seed_p: Vec<_> = grpo
        .iter()
        .map(|t| move |ti: usize, s: usize, h: u32| t.probs(ti, s, h))
        .collect();
    let all: [Scorer; 3] = [(BASE, &base_p), (GRPO, &grpo_p), (BMIX, &bmix_p)];
    let mut producers = vec![Producer {
        run: BASE,
        method: "base",
        seed: None,
        sampler: &base_p,
        scorers: all.to_vec(),
    }];
    for (seed, p) in seed_p.iter().enumerate() {
        producers.push(Producer {
            run: GRPO,
            method: "grpo",
            seed: Some(seed as u32),
            sampler: p,
            scorers: vec![all[0], all[1]],
        });
    }
    producers.push(Producer {
        run: BMIX,
        method: "budgetmix",
        seed: None,
        sampler: &bmix_p,
        scorers: vec![all[0], all[2]],
    });
    let mut kept = Vec::new();
    for Producer {
        run,
        method,
        seed,
        sampler,
        scorers,
    } in &producers
    {
        let disclose = *run == BMIX;
        for (ti, t) in tasks.iter().enumerate() {
            let mut budgets = vec![t.budget];
            for l in [25u32, 50, 75] {
                let b = (l * t.budget).div_ceil(100).max(1);
                if !budgets.contains(&b) {
                    budgets.push(b);
                }
            }
            for b in budgets {
                for sample in 0..EVAL_N {
                    let r = rollout(ti, t, *sampler, b, t.lake.start(), rng);
                    let steps = steps_json(ti, t, &r, scorers, b, disclose);
                    let meta = Meta {
                        run,
                        method,
                        seed: *seed,
                        budget: b,
                        sample,
                    };
                    out.eval.push(traj_json(&meta, t, &r, steps));
                    if b == t.budget && *run != BMIX {
                        kept.push((*run, ti, r));
                    }
                }
            }
        }
    }
    kept
}

/// Candidate next actions of each run at a state (a run of several seeds
/// draws each candidate from its mixture).
fn candidates(
    runs: &Runs,
    ti: usize,
    s: usize,
    left: u32,
    rng: &mut Xoshiro256PlusPlus,
) -> Vec<(&'static str, u8)> {
    let mut c = Vec::new();
    for (run, pol) in runs.named() {
        for _ in 0..CANDIDATES {
            c.push((run, sample(pol.probs(ti, s, left), rng)));
        }
    }
    c
}

/// Matched-state probes (equal numbers from base and GRPO trajectories) and
/// error-state probes: at a visited state, the worst move that does not end
/// the episode is injected, and each run's candidates from the state it
/// leads to are scored and continued for real.
fn probes(
    tasks: &[Task],
    runs: &Runs,
    kept: &[(&'static str, usize, Rollout)],
    rng: &mut Xoshiro256PlusPlus,
    out: &mut Out,
) {
    let mut n = 0;
    for source in [BASE, GRPO] {
        let mut taken = 0;
        // Every 7th rollout of the source, so states come from many tasks.
        for (_, ti, r) in kept.iter().filter(|k| k.0 == source).step_by(7) {
            let t = &tasks[*ti];
            for (i, st) in r.steps.iter().enumerate().step_by(3) {
                if taken >= PROBES_PER_SOURCE {
                    break;
                }
                let turn = i as u32 + 1;
                let left = t.budget - turn + 1;
                let fl = json!({"map": t.map, "pos": st.state, "steps_left": left, "slippery": t.lake.slippery});
                let cands: Vec<Value> = candidates(runs, *ti, st.state, left, rng)
                    .into_iter()
                    .map(|(run, a)| json!({"run": run, "action": a}))
                    .collect();
                n += 1;
                taken += 1;
                out.probes.push(json!({
                    "kind": "probe", "benchmark": "frozenlake", "task": t.id, "state": format!("m{n}-{}", st.state),
                    "source": source, "turn": turn, "error": false, "frozenlake": fl, "candidates": cands,
                }));
            }
        }
    }
    for source in [BASE, GRPO] {
        let mut taken = 0;
        for (_, ti, r) in kept.iter().filter(|k| k.0 == source).skip(3).step_by(7) {
            let t = &tasks[*ti];
            for (i, st) in r.steps.iter().enumerate().step_by(3) {
                let turn = i as u32 + 1;
                let h = t.budget - turn + 1;
                if h < 3 || taken >= PROBES_PER_SOURCE {
                    continue;
                }
                let worst = (0..4u8)
                    .filter(|&a| !t.lake.is_terminal(t.lake.moved(st.state, a)))
                    .min_by(|&a, &b| q(t, st.state, a, h).total_cmp(&q(t, st.state, b, h)));
                let Some(bad) = worst else { continue };
                let s = step_env(&t.lake, st.state, bad, rng);
                if t.lake.is_terminal(s) {
                    continue;
                }
                let left = h - 1;
                let best = (0..4u8).map(|a| q(t, s, a, left)).fold(0.0, f64::max);
                let mut cands = Vec::new();
                for (run, a) in candidates(runs, *ti, s, left, rng) {
                    let pol = runs
                        .named()
                        .iter()
                        .find(|(r, _)| *r == run)
                        .expect("a run")
                        .1;
                    let corrects = best > 0.0 && q(t, s, a, left) >= best - 1e-9;
                    // The continuation: take a, then follow the run's policy.
                    let s2 = step_env(&t.lake, s, a, rng);
                    let success = if t.lake.cells[s2] == b'G' {
                        true
                    } else if t.lake.is_terminal(s2) || left <= 1 {
                        false
                    } else {
                        let probs = |ti: usize, s: usize, h: u32| pol.probs(ti, s, h);
                        rollout(*ti, t, &probs, left - 1, s2, rng)
                            .success_turn
                            .is_some()
                    };
                    cands.push(json!({"run": run, "action": a, "corrects": corrects, "terminal_success": success}));
                }
                n += 1;
                taken += 1;
                let fl = json!({"map": t.map, "pos": s, "steps_left": left, "slippery": t.lake.slippery});
                out.probes.push(json!({
                    "kind": "probe", "benchmark": "frozenlake", "task": t.id, "state": format!("e{n}-{s}"),
                    "source": source, "turn": turn + 1, "error": true, "injected_action": NAMES[bad as usize],
                    "frozenlake": fl, "candidates": cands,
                }));
            }
        }
    }
}

fn write_gz(path: &std::path::Path, records: &[Value]) {
    let file = std::fs::File::create(path).expect("create file");
    // mtime 0 and no file name: identical bytes on every run.
    let mut gz = flate2::GzBuilder::new()
        .mtime(0)
        .write(file, flate2::Compression::best());
    for r in records {
        serde_json::to_writer(&mut gz, r).expect("write record");
        gz.write_all(b"\n").expect("write record");
    }
    gz.finish().expect("finish gzip");
}
