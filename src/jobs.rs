//! Background loading and recomputation for the TUI: the newest request
//! replaces a waiting one, and results of superseded requests are dropped,
//! so the screen never waits on stale work.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Condvar, Mutex};
use std::thread;

use crate::analysis::{run_audit, Audit, Settings};
use crate::cli::Options;
use crate::error::{Error, Result};
use crate::schema::load::Progress;
use crate::schema::LogSet;

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

pub struct JobResult {
    pub generation: u64,
    pub result: Result<Arc<Loaded>>,
    pub reloaded: bool,
}

/// The one waiting request (generation, request) and its wake-up.
type Slot = Arc<(Mutex<Option<(u64, Request)>>, Condvar)>;

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
    pub fn start(opts: Options) -> Jobs {
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
            opts,
            current: None,
            tracked: None,
        };
        thread::Builder::new()
            .name("rl-audit-jobs".into())
            .spawn(move || worker.run())
            .ok();
        Jobs {
            slot,
            results: rx,
            progress,
            generation,
            phase,
        }
    }

    /// Queues a request; a request still waiting is replaced.
    pub fn request(&self, r: Request) -> u64 {
        let g = self.generation.fetch_add(1, Ordering::SeqCst) + 1;
        let (lock, cv) = &*self.slot;
        if let Ok(mut s) = lock.lock() {
            *s = Some((g, r));
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
    opts: Options,
    current: Option<Arc<Loaded>>,
    /// `--follow`: how far each file was read, to read on from there.
    tracked: Option<crate::schema::load::Tracked>,
}

impl Worker {
    fn set_phase(&self, p: &'static str) {
        if let Ok(mut ph) = self.phase.lock() {
            *ph = p;
        }
    }

    fn run(mut self) {
        loop {
            let (g, req) = {
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
            let result =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.work(g, req)))
                    .unwrap_or_else(|_| Err(Error::Internal("a background job panicked".into())));
            if let Ok(l) = &result {
                self.current = Some(l.clone());
            }
            self.set_phase("idle");
            if self
                .tx
                .send(JobResult {
                    generation: g,
                    result,
                    reloaded,
                })
                .is_err()
            {
                return;
            }
        }
    }

    fn stale(&self, g: u64) -> bool {
        self.generation.load(Ordering::SeqCst) != g
    }

    fn work(&mut self, g: u64, req: Request) -> Result<Arc<Loaded>> {
        let (settings, reload) = match req {
            Request::Load(s) => (s, true),
            Request::Audit(s) => (s, false),
        };
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
                let mut o = self.opts.clone();
                o.settings = settings.clone();
                if o.follow {
                    let previous = match (&self.current, &self.tracked) {
                        (Some(c), Some(t)) => Some((c.set.as_ref(), t)),
                        _ => None,
                    };
                    let (set, tracked) = crate::headless::load_logs_following(
                        &o,
                        Some(self.progress.clone()),
                        previous,
                    )?;
                    self.tracked = tracked;
                    match (set, &self.current) {
                        (Some(s), _) => Arc::new(s),
                        (None, Some(c)) => c.set.clone(),
                        (None, None) => {
                            return Err(Error::Internal("nothing loaded".into()));
                        }
                    }
                } else {
                    Arc::new(crate::headless::load_logs_with(
                        &o,
                        Some(self.progress.clone()),
                    )?)
                }
            }
        };
        if self.stale(g) {
            return Err(Error::Usage("superseded".into()));
        }
        self.set_phase("computing");
        let audit = run_audit(&set, &settings)?;
        Ok(Arc::new(Loaded { set, audit }))
    }
}
