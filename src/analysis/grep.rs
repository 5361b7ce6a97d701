//! `--grep REGEX`: a behaviour split over full-budget evaluation rollouts —
//! how many rollouts have an action matching the pattern, and how often
//! those succeed compared with the others (e.g. rollouts that call `retry`).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::schema::frames::EvalAggregates;
use crate::schema::{Id, LogSet};

#[derive(Debug, Clone)]
pub struct GrepRow {
    pub benchmark: String,
    pub run: String,
    pub pattern: String,
    pub rollouts: u64,
    pub matching: u64,
    /// Mean over tasks with matching rollouts of the share of them that succeeded.
    pub pass_matching: Option<f64>,
    /// The same over the other rollouts.
    pub pass_other: Option<f64>,
}

/// The rollouts `--grep` reads: full-budget evaluation rollouts.
pub fn candidates(set: &LogSet, agg: &EvalAggregates) -> Vec<usize> {
    set.trajectories
        .iter()
        .enumerate()
        .filter(|(_, t)| agg.at_full_budget(t))
        .map(|(i, _)| i)
        .collect()
}

fn task_mean(by_task: &BTreeMap<Id, (u64, u64)>) -> Option<f64> {
    let v: Vec<f64> = by_task
        .values()
        .filter(|(n, _)| *n > 0)
        .map(|(n, s)| *s as f64 / *n as f64)
        .collect();
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// The rows of each pattern: `hit[p][k]`, whether `trajs[k]` has an
/// action matching pattern p ([`matching`]).
pub fn analyse(
    set: &LogSet,
    trajs: &[usize],
    hit: &[Vec<bool>],
    patterns: &[regex::Regex],
) -> Vec<GrepRow> {
    let mut out = Vec::new();
    for (re, hit) in patterns.iter().zip(hit) {
        // (benchmark, run) → (rollouts, matching, per task (n, solved) of matching / other)
        type Split = (u64, u64, BTreeMap<Id, (u64, u64)>, BTreeMap<Id, (u64, u64)>);
        let mut cells: BTreeMap<(Id, Id), Split> = BTreeMap::new();
        for (k, &i) in trajs.iter().enumerate() {
            let t = &set.trajectories[i];
            let hit = hit[k];
            let c = cells.entry((t.benchmark, t.run)).or_default();
            c.0 += 1;
            c.1 += u64::from(hit);
            let side = if hit { &mut c.2 } else { &mut c.3 };
            let e = side.entry(t.task).or_default();
            e.0 += 1;
            e.1 += u64::from(t.success);
        }
        for ((b, r), (n, m, hit, other)) in cells {
            out.push(GrepRow {
                benchmark: set.name(b).to_string(),
                run: set.name(r).to_string(),
                pattern: re.as_str().to_string(),
                rollouts: n,
                matching: m,
                pass_matching: task_mean(&hit),
                pass_other: task_mean(&other),
            });
        }
    }
    out.sort_by(|a, b| (&a.benchmark, &a.run, &a.pattern).cmp(&(&b.benchmark, &b.run, &b.pattern)));
    out
}

/// One match of a search: trajectory index, step index (0-based), the
/// field, its text and the match's byte range.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    pub traj: usize,
    pub step: usize,
    pub field: &'static str,
    pub text: String,
    pub at: (usize, usize),
}

#[derive(Debug, Clone, Default)]
pub struct Search {
    pub hits: Vec<Hit>,
    /// Trajectories read, and those with at least one hit.
    pub read: usize,
    pub matching: usize,
    /// The search stopped at the limit before reading every trajectory.
    pub truncated: bool,
}

/// How far a search has gone (trajectories read, hits found), for the
/// screen while it runs.
#[derive(Debug, Default)]
pub struct Progress {
    pub read: AtomicUsize,
    pub hits: AtomicUsize,
}

/// The hits of one file's trajectories ([`search_file`]), each with how
/// many of them had been read when it was found.
struct FileHits {
    hits: Vec<Hit>,
    read_at: Vec<usize>,
    read: usize,
    matching: usize,
}

