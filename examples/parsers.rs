//! The parser comparison: serde_json (as this build uses it, with
//! `float_roundtrip`) against sonic-rs and simd-json, each deserializing
//! every record of some JSON Lines files into rl-audit's own borrowed
//! `RawRecord` — the struct the loader fills — on 1 and 2 threads, in
//! MB/s; and whether every number (each float's bits, each integer, each
//! run name) comes out as serde_json's does.
//!
//!     cargo run --release --features parser-bench --example parsers -- FILE_OR_DIR…
//!
//! Only the parse is timed (no validation, interning or merge): this is
//! the ceiling a parser switch could reach, not the load's throughput.

use std::hash::{BuildHasher, Hash, Hasher};
use std::path::{Path, PathBuf};
use std::time::Instant;

use rayon::prelude::*;
use rl_audit::schema::fastjson;
use rl_audit::schema::raw::{ActionValue, RawRecord};

/// Every number and name of a parsed record, hashed: two parsers agree on
/// a record when their digests are equal.
fn digest(r: &RawRecord) -> u64 {
    // foldhash, not SipHash: the digest was a sixth of the time measured.
    let mut h = foldhash::fast::FixedState::with_seed(0).build_hasher();
    let s = |h: &mut foldhash::fast::FoldHasher, x: &Option<std::borrow::Cow<str>>| {
        x.as_deref().hash(h)
    };
    for x in [
        &r.kind,
        &r.run,
        &r.method,
        &r.benchmark,
        &r.task,
        &r.termination,
    ] {
        s(&mut h, x);
    }
    s(&mut h, &r.category);
    s(&mut h, &r.state);
    s(&mut h, &r.source);
    for x in [
        r.sample,
        r.budget,
        r.max_budget,
        r.turns,
        r.success_turn,
        r.min_turns,
        r.train_step,
        r.turn,
    ] {
        x.hash(&mut h);
    }
    (r.success, r.error).hash(&mut h);
    r.reward.map(f64::to_bits).hash(&mut h);
    r.group.as_ref().map(|g| g.0.as_ref()).hash(&mut h);
    r.seed.as_ref().map(|g| g.0.as_ref()).hash(&mut h);
    for st in r.steps.iter().flatten() {
        (st.turn, st.output_tokens, st.error).hash(&mut h);
        (st.budget_total, st.budget_remaining).hash(&mut h);
        st.reward.map(f64::to_bits).hash(&mut h);
        for (run, x) in st.logp.iter().flat_map(|l| l.iter()) {
            (run.as_ref(), x.to_bits()).hash(&mut h);
        }
    }
    for c in r.candidates.iter().flatten() {
        c.run.as_deref().hash(&mut h);
        match &c.action {
            Some(ActionValue::Text(t)) => t.as_ref().hash(&mut h),
            Some(ActionValue::Int(i)) => i.hash(&mut h),
            None => 0u8.hash(&mut h),
        }
        c.score.map(f64::to_bits).hash(&mut h);
        (c.corrects, c.terminal_success).hash(&mut h);
    }
    h.finish()
}

#[derive(Clone, Copy)]
enum Parser {
    SerdeJson,
    /// rl-audit's own fast path, serde_json where it declines (what the loader runs).
    Fast,
    SonicRs,
    SimdJson,
}

impl Parser {
    fn name(self) -> &'static str {
        match self {
            Parser::SerdeJson => "serde_json (float_roundtrip)",
            Parser::Fast => "fast path, else serde_json",
            Parser::SonicRs => "sonic-rs",
            Parser::SimdJson => "simd-json",
        }
    }
    /// Digest of one line, or None when the parser rejects it.
    fn parse(self, line: &[u8], scratch: &mut Vec<u8>) -> Option<u64> {
        match self {
            Parser::SerdeJson => serde_json::from_slice::<RawRecord>(line)
                .ok()
                .map(|r| digest(&r)),
            Parser::Fast => {
                let text = std::str::from_utf8(line).ok()?;
                fastjson::record(text)
                    .or_else(|| serde_json::from_str::<RawRecord>(text).ok())
                    .map(|r| digest(&r))
            }
            Parser::SonicRs => sonic_rs::from_slice::<RawRecord>(line)
                .ok()
                .map(|r| digest(&r)),
            Parser::SimdJson => {
                // simd-json parses in place: the loader owns its window, so
                // a copy is the honest cost here.
                scratch.clear();
                scratch.extend_from_slice(line);
                simd_json::serde::from_slice::<RawRecord>(scratch)
                    .ok()
                    .map(|r| digest(&r))
            }
        }
    }
}

