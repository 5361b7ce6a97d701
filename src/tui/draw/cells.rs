//! A table on screen: column widths that fit, cells cut or scrolled to them, the grid's cells squeezed so their verdict stays.

use super::*;

pub(super) fn widths(t: &TableData, total: u16) -> Vec<u16> {
    let n = t
        .header
        .len()
        .max(t.rows.iter().map(|r| r.cells.len()).max().unwrap_or(0));
    let spans = spans_notes(t);
    let natural: Vec<usize> = (0..n)
        .map(|i| {
            let h = t.header.get(i).map_or(0, |x| x.chars().count());
            let c = t
                .rows
                .iter()
                .filter(|r| !(spans && r.is_note()))
                .take(500)
                .filter_map(|r| r.cells.get(i))
                .map(|x| x.text.chars().count())
                .max()
                .unwrap_or(0);
            h.max(c).max(2)
        })
        .collect();
    let mut w: Vec<usize> = natural.iter().map(|&x| x.min(60)).collect();
    // Shrink the widest columns until the table fits.
    let budget = total.saturating_sub(3 + n as u16) as usize;
    while w.iter().sum::<usize>() > budget {
        let (i, &m) = w.iter().enumerate().max_by_key(|x| *x.1).unwrap_or((0, &0));
        if m <= 6 {
            break;
        }
        w[i] = m - 1;
    }
    // Room to spare goes to the columns cut at 60 (long details, titles).
    let mut spare = budget.saturating_sub(w.iter().sum::<usize>());
    for (x, &want) in w.iter_mut().zip(&natural) {
        let more = want.saturating_sub(*x).min(spare);
        *x += more;
        spare -= more;
    }
    w.into_iter().map(|x| x as u16).collect()
}

/// Whether `t`'s notes are drawn across its columns, over the row, rather
/// than in the first ([`crate::tui::table::Row::is_note`]): it has more
/// than one.
pub(super) fn spans_notes(t: &TableData) -> bool {
    t.header.len() > 1
}

/// A grid cell as it fits `width` columns: its spaces dropped from the
/// right first (`42.8→53.4 +10.5 n ▲` → `42.8→53.4 +10.5n▲`), so that the
/// verdict at its end stays; then cut.
pub(super) fn squeezed(text: &str, width: usize) -> String {
    let mut s = text.to_string();
    while s.chars().count() > width {
        match s.rfind(' ') {
            Some(i) => {
                s.remove(i);
            }
            None => break,
        }
    }
    cut(&s, width)
}

/// A table's header row: each column's name on one line, or, when a name
/// too long for its column is whole on two, every name on up to two
/// ([`name_lines`]:
/// at 80 columns `step NLL base` and `step NLL RL` read `step NLL` over
/// `base` and `RL`, not `step NL…` twice).
pub(super) fn header_row(header: &[String], width_of: impl Fn(usize) -> usize) -> Row<'static> {
    let two = header_lines(header, &width_of) == 2;
    Row::new(header.iter().enumerate().map(|(j, h)| {
        let w = width_of(j);
        if !two {
            return Cell::from(cut(h, w));
        }
        let lines: Vec<Line> = name_lines(h, w).into_iter().map(Line::from).collect();
        Cell::from(ratatui::text::Text::from(lines))
    }))
    .height(if two { 2 } else { 1 })
    .style(Style::default().add_modifier(Modifier::BOLD))
}

/// A column's name on up to two lines of `width`: the whole words that fit
/// the first (a first word longer than the line cut with `…`), the rest on
/// the second, cut with `…` if still too long. Words are never split
/// across the lines (`benchma…`, not `benchmar` over `k`).
pub(super) fn name_lines(name: &str, width: usize) -> Vec<String> {
    if name.chars().count() <= width {
        return vec![name.to_string()];
    }
    let words: Vec<&str> = name.split(' ').collect();
    let mut first = String::new();
    let mut taken = 0;
    for w in &words {
        let len = first.chars().count() + usize::from(!first.is_empty()) + w.chars().count();
        if len > width {
            break;
        }
        if !first.is_empty() {
            first.push(' ');
        }
        first.push_str(w);
        taken += 1;
    }
    if taken == 0 {
        first = cut(words[0], width);
        taken = 1;
    }
    let rest = words[taken..].join(" ");
    if rest.is_empty() {
        vec![first]
    } else {
        vec![first, cut(&rest, width)]
    }
}

/// The lines [`header_row`] takes: two when a column's name too long for
/// one line is whole on two (a second line that only continues a cut name,
/// `length-match…` over `d`, is not worth a row of the table).
fn header_lines(header: &[String], width_of: &impl Fn(usize) -> usize) -> usize {
    let whole_on_two = header.iter().enumerate().any(|(j, h)| {
        let w = width_of(j);
        h.chars().count() > w && name_lines(h, w).join(" ") == *h
    });
    if whole_on_two {
        2
    } else {
        1
    }
}

