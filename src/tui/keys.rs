//! The key map: every command has a name, its keys and a help line. The
//! help overlay and the command bar are generated from this list, so they
//! cannot drift from what the keys really do.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
    Quit,
    /// q: back out, or quit at the top.
    Back,
    /// Esc: back out, never quit.
    Escape,
    Help,
    NextPanel,
    PrevPanel,
    Panel(usize),
    Up,
    Down,
    Left,
    Right,
    PageUp,
    PageDown,
    Top,
    Bottom,
    Sort,
    SortReverse,
    Enter,
    Filter,
    Export,
    NextBenchmark,
    NextPair,
    KUp,
    KDown,
    ToggleMode,
    ToggleBalance,
    Reload,
}

pub struct Binding {
    pub command: Command,
    pub keys: &'static str,
    pub name: &'static str,
    pub help: &'static str,
}

pub const BINDINGS: &[Binding] = &[
    Binding {
        command: Command::Back,
        keys: "q",
        name: "back",
        help: "back out of a drill-down or help; quit at the top",
    },
    Binding {
        command: Command::Escape,
        keys: "Esc",
        name: "back",
        help: "back out of a drill-down, clear the filter (never quits)",
    },
    Binding {
        command: Command::Help,
        keys: "?",
        name: "help",
        help: "this help, with what the current panel measures",
    },
    Binding {
        command: Command::NextPanel,
        keys: "Tab / Shift-Tab",
        name: "panel",
        help: "next / previous panel (or 1–8)",
    },
    Binding {
        command: Command::Down,
        keys: "↑↓ / j k",
        name: "move",
        help: "move the selection",
    },
    Binding {
        command: Command::PageDown,
        keys: "PgUp PgDn / g G / Home End",
        name: "page",
        help: "ten rows up or down; first or last row",
    },
    Binding {
        command: Command::Sort,
        keys: "s / S",
        name: "sort",
        help: "sort the table by the next column (numbers as numbers); S reverses",
    },
    Binding {
        command: Command::Right,
        keys: "←→ / h l",
        name: "level",
        help: "Budget: budget level; Cost: cost ceiling; others: scroll",
    },
    Binding {
        command: Command::Enter,
        keys: "Enter",
        name: "drill",
        help: "drill down: cell → tasks → rollouts → trajectory; finding → its panel",
    },
    Binding {
        command: Command::NextBenchmark,
        keys: "b",
        name: "benchmark",
        help: "next benchmark",
    },
    Binding {
        command: Command::NextPair,
        keys: "p",
        name: "pair",
        help: "next run pair (base → RL) or audited run",
    },
    Binding {
        command: Command::KUp,
        keys: "+ / -",
        name: "K",
        help: "Budget: next / previous K (samples per task)",
    },
    Binding {
        command: Command::ToggleMode,
        keys: "m",
        name: "mode",
        help: "Budget: native ↔ truncated budgets",
    },
    Binding {
        command: Command::ToggleBalance,
        keys: "B",
        name: "balance",
        help: "recompute with --balance toggled (in the background)",
    },
    Binding {
        command: Command::Filter,
        keys: "/",
        name: "filter",
        help: "filter tables by a substring (task id, run, …); Esc clears",
    },
    Binding {
        command: Command::Export,
        keys: "e",
        name: "export",
        help: "write the current table to rl-audit-export-<table>.csv",
    },
    Binding {
        command: Command::Reload,
        keys: "r",
        name: "reload",
        help: "re-read the logs now",
    },
    Binding {
        command: Command::Quit,
        keys: "Q / Ctrl-C",
        name: "quit",
        help: "quit from anywhere",
    },
];

/// Maps a key press to a command.
pub fn command_for(key: KeyEvent) -> Option<Command> {
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    Some(match key.code {
        KeyCode::Char('c') if ctrl => Command::Quit,
        KeyCode::Char('Q') => Command::Quit,
        KeyCode::Char('q') => Command::Back,
        KeyCode::Esc => Command::Escape,
        KeyCode::Char('?') | KeyCode::F(1) => Command::Help,
        KeyCode::Tab => Command::NextPanel,
        KeyCode::BackTab => Command::PrevPanel,
        KeyCode::Char(c @ '1'..='8') => Command::Panel(c as usize - '1' as usize),
        KeyCode::Up | KeyCode::Char('k') => Command::Up,
        KeyCode::Down | KeyCode::Char('j') => Command::Down,
        KeyCode::Left | KeyCode::Char('h') => Command::Left,
        KeyCode::Right | KeyCode::Char('l') => Command::Right,
        KeyCode::PageUp => Command::PageUp,
        KeyCode::PageDown => Command::PageDown,
        KeyCode::Home | KeyCode::Char('g') => Command::Top,
        KeyCode::End | KeyCode::Char('G') => Command::Bottom,
        KeyCode::Char('s') => Command::Sort,
        KeyCode::Char('S') => Command::SortReverse,
        KeyCode::Enter => Command::Enter,
        KeyCode::Char('/') => Command::Filter,
        KeyCode::Char('e') => Command::Export,
        KeyCode::Char('b') => Command::NextBenchmark,
        KeyCode::Char('p') => Command::NextPair,
        KeyCode::Char('+') | KeyCode::Char('=') => Command::KUp,
        KeyCode::Char('-') => Command::KDown,
        KeyCode::Char('m') => Command::ToggleMode,
        KeyCode::Char('B') => Command::ToggleBalance,
        KeyCode::Char('r') => Command::Reload,
        _ => return None,
    })
}

/// The short command bar at the bottom of the screen.
pub fn command_bar() -> String {
    [
        "?", "Tab", "Enter", "b", "p", "+/-", "m", "/", "s", "e", "q",
    ]
    .iter()
    .filter_map(|k| {
        BINDINGS
            .iter()
            .find(|b| b.keys.split(" / ").any(|x| x.starts_with(k)) || b.keys.starts_with(k))
            .map(|b| format!("{k} {}", b.name))
    })
    .collect::<Vec<_>>()
    .join("  ")
}
