//! Merging chunk-local sets in file order (the checks that span records are
//! [`super::checks`]).

use super::*;
use crate::schema::{Step, Trajectory};

pub(super) fn merge(chunks: Vec<Chunk>, names: &[String], opts: &LoadOptions) -> Result<LogSet> {
    merge_into(LogSet::default(), &[], &[], chunks, names, opts)
}

/// Adds parsed chunks to a set: `lines[f]` lines and `records[f]` records
/// of file f are already in it. Then the cross-record checks over all.
pub(crate) fn merge_into(
    out: LogSet,
    lines: &[u64],
    records: &[u64],
    chunks: Vec<Chunk>,
    names: &[String],
    opts: &LoadOptions,
) -> Result<LogSet> {
    let mut m = Merger::new(out, lines, records, opts);
    for c in chunks {
        let name = &names[c.file as usize];
        m.push(c, name)?;
    }
    m.finish(names, opts)
}

/// The records of `chunks` (parsed after `lines[f]` lines of file f) as a
/// set of their own, in file order, with no check across records: what
/// `--follow` shows of appended records before they are merged.
pub(crate) fn preview(chunks: &[Chunk], lines: &[u64], names: &[String]) -> LogSet {
    let mut out = LogSet::default();
    let mut base = lines.to_vec();
    for c in chunks {
        let f = c.file as usize;
        if base.len() <= f {
            base.resize(f + 1, 0);
        }
        append(&mut out, c.set.clone(), base[f]);
        base[f] += c.lines;
    }
    out.files = names.to_vec();
    out.trajectories.sort_by_key(|t| t.loc);
    out.probes.sort_by_key(|p| p.loc);
    out.checkpoints.sort_by_key(|c| c.loc);
    out.run_decls.sort_by_key(|d| d.loc);
    out
}

/// As [`merge_into`] for several reads one after another, in one pass (one
/// copy of the set, one round of checks): each part's chunks continue file
/// f after its `lines[f]` lines.
pub(crate) fn merge_parts(
    out: LogSet,
    records: &[u64],
    parts: Vec<(Vec<u64>, Vec<Chunk>)>,
    names: &[String],
    opts: &LoadOptions,
) -> Result<LogSet> {
    let first = parts.first().map(|p| p.0.clone()).unwrap_or_default();
    let mut m = Merger::new(out, &first, records, opts);
    for (lines, chunks) in parts {
        let mut begun = vec![false; lines.len()];
        for c in chunks {
            let f = c.file as usize;
            if !begun.get(f).copied().unwrap_or(true) {
                begun[f] = true;
                m.line_base[f] = lines[f];
            }
            let name = &names[f];
            m.push(c, name)?;
        }
    }
    m.finish(names, opts)
}

/// Merges chunks into one set as they are parsed, so that a chunk's records
/// are freed as soon as they are in the set (the load never holds a file's
/// records twice). Chunks come in file order; [`Merger::finish`] runs the
/// checks that span records.
pub(crate) struct Merger {
    out: LogSet,
    per_file_records: Vec<u64>,
    line_base: Vec<u64>,
    first_error: Option<(Loc, RecordError)>,
    total: u64,
    lenient: bool,
    all_logps: bool,
}

impl Merger {
    /// Onto `out`, which holds `lines[f]` lines and `records[f]` records of
    /// file f; with `opts.lenient` bad records are counted, not kept for
    /// the error.
    pub(crate) fn new(
        mut out: LogSet,
        lines: &[u64],
        records: &[u64],
        opts: &LoadOptions,
    ) -> Merger {
        for r in SkipReason::ALL {
            out.skipped.entry(r.name()).or_insert(0);
        }
        if opts.spill_logps
            && !opts.all_logps
            && out.logp_spill.is_none()
            && out.logp_runs.is_empty()
        {
            out.logp_spill = crate::schema::LogpSpill::create();
        }
        let total = out.trajectories.len() as u64
            + out.probes.len() as u64
            + out.checkpoints.len() as u64
            + out.run_decls.len() as u64;
        Merger {
            out,
            per_file_records: records.to_vec(),
            line_base: lines.to_vec(),
            first_error: None,
            total,
            lenient: opts.lenient,
            all_logps: opts.all_logps,
        }
    }

