#!/usr/bin/env bash
# Fuzzes the record parser for a fixed number of iterations (not part of CI).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo run --release --example fuzz_records -- "${1:-1000000}" "${2:-1}"
