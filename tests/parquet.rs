//! Parquet input: the same records as JSON Lines give the same report
//! (`tests/data/large` was written by `examples/gen_large.rs 400` in both
//! formats), and a column of the wrong type names the row and the field.

mod common;
use common::*;
use polars::prelude::*;

#[test]
fn parquet_and_jsonl_give_the_same_audit() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/large");
    let d = temp_dir("parquet_same");
    let a = audit_json(&root.join("jsonl"), &d.join("a"), &["--resamples", "100"]);
    let b = audit_json(&root.join("parquet"), &d.join("b"), &["--resamples", "100"]);
    assert_eq!(a["inputs"]["records"]["trajectory"], 448); // 384 evaluation + 64 training
    assert_same_audit(&a, &b);
}

/// Two reports of the same records: the same records counted, and every
/// section but `inputs` (which names the files) equal.
fn assert_same_audit(a: &serde_json::Value, b: &serde_json::Value) {
    assert_eq!(a["inputs"]["records"], b["inputs"]["records"]);
    for (k, v) in a.as_object().unwrap() {
        if k != "inputs" {
            assert_eq!(v, &b[k], "section {k} differs");
        }
    }
}

#[test]
fn wrong_column_type_names_row_and_field() {
    let d = temp_dir("parquet_types");
    let f = d.join("x.parquet");
    let err = strict_failure("parquet_types_strict", "x.parquet", &budget_as_text());
    assert!(
        err.contains("x.parquet:1: budget: expected an integer"),
        "{err}"
    );
    // Lenient: both rows skipped as type errors.
    let mut df = df!("run" => ["a", "a", "a"], "benchmark" => ["b"; 3], "task" => ["t"; 3], "budget" => [4i64, 0, 4], "success" => [true, false, true]).unwrap();
    std::fs::write(&f, parquet_bytes(&mut df)).unwrap();
    let r = audit_json(&f, &d.join("o2"), &["--lenient", "--resamples", "20"]);
    assert_eq!(r["inputs"]["skipped"]["impossible_value"], 1);
    assert_eq!(r["inputs"]["records"]["trajectory"], 2);
}

/// Parquet trajectory files one after another: each one after the first is
/// read and its first window decoded while the file before finishes
/// (`TrajectoryFile::parse`'s `beside`). The set audits as its JSON Lines
/// do; a damaged file read that way fails as it does alone, and a bad row
/// in the file before a file read ahead is still named.
#[test]
fn parquet_files_read_ahead_audit_and_fail_as_read_alone() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/large");
    let d = temp_dir("parquet_ahead");
    let set = d.join("set");
    std::fs::create_dir_all(&set).unwrap();
    // Named so that the two Parquet files come one after the other.
    for (from, to) in [
        ("eval-000.parquet", "a-eval.parquet"),
        ("train-000.parquet", "b-train.parquet"),
        ("probes.jsonl", "c-probes.jsonl"),
        ("checkpoints.jsonl", "d-checkpoints.jsonl"),
    ] {
        std::fs::copy(root.join("parquet").join(from), set.join(to)).unwrap();
    }
    let a = audit_json(&root.join("jsonl"), &d.join("a"), &["--resamples", "100"]);
    let b = audit_json(&set, &d.join("b"), &["--resamples", "100"]);
    assert_same_audit(&a, &b);
    // The set's audit failing (exit 2, no report): its message.
    let fails = |out: &str| {
        let o = rl_audit(&[
            "--headless",
            set.to_str().unwrap(),
            "--out",
            d.join(out).to_str().unwrap(),
        ]);
        let err = String::from_utf8_lossy(&o.stderr).to_string();
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(!d.join(out).join("report.json").exists());
        err
    };
    // The training file cut short: the error it gives alone.
    let train = std::fs::read(root.join("parquet/train-000.parquet")).unwrap();
    let cut = &train[..train.len() / 2];
    let alone = strict_failure("parquet_ahead_alone", "b-train.parquet", cut);
    std::fs::write(set.join("b-train.parquet"), cut).unwrap();
    let err = fails("c");
    let path = |dir: &std::path::Path| dir.join("b-train.parquet").display().to_string();
    let alone_dir = temp_path("parquet_ahead_alone");
    assert_eq!(
        err.replace(&path(&set), "FILE"),
        alone.replace(&path(&alone_dir), "FILE")
    );
    // A bad row in the file before one read ahead.
    std::fs::write(set.join("b-train.parquet"), &train).unwrap();
    std::fs::write(set.join("a-eval.parquet"), budget_as_text()).unwrap();
    let err = fails("e");
    assert!(
        err.contains("a-eval.parquet:1: budget: expected an integer"),
        "{err}"
    );
}

