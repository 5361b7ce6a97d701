#!/usr/bin/env python3
"""Benchmark log sets for issue 20's targets, written independently of the
Rust generator (examples/gen_large.rs) with Python's own JSON encoder, so
log-probabilities are full-precision `repr` floats as real trainers write
them.

    scripts/gen_bench.py numeric OUT.jsonl [--trajectories 200000] [--steps 12]
    scripts/gen_bench.py text    OUT.jsonl [--trajectories 100000] [--steps 40]

`numeric`: each step has a token count, two log-probabilities and an error
flag, no texts — the 200 k-trajectory set of ~12 steps (≈ 300 MB), shaped
like a campaign: two runs (base, grpo) × 16 samples × 5 budgets (8, 12, 16,
20, 24) per task, a rollout ending when it solves its task or its budget
runs out (`--steps` is then the longest solve). `--wide` instead gives
every rollout exactly `--steps` steps, four samples per task and one budget
(25,000 tasks at 200 k: the bootstrap's worst case). `text`: as `--wide`,
and each step also has a 50-character action and a 200-character
observation (100 k × 40 steps ≈ 0.6 GB; × 4 steps ≈ 175 MB).
Deterministic for a given seed.
"""

import argparse
import json
import random
import string


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("shape", choices=["numeric", "text"])
    ap.add_argument("out")
    ap.add_argument("--trajectories", type=int)
    ap.add_argument("--steps", type=int)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--wide", action="store_true")
    a = ap.parse_args()
    text = a.shape == "text"
    n = a.trajectories or (100_000 if text else 200_000)
    steps = a.steps or (40 if text else 12)
    rng = random.Random(a.seed)
    alphabet = string.ascii_letters + string.digits + " _(),='"
    runs = ["base", "grpo"]
    wide = text or a.wide
    samples = 4 if wide else 16
    budgets = [max(20, steps)] if wide else [8, 12, 16, 20, 24]
    per_task = 2 * samples * len(budgets)
    with open(a.out, "w") as f:
        f.write(json.dumps({"kind": "run", "run": "base", "method": "base"}) + "\n")
        f.write(json.dumps({"kind": "run", "run": "grpo", "method": "grpo"}) + "\n")
        for i in range(n):
            run = runs[i % 2]
            task = i // per_task
            budget = budgets[(i // (2 * samples)) % len(budgets)]
            p = 0.35 if run == "base" else 0.5
            if wide:
                turns = steps
                success = rng.random() < p
            else:
                # Turns the rollout needs to solve (None: it never would).
                need = rng.randint(3, 2 * steps - 3) if rng.random() < p + 0.3 else None
                success = need is not None and need <= budget
                turns = need if success else budget
            st = []
            for k in range(turns):
                step = {
                    "turn": k + 1,
                    "output_tokens": rng.randint(20, 400),
                    "logp": {
                        "base": -rng.expovariate(1 / 30.0),
                        "grpo": -rng.expovariate(1 / 25.0),
                    },
                    "error": rng.random() < 0.15,
                }
                if text:
                    step["action"] = "".join(rng.choices(alphabet, k=50))
                    step["observation"] = "".join(rng.choices(alphabet, k=200))
                st.append(step)
            rec = {
                "run": run,
                "benchmark": "bench",
                "task": f"t{task}",
                "sample": (i // 2) % samples,
                "budget": budget,
                "max_budget": budgets[-1],
                "success": success,
                "turns": turns,
                "steps": st,
            }
            if success:
                rec["success_turn"] = turns
            f.write(json.dumps(rec) + "\n")

if __name__ == "__main__":
    main()
