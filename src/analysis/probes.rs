//! The states of a (base, RL) pair on probes (SPEC §2.2 and §2.3): which
//! states both runs were sampled on, each run's mean candidate score (given,
//! or exact Q* on FrozenLake) and the shares of correcting and eventually
//! successful candidates.

use rand::seq::SliceRandom;
use rand::SeedableRng;

use super::bootstrap::cluster_bootstrap_each;
use super::frozenlake::QCache;
use super::stats::{Bootstrap, Cluster, Estimate};
use super::{Pair, Settings};
use crate::schema::{Candidate, Id, LogSet, Probe};

/// Beyond this, two mean scores differ.
pub const TIE_TOLERANCE: f64 = 1e-9;

/// One state of a pair, with what each run (0 = base, 1 = RL) did there.
#[derive(Debug, Clone)]
pub struct PairState {
    /// Its probe: an index into [`LogSet::probes`].
    pub probe: usize,
    pub task: Id,
    pub turn: u32,
    pub source: Id,
    /// Mean candidate score per run; `None` when no candidate has a score.
    pub q: [Option<f64>; 2],
    /// How many candidates of each run `q` averages (those scored).
    pub scored: [usize; 2],
    /// Share of candidates with `corrects == true` (among those with the field).
    pub corrects: [Option<f64>; 2],
    /// Share with `terminal_success == true` (among those with the field).
    pub terminal: [Option<f64>; 2],
}

/// Better, tie or worse for RL at a state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Better,
    Tie,
    Worse,
}

impl PairState {
    pub fn diff(&self) -> Option<f64> {
        Some(self.q[1]? - self.q[0]?)
    }
    pub fn verdict(&self) -> Option<Verdict> {
        let d = self.diff()?;
        Some(if d > TIE_TOLERANCE {
            Verdict::Better
        } else if d < -TIE_TOLERANCE {
            Verdict::Worse
        } else {
            Verdict::Tie
        })
    }
}

fn share(cands: &[&Candidate], f: impl Fn(&Candidate) -> Option<bool>) -> Option<f64> {
    let known: Vec<bool> = cands.iter().filter_map(|c| f(c)).collect();
    (!known.is_empty()).then(|| known.iter().filter(|&&b| b).count() as f64 / known.len() as f64)
}

/// The pair's states among probes with `error == want_error`, in file order;
/// with `--balance`, only states drawn from the two runs' own trajectories,
/// the larger side subsampled (seeded by `--seed`) to the smaller.
pub fn pair_states(
    set: &LogSet,
    pair: &Pair,
    want_error: bool,
    s: &Settings,
    cache: &mut QCache,
) -> Vec<PairState> {
    let (gamma, balance) = (s.gamma, s.balance.then_some(s.boot.seed));
    let mut out = Vec::new();
    for (i, p) in set
        .probes
        .iter()
        .enumerate()
        .filter(|(_, p)| p.benchmark == pair.benchmark && p.error == want_error)
    {
        if let Some(s) = state_of(set, (i, p), pair, gamma, cache) {
            out.push(s);
        }
    }
    if let Some(seed) = balance {
        out.retain(|s| s.source == pair.base || s.source == pair.rl);
        let (mut from_base, mut from_rl): (Vec<usize>, Vec<usize>) =
            (0..out.len()).partition(|&i| out[i].source == pair.base);
        let n = from_base.len().min(from_rl.len());
        let mut rng = rand::rngs::Xoshiro256PlusPlus::seed_from_u64(seed);
        from_base.shuffle(&mut rng);
        from_rl.shuffle(&mut rng);
        let mut keep: Vec<usize> = from_base[..n]
            .iter()
            .chain(&from_rl[..n])
            .copied()
            .collect();
        keep.sort_unstable();
        out = keep.into_iter().map(|i| out[i].clone()).collect();
    }
    out
}