/// A row's cut cells ([`cut_cells`]) as the table's bottom border gives
/// them, each in full after its column's name — `length-matched d: 3.26
/// [+2.0, +4.9] · benchmark: frozenlake` — the most hidden first, so that
/// what a narrow screen hides most is what its border shows; empty when
/// every cell fits.
pub(super) fn on_border(mut hidden: Vec<CutCell>) -> String {
    // Stable: columns hiding as much stay in their order.
    hidden.sort_by_key(|c| std::cmp::Reverse(c.over));
    hidden
        .into_iter()
        .map(|c| c.text)
        .collect::<Vec<_>>()
        .join(" · ")
}

/// A cell that its column cuts, in full after its column's name.
pub(super) struct CutCell {
    /// The characters its column hides.
    over: usize,
    /// `name: text` (the text alone under a column without a name).
    text: String,
    /// The characters of `name: ` before the text.
    name: usize,
}

/// The cells of a row that `widths` cut (after a sideways scroll of
/// `hscroll`), in their columns' order.
pub(super) fn cut_cells(
    header: &[String],
    cells: &[crate::tui::table::Cell],
    widths: &[u16],
    hscroll: usize,
) -> Vec<CutCell> {
    cells
        .iter()
        .enumerate()
        .filter_map(|(j, c)| {
            let shown = if j == 0 || c.keep_end {
                c.text.as_str()
            } else {
                scrolled(&c.text, hscroll)
            };
            // A cut cell shows width − 1 characters and the ellipsis.
            let over = shown
                .chars()
                .count()
                .checked_sub(usize::from(*widths.get(j)?))
                .filter(|&o| o > 0)?;
            let (text, name) = crate::tui::table::named(header.get(j), &c.text);
            Some(CutCell { over, text, name })
        })
        .collect()
}

/// A note row's text as [`cut_cells`] gives a cut cell, when `room`
/// columns cut it.
fn cut_note(text: &str, room: usize) -> Vec<CutCell> {
    // A cut shows room − 1 characters and the ellipsis.
    match text.chars().count() {
        n if n > room => vec![CutCell {
            over: n - room.saturating_sub(1),
            text: text.to_string(),
            name: 0,
        }],
        _ => Vec::new(),
    }
}

/// `lines` ([`whole_lines`]) at the bottom of `area`, the inside of a
/// table's box, below a rule across the box naming them (`├─ selected row
/// in full ───┤`), and the area above returned; all of `area` when there
/// are none.
fn whole_below(f: &mut Frame, area: Rect, lines: Vec<String>) -> Rect {
    if lines.is_empty() {
        return area;
    }
    let h = u16::try_from(lines.len() + 1).unwrap_or(u16::MAX);
    let [rest, below] = Layout::vertical([Constraint::Min(0), Constraint::Length(h)]).areas(area);
    let [rule, below] = Layout::vertical([Constraint::Length(1), Constraint::Min(0)]).areas(below);
    let label = "─ selected row in full ";
    let dashes = usize::from(area.width).saturating_sub(label.chars().count());
    let text = format!(
        "├{}┤",
        cut(
            &format!("{label}{}", "─".repeat(dashes)),
            usize::from(area.width)
        )
    );
    // On the box's borders too, which it joins.
    let across = Rect {
        x: rule.x.saturating_sub(1),
        width: rule.width + 2,
        ..rule
    };
    f.render_widget(Paragraph::new(Line::from(text)), across);
    let lines: Vec<Line> = lines.into_iter().map(Line::from).collect();
    f.render_widget(Paragraph::new(lines), below);
    rest
}

/// Lines, at most, that a selected row's cut cells take inside its table's
/// box ([`whole_lines`]).
pub(super) const WHOLE_LINES: usize = 4;

/// Rows a table keeps on screen (or all it has, if fewer) when a selected
/// row's cut cells take lines inside its box; with fewer, they go on the
/// bottom border instead.
const ROWS_BESIDE_WHOLE: usize = 5;

/// The selected row's cut cells in full, `width` columns wide, for the
/// lines inside the table's box when its bottom border cannot hold them:
/// each cell on lines of its own, in its columns' order, its text wrapped
/// under itself after its column's name; at most [`WHOLE_LINES`], the last
/// cut with `…` if more would follow. Empty when the border holds them all
/// (or nothing is cut).
pub(super) fn whole_lines(cells: &[CutCell], width: usize) -> Vec<String> {
    let joined: usize = cells.iter().map(|c| c.text.chars().count() + 3).sum();
    if cells.is_empty() || joined.saturating_sub(3) <= width {
        return Vec::new();
    }
    let mut lines: Vec<String> = cells
        .iter()
        .flat_map(|c| super::overlay::hanging(&c.text, width, c.name))
        .map(|l| cut(&l, width))
        .collect();
    if lines.len() > WHOLE_LINES {
        let last = lines.split_off(WHOLE_LINES - 1).swap_remove(0);
        lines.push(cut(&format!("{last} …"), width));
    }
    lines
}

