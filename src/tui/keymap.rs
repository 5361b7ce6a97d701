//! The key map: one table — keys, command, the panels it acts in, its help
//! line — drives dispatch, the help overlay and the command bar, so none of
//! them can drift from what the keys really do.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::panel::Panel;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
    /// Quit from anywhere.
    Quit,
    /// q: back out, or quit at the top.
    Back,
    /// Esc: back out, clear the filter; never quit.
    Escape,
    Help,
    NextPanel,
    PrevPanel,
    /// 1–8: the panel of that number (the key's digit).
    GoPanel,
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
    /// y: the selected row (the grid: the selected cell) to the clipboard.
    Copy,
    NextBenchmark,
    NextPair,
    KUp,
    KDown,
    Mode,
    Category,
    ToggleBalance,
    /// F: search every trajectory's actions and observations.
    Search,
    /// x: mark a rollout; x on another opens the two side by side.
    MarkCompare,
    /// v: a Budget cell's base failure and RL success side by side.
    CompareCell,
    /// P: the runs, to pick a pair to compare (a base, then an RL run).
    PickPair,
    /// d: in the pair picker, drop the pair of the base and this run.
    DropPair,
    /// A: the runs with training rollouts, to audit one as BudgetMix.
    PickAudit,
    /// t: the guided tour.
    Tour,
    /// a: the records `--follow` read since the audit on screen.
    Appended,
    Reload,
}

/// A key as the map names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    Char(char),
    Ctrl(char),
    Code(KeyCode),
}

impl Key {
    fn matches(self, ev: &KeyEvent) -> bool {
        let ctrl = ev.modifiers.contains(KeyModifiers::CONTROL);
        match (self, ev.code) {
            (Key::Ctrl(c), KeyCode::Char(x)) => ctrl && x == c,
            (Key::Char(c), KeyCode::Char(x)) => !ctrl && x == c,
            (Key::Code(k), code) => k == code,
            _ => false,
        }
    }

    /// How help and the bar write the key.
    pub fn label(self) -> String {
        match self {
            Key::Char(' ') => "Space".into(),
            Key::Char(c) => c.to_string(),
            Key::Ctrl(c) => format!("Ctrl-{}", c.to_ascii_uppercase()),
            Key::Code(k) => match k {
                KeyCode::Esc => "Esc".into(),
                KeyCode::Enter => "Enter".into(),
                KeyCode::Tab => "Tab".into(),
                KeyCode::BackTab => "Shift-Tab".into(),
                KeyCode::Up => "↑".into(),
                KeyCode::Down => "↓".into(),
                KeyCode::Left => "←".into(),
                KeyCode::Right => "→".into(),
                KeyCode::PageUp => "PgUp".into(),
                KeyCode::PageDown => "PgDn".into(),
                KeyCode::Home => "Home".into(),
                KeyCode::End => "End".into(),
                KeyCode::F(n) => format!("F{n}"),
                other => format!("{other:?}"),
            },
        }
    }
}

pub struct Binding {
    pub keys: &'static [Key],
    pub command: Command,
    /// Where it acts; empty: everywhere.
    pub panels: &'static [Panel],
    pub help: &'static str,
    /// Its word on the command bar, if it has a place there.
    pub bar: Option<&'static str>,
}

use Key::{Char, Code, Ctrl};

const DIGITS: &[Key] = &[
    Char('1'),
    Char('2'),
    Char('3'),
    Char('4'),
    Char('5'),
    Char('6'),
    Char('7'),
    Char('8'),
];

