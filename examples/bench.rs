//! Benchmark: load time, each analysis's time, the full headless audit and
//! peak memory, on a log set (e.g. from `gen_large`), plus a bootstrap
//! micro-benchmark. Prints a table; run it once per input format so each
//! peak RSS is its own process's.
//!
//!     cargo run --release --example gen_large -- 1000000 large-logs
//!     cargo run --release --example bench -- large-logs/jsonl
//!     cargo run --release --example bench -- large-logs/parquet

use std::path::PathBuf;
use std::time::Instant;

use rl_audit::analysis::bootstrap::{cluster_bootstrap, cluster_bootstrap_each};
use rl_audit::analysis::frozenlake::QCache;
use rl_audit::analysis::stats::{Bootstrap, Ci, Cluster};
use rl_audit::analysis::{
    budgetmix, cost, dynamics, likelihood, matched, natural, passkt, recovery, resolve_pairs,
    Settings,
};
use rl_audit::schema::frames::eval_aggregates;
use rl_audit::schema::{load, LoadOptions};

/// Peak resident set size of this process, in MiB (Linux).
fn peak_rss_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
        })
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

fn dir_size(p: &std::path::Path) -> u64 {
    let mut total = 0;
    if let Ok(rd) = std::fs::read_dir(p) {
        for e in rd.flatten() {
            let m = e
                .metadata()
                .map(|m| {
                    if m.is_dir() {
                        dir_size(&e.path())
                    } else {
                        m.len()
                    }
                })
                .unwrap_or(0);
            total += m;
        }
    }
    total
}

