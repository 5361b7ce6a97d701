//! A trajectory file read by its leaves' pages: what the load keeps, windows of values, dense leaves decoded straight.

use super::*;

/// The step fields [`parse_trajectories`] reads (checked there in debug
/// builds): the only ones [`TrajectoryFile`] decodes.
pub(super) const STEP_FIELDS: &[&str] = &[
    "turn",
    "output_tokens",
    "error",
    "reward",
    "budget_total",
    "budget_remaining",
    "logp",
];

/// What a [`TrajectoryFile`] decodes: the top-level columns of `columns`
/// the file has, and of `steps` (a list of structs) the fields of `steps`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Keep<'a> {
    pub(super) columns: &'a [&'a str],
    pub(super) steps: &'a [&'a str],
}

/// What the load decodes: the trajectory fields, the [`STEP_FIELDS`].
pub(super) const LOAD: Keep<'static> = Keep {
    columns: crate::schema::TRAJECTORY_FIELDS,
    steps: STEP_FIELDS,
};

/// Values (levels) of one column chunk a window of rows decodes at most,
/// about: a row group whose step leaves hold more is decoded in windows
/// of consecutive rows, each parsed and dropped before the one after the
/// next is decoded. A decoded step is ~100 bytes (the log-probabilities'
/// run names as 16-byte string views are a quarter of it): a window of
/// 2¹⁷ log-probabilities, 65,536 steps of two runs, is ~6 MB whatever the
/// file's size.
const WINDOW_VALUES: usize = 1 << 17;

/// The most values (levels) the pages of a leaf's window may hold to be
/// decoded straight ([`crate::schema::dense_leaf`]), which decodes them whole: four
/// windows' worth.
const DENSE_VALUES: usize = 4 * WINDOW_VALUES;

/// A kept leaf of a row group ([`TrajectoryFile::leaves`]): its column,
/// the field to decode it alone with (`None` when the column is decoded
/// whole) and its column chunk (`None` when the row group lacks the column).
type Leaf<'a> = (
    usize,
    Option<ArrowField>,
    Option<&'a polars_parquet::read::ColumnChunkMetadata>,
);

/// A trajectory file read by the columns [`parse_trajectories`] reads:
/// the trajectory fields, and of `steps` (a list of structs) only
/// [`STEP_FIELDS`]. The other leaves (actions, observations, whatever else
/// a trainer stores) are neither decompressed nor decoded: polars' reader
/// projects whole top-level columns only, and the steps' other fields were
/// most of a load's decoding.
///
/// The rows are decoded in windows ([`WINDOW_VALUES`]) leaf by leaf, one
/// leaf a core, by polars-parquet's own decoder (`column_iter_to_arrays`,
/// what polars-io's reader calls per column and row group), each leaf from
/// only the data pages that hold the window's rows: polars' row filter
/// decodes the levels of every page of a column chunk, so windows over a
/// whole chunk would cost quadratic time (README, session 20). The step
/// leaves of a window are put back together as one `steps` list of structs.
pub struct TrajectoryFile {
    /// The kept column chunks of the row groups decoded whole, one after
    /// another (the whole file while it is indexed).
    bytes: polars_buffer::Buffer<u8>,
    /// Each chunk kept: (its first byte in the file, in `bytes`, its length).
    chunks: Vec<(usize, usize, usize)>,
    pub(super) meta: polars_parquet::read::FileMetadata,
    /// Each column read: its field as decoded, and which of its leaves
    /// (in the file's order) are kept (`None`: all).
    pub(super) columns: Vec<(ArrowField, Option<Vec<bool>>)>,
    /// The windows: (row group, its rows).
    pub(super) windows: Vec<(usize, std::ops::Range<usize>)>,
    /// Per row group decoded in more than one window, each kept leaf's
    /// pages (columns in order, leaves in the file's order); and the
    /// leaf's last decoded rows, for the next windows they cover.
    pub(super) pages: Vec<Option<Vec<std::sync::Mutex<LeafPages>>>>,
    /// The first window, decoded ahead ([`TrajectoryFile::decode_first`]).
    first: Option<PolarsResult<DataFrame>>,
}

