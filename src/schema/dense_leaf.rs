//! One leaf of a nested Parquet column (a step field under `steps`, a
//! log-probability's `run` or `value`) decoded straight from its pages
//! when every level is present: no row's list is null or empty, no struct
//! and no value is null. Then the definition levels all equal their
//! maximum, the repetition levels alone place each value, and the values
//! are the page's values as they are stored, one after another.
//!
//! polars-parquet's nested decoder (`decode_nested`) walks every level
//! through every depth of the nesting and decodes the values through a
//! filter mask: a fifth of a 1 M-trajectory Parquet load's CPU (README,
//! session 30). This path reads the levels and the plain or dictionary
//! encoded values in straight loops. Anything else — a null or an empty
//! list anywhere in the window, another encoding, a type it does not
//! handle, a string that is not UTF-8, an index past the dictionary —
//! returns `None` and the caller decodes the window with polars as before,
//! so what is read is polars'. A page that does not decompress is an error
//! here as there (the same call); in a file damaged in several places the
//! damage reported may be another than polars would find first (a
//! differential fuzz of 300 damaged files: README, sessions 30–31).

use polars::prelude::*;
use polars_arrow::array::{
    BooleanArray, ListArray, PrimitiveArray, StructArray, Utf8ViewArray, View,
};
use polars_arrow::bitmap::MutableBitmap;
use polars_arrow::offset::{Offset, OffsetsBuffer};
use polars_parquet::parquet::encoding::hybrid_rle::HybridRleDecoder;
use polars_parquet::parquet::encoding::Encoding;
use polars_parquet::parquet::page::{split_buffer, CompressedPage, DataPage, Page};
use polars_parquet::parquet::read::levels::get_bit_width;
use polars_parquet::parquet::schema::types::PhysicalType;

/// A leaf's values as decoded: one kind per physical type handled.
enum Values {
    I32(Vec<i32>),
    I64(Vec<i64>),
    F32(Vec<f32>),
    F64(Vec<f64>),
    Bool(MutableBitmap),
    Str(Strs),
}

/// UTF-8 strings as views (polars' `Utf8ViewArray`): strings of up to 12
/// bytes inside their view, longer ones in one buffer. A leaf's strings
/// repeat (a log-probability's run name on every entry), so a string equal
/// to one of the last few distinct ones takes that one's view: checked
/// UTF-8 and stored once.
struct Strs {
    views: Vec<View>,
    buffer: Vec<u8>,
    /// The sum of the strings' lengths, repeats included.
    bytes: usize,
    /// The last few distinct strings' views, in a ring: the next to go is
    /// at `next`.
    recent: [Option<View>; 4],
    next: usize,
}

impl Strs {
    fn with_capacity(n: usize) -> Strs {
        Strs {
            views: Vec::with_capacity(n),
            buffer: Vec::new(),
            bytes: 0,
            recent: [None; 4],
            next: 0,
        }
    }

    /// The bytes of a view of this array's.
    fn bytes_of<'a>(&'a self, v: &'a View) -> &'a [u8] {
        if v.length <= View::MAX_INLINE_SIZE {
            // SAFETY: an inline view holds its bytes.
            unsafe { v.get_inlined_slice_unchecked() }
        } else {
            &self.buffer[v.offset as usize..v.offset as usize + v.length as usize]
        }
    }

    /// Appends `s`; `None` when it is not UTF-8 (or the buffer would pass
    /// what a view can address).
    fn push(&mut self, s: &[u8]) -> Option<()> {
        // A repeat of a recent string: a short one is its view, bytes and
        // zeros after them; a long one has its length, its first four bytes
        // (the view's prefix), then its bytes (step texts are distinct:
        // their search decodes millions, a comparison each).
        let inline = s.len() <= View::MAX_INLINE_SIZE as usize;
        let short = inline.then(|| View::new_inline(s));
        let prefix = s.first_chunk::<4>().map(|p| u32::from_le_bytes(*p));
        let repeats = |v: &&View| match short {
            Some(short) => **v == short,
            None => {
                v.length as usize == s.len()
                    && Some(v.prefix) == prefix
                    && super::ids::same_bytes(self.bytes_of(v), s)
            }
        };
        let view = match self.recent.iter().flatten().find(repeats) {
            Some(&v) => v,
            None => {
                std::str::from_utf8(s).ok()?;
                let v = match short {
                    Some(v) => v,
                    None => {
                        let at = u32::try_from(self.buffer.len()).ok()?;
                        u32::try_from(self.buffer.len() + s.len()).ok()?;
                        self.buffer.extend_from_slice(s);
                        View::new_from_bytes(s, 0, at)
                    }
                };
                self.recent[self.next] = Some(v);
                self.next = (self.next + 1) % self.recent.len();
                v
            }
        };
        self.bytes += s.len();
        self.views.push(view);
        Some(())
    }

