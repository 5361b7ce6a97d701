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
    let mut next: Vec<u64> = c
        .size
        .iter()
        .scan(0, |at, &n| {
            let first = *at;
            *at += n;
            Some(first)
        })
        .collect();
    let mut list = vec![0u32; c.of.len()];
    for (i, &k) in c.of.iter().enumerate() {
        list[next[k as usize] as usize] = i as u32;
        next[k as usize] += 1;
    }
    list
}
