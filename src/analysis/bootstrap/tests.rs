use super::*;

#[test]
fn class_resampling_matches_task_resampling_in_distribution() {
    // 1000 tasks with values 0 or 1 (30% ones): the bootstrap mean has
    // sd sqrt(0.3·0.7/1000) = 0.01449; the 95% interval ≈ 0.3 ± 0.0284.
    let clusters: Vec<Cluster> = (0..1000)
        .map(|i| Cluster::one(if i % 10 < 3 { 1.0 } else { 0.0 }))
        .collect();
    let e = cluster_bootstrap(&clusters, &Bootstrap::default());
    let (l, h) = e.ci.bounds().unwrap();
    assert!((e.value - 0.3).abs() < 1e-12);
    assert!((l - (0.3 - 0.0284)).abs() < 0.003, "{l}");
    assert!((h - (0.3 + 0.0284)).abs() < 0.003, "{h}");
    // Same data through the task-id path (all values distinct by a tiny offset).
    let distinct: Vec<Cluster> = clusters
        .iter()
        .enumerate()
        .map(|(i, c)| Cluster::one(c.sum + i as f64 * 1e-12))
        .collect();
    let (l2, h2) = cluster_bootstrap(&distinct, &Bootstrap::default())
        .ci
        .bounds()
        .unwrap();
    assert!(
        (l - l2).abs() < 0.003 && (h - h2).abs() < 0.003,
        "{l} {h} vs {l2} {h2}"
    );
}

#[test]
fn shared_draws_match_the_normal_approximation() {
    // Two families over the same 1000 tasks, forced onto shared draws by
    // the second one's many classes. Family 0: 0/1 values, 30% ones →
    // interval 0.3 ± 1.96·sqrt(0.21/1000) = 0.3 ± 0.0284. Family 1:
    // values i/1000 → mean 0.4995, sd of the mean
    // sqrt((1000²−1)/12)/1000/sqrt(1000) = 0.009129 → ± 0.0179.
    let m = 1000;
    let f0 = Family {
        sums: vec![(0..m).map(|i| f64::from(i % 10 < 3)).collect()],
        weights: vec![1.0; m],
    };
    let f1 = Family {
        sums: vec![(0..m).map(|i| i as f64 / 1000.0).collect()],
        weights: vec![1.0; m],
    };
    let out = cluster_bootstrap_families(&[f0, f1], &Bootstrap::default());
    let (l0, h0) = out[0][0].ci.bounds().unwrap();
    assert!(
        (l0 - 0.2716).abs() < 0.003 && (h0 - 0.3284).abs() < 0.003,
        "{l0} {h0}"
    );
    let (l1, h1) = out[1][0].ci.bounds().unwrap();
    assert!((out[1][0].value - 0.4995).abs() < 1e-12);
    assert!(
        (l1 - 0.4816).abs() < 0.002 && (h1 - 0.5174).abs() < 0.002,
        "{l1} {h1}"
    );
}

#[test]
fn weighted_clusters_give_the_ratio_of_sums() {
    // Clusters of 1 or 3 items; the statistic is Σsum/Σweight.
    let clusters: Vec<Cluster> = (0..400)
        .map(|i| {
            let w = if i % 2 == 0 { 1.0 } else { 3.0 };
            Cluster {
                sum: if i % 4 == 1 { w } else { 0.0 },
                weight: w,
            }
        })
        .collect();
    // Σsum = 100 clusters × 3 = 300; Σweight = 200 + 600 = 800.
    let e = cluster_bootstrap(&clusters, &Bootstrap::default());
    assert!((e.value - 0.375).abs() < 1e-12);
    let (l, h) = e.ci.bounds().unwrap();
    assert!(l < 0.375 && h > 0.375 && h - l < 0.2, "{l} {h}");
}

#[test]
fn families_bootstrapped_in_passes_equal_each_alone() {
    // 3 × 150 statistics × 10,000 resamples exceed one pass: the
    // families are bootstrapped in passes that redraw the same resamples.
    let fam = |shift: usize| Family {
        sums: (0..200)
            .map(|s| {
                (0..100)
                    .map(|i| ((i * 31 + s * 7 + shift) % 97) as f64)
                    .collect()
            })
            .collect(),
        weights: vec![1.0; 100],
    };
    let fams = [fam(0), fam(1), fam(2)];
    const { assert!(450 * 10_000 > MAX_REPLICATES) };
    let together = cluster_bootstrap_families(&fams, &Bootstrap::default());
    for (f, got) in fams.iter().zip(&together) {
        let alone = cluster_bootstrap_families(std::slice::from_ref(f), &Bootstrap::default());
        assert_eq!(got, &alone[0]);
    }
}

