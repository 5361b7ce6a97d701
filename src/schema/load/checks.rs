//! The checks that span records, in file order: one method per run, one
//! `max_budget`, `min_turns` and category per task, seeds given for all of a
//! run's evaluation rollouts or none, and no duplicate trajectories.

use super::*;
use crate::schema::Trajectory;
/// The trajectories that share their duplicate key with another: each
/// one's group (the first of them in the list). Found by sorting the keys'
/// hashes on every core, then comparing the keys of equal hashes — where a
/// table of every trajectory, probed in file order, missed the cache at
/// every probe (6.5 s of one core at 11 M trajectories).
fn same_keys<K: Eq + std::hash::Hash + Send>(
    trajectories: &[Trajectory],
    key_of: impl Fn(&Trajectory) -> Option<K> + Sync,
) -> FastMap<u32, u32> {
    use rayon::prelude::*;
    use std::hash::BuildHasher;
    let hasher = foldhash::fast::FixedState::default();
    let mut hashes: Vec<(u64, u32)> = trajectories
        .par_iter()
        .enumerate()
        .filter_map(|(i, t)| key_of(t).map(|k| (hasher.hash_one(k), i as u32)))
        .collect();
    hashes.par_sort_unstable();
    let mut groups: FastMap<u32, u32> = FastMap::default();
    for run in hashes.chunk_by(|a, b| a.0 == b.0).filter(|r| r.len() > 1) {
        // In list order: each joins the first earlier one with its key.
        let key = |j: u32| key_of(&trajectories[j as usize]);
        for (n, &(_, i)) in run.iter().enumerate() {
            let k = key(i);
            if let Some(&(_, j)) = run[..n].iter().find(|&&(_, j)| key(j) == k) {
                let g = groups.get(&j).copied().unwrap_or(j);
                groups.insert(j, g);
                groups.insert(i, g);
            }
        }
    }
    groups
}

/// Checks that span records, in file order: one method per run, one explicit
/// `max_budget` and `min_turns` per task, no duplicate trajectories. In strict
/// mode returns the first violation before `limit`; in lenient mode drops the
/// offending records and counts them.
///
/// The duplicates are found beside the other checks (their keys' hashes
/// sorted on the pool while one thread walks the records: 1 M trajectories,
/// 0.10 s where one after the other took 0.14 s) and judged after them: a
/// record is checked for a twin only once it has passed the others, as when
/// every check ran record by record.
pub(super) fn cross_checks(
    set: &mut LogSet,
    lenient: bool,
    limit: Option<Loc>,
) -> Option<(Loc, RecordError)> {
    type DupKey = (Id, Id, Id, u32, i64, Option<i64>, Option<Id>, Option<Id>);
    // Duplicates: each key's first trajectory, found by the key's hash.
    let dup_key_of = |t: &crate::schema::Trajectory| -> Option<DupKey> {
        t.sample().map(|s| {
            (
                t.run,
                t.benchmark,
                t.task,
                t.budget,
                s,
                t.train_step(),
                t.group(),
                t.seed(),
            )
        })
    };
    let (twins, ordered) = rayon::join(
        || same_keys(&set.trajectories, dup_key_of),
        || ordered_checks(set, lenient, limit),
    );
    let Ordered {
        first_error,
        methods,
        drop_decl,
        mut drop_traj,
        skipped,
    } = ordered;
    for (reason, n) in skipped {
        *set.skipped.entry(reason).or_default() += n;
    }
    // Twins in file order: each group's first record that passed the other
    // checks is kept, the later ones are duplicates. Strict: only records
    // before the first other violation (and `limit`) reached this check.
    let stop = match &first_error {
        _ if lenient => None,
        Some((l, _)) => Some(*l),
        None => limit,
    };
    let mut members: Vec<(u32, u32)> = twins.into_iter().collect();
    members.sort_unstable();
    let mut first_of: FastMap<u32, u32> = FastMap::default();
    for (i, g) in members {
        let t = &set.trajectories[i as usize];
        if stop.is_some_and(|s| t.loc >= s) {
            break;
        }
        if drop_traj[i as usize] {
            continue;
        }
        let Some(&j) = first_of.get(&g) else {
            first_of.insert(g, i);
            continue;
        };
        let prev = set.trajectories[j as usize].loc;
        let e = RecordError::new(SkipReason::Duplicate, "sample", "duplicate trajectory");
        let e = seen_first(set, e, prev);
        if !lenient {
            return Some((t.loc, e));
        }
        *set.skipped.entry(e.reason.name()).or_default() += 1;
        drop_traj[i as usize] = true;
    }
    // (Lenient: none, the violations dropped.)
    if let Some(first) = first_error {
        return Some(first);
    }
    if lenient {
        let mut i = 0;
        set.trajectories.retain(|_| {
            i += 1;
            !drop_traj[i - 1]
        });
        let mut i = 0;
        set.run_decls.retain(|_| {
            i += 1;
            !drop_decl[i - 1]
        });
    }
    set.run_methods = methods
        .into_iter()
        .map(|(r, (m, _))| (r, m))
        .collect::<BTreeMap<_, _>>();
    for a in &set.aggregates {
        if let Some(m) = a.method {
            set.run_methods.entry(a.run).or_insert(m);
        }
    }
    None
}

