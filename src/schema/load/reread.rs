//! Re-reading one record on demand (the trajectory view): streamed from
//! plain files, decoded once and kept for compressed ones.

use super::*;

/// Re-reads one record (a trajectory's text for the browser): `name` as
/// listed in [`LogSet::files`], `line` its 1-based record number.
pub fn read_record(name: &str, line: u64) -> Result<serde_json::Value> {
    read_record_from(name, line, None)
}

impl LogSet {
    /// Re-reads the record at `loc` from where it was loaded: its file, or
    /// the embedded bytes it came from (the bundled demo); a `--map`
    /// load's translated again (of a source record split into several,
    /// the first).
    pub fn read_record(&self, loc: Loc) -> Result<serde_json::Value> {
        let embedded = self.embedded.get(loc.file() as usize).copied().flatten();
        let (name, line) = (self.file_name(loc), loc.line());
        let Some(m) = &self.mapped else {
            return read_record_from(name, line, embedded);
        };
        mapped_in(name, embedded, m, &|l| l == line)?
            .into_iter()
            .map(|(_, v)| v)
            .next()
            .ok_or_else(|| gone(name, line))
    }
}

impl LogSet {
    /// The source record at `loc` as its file holds it, before a `--map`
    /// load's translation (a step-shaped mapping's: its trajectory's first
    /// row); without a mapping, [`LogSet::read_record`]'s.
    pub fn read_source(&self, loc: Loc) -> Result<serde_json::Value> {
        let embedded = self.embedded.get(loc.file() as usize).copied().flatten();
        read_record_from(self.file_name(loc), loc.line(), embedded)
    }
}

/// The records a `--map` load made of file `name` at the lines `want`
/// takes, made again ([`super::parse::mapped_records`]) from its text as
/// the load decoded it (kept for the next record of the same file).
fn mapped_in(
    name: &str,
    embedded: Option<&[u8]>,
    m: &crate::schema::Mapped,
    want: &dyn Fn(u64) -> bool,
) -> Result<Vec<(u64, serde_json::Value)>> {
    let fmt = format_of(Path::new(name)).ok_or_else(|| Error::file(name, "not a log file"))?;
    let opts = LoadOptions {
        mapping: Some(m.mapping.clone()),
        ..Default::default()
    };
    let text = decoded(name, fmt, embedded, &opts)?;
    Ok(super::parse::mapped_records(
        name,
        &text.0,
        &m.mapping,
        m.run_label.as_deref(),
        want,
    ))
}

/// Why line `line` of `name` cannot be re-read.
fn gone(name: &str, line: u64) -> Error {
    Error::file(
        name,
        format!("line {line} is gone (was the file rewritten?)"),
    )
}

pub(super) fn read_record_from(
    name: &str,
    line: u64,
    embedded: Option<&[u8]>,
) -> Result<serde_json::Value> {
    let path = Path::new(name);
    let fmt = format_of(path).ok_or_else(|| Error::file(name, "not a log file"))?;
    let gone = || gone(name, line);
    let parse = |text: &[u8]| {
        serde_json::from_slice(super::parse::without_bom(text))
            .map_err(|e| Error::file(name, format!("line {line}: {e}")))
    };
    if fmt == Format::Parquet {
        return match embedded {
            Some(b) => crate::schema::parquet::read_row(name, b, line),
            None => crate::schema::parquet::read_row_in_file(name, path, line),
        };
    }
    if fmt == Format::Json && embedded.is_none() {
        if let Some(v) = crate::schema::rllm::reread(path)? {
            return Ok(v);
        }
    }
    if fmt == Format::Jsonl && embedded.is_none() {
        // Plain text: stream to the line, holding one buffer at a time.
        let file = std::fs::File::open(path).map_err(|e| Error::file(name, io_text(&e)))?;
        let text = nth_line(std::io::BufReader::with_capacity(1 << 20, file), line)
            .map_err(|e| Error::file(name, io_text(&e)))?
            .ok_or_else(gone)?;
        return parse(&text);
    }
    // Compressed (or embedded): decode once, then keep the text and its line
    // starts for the next record of the same file.
    let text = decoded(name, fmt, embedded, &LoadOptions::default())?;
    let (bytes, starts) = (&text.0, &text.1);
    let i = usize::try_from(line.saturating_sub(1)).unwrap_or(usize::MAX);
    let start = *starts
        .get(i)
        .filter(|&&s| s < bytes.len())
        .ok_or_else(gone)?;
    let end = starts.get(i + 1).map_or(bytes.len(), |e| e - 1);
    parse(&bytes[start..end])
}

