//! Overview panel: what was loaded, and the headline findings.

use crate::analysis::Audit;
use crate::jobs::Loaded;
use crate::report::findings::{findings as headline, Severity};
use crate::schema::LogSet;
use crate::tui::panel::Panel;
use crate::tui::table::{Cell, Mark, TableData, Target};

/// Headline findings, each leading to the panel that explains it.
pub fn findings(l: &Loaded) -> TableData {
    let mut t = TableData::new(
        "findings",
        "Headline findings (Enter: go to panel)",
        &["finding", "where", "detail"],
    );
    for f in headline(&l.audit) {
        let mark = match f.severity {
            Severity::Good => Mark::Good,
            Severity::Info => Mark::None,
            Severity::Warning => Mark::Bad,
            Severity::Problem => Mark::VeryBad,
        };
        t.push(
            vec![
                Cell::text(f.kind),
                Cell::text(f.place),
                Cell::text(f.detail),
            ],
            mark,
            Target::Panel(Panel::of(f.section)),
        );
    }
    if t.rows.is_empty() {
        t.push_text(
            vec!["no findings".into(), String::new(), String::new()],
            Mark::None,
            Target::None,
        );
    }
    t
}

/// What was loaded, in a few lines.
pub fn inputs(set: &LogSet, a: &Audit) -> Vec<String> {
    let c = set.record_counts();
    let mut lines = vec![
        format!(
            "{} file(s): {}",
            set.files.len(),
            set.files
                .iter()
                .take(3)
                .cloned()
                .collect::<Vec<_>>()
                .join(", ")
        ),
        format!(
            "records: {} trajectories ({} evaluation, {} training), {} probes, {} checkpoints",
            c["trajectory"], a.agg.evaluation, a.agg.training, c["probe"], c["checkpoint"]
        ),
    ];
    if let Some((_, parts)) = set.skipped_summary() {
        lines.push(format!("skipped (--lenient): {parts}"));
    }
    if !set.unknown_kinds.is_empty() {
        lines.push(format!("unknown kinds: {:?}", set.unknown_kinds));
    }
    if !set.ignored_files.is_empty() {
        lines.push(format!(
            "{} file(s) passed over (no rollouts), e.g. {}",
            set.ignored_files.len(),
            set.ignored_files[0]
        ));
    }
    let pairs: Vec<String> = a
        .pairs
        .iter()
        .map(|p| format!("{}: {} → {}", p.benchmark, p.base, p.rl))
        .collect();
    lines.push(if pairs.is_empty() {
        "pairs: none (no run says method: base; use --compare BASE:RL)".into()
    } else {
        format!("pairs: {}", pairs.join("; "))
    });
    lines.extend(a.notes.iter().take(4).map(|n| format!("note: {n}")));
    lines
}