/// A column chunk's pages, their rows, and its last decoded rows.
pub(super) struct LeafPages {
    /// The dictionary page, header included (empty without one).
    dict: polars_buffer::Buffer<u8>,
    pub(super) pages: Vec<PageSpan>,
    /// Pages before this one are decoded and their bytes freed.
    freed: usize,
    /// Rows (in the row group) decoded last, and their array.
    last: Option<(std::ops::Range<usize>, ArrayRef)>,
    /// A window of this leaf had a null or an empty list: polars decodes
    /// it from then on ([`crate::schema::dense_leaf`] decodes it until then).
    sparse: bool,
}

/// A data page: its bytes (header included; a copy, freed once decoded),
/// its values (levels), the rows (records) begun before it, and whether
/// its first value begins one.
pub(super) struct PageSpan {
    bytes: polars_buffer::Buffer<u8>,
    pub(super) values: usize,
    pub(super) row: usize,
    pub(super) starts: bool,
}

impl TrajectoryFile {
    pub(super) fn new(raw: Vec<u8>) -> PolarsResult<TrajectoryFile> {
        Self::with_window(raw, WINDOW_VALUES)
    }

    /// [`TrajectoryFile::new`] with windows of about `window_values`
    /// values of a column chunk.
    pub(super) fn with_window(raw: Vec<u8>, window_values: usize) -> PolarsResult<TrajectoryFile> {
        Self::keeping(raw, window_values, LOAD)
    }

    /// [`TrajectoryFile::with_window`] decoding what `keep` says.
    pub(super) fn keeping(
        raw: Vec<u8>,
        window_values: usize,
        keep: Keep,
    ) -> PolarsResult<TrajectoryFile> {
        let mut file = Self::whole_keeping(raw, keep)?;
        for (g, rg) in file.meta.row_groups.iter().enumerate() {
            let rows = rg.num_rows();
            let leaves = file.leaves(g)?;
            let values = leaves
                .iter()
                .filter_map(|l| l.2)
                .map(|m| m.num_values().max(0) as usize)
                .max()
                .unwrap_or(0);
            let n = values.div_ceil(window_values.max(1)).clamp(1, rows.max(1));
            let pages = if n > 1 && leaves.iter().all(|l| l.1.is_some()) {
                let pages = leaves
                    .par_iter()
                    .map(|l| match l.2 {
                        Some(m) => {
                            let located = file.page_locations(m).unwrap_or_default();
                            file.index_pages(m, rows, &located)
                                .map(std::sync::Mutex::new)
                        }
                        None => Ok(std::sync::Mutex::new(LeafPages {
                            dict: polars_buffer::Buffer::from_vec(Vec::new()),
                            pages: Vec::new(),
                            freed: 0,
                            last: None,
                            sparse: false,
                        })),
                    })
                    .collect::<PolarsResult<Vec<_>>>()?;
                Some(pages)
            } else {
                None
            };
            // Without a page index (a column not split into leaves), one window.
            let n = if pages.is_some() { n } else { 1 };
            file.pages.push(pages);
            file.windows
                .extend((0..n).map(|k| (g, rows * k / n..rows * (k + 1) / n)));
        }
        file.windows.retain(|(_, r)| !r.is_empty());
        // Only the kept leaves' column chunks stay (of a file of actions and
        // observations, a small part): a row group decoded in windows holds
        // its pages one by one (freed as the windows pass them), the others
        // their chunks.
        let mut kept: Vec<std::ops::Range<usize>> = (0..file.meta.row_groups.len())
            .filter(|&g| file.pages[g].is_none())
            .map(|g| file.leaves(g))
            .collect::<PolarsResult<Vec<_>>>()?
            .into_iter()
            .flatten()
            .filter_map(|l| l.2)
            .map(|m| {
                let r = m.byte_range();
                r.start as usize..r.end as usize
            })
            .collect();
        kept.sort_by_key(|r| r.start);
        let mut bytes = Vec::with_capacity(kept.iter().map(|r| r.len()).sum());
        let mut chunks: Vec<(usize, usize, usize)> = Vec::new();
        for r in kept {
            if chunks.last().is_some_and(|c| c.0 + c.2 > r.start) {
                continue;
            }
            let slice = file.bytes.get(r.clone()).ok_or_else(
                || polars_err!(ComputeError: "a column chunk at bytes {r:?}, past the file's end"),
            )?;
            chunks.push((r.start, bytes.len(), r.len()));
            bytes.extend_from_slice(slice);
        }
        file.bytes = polars_buffer::Buffer::from_vec(bytes);
        file.chunks = chunks;
        Ok(file)
    }

