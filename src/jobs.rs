//! Background loading and recomputation for the workbench: the newest
//! request replaces a waiting one and cancels the running one (loading
//! stops at the next chunk, the bootstrap at the next block), so the screen
//! never waits on stale work.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Condvar, Mutex};
use std::thread;

use crate::analysis::{run_audit_staged, Audit, Settings};
use crate::cancel::{supersede, Cancel};
use crate::error::{Error, Result};
use crate::loading::Source;
use crate::schema::load::{Progress, Tracked};
use crate::schema::LogSet;

/// The least time between two partial audits sent to the screen (the first
/// goes at once).
const PARTIAL_EVERY: std::time::Duration = std::time::Duration::from_millis(150);

/// A loaded log set and its audit.
pub struct Loaded {
    pub set: Arc<LogSet>,
    pub audit: Audit,
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
    /// `--follow` found nothing new: the results on screen stand.
    Unchanged,
    Failed(Error),
    /// The worker hit a bug (it panicked): the workbench must leave.
    Fatal(String),
}

pub struct JobResult {
    pub generation: u64,
    pub outcome: Outcome,
    pub reloaded: bool,
}

/// The one waiting request (generation, request, its cancel token) and its wake-up.
type Slot = Arc<(Mutex<Option<(u64, Request, Cancel)>>, Condvar)>;

/// Handle to the worker thread.
pub struct Jobs {
    slot: Slot,
    pub results: Receiver<JobResult>,
    pub progress: Arc<Progress>,
    /// Generation of the newest request; results of older ones are stale.
    pub generation: Arc<AtomicU64>,
    /// Phase of the running job, for the status line.
    pub phase: Arc<Mutex<&'static str>>,
}

impl Jobs {
    /// Starts the worker; a thread that cannot be started is an error the
    /// caller shows (not an endless "loading").
    pub fn start(source: Source) -> Result<Jobs> {
        let slot: Slot = Arc::new((Mutex::new(None), Condvar::new()));
        let (tx, rx) = channel();
        let progress = Arc::new(Progress::default());
        let generation = Arc::new(AtomicU64::new(0));
        let phase = Arc::new(Mutex::new("idle"));
        let worker = Worker {
            slot: slot.clone(),
            tx,
            progress: progress.clone(),
            generation: generation.clone(),
            phase: phase.clone(),
            source,
            current: None,
            tracked: None,
        };
        thread::Builder::new()
            .name("rl-audit-jobs".into())
            .spawn(move || worker.run())
            .map_err(|e| Error::Internal(format!("cannot start the background worker: {e}")))?;
        Ok(Jobs {
            slot,
            results: rx,
            progress,
            generation,
            phase,
        })
    }

    /// Queues a request: a request still waiting is replaced, the running
    /// one cancelled.
    pub fn request(&self, r: Request) -> u64 {
        let g = self.generation.fetch_add(1, Ordering::SeqCst) + 1;
        supersede();
        let token = Cancel::begin();
        let (lock, cv) = &*self.slot;
        if let Ok(mut s) = lock.lock() {
            *s = Some((g, r, token));
            cv.notify_one();
        }
        g
    }

    pub fn phase(&self) -> &'static str {
        self.phase.lock().map(|p| *p).unwrap_or("working")
    }
}

struct Worker {
    slot: Slot,
    tx: Sender<JobResult>,
    progress: Arc<Progress>,
    generation: Arc<AtomicU64>,
    phase: Arc<Mutex<&'static str>>,
    source: Source,
    current: Option<Arc<Loaded>>,
    /// `--follow`: how far each file was read, to read on from there.
    tracked: Option<Tracked>,
}

impl Worker {
    fn set_phase(&self, p: &'static str) {
        if let Ok(mut ph) = self.phase.lock() {
            *ph = p;
        }
    }

