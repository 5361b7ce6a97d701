"""Writes SkyRL evaluation dumps exactly as SkyRL's own code does.

Source: NovaSky-AI/SkyRL at commit a9564572eb8e91076be43c1bd5e4615e3de17265.
- skyrl/train/evaluate.py lines 146-160: the dump folder is
  `<export_path>/dumped_evals/` + (`eval_only` if global_step is None else
  `global_step_{N}_evals`).
- skyrl/train/utils/trainer_utils.py lines 220-224 (`sanitize_data_source`)
  and 324-369 (`dump_per_dataset_eval_results`): one `<data_source>.jsonl`
  per data source, rows {input_prompt, output_response, score, stop_reason,
  env_class, env_extras, data_source} written with `json.dumps(entry,
  ensure_ascii=False) + "\\n"`, and `aggregated_results.jsonl` holding the
  metrics dict.

Made-up values (seeded); `expected.json` is computed from the rows written.
Run: python3 tests/data/skyrl/make.py
"""

import json
import random
import shutil
from pathlib import Path

HERE = Path(__file__).resolve().parent
rng = random.Random(11)


def sanitize_data_source(data_source):
    if data_source is None:
        return "unknown"
    return data_source.replace("/", "_")


def dump_per_dataset_eval_results(dump_dir_path, input_prompts, output_responses, outputs, data_sources, envs, env_extras, eval_metrics):
    data_source_indices = {}
    for i, data_source in enumerate(data_sources):
        if data_source is None:
            data_source = "unknown"
        data_source_indices.setdefault(data_source, []).append(i)
    for data_source, indices in data_source_indices.items():
        filename = dump_dir_path / f"{sanitize_data_source(data_source)}.jsonl"
        with open(filename, "w") as f:
            for i in indices:
                entry = {
                    "input_prompt": input_prompts[i],
                    "output_response": output_responses[i],
                    "score": outputs["rewards"][i],
                    "stop_reason": outputs.get("stop_reasons", [None] * len(input_prompts))[i],
                    "env_class": envs[i],
                    "env_extras": env_extras[i],
                    "data_source": data_source,
                }
                f.write(json.dumps(entry, ensure_ascii=False) + "\n")
    with open(dump_dir_path / "aggregated_results.jsonl", "w") as f:
        f.write(json.dumps(eval_metrics, ensure_ascii=False) + "\n")


def evaluate(export_path, global_step, n_samples, p_solve):
    folder = "eval_only" if global_step is None else f"global_step_{global_step}_evals"
    d = export_path / "dumped_evals" / folder
    d.mkdir(parents=True, exist_ok=True)
    prompts, responses, rewards, stops, envs, extras, sources = [], [], [], [], [], [], []
    for ds, n_tasks in [("openai/gsm8k", 4), ("sql", 3)]:
        for t in range(n_tasks):
            for _ in range(n_samples):
                ok = rng.random() < p_solve
                prompts.append(f"<|im_start|>user\n[{ds}] problem {t}<|im_end|>\n")
                responses.append("answer" if ok else "wrong answer")
                rewards.append(1.0 if ok else 0.0)
                stops.append("stop" if rng.random() < 0.8 else "length")
                envs.append("gsm8k" if ds != "sql" else "text2sql")
                extras.append({"data_source": ds, "reward_spec": {"ground_truth": str(t)}})
                sources.append(ds)
    metrics = {"eval/all/avg_score": sum(rewards) / len(rewards)}
    dump_per_dataset_eval_results(d, prompts, responses, {"rewards": rewards, "stop_reasons": stops}, sources, envs, extras, metrics)


def main():
    shutil.rmtree(HERE / "export", ignore_errors=True)
    export = HERE / "export"
    evaluate(export, 10, 4, 0.3)
    evaluate(export, 20, 4, 0.5)
    evaluate(export, None, 2, 0.5)
    exp = {"runs": {}}
    for d in sorted((export / "dumped_evals").iterdir()):
        run = "skyrl@" + (d.name.split("_")[2] if d.name.startswith("global_step_") else "eval_only")
        for f in sorted(d.glob("*.jsonl")):
            if f.name == "aggregated_results.jsonl":
                continue
            rows = [json.loads(l) for l in f.read_text().splitlines()]
            by = {}
            for r in rows:
                by.setdefault(r["input_prompt"], []).append(r["score"] > 0)
            exp["runs"][f"{run}/{rows[0]['data_source']}"] = {
                "rows": len(rows),
                "tasks": len(by),
                "samples_per_task": sorted({len(v) for v in by.values()}),
                "pass1": sum(sum(v) / len(v) for v in by.values()) / len(by),
            }
    (HERE / "expected.json").write_text(json.dumps(exp, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
