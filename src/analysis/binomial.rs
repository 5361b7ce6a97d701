//! The binomial draws of the multinomial bootstrap, exactly rand_distr's.
//!
//! `rand_distr::Binomial` (0.6.0, `src/binomial.rs`, `fn btpe`) redoes its
//! BTPE set-up — a dozen divisions and two `Uniform::new` — on every draw;
//! the bootstrap draws from one (n, p) thousands of times. [`Binomial`]
//! does that set-up once, in [`Binomial::new`], with the very same
//! expressions in the same order, and then runs rand_distr's acceptance
//! loop verbatim: the same numbers from the same generator state, and the
//! generator left in the same state (tested below against rand_distr on a
//! grid of n and p). Every other method (inversion for np < 10, a constant
//! for p ∈ {0, 1}) is rand_distr's own, called as it is.

use std::cmp::Ordering;

use rand::distr::{Distribution, Uniform};
use rand::Rng;

/// A binomial distribution to draw from many times.
#[derive(Debug, Clone, Copy)]
pub enum Binomial {
    Btpe(Btpe),
    /// What rand_distr does other than BTPE, as it does it.
    Other(rand_distr::Binomial),
}

/// rand_distr's `Btpe` with what `fn btpe` computes on each call.
#[derive(Debug, Clone, Copy)]
pub struct Btpe {
    n: u64,
    p: f64,
    m: u64,
    p1: f64,
    flipped: bool,
    q: f64,
    npq: f64,
    x_m: f64,
    x_l: f64,
    x_r: f64,
    c: f64,
    p2: f64,
    p3: f64,
    lambda_l: f64,
    lambda_r: f64,
    gen_u: Uniform<f64>,
    gen_v: Uniform<f64>,
    s: f64,
    a: f64,
    /// The acceptance test's first factor above the mode, a / (m + 1) − s,
    /// set up once: loop-invariant, it is the compiler's to compute at the
    /// start of every draw, most of which never read it.
    above_mode: f64,
    /// Its last factor below the mode, a / m − s (likewise: the compiler
    /// did compute it at the start of every draw, 6–7 % of
    /// [`Binomial::sample`]'s time in `perf annotate`).
    at_mode: f64,
    /// What the final acceptance test computes from n and m alone: (m +
    /// 1), (n − m + 1) and (n − m) + 0.5 (their Stirling corrections, eight
    /// divisions, are computed there, in [`Btpe::rejects`]: that test is
    /// rare, set-ups are not).
    f1: f64,
    z: f64,
    n_m_half: f64,
}

/// rand_distr's threshold between inversion and BTPE.
const BINV_THRESHOLD: f64 = 10.;

impl Binomial {
    /// As `rand_distr::Binomial::new(n, p)`; `None` where it errs.
    pub fn new(n: u64, p: f64) -> Option<Binomial> {
        let other = || rand_distr::Binomial::new(n, p).ok().map(Binomial::Other);
        if !(p > 0.0 && p < 1.0) {
            return other();
        }
        let flipped = p > 0.5;
        let p = if flipped { 1.0 - p } else { p };
        let np = n as f64 * p;
        if np < BINV_THRESHOLD {
            return other();
        }
        // `Binomial::new`'s BTPE branch.
        let q = 1.0 - p;
        let npq = np * q;
        let p1 = (2.195 * npq.sqrt() - 4.6 * q).floor() + 0.5;
        let f_m = np + p;
        let m = f_m as u64;
        // `fn btpe`'s set-up (its `np`, `q`, `npq` and `f_m` are the above).
        let x_m = (m as f64) + 0.5;
        let x_l = x_m - p1;
        let x_r = x_m + p1;
        let c = 0.134 + 20.5 / (15.3 + (m as f64));
        let p2 = p1 * (1. + 2. * c);
        let lambda = |a: f64| a * (1. + 0.5 * a);
        let lambda_l = lambda((f_m - x_l) / (f_m - x_l * p));
        let lambda_r = lambda((x_r - f_m) / (x_r * q));
        let p3 = p2 + c / lambda_l;
        let p4 = p3 + c / lambda_r;
        let s = p / q;
        let a = s * (n as f64 + 1.);
        let f1 = (m + 1) as f64;
        let z = ((n - m) + 1) as f64;
        Some(Binomial::Btpe(Btpe {
            n,
            p,
            m,
            p1,
            flipped,
            q,
            npq,
            x_m,
            x_l,
            x_r,
            c,
            p2,
            p3,
            lambda_l,
            lambda_r,
            gen_u: Uniform::new(0., p4).ok()?,
            gen_v: Uniform::new(0., 1.).ok()?,
            s,
            a,
            above_mode: a / ((m + 1) as f64) - s,
            at_mode: a / (m as f64) - s,
            f1,
            z,
            n_m_half: ((n - m) as f64) + 0.5,
        }))
    }

    #[inline]
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> u64 {
        match self {
            Binomial::Btpe(b) => b.sample(rng),
            Binomial::Other(d) => d.sample(rng),
        }
    }
}

