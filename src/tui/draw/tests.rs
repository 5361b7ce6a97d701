use super::*;
use crate::tui::table::{Mark, Target};

/// What `draw` draws on a `w`×`h` screen, line by line.
fn drawn<R>(w: u16, h: u16, draw: impl FnOnce(&mut Frame) -> R) -> Vec<String> {
    let backend = ratatui::backend::TestBackend::new(w, h);
    let mut term = ratatui::Terminal::new(backend).expect("a test terminal");
    term.draw(|f| {
        draw(f);
    })
    .expect("drawn");
    let buffer = term.backend().buffer();
    (0..h)
        .map(|y| (0..w).map(|x| buffer[(x, y)].symbol()).collect())
        .collect()
}

#[test]
fn long_cells_use_the_width_there_is() {
    let mut t = TableData::new("t", "t", &["what", "detail"]);
    t.push_text(vec!["x".into(), "d".repeat(100)], Mark::None, Target::None);
    // 160 columns: borders and gaps take 3 + 2; both columns fit whole.
    assert_eq!(widths(&t, 160), vec![4, 100]);
    // 80 columns: the detail gets what is left.
    assert_eq!(widths(&t, 80), vec![4, 71]);
}

#[test]
fn a_help_line_wraps_under_its_description() {
    let l = format!(
        "{:>16}  {}",
        "← / h", "Budget: tighter level; Cost: lower ceiling"
    );
    // Fits: as it is.
    assert_eq!(hanging(&l, 60, 18), vec![l.clone()]);
    // 40 columns: 22 for the description, broken at spaces.
    assert_eq!(
        hanging(&l, 40, 18),
        vec![
            "           ← / h  Budget: tighter level;".to_string(),
            "                  Cost: lower ceiling".to_string(),
        ]
    );
    // A word longer than the room is cut; too narrow a screen: as is.
    assert_eq!(
        hanging(&format!("{:>16}  abcdefghijklmnop qr", "x"), 30, 18),
        vec![
            format!("{:>16}  abcdefghijkl", "x"),
            format!("{:18}mnop qr", ""),
        ]
    );
    assert_eq!(hanging(&l, 25, 18), vec![l.clone()]);
}

#[test]
fn a_grid_cell_keeps_its_verdict() {
    assert_eq!(squeezed("42.8→53.4 +10.5 n ▲", 19), "42.8→53.4 +10.5 n ▲");
    assert_eq!(squeezed("42.8→53.4 +10.5 n ▲", 18), "42.8→53.4 +10.5 n▲");
    assert_eq!(squeezed("42.8→53.4 +10.5 n ▲", 17), "42.8→53.4 +10.5n▲");
    assert_eq!(squeezed("42.8→53.4 +10.5 n ▲", 16), "42.8→53.4+10.5n▲");
    assert_eq!(squeezed("42.8→53.4 +10.5 n ▲", 10), "42.8→53.4…");
}

#[test]
fn a_cut_cell_ends_in_an_ellipsis() {
    assert_eq!(cut("11.47 (n=10003)", 13), "11.47 (n=100…");
    assert_eq!(cut("11.47 (n=10003)", 15), "11.47 (n=10003)");
    assert_eq!(cut("11.47 (n=10003)", 14), "11.47 (n=1000…");
    assert_eq!(cut("héllo", 3), "hé…");
    assert_eq!(cut("ab", 1), "…");
    assert_eq!(cut("ab", 0), "");
    assert_eq!(cut("", 0), "");
    // Drawn in 20 columns: borders, the highlight column and the gaps
    // leave the two columns 15, "what" takes 4, the detail 11.
    let mut t = TableData::new("t", "t", &["what", "detail"]);
    t.push_text(
        vec!["x".into(), "n=1234567890123456".into()],
        Mark::None,
        Target::None,
    );
    let theme = Theme { no_color: true };
    let lines = drawn(20, 4, |f| table(f, f.area(), &t, Some(0), &theme, "", 0));
    assert_eq!(lines[2], "│▶x    n=12345678… │");
    // The cut cell in full on the bottom border, itself cut to fit.
    assert_eq!(lines[3], "└detail: n=1234567…┘");
}