/// `e`, naming where the record it contradicts is.
fn seen_first(set: &LogSet, mut e: RecordError, prev: Loc) -> RecordError {
    e.message = format!("{} (first seen at {})", e.message, set.loc_text(prev));
    e
}

/// What [`ordered_checks`] found.
struct Ordered {
    /// Strict: the first violation before the limit.
    first_error: Option<(Loc, RecordError)>,
    /// Each run's method, and where it was first given.
    methods: FastMap<Id, (Id, Loc)>,
    /// Lenient: the records dropped, and how many for each reason.
    drop_decl: Vec<bool>,
    drop_traj: Vec<bool>,
    skipped: BTreeMap<&'static str, u64>,
}

/// [`cross_checks`]' checks but the duplicates, record by record in file
/// order: run declarations and trajectories, each already in file order
/// (`finish` sorts them), merged as they are read — a declaration before a
/// trajectory at the same place. (Not a sorted list of all of them: 32
/// bytes a record, 350 MB at 11 M.)
fn ordered_checks(set: &LogSet, lenient: bool, limit: Option<Loc>) -> Ordered {
    debug_assert!(set.run_decls.is_sorted_by_key(|d| d.loc));
    debug_assert!(set.trajectories.is_sorted_by_key(|t| t.loc));
    let (mut next_decl, mut next_traj) = (0, 0);
    let mut max_budgets: FastMap<(Id, Id), (u32, Loc)> = FastMap::default();
    let mut min_turns: FastMap<(Id, Id), (u32, Loc)> = FastMap::default();
    let mut categories: FastMap<(Id, Id), (Id, Loc)> = FastMap::default();
    // (run, benchmark) → whether its evaluation rollouts carry a seed, and the first one's place.
    let mut seeded: FastMap<(Id, Id), (bool, Loc)> = FastMap::default();
    let mut out = Ordered {
        first_error: None,
        methods: FastMap::default(),
        drop_decl: vec![false; set.run_decls.len()],
        drop_traj: vec![false; set.trajectories.len()],
        skipped: BTreeMap::new(),
    };
    loop {
        let decl = set.run_decls.get(next_decl).map(|d| d.loc);
        let traj = set.trajectories.get(next_traj).map(|t| t.loc);
        let (loc, is_decl, i) = match (decl, traj) {
            (Some(d), t) if t.is_none_or(|t| d <= t) => {
                next_decl += 1;
                (d, true, next_decl - 1)
            }
            (_, Some(t)) => {
                next_traj += 1;
                (t, false, next_traj - 1)
            }
            _ => break,
        };
        if !lenient && limit.is_some_and(|l| loc >= l) {
            break;
        }
        let check = if is_decl {
            let d = &set.run_decls[i];
            check_method(&set.strings, &mut out.methods, d.run, d.method, loc)
        } else {
            let t = &set.trajectories[i];
            let key = (t.benchmark, t.task);
            let mut r = Ok(());
            if let Some(m) = t.method() {
                r = check_method(&set.strings, &mut out.methods, t.run, m, loc);
            }
            if r.is_ok() {
                if let Some(mb) = t.max_budget() {
                    r = check_same(&mut max_budgets, key, mb, loc, "max_budget");
                }
            }
            if r.is_ok() {
                if let Some(mt) = t.min_turns() {
                    r = check_same(&mut min_turns, key, mt, loc, "min_turns");
                }
            }
            if r.is_ok() {
                if let Some(c) = t.category() {
                    r = check_category(&set.strings, &mut categories, key, c, loc);
                }
            }
            if r.is_ok() && !t.is_training() {
                r = check_seeded(
                    &set.strings,
                    &mut seeded,
                    (t.run, t.benchmark),
                    t.seed().is_some(),
                    loc,
                );
            }
            r
        };
        if let Err((prev, e)) = check {
            let e = seen_first(set, e, prev);
            if !lenient {
                out.first_error = Some((loc, e));
                break;
            }
            *out.skipped.entry(e.reason.name()).or_default() += 1;
            if is_decl {
                out.drop_decl[i] = true;
            } else {
                out.drop_traj[i] = true;
            }
        }
    }
    out
}

