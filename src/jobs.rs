//! Background loading and recomputation for the workbench: the newest
//! request replaces a waiting one and cancels the running one (loading
//! stops at the next chunk, the bootstrap at the next block), so the screen
//! never waits on stale work. `--follow`'s read-on is not such a request:
//! it cancels nothing, and its records show before their audit.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Condvar, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use crate::analysis::{run_audit_staged, Audit, Settings};
use crate::cancel::{supersede, Cancel};
use crate::error::{Error, Result};
use crate::loading::Source;
use crate::schema::follow::{merge_all, Batch, Read};
use crate::schema::load::{Progress, Tracked};
use crate::schema::{Loc, LogSet};

/// The least time between two partial audits sent to the screen, but for
/// the first two (see [`paced`]).
const PARTIAL_EVERY: Duration = Duration::from_millis(150);

/// A loaded log set and its audit.
pub struct Loaded {
    pub set: Arc<LogSet>,
    pub audit: Audit,
}

/// `--follow` read records appended to the logs: the set with them, shown
/// before its audit is done.
pub struct Fresh {
    pub set: Arc<LogSet>,
    /// Where the appended records are, in file order.
    pub records: Vec<Loc>,
}

/// What the worker should do.
#[derive(Clone)]
pub enum Request {
    /// (Re)load the logs, then audit.
    Load(Settings),
    /// Re-audit the loaded logs with new settings.
    Audit(Settings),
}

/// How a job ended.
pub enum Outcome {
    /// New results to show.
    Done(Arc<Loaded>),
    /// The job's audit so far (`audit.pending` names what is to come): shown
    /// until the next, the job still running.
    Partial(Arc<Loaded>),
    /// `--follow` read on: records were appended. Their set's audit comes
    /// later, as a `Done` of the same `read` (or of a later one).
    Read(Arc<Fresh>),
    /// `--follow` found nothing new: the results on screen stand.
    Unchanged,
    Failed(Error),
    /// The worker hit a bug (it panicked): the workbench must leave.
    Fatal(String),
}

pub struct JobResult {
    pub generation: u64,
    /// The serial number of the set the outcome is of: every load and every
    /// read-on makes a new one, counting up.
    pub read: u64,
    pub outcome: Outcome,
    pub reloaded: bool,
}

/// The one thing waiting for a thread, and its wake-up.
type Slot<T> = Arc<(Mutex<Option<T>>, Condvar)>;

/// A request for the reader: its generation, what is asked (`None`: only
/// `--follow`'s read-on), its cancel token, and whether to read on first.
type Wanted = (u64, Option<Request>, Cancel, bool);

/// An audit for the auditor, of set number `read`: a newly loaded set
/// (`base`) or the auditor's own, with records read on merged in first.
struct AuditJob {
    generation: u64,
    read: u64,
    base: Option<Arc<LogSet>>,
    batches: Vec<Batch>,
    settings: Settings,
    cancel: Cancel,
    reloaded: bool,
}

impl AuditJob {
    /// This job in place of `waiting`, which was not begun: records it
    /// would have merged are not lost (the reader has read past them).
    fn after(mut self, waiting: AuditJob) -> AuditJob {
        if self.base.is_none() {
            self.base = waiting.base;
            let mut batches = waiting.batches;
            batches.append(&mut self.batches);
            self.batches = batches;
        }
        self.reloaded |= waiting.reloaded;
        self
    }
}

/// What the two threads are doing, for the status line and `--follow`.
#[derive(Default)]
struct Busy {
    reading: AtomicBool,
    auditing: AtomicBool,
    /// When the last read-on ended and how long it took.
    last_read_on: Mutex<Option<(Instant, Duration)>>,
    /// Records read on could not be merged: the next read loads whole.
    broken: AtomicBool,
}

/// Handle to the background threads: a reader (loads, `--follow`'s
/// read-on) and an auditor. They are apart so that records appended to a
/// live run show while the audit of the records before runs on: a
/// read-on never cancels an audit (a run that writes steadily would
/// otherwise never see one finish). The reader only parses what was
/// appended; the auditor, done, merges everything read meanwhile in one
/// pass and audits the newest set.
pub struct Jobs {
    slot: Slot<Wanted>,
    pub results: Receiver<JobResult>,
    pub progress: Arc<Progress>,
    /// Generation of the newest request; results of older ones are stale.
    pub generation: Arc<AtomicU64>,
    busy: Arc<Busy>,
}

