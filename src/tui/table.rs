//! Tables as the panels show and export them: each cell holds its text, its
//! value (sorting reads the value, never the text) and its mark (colour
//! comes from the mark, never from the text).

use super::panel::Panel;
use crate::analysis::passkt::Mode;
use crate::schema::Loc;

/// How a cell or row should stand out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mark {
    #[default]
    None,
    Bad,
    VeryBad,
    Good,
}

/// One cell: what is shown, the number it stands for, how it stands out.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Cell {
    pub text: String,
    pub value: Option<f64>,
    pub mark: Mark,
    /// A place (`file:line`): cut at its start, so that its line shows.
    pub keep_end: bool,
}

impl Cell {
    /// Text only (sorts as text).
    pub fn text(t: impl Into<String>) -> Cell {
        Cell {
            text: t.into(),
            ..Default::default()
        }
    }
    /// A number shown as `text` (sorts by `value`; `None` sorts last).
    pub fn num(text: impl Into<String>, value: Option<f64>) -> Cell {
        Cell {
            text: text.into(),
            value,
            ..Default::default()
        }
    }
    /// A record's place, `file:line`: too long for its column, it loses
    /// its start (`…eval.jsonl.gz:1396`), not the line that tells records
    /// apart.
    pub fn place(t: impl Into<String>) -> Cell {
        Cell {
            keep_end: true,
            ..Cell::text(t)
        }
    }
    /// An integer count.
    pub fn count(n: impl Into<u64>) -> Cell {
        let n = n.into();
        Cell::num(n.to_string(), Some(n as f64))
    }
    pub fn marked(mut self, m: Mark) -> Cell {
        self.mark = m;
        self
    }
}

impl From<&str> for Cell {
    fn from(s: &str) -> Cell {
        Cell::text(s)
    }
}

impl From<String> for Cell {
    fn from(s: String) -> Cell {
        Cell::text(s)
    }
}

/// Where Enter on a row goes.
#[derive(Debug, Clone, PartialEq)]
pub enum Target {
    None,
    Panel(Panel),
    /// A place in a panel: its cell or row (a headline finding's).
    At(crate::tour::Place),
    Tasks {
        k: u64,
        level: u32,
        mode: Mode,
    },
    Rollouts {
        task: String,
        level: u32,
    },
    Trajectory(Loc),
    /// A trajectory, opened at a step (0-based).
    Step(Loc, usize),
    /// A run in the pair picker (`P`): the base, then the RL run.
    Run(String),
    /// A run with training rollouts (`A`): audited as BudgetMix, or no
    /// longer.
    Audit(String),
    /// A drill-down view that needs nothing of the view below it (a
    /// rule's records, a pair's figures turn by turn).
    Open(crate::tui::app::View),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub cells: Vec<Cell>,
    pub mark: Mark,
    pub target: Target,
}

impl Row {
    /// A note ([`TableData::push_note`]): text in its first cell alone,
    /// going nowhere — drawn across its table's columns rather than
    /// widening the first.
    pub fn is_note(&self) -> bool {
        self.target == Target::None && self.cells.iter().skip(1).all(|c| c.text.is_empty())
    }
}

/// A FrozenLake trajectory's map and the agent's cell before each step
/// (None where the step does not say), drawn beside its trajectory.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LakeDraw {
    pub map: Vec<String>,
    pub states: Vec<Option<usize>>,
    /// Turns before `states[0]`'s (a probe's state: its turn − 1).
    pub offset: u32,
}

/// A table as shown and as exported.
#[derive(Debug, Clone, Default)]
pub struct TableData {
    pub name: String,
    pub title: String,
    pub header: Vec<String>,
    pub rows: Vec<Row>,
    /// A trajectory on a FrozenLake map: the map and its path.
    pub lake: Option<LakeDraw>,
    /// What the signs in its cells mean, those shown only (the Budget
    /// grid's: `n native  ▲ ahead  ? inconclusive`); empty if none.
    pub legend: String,
    /// Its rows before a filter kept some ([`TableData::filtered`]): its
    /// row count reads `10 of 48 rows`.
    pub filtered_from: Option<usize>,
}

impl TableData {
    pub fn new(name: &str, title: impl Into<String>, header: &[&str]) -> Self {
        TableData {
            name: name.into(),
            title: title.into(),
            header: header.iter().map(|h| h.to_string()).collect(),
            ..Default::default()
        }
    }

    pub fn push(&mut self, cells: Vec<Cell>, mark: Mark, target: Target) {
        self.rows.push(Row {
            cells,
            mark,
            target,
        });
    }

    /// A row of plain texts.
    pub fn push_text(&mut self, cells: Vec<String>, mark: Mark, target: Target) {
        self.push(cells.into_iter().map(Cell::text).collect(), mark, target);
    }

    /// A row saying `note` in its first column, the others empty: what
    /// stands for rows not there (still computing, or none).
    pub fn push_note(&mut self, note: impl Into<String>) {
        let mut cells = vec![String::new(); self.header.len().max(1)];
        cells[0] = note.into();
        self.push_text(cells, Mark::None, Target::None);
    }

