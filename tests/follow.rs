//! `--follow` reads on from where the last load stopped: after appends the
//! set equals a fresh full load of the same files (records, line numbers,
//! the whole report); anything but an append asks for a full reload.

mod common;
use common::*;

use std::io::Write;
use std::path::{Path, PathBuf};

use rl_audit::analysis::{run_audit, Settings};
use rl_audit::schema::follow::{load_more, More};
use rl_audit::schema::load::{load_tracked, Tracked};
use rl_audit::schema::{LoadOptions, LogSet};

fn opts() -> LoadOptions {
    LoadOptions {
        follow: true,
        ..Default::default()
    }
}

fn settings() -> Settings {
    Settings {
        boot: rl_audit::analysis::stats::Bootstrap {
            resamples: 200,
            ..Default::default()
        },
        ..Default::default()
    }
}

/// A record line for task `t`, sample `i` of run `run`.
fn line(run: &str, t: usize, i: usize) -> String {
    let mut v = traj(
        run,
        "b",
        &format!("t{t}"),
        8,
        8,
        (!i.is_multiple_of(3)).then_some(1 + (t + i) as u32 % 8),
    );
    v["sample"] = i.into();
    v["method"] = if run == "base" { "base" } else { "grpo" }.into();
    format!("{v}\n")
}

fn append(path: &Path, text: &str) {
    let mut f = std::fs::OpenOptions::new().append(true).open(path).unwrap();
    f.write_all(text.as_bytes()).unwrap();
    f.flush().unwrap();
    // The follow check compares size and modification time.
    std::thread::sleep(std::time::Duration::from_millis(20));
}

fn report(set: &LogSet) -> serde_json::Value {
    let mut r = rl_audit::report::json::report(set, &run_audit(set, &settings()).unwrap());
    r.as_object_mut().unwrap().remove("inputs");
    r
}

/// Reads on; the result must equal a fresh full load of the same files.
fn grown_equals_full(dir: &Path, prev: &LogSet, tracked: &Tracked) -> (LogSet, Tracked) {
    let paths = vec![PathBuf::from(dir)];
    let (set, t, fresh) = match load_more(prev, tracked, &paths, &opts()).unwrap() {
        More::Grown(set, t, fresh) => (*set, t, fresh),
        More::Unchanged => panic!("the append was not seen"),
        More::Reload => panic!("an append asked for a full reload"),
    };
    let (full, _) = load_tracked(&paths, &opts()).unwrap();
    assert_eq!(set.trajectories.len(), full.trajectories.len());
    let locs = |s: &LogSet| {
        s.trajectories
            .iter()
            .map(|t| (t.loc, t.success_turn()))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        locs(&set),
        locs(&full),
        "records or their line numbers differ"
    );
    assert_eq!(report(&set), report(&full));
    // The appended records named: those of the full load that the previous
    // set did not have, in file order.
    let had: std::collections::HashSet<_> = prev.trajectories.iter().map(|t| t.loc).collect();
    let mut new: Vec<_> = full
        .trajectories
        .iter()
        .map(|t| t.loc)
        .filter(|l| !had.contains(l))
        .collect();
    new.sort();
    assert!(!new.is_empty());
    assert_eq!(fresh, new);
    (set, t)
}

