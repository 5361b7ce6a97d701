//! `--headless --tour`: report.md opens with the guided tour, and every
//! number a step quotes is report.json's, read here from report.json by
//! the names SPEC §3.1 gives them (not from the program's own structs).

mod common;
use common::*;

use regex::Regex;
use serde_json::Value;

/// `printed` is `v` × `scale` rounded to `decimals`, as the tour prints it.
fn same(printed: &str, v: &Value, scale: f64, decimals: usize) {
    let x = v.as_f64().unwrap_or_else(|| panic!("{v} is not a number"));
    let want = format!("{:.decimals$}", x * scale);
    let got = printed.trim_start_matches('+');
    let want = want.trim_start_matches('+');
    // -0.0 prints as "-0.0" in Rust: compare the numbers, not the signs of 0.
    assert!(
        got == want || got.parse::<f64>().ok() == want.parse::<f64>().ok(),
        "printed {printed}, report.json has {x} (→ {want})"
    );
}

fn caps<'a>(re: &str, text: &'a str) -> regex::Captures<'a> {
    Regex::new(re)
        .unwrap()
        .captures(text)
        .unwrap_or_else(|| panic!("{re:?} does not match:\n{text}"))
}

fn find<'a>(rows: &'a Value, keys: &[(&str, Value)]) -> &'a Value {
    rows.as_array()
        .unwrap()
        .iter()
        .find(|r| keys.iter().all(|(k, v)| &r[*k] == v))
        .unwrap_or_else(|| panic!("no row with {keys:?}"))
}

/// The advantage row of a (base, rl) pair at K, level and mode, as printed.
fn advantage<'a>(r: &'a Value, pair: (&str, &str), k: &str, level: &str, mode: &str) -> &'a Value {
    find(
        &r["advantage"],
        &[
            ("base", pair.0.into()),
            ("rl", pair.1.into()),
            ("k", k.parse::<u64>().unwrap().into()),
            ("level", level.parse::<u64>().unwrap().into()),
            ("t_mode", mode.into()),
        ],
    )
}

/// A printed Δ and its interval, in points.
fn same_delta(row: &Value, printed: [&str; 3]) {
    same(printed[0], &row["delta"], 100.0, 1);
    same(printed[1], &row["ci"][0], 100.0, 1);
    same(printed[2], &row["ci"][1], 100.0, 1);
}

