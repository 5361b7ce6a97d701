//! The hot loop: drawing a block's cluster ids lane by lane and counting them into classes (AVX2 where the machine has it).

use super::*;

/// Draws m cluster ids for each resample of a block, counting them per
/// cluster: `draws[i * W + r]`, every entry of `draws` (`m * W`) written.
/// Each resample counts into its own cache-resident row first; the rows are
/// then transposed tile by tile. `AVX2`: only inlined into [`block_avx2`].
#[inline(always)]
pub(super) fn draw_block<const W: usize, C: Count, const AVX2: bool>(
    draws: &mut [C],
    rows: &mut Vec<C>,
    rngs: &mut [Xoshiro],
    m: u32,
) {
    let mu = m as usize;
    rows.clear();
    // A row for every resample of the block; those past the last resample
    // stay zero, as their draws do.
    rows.resize(W * mu, C::default());
    // Resamples `LANES` at a time, their generators stepped side by side
    // (vector registers in the AVX2 build), the rest one at a time.
    let done = rngs.len() / LANES * LANES;
    for (group, g) in rows
        .chunks_exact_mut(LANES * mu)
        .zip(rngs.chunks_exact_mut(LANES))
    {
        let mut it = group.chunks_exact_mut(mu);
        let rows: [&mut [C]; LANES] = std::array::from_fn(|_| it.next().expect("a row"));
        let g: &mut [Xoshiro; LANES] = g.try_into().expect("LANES generators");
        #[cfg(target_arch = "x86_64")]
        if AVX2 {
            // SAFETY: `AVX2` is true only in `block_avx2`'s build, which
            // runs where the processor has AVX2.
            unsafe { draw_rows_avx2::<C>(rows, g, m) };
            continue;
        }
        draw_rows::<LANES, C>(rows, g, m);
    }
    for (row, g) in rows[done * mu..]
        .chunks_exact_mut(mu)
        .zip(&mut rngs[done..])
    {
        draw_rows::<1, C>([row], std::array::from_mut(g), m);
    }
    if W >= 8 {
        transpose::<W, 8, C>(draws, rows, mu);
    } else {
        transpose::<W, 4, C>(draws, rows, mu);
    }
}

/// Resamples whose draws go side by side (one AVX2 register of each
/// generator word).
const LANES: usize = 4;

/// m draws from each of `N` generators, counted into its row, the
/// generators stepped side by side; each generator's draws are those it
/// makes alone, in the same order: two 32-bit draws from each 64-bit
/// output, each as [`bounded_from`] makes it.
#[inline(always)]
pub(super) fn draw_rows<const N: usize, C: Count>(
    mut rows: [&mut [C]; N],
    gens: &mut [Xoshiro; N],
    m: u32,
) {
    let mut lanes = Lanes::of(gens);
    let m64 = u64::from(m);
    for _ in 0..m / 2 {
        let x = lanes.next_u64();
        let lo: [u64; N] = std::array::from_fn(|j| (x[j] & 0xFFFF_FFFF) * m64);
        let hi: [u64; N] = std::array::from_fn(|j| (x[j] >> 32) * m64);
        // `bounded_from`'s test for a draw it might reject, every lane at
        // once: true about once in 2^32 / m draws.
        let mut near = false;
        for j in 0..N {
            near |= ((lo[j] as u32) < m) | ((hi[j] as u32) < m);
        }
        if near {
            let mut g = lanes.unpack();
            draw_pairs_exactly(&mut rows, &mut g, x, m);
            lanes = Lanes::of(&g);
        } else {
            for (row, (l, h)) in rows.iter_mut().zip(lo.iter().zip(&hi)) {
                row[(l >> 32) as usize] += C::ONE;
                row[(h >> 32) as usize] += C::ONE;
            }
        }
    }
    *gens = lanes.unpack();
    draw_last_if_odd(&mut rows, gens, m);
}