#[test]
fn appended_records_are_read_on_and_equal_a_full_load() {
    let d = temp_dir("follow_append");
    let eval = d.join("eval.jsonl");
    let other = d.join("z-more.jsonl");
    let first: String = (0..6)
        .flat_map(|t| (0..4).flat_map(move |i| [line("base", t, i), line("rl", t, i)]))
        .collect();
    std::fs::write(&eval, &first).unwrap();
    std::fs::write(&other, line("rl", 9, 0)).unwrap();
    let paths = vec![d.clone()];
    let (set, tracked) = load_tracked(&paths, &opts()).unwrap();
    assert_eq!(set.trajectories.len(), 49);
    // Nothing changed.
    assert!(matches!(
        load_more(&set, &tracked, &paths, &opts()).unwrap(),
        More::Unchanged
    ));
    // Whole lines, then a half-written one the writer has not finished.
    let more: String = (0..6)
        .flat_map(|t| [line("base", t, 4), line("rl", t, 4)])
        .collect();
    let half = line("base", 0, 5);
    append(&eval, &format!("{more}{}", &half[..half.len() / 2]));
    let (set, tracked) = grown_equals_full(&d, &set, &tracked);
    assert_eq!(set.trajectories.len(), 61);
    // The writer finishes the line and adds more, to both files.
    // With a new task in the first file, after the second file introduced
    // t9: names arrive in another order than in a full load.
    append(
        &eval,
        &format!(
            "{}{}{}{}",
            &half[half.len() / 2..],
            line("rl", 0, 5),
            line("base", 7, 0),
            line("rl", 7, 0)
        ),
    );
    append(&other, &line("rl", 9, 1));
    let (set, tracked) = grown_equals_full(&d, &set, &tracked);
    assert_eq!(set.trajectories.len(), 66);
    // A last line complete but without its newline, finished later.
    let last = line("base", 1, 5);
    append(&eval, last.trim_end());
    let (set, tracked) = grown_equals_full(&d, &set, &tracked);
    assert_eq!(set.trajectories.len(), 67);
    append(&eval, &format!("\n{}", line("rl", 1, 5)));
    let (set, tracked) = grown_equals_full(&d, &set, &tracked);
    assert_eq!(set.trajectories.len(), 68);
    // A bad record appended: the error names its real line.
    let n_lines = std::fs::read_to_string(&eval).unwrap().lines().count();
    append(&eval, "{\"run\": \"base\", \"benchmark\": \"b\"}\n");
    let e = match load_more(&set, &tracked, &paths, &opts()) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("a bad appended record was accepted"),
    };
    assert!(e.contains(&format!("eval.jsonl:{}:", n_lines + 1)), "{e}");
}

#[test]
fn anything_but_an_append_asks_for_a_full_reload() {
    let d = temp_dir("follow_reload");
    let eval = d.join("eval.jsonl");
    let text: String = (0..4)
        .flat_map(|t| [line("base", t, 0), line("rl", t, 0)])
        .collect();
    std::fs::write(&eval, &text).unwrap();
    let paths = vec![d.clone()];
    let (set, tracked) = load_tracked(&paths, &opts()).unwrap();
    // Rewritten in place with more bytes (the old end no longer matches).
    std::thread::sleep(std::time::Duration::from_millis(20));
    let rewritten: String = (0..5)
        .flat_map(|t| [line("rl", t, 1), line("base", t, 1)])
        .collect();
    std::fs::write(&eval, &rewritten).unwrap();
    assert!(matches!(
        load_more(&set, &tracked, &paths, &opts()).unwrap(),
        More::Reload
    ));
    // Truncated.
    let (set, tracked) = load_tracked(&paths, &opts()).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    std::fs::write(&eval, line("base", 0, 0) + &line("rl", 0, 0)).unwrap();
    assert!(matches!(
        load_more(&set, &tracked, &paths, &opts()).unwrap(),
        More::Reload
    ));
    // A new file.
    let (set, tracked) = load_tracked(&paths, &opts()).unwrap();
    std::fs::write(d.join("new.jsonl"), line("rl", 7, 0)).unwrap();
    assert!(matches!(
        load_more(&set, &tracked, &paths, &opts()).unwrap(),
        More::Reload
    ));
    // A compressed file that changed.
    let gz = d.join("new.jsonl");
    std::fs::remove_file(&gz).unwrap();
    let zpath = d.join("c.jsonl.gz");
    let write_gz = |text: &str| {
        let mut enc = flate2::write::GzEncoder::new(
            std::fs::File::create(&zpath).unwrap(),
            flate2::Compression::fast(),
        );
        enc.write_all(text.as_bytes()).unwrap();
        enc.finish().unwrap();
    };
    write_gz(&line("rl", 8, 0));
    let (set, tracked) = load_tracked(&paths, &opts()).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    write_gz(&(line("rl", 8, 0) + &line("rl", 8, 1)));
    assert!(matches!(
        load_more(&set, &tracked, &paths, &opts()).unwrap(),
        More::Reload
    ));
}