#[test]
fn summarized_shards_audit_like_the_whole() {
    let d = temp_dir("summarize_shards");
    // Split the hand-checkable large sample into two shards by line.
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/large/jsonl");
    let eval = std::fs::read_to_string(root.join("eval-000.jsonl")).unwrap();
    let lines: Vec<&str> = eval.lines().collect();
    let (a, b) = lines.split_at(lines.len() / 2);
    std::fs::write(d.join("a.jsonl"), a.join("\n")).unwrap();
    std::fs::write(d.join("b.jsonl"), b.join("\n")).unwrap();
    for s in ["a", "b"] {
        let o = rl_audit(&[
            d.join(format!("{s}.jsonl")).to_str().unwrap(),
            "--summarize",
            d.join(format!("{s}.parquet")).to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let whole = audit_json(
        &root.join("eval-000.jsonl"),
        &d.join("w"),
        &["--resamples", "100"],
    );
    let shards_dir = d.join("shards");
    std::fs::create_dir_all(&shards_dir).unwrap();
    for s in ["a", "b"] {
        std::fs::rename(
            d.join(format!("{s}.parquet")),
            shards_dir.join(format!("{s}.parquet")),
        )
        .unwrap();
    }
    let merged = audit_json(&shards_dir, &d.join("m"), &["--resamples", "100"]);
    for section in [
        "pass_at_kt",
        "upper_bound",
        "advantage",
        "mode_gap",
        "pass_curve",
    ] {
        let (x, y) = (
            whole[section].as_array().unwrap(),
            merged[section].as_array().unwrap(),
        );
        assert_eq!(x.len(), y.len(), "{section}");
        assert!(!x.is_empty());
        for (p, q) in x.iter().zip(y) {
            for key in [
                "value",
                "delta",
                "diff",
                "tasks",
                "tasks_left_out",
                "pass_all",
                "kind",
            ] {
                assert_eq!(p.get(key), q.get(key), "{section} {key}: {p} vs {q}");
            }
        }
    }
}

#[test]
fn the_trajectory_browser_rereads_one_record_in_every_format() {
    use std::io::Write;
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/large");
    let jsonl = root.join("jsonl/eval-000.jsonl");
    let text = std::fs::read_to_string(&jsonl).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let d = temp_dir("reread");
    let gz = d.join("eval-000.jsonl.gz");
    let mut enc = flate2::write::GzEncoder::new(
        std::fs::File::create(&gz).unwrap(),
        flate2::Compression::fast(),
    );
    enc.write_all(text.as_bytes()).unwrap();
    enc.finish().unwrap();
    let parquet = root.join("parquet/eval-000.parquet");
    for line in [1u64, 2, 57, lines.len() as u64] {
        // Expected: the line itself, read by the standard library.
        let want: serde_json::Value = serde_json::from_str(lines[line as usize - 1]).unwrap();
        for file in [&jsonl, &gz, &parquet] {
            let got = rl_audit::schema::load::read_record(file.to_str().unwrap(), line)
                .unwrap_or_else(|e| panic!("{}:{line}: {e}", file.display()));
            for key in ["run", "task", "sample", "budget", "success", "turns"] {
                assert_eq!(got[key], want[key], "{}:{line} {key}", file.display());
            }
            let (gs, ws) = (
                got["steps"].as_array().unwrap(),
                want["steps"].as_array().unwrap(),
            );
            assert_eq!(gs.len(), ws.len());
            for (g, w) in gs.iter().zip(ws) {
                assert_eq!(g["turn"], w["turn"]);
                assert_eq!(g["logp"], w["logp"]);
            }
        }
    }
    let past = lines.len() as u64 + 1;
    for file in [&jsonl, &gz, &parquet] {
        let e = rl_audit::schema::load::read_record(file.to_str().unwrap(), past).unwrap_err();
        assert!(e.to_string().contains("gone"), "{e}");
    }
}

#[test]
fn parquet_written_by_pyarrow_and_pandas_audits_like_the_jsonl() {
    // tests/data/pyarrow/make.py: the same evaluation records written by
    // pyarrow's defaults, by pandas (categorical strings, int32, float32,
    // success_turn as float64 with nulls), with large string types, by
    // pyarrow 14 in small pages that end inside rows, and in small pages
    // with the page index.
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let d = temp_dir("pyarrow");
    let want = audit_json(
        &root.join("large/jsonl"),
        &d.join("want"),
        &["--resamples", "100"],
    );
    for file in [
        "eval-pyarrow.parquet",
        "eval-pandas-categorical.parquet",
        "eval-large-types.parquet",
        "eval-small-pages.parquet",
        "eval-page-index.parquet",
    ] {
        let logs = d.join(file.trim_end_matches(".parquet"));
        std::fs::create_dir_all(&logs).unwrap();
        std::fs::copy(root.join("pyarrow").join(file), logs.join("eval.parquet")).unwrap();
        for other in ["probes.jsonl", "checkpoints.jsonl", "train-000.jsonl"] {
            std::fs::copy(root.join("large/jsonl").join(other), logs.join(other)).unwrap();
        }
        let got = audit_json(&logs, &logs.join("report"), &["--resamples", "100"]);
        assert_eq!(
            got["inputs"]["records"], want["inputs"]["records"],
            "{file}"
        );
        for (k, v) in want.as_object().unwrap() {
            if k != "inputs" {
                assert_eq!(
                    v, &got[k],
                    "{file}: section {k} differs from the JSONL audit"
                );
            }
        }
    }
}

#[test]
fn a_fractional_value_in_a_float_integer_column_names_its_row() {
    let mut df = df!(
        "run" => ["a", "a"],
        "method" => ["base", "base"],
        "benchmark" => ["b", "b"],
        "task" => ["t", "t"],
        "sample" => [0i64, 1],
        "budget" => [4.0f64, 4.5],
        "max_budget" => [4i64, 4],
        "success" => [false, false],
        "turns" => [4i64, 4],
    )
    .unwrap();
    let err = strict_failure("parquet_fraction", "x.parquet", &parquet_bytes(&mut df));
    assert!(
        err.contains("budget") && err.contains("row 2 holds 4.5"),
        "{err}"
    );
}

/// An unsigned 64-bit column (what a writer may choose for counts) holding
/// more than a signed 64-bit integer can: that row is refused as too large,
/// as the same value is in JSON Lines — not read as absent (polars' cast
/// leaves it null), and the rows before it are read as they are.
#[test]
fn an_unsigned_value_past_64_signed_bits_is_too_large_in_its_row() {
    let big = 1u64 << 63;
    let rollouts = |name: &str, turns: [u64; 2], budget: [u64; 2]| {
        let mut df = df!(
            "run" => ["a", "a"],
            "benchmark" => ["b", "b"],
            "task" => ["t", "u"],
            "budget" => budget,
            "success" => [false, false],
            "turns" => turns,
        )
        .unwrap();
        refused_line(name, &mut df)
    };
    assert_eq!(
        rollouts("parquet_u64_turns", [3, big], [4, 4]),
        format!("x.parquet:2: turns: {big} is too large")
    );
    assert_eq!(
        rollouts("parquet_u64_budget", [3, 3], [4, u64::MAX]),
        "x.parquet:2: budget: 18446744073709551615 is too large"
    );
    // A step's field: the flat column over every step of the file.
    let mut df = two_rollouts(
        "a",
        Series::new("output_tokens".into(), [5u64, big, 7]),
        [true, false],
    );
    assert_eq!(
        refused_line("parquet_u64_step", &mut df),
        format!("x.parquet:1: steps[1].output_tokens: {big} is too large")
    );
}

/// The first line a strict audit of `df` (as `x.parquet`) fails with, from
/// the file's name on.
fn refused_line(name: &str, df: &mut DataFrame) -> String {
    let err = strict_failure(name, "x.parquet", &parquet_bytes(df));
    let line = err.lines().next().unwrap_or_default();
    line.rsplit('/').next().unwrap_or_default().to_string()
}

/// A file is parsed by columns some thousands of rows at a time: a bad row
/// far into it is named by its own row number, and a lenient load keeps
/// every other row.
#[test]
fn a_bad_row_past_the_first_parts_names_its_row() {
    let n = 40_000usize;
    let bad = 37_000usize;
    let budget: Vec<i64> = (1..=n).map(|i| if i == bad { 0 } else { 4 }).collect();
    let tasks: Vec<String> = (0..n).map(|i| format!("t{}", i / 8)).collect();
    let samples: Vec<i64> = (0..n).map(|i| (i % 8) as i64).collect();
    let mut df = df!(
        "run" => vec!["a"; n],
        "benchmark" => vec!["b"; n],
        "task" => tasks,
        "sample" => samples,
        "budget" => budget,
        "success" => vec![true; n],
    )
    .unwrap();
    let bytes = parquet_bytes(&mut df);
    let err = strict_failure("parquet_far_row", "x.parquet", &bytes);
    assert!(err.contains(&format!("x.parquet:{bad}: budget:")), "{err}");
    let d = temp_dir("parquet_far_row_lenient");
    let f = d.join("x.parquet");
    std::fs::write(&f, &bytes).unwrap();
    let r = audit_json(&f, &d.join("o"), &["--lenient", "--resamples", "20"]);
    assert_eq!(r["inputs"]["skipped"]["impossible_value"], 1);
    assert_eq!(r["inputs"]["records"]["trajectory"], n as u64 - 1);
}

/// The trajectory reader decodes only the columns the audit reads: of the
/// steps' structs not their actions and observations, of the top level not
/// a trainer's own columns (a prompt), row group by row group. A file of
/// many row groups with both audits as the same rows written as one row
/// group without them (160,000 steps: decoded in two windows of rows), and
/// a bad row in its thirteenth row group is named by its row. Its steps
/// also have `budget_total` and `reward` fields holding no value (typed,
/// all null — as trainers write fields they leave empty): passed over
/// undecoded, they read as the absent fields of the plain file.
#[test]
fn unread_columns_and_row_groups_change_nothing() {
    let n = 40_000usize;
    let bad = 37_000usize;
    let frame = |text: bool| {
        let steps_of = |i: usize| 1 + i % 7;
        let n_steps: usize = (0..n).map(steps_of).sum();
        let turn: Vec<i64> = (0..n).flat_map(|i| 1..=steps_of(i) as i64).collect();
        let tokens: Vec<i64> = (0..n_steps).map(|j| 10 + (j % 17) as i64).collect();
        let error: Vec<bool> = (0..n_steps).map(|j| j % 5 == 0).collect();
        let mut fields = vec![Series::new("turn".into(), turn)];
        if text {
            let action: Vec<String> = (0..n_steps).map(|j| format!("call_{j}()")).collect();
            let obs: Vec<String> = (0..n_steps).map(|j| "x".repeat(j % 300)).collect();
            fields.push(Series::new("action".into(), action));
            fields.push(Series::new("observation".into(), obs));
            fields.push(Series::new(
                "budget_total".into(),
                vec![None::<i64>; n_steps],
            ));
            fields.push(Series::new("reward".into(), vec![None::<f64>; n_steps]));
        }
        fields.push(Series::new("output_tokens".into(), tokens));
        fields.push(Series::new("error".into(), error));
        let st = StructChunked::from_series("steps".into(), n_steps, fields.iter())
            .unwrap()
            .into_series();
        let mut at = 0i64;
        let steps: ListChunked = (0..n)
            .map(|i| {
                let s = st.slice(at, steps_of(i));
                at += steps_of(i) as i64;
                Some(s)
            })
            .collect();
        let budget: Vec<i64> = (1..=n).map(|i| if i == bad { 0 } else { 4 }).collect();
        let turns: Vec<i64> = (0..n).map(|i| steps_of(i) as i64).collect();
        let mut df = df!(
            "run" => (0..n).map(|i| ["a", "b"][i % 2]).collect::<Vec<_>>(),
            "method" => (0..n).map(|i| ["base", "grpo"][i % 2]).collect::<Vec<_>>(),
            "benchmark" => vec!["b"; n],
            "task" => (0..n).map(|i| format!("t{}", i / 16)).collect::<Vec<_>>(),
            "sample" => (0..n).map(|i| (i / 2 % 8) as i64).collect::<Vec<_>>(),
            "budget" => budget,
            "max_budget" => vec![4i64; n],
            "success" => (0..n).map(|i| i % 3 != 1).collect::<Vec<_>>(),
            "turns" => turns,
        )
        .unwrap();
        if text {
            let prompt: Vec<String> = (0..n).map(|i| format!("solve task {i}")).collect();
            df.with_column(Column::new("prompt".into(), prompt))
                .unwrap();
        }
        df.with_column(steps.into_series().with_name("steps".into()).into_column())
            .unwrap();
        df
    };
    let mut out = Vec::new();
    ParquetWriter::new(&mut out)
        .with_row_group_size(Some(3000))
        .finish(&mut frame(true))
        .unwrap();
    let err = strict_failure("parquet_groups", "x.parquet", &out);
    assert!(err.contains(&format!("x.parquet:{bad}: budget:")), "{err}");
    let d = temp_dir("parquet_groups_lenient");
    std::fs::write(d.join("groups.parquet"), &out).unwrap();
    std::fs::write(d.join("plain.parquet"), parquet_bytes(&mut frame(false))).unwrap();
    let args = ["--lenient", "--resamples", "50"];
    let a = audit_json(&d.join("groups.parquet"), &d.join("a"), &args);
    let b = audit_json(&d.join("plain.parquet"), &d.join("b"), &args);
    assert_eq!(a["inputs"]["records"]["trajectory"], n as u64 - 1);
    assert_eq!(a["inputs"]["records"], b["inputs"]["records"]);
    for (k, v) in b.as_object().unwrap() {
        if k != "inputs" {
            assert_eq!(v, &a[k], "section {k} differs");
        }
    }
}

/// Two rollouts (tasks t and u, budget 4) of two steps and one: each
/// step's turn and `field`'s value (three values).
fn two_rollouts(run: &str, field: Series, success: [bool; 2]) -> DataFrame {
    let st = StructChunked::from_series(
        "steps".into(),
        3,
        [Series::new("turn".into(), [1i64, 2, 1]), field].iter(),
    )
    .unwrap()
    .into_series();
    let steps: ListChunked = [Some(st.slice(0, 2)), Some(st.slice(2, 1))]
        .into_iter()
        .collect();
    let mut df = df!(
        "run" => [run, run],
        "benchmark" => ["b", "b"],
        "task" => ["t", "u"],
        "budget" => [4i64, 4],
        "success" => success,
    )
    .unwrap();
    df.with_column(steps.into_series().with_name("steps".into()).into_column())
        .unwrap();
    df
}

/// A step field holding no value is passed over only when it is of a type
/// the field may have: all-null texts where `error` must be true or false
/// are still reported, as any other wrong type is.
#[test]
fn a_step_field_of_the_wrong_type_is_named_though_it_holds_no_value() {
    let mut df = two_rollouts(
        "a",
        Series::new("error".into(), vec![None::<&str>; 3]),
        [true, false],
    );
    let err = strict_failure(
        "parquet_null_wrong_type",
        "x.parquet",
        &parquet_bytes(&mut df),
    );
    assert!(
        err.contains("x.parquet:1: steps[0].error: expected true or false, the column is str"),
        "{err}"
    );
}

/// `steps` must be a list of structs and a step's `logp` a list of `{run,
/// value}` structs (SPEC §1). A list of numbers, a map (read back as a
/// list of `{key, value}`) or a struct of runs (what pyarrow makes of a
/// dict) is named with its type at the first step holding one — not read
/// as steps without fields, or as no log-probabilities.
#[test]
fn steps_and_logp_in_another_layout_are_named_not_dropped() {
    let mut df = df!(
        "run" => ["a", "a"],
        "benchmark" => ["b", "b"],
        "task" => ["t", "u"],
        "budget" => [4i64, 4],
        "success" => [false, false],
    )
    .unwrap();
    let steps: ListChunked = [
        Some(Series::new("".into(), [1i64, 2])),
        Some(Series::new("".into(), [1i64])),
    ]
    .into_iter()
    .collect();
    df.with_column(steps.into_series().with_name("steps".into()).into_column())
        .unwrap();
    assert_eq!(
        refused_line("layout_steps", &mut df),
        "x.parquet:1: steps: expected a list of step structs, the column is list of i64"
    );
    // A struct of runs: one field a run.
    let runs = StructChunked::from_series(
        "logp".into(),
        3,
        [Series::new("a".into(), [-1.0f64, -2.0, -1.5])].iter(),
    )
    .unwrap()
    .into_series();
    assert_eq!(
        refused_line("layout_struct", &mut two_rollouts("a", runs, [true, false])),
        "x.parquet:1: steps[0].logp: expected a list of {run, value} structs, the column is struct{a}"
    );
    // A map: a list of {key, value} a step.
    let entry = |k: &str, v: f64| {
        StructChunked::from_series(
            "".into(),
            1,
            [
                Series::new("key".into(), [k]),
                Series::new("value".into(), [v]),
            ]
            .iter(),
        )
        .unwrap()
        .into_series()
    };
    let map: ListChunked = [
        Some(entry("a", -1.0)),
        Some(entry("a", -2.0)),
        Some(entry("a", -1.5)),
    ]
    .into_iter()
    .collect();
    assert_eq!(
        refused_line(
            "layout_map",
            &mut two_rollouts("a", map.into_series().with_name("logp".into()), [true, false])
        ),
        "x.parquet:1: steps[0].logp: expected a list of {run, value} structs, the column is list of struct{key, value}"
    );
}

/// Two rows whose `budget` column holds text ("4", "5"): the first row's
/// budget is the error.
fn budget_as_text() -> Vec<u8> {
    let mut df = df!(
        "run" => ["a", "a"],
        "benchmark" => ["b", "b"],
        "task" => ["t", "t"],
        "budget" => ["4", "5"],
        "success" => [true, false],
    )
    .unwrap();
    parquet_bytes(&mut df)
}

fn parquet_bytes(df: &mut DataFrame) -> Vec<u8> {
    let mut out = Vec::new();
    ParquetWriter::new(&mut out).finish(df).unwrap();
    out
}

/// The loading gauge counts bytes on disk and records as they go into the
/// set, whatever the format: a Parquet file (decoded by columns) or a
/// gzip one (whose decompressed bytes outnumber its own) ends the load at
/// exactly its size and its rows, like plain JSON Lines.
#[test]
fn the_loading_gauge_ends_at_the_files_sizes_and_records() {
    use std::io::Write;
    use std::sync::atomic::Ordering::Relaxed;
    use std::sync::Arc;
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/large");
    let d = temp_dir("parquet_gauge");
    // Parquet trajectories beside the JSON Lines probes and checkpoints,
    // the training rollouts gzip-compressed.
    for f in ["eval-000.parquet", "probes.jsonl", "checkpoints.jsonl"] {
        std::fs::copy(root.join("parquet").join(f), d.join(f)).unwrap();
    }
    let train = std::fs::read(root.join("jsonl/train-000.jsonl")).unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&train).unwrap();
    std::fs::write(d.join("train-000.jsonl.gz"), gz.finish().unwrap()).unwrap();
    // Every record of the set: the JSON Lines files' lines, one a record.
    let lines = |f: &str| {
        std::fs::read_to_string(root.join("jsonl").join(f))
            .unwrap()
            .lines()
            .filter(|l| !l.trim().is_empty())
            .count() as u64
    };
    let records: u64 = [
        "eval-000.jsonl",
        "train-000.jsonl",
        "probes.jsonl",
        "checkpoints.jsonl",
    ]
    .into_iter()
    .map(lines)
    .sum();
    let on_disk: u64 = std::fs::read_dir(&d)
        .unwrap()
        .map(|e| e.unwrap().metadata().unwrap().len())
        .sum();
    let progress = Arc::new(rl_audit::schema::load::Progress::default());
    let opts = rl_audit::schema::LoadOptions {
        progress: Some(progress.clone()),
        ..Default::default()
    };
    rl_audit::schema::load(std::slice::from_ref(&d), &opts).expect("the set loads");
    assert_eq!(progress.bytes_total.load(Relaxed), on_disk);
    assert_eq!(progress.bytes_done.load(Relaxed), on_disk);
    assert_eq!(progress.records.load(Relaxed), records);
}

/// A search reads a Parquet file's rows a row group and a window at a
/// time: every hit found, in file order, across row-group and window
/// boundaries — the rows that hold the pattern known from how the file was
/// written — and each record's texts visited are those written.
#[test]
fn a_search_reads_parquet_row_groups_once_and_finds_every_hit() {
    let n = 20_000usize;
    // Incompressible observations, so that the file passes 1 MiB and is
    // read a row group at a time.
    let mut rng = Mix(7);
    let obs: Vec<String> = (0..n)
        .map(|_| (0..8).map(|_| format!("{:016x}", rng.next())).collect())
        .collect();
    let action: Vec<String> = (0..n).map(|i| format!("call_{i}()")).collect();
    let steps_series = StructChunked::from_series(
        "steps".into(),
        n,
        [
            Series::new("turn".into(), vec![1i64; n]),
            Series::new("action".into(), action),
            Series::new("observation".into(), &obs),
        ]
        .iter(),
    )
    .unwrap()
    .into_series();
    let steps: ListChunked = (0..n)
        .map(|i| Some(steps_series.slice(i as i64, 1)))
        .collect();
    let mut df = df!(
        "run" => (0..n).map(|i| ["a", "b"][i % 2]).collect::<Vec<_>>(),
        "benchmark" => vec!["b"; n],
        "task" => (0..n).map(|i| format!("t{}", i / 8)).collect::<Vec<_>>(),
        "sample" => (0..n).map(|i| (i / 2 % 4) as i64).collect::<Vec<_>>(),
        "budget" => vec![4i64; n],
        "success" => (0..n).map(|i| i % 3 == 0).collect::<Vec<_>>(),
        "turns" => vec![1i64; n],
        // Floats of every length, as a record re-read on its own writes
        // them as text and reads them back.
        "reward" => (0..n).map(|i| (i as f64).sqrt() / 7.0).collect::<Vec<_>>(),
    )
    .unwrap();
    df.with_column(steps.into_series().with_name("steps".into()).into_column())
        .unwrap();
    let mut bytes = Vec::new();
    ParquetWriter::new(&mut bytes)
        .with_row_group_size(Some(10_000))
        .finish(&mut df)
        .unwrap();
    assert!(bytes.len() > 1 << 20, "{} bytes", bytes.len());
    let groups: Vec<usize> = ParquetReader::new(std::io::Cursor::new(&bytes))
        .get_metadata()
        .unwrap()
        .row_groups
        .iter()
        .map(|g| g.num_rows())
        .collect();
    assert_eq!(groups, [10_000, 10_000]);
    let d = temp_dir("parquet_search");
    let file = d.join("rows.parquet");
    std::fs::write(&file, &bytes).unwrap();
    let set = rl_audit::schema::load::load(&[file], &Default::default()).unwrap();
    assert_eq!(set.trajectories.len(), n);
    // A record re-read on its own (the trajectory view), in each row group:
    // polars, left to choose, parsed the row groups before the row's too,
    // never read, and no row past the first row group could be shown.
    for i in [0usize, 9999, 10000, 15000, 19999] {
        let v = set.read_record(set.trajectories[i].loc).unwrap();
        assert_eq!(
            v["steps"][0]["action"],
            format!("call_{i}()"),
            "row {}",
            i + 1
        );
    }
    // Rows 1, 4096, 4097, 9999, 10000, 10001, 14096, 14097 and 20000
    // (1-based): each side of a window's end and of a row group's.
    let want: Vec<usize> = vec![0, 4095, 4096, 9998, 9999, 10000, 14095, 14096, 19999];
    let pattern = want
        .iter()
        .map(|i| format!("call_{i}\\(\\)"))
        .collect::<Vec<_>>()
        .join("|");
    let re = regex::Regex::new(&format!("^({pattern})$")).unwrap();
    let progress = rl_audit::analysis::grep::Progress::default();
    let found = rl_audit::analysis::grep::search(&set, &re, 1000, &|| true, &progress).unwrap();
    assert_eq!(found.read, n);
    assert!(!found.truncated);
    // What the screen shows while it runs, at its end.
    use std::sync::atomic::Ordering::Relaxed;
    assert_eq!(progress.read.load(Relaxed), n);
    assert_eq!(progress.hits.load(Relaxed), want.len());
    let rows: Vec<u64> = found
        .hits
        .iter()
        .map(|h| set.trajectories[h.traj].loc.line())
        .collect();
    assert_eq!(rows, want.iter().map(|&i| i as u64 + 1).collect::<Vec<_>>());
    for h in &found.hits {
        let row = set.trajectories[h.traj].loc.line() as usize;
        assert_eq!(h.text, format!("call_{}()", row - 1));
        assert_eq!(h.field, "action");
    }
    // A limit stops at the first hits in file order.
    let few = rl_audit::analysis::grep::search(&set, &re, 3, &|| true, &progress).unwrap();
    assert_eq!(few.hits.len(), 3);
    assert!(few.truncated);
    assert_eq!(few.read, 4097);
    // Every 7th record, visited once each, has the texts of the record
    // read on its own: its action and observation, as the file was written.
    let some: Vec<usize> = (0..n).step_by(7).collect();
    let mut seen = vec![0u32; some.len()];
    set.visit_step_texts(&some, true, &|| true, &mut |k, steps| {
        seen[k] += 1;
        let i = set.trajectories[some[k]].loc.line() as usize - 1;
        let [action, observation] = &steps[0];
        assert_eq!(steps.len(), 1, "record {}", some[k]);
        assert_eq!(action.as_deref(), Some(format!("call_{i}()").as_str()));
        assert_eq!(observation.as_deref(), Some(obs[i].as_str()));
        if k % 50 == 0 {
            let alone = set.read_record(set.trajectories[some[k]].loc).unwrap();
            assert_eq!(
                alone["steps"][0]["observation"], obs[i],
                "record {}",
                some[k]
            );
        }
        true
    })
    .unwrap();
    assert!(seen.iter().all(|&c| c == 1));
    let _ = std::fs::remove_dir_all(&d);
}

/// A search finds text only in the fields a step has: a pattern matching
/// the empty text (`^`) hits each action and observation there is — in a
/// JSON Lines record and a Parquet row alike — and no step without them
/// (gen_large's Parquet steps hold numbers alone: their column is not read).
#[test]
fn a_search_finds_nothing_in_a_field_a_step_has_not() {
    let d = temp_dir("search_absent_fields");
    let row = |run: &str, steps: serde_json::Value| {
        serde_json::json!({"run": run, "benchmark": "b", "task": "t", "budget": 4, "success": false,
                           "turns": 3, "steps": steps})
    };
    write_lines(
        &d.join("a.jsonl"),
        &[row(
            "a",
            serde_json::json!([{"turn": 1, "action": "go"}, {"turn": 2, "observation": "wall"}, {"turn": 3}]),
        )],
    );
    // Two rows whose steps are numbers alone.
    let mut df = two_rollouts(
        "b",
        Series::new("output_tokens".into(), [5i64, 6, 7]),
        [false, false],
    );
    df.with_column(Column::new("turns".into(), [2i64, 1]))
        .unwrap();
    ParquetWriter::new(std::fs::File::create(d.join("b.parquet")).unwrap())
        .finish(&mut df)
        .unwrap();
    let set = rl_audit::schema::load::load(
        &[d.join("a.jsonl"), d.join("b.parquet")],
        &Default::default(),
    )
    .unwrap();
    assert_eq!(set.trajectories.len(), 3);
    let re = regex::Regex::new("^").unwrap();
    let progress = rl_audit::analysis::grep::Progress::default();
    let found = rl_audit::analysis::grep::search(&set, &re, 100, &|| true, &progress).unwrap();
    assert_eq!(found.read, 3);
    let hits: Vec<(usize, &str)> = found.hits.iter().map(|h| (h.step, h.field)).collect();
    assert_eq!(hits, [(0, "action"), (1, "observation")]);
    assert_eq!(found.matching, 1);
}
