#!/usr/bin/env python3
"""The Ray driver on a real local Ray cluster (processes, not local_mode).

A log set made here — by this file's own generator, not rl-audit's — is
written as 12 files, summarized in 8 shards as Ray tasks, and the audit of
the summaries is compared with the audit of the logs: report.json must be
identical in every section but `notes`, which says summaries were read.
Run by scripts/test.sh (README's test command) with the rl-audit binary of
`cargo test` (RL_AUDIT_BIN, else $CARGO_TARGET_DIR/debug/rl-audit).
"""

import glob
import gzip
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

# Before ray is imported anywhere: Ray reads these at import.
import rl_audit_ray  # noqa: E402

for k, v in rl_audit_ray.LOCAL_ONLY_ENV.items():
    os.environ[k] = v

BIN = os.environ.get("RL_AUDIT_BIN") or os.path.join(
    os.environ.get("CARGO_TARGET_DIR", os.path.join(REPO, "target")), "debug", "rl-audit"
)
RUNS = {"base": "base", "grpo": "grpo", "bm": "budgetmix"}
FULL = 12


def rollout(rng, run, task, budget, sample, min_turns, skill, extra):
    """One trajectory record: success turn drawn from the run's skill."""
    solve_at = min_turns + int(rng.expovariate(skill))
    success = solve_at <= budget and rng.random() < 0.85
    if success:
        turns, termination = solve_at, "success"
    elif rng.random() < 0.3:
        turns, termination = rng.randint(1, budget), rng.choice(["wrong", "error"])
    else:
        turns, termination = budget, "budget"
    steps = []
    for k in range(1, turns + 1):
        step = {
            "turn": k,
            "action": rng.choice(["search(q)", "open(doc)", "retry(call)", "answer(x)"]),
            "observation": "result " * rng.randint(1, 6),
            "output_tokens": rng.randint(5, 80),
            "error": rng.random() < 0.12,
            "logp": {r: -abs(rng.gauss(1.5, 0.7)) * rng.randint(5, 40) for r in RUNS},
        }
        if extra.get("disclose"):
            step["budget_total"] = budget
            step["budget_remaining"] = budget - k
        steps.append(step)
    rec = {
        "run": run,
        "method": RUNS[run],
        "benchmark": "toolsim",
        "task": task,
        "sample": sample,
        "budget": budget,
        "max_budget": FULL,
        "min_turns": min_turns,
        "success": success,
        "turns": turns,
        "termination": termination,
        "reward": (1.0 if success else 0.0) + rng.random() * 1e-3,
        "steps": steps,
    }
    if success:
        rec["success_turn"] = turns
    rec.update({k: v for k, v in extra.items() if k != "disclose"})
    return rec


