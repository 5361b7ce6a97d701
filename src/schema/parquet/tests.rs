use super::*;

/// `n` lists of `flat`'s values in order, list `i` of `len(i)` of them,
/// null where `null(i)` (its values passed over all the same).
fn lists(
    flat: &Series,
    n: usize,
    len: impl Fn(usize) -> usize,
    null: impl Fn(usize) -> bool,
) -> ListChunked {
    let mut at = 0i64;
    (0..n)
        .map(|i| {
            let s = flat.slice(at, len(i));
            at += len(i) as i64;
            (!null(i)).then_some(s)
        })
        .collect()
}

/// `n` trajectory rows whose steps hold every shape a window must cut
/// right: null and empty step lists, rows of up to 40 steps, null
/// fields, log-probability lists of 0 to 3 entries or null.
fn frame(n: usize) -> DataFrame {
    let steps_of = |i: usize| (i * 7) % 41;
    let logp_of = |j: usize| j % 4;
    let n_steps: usize = (0..n).map(steps_of).sum();
    let n_logp: usize = (0..n_steps).map(logp_of).sum();
    let runs: Vec<&str> = (0..n_logp)
        .map(|q| ["base", "grpo", "sft"][q % 3])
        .collect();
    let values: Vec<Option<f64>> = (0..n_logp)
        .map(|q| (q % 11 != 0).then(|| -(q as f64) / 7.0))
        .collect();
    let lp = StructChunked::from_series(
        "logp".into(),
        n_logp,
        [
            Series::new("run".into(), runs),
            Series::new("value".into(), values),
        ]
        .iter(),
    )
    .unwrap()
    .into_series();
    let logp = lists(&lp, n_steps, logp_of, |j| j % 9 == 4);
    let turn: Vec<i64> = (0..n).flat_map(|i| 1..=steps_of(i) as i64).collect();
    let tokens: Vec<Option<i64>> = (0..n_steps)
        .map(|j| (j % 13 != 0).then_some(10 + (j % 17) as i64))
        .collect();
    let error: Vec<bool> = (0..n_steps).map(|j| j % 5 == 0).collect();
    let fields = [
        Series::new("turn".into(), turn),
        Series::new("output_tokens".into(), tokens),
        Series::new("error".into(), error),
        logp.into_series().with_name("logp".into()),
    ];
    let st = StructChunked::from_series("steps".into(), n_steps, fields.iter())
        .unwrap()
        .into_series();
    let steps = lists(&st, n, steps_of, |i| i % 23 == 5);
    let mut df = df!(
        "run" => (0..n).map(|i| ["a", "b"][i % 2]).collect::<Vec<_>>(),
        "task" => (0..n).map(|i| format!("t{}", i / 16)).collect::<Vec<_>>(),
        "budget" => (0..n).map(|i| (i % 10 != 3).then_some(4i64)).collect::<Vec<_>>(),
        "success" => (0..n).map(|i| i % 3 != 1).collect::<Vec<_>>(),
    )
    .unwrap();
    df.with_column(steps.into_series().with_name("steps".into()).into_column())
        .unwrap();
    df
}

/// A step's texts as owned strings.
type Owned = [Option<String>; 2];

fn owned(steps: &[StepText]) -> Vec<Owned> {
    steps
        .iter()
        .map(|t| t.clone().map(|t| t.map(|t| t.into_owned())))
        .collect()
}

/// The step texts [`visit_rows_in_file`] hands over for `rows` (with
/// `observations` or not), with their keys.
fn texts_visited(
    path: &std::path::Path,
    rows: &[(u64, usize)],
    observations: bool,
) -> Result<Vec<(usize, Vec<Owned>)>> {
    let mut seen = Vec::new();
    let mut visit = |k, steps: &[StepText]| {
        seen.push((k, owned(steps)));
        true
    };
    visit_rows_in_file(
        "f",
        path,
        rows,
        &mut Visit {
            observations,
            visit: &mut visit,
        },
        &mut || Ok(()),
    )?;
    Ok(seen)
}

