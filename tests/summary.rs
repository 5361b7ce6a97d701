//! `--summarize OUT.jsonl.zst`: shard summaries audit exactly as the logs
//! they summarize — every report.json section but `notes` (which says that
//! summaries were read), report.md but that note, and the figures — also
//! when summaries are summarized again (a tree of merges), for logs read
//! leniently, through rLLM's layout and from Parquet.

mod common;

use std::path::{Path, PathBuf};

use common::{rl_audit, temp_dir};
use serde_json::Value;

fn manifest() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn gunzip(path: &Path) -> String {
    use std::io::Read;
    let mut s = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(path).unwrap())
        .read_to_string(&mut s)
        .unwrap();
    s
}

/// Runs rl-audit in `dir` (so that files are named as given); panics with
/// its stderr when it fails.
fn run_in(dir: &Path, args: &[&str]) -> String {
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_rl-audit"))
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "rl-audit {args:?} failed:\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `--summarize` each group of `files` into `out/shard-NN.jsonl.zst`.
fn summarize(dir: &Path, groups: &[Vec<String>], out: &str, extra: &[&str]) {
    std::fs::create_dir_all(dir.join(out)).unwrap();
    for (i, g) in groups.iter().enumerate() {
        let target = format!("{out}/shard-{i:02}.jsonl.zst");
        let mut args: Vec<&str> = g.iter().map(String::as_str).collect();
        args.extend(["--summarize", &target]);
        args.extend(extra);
        run_in(dir, &args);
    }
}

/// report.json, report.md and the figures of a headless audit of `paths` (in `dir`).
struct Report {
    json: Value,
    md: String,
    figures: Vec<(String, Vec<u8>)>,
}

fn audit(dir: &Path, paths: &[&str], out: &str, extra: &[&str]) -> Report {
    let mut args = vec!["--headless", "--out", out, "--resamples", "200"];
    args.extend(paths);
    args.extend(extra);
    run_in(dir, &args);
    let out = dir.join(out);
    let mut figures: Vec<(String, Vec<u8>)> = std::fs::read_dir(out.join("figures"))
        .map(|rd| {
            rd.map(|e| {
                let p = e.unwrap().path();
                (
                    p.file_name().unwrap().to_string_lossy().into_owned(),
                    std::fs::read(&p).unwrap(),
                )
            })
            .collect()
        })
        .unwrap_or_default();
    figures.sort();
    Report {
        json: serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap())
            .unwrap(),
        md: std::fs::read_to_string(out.join("report.md")).unwrap(),
        figures,
    }
}

/// The summaries' audit is the logs' audit, but for the one note saying
/// that summaries were read.
fn assert_same_audit(raw: &Report, summarized: &Report, summaries: usize) {
    let mut a = raw.json.clone();
    let mut b = summarized.json.clone();
    let notes_a = a.as_object_mut().unwrap().remove("notes").unwrap();
    let notes_b = b.as_object_mut().unwrap().remove("notes").unwrap();
    let (notes_a, notes_b) = (notes_a.as_array().unwrap(), notes_b.as_array().unwrap());
    let read = format!("read {summaries} summar");
    let said: Vec<&Value> = notes_b
        .iter()
        .filter(|n| n.as_str().is_some_and(|n| n.starts_with(&read)))
        .collect();
    assert_eq!(said.len(), 1, "one note says what was read: {notes_b:?}");
    let note = said[0].as_str().unwrap();
    let others: Vec<&Value> = notes_b
        .iter()
        .filter(|n| n.as_str() != Some(note))
        .collect();
    assert_eq!(others, notes_a.iter().collect::<Vec<_>>(), "other notes");
    for (section, x) in a.as_object().unwrap() {
        assert_eq!(Some(x), b.get(section), "section {section} differs");
    }
    assert_eq!(a, b);
    let said_md = format!("> Note: {note}\n\n");
    assert_eq!(
        summarized.md.matches(&said_md).count(),
        1,
        "report.md has the note"
    );
    let md_b = summarized.md.replacen(&said_md, "", 1);
    let md_a = raw.md.clone();
    if md_a != md_b {
        let (la, lb): (Vec<&str>, Vec<&str>) = (md_a.lines().collect(), md_b.lines().collect());
        let i = la
            .iter()
            .zip(&lb)
            .position(|(x, y)| x != y)
            .unwrap_or(la.len().min(lb.len()));
        panic!(
            "report.md differs at line {}:\n  logs:      {:?}\n  summaries: {:?}",
            i + 1,
            la.get(i),
            lb.get(i)
        );
    }
    assert_eq!(raw.figures, summarized.figures);
    assert!(!raw.figures.is_empty());
}