def make_logs(root, seed=7):
    """12 files: run declarations, eval by run (one gzipped), training by
    step, matched and error probes, checkpoints."""
    rng = random.Random(seed)
    files = {}
    tasks = [(f"t{i:03d}", 2 + i % 4, ["lookup", "compose"][i % 2]) for i in range(40)]
    files["runs.jsonl"] = [{"kind": "run", "run": r, "method": m} for r, m in RUNS.items()]
    skill = {"base": 0.25, "grpo": 0.45, "bm": 0.4}
    for run in RUNS:
        seeds = ["0", "1"] if run == "grpo" else [None]
        for s in seeds:
            recs = []
            for task, mt, cat in tasks:
                for budget in (3, 6, 9, FULL):
                    for sample in range(4 if budget < FULL else 8):
                        extra = {"category": cat}
                        if s is not None:
                            extra["seed"] = s
                        recs.append(rollout(rng, run, task, budget, sample, mt, skill[run], extra))
            name = f"eval/{run}.jsonl" if s is None else f"eval/{run}-seed{s}.jsonl"
            if run == "grpo" and s == "1":
                name += ".gz"
            files[name] = recs
    for step in (1, 2, 3, 4):
        recs = []
        for g in range(8):
            task, mt, cat = tasks[(step * 8 + g) % len(tasks)]
            budget = rng.choice([2, 4, 5, 6, 7, 8, 10, 11, 12])
            for sample in range(4):
                r = rollout(rng, "bm", task, budget, sample, mt, skill["bm"],
                            {"train_step": step, "group": g, "category": cat, "disclose": True})
                if not r["success"]:
                    r["reward"] = 0.0
                recs.append(r)
        files[f"train/step-{step}.jsonl"] = recs
    for kind, error in (("matched", False), ("errors", True)):
        recs = []
        for i, (task, _, _) in enumerate(tasks):
            for source in ("base", "grpo"):
                cands = []
                for run in ("base", "grpo", "bm"):
                    for a in range(2):
                        c = {"run": run, "action": f"act-{a}", "score": rng.gauss(0.5, 0.2)}
                        if error:
                            c["corrects"] = rng.random() < (0.5 if run != "base" else 0.3)
                            c["terminal_success"] = rng.random() < 0.4
                        cands.append(c)
                recs.append({"kind": "probe", "benchmark": "toolsim", "task": task,
                             "state": f"{kind}-{task}-{source}", "source": source,
                             "turn": 1 + i % 5, "error": error, "candidates": cands})
        files[f"probes/{kind}.jsonl"] = recs
    files["checkpoints.jsonl"] = [
        {"kind": "checkpoint", "run": run, "step": 10 * k,
         "r_multi": 0.3 + 0.02 * k + rng.gauss(0, 0.01),
         "r_single": 0.8 - 0.004 * k + rng.gauss(0, 0.005), "kl": rng.random()}
        for run in ("grpo", "bm") for k in range(12)
    ]
    for name, recs in files.items():
        path = os.path.join(root, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        text = "".join(json.dumps(r) + "\n" for r in recs).encode()
        if name.endswith(".gz"):
            text = gzip.compress(text, mtime=0)
        with open(path, "wb") as f:
            f.write(text)
    return sum(len(r) for n, r in files.items() if n.startswith(("eval", "train"))), len(files)


def audit(cwd, path, out, *extra):
    p = subprocess.run(
        [BIN, "--headless", path, "--out", out, "--resamples", "300", *extra],
        cwd=cwd, capture_output=True, text=True,
    )
    assert p.returncode == 0, f"rl-audit --headless {path} failed: {p.stderr}"
    with open(os.path.join(cwd, out, "report.json")) as f:
        return json.load(f)


def assert_same(raw, merged, summaries, rename=None):
    """Every section equal but notes (one more: what was read); with
    `rename` = (prefix, local prefix), the summaries' file names (in
    inputs.files and wherever a record is cited) start with prefix."""
    if rename is not None:
        text = json.dumps(merged)
        old, new = (json.dumps(x)[1:-1] for x in rename)
        assert old in text
        merged = json.loads(text.replace(old, new))
    raw, merged = dict(raw), dict(merged)
    notes_raw, notes_merged = raw.pop("notes"), merged.pop("notes")
    said = [n for n in notes_merged if n.startswith(f"read {summaries} summar")]
    assert len(said) == 1, notes_merged
    assert [n for n in notes_merged if n != said[0]] == notes_raw, (notes_raw, notes_merged)
    assert set(raw) == set(merged)
    for section in raw:
        assert raw[section] == merged[section], f"section {section} differs"


def listening():
    """Local addresses of the machine's listening TCP sockets."""
    out = set()
    for table, v6 in (("/proc/net/tcp", False), ("/proc/net/tcp6", True)):
        try:
            lines = open(table).read().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            f = line.split()
            if f[3] != "0A":
                continue
            addr, port = f[1].split(":")
            raw = bytes.fromhex(addr)
            if v6:
                words = [raw[i : i + 4][::-1] for i in range(0, 16, 4)]
                b = b"".join(words)
                ip = "::ffff:" + ".".join(str(x) for x in b[12:]) if b[:12] == b"\0" * 10 + b"\xff\xff" else b.hex()
            else:
                ip = ".".join(str(x) for x in raw[::-1])
            out.add((ip, int(port, 16)))
    return out


def interrupted_shard_leaves_no_folder():
    """A cancel lands as a KeyboardInterrupt between any two steps of a
    shard: here right as its folder is made (the mkdir done, nothing after
    it). The folder goes all the same. With the folder made by `mkdtemp`
    before the `try`, named only on its return, it stayed (seen once in CI)."""
    real_mkdir = os.mkdir
    made = []

    def mkdir_then_interrupt(path, *args, **kwargs):
        real_mkdir(path, *args, **kwargs)
        made.append(path)
        raise KeyboardInterrupt

    os.mkdir = mkdir_then_interrupt
    try:
        rl_audit_ray.summarize_shard(7, BIN, ["x.jsonl"], os.getcwd(), False, [])
        raise AssertionError("the interrupt must come through")
    except KeyboardInterrupt:
        pass
    finally:
        os.mkdir = real_mkdir
    assert len(made) == 1 and "rl-audit-shard-00007-" in made[0], made
    assert not os.path.exists(made[0]), f"{made[0]} left behind"


def main():
    assert os.path.isfile(BIN), f"{BIN}: build rl-audit first (cargo test builds it)"
    started = time.time()
    interrupted_shard_leaves_no_folder()
    work = tempfile.mkdtemp(prefix="rl-audit-ray-test-")
    try:
        trajectories, n_files = make_logs(os.path.join(work, "logs"))
        assert n_files == 12

        # 1. The driver as users run it: its own cluster (defaults), 8 shards.
        t0 = time.time()
        p = subprocess.run(
            [sys.executable, os.path.join(HERE, "summarize.py"), "--out", "sum",
             "--shards", "8", "--bin", BIN, "--num-cpus", "2", "logs"],
            cwd=work, capture_output=True, text=True,
            env={k: v for k, v in os.environ.items() if k not in rl_audit_ray.LOCAL_ONLY_ENV},
        )
        assert p.returncode == 0, p.stderr
        assert p.stdout.strip().splitlines()[-1] == "rl-audit --headless sum --out report/", p.stdout
        shards = sorted(f for f in os.listdir(os.path.join(work, "sum")) if f.endswith(".jsonl.zst"))
        assert shards == [f"shard-{i:05d}.jsonl.zst" for i in range(8)], shards
        driver_s = time.time() - t0
        grep = ("--grep", r"^retry\(")
        raw = audit(work, "logs", "raw", *grep)
        assert raw["grep"], "the behaviour split re-reads actions from the logs"
        assert_same(raw, audit(work, "sum", "merged", *grep), 8)
        size = sum(os.path.getsize(os.path.join(work, "sum", s)) for s in shards)
        print(f"test_ray: {trajectories} trajectories in {n_files} files, 8 shards: "
              f"{size} summary bytes = {size / trajectories:.0f} B per trajectory; driver {driver_s:.1f} s")

        # 2. In this process: the cluster is real processes on 127.0.0.1 only.
        before = listening()
        ray = rl_audit_ray.start_ray(num_cpus=2)
        try:
            nodes = [n for n in ray.nodes() if n["Alive"]]
            assert len(nodes) == 1 and nodes[0]["NodeManagerAddress"] == "127.0.0.1", nodes
            assert ray.cluster_resources().get("CPU") == 2
            opened = listening() - before
            assert opened, "the cluster listens somewhere"
            outside = {a for a in opened if a[0] not in ("127.0.0.1", "::ffff:127.0.0.1", "::1")}
            assert not outside, f"Ray listens beyond loopback: {outside}"

            # Object-store URIs through pyarrow's filesystem (file:// here).
            uri = "file://" + os.path.join(work, "logs")
            r = rl_audit_ray.run(["--out", os.path.join(work, "sum-uri"), "--shards", "8",
                                  "--bin", BIN, uri])
            assert len(r.summaries) == 8 and os.getpid() not in r.pids and r.pids, r.pids
            names = [f.name for s in r.shards for f in s]
            assert len(names) == 12 and all(n.startswith(uri + "/") for n in names), names
            # (No --grep: the actions would be re-read from the object store.)
            plain = audit(work, "logs", "raw-plain")
            merged = audit(work, "sum-uri", "merged-uri")
            assert merged["inputs"]["files"] == names
            assert_same(plain, merged, 8, rename=(uri + "/", "logs/"))

            # A bad record: the shard's error names file:line: field, nothing is written,
            # and the shards stopped because of it leave no folder behind.
            shard_dirs = os.path.join(tempfile.gettempdir(), "rl-audit-shard-*")
            before_bad = set(glob.glob(shard_dirs))
            bad = os.path.join(work, "logs-bad")
            shutil.copytree(os.path.join(work, "logs"), bad)
            with open(os.path.join(bad, "train", "step-2.jsonl"), "a") as f:
                f.write('{"run": "bm", "benchmark": "toolsim", "task": "t000", "budget": 0, "success": false}\n')
            try:
                rl_audit_ray.run(["--out", os.path.join(work, "sum-bad"), "--shards", "8",
                                  "--bin", BIN, bad])
                raise AssertionError("a bad record must fail its shard")
            except rl_audit_ray.ShardFailed as e:
                want = f"{bad}/train/step-2.jsonl:33: budget: must be between 1 and 1000000, got 0"
                assert want in str(e), str(e)
                assert e.code == 2
            left = [f for f in os.listdir(os.path.join(work, "sum-bad")) if f.startswith("shard-")]
            assert left == [], left
            left = set(glob.glob(shard_dirs)) - before_bad
            assert not left, f"shard folders left behind: {sorted(left)}"
            # Summaries already in --out would be counted twice: refused.
            try:
                rl_audit_ray.run(["--out", os.path.join(work, "sum"), "--bin", BIN,
                                  os.path.join(work, "logs")])
                raise AssertionError("a folder of summaries must not be written into")
            except rl_audit_ray.UsageError as e:
                assert "already holds 8 summaries" in str(e), str(e)
        finally:
            ray.shutdown()
        print(f"test_ray: ok in {time.time() - started:.1f} s")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
