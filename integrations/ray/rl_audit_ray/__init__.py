"""rl-audit on Ray: `rl-audit --summarize` on shards of log files as Ray tasks.

Given log files, folders or globs (local paths, or URIs of an object store
read through pyarrow's filesystems, as Ray Data reads them), the driver cuts
the sorted file list into shards of consecutive files of about equal size,
runs the installed `rl-audit` binary on each shard as a subprocess inside a
Ray task (`rl-audit --files-from LIST --summarize shard.jsonl.zst`), writes
the shard summaries into one folder and prints the `rl-audit --headless`
command that audits them together. That audit equals the audit of the logs
themselves (see the README, "Going past one machine").

Without `--address` it starts a Ray cluster of its own on this machine:
bound to 127.0.0.1, no dashboard, usage statistics off
(RAY_USAGE_STATS_ENABLED=0). Nothing here talks to another host unless
`--address` names a cluster or a URI names an object store.
"""

import argparse
import fnmatch
import glob
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass

__all__ = ["main", "run", "start_ray", "expand", "split", "Result"]

# The names rl-audit reads as logs (src/schema/load/discover.rs).
LOG_SUFFIXES = (
    ".jsonl",
    ".ndjson",
    ".jsonl.gz",
    ".ndjson.gz",
    ".jsonl.zst",
    ".ndjson.zst",
    ".parquet",
    ".eval",
    ".json",
)
SHARD_PATTERN = "shard-*.jsonl.zst"


class UsageError(Exception):
    """A mistake in what the driver was asked to do (exit code 2)."""


@dataclass(frozen=True)
class LogFile:
    """One log file: its name as rl-audit will call it (the path as given,
    or the URI), its size in bytes, and whether it lives in an object store."""

    name: str
    size: int
    remote: bool


@dataclass
class Result:
    """What `run` did: the summaries written and the command that audits them."""

    out: str
    shards: list
    summaries: list
    seconds: float
    command: str
    pids: list


def is_log(name):
    return name.lower().endswith(LOG_SUFFIXES)


def has_scheme(path):
    return "://" in path and not os.path.exists(path)


def path_key(name):
    """rl-audit orders files by path components (Rust's `Path` order)."""
    parts = name.split("/")
    head = ["/"] if name.startswith("/") else []
    return head + [p for p in parts if p not in ("", ".")]


def _remote_fs(uri):
    try:
        import pyarrow.fs as pafs
    except ImportError as e:
        raise UsageError(
            f"{uri}: reading an object store needs pyarrow: pip install 'rl-audit-ray[remote]'"
        ) from e
    try:
        return pafs.FileSystem.from_uri(uri)
    except Exception as first:  # pyarrow does not know the scheme: try fsspec
        try:
            import fsspec
        except ImportError:
            raise UsageError(f"{uri}: {first}") from first
        fs, path = fsspec.core.url_to_fs(uri)
        return pafs.PyFileSystem(pafs.FSSpecHandler(fs)), path


def _expand_remote(uri):
    import pyarrow.fs as pafs

    scheme = uri.split("://", 1)[0]
    fs, path = _remote_fs(uri)

    def name(p):
        return f"{scheme}://{p}" if scheme != "file" else f"file://{p}"

    globbed = any(c in path for c in "*?[")
    base = path
    if globbed:
        parts = path.split("/")
        i = next(k for k, p in enumerate(parts) if any(c in p for c in "*?["))
        base = "/".join(parts[:i]) or ("/" if path.startswith("/") else "")
    info = fs.get_file_info(base)
    if info.type == pafs.FileType.NotFound:
        raise UsageError(f"{uri}: no such file or folder")
    if info.type == pafs.FileType.File and not globbed:
        return [LogFile(name(path), info.size, True)]
    found = []
    for f in fs.get_file_info(pafs.FileSelector(base, recursive=True)):
        if f.type != pafs.FileType.File or not is_log(f.path):
            continue
        if globbed and not fnmatch.fnmatchcase(f.path, path):
            continue
        found.append(LogFile(name(f.path), f.size, True))
    if not found:
        raise UsageError(f"{uri}: no log files found")
    return found


def _expand_local(path):
    if any(c in path for c in "*?["):
        matches = glob.glob(path, recursive=True)
        if not matches:
            raise UsageError(f"{path}: matches no file")
        out = []
        for m in matches:
            if os.path.isdir(m):
                out += _expand_local(m)
            elif is_log(m):
                out.append(LogFile(m, os.path.getsize(m), False))
        return out
    if os.path.isdir(path):
        out = []
        for root, dirs, files in os.walk(path):
            dirs.sort()
            for f in sorted(files):
                if is_log(f):
                    p = os.path.join(root, f)
                    out.append(LogFile(p, os.path.getsize(p), False))
        if not out:
            raise UsageError(f"{path}: no log files found")
        return out
    if os.path.isfile(path):
        if not is_log(path):
            raise UsageError(
                f"{path}: not a log file: expected .jsonl, .ndjson, .jsonl.gz, .jsonl.zst, .parquet, .eval or .json"
            )
        return [LogFile(path, os.path.getsize(path), False)]
    raise UsageError(f"{path}: no such file or folder")