/// Families known degenerate without drawing get the estimates drawing
/// gives, to the bit; those that might not be are drawn. Per task, the
/// sum of `steps` per-step values, each a difference of two
/// log-probabilities rounded to three places (as gen_large writes
/// them), whose exact difference is `shift`: ratios equal but for
/// rounding (gen_large's LLR by turn). Few classes (their counts drawn
/// directly) and many (task ids drawn); a ratio of zero; ratios
/// 2·10⁻¹³ apart (known) and 10⁻¹¹ apart (drawn: its replicates are
/// not degenerate); sums of both signs (drawn); several statistics.
#[test]
fn families_known_degenerate_are_what_drawing_gives() {
    let r3 = |x: f64| (x * 1000.0).round() / 1000.0;
    let llr = |tasks: usize, turns: usize, shift: f64| -> Family {
        let (mut sums, mut weights) = (Vec::new(), Vec::new());
        for t in 0..tasks {
            let steps = 1 + (t * 7 + turns) % turns;
            let mut sum = 0.0;
            for j in 0..steps {
                let base = -(8.0 + ((t * 31 + j * 17) % 6000) as f64 / 1000.0);
                sum += r3(base - shift) - r3(base);
            }
            sums.push(sum);
            weights.push(steps as f64);
        }
        Family {
            sums: vec![sums],
            weights,
        }
    };
    // 3.5 × (1, 1 + by, 1 + 2by), every seventh negated if `mixed`.
    let spread = |tasks: usize, by: f64, mixed: bool| -> Family {
        let sign = |t: usize| {
            if mixed && t.is_multiple_of(7) {
                -1.0
            } else {
                1.0
            }
        };
        Family {
            sums: vec![(0..tasks)
                .map(|t| sign(t) * 3.5 * (1.0 + by * (t % 3) as f64))
                .collect()],
            weights: vec![1.0; tasks],
        }
    };
    let cfg = Bootstrap {
        resamples: 2000,
        ..Bootstrap::default()
    };
    let cases: Vec<(&str, Vec<Family>, bool)> = vec![
        ("few classes", vec![llr(900, 3, 1.5)], true),
        ("many classes", vec![llr(900, 40, -3.5)], true),
        (
            "two families",
            vec![llr(300, 40, 1.5), llr(300, 9, 2.0)],
            true,
        ),
        (
            "zero",
            vec![Family {
                sums: vec![vec![0.0; 50], vec![-0.0; 50]],
                weights: (1..=50).map(f64::from).collect(),
            }],
            true,
        ),
        ("2e-13 apart", vec![spread(600, 2e-13, false)], true),
        ("1e-11 apart", vec![spread(600, 1e-11, false)], false),
        ("both signs", vec![spread(600, 0.0, true)], false),
        (
            "one of two not",
            vec![llr(600, 9, 1.5), spread(600, 1e-11, false)],
            false,
        ),
    ];
    // Whether the known families' counts would be drawn directly.
    let mut ways = std::collections::BTreeSet::new();
    for (what, fams, known) in cases {
        let classes = || fams.iter().map(Classes::new).collect::<Vec<_>>();
        if known {
            ways.extend(
                classes()
                    .iter()
                    .map(|c| draws_directly(c, true, c.clusters())),
            );
        }
        let drawing = drawn(classes(), &cfg);
        assert_eq!(
            known_degenerate(&classes(), &cfg).is_some(),
            known,
            "{what}"
        );
        assert_eq!(bootstrap_classes(classes(), &cfg), drawing, "{what}");
        if known {
            assert!(
                drawing.iter().flatten().all(|e| e.ci == Ci::Degenerate),
                "{what}"
            );
        } else {
            assert!(
                drawing.iter().flatten().any(|e| e.ci != Ci::Degenerate),
                "{what}"
            );
        }
    }
    assert_eq!(ways.len(), 2, "multinomial and task-id draws");
}

