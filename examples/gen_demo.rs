//! Regenerates `assets/demo/`: a real, tiny agentic-RL experiment on
//! FrozenLake, logged in rl-audit's format.
//!
//! A noisy tabular softmax *base* policy; a *GRPO* policy trained from it with
//! group-relative advantages on full-budget rollouts; a *BudgetMix* policy
//! trained the same way but with one budget per group drawn from the 10%
//! candidates, the remaining budget part of what it sees, and zero reward when
//! it runs out. Everything is seeded: running it twice gives identical bytes.
//!
//!     cargo run --example gen_demo            # writes assets/demo/
//!     cargo run --example gen_demo -- OUTDIR

use std::io::Write;
use std::path::PathBuf;

use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};
use rl_audit::env::frozenlake::Lake;
use serde_json::{json, Value};

const G: usize = 8; // rollouts per GRPO group and candidates per probe
const EVAL_N: usize = 8; // evaluation rollouts per (run, task, budget)
const ITERS: usize = 120;
const LR: f64 = 0.5;
const BUCKETS: usize = 6;
const BASE_SHARPNESS: f64 = 15.0;
const BASE_NOISE: f64 = 1.2;
const NAMES: [&str; 4] = ["left", "down", "right", "up"];
const RUNS: [&str; 3] = ["fl-base", "fl-grpo", "fl-budgetmix"];

struct Task {
    id: String,
    lake: Lake,
    map: Vec<String>,
    budget: u32,
    min_turns: u32,
    /// V*_h with γ = 0.95 for scoring, h = 0..=budget.
    v: Vec<Vec<f64>>,
}

/// Tabular softmax policy: logits per (state, remaining-budget bucket, action).
/// Budget-blind policies use bucket 0 only.
#[derive(Clone)]
struct Policy {
    logits: Vec<Vec<[f64; 4]>>, // per task: cells × BUCKETS
    sees_budget: bool,
}

fn bucket(remaining: u32) -> usize {
    match remaining {
        0..=1 => 0,
        2 => 1,
        3 => 2,
        4..=5 => 3,
        6..=8 => 4,
        _ => 5,
    }
}

