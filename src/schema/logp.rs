//! Log-probabilities spilled to an unlinked temporary file and read back trajectory by trajectory.

use super::*;

/// Log-probability entries written out of memory: an unlinked temporary
/// file of 12-byte entries (the run's id, then the value's bits, both
/// little-endian), in entry order. Ids renumbered after they were written
/// (the load puts them in name order at its end) are renumbered as they
/// are read back, by `map`.
#[derive(Debug, Clone)]
pub struct LogpSpill {
    file: std::sync::Arc<std::fs::File>,
    len: usize,
    map: Option<std::sync::Arc<Vec<Id>>>,
}

/// What [`LogSet::steps_with_logps`] reads one trajectory's entries into:
/// kept and reused from trajectory to trajectory.
#[derive(Debug, Default)]
pub struct LogpWindow {
    pub(super) runs: Vec<Id>,
    pub(super) values: Vec<f64>,
    /// The file's bytes last read: entries `at..` of the spill whose file
    /// is at address `of` — read ahead while the reads go forward.
    pub(super) bytes: Vec<u8>,
    pub(super) at: usize,
    of: usize,
    /// Where the last read ended (entries).
    end: usize,
}

impl LogpSpill {
    pub(super) const ENTRY: usize = 12;

    /// An empty spill file, or `None` where none can be made (or off Unix).
    #[cfg(unix)]
    pub(crate) fn create() -> Option<LogpSpill> {
        static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let path = std::env::temp_dir().join(format!(
            "rl-audit-logps-{}-{}",
            std::process::id(),
            N.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
            .ok()?;
        // Unlinked at once: the file goes when the process does.
        std::fs::remove_file(&path).ok()?;
        Some(LogpSpill {
            file: std::sync::Arc::new(file),
            len: 0,
            map: None,
        })
    }
    #[cfg(not(unix))]
    pub(crate) fn create() -> Option<LogpSpill> {
        None
    }

    pub(super) fn write(runs: &[Id], values: &[f64]) -> Option<LogpSpill> {
        let mut s = LogpSpill::create()?;
        s.append(runs, values).ok()?;
        Some(s)
    }

    /// Entries written so far.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Writes entries after those already written (ids as they are now).
    pub(crate) fn append(&mut self, runs: &[Id], values: &[f64]) -> std::io::Result<()> {
        debug_assert!(
            self.map.is_none(),
            "entries are appended before any renumbering"
        );
        const AT_ONCE: usize = 1 << 16;
        let mut bytes = Vec::with_capacity(AT_ONCE.min(runs.len()) * Self::ENTRY);
        for (r, v) in runs.chunks(AT_ONCE).zip(values.chunks(AT_ONCE)) {
            bytes.clear();
            for (r, v) in r.iter().zip(v) {
                bytes.extend_from_slice(&r.to_le_bytes());
                bytes.extend_from_slice(&v.to_bits().to_le_bytes());
            }
            #[cfg(unix)]
            std::os::unix::fs::FileExt::write_all_at(
                &*self.file,
                &bytes,
                (self.len * Self::ENTRY) as u64,
            )?;
            self.len += r.len();
        }
        Ok(())
    }

    /// Forgets the entries from `len` on.
    pub(crate) fn truncate(&mut self, len: usize) {
        self.len = self.len.min(len);
    }

    /// Every entry back in memory (what a set falls back to when the file
    /// cannot grow).
    pub(crate) fn read_all(&self) -> crate::error::Result<(Vec<Id>, Vec<f64>)> {
        let mut w = LogpWindow::default();
        self.read(0, self.len, &mut w)?;
        Ok((w.runs, w.values))
    }

    /// Ids renumbered: `map[old] = new`.
    pub(crate) fn remap(&mut self, map: &[Id]) {
        let composed = match &self.map {
            Some(m) => m.iter().map(|&i| map[i as usize]).collect(),
            None => map.to_vec(),
        };
        self.map = Some(std::sync::Arc::new(composed));
    }

    /// Entries `start..start + n` into `w`.
    pub(super) fn read(
        &self,
        start: usize,
        n: usize,
        w: &mut LogpWindow,
    ) -> crate::error::Result<()> {
        let failed = |what: String| {
            crate::error::Error::file("(the log-probabilities' temporary file)", what)
        };
        if start + n > self.len {
            return Err(failed(format!(
                "entries {start}..{} past its {}",
                start + n,
                self.len
            )));
        }
        // A scan that goes forward (the likelihood's, trajectory by
        // trajectory in load order, skipping other runs' and benchmarks')
        // reads AHEAD entries (192 KB) at a time, not one trajectory's: a
        // 1 M audit made 360,106 reads, now 2,212. Other reads read what
        // they need.
        const AHEAD: usize = 16 << 10;
        let of = std::sync::Arc::as_ptr(&self.file) as usize;
        let held = w.of == of && w.at <= start && start + n <= w.at + w.bytes.len() / Self::ENTRY;
        if !held {
            let forward = w.of == of && start >= w.end && start - w.end <= AHEAD;
            let m = if forward {
                n.max(AHEAD).min(self.len - start)
            } else {
                n
            };
            w.bytes.resize(m * Self::ENTRY, 0);
            #[cfg(unix)]
            std::os::unix::fs::FileExt::read_exact_at(
                &*self.file,
                &mut w.bytes,
                (start * Self::ENTRY) as u64,
            )
            .map_err(|e| failed(e.to_string()))?;
            (w.at, w.of) = (start, of);
        }
        w.end = start + n;
        w.runs.clear();
        w.values.clear();
        let from = (start - w.at) * Self::ENTRY;
        for e in w.bytes[from..from + n * Self::ENTRY].chunks_exact(Self::ENTRY) {
            let (r, v) = e.split_at(4);
            let r = Id::from_le_bytes(r.try_into().expect("4 bytes"));
            w.runs.push(match &self.map {
                Some(m) => m[r as usize],
                None => r,
            });
            w.values.push(f64::from_bits(u64::from_le_bytes(
                v.try_into().expect("8 bytes"),
            )));
        }
        Ok(())
    }
}