    /// Views `range` as an array of `dtype`.
    fn into_array(self, dtype: &ArrowDataType, range: std::ops::Range<usize>) -> ArrayRef {
        let buffers: Vec<polars_buffer::Buffer<u8>> = if self.buffer.is_empty() {
            Vec::new()
        } else {
            vec![self.buffer.into()]
        };
        let total = buffers.iter().map(|b| b.len()).sum();
        // SAFETY: every string was checked UTF-8 when first pushed (a
        // repeat's bytes equal one checked), and every long view lies in
        // the one buffer, which `push` appended its bytes to.
        let array = unsafe {
            Utf8ViewArray::new_unchecked(
                dtype.clone(),
                self.views.into(),
                buffers.into(),
                None,
                Some(self.bytes),
                total,
            )
        };
        array.sliced(range.start, range.len()).boxed()
    }
}

impl Values {
    /// Empty values for a leaf of `physical` type read as `dtype`, room
    /// for `n`; `None` for a pair this path does not decode.
    fn new(physical: PhysicalType, dtype: &ArrowDataType, n: usize) -> Option<Values> {
        Some(match (physical, dtype) {
            (PhysicalType::Int32, ArrowDataType::Int32) => Values::I32(Vec::with_capacity(n)),
            (PhysicalType::Int64, ArrowDataType::Int64) => Values::I64(Vec::with_capacity(n)),
            (PhysicalType::Float, ArrowDataType::Float32) => Values::F32(Vec::with_capacity(n)),
            (PhysicalType::Double, ArrowDataType::Float64) => Values::F64(Vec::with_capacity(n)),
            (PhysicalType::Boolean, ArrowDataType::Boolean) => {
                Values::Bool(MutableBitmap::with_capacity(n))
            }
            (PhysicalType::ByteArray, ArrowDataType::Utf8View) => {
                Values::Str(Strs::with_capacity(n))
            }
            _ => return None,
        })
    }

    fn len(&self) -> usize {
        match self {
            Values::I32(v) => v.len(),
            Values::I64(v) => v.len(),
            Values::F32(v) => v.len(),
            Values::F64(v) => v.len(),
            Values::Bool(v) => v.len(),
            Values::Str(v) => v.views.len(),
        }
    }

    /// Appends `n` plain-encoded values from `bytes`; `None` when they do
    /// not hold `n` (or a string is not UTF-8).
    fn extend_plain(&mut self, bytes: &[u8], n: usize) -> Option<()> {
        fn fixed<T, const W: usize>(
            v: &mut Vec<T>,
            bytes: &[u8],
            n: usize,
            f: fn([u8; W]) -> T,
        ) -> Option<()> {
            let bytes = bytes.get(..n.checked_mul(W)?)?;
            v.extend(
                bytes
                    .chunks_exact(W)
                    .map(|c| f(c.try_into().expect("W bytes"))),
            );
            Some(())
        }
        match self {
            Values::I32(v) => fixed(v, bytes, n, i32::from_le_bytes),
            Values::I64(v) => fixed(v, bytes, n, i64::from_le_bytes),
            Values::F32(v) => fixed(v, bytes, n, f32::from_le_bytes),
            Values::F64(v) => fixed(v, bytes, n, f64::from_le_bytes),
            Values::Bool(v) => {
                if bytes.len().checked_mul(8)? < n {
                    return None;
                }
                v.extend_from_slice(bytes, 0, n);
                Some(())
            }
            Values::Str(v) => {
                let mut rest = bytes;
                for _ in 0..n {
                    let len = u32::from_le_bytes(rest.get(..4)?.try_into().ok()?) as usize;
                    let s = rest.get(4..4usize.checked_add(len)?)?;
                    v.push(s)?;
                    rest = &rest[4 + len..];
                }
                Some(())
            }
        }
    }

