//! The interactive workbench: panels over the same audit the headless report
//! writes. Loading runs in the background; the first frame appears at once.

pub mod app;
pub mod charts;
pub mod draw;
pub mod keymap;
pub mod panel;
pub mod select;
pub mod table;
pub mod theme;
pub mod views;
pub mod widgets;

use std::time::{Duration, Instant};

use ratatui::crossterm::event::{self, Event, KeyEventKind};

use crate::cli::Options;
use crate::error::{Error, Result};
use crate::jobs::{Jobs, Outcome, Request};
use app::{App, Pending};

/// Restores the terminal however the TUI ends (panics are covered by
/// ratatui's hook, early returns by this guard).
struct Restore;

impl Drop for Restore {
    fn drop(&mut self) {
        restore_terminal();
    }
}

/// Gives the mouse back, leaves raw mode and the alternate screen and shows
/// the cursor again (ratatui's `restore` leaves the cursor as the last frame
/// had it, and the mouse captured).
fn restore_terminal() {
    let _ = crossterm::execute!(std::io::stdout(), crossterm::event::DisableMouseCapture);
    ratatui::restore();
    let _ = crossterm::execute!(std::io::stdout(), crossterm::cursor::Show);
}

/// Asks the terminal for button presses, drags and the wheel in SGR form
/// (crossterm's `EnableMouseCapture` also asks for every motion: a report
/// per mouse move, over SSH too). `DisableMouseCapture` turns all off.
const MOUSE_ON: &str = "\x1b[?1000h\x1b[?1002h\x1b[?1006h";

/// The terminal sequence that puts `text` on the clipboard (OSC 52, its
/// bytes in base64): the terminal's own, so over SSH it reaches the
/// user's machine.
pub fn osc52(text: &str) -> String {
    const ABC: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut b64 = String::with_capacity(text.len().div_ceil(3) * 4);
    for chunk in text.as_bytes().chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
        for i in 0..4 {
            b64.push(if i <= chunk.len() {
                char::from(ABC[(n >> (18 - 6 * i) & 63) as usize])
            } else {
                '='
            });
        }
    }
    format!("\x1b]52;c;{b64}\x07")
}

/// How often `--follow` looks at the log files' sizes and times.
const FOLLOW_EVERY: Duration = Duration::from_millis(500);

/// Sizes and times of the log files, to notice growth with --follow (only
/// files a log set can hold: the workbench's own CSV exports are not).
fn file_stamp(opts: &Options) -> Vec<(u64, Option<std::time::SystemTime>)> {
    let mut out = Vec::new();
    let mut stack: Vec<std::path::PathBuf> = opts.paths.clone();
    while let Some(p) = stack.pop() {
        if let Ok(m) = std::fs::metadata(&p) {
            if m.is_dir() {
                if let Ok(rd) = std::fs::read_dir(&p) {
                    stack.extend(rd.filter_map(|e| e.ok().map(|e| e.path())));
                }
            } else if crate::schema::load::is_log_file(&p) {
                out.push((m.len(), m.modified().ok()));
            }
        }
    }
    out.sort();
    out
}

/// The terminal went away (a dropped SSH session closes the pty; Linux shows
/// its device as deleted): there is no one left to draw for.
fn terminal_gone() -> bool {
    std::fs::read_link("/proc/self/fd/0").is_ok_and(|p| p.to_string_lossy().ends_with(" (deleted)"))
}