    /// Appends one chunk of file `name` (chunks of a file in order).
    pub(crate) fn push(&mut self, c: Chunk, name: &str) -> Result<()> {
        let f = c.file as usize;
        if self.line_base.len() <= f {
            self.line_base.resize(f + 1, 0);
            self.per_file_records.resize(f + 1, 0);
        }
        let base = self.line_base[f];
        self.line_base[f] += c.lines;
        self.per_file_records[f] += c.records;
        self.total += c.records;
        if self.total > MAX_RECORDS {
            return Err(Error::file(
                name,
                format!("more than {MAX_RECORDS} records in the log set; split it (see README: going past one machine)"),
            ));
        }
        if base + c.lines > Loc::MAX_LINE {
            return Err(Error::file(
                name,
                format!("more than {} lines in one file; split it", Loc::MAX_LINE),
            ));
        }
        if let Some(l) = c.too_long {
            return Err(Error::file(
                name,
                format!("line {}: longer than {} MiB", base + l, MAX_LINE >> 20),
            ));
        }
        for (line, e) in c.errors {
            let loc = Loc::new(c.file, base + line);
            if self.lenient {
                *self.out.skipped.entry(e.reason.name()).or_default() += 1;
            } else if self.first_error.is_none() {
                self.first_error = Some((loc, e));
            }
        }
        let mut set = c.set;
        if !self.all_logps {
            drop_unread_logps(&mut set);
        }
        append(&mut self.out, set, base);
        Ok(())
    }

    /// Every chunk is in: file order, the checks that span records, ids in name order.
    pub(crate) fn finish(self, names: &[String], opts: &LoadOptions) -> Result<LogSet> {
        let Merger {
            mut out,
            mut per_file_records,
            first_error,
            ..
        } = self;
        out.files = names.to_vec();
        out.mapped = crate::schema::Mapped::of(opts);
        per_file_records.resize(names.len(), 0);
        // Records read on from several files (--follow) go back into file order,
        // the order a full load has them in.
        if !out.trajectories.is_sorted_by_key(|t| t.loc) {
            out.trajectories.sort_by_key(|t| t.loc);
        }
        if !out.probes.is_sorted_by_key(|p| p.loc) {
            out.probes.sort_by_key(|p| p.loc);
        }
        if !out.checkpoints.is_sorted_by_key(|c| c.loc) {
            out.checkpoints.sort_by_key(|c| c.loc);
        }
        if !out.run_decls.is_sorted_by_key(|d| d.loc) {
            out.run_decls.sort_by_key(|d| d.loc);
        }
        if let Some(i) = per_file_records.iter().position(|&n| n == 0) {
            return Err(Error::file(&names[i], "no records (the file is empty)"));
        }
        let mut limit = first_error.as_ref().map(|(l, _)| *l);
        if !out.origins.is_empty() {
            // Records from summaries: located at their logs, in their order.
            let index = crate::schema::summary::relocate(&mut out, names);
            limit =
                limit.and_then(|l| index[l.file() as usize].map(|file| Loc::new(file, l.line())));
            out.trajectories.sort_by_key(|t| t.loc);
            out.probes.sort_by_key(|p| p.loc);
            out.checkpoints.sort_by_key(|c| c.loc);
            out.run_decls.sort_by_key(|d| d.loc);
        }
        if let Some((loc, e)) = cross_checks(&mut out, opts.lenient, limit) {
            return Err(record_error(&out.files, loc, e));
        }
        if let Some((loc, e)) = first_error {
            return Err(record_error(names, loc, e));
        }
        canonicalize_ids(&mut out);
        Ok(out)
    }
}

pub(super) fn record_error(names: &[String], loc: Loc, error: RecordError) -> Error {
    Error::Record {
        file: names[loc.file() as usize].clone(),
        line: loc.line(),
        error,
    }
}