pub const KEYMAP: &[Binding] = &[
    Binding {
        keys: &[Code(KeyCode::F(1)), Char('?')],
        command: Command::Help,
        panels: &[],
        help: "this help, with what the current panel measures",
        bar: Some("help"),
    },
    Binding {
        keys: &[Char('q')],
        command: Command::Back,
        panels: &[],
        help: "back out of a drill-down or the help; quit at the top",
        bar: Some("back"),
    },
    Binding {
        keys: &[Code(KeyCode::Esc)],
        command: Command::Escape,
        panels: &[],
        help: "back out of a drill-down, clear the filter (never quits)",
        bar: None,
    },
    Binding {
        keys: &[Char('Q'), Ctrl('c')],
        command: Command::Quit,
        panels: &[],
        help: "quit from anywhere (also while typing a filter)",
        bar: None,
    },
    Binding {
        keys: &[Code(KeyCode::Tab)],
        command: Command::NextPanel,
        panels: &[],
        help: "next panel",
        bar: Some("panel"),
    },
    Binding {
        keys: &[Code(KeyCode::BackTab)],
        command: Command::PrevPanel,
        panels: &[],
        help: "previous panel",
        bar: None,
    },
    Binding {
        keys: DIGITS,
        command: Command::GoPanel,
        panels: &[],
        help: "the panel of that number",
        bar: None,
    },
    Binding {
        keys: &[Code(KeyCode::Up), Char('k')],
        command: Command::Up,
        panels: &[],
        help: "move the selection up (Budget: smaller K)",
        bar: None,
    },
    Binding {
        keys: &[Code(KeyCode::Down), Char('j')],
        command: Command::Down,
        panels: &[],
        help: "move the selection down (Budget: larger K)",
        bar: None,
    },
    Binding {
        keys: &[Code(KeyCode::Left), Char('h')],
        command: Command::Left,
        panels: &[],
        help: "Budget: tighter level; Cost: lower ceiling; tables: scroll long cells left",
        bar: None,
    },
    Binding {
        keys: &[Code(KeyCode::Right), Char('l')],
        command: Command::Right,
        panels: &[],
        help: "Budget: looser level; Cost: higher ceiling; tables: scroll long cells right",
        bar: None,
    },
    Binding {
        keys: &[Code(KeyCode::PageUp)],
        command: Command::PageUp,
        panels: &[],
        help: "ten rows up",
        bar: None,
    },
    Binding {
        keys: &[Code(KeyCode::PageDown)],
        command: Command::PageDown,
        panels: &[],
        help: "ten rows down",
        bar: None,
    },
    Binding {
        keys: &[Code(KeyCode::Home), Char('g')],
        command: Command::Top,
        panels: &[],
        help: "first row",
        bar: None,
    },
    Binding {
        keys: &[Code(KeyCode::End), Char('G')],
        command: Command::Bottom,
        panels: &[],
        help: "last row",
        bar: None,
    },
    Binding {
        keys: &[Code(KeyCode::Enter)],
        command: Command::Enter,
        panels: &[],
        help: "drill down to the data behind the row (Budget: cell → tasks → rollouts → trajectory → step; other panels: see below)",
        bar: Some("drill"),
    },
    Binding {
        keys: &[Char('b')],
        command: Command::NextBenchmark,
        panels: &[],
        help: "next benchmark",
        bar: Some("benchmark"),
    },
    Binding {
        keys: &[Char('p')],
        command: Command::NextPair,
        panels: &[],
        help: "next run pair (base → RL); BudgetMix: next audited run",
        bar: Some("pair"),
    },
    Binding {
        keys: &[Char('+'), Char('=')],
        command: Command::KUp,
        panels: &[Panel::Budget],
        help: "next K (samples per task)",
        bar: Some("K"),
    },
    Binding {
        keys: &[Char('-')],
        command: Command::KDown,
        panels: &[Panel::Budget],
        help: "previous K",
        bar: None,
    },
    Binding {
        keys: &[Char('m')],
        command: Command::Mode,
        panels: &[Panel::Budget, Panel::Likelihood],
        help: "Budget: preferred → native → truncated cells; Likelihood: step NLL ↔ trajectory LLR",
        bar: Some("mode"),
    },
    Binding {
        keys: &[Char('c')],
        command: Command::Category,
        panels: &[Panel::Budget],
        help: "the grid of one task category (all → each category → all)",
        bar: None,
    },
    Binding {
        keys: &[Char('s')],
        command: Command::Sort,
        panels: &[],
        help: "sort the table by the next column (by value); the Budget grid keeps its K order",
        bar: Some("sort"),
    },
    Binding {
        keys: &[Char('S')],
        command: Command::SortReverse,
        panels: &[],
        help: "reverse the sort",
        bar: None,
    },
    Binding {
        keys: &[Char('/')],
        command: Command::Filter,
        panels: &[],
        help: "filter rows by a substring, any case (\"6 of 48 rows\"); Enter keeps, Esc clears",
        bar: Some("filter"),
    },
    Binding {
        keys: &[Char('e')],
        command: Command::Export,
        panels: &[],
        help: "write the current table to rl-audit-export-<table>.csv",
        bar: Some("export"),
    },
    Binding {
        keys: &[Char('y')],
        command: Command::Copy,
        panels: &[],
        help: "copy the selected row (Budget grid: its cell) to the clipboard, over SSH too",
        bar: None,
    },
    Binding {
        keys: &[Char('B')],
        command: Command::ToggleBalance,
        panels: &[Panel::Steps, Panel::Recovery],
        help: "recompute with --balance toggled (in the background)",
        bar: None,
    },
    Binding {
        keys: &[Char('F')],
        command: Command::Search,
        panels: &[],
        help: "search every trajectory's actions and observations for a regular expression (in the background: its row counts what is read; Esc stops it)",
        bar: None,
    },
    Binding {
        keys: &[Char('x')],
        command: Command::MarkCompare,
        panels: &[Panel::Budget],
        help: "in a task's rollouts: mark one; x on another shows the two side by side",
        bar: None,
    },
    Binding {
        keys: &[Char('v')],
        command: Command::CompareCell,
        panels: &[Panel::Budget],
        help: "on the grid: the base failure and RL success of the task with the largest Δ share, side by side",
        bar: None,
    },
    Binding {
        keys: &[Char('P')],
        command: Command::PickPair,
        panels: &[],
        help: "pick a pair to compare: Enter on a base run, then an RL run (as --compare)",
        bar: None,
    },
    Binding {
        keys: &[Char('d')],
        command: Command::DropPair,
        panels: &[],
        help: "in P, the base picked: stop comparing it with the run under the cursor",
        bar: None,
    },
    Binding {
        keys: &[Char('A')],
        command: Command::PickAudit,
        panels: &[Panel::BudgetMix],
        help: "the runs with training rollouts: Enter audits one as BudgetMix, or stops auditing it (as --audit)",
        bar: Some("audit"),
    },
    Binding {
        keys: &[Char('t')],
        command: Command::Tour,
        panels: &[],
        help: "a guided tour through every analysis on what is loaded (n next, N back, ↑↓ scroll, q leaves)",
        bar: Some("tour"),
    },
    Binding {
        keys: &[Char('a')],
        command: Command::Appended,
        panels: &[],
        help: "with --follow: the records appended since the audit on screen (Enter: the trajectory)",
        bar: None,
    },
    Binding {
        keys: &[Char('r')],
        command: Command::Reload,
        panels: &[],
        help: "re-read the logs now",
        bar: None,
    },
];

