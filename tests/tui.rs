//! The workbench driven by key presses on ratatui's TestBackend, at 80×24
//! and 160×48: every panel, the drill-down to a trajectory, the help overlay,
//! and the same numbers as the headless report.

use std::sync::Arc;

use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use rl_audit::analysis::{run_audit, Settings};
use rl_audit::jobs::Loaded;
use rl_audit::schema::load::Progress;
use rl_audit::schema::LoadOptions;
use rl_audit::tui::app::App;
use rl_audit::tui::{draw, keys};

fn demo() -> Arc<Loaded> {
    let set = rl_audit::demo::load_demo(&LoadOptions::default()).expect("demo loads");
    let settings = Settings {
        boot: rl_audit::analysis::stats::Bootstrap {
            resamples: 200,
            ..Default::default()
        },
        ..Default::default()
    };
    let audit = run_audit(&set, &settings).expect("audit");
    Arc::new(Loaded {
        set: Arc::new(set),
        audit,
    })
}

struct Screen {
    term: Terminal<TestBackend>,
    app: App,
    progress: Progress,
}

impl Screen {
    fn new(w: u16, h: u16, data: Arc<Loaded>) -> Screen {
        let mut app = App::new(true, false);
        app.set_data(data);
        Screen {
            term: Terminal::new(TestBackend::new(w, h)).unwrap(),
            app,
            progress: Progress::default(),
        }
    }
    fn keys(&mut self, keys: &str) -> String {
        for c in keys.chars() {
            let code = match c {
                '\n' => KeyCode::Enter,
                '\x1b' => KeyCode::Esc,
                '\t' => KeyCode::Tab,
                c => KeyCode::Char(c),
            };
            self.app.on_key(KeyEvent::new(code, KeyModifiers::NONE));
        }
        self.text()
    }
    fn text(&mut self) -> String {
        let (app, progress) = (&mut self.app, &self.progress);
        self.term
            .draw(|f| draw::draw(f, app, progress, "idle"))
            .unwrap();
        let buf = self.term.backend().buffer().clone();
        let w = buf.area.width as usize;
        buf.content
            .chunks(w)
            .map(|row| row.iter().map(|c| c.symbol()).collect::<String>() + "\n")
            .collect()
    }
}

#[test]
fn every_panel_renders_at_both_sizes() {
    let d = demo();
    for (w, h) in [(80, 24), (160, 48)] {
        let mut s = Screen::new(w, h, d.clone());
        let expect = [
            ("1", "Headline findings"),
            ("2", "base% → RL%"),
            ("3", "expected cost"),
            ("4", "Matched states"),
            ("5", "error states"),
            ("6", "step NLL"),
            ("7", "Checkpoint metrics"),
            ("8", "BudgetMix audit"),
        ];
        for (key, want) in expect {
            let screen = s.keys(key);
            assert!(
                screen.contains(want),
                "{w}×{h} panel {key}: {want:?} missing in\n{screen}"
            );
            assert_eq!(screen.lines().count(), h as usize);
            for line in screen.lines() {
                assert_eq!(line.chars().count(), w as usize);
            }
        }
    }
}

