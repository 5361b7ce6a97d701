//! Process-level bookkeeping shared by the load and the analyses: stage
//! timings for performance work, and handing freed memory back.

/// With `RL_AUDIT_TIMINGS` set, each analysis stage's seconds go to stderr
/// (what `examples/bench` and performance work read).
pub struct StageClock(Option<(std::time::Instant, f64)>);

impl StageClock {
    pub fn from_env() -> StageClock {
        StageClock(timings_on().then(|| (std::time::Instant::now(), cpu_seconds())))
    }
    /// The stage's seconds (wall, and CPU over all threads: twice the wall
    /// on this 2-core machine when both are busy), and (Linux) resident memory now and at the
    /// stage's peak (the peak is reset after each lap, so each lap's `VmHWM`
    /// is its own stage's).
    pub fn lap(&mut self, stage: &str) {
        if let Some((t, cpu)) = &mut self.0 {
            let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
            let mib = |key: &str| {
                status
                    .lines()
                    .find_map(|l| l.strip_prefix(key))
                    .and_then(|v| v.split_whitespace().next()?.parse::<f64>().ok())
                    .map_or(String::new(), |kb| format!(" {key} {:.0} MiB", kb / 1024.0))
            };
            let now = cpu_seconds();
            eprintln!(
                "timing: {stage}: {:.3} s (CPU {:.3} s){}{}{}{}",
                t.elapsed().as_secs_f64(),
                now - *cpu,
                mib("VmRSS:"),
                mib("RssAnon:"),
                mib("RssFile:"),
                mib("VmHWM:")
            );
            // Linux: writing 5 resets the peak resident set size (proc(5)).
            let _ = std::fs::write("/proc/self/clear_refs", "5");
            *t = std::time::Instant::now();
            *cpu = cpu_seconds();
        }
    }
}

/// Whether `RL_AUDIT_TIMINGS` is set: stage timings go to stderr.
fn timings_on() -> bool {
    std::env::var_os("RL_AUDIT_TIMINGS").is_some()
}

/// User + system CPU seconds of the whole process so far (0 off Unix).
fn cpu_seconds() -> f64 {
    #[cfg(unix)]
    {
        // SAFETY: getrusage only writes the zeroed struct it is given.
        let mut u: libc::rusage = unsafe { std::mem::zeroed() };
        if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) } == 0 {
            let t = |v: libc::timeval| v.tv_sec as f64 + v.tv_usec as f64 / 1e6;
            return t(u.ru_utime) + t(u.ru_stime);
        }
    }
    0.0
}

/// `f`'s result; with `RL_AUDIT_TIMINGS` set, its wall seconds go to
/// stderr as work done beside the stages (on a thread of its own, so no
/// lap of [`StageClock`] holds it; its CPU is in the laps it overlaps).
pub fn beside<T>(what: &str, f: impl FnOnce() -> T) -> T {
    let t = timings_on().then(std::time::Instant::now);
    let out = f();
    if let Some(t) = t {
        eprintln!(
            "timing (beside the stages): {what}: {:.3} s",
            t.elapsed().as_secs_f64()
        );
    }
    out
}

/// `f` run at the lowest scheduling priority (Linux: nice 19 for this thread
/// and the threads of a pool of its own, in which `f`'s parallel work
/// runs): work beside the main sequence that should take only the CPU the
/// main sequence leaves idle. No result depends on it: every analysis
/// draws from its own seeded streams, whatever the threads. The calling
/// thread's priority stays lowered (an unprivileged thread cannot raise it
/// again): call it on a thread of its own.
pub fn in_background<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    // Asked first: it makes the global pool if there is none yet, and
    // threads made after the nice is lowered would inherit it.
    let threads = rayon::current_num_threads();
    #[cfg(target_os = "linux")]
    // SAFETY: gettid and setpriority take and return plain integers; a
    // refusal only leaves the priority as it was.
    unsafe {
        let tid = libc::gettid();
        libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, BACKGROUND_NICE);
    }
    // The pool's threads are made by this one, so they inherit its nice.
    match rayon::ThreadPoolBuilder::new().num_threads(threads).build() {
        Ok(pool) => pool.install(f),
        Err(_) => f(),
    }
}

/// A scoped thread's result, its panic going on on the joining thread as
/// it would have on the thread itself.
pub fn joined<T>(r: std::thread::Result<T>) -> T {
    r.unwrap_or_else(|p| std::panic::resume_unwind(p))
}

/// A scoped thread's result once it has ended (`wait`: waiting for it if
/// not), taken from `handle`; `None` while it runs, or once taken.
pub fn finished<T>(
    handle: &mut Option<std::thread::ScopedJoinHandle<'_, T>>,
    wait: bool,
) -> Option<T> {
    if !handle.as_ref().is_some_and(|h| wait || h.is_finished()) {
        return None;
    }
    handle.take().map(|h| joined(h.join()))
}

/// The nice of [`in_background`]'s work: CFS gives a nice-19 thread about
/// 1.5 % of a core against a busy nice-0 one, and all of an idle one. At
/// nice 10 (a tenth of a core each), natural recovery's two threads took a
/// fifth of the CPU while the rollouts were counted (11 M rollouts,
/// session 54); at 19 the Budget panel came as soon or sooner, and the
/// whole audit with it on screen ended in 13.0–13.4 s, not 14.0–15.0.
#[cfg(target_os = "linux")]
const BACKGROUND_NICE: libc::c_int = 19;