/// File `name`'s text as [`decode`] makes it with `opts` (JSON Lines) and
/// its line starts: decoded once, then kept for the next record of the
/// same file while it is unchanged.
fn decoded(
    name: &str,
    fmt: Format,
    embedded: Option<&[u8]>,
    opts: &LoadOptions,
) -> Result<std::sync::Arc<(Vec<u8>, Vec<usize>)>> {
    let path = Path::new(name);
    let mapped = opts.mapping.is_some();
    let cached = RECENT.lock().ok().and_then(|c| {
        c.as_ref()
            .filter(|r| r.name == name && r.mapped == mapped && r.stamp == stamp(path))
            .map(|r| r.text.clone())
    });
    if let Some(t) = cached {
        return Ok(t);
    }
    let raw = match embedded {
        Some(b) => b.to_vec(),
        None => std::fs::read(path).map_err(|e| Error::file(name, io_text(&e)))?,
    };
    let bytes = match decode(name, fmt, raw, opts, true)? {
        Decoded::Lines(b, _) => b,
        Decoded::Parsed(_) | Decoded::Trajectories(_) | Decoded::Skip(_) => {
            return Err(Error::file(name, "cannot re-read this record"))
        }
    };
    let mut starts = vec![0usize];
    starts.extend(memchr::memchr_iter(b'\n', &bytes).map(|i| i + 1));
    let t = std::sync::Arc::new((bytes, starts));
    if let Ok(mut c) = RECENT.lock() {
        *c = Some(Recent {
            name: name.to_string(),
            mapped,
            stamp: stamp(path),
            text: t.clone(),
        });
    }
    Ok(t)
}

/// The most recently decoded compressed file, for the trajectory browser.
pub(super) struct Recent {
    name: String,
    /// Decoded for a `--map` load (a Parquet file's rows as records).
    mapped: bool,
    stamp: Option<(std::time::SystemTime, u64)>,
    text: std::sync::Arc<(Vec<u8>, Vec<usize>)>,
}

pub(super) static RECENT: std::sync::Mutex<Option<Recent>> = std::sync::Mutex::new(None);

/// A file's modification time and size: a cached copy is used only while
/// they are unchanged.
pub(crate) fn stamp(path: &Path) -> Option<(std::time::SystemTime, u64)> {
    let m = std::fs::metadata(path).ok()?;
    Some((m.modified().ok()?, m.len()))
}

/// Line `line` (1-based) of a text stream, without its newline.
pub(super) fn nth_line(
    mut r: impl std::io::BufRead,
    line: u64,
) -> std::io::Result<Option<Vec<u8>>> {
    let mut seen = 1u64;
    let mut out = Vec::new();
    loop {
        let buf = r.fill_buf()?;
        if buf.is_empty() {
            return Ok((seen == line && !out.is_empty()).then_some(out));
        }
        let n = buf.len();
        let mut pos = 0;
        while let Some(i) = memchr::memchr(b'\n', &buf[pos..]) {
            if seen == line {
                out.extend_from_slice(&buf[pos..pos + i]);
                return Ok(Some(out));
            }
            seen += 1;
            pos += i + 1;
        }
        if seen == line {
            out.extend_from_slice(&buf[pos..]);
        }
        r.consume(n);
    }
}

/// A walk over records' steps' texts ([`LogSet::visit_step_texts`]): what
/// it hands each record to.
pub struct Visit<'v> {
    /// The steps' observations too (else those are `None`).
    pub observations: bool,
    /// `visit(k, steps)` for the caller's key `k`, a [`StepText`] a step:
    /// `false` stops.
    pub visit: &'v mut dyn FnMut(usize, &[StepText<'_>]) -> bool,
}