#[test]
fn the_tour_preface_quotes_report_json() {
    let d = temp_dir("tour_headless");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_rl-audit"))
        .args(["--headless", "--tour", "--resamples", "200", "--out"])
        .arg(&d)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let md = std::fs::read_to_string(d.join("report.md")).unwrap();
    let r: Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("report.json")).unwrap()).unwrap();
    assert!(md.starts_with("# rl-audit report\n\n## A guided tour of this report\n"));
    let tour = &md[..md.find("## Headline findings").expect("the report follows")];
    let step = |n: usize| -> String {
        let start = tour
            .find(&format!("### {n}. "))
            .unwrap_or_else(|| panic!("no step {n}"));
        let rest = &tour[start..];
        let end = rest[4..].find("### ").map_or(rest.len(), |e| e + 4);
        rest[..end].to_string()
    };
    assert!(tour.contains("### 10. The cost frontier"));
    let num = r"([+-]?\d+\.\d+)";

    // 1. The grid: Δ, its CI, both Pass values and n at K=1, 100%.
    let s = step(1);
    let c = caps(
        &format!(
            r"Here (\S+) is (?:ahead of|behind) (\S+) by {num} pp at (\d+)% \(K=(\d+), (\w+): {num}% → {num}%, 95% CI \[{num}, {num}\], n=(\d+) tasks\)"
        ),
        &s,
    );
    let row = advantage(&r, (&c[2], &c[1]), &c[5], &c[4], &c[6]);
    same_delta(row, [&c[3], &c[9], &c[10]]);
    assert_eq!(c[11].parse::<u64>().unwrap(), row["tasks"]);
    let pass = |run: &str, v: &str| {
        let p = find(
            &r["pass_at_kt"],
            &[
                ("run", run.into()),
                ("k", row["k"].clone()),
                ("level", row["level"].clone()),
                ("t_mode", row["t_mode"].clone()),
            ],
        );
        same(v, &p["value"], 100.0, 1);
    };
    pass(&c[2], &c[7]);
    pass(&c[1], &c[8]);
    let (base, rl) = (c[2].to_string(), c[1].to_string());

    // 2. The bound and the headroom at the tightest level.
    let s = step(2);
    let c = caps(
        &format!(
            r"At (\d+)% the bound U\(T\) is {num}% \(n=(\d+) tasks\).*the headroom is {num} pp"
        ),
        &s,
    );
    let level: u64 = c[1].parse().unwrap();
    let u = find(&r["upper_bound"], &[("level", level.into())]);
    same(&c[2], &u["value"], 100.0, 1);
    assert_eq!(c[3].parse::<u64>().unwrap(), u["tasks"]);
    let adv = r["advantage"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["base"] == base.as_str() && a["rl"] == rl.as_str())
        .filter(|a| a["k"] == 1 && a["level"] == level)
        // The preferred mode: native where it exists.
        .min_by_key(|a| a["t_mode"] != "native")
        .unwrap();
    same(&c[4], &adv["headroom"], 100.0, 1);

    // 3. The flip step's cell: Δ, its CI, p and the adjusted p.
    let s = step(3);
    let c = caps(
        &format!(
            r"(\S+) → (\S+) at K=(\d+), (\d+)% \((\w+)\): Δ {num} pp \[{num}, {num}\], n=(\d+) tasks\. Alone it has p ≤?{num}; adjusted over the pair's (\d+) cells \((\w+)\) p is ≤?{num}"
        ),
        &s,
    );
    let row = advantage(&r, (&c[1], &c[2]), &c[3], &c[4], &c[5]);
    same_delta(row, [&c[6], &c[7], &c[8]]);
    same(&c[10], &row["p_value"], 1.0, 4);
    same(&c[13], &row["p_adjusted"], 1.0, 4);
    let family = r["advantage"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["base"] == row["base"] && a["rl"] == row["rl"] && !a["p_value"].is_null())
        .count();
    assert_eq!(c[11].parse::<usize>().unwrap(), family);
    // `≤` where a p sits at the floor the resamples allow: 2/(B+1) alone
    // (every cell of the demo has a replicate in each resample), and the
    // row's `p_adjusted_floor` adjusted.
    let b = r["settings"]["bootstrap"]["resamples"].as_f64().unwrap();
    assert_eq!(
        s.contains("Alone it has p ≤"),
        row["p_value"].as_f64() == Some(2.0 / (b + 1.0))
    );
    assert_eq!(
        s.contains(") p is ≤"),
        row["p_adjusted"] == row["p_adjusted_floor"]
    );
    // The demo has no negative cell: the step shows what adjustment does
    // to a cell significant alone.
    assert!(row["p_value"].as_f64().unwrap() < 0.05);
    assert!(row["p_adjusted"].as_f64().unwrap() >= 0.05);

    // 4. The mode gap of the RL run with the largest one at the tightest level.
    let s = step(4);
    let c = caps(
        &format!(
            r"(\S+) at (\d+)%, K=(\d+): natively \(run with budget T\) it passes {num}%; .* native − truncated is {num} pp \[{num}, {num}\] over n=(\d+) tasks"
        ),
        &s,
    );
    let g = find(
        &r["mode_gap"],
        &[
            ("run", c[1].into()),
            ("level", c[2].parse::<u64>().unwrap().into()),
            ("k", c[3].parse::<u64>().unwrap().into()),
        ],
    );
    same(&c[5], &g["diff"], 100.0, 1);
    same(&c[6], &g["ci"][0], 100.0, 1);
    same(&c[7], &g["ci"][1], 100.0, 1);
    assert_eq!(c[8].parse::<u64>().unwrap(), g["tasks"]);
    let largest = r["mode_gap"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["level"] == g["level"] && x["k"] == 1 && x["run"] != base.as_str())
        .map(|x| x["diff"].as_f64().unwrap().abs())
        .fold(0.0, f64::max);
    assert_eq!(g["diff"].as_f64().unwrap().abs(), largest);
    let native = find(
        &r["pass_at_kt"],
        &[
            ("run", c[1].into()),
            ("k", 1.into()),
            ("level", g["level"].clone()),
            ("t_mode", "native".into()),
        ],
    );
    same(&c[4], &native["value"], 100.0, 1);

    // 5. Matched states of the followed pair.
    let s = step(5);
    let c = caps(
        &format!(
            r"On (\d+) matched states, (\S+)'s next action scores higher than (\S+)'s in {num}% of them, ties in {num}% and is worse in {num}%; mean score difference {num}"
        ),
        &s,
    );
    let m = find(
        &r["matched_states"],
        &[("base", c[3].into()), ("rl", c[2].into())],
    );
    assert_eq!(c[1].parse::<u64>().unwrap(), m["states"]);
    same(&c[4], &m["better"], 100.0, 1);
    same(&c[5], &m["tie"], 100.0, 1);
    same(&c[6], &m["worse"], 100.0, 1);
    same(&c[7], &m["mean_diff"], 1.0, 4);

    // 6. Error recovery of the same pair.
    let s = step(6);
    let c = caps(
        &format!(
            r"On (\d+) error states, (\S+) picks the better action in {num}% of them; terminal success {num}% \((\S+)\) vs {num}% \((\S+)\), correction {num}% vs {num}%"
        ),
        &s,
    );
    let e = find(
        &r["error_recovery"],
        &[("base", c[5].into()), ("rl", c[2].into())],
    );
    assert_eq!(c[1].parse::<u64>().unwrap(), e["states"]);
    same(&c[3], &e["better"], 100.0, 1);
    same(&c[4], &e["terminal_success"][&c[5]]["value"], 100.0, 1);
    same(&c[6], &e["terminal_success"][&c[7]]["value"], 100.0, 1);
    same(&c[8], &e["correction"][&c[5]]["value"], 100.0, 1);
    same(&c[9], &e["correction"][&c[2]]["value"], 100.0, 1);

    // 7. Likelihood: step NLL means, LLR means, the length-matched d.
    let s = step(7);
    let c = caps(
        &format!(
            r"base's NLL of (\S+)'s actions is {num} against {num} for its own \(overlap {num}\); summed over a successful trajectory the LLR is {num} for \S+'s trajectories and {num} for (\S+)'s\. Length-matched \((\d+) pairs over (\d+) tasks\): d {num} \[{num}, {num}\]"
        ),
        &s,
    );
    let l = find(
        &r["likelihood"],
        &[("base", c[7].into()), ("rl", c[1].into())],
    );
    same(&c[2], &l["step_nll"][&c[1]]["mean"], 1.0, 2);
    same(&c[3], &l["step_nll"][&c[7]]["mean"], 1.0, 2);
    same(&c[4], &l["overlap"], 1.0, 3);
    same(&c[5], &l["llr"][&c[1]]["mean"], 1.0, 2);
    same(&c[6], &l["llr"][&c[7]]["mean"], 1.0, 2);
    let lm = &l["length_matched"];
    assert_eq!(c[8].parse::<u64>().unwrap(), lm["pairs"]);
    assert_eq!(c[9].parse::<u64>().unwrap(), lm["tasks"]);
    same(&c[10], &lm["mean_diff"], 1.0, 2);
    same(&c[11], &lm["ci"][0], 1.0, 2);
    same(&c[12], &lm["ci"][1], 1.0, 2);

    // 8. Training: the run whose r_multi changed most.
    let s = step(8);
    let c = caps(
        &format!(
            r"(\S+): r_multi went from {num} to {num} over (\d+) checkpoints \(change {num}\), r_single from {num} to {num} \(change {num}\)"
        ),
        &s,
    );
    let t = find(
        &r["dynamics"],
        &[("run", c[1].into()), ("metric", "r_multi".into())],
    );
    same(&c[2], &t["first"], 1.0, 4);
    same(&c[3], &t["last"], 1.0, 4);
    assert_eq!(c[4].parse::<u64>().unwrap(), t["checkpoints"]);
    same(&c[5], &t["change"], 1.0, 4);
    let most = r["dynamics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["metric"] == "r_multi")
        .map(|x| x["change"].as_f64().unwrap().abs())
        .fold(0.0, f64::max);
    assert_eq!(t["change"].as_f64().unwrap().abs(), most);
    let t = find(
        &r["dynamics"],
        &[("run", c[1].into()), ("metric", "r_single".into())],
    );
    same(&c[6], &t["first"], 1.0, 4);
    same(&c[7], &t["last"], 1.0, 4);
    same(&c[8], &t["change"], 1.0, 4);

    // 9. BudgetMix: rollouts checked, gains at the tightest and full budget.
    let s = step(9);
    let c = caps(
        &format!(
            r"(\S+)'s (\d+) training rollouts keep all six rules\. Against (\S+), Pass@\(1,T\) gains {num} pp at (\d+)% and {num} pp at (\d+)%"
        ),
        &s,
    );
    let b = find(&r["budgetmix"], &[("run", c[1].into())]);
    let first = &b["rules"].as_array().unwrap()[0];
    assert_eq!(c[2].parse::<u64>().unwrap(), first["checked"]);
    for (v, l) in [(&c[4], &c[5]), (&c[6], &c[7])] {
        let g = find(
            &b["gains"],
            &[
                ("level", l.parse::<u64>().unwrap().into()),
                ("vs", c[3].into()),
            ],
        );
        same(v, &g["gain"], 100.0, 1);
    }

    // 10. The cost frontier's last winner.
    let s = step(10);
    let c = caps(
        &format!(
            r"the best buy is (\S+) at K=(\d+), (\d+)% \((\w+)\): Pass {num}% at an expected cost of {num} per task"
        ),
        &s,
    );
    let w = r["cost_winners"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["to_cost"].is_null())
        .unwrap();
    assert_eq!(w["run"], &c[1]);
    assert_eq!(c[2].parse::<u64>().unwrap(), w["k"]);
    assert_eq!(c[3].parse::<u64>().unwrap(), w["level"]);
    assert_eq!(w["t_mode"], &c[4]);
    same(&c[5], &w["pass"], 100.0, 1);
    same(&c[6], &w["from_cost"], 1.0, 2);

    // Without --tour the report has no preface.
    let plain = temp_dir("tour_none");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_rl-audit"))
        .args(["--headless", "--resamples", "200", "--out"])
        .arg(&plain)
        .output()
        .unwrap();
    assert!(o.status.success());
    let md2 = std::fs::read_to_string(plain.join("report.md")).unwrap();
    assert!(!md2.contains("guided tour"));
    // The rest of the report is the same.
    assert_eq!(
        &md[md.find("## Headline findings").unwrap()..],
        &md2[md2.find("## Headline findings").unwrap()..]
    );
}

