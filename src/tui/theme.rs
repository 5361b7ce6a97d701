//! Colours and emphasis, with a plain variant for NO_COLOR.

use ratatui::style::{Color, Modifier, Style};

use super::table::Mark;

const SERIES: [Color; 6] = [
    Color::Cyan,
    Color::Magenta,
    Color::Yellow,
    Color::Green,
    Color::Blue,
    Color::Red,
];

pub struct Theme {
    pub no_color: bool,
}

impl Theme {
    pub fn mark(&self, m: Mark) -> Style {
        match (m, self.no_color) {
            (Mark::None, _) => Style::default(),
            (Mark::VeryBad, true) => {
                Style::default().add_modifier(Modifier::BOLD | Modifier::UNDERLINED)
            }
            (Mark::Bad, true) => Style::default().add_modifier(Modifier::ITALIC),
            (Mark::Good, true) => Style::default(),
            (Mark::VeryBad, false) => Style::default().fg(Color::Red).add_modifier(Modifier::BOLD),
            (Mark::Bad, false) => Style::default().fg(Color::Yellow),
            (Mark::Good, false) => Style::default().fg(Color::Green),
        }
    }
    pub fn series(&self, i: usize) -> Style {
        if self.no_color {
            Style::default()
        } else {
            Style::default().fg(SERIES[i % SERIES.len()])
        }
    }
    pub fn accent(&self) -> Style {
        if self.no_color {
            Style::default().add_modifier(Modifier::BOLD)
        } else {
            Style::default()
                .fg(Color::Cyan)
                .add_modifier(Modifier::BOLD)
        }
    }
}
