//! SPEC §2.2: single-step quality on matched states — does RL pick a better
//! next action than base from the same state?

use std::collections::BTreeMap;

use super::frozenlake::QCache;
use super::probes::{
    clustered_means_each, clustered_points_each, clusters_of, pair_states, share_of,
    verdict_counts, PairState,
};
use super::stats::{median, wilson, Bootstrap, Ci, Cluster, Estimate};
use super::{Pair, Settings};
use crate::schema::LogSet;

#[derive(Debug, Clone)]
pub struct TurnRow {
    pub turn: u32,
    pub states: u64,
    pub better: Option<f64>,
    /// Wilson interval of `better`.
    pub better_ci: Option<(f64, f64)>,
    pub mean_diff: Option<f64>,
    /// Cluster-bootstrap interval over tasks of `mean_diff` (SPEC §2.2:
    /// per turn too), `Undefined` without a value.
    pub ci: Ci,
}

impl TurnRow {
    /// The turn's mean difference with its interval.
    pub fn estimate(&self) -> Option<Estimate> {
        self.mean_diff.map(|value| Estimate { value, ci: self.ci })
    }
}

#[derive(Debug, Clone)]
pub struct Half {
    pub states: u64,
    pub better: Option<f64>,
    /// Wilson interval of `better`.
    pub better_ci: Option<(f64, f64)>,
    pub mean_diff: Option<Estimate>,
}

#[derive(Debug, Clone)]
pub struct Matched {
    pub benchmark: String,
    pub base: String,
    pub rl: String,
    /// States with a verdict (both runs scored).
    pub states: u64,
    pub states_by_source: BTreeMap<String, u64>,
    pub better: Option<f64>,
    pub tie: Option<f64>,
    pub worse: Option<f64>,
    /// Wilson intervals of the three shares.
    pub shares_ci: [Option<(f64, f64)>; 3],
    pub mean_diff: Option<Estimate>,
    pub by_turn: Vec<TurnRow>,
    pub median_turn: Option<f64>,
    pub early: Half,
    pub late: Half,
    /// States where a run had candidates but none could be scored.
    pub unscored: u64,
}

fn half(states: &[&PairState], mean_diff: Option<Estimate>) -> Half {
    let (n, better, _, _) = verdict_counts(states);
    Half {
        states: n,
        better: share_of(better, n),
        better_ci: wilson(better, n),
        mean_diff,
    }
}

pub fn analyse(set: &LogSet, pairs: &[Pair], s: &Settings, cache: &mut QCache) -> Vec<Matched> {
    let (mut rows, sets) = values(set, pairs, s, cache);
    with_intervals(&mut rows, sets, &s.boot);
    rows
}

/// The cluster sets of [`values`]' rows, row by row: what their bootstrap
/// intervals are drawn from ([`with_intervals`]).
#[derive(Clone)]
pub struct Intervals(Vec<Vec<Vec<Cluster>>>);

