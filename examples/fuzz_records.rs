//! A stable-Rust mutation fuzzer for the record parser (cargo-fuzz needs a
//! nightly toolchain). Mutates valid records — byte flips, splices, type
//! swaps, extreme numbers, truncation — and checks that validation never
//! panics and always either accepts or names a reason. Seeded; not run in CI.
//!
//!     cargo run --release --example fuzz_records -- [ITERATIONS] [SEED]

use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};

const SEEDS: &[&str] = &[
    r#"{"run":"a","method":"base","benchmark":"b","task":"t","sample":0,"budget":4,"max_budget":8,"success":true,"turns":3,"success_turn":2,"reward":1.0,"min_turns":2,"train_step":3,"group":"g","steps":[{"turn":1,"action":"x","observation":"y","output_tokens":12,"logp":{"a":-1.5,"b":-2.0},"error":false,"reward":0.0,"budget_total":4,"budget_remaining":4,"state":"s"}]}"#,
    r#"{"kind":"probe","benchmark":"frozenlake","task":"t","state":"s","source":"a","turn":2,"error":true,"injected_action":"left","frozenlake":{"map":["SFF","FHF","FFG"],"pos":1,"steps_left":4,"slippery":true},"candidates":[{"run":"a","action":2,"corrects":true,"terminal_success":false},{"run":"b","action":"1","score":0.5}]}"#,
    r#"{"kind":"checkpoint","run":"a","step":10,"r_multi":0.5,"r_single":0.25,"loss":1e-3}"#,
    r#"{"kind":"run","run":"a","method":"grpo"}"#,
];

const TOKENS: &[&str] = &[
    "null",
    "true",
    "false",
    "-1",
    "0",
    "1e308",
    "-1e308",
    "1e999",
    "99999999999999999999",
    "\"\"",
    "\"x\"",
    "[]",
    "{}",
    "[[[[",
    "\"\\u0000\"",
    "\"\\ud800\"",
    "NaN",
    "-0",
    "1.5",
    "\u{fffd}",
    ",",
    ":",
    "}",
    "{",
];

fn mutate(rng: &mut Xoshiro256PlusPlus, s: &[u8]) -> Vec<u8> {
    let mut v = s.to_vec();
    for _ in 0..rng.random_range(1..4) {
        if v.is_empty() {
            v.extend_from_slice(b"{}");
        }
        let i = rng.random_range(0..v.len());
        match rng.random_range(0..6) {
            0 => v[i] = rng.random(),
            1 => v.truncate(i),
            2 => {
                let t = TOKENS[rng.random_range(0..TOKENS.len())].as_bytes();
                v.splice(i..i, t.iter().copied());
            }
            3 => {
                // Replace a number or literal after a colon with a token.
                if let Some(p) = v[i..].iter().position(|&b| b == b':') {
                    let start = i + p + 1;
                    let end = v[start..]
                        .iter()
                        .position(|&b| b == b',' || b == b'}')
                        .map_or(v.len(), |e| start + e);
                    let t = TOKENS[rng.random_range(0..TOKENS.len())].as_bytes();
                    v.splice(start..end, t.iter().copied());
                }
            }
            4 => {
                let j = rng.random_range(0..v.len());
                let (a, b) = (i.min(j), i.max(j));
                let piece = v[a..b].to_vec();
                v.splice(a..a, piece);
            }
            _ => v.insert(i, b'"'),
        }
    }
    v
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let iterations: u64 = args.get(1).and_then(|x| x.parse().ok()).unwrap_or(200_000);
    let seed: u64 = args.get(2).and_then(|x| x.parse().ok()).unwrap_or(1);
    std::panic::set_hook(Box::new(|_| {}));
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let (mut accepted, mut rejected, mut panics) = (0u64, 0u64, 0u64);
    for i in 0..iterations {
        let base = SEEDS[rng.random_range(0..SEEDS.len())].as_bytes();
        let input = mutate(&mut rng, base);
        match std::panic::catch_unwind(|| rl_audit::schema::check_record(&input)) {
            Ok(Ok(())) => accepted += 1,
            Ok(Err(e)) => {
                rejected += 1;
                assert!(
                    !e.message.is_empty(),
                    "empty message for {:?}",
                    String::from_utf8_lossy(&input)
                );
            }
            Err(_) => {
                panics += 1;
                eprintln!(
                    "PANIC at iteration {i}: {:?}",
                    String::from_utf8_lossy(&input)
                );
            }
        }
    }
    println!("{iterations} inputs: {accepted} accepted, {rejected} rejected with a reason, {panics} panics");
    if panics > 0 {
        std::process::exit(1);
    }
}
