//! Gymnasium's FrozenLake, the environment itself: maps, moves and their
//! outcomes. Used by the log validator (a probe's `frozenlake` object), by
//! the exact Q* of `analysis::frozenlake` and by the workbench's drawing.
//!
//! Maps are rows of `S` (start), `F` (frozen), `H` (hole), `G` (goal).
//! Actions: 0=left 1=down 2=right 3=up. A move off the grid stays put; `H`
//! and `G` end the episode; entering `G` pays 1. When slippery, the intended
//! direction and the two perpendicular ones each happen with probability 1/3.

/// The moves by number (gymnasium's): `MOVES[a]` names action `a`.
pub const MOVES: [&str; 4] = ["left", "down", "right", "up"];

/// SPEC §1.2 `frozenlake` object of a probe: a map, the agent's cell, the
/// steps it has left, and whether the ice is slippery.
#[derive(Debug, Clone, PartialEq)]
pub struct FrozenLakeSpec {
    pub map: Vec<String>,
    pub pos: usize,
    pub steps_left: u32,
    pub slippery: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Lake {
    pub rows: usize,
    pub cols: usize,
    pub cells: Vec<u8>,
    pub slippery: bool,
}

/// Checks a probe's `frozenlake` object: (field, what is wrong).
pub fn validate_spec(spec: &FrozenLakeSpec) -> Result<(), (&'static str, String)> {
    let lake = Lake::parse(&spec.map, spec.slippery).map_err(|m| ("map", m))?;
    if spec.pos >= lake.cells.len() {
        return Err((
            "pos",
            format!(
                "{} is outside the {}×{} map",
                spec.pos, lake.rows, lake.cols
            ),
        ));
    }
    // Q* is solved exactly by a table of every state at every horizon.
    if lake.cells.len() as u64 * u64::from(spec.steps_left) > MAX_DP_CELLS {
        return Err((
            "steps_left",
            format!(
                "{} steps on a {}×{} map is more than rl-audit solves exactly (cells × steps ≤ {MAX_DP_CELLS})",
                spec.steps_left, lake.rows, lake.cols
            ),
        ));
    }
    Ok(())
}

/// The largest value table (states × horizon) a probe may ask for: 160 MB.
pub const MAX_DP_CELLS: u64 = 20_000_000;

impl Lake {
    pub fn parse<S: AsRef<str>>(rows: &[S], slippery: bool) -> Result<Lake, String> {
        if rows.is_empty() {
            return Err("the map has no rows".into());
        }
        let cols = rows[0].as_ref().len();
        let mut cells = Vec::with_capacity(rows.len() * cols);
        for (i, r) in rows.iter().enumerate() {
            let r = r.as_ref();
            if r.len() != cols || cols == 0 {
                return Err(format!("row {i} has {} cells, row 0 has {cols}", r.len()));
            }
            if let Some(c) = r.chars().find(|c| !"SFHG".contains(*c)) {
                return Err(format!("row {i} has {c:?}; cells must be S, F, H or G"));
            }
            cells.extend_from_slice(r.as_bytes());
        }
        Ok(Lake {
            rows: rows.len(),
            cols,
            cells,
            slippery,
        })
    }

    pub fn n_states(&self) -> usize {
        self.cells.len()
    }

    pub fn start(&self) -> usize {
        self.cells.iter().position(|&c| c == b'S').unwrap_or(0)
    }

    pub fn is_terminal(&self, s: usize) -> bool {
        matches!(self.cells[s], b'H' | b'G')
    }

    /// Where a move in direction `d` from `s` lands (off-grid stays).
    pub fn moved(&self, s: usize, d: u8) -> usize {
        let (r, c) = (s / self.cols, s % self.cols);
        let (r, c) = match d {
            0 => (r, c.saturating_sub(1)),
            1 => ((r + 1).min(self.rows - 1), c),
            2 => (r, (c + 1).min(self.cols - 1)),
            _ => (r.saturating_sub(1), c),
        };
        r * self.cols + c
    }

    /// The outcomes of action `a` at `s`: (next state, probability).
    pub fn outcomes(&self, s: usize, a: u8) -> Vec<(usize, f64)> {
        if self.slippery {
            [(a + 3) % 4, a, (a + 1) % 4]
                .iter()
                .map(|&d| (self.moved(s, d), 1.0 / 3.0))
                .collect()
        } else {
            vec![(self.moved(s, a), 1.0)]
        }
    }

    pub fn reward(&self, s: usize) -> f64 {
        if self.cells[s] == b'G' {
            1.0
        } else {
            0.0
        }
    }
}
