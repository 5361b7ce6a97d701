//! Gymnasium's FrozenLake and its exact finite-horizon Q* (SPEC §2.2).
//!
//! Maps are rows of `S` (start), `F` (frozen), `H` (hole), `G` (goal).
//! Actions: 0=left 1=down 2=right 3=up. A move off the grid stays put; `H`
//! and `G` end the episode; entering `G` pays 1. When slippery, the intended
//! direction and the two perpendicular ones each happen with probability 1/3.

use crate::schema::FrozenLakeSpec;

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
    Ok(())
}

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

    fn reward(&self, s: usize) -> f64 {
        if self.cells[s] == b'G' {
            1.0
        } else {
            0.0
        }
    }

    /// Q_h(s, a) given V_{h−1}.
    pub fn q_from(&self, s: usize, a: u8, gamma: f64, v_prev: &[f64]) -> f64 {
        if self.is_terminal(s) {
            return 0.0;
        }
        self.outcomes(s, a)
            .iter()
            .map(|&(n, p)| {
                let cont = if self.is_terminal(n) {
                    0.0
                } else {
                    gamma * v_prev[n]
                };
                p * (self.reward(n) + cont)
            })
            .sum()
    }

    /// V_0 … V_H by finite-horizon dynamic programming.
    pub fn values(&self, gamma: f64, horizon: u32) -> Vec<Vec<f64>> {
        let n = self.n_states();
        let mut vs = vec![vec![0.0; n]];
        for h in 1..=horizon as usize {
            let prev = &vs[h - 1];
            let v: Vec<f64> = (0..n)
                .map(|s| {
                    (0..4)
                        .map(|a| self.q_from(s, a, gamma, prev))
                        .fold(0.0, f64::max)
                })
                .collect();
            vs.push(v);
        }
        vs
    }

    /// Exact Q*_h(s, a): the value of taking `a` now with `h` steps left.
    pub fn q_star(&self, s: usize, a: u8, gamma: f64, h: u32) -> f64 {
        if h == 0 {
            return 0.0;
        }
        let vs = self.values(gamma, h - 1);
        self.q_from(s, a, gamma, &vs[h as usize - 1])
    }
}

/// Caches V tables per (map, slippery, γ) so many probes on one map cost one DP.
#[derive(Default)]
pub struct QCache {
    tables: std::collections::HashMap<(Vec<String>, bool), ValueTable>,
}

/// A lake and its V_0 … V_H.
type ValueTable = (Lake, Vec<Vec<f64>>);

impl QCache {
    pub fn q(&mut self, spec: &FrozenLakeSpec, a: u8, gamma: f64) -> Option<f64> {
        if spec.steps_left == 0 {
            return Some(0.0);
        }
        let key = (spec.map.clone(), spec.slippery);
        let need = spec.steps_left - 1;
        let entry = match self.tables.entry(key) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(e) => {
                let lake = Lake::parse(&spec.map, spec.slippery).ok()?;
                e.insert((lake, Vec::new()))
            }
        };
        if entry.1.len() <= need as usize {
            // Grow geometrically: probes asking for ever longer horizons
            // cost a few DPs, not one each.
            let grown = (2 * entry.1.len()).min(u32::MAX as usize) as u32;
            entry.1 = entry.0.values(gamma, need.max(16).max(grown));
        }
        if spec.pos >= entry.0.n_states() {
            return None;
        }
        Some(entry.0.q_from(spec.pos, a, gamma, &entry.1[need as usize]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAP4: [&str; 4] = ["SFFF", "FHFH", "FFFH", "HFFG"];

    #[test]
    fn deterministic_4x4_value_is_gamma_to_the_fifth() {
        let lake = Lake::parse(&MAP4, false).unwrap();
        let v = lake.values(0.95, 6);
        assert!((v[6][0] - 0.95f64.powi(5)).abs() < 1e-12);
        // Too few steps to reach the goal (6 moves needed).
        assert_eq!(v[5][0], 0.0);
    }

    #[test]
    fn slippery_4x4_optimum_matches_gymnasium() {
        let lake = Lake::parse(&MAP4, true).unwrap();
        let v = lake.values(1.0, 100);
        assert!((v[100][0] - 0.7442).abs() < 5e-4, "{}", v[100][0]);
    }

    #[test]
    fn slippery_8x8_optimum() {
        let map = [
            "SFFFFFFF", "FFFFFFFF", "FFFHFFFF", "FFFFFHFF", "FFFHFFFF", "FHHFFFHF", "FHFFHFHF",
            "FFFHFFFG",
        ];
        let lake = Lake::parse(&map, true).unwrap();
        let v = lake.values(1.0, 200);
        assert!((v[200][0] - 0.9132).abs() < 5e-4, "{}", v[200][0]);
    }

    #[test]
    fn q_of_a_single_state_by_hand() {
        // 1×3 corridor S F G, not slippery: right from 1 with one step reaches G.
        let lake = Lake::parse(&["SFG"], false).unwrap();
        assert_eq!(lake.q_star(1, 2, 0.9, 1), 1.0);
        assert_eq!(lake.q_star(0, 2, 0.9, 1), 0.0);
        assert!((lake.q_star(0, 2, 0.9, 2) - 0.9).abs() < 1e-12);
        // Left from the start bumps the wall and stays: needs two more steps.
        assert!((lake.q_star(0, 0, 0.9, 3) - 0.81).abs() < 1e-12);
    }
}