/// Runs the workbench until it is quit; the process is to exit when this
/// returns (what it loaded is not freed).
pub fn run(opts: Options) -> Result<()> {
    // A path that does not exist is a bad invocation: say so before taking the terminal.
    for p in &opts.paths {
        if let Err(e) = std::fs::metadata(p) {
            return Err(Error::file(
                p.display(),
                if e.kind() == std::io::ErrorKind::NotFound {
                    "no such file or directory".to_string()
                } else {
                    e.to_string()
                },
            ));
        }
    }
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    let mut terminal = ratatui::try_init()
        .map_err(|e| Error::Usage(format!("cannot open the terminal ({e}); use --headless")))?;
    let _guard = Restore;
    // The wheel and clicks, unless the terminal keeps them.
    if !opts.no_mouse {
        use std::io::Write;
        let mut out = std::io::stdout();
        let _ = out.write_all(MOUSE_ON.as_bytes()).and_then(|_| out.flush());
    }
    // SIGTERM / SIGHUP (a killed SSH session, `kill`): leave cleanly so the
    // guard restores the terminal, instead of dying in raw mode.
    // The exit status after a signal is the shell's 128 + signal number,
    // whichever thread notices it first.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    for sig in [signal_hook::consts::SIGTERM, signal_hook::consts::SIGHUP] {
        let _ = signal_hook::flag::register_usize(sig, stop.clone(), 128 + sig as usize);
    }
    // crossterm's event poll can spin forever on a hung-up tty, so a watchdog
    // (not the event loop) notices a signal or a vanished terminal, restores
    // what it can and leaves.
    {
        let stop = stop.clone();
        let _ = std::thread::Builder::new()
            .name("rl-audit-watchdog".into())
            .spawn(move || loop {
                std::thread::sleep(Duration::from_millis(250));
                let signalled = stop.load(std::sync::atomic::Ordering::Relaxed);
                if signalled != 0 || terminal_gone() {
                    // Give the event loop a moment to leave on its own.
                    std::thread::sleep(Duration::from_millis(300));
                    restore_terminal();
                    std::process::exit(if signalled != 0 {
                        signalled as i32
                    } else {
                        129
                    });
                }
            });
    }
    let jobs = Jobs::start(opts.source())?;
    let mut settings = opts.settings.clone();
    let mut wanted = jobs.request(Request::Load(settings.clone()));
    let mut app = App::new(no_color, settings.balance);
    app.tour_on_load = opts.tour;
    let mut stamp = file_stamp(&opts);
    let mut last_check = Instant::now();
    let mut dirty = true;
    let mut last_progress = 0;
    let mut instant_polls = 0u32;
    let mut last_alive = Instant::now();
    let mut last_secs = None;
    loop {
        if dirty {
            // One synchronized update per frame: terminals that support it
            // show the whole frame at once (no tearing over slow SSH links);
            // others ignore the sequence.
            let _ = crossterm::execute!(
                std::io::stdout(),
                crossterm::terminal::BeginSynchronizedUpdate
            );
            let drawn = terminal
                .draw(|f| draw::draw(f, &mut app, &jobs.progress, jobs.phase()))
                .map_err(|e| Error::Internal(format!("drawing: {e}")));
            let _ = crossterm::execute!(
                std::io::stdout(),
                crossterm::terminal::EndSynchronizedUpdate
            );
            drawn?;
            dirty = false;
        }
        let polled = Instant::now();
        let ready =
            event::poll(Duration::from_millis(100)).map_err(|e| Error::Internal(e.to_string()))?;
        // A terminal that went away makes poll return at once, forever: leave
        // instead of spinning (SIGHUP normally gets here first).
        if !ready && polled.elapsed() < Duration::from_millis(5) {
            instant_polls += 1;
            if instant_polls > 500 {
                break;
            }
        } else {
            instant_polls = 0;
        }
        if ready {
            match event::read().map_err(|e| Error::Internal(e.to_string()))? {
                Event::Key(k) if k.kind != KeyEventKind::Release => {
                    app.on_key(k);
                    dirty = true;
                    if let Some(text) = app.clipboard.take() {
                        use std::io::Write;
                        let mut out = std::io::stdout();
                        let _ = out
                            .write_all(osc52(&text).as_bytes())
                            .and_then(|_| out.flush());
                    }
                }
                Event::Mouse(m) => dirty |= app.on_mouse(m),
                Event::Resize(..) => dirty = true,
                _ => {}
            }
        }
        // While a job runs, the audit computes first what the panel on
        // screen reads, and Pass@(K,T) the benchmark selected.
        if jobs.phase() != "idle" {
            settings.focus.set(app.panel.parts());
            let bench = app
                .data
                .as_ref()
                .and_then(|d| select::current(&d.audit, &app.sel).0);
            settings.focus.set_benchmark(bench.as_deref());
        }
        if app.busy() {
            dirty = true;
        }
        // The status line's count of an analysis's seconds.
        let secs = app.computing_secs();
        if secs != last_secs {
            last_secs = secs;
            dirty = true;
        }
        if app.quit || stop.load(std::sync::atomic::Ordering::Relaxed) != 0 {
            break;
        }
        if let Some(p) = app.pending.take() {
            app.chosen(&mut settings);
            wanted = jobs.request(match p {
                Pending::Reload => Request::Load(settings.clone()),
                Pending::Recompute => Request::Audit(settings.clone()),
            });
            dirty = true;
        }
        while let Ok(r) = jobs.results.try_recv() {
            if let Outcome::Fatal(what) = r.outcome {
                // A bug in the worker: leave (the guard restores the
                // terminal; main reports it and exits 3).
                return Err(Error::Internal(format!("background job: {what}")));
            }
            if r.generation != wanted {
                continue;
            }
            match r.outcome {
                Outcome::Partial(d) => app.set_data(d),
                Outcome::Read(f) => app.read_on(r.read, f),
                Outcome::Done(d) => {
                    // A full re-read says so; a read-on's audit retires its
                    // records from the status line.
                    let reread = r.reloaded && opts.follow && app.data.is_some();
                    let full = reread && app.appended.is_none();
                    app.set_data(d);
                    app.audited(r.read);
                    if full {
                        app.message = Some(app::REREAD.into());
                    }
                }
                Outcome::Unchanged | Outcome::Fatal(_) => {}
                Outcome::Failed(e) => app.failed(&e.to_string()),
            }
            dirty = true;
        }
        // Redraw the gauge while loading, only when the counters moved.
        let p = jobs
            .progress
            .bytes_done
            .load(std::sync::atomic::Ordering::Relaxed);
        if jobs.phase() != "idle" && p != last_progress {
            last_progress = p;
            dirty = true;
        }
        if last_alive.elapsed() > Duration::from_secs(1) {
            last_alive = Instant::now();
            if terminal_gone() {
                break;
            }
        }
        // Sizes and times are looked at every FOLLOW_EVERY, also while an
        // audit runs; a read-on starts once no load is under way and as long
        // as the last read-on took has passed since it ended.
        if opts.follow
            && !opts.paths.is_empty()
            && app.data.is_some()
            && last_check.elapsed() >= FOLLOW_EVERY
            && jobs.may_read_on()
        {
            last_check = Instant::now();
            let now = file_stamp(&opts);
            if now != stamp {
                stamp = now;
                jobs.read_on();
            }
        }
    }
    drop(_guard);
    let signalled = stop.load(std::sync::atomic::Ordering::Relaxed);
    if signalled != 0 {
        std::process::exit(signalled as i32);
    }
    // Quitting from a failed load is a failed run (exit 2), reported after
    // the terminal is restored.
    let failure = app.failure();
    // The process exits once this returns: the audit and the rollouts are
    // not freed one by one (11 M rollouts: 0.23 s with the shell's prompt
    // waiting), the exit hands their pages back at once.
    std::mem::forget(app);
    std::mem::forget(jobs);
    match failure {
        Some(why) => Err(Error::Usage(why)),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    /// RFC 4648's base64 test vectors, inside OSC 52.
    #[test]
    fn osc52_carries_the_text_in_base64() {
        for (text, b64) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(super::osc52(text), format!("\x1b]52;c;{b64}\x07"));
        }
        // Past ASCII: the UTF-8 bytes of `Δ` (0xCE 0x94) and `→` (0xE2 0x86 0x92).
        assert_eq!(super::osc52("Δ→"), "\x1b]52;c;zpTihpI=\x07");
    }
}
