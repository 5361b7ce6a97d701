//! Small widgets shared by the panels and the charts.

use ratatui::layout::Rect;
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