/// The demo's four files split by record into 12 files in 4 folders.
fn demo_logs(d: &Path) -> Vec<String> {
    let mut files = Vec::new();
    for kind in ["checkpoints", "eval", "probes", "train"] {
        let text = gunzip(&manifest().join(format!("assets/demo/{kind}.jsonl.gz")));
        let mut parts = vec![String::new(); 3];
        for (i, line) in text.lines().enumerate() {
            parts[i % 3].push_str(line);
            parts[i % 3].push('\n');
        }
        std::fs::create_dir_all(d.join("logs").join(kind)).unwrap();
        for (i, p) in parts.iter().enumerate() {
            let name = format!("logs/{kind}/part-{i}.jsonl");
            std::fs::write(d.join(&name), p).unwrap();
            files.push(name);
        }
    }
    files.sort();
    files
}

/// `files` cut into `n` runs of consecutive files (a shard = one or more files).
fn shards(files: &[String], n: usize) -> Vec<Vec<String>> {
    let per = files.len().div_ceil(n);
    files.chunks(per).map(<[String]>::to_vec).collect()
}

#[test]
fn shard_summaries_audit_exactly_as_the_logs() {
    let d = temp_dir("summary_demo");
    let files = demo_logs(&d);
    let groups = shards(&files, 8);
    assert!(groups.len() >= 6);
    summarize(&d, &groups, "sum", &[]);
    // --grep re-reads actions from the logs the summaries name.
    let grep = ["--grep", "^(left|0)$"];
    let raw = audit(&d, &["logs"], "raw", &grep);
    assert!(raw.json["grep"].as_array().is_some_and(|g| !g.is_empty()));
    let from_summaries = audit(&d, &["sum"], "from-sum", &grep);
    assert_same_audit(&raw, &from_summaries, groups.len());
    assert_eq!(
        from_summaries.json["inputs"]["files"]
            .as_array()
            .unwrap()
            .len(),
        12
    );

    // A tree of merges: the summaries summarized again, two by two.
    let mut sums: Vec<String> = (0..groups.len())
        .map(|i| format!("sum/shard-{i:02}.jsonl.zst"))
        .collect();
    sums.sort();
    summarize(&d, &shards(&sums, 2), "sum2", &[]);
    let twice = audit(&d, &["sum2"], "from-sum2", &grep);
    assert_same_audit(&raw, &twice, 2);
}

#[test]
fn what_a_lenient_load_counted_travels_with_its_summary() {
    let d = temp_dir("summary_lenient");
    std::fs::create_dir_all(d.join("logs/b")).unwrap();
    let mut a = String::new();
    for task in 0..6 {
        for (run, p) in [("base", 0.3), ("rl", 0.6)] {
            for s in 0..4 {
                let ok = ((task * 7 + s * 3) % 10) as f64 / 10.0 < p;
                a.push_str(&format!(
                    "{{\"run\":\"{run}\",\"method\":\"{}\",\"benchmark\":\"b\",\"task\":\"t{task}\",\"sample\":{s},\"budget\":8,\"success\":{ok},\"turns\":{},\"steps\":[{{\"output_tokens\":{},\"logp\":{{\"base\":-{}.25,\"rl\":-0.{}}}}}]}}\n",
                    if run == "base" { "base" } else { "grpo" },
                    if ok { 3 } else { 8 },
                    10 + task + s,
                    task + 1,
                    s + 1
                ));
            }
        }
    }
    a.push_str(
        "{\"run\":\"base\",\"benchmark\":\"b\",\"task\":\"t0\",\"budget\":0,\"success\":true}\n",
    );
    a.push_str("not json\n");
    a.push_str("{\"kind\":\"gossip\"}\n");
    std::fs::write(d.join("logs/a.jsonl"), a).unwrap();
    std::fs::write(
        d.join("logs/b/c.jsonl"),
        "{\"run\":\"base\",\"benchmark\":\"b\",\"task\":\"t0\",\"sample\":0,\"budget\":8,\"success\":false,\"turns\":8}\n{\"kind\":\"gossip\"}\n",
    )
    .unwrap();
    std::fs::write(d.join("logs/b/notes.json"), "{\"hello\": 1}").unwrap();
    let groups = vec![vec!["logs/a.jsonl".to_string()], vec!["logs/b".to_string()]];
    summarize(&d, &groups, "sum", &["--lenient"]);
    let raw = audit(&d, &["logs"], "raw", &["--lenient"]);
    assert_eq!(raw.json["inputs"]["skipped"]["duplicate"], 1);
    assert_eq!(raw.json["inputs"]["skipped"]["syntax"], 1);
    assert_eq!(raw.json["inputs"]["skipped"]["impossible_value"], 1);
    assert_eq!(raw.json["inputs"]["unknown_kinds"]["gossip"], 2);
    assert_eq!(raw.json["inputs"]["ignored_files"][0], "logs/b/notes.json");
    let from_summaries = audit(&d, &["sum"], "from-sum", &["--lenient"]);
    assert_same_audit(&raw, &from_summaries, 2);
}

