//! Interned names and places: the fast map, the first-seen table of the duplicate check, ids, a record's location, and compact optional fields.

use super::*;

/// A hash map with a fast non-cryptographic hash, for the per-record
/// lookups of the load (keys come from the user's own logs).
pub type FastMap<K, V> = HashMap<K, V, foldhash::fast::FixedState>;

/// The first item seen under each key (the load's duplicate check): a hash
/// table of item indices alone — 4 bytes and a control byte a key, where a
/// record's key itself would take 72 with its place. Keys are compared in
/// full through `same` and hashed again through `hash_of` (only when the
/// table grows past the capacity it was made with).
pub struct FirstSeen {
    table: hashbrown::HashTable<u32>,
}

impl FirstSeen {
    pub fn with_capacity(n: usize) -> FirstSeen {
        FirstSeen {
            table: hashbrown::HashTable::with_capacity(n),
        }
    }
    /// Item `i`, whose key hashes to `hash`: the earlier item with the same
    /// key (`same(j)`: item j has i's key), else None and i is remembered.
    /// `hash_of(j)` is item j's key's hash.
    pub fn first(
        &mut self,
        hash: u64,
        i: u32,
        same: impl Fn(u32) -> bool,
        hash_of: impl Fn(u32) -> u64,
    ) -> Option<u32> {
        match self.table.entry(hash, |&j| same(j), |&j| hash_of(j)) {
            hashbrown::hash_table::Entry::Occupied(e) => Some(*e.get()),
            hashbrown::hash_table::Entry::Vacant(e) => {
                e.insert(i);
                None
            }
        }
    }
}

/// Interned string id (run, benchmark, task, state, metric, …).
pub type Id = u32;

/// Whether `a` and `b` hold the same bytes. Up to 32 bytes they are
/// compared as overlapping machine words, inline: the names compared on
/// every log-probability (run names) and the decoder's recent strings are
/// short, and a `memcmp` call cost more than the comparison (~4 % of a
/// Parquet load's CPU).
#[inline]
pub fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    // The word of `s` at `i` (every `i` below leaves 8, or 4, bytes).
    let w8 = |s: &[u8], i: usize| s[i..].first_chunk::<8>().map(|w| u64::from_ne_bytes(*w));
    let w4 = |s: &[u8], i: usize| s[i..].first_chunk::<4>().map(|w| u32::from_ne_bytes(*w));
    match n {
        0..4 => a.iter().zip(b).all(|(x, y)| x == y),
        4..=8 => w4(a, 0) == w4(b, 0) && w4(a, n - 4) == w4(b, n - 4),
        9..=16 => w8(a, 0) == w8(b, 0) && w8(a, n - 8) == w8(b, n - 8),
        17..=32 => {
            w8(a, 0) == w8(b, 0)
                && w8(a, 8) == w8(b, 8)
                && w8(a, n - 16) == w8(b, n - 16)
                && w8(a, n - 8) == w8(b, n - 8)
        }
        _ => a == b,
    }
}

/// A string table: every distinct name is stored once.
#[derive(Debug, Default, Clone)]
pub struct Interner {
    names: Vec<String>,
    /// A fast non-cryptographic hash: interning runs for every string of
    /// every record (names come from the user's own logs).
    map: FastMap<String, Id>,
    /// The two names interned last, newest first: the names of a step's
    /// log-probabilities alternate between two runs, and a record's names
    /// repeat the record's before it — compared before hashing.
    recent: [Id; 2],
}

/// Why a name from a log is refused.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum BadName {
    Empty,
    /// It holds this control character.
    Control(char),
}

impl Interner {
    pub fn intern(&mut self, s: &str) -> Id {
        let Ok(id) = self.find_or_add(s, |_| None::<std::convert::Infallible>);
        id
    }
    /// [`Interner::intern`] of a name from a log, refused when it is empty
    /// or holds a control character — checked once, when the name is first
    /// seen, so a name repeated over millions of records costs no scan.
    pub fn intern_name(&mut self, s: &str) -> Result<Id, BadName> {
        self.find_or_add(s, |s| match s.chars().find(|c| c.is_control()) {
            Some(c) => Some(BadName::Control(c)),
            None => s.is_empty().then_some(BadName::Empty),
        })
    }
    /// `s`'s id (the two most recent first, then the map), or a new one
    /// unless `refuse` gives a reason for a name not seen before.
    fn find_or_add<E>(&mut self, s: &str, refuse: impl FnOnce(&str) -> Option<E>) -> Result<Id, E> {
        let [a, b] = self.recent;
        let same = |n: &String| same_bytes(n.as_bytes(), s.as_bytes());
        if self.names.get(a as usize).is_some_and(same) {
            return Ok(a);
        }
        if self.names.get(b as usize).is_some_and(same) {
            self.recent = [b, a];
            return Ok(b);
        }
        let id = match self.map.get(s) {
            Some(&id) => id,
            None => {
                if let Some(e) = refuse(s) {
                    return Err(e);
                }
                let id = self.names.len() as Id;
                self.names.push(s.to_string());
                self.map.insert(s.to_string(), id);
                id
            }
        };
        self.recent = [id, a];
        Ok(id)
    }
    pub fn get(&self, s: &str) -> Option<Id> {
        self.map.get(s).copied()
    }
    pub fn name(&self, id: Id) -> &str {
        &self.names[id as usize]
    }
    pub fn len(&self) -> usize {
        self.names.len()
    }
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }
}