/// [`draw_rows`] of four generators in AVX2 registers: the same draws.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
pub(super) fn draw_rows_avx2<C: Count>(mut rows: [&mut [C]; 4], gens: &mut [Xoshiro; 4], m: u32) {
    use crate::analysis::xoshiro::avx2::{lanes, Lanes4};
    use std::arch::x86_64::*;
    assert!(
        rows.iter().all(|r| r.len() == m as usize),
        "a row per cluster"
    );
    let mut l = Lanes4::of(gens);
    let mv = _mm256_set1_epi64x(i64::from(m));
    let low32 = _mm256_set1_epi64x(0xFFFF_FFFF);
    for _ in 0..m / 2 {
        let x = l.next_u64();
        let lo = _mm256_mul_epu32(x, mv);
        let hi = _mm256_mul_epu32(_mm256_srli_epi64::<32>(x), mv);
        // `bounded_from`'s test (the product's low 32 bits below m).
        let near = _mm256_or_si256(
            _mm256_cmpgt_epi64(mv, _mm256_and_si256(lo, low32)),
            _mm256_cmpgt_epi64(mv, _mm256_and_si256(hi, low32)),
        );
        if _mm256_testz_si256(near, near) == 0 {
            let mut g = l.unpack();
            draw_pairs_exactly(&mut rows, &mut g, lanes(x), m);
            l = Lanes4::of(&g);
        } else {
            let a = lanes(_mm256_srli_epi64::<32>(lo));
            let b = lanes(_mm256_srli_epi64::<32>(hi));
            for (row, (a, b)) in rows.iter_mut().zip(a.iter().zip(&b)) {
                // SAFETY: (x × m) >> 32 < m for x < 2^32, and every row
                // holds m counts (asserted above).
                unsafe {
                    *row.get_unchecked_mut(*a as usize) += C::ONE;
                    *row.get_unchecked_mut(*b as usize) += C::ONE;
                }
            }
        }
    }
    *gens = l.unpack();
    draw_last_if_odd(&mut rows, gens, m);
}

/// Each generator's two draws from its output `x[j]`, as [`bounded_from`]
/// makes them (a rejected half replaced from the generator).
#[inline(always)]
fn draw_pairs_exactly<const N: usize, C: Count>(
    rows: &mut [&mut [C]; N],
    gens: &mut [Xoshiro; N],
    x: [u64; N],
    m: u32,
) {
    for (j, (row, g)) in rows.iter_mut().zip(gens.iter_mut()).enumerate() {
        row[bounded_from(x[j] as u32, g, m) as usize] += C::ONE;
        row[bounded_from((x[j] >> 32) as u32, g, m) as usize] += C::ONE;
    }
}

/// An odd m's last draw, from a fresh 32-bit output of each generator.
#[inline(always)]
fn draw_last_if_odd<const N: usize, C: Count>(
    rows: &mut [&mut [C]; N],
    gens: &mut [Xoshiro; N],
    m: u32,
) {
    if m % 2 == 1 {
        for (row, g) in rows.iter_mut().zip(gens.iter_mut()) {
            let x = g.next_u32();
            row[bounded_from(x, g, m) as usize] += C::ONE;
        }
    }
}

/// `draws[i * W + r] = rows[r * mu + i]`, a tile of clusters at a time, `G`
/// rows at a time: each cluster's `G` counts gathered and stored as one
/// run. Storing them one at a time was about a third of [`draw_block`]'s
/// time (`c200k`: its share of the run's samples 19.9 → 14.9 %).
#[inline(always)]
fn transpose<const W: usize, const G: usize, C: Count>(draws: &mut [C], rows: &[C], mu: usize) {
    const TILE: usize = 64;
    for i0 in (0..mu).step_by(TILE) {
        let n = TILE.min(mu - i0);
        for r0 in (0..W).step_by(G) {
            let src: [&[C]; G] = std::array::from_fn(|j| &rows[(r0 + j) * mu + i0..][..n]);
            for (k, dst) in draws[i0 * W..].chunks_exact_mut(W).take(n).enumerate() {
                let v: [C; G] = std::array::from_fn(|j| src[j][k]);
                dst[r0..r0 + G].copy_from_slice(&v);
            }
        }
    }
}

/// A family's class counts for a block: each class's draw counts summed
/// over its clusters (`list`: the clusters class by class, `size[k]` of
/// class k; [`clusters_by_class`]) in registers, and written once — a
/// class row loaded, added to and stored for every cluster was most of the
/// block's time (the store port's limit: at 1 M trajectories Pass@(K,T)
/// has 480 families of ~2,600 clusters and ~42 classes). The largest
/// class is not summed: a resample draws m clusters in all, so its count is
/// m less the others' (exact integers, the same counts; at 1 M trajectories
/// 40 % of the clusters summed, half of them in the joint families).
#[inline(always)]
pub(super) fn class_counts<const W: usize, C: Count, const AVX2: bool>(
    counts: &mut [C],
    list: &[u32],
    size: &[u64],
    draws: &[C],
    m: u32,
) {
    // The first of the largest classes.
    let largest = size
        .iter()
        .enumerate()
        .fold(
            (0, 0),
            |(k, n), (j, &s)| if s > n { (j, s) } else { (k, n) },
        )
        .0;
    #[cfg(target_arch = "x86_64")]
    if AVX2 && (W * std::mem::size_of::<C>()).is_multiple_of(32) {
        // SAFETY: `AVX2` is true only in `block_avx2`'s build, which runs
        // where the processor has AVX2.
        unsafe { class_counts_avx2::<W, C>(counts, list, size, draws, largest, m) };
        return;
    }
    let mut at = 0;
    let mut total = [C::default(); W];
    for (k, (dst, &n)) in counts.chunks_exact_mut(W).zip(size).enumerate() {
        dst.fill(C::default());
        if k != largest {
            for &i in &list[at..at + n as usize] {
                let src = &draws[i as usize * W..(i as usize + 1) * W];
                for (d, s) in dst.iter_mut().zip(src) {
                    *d += *s;
                }
            }
            for (t, d) in total.iter_mut().zip(dst.iter()) {
                *t += *d;
            }
        }
        at += n as usize;
    }
    if let Some(dst) = counts.chunks_exact_mut(W).nth(largest) {
        for (d, t) in dst.iter_mut().zip(total) {
            *d = C::of(u64::from(m)) - t;
        }
    }
}

