//! Small widgets shared by the panels and the charts.

use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Block, Paragraph, Wrap};
use ratatui::Frame;

/// A bordered box of wrapped lines.
pub fn lines_box(f: &mut Frame, area: Rect, title: &str, lines: Vec<String>) {
    let p = Paragraph::new(lines.into_iter().map(Line::from).collect::<Vec<_>>())
        .wrap(Wrap { trim: true })
        .block(Block::bordered().title(title.to_string()));
    f.render_widget(p, area);
}