    /// Appends the dictionary's values at `indices`; `None` past its end.
    fn extend_from_dict(&mut self, dict: &Values, indices: &[u32]) -> Option<()> {
        let n = dict.len();
        if indices.iter().any(|&i| i as usize >= n) {
            return None;
        }
        match (self, dict) {
            (Values::I32(v), Values::I32(d)) => v.extend(indices.iter().map(|&i| d[i as usize])),
            (Values::I64(v), Values::I64(d)) => v.extend(indices.iter().map(|&i| d[i as usize])),
            (Values::F32(v), Values::F32(d)) => v.extend(indices.iter().map(|&i| d[i as usize])),
            (Values::F64(v), Values::F64(d)) => v.extend(indices.iter().map(|&i| d[i as usize])),
            (Values::Bool(v), Values::Bool(d)) => {
                for &i in indices {
                    v.push(d.get(i as usize));
                }
            }
            (Values::Str(v), Values::Str(d)) => {
                for &i in indices {
                    v.push(d.bytes_of(&d.views[i as usize]))?;
                }
            }
            _ => return None,
        }
        Some(())
    }

    /// Values `range` as an array of `dtype`, without a validity mask.
    fn into_array(self, dtype: &ArrowDataType, range: std::ops::Range<usize>) -> ArrayRef {
        let (a, n) = (range.start, range.len());
        fn prim<T: polars_arrow::types::NativeType>(
            dtype: &ArrowDataType,
            v: Vec<T>,
            a: usize,
            n: usize,
        ) -> ArrayRef {
            PrimitiveArray::<T>::new(dtype.clone(), v.into(), None)
                .sliced(a, n)
                .boxed()
        }
        match self {
            Values::I32(v) => prim(dtype, v, a, n),
            Values::I64(v) => prim(dtype, v, a, n),
            Values::F32(v) => prim(dtype, v, a, n),
            Values::F64(v) => prim(dtype, v, a, n),
            Values::Bool(v) => BooleanArray::new(dtype.clone(), v.freeze(), None)
                .sliced(a, n)
                .boxed(),
            Values::Str(v) => v.into_array(dtype, range),
        }
    }
}

/// The types around `dtype`'s leaf — lists and structs of one field (what
/// [`super::parquet`]'s `only_leaf` makes), outermost first — and the
/// leaf's type. `None` for any other shape.
fn shape(dtype: &ArrowDataType) -> Option<(Vec<&ArrowDataType>, &ArrowDataType)> {
    let mut around = Vec::new();
    let mut d = dtype;
    loop {
        match d {
            ArrowDataType::List(item) | ArrowDataType::LargeList(item) => {
                around.push(d);
                d = &item.dtype;
            }
            ArrowDataType::Struct(fields) if fields.len() == 1 => {
                around.push(d);
                d = &fields[0].dtype;
            }
            ArrowDataType::Struct(_) => return None,
            leaf => return Some((around, leaf)),
        }
    }
}

/// Rows `rows` (counted from the first page's first row) of the leaf
/// `field` from `reader`'s pages — the first of which begins a row — as
/// polars would decode them; `None` when this path does not apply (see the
/// module's note): decode with polars instead. `Some(Err)` when a page
/// cannot be read or decompressed.
pub fn decode(
    reader: polars_parquet::read::PageReader,
    descriptor: &polars_parquet::parquet::metadata::Descriptor,
    field: &ArrowField,
    rows: std::ops::Range<usize>,
) -> Option<PolarsResult<ArrayRef>> {
    SCRATCH.with_borrow_mut(|scratch| {
        let out = decode_pages(reader, descriptor, field, rows, scratch);
        scratch.keep_small();
        out
    })
}

/// What [`decode`] needs for a leaf's pages besides its output, kept by
/// each thread from leaf to leaf: the decompressed page (polars'
/// `decompress` takes the buffer it is given; it is taken back once the
/// page is read) and the repetition levels. Allocated afresh, each was
/// faulted in and zeroed again by the kernel for every window's leaf: a
/// sixth of a 1 M-trajectory Parquet load's page faults. The zstd
/// decompression context likewise: made afresh for every window's leaf, its
/// set-up was 1 % of that load's CPU.
struct Scratch {
    page: Vec<u8>,
    /// One byte a level: a repetition level is at most 255 here.
    reps: Vec<u8>,
    ctx: polars_parquet::parquet::compression::DecompressionContext,
}

impl Default for Scratch {
    fn default() -> Self {
        Scratch {
            page: Vec::new(),
            reps: Vec::new(),
            ctx: polars_parquet::parquet::compression::DecompressionContext::Unset,
        }
    }
}

impl Scratch {
    /// What a thread may keep between leaves: a page and the levels of
    /// [`super::parquet`]'s largest dense window (2¹⁹ levels), about.
    const KEEP: usize = 4 << 20;