fn main() {
    rl_audit::stage::tune_allocator();
    let path = PathBuf::from(
        std::env::args()
            .nth(1)
            .unwrap_or_else(|| "large-logs/jsonl".into()),
    );
    let settings = Settings::default();
    let mut rows: Vec<(&str, f64)> = Vec::new();
    // First, exactly what `rl-audit --headless PATH --out DIR` does, so the
    // process's peak memory so far is the headless audit's.
    let out = std::env::temp_dir().join(format!("rl-audit-bench-{}", std::process::id()));
    let cli = <rl_audit::cli::Cli as clap::Parser>::parse_from([
        "rl-audit",
        "--headless",
        path.to_str().unwrap_or("."),
        "--out",
        out.to_str().unwrap_or("."),
    ]);
    let t = Instant::now();
    let headless = cli.into_options().and_then(|o| rl_audit::headless::run(&o));
    let headless_s = t.elapsed().as_secs_f64();
    let headless_rss = peak_rss_mib();
    let _ = std::fs::remove_dir_all(&out);
    if let Err(e) = headless {
        eprintln!("bench: {e}");
        std::process::exit(2);
    }
    let t0 = Instant::now();
    let t = Instant::now();
    let set = match load(std::slice::from_ref(&path), &LoadOptions::default()) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("bench: {e}");
            std::process::exit(2);
        }
    };
    rows.push(("load + validate", t.elapsed().as_secs_f64()));
    let t = Instant::now();
    let agg = eval_aggregates(&set);
    rows.push(("polars aggregates", t.elapsed().as_secs_f64()));
    let (pairs, _) = resolve_pairs(&set, &settings).expect("pairs");
    let t = Instant::now();
    let pass = passkt::analyse(
        &passkt::PassInput {
            set: &set,
            agg: &agg,
        },
        &pairs,
        &settings,
    );
    rows.push((
        "Pass@(K,T) + Δ + curves + tokens",
        t.elapsed().as_secs_f64(),
    ));
    let mut cache = QCache::default();
    let t = Instant::now();
    let _m = matched::analyse(&set, &pairs, &settings, &mut cache);
    let _r = recovery::analyse(&set, &pairs, &settings, &mut cache);
    rows.push(("matched states + recovery", t.elapsed().as_secs_f64()));
    let t = Instant::now();
    let _n = natural::analyse(&set, &agg.tasks, &pairs, &settings);
    rows.push(("natural recovery", t.elapsed().as_secs_f64()));
    let t = Instant::now();
    let successes = likelihood::Successes::of(&set, &agg.tasks, &pairs);
    let _l = likelihood::analyse(&set, &pairs, &settings, &successes);
    rows.push(("likelihood", t.elapsed().as_secs_f64()));
    let t = Instant::now();
    let _d = dynamics::analyse(&set);
    rows.push(("dynamics", t.elapsed().as_secs_f64()));
    let t = Instant::now();
    let _c = cost::analyse(&set, &agg, &pass, &settings);
    rows.push(("cost frontier", t.elapsed().as_secs_f64()));
    let t = Instant::now();
    let _b = budgetmix::analyse(&set, &pass, &settings);
    rows.push(("BudgetMix audit", t.elapsed().as_secs_f64()));
    let (n_traj, n_steps) = (set.trajectories.len(), set.steps.len());
    let t = Instant::now();
    // When each panel of the workbench shows (as `tui::views::pending`
    // decides, at the first benchmark and pair), and when it is whole: its
    // parts all in (the Overview shows from the start, its findings
    // complete then).
    let mut shown: Vec<(rl_audit::tui::panel::Panel, f64)> = Vec::new();
    let mut whole: Vec<(rl_audit::tui::panel::Panel, f64)> = Vec::new();
    let first = rl_audit::tui::select::Selection::default();
    // The Budget panel shows each benchmark once its Pass@(K,T) rows are in
    // (before the §4.2 tests): when the first was, and the last.
    let mut benchmarks_in: Vec<(usize, f64)> = Vec::new();
    // Their values come first, the intervals after: when each count of
    // benchmarks with values was first reached.
    let mut with_values: Vec<(usize, f64)> = Vec::new();
    // Natural recovery's values come before its intervals: when.
    let mut natural_values = None;
    let audit = rl_audit::analysis::run_audit_staged(&set, &settings, &mut |a| {
        if natural_values.is_none() && a.natural_values_in {
            natural_values = Some(t.elapsed().as_secs_f64());
        }
        let n = a.pass.benchmarks_in.len();
        if a.is_pending(rl_audit::analysis::Part::Pass) && n > 0 {
            benchmarks_in.push((n, t.elapsed().as_secs_f64()));
        }
        let v = n + a.pass.values_in.len();
        if a.is_pending(rl_audit::analysis::Part::Pass)
            && with_values.last().is_none_or(|w| w.0 < v)
        {
            with_values.push((v, t.elapsed().as_secs_f64()));
        }
        for p in rl_audit::tui::panel::Panel::ALL {
            let ready = p.parts().iter().all(|x| !a.is_pending(*x));
            if ready && !whole.iter().any(|s| s.0 == p) {
                whole.push((p, t.elapsed().as_secs_f64()));
            }
            let usable = !rl_audit::tui::views::pending::is_waiting(a, p, &first);
            if usable && !shown.iter().any(|s| s.0 == p) {
                shown.push((p, t.elapsed().as_secs_f64()));
            }
        }
    })
    .expect("audit");
    let files = rl_audit::report::render(&set, &audit, false, None).expect("render");
    let out = std::env::temp_dir().join(format!("rl-audit-bench-{}", std::process::id()));
    rl_audit::report::write_atomic(&out, &files).expect("write");
    let _ = std::fs::remove_dir_all(&out);
    rows.push((
        "full audit + report (again, loaded)",
        t.elapsed().as_secs_f64(),
    ));
    let total = t0.elapsed().as_secs_f64() - t.elapsed().as_secs_f64();
    // What the workbench has the audit compute first (`Settings::focus`):
    // the Steps panel on screen from the start, when it shows; the last
    // benchmark of Pass@(K,T)'s order selected, when its rows are in.
    // In one audit, when each of `marks` first held.
    type Mark<'a> = &'a dyn Fn(&rl_audit::analysis::Audit) -> bool;
    let focused_marks =
        |panel: rl_audit::tui::panel::Panel, bench: Option<&str>, marks: &[Mark]| {
            let focused = rl_audit::analysis::Settings {
                focus: Default::default(),
                ..settings.clone()
            };
            focused.focus.set(panel.parts());
            focused.focus.set_benchmark(bench);
            let t = Instant::now();
            let mut at = vec![None; marks.len()];
            rl_audit::analysis::run_audit_staged(&set, &focused, &mut |a| {
                for (at, mark) in at.iter_mut().zip(marks) {
                    if at.is_none() && mark(a) {
                        *at = Some(t.elapsed().as_secs_f64());
                    }
                }
            })
            .expect("audit");
            at
        };
    let focused = |panel, bench, shown: Mark| focused_marks(panel, bench, &[shown])[0];
    use rl_audit::tui::panel::Panel;
    // Each panel on screen from the start, when it shows: the Steps panel
    // (its matched states' values before the rollout counts); a pair's
    // Recovery panel (with them, natural recovery's rows to come); the Cost panel
    // (its frontier reads Pass@(K,T)'s values alone, so it comes before
    // their intervals); the Likelihood panel (the likelihoods begin with
    // the rollout counts, before Pass@(K,T), which waits for them); the
    // BudgetMix panel (its rules before the rollout counts, its gains after
    // Pass@(K,T)'s values).
    let shown_first: Vec<(&str, Option<f64>)> = [
        (Panel::Steps, "TUI Steps on screen: shown, s after load"),
        (Panel::Recovery, "TUI Recovery on screen: shown, s after"),
        (Panel::Cost, "TUI Cost on screen: shown, s after load"),
        (Panel::Likelihood, "TUI Likelihood on screen: s after load"),
        (Panel::BudgetMix, "TUI BudgetMix on screen: shown, s after"),
    ]
    .into_iter()
    .map(|(panel, what)| {
        let at = focused(panel, None, &|a| {
            !rl_audit::tui::views::pending::is_waiting(a, panel, &first)
        });
        (what, at)
    })
    .collect();
    // The Recovery panel on screen from the start: the matched states'
    // values, natural recovery's values and provisional intervals
    // (`Ci::Provisional`), the matched states' provisional intervals and
    // intervals, then the main sequence waits for natural recovery.
    let provisional = |c: Ci| matches!(c, Ci::Provisional(..));
    let matched_provisional = |a: &rl_audit::analysis::Audit| {
        let means = a.matched.iter().filter_map(|m| m.mean_diff);
        let recovery = a.recovery.iter().flat_map(|r| r.estimates()).flatten();
        means.chain(recovery).any(|e| provisional(e.ci))
    };
    let matched_in =
        |a: &rl_audit::analysis::Audit| !a.is_pending(rl_audit::analysis::Part::Matched);
    let recovery_marks = focused_marks(
        Panel::Recovery,
        None,
        &[
            &|a| a.natural_values_in,
            &|a| {
                let runs = a.natural_recovery.iter();
                runs.flat_map(|n| [n.next_ok, n.recovered])
                    .flatten()
                    .any(|e| provisional(e.ci))
            },
            &matched_provisional,
            &matched_in,
            &|a| Panel::Recovery.parts().iter().all(|p| !a.is_pending(*p)),
        ],
    );
    // The Steps panel on screen from the start: its provisional intervals,
    // its intervals.
    let steps_marks = focused_marks(Panel::Steps, None, &[&matched_provisional, &matched_in]);
    // The Likelihood panel on screen from the start: its length-matched
    // provisional intervals, its LLR by turn's first pair's values and
    // provisional intervals (its drill), then the part whole (with the LLR
    // by turn).
    let likelihood_marks = focused_marks(
        Panel::Likelihood,
        None,
        &[
            &|a| {
                let mut rows = a.likelihood.iter();
                rows.any(|l| {
                    l.length_matched
                        .mean_diff
                        .is_some_and(|e| provisional(e.ci))
                })
            },
            &|a| !a.llr_by_turn.is_empty(),
            &|a| a.llr_by_turn.iter().any(|t| provisional(t.ci)),
            &|a| Panel::Likelihood.parts().iter().all(|p| !a.is_pending(*p)),
        ],
    );
    // The Budget panel on screen, the last benchmark of Pass@(K,T)'s order
    // selected: its values, its provisional intervals, its intervals; the
    // Cost panel likewise: that benchmark costed, its rows' provisional
    // intervals, their intervals.
    let last = audit.pass.benchmarks_in.last().cloned();
    let selected_marks = |panel: Panel, first: Mark| {
        last.as_deref().map(|b| {
            let marks = focused_marks(
                panel,
                Some(b),
                &[
                    &|a| first(a),
                    &|a| {
                        let mut cells = a.pass.cells.iter().filter(|c| c.benchmark == b);
                        cells.any(|c| provisional(c.ci))
                    },
                    &|a| {
                        !a.is_pending(rl_audit::analysis::Part::Pass)
                            || a.pass.benchmarks_in.iter().any(|x| x == b)
                    },
                ],
            );
            (b.to_string(), marks)
        })
    };
    let budget_marks = selected_marks(Panel::Budget, &|a| {
        last.as_deref().is_some_and(|b| a.pass_in(b))
    });
    let cost_marks = selected_marks(Panel::Cost, &|a| {
        last.as_deref().is_some_and(|b| a.cost_in(b))
    });
    // The trajectory browser re-reads one record from its file: the last
    // evaluation trajectory (the deepest into its file).
    let reread = set
        .trajectories
        .iter()
        .filter(|t| !t.is_training())
        .max_by_key(|t| t.loc.line())
        .map(|t| {
            let name = set.files[t.loc.file() as usize].clone();
            let t0 = Instant::now();
            let ok = rl_audit::schema::load::read_record(&name, t.loc.line()).is_ok();
            (t0.elapsed().as_secs_f64() * 1e3, ok)
        });
    let (first_frame, redraw_mean, redraw_max, drills) = tui_timings(set, audit);
    // Bootstrap micro-benchmark: 10,000 resamples over 10,000 tasks, distinct values.
    let clusters: Vec<Cluster> = (0..10_000)
        .map(|i| Cluster::one((i as f64 * 0.618_034).fract()))
        .collect();
    let t = Instant::now();
    let _ = cluster_bootstrap(&clusters, &Bootstrap::default());
    let boot = t.elapsed().as_secs_f64();
    // The turn-by-turn LLR's shape at 200 k trajectories (`c200k`): 21 sets
    // of distinct values over 1,250 tasks or fewer, bootstrapped together;
    // best of 9.
    let sizes = [
        1250, 1250, 1250, 1250, 1250, 1250, 1250, 1250, 1250, 1250, 1250, 1250, 1249, 1244, 1238,
        1225, 1197, 1138, 1030, 852, 538,
    ];
    let sets: Vec<Vec<Cluster>> = sizes
        .iter()
        .enumerate()
        .map(|(s, &m)| {
            (0..m)
                .map(|i| Cluster {
                    sum: ((i * 21 + s) as f64 * 0.618_034).fract() * 40.0,
                    weight: (1 + (i + s) % 12) as f64,
                })
                .collect()
        })
        .collect();
    let by_turn = (0..9)
        .map(|_| {
            let t = Instant::now();
            let _ = cluster_bootstrap_each(sets.clone(), &Bootstrap::default());
            t.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min);
    let size = if path.is_dir() {
        dir_size(&path)
    } else {
        std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0)
    };
    println!(
        "input: {} ({:.0} MB), {} trajectories, {} steps",
        path.display(),
        size as f64 / 1e6,
        n_traj,
        n_steps
    );
    println!("threads: {}", rayon::current_num_threads());
    println!(
        "{:<40} {:>9.2}",
        "whole headless audit (= rl-audit --headless)", headless_s
    );
    println!("{:<40} {:>9.0}", "  its peak RSS (MiB)", headless_rss);
    println!(
        "{:<40} {:>9.2}",
        "  its peak RSS / input size",
        headless_rss * 1048576.0 / size.max(1) as f64
    );
    println!("{:<40} {:>9}", "stage (again, one by one)", "seconds");
    for (name, s) in &rows {
        println!("{name:<40} {s:>9.2}");
    }
    println!("{:<40} {:>9.2}", "load + every analysis (one pass)", total);
    println!(
        "{:<40} {:>9.2}",
        "bootstrap 10k resamples × 10k tasks", boot
    );
    println!(
        "{:<40} {:>9.3}",
        "bootstrap 21 sets × ≤ 1,250 tasks, best", by_turn
    );
    println!(
        "{:<40} {:>9.2}",
        "TUI first frame (ms, 160×48)", first_frame
    );
    println!(
        "{:<40} {:>9.2}",
        "TUI redraw per key, mean (ms)", redraw_mean
    );
    println!("{:<40} {:>9.2}", "TUI redraw per key, max (ms)", redraw_max);
    for (what, ms) in drills {
        println!("{what:<40} {ms:>9.2}");
    }
    if let Some((n, s)) = with_values.iter().rev().find(|w| w.0 > 0) {
        let what = format!("TUI Budget, {n} benchmarks' values in");
        println!("{what:<40} {s:>9.2}");
    }
    if let Some(s) = natural_values {
        println!("{:<40} {s:>9.2}", "TUI natural recovery's values in");
    }
    if let (Some(first), Some(last)) = (benchmarks_in.first(), benchmarks_in.last()) {
        println!(
            "{:<40} {:>9.2}",
            "TUI Budget, 1st benchmark in, s after load", first.1
        );
        let what = format!("TUI Budget, {} benchmarks in (no tests)", last.0);
        println!("{what:<40} {:>9.2}", last.1);
    }
    for (p, s) in &whole {
        let what = if *p == rl_audit::tui::panel::Panel::Overview {
            "TUI Overview, all findings, s after load".to_string()
        } else {
            format!("TUI {} panel whole, s after load", p.title())
        };
        // Shown sooner than whole: when.
        if let Some((_, u)) = shown.iter().find(|(q, u)| q == p && u < s) {
            let what = format!("TUI {} panel shown, s after load", p.title());
            println!("{what:<40} {u:>9.2}");
        }
        println!("{what:<40} {s:>9.2}");
    }
    for (what, at) in &shown_first {
        if let Some(s) = at {
            println!("{what:<40} {s:>9.2}");
        }
    }
    for (what, at) in [
        "natural values",
        "natural ~[…]",
        "matched ~[…]",
        "matched intervals",
        "whole",
    ]
    .iter()
    .zip(&recovery_marks)
    {
        if let Some(s) = at {
            let what = format!("TUI Recovery on screen: {what}");
            println!("{what:<40} {s:>9.2}");
        }
    }
    let llr = ["~[…]", "1st by turn", "1st by turn ~[…]", "whole"];
    for (panel, labels, marks) in [
        ("Steps", &["~[…]", "whole"][..], &steps_marks),
        ("Likelihood", &llr[..], &likelihood_marks),
    ] {
        for (what, at) in labels.iter().zip(marks) {
            if let Some(s) = at {
                let what = format!("TUI {panel} on screen: {what}");
                println!("{what:<40} {s:>9.2}");
            }
        }
    }
    for (panel, first, marks) in [
        ("Budget", "values", &budget_marks),
        ("Cost", "costed", &cost_marks),
    ] {
        let Some((b, m)) = marks else { continue };
        for (what, at) in [first, "~[…]", "whole"].iter().zip(m) {
            if let Some(s) = at {
                let what = format!("TUI {panel}, {b} selected: {what}");
                println!("{what:<40} {s:>9.2}");
            }
        }
    }
    if let (Some((_, last)), true) = (benchmarks_in.last(), budget_marks.is_some()) {
        println!(
            "{:<40} {last:>9.2}",
            "TUI Budget, last benchmark in, s after"
        );
    }
    if let Some((ms, ok)) = reread {
        println!(
            "{:<40} {:>9.2}{}",
            "TUI trajectory re-read, deepest (ms)",
            ms,
            if ok { "" } else { " (failed)" }
        );
    }
    println!(
        "{:<40} {:>9.0}",
        "bench process peak RSS, all runs (MiB)",
        peak_rss_mib()
    );
}