    #[cfg(test)]
    pub(super) fn whole(raw: Vec<u8>) -> PolarsResult<TrajectoryFile> {
        Self::whole_keeping(raw, LOAD)
    }

    /// The file as read, its metadata and kept columns, no windows yet:
    /// the bytes are all the file's until its pages and chunks are copied
    /// out.
    fn whole_keeping(raw: Vec<u8>, keep: Keep) -> PolarsResult<TrajectoryFile> {
        let meta = polars_parquet::read::read_metadata(&mut std::io::Cursor::new(&raw[..]))?;
        let len = raw.len();
        Self::of(meta, polars_buffer::Buffer::from_vec(raw), len, keep)
    }

    /// The file of `meta`, its `len` bytes in `bytes` (empty: the
    /// metadata alone, to ask [`Self::leaves`] where they are).
    fn of(
        meta: polars_parquet::read::FileMetadata,
        bytes: polars_buffer::Buffer<u8>,
        len: usize,
        keep: Keep,
    ) -> PolarsResult<TrajectoryFile> {
        let schema = polars_io::parquet::read::infer_schema(&meta)?;
        let columns: Vec<(ArrowField, Option<Vec<bool>>)> = schema
            .iter_values()
            .filter(|f| f.name == "steps" || keep.columns.contains(&f.name.as_str()))
            .map(|f| match pruned_steps(f, &meta, keep.steps) {
                Some((f, keep)) => (f, Some(keep)),
                None => (f.clone(), None),
            })
            .collect();
        Ok(TrajectoryFile {
            bytes,
            chunks: vec![(0, 0, len)],
            meta,
            columns,
            windows: Vec::new(),
            pages: Vec::new(),
            first: None,
        })
    }

    /// Where in the file [`Self::new`] reads, apart from the footer: each
    /// row group's kept leaves' column chunks and their offset indexes.
    /// `None` where the file is not read that way (rows of other kinds may
    /// be in it, or it has no rows).
    #[cfg(unix)]
    pub(super) fn kept_ranges(
        meta: polars_parquet::read::FileMetadata,
        keep: Keep,
    ) -> Option<Vec<std::ops::Range<u64>>> {
        let schema = polars_io::parquet::read::infer_schema(&meta).ok()?;
        if meta.num_rows == 0 || schema.iter_values().any(|f| f.name == "kind") {
            return None;
        }
        let file = Self::of(meta, polars_buffer::Buffer::from_vec(Vec::new()), 0, keep).ok()?;
        let mut out = Vec::new();
        for g in 0..file.meta.row_groups.len() {
            for (_, _, m) in file.leaves(g).ok()? {
                let Some(m) = m else { continue };
                out.push(m.byte_range());
                if let (Some(at), Some(n)) = (m.offset_index_offset(), m.offset_index_length()) {
                    let at = u64::try_from(at).ok()?;
                    out.push(at..at.checked_add(u64::try_from(n).ok()?)?);
                }
            }
        }
        Some(out)
    }

    /// Decodes the first window now: while the file before's last window
    /// is parsed (a load's files one after another would otherwise begin
    /// each with a window decoded before anything else runs, 9–14 ms a
    /// file of a 1 M-trajectory set).
    pub fn decode_first(&mut self) {
        if self.windows() > 0 && self.first.is_none() {
            self.first = Some(self.frame(0));
        }
    }

