//! The bundled demo is what `examples/gen_demo.rs` writes, byte for byte
//! (cargo builds examples before running integration tests).

mod common;
use common::*;

#[test]
fn regenerating_the_demo_gives_identical_files() {
    let target = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .unwrap()
        .to_path_buf();
    let exe = ["debug", "release"]
        .iter()
        .map(|p| target.join(p).join("examples").join("gen_demo"))
        .find(|p| p.exists());
    let Some(exe) = exe else {
        eprintln!("gen_demo example not built; skipping");
        return;
    };
    let d = temp_dir("demo_regen");
    let o = std::process::Command::new(exe).arg(&d).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let assets = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/demo");
    for f in [
        "eval.jsonl.gz",
        "train.jsonl.gz",
        "probes.jsonl.gz",
        "checkpoints.jsonl.gz",
    ] {
        assert_eq!(
            std::fs::read(d.join(f)).unwrap(),
            std::fs::read(assets.join(f)).unwrap(),
            "{f} differs"
        );
    }
}

#[test]
fn no_path_audits_the_embedded_demo_from_anywhere() {
    let d = temp_dir("demo_anywhere");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_rl-audit"))
        .args(["--headless", "--out", "r", "--resamples", "100"])
        .current_dir(&d)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("r/report.json")).unwrap()).unwrap();
    // gen_demo's design: 5 policies (base, three GRPO seeds, BudgetMix) × 48
    // tasks × 4 budgets × 16 evaluation rollouts, and BudgetMix's groups of
    // 8 on 48 tasks logged at 8 of its 200 iterations.
    assert_eq!(
        r["inputs"]["records"]["trajectory"],
        5 * 48 * 4 * 16 + 48 * 8 * (200 / 25)
    );
    assert_eq!(r["inputs"]["files"][0], "demo/checkpoints.jsonl.gz");
}

/// A headless audit moves the log-probabilities out of memory once loaded
/// (`LogSet::spill_logps`) and the likelihood analyses read them back
/// trajectory by trajectory: every step's entries come back exactly, and
/// both analyses give what they give from memory.
#[test]
fn log_probabilities_out_of_memory_come_back_exactly() {
    use rl_audit::analysis::{run_audit, Settings};
    use rl_audit::schema::LogpWindow;
    let opts = rl_audit::schema::LoadOptions::default();
    let held = rl_audit::demo::load_demo(&opts).unwrap();
    let mut spilled = held.clone();
    spilled.spill_logps();
    assert!(spilled.logp_spill.is_some(), "no temporary file was made");
    assert!(spilled.logp_runs.is_empty() && spilled.logp_values.is_empty());
    let mut window = LogpWindow::default();
    let mut entries = 0;
    for (a, b) in held.trajectories.iter().zip(&spilled.trajectories) {
        let want: Vec<Vec<(u32, f64)>> = held
            .steps_of(a)
            .iter()
            .map(|s| s.logps().collect())
            .collect();
        let got: Vec<Vec<(u32, f64)>> = spilled
            .steps_with_logps(b, &mut window)
            .unwrap()
            .iter()
            .map(|s| s.logps().collect())
            .collect();
        assert_eq!(got, want, "{}", held.loc_text(a.loc));
        entries += want.iter().map(Vec::len).sum::<usize>();
    }
    assert_eq!(entries, held.logp_runs.len());
    assert!(entries > 1000, "the demo has log-probabilities: {entries}");
    let mut s = Settings::default();
    s.boot.resamples = 100;
    let (a, b) = (
        run_audit(&held, &s).unwrap(),
        run_audit(&spilled, &s).unwrap(),
    );
    assert!(!a.likelihood.is_empty() && !a.llr_by_turn.is_empty());
    assert!(a
        .likelihood
        .iter()
        .all(|l| l.llr[0].is_some_and(|x| x.n > 0)));
    assert_eq!(format!("{:?}", a.likelihood), format!("{:?}", b.likelihood));
    assert_eq!(
        format!("{:?}", a.llr_by_turn),
        format!("{:?}", b.llr_by_turn)
    );
}

/// Loads that write the log-probabilities out as they go
/// (`LoadOptions::spill_logps`: the headless audit's and the workbench's)
/// give back every step's entries exactly, by run name (the ids are put in
/// name order after the entries were written), on the demo and on
/// `tests/data/large` as JSON Lines read in small windows and as Parquet.
#[test]
fn log_probabilities_written_out_while_loading_come_back_exactly() {
    use rl_audit::schema::{LoadOptions, LogSet, LogpWindow};
    fn entries(set: &LogSet, spilled: bool) -> Vec<Vec<Vec<(String, f64)>>> {
        let mut window = LogpWindow::default();
        set.trajectories
            .iter()
            .map(|t| {
                let steps = if spilled {
                    set.steps_with_logps(t, &mut window).unwrap()
                } else {
                    set.steps_of(t)
                };
                steps
                    .iter()
                    .map(|s| {
                        s.logps()
                            .map(|(r, x)| (set.name(r).to_string(), x))
                            .collect()
                    })
                    .collect()
            })
            .collect()
    }
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/large");
    let load = |which: &str, spill: bool| {
        let opts = LoadOptions {
            spill_logps: spill,
            window: Some(4096),
            ..Default::default()
        };
        match which {
            "demo" => rl_audit::demo::load_demo(&opts).unwrap(),
            dir => rl_audit::schema::load(&[root.join(dir)], &opts).unwrap(),
        }
    };
    for which in ["demo", "jsonl", "parquet"] {
        let (held, spilled) = (load(which, false), load(which, true));
        assert!(held.logp_spill.is_none());
        assert!(
            spilled.logp_spill.is_some(),
            "{which}: no temporary file was made"
        );
        assert!(spilled.logp_runs.is_empty() && spilled.logp_values.is_empty());
        let want = entries(&held, false);
        let n: usize = want.iter().flatten().map(Vec::len).sum();
        assert_eq!(n, held.logp_runs.len(), "{which}");
        assert!(n > 1000, "{which} has log-probabilities: {n}");
        assert_eq!(entries(&spilled, true), want, "{which}");
    }
}