fn files(args: &[String]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for a in args {
        let p = PathBuf::from(a);
        if p.is_dir() {
            let mut v: Vec<PathBuf> = std::fs::read_dir(&p)
                .map(|rd| rd.flatten().map(|e| e.path()).collect())
                .unwrap_or_default();
            v.retain(|f| f.extension().is_some_and(|e| e == "jsonl"));
            v.sort();
            out.extend(v);
        } else {
            out.push(p);
        }
    }
    out
}

/// Lines of `bytes` cut into pieces of about 4 MiB (the loader's chunks).
fn pieces(bytes: &[u8]) -> Vec<Vec<&[u8]>> {
    let mut out = vec![Vec::new()];
    let mut size = 0;
    for line in bytes.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        if size > 4 << 20 {
            out.push(Vec::new());
            size = 0;
        }
        size += line.len();
        out.last_mut().unwrap().push(line);
    }
    out
}

fn run(parser: Parser, pieces: &[Vec<&[u8]>], threads: usize) -> (f64, Vec<Option<u64>>) {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("thread pool");
    let t = Instant::now();
    let digests: Vec<Vec<Option<u64>>> = pool.install(|| {
        pieces
            .par_iter()
            .map(|p| {
                let mut scratch = Vec::new();
                p.iter().map(|l| parser.parse(l, &mut scratch)).collect()
            })
            .collect()
    });
    (t.elapsed().as_secs_f64(), digests.concat())
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let files = files(&args);
    if files.is_empty() {
        eprintln!("parsers: give JSON Lines files or folders");
        std::process::exit(2);
    }
    let mut bytes = Vec::new();
    for f in &files {
        let b = std::fs::read(f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        bytes.extend_from_slice(&b);
        if !bytes.ends_with(b"\n") {
            bytes.push(b'\n');
        }
    }
    let pieces = pieces(&bytes);
    let records: usize = pieces.iter().map(Vec::len).sum();
    let mb = bytes.len() as f64 / 1e6;
    println!(
        "input: {} file(s), {:.0} MB, {records} records ({})",
        files.len(),
        mb,
        files
            .first()
            .and_then(|f| f.parent())
            .and_then(Path::to_str)
            .unwrap_or("")
    );
    let (_, reference) = run(Parser::SerdeJson, &pieces, 2);
    println!(
        "{:<30} {:>9} {:>9} {:>12}",
        "parser", "1 thread", "2 threads", "differ"
    );
    for parser in [
        Parser::SerdeJson,
        Parser::Fast,
        Parser::SonicRs,
        Parser::SimdJson,
    ] {
        let best = |threads| {
            (0..3)
                .map(|_| run(parser, &pieces, threads))
                .min_by(|a, b| a.0.total_cmp(&b.0))
                .expect("three runs")
        };
        let (one, digests) = best(1);
        let (two, _) = best(2);
        let differ = digests
            .iter()
            .zip(&reference)
            .filter(|(a, b)| a != b)
            .count();
        let first = digests.iter().zip(&reference).position(|(a, b)| a != b);
        println!(
            "{:<30} {:>6.0} MB/s {:>6.0} MB/s {:>7} records{}",
            parser.name(),
            mb / one,
            mb / two,
            differ,
            first.map_or(String::new(), |i| format!(" (first: record {})", i + 1)),
        );
    }
}
