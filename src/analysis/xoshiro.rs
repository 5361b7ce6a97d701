//! The bootstrap's generator: rand's `Xoshiro256PlusPlus` (rand 0.10.4,
//! `src/rngs/xoshiro256plusplus.rs`: `seed_from_u64`, `try_next_u64`,
//! `try_next_u32`) with its state in reach, so that several resamples'
//! generators can step side by side in one register each of their words
//! ([`Lanes`]). The same numbers from the same seed — tested below against
//! rand's own generator — so no replicate changes.

use rand::rand_core::{utils, Infallible};
use rand::TryRng;

/// Xoshiro256++, as rand 0.10 seeds and steps it.
#[derive(Debug, Clone)]
pub struct Xoshiro {
    s: [u64; 4],
}

impl Xoshiro {
    /// rand's `seed_from_u64`: the state from SplitMix64 of `state`.
    pub fn seed_from_u64(mut state: u64) -> Xoshiro {
        const PHI: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut s = [0; 4];
        for w in s.iter_mut() {
            state = state.wrapping_add(PHI);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            *w = z ^ (z >> 31);
        }
        Xoshiro { s }
    }

    #[inline(always)]
    pub fn next_u64(&mut self) -> u64 {
        let mut l = Lanes {
            s: self.s.map(|w| [w]),
        };
        let [x] = l.next_u64();
        self.s = l.s.map(|[w]| w);
        x
    }

    /// The high half of the next 64-bit output, as rand's.
    #[inline(always)]
    pub fn next_u32(&mut self) -> u32 {
        (self.next_u64() >> 32) as u32
    }
}

impl TryRng for Xoshiro {
    type Error = Infallible;

    #[inline(always)]
    fn try_next_u32(&mut self) -> Result<u32, Infallible> {
        Ok(self.next_u32())
    }

    #[inline(always)]
    fn try_next_u64(&mut self) -> Result<u64, Infallible> {
        Ok(self.next_u64())
    }

    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Infallible> {
        utils::fill_bytes_via_next_word(dst, || Ok(self.next_u64()))
    }
}

/// `N` generators stepped together, word-major (`s[k][j]`: generator j's
/// word k), so that each step is a handful of operations on `N` lanes —
/// vector instructions where the target has them. Each generator's outputs
/// are those it gives alone.
#[derive(Debug, Clone)]
pub struct Lanes<const N: usize> {
    s: [[u64; N]; 4],
}

impl<const N: usize> Lanes<N> {
    #[inline(always)]
    pub fn of(gens: &[Xoshiro; N]) -> Lanes<N> {
        Lanes {
            s: std::array::from_fn(|k| std::array::from_fn(|j| gens[j].s[k])),
        }
    }

    /// The generators, each where its lane has got to.
    #[inline(always)]
    pub fn unpack(&self) -> [Xoshiro; N] {
        std::array::from_fn(|j| Xoshiro {
            s: std::array::from_fn(|k| self.s[k][j]),
        })
    }

    /// Each generator's next 64-bit output (rand's `try_next_u64`, lane by
    /// lane).
    #[inline(always)]
    pub fn next_u64(&mut self) -> [u64; N] {
        let [s0, s1, s2, s3] = &mut self.s;
        let mut res = [0u64; N];
        for j in 0..N {
            res[j] = s0[j]
                .wrapping_add(s3[j])
                .rotate_left(23)
                .wrapping_add(s0[j]);
            let t = s1[j] << 17;
            s2[j] ^= s0[j];
            s3[j] ^= s1[j];
            s1[j] ^= s2[j];
            s0[j] ^= s3[j];
            s2[j] ^= t;
            s3[j] = s3[j].rotate_left(45);
        }
        res
    }
}

/// Four generators stepped in AVX2 registers: one register per generator
/// word, a generator per 64-bit lane — [`Lanes`]`<4>` in vector
/// instructions (LLVM does not vectorize that loop by itself).
#[cfg(target_arch = "x86_64")]
pub(crate) mod avx2 {
    use std::arch::x86_64::*;

    use super::Xoshiro;

    #[derive(Clone, Copy)]
    pub struct Lanes4 {
        s: [__m256i; 4],
    }

    impl Lanes4 {
        #[target_feature(enable = "avx2")]
        pub fn of(gens: &[Xoshiro; 4]) -> Lanes4 {
            let word = |k: usize| {
                let w = |j: usize| gens[j].s[k] as i64;
                _mm256_set_epi64x(w(3), w(2), w(1), w(0))
            };
            Lanes4 {
                s: [word(0), word(1), word(2), word(3)],
            }
        }

