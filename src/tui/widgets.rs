//! Small widgets shared by the panels and the charts.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::Line;
use ratatui::widgets::{Block, Paragraph, Wrap};
use ratatui::Frame;

/// `text` as it fits `width` columns: cut with an ellipsis, so that a cut
/// number (`n=10003` in 7 columns) is not read as another (`n=1000`).
pub fn cut(text: &str, width: usize) -> String {
    match text.char_indices().nth(width) {
        Some(_) if width > 0 => {
            let end = text.char_indices().nth(width - 1).map_or(0, |(i, _)| i);
            format!("{}…", &text[..end])
        }
        Some(_) => String::new(),
        None => text.to_string(),
    }
}

/// `text` cut to `width` characters at its start: its last `width − 1`
/// after `…` if it is longer ([`cut`]'s mirror, for a place whose end
/// tells it apart).
pub fn cut_start(text: &str, width: usize) -> String {
    let n = text.chars().count();
    if n <= width {
        return text.to_string();
    }
    if width == 0 {
        return String::new();
    }
    let start = text
        .char_indices()
        .nth(n - (width - 1))
        .map_or(text.len(), |(i, _)| i);
    format!("…{}", &text[start..])
}

/// `text` broken at its spaces into lines of `first` columns, then of
/// `rest` (at least one); a word longer than its line is cut where the line
/// ends and goes on on the next.
pub fn wrap_words(text: &str, first: usize, rest: usize) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut cur = String::new();
    let mut used = 0;
    let room = |out: &Vec<String>| if out.is_empty() { first } else { rest.max(1) };
    for word in text.split(' ') {
        let mut word: Vec<char> = word.chars().collect();
        if used > 0 && used + 1 + word.len() > room(&out) {
            out.push(std::mem::take(&mut cur));
            used = 0;
        }
        if used > 0 {
            cur.push(' ');
            used += 1;
        }
        while used + word.len() > room(&out) {
            let tail = word.split_off(room(&out).saturating_sub(used).min(word.len()));
            cur.extend(word);
            out.push(std::mem::take(&mut cur));
            used = 0;
            word = tail;
        }
        used += word.len();
        cur.extend(word);
    }
    out.push(cur);
    out
}

/// A box's title as it fits: on its top border as many of its words as
/// fit `first` columns (a row count may follow them; a dash that would end
/// them goes on), the rest on up to `most` lines of `width` inside the box,
/// the last cut with `…` if it is still too long ([`cut`]).
pub fn title_lines(title: &str, first: usize, width: usize, most: usize) -> (String, Vec<String>) {
    if title.chars().count() <= first {
        return (title.to_string(), Vec::new());
    }
    if most == 0 {
        return (cut(title, first), Vec::new());
    }
    // The border's part is a prefix of the title (words are joined as they
    // were); a dash that would end it starts the lines inside instead.
    let top = wrap_words(title, first, width).swap_remove(0);
    let top = top.strip_suffix(" —").unwrap_or(&top);
    let rest = title.get(top.len()..).unwrap_or_default().trim_start();
    let mut inside = wrap_words(rest, width, width);
    if inside.len() > most {
        let last = inside.split_off(most - 1).join(" ");
        inside.push(cut(&last, width));
    }
    (top.to_string(), inside)
}

/// `block` drawn with the lines `inside` at the top within it (a title's
/// words that did not fit its border: [`title_lines`]), and the area left
/// within returned.
pub fn with_lines_inside(f: &mut Frame, area: Rect, block: Block, inside: Vec<String>) -> Rect {
    let within = block.inner(area);
    f.render_widget(block, area);
    let [lines, rest] = Layout::vertical([
        Constraint::Length(u16::try_from(inside.len()).unwrap_or(u16::MAX)),
        Constraint::Min(0),
    ])
    .areas(within);
    let inside: Vec<Line> = inside.into_iter().map(Line::from).collect();
    f.render_widget(Paragraph::new(inside), lines);
    rest
}

/// A bordered block `width` columns wide, its title cut to fit inside the
/// corners ([`cut`]: a cut title ends in `…`, never mid-word unmarked).
pub fn bordered(title: &str, width: u16) -> Block<'static> {
    Block::bordered().title(cut(title, usize::from(width.saturating_sub(2))))
}

/// A bordered box of wrapped lines.
pub fn lines_box(f: &mut Frame, area: Rect, title: &str, lines: Vec<String>) {
    f.render_widget(
        boxed(title, area.width, lines.into_iter().map(Line::from)),
        area,
    );
}

fn boxed<'a>(title: &str, width: u16, lines: impl Iterator<Item = Line<'a>>) -> Paragraph<'a> {
    Paragraph::new(lines.collect::<Vec<_>>())
        .wrap(Wrap { trim: true })
        .block(bordered(title, width))
}

/// The rows [`lines_box`] takes to show `lines` whole `width` columns wide,
/// its borders included (as wrapped when drawn).
pub fn lines_box_height(lines: &[String], width: u16) -> u16 {
    let rows = boxed("", width, lines.iter().map(|l| Line::from(l.as_str()))).line_count(width);
    u16::try_from(rows).unwrap_or(u16::MAX)
}