impl Jobs {
    /// Starts the threads; one that cannot be started is an error the
    /// caller shows (not an endless "loading").
    pub fn start(source: Source) -> Result<Jobs> {
        let slot: Slot<Wanted> = Arc::default();
        let audits: Slot<AuditJob> = Arc::default();
        let (tx, rx) = channel();
        let progress = Arc::new(Progress::default());
        let generation = Arc::new(AtomicU64::new(0));
        let busy = Arc::new(Busy::default());
        let reader = Reader {
            slot: slot.clone(),
            audits: audits.clone(),
            tx: tx.clone(),
            progress: progress.clone(),
            generation: generation.clone(),
            busy: busy.clone(),
            source,
            loaded: None,
            tracked: None,
            read: 0,
            settings: None,
        };
        let auditor = Auditor {
            slot: audits,
            tx,
            generation: generation.clone(),
            busy: busy.clone(),
            whole_once: false,
            set: None,
        };
        let cannot =
            |e: std::io::Error| Error::Internal(format!("cannot start the background worker: {e}"));
        thread::Builder::new()
            .name("rl-audit-reader".into())
            .spawn(move || reader.run())
            .map_err(cannot)?;
        thread::Builder::new()
            .name("rl-audit-auditor".into())
            .spawn(move || auditor.run())
            .map_err(cannot)?;
        Ok(Jobs {
            slot,
            results: rx,
            progress,
            generation,
            busy,
        })
    }

    /// Queues a request: a request still waiting is replaced, the running
    /// load and audit cancelled.
    pub fn request(&self, r: Request) -> u64 {
        let g = self.generation.fetch_add(1, Ordering::SeqCst) + 1;
        supersede();
        let (lock, cv) = &*self.slot;
        if let Ok(mut s) = lock.lock() {
            // A read-on waiting is not lost to a new request.
            let read_on = s.as_ref().is_some_and(|w| w.3);
            *s = Some((g, Some(r), Cancel::begin(), read_on));
            cv.notify_one();
        }
        g
    }

    /// `--follow` saw the log files change: read on from where the last
    /// read stopped, in the current generation, cancelling nothing. A
    /// request still waiting stands (a load reads on anyway; a recompute
    /// becomes a load with its settings).
    pub fn read_on(&self) {
        let (lock, cv) = &*self.slot;
        let Ok(mut s) = lock.lock() else { return };
        match s.as_mut() {
            Some(w) => w.3 = true,
            None => {
                *s = Some((
                    self.generation.load(Ordering::SeqCst),
                    None,
                    Cancel::begin(),
                    true,
                ))
            }
        }
        cv.notify_one();
    }

    /// `--follow` may read on now: no load is under way, and since the last
    /// read-on ended at least as long has passed as it took (reading on
    /// takes at most half the time).
    pub fn may_read_on(&self) -> bool {
        if self.busy.reading.load(Ordering::SeqCst) {
            return false;
        }
        match self.busy.last_read_on.lock().map(|l| *l) {
            Ok(Some((ended, took))) => ended.elapsed() >= took,
            _ => true,
        }
    }

    /// For the status line: "loading", else "computing", else "idle".
    pub fn phase(&self) -> &'static str {
        if self.busy.reading.load(Ordering::SeqCst) {
            "loading"
        } else if self.busy.auditing.load(Ordering::SeqCst) {
            "computing"
        } else {
            "idle"
        }
    }
}

/// Puts `job` in the auditor's slot, in place of one waiting there (see
/// [`AuditJob::after`]), and wakes the auditor.
fn put(slot: &Slot<AuditJob>, job: AuditJob) {
    let (lock, cv) = &**slot;
    if let Ok(mut s) = lock.lock() {
        let job = match s.take() {
            Some(waiting) => job.after(waiting),
            None => job,
        };
        *s = Some(job);
        cv.notify_one();
    }
}

/// Waits for what the slot holds and takes it; `None` if the lock broke.
fn take<T>(slot: &Slot<T>) -> Option<T> {
    let (lock, cv) = &**slot;
    let mut s = lock.lock().ok()?;
    loop {
        if let Some(v) = s.take() {
            return Some(v);
        }
        s = cv.wait(s).ok()?;
    }
}

/// Runs `job`; a panic in it is a bug, reported (`Err`) and never swallowed.
fn guarded<T>(job: impl FnOnce() -> T) -> std::result::Result<T, String> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(job)).map_err(|p| panic_text(&p))
}

