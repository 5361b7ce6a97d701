"""Writes verl generation dumps exactly as verl's own `_dump_generations` does.

Source: volcengine/verl at commit b178a3cd56f58b2d502255daba591e92833930a7,
verl/trainer/ppo/ray_trainer.py:
- `_dump_generations` (lines 396-422): `<dump_path>/<global_steps>.jsonl`,
  base_data {input, output, gts, score, step}, plus every
  reward_extra_infos_dict entry of length n, one `json.dumps(entry,
  ensure_ascii=False)` per row, rows joined with "\\n" and a final "\\n".
- `_validate` (lines 560-665): the batch is repeated `val_kwargs.n` times
  interleaved (each prompt's samples adjacent), `reward_extra_infos_dict`
  holds "reward" (the scores) and the reward function's extras (here
  "acc"), dumped to `trainer.validation_data_dir`.

Made-up values (seeded). `expected.json`: what the shipped mapping must
give, computed here from the rows written.
Run: python3 tests/data/verl/make.py
"""

import json
import os
import random
import shutil
from pathlib import Path

HERE = Path(__file__).resolve().parent
rng = random.Random(7)


def _dump_generations(global_steps, inputs, outputs, gts, scores, reward_extra_infos_dict, dump_path):
    os.makedirs(dump_path, exist_ok=True)
    filename = os.path.join(dump_path, f"{global_steps}.jsonl")
    n = len(inputs)
    base_data = {
        "input": inputs,
        "output": outputs,
        "gts": gts,
        "score": scores,
        "step": [global_steps] * n,
    }
    for k, v in reward_extra_infos_dict.items():
        if len(v) == n:
            base_data[k] = v
    lines = []
    for i in range(n):
        entry = {k: v[i] for k, v in base_data.items()}
        lines.append(json.dumps(entry, ensure_ascii=False))
    with open(filename, "w") as f:
        f.write("\n".join(lines) + "\n")


def validate(global_steps, prompts, n, p_solve, dump_path):
    inputs, outputs, gts, scores = [], [], [], []
    extra = {"reward": [], "acc": []}
    for q, gt in prompts:
        for _ in range(n):  # repeat(interleave=True)
            ok = rng.random() < p_solve
            inputs.append(q)
            outputs.append(f"... so the answer is {gt if ok else gt + 1}")
            gts.append(gt)
            scores.append(1.0 if ok else 0.0)
            extra["reward"].append(1.0 if ok else 0.0)
            extra["acc"].append(ok)
    _dump_generations(global_steps, inputs, outputs, gts, scores, extra, dump_path)


def main():
    shutil.rmtree(HERE / "val", ignore_errors=True)
    prompts = [(f"<|im_start|>user\nWhat is {i} * 7? Let's think step by step.<|im_end|>\n<|im_start|>assistant\n", i * 7) for i in range(6)]
    for step, p in [(20, 0.3), (40, 0.6)]:
        validate(step, prompts, 4, p, str(HERE / "val"))
    exp = {"runs": {}}
    for f in sorted((HERE / "val").glob("*.jsonl")):
        rows = [json.loads(l) for l in f.read_text().splitlines() if l.strip()]
        by = {}
        for r in rows:
            by.setdefault(r["input"], []).append(r["score"] > 0)
        run = f"verl@{rows[0]['step']}"
        exp["runs"][run] = {
            "rows": len(rows),
            "tasks": len(by),
            "samples_per_task": sorted({len(v) for v in by.values()}),
            "pass1": sum(sum(v) / len(v) for v in by.values()) / len(by),
        }
    (HERE / "expected.json").write_text(json.dumps(exp, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