/// A record's place too long for its column loses its start, so that the
/// line telling records apart shows (`demo/eval.jsonl.gz:…` showed none);
/// the bottom border still gives it whole.
#[test]
fn a_place_is_cut_at_its_start() {
    assert_eq!(cut_start("demo/eval.jsonl.gz:1396", 10), "…l.gz:1396");
    assert_eq!(cut_start("a.jsonl:4", 9), "a.jsonl:4");
    assert_eq!(cut_start("héllo", 3), "…lo");
    assert_eq!(cut_start("ab", 1), "…");
    assert_eq!(cut_start("ab", 0), "");
    let mut t = TableData::new("t", "t", &["record", "n"]);
    t.push(
        vec![
            crate::tui::table::Cell::place("demo/eval.jsonl.gz:1396"),
            crate::tui::table::Cell::count(5u64),
        ],
        Mark::None,
        Target::None,
    );
    let theme = Theme { no_color: true };
    // The two columns share 15: n takes 2 (no column is narrower), the
    // place 13 (`…` and its last 12).
    let lines = drawn(20, 4, |f| table(f, f.area(), &t, Some(0), &theme, "", 0));
    assert_eq!(
        lines,
        [
            "┌t (1 row)─────────┐",
            "│ record        n  │",
            "│▶…sonl.gz:1396 5  │",
            "└record: demo/eval…┘",
        ]
    );
}

/// A column's name too long for it goes on two lines at a space; a word
/// too long for the line is cut with `…`, never split.
#[test]
fn a_long_column_name_takes_two_lines() {
    assert_eq!(name_lines("turn", 4), ["turn"]);
    assert_eq!(name_lines("step NLL base", 8), ["step NLL", "base"]);
    assert_eq!(name_lines("benchmark", 8), ["benchma…"]);
    assert_eq!(name_lines("share of Δ", 7), ["share", "of Δ"]);
    assert_eq!(name_lines("failures base | RL", 7), ["failur…", "base |…"]);
    assert_eq!(name_lines("length-matched d", 7), ["length…", "d"]);
    assert_eq!(name_lines("ab", 0), [""]);
    // Drawn 20 wide: the columns share 20 − 6 = 14, the widest narrowed in
    // turn to 6, 6 and 2 (no column is narrower); `step NLL` is whole on
    // two lines, so the header takes two, and `length-matched d` shows
    // what it can.
    let mut t = TableData::new("t", "t", &["step NLL", "length-matched d", "n"]);
    t.push_text(
        vec!["0.85".into(), "+2.69".into(), "7".into()],
        Mark::None,
        Target::None,
    );
    let theme = Theme { no_color: true };
    assert_eq!(table_height(&t, "", 0, 20), 5);
    let lines = drawn(20, 5, |f| table(f, f.area(), &t, None, &theme, "", 0));
    assert_eq!(
        lines,
        [
            "┌t (1 row)─────────┐",
            "│step   lengt… n   │",
            "│NLL    d          │",
            "│0.85   +2.69  7   │",
            "└──────────────────┘",
        ]
    );
    // Where no name is whole on two lines, one: a cut name alone is not
    // worth a row.
    let mut t = TableData::new("t", "t", &["length-matched d", "n"]);
    t.push_text(vec!["+2.69".into(), "7".into()], Mark::None, Target::None);
    assert_eq!(table_height(&t, "", 0, 14), 4);
    let lines = drawn(14, 4, |f| table(f, f.area(), &t, None, &theme, "", 0));
    assert_eq!(
        lines,
        [
            "┌t (1 row)───┐",
            "│length… n   │",
            "│+2.69   7   │",
            "└────────────┘",
        ]
    );
}

#[test]
fn words_wrap_at_spaces_and_a_long_one_is_cut() {
    use crate::tui::widgets::wrap_words;
    assert_eq!(
        wrap_words("the quick brown fox", 9, 5),
        ["the quick", "brown", "fox"]
    );
    assert_eq!(
        wrap_words("abcdefghij kl", 4, 4),
        ["abcd", "efgh", "ij", "kl"]
    );
    // No room on the first line: the words start on the second.
    assert_eq!(wrap_words("ab cd", 0, 3), ["", "ab", "cd"]);
    assert_eq!(wrap_words("", 5, 5), [""]);
}