    /// The text of cell (row, col), or "".
    pub fn text(&self, row: usize, col: usize) -> &str {
        self.rows
            .get(row)
            .and_then(|r| r.cells.get(col))
            .map_or("", |c| c.text.as_str())
    }

    pub fn target(&self, row: usize) -> Target {
        self.rows
            .get(row)
            .map_or(Target::None, |r| r.target.clone())
    }

    /// Keeps rows whose text contains `filter` (case-insensitive).
    pub fn filtered(mut self, filter: &str) -> Self {
        if filter.is_empty() {
            return self;
        }
        let f = filter.to_lowercase();
        self.filtered_from = Some(self.rows.len());
        self.rows
            .retain(|r| r.cells.iter().any(|c| c.text.to_lowercase().contains(&f)));
        self
    }

    /// Rows ordered by column `col`: by value where cells have one, else by
    /// text; cells with neither last; stable. The title says so.
    pub fn sorted(mut self, col: usize, descending: bool) -> Self {
        let Some(name) = self.header.get(col).cloned() else {
            return self;
        };
        let key = |r: &Row| -> (u8, f64, String) {
            match r.cells.get(col) {
                Some(Cell { value: Some(v), .. }) if v.is_finite() => (0, *v, String::new()),
                Some(c) if !c.text.is_empty() && c.text != "–" && c.value.is_none() => {
                    (1, 0.0, c.text.to_lowercase())
                }
                _ => (2, 0.0, String::new()),
            }
        };
        self.rows.sort_by(|a, b| {
            let (ka, kb) = (key(a), key(b));
            ka.0.cmp(&kb.0).then_with(|| {
                let o = ka.1.total_cmp(&kb.1).then_with(|| ka.2.cmp(&kb.2));
                if descending {
                    o.reverse()
                } else {
                    o
                }
            })
        });
        // The new order replaces the one the title named, if it named one.
        let base = self.title.split(" — sorted by ").next().unwrap_or_default();
        self.title = format!(
            "{base} — sorted by {name} {}",
            if descending { "▼" } else { "▲" }
        );
        self
    }

    /// The table as CSV (RFC 4180 quoting by the `csv` crate).
    pub fn to_csv(&self) -> String {
        let mut w = csv::WriterBuilder::new()
            .flexible(true)
            .from_writer(Vec::new());
        let _ = w.write_record(&self.header);
        for r in &self.rows {
            let _ = w.write_record(r.cells.iter().map(|c| c.text.as_str()));
        }
        let bytes = w.into_inner().unwrap_or_default();
        String::from_utf8(bytes).unwrap_or_default()
    }
}

/// A cell's text after its column's name, `name: text` (the text alone
/// under a column without a name), and the characters `name: ` takes: a
/// row's cells written out whole, on a narrow table's border or box and
/// on the clipboard.
pub fn named(name: Option<&String>, text: &str) -> (String, usize) {
    match name {
        Some(h) if !h.is_empty() => (format!("{h}: {text}"), h.chars().count() + 2),
        _ => (text.to_string(), 0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorting_reads_values_and_keeps_rows_whole() {
        let mut t = TableData::new("t", "title", &["name", "value"]);
        for (name, text, v) in [
            ("a", "12.5%", Some(0.125)),
            ("b", "–", None),
            ("c", "9.0% [1.0, 20.0]", Some(0.09)),
            ("d", "+0.07 pp", Some(0.0007)),
            ("e", "-3", Some(-3.0)),
            ("f", "100", Some(100.0)),
        ] {
            let target = Target::Rollouts {
                task: name.into(),
                level: 25,
            };
            t.push(
                vec![Cell::text(name), Cell::num(text, v)],
                Mark::None,
                target,
            );
        }
        let names = |t: &TableData| {
            t.rows
                .iter()
                .map(|r| r.cells[0].text.clone())
                .collect::<String>()
        };
        let up = t.clone().sorted(1, false);
        // -3 < 0.0007 < 0.09 < 0.125 < 100, and the missing value last.
        assert_eq!(names(&up), "edcafb");
        assert!(up.title.ends_with("sorted by value ▲"));
        for r in &up.rows {
            assert_eq!(
                r.target,
                Target::Rollouts {
                    task: r.cells[0].text.clone(),
                    level: 25
                }
            );
        }
        assert_eq!(names(&t.clone().sorted(1, true)), "facdeb");
        assert_eq!(names(&t.sorted(0, true)), "fedcba");
    }

    #[test]
    fn csv_quotes_what_needs_quoting() {
        let mut t = TableData::new("t", "t", &["a", "b"]);
        t.push_text(
            vec!["x,y".into(), "line\r\nbreak \"q\"".into()],
            Mark::None,
            Target::None,
        );
        assert_eq!(t.to_csv(), "a,b\n\"x,y\",\"line\r\nbreak \"\"q\"\"\"\n");
    }
}