    /// The file's rows.
    pub fn rows(&self) -> usize {
        self.meta.num_rows
    }

    /// How many windows the rows are decoded in.
    pub(super) fn windows(&self) -> usize {
        self.windows.len()
    }

    /// Every window parsed in row order ([`parse_trajectories`], `sink` as
    /// there), the next one decoded while one is parsed; the memory the
    /// windows freed is handed back as [`crate::stage::release_freed_memory_in_loop`] says.
    /// `beside` runs beside the last window's parse (or at once without
    /// windows): the next file's set-up. `name`: the file's, for errors;
    /// `file`: its index.
    pub fn parse(
        &mut self,
        name: &str,
        file: u32,
        sink: &mut (dyn FnMut(ParsedRows) -> Result<()> + Send),
        beside: &mut (dyn FnMut() + Send),
    ) -> Result<()> {
        let (mut row0, mut w) = (0, 0);
        let first = self.first.take();
        let this = &*self;
        let mut next = (this.windows() > 0).then(|| first.unwrap_or_else(|| this.frame(0)));
        if next.is_none() {
            beside();
        }
        while let Some(df) = next.take() {
            let df = df.map_err(|e| unreadable(name, e))?;
            let (parsed, following) = rayon::join(
                || parse_trajectories(file, row0, &df, &mut *sink),
                || {
                    if w + 1 < this.windows() {
                        Some(this.frame(w + 1))
                    } else {
                        beside();
                        None
                    }
                },
            );
            parsed?;
            (next, row0, w) = (following, row0 + df.height(), w + 1);
            drop(df);
            crate::stage::release_freed_memory_in_loop();
        }
        Ok(())
    }

