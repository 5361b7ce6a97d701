//! Overview panel: what was loaded, and the headline findings.

use crate::analysis::{Audit, Part};
use crate::jobs::Loaded;
use crate::report::findings::{findings as headline, Severity};
use crate::schema::LogSet;
use crate::tui::panel::Panel;
use crate::tui::table::{Cell, Mark, TableData, Target};

/// Headline findings, each leading to where it is shown (its cell or row,
/// else its panel). While the audit computes: the findings of the analyses
/// that are in (each already the complete audit's), then a row for each
/// analysis to come.
pub fn findings(l: &Loaded, stopped: bool) -> TableData {
    let a = &l.audit;
    // What Enter does, in every state.
    const ENTER: &str = "Enter: go to where each is shown";
    let title = if a.is_complete() {
        format!("Headline findings ({ENTER})")
    } else if stopped {
        format!(
            "Headline findings of the {} of {} analyses computed before the audit stopped ({ENTER})",
            a.parts_done(),
            Part::ALL.len()
        )
    } else {
        format!(
            "Headline findings so far: {} of {} analyses in, those to come below ({ENTER})",
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
            f.at.map_or(Target::Panel(Panel::of(f.section)), Target::At),
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

/// The files read: up to three by name. Of more, by folder: those of one
/// folder by name (the first two and how many others); those of several
/// (an rLLM run writes a file an episode) as the folders under the one they
/// share, each with its count, the first three and how many others — a
/// line that fits the box rather than two paths that fill it.
fn files_line(files: &[String]) -> String {
    fn parent(f: &str) -> &str {
        f.rfind('/').map_or("", |i| &f[..=i])
    }
    let n = files.len();
    if n <= 3 {
        return format!("{n} file(s): {}", files.join(", "));
    }
    // Folders in the order their first file was read, with their counts.
    let mut folders: Vec<(&str, usize)> = Vec::new();
    for f in files {
        let p = parent(f);
        match folders.iter_mut().rev().find(|(q, _)| *q == p) {
            Some(e) => e.1 += 1,
            None => folders.push((p, 1)),
        }
    }
    let more = |shown: usize, total: usize, what: &str| {
        if shown < total {
            format!(", +{} more{what}", total - shown)
        } else {
            String::new()
        }
    };
    if let [(folder, _)] = folders[..] {
        let names: Vec<&str> = files[..2].iter().map(|f| &f[folder.len()..]).collect();
        let place = if folder.is_empty() {
            String::new()
        } else {
            format!(" in {folder}")
        };
        return format!("{n} file(s){place}: {}{}", names.join(", "), more(2, n, ""));
    }
    // The folder every one is under (a whole path segment).
    let first = folders[0].0;
    let mut common = first.len();
    for (f, _) in &folders[1..] {
        common = common.min(
            first
                .bytes()
                .zip(f.bytes())
                .take_while(|(a, b)| a == b)
                .count(),
        );
    }
    let under = parent(&first[..common]);
    let shown: Vec<String> = folders
        .iter()
        .take(3)
        .map(|(f, c)| match &f[under.len()..] {
            "" => format!("./ ({c})"),
            rel => format!("{rel} ({c})"),
        })
        .collect();
    let place = if under.is_empty() {
        String::new()
    } else {
        format!(" under {under}")
    };
    format!(
        "{n} file(s) in {} folders{place}: {}{}",
        folders.len(),
        shown.join(", "),
        more(3, folders.len(), " folders")
    )
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
        "pairs: none (P picks one, as --compare BASE:RL)".into()
    } else {
        format!("pairs: {}", pairs.join("; "))
    });
    let unaudited: Vec<String> = a
        .unaudited_training()
        .map(|r| format!("{} ({})", r.run, r.rollouts))
        .collect();
    if !unaudited.is_empty() {
        lines.push(format!(
            "training rollouts not audited: {} (A on BudgetMix, 8, audits one, as --audit RUN)",
            unaudited.join(", ")
        ));
    }
    lines.extend(a.notes.iter().take(4).map(|n| format!("note: {n}")));
    if a.notes.len() > 4 {
        lines.push(format!(
            "… {} more notes (report.md lists every one: --headless)",
            a.notes.len() - 4
        ));
    }
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

    #[test]
    fn files_of_one_folder_are_named_in_it_and_of_several_by_folder() {
        let s = |v: &[&str]| v.iter().map(|f| f.to_string()).collect::<Vec<_>>();
        assert_eq!(
            files_line(&s(&[
                "demo/a.jsonl",
                "demo/b.jsonl",
                "demo/c.jsonl",
                "demo/d.jsonl"
            ])),
            "4 file(s) in demo/: a.jsonl, b.jsonl, +2 more"
        );
        // Five folders under runs/, counted in the order they were read;
        // the top folder's own files as ./ (the first folder, b/x/, is
        // 'runs/b/x/' less 'runs/').
        let files = s(&[
            "runs/b/x/1.json",
            "runs/b/x/2.json",
            "runs/a/3.json",
            "runs/b/x/4.json",
            "runs/meta.json",
            "runs/c/5.json",
            "runs/d/6.json",
        ]);
        assert_eq!(
            files_line(&files),
            "7 file(s) in 5 folders under runs/: b/x/ (3), a/ (1), ./ (1), +2 more folders"
        );
        // Folders that share a prefix of their names, not a folder: cut at
        // the last whole folder.
        assert_eq!(
            files_line(&s(&["run-1/a", "run-1/b", "run-2/c", "run-2/d"])),
            "4 file(s) in 2 folders: run-1/ (2), run-2/ (2)"
        );
    }
}