#[test]
fn reading_in_small_windows_gives_the_same_set() {
    // JSON Lines files are read in windows of whole lines; 700-byte windows
    // cross a window end every few records (and grow for a longer line).
    let d = temp_dir("follow_windows");
    let eval = d.join("eval.jsonl");
    let mut text: String = (0..8)
        .flat_map(|t| (0..4).flat_map(move |i| [line("base", t, i), line("rl", t, i)]))
        .collect();
    let mut long = serde_json::from_str::<serde_json::Value>(&line("rl", 9, 0)).unwrap();
    long["note"] = "x".repeat(3000).into();
    text.push_str(&format!("{long}\n"));
    let half = line("base", 9, 1);
    text.push_str(&half[..half.len() / 2]);
    std::fs::write(&eval, &text).unwrap();
    let paths = vec![d.clone()];
    let small = LoadOptions {
        window: Some(700),
        ..opts()
    };
    let (a, ta) = load_tracked(&paths, &opts()).unwrap();
    let (b, tb) = load_tracked(&paths, &small).unwrap();
    let locs = |s: &LogSet| {
        s.trajectories
            .iter()
            .map(|t| (t.loc, t.task))
            .collect::<Vec<_>>()
    };
    assert_eq!(a.trajectories.len(), 65);
    assert_eq!(locs(&a), locs(&b));
    assert_eq!(report(&a), report(&b));
    assert_eq!(
        format!("{ta:?}"),
        format!("{tb:?}"),
        "where --follow goes on"
    );
    // And reading on from the small-window load still equals a full load.
    append(
        &eval,
        &format!("{}{}", &half[half.len() / 2..], line("rl", 9, 1)),
    );
    grown_equals_full(&d, &b, &tb);
}

/// A folder `name` with `tasks` tasks × 4 samples of two runs in
/// `eval.jsonl`, and the workbench's background jobs following it.
fn followed(name: &str, tasks: usize) -> (PathBuf, rl_audit::jobs::Jobs) {
    let d = temp_dir(name);
    let eval = d.join("eval.jsonl");
    let first: String = (0..tasks)
        .flat_map(|t| (0..4).flat_map(move |i| [line("base", t, i), line("rl", t, i)]))
        .collect();
    std::fs::write(&eval, &first).unwrap();
    let jobs = rl_audit::jobs::Jobs::start(rl_audit::loading::Source {
        paths: vec![d],
        follow: true,
        ..Default::default()
    })
    .expect("worker");
    (eval, jobs)
}