type Check = std::result::Result<(), (Loc, RecordError)>;

/// The first value given for `key`, and where: a later record giving
/// another is impossible in `field`, `message(first)` saying how, and the
/// error carries the first one's place.
fn first_given<K: Eq + std::hash::Hash, V: Copy + PartialEq>(
    map: &mut FastMap<K, (V, Loc)>,
    key: K,
    v: V,
    loc: Loc,
    field: &str,
    message: impl FnOnce(V) -> String,
) -> Check {
    match map.entry(key) {
        Entry::Occupied(e) if e.get().0 != v => Err((
            e.get().1,
            RecordError::impossible(field, message(e.get().0)),
        )),
        Entry::Occupied(_) => Ok(()),
        Entry::Vacant(e) => {
            e.insert((v, loc));
            Ok(())
        }
    }
}

/// One method per run.
fn check_method(
    strings: &crate::schema::Interner,
    methods: &mut FastMap<Id, (Id, Loc)>,
    run: Id,
    method: Id,
    loc: Loc,
) -> Check {
    first_given(methods, run, method, loc, "method", |first| {
        format!(
            "run {:?} is declared as method {:?} elsewhere, this record says {:?}",
            strings.name(run),
            strings.name(first),
            strings.name(method)
        )
    })
}

/// One category per (benchmark, task) (SPEC §4.3).
fn check_category(
    strings: &crate::schema::Interner,
    map: &mut FastMap<(Id, Id), (Id, Loc)>,
    key: (Id, Id),
    c: Id,
    loc: Loc,
) -> Check {
    first_given(map, key, c, loc, "category", |first| {
        format!(
            "{:?} differs from this task's category {:?} given elsewhere",
            strings.name(c),
            strings.name(first)
        )
    })
}

/// Within one (run, benchmark), either every evaluation rollout carries a
/// `seed` or none does (SPEC §4.3).
fn check_seeded(
    strings: &crate::schema::Interner,
    map: &mut FastMap<(Id, Id), (bool, Loc)>,
    key: (Id, Id),
    has: bool,
    loc: Loc,
) -> Check {
    first_given(map, key, has, loc, "seed", |_| {
        format!(
            "run {:?} on {:?}: some evaluation rollouts carry a seed and some do not",
            strings.name(key.0),
            strings.name(key.1)
        )
    })
}

/// One `field` (`max_budget`, `min_turns`) per (benchmark, task).
fn check_same(
    map: &mut FastMap<(Id, Id), (u32, Loc)>,
    key: (Id, Id),
    v: u32,
    loc: Loc,
    field: &str,
) -> Check {
    first_given(map, key, v, loc, field, |first| {
        format!("{v} differs from this task's {field} {first} given elsewhere")
    })
}