/// Where a record came from: file index into [`LogSet::files`] and 1-based
/// record number (a line of JSON Lines, a row of Parquet), packed in 8 bytes
/// — the file in the top [`Loc::FILE_BITS`], the record number below — so
/// that a [`Trajectory`] is 8 bytes smaller (issue 20). Ordered by file,
/// then record number.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Loc(u64);

impl Loc {
    /// Bits of the file index (the flag [`Loc::ORIGIN`] included).
    pub const FILE_BITS: u32 = 28;
    /// While a load runs: `file` is `ORIGIN | i`, the i-th name of
    /// [`LogSet::origins`] (a record a summary locates at its own log).
    pub const ORIGIN: u32 = 1 << (Self::FILE_BITS - 1);
    /// Files a log set may hold (indices below [`Loc::ORIGIN`]).
    pub const MAX_FILES: u32 = Self::ORIGIN;
    /// The largest record number (68.7 billion: a file of more lines is
    /// refused with its name).
    pub const MAX_LINE: u64 = (1 << (64 - Self::FILE_BITS)) - 1;

    /// `file` below 2 × [`Loc::ORIGIN`], `line` at most [`Loc::MAX_LINE`]
    /// (the loaders check both first).
    pub const fn new(file: u32, line: u64) -> Loc {
        debug_assert!(file < 1 << Self::FILE_BITS && line <= Self::MAX_LINE);
        Loc((file as u64) << (64 - Self::FILE_BITS) | (line & Self::MAX_LINE))
    }
    pub const fn file(self) -> u32 {
        (self.0 >> (64 - Self::FILE_BITS)) as u32
    }
    pub const fn line(self) -> u64 {
        self.0 & Self::MAX_LINE
    }
}

impl std::fmt::Debug for Loc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Loc")
            .field("file", &self.file())
            .field("line", &self.line())
            .finish()
    }
}

/// A half-open index range into one of the [`LogSet`]'s flat vectors.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Span {
    pub start: u32,
    pub len: u32,
}

impl Span {
    pub fn range(self) -> std::ops::Range<usize> {
        self.start as usize..(self.start + self.len) as usize
    }
}

/// A value with one bit pattern set aside to stand for none.
pub(super) trait Sentinel: Copy + PartialEq {
    const NONE: Self;
}

/// No stored `u32` can be `u32::MAX`: the validator rejects it as too
/// large (turn counts), budgets stop at a million, and interned ids count
/// distinct names.
impl Sentinel for u32 {
    const NONE: u32 = u32::MAX;
}

/// A length of `u32::MAX`: no trajectory has that many steps (the set
/// indexes all its steps in 32 bits).
impl Sentinel for Span {
    const NONE: Span = Span {
        start: 0,
        len: u32::MAX,
    };
}

/// An `Option<T>` in the size of `T` (`Option<u32>` takes 8 bytes,
/// `Option<Span>` 12): the sentinel stands for none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Compact<T>(T);

impl<T: Sentinel> Compact<T> {
    pub(super) const NONE: Self = Compact(T::NONE);
    pub(super) fn get(self) -> Option<T> {
        (self.0 != T::NONE).then_some(self.0)
    }
}

impl<T: Sentinel> From<Option<T>> for Compact<T> {
    fn from(v: Option<T>) -> Self {
        debug_assert!(v != Some(T::NONE), "the sentinel stands for none");
        Compact(v.unwrap_or(T::NONE))
    }
}

#[cfg(test)]
mod tests {
    use super::same_bytes;

    /// Equal exactly when the slices are, at every length around the
    /// words' edges: a byte changed anywhere, or a slice one longer, is
    /// told apart.
    #[test]
    fn same_bytes_is_slice_equality() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut byte = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        };
        for n in 0..=48 {
            let a: Vec<u8> = (0..n).map(|_| byte()).collect();
            assert!(same_bytes(&a, &a.clone()), "{n}");
            for i in 0..n {
                for flip in [1u8, 0x80, 0xff] {
                    let mut b = a.clone();
                    b[i] ^= flip;
                    assert!(!same_bytes(&a, &b), "{n} {i} {flip}");
                    assert!(!same_bytes(&b, &a), "{n} {i} {flip}");
                }
            }
            let mut longer = a.clone();
            longer.push(byte());
            assert!(!same_bytes(&a, &longer) && !same_bytes(&longer, &a), "{n}");
            assert!(same_bytes(&longer[..n], &a), "{n}");
        }
    }
}
