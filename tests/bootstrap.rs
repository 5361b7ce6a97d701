//! The bootstrap engine against a plain reference written here: draw m task
//! ids with replacement from a separate generator, take the mean, 40,000
//! times; percentile interval with numpy's linear interpolation; BCa from
//! Efron & Tibshirani (1993, §14.3): z0 = Φ⁻¹(#{θ* < θ̂}/B), acceleration
//! from the jackknife, α' = Φ(z0 + (z0 + z_α)/(1 − a(z0 + z_α))). Both of
//! rl-audit's paths — class counts drawn as multinomials (few distinct
//! values) and shared task draws (many) — must agree within Monte Carlo
//! error.

use rl_audit::analysis::bootstrap::{
    cluster_bootstrap, cluster_bootstrap_each, cluster_bootstrap_families, Family,
};
use rl_audit::analysis::stats::{Bootstrap, CiMethod, Cluster};
use statrs::distribution::{ContinuousCDF, Normal};

/// splitmix64: a generator unrelated to the engine's.
struct Mix(u64);
impl Mix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

fn quantile(sorted: &[f64], q: f64) -> f64 {
    let h = (sorted.len() - 1) as f64 * q;
    let i = h.floor() as usize;
    let f = h - i as f64;
    if i + 1 < sorted.len() {
        sorted[i] + f * (sorted[i + 1] - sorted[i])
    } else {
        sorted[i]
    }
}

/// (percentile interval, BCa interval) of the mean of `v`.
fn reference(v: &[f64]) -> ((f64, f64), (f64, f64)) {
    let m = v.len();
    let mean = v.iter().sum::<f64>() / m as f64;
    let mut rng = Mix(12345);
    let b = 40_000;
    let mut reps: Vec<f64> = (0..b)
        .map(|_| (0..m).map(|_| v[rng.below(m)]).sum::<f64>() / m as f64)
        .collect();
    reps.sort_by(f64::total_cmp);
    let pct = (quantile(&reps, 0.025), quantile(&reps, 0.975));
    let n = Normal::standard();
    let below = reps.iter().filter(|&&x| x < mean).count() as f64 / b as f64;
    let z0 = n.inverse_cdf(below);
    let total: f64 = v.iter().sum();
    let jack: Vec<f64> = v.iter().map(|x| (total - x) / (m - 1) as f64).collect();
    let jm = jack.iter().sum::<f64>() / m as f64;
    let num: f64 = jack.iter().map(|x| (jm - x).powi(3)).sum();
    let den: f64 = jack.iter().map(|x| (jm - x).powi(2)).sum();
    let a = num / (6.0 * den.powf(1.5));
    let level = |alpha: f64| {
        let z = n.inverse_cdf(alpha);
        n.cdf(z0 + (z0 + z) / (1.0 - a * (z0 + z)))
    };
    let bca = (quantile(&reps, level(0.025)), quantile(&reps, level(0.975)));
    (pct, bca)
}

fn close(got: (f64, f64), want: (f64, f64), tol: f64, what: &str) {
    assert!(
        (got.0 - want.0).abs() < tol && (got.1 - want.1).abs() < tol,
        "{what}: {got:?} vs reference {want:?}"
    );
}

#[test]
fn few_distinct_values_match_the_reference() {
    // Pass@K-like values (a task's Pass takes one of five values), skewed.
    let v: Vec<f64> = (0..400)
        .map(|i| [0.0, 0.0, 0.0, 0.25, 0.5, 1.0][(i * 7) % 6])
        .collect();
    let (pct, bca) = reference(&v);
    let clusters: Vec<Cluster> = v.iter().map(|&x| Cluster::one(x)).collect();
    for (method, want) in [(CiMethod::Percentile, pct), (CiMethod::Bca, bca)] {
        let cfg = Bootstrap {
            method,
            ..Default::default()
        };
        let e = cluster_bootstrap(&clusters, &cfg);
        close(e.ci.bounds().unwrap(), want, 0.004, method.name());
    }
}

#[test]
fn many_distinct_values_match_the_reference_with_shared_draws() {
    // Strongly right-skewed values (BCa moves the interval), all distinct, and a second family on the same
    // tasks so that the draws are shared.
    let v: Vec<f64> = (0..300)
        .map(|i| ((i * 37 % 300) as f64 / 300.0).powi(12))
        .collect();
    let w: Vec<f64> = (0..300).map(|i| (i % 2) as f64).collect();
    let (pct, bca) = reference(&v);
    for (method, want) in [(CiMethod::Percentile, pct), (CiMethod::Bca, bca)] {
        let cfg = Bootstrap {
            method,
            ..Default::default()
        };
        let fams = [
            Family {
                sums: vec![v.clone()],
                weights: vec![1.0; 300],
            },
            Family {
                sums: vec![w.clone()],
                weights: vec![1.0; 300],
            },
        ];
        let e = &cluster_bootstrap_families(&fams, &cfg)[0][0];
        // BCa and percentile differ by ~0.002 here: 0.001 tells them apart.
        close(e.ci.bounds().unwrap(), want, 0.001, method.name());
    }
}

/// `cluster_bootstrap_each` batches many cluster sets (SPEC §4.5's turn by
/// turn) but must give each the very estimate it gets alone, to the bit:
/// sets of equal and different sizes, few distinct values (multinomial
/// path) and many (shared draws), weights that vary, all-zero weights and
/// an empty set.
#[test]
fn each_set_in_a_batch_is_bootstrapped_exactly_as_alone() {
    let mut mix = Mix(11);
    let mut sets: Vec<Vec<Cluster>> = Vec::new();
    for (m, distinct) in [
        (400, true),
        (400, false),
        (400, true),
        (57, true),
        (57, false),
        (3, true),
    ] {
        sets.push(
            (0..m)
                .map(|_| {
                    let x = if distinct {
                        (mix.next() >> 11) as f64 / (1u64 << 53) as f64
                    } else {
                        (mix.below(2)) as f64
                    };
                    Cluster {
                        sum: x,
                        weight: 1.0 + mix.below(3) as f64,
                    }
                })
                .collect(),
        );
    }
    sets.push(vec![
        Cluster {
            sum: 1.0,
            weight: 0.0
        };
        400
    ]);
    sets.push(Vec::new());
    for method in [CiMethod::Percentile, CiMethod::Bca] {
        let cfg = Bootstrap {
            method,
            resamples: 2_000,
            ..Default::default()
        };
        let batch = cluster_bootstrap_each(sets.clone(), &cfg);
        assert_eq!(batch.len(), sets.len());
        for (i, (set, got)) in sets.iter().zip(&batch).enumerate() {
            let alone = cluster_bootstrap(set, &cfg);
            assert_eq!(
                format!("{:?}", (got.value.to_bits(), got.ci)),
                format!("{:?}", (alone.value.to_bits(), alone.ci)),
                "set {i} ({} clusters), {}",
                set.len(),
                method.name()
            );
        }
    }
}
