"""Writes AReaL rollout dumps exactly as AReaL's own executor does.

Source: inclusionAI/AReaL at commit 4aef98d8d818af55b43621aaadba047ae10f4e77.
- areal/utils/stats_logger.py lines 165-181 (`get_log_path`):
  `<fileroot>/logs/<user>/<experiment_name>/<trial_name>`.
- areal/infra/workflow_executor.py lines 818-832 (`_get_dump_dir`:
  `eval-rollout` or `rollout`) and 834-919 (`_dump_trajectory`): per
  trajectory batch, `<dump_dir>/<tail_version>/<task_id>.jsonl` opened for
  append, one `json.dumps(record) + "\\n"` per sample with a completion:
  {task_id, sample_idx, seqlen, prompt_len, head_version, tail_version,
  reward, prompt, completion}. `task_id` is the executor's submission
  counter.

Tokenisation is replaced by whitespace tokens (seqlen and prompt_len count
them). Made-up values (seeded); `expected.json` from the rows written.
Run: python3 tests/data/areal/make.py
"""

import json
import os
import random
import shutil
from pathlib import Path

HERE = Path(__file__).resolve().parent
rng = random.Random(5)


def dump_trajectory(dump_dir, task_id, prompt, completions, rewards, versions):
    tail_version, head_version = max(versions), min(versions)
    version_dir = os.path.join(dump_dir, str(tail_version))
    os.makedirs(version_dir, exist_ok=True)
    with open(os.path.join(version_dir, f"{task_id}.jsonl"), "a") as f:
        for i, (completion, reward) in enumerate(zip(completions, rewards)):
            prompt_end = len(prompt.split())
            seqlen = prompt_end + len(completion.split())
            record = {
                "task_id": task_id,
                "sample_idx": i,
                "seqlen": seqlen,
                "prompt_len": prompt_end,
                "head_version": head_version,
                "tail_version": tail_version,
                "reward": reward,
                "prompt": prompt,
                "completion": completion,
            }
            f.write(json.dumps(record) + "\n")


def main():
    shutil.rmtree(HERE / "fileroot", ignore_errors=True)
    log_path = HERE / "fileroot" / "logs" / "alice" / "gsm8k-grpo" / "trial0"
    task_id = 0
    for version, p in [(5, 0.25), (10, 0.55)]:
        for q in range(5):
            task_id += 1  # the executor's counter: new for every submission
            prompt = f"Question {q}: what is {q} plus {q}?"
            ok = [rng.random() < p for _ in range(4)]
            dump_trajectory(str(log_path / "eval-rollout"), task_id, prompt, [f"It is {2 * q if o else 0}" for o in ok], [1.0 if o else 0.0 for o in ok], [version - 1, version])
    # A training rollout folder beside it (not read by the eval mapping).
    dump_trajectory(str(log_path / "rollout"), 99, "Question 0: what is 0 plus 0?", ["It is 0"], [1.0], [4])
    exp = {"runs": {}}
    for vdir in sorted((log_path / "eval-rollout").iterdir()):
        by = {}
        n = 0
        for f in sorted(vdir.glob("*.jsonl")):
            for l in f.read_text().splitlines():
                r = json.loads(l)
                by.setdefault(r["prompt"], []).append(r["reward"] > 0)
                n += 1
        exp["runs"][f"areal@{vdir.name}"] = {
            "rows": n,
            "tasks": len(by),
            "samples_per_task": sorted({len(v) for v in by.values()}),
            "pass1": sum(sum(v) / len(v) for v in by.values()) / len(by),
        }
    (HERE / "expected.json").write_text(json.dumps(exp, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