/// The trajectories `trajs` (one file's, in file order) searched for `re`,
/// stopping once `limit` hits are found.
fn search_file(
    set: &LogSet,
    trajs: &[usize],
    re: &regex::Regex,
    limit: usize,
    wanted: &dyn Fn() -> bool,
    progress: &Progress,
) -> crate::error::Result<FileHits> {
    let mut out = FileHits {
        hits: Vec::new(),
        read_at: Vec::new(),
        read: 0,
        matching: 0,
    };
    set.visit_step_texts(trajs, true, wanted, &mut |k, steps| {
        out.read += 1;
        let before = out.hits.len();
        for (step, texts) in steps.iter().enumerate() {
            // A step without the field has nothing to search (a pattern
            // matching the empty text finds no absent field).
            for (field, text) in ["action", "observation"].into_iter().zip(texts) {
                let Some(text) = text else { continue };
                if let Some(m) = re.find(text) {
                    let at = (m.start(), m.end());
                    out.hits.push(Hit {
                        traj: trajs[k],
                        step,
                        field,
                        text: text.to_string(),
                        at,
                    });
                    out.read_at.push(out.read);
                }
            }
        }
        let found = out.hits.len() - before;
        out.matching += usize::from(found > 0);
        progress.read.fetch_add(1, Ordering::Relaxed);
        progress.hits.fetch_add(found, Ordering::Relaxed);
        out.hits.len() < limit
    })?;
    Ok(out)
}

/// Every loaded trajectory's actions and observations searched for `re`
/// (the first match per step and field), in file order, stopping after
/// `limit` hits (at least one). Records are re-read file by file
/// ([`LogSet::visit_step_texts`]), a file per core at once
/// ([`LogSet::in_files`]), and their hits put in file order — the very
/// hits, counts and stopping point of reading the files one after
/// another; none is kept. `wanted()` false stops it (`Error::Cancelled`);
/// `progress` counts as it goes (its hits those of every file read, which
/// may pass `limit`).
pub fn search(
    set: &LogSet,
    re: &regex::Regex,
    limit: usize,
    wanted: &(dyn Fn() -> bool + Sync),
    progress: &Progress,
) -> crate::error::Result<Search> {
    let limit = limit.max(1);
    // Every trajectory: a position in `all` is the trajectory itself.
    let all: Vec<usize> = (0..set.trajectories.len()).collect();
    let files = set.in_files(
        &all,
        |trajs, running| search_file(set, trajs, re, limit, &|| wanted() && running(), progress),
        // The files done in order hold `limit` hits: those after are not needed.
        |done| done.iter().map(|f| f.hits.len()).sum::<usize>() >= limit,
    );
    let mut out = Search::default();
    for f in files {
        // A file not read, or stopped, lies past the files that hold
        // `limit` hits — unless the search is no longer wanted.
        let f = f.ok_or(crate::error::Error::Cancelled)??;
        let room = limit - out.hits.len();
        if f.hits.len() >= room {
            // This file brings the search to its limit: it stops at the
            // trajectory of the last hit kept.
            out.read += f.read_at[room - 1];
            let kept = &f.hits[..room];
            out.matching += 1 + kept.windows(2).filter(|w| w[0].traj != w[1].traj).count();
            out.hits.extend(f.hits.into_iter().take(room));
            out.truncated = out.read < set.trajectories.len();
            return Ok(out);
        }
        out.read += f.read;
        out.matching += f.matching;
        out.hits.extend(f.hits);
    }
    Ok(out)
}

/// Whether each of `trajs` has an action matching each pattern:
/// `[pattern][k]` for `trajs[k]`, their records re-read file by file, a
/// file per core at once ([`LogSet::in_files`]).
pub fn matching(
    set: &LogSet,
    trajs: &[usize],
    patterns: &[regex::Regex],
) -> crate::error::Result<Vec<Vec<bool>>> {
    let files = set.in_files(
        trajs,
        |ks, _| {
            let here: Vec<usize> = ks.iter().map(|&k| trajs[k]).collect();
            let mut hit = vec![vec![false; ks.len()]; patterns.len()];
            set.visit_step_texts(&here, false, &|| true, &mut |j, steps| {
                for (p, re) in patterns.iter().enumerate() {
                    hit[p][j] = steps.iter().flat_map(|[a, _]| a).any(|a| re.is_match(a));
                }
                true
            })?;
            Ok((ks.to_vec(), hit))
        },
        |_| false,
    );
    let mut hit = vec![vec![false; trajs.len()]; patterns.len()];
    for f in files {
        let (ks, here) = f.ok_or(crate::error::Error::Cancelled)??;
        for (all, here) in hit.iter_mut().zip(here) {
            for (&k, h) in ks.iter().zip(here) {
                all[k] = h;
            }
        }
    }
    Ok(hit)
}
