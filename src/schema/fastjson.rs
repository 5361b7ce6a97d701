//! The loader's fast path: a record of the usual shape read straight into
//! [`RawRecord`] without serde's visitors (issue 20: the parse was most of
//! the load, and serde_json's `float_roundtrip` number path most of that).
//!
//! It reads a strict subset of what serde_json accepts and gives, for that
//! subset, the record serde_json's derived `Deserialize` gives, value for
//! value and bit for bit: every string it keeps is borrowed (no escapes),
//! every float is the correctly rounded parse of its text (Clinger's exact
//! path when its digits and power of ten allow, else std's parser;
//! serde_json's with `float_roundtrip` is correctly rounded too, so the two
//! agree on every input — tested against it on random text), every integer
//! field is what serde_json's `i64` is. Whatever it is not sure of — an
//! escape in a kept string, a duplicate field, a number serde_json would
//! turn into a float or reject, `frozenlake` and `candidates`, a struct
//! written as an array, any syntax error — makes it return `None`, and the
//! caller parses the line with serde_json, which also words the error.

use std::borrow::Cow;

use super::raw::{GroupKey, LogpMap, RawRecord, RawStep};

/// `text`'s record, or `None` to leave it to serde_json.
pub fn record(text: &str) -> Option<RawRecord<'_>> {
    let mut p = P {
        s: text,
        b: text.as_bytes(),
        i: 0,
    };
    let r = p.record()?;
    p.ws();
    (p.i == p.b.len()).then_some(r)
}

/// How deep a skipped value may nest here (its reading recurses); deeper
/// ones go to serde_json, which passes over any depth without recursing.
const MAX_DEPTH: u32 = 100;

/// A number as [`P::number`] reads it.
struct Num<'a> {
    text: &'a str,
    neg: bool,
    /// No fraction, no exponent.
    int: bool,
    /// Its digits as one integer, the point left out (`None` past 19 digits).
    mant: Option<u64>,
    /// The power of ten `mant` is scaled by (the exponent less the fraction's digits).
    scale: i32,
}

struct P<'a> {
    s: &'a str,
    b: &'a [u8],
    i: usize,
}

/// A byte of `w` is a quote, a backslash or a control character (the first
/// flagged byte is exact; later ones may be false alarms).
#[inline]
fn special(w: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let zero = |x: u64| x.wrapping_sub(ONES) & !x & HIGH;
    let below_space = w.wrapping_sub(ONES * 0x20) & !w & HIGH;
    below_space | zero(w ^ (ONES * u64::from(b'"'))) | zero(w ^ (ONES * u64::from(b'\\')))
}

/// Marks a known field seen (`$bit` in `$seen`); a second one is
/// serde_json's "duplicate field" error: declined.
macro_rules! once {
    ($seen:ident, $bit:expr) => {{
        let bit: u32 = 1 << $bit;
        if $seen & bit != 0 {
            return None;
        }
        $seen |= bit;
    }};
}

/// A known field's value into `$dst`, read by `$read` (`null` is `None`).
macro_rules! field {
    ($p:ident, $seen:ident, $bit:expr, $dst:expr, $read:path) => {{
        once!($seen, $bit);
        $dst = $p.opt($read)?;
    }};
}

impl<'a> P<'a> {
    #[inline(always)]
    fn ws(&mut self) {
        while let Some(b' ' | b'\n' | b'\t' | b'\r') = self.b.get(self.i) {
            self.i += 1;
        }
    }

    #[inline(always)]
    fn peek(&mut self) -> Option<u8> {
        self.ws();
        self.b.get(self.i).copied()
    }

    #[inline(always)]
    fn eat(&mut self, c: u8) -> Option<()> {
        (self.peek()? == c).then(|| self.i += 1)
    }

    fn literal(&mut self, word: &[u8]) -> Option<()> {
        let end = self.i + word.len();
        (self.b.get(self.i..end)? == word).then(|| self.i = end)
    }

    /// Where the string whose contents start at `j` closes; escapes are
    /// checked and passed over when `escapes`, else they give `None`.
    #[inline(always)]
    fn str_end(&self, mut j: usize, escapes: bool) -> Option<usize> {
        loop {
            // Eight bytes at a time to the first that may end the run (the
            // first flagged byte is exact).
            while let Some(w) = self.b.get(j..j + 8) {
                let m = special(u64::from_le_bytes(w.try_into().ok()?));
                if m != 0 {
                    j += (m.trailing_zeros() / 8) as usize;
                    break;
                }
                j += 8;
            }
            match *self.b.get(j)? {
                b'"' => return Some(j),
                b'\\' if escapes => {
                    j += match *self.b.get(j + 1)? {
                        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => 2,
                        b'u' => {
                            let hex = self.b.get(j + 2..j + 6)?;
                            if !hex.iter().all(u8::is_ascii_hexdigit) {
                                return None;
                            }
                            6
                        }
                        _ => return None,
                    }
                }
                b'\\' | 0..=0x1f => return None,
                _ => j += 1,
            }
        }
    }

