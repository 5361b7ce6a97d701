//! SPEC §2.3: error recovery — from the same state right after an error,
//! does RL pick better actions, correct the error, and finish more often?

use std::collections::BTreeMap;

use super::frozenlake::QCache;
use super::probes::{
    clustered_means, clustered_points_each, clusters_of, pair_states, share_of, verdict_counts,
    PairState,
};
use super::stats::{wilson, Bootstrap, Cluster, Estimate};
use super::{Pair, Settings};
use crate::schema::{Id, LogSet};

/// A breakdown row (by source or by turn): point figures per run.
#[derive(Debug, Clone)]
pub struct Breakdown {
    pub key: String,
    pub turn: Option<u32>,
    pub states: u64,
    /// States with scores for both runs (the denominator of `better`).
    pub scored: u64,
    pub better: Option<f64>,
    /// Wilson interval of `better`.
    pub better_ci: Option<(f64, f64)>,
    /// [base, RL]
    pub correction: [Option<f64>; 2],
    pub terminal_success: [Option<f64>; 2],
}

#[derive(Debug, Clone)]
pub struct Recovery {
    pub benchmark: String,
    pub base: String,
    pub rl: String,
    /// Error states both runs were sampled on.
    pub states: u64,
    /// Those of them with scores for both runs.
    pub scored: u64,
    pub better: Option<f64>,
    pub better_ci: Option<(f64, f64)>,
    /// [base, RL]; `None` when no candidate carries the field.
    pub correction: [Option<Estimate>; 2],
    pub terminal_success: [Option<Estimate>; 2],
    pub correction_diff: Option<Estimate>,
    pub terminal_success_diff: Option<Estimate>,
    pub by_source: Vec<Breakdown>,
    pub by_turn: Vec<Breakdown>,
}

impl Recovery {
    /// Every breakdown row, labelled: by source first, then by turn.
    pub fn breakdowns(&self) -> impl Iterator<Item = (String, &Breakdown)> {
        self.by_source
            .iter()
            .map(|b| (format!("source {}", b.key), b))
            .chain(self.by_turn.iter().map(|b| (format!("turn {}", b.key), b)))
    }

    /// Its bootstrapped estimates: correction and terminal success (base,
    /// RL), then their differences.
    pub fn estimates(&self) -> [Option<Estimate>; 6] {
        let ([c0, c1], [t0, t1]) = (self.correction, self.terminal_success);
        [
            c0,
            c1,
            t0,
            t1,
            self.correction_diff,
            self.terminal_success_diff,
        ]
    }

    fn estimates_mut(&mut self) -> [&mut Option<Estimate>; 6] {
        let ([c0, c1], [t0, t1]) = (&mut self.correction, &mut self.terminal_success);
        [
            c0,
            c1,
            t0,
            t1,
            &mut self.correction_diff,
            &mut self.terminal_success_diff,
        ]
    }
}

fn mean_field(states: &[&PairState], f: impl Fn(&PairState) -> Option<f64>) -> Option<f64> {
    let v: Vec<f64> = states.iter().filter_map(|s| f(s)).collect();
    super::stats::mean(&v)
}

fn breakdown(key: String, turn: Option<u32>, states: &[&PairState]) -> Breakdown {
    let (n, b, _, _) = verdict_counts(states);
    Breakdown {
        key,
        turn,
        states: states.len() as u64,
        scored: n,
        better: share_of(b, n),
        better_ci: wilson(b, n),
        correction: [
            mean_field(states, |s| s.corrects[0]),
            mean_field(states, |s| s.corrects[1]),
        ],
        terminal_success: [
            mean_field(states, |s| s.terminal[0]),
            mean_field(states, |s| s.terminal[1]),
        ],
    }
}

/// A per-state figure of a recovery mean.
type Figure = fn(&PairState) -> Option<f64>;

fn diff(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    Some(a? - b?)
}

