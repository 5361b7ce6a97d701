"""Writes tests/data/large/jsonl/eval-000.jsonl as Parquet the way other
tools do (pyarrow 26.0.1, pandas 3.1.1): pyarrow defaults; pandas with
categorical strings, int32 columns, float32 reward and success_turn as
float64 with nulls; large strings without dictionary encoding, snappy.
`logp` becomes a list of {run, value} structs (SPEC §1).

    pip install pyarrow pandas && python make.py
"""
import json, os
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

HERE = os.path.dirname(os.path.abspath(__file__))
rows = [json.loads(l) for l in open(os.path.join(HERE, "../large/jsonl/eval-000.jsonl"))]
for r in rows:
    for s in r["steps"]:
        s["logp"] = [{"run": k, "value": v} for k, v in s["logp"].items()]

pq.write_table(pa.Table.from_pylist(rows), os.path.join(HERE, "eval-pyarrow.parquet"))

df = pd.DataFrame(rows)
for c in ["run", "method", "benchmark", "task"]:
    df[c] = df[c].astype("category")
for c in ["sample", "budget", "max_budget", "min_turns", "turns"]:
    df[c] = df[c].astype("int32")
df["reward"] = df["reward"].astype("float32")
df.to_parquet(os.path.join(HERE, "eval-pandas-categorical.parquet"), engine="pyarrow")

t = pa.Table.from_pylist(rows)
schema = pa.schema(
    [pa.field(f.name, pa.large_string() if f.type == pa.string() else f.type) for f in t.schema]
)
pq.write_table(
    t.cast(schema),
    os.path.join(HERE, "eval-large-types.parquet"),
    use_dictionary=False,
    compression="snappy",
)

# A verl-agent step-row dump (tests/data/verl-agent/rollout_data/1.jsonl)
# converted with pandas, as teams do to keep dumps small: for `--map` on Parquet.
steps = [json.loads(l) for l in open(os.path.join(HERE, "../verl-agent/rollout_data/1.jsonl"))]
os.makedirs(os.path.join(HERE, "verl-agent"), exist_ok=True)
pd.DataFrame(steps).to_parquet(os.path.join(HERE, "verl-agent", "1.parquet"), engine="pyarrow")

# Small data pages and row groups, for the windowed Parquet decoder
# (src/schema/parquet.rs, its tests).
SMALL_PAGES = dict(row_group_size=150, data_page_size=256, write_batch_size=8)

# With the Parquet page index (an offset index: each page's place and first
# row), as pyarrow 26.0.1 writes it when asked (write_page_index=True);
# pages then end at row boundaries, as the format requires — the decoder
# takes each page's rows from the index without decompressing it.
if pa.__version__ != "14.0.2":
    pq.write_table(
        pa.Table.from_pylist(rows),
        os.path.join(HERE, "eval-page-index.parquet"),
        write_page_index=True,
        **SMALL_PAGES,
    )

# Written by pyarrow 14.0.2 (with numpy<2), no page index: its V1 pages end
# after a write batch once past data_page_size, inside a row's steps as
# often as not (26.0.1 ends them at row boundaries) — the case the decoder's
# page walk must cut right.
#     pip install pyarrow==14.0.2 "numpy<2"
if pa.__version__ == "14.0.2":
    pq.write_table(
        pa.Table.from_pylist(rows),
        os.path.join(HERE, "eval-small-pages.parquet"),
        **SMALL_PAGES,
    )

# Nulls inside the steps — an error flag, a token count, a log-probability's
# run left out here and there — in small pages (pyarrow 26.0.1's defaults:
# dictionary-encoded values, plain booleans): a page holds fewer values
# than levels, and its dictionary indices and booleans are bit-packed with
# padding, so only the definition levels tell the windows to leave to
# polars (src/schema/dense_leaf.rs, its test in src/schema/parquet.rs).
if pa.__version__ != "14.0.2":
    holes = json.loads(json.dumps(rows))
    k = 0
    for r in holes:
        for s in r["steps"]:
            k += 1
            if k % 29 == 0:
                s["error"] = None
            if k % 31 == 0:
                s["output_tokens"] = None
            if k % 37 == 0 and s["logp"]:
                s["logp"][0]["run"] = None
    pq.write_table(
        pa.Table.from_pylist(holes),
        os.path.join(HERE, "eval-step-nulls.parquet"),
        **SMALL_PAGES,
    )
