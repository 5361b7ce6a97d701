//! Exact Q* checked against gymnasium's own FrozenLake transition table,
//! rebuilt here independently (the `P[s][a]` construction of
//! gymnasium/envs/toy_text/frozen_lake.py), with its own finite-horizon DP.

#![allow(clippy::needless_range_loop)] // written to mirror gymnasium's index loops

use rl_audit::env::frozenlake::Lake;

/// gymnasium's `P`: per state, per action, the (prob, next_state, reward, terminated) outcomes.
type Table = Vec<Vec<Vec<(f64, usize, f64, bool)>>>;

/// gymnasium's P[s][a] = [(prob, next_state, reward, terminated)].
fn gym_table(desc: &[&str], slippery: bool) -> Table {
    let (nrow, ncol) = (desc.len(), desc[0].len());
    let d: Vec<&[u8]> = desc.iter().map(|r| r.as_bytes()).collect();
    let inc = |row: usize, col: usize, a: usize| match a {
        0 => (row, col.saturating_sub(1)),
        1 => ((row + 1).min(nrow - 1), col),
        2 => (row, (col + 1).min(ncol - 1)),
        _ => (row.saturating_sub(1), col),
    };
    let update = |row: usize, col: usize, a: usize| {
        let (r, c) = inc(row, col, a);
        let letter = d[r][c];
        (
            r * ncol + c,
            if letter == b'G' { 1.0 } else { 0.0 },
            letter == b'G' || letter == b'H',
        )
    };
    let mut p = vec![vec![Vec::new(); 4]; nrow * ncol];
    for row in 0..nrow {
        for col in 0..ncol {
            let s = row * ncol + col;
            for a in 0..4 {
                if d[row][col] == b'G' || d[row][col] == b'H' {
                    p[s][a].push((1.0, s, 0.0, true));
                } else if slippery {
                    for b in [(a + 3) % 4, a, (a + 1) % 4] {
                        let (n, r, t) = update(row, col, b);
                        p[s][a].push((1.0 / 3.0, n, r, t));
                    }
                } else {
                    let (n, r, t) = update(row, col, a);
                    p[s][a].push((1.0, n, r, t));
                }
            }
        }
    }
    p
}

/// Q_h for every (s, a) by finite-horizon DP over the table.
fn gym_q(p: &Table, gamma: f64, h: usize) -> Vec<[f64; 4]> {
    let mut v = vec![0.0; p.len()];
    let mut q = vec![[0.0; 4]; p.len()];
    for _ in 0..h {
        for s in 0..p.len() {
            for a in 0..4 {
                q[s][a] = p[s][a]
                    .iter()
                    .map(|&(pr, n, r, t)| pr * (r + if t { 0.0 } else { gamma * v[n] }))
                    .sum();
            }
        }
        v = q
            .iter()
            .map(|row| row.iter().copied().fold(f64::NEG_INFINITY, f64::max))
            .collect();
    }
    q
}

#[test]
fn q_star_matches_gymnasium_transition_table() {
    let maps: [(&[&str], bool, f64, u32); 4] = [
        (&["SFFF", "FHFH", "FFFH", "HFFG"], true, 0.95, 12),
        (&["SFFF", "FHFH", "FFFH", "HFFG"], false, 0.95, 6),
        (
            &[
                "SFFFFFFF", "FFFFFFFF", "FFFHFFFF", "FFFFFHFF", "FFFHFFFF", "FHHFFFHF", "FHFFHFHF",
                "FFFHFFFG",
            ],
            true,
            1.0,
            40,
        ),
        (&["SFH", "FFG"], true, 0.9, 5),
    ];
    for (desc, slippery, gamma, h) in maps {
        let table = gym_table(desc, slippery);
        let q = gym_q(&table, gamma, h as usize);
        let lake = Lake::parse(desc, slippery).unwrap();
        for s in 0..lake.n_states() {
            for a in 0..4u8 {
                let ours = lake.q_star(s, a, gamma, h);
                assert!(
                    (ours - q[s][a as usize]).abs() < 1e-12,
                    "{desc:?} s={s} a={a}: {ours} vs {}",
                    q[s][a as usize]
                );
            }
        }
    }
}
