//! The bundled demo log set (a real toy FrozenLake experiment, see
//! `examples/gen_demo.rs`), embedded in the binary so `rl-audit` with no
//! arguments works from any directory and after `cargo install`.

use crate::error::Result;
use crate::schema::{load::load_sources, LoadOptions, LogSet};

const DEMO: &[(&str, &[u8])] = &[
    (
        "demo/checkpoints.jsonl.gz",
        include_bytes!("../assets/demo/checkpoints.jsonl.gz"),
    ),
    (
        "demo/eval.jsonl.gz",
        include_bytes!("../assets/demo/eval.jsonl.gz"),
    ),
    (
        "demo/probes.jsonl.gz",
        include_bytes!("../assets/demo/probes.jsonl.gz"),
    ),
    (
        "demo/train.jsonl.gz",
        include_bytes!("../assets/demo/train.jsonl.gz"),
    ),
];

/// Loads the embedded demo.
pub fn load_demo(opts: &LoadOptions) -> Result<LogSet> {
    load_sources(DEMO, opts)
}