impl Visit<'_> {
    /// The record `v`'s texts as [`steps_text`] reads them.
    pub(crate) fn value(&mut self, k: usize, v: &serde_json::Value) -> bool {
        let observed = steps_text(v, "observation").map(|o| o.filter(|_| self.observations));
        let steps: Vec<StepText> = steps_text(v, "action")
            .zip(observed)
            .map(|(a, o)| [a, o])
            .collect();
        (self.visit)(k, &steps)
    }
}

/// A step's action and observation as text, each as [`steps_text`] reads
/// it (`None`: absent or null), borrowed where the record holds the text.
pub type StepText<'a> = [Option<std::borrow::Cow<'a, str>>; 2];

impl LogSet {
    /// The steps' texts of the trajectories `trajs` (indices into
    /// `trajectories`), re-read from their files, visited as `visit(k,
    /// texts)` for `trajs[k]`, a [`StepText`] a step (`observations` false:
    /// their actions alone): file by file, each in record order, each file
    /// read once — a plain JSON Lines file streamed, a Parquet file a row
    /// group at a time in windows of rows (one record re-read on its own
    /// reads and decodes its whole row group: at 11 M rollouts a search of
    /// every record took hours), a compressed one decoded once. Nothing
    /// else of a record is made, and no record is kept: of a JSON Lines
    /// record its other fields are passed over unbuilt and its strings
    /// borrowed from the line (a record whose steps are not a list of
    /// objects is parsed whole; one that no longer parses is passed over);
    /// of a Parquet file only the steps' texts are decoded, and read where
    /// they were decoded (`schema::parquet::visit_rows_in_file`) — a
    /// search reads every record of the set. `visit` returning false
    /// stops; so does `wanted()` false, checked every few thousand records
    /// (`Error::Cancelled`).
    pub fn visit_step_texts(
        &self,
        trajs: &[usize],
        observations: bool,
        wanted: &dyn Fn() -> bool,
        visit: &mut dyn FnMut(usize, &[StepText<'_>]) -> bool,
    ) -> Result<()> {
        let visit = &mut Visit {
            observations,
            visit,
        };
        let mut by_file: BTreeMap<u32, Vec<(u64, usize)>> = BTreeMap::new();
        for (k, &i) in trajs.iter().enumerate() {
            let loc = self.trajectories[i].loc;
            by_file.entry(loc.file()).or_default().push((loc.line(), k));
        }
        let mut seen = 0usize;
        // Every 4,096 records: is the result still wanted?
        let mut tick = || {
            seen += 1;
            if seen.is_multiple_of(4096) && !wanted() {
                return Err(Error::Cancelled);
            }
            Ok(())
        };
        for (file, mut lines) in by_file {
            if !wanted() {
                return Err(Error::Cancelled);
            }
            lines.sort_unstable();
            let name = self.file_name(Loc::new(file, 1));
            let embedded = self.embedded.get(file as usize).copied().flatten();
            let path = Path::new(name);
            // A `--map` load's records: the file translated again, once.
            if let Some(m) = &self.mapped {
                let wanted: std::collections::BTreeSet<u64> =
                    lines.iter().map(|&(l, _)| l).collect();
                let records = mapped_in(name, embedded, m, &|l| wanted.contains(&l))?;
                for (line, k) in lines {
                    tick()?;
                    // Of the trajectories a source line was split into,
                    // the n-th is the n-th record made of it.
                    let i = trajs[k];
                    let loc = self.trajectories[i].loc;
                    let nth = i - self.trajectories.partition_point(|t| t.loc < loc);
                    let first = records.partition_point(|(l, _)| *l < line);
                    let Some((_, v)) = records.get(first + nth).filter(|(l, _)| *l == line) else {
                        continue;
                    };
                    if !visit.value(k, v) {
                        return Ok(());
                    }
                }
                continue;
            }
            match (format_of(path), embedded) {
                (Some(Format::Jsonl), None) => {
                    let f =
                        std::fs::File::open(path).map_err(|e| Error::file(name, io_text(&e)))?;
                    let mut records = std::io::BufRead::split(
                        std::io::BufReader::with_capacity(1 << 20, f),
                        b'\n',
                    );
                    let mut at = 0u64;
                    // The current line (several trajectories may share one).
                    let mut text: Option<Vec<u8>> = None;
                    for (line, k) in lines {
                        tick()?;
                        while at < line {
                            text = records
                                .next()
                                .transpose()
                                .map_err(|e| Error::file(name, io_text(&e)))?;
                            at += 1;
                        }
                        let Some(t) = &text else { break };
                        if let Some(go_on) = visit_line(t, k, visit) {
                            if !go_on {
                                return Ok(());
                            }
                        }
                    }
                }
                (Some(Format::Parquet), None) => {
                    let all = crate::schema::parquet::visit_rows_in_file(
                        name, path, &lines, visit, &mut tick,
                    )?;
                    if !all {
                        return Ok(());
                    }
                }
                _ => {
                    for (line, k) in lines {
                        tick()?;
                        let v = self.read_record(Loc::new(file, line))?;
                        if !visit.value(k, &v) {
                            return Ok(());
                        }
                    }
                }
            }
        }
        Ok(())
    }
}

impl LogSet {
    /// `trajs` file by file, a file per core at once: `job` gets the
    /// positions in `trajs` of one file's trajectories (in `trajs`' order)
    /// and what it returns is kept in file order. After each file,
    /// `enough` is asked of the files done so far in file order, up to the
    /// first not done; once it says yes no file is started and those
    /// running are told to stop (`job`'s `wanted()` false: they may return
    /// `Error::Cancelled`). A file not started is `None`.
    pub fn in_files<R: Send>(
        &self,
        trajs: &[usize],
        job: impl Fn(&[usize], &dyn Fn() -> bool) -> Result<R> + Sync,
        enough: impl Fn(&[&R]) -> bool + Sync,
    ) -> Vec<Option<Result<R>>> {
        use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
        use std::sync::Mutex;
        let mut by_file: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
        for (k, &i) in trajs.iter().enumerate() {
            by_file
                .entry(self.trajectories[i].loc.file())
                .or_default()
                .push(k);
        }
        let files: Vec<Vec<usize>> = by_file.into_values().collect();
        let done: Vec<Mutex<Option<Result<R>>>> = files.iter().map(|_| Mutex::new(None)).collect();
        let (next, stop) = (AtomicUsize::new(0), AtomicBool::new(false));
        let lock = |j: usize| done[j].lock().unwrap_or_else(|e| e.into_inner());
        let work = || loop {
            let j = next.fetch_add(1, Ordering::Relaxed);
            if j >= files.len() || stop.load(Ordering::Relaxed) {
                break;
            }
            let found = job(&files[j], &|| !stop.load(Ordering::Relaxed));
            *lock(j) = Some(found);
            let guards: Vec<_> = (0..files.len()).map(lock).collect();
            let prefix: Vec<&R> = guards
                .iter()
                .map_while(|g| g.as_ref().and_then(|r| r.as_ref().ok()))
                .collect();
            if enough(&prefix) {
                stop.store(true, Ordering::Relaxed);
            }
        };
        let workers = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .clamp(1, files.len().max(1));
        std::thread::scope(|s| {
            for _ in 1..workers {
                s.spawn(work);
            }
            work();
        });
        done.into_iter()
            .map(|d| d.into_inner().unwrap_or_else(|e| e.into_inner()))
            .collect()
    }
}

/// A JSON Lines record's line `text` visited (`None`: it does not parse,
/// and is passed over): its steps' texts alone parsed, borrowed from the
/// line where they are strings without escapes — the rest passed over
/// unbuilt (a search's every record at 11 M rollouts) — unless its steps
/// are not a list of objects, when it is parsed whole.
fn visit_line(text: &[u8], k: usize, visit: &mut Visit) -> Option<bool> {
    let texts = match visit.observations {
        true => step_texts::<Text>(text),
        // Observations passed over unread (`--grep` reads actions alone).
        false => step_texts::<serde::de::IgnoredAny>(text),
    };
    if let Some(steps) = texts {
        return Some((visit.visit)(k, &steps));
    }
    let v: serde_json::Value = serde_json::from_slice(text).ok()?;
    Some(visit.value(k, &v))
}

/// A line's steps' actions and, as `O` makes them, observations (`None`:
/// it is not a record whose steps are a list of objects).
fn step_texts<'a, O>(text: &'a [u8]) -> Option<Vec<StepText<'a>>>
where
    O: serde::Deserialize<'a> + Observed<'a>,
{
    #[derive(serde::Deserialize)]
    #[serde(bound = "O: serde::Deserialize<'de>")]
    struct Texts<'a, O> {
        #[serde(default, borrow)]
        steps: Vec<StepTexts<'a, O>>,
    }
    #[derive(serde::Deserialize)]
    #[serde(bound = "O: serde::Deserialize<'de>")]
    struct StepTexts<'a, O> {
        #[serde(default, borrow)]
        action: Option<Text<'a>>,
        #[serde(default)]
        observation: Option<O>,
    }
    let r: Texts<'a, O> = serde_json::from_slice(text).ok()?;
    let step = |s: StepTexts<'a, O>| [s.action.map(|t| t.0), s.observation.and_then(O::text)];
    Some(r.steps.into_iter().map(step).collect())
}