/// Hands memory freed inside the allocator back to the system. glibc keeps
/// what the parse threads' chunk-local sets and windows freed in their
/// arenas (tens of MiB at 200,000 trajectories) as resident memory; the
/// analyses that follow would otherwise add their peak on top of it.
pub fn release_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only walks glibc's own arenas; no pointer is passed.
    unsafe {
        libc::malloc_trim(0);
    }
    RESIDENT_AFTER_RELEASE.store(resident_bytes(), std::sync::atomic::Ordering::Relaxed);
}

/// Resident bytes just after the last [`release_freed_memory`].
static RESIDENT_AFTER_RELEASE: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// [`release_freed_memory`] where memory is freed and allocated again in a
/// loop (a load's windows and files): only once resident memory has grown
/// past what it was after the last release by a quarter of that, at least
/// `LOOP_SLACK` and at most three times it. Each window of a 1 M-trajectory
/// Parquet load frees ~15 MiB that the next one allocates again: handed
/// back whenever resident memory grew by 16 MiB (the load's own records
/// grow it too), it went back 49 times a load and the kernel faulted in and
/// zeroed it again each time — 1 GiB of `MADV_DONTNEED` and half a second
/// of system time (README, session 33).
pub fn release_freed_memory_in_loop() {
    let since = RESIDENT_AFTER_RELEASE.load(std::sync::atomic::Ordering::Relaxed);
    if resident_bytes() > since.saturating_add(loop_slack(since)) {
        release_freed_memory();
    }
}

/// How far resident memory may grow past `since` (its bytes after the last
/// release) before [`release_freed_memory_in_loop`] hands memory back.
fn loop_slack(since: u64) -> u64 {
    (since / 4).clamp(LOOP_SLACK, 3 * LOOP_SLACK)
}

/// The least growth [`release_freed_memory_in_loop`] lets pass: 16 MiB
/// keeps the text-heavy 40-step set's peak within 1.15–1.21 × the 4-step
/// set's, run by run (README, sessions 30–33; 32 MiB: 1.19–1.29 ×); both
/// stay under 64 MiB resident while they load.
const LOOP_SLACK: u64 = 16 << 20;

/// The process's resident bytes (Linux; 0 elsewhere or unreadable).
fn resident_bytes() -> u64 {
    #[cfg(target_os = "linux")]
    {
        // statm: sizes in pages; the second is the resident set.
        let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
        // SAFETY: sysconf reads a constant of the system.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(0) as u64;
        return statm
            .split_whitespace()
            .nth(1)
            .and_then(|p| p.parse::<u64>().ok())
            .map_or(0, |p| p * page);
    }
    #[allow(unreachable_code)]
    0
}

/// Fixes glibc's thresholds for handing memory back, once at start-up.
/// By default they move: freeing a mapped block of S bytes (up to 32 MiB)
/// raises the size served from the arenas to S and the free space an arena
/// keeps at its top to 2 S — and [`release_freed_memory`] cannot trim a
/// thread arena's top. Each window of a load frees blocks of megabytes, so
/// the arenas kept up to 30 MiB of freed memory resident, a different
/// amount each run (issue 20: a 100,000-trajectory Parquet set of 40 steps
/// each peaked at 115–127 MiB, 115 with these; of 4 steps 98–101, 95–96
/// with these).
/// Blocks of 2 MiB or more are mapped on their own and unmapped when freed;
/// an arena gives back a free top of more than 2 MiB. An explicit
/// `GLIBC_TUNABLES` setting of either is left alone.
pub fn tune_allocator() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        const THRESHOLD: libc::c_int = 2 << 20;
        let tuned = std::env::var("GLIBC_TUNABLES")
            .is_ok_and(|t| t.contains("mmap_threshold") || t.contains("trim_threshold"));
        if !tuned {
            // SAFETY: mallopt only sets glibc's own parameters.
            unsafe {
                libc::mallopt(libc::M_MMAP_THRESHOLD, THRESHOLD);
                libc::mallopt(libc::M_TRIM_THRESHOLD, THRESHOLD);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_loop_lets_a_quarter_of_resident_memory_grow_between_16_and_48_mib() {
        const MIB: u64 = 1 << 20;
        // Small sets: 16 MiB whatever they hold (the text-heavy sets load under 64 MiB).
        assert_eq!(loop_slack(0), 16 * MIB);
        assert_eq!(loop_slack(60 * MIB), 16 * MIB);
        // A quarter of 100 MiB, of 180 MiB (a 1 M-trajectory load near its end).
        assert_eq!(loop_slack(100 * MIB), 25 * MIB);
        assert_eq!(loop_slack(180 * MIB), 45 * MIB);
        // 10 M trajectories (1.7 GiB resident): no more than 48 MiB.
        assert_eq!(loop_slack(1700 * MIB), 48 * MIB);
    }

    /// The nice of the calling thread (Linux reads it per thread).
    #[cfg(target_os = "linux")]
    fn own_nice() -> libc::c_int {
        // SAFETY: plain integers in and out.
        unsafe { libc::getpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t) }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn background_work_and_its_pool_run_at_nice_19_and_leave_other_threads_be() {
        let (caller, mine, pool, threads) = std::thread::spawn(|| {
            let before = own_nice();
            let (mine, pool) = in_background(|| (own_nice(), rayon::broadcast(|_| own_nice())));
            (before, mine, pool, rayon::current_num_threads())
        })
        .join()
        .unwrap();
        assert_eq!(caller, 0, "the test thread starts at nice 0");
        assert_eq!(mine, BACKGROUND_NICE);
        // Every thread of its own pool (as many as the global pool has).
        assert_eq!(pool, vec![BACKGROUND_NICE; threads]);
        // The global pool and this thread are left as they were.
        assert_eq!(rayon::broadcast(|_| own_nice()), vec![0; threads]);
        assert_eq!(own_nice(), 0);
        assert_eq!(BACKGROUND_NICE, 19);
    }
}