/// Loads and reads on, then hands each new set, or the records read on,
/// to the auditor.
struct Reader {
    slot: Slot<Wanted>,
    audits: Slot<AuditJob>,
    tx: Sender<JobResult>,
    progress: Arc<Progress>,
    generation: Arc<AtomicU64>,
    busy: Arc<Busy>,
    source: Source,
    /// The loaded set's files, and whether it holds summaries' records.
    loaded: Option<(Vec<String>, bool)>,
    /// The serial number of the newest set read.
    read: u64,
    /// `--follow`: how far each file was read, to read on from there.
    tracked: Option<Tracked>,
    /// The settings of the newest request (a read-on audits with them).
    settings: Option<Settings>,
}

impl Reader {
    fn run(mut self) {
        while let Some((g, req, cancel, read_on)) = take(&self.slot) {
            let loads = !matches!(req, Some(Request::Audit(_))) || self.loaded.is_none();
            self.busy.reading.store(loads || read_on, Ordering::SeqCst);
            let outcome = guarded(|| self.work(g, req, cancel, read_on));
            self.busy.reading.store(false, Ordering::SeqCst);
            let outcome = match outcome {
                Ok(Ok(None)) | Ok(Err(Error::Cancelled)) => continue,
                Ok(Ok(Some(o))) => o,
                Ok(Err(e)) => Outcome::Failed(e),
                Err(p) => Outcome::Fatal(p),
            };
            let fatal = matches!(outcome, Outcome::Fatal(_));
            if self.generation.load(Ordering::SeqCst) != g && !fatal {
                continue;
            }
            let sent = self.tx.send(JobResult {
                generation: g,
                read: self.read,
                outcome,
                reloaded: true,
            });
            if sent.is_err() || fatal {
                return;
            }
        }
    }

    /// The job: what to tell the screen now, if anything besides the
    /// appended records (the audit's results come from the auditor).
    fn work(
        &mut self,
        g: u64,
        req: Option<Request>,
        cancel: Cancel,
        read_on: bool,
    ) -> Result<Option<Outcome>> {
        // A test hook: the screen tests check that a bug here ends the
        // workbench cleanly (terminal restored, exit 3).
        if std::env::var_os("RL_AUDIT_FAULT").is_some_and(|v| v == "worker-panic") {
            panic!("injected fault (RL_AUDIT_FAULT=worker-panic)");
        }
        if self.busy.broken.swap(false, Ordering::SeqCst) {
            // What was read on could not be merged: read everything again.
            self.loaded = None;
        }
        let (settings, mut load) = match &req {
            Some(Request::Load(s)) => (s.clone(), true),
            Some(Request::Audit(s)) => (s.clone(), self.loaded.is_none()),
            None => match &self.settings {
                Some(s) => (s.clone(), self.loaded.is_none()),
                None => return Ok(None),
            },
        };
        self.settings = Some(settings.clone());
        let source = Source {
            cancel,
            ..self.source.clone()
        };
        let mut job = AuditJob {
            generation: g,
            read: self.read,
            base: None,
            batches: Vec::new(),
            settings,
            cancel,
            reloaded: false,
        };
        if read_on && !load {
            let started = Instant::now();
            let read = match (&self.loaded, &self.tracked) {
                (Some((files, summarized)), Some(t)) => source.read_on(files, *summarized, t)?,
                _ => Read::Unchanged,
            };
            match read {
                Read::Unchanged => {
                    if req.is_none() {
                        return Ok(Some(Outcome::Unchanged));
                    }
                }
                Read::Reload => load = true,
                Read::Parsed(batch, next) => {
                    self.tracked = Some(next);
                    self.read += 1;
                    // The appended records go to the screen now, before
                    // they are merged and audited.
                    let preview = batch.preview();
                    let mut records: Vec<Loc> = (preview.trajectories.iter().map(|t| t.loc))
                        .chain(preview.probes.iter().map(|p| p.loc))
                        .chain(preview.checkpoints.iter().map(|c| c.loc))
                        .chain(preview.run_decls.iter().map(|d| d.loc))
                        .collect();
                    records.sort_unstable();
                    if self.generation.load(Ordering::SeqCst) == g && !records.is_empty() {
                        let _ = self.tx.send(JobResult {
                            generation: g,
                            read: self.read,
                            outcome: Outcome::Read(Arc::new(Fresh {
                                set: Arc::new(preview),
                                records,
                            })),
                            reloaded: true,
                        });
                    }
                    job.read = self.read;
                    job.batches.push(*batch);
                    job.reloaded = true;
                    if let Ok(mut l) = self.busy.last_read_on.lock() {
                        *l = Some((Instant::now(), started.elapsed()));
                    }
                }
            }
        }
        if load {
            for c in [
                &self.progress.bytes_done,
                &self.progress.records,
                &self.progress.bytes_total,
            ] {
                c.store(0, Ordering::Relaxed);
            }
            let set = if source.follow {
                let (set, tracked) = source.load_following(Some(self.progress.clone()))?;
                self.tracked = tracked;
                set
            } else {
                let mut set = source.load(Some(self.progress.clone()))?;
                // Nothing is merged into it later (as `--follow` does):
                // its log-probabilities can leave memory.
                set.spill_logps();
                set
            };
            self.loaded = Some((set.files.clone(), !set.summaries.is_empty()));
            self.read += 1;
            job.read = self.read;
            job.base = Some(Arc::new(set));
            job.batches.clear();
            job.reloaded = true;
        }
        put(&self.audits, job);
        Ok(None)
    }
}

