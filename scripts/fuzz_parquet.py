#!/usr/bin/env python3
"""Damaged Parquet files against rl-audit (not part of CI).

Changes one to a few random bytes before the footer of the given Parquet
files (the footer left whole, so the file still opens and the damage is met
while decoding pages), runs `BIN --headless` on each, and fails on a panic or
an exit code other than 0, 2 or 3. With `--against OLD_BIN`, runs both and
compares exit code, stdout, stderr and report.json (paths masked): a
differential check of a decoder change.

    scripts/fuzz_parquet.py BIN [--against OLD_BIN] [--runs N] [--seed S] [--args "…"] [--footer] [--before GOOD] FILE...

`--footer` damages the footer (the file's Thrift metadata) instead.
`--before GOOD` puts the Parquet file GOOD beside the damaged one, named to
come first: the damaged file is then read and set up while GOOD's last
window is parsed (the load's read-ahead), not on its own.

The damaged copy keeps its file's name; `--args` are passed on (e.g.
`--args "--map assets/mappings/verl-agent-steps.toml"`).

Damaged files that fail are kept as /tmp/fuzz-parquet-RUN.parquet.
"""
import argparse, os, random, shutil, subprocess, sys, tempfile


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bin")
    ap.add_argument("files", nargs="+")
    ap.add_argument("--against")
    ap.add_argument("--runs", type=int, default=300)
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--args", default="")
    ap.add_argument("--footer", action="store_true", help="damage the footer (the file's metadata) instead of its pages")
    ap.add_argument("--before", help="a good Parquet file placed before the damaged one")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    work = tempfile.mkdtemp()
    bad = same = 0
    codes = {}
    try:
        for run in range(a.runs):
            src = rng.choice(a.files)
            raw = bytearray(open(src, "rb").read())
            footer = int.from_bytes(raw[-8:-4], "little")
            for _ in range(rng.choice([1, 2, 4, 16])):
                if a.footer:
                    i = rng.randrange(len(raw) - 8 - footer, len(raw) - 8)
                else:
                    i = rng.randrange(4, len(raw) - 8 - footer)
                raw[i] = rng.randrange(256) if rng.random() < 0.5 else raw[i] ^ (1 << rng.randrange(8))
            shutil.rmtree(work)
            os.makedirs(f"{work}/in")
            open(f"{work}/in/{os.path.basename(src)}", "wb").write(raw)
            if a.before:
                shutil.copy(a.before, f"{work}/in/0000-{os.path.basename(a.before)}")
            outs = []
            for k, b in enumerate([a.bin] + ([a.against] if a.against else [])):
                out = f"{work}/out{k}"
                args = [b, "--headless", f"{work}/in", "--out", out] + a.args.split()
                r = subprocess.run(args, capture_output=True, timeout=120)
                rep = open(f"{out}/report.json", "rb").read() if os.path.exists(f"{out}/report.json") else b""
                outs.append(tuple(x.replace(out.encode(), b"OUT") for x in (r.stdout, r.stderr, rep)) + (r.returncode,))
            code = outs[0][3]
            codes[code] = codes.get(code, 0) + 1
            failed = code not in (0, 2, 3) or b"panicked" in outs[0][1]
            if len(outs) == 2:
                if outs[0] == outs[1]:
                    same += 1
                else:
                    print(f"run {run}: differs: exit {outs[1][3]} -> {code}\n  {outs[1][1][-300:]!r}\n  {outs[0][1][-300:]!r}")
            if failed or (len(outs) == 2 and outs[0] != outs[1]):
                open(f"/tmp/fuzz-parquet-{run}.parquet", "wb").write(raw)
            if failed:
                bad += 1
                print(f"run {run}: exit {code}: {outs[0][1][-300:]!r}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"exit codes {codes}; failures {bad}" + (f"; identical to --against {same} of {a.runs}" if a.against else ""))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