    /// Lets go of buffers a leaf of unusually large pages grew past
    /// [`Scratch::KEEP`] bytes.
    fn keep_small(&mut self) {
        if self.page.capacity() > Self::KEEP {
            self.page = Vec::new();
        }
        if self.reps.capacity() > Self::KEEP {
            self.reps = Vec::new();
        }
    }
}

thread_local! {
    static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::default();
}

/// Fills this thread's [`Scratch`] with stale bytes and levels (a test's
/// check that nothing of a leaf decoded before reaches the next).
#[cfg(test)]
pub fn soil_scratch(bytes: usize) {
    SCRATCH.with_borrow_mut(|s| {
        s.page = vec![0xA5; bytes];
        s.reps = vec![1; bytes];
    });
}

/// Lets go of this thread's and every pool thread's [`Scratch`], once a
/// file's windows are decoded: the analyses after the load would have it
/// beside their own peak (up to ~3 MiB a thread).
pub fn release_scratch() {
    let clear = || SCRATCH.with_borrow_mut(|s| *s = Scratch::default());
    clear();
    rayon::broadcast(|_| clear());
}

/// [`decode`] with this thread's [`Scratch`].
fn decode_pages(
    mut reader: polars_parquet::read::PageReader,
    descriptor: &polars_parquet::parquet::metadata::Descriptor,
    field: &ArrowField,
    rows: std::ops::Range<usize>,
    scratch: &mut Scratch,
) -> Option<PolarsResult<ArrayRef>> {
    use polars_parquet::parquet::compression::Compression;
    let (around, leaf) = shape(&field.dtype)?;
    let lists = around
        .iter()
        .filter(|d| matches!(d, ArrowDataType::List(_) | ArrowDataType::LargeList(_)))
        .count();
    let max_rep = usize::try_from(descriptor.max_rep_level).ok()?;
    if lists != max_rep || max_rep == 0 || max_rep > 255 {
        return None;
    }
    let max_def = u32::try_from(descriptor.max_def_level).ok()?;
    // Every level is a value here: the pages' levels are room enough.
    let total = reader.total_num_values();
    let mut values = Values::new(descriptor.primitive_type.physical_type, leaf, total)?;
    let Scratch {
        page: buf,
        reps,
        ctx,
    } = scratch;
    // Emptied first: polars zero-fills the bytes it decompresses into, so a
    // page that decompresses short reads zeros, as from a fresh buffer.
    let mut decompress = |page: CompressedPage, buf: &mut Vec<u8>| -> PolarsResult<Page> {
        buf.clear();
        Ok(polars_parquet::parquet::read::decompress(page, buf, ctx)?)
    };
    let dict = match reader.read_dict() {
        Err(e) => return Some(Err(e.into())),
        Ok(None) => None,
        Ok(Some(page)) => match decompress(CompressedPage::Dict(page), buf) {
            Err(e) => return Some(Err(e)),
            Ok(Page::Dict(d)) => {
                let physical = descriptor.primitive_type.physical_type;
                // Room for no more values than its bytes can hold (a
                // damaged count is then refused by `extend_plain`, not
                // reserved).
                let room = d.num_values.min(d.buffer.len().saturating_mul(8));
                let mut v = Values::new(physical, leaf, room)?;
                v.extend_plain(&d.buffer, d.num_values)?;
                Some(v)
            }
            Ok(Page::Data(_)) => return None,
        },
    };
    // Every level's repetition level, pages one after another.
    reps.clear();
    reps.reserve(total);
    for page in reader {
        let page = page.map_err(PolarsError::from);
        let owned = page
            .as_ref()
            .is_ok_and(|p| matches!(p, CompressedPage::Data(d) if d.compression() != Compression::Uncompressed));
        let mut page = match page.and_then(|p| decompress(p, buf)) {
            Err(e) => return Some(Err(e)),
            Ok(Page::Data(page)) => page,
            Ok(Page::Dict(_)) => return None,
        };
        page_levels_and_values(&page, max_rep, max_def, dict.as_ref(), &mut values, reps)?;
        // The decompressed bytes' buffer back for the next page (an
        // uncompressed page's bytes are the file's: not taken, not copied).
        if owned {
            *buf = std::mem::take(page.buffer_mut());
        }
    }
    // Where rows `rows` begin and end among the levels.
    let (a, b) = rows_at(reps, &rows)?;
    // Each list's offsets: a new slot of the list at depth k (1-based)
    // begins with every item of depth k - 1 (rows for k = 1), that is at
    // each level of repetition below k; an item of depth k begins at each
    // level of repetition k or below.
    let mut offsets: Vec<Vec<i64>> = vec![Vec::new(); max_rep];
    let mut count = vec![0i64; max_rep + 1];
    for &r in &reps[a..b] {
        let r = r as usize;
        for k in r + 1..=max_rep {
            offsets[k - 1].push(count[k]);
        }
        for c in &mut count[r.max(1)..=max_rep] {
            *c += 1;
        }
    }
    for (k, o) in offsets.iter_mut().enumerate() {
        o.push(count[k + 1]);
    }
    let mut array = values.into_array(leaf, a..b);
    // Back up from the leaf: structs of one field and lists.
    let mut list = max_rep;
    for d in around.into_iter().rev() {
        array = match d {
            ArrowDataType::Struct(_) => {
                match StructArray::try_new(d.clone(), array.len(), vec![array], None) {
                    Ok(s) => s.boxed(),
                    Err(e) => return Some(Err(e)),
                }
            }
            ArrowDataType::List(_) => {
                list -= 1;
                match list_array::<i32>(d, &offsets[list], array) {
                    Ok(l) => l,
                    Err(e) => return Some(Err(e)),
                }
            }
            _ => {
                list -= 1;
                match list_array::<i64>(d, &offsets[list], array) {
                    Ok(l) => l,
                    Err(e) => return Some(Err(e)),
                }
            }
        };
    }
    Some(Ok(array))
}