/// Audits the newest set handed to it, one at a time.
struct Auditor {
    slot: Slot<AuditJob>,
    tx: Sender<JobResult>,
    generation: Arc<AtomicU64>,
    busy: Arc<Busy>,
    /// A whole audit has been sent.
    whole_once: bool,
    /// The newest set: the last loaded, with the records read on since.
    set: Option<Arc<LogSet>>,
}

impl Auditor {
    fn run(mut self) {
        while let Some(mut job) = take(&self.slot) {
            self.busy.auditing.store(true, Ordering::SeqCst);
            let outcome = guarded(|| self.work(&mut job));
            self.busy.auditing.store(false, Ordering::SeqCst);
            let outcome = match outcome {
                Ok(Ok(l)) => {
                    self.whole_once = true;
                    Outcome::Done(l)
                }
                Ok(Err(Error::Cancelled)) => continue,
                Ok(Err(e)) => Outcome::Failed(e),
                Err(p) => Outcome::Fatal(p),
            };
            let fatal = matches!(outcome, Outcome::Fatal(_));
            if self.stale(job.generation) && !fatal {
                continue;
            }
            let sent = self.tx.send(JobResult {
                generation: job.generation,
                read: job.read,
                outcome,
                reloaded: job.reloaded,
            });
            if sent.is_err() || fatal {
                return;
            }
        }
    }

    fn stale(&self, g: u64) -> bool {
        self.generation.load(Ordering::SeqCst) != g
    }

    fn work(&mut self, job: &mut AuditJob) -> Result<Arc<Loaded>> {
        if let Some(b) = job.base.take() {
            self.set = Some(b);
        }
        // Records read on go in first (also for a job already superseded:
        // the reader has read past them).
        if !job.batches.is_empty() {
            let Some(prev) = &self.set else {
                return Err(Error::Internal("records read on before a load".into()));
            };
            match merge_all(std::mem::take(&mut job.batches), prev) {
                Ok(set) => self.set = Some(Arc::new(set)),
                Err(e) => {
                    self.busy.broken.store(true, Ordering::SeqCst);
                    return Err(e);
                }
            }
        }
        let Some(set) = self.set.clone() else {
            return Err(Error::Internal("nothing loaded".into()));
        };
        if job.cancel.is_cancelled() {
            return Err(Error::Cancelled);
        }
        let mut settings = job.settings.clone();
        settings.boot.cancel = job.cancel;
        // Until a first audit is whole, each part is shown as it comes in.
        // After that (a recompute, a reload, `--follow` reading on) the
        // results on screen, set and audit together, stay until the new ones
        // are whole: a drill-down open on them keeps what it lists.
        let audit = if self.whole_once {
            crate::analysis::run_audit(&set, &settings)?
        } else {
            let this = &*self;
            let partial = |a: Audit| {
                if this.stale(job.generation) {
                    return;
                }
                let _ = this.tx.send(JobResult {
                    generation: job.generation,
                    read: job.read,
                    outcome: Outcome::Partial(Arc::new(Loaded {
                        set: set.clone(),
                        audit: a,
                    })),
                    reloaded: job.reloaded,
                });
            };
            paced(|staged| run_audit_staged(&set, &settings, staged), partial)?
        };
        if job.cancel.is_cancelled() {
            return Err(Error::Cancelled);
        }
        Ok(Arc::new(Loaded { set, audit }))
    }
}

