//! Small widgets shared by the panels and the charts.

use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Block, Paragraph, Wrap};
use ratatui::Frame;

/// A bordered box of wrapped lines.
pub fn lines_box(f: &mut Frame, area: Rect, title: &str, lines: Vec<String>) {
    f.render_widget(boxed(title, lines.into_iter().map(Line::from)), area);
}

fn boxed<'a>(title: &str, lines: impl Iterator<Item = Line<'a>>) -> Paragraph<'a> {
    Paragraph::new(lines.collect::<Vec<_>>())
        .wrap(Wrap { trim: true })
        .block(Block::bordered().title(title.to_string()))
}

/// The rows [`lines_box`] takes to show `lines` whole `width` columns wide,
/// its borders included (as wrapped when drawn).
pub fn lines_box_height(lines: &[String], width: u16) -> u16 {
    let rows = boxed("", lines.iter().map(|l| Line::from(l.as_str()))).line_count(width);
    u16::try_from(rows).unwrap_or(u16::MAX)
}