/// Whether `field`'s leaf is a flag (a bit a value): its pages, whatever
/// their number of values, decode straight in little memory (a byte a
/// level and a bit a value).
pub fn holds_bits(field: &ArrowField) -> bool {
    shape(&field.dtype).is_some_and(|(_, leaf)| matches!(leaf, ArrowDataType::Boolean))
}

/// A list array of `dtype` over `values` with `offsets` (counted from 0).
fn list_array<O: Offset>(
    dtype: &ArrowDataType,
    offsets: &[i64],
    values: ArrayRef,
) -> PolarsResult<ArrayRef> {
    let offsets = offsets
        .iter()
        .map(|&o| O::from_as_usize(o as usize))
        .collect::<Vec<O>>();
    Ok(ListArray::<O>::try_new(
        dtype.clone(),
        OffsetsBuffer::try_from(offsets)?,
        values,
        None,
    )?
    .boxed())
}

/// Where rows `rows` begin and end among levels `reps` (a row begins at
/// each level of repetition 0; the row past the last at their end); `None`
/// for rows past that.
fn rows_at(reps: &[u8], rows: &std::ops::Range<usize>) -> Option<(usize, usize)> {
    let mut at = reps
        .iter()
        .enumerate()
        .filter(|(_, &r)| r == 0)
        .map(|(i, _)| i)
        .chain([reps.len()]);
    let a = at.nth(rows.start)?;
    let b = if rows.end == rows.start {
        a
    } else {
        at.nth(rows.end - rows.start - 1)?
    };
    Some((a, b))
}

/// Each level of a bit-packed run, 32 at a time: no vector of the run's
/// (a page of flags can hold a row group's levels in one run).
fn each_level(
    mut run: polars_parquet::parquet::encoding::bitpacked::Decoder<'_, u32>,
    mut f: impl FnMut(&[u32]) -> Option<()>,
) -> Option<()> {
    let mut chunks = run.chunked();
    while let Some((chunk, len)) = chunks.next_inexact() {
        f(&chunk[..len])?;
    }
    Some(())
}

