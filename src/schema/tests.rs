use super::*;

/// Steps that count their budget down from the step before keep no
/// entry of their own, and every step reads back the fields it was
/// written with: runs broken by a repeated remaining, a step without
/// fields, a missing total, a new total; a trajectory's first step
/// never goes on from the trajectory before.
#[test]
fn budgets_counted_down_are_one_entry_and_read_back_as_written() {
    let one = |t: Option<i64>, r: Option<i64>| (t, r);
    let first = [
        one(Some(10), Some(10)),
        one(Some(10), Some(9)),
        one(Some(10), Some(8)),
        one(Some(10), Some(8)),
        one(Some(10), Some(7)),
        one(None, None),
        one(Some(10), Some(5)),
        one(None, Some(4)),
        one(Some(10), Some(3)),
        one(Some(9), Some(2)),
        one(Some(9), Some(1)),
    ];
    // Would go on from the first trajectory's last step.
    let second = [one(Some(9), Some(0)), one(Some(9), Some(-1))];
    let line = |steps: &[(Option<i64>, Option<i64>)], task: &str| {
        let steps: Vec<serde_json::Value> = steps
            .iter()
            .map(|&(t, r)| {
                let mut s = serde_json::json!({"action": "a"});
                if let Some(t) = t {
                    s["budget_total"] = t.into();
                }
                if let Some(r) = r {
                    s["budget_remaining"] = r.into();
                }
                s
            })
            .collect();
        serde_json::json!({"run": "r", "benchmark": "b", "task": task, "budget": 20,
            "success": false, "steps": steps, "train_step": 1})
        .to_string()
    };
    let text = format!("{}\n{}\n", line(&first, "t1"), line(&second, "t2"));
    let set = load::load_bytes("a.jsonl", text.into_bytes(), &Default::default()).unwrap();
    // Entries: steps 1, 4, 7, 8, 9 and 10 of the first; the second's first.
    assert_eq!(set.step_budgets.len(), 7);
    for (t, want) in set.trajectories.iter().zip([&first[..], &second[..]]) {
        let got: Vec<_> = set.steps_of(t).iter().map(|s| s.budget()).collect();
        assert_eq!(got, want);
    }
}

/// The two names interned last are compared before the table is
/// looked up: names alternating, repeating, coming back after others
/// and new ones each get the one id of their name, numbered in order
/// of first appearance, each stored once.
#[test]
fn interning_gives_each_name_one_id_whatever_came_just_before() {
    let mut i = Interner::default();
    let names = ["a", "b", "a", "b", "b", "c", "a", "d", "c", "", "a", ""];
    let ids: Vec<Id> = names.iter().map(|n| i.intern(n)).collect();
    assert_eq!(ids, [0, 1, 0, 1, 1, 2, 0, 3, 2, 4, 0, 4]);
    assert_eq!(i.len(), 5);
    for (n, id) in names.iter().zip(&ids) {
        assert_eq!(i.name(*id), *n);
        assert_eq!(i.get(n), Some(*id));
    }
    // An empty table: the remembered ids name nothing yet.
    let mut e = Interner::default();
    assert_eq!(e.intern("x"), 0);
    assert_eq!(e.intern("y"), 1);
}