#[test]
fn rllm_folders_and_parquet_logs_summarize_at_their_own_records() {
    // rLLM: one shard (its budgets are inferred over every run of the set).
    let d = temp_dir("summary_rllm");
    let rllm = manifest().join("tests/data/rllm");
    let rllm = rllm.to_str().unwrap();
    summarize(&d, &[vec![rllm.to_string()]], "sum", &[]);
    let raw = audit(&d, &[rllm], "raw", &[]);
    assert!(raw.json["inputs"]["files"].as_array().unwrap().len() > 10);
    assert_same_audit(&raw, &audit(&d, &["sum"], "from-sum", &[]), 1);

    // Parquet trajectories (rows numbered from 1) beside JSON Lines probes.
    let d = temp_dir("summary_parquet");
    let root = manifest().join("tests/data/large/parquet");
    let mut files: Vec<String> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path().display().to_string())
        .collect();
    files.sort();
    summarize(&d, &shards(&files, 4), "sum", &[]);
    let raw = audit(&d, &[root.to_str().unwrap()], "raw", &[]);
    assert_same_audit(&raw, &audit(&d, &["sum"], "from-sum", &[]), 4);
}

#[test]
fn a_damaged_summary_names_its_line_and_field() {
    let d = temp_dir("summary_bad");
    let header = "{\"kind\":\"summary\",\"version\":1}";
    let traj = |extra: &str| {
        format!("{{\"run\":\"a\",\"benchmark\":\"b\",\"task\":\"t\",\"budget\":4,\"success\":true,\"turns\":2{extra}}}")
    };
    let cases = [
        (
            format!("{header}\n{}\n", traj(",\"log_file\":\"x.jsonl\",\"log_line\":0")),
            "s.jsonl:2: log_line: must be ≥ 1, got 0",
        ),
        (
            // 2^36: past the record numbers a location holds (36 bits).
            format!("{header}\n{}\n", traj(",\"log_file\":\"x.jsonl\",\"log_line\":68719476736")),
            "s.jsonl:2: log_line: must be ≤ 68719476735, got 68719476736",
        ),
        (
            format!("{header}\n{}\n", traj(",\"log_file\":\"x.jsonl\"")),
            "s.jsonl:2: log_line: required field is missing",
        ),
        (
            format!("{header}\n{}\n", traj(",\"log_file\":7,\"log_line\":3")),
            "s.jsonl:2: log_file: expected a string, got 7",
        ),
        (
            "{\"kind\":\"summary\",\"version\":9}\n".to_string(),
            "s.jsonl:1: version: a summary of format 9 (this rl-audit reads format 1: summarize the logs again with it)",
        ),
        (
            "{\"kind\":\"summary\",\"version\":1,\"skipped\":{\"boredom\":2}}\n".to_string(),
            "s.jsonl:1: skipped.boredom: not a reason records are skipped for",
        ),
    ];
    for (text, want) in cases {
        let f = d.join("s.jsonl");
        std::fs::write(&f, text).unwrap();
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_rl-audit"))
            .current_dir(&d)
            .args(["--headless", "s.jsonl", "--out", "r"])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{want}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(err.trim_end(), format!("rl-audit: {want}"));
        assert!(!d.join("r/report.json").exists());
    }
    // --files-from: a line that is not a log file, a listed file that is missing.
    std::fs::write(d.join("list.txt"), "s.jsonl\n\nnotes.txt\n").unwrap();
    std::fs::write(d.join("list2.txt"), "gone.jsonl\n").unwrap();
    for (list, want) in [
        (
            "list.txt",
            "list.txt:3: \"notes.txt\" is not a log file: expected .jsonl, .ndjson, .jsonl.gz, .jsonl.zst, .parquet, .eval or .json",
        ),
        ("list2.txt", "gone.jsonl: no such file or directory"),
    ] {
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_rl-audit"))
            .current_dir(&d)
            .args(["--headless", "--files-from", list, "--out", "r"])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{want}");
        assert_eq!(
            String::from_utf8_lossy(&o.stderr).trim_end(),
            format!("rl-audit: {want}")
        );
    }
    // A summary is never half-written: the target is not created when the load fails.
    let o = rl_audit(&[
        d.join("s.jsonl").to_str().unwrap(),
        "--summarize",
        d.join("out.jsonl.zst").to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    assert!(!d.join("out.jsonl.zst").exists());
}

#[test]
fn the_readme_states_the_demos_summary_size() {
    // README, "Going past one machine": "the demo (18,432 trajectories,
    // 221,081 steps, …) summarizes to 1,825,119 bytes = 99 B/trajectory".
    let d = temp_dir("summary_size");
    run_in(&d, &["--summarize", "demo.jsonl.zst"]);
    let bytes = std::fs::metadata(d.join("demo.jsonl.zst")).unwrap().len();
    let demo = audit(&d, &[], "r", &[]);
    let trajectories = demo.json["inputs"]["records"]["trajectory"]
        .as_u64()
        .unwrap();
    let readme = std::fs::read_to_string(manifest().join("README.md")).unwrap();
    let flat = readme.split_whitespace().collect::<Vec<_>>().join(" ");
    let thousands = |n: u64| {
        let s = n.to_string();
        let mut out = String::new();
        for (i, c) in s.chars().enumerate() {
            if i > 0 && (s.len() - i).is_multiple_of(3) {
                out.push(',');
            }
            out.push(c);
        }
        out
    };
    let said = format!("the demo ({} trajectories,", thousands(trajectories));
    assert!(flat.contains(&said), "README: {said}");
    let said = format!(
        "summarizes to {} bytes = {} B/trajectory",
        thousands(bytes),
        (bytes as f64 / trajectories as f64).round()
    );
    assert!(flat.contains(&said), "README should say {said:?}");
}

#[test]
fn floats_are_parsed_correctly_rounded_and_come_back_from_a_summary_bit_for_bit() {
    // Shortest round-trip forms of three doubles (Python's repr) on which
    // serde_json without `float_roundtrip` rounds twice — significand to f64,
    // then one division by 10^15 — and lands one ulp off. The bit patterns
    // are Python's correctly rounded float(), struct-packed.
    let cases = [
        ("-18.687050846691058", 0xc032_afe2_9075_3a2a_u64),
        ("-14.072071433464913", 0xc02c_24e6_8c03_6a50),
        ("-27.490361154256558", 0xc03b_7d88_4f00_c2bf),
    ];
    let d = temp_dir("summary_floats");
    let steps: Vec<String> = cases
        .iter()
        .map(|(x, _)| format!("{{\"logp\": {{\"a\": {x}, \"b\": -1}}}}"))
        .collect();
    let record = format!(
        "{{\"run\": \"a\", \"benchmark\": \"b\", \"task\": \"t\", \"budget\": 4, \"success\": true, \"reward\": {}, \"steps\": [{}]}}\n",
        cases[0].0,
        steps.join(", ")
    );
    std::fs::write(d.join("x.jsonl"), record).unwrap();
    run_in(&d, &["x.jsonl", "--summarize", "x.summary.jsonl.zst"]);
    for file in ["x.jsonl", "x.summary.jsonl.zst"] {
        let set = rl_audit::schema::load(&[d.join(file)], &Default::default()).unwrap();
        let t = &set.trajectories[0];
        assert_eq!(
            t.reward().map(f64::to_bits),
            Some(cases[0].1),
            "{file}: reward"
        );
        let a = set.strings.get("a").unwrap();
        for (step, (text, bits)) in set.steps_of(t).iter().zip(cases) {
            let x = step.logp_of(a).unwrap();
            assert_eq!(x.to_bits(), bits, "{file}: {text} read as {x:e}");
        }
    }
}