/// `text` from character `skip` on (the sideways scroll of long cells).
pub(super) fn scrolled(text: &str, skip: usize) -> &str {
    match text.char_indices().nth(skip) {
        Some((i, _)) => &text[i..],
        None if skip == 0 => text,
        None => "",
    }
}

/// Lines a table's title may take inside its box, below the border.
pub(super) const TITLE_LINES_INSIDE: usize = 2;

/// A table's title (`title`, or its own) as drawn `width` columns wide: on
/// the top border the sideways scroll first, then as many of its words as
/// fit before its row count, which stays whole; the rest on up to two
/// lines inside the box ([`title_lines`]). The count follows the title on
/// the border, or, when the title goes on inside, sits at the border's
/// right end, out of the sentence's way.
fn table_title(t: &TableData, title: &str, hscroll: usize, width: u16) -> TableTitle {
    let head = format!(
        "{}{}",
        if hscroll > 0 {
            format!("[scrolled {hscroll} →] ")
        } else {
            String::new()
        },
        if title.is_empty() { &t.title } else { title },
    );
    let n = t.rows.len();
    let count = match t.filtered_from {
        Some(all) => format!(" ({n} of {all} row{})", if all == 1 { "" } else { "s" }),
        None => format!(" ({n} row{})", if n == 1 { "" } else { "s" }),
    };
    let inner = usize::from(width.saturating_sub(2));
    let room = inner.saturating_sub(count.chars().count());
    let (top, inside) = title_lines(&head, room, inner, TITLE_LINES_INSIDE);
    TableTitle { top, count, inside }
}

/// A table's title as laid out by [`table_title`].
struct TableTitle {
    /// The title's words on the top border.
    top: String,
    /// ` (n rows)`; ` (n of m rows)` when a filter kept n of m.
    count: String,
    /// The title's words that did not fit the border.
    inside: Vec<String>,
}

impl TableTitle {
    /// The block bordering the table, the title's top part and row count
    /// on its top border.
    fn block(&self) -> Block<'static> {
        if self.inside.is_empty() {
            Block::bordered().title(format!("{}{}", self.top, self.count))
        } else {
            Block::bordered()
                .title(self.top.clone())
                .title(Line::from(self.count.trim_start().to_string()).right_aligned())
        }
    }
}

/// The rows [`table`] takes to show `t` whole `width` columns wide: its
/// rows, header, borders and the lines of its title inside the box.
pub fn table_height(t: &TableData, title: &str, hscroll: usize, width: u16) -> u16 {
    let inside = table_title(t, title, hscroll, width).inside.len();
    let widths = widths(t, width);
    let width_of = |j: usize| widths.get(j).map_or(usize::MAX, |&w| usize::from(w));
    let header = header_lines(&t.header, &width_of);
    u16::try_from(t.rows.len() + 2 + header + inside).unwrap_or(u16::MAX)
}

/// Where a table's rows are on screen, for a click to pick one: the area
/// they take (a line a row) and the first one drawn; on the Budget grid,
/// where its level columns begin and how far apart they are.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RowsAt {
    pub area: Rect,
    pub first: usize,
    /// The grid's first level column's x and the columns' step.
    pub levels: Option<(u16, u16)>,
}

impl RowsAt {
    /// The row and, on the grid, the level column at (`x`, `y`).
    pub fn at(&self, x: u16, y: u16) -> Option<(usize, Option<usize>)> {
        let a = self.area;
        if !(a.x..a.x + a.width).contains(&x) || !(a.y..a.y + a.height).contains(&y) {
            return None;
        }
        let level = self
            .levels
            .and_then(|(start, step)| x.checked_sub(start).map(|d| usize::from(d / step.max(1))));
        Some((self.first + usize::from(y - a.y), level))
    }
}

/// Draws `t` in `area`, `selected` highlighted, and says where its rows
/// went ([`RowsAt`]).
pub fn table(
    f: &mut Frame,
    area: Rect,
    t: &TableData,
    selected: Option<usize>,
    theme: &Theme,
    title: &str,
    hscroll: usize,
) -> RowsAt {
    table_in(f, area, t, (selected, true), theme, title, hscroll)
}