/// [`pair_states`] of a pair named as reports name it (the workbench's
/// drill-down to the states behind a matched-states or error-recovery
/// row): none when a name is not in the logs.
pub fn states_of(
    set: &LogSet,
    names: &super::PairNames,
    want_error: bool,
    s: &Settings,
) -> Vec<PairState> {
    let id = |n: &str| set.strings.get(n);
    let (Some(benchmark), Some(base), Some(rl)) =
        (id(&names.benchmark), id(&names.base), id(&names.rl))
    else {
        return Vec::new();
    };
    let pair = Pair {
        benchmark,
        base,
        rl,
    };
    pair_states(set, &pair, want_error, s, &mut QCache::default())
}

/// A candidate's score (SPEC §2.2): the one the log gives, else on a
/// FrozenLake probe the exact Q* of its move.
pub fn score_of(c: &Candidate, p: &Probe, gamma: f64, cache: &mut QCache) -> Option<f64> {
    match (c.score, &p.frozenlake, c.move_index) {
        (Some(s), _, _) => Some(s),
        (None, Some(fl), Some(a)) => cache.q(fl, a, gamma),
        _ => None,
    }
}

fn state_of(
    set: &LogSet,
    (i, p): (usize, &Probe),
    pair: &Pair,
    gamma: f64,
    cache: &mut QCache,
) -> Option<PairState> {
    let cands = set.candidates_of(p);
    let by_run = |run: Id| cands.iter().filter(|c| c.run == run).collect::<Vec<_>>();
    let (base, rl) = (by_run(pair.base), by_run(pair.rl));
    if base.is_empty() || rl.is_empty() {
        return None;
    }
    let mut q = |cs: &[&Candidate]| -> (Option<f64>, usize) {
        let scores: Vec<f64> = cs
            .iter()
            .filter_map(|c| score_of(c, p, gamma, cache))
            .collect();
        (super::stats::mean(&scores), scores.len())
    };
    let ((qb, nb), (qr, nr)) = (q(&base), q(&rl));
    Some(PairState {
        probe: i,
        task: p.task,
        turn: p.turn,
        source: p.source,
        q: [qb, qr],
        scored: [nb, nr],
        corrects: [share(&base, |c| c.corrects), share(&rl, |c| c.corrects)],
        terminal: [
            share(&base, |c| c.terminal_success),
            share(&rl, |c| c.terminal_success),
        ],
    })
}

/// A per-state figure summed per task, in task order: the clusters of its
/// cluster bootstrap (none when no state has the figure).
pub fn clusters_of(states: &[&PairState], f: impl Fn(&PairState) -> Option<f64>) -> Vec<Cluster> {
    let mut by_task: std::collections::BTreeMap<Id, Cluster> = Default::default();
    for s in states {
        if let Some(x) = f(s) {
            let c = by_task.entry(s.task).or_insert(Cluster {
                sum: 0.0,
                weight: 0.0,
            });
            c.sum += x;
            c.weight += 1.0;
        }
    }
    by_task.into_values().collect()
}

/// Means of per-state figures with their cluster bootstraps over tasks,
/// each estimate exactly the one it has alone (`cluster_bootstrap_each`:
/// sets over as many tasks share each resample's draw of them); `None` for
/// a set of no cluster.
pub fn clustered_means<const N: usize>(
    sets: [Vec<Cluster>; N],
    boot: &Bootstrap,
) -> [Option<Estimate>; N] {
    let mut each = clustered_means_each(sets.into(), boot).into_iter();
    std::array::from_fn(|_| each.next().flatten())
}