/// A title too long for its border: as many words as fit there, the rest
/// on up to two lines inside the box, the last cut with `…`; the row
/// count stays on the border, at its right end, and the box is that much
/// taller.
#[test]
fn a_long_title_goes_on_inside_its_box() {
    assert_eq!(title_lines("Budget", 10, 10, 2), ("Budget".into(), vec![]));
    assert_eq!(
        title_lines("Budget grid", 4, 10, 0),
        ("Bud…".into(), vec![])
    );
    assert_eq!(
        title_lines("one two three four five six", 7, 9, 2),
        ("one two".into(), vec!["three".into(), "four fiv…".into()])
    );
    // A dash does not end the border's part: it starts the next line.
    assert_eq!(
        title_lines("a b — c d", 5, 20, 2),
        ("a b".into(), vec!["— c d".into()])
    );
    let mut t = TableData::new("t", "a title too long for its border", &["task"]);
    t.push_text(vec!["t1".into()], Mark::None, Target::None);
    assert_eq!(table_height(&t, "", 0, 20), 6);
    assert_eq!(table_height(&t, "short", 0, 20), 4);
    let theme = Theme { no_color: true };
    let lines = drawn(20, 6, |f| table(f, f.area(), &t, None, &theme, "", 0));
    assert_eq!(
        lines,
        [
            "┌a title────(1 row)┐",
            "│too long for its  │",
            "│border            │",
            "│task              │",
            "│t1                │",
            "└──────────────────┘",
        ]
    );
}

/// The loading screen: the gauge with what is read, and its explanation
/// wrapped to the width there is (it was one line, cut mid-word at 80
/// columns).
#[test]
fn the_loading_screen_wraps_its_explanation() {
    use std::sync::atomic::Ordering::Relaxed;
    let p = Progress::default();
    p.bytes_total.store(91_600_000, Relaxed);
    p.bytes_done.store(45_800_000, Relaxed);
    p.records.store(650_000, Relaxed);
    let lines = drawn(40, 8, |f| loading(f, f.area(), &p, "idle"));
    // Half of the 38 columns filled; the 31-character label centred,
    // from column 3 (of 0–37), over the filled part.
    assert_eq!(
        lines,
        [
            "┌loading…──────────────────────────────┐",
            "│███45.8 of 91.6 MB, 650000 records    │",
            "└──────────────────────────────────────┘",
            "Reading and validating the logs in the  ",
            "background; the panels appear once they ",
            "are in, each filling in as its analyses ",
            "finish. q quits.                        ",
            "                                        ",
        ]
    );
}

#[test]
fn a_rows_cut_cells_are_named_most_hidden_first() {
    use crate::tui::table::Cell;
    let header = ["a", "b", "", "d"].map(String::from);
    let cells = ["abcdef", "xy", "0123456789", "12345"].map(Cell::text);
    // Widths 4, 2, 5, 4: a hides 2, b fits, the third hides 5, d 1.
    assert_eq!(
        on_border(cut_cells(&header, &cells, &[4, 2, 5, 4], 0)),
        "0123456789 · a: abcdef · d: 12345"
    );
    // Scrolled 3 sideways, the first column stays: the third shows
    // 3456789 (hides 2), d shows 45 (fits); a and the third tie and
    // keep their order.
    assert_eq!(
        on_border(cut_cells(&header, &cells, &[4, 2, 5, 4], 3)),
        "a: abcdef · 0123456789"
    );
    assert_eq!(on_border(cut_cells(&header, &cells, &[6, 2, 10, 5], 0)), "");
}