/// An observation as [`step_texts`] hands it over: its text, or none
/// where it was passed over.
trait Observed<'a> {
    fn text(self) -> Option<std::borrow::Cow<'a, str>>;
}

impl<'a> Observed<'a> for Text<'a> {
    fn text(self) -> Option<std::borrow::Cow<'a, str>> {
        Some(self.0)
    }
}

impl<'a> Observed<'a> for serde::de::IgnoredAny {
    fn text(self) -> Option<std::borrow::Cow<'a, str>> {
        None
    }
}

/// A step field's text as [`steps_text`] reads it from the record parsed
/// whole — a string as it is (borrowed where the line holds it without
/// escapes), any other value as its JSON — made straight from the line.
struct Text<'a>(std::borrow::Cow<'a, str>);

impl<'de: 'a, 'a> serde::Deserialize<'de> for Text<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer};
        use serde::de::{MapAccess, SeqAccess, Visitor};
        use serde::Deserialize;
        use serde_json::Value;
        type Made<'de, E> = std::result::Result<Text<'de>, E>;
        /// A value that is not a string: its JSON, as `Value` writes it.
        fn json<'de, E>(v: Value) -> Made<'de, E> {
            Ok(Text(v.to_string().into()))
        }
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Text<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_borrowed_str<E>(self, s: &'de str) -> Made<'de, E> {
                Ok(Text(s.into()))
            }
            fn visit_str<E>(self, s: &str) -> Made<'de, E> {
                Ok(Text(s.to_string().into()))
            }
            fn visit_string<E>(self, s: String) -> Made<'de, E> {
                Ok(Text(s.into()))
            }
            fn visit_bool<E>(self, b: bool) -> Made<'de, E> {
                json(Value::Bool(b))
            }
            fn visit_i64<E>(self, x: i64) -> Made<'de, E> {
                json(Value::from(x))
            }
            fn visit_u64<E>(self, x: u64) -> Made<'de, E> {
                json(Value::from(x))
            }
            fn visit_f64<E>(self, x: f64) -> Made<'de, E> {
                json(Value::from(x))
            }
            fn visit_unit<E>(self) -> Made<'de, E> {
                json(Value::Null)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, a: A) -> Made<'de, A::Error> {
                json(Value::deserialize(SeqAccessDeserializer::new(a))?)
            }
            fn visit_map<A: MapAccess<'de>>(self, a: A) -> Made<'de, A::Error> {
                json(Value::deserialize(MapAccessDeserializer::new(a))?)
            }
        }
        d.deserialize_any(V)
    }
}