/// [`clustered_means`] for any number of sets. A set equal to one before it
/// (the same clusters in the same order, to the bit: a pair's only turn and
/// all its states, say) is drawn once — alone it would give the same
/// estimate.
pub fn clustered_means_each(sets: Vec<Vec<Cluster>>, boot: &Bootstrap) -> Vec<Option<Estimate>> {
    let same = |x: &[Cluster], y: &[Cluster]| {
        x.len() == y.len()
            && x.iter().zip(y).all(|(a, b)| {
                a.sum.to_bits() == b.sum.to_bits() && a.weight.to_bits() == b.weight.to_bits()
            })
    };
    let mut unique: Vec<Vec<Cluster>> = Vec::new();
    let slots: Vec<Option<usize>> = sets
        .into_iter()
        .map(|c| {
            if c.is_empty() {
                return None;
            }
            Some(match unique.iter().position(|u| same(u, &c)) {
                Some(i) => i,
                None => {
                    unique.push(c);
                    unique.len() - 1
                }
            })
        })
        .collect();
    let each = cluster_bootstrap_each(unique, boot);
    slots.into_iter().map(|i| i.map(|i| each[i])).collect()
}

/// What [`clustered_means_each`] gives each set, before the intervals are
/// drawn: the same values, to the bit, every interval
/// [`Ci::Pending`](super::stats::Ci::Pending) (undefined where the
/// bootstrap's would be).
pub fn clustered_points_each(sets: &[Vec<Cluster>]) -> Vec<Option<Estimate>> {
    sets.iter()
        .map(|c| (!c.is_empty()).then(|| super::bootstrap::cluster_point(c)))
        .collect()
}

/// (states with a verdict, better, tie, worse).
pub fn verdict_counts(states: &[&PairState]) -> (u64, u64, u64, u64) {
    let mut c = (0, 0, 0, 0);
    for v in states.iter().filter_map(|s| s.verdict()) {
        c.0 += 1;
        match v {
            Verdict::Better => c.1 += 1,
            Verdict::Tie => c.2 += 1,
            Verdict::Worse => c.3 += 1,
        }
    }
    c
}

pub fn share_of(k: u64, n: u64) -> Option<f64> {
    (n > 0).then(|| k as f64 / n as f64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::bootstrap::cluster_bootstrap;

    /// n clusters of varied sums and weights.
    fn set(n: usize, step: f64) -> Vec<Cluster> {
        (0..n)
            .map(|i| Cluster {
                sum: (i as f64 * step).fract() * 3.0,
                weight: 1.0 + (i % 3) as f64,
            })
            .collect()
    }

    /// Each set's estimate bootstrapped alone; none for an empty set.
    fn alone(sets: &[Vec<Cluster>], boot: &Bootstrap) -> Vec<Option<Estimate>> {
        sets.iter()
            .map(|c| (!c.is_empty()).then(|| cluster_bootstrap(c, boot)))
            .collect()
    }

    #[test]
    fn means_bootstrapped_together_are_each_alone_and_none_without_clusters() {
        // Two sets over 40 tasks (they share each resample's draw of ids)
        // and one over 7, around an empty one.
        let sets = [set(40, 0.618), Vec::new(), set(40, 0.414), set(7, 0.732)];
        let boot = Bootstrap::default();
        let got = clustered_means(sets.clone(), &boot);
        let want = alone(&sets, &boot);
        assert_eq!(got.to_vec(), want);
        assert!(got[1].is_none() && got.iter().filter(|e| e.is_some()).count() == 3);
    }

    #[test]
    fn a_set_repeated_is_drawn_once_and_gives_its_own_estimate() {
        // The same clusters twice, a set of the same size that differs in
        // one cluster's weight, and a prefix.
        let mut near = set(30, 0.618);
        near[29].weight += 1.0;
        let sets = vec![
            set(30, 0.618),
            near,
            set(30, 0.618),
            Vec::new(),
            set(29, 0.618),
        ];
        let boot = Bootstrap {
            resamples: 500,
            ..Default::default()
        };
        let got = clustered_means_each(sets.clone(), &boot);
        let want = alone(&sets, &boot);
        assert_eq!(got, want);
        assert_eq!(got[0], got[2]);
        assert_ne!(got[0], got[1]);
    }
}
