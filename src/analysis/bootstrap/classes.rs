//! A family's clusters grouped into classes of identical clusters: a resample's statistics depend only on how many of each class it drew.

use super::*;

/// A family's clusters grouped into classes of identical clusters (equal in
/// every statistic and in weight): the statistic of a resample depends only
/// on how many clusters of each class it drew.
#[derive(Clone)]
pub(super) struct Classes {
    /// Class of each cluster.
    pub(super) of: Vec<u32>,
    /// Clusters per class.
    pub(super) size: Vec<u64>,
    /// Class-major sums: `sums[c * stats + s]`.
    pub(super) sums: Vec<f64>,
    pub(super) weights: Vec<f64>,
    pub(super) stats: usize,
}

impl Classes {
    pub(super) fn new(f: &Family) -> Self {
        let stats = f.sums.len();
        let n = f.weights.len();
        // A cluster's key: the bits of its sums and weight.
        let key = |i: usize| {
            f.sums
                .iter()
                .map(move |s| s[i].to_bits())
                .chain(std::iter::once(f.weights[i].to_bits()))
        };
        let hasher = foldhash::fast::FixedState::default();
        let mut seen = FirstSeen::with_capacity(n);
        let mut c = Classes {
            of: Vec::with_capacity(n),
            size: Vec::new(),
            sums: Vec::new(),
            weights: Vec::new(),
            stats,
        };
        let hash_of = |j: u32| {
            let mut h = hasher.build_hasher();
            key(j as usize).for_each(|b| h.write_u64(b));
            h.finish()
        };
        for i in 0..n {
            let same = |j: u32| key(j as usize).eq(key(i));
            let id = match seen.first(hash_of(i as u32), i as u32, same, hash_of) {
                Some(j) => c.of[j as usize],
                None => {
                    c.size.push(0);
                    c.sums.extend(f.sums.iter().map(|s| s[i]));
                    c.weights.push(f.weights[i]);
                    c.size.len() as u32 - 1
                }
            };
            c.size[id as usize] += 1;
            c.of.push(id);
        }
        c
    }
    pub(super) fn len(&self) -> usize {
        self.size.len()
    }
    /// How many clusters (m).
    pub(super) fn clusters(&self) -> usize {
        self.of.len()
    }
    /// Class k's sum for statistic s.
    pub(super) fn sum(&self, k: u32, s: usize) -> f64 {
        self.sums[k as usize * self.stats + s]
    }
    /// Statistic s over the family's own clusters, cluster by cluster in
    /// order.
    pub(super) fn value(&self, s: usize) -> f64 {
        let total_w: f64 = self.of.iter().map(|&k| self.weights[k as usize]).sum();
        self.of.iter().map(|&k| self.sum(k, s)).sum::<f64>() / total_w
    }
    /// Some weight to resample (else its estimates are undefined).
    pub(super) fn is_live(&self) -> bool {
        self.weights.iter().any(|w| *w != 0.0)
    }
}

/// A family's clusters in class order (by cluster within a class): class
/// k's are the `size[k]` after those of the classes before it. In a family
/// of distinct values (one cluster per class), each class's cluster.
pub(super) fn clusters_by_class(c: &Classes) -> Vec<u32> {
    listed(&c.of, &c.size)
}

/// The clusters in class order, given each cluster's class (`of`) and each
/// class's size.
fn listed(of: &[u32], size: &[u64]) -> Vec<u32> {
    let mut next: Vec<u64> = size
        .iter()
        .scan(0, |at, &n| {
            let first = *at;
            *at += n;
            Some(first)
        })
        .collect();
    let mut list = vec![0u32; of.len()];
    for (i, &k) in of.iter().enumerate() {
        list[next[k as usize] as usize] = i as u32;
        next[k as usize] += 1;
    }
    list
}