/// The workbench's background jobs with `--follow`: a read-on hands the
/// appended records to the screen before their set's audit, in the same
/// generation; it cancels no audit under way, and each set read gets its
/// audit, in the order read.
#[test]
fn read_on_shows_appended_records_before_their_audit_and_cancels_none() {
    use rl_audit::jobs::{Outcome, Request};
    use rl_audit::schema::Loc;
    let (eval, jobs) = followed("follow_jobs", 6);
    let g = jobs.request(Request::Load(settings()));
    let next = || {
        let r = jobs
            .results
            .recv_timeout(std::time::Duration::from_secs(300))
            .expect("a result");
        assert_eq!(
            r.generation, g,
            "a read-on is in the generation of the load"
        );
        r
    };
    // The first load: partial audits, then the whole one, of set 1.
    loop {
        let r = next();
        assert_eq!(r.read, 1);
        match r.outcome {
            Outcome::Partial(_) => {}
            Outcome::Done(l) => {
                assert_eq!(l.set.trajectories.len(), 48);
                break;
            }
            _ => panic!("the first load is audited"),
        }
    }
    // Nothing appended: nothing new.
    jobs.read_on();
    assert!(matches!(next().outcome, Outcome::Unchanged));
    // A read-on cancels nothing under way (a request does).
    let running = rl_audit::cancel::Cancel::begin();
    jobs.read_on();
    assert!(matches!(next().outcome, Outcome::Unchanged));
    assert!(!running.is_cancelled());
    // Two appends, each read on at once (the second while the first's audit
    // may still run): the records come before their audit.
    let mut lines = 48u64;
    let mut done = Vec::new();
    for (read, t) in [(2u64, 6usize), (3, 7)] {
        append(&eval, &(line("base", t, 0) + &line("rl", t, 0)));
        while !jobs.may_read_on() {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        jobs.read_on();
        let f = loop {
            let r = next();
            match r.outcome {
                Outcome::Read(f) => {
                    assert_eq!(r.read, read);
                    break f;
                }
                Outcome::Done(l) => done.push((r.read, l.set.trajectories.len() as u64)),
                _ => panic!("set {read}: only records and audits come"),
            }
        };
        assert_eq!(
            f.records,
            vec![Loc::new(0, lines + 1), Loc::new(0, lines + 2)]
        );
        lines += 2;
        // The records alone, as written, before they are merged.
        let seen: Vec<_> = f
            .set
            .trajectories
            .iter()
            .map(|x| (x.loc, f.set.name(x.run), f.set.name(x.task), x.sample()))
            .collect();
        let task = format!("t{t}");
        assert_eq!(
            seen,
            vec![
                (f.records[0], "base", task.as_str(), Some(0)),
                (f.records[1], "rl", task.as_str(), Some(0))
            ]
        );
    }
    // The newest set is audited whole; an earlier one is too unless a newer
    // one came before the auditor was free — in the order read.
    while done.last().is_none_or(|&(r, _)| r < 3) {
        let r = next();
        match r.outcome {
            Outcome::Done(l) => done.push((r.read, l.set.trajectories.len() as u64)),
            _ => panic!("only the audits are left to come"),
        }
    }
    assert!(done == [(2, 50), (3, 52)] || done == [(3, 52)], "{done:?}");
}

/// A bad record appended to a followed log: the good ones beside it show
/// at once; merging stops at the bad one with its `file:line: field` and
/// the results on screen stand; the next read loads whole (and says the
/// same while the record is there).
#[test]
fn a_bad_appended_record_is_reported_and_the_next_read_loads_whole() {
    use rl_audit::jobs::{Outcome, Request};
    let (eval, jobs) = followed("follow_jobs_bad", 3);
    jobs.request(Request::Load(settings()));
    let next = || {
        jobs.results
            .recv_timeout(std::time::Duration::from_secs(300))
            .expect("a result")
    };
    while !matches!(next().outcome, Outcome::Done(_)) {}
    // Line 25 good, line 26 lacks its task and the rest.
    append(
        &eval,
        &format!(
            "{}{{\"run\": \"base\", \"benchmark\": \"b\"}}\n",
            line("rl", 5, 0)
        ),
    );
    jobs.read_on();
    let r = next();
    let Outcome::Read(f) = r.outcome else {
        panic!("the good record shows first")
    };
    assert_eq!(f.records, vec![rl_audit::schema::Loc::new(0, 25)]);
    let failed = |o: Outcome| match o {
        Outcome::Failed(e) => e.to_string(),
        _ => panic!("the bad record stops the merge"),
    };
    let e = failed(next().outcome);
    assert!(e.contains("eval.jsonl:26: "), "{e}");
    // The next change: a full load, which finds the same record.
    append(&eval, &line("rl", 5, 1));
    jobs.read_on();
    let e2 = failed(next().outcome);
    assert_eq!(e2, e);
}

/// Reads made one after another while the auditor was busy, merged in one
/// pass: the same set as a full load, also across a half-written line, a
/// last line without its newline and a second file.
#[test]
fn reads_merged_in_one_pass_equal_a_full_load() {
    use rl_audit::schema::follow::{merge_all, read_more, Read};
    let d = temp_dir("follow_merge_all");
    let eval = d.join("eval.jsonl");
    let other = d.join("z-more.jsonl");
    let first: String = (0..4)
        .flat_map(|t| (0..3).flat_map(move |i| [line("base", t, i), line("rl", t, i)]))
        .collect();
    std::fs::write(&eval, &first).unwrap();
    std::fs::write(&other, line("rl", 9, 0)).unwrap();
    let paths = vec![d.clone()];
    let (set, mut tracked) = load_tracked(&paths, &opts()).unwrap();
    let half = line("base", 0, 3);
    let last = line("rl", 1, 3);
    let appends: Vec<(&std::path::Path, String)> = vec![
        (&eval, format!("{}{}", line("rl", 0, 3), &half[..10])),
        (&other, line("rl", 9, 1)),
        (&eval, format!("{}{}", &half[10..], last.trim_end())),
        (&eval, format!("\n{}", line("base", 7, 0))),
    ];
    let mut batches = Vec::new();
    for (file, text) in &appends {
        append(file, text);
        match read_more(&set.files, false, &tracked, &paths, &opts()).unwrap() {
            Read::Parsed(b, t) => {
                batches.push(*b);
                tracked = t;
            }
            Read::Unchanged => panic!("the append was not seen"),
            Read::Reload => panic!("an append asked for a full reload"),
        }
    }
    let merged = merge_all(batches, &set).unwrap();
    let (full, _) = load_tracked(&paths, &opts()).unwrap();
    assert_eq!(full.trajectories.len(), 25 + 5);
    let locs = |s: &LogSet| s.trajectories.iter().map(|t| t.loc).collect::<Vec<_>>();
    assert_eq!(locs(&merged), locs(&full));
    assert_eq!(report(&merged), report(&full));
}