/// `run` ([`run_audit_staged`]), its partial audits handed to `partial`
/// paced: the first two as they come (the loaded set, then training
/// dynamics, which take no time before a Pass@(K,T) that may take long),
/// then at most one per [`PARTIAL_EVERY`]. One that comes sooner is held (a
/// later one replaces it) and goes when its time comes — never held behind
/// a long part, never sent once the audit is whole.
fn paced<R>(run: impl FnOnce(&mut dyn FnMut(&Audit)) -> R, partial: impl Fn(Audit) + Sync) -> R {
    /// The partial waiting to go; how many went and when the last did;
    /// whether the audit has ended.
    #[derive(Default)]
    struct Held {
        audit: Option<Audit>,
        sent: usize,
        last: Option<Instant>,
        ended: bool,
    }
    type Shared = (Mutex<Held>, Condvar);
    fn lock(s: &Shared) -> std::sync::MutexGuard<'_, Held> {
        s.0.lock().unwrap_or_else(|e| e.into_inner())
    }
    /// Ends the pacer however the audit ends (a panic included), so that
    /// the scope's join does not wait for it forever.
    struct End<'a>(&'a Shared);
    impl Drop for End<'_> {
        fn drop(&mut self) {
            let mut h = lock(self.0);
            h.ended = true;
            h.audit = None;
            self.0 .1.notify_all();
        }
    }
    let held: Shared = Default::default();
    thread::scope(|scope| {
        scope.spawn(|| {
            let mut h = lock(&held);
            loop {
                if h.ended {
                    return;
                }
                if h.audit.is_none() {
                    h = held.1.wait(h).unwrap_or_else(|e| e.into_inner());
                    continue;
                }
                let wait = h.last.map_or(Duration::ZERO, |t| {
                    PARTIAL_EVERY.saturating_sub(t.elapsed())
                });
                if !wait.is_zero() {
                    h = held
                        .1
                        .wait_timeout(h, wait)
                        .unwrap_or_else(|e| e.into_inner())
                        .0;
                    continue;
                }
                let Some(a) = h.audit.take() else { continue };
                h.last = Some(Instant::now());
                drop(h);
                partial(a);
                h = lock(&held);
            }
        });
        let _end = End(&held);
        run(&mut |a| {
            if a.is_complete() {
                return;
            }
            let mut h = lock(&held);
            if h.sent < 2 {
                // Sent from here, in order: nothing is held yet.
                h.sent += 1;
                h.last = Some(Instant::now());
                drop(h);
                partial(a.clone());
            } else {
                h.audit = Some(a.clone());
                held.1.notify_all();
            }
        })
    })
}

fn panic_text(p: &Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a background job panicked".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An audit handed on with `left` parts to come.
    fn with_left(left: usize) -> Audit {
        Audit {
            pending: crate::analysis::Part::ALL[crate::analysis::Part::ALL.len() - left..].to_vec(),
            ..Default::default()
        }
    }

    /// The first two partials go as they come; later ones close together
    /// go one per PARTIAL_EVERY, the newest of them, without waiting for the
    /// next part however long it takes; none goes after the audit ends.
    #[test]
    fn partial_audits_are_paced_not_held_behind_a_long_part() {
        let got: Mutex<Vec<(usize, Duration)>> = Mutex::default();
        let t0 = Instant::now();
        let long = 4 * PARTIAL_EVERY;
        let out = paced(
            |staged| {
                for left in [11, 10, 9, 8] {
                    staged(&with_left(left));
                }
                std::thread::sleep(long);
                staged(&with_left(7));
                staged(&with_left(0));
                "whole"
            },
            |a| got.lock().unwrap().push((a.pending.len(), t0.elapsed())),
        );
        assert_eq!(out, "whole");
        let got = got.into_inner().unwrap();
        let left: Vec<usize> = got.iter().map(|g| g.0).collect();
        // 11 and 10 at once, 9 replaced by 8 before its time came, 8 sent
        // during the long part; 7 may go before the end or be dropped there;
        // the whole audit never goes as a partial.
        assert!(left == [11, 10, 8] || left == [11, 10, 8, 7], "{got:?}");
        assert!(got[1].1 < PARTIAL_EVERY, "{got:?}");
        assert!(got[2].1 >= PARTIAL_EVERY && got[2].1 < long, "{got:?}");
    }
}