/// One data page's repetition levels (onto `reps`) and values (onto
/// `values`); `None` when a definition level is not the maximum (a null
/// or an empty list) or the values are not plain or dictionary encoded.
fn page_levels_and_values(
    page: &DataPage,
    max_rep: usize,
    max_def: u32,
    dict: Option<&Values>,
    values: &mut Values,
    reps: &mut Vec<u8>,
) -> Option<()> {
    use polars_parquet::parquet::encoding::hybrid_rle::HybridRleChunk;
    let n = page.num_values();
    let split = split_buffer(page).ok()?;
    // The definition levels, a run at a time (all present: one run, as a
    // rule); the repetition levels straight onto `reps`.
    let mut seen = 0;
    let def = HybridRleDecoder::new(split.def, get_bit_width(max_def as i16), n);
    for chunk in def.into_chunk_iter() {
        match chunk.ok()? {
            HybridRleChunk::Rle(d, k) => {
                if k > 0 && d != max_def {
                    return None;
                }
                seen += k;
            }
            HybridRleChunk::Bitpacked(d) => each_level(d, |levels| {
                seen += levels.len();
                levels.iter().all(|&d| d == max_def).then_some(())
            })?,
        }
    }
    let before = reps.len();
    // A bit width of at most 8 (`decode` takes max_rep ≤ 255): every level
    // fits a byte.
    let rep = HybridRleDecoder::new(split.rep, get_bit_width(max_rep as i16), n);
    for chunk in rep.into_chunk_iter() {
        match chunk.ok()? {
            HybridRleChunk::Rle(r, k) => reps.resize(reps.len() + k, u8::try_from(r).ok()?),
            HybridRleChunk::Bitpacked(d) => each_level(d, |levels| {
                reps.extend(levels.iter().map(|&r| r as u8));
                Some(())
            })?,
        }
    }
    if seen != n || reps.len() - before != n {
        return None;
    }
    match (page.encoding(), dict) {
        (Encoding::Plain, _) => values.extend_plain(split.values, n),
        (Encoding::RleDictionary | Encoding::PlainDictionary, Some(dict)) => {
            let (&bits, packed) = split.values.split_first()?;
            let indices = HybridRleDecoder::new(packed, u32::from(bits), n)
                .collect()
                .ok()?;
            if indices.len() != n {
                return None;
            }
            values.extend_from_dict(dict, &indices)
        }
        _ => None,
    }
}

/// Run names for tests of strings: pairs of equal lengths, inline (up to
/// 12 bytes) and not, more than [`Strs`]' four recent ones, and empty.
#[cfg(test)]
pub(crate) const RUN_NAMES: [&str; 6] = [
    "base",
    "grpo",
    "a-much-longer-run-name",
    "a-much-longer-run-nama",
    "sft",
    "",
];

#[cfg(test)]
mod tests {
    use super::*;

    /// Strings pushed come back as polars' own array of them, repeats
    /// (inline or not, of equal lengths, past the four recent ones)
    /// included; a string that is not UTF-8 is refused, even one that
    /// begins like a recent one.
    #[test]
    fn strings_come_back_as_pushed_and_invalid_utf8_is_refused() {
        let names = RUN_NAMES;
        // The two long names are stored, then found among the recent
        // ones until "sft" and "" push them out: the second is stored again.
        let order = [2, 3, 0, 1, 2, 3, 3, 0, 2, 1, 4, 5, 3, 3];
        let mut s = Strs::with_capacity(4);
        for &k in &order {
            s.push(names[k].as_bytes()).unwrap();
        }
        assert_eq!(s.buffer.len(), 3 * "a-much-longer-run-name".len());
        let want: Vec<&str> = order.iter().map(|&k| names[k]).collect();
        let want = Utf8ViewArray::from_slice_values(&want[2..13]);
        let got = s.into_array(&ArrowDataType::Utf8View, 2..13);
        assert!(got.as_ref() == &want as &dyn polars_arrow::array::Array);

        // Over many orders of strings that share lengths and first bytes,
        // inline or not, what is stored is what the last four distinct
        // strings, compared whole, say is new.
        let words = [
            "call_1()",
            "call_2()",
            "call_12()",
            "ok",
            "",
            "twelve-bytes",
            "thirteen-byte",
            "thirteen-bytf",
            "xhirteen-byte",
            "a much longer observation",
        ];
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..200 {
            let mut s = Strs::with_capacity(64);
            let (mut recent, mut stored) = (std::collections::VecDeque::new(), Vec::new());
            let mut pushed = Vec::new();
            for _ in 0..64 {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                let w = words[(state % words.len() as u64) as usize];
                s.push(w.as_bytes()).unwrap();
                pushed.push(w);
                if !recent.contains(&w) {
                    recent.push_front(w);
                    recent.truncate(4);
                    if w.len() > 12 {
                        stored.extend_from_slice(w.as_bytes());
                    }
                }
            }
            assert_eq!(s.buffer, stored, "{pushed:?}");
            let got = s.into_array(&ArrowDataType::Utf8View, 0..64);
            let want = Utf8ViewArray::from_slice_values(&pushed);
            assert!(got.as_ref() == &want as &dyn polars_arrow::array::Array);
        }

        let mut s = Strs::with_capacity(2);
        s.push(b"a-much-longer-run-name").unwrap();
        assert!(s.push(b"a-much-longer-run-nam\xff").is_none());
        assert!(s.push(b"gr\xffo").is_none());
        assert_eq!(s.views.len(), 1);
    }
}