/// [`analyse`]'s rows before their bootstrap intervals are drawn: every
/// value, count and Wilson interval final, every bootstrap interval
/// [`Ci::Pending`] (the bootstrap is most of the part: 11 M rollouts, ~0.9
/// of its 1.0 s).
pub fn values(
    set: &LogSet,
    pairs: &[Pair],
    s: &Settings,
    cache: &mut QCache,
) -> (Vec<Matched>, Intervals) {
    let mut out = Vec::new();
    let mut boots = Vec::new();
    for pair in pairs {
        let all = pair_states(set, pair, false, s, cache);
        if all.is_empty() {
            continue;
        }
        let unscored = all.iter().filter(|st| st.diff().is_none()).count() as u64;
        let scored: Vec<&PairState> = all.iter().filter(|st| st.diff().is_some()).collect();
        let mut by_source: BTreeMap<String, u64> = BTreeMap::new();
        for st in &scored {
            *by_source
                .entry(set.name(st.source).to_string())
                .or_default() += 1;
        }
        let (n, b, t, w) = verdict_counts(&scored);
        let mut turns: BTreeMap<u32, Vec<&PairState>> = BTreeMap::new();
        for st in &scored {
            turns.entry(st.turn).or_default().push(st);
        }
        let turn_values: Vec<f64> = scored.iter().map(|x| x.turn as f64).collect();
        let med = median(&turn_values);
        let m = med.unwrap_or(0.0);
        let early: Vec<&PairState> = scored
            .iter()
            .copied()
            .filter(|x| x.turn as f64 <= m)
            .collect();
        let late: Vec<&PairState> = scored
            .iter()
            .copied()
            .filter(|x| x.turn as f64 > m)
            .collect();
        // The mean differences' sets, bootstrapped at once
        // (`with_intervals`), each as alone: all states, early, late, then
        // each turn's (a set equal to another — the only turn, or early's
        // only turn — drawn once). Their values meanwhile.
        let mut sets = vec![
            clusters_of(&scored, PairState::diff),
            clusters_of(&early, PairState::diff),
            clusters_of(&late, PairState::diff),
        ];
        sets.extend(turns.values().map(|sts| clusters_of(sts, PairState::diff)));
        let mut means = clustered_points_each(&sets).into_iter();
        boots.push(sets);
        let (whole_diff, early_diff, late_diff) = (
            means.next().flatten(),
            means.next().flatten(),
            means.next().flatten(),
        );
        let mut turn_cis = means;
        let by_turn = turns
            .iter()
            .map(|(&turn, sts)| {
                let (n, b, _, _) = verdict_counts(sts);
                let diffs: Vec<f64> = sts.iter().filter_map(|x| x.diff()).collect();
                let ci = turn_cis.next().flatten().map_or(Ci::Undefined, |e| e.ci);
                TurnRow {
                    turn,
                    states: n,
                    better: share_of(b, n),
                    better_ci: wilson(b, n),
                    mean_diff: super::stats::mean(&diffs),
                    ci,
                }
            })
            .collect();
        out.push(Matched {
            benchmark: set.name(pair.benchmark).into(),
            base: set.name(pair.base).into(),
            rl: set.name(pair.rl).into(),
            states: n,
            states_by_source: by_source,
            better: share_of(b, n),
            tie: share_of(t, n),
            worse: share_of(w, n),
            shares_ci: [wilson(b, n), wilson(t, n), wilson(w, n)],
            mean_diff: whole_diff,
            by_turn,
            median_turn: med,
            early: half(&early, early_diff),
            late: half(&late, late_diff),
            unscored,
        });
    }
    (out, Intervals(boots))
}

/// [`with_intervals`] at `boot` (the first [`PROVISIONAL_RESAMPLES`]
/// resamples: [`Bootstrap::provisional`]), each interval provisional
/// ([`Ci::provisional`]): what the workbench shows while the rest are drawn.
///
/// [`PROVISIONAL_RESAMPLES`]: super::stats::PROVISIONAL_RESAMPLES
pub fn with_provisional(rows: &mut [Matched], sets: Intervals, boot: &Bootstrap) {
    with_intervals(rows, sets, boot);
    for m in rows {
        for e in [
            &mut m.mean_diff,
            &mut m.early.mean_diff,
            &mut m.late.mean_diff,
        ]
        .into_iter()
        .flatten()
        {
            *e = e.provisional();
        }
        for row in &mut m.by_turn {
            row.ci = row.ci.provisional();
        }
    }
}

/// Draws the bootstrap intervals of [`values`]' rows (each set as alone):
/// the rows [`analyse`] gives.
pub fn with_intervals(rows: &mut [Matched], sets: Intervals, boot: &Bootstrap) {
    for (m, sets) in rows.iter_mut().zip(sets.0) {
        let mut means = clustered_means_each(sets, boot).into_iter();
        m.mean_diff = means.next().flatten();
        m.early.mean_diff = means.next().flatten();
        m.late.mean_diff = means.next().flatten();
        for (row, e) in m.by_turn.iter_mut().zip(means) {
            row.ci = e.map_or(Ci::Undefined, |e| e.ci);
        }
    }
}