/// Drops the log-probabilities no analysis reads: only those of successful
/// evaluation rollouts are (SPEC §2.4's per-step NLL, LLR and length
/// matching; §4.5's turn by turn). Failed and training rollouts keep their
/// steps, without log-probabilities — most of a log set's step memory.
/// Summaries keep every one ([`LoadOptions::all_logps`]).
pub(super) fn drop_unread_logps(set: &mut LogSet) {
    let read = |t: &Trajectory| t.success && !t.is_training();
    if set
        .trajectories
        .iter()
        .all(|t| t.steps().is_none() || read(t))
    {
        return;
    }
    // Trajectories hold their entries in order: compact in place.
    let mut w = 0;
    for t in &mut set.trajectories {
        let Some(span) = t.steps() else {
            continue;
        };
        let start = t.logp_start as usize;
        debug_assert!(start >= w);
        let len = if read(t) {
            span.range()
                .map(|i| set.steps[i].logp_len(i, &set.step_extras))
                .sum()
        } else {
            set.steps[span.range()]
                .iter_mut()
                .for_each(Step::drop_logps);
            0
        };
        set.logp_runs.copy_within(start..start + len, w);
        set.logp_values.copy_within(start..start + len, w);
        t.logp_start = w as u32;
        w += len;
    }
    set.logp_runs.truncate(w);
    set.logp_values.truncate(w);
}

/// Appends a chunk-local set, renumbering ids, spans and lines. Where
/// `out`'s log-probabilities are out of memory, the chunk's are written
/// after them (and if the file cannot grow, every entry comes back into
/// memory).
pub(super) fn append(out: &mut LogSet, mut set: LogSet, line_base: u64) {
    debug_assert!(
        set.logp_spill.is_none(),
        "a chunk's log-probabilities are in memory"
    );
    let map: Vec<Id> = (0..set.strings.len() as Id)
        .map(|i| out.strings.intern(set.strings.name(i)))
        .collect();
    remap_ids(&mut set, &map);
    // Records a summary locates at their own logs keep their line numbers.
    let origins: Vec<u32> = (0..set.origins.len() as u32)
        .map(|i| Loc::ORIGIN | out.origins.intern(set.origins.name(i)))
        .collect();
    let place = |loc: &mut Loc| {
        *loc = if loc.file() & Loc::ORIGIN != 0 {
            Loc::new(origins[(loc.file() & !Loc::ORIGIN) as usize], loc.line())
        } else {
            Loc::new(loc.file(), loc.line() + line_base)
        };
    };
    let shift = |s: Span, by: usize| Span {
        start: s.start + by as u32,
        len: s.len,
    };
    let (steps0, cand0, met0) = (out.steps.len(), out.candidates.len(), out.metrics.len());
    let logp0 = append_logps(out, set.logp_runs, set.logp_values);
    out.steps.extend(set.steps);
    out.step_extras
        .extend(set.step_extras.into_iter().map(|mut e| {
            e.step += steps0 as u32;
            e
        }));
    out.step_budgets
        .extend(set.step_budgets.into_iter().map(|mut b| {
            b.step += steps0 as u32;
            b
        }));
    out.candidates.extend(set.candidates);
    out.metrics.extend(set.metrics);
    out.trajectories
        .extend(set.trajectories.into_iter().map(|mut t| {
            place(&mut t.loc);
            t.set_steps(t.steps().map(|s| shift(s, steps0)));
            t.logp_start += logp0 as u32;
            t
        }));
    out.probes.extend(set.probes.into_iter().map(|mut p| {
        place(&mut p.loc);
        p.candidates = shift(p.candidates, cand0);
        p
    }));
    out.checkpoints
        .extend(set.checkpoints.into_iter().map(|mut c| {
            place(&mut c.loc);
            c.metrics = shift(c.metrics, met0);
            c
        }));
    out.run_decls.extend(set.run_decls.into_iter().map(|mut d| {
        place(&mut d.loc);
        d
    }));
    out.aggregates.extend(set.aggregates);
    // What the loads that wrote summaries counted.
    for (k, n) in set.skipped {
        *out.skipped.entry(k).or_default() += n;
    }
    out.ignored_files.extend(set.ignored_files);
    out.notes.extend(set.notes);
    for (k, n) in set.unknown_kinds {
        *out.unknown_kinds.entry(k).or_default() += n;
    }
}

