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
    assert_eq!(a["inputs"]["records"], b["inputs"]["records"]);
    assert_eq!(a["inputs"]["records"]["trajectory"], 448); // 384 evaluation + 64 training
    for (k, v) in a.as_object().unwrap() {
        if k != "inputs" {
            assert_eq!(v, &b[k], "section {k} differs between JSONL and Parquet");
        }
    }
}

#[test]
fn wrong_column_type_names_row_and_field() {
    let d = temp_dir("parquet_types");
    let f = d.join("x.parquet");
    let mut df = df!(
        "run" => ["a", "a"],
        "benchmark" => ["b", "b"],
        "task" => ["t", "t"],
        "budget" => ["4", "5"],
        "success" => [true, false],
    )
    .unwrap();
    ParquetWriter::new(std::fs::File::create(&f).unwrap())
        .finish(&mut df)
        .unwrap();
    let o = rl_audit(&[
        "--headless",
        f.to_str().unwrap(),
        "--out",
        d.join("o").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("x.parquet:1: budget: expected an integer"),
        "{err}"
    );
    // Lenient: both rows skipped as type errors.
    let mut df = df!("run" => ["a", "a", "a"], "benchmark" => ["b"; 3], "task" => ["t"; 3], "budget" => [4i64, 0, 4], "success" => [true, false, true]).unwrap();
    ParquetWriter::new(std::fs::File::create(&f).unwrap())
        .finish(&mut df)
        .unwrap();
    let r = audit_json(&f, &d.join("o2"), &["--lenient", "--resamples", "20"]);
    assert_eq!(r["inputs"]["skipped"]["impossible_value"], 1);
    assert_eq!(r["inputs"]["records"]["trajectory"], 2);
}
