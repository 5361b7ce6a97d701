//! Exact finite-horizon Q* on FrozenLake (SPEC §2.2); the environment
//! itself (maps, moves, outcomes) is `crate::env::frozenlake`.

use crate::schema::FrozenLakeSpec;

use crate::env::frozenlake::{Lake, MAX_DP_CELLS};

impl Lake {
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

/// Caches V tables per (map, slippery, γ) so many probes on one map cost one
/// DP. The tables held stay under [`MAX_CACHED_CELLS`] values: past that the
/// cache starts afresh (logs with very many distinct large maps).
#[derive(Default)]
pub struct QCache {
    tables: std::collections::HashMap<(Vec<String>, bool, u64), ValueTable>,
    cells: u64,
}

/// Values kept across all cached tables (400 MB of f64).
pub const MAX_CACHED_CELLS: u64 = 50_000_000;

/// A lake and its V_0 … V_H.
type ValueTable = (Lake, Vec<Vec<f64>>);

impl QCache {
    pub fn q(&mut self, spec: &FrozenLakeSpec, a: u8, gamma: f64) -> Option<f64> {
        if spec.steps_left == 0 {
            return Some(0.0);
        }
        let key = (spec.map.clone(), spec.slippery, gamma.to_bits());
        let need = spec.steps_left - 1;
        if !self.tables.contains_key(&key) {
            let lake = Lake::parse(&spec.map, spec.slippery).ok()?;
            self.tables.insert(key.clone(), (lake, Vec::new()));
        }
        let (lake, vs) = self.tables.get(&key)?;
        if spec.pos >= lake.n_states() {
            return None;
        }
        if vs.len() <= need as usize {
            // Grow geometrically (probes asking for ever longer horizons cost
            // a few DPs, not one each), within the per-table limit.
            let n = lake.n_states().max(1) as u64;
            let cap = u32::try_from(MAX_DP_CELLS / n).unwrap_or(u32::MAX);
            let grown = u32::try_from(2 * vs.len()).unwrap_or(u32::MAX).min(cap);
            let table = lake.values(gamma, need.max(16.min(cap)).max(grown));
            let (old, new) = (vs.len() as u64 * n, table.len() as u64 * n);
            if self.cells - old + new > MAX_CACHED_CELLS {
                let mut keep = self.tables.remove(&key)?;
                self.tables.clear();
                keep.1 = table;
                self.cells = new;
                self.tables.insert(key.clone(), keep);
            } else {
                self.cells = self.cells - old + new;
                self.tables.get_mut(&key)?.1 = table;
            }
        }
        let (lake, vs) = self.tables.get(&key)?;
        Some(lake.q_from(spec.pos, a, gamma, &vs[need as usize]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::frozenlake::validate_spec;

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
    fn cached_q_equals_direct_q_at_every_horizon_and_gamma() {
        let mut cache = QCache::default();
        let lake = Lake::parse(&MAP4, true).unwrap();
        for gamma in [0.9, 1.0] {
            // Horizons that force the table to grow several times.
            for steps_left in [1u32, 3, 17, 40, 90, 5, 200] {
                for a in 0..4u8 {
                    let spec = FrozenLakeSpec {
                        map: MAP4.iter().map(|s| s.to_string()).collect(),
                        pos: 4,
                        steps_left,
                        slippery: true,
                    };
                    let got = cache.q(&spec, a, gamma).unwrap();
                    let want = lake.q_star(4, a, gamma, steps_left);
                    assert!((got - want).abs() < 1e-12, "γ={gamma} h={steps_left} a={a}");
                }
            }
        }
    }

    #[test]
    fn a_horizon_too_large_to_solve_is_an_input_error() {
        let spec = FrozenLakeSpec {
            map: vec!["F".repeat(100); 100],
            pos: 0,
            steps_left: 1_000_000,
            slippery: false,
        };
        let (field, msg) = validate_spec(&spec).unwrap_err();
        assert_eq!(field, "steps_left");
        assert!(msg.contains("100×100"), "{msg}");
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
