//! `report.json` in the SPEC §3.1 layout (schema version 1).

use serde_json::{json, Map, Value};

use crate::analysis::stats::{Ci, Estimate};
use crate::analysis::Audit;
use crate::schema::LogSet;

pub const SCHEMA_VERSION: u64 = 1;

/// A finite number, else null.
pub fn num(x: f64) -> Value {
    serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number)
}

pub fn opt(x: Option<f64>) -> Value {
    x.map_or(Value::Null, num)
}

/// Writes `<key>` (and `<key>_degenerate` when every resample agreed).
pub fn put_ci(obj: &mut Map<String, Value>, key: &str, ci: Ci) {
    match ci {
        Ci::Interval(l, h) => {
            obj.insert(key.into(), json!([num(l), num(h)]));
        }
        Ci::Degenerate => {
            obj.insert(key.into(), Value::Null);
            obj.insert(format!("{key}_degenerate"), Value::Bool(true));
        }
        Ci::Undefined => {
            obj.insert(key.into(), Value::Null);
        }
    }
}

/// `{"value", "ci"}`.
pub fn estimate(e: &Estimate) -> Value {
    let mut m = Map::new();
    m.insert("value".into(), num(e.value));
    put_ci(&mut m, "ci", e.ci);
    Value::Object(m)
}