    /// A string without escapes, the cursor at its opening quote.
    #[inline(always)]
    fn plain(&mut self) -> Option<&'a str> {
        if self.peek()? != b'"' {
            return None;
        }
        let start = self.i + 1;
        let end = self.str_end(start, false)?;
        self.i = end + 1;
        self.s.get(start..end)
    }

    /// A JSON number, checked against JSON's grammar and read in the same
    /// pass.
    #[inline(always)]
    fn number(&mut self) -> Option<Num<'a>> {
        self.ws();
        let b = self.b;
        let start = self.i;
        let mut j = start;
        let neg = b.get(j) == Some(&b'-');
        j += usize::from(neg);
        // Every digit, the fraction's too, into one u64 while it fits.
        let (mut mant, mut digits) = (0u64, 0u32);
        let mut digit = |j: &mut usize| -> bool {
            match b.get(*j) {
                Some(&c @ b'0'..=b'9') => {
                    mant = mant.wrapping_mul(10).wrapping_add(u64::from(c - b'0'));
                    digits += 1;
                    *j += 1;
                    true
                }
                _ => false,
            }
        };
        match b.get(j)? {
            b'0' => j += 1,
            b'1'..=b'9' => while digit(&mut j) {},
            _ => return None,
        }
        let mut scale = 0i32;
        let mut int = true;
        if b.get(j) == Some(&b'.') {
            j += 1;
            int = false;
            let from = j;
            while digit(&mut j) {}
            if j == from {
                return None;
            }
            scale = -((j - from).min(1 << 20) as i32);
        }
        if let Some(b'e' | b'E') = b.get(j) {
            j += 1;
            int = false;
            let minus = b.get(j) == Some(&b'-');
            if let Some(b'+' | b'-') = b.get(j) {
                j += 1;
            }
            let from = j;
            let mut e = 0i32;
            while let Some(&c @ b'0'..=b'9') = b.get(j) {
                e = (e * 10 + i32::from(c - b'0')).min(1 << 20);
                j += 1;
            }
            if j == from {
                return None;
            }
            scale += if minus { -e } else { e };
        }
        self.i = j;
        Some(Num {
            text: self.s.get(start..j)?,
            neg,
            int,
            // At most 19 digits always fit a u64.
            mant: (digits <= 19).then_some(mant),
            scale,
        })
    }

    /// An integer serde_json hands to an `i64` field as one: `-0`, a
    /// fraction or an exponent, or a value past `i64` are left to it.
    fn int(&mut self) -> Option<i64> {
        let n = self.number()?;
        let m = n.mant.filter(|_| n.int)?;
        if n.neg {
            // serde_json reads `-0` as a float.
            (m != 0).then(|| 0i64.checked_sub_unsigned(m))?
        } else {
            i64::try_from(m).ok()
        }
    }

    /// serde_json's f64 of a number: the correctly rounded value (an
    /// integer's `as f64` is that too); out of range is its error.
    fn float(&mut self) -> Option<f64> {
        /// The powers of ten an f64 holds exactly.
        const POW10: [f64; 23] = [
            1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
            1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
        ];
        let n = self.number()?;
        let x = match n.mant {
            // Clinger's fast path: an exact significand times or over an
            // exact power of ten is one correctly rounded operation; an
            // integer's `as f64` is correctly rounded.
            Some(m) if n.int => m as f64,
            Some(m) if m <= 1 << 53 && n.scale.unsigned_abs() <= 22 => {
                let p = POW10[n.scale.unsigned_abs() as usize];
                if n.scale < 0 {
                    m as f64 / p
                } else {
                    m as f64 * p
                }
            }
            _ => return n.text.parse::<f64>().ok().filter(|x| x.is_finite()),
        };
        Some(if n.neg { -x } else { x })
    }

    /// `null` as `None`, else `value`.
    #[inline(always)]
    fn opt<T>(&mut self, value: impl FnOnce(&mut Self) -> Option<T>) -> Option<Option<T>> {
        if self.peek()? == b'n' {
            self.literal(b"null")?;
            return Some(None);
        }
        value(self).map(Some)
    }

    fn bool(&mut self) -> Option<bool> {
        match self.peek()? {
            b't' => self.literal(b"true").map(|_| true),
            b'f' => self.literal(b"false").map(|_| false),
            _ => None,
        }
    }

    fn str(&mut self) -> Option<Cow<'a, str>> {
        self.plain().map(Cow::Borrowed)
    }

    /// `group`, `seed`: a string, or an integer as its decimal text (JSON's
    /// grammar has no other spelling of it than `to_string`'s).
    fn key(&mut self) -> Option<GroupKey<'a>> {
        if self.peek()? == b'"' {
            return self.str().map(GroupKey);
        }
        let n = self.number()?;
        let m = n.mant.filter(|_| n.int)?;
        let fits = !n.neg || (m != 0 && m <= 1 << 63);
        fits.then(|| GroupKey(Cow::Owned(n.text.to_string())))
    }

    /// A bracketed list — `open`, items read by `item` between commas,
    /// `close` — the cursor before `open`.
    #[inline(always)]
    fn list(
        &mut self,
        open: u8,
        close: u8,
        mut item: impl FnMut(&mut Self) -> Option<()>,
    ) -> Option<()> {
        self.eat(open)?;
        if self.peek()? == close {
            self.i += 1;
            return Some(());
        }
        loop {
            item(self)?;
            match self.peek()? {
                b',' => self.i += 1,
                c if c == close => {
                    self.i += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// An object's members, `member` reading each value after its key.
    #[inline(always)]
    fn members(&mut self, mut member: impl FnMut(&mut Self, &'a str) -> Option<()>) -> Option<()> {
        self.list(b'{', b'}', |p| {
            let key = p.plain()?;
            p.eat(b':')?;
            member(p, key)
        })
    }

    /// Any JSON value, checked and passed over (serde's `IgnoredAny`).
    fn skip(&mut self, depth: u32) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        match self.peek()? {
            b'"' => {
                self.i = self.str_end(self.i + 1, true)? + 1;
                Some(())
            }
            b'{' => self.list(b'{', b'}', |p| {
                if p.peek()? != b'"' {
                    return None;
                }
                p.i = p.str_end(p.i + 1, true)? + 1;
                p.eat(b':')?;
                p.skip(depth + 1)
            }),
            b'[' => self.list(b'[', b']', |p| p.skip(depth + 1)),
            b't' => self.literal(b"true"),
            b'f' => self.literal(b"false"),
            b'n' => self.literal(b"null"),
            _ => self.number().map(drop),
        }
    }

    fn record(&mut self) -> Option<RawRecord<'a>> {
        let mut r = RawRecord::default();
        let mut seen = 0u32;
        self.members(|p, key| {
            match key {
                "kind" => field!(p, seen, 0, r.kind, P::str),
                "run" => field!(p, seen, 1, r.run, P::str),
                "method" => field!(p, seen, 2, r.method, P::str),
                "benchmark" => field!(p, seen, 3, r.benchmark, P::str),
                "task" => field!(p, seen, 4, r.task, P::str),
                "sample" => field!(p, seen, 5, r.sample, P::int),
                "budget" => field!(p, seen, 6, r.budget, P::int),
                "max_budget" => field!(p, seen, 7, r.max_budget, P::int),
                "success" => field!(p, seen, 8, r.success, P::bool),
                "turns" => field!(p, seen, 9, r.turns, P::int),
                "success_turn" => field!(p, seen, 10, r.success_turn, P::int),
                "reward" => field!(p, seen, 11, r.reward, P::float),
                "min_turns" => field!(p, seen, 12, r.min_turns, P::int),
                "train_step" => field!(p, seen, 13, r.train_step, P::int),
                "group" => field!(p, seen, 14, r.group, P::key),
                "termination" => field!(p, seen, 15, r.termination, P::str),
                "seed" => field!(p, seen, 16, r.seed, P::key),
                "category" => field!(p, seen, 17, r.category, P::str),
                "steps" => field!(p, seen, 18, r.steps, P::steps),
                "state" => field!(p, seen, 19, r.state, P::str),
                "source" => field!(p, seen, 20, r.source, P::str),
                "turn" => field!(p, seen, 21, r.turn, P::int),
                "error" => field!(p, seen, 22, r.error, P::bool),
                "log_file" => field!(p, seen, 23, r.log_file, P::str),
                "log_line" => field!(p, seen, 24, r.log_line, P::int),
                "frozenlake" | "candidates" => return None,
                _ => p.skip(1)?,
            }
            Some(())
        })?;
        Some(r)
    }

    fn steps(&mut self) -> Option<Vec<RawStep<'a>>> {
        // As `raw::opt_steps` allocates them.
        let mut v = Vec::with_capacity(16);
        self.list(b'[', b']', |p| {
            // Filled where it lies: a step is ~180 bytes, and moving each
            // into the list cost as much as the allocations it saves.
            v.push(RawStep::default());
            p.step(v.last_mut()?)
        })?;
        Some(v)
    }

    fn step(&mut self, s: &mut RawStep<'a>) -> Option<()> {
        let mut seen = 0u32;
        self.members(|p, key| {
            match key {
                "turn" => field!(p, seen, 0, s.turn, P::int),
                "output_tokens" => field!(p, seen, 1, s.output_tokens, P::int),
                "logp" => {
                    once!(seen, 2);
                    if p.peek()? == b'n' {
                        p.literal(b"null")?;
                    } else {
                        p.logp(s.logp.insert(LogpMap::default()))?;
                    }
                }
                "error" => field!(p, seen, 3, s.error, P::bool),
                "reward" => field!(p, seen, 4, s.reward, P::float),
                "budget_total" => field!(p, seen, 5, s.budget_total, P::int),
                "budget_remaining" => field!(p, seen, 6, s.budget_remaining, P::int),
                _ => p.skip(2)?,
            }
            Some(())
        })
    }

    fn logp(&mut self, v: &mut LogpMap<'a>) -> Option<()> {
        self.members(|p, run| {
            v.push(Cow::Borrowed(run), p.float()?);
            Some(())
        })
    }
}

#[cfg(test)]
mod tests {
    use rand::rngs::Xoshiro256PlusPlus;
    use rand::{Rng, RngExt, SeedableRng};

    use super::*;
    use crate::schema::TRAJECTORY_FIELDS;

    /// What serde_json's derived parse gives (the reference), as text that
    /// tells every float's bits apart (`Debug` prints `-0.0`, and the
    /// shortest text that reads back to the same bits).
    fn serde(text: &str) -> Option<String> {
        serde_json::from_str::<RawRecord>(text)
            .ok()
            .map(|r| format!("{r:?}"))
    }

    /// Where the fast path reads a line, its record is serde_json's.
    fn agrees(text: &str) -> bool {
        match record(text) {
            Some(r) => {
                assert_eq!(Some(format!("{r:?}")), serde(text), "{text}");
                true
            }
            None => false,
        }
    }

    #[test]
    fn usual_records_take_the_fast_path_and_read_as_serde_reads_them() {
        for line in [
            r#"{"kind": "run", "run": "base", "method": "base"}"#,
            r#"{"run": "base", "benchmark": "bench", "task": "t0", "sample": 0, "budget": 8, "max_budget": 24, "success": true, "turns": 7, "steps": [{"turn": 1, "output_tokens": 222, "logp": {"base": -31.574868542127806, "grpo": -1.879844830998638}, "error": false}, {"turn": 2, "output_tokens": 207, "logp": {"base": -26.2248242170674, "grpo": -60.11657039047985}, "error": true}], "success_turn": 7}"#,
            "{\"run\":\"r\",\"benchmark\":\"b\",\"task\":\"t\",\"sample\":3,\"budget\":null,\"success\":false,\"turns\":2,\"termination\":\"budget\",\"group\":17,\"seed\":\"s1\",\"category\":\"c\",\"reward\":0.5,\"train_step\":-4,\"steps\":[{\"turn\":1,\"action\":\"go \\\"north\\\"\\n\",\"observation\":\"caf\\u00e9 \u{e9} [x] {y}\",\"info\":{\"a\":[1,2.5e-3,true,null,{}],\"b\":[]},\"reward\":1,\"budget_total\":5,\"budget_remaining\":4},{}]}\r\n",
            r#"{"kind": "probe", "run": "grpo", "benchmark": "b", "task": "t", "state": "s", "source": "base", "turn": 3, "error": true}"#,
            r#"{"log_file": "a.jsonl", "log_line": 12, "seed": -7, "group": "g", "steps": null, "min_turns": 2}"#,
            "  {}  ",
        ] {
            assert!(agrees(line), "the fast path declined {line}");
        }
    }

    #[test]
    fn what_it_is_not_sure_of_goes_to_serde_json() {
        for line in [
            // serde_json's errors
            r#"{"run": "a", "run": "b"}"#,
            r#"{"steps": [{"turn": 1, "turn": 2}]}"#,
            r#"{"sample": -0}"#,
            r#"{"sample": 1.0}"#,
            r#"{"sample": 9223372036854775808}"#,
            r#"{"group": 1.5}"#,
            r#"{"group": -0}"#,
            r#"{"reward": 1e400}"#,
            r#"{"reward": 01}"#,
            r#"{"reward": .5}"#,
            r#"{"reward": 2.}"#,
            r#"{"steps": [{"turn": 1},]}"#,
            r#"{"run": "a",}"#,
            r#"{"x": "\q"}"#,
            "{\"x\": \"tab\there\"}",
            r#"{"x": [1 2]}"#,
            r#"{"run": "a"} x"#,
            r#"{"steps": [{"logp": {"a": null}}]}"#,
            // serde_json's successes that it leaves alone
            r#"{"run": "caf\u00e9"}"#,
            r#"{"r\u0075n": "a"}"#,
            r#"{"steps": [[1, 2]]}"#,
            r#"{"candidates": [{"run": "a", "action": 2}]}"#,
            r#"{"frozenlake": {"map": ["SF", "FG"], "pos": 0}}"#,
        ] {
            assert!(record(line).is_none(), "the fast path read {line}");
        }
        // Deep nesting is serde_json's to pass over (it does so without
        // recursing); ours recurses, so it stops short.
        let deep = format!("{{\"x\": {}{}}}", "[".repeat(5000), "]".repeat(5000));
        assert!(record(&deep).is_none());
        assert_eq!(serde(&deep), serde("{}"));
    }

    fn pick<'s, R: Rng>(rng: &mut R, xs: &[&'s str]) -> &'s str {
        xs[rng.random_range(0..xs.len())]
    }

    /// A number's text: integers at the edges of i64 and u64, floats of
    /// every size and spelling, and text that only looks like a number.
    fn number<R: Rng>(rng: &mut R) -> String {
        match rng.random_range(0..8) {
            // Where Clinger's fast path and std's parser meet: significands
            // about 2^53, powers of ten about 10^±22.
            6 | 7 => {
                let m: u64 = match rng.random_range(0..3) {
                    0 => rng.random_range(0..100_000),
                    1 => (1 << 53) + rng.random_range(0..5) - 2,
                    _ => rng.random_range(0..1 << 55),
                };
                let mut s = m.to_string();
                let point = rng.random_range(0..=s.len());
                if point < s.len() {
                    s.insert(if point == 0 { 1 } else { point }, '.');
                    if s.ends_with('.') {
                        s.push('0');
                    }
                }
                if rng.random() {
                    s += &format!("e{}", rng.random_range(-30..30));
                }
                if rng.random() {
                    s.insert(0, '-');
                }
                s
            }
            0 => pick(
                rng,
                &[
                    "0",
                    "-0",
                    "7",
                    "-12",
                    "9223372036854775807",
                    "9223372036854775808",
                    "-9223372036854775808",
                    "-9223372036854775809",
                    "18446744073709551615",
                    "18446744073709551616",
                    "123456789012345678901234567890",
                    "1e400",
                    "-1e-400",
                    "4.9e-324",
                    "2.4703282292062328e-324",
                    "1.7976931348623157e308",
                    "1.7976931348623159e308",
                    "0.0",
                    "-0.0e0",
                    "1E+2",
                    "1e-2",
                    "007",
                    "1.",
                    ".5",
                    "-",
                    "1e",
                    "+1",
                    "0x10",
                    "NaN",
                    "Infinity",
                ],
            )
            .to_string(),
            1 => format!("{:?}", f64::from_bits(rng.random::<u64>())),
            2 => format!("{:e}", f64::from_bits(rng.random::<u64>())),
            3 => format!("{}", rng.random::<f64>() * 100.0 - 50.0),
            4 => rng.random::<i64>().to_string(),
            _ => {
                // Up to 40 random digits, a point, an exponent.
                let mut s = String::new();
                if rng.random() {
                    s.push('-');
                }
                let n = rng.random_range(1..40);
                for i in 0..n {
                    let d = rng.random_range(if i == 0 { 1 } else { 0 }..10u8);
                    s.push(char::from(b'0' + d));
                }
                if rng.random() {
                    let at = rng.random_range(1..=s.len());
                    if !s[..at].ends_with('-') {
                        s.insert(at, '.');
                        s.push('1');
                    }
                }
                if rng.random() {
                    s += &format!("e{}", rng.random_range(-400..400));
                }
                s
            }
        }
    }

    fn string<R: Rng>(rng: &mut R) -> &'static str {
        pick(
            rng,
            &[
                r#""base""#,
                r#""grpo""#,
                r#""""#,
                r#""a b [c] {d}: e, f""#,
                r#""say \"hi\"\n""#,
                r#""\u00e9\ud83d\ude00""#,
                "\"caf\u{e9} \u{1f600}\"",
                r#""\x""#,
                "\"ctl\u{1}\"",
                r#""unterminated"#,
            ],
        )
    }

    fn value<R: Rng>(rng: &mut R, depth: u32) -> String {
        match rng.random_range(0..if depth > 2 { 4 } else { 7 }) {
            0 => number(rng),
            1 => string(rng).to_string(),
            2 => pick(rng, &["true", "false", "null", "nul", "tru"]).to_string(),
            3 => number(rng),
            4 => {
                let n = rng.random_range(0..4);
                let items: Vec<String> = (0..n).map(|_| value(rng, depth + 1)).collect();
                format!("[{}]", items.join(", "))
            }
            _ => object(rng, depth + 1),
        }
    }

    /// Keys besides SPEC's trajectory fields: the rest of a record's and a
    /// step's, unknown ones, and an escaped `run`.
    const MORE_KEYS: &[&str] = &[
        "steps",
        "state",
        "source",
        "turn",
        "error",
        "log_file",
        "log_line",
        "output_tokens",
        "logp",
        "budget_total",
        "budget_remaining",
        "action",
        "observation",
        "r\\u0075n",
    ];

    fn object<R: Rng>(rng: &mut R, depth: u32) -> String {
        let n = rng.random_range(0..6);
        let mut fields = Vec::new();
        for _ in 0..n {
            let k = rng.random_range(0..TRAJECTORY_FIELDS.len() + MORE_KEYS.len());
            let key = match TRAJECTORY_FIELDS.get(k) {
                Some(f) => *f,
                None => MORE_KEYS[k - TRAJECTORY_FIELDS.len()],
            };
            let v = match key {
                "steps" if depth < 3 => {
                    let k = rng.random_range(0..4);
                    let steps: Vec<String> = (0..k).map(|_| object(rng, depth + 1)).collect();
                    format!("[{}]", steps.join(","))
                }
                "logp" => {
                    let k = rng.random_range(0..3);
                    let runs: Vec<String> = (0..k)
                        .map(|_| format!("{}: {}", string(rng), number(rng)))
                        .collect();
                    format!("{{{}}}", runs.join(", "))
                }
                _ => value(rng, depth),
            };
            fields.push(format!("\"{key}\":{}{v}", pick(rng, &["", " ", "\n\t "])));
        }
        format!("{{{}}}", fields.join(pick(rng, &[", ", ",", " ,\r\n"])))
    }

    #[test]
    fn random_records_read_as_serde_json_reads_them() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(20);
        let (mut fast, mut total) = (0, 0);
        for _ in 0..40_000 {
            let mut text = object(&mut rng, 0);
            // A byte of it changed now and then.
            if rng.random_range(0..4) == 0 && !text.is_empty() {
                let at = rng.random_range(0..text.len());
                if text.is_char_boundary(at) && text.is_char_boundary(at + 1) {
                    let c = pick(
                        &mut rng,
                        &["", "\"", ",", "}", "]", "0", "-", " ", "e", "\\"],
                    );
                    text.replace_range(at..at + 1, c);
                }
            }
            total += 1;
            fast += usize::from(agrees(&text));
        }
        // The test means something only if both sides of the fork ran.
        assert!(fast > total / 20 && fast < total, "{fast} of {total} fast");
    }

    #[test]
    fn every_number_is_serde_jsons_to_the_bit() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
        let mut read = 0;
        for _ in 0..200_000 {
            let n = number(&mut rng);
            // As a float, an integer, a group key and a log-probability.
            for text in [
                format!("{{\"reward\": {n}}}"),
                format!("{{\"sample\": {n}}}"),
                format!("{{\"seed\": {n}}}"),
                format!("{{\"steps\": [{{\"logp\": {{\"a\": {n}}}}}]}}"),
            ] {
                read += usize::from(agrees(&text));
            }
        }
        assert!(read > 100_000, "{read}");
    }
}
