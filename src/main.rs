//! Thin entry point: parse the command line, run headless or the TUI, map
//! errors to exit codes (0 ok, 1 gate tripped, 2 bad input/usage/output, 3 bug).

use clap::Parser;
use rl_audit::cli::Cli;
use rl_audit::error::Error;

fn main() {
    rl_audit::stage::tune_allocator();
    // A bug must not print a raw panic; say what happened and ask for a report.
    std::panic::set_hook(Box::new(|info| {
        let what = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_default();
        let at = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        eprintln!("rl-audit: internal error{at}: {what}");
    }));
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            std::process::exit(code);
        }
    };
    let code = match std::panic::catch_unwind(|| run(cli)) {
        Ok(Ok(code)) => code,
        Ok(Err(e)) => {
            eprintln!("rl-audit: {e}");
            e.exit_code()
        }
        Err(_) => {
            eprintln!("rl-audit: internal error (this is a bug in rl-audit; please report it with the command you ran)");
            3
        }
    };
    std::process::exit(code);
}

fn run(cli: Cli) -> Result<i32, Error> {
    let opts = cli.into_options()?;
    if let Some(out) = &opts.summarize {
        match rl_audit::headless::summarize(&opts, out)? {
            rl_audit::headless::Summarized::Summary(w) => eprintln!(
                "rl-audit: summary of {} records ({} bytes) written to {}",
                w.records.saturating_sub(1),
                w.bytes,
                out.display()
            ),
            rl_audit::headless::Summarized::Aggregates(rows) => eprintln!(
                "rl-audit: {rows} per-task aggregate rows written to {}",
                out.display()
            ),
        }
        return Ok(0);
    }
    if opts.headless {
        let gates = rl_audit::headless::run_to_exit(&opts)?;
        eprintln!("rl-audit: report written to {}", opts.out.display());
        for n in &gates.notes {
            eprintln!("rl-audit: gate note: {n}");
        }
        for t in &gates.tripped {
            eprintln!("rl-audit: gate tripped: {t}");
        }
        Ok(if gates.tripped.is_empty() { 0 } else { 1 })
    } else {
        rl_audit::tui::run(opts).map(|_| 0)
    }
}