        /// The generators, each where its lane has got to.
        #[target_feature(enable = "avx2")]
        pub fn unpack(&self) -> [Xoshiro; 4] {
            let words = self.s.map(|v| lanes(v));
            std::array::from_fn(|j| Xoshiro {
                s: std::array::from_fn(|k| words[k][j]),
            })
        }

        /// Each generator's next 64-bit output, lane j generator j's.
        #[target_feature(enable = "avx2")]
        #[inline]
        pub fn next_u64(&mut self) -> __m256i {
            let [s0, s1, s2, s3] = &mut self.s;
            let sum = _mm256_add_epi64(*s0, *s3);
            let rotated =
                _mm256_or_si256(_mm256_slli_epi64::<23>(sum), _mm256_srli_epi64::<41>(sum));
            let res = _mm256_add_epi64(rotated, *s0);
            let t = _mm256_slli_epi64::<17>(*s1);
            *s2 = _mm256_xor_si256(*s2, *s0);
            *s3 = _mm256_xor_si256(*s3, *s1);
            *s1 = _mm256_xor_si256(*s1, *s2);
            *s0 = _mm256_xor_si256(*s0, *s3);
            *s2 = _mm256_xor_si256(*s2, t);
            *s3 = _mm256_or_si256(_mm256_slli_epi64::<45>(*s3), _mm256_srli_epi64::<19>(*s3));
            res
        }
    }

    /// A register's four 64-bit lanes, lane 0 first.
    #[target_feature(enable = "avx2")]
    #[inline]
    pub fn lanes(v: __m256i) -> [u64; 4] {
        [
            _mm256_extract_epi64::<0>(v) as u64,
            _mm256_extract_epi64::<1>(v) as u64,
            _mm256_extract_epi64::<2>(v) as u64,
            _mm256_extract_epi64::<3>(v) as u64,
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::Xoshiro256PlusPlus;
    use rand::{Rng, SeedableRng};

    /// The same outputs as rand's generator from the same seeds, whichever
    /// width is asked for, and filled bytes too.
    #[test]
    fn gives_what_rands_xoshiro_gives() {
        for seed in (0..200u64).chain([u64::MAX, 1 << 63, 0x9E37_79B9_7F4A_7C15]) {
            let mut ours = Xoshiro::seed_from_u64(seed);
            let mut theirs = Xoshiro256PlusPlus::seed_from_u64(seed);
            for i in 0..1000 {
                if i % 3 == 0 {
                    assert_eq!(ours.next_u32(), theirs.next_u32(), "seed {seed} draw {i}");
                } else {
                    assert_eq!(ours.next_u64(), theirs.next_u64(), "seed {seed} draw {i}");
                }
            }
            let (mut a, mut b) = ([0u8; 13], [0u8; 13]);
            ours.fill_bytes(&mut a);
            theirs.fill_bytes(&mut b);
            assert_eq!(a, b);
            assert_eq!(ours.next_u64(), theirs.next_u64());
        }
        // rand's own reference outputs for seed_from_u64(0).
        let mut g = Xoshiro::seed_from_u64(0);
        assert_eq!(g.next_u64(), 5_987_356_902_031_041_503);
        assert_eq!(g.next_u64(), 7_051_070_477_665_621_255);
    }

    /// Lanes step as their generators alone.
    #[test]
    fn lanes_step_as_each_generator_alone() {
        let gens: [Xoshiro; 5] = std::array::from_fn(|j| Xoshiro::seed_from_u64(j as u64 * 77));
        let mut alone = gens.clone();
        let mut lanes = Lanes::of(&gens);
        for _ in 0..500 {
            let x = lanes.next_u64();
            for (j, g) in alone.iter_mut().enumerate() {
                assert_eq!(x[j], g.next_u64());
            }
        }
        for (a, b) in lanes.unpack().iter_mut().zip(&mut alone) {
            assert_eq!(a.next_u64(), b.next_u64());
        }
    }

    /// The AVX2 lanes step as their generators alone (where the processor
    /// has AVX2).
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn avx2_lanes_step_as_each_generator_alone() {
        if !std::arch::is_x86_feature_detected!("avx2") {
            return;
        }
        let gens: [Xoshiro; 4] = std::array::from_fn(|j| Xoshiro::seed_from_u64(j as u64 + 900));
        let mut alone = gens.clone();
        // SAFETY: the processor has AVX2, checked just now.
        unsafe {
            let mut lanes = avx2::Lanes4::of(&gens);
            for _ in 0..500 {
                let x = avx2::lanes(lanes.next_u64());
                for (j, g) in alone.iter_mut().enumerate() {
                    assert_eq!(x[j], g.next_u64());
                }
            }
            for (a, b) in lanes.unpack().iter_mut().zip(&mut alone) {
                assert_eq!(a.next_u64(), b.next_u64());
            }
        }
    }
}