/// [`class_counts`] in AVX2 registers, 32 bytes of counts at a time (LLVM
/// left the 16-wide u16 sum of 11 M's blocks scalar: `movzwl`, `add`). The
/// same sums: no count exceeds m, which fits the count type, so wrapping
/// lane adds are exact.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn class_counts_avx2<const W: usize, C: Count>(
    counts: &mut [C],
    list: &[u32],
    size: &[u64],
    draws: &[C],
    largest: usize,
    m: u32,
) {
    use std::arch::x86_64::*;
    let vectors = W * std::mem::size_of::<C>() / 32;
    assert_eq!(vectors * 32, W * std::mem::size_of::<C>(), "whole vectors");
    assert!(vectors <= 8, "at most 64 four-byte counts");
    assert!(std::mem::size_of::<C>() == 2 || std::mem::size_of::<C>() == 4);
    let two = std::mem::size_of::<C>() == 2;
    let add = |a, b| {
        if two {
            _mm256_add_epi16(a, b)
        } else {
            _mm256_add_epi32(a, b)
        }
    };
    let mut total = [_mm256_setzero_si256(); 8];
    let mut at = 0;
    for (k, (dst, &n)) in counts.chunks_exact_mut(W).zip(size).enumerate() {
        let mut v = [_mm256_setzero_si256(); 8];
        if k != largest {
            for &i in &list[at..at + n as usize] {
                let src = &draws[i as usize * W..(i as usize + 1) * W];
                let s = src.as_ptr().cast::<__m256i>();
                for (j, v) in v.iter_mut().enumerate().take(vectors) {
                    // SAFETY: `src` holds W counts, `vectors` × 32 bytes
                    // (asserted above); an unaligned load.
                    *v = add(*v, unsafe { _mm256_loadu_si256(s.add(j)) });
                }
            }
            for (t, v) in total.iter_mut().zip(&v).take(vectors) {
                *t = add(*t, *v);
            }
        }
        let d = dst.as_mut_ptr().cast::<__m256i>();
        for (j, v) in v.iter().enumerate().take(vectors) {
            // SAFETY: `dst` holds W counts, `vectors` × 32 bytes; an
            // unaligned store.
            unsafe { _mm256_storeu_si256(d.add(j), *v) };
        }
        at += n as usize;
    }
    // The largest class: m less the others (no lane exceeds m, so the
    // wrapping lane arithmetic is exact).
    if let Some(dst) = counts.chunks_exact_mut(W).nth(largest) {
        let all = if two {
            _mm256_set1_epi16(m as u16 as i16)
        } else {
            _mm256_set1_epi32(m as i32)
        };
        let d = dst.as_mut_ptr().cast::<__m256i>();
        for (j, t) in total.iter().enumerate().take(vectors) {
            let c = if two {
                _mm256_sub_epi16(all, *t)
            } else {
                _mm256_sub_epi32(all, *t)
            };
            // SAFETY: as above.
            unsafe { _mm256_storeu_si256(d.add(j), c) };
        }
    }
}

/// A uniform integer in 0..n from the 32 random bits `x`, exactly
/// (Lemire's multiply-and-reject; a rejected `x` is replaced from `rng`).
pub(super) fn bounded_from(mut x: u32, rng: &mut Xoshiro, n: u32) -> u32 {
    let mut mul = u64::from(x) * u64::from(n);
    let mut low = mul as u32;
    if low < n {
        let threshold = n.wrapping_neg() % n;
        while low < threshold {
            x = rng.next_u32();
            mul = u64::from(x) * u64::from(n);
            low = mul as u32;
        }
    }
    (mul >> 32) as u32
}
