#!/usr/bin/env python3
"""Give one run of a gen_large JSON Lines set several training seeds (SPEC §4.3).

    scripts/add_seeds.py SRC_DIR DST_DIR [RUN [SEEDS]]

Copies SRC_DIR's files to DST_DIR, adding `"seed": sample % SEEDS` to every
evaluation rollout of RUN (default qwen3-4b-grpo, 3 seeds): the two-stage
bootstrap's workload at scale (docs/scale-log.md, session 51). The record is
otherwise byte for byte as gen_large wrote it.
"""
import os
import re
import shutil
import sys

src, dst = sys.argv[1], sys.argv[2]
run = (sys.argv[3] if len(sys.argv) > 3 else "qwen3-4b-grpo").encode()
seeds = int(sys.argv[4]) if len(sys.argv) > 4 else 3
sample = re.compile(rb'"sample":(\d+),')
of_run = b'"run":"' + run + b'"'
os.makedirs(dst, exist_ok=True)
for name in sorted(os.listdir(src)):
    if not name.startswith("eval"):
        shutil.copy(os.path.join(src, name), os.path.join(dst, name))
        continue
    with open(os.path.join(src, name), "rb") as i, open(os.path.join(dst, name), "wb") as o:
        for line in i:
            m = sample.search(line)
            if m and of_run in line:
                seed = b'"seed":%d,' % (int(m.group(1)) % seeds)
                line = line[: m.end()] + seed + line[m.end():]
            o.write(line)
