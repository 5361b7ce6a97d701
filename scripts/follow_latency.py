#!/usr/bin/env python3
"""How soon `rl-audit --follow` shows appended records (issue 20, item 5).

Starts the workbench on DIR in a detached tmux session (its own socket),
waits until the first audit is on screen, then appends ROUNDS records to the
last JSON Lines file of DIR one at a time — copies of its last record with a
new, unused `sample` — and times each from its write until the `a` list
(opened once the audit is on screen) counts it in its title. The appends
land while the audit of the set before them runs; a read-on must not wait
for it.

    python3 scripts/follow_latency.py BIN DIR [ROUNDS]

Prints one line per append, the worst, and when the figures on screen are
of a set holding them all; appends to DIR's files (use a scratch copy).
"""
import json
import os
import re
import subprocess
import sys
import time

bin_, root = sys.argv[1], sys.argv[2]
rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 5
files = sorted(
    os.path.join(d, f)
    for d, _, fs in os.walk(root)
    for f in fs
    if f.endswith(".jsonl")
)
target = files[-1]
with open(target, "rb") as f:
    f.seek(max(0, os.path.getsize(target) - (1 << 20)))
    last = [l for l in f.read().splitlines() if l.strip()][-1]
record = json.loads(last)
sock = "follow-latency"
tmux = ["tmux", "-L", sock]
subprocess.run(tmux + ["kill-server"], stderr=subprocess.DEVNULL)
time.sleep(0.3)
subprocess.run(
    tmux
    + ["new-session", "-d", "-x", "200", "-y", "48", f"{bin_} --follow {root}"],
    check=True,
)


def screen():
    return subprocess.run(
        tmux + ["capture-pane", "-p"], capture_output=True, text=True
    ).stdout


def trajectories(s):
    for pat in (r"with them (\d+)\)", r"none appended since the audit on screen \((\d+) trajectories"):
        hit = re.search(pat, s)
        if hit:
            return int(hit.group(1))
    return None


started = time.time()
while True:
    s = screen()
    if "Headline findings" in s and "loading…" not in s:
        break
    if time.time() - started > 1800:
        sys.exit("the workbench did not show the audit in 30 min")
    time.sleep(0.2)
print(f"first panels after {time.time() - started:.1f} s", flush=True)
# The list of appended records stays open: its title counts them.
subprocess.run(tmux + ["send-keys", "a"], check=True)
while (base := trajectories(screen())) is None:
    time.sleep(0.1)
print(f"{base} trajectories on screen", flush=True)
worst = 0.0
try:
    for i in range(1, rounds + 1):
        # Unused in DIR, also after an earlier run of this script.
        record["sample"] = 10**13 + int(time.time() * 1000)
        with open(target, "a") as f:
            f.write(json.dumps(record) + "\n")
        wrote = time.time()
        # The `a` list's title counts the trajectories with the appended
        # ones ("with them m"), or, all audited, those on screen.
        while True:
            s = screen()
            if "Could not load the logs" in s or "kept the previous results" in s:
                sys.exit(f"append {i}: the workbench refused it:\n{s}")
            m = trajectories(s)
            if m == base + i:
                break
            if time.time() - wrote > 600:
                sys.exit(f"append {i}: not shown after 600 s")
            time.sleep(0.02)
        took = time.time() - wrote
        worst = max(worst, took)
        print(f"append {i}: shown after {took:.2f} s", flush=True)
        time.sleep(1)
    print(f"worst {worst:.2f} s over {rounds} appends", flush=True)
    # Then until the figures are of a set holding them all.
    last = wrote
    while True:
        s = screen()
        if "none appended since the audit on screen" in s and trajectories(s) == base + rounds:
            break
        if "kept the previous results" in s:
            sys.exit(f"the merge or audit failed:\n{s}")
        if time.time() - last > 1800:
            sys.exit("not audited after 30 min")
        time.sleep(0.2)
    print(f"audited with them {time.time() - last:.1f} s after the last append")
finally:
    subprocess.run(tmux + ["kill-server"], stderr=subprocess.DEVNULL)