fn object(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

pub fn report(set: &LogSet, audit: &Audit) -> Value {
    let s = &audit.settings;
    let mut skipped = Map::new();
    for (k, v) in &set.skipped {
        skipped.insert((*k).into(), json!(v));
    }
    let records: Map<String, Value> = set
        .record_counts()
        .into_iter()
        .map(|(k, v)| (k.to_string(), json!(v)))
        .collect();
    let p = &audit.pass;
    let pass_at_kt: Vec<Value> = p
        .cells
        .iter()
        .map(|c| {
            let mut m = object(json!({
                "benchmark": c.benchmark, "run": c.run, "k": c.k, "level": c.level,
                "t_mode": c.mode.name(), "value": opt(c.value), "pass_all": opt(c.pass_all),
                "tasks": c.tasks, "tasks_left_out": c.tasks_left_out,
            }));
            put_ci(&mut m, "ci", c.ci);
            Value::Object(m)
        })
        .collect();
    let pass_curve: Vec<Value> = p
        .curve
        .iter()
        .map(|c| json!({"benchmark": c.benchmark, "run": c.run, "k": c.k, "t": c.t, "value": opt(c.value)}))
        .collect();
    let token_budget: Vec<Value> = p
        .token
        .iter()
        .map(|c| {
            let mut m = object(json!({
                "benchmark": c.benchmark, "run": c.run, "k": c.k, "tokens": c.tokens,
                "value": opt(c.value), "tasks": c.tasks, "tasks_left_out": c.tasks_left_out,
            }));
            put_ci(&mut m, "ci", c.ci);
            Value::Object(m)
        })
        .collect();
    let upper_bound: Vec<Value> = p
        .upper
        .iter()
        .map(|u| json!({"benchmark": u.benchmark, "level": u.level, "value": num(u.value), "kind": u.kind, "tasks": u.tasks}))
        .collect();
    let upper_bound_curve: Vec<Value> = p
        .upper_curve
        .iter()
        .map(|u| json!({"benchmark": u.benchmark, "t": u.t, "value": num(u.value), "kind": u.kind}))
        .collect();
    let advantage: Vec<Value> = p
        .advantage
        .iter()
        .map(|a| {
            let mut m = object(json!({
                "benchmark": a.benchmark, "base": a.base, "rl": a.rl, "k": a.k, "level": a.level,
                "t_mode": a.mode.name(), "tasks": a.tasks, "delta": num(a.delta),
                "flip": a.flip, "significant_flip": a.significant_flip, "headroom": opt(a.headroom),
            }));
            put_ci(&mut m, "ci", a.ci);
            Value::Object(m)
        })
        .collect();
    let mode_gap: Vec<Value> = p
        .mode_gap
        .iter()
        .map(|g| {
            let mut m = object(json!({
                "benchmark": g.benchmark, "run": g.run, "k": g.k, "level": g.level,
                "tasks": g.tasks, "diff": num(g.diff),
            }));
            put_ci(&mut m, "ci", g.ci);
            Value::Object(m)
        })
        .collect();
    let pairs: Vec<Value> = audit
        .pairs
        .iter()
        .map(|p| json!({"benchmark": p.benchmark, "base": p.base, "rl": p.rl}))
        .collect();
    let token_budgets: Map<String, Value> = p
        .token_budgets
        .iter()
        .map(|(b, x)| (b.clone(), json!(x)))
        .collect();
    let mut out = Map::new();
    out.insert("schema_version".into(), json!(SCHEMA_VERSION));
    out.insert(
        "tool".into(),
        json!({"name": "rl-audit", "version": env!("CARGO_PKG_VERSION")}),
    );
    out.insert(
        "inputs".into(),
        json!({
            "files": set.files, "records": records, "skipped": skipped,
            "unknown_kinds": set.unknown_kinds, "ignored_files": set.ignored_files,
        }),
    );
    out.insert(
        "settings".into(),
        json!({
            "levels": s.levels, "ks": p.ks,
            "bootstrap": {"resamples": s.boot.resamples, "seed": s.boot.seed, "method": s.boot.method.name()},
            "gamma": num(s.gamma), "cost": {"turn": num(s.cost.turn), "token": num(s.cost.token)},
            "balance": s.balance, "pairs": pairs, "token_budgets": token_budgets,
        }),
    );
    out.insert("pass_at_kt".into(), Value::Array(pass_at_kt));
    out.insert("pass_curve".into(), Value::Array(pass_curve));
    out.insert("token_budget".into(), Value::Array(token_budget));
    out.insert("upper_bound".into(), Value::Array(upper_bound));
    out.insert("upper_bound_curve".into(), Value::Array(upper_bound_curve));
    out.insert("advantage".into(), Value::Array(advantage));
    out.insert("mode_gap".into(), Value::Array(mode_gap));
    let (dynamics, divergence) = dynamics(audit);
    let (frontier, winners) = cost(audit);
    out.insert("matched_states".into(), Value::Array(matched_states(audit)));
    out.insert("error_recovery".into(), Value::Array(error_recovery(audit)));
    out.insert("likelihood".into(), Value::Array(likelihood(audit)));
    out.insert("dynamics".into(), Value::Array(dynamics));
    out.insert("divergence".into(), Value::Array(divergence));
    out.insert("cost_frontier".into(), Value::Array(frontier));
    out.insert("cost_winners".into(), Value::Array(winners));
    out.insert("budgetmix".into(), Value::Array(budgetmix(audit)));
    out.insert("notes".into(), json!(audit.notes));
    // Beyond SPEC §3.1: the headline, as in the workbench's Overview.
    let findings: Vec<Value> = super::findings::findings(audit)
        .into_iter()
        .map(|f| {
            json!({"kind": f.kind, "where": f.place, "detail": f.detail,
                   "severity": f.severity.name()})
        })
        .collect();
    out.insert("findings".into(), Value::Array(findings));
    Value::Object(out)
}

fn wilson_ci(ci: Option<(f64, f64)>) -> Value {
    ci.map_or(Value::Null, |(l, h)| json!([num(l), num(h)]))
}

fn opt_estimate(e: &Option<Estimate>) -> Value {
    match e {
        Some(e) => estimate(e),
        None => json!({"value": null, "ci": null}),
    }
}

/// `{run: {"value", "ci"}}` for the runs that have the figure.
fn per_run(names: [&str; 2], e: &[Option<Estimate>; 2]) -> Value {
    let mut m = Map::new();
    for (name, est) in names.iter().zip(e) {
        if let Some(est) = est {
            m.insert(name.to_string(), estimate(est));
        }
    }
    Value::Object(m)
}

fn per_run_point(names: [&str; 2], v: &[Option<f64>; 2]) -> Value {
    let mut m = Map::new();
    for (name, x) in names.iter().zip(v) {
        if let Some(x) = x {
            m.insert(name.to_string(), num(*x));
        }
    }
    Value::Object(m)
}

fn with_ci(mut base: Map<String, Value>, value_key: &str, e: &Option<Estimate>) -> Value {
    match e {
        Some(e) => {
            base.insert(value_key.into(), num(e.value));
            put_ci(&mut base, "ci", e.ci);
        }
        None => {
            base.insert(value_key.into(), Value::Null);
            base.insert("ci".into(), Value::Null);
        }
    }
    Value::Object(base)
}

pub fn matched_states(audit: &Audit) -> Vec<Value> {
    audit
        .matched
        .iter()
        .map(|m| {
            let half = |h: &crate::analysis::matched::Half| {
                with_ci(
                    object(json!({"states": h.states, "better": opt(h.better)})),
                    "mean_diff",
                    &h.mean_diff,
                )
            };
            let base = object(json!({
                "benchmark": m.benchmark, "base": m.base, "rl": m.rl, "states": m.states,
                "states_by_source": m.states_by_source,
                "better": opt(m.better), "tie": opt(m.tie), "worse": opt(m.worse),
                "shares_ci": {"better": wilson_ci(m.shares_ci[0]), "tie": wilson_ci(m.shares_ci[1]), "worse": wilson_ci(m.shares_ci[2])},
                "by_turn": m.by_turn.iter().map(|t| json!({"turn": t.turn, "states": t.states, "better": opt(t.better), "mean_diff": opt(t.mean_diff)})).collect::<Vec<_>>(),
                "median_turn": opt(m.median_turn),
                "early": half(&m.early), "late": half(&m.late), "unscored_states": m.unscored,
            }));
            with_ci(base, "mean_diff", &m.mean_diff)
        })
        .collect()
}

pub fn error_recovery(audit: &Audit) -> Vec<Value> {
    audit
        .recovery
        .iter()
        .map(|r| {
            let names = [r.base.as_str(), r.rl.as_str()];
            let bd = |b: &crate::analysis::recovery::Breakdown, key: &str| {
                let mut m = object(json!({
                    "states": b.states, "better": opt(b.better),
                    "correction": per_run_point(names, &b.correction),
                    "terminal_success": per_run_point(names, &b.terminal_success),
                }));
                match b.turn {
                    Some(t) => m.insert(key.into(), json!(t)),
                    None => m.insert(key.into(), json!(b.key)),
                };
                Value::Object(m)
            };
            json!({
                "benchmark": r.benchmark, "base": r.base, "rl": r.rl, "states": r.states,
                "scored_states": r.scored,
                "better": opt(r.better), "better_ci": wilson_ci(r.better_ci),
                "correction": per_run(names, &r.correction),
                "terminal_success": per_run(names, &r.terminal_success),
                "correction_diff": opt_estimate(&r.correction_diff),
                "terminal_success_diff": opt_estimate(&r.terminal_success_diff),
                "by_source": r.by_source.iter().map(|b| bd(b, "source")).collect::<Vec<_>>(),
                "by_turn": r.by_turn.iter().map(|b| bd(b, "turn")).collect::<Vec<_>>(),
            })
        })
        .collect()
}

pub fn likelihood(audit: &Audit) -> Vec<Value> {
    use crate::analysis::likelihood::Summary;
    let summ = |names: [&str; 2], s: &[Option<Summary>; 2]| {
        let mut m = Map::new();
        for (n, x) in names.iter().zip(s) {
            if let Some(x) = x {
                m.insert(
                    n.to_string(),
                    json!({"mean": num(x.mean), "median": num(x.median), "n": x.n}),
                );
            }
        }
        Value::Object(m)
    };
    audit
        .likelihood
        .iter()
        .map(|l| {
            let names = [l.base.as_str(), l.rl.as_str()];
            let lm = with_ci(
                object(json!({"tasks": l.length_matched.tasks, "pairs": l.length_matched.pairs})),
                "mean_diff",
                &l.length_matched.mean_diff,
            );
            json!({
                "benchmark": l.benchmark, "base": l.base, "rl": l.rl,
                "step_nll": summ(names, &l.step_nll), "overlap": opt(l.overlap),
                "llr": summ(names, &l.llr), "length_matched": lm,
                "histogram": l.histogram.as_ref().map(|h| json!({
                    "lo": num(h.lo), "hi": num(h.hi), "bins": crate::analysis::likelihood::BINS,
                    "counts": {names[0]: h.counts[0], names[1]: h.counts[1]},
                })),
                "notes": l.notes,
            })
        })
        .collect()
}

pub fn dynamics(audit: &Audit) -> (Vec<Value>, Vec<Value>) {
    let d = audit
        .dynamics
        .iter()
        .map(|t| {
            json!({
                "run": t.run, "metric": t.metric, "checkpoints": t.checkpoints,
                "first": num(t.first), "last": num(t.last), "change": num(t.change),
                "slope": opt(t.slope), "slope_ci": wilson_ci(t.slope_ci),
            })
        })
        .collect();
    let v = audit
        .divergence
        .iter()
        .map(|d| json!({"run": d.run, "divergent": d.divergent, "has_metrics": d.has_metrics}))
        .collect();
    (d, v)
}

pub fn cost(audit: &Audit) -> (Vec<Value>, Vec<Value>) {
    let f = audit
        .cost_frontier
        .iter()
        .map(|p| {
            json!({
                "benchmark": p.benchmark, "run": p.run, "k": p.k, "level": p.level,
                "t_mode": p.mode.name(), "pass": num(p.pass), "cost": num(p.cost), "on_frontier": p.on_frontier,
            })
        })
        .collect();
    let w = audit
        .cost_winners
        .iter()
        .map(|w| {
            json!({
                "benchmark": w.benchmark, "from_cost": num(w.from_cost), "to_cost": opt(w.to_cost),
                "run": w.run, "k": w.k, "level": w.level, "t_mode": w.mode.name(), "pass": num(w.pass),
            })
        })
        .collect();
    (f, w)
}

pub fn budgetmix(audit: &Audit) -> Vec<Value> {
    audit
        .budgetmix
        .iter()
        .map(|b| {
            json!({
                "run": b.run,
                "rules": b.rules.iter().map(|r| json!({
                    "rule": r.rule, "checked": r.checked, "violations": r.violations,
                    "rate": opt(r.rate()), "p_value": opt(r.p_value), "examples": r.examples,
                })).collect::<Vec<_>>(),
                "gains": b.gains.iter().map(|g| json!({
                    "benchmark": g.benchmark, "level": g.level, "gain": num(g.gain), "vs": g.vs, "modes": g.modes,
                })).collect::<Vec<_>>(),
                "mean_gain": b.mean_gain.iter().map(|(l, g)| json!({"level": l, "gain": num(*g)})).collect::<Vec<_>>(),
                "notes": b.notes,
            })
        })
        .collect()
}