def expand(paths):
    """Log files of `paths` (files, folders, globs, URIs), in rl-audit's
    order, each once."""
    files = []
    for p in paths:
        files += _expand_remote(p) if has_scheme(p) else _expand_local(p)
    if len({f.remote for f in files}) > 1:
        raise UsageError(
            "local paths and object-store URIs in one run: summarize them in two runs into one --out folder"
        )
    seen, out = set(), []
    for f in sorted(files, key=lambda f: path_key(f.name)):
        if f.name not in seen:
            seen.add(f.name)
            out.append(f)
    return out


def split(files, n):
    """At most `n` shards of consecutive files, of about equal bytes, none empty."""
    n = max(1, min(n, len(files)))
    sizes = [max(f.size, 1) for f in files]
    total = sum(sizes)
    shards, cur, acc = [], [], 0
    for i, (f, s) in enumerate(zip(files, sizes)):
        still = n - len(shards) - 1  # shards to fill after the current one
        if cur and still > 0:
            if acc + s / 2 > total * (len(shards) + 1) / n or len(files) - i <= still:
                shards.append(cur)
                cur = []
        cur.append(f)
        acc += s
    shards.append(cur)
    return shards


# Ray's settings for a cluster of this machine only. Both are read when ray
# is imported. RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0 is Ray's single-machine
# mode (its default on macOS and Windows): the node's address is the loopback
# one and every server of the cluster (GCS, raylet, workers, object store)
# listens on 127.0.0.1 only. Without it Ray binds them on all interfaces and
# turns 127.0.0.1 into the machine's outward address.
LOCAL_ONLY_ENV = {"RAY_USAGE_STATS_ENABLED": "0", "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}


def start_ray(address=None, num_cpus=None):
    """Connects to `address`, or starts a cluster on this machine only:
    bound to 127.0.0.1, no dashboard, no usage statistics."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    if not address:
        for k, v in LOCAL_ONLY_ENV.items():
            os.environ.setdefault(k, v)
    import logging

    import ray

    if ray.is_initialized():
        return ray
    if address:
        ray.init(address=address, logging_level=logging.WARNING)
    else:
        ray.init(
            address="local",
            num_cpus=num_cpus,
            include_dashboard=False,
            _node_ip_address="127.0.0.1",
            logging_level=logging.WARNING,
        )
    return ray


def _download(name, target):
    import pyarrow.fs as pafs  # noqa: F401 (the filesystem comes from the URI)

    fs, path = _remote_fs(name)
    os.makedirs(os.path.dirname(target), exist_ok=True)
    # compression=None: the bytes as stored (pyarrow would gunzip a .gz).
    with fs.open_input_stream(path, compression=None) as src, open(target, "wb") as dst:
        shutil.copyfileobj(src, dst, 1 << 20)


def summarize_shard(index, binary, names, cwd, remote, extra):
    """One shard: `rl-audit --files-from LIST --summarize OUT` in a subprocess.
    Runs inside a Ray task; returns the summary's bytes (the driver writes it)."""
    # The folder's name is chosen before it is made, and made inside the
    # `try`: a cancel (a KeyboardInterrupt, which may land between any two
    # steps) after the folder exists always reaches the `finally` that
    # removes it. `mkdtemp` made it before the `try` and named it only on
    # return: an interrupt in between left it behind.
    tmp = os.path.join(
        tempfile.gettempdir(), f"rl-audit-shard-{index:05d}-{uuid.uuid4().hex[:12]}"
    )
    try:
        os.mkdir(tmp, 0o700)
        workdir = cwd
        if remote:
            # Each object lands at its URI under the task's folder, so that
            # rl-audit, run there, names it by its URI.
            workdir = tmp
            for n in names:
                _download(n, os.path.join(tmp, n))
        listing = os.path.join(tmp, "files.txt")
        with open(listing, "w") as f:
            f.write("".join(n + "\n" for n in names))
        out = os.path.join(tmp, "summary.jsonl.zst")
        started = time.time()
        p = subprocess.run(
            [binary, "--files-from", listing, "--summarize", out, *extra],
            cwd=workdir,
            capture_output=True,
            text=True,
        )
        result = {
            "index": index,
            "code": p.returncode,
            "stderr": p.stderr.strip(),
            "pid": os.getpid(),
            "seconds": time.time() - started,
        }
        if p.returncode == 0:
            with open(out, "rb") as f:
                result["summary"] = f.read()
        return result
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _cancel(ray, pending, grace=30.0):
    """Stops the shards still to come. A running one gets a KeyboardInterrupt
    (a cancel without `force`): `subprocess.run` kills its rl-audit and
    `summarize_shard` removes its folder. A forced cancel kills the worker
    before that, leaving the folder in the node's temporary directory; it is
    the fallback for a shard not stopped within `grace` seconds."""
    if not pending:
        return
    for t in pending:
        ray.cancel(t)
    done, left = ray.wait(pending, num_returns=len(pending), timeout=grace)
    for t in left:
        ray.cancel(t, force=True)


def _parser():
    p = argparse.ArgumentParser(
        prog="summarize.py",
        description="Run `rl-audit --summarize` on shards of log files as Ray tasks, "
        "then print the rl-audit command that audits the summaries together.",
        epilog="Arguments after `--` go to every `rl-audit --summarize` "
        "(e.g. -- --lenient --map verl.toml --budget 20).",
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="log files, folders, globs or URIs")
    p.add_argument("--out", required=True, metavar="DIR", help="folder for the shard summaries")
    p.add_argument("--shards", type=int, metavar="N", help="number of shards (default: the cluster's CPUs)")
    p.add_argument("--bin", metavar="PATH", help="the rl-audit binary (default: rl-audit on PATH)")
    p.add_argument("--address", metavar="RAY-ADDRESS", help="a running Ray cluster (default: start one here)")
    p.add_argument("--num-cpus", type=int, metavar="N", help="CPUs of the cluster started here")
    p.add_argument("--overwrite", action="store_true", help="replace summaries already in --out")
    return p


def run(argv):
    """Parses `argv` (without the program name), summarizes, returns a Result."""
    extra = []
    if "--" in argv:
        i = argv.index("--")
        argv, extra = argv[:i], argv[i + 1 :]
    args = _parser().parse_args(argv)
    binary = args.bin or shutil.which("rl-audit")
    if not binary or not os.path.isfile(binary):
        raise UsageError(
            f"{args.bin or 'rl-audit'}: no rl-audit binary (cargo install --path . puts it on PATH; or pass --bin)"
        )
    binary = os.path.abspath(binary)
    if any(a in ("--summarize", "--files-from", "--headless") for a in extra):
        raise UsageError("-- arguments: --summarize, --files-from and --headless are the driver's own")
    files = expand(args.paths)
    os.makedirs(args.out, exist_ok=True)
    stale = sorted(glob.glob(os.path.join(glob.escape(args.out), SHARD_PATTERN)))
    if stale and not args.overwrite:
        raise UsageError(
            f"{args.out}: already holds {len(stale)} summaries ({os.path.basename(stale[0])}, …); "
            "an audit of the folder would count them too: pass --overwrite or another --out"
        )
    ray = start_ray(args.address, args.num_cpus)
    n = args.shards or max(1, int(ray.cluster_resources().get("CPU", 1)))
    shards = split(files, n)
    started = time.time()
    task = ray.remote(num_cpus=1)(summarize_shard)
    cwd = os.getcwd()
    pending = [
        task.remote(i, binary, [f.name for f in s], cwd, s[0].remote, extra)
        for i, s in enumerate(shards)
    ]
    results = []
    while pending:
        done, pending = ray.wait(pending, num_returns=1)
        r = ray.get(done[0])
        if r["code"] != 0:
            _cancel(ray, pending)
            s = shards[r["index"]]
            raise ShardFailed(
                f"shard {r['index']} ({s[0].name} … {s[-1].name}, {len(s)} file(s)): "
                f"rl-audit exited {r['code']}: {r['stderr']}",
                r["code"],
            )
        results.append(r)
    # Every shard succeeded: only now is anything written.
    for path in stale:
        os.remove(path)
    written = []
    for r in sorted(results, key=lambda r: r["index"]):
        path = os.path.join(args.out, f"shard-{r['index']:05d}.jsonl.zst")
        with open(path + ".tmp", "wb") as f:
            f.write(r["summary"])
        os.replace(path + ".tmp", path)
        written.append(path)
    with open(os.path.join(args.out, "manifest.tsv"), "w") as f:
        f.write("shard\tfiles\tlog_bytes\tsummary_bytes\tseconds\tfirst_file\tlast_file\n")
        for r, s, path in zip(sorted(results, key=lambda r: r["index"]), shards, written):
            f.write(
                f"{r['index']}\t{len(s)}\t{sum(x.size for x in s)}\t{os.path.getsize(path)}\t"
                f"{r['seconds']:.2f}\t{s[0].name}\t{s[-1].name}\n"
            )
    command = f"rl-audit --headless {shlex.quote(args.out)} --out report/"
    return Result(
        out=args.out,
        shards=shards,
        summaries=written,
        seconds=time.time() - started,
        command=command,
        pids=sorted({r["pid"] for r in results}),
    )


class ShardFailed(Exception):
    def __init__(self, message, code):
        super().__init__(message)
        self.code = code


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    try:
        r = run(argv)
    except UsageError as e:
        print(f"summarize.py: {e}", file=sys.stderr)
        return 2
    except ShardFailed as e:
        print(f"summarize.py: {e}", file=sys.stderr)
        print("summarize.py: no summary was written", file=sys.stderr)
        return e.code if e.code in (1, 2) else 1
    files = sum(len(s) for s in r.shards)
    size = sum(os.path.getsize(p) for p in r.summaries)
    print(
        f"summarize.py: {files} log file(s) in {len(r.shards)} shard(s) summarized in "
        f"{r.seconds:.1f} s by {len(r.pids)} worker process(es): {size} bytes in {r.out}",
        file=sys.stderr,
    )
    print(r.command)
    return 0