    fn run(mut self) {
        loop {
            let (g, req, cancel) = {
                let (lock, cv) = &*self.slot;
                let Ok(mut s) = lock.lock() else { return };
                loop {
                    if let Some(r) = s.take() {
                        break r;
                    }
                    s = match cv.wait(s) {
                        Ok(s) => s,
                        Err(_) => return,
                    };
                }
            };
            let reloaded = matches!(req, Request::Load(_)) || self.current.is_none();
            // A panic here is a bug: it is reported and ends the workbench
            // (exit 3), never swallowed while the screen goes on.
            let outcome = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                self.work(g, req, cancel)
            })) {
                Ok(Ok(Some(l))) => {
                    self.current = Some(l.clone());
                    Outcome::Done(l)
                }
                Ok(Ok(None)) => Outcome::Unchanged,
                Ok(Err(Error::Cancelled)) => continue,
                Ok(Err(e)) => Outcome::Failed(e),
                Err(p) => Outcome::Fatal(panic_text(&p)),
            };
            if self.stale(g) && !matches!(outcome, Outcome::Fatal(_)) {
                continue;
            }
            self.set_phase("idle");
            let fatal = matches!(outcome, Outcome::Fatal(_));
            let sent = self.tx.send(JobResult {
                generation: g,
                outcome,
                reloaded,
            });
            if sent.is_err() || fatal {
                return;
            }
        }
    }

    fn stale(&self, g: u64) -> bool {
        self.generation.load(Ordering::SeqCst) != g
    }

    /// The job; `None` when `--follow` found nothing new.
    fn work(&mut self, g: u64, req: Request, cancel: Cancel) -> Result<Option<Arc<Loaded>>> {
        // A test hook: the screen tests check that a bug here ends the
        // workbench cleanly (terminal restored, exit 3).
        if std::env::var_os("RL_AUDIT_FAULT").is_some_and(|v| v == "worker-panic") {
            panic!("injected fault (RL_AUDIT_FAULT=worker-panic)");
        }
        let (mut settings, reload) = match req {
            Request::Load(s) => (s, true),
            Request::Audit(s) => (s, false),
        };
        settings.boot.cancel = cancel;
        let set = match (&self.current, reload) {
            (Some(cur), false) => cur.set.clone(),
            _ => {
                self.set_phase("loading");
                for c in [
                    &self.progress.bytes_done,
                    &self.progress.records,
                    &self.progress.bytes_total,
                ] {
                    c.store(0, Ordering::Relaxed);
                }
                let source = Source {
                    cancel,
                    ..self.source.clone()
                };
                if source.follow {
                    let previous = match (&self.current, &self.tracked) {
                        (Some(c), Some(t)) => Some((c.set.as_ref(), t)),
                        _ => None,
                    };
                    let (set, tracked) =
                        source.load_following(Some(self.progress.clone()), previous)?;
                    self.tracked = tracked;
                    match (set, &self.current) {
                        (Some(s), _) => Arc::new(s),
                        // Nothing appended: no new audit either.
                        (None, Some(_)) => return Ok(None),
                        (None, None) => return Err(Error::Internal("nothing loaded".into())),
                    }
                } else {
                    let mut set = source.load(Some(self.progress.clone()))?;
                    // Nothing is merged into it later (as `--follow` does):
                    // its log-probabilities can leave memory.
                    set.spill_logps();
                    Arc::new(set)
                }
            }
        };
        if cancel.is_cancelled() {
            return Err(Error::Cancelled);
        }
        self.set_phase("computing");
        // Until a first audit is whole, each part is shown as it comes in.
        // After that (a recompute, a reload, `--follow` reading on) the
        // results on screen, set and audit together, stay until the new ones
        // are whole: a drill-down open on them keeps what it lists.
        let first = self.current.is_none();
        let mut sent: Option<std::time::Instant> = None;
        let mut staged = |a: &Audit| {
            let due = sent.is_none_or(|t| t.elapsed() >= PARTIAL_EVERY);
            if !first || a.is_complete() || !due || self.stale(g) {
                return;
            }
            sent = Some(std::time::Instant::now());
            let _ = self.tx.send(JobResult {
                generation: g,
                outcome: Outcome::Partial(Arc::new(Loaded {
                    set: set.clone(),
                    audit: a.clone(),
                })),
                reloaded: reload,
            });
        };
        let audit = run_audit_staged(&set, &settings, &mut staged)?;
        if cancel.is_cancelled() {
            return Err(Error::Cancelled);
        }
        Ok(Some(Arc::new(Loaded { set, audit })))
    }
}

fn panic_text(p: &Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a background job panicked".into())
}