#[test]
fn budget_cell_drills_to_tasks_rollouts_and_trajectory() {
    let d = demo();
    let mut s = Screen::new(160, 48, d.clone());
    // Budget, 75% (two steps right from 25%), K=1: Enter opens the tasks.
    let screen = s.keys("2ll\n");
    assert!(screen.contains("tasks K=1 75%"), "{screen}");
    assert!(screen.contains("Δ contrib"));
    let screen = s.keys("\n");
    assert!(
        screen.contains("rollouts") || screen.contains("task fl-"),
        "{screen}"
    );
    assert!(screen.contains("demo/eval.jsonl.gz:"));
    let mut screen = s.keys("\n");
    // The record is re-read in the background; the screen stays live.
    for _ in 0..100 {
        if !screen.contains("reading") {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
        screen = s.text();
    }
    assert!(screen.contains("record "), "{screen}");
    assert!(screen.contains("observation"), "{screen}");
    // Esc walks back up, one level at a time.
    let screen = s.keys("\x1b\x1b\x1b");
    assert!(screen.contains("selected cell"), "{screen}");
}

#[test]
fn help_overlay_lists_the_real_key_map() {
    let mut s = Screen::new(160, 48, demo());
    let screen = s.keys("2?");
    for b in keys::BINDINGS {
        assert!(screen.contains(b.help), "help lacks {:?}\n{screen}", b.help);
    }
    assert!(screen.contains("Budget — how to read it"));
    let screen = s.keys("x");
    assert!(!screen.contains("how to read it"));
}

#[test]
fn budget_panel_shows_the_report_numbers() {
    let d = demo();
    let mut s = Screen::new(160, 48, d.clone());
    let screen = s.keys("2ll");
    // The selected cell (K=1, 75%, native) of the first pair, as the JSON report has it.
    let pair = &d.audit.pairs[0];
    let adv = d
        .audit
        .pass
        .advantage
        .iter()
        .find(|a| a.rl == pair.rl && a.k == 1 && a.level == 75 && a.mode.name() == "native")
        .unwrap();
    let want = format!("Δ {:+.1} pp", 100.0 * adv.delta);
    assert!(screen.contains(&want), "{want} missing:\n{screen}");
    assert!(screen.contains(&format!("n={} tasks", adv.tasks)));
}

#[test]
fn filter_and_export() {
    let dir = std::env::temp_dir().join(format!("rl-audit-export-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut s = Screen::new(120, 40, demo());
    s.keys("2lll\n");
    // Filter the task table by a substring.
    let screen = s.keys("/4x4s\n");
    assert!(screen.contains("fl-01-4x4s"));
    assert!(!screen.contains("fl-02-5x5"), "{screen}");
    let prev = std::env::current_dir().unwrap();
    std::env::set_current_dir(&dir).unwrap();
    let screen = s.keys("e");
    std::env::set_current_dir(prev).unwrap();
    assert!(screen.contains("exported"), "{screen}");
    let csv = std::fs::read_to_string(dir.join("rl-audit-export-tasks.csv")).unwrap();
    assert!(csv.starts_with("task,min_turns,T,"));
    assert!(csv.lines().skip(1).all(|l| l.contains("4x4s")));
}

#[test]
fn quit_only_from_the_top_with_q() {
    let mut s = Screen::new(80, 24, demo());
    s.keys("2\x1b");
    assert!(!s.app.quit, "Esc at the top must not quit");
    s.keys("l\nq");
    assert!(!s.app.quit, "q in a drill-down goes back");
    s.keys("q");
    assert!(s.app.quit);
}

#[test]
fn rollouts_drill_down_lists_exactly_the_cell_rollouts() {
    use rl_audit::analysis::passkt::Mode;
    use rl_audit::tui::views::{rollouts_table, tasks_table, Selection};
    let d = demo();
    for mode in [Mode::Native, Mode::Truncated] {
        let sel = Selection {
            mode,
            ..Default::default()
        };
        for level in [25u32, 50, 75] {
            let tasks = tasks_table(&d, &sel, 1, level);
            assert!(!tasks.rows.is_empty());
            let col = |name: &str| tasks.header.iter().position(|h| h == name).unwrap();
            for row in &tasks.rows {
                let n = |c: &str| row[col(c)].parse::<usize>().unwrap_or(0);
                let solved = |c: &str| row[col(c)].parse::<usize>().unwrap_or(0);
                let t: u32 = row[col("T")].parse().unwrap();
                let r = rollouts_table(&d, &sel, &row[0], level);
                // The tasks table counts come from the polars aggregates; the
                // rollouts are listed from the raw trajectories.
                assert_eq!(r.rows.len(), n("n base") + n("n RL"), "{level}% {row:?}");
                let rc = |h: &str| r.header.iter().position(|x| x == h).unwrap();
                let within = r
                    .rows
                    .iter()
                    .filter(|x| x[rc("solved ≤ T")] == "yes")
                    .count();
                assert_eq!(within, solved("c base") + solved("c RL"), "{row:?}");
                for x in &r.rows {
                    let budget: u32 = x[rc("budget")].parse().unwrap();
                    if mode == Mode::Native {
                        assert_eq!(budget, t);
                    } else {
                        assert!(budget > t);
                    }
                }
            }
        }
    }
}

/// The pid of a direct child of `parent`, from /proc.
fn child_of(parent: u32) -> Option<u32> {
    std::fs::read_dir("/proc").ok()?.flatten().find_map(|e| {
        let pid: u32 = e.file_name().to_str()?.parse().ok()?;
        let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
        // pid (comm) state ppid …
        let ppid: u32 = stat
            .rsplit(')')
            .next()?
            .split_whitespace()
            .nth(1)?
            .parse()
            .ok()?;
        (ppid == parent).then_some(pid)
    })
}

#[test]
fn quit_and_signals_restore_the_terminal_with_the_right_status() {
    // A real pseudo-terminal from util-linux `script`; skipped without it.
    if std::process::Command::new("script")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("no `script` command: skipped");
        return;
    }
    let bin = env!("CARGO_BIN_EXE_rl-audit");
    for (sig, code) in [("TERM", 143), ("HUP", 129), ("q", 0), ("panic", 3)] {
        // "panic": the background worker hits a bug (a test hook injects
        // it): the workbench must restore the terminal, say so and exit 3.
        let fault = if sig == "panic" { "worker-panic" } else { "" };
        let mut child = std::process::Command::new("script")
            .args(["-qec", &format!("exec {bin}"), "/dev/null"])
            .env("RL_AUDIT_FAULT", fault)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let mut pid = None;
        for _ in 0..100 {
            std::thread::sleep(std::time::Duration::from_millis(100));
            pid = child_of(child.id());
            if pid.is_some() {
                break;
            }
        }
        let pid = pid.expect("rl-audit started under script");
        std::thread::sleep(std::time::Duration::from_millis(1500));
        if sig == "panic" {
            // Nothing to do: the worker's first job panics.
        } else if sig == "q" {
            // A key press, through the pseudo-terminal.
            use std::io::Write;
            let mut stdin = child.stdin.take().unwrap();
            stdin.write_all(b"q").unwrap();
            stdin.flush().unwrap();
        } else {
            std::process::Command::new("kill")
                .args([&format!("-{sig}"), &pid.to_string()])
                .status()
                .unwrap();
        }
        let mut waited = 0;
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break s;
            }
            waited += 1;
            assert!(waited < 100, "rl-audit did not leave after SIG{sig}");
            std::thread::sleep(std::time::Duration::from_millis(100));
        };
        let mut out = Vec::new();
        use std::io::Read;
        child.stdout.take().unwrap().read_to_end(&mut out).unwrap();
        let out = String::from_utf8_lossy(&out);
        assert_eq!(status.code(), Some(code), "SIG{sig}");
        // Entered and left the alternate screen, and showed the cursor again.
        assert!(out.contains("\x1b[?1049h"), "SIG{sig}: never drew");
        let left = out.rfind("\x1b[?1049l").expect("left the alternate screen");
        assert!(left > out.rfind("\x1b[?1049h").unwrap());
        assert!(out.contains("\x1b[?25h"), "SIG{sig}: cursor left hidden");
        if sig == "panic" {
            // The bug message, after the terminal was restored.
            let msg = out
                .rfind("rl-audit: internal error: background job: injected fault")
                .expect("the bug is reported");
            assert!(msg > left, "reported on the restored terminal");
            assert!(out.contains("please report it"));
            continue;
        }
        // Frames are drawn as synchronized updates (begin … end).
        assert!(
            out.contains("\x1b[?2026h") && out.contains("\x1b[?2026l"),
            "SIG{sig}: no synchronized update"
        );
    }
}