#[test]
fn sets_bootstrapped_each_equal_each_alone() {
    // 90 and 97 levels over 6,000 tasks (few classes: their counts are
    // drawn directly) and distinct values over 6,000 and 50 (task ids
    // drawn), each twice with different values: every estimate is the
    // one `cluster_bootstrap` gives the set alone.
    let set = |n: usize, f: &dyn Fn(usize) -> f64| -> Vec<Cluster> {
        (0..n).map(|i| Cluster::one(f(i))).collect()
    };
    let sets = vec![
        set(6000, &|i| ((i * 7) % 90) as f64 / 89.0),
        set(6000, &|i| (i as f64 * 0.618_034).fract()),
        set(6000, &|i| ((i * 13) % 97) as f64 / 96.0),
        set(50, &|i| (i as f64 * 0.414_213).fract()),
        set(6000, &|i| (i as f64 * 0.732_050).fract()),
        set(50, &|i| (i as f64 * 0.236_067).fract()),
    ];
    let cfg = Bootstrap::default();
    let each = cluster_bootstrap_each(sets.clone(), &cfg);
    for (c, got) in sets.iter().zip(&each) {
        assert_eq!(got, &cluster_bootstrap(c, &cfg));
    }
}

#[test]
fn the_block_width_changes_no_replicate() {
    // Repeated values (class counts summed), distinct values (draw
    // counts read in place) and few classes drawn directly, over 333
    // clusters and 1,000 resamples (not a multiple of any width).
    let fams = [
        Family {
            sums: vec![
                (0..333).map(|i| ((i * 7) % 13) as f64).collect(),
                (0..333).map(|i| (i % 3) as f64).collect(),
            ],
            weights: (0..333).map(|i| 1.0 + (i % 2) as f64).collect(),
        },
        Family {
            sums: vec![(0..333).map(|i| (i as f64 * 0.618_034).fract()).collect()],
            weights: vec![1.0; 333],
        },
    ];
    let cfg = Bootstrap {
        resamples: 1000,
        ..Bootstrap::default()
    };
    for direct in [false, true] {
        let classes: Vec<Classes> = fams.iter().map(Classes::new).collect();
        let live = vec![true; classes.len()];
        let run = |out: Vec<Vec<f64>>, width: usize| {
            let b = Blocks { out, width };
            (0..3)
                .map(|s| column(&b, s, cfg.resamples).map(f64::to_bits).collect())
                .collect::<Vec<Vec<u64>>>()
        };
        let wide = run(
            replicate_blocks_of::<64, u32>(&classes, &live, direct, &cfg).0,
            64,
        );
        let mid = run(
            replicate_blocks_of::<16, u16>(&classes, &live, direct, &cfg).0,
            16,
        );
        let narrow = run(
            replicate_blocks_of::<4, u32>(&classes, &live, direct, &cfg).0,
            4,
        );
        let short = run(
            replicate_blocks_of::<64, u16>(&classes, &live, direct, &cfg).0,
            64,
        );
        assert_eq!(wide, short);
        assert_eq!(wide, mid);
        assert_eq!(wide, narrow);
        assert!(wide[0].len() == 1000 && wide[2].iter().any(|&x| x != wide[2][0]));
    }
}

