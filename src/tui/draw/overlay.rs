//! What is drawn over a panel: the tour's box and the help, their text wrapped to the width there is.

use super::*;

/// The tour's box at the bottom of the body; returns the area left above it
/// for the panel the step talks about.
pub(super) fn tour_box(
    f: &mut Frame,
    body: Rect,
    t: &crate::tui::app::Tour,
    theme: &Theme,
) -> Rect {
    let Some(step) = t.steps.get(t.at) else {
        return body;
    };
    let inner_w = body.width.saturating_sub(2).max(1) as usize;
    let paragraphs = [step.reading.as_str(), "", step.topic.idea()];
    let needed: usize = paragraphs.iter().map(|p| wrapped_lines(p, inner_w)).sum();
    let cap = if body.height >= 30 { 13 } else { 6 };
    let h = (needed as u16 + 2)
        .min(cap)
        .min(body.height.saturating_sub(6));
    let [rest, area] = Layout::vertical([Constraint::Min(3), Constraint::Length(h)]).areas(body);
    let more = needed as u16 + 2 > h;
    let lines = vec![
        Line::from(Span::styled(
            step.reading.clone(),
            Style::default().add_modifier(Modifier::BOLD),
        )),
        Line::from(""),
        Line::from(step.topic.idea()),
    ];
    let block = Block::bordered()
        .border_style(theme.accent())
        .title(format!(
            " tour {}/{} · {} ",
            t.at + 1,
            t.steps.len(),
            step.topic.title()
        ))
        .title_bottom(if more {
            " n next · N back · ↑↓ more · q leave "
        } else {
            " n next · N back · q leave "
        });
    f.render_widget(Clear, area);
    f.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .scroll((t.scroll, 0))
            .block(block),
        area,
    );
    rest
}

/// Width of the help's keys column (`keymap::help_lines`: 16 right-aligned
/// and two spaces).
const KEYS_COLUMN: usize = 18;

/// A line wrapped at word boundaries to `width`, each line after the first
/// indented by `indent` columns (its first `indent` characters are a
/// column of their own). Too narrow for that: the line as it is.
pub(super) fn hanging(line: &str, width: usize, indent: usize) -> Vec<String> {
    if line.chars().count() <= width || width < indent + 12 {
        return vec![line.to_string()];
    }
    let head: String = line.chars().take(indent).collect();
    let room = width - indent;
    let body: String = line.chars().skip(indent).collect();
    let out = crate::tui::widgets::wrap_words(&body, room, room);
    out.into_iter()
        .enumerate()
        .map(|(i, l)| {
            if i == 0 {
                format!("{head}{l}")
            } else {
                format!("{:indent$}{l}", "")
            }
        })
        .collect()
}

/// Lines a paragraph takes when wrapped at word boundaries to `width`.
fn wrapped_lines(text: &str, width: usize) -> usize {
    let (mut lines, mut used) = (1, 0);
    for word in text.split(' ') {
        let w = word.chars().count();
        if used > 0 && used + 1 + w > width {
            lines += 1;
            used = 0;
        }
        used += if used > 0 { 1 + w } else { w };
        while used > width {
            lines += 1;
            used -= width;
        }
    }
    lines
}

pub(super) fn help(f: &mut Frame, panel: Panel, scroll: u16) {
    let area = f.area();
    let w = area.width.saturating_sub(4).min(100);
    let h = area.height.saturating_sub(2);
    let rect = Rect::new(area.x + (area.width - w) / 2, area.y + 1, w, h);
    let bold = Style::default().add_modifier(Modifier::BOLD);
    // Keys first (they fit), then what the panel measures.
    let mut lines: Vec<Line> = vec![Line::from(Span::styled("Keys", bold))];
    // A key's description wraps under itself, past the keys column.
    let inner = usize::from(w.saturating_sub(2));
    lines.extend(
        help_lines()
            .iter()
            .flat_map(|l| hanging(l, inner, KEYS_COLUMN))
            .map(Line::from),
    );
    lines.push(Line::from(""));
    lines.push(Line::from(Span::styled(
        format!("{} — how to read it", panel.title()),
        bold,
    )));
    for l in panel.explain().lines() {
        lines.push(Line::from(l.to_string()));
    }
    lines.push(Line::from(""));
    lines.push(Line::from("Every figure carries its n; intervals are 95% (cluster bootstrap over tasks unless noted). A cell cut to fit its column ends in … (←→ scroll it); the selected row's cut cells are given in full on the table's bottom border, or below its rows. ↑↓ scroll; any other key closes."));
    f.render_widget(Clear, rect);
    f.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .scroll((scroll, 0))
            .block(Block::bordered().title("help (↑↓ scroll, any other key closes)")),
        rect,
    );
}
