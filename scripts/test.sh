#!/usr/bin/env bash
# The test suite (what CI runs): the Rust tests, then the Ray driver on a real
# local Ray cluster. Ray (and pyarrow, for object-store URIs) go into a
# virtualenv created once and reused, like the cargo target directory:
# RL_AUDIT_VENV, default ~/.cache/rl-audit-venv (about 15 s to create, on a
# machine that reaches PyPI).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --locked "$@"
ray_started=$SECONDS
target="${CARGO_TARGET_DIR:-target}"
venv="${RL_AUDIT_VENV:-$HOME/.cache/rl-audit-venv}"
python="${PYTHON:-python3}"
if [ ! -x "$venv/bin/python" ]; then
    "$python" -m venv "$venv"
fi
"$venv/bin/pip" install --quiet --disable-pip-version-check "./integrations/ray[remote]"
RL_AUDIT_BIN="$target/debug/rl-audit" "$venv/bin/python" integrations/ray/test_ray.py
echo "scripts/test.sh: the Ray part took $((SECONDS - ray_started)) s (virtualenv and test)"