/// The rows on screen alone make the screen ratatui's table makes of
/// every row with its own scrolling: for every length, height and
/// selection (past the end included), the same buffer.
#[test]
fn a_table_drawn_from_its_visible_rows_is_the_whole_tables_screen() {
    use ratatui::backend::TestBackend;
    use ratatui::buffer::Buffer;
    let theme = Theme { no_color: false };
    // ratatui's Table of all the rows, scrolled by its own state (the
    // way `table` drew before it made only the visible rows).
    let whole = |f: &mut Frame, t: &TableData, selected: Option<usize>| {
        let rows: Vec<Row> = t
            .rows
            .iter()
            .map(|r| {
                Row::new(
                    r.cells
                        .iter()
                        .map(|c| Cell::from(c.text.clone()).style(theme.mark(c.mark))),
                )
                .style(theme.mark(r.mark))
            })
            .collect();
        let n = t.rows.len();
        let title = format!("{} ({} row{})", t.title, n, if n == 1 { "" } else { "s" });
        let header = Row::new(t.header.iter().map(|h| Cell::from(h.as_str())))
            .style(Style::default().add_modifier(Modifier::BOLD));
        let widths = widths(t, f.area().width)
            .into_iter()
            .map(Constraint::Length);
        let widget = Table::new(rows, widths)
            .header(header)
            .block(Block::bordered().title(title))
            .row_highlight_style(Style::default().add_modifier(Modifier::REVERSED))
            .highlight_symbol("▶");
        let mut state = TableState::default().with_selected(selected.filter(|_| n > 0));
        f.render_stateful_widget(widget, f.area(), &mut state);
    };
    let screen = |h: u16, draw: &dyn Fn(&mut Frame)| -> Buffer {
        let mut term = ratatui::Terminal::new(TestBackend::new(40, h)).unwrap();
        term.draw(|f| draw(f)).unwrap();
        term.backend().buffer().clone()
    };
    for n in [0usize, 1, 2, 5, 9, 10, 11, 30] {
        let mut t = TableData::new("t", "rows", &["task", "n"]);
        for i in 0..n {
            let mark = if i % 3 == 0 { Mark::Bad } else { Mark::None };
            t.push_text(vec![format!("task-{i}"), i.to_string()], mark, Target::None);
        }
        for h in [3u16, 4, 5, 8, 12, 40] {
            for selected in [
                None,
                Some(0),
                Some(1),
                Some(4),
                Some(9),
                Some(10),
                Some(29),
                Some(35),
            ] {
                let want = screen(h, &|f| whole(f, &t, selected));
                let got = screen(h, &|f| {
                    table(f, f.area(), &t, selected, &theme, "", 0);
                });
                assert_eq!(got, want, "{n} rows, height {h}, selected {selected:?}");
            }
        }
    }
}

#[test]
fn sideways_scroll_counts_characters() {
    assert_eq!(scrolled("héllo wörld", 6), "wörld");
    assert_eq!(scrolled("abc", 0), "abc");
    assert_eq!(scrolled("abc", 9), "");
}

/// A selected row's cut cells too long for the bottom border take lines
/// inside the box below its rows, each after its column's name and
/// wrapped under itself, when enough rows stay on screen; else the border
/// gives what it can hold.
#[test]
fn a_selected_rows_cut_cells_go_inside_the_box_when_the_border_is_short() {
    let mut t = TableData::new("t", "t", &["what", "detail"]);
    t.push_text(
        vec!["x".into(), "alpha beta gamma delta epsilon zeta".into()],
        Mark::None,
        Target::None,
    );
    for i in 1..8 {
        t.push_text(vec!["x".into(), format!("d{i}")], Mark::None, Target::None);
    }
    let theme = Theme { no_color: true };
    // 30 columns: the two columns share 25, "what" 4, the detail 21
    // (20 characters and `…`). The border's 28 columns cannot hold
    // `detail: ` and the 35 characters; 28 columns inside hold the name
    // and `alpha beta gamma`, then `delta epsilon zeta` under it. 12
    // rows: 9 for rows below the header, 3 of them for the rule and the
    // two lines, 6 for rows (at least 5 must stay).
    let mut rows_at = None;
    let lines = drawn(30, 12, |f| {
        rows_at = Some(table(f, f.area(), &t, Some(0), &theme, "", 0))
    });
    assert_eq!(
        lines,
        [
            "┌t (8 rows)──────────────────┐",
            "│ what detail                │",
            "│▶x    alpha beta gamma del… │",
            "│ x    d1                    │",
            "│ x    d2                    │",
            "│ x    d3                    │",
            "│ x    d4                    │",
            "│ x    d5                    │",
            "├─ selected row in full ─────┤",
            "│detail: alpha beta gamma    │",
            "│        delta epsilon zeta  │",
            "└────────────────────────────┘",
        ]
    );
    // The six rows drawn, for a click: lines 2–7 inside the borders; the
    // rule and the lines below them are no row.
    let rows_at = rows_at.unwrap();
    assert_eq!(rows_at.area, Rect::new(1, 2, 28, 6));
    assert_eq!(rows_at.at(1, 2), Some((0, None)));
    assert_eq!(rows_at.at(28, 7), Some((5, None)));
    assert_eq!(rows_at.at(5, 8), None);
    assert_eq!(rows_at.at(0, 3), None);
    assert_eq!(rows_at.at(5, 1), None);
    // 9 rows: 6 below the header, 3 for rows once the lines are in: too
    // few, so the border gives the cell, cut to its 28 columns.
    // The same eight lines above it as on the taller screen.
    let mut want = lines[..8].to_vec();
    want.push("└detail: alpha beta gamma de…┘".to_string());
    let lines = drawn(30, 9, |f| table(f, f.area(), &t, Some(0), &theme, "", 0));
    assert_eq!(lines, want);
}