/// [`table`], the selected row's cut cells allowed inside its box or not
/// (`selected.1`: not beside a box that shows the row whole, a
/// trajectory's step, where they would say the same again).
pub(super) fn table_in(
    f: &mut Frame,
    area: Rect,
    t: &TableData,
    (selected, inside): (Option<usize>, bool),
    theme: &Theme,
    title: &str,
    hscroll: usize,
) -> RowsAt {
    let widths = widths(t, area.width);
    let width_of = |j: usize| widths.get(j).map_or(usize::MAX, |&w| usize::from(w));
    let header = header_row(&t.header, width_of);
    let heading = table_title(t, title, hscroll, area.width);
    // Notes go across the row, after the highlight symbol's column.
    let spans = spans_notes(t);
    let mark_w = u16::from(selected.is_some() && !t.rows.is_empty());
    let note_room = usize::from(area.width.saturating_sub(2 + mark_w));
    // The selected row's cells that are cut, in full on the bottom border.
    let n = t.rows.len();
    // Where the border cannot hold them, they take lines inside the box,
    // below the rows, if enough rows stay on screen.
    let room = usize::from(area.width.saturating_sub(2));
    let cells = selected
        .and_then(|s| t.rows.get(s.min(n.saturating_sub(1))))
        .map(|r| match spans && r.is_note() {
            true => cut_note(&r.cells[0].text, note_room),
            false => cut_cells(&t.header, &r.cells, &widths, hscroll),
        })
        .unwrap_or_default();
    let header_h = header_lines(&t.header, &width_of) as u16;
    let mut below = if inside {
        whole_lines(&cells, room)
    } else {
        Vec::new()
    };
    let rows_h =
        usize::from(area.height.saturating_sub(2 + header_h)).saturating_sub(heading.inside.len());
    if rows_h.saturating_sub(below.len() + 1) < n.min(ROWS_BESIDE_WHOLE) {
        below.clear();
    }
    let mut block = heading.block();
    if below.is_empty() && !cells.is_empty() {
        block = block.title_bottom(cut(&on_border(cells), room));
    }
    // The title's words that did not fit the border, inside it at the top.
    let area = with_lines_inside(f, area, block, heading.inside);
    let area = whole_below(f, area, below);
    // Only the rows on screen are made (a cell's tasks at 11 M rollouts are
    // 26,000 rows: made whole, 0.1 s a redraw): the window ratatui's table
    // would scroll to, the selected row at its bottom once past the first
    // screenful (the header takes a line or two; a row one).
    let height = usize::from(area.height.saturating_sub(header_h)).max(1);
    let offset = selected.map_or(0, |s| s.min(n.saturating_sub(1)).saturating_sub(height - 1));
    let rows: Vec<Row> = t
        .rows
        .iter()
        .skip(offset)
        .take(height)
        .map(|r| {
            if spans && r.is_note() {
                // Drawn over the row once the table is.
                return Row::new([Cell::from("")]).style(theme.mark(r.mark));
            }
            // The first column stays put; the others scroll sideways. A
            // place shows its end (its line), unscrolled.
            Row::new(r.cells.iter().enumerate().map(|(j, c)| {
                let shown = if c.keep_end {
                    cut_start(&c.text, width_of(j))
                } else if j == 0 {
                    cut(&c.text, width_of(j))
                } else {
                    cut(scrolled(&c.text, hscroll), width_of(j))
                };
                Cell::from(shown).style(theme.mark(c.mark))
            }))
            .style(theme.mark(r.mark))
        })
        .collect();
    let widget = Table::new(rows, widths.into_iter().map(Constraint::Length))
        .header(header)
        .row_highlight_style(Style::default().add_modifier(Modifier::REVERSED))
        .highlight_symbol("▶");
    let mut state = TableState::default()
        .with_selected(selected.filter(|_| n > 0).map(|s| s.min(n - 1) - offset));
    f.render_stateful_widget(widget, area, &mut state);
    if spans {
        let x = area.x + mark_w;
        let first = area.y + header_h;
        let visible = t.rows.iter().skip(offset).take(height);
        for (i, r) in visible.enumerate().filter(|(_, r)| r.is_note()) {
            let y = first + u16::try_from(i).unwrap_or(u16::MAX);
            if y >= area.y + area.height {
                break;
            }
            let style = theme.mark(r.cells[0].mark);
            let text = cut(&r.cells[0].text, note_room);
            f.buffer_mut().set_stringn(x, y, text, note_room, style);
        }
    }
    let shown = u16::try_from(n.saturating_sub(offset)).unwrap_or(u16::MAX);
    RowsAt {
        area: Rect {
            y: area.y + header_h,
            height: area.height.saturating_sub(header_h).min(shown),
            ..area
        },
        first: offset,
        levels: None,
    }
}