/// Adds entries after `out`'s, in memory or in its spill file; where they
/// start. A spill file that cannot grow is read back into memory.
fn append_logps(out: &mut LogSet, runs: Vec<Id>, values: Vec<f64>) -> usize {
    if let Some(spill) = &mut out.logp_spill {
        let start = spill.len();
        if spill.append(&runs, &values).is_ok() {
            return start;
        }
        // The entries before this chunk's are whole.
        spill.truncate(start);
        let Ok((r, v)) = spill.read_all() else {
            // This chunk's entries are lost: the analyses that read them
            // report the file's error.
            return start;
        };
        out.logp_runs = r;
        out.logp_values = v;
        out.logp_spill = None;
    }
    let start = out.logp_runs.len();
    out.logp_runs.extend(runs);
    out.logp_values.extend(values);
    start
}

/// Rewrites every interned id of a set: `map[old] = new`.
pub(super) fn remap_ids(set: &mut LogSet, map: &[Id]) {
    let m = |id: Id| map[id as usize];
    if let Some(s) = &mut set.logp_spill {
        s.remap(map);
    }
    // The two longest lists on the pool (1 M trajectories: 25 → 12 ms).
    use rayon::prelude::*;
    set.logp_runs.par_iter_mut().for_each(|r| *r = m(*r));
    for c in &mut set.candidates {
        c.run = m(c.run);
    }
    for (k, _) in &mut set.metrics {
        *k = m(*k);
    }
    set.trajectories.par_iter_mut().for_each(|t| {
        t.run = m(t.run);
        t.set_method(t.method().map(m));
        t.benchmark = m(t.benchmark);
        t.task = m(t.task);
        t.set_group(t.group().map(m));
        t.set_seed(t.seed().map(m));
        t.set_category(t.category().map(m));
    });
    for p in &mut set.probes {
        p.benchmark = m(p.benchmark);
        p.task = m(p.task);
        p.state = m(p.state);
        p.source = m(p.source);
    }
    for c in &mut set.checkpoints {
        c.run = m(c.run);
    }
    for d in &mut set.run_decls {
        d.run = m(d.run);
        d.method = m(d.method);
    }
    for a in &mut set.aggregates {
        a.benchmark = m(a.benchmark);
        a.run = m(a.run);
        a.method = a.method.map(m);
        a.task = m(a.task);
    }
    set.run_methods = std::mem::take(&mut set.run_methods)
        .into_iter()
        .map(|(r, x)| (m(r), m(x)))
        .collect();
}

/// Numbers the names in sorted order, so that everything ordered by id is
/// ordered by name, however the set was built (one load, or a load and what
/// `--follow` read on).
pub(super) fn canonicalize_ids(set: &mut LogSet) {
    let n = set.strings.len() as Id;
    let mut order: Vec<Id> = (0..n).collect();
    order.sort_by(|&a, &b| set.strings.name(a).cmp(set.strings.name(b)));
    if order.iter().enumerate().all(|(i, &o)| i as Id == o) {
        return;
    }
    let mut sorted = crate::schema::Interner::default();
    let mut map = vec![0 as Id; n as usize];
    for &old in &order {
        map[old as usize] = sorted.intern(set.strings.name(old));
    }
    remap_ids(set, &map);
    set.strings = sorted;
}

#[cfg(test)]
mod tests {
    use crate::schema::FirstSeen;

    /// Keys 0..6 by value; hashes chosen to collide (every key hashes to
    /// its value mod 2): each duplicate finds its own first, never a
    /// colliding other key's.
    #[test]
    fn first_seen_tells_colliding_keys_apart() {
        let keys = [0u32, 1, 2, 3, 2, 0, 4, 3, 5, 4];
        let want = [
            None,
            None,
            None,
            None,
            Some(2),
            Some(0),
            None,
            Some(3),
            None,
            Some(6),
        ];
        let mut seen = FirstSeen::with_capacity(0);
        for (i, &k) in keys.iter().enumerate() {
            let hash_of = |j: u32| u64::from(keys[j as usize] % 2);
            let got = seen.first(
                u64::from(k % 2),
                i as u32,
                |j| keys[j as usize] == k,
                hash_of,
            );
            assert_eq!(got, want[i], "item {i} (key {k})");
        }
    }
}
