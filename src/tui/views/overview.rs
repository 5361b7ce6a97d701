//! Overview panel: what was loaded, and the headline findings.

use crate::analysis::{Audit, Part};
use crate::jobs::Loaded;
use crate::report::findings::{findings as headline, Severity};
use crate::schema::LogSet;
use crate::tui::panel::Panel;
use crate::tui::table::{Cell, Mark, TableData, Target};

/// Headline findings, each leading to the panel that explains it. While
/// the audit computes: the findings of the analyses that are in (each
/// already the complete audit's), then a row for each analysis to come.
pub fn findings(l: &Loaded, stopped: bool) -> TableData {
    let a = &l.audit;
    let title = if a.is_complete() {
        "Headline findings (Enter: go to panel)".to_string()
    } else if stopped {
        format!(
            "Headline findings of the {} of {} analyses computed before the audit stopped (Enter: go to panel)",
            a.parts_done(),
            Part::ALL.len()
        )
    } else {
        format!(
            "Headline findings so far: {} of {} analyses in, those to come below (Enter: go to panel)",
            a.parts_done(),
            Part::ALL.len()
        )
    };
    let mut t = TableData::new("findings", title, &["finding", "where", "detail"]);
    for f in headline(a) {
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
    for p in &a.pending {
        t.push_text(
            vec![
                if stopped { "not computed" } else { "to come" }.into(),
                p.title().to_string(),
                super::pending::state(a, *p, stopped).to_string(),
            ],
            Mark::None,
            Target::None,
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

/// The files read: up to three named; of more, the first two and how many
/// others (the line was "4 file(s): a, b, c", as if c were the last).
fn files_line(files: &[String]) -> String {
    let shown = if files.len() > 3 { 2 } else { files.len() };
    let mut names = files[..shown].join(", ");
    if shown < files.len() {
        names.push_str(&format!(", +{} more", files.len() - shown));
    }
    format!("{} file(s): {names}", files.len())
}

/// The records loaded, by kind: `N trajectories (E evaluation, T training),
/// P probes, C checkpoints`.
pub fn records(set: &LogSet, a: &Audit) -> String {
    let c = set.record_counts();
    // Evaluation and training are told apart by the aggregates.
    let split = if a.is_pending(Part::Aggregates) {
        "evaluation and training: being counted".to_string()
    } else {
        format!(
            "{} evaluation, {} training",
            a.agg.evaluation, a.agg.training
        )
    };
    format!(
        "{} trajectories ({split}), {} probes, {} checkpoints",
        c["trajectory"], c["probe"], c["checkpoint"]
    )
}

/// What was loaded, in a few lines.
pub fn inputs(set: &LogSet, a: &Audit) -> Vec<String> {
    let mut lines = vec![
        files_line(&set.files),
        format!("records: {}", records(set, a)),
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

#[cfg(test)]
mod tests {
    use super::files_line;

    #[test]
    fn the_files_line_says_how_many_it_leaves_out() {
        let files = |n: usize| (1..=n).map(|i| format!("f{i}")).collect::<Vec<_>>();
        assert_eq!(files_line(&files(1)), "1 file(s): f1");
        assert_eq!(files_line(&files(3)), "3 file(s): f1, f2, f3");
        assert_eq!(files_line(&files(4)), "4 file(s): f1, f2, +2 more");
        assert_eq!(files_line(&files(12)), "12 file(s): f1, f2, +10 more");
    }
}