/// Reads forward (read ahead), with gaps shorter and longer than what
/// is read ahead, backward, longer than it, to the file's end, and
/// from two files by turns through one window: each gives the entries
/// written, and a read ahead serves the reads it holds.
#[cfg(unix)]
#[test]
fn spilled_entries_read_back_in_any_order_are_the_entries_written() {
    let n = 50_000;
    let runs: Vec<Id> = (0..n).map(|i| (i % 7) as Id).collect();
    let values: Vec<f64> = (0..n).map(|i| -(i as f64) * 0.001 - 0.5).collect();
    let (a, b) = (
        LogpSpill::write(&runs, &values).expect("a temporary file"),
        LogpSpill::write(&values.iter().map(|_| 3).collect::<Vec<_>>(), &values)
            .expect("a temporary file"),
    );
    let mut w = LogpWindow::default();
    let mut check = |spill: &LogpSpill, start: usize, len: usize| {
        spill.read(start, len, &mut w).unwrap();
        let want: Vec<Id> = if std::ptr::eq(spill, &a) {
            runs[start..start + len].to_vec()
        } else {
            vec![3; len]
        };
        assert_eq!(w.runs, want, "{start}+{len}");
        assert_eq!(w.values, values[start..start + len], "{start}+{len}");
        (w.at, w.bytes.len() / LogpSpill::ENTRY)
    };
    // Forward: the first read reads what it needs, the next reads ahead
    // and the ones after it are served from there.
    assert_eq!(check(&a, 0, 10).0, 0);
    assert_eq!(check(&a, 10, 5).0, 10);
    assert_eq!(check(&a, 15, 8).0, 10);
    assert_eq!(check(&a, 40, 12).0, 10);
    // A gap shorter than a read ahead, past what is held: read ahead
    // again; one longer: a read of what it needs.
    assert_eq!(check(&a, 20_000, 9).0, 20_000);
    assert_eq!(check(&a, 45_000, 6), (45_000, 6));
    // Backward, then forward again, longer than a read ahead.
    assert_eq!(check(&a, 300, 4).0, 300);
    assert_eq!(check(&a, 310, 20_000).0, 310);
    // Reads ahead of 16 K entries, the last cut at the file's end and
    // serving a read at its end.
    assert_eq!(check(&a, 30_000, 5), (30_000, 16 << 10));
    assert_eq!(check(&a, 46_380, 5), (46_380, 3_620));
    assert_eq!(check(&a, 49_997, 3).0, 46_380);
    // Another file through the same window: never served from the
    // first one's bytes.
    assert_eq!(check(&b, 49_997, 3).0, 49_997);
    assert_eq!(check(&a, 49_997, 3).0, 49_997);
    assert_eq!(check(&b, 100, 3).0, 100);
    assert!(a.read(49_999, 2, &mut w).is_err());
}

#[test]
fn a_step_stays_small_and_keeps_its_optional_fields() {
    // Steps are most of a log set's memory (issue 20: a few bytes each).
    assert_eq!(std::mem::size_of::<Step>(), 3);
    assert_eq!(std::mem::size_of::<StepBudget>(), 12);
    assert!(std::mem::size_of::<Trajectory>() <= 96);
    assert_eq!(std::mem::size_of::<Loc>(), 8);
    // A location keeps its file and line, flag included, and orders by
    // file, then line.
    let far = Loc::new(Loc::ORIGIN | (Loc::MAX_FILES - 1), Loc::MAX_LINE);
    assert_eq!((far.file(), far.line()), ((1 << 28) - 1, (1 << 36) - 1));
    let mut locs = [(3, 1), (0, Loc::MAX_LINE), (3, 0), (1, 7), (0, 2)];
    let mut packed: Vec<Loc> = locs.iter().map(|&(f, l)| Loc::new(f, l)).collect();
    locs.sort();
    packed.sort();
    let back: Vec<(u32, u64)> = packed.iter().map(|l| (l.file(), l.line())).collect();
    assert_eq!(back, locs);
    let (full, extra) = Step::new(Some(0), Some(true), true, true, 2);
    assert!(extra);
    assert_eq!(full.error(), Some(true));
    assert_eq!(full.logps(), 2);
    assert_eq!(full.tokens(), 0);
    assert_eq!(full.bits & !Step::ERROR, Step::BUDGET | Step::TURN | 2 << 4);
    let (bare, extra) = Step::new(None, None, false, false, 0);
    assert!(!extra);
    assert_eq!(bare.error(), None);
    assert_eq!(bare.tokens(), Step::NO_TOKENS);
    assert_eq!(bare.bits, 0);
    // The largest counts held in the step itself, and the first that are not.
    let (s, extra) = Step::new(Some(0xFFFD), Some(false), false, false, 14);
    assert!(!extra);
    assert_eq!(
        (s.tokens(), s.logps(), s.error()),
        (0xFFFD, 14, Some(false))
    );
    let (mut s, extra) = Step::new(Some(0xFFFE), None, false, false, 15);
    assert!(extra);
    assert_eq!(
        (s.tokens(), s.logps()),
        (Step::BIG_TOKENS, Step::MANY_LOGPS)
    );
    s.drop_logps();
    assert_eq!(
        (s.tokens(), s.logps(), s.error()),
        (Step::BIG_TOKENS, 0, None)
    );
    let b = StepBudget::new(7, Some(5), Some(-1)).unwrap();
    assert_eq!((b.step, b.total(), b.remaining()), (7, Some(5), Some(-1)));
    let half = StepBudget::new(8, None, Some(0)).unwrap();
    assert_eq!((half.total(), half.remaining()), (None, Some(0)));
    assert_eq!(StepBudget::new(9, None, None), None);
}
