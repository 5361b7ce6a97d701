//! `F`: a regular expression over the actions and observations of every
//! loaded trajectory (found by `analysis::grep::search`); each hit is a row,
//! and Enter opens its trajectory at that turn.

use std::sync::atomic::Ordering;

use crate::analysis::grep::{search, Hit, Progress};
use crate::schema::LogSet;
use crate::tui::table::{Cell, Mark, TableData, Target};

/// Hits listed at most (the search stops there).
pub const LIMIT: usize = 1000;

/// Characters of context either side of a match.
const CONTEXT: usize = 24;

/// The text around a hit with the match set off: `…before «match» after…`.
pub fn snippet(h: &Hit) -> String {
    let (s, e) = h.at;
    let before: Vec<char> = h.text[..s].chars().collect();
    let after: Vec<char> = h.text[e..].chars().collect();
    let b0 = before.len().saturating_sub(CONTEXT);
    let a1 = after.len().min(CONTEXT);
    let one_line = |x: String| x.replace(['\n', '\r', '\t'], " ");
    one_line(format!(
        "{}{}«{}»{}{}",
        if b0 > 0 { "…" } else { "" },
        before[b0..].iter().collect::<String>(),
        &h.text[s..e],
        after[..a1].iter().collect::<String>(),
        if a1 < after.len() { "…" } else { "" }
    ))
}

/// What the search view shows while the records are being read: how many
/// of the `total` trajectories are read, and the hits so far.
pub fn searching(pattern: &str, progress: &Progress, total: usize) -> TableData {
    let mut t = TableData::new("search", format!("/{pattern}/ — searching…"), &["match"]);
    let read = progress.read.load(Ordering::Relaxed);
    // Files read at once may find more than the search keeps.
    let hits = progress.hits.load(Ordering::Relaxed).min(LIMIT);
    t.push_text(
        vec![format!(
            "reading every trajectory for /{pattern}/: {read} of {total} read ({:.0}%), {hits} hit{} so far (Esc stops)",
            100.0 * read as f64 / total.max(1) as f64,
            if hits == 1 { "" } else { "s" }
        )],
        Mark::None,
        Target::None,
    );
    t
}

/// The results table of `pattern` (an invalid pattern or an unreadable file
/// is a one-row table saying so); `wanted` false stops the search;
/// `progress` counts as it goes.
pub fn table(
    set: &LogSet,
    pattern: &str,
    wanted: &(dyn Fn() -> bool + Sync),
    progress: &Progress,
) -> TableData {
    let mut t = TableData::new(
        "search",
        format!("/{pattern}/"),
        &["record", "run", "task", "turn", "in", "match"],
    );
    let re = match regex::Regex::new(pattern) {
        Ok(re) => re,
        Err(e) => {
            t.push_text(
                vec![format!("invalid pattern {pattern:?}: {e}")],
                Mark::Bad,
                Target::None,
            );
            return t;
        }
    };
    let found = match search(set, &re, LIMIT, wanted, progress) {
        Ok(f) => f,
        Err(e) => {
            t.push_text(vec![format!("{e}")], Mark::Bad, Target::None);
            return t;
        }
    };
    t.title = format!(
        "{} hits in {} of {} trajectories{}; Enter: that turn",
        found.hits.len(),
        found.matching,
        found.read,
        if found.truncated {
            format!(", stopped at the first {LIMIT} hits")
        } else {
            String::new()
        }
    );
    for h in &found.hits {
        let tr = &set.trajectories[h.traj];
        t.push(
            vec![
                Cell::place(set.loc_text(tr.loc)),
                Cell::text(set.name(tr.run)),
                Cell::text(set.name(tr.task)),
                Cell::count(h.step as u64 + 1),
                Cell::text(h.field),
                Cell::text(snippet(h)),
            ],
            Mark::None,
            Target::Step(tr.loc, h.step),
        );
    }
    if t.rows.is_empty() {
        t.push_text(vec!["no match".into()], Mark::None, Target::None);
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_running_search_says_how_far_it_has_read() {
        let p = Progress::default();
        p.read.store(250, Ordering::Relaxed);
        p.hits.store(1, Ordering::Relaxed);
        let t = searching("retry", &p, 1000);
        assert_eq!(t.title, "/retry/ — searching…");
        assert_eq!(t.rows.len(), 1);
        assert_eq!(
            t.rows[0].cells[0].text,
            "reading every trajectory for /retry/: 250 of 1000 read (25%), 1 hit so far (Esc stops)"
        );
        p.hits.store(7, Ordering::Relaxed);
        assert!(searching("retry", &p, 1000).rows[0].cells[0]
            .text
            .ends_with("7 hits so far (Esc stops)"));
    }
}
