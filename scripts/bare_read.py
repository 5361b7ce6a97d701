# python-polars baseline for the README speed table: bare read + explode of
# the JSONL trajectories (no analysis). Usage: python bare_read.py DIR|FILE.jsonl
# (a gen_large folder's eval-*/train-* files, or one file of trajectories
# such as scripts/gen_bench.py writes).
import sys, time, resource, glob, os
import polars as pl
t = time.time()
if os.path.isfile(sys.argv[1]):
    files = [sys.argv[1]]
else:
    files = sorted(glob.glob(sys.argv[1] + "/eval-*.jsonl")) + sorted(glob.glob(sys.argv[1] + "/train-*.jsonl"))
df = pl.concat([pl.read_ndjson(f) for f in files], how="diagonal_relaxed")
steps = df.select("run", "task", "steps").explode("steps").unnest("steps")
print(f"{len(df)} trajectories, {len(steps)} steps: {time.time() - t:.2f} s, peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6:.2f} GB")