/// Families of a pass that draws cluster ids whose class counts are summed
/// once over their joint classes (clusters in one class of each family of
/// the group), each family's counts then added up from those — the same
/// whole numbers. SPEC §4.2's cells of one budget and several K split the
/// tasks alike (a task's class is fixed by its base and RL counts at that
/// budget): at 11 M trajectories the 224 families of a pair summed 2.84 M
/// clusters a resample, in groups about 0.94 M and 15 k joint classes.
#[derive(Default)]
pub(super) struct Groups {
    /// Per family, its group (`None`: its class counts summed alone).
    pub(super) of: Vec<Option<u32>>,
    pub(super) groups: Vec<Group>,
}

/// Consecutive families summed over their joint classes.
pub(super) struct Group {
    /// The group's first family.
    pub(super) first: usize,
    /// The joint classes' clusters, class by class, and each class's size.
    pub(super) list: Vec<u32>,
    pub(super) size: Vec<u64>,
    /// Per family of the group, in order: each joint class's class in it.
    pub(super) to: Vec<Vec<u32>>,
}

/// The most joint classes a group has: more, and adding the families'
/// counts up is no longer small beside summing the clusters.
const JOINT_CLASSES: usize = 256;

impl Groups {
    /// Families `summed` (their class counts summed over their clusters),
    /// grouped in order while a group's joint classes stay at most
    /// [`JOINT_CLASSES`] and summing them, then adding up each family's
    /// counts, costs no more than summing the next family alone (a class
    /// summed costs a cluster's count less the largest class's, a class
    /// added up one; every figure the same either way).
    pub(super) fn of(classes: &[Classes], summed: &[bool]) -> Groups {
        let n = classes.len();
        let m = classes.first().map_or(0, Classes::clusters);
        let alone = |c: &Classes| m - c.size.iter().copied().max().unwrap_or(0) as usize;
        let mut out = Groups {
            of: vec![None; n],
            groups: Vec::new(),
        };
        let mut f = 0;
        while f < n {
            if !summed[f] {
                f += 1;
                continue;
            }
            let (mut joint, mut size) = (classes[f].of.clone(), classes[f].size.clone());
            let mut cost = alone(&classes[f]);
            let mut end = f + 1;
            while end < n && summed[end] {
                let Some((next, next_size)) = refined(&joint, &classes[end].of) else {
                    break;
                };
                let largest = next_size.iter().copied().max().unwrap_or(0) as usize;
                let together = m - largest + (end + 1 - f) * next_size.len();
                if together > cost + alone(&classes[end]) {
                    break;
                }
                (joint, size, cost) = (next, next_size, together);
                end += 1;
            }
            if end - f >= 2 {
                let mut to = vec![vec![0u32; size.len()]; end - f];
                for (i, &j) in joint.iter().enumerate() {
                    for (to, c) in to.iter_mut().zip(&classes[f..end]) {
                        to[j as usize] = c.of[i];
                    }
                }
                let g = out.groups.len() as u32;
                out.of[f..end].fill(Some(g));
                out.groups.push(Group {
                    first: f,
                    list: listed(&joint, &size),
                    size,
                    to,
                });
            }
            f = end;
        }
        out
    }
}

/// The joint classes of clusters in classes `a` and `b` (numbered as first
/// seen) and their sizes; `None` past [`JOINT_CLASSES`].
fn refined(a: &[u32], b: &[u32]) -> Option<(Vec<u32>, Vec<u64>)> {
    let mut seen: crate::schema::FastMap<(u32, u32), u32> = Default::default();
    let mut size: Vec<u64> = Vec::new();
    let mut of = Vec::with_capacity(a.len());
    for (&x, &y) in a.iter().zip(b) {
        let next = size.len() as u32;
        let j = *seen.entry((x, y)).or_insert(next);
        if j == next {
            if size.len() == JOINT_CLASSES {
                return None;
            }
            size.push(0);
        }
        size[j as usize] += 1;
        of.push(j);
    }
    Some((of, size))
}
