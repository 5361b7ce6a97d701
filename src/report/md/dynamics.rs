//! `report.md`: training dynamics (SPEC §2.5).

use std::fmt::Write;

use crate::analysis::Audit;
use crate::report::format::*;

pub fn dynamics(md: &mut String, audit: &Audit) {
    let _ = writeln!(md, "## Training dynamics\n");
    let _ = writeln!(
        md,
        "Every numeric checkpoint metric against `step`: first, last, change and the least-squares slope with its 95% t-interval (n − 2 degrees of freedom; none below 3 checkpoints). A run is *divergent* when `r_multi`'s slope interval is above 0 while `r_single`'s is below 0 — the paper's DeepCoder-MT run: R_multi +0.331, R_single −0.097.\n"
    );
    if audit.dynamics.is_empty() {
        let _ = writeln!(md, "_No `checkpoint` records (`{{kind: \"checkpoint\", run, step, r_multi, r_single, …}}`)._\n");
        return;
    }
    let _ = writeln!(md, "| run | metric | checkpoints | first | last | change | slope per step | 95% CI |\n|---|---|---|---|---|---|---|---|");
    for t in &audit.dynamics {
        let _ = writeln!(
            md,
            "| {} | {} | {} | {:.4} | {:.4} | {:+.4} | {} | {} |",
            esc(&t.run),
            esc(&t.metric),
            t.checkpoints,
            t.first,
            t.last,
            t.change,
            t.slope.map_or("–".into(), |s| format!("{s:+.3e}")),
            t.slope_ci
                .map_or("–".into(), |(l, h)| format!("[{l:+.3e}, {h:+.3e}]"))
        );
    }
    md.push('\n');
    for d in &audit.divergence {
        let text = if !d.has_metrics {
            "needs both r_multi and r_single".to_string()
        } else if d.divergent {
            "**divergent**: trajectory reward rises while single-step reward falls".to_string()
        } else {
            "not divergent".to_string()
        };
        let _ = writeln!(md, "- {}: {text}.", d.run);
    }
    md.push('\n');
}