/// The lines a selected row's cut cells take inside the box: each cell on
/// its own lines in its columns' order, at most four, the fourth ending in
/// `…` when more would follow; none when the border holds them.
#[test]
fn whole_lines_keep_the_columns_order_and_stop_at_four() {
    use crate::tui::table::Cell;
    let header = ["a", "b", "c"].map(String::from);
    let cells = [
        Cell::text("one two three four"),
        Cell::text("xy"),
        Cell::text("five six seven eight nine ten"),
    ];
    // a hides 14, c 26: on the border c comes first; inside, a does.
    let hidden = cut_cells(&header, &cells, &[4, 2, 3], 0);
    assert_eq!(
        on_border(cut_cells(&header, &cells, &[4, 2, 3], 0)),
        "c: five six seven eight nine ten · a: one two three four"
    );
    // 56 characters joined: a border of 56 holds them, one of 55 does not.
    assert!(whole_lines(&hidden, 56).is_empty());
    // 20 columns: each text goes on 3 columns in, under its first word,
    // after its name; 16: five lines, so the fourth ends in `…`.
    assert_eq!(
        whole_lines(&hidden, 20),
        [
            "a: one two three",
            "   four",
            "c: five six seven",
            "   eight nine ten"
        ]
    );
    assert_eq!(
        whole_lines(&hidden, 16),
        [
            "a: one two three",
            "   four",
            "c: five six",
            "   seven eight …"
        ]
    );
}

/// A note goes across its table's row rather than widening its first
/// column, cut at the box, and in full below the rows when selected.
#[test]
fn a_note_is_drawn_across_the_columns() {
    let text = "note: no gain table for bm2: it has no evaluation rollouts";
    let mut t = TableData::new("t", "t", &["benchmark", "level"]);
    t.push_note(text);
    t.push_text(vec!["b".into(), "25%".into()], Mark::None, Target::None);
    assert_eq!(widths(&t, 80), vec![9, 5]);
    let theme = Theme { no_color: true };
    let lines = drawn(40, 8, |f| table(f, f.area(), &t, Some(1), &theme, "t", 0));
    assert_eq!(
        lines,
        [
            "┌t (2 rows)────────────────────────────┐",
            "│ benchmark level                      │",
            "│ note: no gain table for bm2: it has …│",
            "│▶b         25%                        │",
            "│                                      │",
            "│                                      │",
            "│                                      │",
            "└──────────────────────────────────────┘",
        ]
    );
    // Selected, cut: in full below.
    let lines = drawn(40, 8, |f| table(f, f.area(), &t, Some(0), &theme, "t", 0));
    assert_eq!(
        lines,
        [
            "┌t (2 rows)────────────────────────────┐",
            "│ benchmark level                      │",
            "│▶note: no gain table for bm2: it has …│",
            "│ b         25%                        │",
            "├─ selected row in full ───────────────┤",
            "│note: no gain table for bm2: it has no│",
            "│evaluation rollouts                   │",
            "└──────────────────────────────────────┘",
        ]
    );
    // One column: nothing to go across.
    let mut one = TableData::new("t", "t", &["what"]);
    one.push_note("a note");
    assert_eq!(widths(&one, 80), vec![6]);
}