pub fn analyse(set: &LogSet, pairs: &[Pair], s: &Settings, cache: &mut QCache) -> Vec<Recovery> {
    let (mut rows, sets) = values(set, pairs, s, cache);
    with_intervals(&mut rows, sets, &s.boot);
    rows
}

/// The six cluster sets of each of [`values`]' rows: what their bootstrap
/// intervals are drawn from ([`with_intervals`]).
#[derive(Clone)]
pub struct Intervals(Vec<[Vec<Cluster>; 6]>);

/// [`analyse`]'s rows before their bootstrap intervals are drawn: every
/// value, count and Wilson interval final, every bootstrap interval
/// [`Ci::Pending`](super::stats::Ci::Pending).
pub fn values(
    set: &LogSet,
    pairs: &[Pair],
    s: &Settings,
    cache: &mut QCache,
) -> (Vec<Recovery>, Intervals) {
    let mut out = Vec::new();
    let mut boots = Vec::new();
    for pair in pairs {
        let all = pair_states(set, pair, true, s, cache);
        if all.is_empty() {
            continue;
        }
        let refs: Vec<&PairState> = all.iter().collect();
        let (n, b, _, _) = verdict_counts(&refs);
        let mut by_source: BTreeMap<Id, Vec<&PairState>> = BTreeMap::new();
        let mut by_turn: BTreeMap<u32, Vec<&PairState>> = BTreeMap::new();
        for st in &refs {
            by_source.entry(st.source).or_default().push(st);
            by_turn.entry(st.turn).or_default().push(st);
        }
        let mut sources: Vec<Breakdown> = by_source
            .iter()
            .map(|(src, sts)| breakdown(set.name(*src).to_string(), None, sts))
            .collect();
        sources.sort_by(|a, b| a.key.cmp(&b.key));
        // The six means' sets, bootstrapped at once (`with_intervals`, each
        // as alone); their values meanwhile.
        let figures: [Figure; 6] = [
            |x| x.corrects[0],
            |x| x.corrects[1],
            |x| x.terminal[0],
            |x| x.terminal[1],
            |x| diff(x.corrects[1], x.corrects[0]),
            |x| diff(x.terminal[1], x.terminal[0]),
        ];
        let sets = figures.map(|f| clusters_of(&refs, f));
        let mut points = clustered_points_each(&sets).into_iter();
        let [c0, c1, t0, t1, cd, td] = std::array::from_fn(|_| points.next().flatten());
        boots.push(sets);
        out.push(Recovery {
            benchmark: set.name(pair.benchmark).into(),
            base: set.name(pair.base).into(),
            rl: set.name(pair.rl).into(),
            states: all.len() as u64,
            scored: n,
            better: share_of(b, n),
            better_ci: wilson(b, n),
            correction: [c0, c1],
            terminal_success: [t0, t1],
            correction_diff: cd,
            terminal_success_diff: td,
            by_source: sources,
            by_turn: by_turn
                .iter()
                .map(|(t, sts)| breakdown(t.to_string(), Some(*t), sts))
                .collect(),
        });
    }
    (out, Intervals(boots))
}

/// [`with_intervals`] at `boot`, each interval provisional, as
/// [`matched::with_provisional`](super::matched::with_provisional).
pub fn with_provisional(rows: &mut [Recovery], sets: Intervals, boot: &Bootstrap) {
    with_intervals(rows, sets, boot);
    for r in rows {
        for e in r.estimates_mut().into_iter().flatten() {
            *e = e.provisional();
        }
    }
}

/// Draws the bootstrap intervals of [`values`]' rows (each set as alone):
/// the rows [`analyse`] gives.
pub fn with_intervals(rows: &mut [Recovery], sets: Intervals, boot: &Bootstrap) {
    for (r, sets) in rows.iter_mut().zip(sets.0) {
        let [c0, c1, t0, t1, cd, td] = clustered_means(sets, boot);
        r.correction = [c0, c1];
        r.terminal_success = [t0, t1];
        r.correction_diff = cd;
        r.terminal_success_diff = td;
    }
}