#[test]
fn overview_and_report_share_the_headline() {
    let d = demo();
    let json = rl_audit::report::json::report(&d.set, &d.audit);
    let found = json["findings"].as_array().unwrap();
    assert!(!found.is_empty());
    let mut s = Screen::new(160, 48, d.clone());
    let screen = s.keys("1");
    for f in found {
        let detail = f["detail"].as_str().unwrap();
        assert!(screen.contains(detail), "{detail:?} missing:\n{screen}");
    }
    // Matched-state shares carry their Wilson 95% interval, worked out here
    // from the count: (p + z²/2n ± z·sqrt(p(1−p)/n + z²/4n²)) / (1 + z²/n).
    let z: f64 = 1.959_963_984_540_054;
    for m in json["matched_states"].as_array().unwrap() {
        let n = m["states"].as_f64().unwrap();
        let k = (m["better"].as_f64().unwrap() * n).round();
        let p = k / n;
        let denom = 1.0 + z * z / n;
        let centre = (p + z * z / (2.0 * n)) / denom;
        let half = z * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt() / denom;
        let want = format!(
            "RL better {:.1}% [{:.1}, {:.1}], n={} states",
            100.0 * p,
            100.0 * (centre - half),
            100.0 * (centre + half),
            n
        );
        assert!(
            found.iter().any(|f| f["detail"] == want.as_str()),
            "{want:?} not among {found:?}"
        );
    }
}

#[test]
fn tables_sort_by_column_and_jump_to_either_end() {
    let d = demo();
    let mut s = Screen::new(160, 48, d.clone());
    s.keys("2ll\n");
    // s: by the first column (task), ascending; S: descending.
    let table = |s: &mut Screen| s.app.table().unwrap();
    s.keys("s");
    let t = table(&mut s);
    assert!(t.title.contains("sorted by task ▲"), "{}", t.title);
    assert!(
        !t.title.contains("contribution"),
        "the old order is no longer named"
    );
    let tasks: Vec<String> = t.rows.iter().map(|r| r[0].clone()).collect();
    let mut want = tasks.clone();
    want.sort();
    assert_eq!(tasks, want);
    s.keys("S");
    let t = table(&mut s);
    let mut want_desc = want.clone();
    want_desc.reverse();
    assert_eq!(
        t.rows.iter().map(|r| r[0].clone()).collect::<Vec<_>>(),
        want_desc
    );
    // G and g: the last and first rows; Enter opens the selected row's task.
    s.keys("G");
    assert_eq!(s.app.row(), t.rows.len() - 1);
    let screen = s.keys("\n");
    assert!(
        screen.contains(&format!("task {} @ 75%", want_desc[want_desc.len() - 1])),
        "{screen}"
    );
    s.keys("\x1b");
    assert!(
        s.app.sort.is_none(),
        "the sort belongs to the view it was made in"
    );
    s.keys("g");
    assert_eq!(s.app.row(), 0);
    // The Budget grid keeps its K order.
    s.keys("\x1bs");
    assert!(s.app.sort.is_none());
}
