//! Helpers shared by the integration tests: temp dirs, JSONL writers, running the binary.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

/// Where [`temp_dir`] puts `name`: under the target dir, one per test
/// process (`name.PID`), so that two test runs of one checkout at once do
/// not write into each other's files.
pub fn temp_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}.{}", std::process::id()))
}

/// A fresh directory [`temp_path`], removed and recreated; those of `name`
/// left by test processes no longer running are removed (where `/proc`
/// tells which run).
pub fn temp_dir(name: &str) -> PathBuf {
    let d = temp_path(name);
    let root = d.parent().unwrap();
    if Path::new("/proc/self").exists() {
        let prefix = format!("{name}.");
        for e in std::fs::read_dir(root).into_iter().flatten().flatten() {
            let file = e.file_name();
            let Some(pid) = file.to_str().and_then(|f| f.strip_prefix(&prefix)) else {
                continue;
            };
            if pid.parse::<u32>().is_ok() && !Path::new("/proc").join(pid).exists() {
                let _ = std::fs::remove_dir_all(e.path());
            }
        }
    }
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

pub fn write_lines(path: &Path, lines: &[Value]) {
    let text: String = lines.iter().map(|v| format!("{v}\n")).collect();
    std::fs::write(path, text).unwrap();
}

pub fn rl_audit(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rl-audit"))
        .args(args)
        .output()
        .expect("run rl-audit")
}

/// Runs a headless audit of `logs` into `out` and returns report.json.
pub fn audit_json(logs: &Path, out: &Path, extra: &[&str]) -> Value {
    let mut args = vec![
        "--headless",
        logs.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let o = rl_audit(&args);
    assert!(
        o.status.success(),
        "rl-audit failed: {}\n{}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    let text = std::fs::read_to_string(out.join("report.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// A trajectory record with the given success turn (None = failure).
pub fn traj(
    run: &str,
    bench: &str,
    task: &str,
    budget: u32,
    max_budget: u32,
    success_turn: Option<u32>,
) -> Value {
    let mut v = serde_json::json!({
        "run": run, "benchmark": bench, "task": task, "budget": budget,
        "max_budget": max_budget, "success": success_turn.is_some(),
        "turns": success_turn.unwrap_or(budget),
    });
    if let Some(s) = success_turn {
        v["success_turn"] = s.into();
    }
    v
}

/// Rows of a report section matching every (key, value) given.
pub fn rows<'a>(report: &'a Value, section: &str, keys: &[(&str, Value)]) -> Vec<&'a Value> {
    report[section]
        .as_array()
        .unwrap_or_else(|| panic!("no section {section}"))
        .iter()
        .filter(|r| keys.iter().all(|(k, v)| &r[*k] == v))
        .collect()
}

pub fn one<'a>(report: &'a Value, section: &str, keys: &[(&str, Value)]) -> &'a Value {
    let r = rows(report, section, keys);
    assert_eq!(
        r.len(),
        1,
        "expected one {section} row for {keys:?}, got {}",
        r.len()
    );
    r[0]
}

pub fn close(a: &Value, b: f64) {
    let a = a.as_f64().unwrap_or_else(|| panic!("not a number: {a}"));
    assert!((a - b).abs() < 1e-9, "{a} != {b}");
}

/// Writes `bytes` to `<tmp>/<name>/<file>`, runs a strict headless audit and
/// checks the failure is clean: exit 2, the file named, no panic, no report.
/// Returns stderr.
pub fn strict_failure(name: &str, file: &str, bytes: &[u8]) -> String {
    let d = temp_dir(name);
    let f = d.join(file);
    std::fs::write(&f, bytes).unwrap();
    let o = rl_audit(&[
        "--headless",
        f.to_str().unwrap(),
        "--out",
        d.join("out").to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert_eq!(o.status.code(), Some(2), "{name}: {err}");
    assert!(
        err.contains(f.to_str().unwrap()),
        "{name}: message lacks the file: {err}"
    );
    assert!(!err.contains("internal error"), "{name}: {err}");
    assert!(
        !d.join("out/report.json").exists(),
        "{name}: a report was written"
    );
    err
}

/// SplitMix64: a small deterministic generator, unrelated to the engine's,
/// for simulated logs and independent bootstraps.
pub struct Mix(pub u64);
impl Mix {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    pub fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.unit() * n as f64) as usize
    }
}

/// HumanEval's unbiased pass@k (Chen et al. 2021), product form.
pub fn pass_at_k_ref(n: usize, c: usize, k: usize) -> f64 {
    if n - c < k {
        return 1.0;
    }
    1.0 - ((n - c + 1)..=n)
        .map(|i| 1.0 - k as f64 / i as f64)
        .product::<f64>()
}

/// numpy's default (linear) quantile of sorted values.
pub fn quantile_linear(sorted: &[f64], q: f64) -> f64 {
    let h = (sorted.len() - 1) as f64 * q;
    let i = h.floor() as usize;
    let f = h - i as f64;
    if i + 1 < sorted.len() {
        sorted[i] + f * (sorted[i + 1] - sorted[i])
    } else {
        sorted[i]
    }
}

/// The logs at `logs` loaded through the mapping file `mapping`, as
/// `--map` loads them.
pub fn load_mapped_by(logs: &Path, mapping: &Path) -> rl_audit::schema::LogSet {
    let m = rl_audit::schema::mapping::Mapping::parse(
        &mapping.file_name().unwrap().to_string_lossy(),
        &std::fs::read_to_string(mapping).unwrap(),
    )
    .expect("the mapping parses");
    let opts = rl_audit::schema::LoadOptions {
        mapping: Some(std::sync::Arc::new(m)),
        ..Default::default()
    };
    rl_audit::schema::load(&[logs.to_path_buf()], &opts).expect("loads")
}