    /// Row group `g`'s kept leaves ([`Leaf`]), columns in order.
    pub(super) fn leaves(&self, g: usize) -> PolarsResult<Vec<Leaf<'_>>> {
        let rg = &self.meta.row_groups[g];
        let mut out = Vec::new();
        for (c, (field, keep)) in self.columns.iter().enumerate() {
            let Some(leaves) = rg.columns_under_root_iter(&field.name) else {
                out.push((c, Some(field.clone()), None));
                continue;
            };
            let leaves: Vec<_> = leaves.collect();
            if keep.as_ref().is_some_and(|k| k.len() != leaves.len()) {
                polars_bail!(ComputeError: "steps: {} column chunks in a row group, the schema has {}", leaves.len(), keep.as_ref().map_or(0, Vec::len));
            }
            let kept: Vec<_> = leaves
                .into_iter()
                .enumerate()
                .filter(|(i, _)| keep.as_ref().is_none_or(|k| k[*i]))
                .map(|(_, m)| m)
                .collect();
            let split = kept.len() == 1 || splittable(&field.dtype);
            for (j, m) in kept.into_iter().enumerate() {
                out.push((c, split.then(|| only_leaf(field, j)), Some(m)));
            }
        }
        Ok(out)
    }

    /// A column chunk's bytes: of a row group decoded whole (a windowed
    /// one's pages are in its [`LeafPages`]); empty when not kept.
    pub(super) fn chunk(
        &self,
        m: &polars_parquet::read::ColumnChunkMetadata,
    ) -> polars_buffer::Buffer<u8> {
        let r = m.byte_range();
        let (start, len) = (r.start as usize, (r.end - r.start) as usize);
        let k = self
            .chunks
            .partition_point(|c| c.0 <= start)
            .saturating_sub(1);
        match self.chunks.get(k) {
            Some(&(at, to, n)) if at <= start && start + len <= at + n => {
                let to = to + (start - at);
                self.bytes.clone().sliced(to..to + len)
            }
            _ => polars_buffer::Buffer::from_vec(Vec::new()),
        }
    }

    /// A reader of `values` values of the pages in `bytes`.
    pub(super) fn page_reader(
        m: &polars_parquet::read::ColumnChunkMetadata,
        bytes: polars_buffer::Buffer<u8>,
        values: usize,
    ) -> polars_parquet::read::PageReader {
        let meta = polars_parquet::parquet::read::PageMetaData::new(
            0,
            values as i64,
            m.compression(),
            m.descriptor().descriptor.clone(),
        );
        polars_parquet::read::PageReader::new_with_page_meta(
            std::io::Cursor::new(bytes),
            meta,
            vec![],
            usize::MAX,
        )
    }

    /// Whether every data page of a column chunk holds no more values than
    /// the chunk has left: polars reads a page header's count (an `i32`) as
    /// a `usize`, so a damaged, negative count has its decoder reserve
    /// exabytes and abort the process (`scripts/fuzz_parquet.py`: two of
    /// 1,800 damaged files, README sessions 30–31). Headers only: nothing
    /// is decompressed.
    pub(super) fn check_page_counts(
        m: &polars_parquet::read::ColumnChunkMetadata,
        chunk: polars_buffer::Buffer<u8>,
    ) -> PolarsResult<()> {
        use polars_parquet::parquet::page::CompressedPage;
        let total = m.num_values().max(0) as usize;
        let mut reader = Self::page_reader(m, chunk, total);
        reader.read_dict()?;
        let mut seen = 0;
        for page in reader {
            if let CompressedPage::Data(page) = page? {
                let values = page.num_values();
                if values > total - seen {
                    polars_bail!(ComputeError: "{}", Self::page_count_error(values, total - seen));
                }
                seen += values;
            }
        }
        Ok(())
    }

    /// What is wrong with a page of `values` values where its column chunk
    /// has `left` (the header's count as written: an `i32`).
    fn page_count_error(values: usize, left: usize) -> String {
        format!(
            "a data page's header counts {} values, its column chunk has {left} left \
             (a damaged page header)",
            values as i32
        )
    }

    /// A column chunk's offset index (the Parquet page index's): each data
    /// page's place in the file and the first row it holds; `None` when the
    /// file has none or it cannot be read (the pages are then counted).
    /// Read while the file is whole.
    pub(super) fn page_locations(
        &self,
        m: &polars_parquet::read::ColumnChunkMetadata,
    ) -> Option<Vec<polars_parquet_format::PageLocation>> {
        use polars_parquet_format::thrift::protocol::TCompactInputProtocol;
        let at = usize::try_from(m.offset_index_offset()?).ok()?;
        let len = usize::try_from(m.offset_index_length()?).ok()?;
        let mut bytes = self.bytes.get(at..at.checked_add(len)?)?;
        // What reading may allocate: a page's location is 24 bytes, at
        // least 3 of the index's.
        let mut prot = TCompactInputProtocol::new(&mut bytes, len.saturating_mul(8));
        let index = polars_parquet_format::OffsetIndex::read_from_in_protocol(&mut prot).ok()?;
        Some(index.page_locations)
    }

    /// A column chunk's pages and the rows each begins: page headers read
    /// one by one; the rows from the chunk's offset index where it has one
    /// (pages it lists begin a row: the Parquet format requires it), else,
    /// in nested columns, from the repetition levels, decoded. `rows`: the
    /// row group's; `located`: the offset index ([`Self::page_locations`]).
    pub(super) fn index_pages(
        &self,
        m: &polars_parquet::read::ColumnChunkMetadata,
        rows: usize,
        located: &[polars_parquet_format::PageLocation],
    ) -> PolarsResult<LeafPages> {
        use polars_parquet::parquet::compression::DecompressionContext;
        use polars_parquet::parquet::encoding::hybrid_rle::{HybridRleChunk, HybridRleDecoder};
        use polars_parquet::parquet::page::{split_buffer, CompressedPage, Page};
        let chunk = self.chunk(m);
        let total = m.num_values().max(0) as usize;
        let mut r = Self::page_reader(m, chunk.clone(), total);
        r.read_dict()?;
        let dict_end = r.into_inner().0.position() as usize;
        let max_rep = m.descriptor().descriptor.max_rep_level;
        let bits = polars_parquet::parquet::read::levels::get_bit_width(max_rep);
        let chunk_at = m.byte_range().start;
        // The first row of the `k`th data page, which begins at byte `at`
        // of the chunk, by the offset index (`None` if it lists another).
        let listed = |k: usize, at: usize| {
            located
                .get(k)
                .filter(|l| u64::try_from(l.offset).ok() == Some(chunk_at + at as u64))
                .and_then(|l| usize::try_from(l.first_row_index).ok())
        };
        let (mut pages, mut pos, mut row, mut seen) = (Vec::new(), dict_end, 0, 0);
        let (mut ctx, mut buf, mut levels) = (DecompressionContext::Unset, Vec::new(), Vec::new());
        while seen < total && pos < chunk.len() {
            let mut r = Self::page_reader(m, chunk.clone().sliced(pos..chunk.len()), 1);
            let Some(page) = r.next() else { break };
            let end = pos + r.into_inner().0.position() as usize;
            let CompressedPage::Data(page) = page? else {
                polars_bail!(ComputeError: "a dictionary page after the first page of a column chunk");
            };
            let values = page.num_values();
            if values > total - seen {
                polars_bail!(ComputeError: "{}", Self::page_count_error(values, total - seen));
            }
            // This page's rows by the offset index: from its first to the
            // next page's (or the row group's end).
            let k = pages.len();
            let indexed = listed(k, pos).filter(|&f| f == row).and_then(|first| {
                let next = if seen + values < total {
                    listed(k + 1, end)
                } else {
                    Some(rows)
                };
                next.filter(|&n| n > first).map(|n| n - first)
            });
            let (begun, starts) = if max_rep == 0 {
                (values, true)
            } else if let Some(begun) = indexed {
                (begun, true)
            } else {
                let Page::Data(page) = polars_parquet::parquet::read::decompress(
                    CompressedPage::Data(page),
                    &mut buf,
                    &mut ctx,
                )?
                else {
                    polars_bail!(ComputeError: "a data page decompressed as a dictionary");
                };
                let rep = split_buffer(&page)?.rep;
                let (mut begun, mut first) = (0, None);
                for c in HybridRleDecoder::new(rep, bits, values).into_chunk_iter() {
                    match c? {
                        HybridRleChunk::Rle(v, n) => {
                            if n > 0 {
                                first.get_or_insert(v);
                            }
                            begun += if v == 0 { n } else { 0 };
                        }
                        HybridRleChunk::Bitpacked(d) => {
                            levels.clear();
                            d.collect_into(&mut levels);
                            if let Some(&v) = levels.first() {
                                first.get_or_insert(v);
                            }
                            begun += levels.iter().filter(|&&v| v == 0).count();
                        }
                    }
                }
                (begun, first == Some(0))
            };
            pages.push(PageSpan {
                bytes: polars_buffer::Buffer::from_vec(chunk[pos..end].to_vec()),
                values,
                row,
                starts,
            });
            (row, seen, pos) = (row + begun, seen + values, end);
        }
        Ok(LeafPages {
            dict: polars_buffer::Buffer::from_vec(chunk[..dict_end].to_vec()),
            pages,
            freed: 0,
            last: None,
            sparse: false,
        })
    }

    /// Window `w`'s rows as a frame.
    pub(super) fn frame(&self, w: usize) -> PolarsResult<DataFrame> {
        let (g, ref rows) = self.windows[w];
        let (a, b) = (rows.start, rows.end);
        let leaves = self.leaves(g)?;
        let group_rows = self.meta.row_groups[g].num_rows();
        // The costliest leaves first (strings, then the most values), each
        // a task of its own: the longest must not start last and leave a
        // core idle at the window's end.
        let mut order: Vec<usize> = (0..leaves.len()).collect();
        order.sort_by_key(|&i| {
            leaves[i].2.map_or((true, 0), |m| {
                let strings = m.descriptor().descriptor.primitive_type.physical_type
                    == polars_parquet::parquet::schema::types::PhysicalType::ByteArray;
                (!strings, -m.num_values())
            })
        });
        let mut decoded: Vec<(usize, PolarsResult<Option<ArrayRef>>)> = order
            .par_iter()
            .with_max_len(1)
            .map(|&i| (i, self.window_leaf(&leaves, i, g, a..b, group_rows)))
            .collect();
        decoded.sort_by_key(|d| d.0);
        let decoded = decoded
            .into_iter()
            .map(|d| d.1)
            .collect::<PolarsResult<Vec<_>>>()?;
        let mut columns = Vec::new();
        for (c, (field, _)) in self.columns.iter().enumerate() {
            let parts: Vec<ArrayRef> = leaves
                .iter()
                .zip(&decoded)
                .filter(|(l, _)| l.0 == c)
                .filter_map(|(_, d)| d.clone())
                .collect();
            if parts.is_empty() {
                columns.push(Column::full_null(
                    field.name.clone(),
                    b - a,
                    &DataType::from_arrow_field(field),
                ));
                continue;
            }
            let array = assemble(&field.dtype, parts)?;
            let series = if array.dtype() == &field.dtype {
                Series::try_from((field, vec![array]))?
            } else {
                // A dictionary column as its strings ([`one_array`]).
                Series::try_from((field.name.clone(), array))?
            };
            columns.push(series.into_column());
        }
        DataFrame::new(b - a, columns)
    }

    /// Leaf `i` of `leaves` (row group `g`'s) over rows `rows` of the
    /// group: `None` for a leaf the file lacks or one decoded with the
    /// column before it.
    fn window_leaf(
        &self,
        leaves: &[Leaf<'_>],
        i: usize,
        g: usize,
        rows: std::ops::Range<usize>,
        group_rows: usize,
    ) -> PolarsResult<Option<ArrayRef>> {
        use polars_io::parquet::read::_internal::to_deserializer;
        let (a, b) = (rows.start, rows.end);
        let (c, leaf, m) = &leaves[i];
        let Some(m) = m else { return Ok(None) };
        let Some(leaf) = leaf else {
            // A column decoded whole: all its kept leaves at once.
            if leaves[..i].iter().any(|l| l.0 == *c) {
                return Ok(None);
            }
            let (field, _) = &self.columns[*c];
            let chunks: Vec<_> = leaves
                .iter()
                .filter(|l| l.0 == *c)
                .filter_map(|l| l.2.map(|m| (m, self.chunk(m))))
                .collect();
            for (m, chunk) in &chunks {
                Self::check_page_counts(m, chunk.clone())?;
            }
            let filter = polars_parquet::read::Filter::new_ranged(a, b);
            let (arrays, _) = to_deserializer(chunks, field.clone(), Some(filter))?;
            return one_array(arrays).map(Some);
        };
        match &self.pages[g] {
            None => {
                let filter = polars_parquet::read::Filter::new_ranged(a, b);
                Self::check_page_counts(m, self.chunk(m))?;
                let chunks = vec![(*m, self.chunk(m))];
                let (arrays, _) = to_deserializer(chunks, leaf.clone(), Some(filter))?;
                one_array(arrays).map(Some)
            }
            Some(pages) => {
                let mut p = pages[i].lock().unwrap_or_else(|e| e.into_inner());
                self.window_of_leaf(m, leaf, &mut p, a..b, group_rows)
                    .map(Some)
            }
        }
    }

    /// Rows `rows` of one leaf, from the pages that hold them; the rows up
    /// to the end of the last of those pages are kept for the next windows.
    fn window_of_leaf(
        &self,
        m: &polars_parquet::read::ColumnChunkMetadata,
        leaf: &ArrowField,
        p: &mut LeafPages,
        rows: std::ops::Range<usize>,
        group_rows: usize,
    ) -> PolarsResult<ArrayRef> {
        let (a, b) = (rows.start, rows.end);
        // The rows decoded last that this window begins with; the pages
        // decoded next begin where they end, so each page is decoded about
        // once.
        let mut from = a;
        let mut head = None;
        if let Some((r, array)) = p.last.take() {
            if r.start <= a && b <= r.end {
                let out = array.sliced(a - r.start, b - a);
                p.last = Some((r, array));
                return Ok(out);
            }
            if r.start <= a && a < r.end {
                head = Some(array.sliced(a - r.start, r.end - a));
                from = r.end;
            }
        }
        let pages = &p.pages;
        polars_ensure!(!pages.is_empty(), ComputeError: "{}: a column chunk without data pages", leaf.name);
        // From the last page that begins a row at or before `from` to the
        // first after it that begins a row at or after `b` (exclusive).
        let first = pages
            .iter()
            .rposition(|s| s.starts && s.row <= from)
            .unwrap_or(0);
        let end = pages[first + 1..]
            .iter()
            .position(|s| s.starts && s.row >= b)
            .map_or(pages.len(), |k| first + 1 + k);
        let base = pages[first].row;
        let last_row = pages.get(end).map_or(group_rows, |s| s.row);
        let values = pages[first..end].iter().map(|s| s.values).sum();
        let size = pages[first..end]
            .iter()
            .map(|s| s.bytes.len())
            .sum::<usize>();
        let mut v = Vec::with_capacity(p.dict.len() + size);
        v.extend_from_slice(&p.dict);
        for s in &pages[first..end] {
            polars_ensure!(!s.bytes.is_empty(), ComputeError: "{}: a page read again after its bytes were freed", leaf.name);
            v.extend_from_slice(&s.bytes);
        }
        let buffer = polars_buffer::Buffer::from_vec(v);
        // Windows go forward: the pages before this window's first are done.
        for s in &mut p.pages[p.freed.min(first)..first] {
            s.bytes = polars_buffer::Buffer::from_vec(Vec::new());
        }
        p.freed = p.freed.max(first);
        // Rows past `b` up to the end of those pages are kept for the next
        // windows, at most three windows' worth: a page of a dense leaf
        // (a dictionary of a few run names, 2 bits a value) can hold the
        // whole row group.
        let stop = last_row.min(b.saturating_add(3 * (b - a)));
        let rows_there = from - base..stop - base;
        // Pages of more values than DENSE_VALUES are left to polars, which
        // decodes only the rows: decoded whole, their levels and values
        // would raise the load's peak — but for flags (a page of them can
        // hold a row group), a byte a level and a bit a value: polars took
        // 5–7 ms a window over such a page, the window's longest leaf.
        let dense = if p.sparse
            || (values > DENSE_VALUES && !crate::schema::dense_leaf::holds_bits(leaf))
        {
            None
        } else {
            let dense = crate::schema::dense_leaf::decode(
                Self::page_reader(m, buffer.clone(), values),
                &m.descriptor().descriptor,
                leaf,
                rows_there.clone(),
            );
            p.sparse = dense.is_none();
            #[cfg(test)]
            if dense.is_some() && values > DENSE_VALUES {
                tests::LARGE_PAGES_STRAIGHT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
            dense
        };
        let arrays = match dense {
            Some(array) => vec![array?],
            None => {
                let filter =
                    polars_parquet::read::Filter::new_ranged(rows_there.start, rows_there.end);
                let (arrays, _) = polars_parquet::read::column_iter_to_arrays(
                    vec![polars_parquet::read::BasicDecompressor::new(
                        Self::page_reader(m, buffer, values),
                        vec![],
                    )],
                    vec![&m.descriptor().descriptor.primitive_type],
                    leaf.clone(),
                    Some(filter),
                )?;
                arrays
            }
        };
        let array = one_array(arrays)?;
        polars_ensure!(array.len() == stop - from, ComputeError: "{}: {} rows decoded from pages that hold {}", leaf.name, array.len(), stop - from);
        // Only the window's rows are put together with the kept ones: the
        // rows decoded past it are kept as decoded, not copied.
        let out = match head {
            Some(head) => one_array(vec![head, array.sliced(0, b - from)])?,
            None => array.sliced(0, b - a),
        };
        p.last = Some((from..stop, array));
        Ok(out)
    }
}