impl Btpe {
    /// rand_distr 0.6.0's `fn btpe`: its loop's first pass up to the
    /// triangle's test here, small enough to inline where it is drawn —
    /// most draws end there — and the rest in [`Btpe::past_triangle`], not
    /// inlined: its set-up of a dozen values (loaded, some spilled to the
    /// stack) was made on every draw.
    #[inline]
    #[allow(clippy::neg_cmp_op_on_partial_ord)]
    fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> u64 {
        let u = self.gen_u.sample(rng);
        let v = self.gen_v.sample(rng);
        let y = if !(u > self.p1) {
            (self.x_m - self.p1 * v + u) as u64
        } else {
            self.past_triangle(rng, u, v)
        };
        if self.flipped {
            self.n - y
        } else {
            y
        }
    }

    /// rand_distr 0.6.0's `fn btpe` loop, verbatim but for the set-up and
    /// the terms of the final test that depend on n and m alone, computed
    /// once (its `!(u > p1)` tests kept as written: they decide NaN as it
    /// does), from its first pass's `u` and `v`, once past the triangle's
    /// test; y before the flip.
    #[inline(never)]
    #[allow(clippy::many_single_char_names, clippy::neg_cmp_op_on_partial_ord)]
    fn past_triangle<R: Rng + ?Sized>(&self, rng: &mut R, u: f64, v: f64) -> u64 {
        const SQUEEZE_THRESHOLD: u64 = 20;
        let b = self;
        let (n, m, p1, npq) = (b.n, b.m, b.p1, b.npq);
        let mut y: u64;
        let mut first = Some((u, v));
        loop {
            let (u, mut v) = match first.take() {
                Some(uv) => uv,
                None => {
                    let u = b.gen_u.sample(rng);
                    (u, b.gen_v.sample(rng))
                }
            };
            if !(u > p1) {
                y = (b.x_m - p1 * v + u) as u64;
                break;
            }
            if !(u > b.p2) {
                let x = b.x_l + (u - p1) / b.c;
                v = v * b.c + 1.0 - (x - b.x_m).abs() / p1;
                if v > 1. {
                    continue;
                } else {
                    y = x as u64;
                }
            } else if !(u > b.p3) {
                let y_tmp = b.x_l + v.ln() / b.lambda_l;
                if y_tmp < 0.0 {
                    continue;
                } else {
                    y = y_tmp as u64;
                    v *= (u - b.p2) * b.lambda_l;
                }
            } else {
                y = (b.x_r - v.ln() / b.lambda_r) as u64;
                if y > n {
                    continue;
                } else {
                    v *= (u - b.p3) * b.lambda_r;
                }
            }
            let k = y.abs_diff(m);
            if !(k > SQUEEZE_THRESHOLD && (k as f64) < 0.5 * npq - 1.) {
                let mut f = 1.0;
                match m.cmp(&y) {
                    Ordering::Less => {
                        // Its first factor set up once (the same bits: 1
                        // times it), not at the start of every draw.
                        f *= b.above_mode;
                        let mut i = m + 1;
                        while i != y {
                            i += 1;
                            f *= b.a / (i as f64) - b.s;
                        }
                    }
                    Ordering::Greater => f = b.below_mode(y, v),
                    Ordering::Equal => {}
                }
                if v > f {
                    continue;
                } else {
                    break;
                }
            }
            let k = k as f64;
            let rho = (k / npq) * ((k * (k / 3. + 0.625) + 1. / 6.) / npq + 0.5);
            let t = -0.5 * k * k / npq;
            let alpha = v.ln();
            if alpha < t - rho {
                break;
            }
            if alpha > t + rho {
                continue;
            }
            if b.rejects(y, alpha) {
                continue;
            }
            break;
        }
        y
    }
}

impl Btpe {
    /// rand_distr's final acceptance test, as written: whether `alpha`
    /// lies above the log of the ratio of the probabilities of y and m.
    /// Reached by few draws, and apart — cold, never inlined — so that its
    /// terms that depend on n and m alone (Stirling corrections: eleven
    /// divisions one after another) are computed here, not hoisted by the
    /// compiler to the start of every draw, where they were 40 % of
    /// [`Binomial::sample`]'s time (11 M trajectories, perf).
    #[cold]
    #[inline(never)]
    fn rejects(&self, y: u64, alpha: f64) -> bool {
        let (n, m, b) = (self.n, self.m, self);
        let x1 = (y + 1) as f64;
        let (f1, z) = (b.f1, b.z);
        let w = ((n - y) + 1) as f64;
        let y_sub_m = if y > m {
            (y - m) as f64
        } else {
            -((m - y) as f64)
        };
        alpha
            > b.x_m * (f1 / x1).ln()
                + b.n_m_half * (z / w).ln()
                + y_sub_m * (w * b.p / (x1 * b.q)).ln()
                + stirling(f1)
                + stirling(z)
                - stirling(x1)
                - stirling(w)
    }

