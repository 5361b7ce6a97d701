"""Writes rLLM episode folders exactly as rLLM's own writers lay them out.

Source: rllm-org/rllm at commit 9beb6e0f676a46d38858991fd79ac5f8e0b16d4c.

- Models: the pydantic `Step` (rllm/types.py lines 100-167), `Trajectory`
  (241-270) and `Episode` (317-347) are declared below with the same field
  names, types and defaults (methods left out: serialisation uses
  pydantic's own `model_dump`), and `TerminationReason`
  (rllm/workflows/workflow.py lines 18-25).
- `rllm eval`: `EvalEpisodeStore` (rllm/eval/episode_store.py lines 29-104):
  `<run_dir>/meta.json` by `write_meta` (`json.dump(indent=2)`, the dict of
  rllm/cli/eval.py lines 395-404), and
  `<run_dir>/episodes/episode_<idx:06d>_<sanitised id>.json` by `write`
  (`episode.model_dump(mode="json")` plus `eval_idx`, `json.dump(indent=2,
  default=_json_default)`). Episode ids are `f"{task_id}:{rollout_idx}"`
  (rllm/engine/agentflow_engine.py lines 419-423, 477-479) and
  `episode.task` is the task's metadata dict (line 468); tasks are expanded
  into `attempts` adjacent copies (rllm/eval/runner.py lines 81-84).
- Training: `EpisodeLogger.log_episode` (rllm/utils/episode_logger.py lines
  79-141: the hand-built dict, `json.dumps(indent=2, default=str) + "\\n"`)
  into `<base>/episodes/{train|val}_step_<N>_epoch_<E>/`, file names from
  `get_episode_filename` (60-77), task hash from `compute_task_hash` (28-43),
  and `batch_summary.json` from `log_episodes_batch` (161-197). Training
  episode ids are `f"{uid}:{k}"` with a fresh uuid per batch row.

The values are made up (seeded); `expected.json` holds what an audit must
find, computed here from the files just written with HumanEval's pass@k.

Run: python3 tests/data/rllm/make.py  (needs pydantic 2)
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import shutil
import uuid
from enum import Enum
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

HERE = Path(__file__).resolve().parent


# --- rllm/workflows/workflow.py lines 18-25 ---------------------------------
class TerminationReason(Enum):
    MAX_PROMPT_LENGTH_EXCEEDED = "max_prompt_length_exceeded"
    MAX_RESPONSE_LENGTH_EXCEEDED = "max_response_length_exceeded"
    ENV_DONE = "env_done"
    MAX_TURNS_EXCEEDED = "max_turns_exceeded"
    TIMEOUT = "timeout"
    UNKNOWN = "unknown"
    ERROR = "error"


# --- rllm/types.py lines 100-167 (fields only) -------------------------------
class Step(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True, populate_by_name=True)
    id: str = Field(default_factory=lambda: str(uuid.uuid4()))
    input: Any | None = None
    output: Any | None = None
    action: Any | None = None
    reward: float = 0.0
    done: bool = False
    metadata: dict | None = None
    prompt_ids: list[int] | list[Any] = Field(default_factory=list)
    response_ids: list[int] = Field(default_factory=list)
    logprobs: list[float] = Field(default_factory=list)
    routing_matrices: list[str] | None = None
    chat_completions: list[dict[str, Any]] = Field(default_factory=list)
    observation: Any = None
    thought: str = ""
    model_response: str = ""
    model_output: Any = None
    mc_return: float = 0.0
    advantage: list[float] | float | None = None
    weight_version: int | None = None


# --- rllm/types.py lines 241-270 ----------------------------------------------
class Trajectory(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True, populate_by_name=True)
    uid: str = Field(default_factory=lambda: str(uuid.uuid4()))
    name: str = "default_traj_name"
    task: Any = None
    steps: list[Step] = Field(default_factory=list)
    reward: float | None = None
    input: dict | None = None
    output: Any = None
    signals: dict[str, float] = Field(default_factory=dict)
    metadata: dict | None = None


# --- rllm/types.py lines 317-347 ----------------------------------------------
class Episode(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True, populate_by_name=True)
    id: str = Field(default_factory=lambda: str(uuid.uuid4()))
    task: Any = None
    termination_reason: Any | None = None
    is_correct: bool = False
    session_id: str | None = None
    trajectories: list[Trajectory] = Field(default_factory=list)
    artifacts: dict[str, Any] = Field(default_factory=dict)
    metrics: dict = Field(default_factory=dict)
    metadata: dict = Field(default_factory=dict)


# --- rllm/eval/episode_store.py lines 29-64 -----------------------------------
def _sanitize(s: str) -> str:
    out = []
    for ch in str(s):
        if ch.isalnum() or ch in "-_.":
            out.append(ch)
        else:
            out.append("_")
    return "".join(out) or "_"


def _json_default(obj: Any) -> Any:
    import dataclasses

    if isinstance(obj, Path):
        return str(obj)
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return dataclasses.asdict(obj)
    return str(obj)


# --- EvalEpisodeStore.write_meta / episode_path / write (lines 81-104) --------
def write_meta(run_dir: Path, meta: dict) -> None:
    run_dir.mkdir(parents=True, exist_ok=True)
    with open(run_dir / "meta.json", "w", encoding="utf-8") as f:
        json.dump(meta, f, indent=2, default=_json_default)


def write_eval_episode(run_dir: Path, idx: int, episode: Episode) -> None:
    episodes_dir = run_dir / "episodes"
    episodes_dir.mkdir(parents=True, exist_ok=True)
    task = episode.task
    task_id = getattr(task, "id", None) if task is not None else None
    if task_id is None:
        task_id = episode.id
    path = episodes_dir / f"episode_{idx:06d}_{_sanitize(task_id)}.json"
    data = episode.model_dump(mode="json")
    data["eval_idx"] = idx
    with open(path, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=2, default=_json_default)


# --- rllm/utils/episode_logger.py lines 28-197 --------------------------------
def compute_task_hash(task: Any, length: int = 8) -> str:
    task_str = json.dumps(task, sort_keys=True, default=str)
    return hashlib.sha256(task_str.encode("utf-8")).hexdigest()[:length]


def log_episode(log_dir: Path, episode: Episode, step: int, mode: str, epoch: int = 0) -> str:
    episode_data = {
        "training_step": step,
        "epoch": epoch,
        "episode_id": episode.id,
        "session_id": episode.session_id,
        "task": episode.task,
        "task_hash": compute_task_hash(episode.task),
        "is_correct": episode.is_correct,
        "termination_reason": (episode.termination_reason.value if episode.termination_reason else None),
        "metrics": episode.metrics,
        "metadata": episode.metadata,
        "timing": {},
        "trajectories": [],
    }
    for traj in episode.trajectories:
        traj_data = {
            "name": traj.name,
            "uid": traj.uid,
            "reward": traj.reward,
            "num_steps": len(traj.steps),
            "timing": {},
            "steps": [
                {
                    "observation": step.observation,
                    "thought": step.thought,
                    "action": step.action,
                    "reward": step.reward,
                    "done": step.done,
                    "model_response": step.model_response,
                    "chat_completions": step.chat_completions,
                    "timing": {},
                }
                for step in traj.steps
            ],
        }
        episode_data["trajectories"].append(traj_data)
    step_dir = log_dir / f"{mode}_step_{step}_epoch_{epoch}"
    step_dir.mkdir(parents=True, exist_ok=True)
    episode_id_safe = str(episode.id).replace(":", "_").replace("/", "_")
    filename = f"episode_hash{compute_task_hash(episode.task)}_id{episode_id_safe}.json"
    with open(step_dir / filename, "w") as f:
        f.write(json.dumps(episode_data, indent=2, default=str) + "\n")
    return filename


def log_batch_summary(log_dir: Path, episodes: list[Episode], files: list[str], step: int, mode: str, epoch: int = 0) -> None:
    summary_data = {
        "training_step": step,
        "epoch": epoch,
        "mode": mode,
        "num_episodes": len(episodes),
        "episode_files": files,
        "summary_stats": {
            "total_correct": sum(1 for ep in episodes if ep.is_correct),
            "total_incorrect": sum(1 for ep in episodes if not ep.is_correct),
            "accuracy": sum(1 for ep in episodes if ep.is_correct) / len(episodes) if episodes else 0,
            "avg_trajectories_per_episode": sum(len(ep.trajectories) for ep in episodes) / len(episodes) if episodes else 0,
        },
    }
    with open(log_dir / f"{mode}_step_{step}_epoch_{epoch}" / "batch_summary.json", "w") as f:
        json.dump(summary_data, f, indent=2)


# --- made-up rollouts ---------------------------------------------------------
rng = random.Random(20261201)
uid_counter = [0]


def fresh_uuid() -> str:
    uid_counter[0] += 1
    return str(uuid.UUID(int=rng.getrandbits(128)))


TOOLS = ["ls", "cat README.md", {"name": "search", "arguments": {"q": "budget"}}, "python run.py", "submit"]


def make_episode(ep_id: str, task: Any, p_solve: float, with_tokens: bool, judge: bool) -> Episode:
    turns = rng.randint(1, 6)
    correct = rng.random() < p_solve
    steps = []
    for t in range(turns):
        n_tok = rng.randint(3, 9)
        steps.append(
            Step(
                id=fresh_uuid(),
                action=rng.choice(TOOLS),
                observation=f"output of call {t + 1}",
                model_response=f"thinking about step {t + 1}",
                response_ids=[rng.randint(0, 50000) for _ in range(n_tok)] if with_tokens else [],
                logprobs=[round(-rng.random(), 4) for _ in range(n_tok)] if with_tokens else [],
                reward=0.0,
                done=t == turns - 1,
            )
        )
    trajectories = [Trajectory(uid=fresh_uuid(), name="solver", steps=steps, reward=1.0 if correct else 0.0)]
    if judge:
        trajectories.append(
            Trajectory(
                uid=fresh_uuid(),
                name="judge",
                steps=[Step(id=fresh_uuid(), action="verdict: " + ("pass" if correct else "fail"), observation=None, done=True)],
                reward=1.0 if correct else 0.0,
            )
        )
    if correct:
        reason = TerminationReason.ENV_DONE
    else:
        reason = rng.choice([TerminationReason.MAX_TURNS_EXCEEDED, TerminationReason.ENV_DONE, TerminationReason.ERROR])
    return Episode(id=ep_id, task=task, termination_reason=reason, is_correct=correct, trajectories=trajectories)


def eval_run(run_dir: Path, model: str, tasks: list[dict], attempts: int, p_solve: float) -> None:
    write_meta(
        run_dir,
        {"benchmark": "bfcl-mt", "model": model, "agent": "tool_agent", "split": "test", "timestamp": "20261201_000000", "attempts": attempts},
    )
    idx = 0
    for i, task in enumerate(tasks):
        for k in range(attempts):
            # Every other task records token ids and log-probabilities; the
            # rest leave them empty ([]), as many rllm eval flows do.
            ep = make_episode(f"{task['id']}:{k}", task, p_solve, with_tokens=i % 2 == 0, judge=i == 1)
            write_eval_episode(run_dir, idx, ep)
            idx += 1


def training_run(base: Path, tasks: list[dict]) -> None:
    log_dir = base / "episodes"
    for step, mode, n in [(10, "train", 4), (10, "val", 3), (20, "val", 3)]:
        episodes, files = [], []
        for task in tasks:
            uid = fresh_uuid()
            for k in range(n):
                ep = make_episode(f"{uid}:{k}", task, 0.5 if step == 10 else 0.7, with_tokens=False, judge=False)
                files.append(log_episode(log_dir, ep, step, mode))
                episodes.append(ep)
        log_batch_summary(log_dir, episodes, files, step, mode)


def pass_at_k(n: int, c: int, k: int) -> float:
    # HumanEval (Chen et al. 2021), numerically stable form.
    if n - c < k:
        return 1.0
    return 1.0 - math.prod(1.0 - k / i for i in range(n - c + 1, n + 1))


def expected_eval(run_dirs: list[Path], levels=(25, 50, 75, 100), ks=(1, 2, 4)) -> dict:
    """Reads the episode files back and computes the audit's figures."""
    rows = []  # (run, task, turns, correct)
    for rd in run_dirs:
        meta = json.loads((rd / "meta.json").read_text())
        for p in sorted((rd / "episodes").glob("episode_*.json")):
            ep = json.loads(p.read_text())
            task, _, _ = ep["id"].rpartition(":")
            turns = sum(len(t["steps"]) for t in ep["trajectories"])
            rows.append((meta["model"], task, turns, ep["is_correct"]))
    budget = {}
    for _, task, turns, _ in rows:
        budget[task] = max(budget.get(task, 1), turns)
    out = []
    for run in sorted({r[0] for r in rows}):
        for level in levels:
            for mode in ("native", "truncated"):
                for k in ks:
                    vals = []
                    for task in sorted(budget):
                        b = budget[task]
                        t = max(1, math.ceil(level * b / 100))
                        if mode == "native" and t != b:
                            continue
                        if mode == "truncated" and t >= b:
                            continue
                        mine = [r for r in rows if r[0] == run and r[1] == task]
                        n = len(mine)
                        c = sum(1 for r in mine if r[3] and r[2] <= t)
                        if n >= k:
                            vals.append(pass_at_k(n, c, k))
                    if vals:
                        out.append({"run": run, "level": level, "t_mode": mode, "k": k, "value": sum(vals) / len(vals), "tasks": len(vals)})
    return {"trajectories": len(rows), "budget": budget, "pass_at_kt": out}


def main() -> None:
    root = HERE
    for d in ("eval", "train"):
        shutil.rmtree(root / d, ignore_errors=True)
    # Task ids as rLLM datasets have them; one contains ':' (split at the last).
    tasks = [{"id": f"multi_turn_base_{i}", "question": f"q{i}", "data_source": "bfcl"} for i in range(4)]
    tasks.append({"id": "multi_turn:long_context_7", "question": "q7", "data_source": "bfcl"})
    # `episode.task` is the task metadata (a dict), so the eval file name falls back to the episode id.
    eval_run(root / "eval" / "bfcl-mt_Qwen_Qwen3-4B_20261201_000000", "Qwen/Qwen3-4B", tasks, 4, 0.4)
    eval_run(root / "eval" / "bfcl-mt_Qwen3-4B-grpo_20261201_000000", "Qwen3-4B-grpo", tasks, 4, 0.6)
    training_run(root / "train" / "logs" / "bfcl-agent" / "grpo-run", tasks[:3])
    exp = expected_eval(sorted((root / "eval").iterdir()))
    (root / "expected.json").write_text(json.dumps(exp, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