/// Draws the workbench on a test backend: the first (loading) frame, then
/// one redraw per key press over every panel, in milliseconds.
/// First frame, mean and max redraw per key (ms), and the drill-downs' times.
type TuiTimings = (f64, f64, f64, Vec<(&'static str, f64)>);

fn tui_timings(set: rl_audit::schema::LogSet, audit: rl_audit::analysis::Audit) -> TuiTimings {
    use ratatui::backend::TestBackend;
    use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    use rl_audit::tui::{app::App, draw};
    let progress = rl_audit::schema::load::Progress::default();
    let mut term = ratatui::Terminal::new(TestBackend::new(160, 48)).expect("test terminal");
    let mut app = App::new(false, false);
    let t = Instant::now();
    term.draw(|f| draw::draw(f, &mut app, &progress, "loading"))
        .expect("draw");
    let first = t.elapsed().as_secs_f64() * 1e3;
    app.set_data(std::sync::Arc::new(rl_audit::jobs::Loaded {
        set: std::sync::Arc::new(set),
        audit,
    }));
    term.draw(|f| draw::draw(f, &mut app, &progress, "idle"))
        .expect("draw");
    let mut times = Vec::new();
    for c in "2l+m3l456m78j1".chars() {
        let t = Instant::now();
        app.on_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
        term.draw(|f| draw::draw(f, &mut app, &progress, "idle"))
            .expect("draw");
        times.push(t.elapsed().as_secs_f64() * 1e3);
    }
    let mean = times.iter().sum::<f64>() / times.len() as f64;
    let max = times.iter().copied().fold(0.0, f64::max);
    // Drilling down from the Budget grid's cell, and the keys that compute
    // on the key press (each on screen at the next redraw; `v` and the
    // trajectory view read in the background: their first redraw shows
    // "reading…").
    let keys: [(&str, KeyCode); 16] = [
        ("", KeyCode::Char('2')),
        ("TUI Budget cell → its tasks (ms)", KeyCode::Enter),
        ("TUI tasks sorted by a column (ms)", KeyCode::Char('s')),
        (
            "TUI down a row in the sorted tasks (ms)",
            KeyCode::Char('j'),
        ),
        ("", KeyCode::Char('/')),
        ("TUI a character of a filter typed (ms)", KeyCode::Char('7')),
        ("TUI the filter cleared (ms)", KeyCode::Esc),
        ("TUI task → its rollouts (ms)", KeyCode::Enter),
        ("TUI rollouts → the tasks (ms)", KeyCode::Esc),
        ("TUI tasks → the grid (ms)", KeyCode::Esc),
        ("TUI v: base failure, RL success (ms)", KeyCode::Char('v')),
        ("", KeyCode::Esc),
        ("TUI Cost panel (ms)", KeyCode::Char('3')),
        ("TUI Cost ceiling moved (ms)", KeyCode::Char('l')),
        ("TUI BudgetMix panel (ms)", KeyCode::Char('8')),
        ("TUI a rule's violating records (ms)", KeyCode::Enter),
    ];
    let mut drills = Vec::new();
    for (what, key) in keys {
        let t = Instant::now();
        app.on_key(KeyEvent::new(key, KeyModifiers::NONE));
        term.draw(|f| draw::draw(f, &mut app, &progress, "idle"))
            .expect("draw");
        if !what.is_empty() {
            drills.push((what, t.elapsed().as_secs_f64() * 1e3));
        }
    }
    // `F` for a pattern found nowhere: every trajectory's actions and
    // observations read back, in the background, the screen redrawn
    // meanwhile (as the workbench does, every 100 ms) until the hits show.
    app.on_key(KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE));
    for c in "F^no such text$".chars() {
        app.on_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
    }
    let t = Instant::now();
    app.on_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    loop {
        term.draw(|f| draw::draw(f, &mut app, &progress, "idle"))
            .expect("draw");
        if !app.busy() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    drills.push((
        "TUI F: every trajectory searched, no hit (ms)",
        t.elapsed().as_secs_f64() * 1e3,
    ));
    // The drills that recompute in the background, each timed from its key
    // to the redraw that shows its table (redrawn every 10 ms meanwhile).
    let mut waited = |app: &mut App, key: KeyCode| {
        let t = Instant::now();
        app.on_key(KeyEvent::new(key, KeyModifiers::NONE));
        loop {
            term.draw(|f| draw::draw(f, app, &progress, "idle"))
                .expect("draw");
            if !app.busy() {
                break t.elapsed().as_secs_f64() * 1e3;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    };
    // A drill's time, or NaN (and why) when another table came.
    let shown = |app: &mut App, ms: f64, name: &str| match app.table() {
        Some(t) if t.name == name => ms,
        other => {
            let got = other.map_or("none".to_string(), |t| t.name.clone());
            eprintln!("bench: expected the {name} table, got {got}");
            f64::NAN
        }
    };
    app.on_key(KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE));
    waited(&mut app, KeyCode::Char('4'));
    let ms = waited(&mut app, KeyCode::Enter);
    drills.push((
        "TUI Steps row → its states (ms)",
        shown(&mut app, ms, "states"),
    ));
    let ms = waited(&mut app, KeyCode::Enter);
    drills.push(("TUI a state → its probe (ms)", shown(&mut app, ms, "probe")));
    waited(&mut app, KeyCode::Char('6'));
    if !app.llr_view {
        waited(&mut app, KeyCode::Char('m'));
    }
    let ms = waited(&mut app, KeyCode::Enter);
    drills.push((
        "TUI Likelihood row → length-matched pairs (ms)",
        shown(&mut app, ms, "length-matched"),
    ));
    (first, mean, max, drills)
}
