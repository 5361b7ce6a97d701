"""Writes verl-agent rollout dumps as verl-agent writes them after the small
patch in the README ("verl-agent"), which adds what the unpatched dump
lacks to group its rows into trajectories.

Source: langfengQ/verl-agent, read from the mirror xlan156/verl-agent at
commit 8ca3a467ba4fc21eb4969a2e2b1097323ca09a53.
- agent_system/multi_turn_rollout/rollout_loop.py: `vanilla_multi_turn_loop`
  (lines 329-461: one `traj_uid` per environment, `uid` per env group,
  `active_masks`, `is_action_valid`, `episode_rewards`/`episode_lengths`
  accumulated over active steps, `success_evaluator` after the loop) and
  `gather_rollout_data` (lines 236-284: only active steps are kept, each
  stamped with its trajectory's episode_rewards / episode_lengths).
  The patch adds `env_step` (the step number, line 363) and
  `traj_success` (`success['success_rate'][bs]`, in gather_rollout_data).
- verl/trainer/ppo/ray_trainer.py: `_dump_generations` (lines 641-661:
  `<dump_path>/<global_steps>.jsonl`, base_data {input, output, score,
  step} plus reward_extra_infos_dict entries of length n, one
  `json.dumps(entry, ensure_ascii=False) + "\\n"` per row), called from the
  rollout_data_dir block (lines 1256-1269) after the batch was balanced
  across ranks (row order not kept); the patch passes the extra columns in
  reward_extra_infos_dict, with `response_tokens` from `response_mask`.

Made-up values (seeded); `expected.json` from the rows written.
Run: python3 tests/data/verl-agent/make.py
"""

import json
import os
import random
import shutil
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent
rng = random.Random(3)
MAX_STEPS = 6


def _dump_generations(global_steps, inputs, outputs, scores, reward_extra_infos_dict, dump_path):
    os.makedirs(dump_path, exist_ok=True)
    filename = os.path.join(dump_path, f"{global_steps}.jsonl")
    n = len(inputs)
    base_data = {"input": inputs, "output": outputs, "score": scores, "step": [global_steps] * n}
    for k, v in reward_extra_infos_dict.items():
        if len(v) == n:
            base_data[k] = v
    with open(filename, "w") as f:
        for i in range(n):
            entry = {k: v[i] for k, v in base_data.items()}
            f.write(json.dumps(entry, ensure_ascii=False) + "\n")


def rollout(n_groups, group_n):
    """vanilla_multi_turn_loop + gather_rollout_data (patched): the kept rows."""
    batch_size = n_groups * group_n
    group_ids = [str(uuid.UUID(int=rng.getrandbits(128))) for _ in range(n_groups)]
    uid_batch = [group_ids[g] for g in range(n_groups) for _ in range(group_n)]
    traj_uid = [str(uuid.UUID(int=rng.getrandbits(128))) for _ in range(batch_size)]
    total = [[] for _ in range(batch_size)]
    is_done = [False] * batch_size
    episode_rewards = [0.0] * batch_size
    episode_lengths = [0.0] * batch_size
    won = [False] * batch_size
    for _step in range(MAX_STEPS):
        active = [not d for d in is_done]
        for i in range(batch_size):
            valid = rng.random() < 0.85
            done = rng.random() < 0.3 or _step == MAX_STEPS - 1
            w = done and valid and rng.random() < 0.6
            reward = 10.0 if w else (-0.1 if not valid else 0.0)
            if active[i]:
                episode_rewards[i] += reward
                episode_lengths[i] += 1
                won[i] = won[i] or w
            total[i].append({
                "input": f"Task {uid_batch[i][:4]}: your admissible actions are ... (step {_step + 1})",
                "output": rng.choice(["go to desk 1", "take mug 1", "open drawer 2", "look"]),
                "score": reward,
                "uid": uid_batch[i], "traj_uid": traj_uid[i], "env_step": _step + 1,
                "active_masks": active[i], "is_action_valid": valid,
                "response_tokens": rng.randint(5, 40),
            })
            if active[i] and done:
                is_done[i] = True
        if all(is_done):
            break
    rows = []
    for bs in range(batch_size):
        for data in total[bs]:
            if data["active_masks"]:
                data["episode_rewards"] = episode_rewards[bs]
                data["episode_lengths"] = episode_lengths[bs]
                data["traj_success"] = float(won[bs])
                rows.append(data)
    return rows


def main():
    shutil.rmtree(HERE / "rollout_data", ignore_errors=True)
    for global_step in (1, 2):
        rows = rollout(3, 2)
        rng.shuffle(rows)  # _balance_batch reorders the batch
        keys = ["traj_uid", "uid", "env_step", "active_masks", "is_action_valid", "episode_rewards", "episode_lengths", "traj_success", "response_tokens"]
        extra = {k: [r[k] for r in rows] for k in keys}
        _dump_generations(global_step, [r["input"] for r in rows], [r["output"] for r in rows], [r["score"] for r in rows], extra, str(HERE / "rollout_data"))
    exp = {"steps": {}}
    for f in sorted((HERE / "rollout_data").glob("*.jsonl")):
        rows = [json.loads(l) for l in f.read_text().splitlines()]
        trajs = {}
        for r in rows:
            trajs.setdefault(r["traj_uid"], []).append(r)
        exp["steps"][f.stem] = {
            "rows": len(rows),
            "trajectories": len(trajs),
            "groups": len({r["uid"] for r in rows}),
            "solved": sum(1 for t in trajs.values() if t[0]["traj_success"] > 0),
            "invalid_steps": sum(1 for r in rows if not r["is_action_valid"]),
            "tokens": sum(r["response_tokens"] for r in rows),
        }
    (HERE / "expected.json").write_text(json.dumps(exp, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