/// The command a key press means, and the binding's digit for `GoPanel`.
pub fn lookup(ev: &KeyEvent) -> Option<(Command, Option<usize>)> {
    for b in KEYMAP {
        if let Some(k) = b.keys.iter().find(|k| k.matches(ev)) {
            let digit = match k {
                Key::Char(c) => c.to_digit(10).map(|d| d as usize),
                _ => None,
            };
            return Some((b.command, digit));
        }
    }
    None
}

/// The keys of a binding as help writes them (`1–8` for the digits).
pub fn keys_label(b: &Binding) -> String {
    if b.command == Command::GoPanel {
        return "1–8".into();
    }
    b.keys
        .iter()
        .map(|k| k.label())
        .collect::<Vec<_>>()
        .join(" / ")
}

/// The help overlay's key lines: the keys, where they act, what they do.
pub fn help_lines() -> Vec<String> {
    KEYMAP
        .iter()
        .map(|b| {
            let scope = if b.panels.is_empty() {
                String::new()
            } else {
                format!(
                    " ({})",
                    b.panels
                        .iter()
                        .map(|p| p.title())
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            };
            format!("{:>16}  {}{scope}", keys_label(b), b.help)
        })
        .chain(std::iter::once(format!("{:>16}  {MOUSE_HELP}", "mouse")))
        .collect()
}

/// What the mouse does, on the help's last key line.
pub const MOUSE_HELP: &str =
    "the wheel as ↑/↓; click a tab, row or grid cell to pick it, again to drill down";

/// The short command bar at the bottom: the bindings with a bar word that
/// act on this panel.
/// The panel's keys for the status line, `?` first, as many whole as fit
/// in `width` columns (a hint is never cut in two: `s sor`).
pub fn command_bar(panel: Panel, width: usize) -> String {
    let mut bar = String::new();
    for hint in KEYMAP
        .iter()
        .filter(|b| b.panels.is_empty() || b.panels.contains(&panel))
        .filter_map(|b| {
            let word = b.bar?;
            let key = b
                .keys
                .iter()
                .find(|k| matches!(k, Key::Char(_)))
                .or(b.keys.first())?;
            Some(format!("{} {word}", key.label()))
        })
    {
        let gap = if bar.is_empty() { "" } else { "  " };
        if bar.chars().count() + gap.len() + hint.chars().count() > width {
            break;
        }
        bar.push_str(gap);
        bar.push_str(&hint);
    }
    bar
}