    /// rand_distr's `f` for y < m — 1 divided by (a / i − s) for i = y + 1
    /// ..= m in turn — or, where `v` is not near it, a number on the same
    /// side of `v`: the acceptance test `v > f` is all that reads it. Its
    /// divisions one after another waited each for the last (a sixth of
    /// the draws' time at 11 M trajectories; natural recovery 3.22 → 3.12
    /// s with the set-up's Stirling terms left to the final test); the
    /// product of the divisors,
    /// their own divisions side by side, then one division, is within 2k
    /// units in the last place of it (k = m − y factors; each step rounds
    /// by at most half a unit, and while the product stays a normal number
    /// nothing else changes it). Within a relative 1e-9 of `v` — or a
    /// product not normal, or over 10⁶ factors — the divisions in turn.
    #[inline(always)]
    fn below_mode(&self, y: u64, v: f64) -> f64 {
        // i = y + 1 ..= m, the last divisor (at m) set up once: computed
        // here, the compiler took it to the start of every draw.
        let divisor = |i: u64| self.a / (i as f64) - self.s;
        let exact = || (y + 1..self.m).fold(1.0, |f, i| f / divisor(i)) / self.at_mode;
        if self.m - y > 1_000_000 {
            return exact();
        }
        let product = (y + 1..self.m).fold(1.0, |p, i| p * divisor(i)) * self.at_mode;
        let f = 1.0 / product;
        if !(product.is_normal() && f.is_normal()) || (v - f).abs() <= 1e-9 * f {
            return exact();
        }
        f
    }
}

/// rand_distr's Stirling correction (inside its `fn btpe`).
fn stirling(a: f64) -> f64 {
    let a2 = a * a;
    (13860. - (462. - (132. - (99. - 140. / a2) / a2) / a2) / a2) / a / 166320.
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::Xoshiro256PlusPlus;
    use rand::SeedableRng;

    #[test]
    fn draws_what_rand_distr_draws_and_leaves_the_generator_where_it_does() {
        let ns = [0u64, 1, 9, 10, 11, 20, 37, 100, 819, 2604, 28_645, 1 << 20];
        let ps = [
            0.0,
            1e-300,
            1e-9,
            0.001,
            0.01,
            0.05,
            0.1,
            1.0 / 3.0,
            0.4999,
            0.5,
            0.5001,
            0.77,
            0.99,
            1.0 - 1e-12,
            1.0,
            1.5,
            -0.1,
            f64::NAN,
        ];
        let mut btpe = 0;
        for (i, &n) in ns.iter().enumerate() {
            for (j, &p) in ps.iter().enumerate() {
                let ours = Binomial::new(n, p);
                let theirs = rand_distr::Binomial::new(n, p).ok();
                assert_eq!(ours.is_some(), theirs.is_some(), "n {n} p {p}");
                let (Some(ours), Some(theirs)) = (ours, theirs) else {
                    continue;
                };
                btpe += usize::from(matches!(ours, Binomial::Btpe(_)));
                let seed = (i * 100 + j) as u64;
                let mut a = Xoshiro256PlusPlus::seed_from_u64(seed);
                let mut b = Xoshiro256PlusPlus::seed_from_u64(seed);
                for _ in 0..20_000 {
                    assert_eq!(ours.sample(&mut a), theirs.sample(&mut b), "n {n} p {p}");
                }
                assert_eq!(a.next_u64(), b.next_u64(), "n {n} p {p}: generator state");
            }
        }
        // Most of the grid takes the BTPE path this module re-implements.
        assert!(btpe >= 40, "{btpe} BTPE cases");
    }

    #[test]
    fn below_the_mode_the_test_decides_as_the_divisions_in_turn() {
        for (n, p) in [
            (30u64, 0.4),
            (100, 0.3),
            (819, 0.5),
            (26_041, 0.01),
            (26_041, 0.37),
            (1 << 20, 0.2),
            (1 << 40, 0.45),
        ] {
            let Some(Binomial::Btpe(b)) = Binomial::new(n, p) else {
                panic!("n {n} p {p}: BTPE");
            };
            // rand_distr's loop as written.
            let in_turn = |y: u64| {
                let mut f = 1.0;
                let mut i = y;
                loop {
                    i += 1;
                    f /= b.a / (i as f64) - b.s;
                    if i == b.m {
                        break f;
                    }
                }
            };
            for y in b.m.saturating_sub(300)..b.m {
                let f = in_turn(y);
                for v in [
                    -0.3,
                    0.0,
                    f * 0.5,
                    f * (1.0 - 1e-12),
                    f.next_down(),
                    f,
                    f.next_up(),
                    f * (1.0 + 1e-12),
                    f * 2.0,
                    1.0,
                ] {
                    let ours = b.below_mode(y, v);
                    assert_eq!(
                        v > ours,
                        v > f,
                        "n {n} p {p} y {y} v {v}: {ours} against {f}"
                    );
                }
                // Away from v, a value within a relative 1e-9 of it.
                assert!(
                    (b.below_mode(y, -1.0) - f).abs() <= 1e-9 * f,
                    "n {n} p {p} y {y}"
                );
            }
        }
    }
}