impl Policy {
    fn row(&self, task: usize, s: usize, remaining: u32) -> [f64; 4] {
        let b = if self.sees_budget {
            bucket(remaining)
        } else {
            0
        };
        self.logits[task][s * BUCKETS + b]
    }
    fn probs(&self, task: usize, s: usize, remaining: u32) -> [f64; 4] {
        let l = self.row(task, s, remaining);
        let m = l.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let e: Vec<f64> = l.iter().map(|x| (x - m).exp()).collect();
        let z: f64 = e.iter().sum();
        [e[0] / z, e[1] / z, e[2] / z, e[3] / z]
    }
    fn logp(&self, task: usize, s: usize, remaining: u32, a: u8) -> f64 {
        self.probs(task, s, remaining)[a as usize].ln()
    }
    fn sample(&self, task: usize, s: usize, remaining: u32, rng: &mut Xoshiro256PlusPlus) -> u8 {
        let p = self.probs(task, s, remaining);
        let mut u: f64 = rng.random();
        for (a, pa) in p.iter().enumerate() {
            if u < *pa {
                return a as u8;
            }
            u -= pa;
        }
        3
    }
    fn update(&mut self, task: usize, s: usize, remaining: u32, a: u8, adv: f64) {
        let p = self.probs(task, s, remaining);
        let b = if self.sees_budget {
            bucket(remaining)
        } else {
            0
        };
        let row = &mut self.logits[task][s * BUCKETS + b];
        for (i, x) in row.iter_mut().enumerate() {
            let ind = if i == a as usize { 1.0 } else { 0.0 };
            *x += LR * adv * (ind - p[i]);
        }
    }
}

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
    pol: &Policy,
    budget: u32,
    start: usize,
    rng: &mut Xoshiro256PlusPlus,
) -> Rollout {
    let mut s = start;
    let mut steps = Vec::new();
    for turn in 1..=budget {
        let remaining = budget - turn + 1;
        let a = pol.sample(task, s, remaining, rng);
        let next = step_env(&t.lake, s, a, rng);
        // A short "reasoning" length per step: what a token budget would pay for.
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

fn random_map(n: usize, rng: &mut Xoshiro256PlusPlus) -> Vec<String> {
    loop {
        let mut cells = vec![b'F'; n * n];
        for c in cells.iter_mut() {
            if rng.random_range(0..100) < 18 {
                *c = b'H';
            }
        }
        cells[0] = b'S';
        cells[n * n - 1] = b'G';
        let rows: Vec<String> = cells
            .chunks(n)
            .map(|r| String::from_utf8_lossy(r).into_owned())
            .collect();
        if shortest(&Lake::parse(&rows, false).expect("valid map")).is_some() {
            return rows;
        }
    }
}

/// Fewest moves from S to G (breadth-first), if reachable.
fn shortest(lake: &Lake) -> Option<u32> {
    let mut dist = vec![u32::MAX; lake.n_states()];
    let start = lake.start();
    dist[start] = 0;
    let mut q = std::collections::VecDeque::from([start]);
    while let Some(s) = q.pop_front() {
        if lake.cells[s] == b'G' {
            return Some(dist[s]);
        }
        if lake.is_terminal(s) {
            continue;
        }
        for a in 0..4 {
            let n = lake.moved(s, a);
            if dist[n] == u32::MAX {
                dist[n] = dist[s] + 1;
                q.push_back(n);
            }
        }
    }
    None
}

fn make_tasks(rng: &mut Xoshiro256PlusPlus) -> Vec<Task> {
    let mut tasks = Vec::new();
    for (i, (n, slippery)) in [
        (4, false),
        (4, true),
        (5, false),
        (5, true),
        (6, false),
        (6, true),
    ]
    .iter()
    .cycle()
    .take(12)
    .enumerate()
    {
        let map = random_map(*n, rng);
        let lake = Lake::parse(&map, *slippery).expect("valid map");
        let d = shortest(&Lake::parse(&map, false).expect("valid map")).expect("reachable");
        let budget = if *slippery { 2 * d + 6 } else { d + 4 };
        let v = lake.values(0.95, budget);
        tasks.push(Task {
            id: format!("fl-{:02}-{n}x{n}{}", i, if *slippery { "s" } else { "" }),
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

/// Base: softmax of a noisy, blunted view of Q* (a weak but sensible agent).
fn base_policy(tasks: &[Task], rng: &mut Xoshiro256PlusPlus) -> Policy {
    let logits = tasks
        .iter()
        .map(|t| {
            let mut rows = Vec::new();
            for s in 0..t.lake.n_states() {
                let mut row = [0.0; 4];
                let best = (0..4).map(|a| q(t, s, a, t.budget)).fold(0.0, f64::max);
                for (a, x) in row.iter_mut().enumerate() {
                    let noise: f64 = rng.random::<f64>() * 2.0 - 1.0;
                    // Relative optimality in [−1, 0], blunted and blurred.
                    let rel = if best > 0.0 {
                        q(t, s, a as u8, t.budget) / best - 1.0
                    } else {
                        0.0
                    };
                    *x = BASE_SHARPNESS * rel + BASE_NOISE * noise;
                }
                for _ in 0..BUCKETS {
                    rows.push(row);
                }
            }
            rows
        })
        .collect();
    Policy {
        logits,
        sees_budget: false,
    }
}

fn candidate_budgets(b: u32) -> Vec<u32> {
    (1..=10u32).map(|i| (b * i).div_ceil(10)).collect()
}

struct Out {
    eval: Vec<Value>,
    train: Vec<Value>,
    probes: Vec<Value>,
    checkpoints: Vec<Value>,
}

fn steps_json(
    task: usize,
    t: &Task,
    r: &Rollout,
    pols: &[(&str, &Policy)],
    budget: u32,
    disclose: bool,
) -> Vec<Value> {
    r.steps
        .iter()
        .enumerate()
        .map(|(i, st)| {
            let turn = i as u32 + 1;
            let mut logp = serde_json::Map::new();
            for (name, p) in pols {
                let lp = p.logp(task, st.state, st.remaining, st.action);
                logp.insert(name.to_string(), json!((lp * 1e6).round() / 1e6));
            }
            let obs = match t.lake.cells[st.next] {
                b'G' => "reached the goal".to_string(),
                b'H' => "fell into a hole".to_string(),
                _ => format!("at cell {}", st.next),
            };
            let bumped = t.lake.moved(st.state, st.action) == st.state;
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

fn traj_json(
    run: &str,
    method: &str,
    t: &Task,
    r: &Rollout,
    budget: u32,
    sample: usize,
    steps: Vec<Value>,
) -> Value {
    let mut v = json!({
        "run": run, "method": method, "benchmark": "frozenlake", "task": t.id, "sample": sample,
        "budget": budget, "max_budget": t.budget, "success": r.success_turn.is_some(),
        "turns": r.steps.len(), "min_turns": t.min_turns,
        "reward": if r.success_turn.is_some() { 1.0 } else { 0.0 }, "steps": steps,
    });
    if let Some(s) = r.success_turn {
        v["success_turn"] = json!(s);
    }
    v
}

/// Mean Q*-optimality of one step on a fixed state set: Σ_a π(a|s) Q*(s,a) / V*(s).
fn r_single(tasks: &[Task], pol: &Policy, states: &[(usize, usize, u32)]) -> f64 {
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

fn r_multi(tasks: &[Task], pol: &Policy, rng: &mut Xoshiro256PlusPlus) -> f64 {
    let mut wins = 0;
    let mut n = 0;
    for (ti, t) in tasks.iter().enumerate() {
        for _ in 0..4 {
            n += 1;
            if rollout(ti, t, pol, t.budget, t.lake.start(), rng)
                .success_turn
                .is_some()
            {
                wins += 1;
            }
        }
    }
    wins as f64 / n as f64
}

fn train(
    name: &str,
    tasks: &[Task],
    init: &Policy,
    budget_mix: bool,
    rng: &mut Xoshiro256PlusPlus,
    probe_states: &[(usize, usize, u32)],
    out: &mut Out,
) -> Policy {
    let mut pol = init.clone();
    pol.sees_budget = budget_mix;
    for it in 1..=ITERS {
        for (ti, t) in tasks.iter().enumerate() {
            let budget = if budget_mix {
                let c = candidate_budgets(t.budget);
                c[rng.random_range(0..c.len())]
            } else {
                t.budget
            };
            let group: Vec<Rollout> = (0..G)
                .map(|_| rollout(ti, t, &pol, budget, t.lake.start(), rng))
                .collect();
            let rewards: Vec<f64> = group
                .iter()
                .map(|r| if r.success_turn.is_some() { 1.0 } else { 0.0 })
                .collect();
            let mean = rewards.iter().sum::<f64>() / G as f64;
            let sd = (rewards.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / G as f64).sqrt();
            for (r, rew) in group.iter().zip(&rewards) {
                let adv = (rew - mean) / (sd + 1e-6);
                let adv = adv / r.steps.len().max(1) as f64;
                if adv != 0.0 {
                    for st in &r.steps {
                        pol.update(ti, st.state, st.remaining, st.action, adv);
                    }
                }
            }
            if budget_mix && it % 10 == 0 {
                for (g, r) in group.iter().enumerate() {
                    let steps = steps_json(ti, t, r, &[(name, &pol)], budget, true);
                    let mut v = traj_json(name, "budgetmix", t, r, budget, g, steps);
                    v["train_step"] = json!(it);
                    v["group"] = json!(format!("{}-{it}", t.id));
                    out.train.push(v);
                }
            }
        }
        if it % 10 == 0 || it == 1 {
            let rm = r_multi(tasks, &pol, rng);
            out.checkpoints.push(json!({
                "kind": "checkpoint", "run": name, "step": it,
                "r_multi": (rm * 1e6).round() / 1e6,
                "r_single": (r_single(tasks, &pol, probe_states) * 1e6).round() / 1e6,
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
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(20261129);
    let tasks = make_tasks(&mut rng);
    let base = base_policy(&tasks, &mut rng);
    // A fixed state set for r_single: non-terminal cells with a full horizon.
    let mut single_states = Vec::new();
    for (ti, t) in tasks.iter().enumerate() {
        for s in 0..t.lake.n_states() {
            if !t.lake.is_terminal(s) && t.v[t.budget as usize][s] > 0.0 {
                single_states.push((ti, s, t.budget));
            }
        }
    }
    let mut out = Out {
        eval: Vec::new(),
        train: Vec::new(),
        probes: Vec::new(),
        checkpoints: Vec::new(),
    };
    for (run, method) in RUNS.iter().zip(["base", "grpo", "budgetmix"]) {
        out.eval
            .push(json!({"kind": "run", "run": run, "method": method}));
    }
    let grpo = train(
        RUNS[1],
        &tasks,
        &base,
        false,
        &mut rng,
        &single_states,
        &mut out,
    );
    let bmix = train(
        RUNS[2],
        &tasks,
        &base,
        true,
        &mut rng,
        &single_states,
        &mut out,
    );
    let pols: [(&str, &Policy); 3] = [(RUNS[0], &base), (RUNS[1], &grpo), (RUNS[2], &bmix)];
    // Evaluation: full budget, and natively at 25/50/75%.
    let mut kept: Vec<(usize, usize, Rollout)> = Vec::new(); // (policy, task, rollout) at full budget
    for (pi, (run, pol)) in pols.iter().enumerate() {
        let method = ["base", "grpo", "budgetmix"][pi];
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
                    let r = rollout(ti, t, pol, b, t.lake.start(), &mut rng);
                    let steps = steps_json(ti, t, &r, &pols, b, pol.sees_budget);
                    out.eval
                        .push(traj_json(run, method, t, &r, b, sample, steps));
                    if b == t.budget {
                        kept.push((pi, ti, r));
                    }
                }
            }
        }
    }
    probes(&tasks, &pols, &kept, &mut rng, &mut out);
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

/// Matched-state probes (equal numbers from base and GRPO trajectories) and
/// error-state probes with an injected worst action and real continuations.
fn probes(
    tasks: &[Task],
    pols: &[(&str, &Policy); 3],
    kept: &[(usize, usize, Rollout)],
    rng: &mut Xoshiro256PlusPlus,
    out: &mut Out,
) {
    let mut n = 0;
    for source in [0usize, 1] {
        let mut taken = 0;
        for (pi, ti, r) in kept.iter().filter(|k| k.0 == source) {
            if taken >= 36 {
                break;
            }
            let t = &tasks[*ti];
            for (i, st) in r.steps.iter().enumerate().step_by(2) {
                if taken >= 36 {
                    break;
                }
                let turn = i as u32 + 1;
                let steps_left = t.budget - turn + 1;
                let fl = json!({"map": t.map, "pos": st.state, "steps_left": steps_left, "slippery": t.lake.slippery});
                let mut cands = Vec::new();
                for (run, pol) in pols.iter() {
                    for _ in 0..G {
                        let a = pol.sample(*ti, st.state, steps_left, rng);
                        cands.push(json!({"run": run, "action": a}));
                    }
                }
                n += 1;
                taken += 1;
                out.probes.push(json!({
                    "kind": "probe", "benchmark": "frozenlake", "task": t.id, "state": format!("m{n}-{}", st.state),
                    "source": pols[*pi].0, "turn": turn, "error": false, "frozenlake": fl, "candidates": cands,
                }));
            }
        }
    }
    // Error states: at a visited state, inject the worst action that does not end the episode.
    for source in [0usize, 1] {
        let mut taken = 0;
        for (pi, ti, r) in kept.iter().filter(|k| k.0 == source) {
            if taken >= 36 {
                break;
            }
            let t = &tasks[*ti];
            for (i, st) in r.steps.iter().enumerate().step_by(3) {
                let turn = i as u32 + 1;
                let h = t.budget - turn + 1;
                if h < 3 || taken >= 36 {
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
                for (run, pol) in pols.iter() {
                    for _ in 0..G {
                        let a = pol.sample(*ti, s, left, rng);
                        let corrects = q(t, s, a, left) >= best - 1e-9 && best > 0.0;
                        // Real continuation: take a, then follow the policy for the budget left.
                        let s2 = step_env(&t.lake, s, a, rng);
                        let success = if t.lake.cells[s2] == b'G' {
                            true
                        } else if t.lake.is_terminal(s2) || left <= 1 {
                            false
                        } else {
                            rollout(*ti, t, pol, left - 1, s2, rng)
                                .success_turn
                                .is_some()
                        };
                        cands.push(json!({"run": run, "action": a, "corrects": corrects, "terminal_success": success}));
                    }
                }
                n += 1;
                taken += 1;
                let fl = json!({"map": t.map, "pos": s, "steps_left": left, "slippery": t.lake.slippery});
                out.probes.push(json!({
                    "kind": "probe", "benchmark": "frozenlake", "task": t.id, "state": format!("e{n}-{s}"),
                    "source": pols[*pi].0, "turn": turn + 1, "error": true, "injected_action": NAMES[bad as usize],
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