/// README's "The demo" paragraph quotes the demo's own figures: each quoted
/// phrase is rebuilt here from report.json (point estimates; intervals
/// depend on the resample count and are not checked).
#[test]
fn the_readme_demo_paragraph_matches_the_demo() {
    let d = temp_dir("tour_readme");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_rl-audit"))
        .args(["--headless", "--resamples", "200", "--out"])
        .arg(&d)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r: Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("report.json")).unwrap()).unwrap();
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let start = readme.find("## The demo\n").expect("a demo section");
    let end = start
        + readme[start..]
            .find("\n## Speed")
            .expect("the next section");
    let text = Regex::new(r"\s+")
        .unwrap()
        .replace_all(&readme[start..end], " ")
        .to_string();
    let pct = |v: &Value| format!("{:.1}%", 100.0 * v.as_f64().unwrap());
    let pp = |v: &Value| format!("{:+.1} pp", 100.0 * v.as_f64().unwrap());
    let adv = |rl: &str, level: u64| {
        find(
            &r["advantage"],
            &[
                ("rl", rl.into()),
                ("k", 1.into()),
                ("level", level.into()),
                ("t_mode", "native".into()),
            ],
        )
        .clone()
    };
    let full = adv("fl-grpo", 100);
    let tight = adv("fl-grpo", 25);
    let pass = |run: &str, level: u64| {
        pct(&find(
            &r["pass_at_kt"],
            &[
                ("run", run.into()),
                ("k", 1.into()),
                ("level", level.into()),
                ("t_mode", "native".into()),
            ],
        )["value"])
    };
    let gains = &find(&r["budgetmix"], &[("run", "fl-budgetmix".into())])["gains"];
    let gain = |l: u64| find(gains, &[("level", l.into())])["gain"].clone();
    let gap = find(
        &r["mode_gap"],
        &[
            ("run", "fl-budgetmix".into()),
            ("k", 1.into()),
            ("level", 25.into()),
        ],
    );
    let m = find(&r["matched_states"], &[("rl", "fl-grpo".into())]);
    let e = find(&r["error_recovery"], &[("rl", "fl-grpo".into())]);
    let l = find(&r["likelihood"], &[("rl", "fl-grpo".into())]);
    let rules = &find(&r["budgetmix"], &[("run", "fl-budgetmix".into())])["rules"];
    let phrases = vec![
        format!("by {}", pp(&full["delta"])),
        format!(
            "({} → {}, 48 tasks",
            pass("fl-base", 100),
            pass("fl-grpo", 100)
        ),
        format!(
            "only {} at 25% ({} → {}",
            pp(&tight["delta"]),
            pass("fl-base", 25),
            pass("fl-grpo", 25)
        ),
        format!("gains {} over GRPO at Pass@(1,25%)", pp(&gain(25))),
        format!(
            "loses {:.1} pp at 100%",
            -100.0 * gain(100).as_f64().unwrap()
        ),
        format!("{:.1} pp", 100.0 * gap["diff"].as_f64().unwrap()),
        format!(
            "better on {} of matched states (mean Q* difference {:+.4})",
            pct(&m["better"]),
            m["mean_diff"].as_f64().unwrap()
        ),
        format!(
            "on {} of error states (terminal success {} → {})",
            pct(&e["better"]),
            pct(&e["terminal_success"]["fl-base"]["value"]),
            pct(&e["terminal_success"]["fl-grpo"]["value"])
        ),
        format!(
            "{:.2} (base) vs {:.2} (GRPO), overlap {:.3}",
            l["step_nll"]["fl-base"]["mean"].as_f64().unwrap(),
            l["step_nll"]["fl-grpo"]["mean"].as_f64().unwrap(),
            l["overlap"].as_f64().unwrap()
        ),
        format!(
            "LLR difference {:+.2} [",
            l["length_matched"]["mean_diff"].as_f64().unwrap()
        ),
        format!(
            "over {} pairs in {} tasks",
            l["length_matched"]["pairs"], l["length_matched"]["tasks"]
        ),
        format!("on its {} training rollouts", rules[0]["checked"]),
        format!(
            "U(25%) = {}",
            pct(&find(&r["upper_bound"], &[("level", 25.into())])["value"])
        ),
    ];
    for p in phrases {
        assert!(text.contains(&p), "README's demo section lacks {p:?}");
    }
    assert!(r["divergence"]
        .as_array()
        .unwrap()
        .iter()
        .all(|d| d["divergent"] == false));
    assert!(text.contains("no run is divergent"));
}