/// Every replicate of a block — plain and AVX2 builds, blocks of 64, 16
/// and 4, counts of 2 and 4 bytes — equals the one computed a resample at a time: m ids drawn from
/// the resample's generator two to a 64-bit output, each class's count
/// summed, Σ count × value / Σ count × weight in class order. Families
/// of 5, 1 and 2 statistics (sums in groups of three and two); m odd;
/// 150 resamples (a partial last block, an odd generator at its end).
/// Generators stepped side by side (and in AVX2 registers) count the
/// draws each makes alone with `bounded_from`, over m small and odd,
/// and over m = 2^20 + 7, where a draw is near a rejection once in
/// 4,096 and rejected about once in 4,200 (2^32 mod m = 1,019,911).
#[test]
fn rows_drawn_side_by_side_are_each_generators_own() {
    for m in [1u32, 2, 3, 333, (1 << 20) + 7] {
        let alone = |b: usize| {
            let mut rng = resample_rng(3, b);
            let mut row = vec![0u32; m as usize];
            for _ in 0..m / 2 {
                let x = rng.next_u64();
                row[bounded_from(x as u32, &mut rng, m) as usize] += 1;
                row[bounded_from((x >> 32) as u32, &mut rng, m) as usize] += 1;
            }
            if m % 2 == 1 {
                let x = rng.next_u32();
                row[bounded_from(x, &mut rng, m) as usize] += 1;
            }
            (row, rng.next_u64())
        };
        let want: Vec<(Vec<u32>, u64)> = (0..4).map(alone).collect();
        let check = |rows: Vec<Vec<u32>>, gens: [Xoshiro; 4], how: &str| {
            for (j, (row, mut g)) in rows.into_iter().zip(gens).enumerate() {
                assert!(row == want[j].0, "m {m}, {how}: lane {j}'s counts");
                assert_eq!(
                    g.next_u64(),
                    want[j].1,
                    "m {m}, {how}: lane {j}'s generator"
                );
            }
        };
        let fresh = || -> ([Xoshiro; 4], Vec<Vec<u32>>) {
            (
                std::array::from_fn(|b| resample_rng(3, b)),
                vec![vec![0u32; m as usize]; 4],
            )
        };
        let (mut gens, mut rows) = fresh();
        let [a, b, c, d] = &mut rows[..] else {
            unreachable!()
        };
        draw_rows::<4, u32>([a, b, c, d], &mut gens, m);
        check(rows, gens, "four lanes");
        let (gens, mut rows) = fresh();
        let mut gens = gens.map(|g| [g]);
        for (row, g) in rows.iter_mut().zip(&mut gens) {
            draw_rows::<1, u32>([row], g, m);
        }
        check(rows, gens.map(|[g]| g), "one lane");
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            let (mut gens, mut rows) = fresh();
            let [a, b, c, d] = &mut rows[..] else {
                unreachable!()
            };
            // SAFETY: the processor has AVX2, checked just now.
            unsafe { draw_rows_avx2::<u32>([a, b, c, d], &mut gens, m) };
            check(rows, gens, "AVX2");
        }
    }
}