/// [`steps_text`] owned: what the re-read tests compare.
#[cfg(test)]
pub(crate) fn steps_field(v: &serde_json::Value, k: &str) -> Vec<Option<String>> {
    steps_text(v, k)
        .map(|t| t.map(std::borrow::Cow::into_owned))
        .collect()
}

/// One field of every step of a record, as text (a non-string as its
/// JSON), borrowed where the record holds the text (a search reads every
/// step's and copies only its hits').
pub fn steps_text<'v>(
    v: &'v serde_json::Value,
    k: &'v str,
) -> impl Iterator<Item = Option<std::borrow::Cow<'v, str>>> + 'v {
    v.get("steps")
        .and_then(|s| s.as_array())
        .into_iter()
        .flatten()
        .map(move |s| {
            s.get(k).filter(|a| !a.is_null()).map(|a| {
                a.as_str()
                    .map_or_else(|| a.to_string().into(), std::borrow::Cow::Borrowed)
            })
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The texts of a record's line visited for them: (the key, per step
    /// its action and observation), `None` where it does not parse.
    fn texts_of_line(text: &str, observations: bool) -> Option<Vec<[Option<String>; 2]>> {
        let mut got = None;
        let mut keep = |k: usize, steps: &[StepText]| {
            assert_eq!(k, 7);
            got = Some(
                steps
                    .iter()
                    .map(|s| s.clone().map(|t| t.map(|t| t.into_owned())))
                    .collect(),
            );
            false
        };
        let mut visit = Visit {
            observations,
            visit: &mut keep,
        };
        let go_on = visit_line(text.as_bytes(), 7, &mut visit);
        assert_eq!(go_on.is_some(), got.is_some(), "{text}");
        assert_eq!(
            go_on,
            got.as_ref().map(|_| false),
            "the visit's answer passed on"
        );
        got
    }

    /// A record visited for its steps' texts reads, step by step, the
    /// same actions and observations as the record parsed whole (a
    /// string as it is, escapes and all; any other value as its JSON),
    /// and without its observations the same actions.
    #[test]
    fn a_record_visited_for_its_texts_has_the_record_s_texts() {
        let records = [
            r#"{"run":"a","steps":[{"turn":1,"action":"go(1)","observation":"ok","logp":{"a":-1.5}},{"turn":2,"action":null,"observation":7},{"turn":3}]}"#,
            r#"{"run":"a","steps":[{"action":{"tool":"x","args":[1,2.50,{"b":1,"a":[true,null]}]},"observation":"é\n\"q\"\u00e9"}]}"#,
            r#"{"run":"a","steps":[{"action":0.1,"observation":-0.0},{"action":1e20,"observation":123456789012345678901234567890},{"action":-17,"observation":18446744073709551615},{"action":false,"observation":[]},{"action":{},"observation":"\ud83d\ude00"}]}"#,
            r#"{"run":"a","steps":[{"action":{"k":1,"k":2}}],"steps_seen":3}"#,
            r#"{"run":"a"}"#,
            r#"{"run":"a","steps":[]}"#,
            r#"{"run":"a","steps":null}"#,
            r#"{"run":"a","steps":["not a step",{"action":"b"}]}"#,
            r#"{"run":"a","steps":[{"action":"first","action":"second"}]}"#,
            r#"{"steps":[{"action":"a"}],"steps":[{"action":"b"},{"observation":"c"}]}"#,
        ];
        for r in records {
            let whole: serde_json::Value = serde_json::from_str(r).unwrap();
            let want: Vec<[Option<String>; 2]> = steps_field(&whole, "action")
                .into_iter()
                .zip(steps_field(&whole, "observation"))
                .map(|(a, o)| [a, o])
                .collect();
            assert_eq!(texts_of_line(r, true).as_ref(), Some(&want), "{r}");
            let actions: Vec<_> = want.iter().map(|[a, _]| [a.clone(), None]).collect();
            assert_eq!(texts_of_line(r, false), Some(actions), "{r}");
        }
        // By hand: the first record, and the JSON of the second's action.
        let first = texts_of_line(records[0], true).unwrap();
        let s = |t: &str| Some(t.to_string());
        assert_eq!(first, [[s("go(1)"), s("ok")], [None, s("7")], [None, None]]);
        let second = texts_of_line(records[1], true).unwrap();
        assert_eq!(
            second,
            [[
                s(r#"{"args":[1,2.5,{"a":[true,null],"b":1}],"tool":"x"}"#),
                s("é\n\"q\"é")
            ]]
        );
        assert_eq!(texts_of_line("{not json", true), None);
    }
}