/// A search for the steps' texts reads no `steps` column whose steps
/// hold no text field (`frame`'s: turn, tokens, error, log-probabilities)
/// or only null ones: each row visited with nothing in it; a file whose
/// steps have an action reads them.
#[test]
fn steps_without_texts_are_not_read_for_a_search() {
    let texts: &[&str] = &["action", "observation"];
    let raw = written(&mut frame(300), None);
    // Whether a file's steps may hold a text, from its footer.
    let may_hold = |raw: &[u8]| {
        let meta = polars_parquet::read::read_metadata(&mut std::io::Cursor::new(raw)).unwrap();
        let schema = polars_io::parquet::read::infer_schema(&meta).unwrap();
        steps_may_hold(schema.get("steps").unwrap(), texts, &meta)
    };
    assert!(!may_hold(&raw));
    let dir = std::env::temp_dir().join(format!("rl-audit-steps-no-texts-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("numbers.parquet");
    std::fs::write(&path, &raw).unwrap();
    let rows: Vec<(u64, usize)> = (1..=300u64).map(|r| (r, r as usize)).collect();
    let seen = texts_visited(&path, &rows, true).unwrap();
    assert_eq!(seen, (1..=300).map(|k| (k, vec![])).collect::<Vec<_>>());
    // Two rows of one step each, in row groups of one: a turn and an
    // action.
    let two_rows = |action: Series| {
        let st = StructChunked::from_series(
            "steps".into(),
            2,
            [Series::new("turn".into(), [1i64, 1]), action].iter(),
        )
        .unwrap()
        .into_series();
        let mut df = df!("run" => ["a", "a"]).unwrap();
        df.with_column(
            lists(&st, 2, |_| 1, |_| false)
                .into_series()
                .with_name("steps".into())
                .into_column(),
        )
        .unwrap();
        written(&mut df, Some(1))
    };
    // With an action among the step fields, the steps are read.
    let raw = two_rows(Series::new("action".into(), ["go", "stop"]));
    assert!(may_hold(&raw));
    std::fs::write(&path, &raw).unwrap();
    let stop = [Some("stop".to_string()), None];
    assert_eq!(
        texts_visited(&path, &[(2, 0)], true).unwrap(),
        [(0, vec![stop])]
    );
    // An action of another type reads as its JSON, as the record read
    // whole does.
    std::fs::write(&path, two_rows(Series::new("action".into(), [7i64, -3]))).unwrap();
    let minus = [Some("-3".to_string()), None];
    assert_eq!(
        texts_visited(&path, &[(2, 0)], true).unwrap(),
        [(0, vec![minus])]
    );
    // Actions null in one row group of two: read; null in both, by the
    // statistics: not, each row visited empty.
    assert!(may_hold(&two_rows(Series::new(
        "action".into(),
        [None, Some("stop")]
    ))));
    let raw = two_rows(Series::new("action".into(), [None::<&str>, None]));
    assert!(!may_hold(&raw));
    std::fs::write(&path, &raw).unwrap();
    let seen = texts_visited(&path, &[(1, 0), (2, 1)], false).unwrap();
    assert_eq!(seen, [(0, vec![]), (1, vec![])]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The steps' texts visited window by window ([`visit_step_fields`],
/// of a file in small pages: several windows a row group) are each
/// record's as the trajectory view re-reads it whole: 2,000 rows of 0
/// to 40 steps (some lists null), actions and observations some null,
/// every third row and one twice.
#[test]
fn step_texts_visited_by_windows_are_the_records_texts() {
    let n = 2000;
    let steps_of = |i: usize| (i * 7) % 41;
    let n_steps: usize = (0..n).map(steps_of).sum();
    let text = |j: usize, every: usize, k: usize, what: &str| {
        (j % every != k).then(|| format!("{what} {j} é{}", "x".repeat(j % 13)))
    };
    let fields = [
        Series::new("turn".into(), (0..n_steps as i64).collect::<Vec<_>>()),
        Series::new(
            "action".into(),
            (0..n_steps)
                .map(|j| text(j, 6, 2, "call"))
                .collect::<Vec<_>>(),
        ),
        Series::new(
            "observation".into(),
            (0..n_steps)
                .map(|j| text(j, 9, 4, "saw"))
                .collect::<Vec<_>>(),
        ),
        Series::new("output_tokens".into(), vec![3i64; n_steps]),
    ];
    let st = StructChunked::from_series("steps".into(), n_steps, fields.iter())
        .unwrap()
        .into_series();
    let steps = lists(&st, n, steps_of, |i| i % 23 == 5);
    let mut df =
        df!("run" => vec!["a"; n], "task" => (0..n).map(|i| format!("t{i}")).collect::<Vec<_>>())
            .unwrap();
    df.with_column(steps.into_series().with_name("steps".into()).into_column())
        .unwrap();
    let raw = written_in_small_pages(&mut df, 700, 1024);
    let texts: &[&str] = &["action", "observation"];
    let keep = Keep {
        columns: &[],
        steps: texts,
    };
    let file = TrajectoryFile::keeping(raw.clone(), 50, keep).unwrap();
    assert!(file.meta.row_groups.len() >= 2);
    assert!(file.windows() > 30, "{} windows", file.windows());
    let dir = std::env::temp_dir().join(format!("rl-audit-step-texts-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("texts.parquet");
    std::fs::write(&path, &raw).unwrap();
    let mut rows: Vec<(u64, usize)> = (1..=n as u64).step_by(3).map(|r| (r, r as usize)).collect();
    rows.insert(5, (rows[5].0, 0));
    // Visited by windows of 50 values, with the observations or without.
    let visited = |rows: &[(u64, usize)], observations: bool| {
        let mut got = Vec::new();
        let mut visit = |k, steps: &[StepText]| {
            got.push((k, owned(steps)));
            true
        };
        let mut visit = Visit {
            observations,
            visit: &mut visit,
        };
        let keep = &texts[..1 + usize::from(observations)];
        let all = visit_step_fields("f", &path, rows, keep, 50, &mut visit, &mut || Ok(()));
        all.map(|all| (all, got))
    };
    let (all, got) = visited(&rows, true).unwrap();
    assert_eq!(all, Some(true));
    assert_eq!(got.len(), rows.len());
    let (_, actions) = visited(&rows, false).unwrap();
    let mut texts_seen = 0;
    for (((row, k), (k2, steps)), (k3, actions)) in rows.iter().zip(&got).zip(&actions) {
        assert_eq!((k, k), (k2, k3));
        let whole = read_row_in_file("f", &path, *row).unwrap();
        for (j, field) in texts.iter().enumerate() {
            let read: Vec<Option<String>> = steps.iter().map(|s| s[j].clone()).collect();
            assert_eq!(
                read,
                crate::schema::load::steps_field(&whole, field),
                "row {row}"
            );
        }
        let no_observations: Vec<Owned> = steps.iter().map(|[a, _]| [a.clone(), None]).collect();
        assert_eq!(actions, &no_observations, "row {row}");
        texts_seen += steps.iter().filter(|s| s[0].is_some()).count();
    }
    assert!(texts_seen > 5000, "{texts_seen}");
    // A row past the file's end is named.
    let err = visited(&[(2001, 0)], true).unwrap_err();
    assert_eq!(err.to_string(), "f: row 2001 is gone");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The steps field [`TrajectoryFile`] decodes, and which of the file's
/// step leaves: of a file of two rows (row groups of one) whose steps
/// have `fields` (step 0 of row 0 and step 0 of row 1).
fn decoded_steps(fields: &[Series]) -> (Vec<String>, Vec<bool>) {
    let st = StructChunked::from_series("steps".into(), 2, fields.iter())
        .unwrap()
        .into_series();
    let steps = lists(&st, 2, |_| 1, |_| false);
    let mut df = df!("run" => ["a", "a"], "task" => ["t", "u"]).unwrap();
    df.with_column(steps.into_series().with_name("steps".into()).into_column())
        .unwrap();
    let file = TrajectoryFile::new(written(&mut df, Some(1))).unwrap();
    assert_eq!(file.meta.row_groups.len(), 2);
    let (field, keep) = file.columns.iter().find(|c| c.0.name == "steps").unwrap();
    let (ArrowDataType::List(item) | ArrowDataType::LargeList(item)) = &field.dtype else {
        panic!("{field:?}")
    };
    let ArrowDataType::Struct(kept) = &item.dtype else {
        panic!("{item:?}")
    };
    let names = kept.iter().map(|f| f.name.to_string()).collect();
    let all = vec![true; fields.len()];
    (names, keep.clone().unwrap_or(all))
}

/// A step field with no value in any row group is not decoded when
/// it reads as absent (numbers, flags); of another type (texts where
/// `error` is a flag) it is, to be reported; one with a value in one
/// row group is; one field is always decoded (the lists come from it).
#[test]
fn step_fields_holding_no_value_are_not_decoded() {
    let none_i = || vec![None::<i64>; 2];
    let (names, keep) = decoded_steps(&[
        Series::new("turn".into(), [1i64, 1]),
        Series::new("budget_total".into(), none_i()),
        Series::new("reward".into(), vec![None::<f64>; 2]),
        Series::new("error".into(), vec![None::<&str>; 2]),
        Series::new("budget_remaining".into(), [None, Some(3i64)]),
        Series::new("output_tokens".into(), none_i()),
    ]);
    assert_eq!(names, ["turn", "error", "budget_remaining"]);
    assert_eq!(keep, [true, false, false, true, true, false]);
    let (names, keep) = decoded_steps(&[
        Series::new("action".into(), ["x", "y"]),
        Series::new("turn".into(), none_i()),
        Series::new("output_tokens".into(), none_i()),
    ]);
    assert_eq!(
        (names, keep),
        (vec!["turn".to_string()], vec![false, true, false])
    );
}

#[test]
fn windows_over_small_pages_decode_what_polars_reads() {
    let mut df = frame(700);
    let raw = written_in_small_pages(&mut df, 300, 1024);
    // The reference: polars' own reader, every row at once.
    let want = ParquetReader::new(std::io::Cursor::new(&raw[..]))
        .finish()
        .unwrap();
    assert_eq!(want.height(), 700);
    for window in [1, 50, 700, 5000, usize::MAX] {
        let file = TrajectoryFile::with_window(raw.clone(), window).unwrap();
        // Rows of up to 40 steps and 3 log-probabilities: 1 value a
        // window is a window a row.
        let windows = file.windows();
        match window {
            1 => assert_eq!(windows, 700),
            usize::MAX => assert_eq!(windows, file.meta.row_groups.len()),
            _ => assert!(windows > 3, "{window}: {windows} windows"),
        }
        let got = all_windows(&file);
        assert_eq!(got.get_column_names(), want.get_column_names());
        assert!(got.equals_missing(&want), "window {window}:\n{got}\n{want}");
    }
}

/// Every window of a file, one after another.
fn all_windows(file: &TrajectoryFile) -> DataFrame {
    let mut got = file.frame(0).unwrap();
    for w in 1..file.windows() {
        got.vstack_mut(&file.frame(w).unwrap()).unwrap();
    }
    got
}

/// `got` holds what `want` holds in the fields `got` has: list offsets
/// (from 0) and nulls, struct fields by name, values.
fn assert_same(got: &Series, want: &Series, path: &str) {
    assert_eq!(got.len(), want.len(), "{path}: length");
    let nulls = |s: &Series| s.is_null().iter().collect::<Vec<_>>();
    assert_eq!(nulls(got), nulls(want), "{path}: nulls");
    match (got.dtype(), want.dtype()) {
        (DataType::List(_), DataType::List(_)) => {
            let (g, w) = (
                got.list().unwrap().rechunk(),
                want.list().unwrap().rechunk(),
            );
            let from0 = |l: &ListChunked| {
                let o = l.offsets().unwrap();
                let first = o.first();
                o.iter().map(|x| x - first).collect::<Vec<i64>>()
            };
            assert_eq!(from0(&g), from0(&w), "{path}: list offsets");
            assert_same(&g.get_inner(), &w.get_inner(), &format!("{path}[]"));
        }
        (DataType::Struct(fields), DataType::Struct(_)) => {
            for f in fields {
                let field = |s: &Series| s.struct_().unwrap().field_by_name(&f.name).unwrap();
                assert_same(&field(got), &field(want), &format!("{path}.{}", f.name));
            }
        }
        _ => assert!(got.equals_missing(want), "{path}: values differ"),
    }
}

/// Each nested leaf of `raw` (every row group) decoded by
/// [`super::super::dense_leaf`] over several ranges of rows, wherever
/// it applies, equals polars' decoding of those rows: how many
/// (leaf, rows) it decoded, of how many.
fn dense_leaves_are_what_polars_decodes(raw: &[u8]) -> (usize, usize) {
    use polars_parquet::read::{column_iter_to_arrays, BasicDecompressor, Filter};
    let file = TrajectoryFile::whole(raw.to_vec()).unwrap();
    let (mut dense, mut all) = (0, 0);
    for (g, rg) in file.meta.row_groups.iter().enumerate() {
        let rows = rg.num_rows();
        for (_, leaf, m) in file.leaves(g).unwrap() {
            let (Some(leaf), Some(m)) = (leaf, m) else {
                continue;
            };
            let d = &m.descriptor().descriptor;
            if d.max_rep_level == 0 {
                continue;
            }
            let total = m.num_values() as usize;
            let reader = || TrajectoryFile::page_reader(m, file.chunk(m), total);
            for r in [0..rows, 0..1, rows / 3..rows / 2, rows - 1..rows, 1..1] {
                let filter = Some(Filter::new_ranged(r.start, r.end));
                let decompressor = BasicDecompressor::new(reader(), vec![]);
                let (want, _) = column_iter_to_arrays(
                    vec![decompressor],
                    vec![&d.primitive_type],
                    leaf.clone(),
                    filter,
                )
                .unwrap();
                let want = one_array(want).unwrap();
                all += 1;
                // Buffers left by a leaf before, of some size or none.
                super::super::dense_leaf::soil_scratch((all % 3) << 19);
                let Some(got) = super::super::dense_leaf::decode(reader(), d, &leaf, r.clone())
                else {
                    continue;
                };
                dense += 1;
                let got = got.unwrap();
                assert_eq!(got.dtype(), want.dtype(), "{}", leaf.name);
                assert!(got.as_ref() == want.as_ref(), "{}: rows {r:?}", leaf.name);
            }
        }
    }
    (dense, all)
}

/// Where no list is null or empty and no value null, every step leaf
/// is decoded straight from its pages (polars' writer: plain values,
/// small pages; pyarrow's: dictionary-encoded values, rows running
/// over pages) and holds what polars decodes; a window with a null
/// anywhere is left to polars (pyarrow's and polars' files with nulls).
#[test]
fn leaves_with_every_level_present_decode_as_polars_does() {
    let n = 400;
    let steps_of = |i: usize| 1 + i % 6;
    let n_steps: usize = (0..n).map(steps_of).sum();
    let logp_of = |j: usize| 1 + j % 3;
    let n_logp: usize = (0..n_steps).map(logp_of).sum();
    let lp = StructChunked::from_series(
        "logp".into(),
        n_logp,
        [
            Series::new(
                "run".into(),
                (0..n_logp)
                    .map(|q| super::super::dense_leaf::RUN_NAMES[[0, 1, 2, 3, 4, 0, 2, 3][q % 8]])
                    .collect::<Vec<_>>(),
            ),
            Series::new(
                "value".into(),
                (0..n_logp).map(|q| -(q as f64) / 7.0).collect::<Vec<_>>(),
            ),
        ]
        .iter(),
    )
    .unwrap()
    .into_series();
    let logp = lists(&lp, n_steps, logp_of, |_| false);
    let fields = [
        Series::new(
            "turn".into(),
            (0..n)
                .flat_map(|i| 1..=steps_of(i) as i64)
                .collect::<Vec<_>>(),
        ),
        Series::new(
            "output_tokens".into(),
            (0..n_steps).map(|j| (j % 17) as i32).collect::<Vec<_>>(),
        ),
        Series::new(
            "error".into(),
            (0..n_steps).map(|j| j % 5 == 0).collect::<Vec<_>>(),
        ),
        Series::new(
            "reward".into(),
            (0..n_steps).map(|j| j as f32 / 3.0).collect::<Vec<_>>(),
        ),
        logp.into_series().with_name("logp".into()),
    ];
    let st = StructChunked::from_series("steps".into(), n_steps, fields.iter())
        .unwrap()
        .into_series();
    let steps = lists(&st, n, steps_of, |_| false);
    let mut df = df!("run" => (0..n).map(|i| ["a", "b"][i % 2]).collect::<Vec<_>>()).unwrap();
    df.with_column(steps.into_series().with_name("steps".into()).into_column())
        .unwrap();
    let raw = written_in_small_pages(&mut df, 150, 512);
    // 6 leaves (turn, output_tokens, error, reward, logp.run,
    // logp.value) a row group, 5 ranges of rows each.
    let groups = TrajectoryFile::whole(raw.clone())
        .unwrap()
        .meta
        .row_groups
        .len();
    assert!(groups > 1);
    let all = 6 * groups * 5;
    assert_eq!(dense_leaves_are_what_polars_decodes(&raw), (all, all));
    for name in ["eval-small-pages.parquet", "eval-pyarrow.parquet"] {
        let (dense, all) = dense_leaves_are_what_polars_decodes(&pyarrow_file(name));
        assert_eq!(dense, all, "{name}");
        assert!(all >= 25, "{name}: {all}");
    }
    // pyarrow's small pages with a null step field here and there
    // (make.py): a page holds fewer values than levels, its dictionary
    // indices and booleans bit-packed with padding — only the levels
    // tell which windows to leave to polars.
    let nulls = pyarrow_file("eval-step-nulls.parquet");
    let (dense, all) = dense_leaves_are_what_polars_decodes(&nulls);
    assert!(0 < dense && dense < all && all >= 25, "{dense} of {all}");
    // Nulls and empty lists in most windows: polars decodes those.
    let raw = written(&mut frame(300), None);
    let (dense, all) = dense_leaves_are_what_polars_decodes(&raw);
    assert!(dense < all && all == 25, "{dense} of {all}");
}

/// `df` as polars writes it with row groups of `rows` and data pages
/// of about `page` bytes.
/// Windows over pages of more than [`DENSE_VALUES`] values decoded
/// straight (counted by `window_of_leaf`).
pub(super) static LARGE_PAGES_STRAIGHT: std::sync::atomic::AtomicUsize =
    std::sync::atomic::AtomicUsize::new(0);

/// A row group's flags in one page (a bit each: 540,000 of them) are
/// decoded straight window by window, as polars reads them; a page of
/// as many integers is left to polars.
#[test]
fn a_page_of_a_row_groups_flags_decodes_straight_in_windows() {
    let (n, per) = (60_000, 9);
    let turn: Vec<i64> = (0..n).flat_map(|_| 1..=per as i64).collect();
    let error: Vec<bool> = (0..n * per).map(|j| j % 7 == 0 || j % 11 == 3).collect();
    let fields = [
        Series::new("turn".into(), turn),
        Series::new("error".into(), error),
    ];
    let st = StructChunked::from_series("steps".into(), n * per, fields.iter())
        .unwrap()
        .into_series();
    let steps = lists(&st, n, |_| per, |_| false);
    let mut df = df!("task" => (0..n).map(|i| format!("t{}", i % 97)).collect::<Vec<_>>()).unwrap();
    df.with_column(steps.into_series().with_name("steps".into()).into_column())
        .unwrap();
    let raw = written_in_small_pages(&mut df, n, 1 << 30);
    let want = ParquetReader::new(std::io::Cursor::new(&raw[..]))
        .finish()
        .unwrap();
    let file = TrajectoryFile::new(raw).unwrap();
    assert_eq!(file.meta.row_groups.len(), 1);
    assert!(file.windows() > 3, "{}", file.windows());
    let before = LARGE_PAGES_STRAIGHT.load(std::sync::atomic::Ordering::Relaxed);
    let got = all_windows(&file);
    assert!(got.equals_missing(&want), "{got}\n{want}");
    let straight = LARGE_PAGES_STRAIGHT.load(std::sync::atomic::Ordering::Relaxed) - before;
    // The flags' windows (each decodes up to four windows' rows, the
    // next three read from those), not the turns'.
    assert!((1..file.windows()).contains(&straight), "{straight}");
}

/// `df` as a Parquet file's bytes (polars' writer; `rows` a row group).
fn written(df: &mut DataFrame, rows: Option<usize>) -> Vec<u8> {
    let mut raw = Vec::new();
    ParquetWriter::new(&mut raw)
        .with_row_group_size(rows)
        .finish(df)
        .unwrap();
    raw
}

fn written_in_small_pages(df: &mut DataFrame, rows: usize, page: usize) -> Vec<u8> {
    let mut raw = Vec::new();
    ParquetWriter::new(&mut raw)
        .with_row_group_size(Some(rows))
        .with_data_page_size(Some(page))
        .finish(df)
        .unwrap();
    raw
}

/// A page header whose value count is damaged into a negative number
/// (tests/bad_input.rs has the same two files through the command) is
/// an error where row groups are read in windows too: the page walk
/// that indexes them checks each count.
#[test]
fn a_negative_page_count_is_an_error_in_windows_too() {
    for (file, at, was, now, values, left) in [
        ("eval-step-nulls.parquet", 2342, 0x0c, 0x15, -11, 6),
        ("eval-page-index.parquet", 1885, 0xac, 0x85, -131, 150),
    ] {
        let mut raw = pyarrow_file(file);
        assert_eq!(raw[at], was, "{file}");
        raw[at] = now;
        let windowed = TrajectoryFile::with_window(raw.clone(), 50);
        let err = windowed.err().map(|e| e.to_string()).unwrap_or_default();
        let want = format!("a data page's header counts {values} values, its column chunk has {left} left (a damaged page header)");
        assert!(err.contains(&want), "{file}: {err}");
        // Whole, the file opens; its windows' decode refuses the page.
        let whole = TrajectoryFile::new(raw).unwrap();
        let err = (0..whole.windows()).find_map(|w| whole.frame(w).err());
        assert!(err.is_some_and(|e| e.to_string().contains(&want)), "{file}");
    }
}

/// A pyarrow-written file of `tests/data/pyarrow` (make.py there), read
/// whole.
fn pyarrow_file(name: &str) -> Vec<u8> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/pyarrow/");
    std::fs::read(format!("{dir}{name}")).unwrap()
}

/// Files of trajectories read only where their kept leaves are (the
/// step texts left unread: zeros where the file has them) decode as
/// the whole file does, window by window; pyarrow's files of every
/// layout here (page index or none, one row group or three, large
/// types, pandas categoricals), read with no size below which to read
/// whole.
#[cfg(unix)]
#[test]
fn files_read_only_where_kept_decode_as_read_whole() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/pyarrow/");
    for name in [
        "eval-pyarrow.parquet",
        "eval-small-pages.parquet",
        "eval-page-index.parquet",
        "eval-large-types.parquet",
        "eval-pandas-categorical.parquet",
        "eval-step-nulls.parquet",
    ] {
        let path = std::path::PathBuf::from(format!("{dir}{name}"));
        let whole = std::fs::read(&path).unwrap();
        let kept = super::read_kept(&path, 0, LOAD).unwrap().expect(name);
        assert_eq!(kept.len(), whole.len(), "{name}");
        // The action and observation column chunks were not read.
        let meta =
            polars_parquet::read::read_metadata(&mut std::io::Cursor::new(&whole[..])).unwrap();
        let mut texts = 0;
        for rg in &meta.row_groups {
            for m in rg.parquet_columns() {
                let path = m.descriptor().path_in_schema.join(".");
                if path.contains("action") || path.contains("observation") {
                    let r = m.byte_range();
                    let r = r.start as usize..r.end as usize;
                    assert!(whole[r.clone()].iter().any(|&b| b != 0), "{name}: {path}");
                    assert!(kept[r].iter().all(|&b| b == 0), "{name}: {path} was read");
                    texts += 1;
                }
            }
        }
        assert!(texts >= 2, "{name}: {texts} text chunks");
        for window in [150, usize::MAX] {
            let got = TrajectoryFile::with_window(kept.clone(), window).unwrap();
            let want = TrajectoryFile::with_window(whole.clone(), window).unwrap();
            assert_eq!(got.windows(), want.windows());
            for w in 0..got.windows() {
                let (g, h) = (got.frame(w).unwrap(), want.frame(w).unwrap());
                assert!(g.equals_missing(&h), "{name}, window {window}: {w}");
            }
        }
    }
    // A file with a `kind` column may hold rows of other kinds: whole.
    let mixed = std::env::temp_dir().join(format!("rl-audit-kind-{}.parquet", std::process::id()));
    let mut df = df!("kind" => ["trajectory"], "run" => ["a"]).unwrap();
    ParquetWriter::new(std::fs::File::create(&mixed).unwrap())
        .finish(&mut df)
        .unwrap();
    assert!(super::read_kept(&mixed, 0, LOAD).unwrap().is_none());
    std::fs::remove_file(&mixed).unwrap();
}

/// A row re-read from its row group alone (the others' bytes zeros,
/// unread) is the row read from the whole file: every row of files in
/// three row groups, with and without a page index; past the last row,
/// the file is read whole (and the row is gone).
#[cfg(unix)]
#[test]
fn a_row_read_from_its_row_group_is_the_row_of_the_whole_file() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/pyarrow/");
    for name in ["eval-small-pages.parquet", "eval-page-index.parquet"] {
        let path = std::path::PathBuf::from(format!("{dir}{name}"));
        let whole = std::fs::read(&path).unwrap();
        let mut groups = std::collections::BTreeSet::new();
        for row in 1..=384u64 {
            let (raw, g) = super::read_row_group(&path, row, 0).unwrap().expect(name);
            groups.insert(g);
            let got = super::row_of(name, &raw, row, Some(g)).unwrap();
            let want = super::read_row(name, &whole, row).unwrap();
            assert_eq!(got, want, "{name}: row {row}");
            if row == 1 {
                // Of three row groups, two were not read.
                let unread = raw.iter().zip(&whole).filter(|(a, b)| a != b).count();
                assert!(unread > whole.len() / 3, "{name}: {unread} bytes unread");
            }
        }
        assert_eq!(groups.len(), 3, "{name}");
        assert!(super::read_row_group(&path, 385, 0).unwrap().is_none());
    }
}

/// pandas' categoricals (pyarrow's dictionary columns) over several
/// pages of a window: polars-arrow cannot concatenate them (the load
/// of a 57,600-row file stopped with an internal error); the window
/// holds their strings, those polars reads.
#[test]
fn categoricals_over_several_pages_read_as_their_strings() {
    let raw = pyarrow_file("eval-pandas-categorical.parquet");
    let want = ParquetReader::new(std::io::Cursor::new(&raw[..]))
        .finish()
        .unwrap();
    let file = TrajectoryFile::with_window(raw, 150).unwrap();
    assert!(file.windows() > 1);
    let strings = |s: &Series| -> Vec<Option<String>> {
        let s = s.cast(&DataType::String).unwrap();
        s.str()
            .unwrap()
            .iter()
            .map(|x| x.map(str::to_string))
            .collect()
    };
    let mut row = 0;
    for w in 0..file.windows() {
        let got = file.frame(w).unwrap();
        for name in ["run", "method", "benchmark", "task"] {
            let g = got.column(name).unwrap().as_materialized_series();
            let h = want.column(name).unwrap().as_materialized_series();
            let h = h.slice(row as i64, got.height());
            assert_eq!(strings(g), strings(&h), "{name}, window {w}");
        }
        row += got.height();
    }
    assert_eq!(row, want.height());
}

/// Windows of 1 row to a whole row group, cut at every alignment with
/// the pages of `raw` (384 rows in 3 row groups), hold what polars'
/// reader reads of the kept columns; the steps' texts are not decoded.
fn windows_hold_what_polars_reads(raw: &[u8]) {
    let want = ParquetReader::new(std::io::Cursor::new(raw))
        .finish()
        .unwrap();
    for window in [1, 150, 300, 450, 700, 1100, 2000, 5000, usize::MAX] {
        let file = TrajectoryFile::with_window(raw.to_vec(), window).unwrap();
        match window {
            1 => assert_eq!(file.windows(), 384),
            usize::MAX => assert_eq!(file.windows(), 3),
            _ => {}
        }
        let got = all_windows(&file);
        assert_eq!(got.height(), 384);
        for c in got.columns() {
            let name = c.name().as_str();
            let want = want.column(name).unwrap().as_materialized_series();
            assert_same(c.as_materialized_series(), want, name);
        }
        let steps = got.column("steps").unwrap().as_materialized_series();
        let DataType::List(item) = steps.dtype() else {
            panic!("{}", steps.dtype())
        };
        let DataType::Struct(fields) = item.as_ref() else {
            panic!("{item}")
        };
        let mut names: Vec<&str> = fields.iter().map(|f| f.name.as_str()).collect();
        names.sort();
        assert_eq!(
            names,
            ["error", "logp", "output_tokens", "turn"],
            "window {window}"
        );
    }
}

/// A file pyarrow 14 wrote with small V1 data pages, whose rows' steps
/// run over from one page into the next, in three row groups
/// (tests/data/pyarrow/make.py), without an offset index: the rows
/// each page begins are counted from its repetition levels.
#[test]
fn windows_cut_rows_that_run_over_pages_as_pyarrow_writes_them() {
    let raw = pyarrow_file("eval-small-pages.parquet");
    let file = TrajectoryFile::with_window(raw.clone(), 1).unwrap();
    // Pages that begin inside a row: the case a window must start
    // before, at the page that begins the row.
    let inside: usize = file
        .pages
        .iter()
        .flatten()
        .flatten()
        .map(|p| p.lock().unwrap().pages.iter().filter(|s| !s.starts).count())
        .sum();
    assert!(inside > 0, "{inside} pages begin inside a row");
    assert!(file.meta.row_groups.len() >= 2);
    windows_hold_what_polars_reads(&raw);
}

/// A file with the Parquet page index (pyarrow 26 asked for it, small
/// pages; make.py): each nested page's rows are read from the offset
/// index — the rows its repetition levels count, taken from the index
/// (an index with every first row doubled doubles them all) — and the
/// windows hold what polars reads.
#[test]
fn pages_rows_come_from_the_offset_index() {
    use polars_parquet_format::PageLocation;
    let raw = pyarrow_file("eval-page-index.parquet");
    let file = TrajectoryFile::whole(raw.clone()).unwrap();
    let spans = |p: LeafPages| -> Vec<(usize, usize, bool)> {
        p.pages
            .iter()
            .map(|s| (s.values, s.row, s.starts))
            .collect()
    };
    let (mut nested, mut pages) = (0, 0);
    for (g, rg) in file.meta.row_groups.iter().enumerate() {
        let rows = rg.num_rows();
        for (_, _, m) in file.leaves(g).unwrap() {
            let m = m.unwrap();
            if m.descriptor().descriptor.max_rep_level == 0 {
                continue;
            }
            nested += 1;
            let located = file.page_locations(m).unwrap();
            let by_levels = spans(file.index_pages(m, rows, &[]).unwrap());
            pages += by_levels.len();
            let by_index = spans(file.index_pages(m, rows, &located).unwrap());
            assert_eq!(by_index, by_levels);
            let firsts: Vec<usize> = located.iter().map(|l| l.first_row_index as usize).collect();
            let rows_of = |v: &[(usize, usize, bool)]| v.iter().map(|s| s.1).collect::<Vec<_>>();
            assert_eq!(rows_of(&by_index), firsts);
            let doubled: Vec<PageLocation> = located
                .iter()
                .map(|l| PageLocation::new(l.offset, l.compressed_page_size, 2 * l.first_row_index))
                .collect();
            let by_doubled = spans(file.index_pages(m, 2 * rows, &doubled).unwrap());
            let twice: Vec<usize> = firsts.iter().map(|r| 2 * r).collect();
            assert_eq!(rows_of(&by_doubled), twice);
        }
    }
    // turn, output_tokens, logp.run, logp.value, error; 3 row groups.
    assert_eq!(nested, 15);
    assert!(pages > 3 * nested, "{pages} pages");
    windows_hold_what_polars_reads(&raw);
}