#[test]
fn blocks_equal_one_resample_at_a_time() {
    let m = 333;
    let fams = [
        Family {
            sums: (0..5)
                .map(|s| (0..m).map(|i| ((i * 7 + s) % 13) as f64 * 0.1).collect())
                .collect(),
            weights: (0..m).map(|i| 1.0 + (i % 2) as f64).collect(),
        },
        Family {
            sums: vec![(0..m).map(|i| (i as f64 * 0.618_034).fract()).collect()],
            weights: (0..m).map(|i| 1.0 + (i % 5) as f64).collect(),
        },
        Family {
            sums: vec![
                (0..m).map(|i| (i % 3) as f64).collect(),
                (0..m).map(|i| -((i % 4) as f64) / 3.0).collect(),
            ],
            weights: vec![2.0; m],
        },
    ]
    .into_iter()
    // Five more families of a few classes each, their clusters in
    // classes interleaved (class counts summed over lists of them).
    .chain((0..5).map(|j| Family {
        sums: vec![(0..m).map(|i| ((i * (j + 2)) % (j + 3)) as f64).collect()],
        weights: (0..m).map(|i| 1.0 + (i % (j + 2)) as f64).collect(),
    }))
    // Four more, each a function of one split of the clusters into six
    // kinds (as SPEC §4.2's cells of one budget and several K are of the
    // tasks' counts): their class counts added up from the joint classes'.
    .chain((0..4).map(|k| Family {
        sums: vec![(0..m).map(|i| ((i % 6) * (k + 1) % 4) as f64).collect()],
        weights: (0..m).map(|i| 1.0 + (i % 6 / 3) as f64).collect(),
    }))
    .collect::<Vec<_>>();
    let cfg = Bootstrap {
        resamples: 150,
        seed: 7,
        ..Bootstrap::default()
    };
    let reference = |b: usize| -> Vec<u64> {
        let mut rng = resample_rng(cfg.seed, b);
        let mut drawn = vec![0u32; m];
        for _ in 0..m / 2 {
            let x = rng.next_u64();
            drawn[bounded_from(x as u32, &mut rng, m as u32) as usize] += 1;
            drawn[bounded_from((x >> 32) as u32, &mut rng, m as u32) as usize] += 1;
        }
        let x = rng.next_u32();
        drawn[bounded_from(x, &mut rng, m as u32) as usize] += 1;
        let mut out = Vec::new();
        for f in &fams {
            let c = Classes::new(f);
            let mut count = vec![0u32; c.len()];
            for (i, &k) in c.of.iter().enumerate() {
                count[k as usize] += drawn[i];
            }
            let w: f64 = (0..c.len()).fold(0.0, |a, k| a + f64::from(count[k]) * c.weights[k]);
            for s in 0..c.stats {
                let v = (0..c.len()).fold(0.0, |a, k| a + f64::from(count[k]) * c.sum(k as u32, s));
                out.push((v / w).to_bits());
            }
        }
        out
    };
    let want: Vec<Vec<u64>> = (0..cfg.resamples).map(reference).collect();
    let classes: Vec<Classes> = fams.iter().map(Classes::new).collect();
    assert!(classes[0].len() < m && classes[1].len() == m);
    assert!(classes.iter().filter(|c| c.len() < m).count() > 4);
    let live = vec![true; classes.len()];
    let lists: Vec<Vec<u32>> = classes.iter().map(clusters_by_class).collect();
    let summed: Vec<bool> = classes.iter().map(|c| c.len() < m).collect();
    let groups = Groups::of(&classes, &summed);
    let grouped = groups.of.iter().filter(|g| g.is_some()).count();
    assert!(
        grouped >= 4 && groups.of[..2] == [None, None],
        "{:?}",
        groups.of
    );
    let stat_offset: Vec<usize> = std::iter::once(0)
        .chain(classes.iter().scan(0, |n, c| {
            *n += c.stats;
            Some(*n)
        }))
        .collect();
    let stats = stat_offset[classes.len()];
    let input = BlockInput {
        classes: &classes,
        live: &live,
        direct: false,
        lists: &lists,
        groups: &groups,
        stat_offset: &stat_offset,
        m: m as u32,
        cfg: &cfg,
    };
    fn check<const W: usize, C: Count>(input: &BlockInput, want: &[Vec<u64>], stats: usize) {
        type Build<C> = fn(&BlockInput, &mut Scratch<C>, usize) -> Vec<f64>;
        let mut builds: Vec<(&str, Build<C>)> = vec![("plain", block::<W, C, false>)];
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the processor has AVX2, checked just now.
            builds.push(("avx2", |i, s, b| unsafe { block_avx2::<W, C>(i, s, b) }));
        }
        for (name, build) in builds {
            let mut scratch = Scratch::default();
            for (b, want) in want.iter().enumerate() {
                let out = build(input, &mut scratch, b / W);
                let got: Vec<u64> = (0..stats).map(|s| out[s * W + b % W].to_bits()).collect();
                let bytes = std::mem::size_of::<C>();
                assert_eq!(
                    &got, want,
                    "{name} build, blocks of {W}, {bytes}-byte counts, resample {b}"
                );
            }
        }
    }
    check::<64, u16>(&input, &want, stats);
    check::<64, u32>(&input, &want, stats);
    check::<16, u16>(&input, &want, stats);
    check::<16, u32>(&input, &want, stats);
    check::<4, u16>(&input, &want, stats);
    check::<4, u32>(&input, &want, stats);
}

#[test]
fn multinomial_blocks_are_each_resamples_own_draws() {
    // Reference: one resample at a time, class by class, a binomial of
    // what is left with probability size / (clusters not yet passed),
    // stopping once nothing is left. Layouts: one class; a big class
    // first (its binomial the same in every resample); many small
    // classes (small means: the inversion method, many equal `left`s);
    // a last class of everything left; two billion clusters. Blocks of 1,
    // 5 and 64 resamples, and of DIRECT_BLOCK.
    fn reference(size: &[u64], m: u64, rng: &mut Xoshiro) -> Vec<u32> {
        let (mut left, mut mass) = (m, m);
        let mut out = vec![0u32; size.len()];
        for (k, &s) in size.iter().enumerate() {
            if left == 0 {
                break;
            }
            let x = if s == mass {
                left
            } else {
                // rand_distr's own binomial: the reference for ours.
                rand_distr::Binomial::new(left, s as f64 / mass as f64)
                    .map_or(0, |d| rand_distr::Distribution::sample(&d, rng))
            };
            out[k] = x as u32;
            left -= x;
            mass -= s;
        }
        out
    }
    let layouts: Vec<Vec<u64>> = vec![
        vec![40],
        vec![3000, 200, 50, 5, 1, 1],
        (0..120).map(|i| 1 + (i % 7)).collect(),
        vec![1, 1, 2, 500, 9000],
        // What is left after the first class spreads over more values in
        // a block of 1,000 than `Binomials` indexes: set up where drawn.
        vec![1 << 30, 1 << 30, 5],
    ];
    // One worker's binomials, reused across blocks and layouts.
    let mut made = Binomials::default();
    fn block<const W: usize>(
        size: &[u64],
        m: u64,
        rngs: &mut [Xoshiro],
        made: &mut Binomials,
    ) -> Vec<u32> {
        let mut counts = vec![0u32; size.len() * W];
        multinomial_block::<W, u32>(&mut counts, size, m, rngs, made);
        counts
    }
    for size in &layouts {
        let m: u64 = size.iter().sum();
        for (rr, w) in [
            (1usize, 64),
            (5, 64),
            (64, 64),
            (1, DIRECT_BLOCK),
            (1000, DIRECT_BLOCK),
        ] {
            let mut rngs: Vec<_> = (0..rr).map(|r| resample_rng(11, 300 + r)).collect();
            let counts = if w == 64 {
                block::<64>(size, m, &mut rngs, &mut made)
            } else {
                block::<DIRECT_BLOCK>(size, m, &mut rngs, &mut made)
            };
            for r in 0..rr {
                let got: Vec<u32> = (0..size.len()).map(|k| counts[k * w + r]).collect();
                let want = reference(size, m, &mut resample_rng(11, 300 + r));
                assert_eq!(
                    got, want,
                    "sizes {size:?}, resample {r} of {rr}, blocks of {w}"
                );
                assert_eq!(got.iter().map(|&x| u64::from(x)).sum::<u64>(), m);
            }
            // Each generator was left where the reference leaves it.
            for (r, rng) in rngs.iter_mut().enumerate() {
                let mut alone = resample_rng(11, 300 + r);
                reference(size, m, &mut alone);
                assert_eq!(rng.next_u64(), alone.next_u64());
            }
        }
    }
}

/// Multinomial draws in wide blocks give every resample's replicates
/// as blocks of 64 do (each checked against one resample at a time in
/// `multinomial_blocks_are_each_resamples_own_draws` and
/// `blocks_equal_one_resample_at_a_time`).
#[test]
fn wide_direct_blocks_equal_narrow_ones() {
    let m = 3000;
    let fams: Vec<Family> = (0..3)
        .map(|j| Family {
            sums: (0..2)
                .map(|s| {
                    (0..m)
                        .map(|i| ((i * (j + 3) + s) % (j + 5)) as f64 * 0.25)
                        .collect()
                })
                .collect(),
            weights: (0..m).map(|i| 1.0 + (i % (j + 2)) as f64).collect(),
        })
        .collect();
    let classes: Vec<Classes> = fams.iter().map(Classes::new).collect();
    let live = vec![true; classes.len()];
    assert!(classes.iter().all(|c| draws_directly(c, true, m)));
    let cfg = Bootstrap {
        resamples: 2500,
        seed: 5,
        ..Bootstrap::default()
    };
    let narrow = replicate_blocks_of::<64, u16>(&classes, &live, true, &cfg).0;
    let wide = replicate_blocks_of::<DIRECT_BLOCK, u16>(&classes, &live, true, &cfg).0;
    let bits = |out: Vec<Vec<f64>>, width: usize| -> Vec<Vec<u64>> {
        let blocks = Blocks { out, width };
        (0..6)
            .map(|col| {
                column(&blocks, col, cfg.resamples)
                    .map(f64::to_bits)
                    .collect()
            })
            .collect()
    };
    assert_eq!(bits(wide, DIRECT_BLOCK), bits(narrow, 64));
}

#[test]
fn results_do_not_depend_on_the_thread_count() {
    let fam = Family {
        sums: vec![
            (0..300).map(|i| ((i * 7) % 13) as f64).collect(),
            (0..300).map(|i| (i % 3) as f64).collect(),
        ],
        weights: vec![1.0; 300],
    };
    let run = |threads| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| {
                cluster_bootstrap_families(std::slice::from_ref(&fam), &Bootstrap::default())
            })
    };
    assert_eq!(run(1), run(3));
}
