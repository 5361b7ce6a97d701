//! Headless report files: figures are valid SVG and all referenced, CSV for
//! every table, byte-identical reruns, gates that trip and do not trip.

mod common;
use common::*;
use serde_json::json;

fn demo_report(out: &std::path::Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "--headless",
        "--out",
        out.to_str().unwrap(),
        "--resamples",
        "300",
    ];
    args.extend_from_slice(extra);
    rl_audit(&args)
}

#[test]
fn demo_report_has_every_section_figures_and_csv() {
    let d = temp_dir("report_demo");
    let o = demo_report(&d.join("a"), &["--csv"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("a/report.json")).unwrap()).unwrap();
    for section in [
        "pass_at_kt",
        "pass_curve",
        "token_budget",
        "upper_bound",
        "advantage",
        "mode_gap",
        "matched_states",
        "error_recovery",
        "likelihood",
        "dynamics",
        "divergence",
        "cost_frontier",
        "cost_winners",
        "budgetmix",
    ] {
        assert!(
            !r[section].as_array().unwrap().is_empty(),
            "demo section {section} is empty"
        );
    }
    let md = std::fs::read_to_string(d.join("a/report.md")).unwrap();
    let figs: Vec<String> = std::fs::read_dir(d.join("a/figures"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .collect();
    assert!(figs.len() >= 8, "{figs:?}");
    let referenced: Vec<&str> = md
        .match_indices("](figures/")
        .map(|(i, _)| &md[i + 10..i + 10 + md[i + 10..].find(')').unwrap()])
        .collect();
    for f in &figs {
        assert!(referenced.contains(&f.as_str()), "{f} is not in report.md");
        let text = std::fs::read_to_string(d.join("a/figures").join(f)).unwrap();
        let mut reader = quick_xml::Reader::from_str(&text);
        let mut elements = 0;
        loop {
            match reader.read_event() {
                Ok(quick_xml::events::Event::Eof) => break,
                Ok(quick_xml::events::Event::Start(_)) | Ok(quick_xml::events::Event::Empty(_)) => {
                    elements += 1
                }
                Ok(_) => {}
                Err(e) => panic!("{f}: invalid XML: {e}"),
            }
        }
        assert!(elements > 5, "{f} is nearly empty");
        assert!(text.contains("<svg"));
    }
    for r in referenced {
        assert!(
            figs.iter().any(|f| f == r),
            "report.md links a missing figure {r}"
        );
    }
    for t in [
        "pass_at_kt",
        "advantage",
        "budgetmix.rules",
        "matched_states.by_turn",
    ] {
        let csv = std::fs::read_to_string(d.join(format!("a/csv/{t}.csv"))).unwrap();
        assert!(csv.lines().count() > 1, "{t}.csv has no rows");
    }
    let pass = std::fs::read_to_string(d.join("a/csv/pass_at_kt.csv")).unwrap();
    assert!(pass.starts_with("benchmark,"), "{}", &pass[..80]);
}

/// A Pass@(K,T) cell of report.json as report.md writes it beside another
/// figure: value, 95% interval and n, in percent with one decimal.
fn cell_md(c: &serde_json::Value) -> (String, String, String) {
    let p = |v: &serde_json::Value| format!("{:.1}", 100.0 * v.as_f64().unwrap());
    (
        format!("{}%", p(&c["value"])),
        format!("[{}, {}]", p(&c["ci"][0]), p(&c["ci"][1])),
        c["tasks"].to_string(),
    )
}

#[test]
fn report_md_gives_cost_winners_and_gains_their_cells_interval_and_n() {
    let d = temp_dir("report_md_cells");
    let o = demo_report(&d.join("a"), &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("a/report.json")).unwrap()).unwrap();
    let md = std::fs::read_to_string(d.join("a/report.md")).unwrap();
    let cell = |bench: &serde_json::Value, run: &serde_json::Value, k, level, mode| {
        let c = rows(
            &r,
            "pass_at_kt",
            &[
                ("benchmark", bench.clone()),
                ("run", run.clone()),
                ("k", k),
                ("level", level),
                ("t_mode", mode),
            ],
        );
        assert_eq!(c.len(), 1);
        c[0].clone()
    };
    // Cost winners: | … | mode | Pass | 95% CI | n tasks |.
    let winners = r["cost_winners"].as_array().unwrap();
    assert!(!winners.is_empty());
    for w in winners {
        let c = cell(
            &w["benchmark"],
            &w["run"],
            w["k"].clone(),
            w["level"].clone(),
            w["t_mode"].clone(),
        );
        let (v, ci, n) = cell_md(&c);
        let row = format!(
            "| {} | {} | {} | {} |\n",
            w["t_mode"].as_str().unwrap(),
            v,
            ci,
            n
        );
        assert!(md.contains(&row), "{row:?} not in report.md");
        // The sentence under the table gives the same range, to the same
        // two decimals (one decimal made 8.49–8.52 read "from 8.5 to 8.5").
        let range = match w["to_cost"].as_f64() {
            Some(t) => format!(
                "from {:.2} to {t:.2} turns",
                w["from_cost"].as_f64().unwrap()
            ),
            None => format!("from {:.2} turns", w["from_cost"].as_f64().unwrap()),
        };
        let said = format!(
            "{range} per task{}, {} with K={} at {}% budget ({}) wins",
            if w["to_cost"].is_null() { " up" } else { "" },
            w["run"].as_str().unwrap(),
            w["k"],
            w["level"],
            w["t_mode"].as_str().unwrap()
        );
        assert!(md.contains(&said), "{said:?} not in report.md");
    }
    // The matched states' finding and the length-matched LLR: each point
    // and interval at the precision of its table (four decimals of a score,
    // two of nats; one decimal printed a score interval as [+0.0, +0.0]).
    let f = |v: &serde_json::Value, d: usize| format!("{:+.d$}", v.as_f64().unwrap());
    for m in r["matched_states"].as_array().unwrap() {
        let said = format!(
            "RL is better in {:.1}% of {} matched states; its mean score differs from base by {} [{}, {}]:",
            100.0 * m["better"].as_f64().unwrap(),
            m["states"],
            f(&m["mean_diff"], 4),
            f(&m["ci"][0], 4),
            f(&m["ci"][1], 4)
        );
        assert!(md.contains(&said), "{said:?} not in report.md");
    }
    for l in r["likelihood"].as_array().unwrap() {
        let lm = &l["length_matched"];
        let said = format!(
            "length-matched RL − base LLR is {} [{}, {}] nats over {} pairs from {} tasks:",
            f(&lm["mean_diff"], 2),
            f(&lm["ci"][0], 2),
            f(&lm["ci"][1], 2),
            lm["pairs"],
            lm["tasks"]
        );
        assert!(md.contains(&said), "{said:?} not in report.md");
    }
    // Mode gaps: a difference, its interval signed as Δ's are.
    for g in r["mode_gap"].as_array().unwrap() {
        let Some(ci) = g["ci"].as_array() else {
            continue;
        };
        let row = format!(
            "| {} | {} | {} | {}% | {} | {:+.1} pp | [{:+.1}, {:+.1}] |\n",
            g["benchmark"].as_str().unwrap(),
            g["run"].as_str().unwrap(),
            g["k"],
            g["level"],
            g["tasks"],
            100.0 * g["diff"].as_f64().unwrap(),
            100.0 * ci[0].as_f64().unwrap(),
            100.0 * ci[1].as_f64().unwrap()
        );
        assert!(md.contains(&row), "{row:?} not in report.md");
    }
    // BudgetMix gains: both cells, each `value [lo, hi] n=… mode`.
    let b = &r["budgetmix"][0];
    let gains = b["gains"].as_array().unwrap();
    assert!(!gains.is_empty());
    for g in gains {
        let side = |run: &serde_json::Value| {
            let mode = g["modes"][run.as_str().unwrap()].clone();
            let (v, ci, n) = cell_md(&cell(
                &g["benchmark"],
                run,
                json!(1),
                g["level"].clone(),
                mode.clone(),
            ));
            format!("{v} {ci} n={n} {}", mode.as_str().unwrap())
        };
        let row = format!(
            "| {} | {}% | ",
            g["benchmark"].as_str().unwrap(),
            g["level"]
        );
        let tail = format!(
            " | {} | {} | {} |\n",
            side(&b["run"]),
            g["vs"].as_str().unwrap(),
            side(&g["vs"])
        );
        assert!(
            md.lines()
                .any(|l| l.starts_with(&row) && format!("{l}\n").ends_with(&tail)),
            "{row}…{tail:?} not in report.md"
        );
    }
    // Natural recovery by turn (§4.6's `by_turn`): each run's table, every
    // turn's two point figures with their n, under the run's heading.
    let share = |x: &serde_json::Value, n: &serde_json::Value| {
        if n == 0 {
            "–".to_string()
        } else {
            format!("{:.1}% (n={n})", 100.0 * x.as_f64().unwrap())
        }
    };
    let naturals = r["natural_recovery"].as_array().unwrap();
    assert!(!naturals.is_empty());
    for n in naturals {
        let heading = format!(
            "**{}: {} by turn**",
            n["benchmark"].as_str().unwrap(),
            n["run"].as_str().unwrap()
        );
        let at = md
            .find(&heading)
            .unwrap_or_else(|| panic!("{heading} not in report.md"));
        let rest = &md[at..];
        let table = &rest[..rest.find("\n\n|").map_or(rest.len(), |i| {
            i + rest[i + 2..].find("\n\n").map_or(rest.len() - i, |j| j + 2)
        })];
        let turns = n["by_turn"].as_array().unwrap();
        assert!(turns.len() > 5);
        for t in turns {
            let line = format!(
                "| {} | {} | {} |",
                t["turn"],
                share(&t["next_ok"], &t["error_events"]),
                share(&t["recovered"], &t["rollouts"])
            );
            assert!(
                table.lines().any(|l| l == line),
                "{line} not under {heading}"
            );
        }
    }
}

/// Every file under `dir`, as paths relative to it, sorted.
fn files_under(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(p) = stack.pop() {
        for e in std::fs::read_dir(&p).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                files.push(p.strip_prefix(dir).unwrap().to_path_buf());
            }
        }
    }
    files.sort();
    files
}

/// Names as logs may give them: two benchmarks whose names differ only in
/// a character a file name cannot hold (`suite/a`, `suite_a`) get a figure
/// file each (none replaced by the other), every image report.md shows is
/// a file of its own; a run named `<b>grpo` reads as written in report.md
/// (its `<` escaped where CommonMark would take it for an HTML tag).
/// report.md as a CommonMark reader with GFM tables (pulldown-cmark) reads
/// it: each table's header and rows as the text of their cells, and the
/// text of each list item and heading; a panic on any HTML.
struct ReadMd {
    tables: Vec<(Vec<String>, Vec<Vec<String>>)>,
    items: Vec<String>,
    headings: Vec<String>,
}

fn read_md(md: &str) -> ReadMd {
    use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};
    let mut r = ReadMd {
        tables: Vec::new(),
        items: Vec::new(),
        headings: Vec::new(),
    };
    let (mut text, mut row) = (String::new(), Vec::new());
    let mut in_head = false;
    for e in Parser::new_ext(md, Options::ENABLE_TABLES) {
        match e {
            Event::Html(h) | Event::InlineHtml(h) => panic!("HTML in report.md: {h}"),
            Event::Text(t) | Event::Code(t) => text.push_str(&t),
            Event::SoftBreak | Event::HardBreak => text.push(' '),
            Event::Start(Tag::Table(_)) => r.tables.push((Vec::new(), Vec::new())),
            Event::Start(Tag::TableHead) => in_head = true,
            Event::Start(Tag::TableCell | Tag::Item | Tag::Heading { .. }) => text.clear(),
            Event::End(TagEnd::TableCell) => row.push(std::mem::take(&mut text)),
            Event::End(TagEnd::TableHead) => {
                in_head = false;
                r.tables.last_mut().unwrap().0 = std::mem::take(&mut row);
            }
            Event::End(TagEnd::TableRow) if !in_head => r
                .tables
                .last_mut()
                .unwrap()
                .1
                .push(std::mem::take(&mut row)),
            Event::End(TagEnd::Item) => r.items.push(std::mem::take(&mut text)),
            Event::End(TagEnd::Heading(_)) => r.headings.push(std::mem::take(&mut text)),
            _ => {}
        }
    }
    r
}

/// Names that a file name cannot hold apart (`suite/a`, `suite_a`), that
/// look like HTML (`<b>grpo`) or that hold what Markdown reads (backticks,
/// a pipe), in runs, a benchmark, a record kind and a `--grep` pattern:
/// each figure its own file, and report.md, read by a CommonMark reader,
/// has no HTML, tables whose cells hold the names as written, and the
/// pairs and kinds as written.
#[test]
fn names_that_share_a_file_name_or_look_like_markdown_keep_their_figures_and_text() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/large/jsonl");
    let d = temp_dir("report_names");
    let logs = d.join("logs");
    std::fs::create_dir_all(&logs).unwrap();
    let (base, rl, mix) = ("q`4|b ``x", "<b>grpo", "`mix`");
    let (kind, pattern) = ("no`te", "`|<b>");
    for f in std::fs::read_dir(&root).unwrap() {
        let f = f.unwrap().path();
        let mut text = std::fs::read_to_string(&f)
            .unwrap()
            .replace("\"bfcl-v3\"", "\"suite/a\"")
            .replace("\"terminal\"", "\"suite_a\"")
            .replace("\"qwen3-4b\"", &format!("\"{base}\""))
            .replace("\"qwen3-4b-grpo\"", &format!("\"{rl}\""))
            .replace("\"qwen3-4b-budgetmix\"", &format!("\"{mix}\""));
        if f.ends_with("probes.jsonl") {
            text.push_str(&format!("{{\"kind\":\"{kind}\"}}\n"));
        }
        std::fs::write(logs.join(f.file_name().unwrap()), text).unwrap();
    }
    let out = d.join("out");
    audit_json(&logs, &out, &["--resamples", "200", "--grep", pattern]);
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    // Every image line: `![caption](figures/FILE)`.
    let links: Vec<&str> = md
        .lines()
        .filter(|l| l.starts_with("!["))
        .map(|l| {
            let at = l.rfind("](figures/").unwrap();
            &l[at + "](figures/".len()..l.len() - 1]
        })
        .collect();
    let distinct: std::collections::BTreeSet<&str> = links.iter().copied().collect();
    assert_eq!(distinct.len(), links.len(), "two images share a file");
    let on_disk: std::collections::BTreeSet<String> = std::fs::read_dir(out.join("figures"))
        .unwrap()
        .map(|f| f.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(
        on_disk,
        distinct.iter().map(|s| s.to_string()).collect(),
        "figures written and shown"
    );
    let read = read_md(&md);
    // Both benchmarks' Pass@(K,T) sections, each with its own figures.
    for b in ["suite/a", "suite_a"] {
        assert!(read.headings.iter().any(|h| h == b), "{b}");
        assert!(
            md.lines()
                .any(|l| l.starts_with("![") && l.contains(&format!(" on {b} "))),
            "{b}: no figure"
        );
    }
    // The compared pairs and the unknown kind, as written.
    let pairs: Vec<&String> = read.items.iter().filter(|i| i.contains(" → ")).collect();
    let want: Vec<String> = ["suite/a", "suite_a"]
        .iter()
        .flat_map(|b| {
            [
                format!("{b}: {base} → {rl}"),
                format!("{b}: {base} → {mix}"),
            ]
        })
        .collect();
    for w in &want {
        assert!(pairs.contains(&w), "pair {w:?} not in {pairs:?}");
    }
    assert!(md.contains(&format!("1 × {}", "``no`te``")), "the kind");
    // Every table's run, base, RL, benchmark and pattern cells hold a name
    // as written: a backtick or pipe of a name that opened a code span or
    // split a cell would shift them. Each name is met in some table.
    // The Pass@(K,T) tables' run column also has U(T)'s row; BudgetMix's
    // benchmark column its mean.
    let runs = [base, rl, mix, "upper bound U(T)"];
    let benches = [
        "suite/a",
        "suite_a",
        "deepcoder-mt",
        "intercode-sql",
        "mean",
    ];
    let (to_rl, to_mix) = (format!("{base} → {rl}"), format!("{base} → {mix}"));
    let pairs = [to_rl.as_str(), to_mix.as_str()];
    let mut met = std::collections::BTreeSet::new();
    for (head, rows) in &read.tables {
        for (c, name) in head.iter().enumerate() {
            let allowed: &[&str] = match name.as_str() {
                "run" => &runs,
                "benchmark" => &benches,
                "base → RL" => &pairs,
                "pattern" => &[pattern],
                _ => continue,
            };
            for row in rows {
                assert_eq!(row.len(), head.len(), "{head:?}: {row:?}");
                let v = row[c].as_str();
                assert!(
                    allowed.contains(&v) || v == "–",
                    "{name} cell {v:?} in {head:?}: {row:?}"
                );
                met.insert(v.to_string());
            }
        }
    }
    for n in runs
        .iter()
        .chain(&benches[..2])
        .chain(&pairs)
        .chain([&pattern])
    {
        assert!(met.contains(*n), "{n:?} in no table");
    }
}

#[test]
fn reruns_are_byte_identical() {
    let d = temp_dir("report_determinism");
    for dir in ["a", "b"] {
        assert!(demo_report(&d.join(dir), &["--csv"]).status.success());
    }
    let files: Vec<_> = files_under(&d.join("a"))
        .into_iter()
        .map(|f| d.join("a").join(f))
        .collect();
    assert!(files.len() > 10);
    for f in files {
        let other = d.join("b").join(f.strip_prefix(d.join("a")).unwrap());
        assert_eq!(
            std::fs::read(&f).unwrap(),
            std::fs::read(&other).unwrap(),
            "{f:?} differs between runs"
        );
    }
}

/// A report written into the folder of an earlier one: figures and tables
/// the earlier report had and this one lacks (here planted: a benchmark no
/// longer in the logs) are gone, the folder holds what a fresh one does,
/// and files that are not a report's own are left alone.
#[test]
fn a_report_written_over_an_earlier_one_leaves_none_of_its_figures() {
    let d = temp_dir("report_over_earlier");
    let (fresh, reused) = (d.join("fresh"), d.join("reused"));
    assert!(demo_report(&fresh, &["--csv"]).status.success());
    assert!(demo_report(&reused, &["--csv"]).status.success());
    for (f, text) in [
        ("figures/pass_gone_base_native.svg", "<svg/>"),
        ("csv/gone.csv", "a,b\n"),
        ("figures/notes.txt", "mine"),
        ("notes.md", "mine"),
    ] {
        std::fs::write(reused.join(f), text).unwrap();
    }
    assert!(demo_report(&reused, &["--csv"]).status.success());
    let mut want = files_under(&fresh);
    want.extend(["figures/notes.txt", "notes.md"].map(std::path::PathBuf::from));
    want.sort();
    assert_eq!(files_under(&reused), want);
    assert_eq!(
        std::fs::read_to_string(reused.join("figures/notes.txt")).unwrap(),
        "mine"
    );
}

/// Base solves every task; rl solves none of the even tasks and half of the
/// odd ones, so Δ differs across tasks (a real interval) and is −0.75 on average.
fn flip_logs(dir: &std::path::Path) -> std::path::PathBuf {
    let mut v = vec![
        json!({"kind": "run", "run": "base", "method": "base"}),
        json!({"kind": "run", "run": "rl", "method": "grpo"}),
    ];
    for t in 0..8 {
        let task = format!("t{t}");
        // base: 4/4 solved at turn 1; rl: t even 0/4, t odd 2/4 → Δ per task −1 or −0.5.
        for s in 0..4 {
            v.push(traj("base", "b", &task, 4, 4, Some(1)));
            let ok = t % 2 == 1 && s < 2;
            v.push(traj("rl", "b", &task, 4, 4, ok.then_some(1)));
        }
    }
    let f = dir.join("flip.jsonl");
    write_lines(&f, &v);
    f
}

#[test]
fn gates_trip_and_do_not_trip() {
    let d = temp_dir("report_gates");
    let f = flip_logs(&d);
    let out = d.join("out");
    let run = |gates: &[&str]| {
        let mut args = vec![
            "--headless",
            f.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--resamples",
            "500",
            "--levels",
            "50,100",
        ];
        for g in gates {
            args.extend(["--fail-on", g]);
        }
        rl_audit(&args)
    };
    // Δ at K=1 is −0.75 everywhere with a CI below zero: a significant flip.
    let o = run(&["flip"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("gate tripped: flip"));
    // advantage<X@L is in points: −75 < −70 trips, −75 < −80 does not.
    let o = run(&["advantage<-70@50"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(run(&["advantage<-80@50"]).status.code(), Some(0));
    // The line carries Δ's interval and n; the interval's upper end (per-task
    // Δ of −1 and −0.5: well above −70 points) reaches −70, so the trip is
    // said to be within noise; at −50 it is not.
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    let row = r["advantage"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["k"] == 1 && a["level"] == 50)
        .unwrap();
    let (lo, hi) = (
        100.0 * row["ci"][0].as_f64().unwrap(),
        100.0 * row["ci"][1].as_f64().unwrap(),
    );
    assert!((-70.0..-50.0).contains(&hi), "{hi}");
    // Laid out as every gate's cell line (the flip gates' below), Δ with
    // two decimals against a threshold in points.
    let head = format!(
        "gate tripped: advantage<{{}}@50: base → rl on b at K=1 level 50% ({}): Δ = -75.00 pp [{lo:+.1}, {hi:+.1}], n={} tasks, below {{}} pp",
        row["t_mode"].as_str().unwrap(),
        row["tasks"]
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.lines().any(|l| l.ends_with(&format!(
            "{}; its 95% interval reaches -70 pp: within noise of the threshold",
            head.replace("{}", "-70")
        ))),
        "{err}"
    );
    let err = String::from_utf8_lossy(&run(&["advantage<-50@50"]).stderr).to_string();
    assert!(
        err.lines().any(|l| l.ends_with(&head.replace("{}", "-50"))),
        "{err}"
    );
    // No BudgetMix run: nothing to violate.
    assert_eq!(run(&["budgetmix"]).status.code(), Some(0));
    // Gates combine: each tripped gate gets its own line.
    let o = run(&["budgetmix", "advantage<-70@50", "advantage<-70@100"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&o.stderr)
            .matches("gate tripped: advantage")
            .count(),
        2
    );
    // No gate: exit 0 even with flips.
    assert_eq!(run(&[]).status.code(), Some(0));
}

#[test]
fn unwritable_output_exits_2_and_leaves_nothing_half_written() {
    let d = temp_dir("report_unwritable");
    let blocker = d.join("file");
    std::fs::write(&blocker, "x").unwrap();
    let o = demo_report(&blocker.join("sub"), &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("cannot write"));
}

/// Every key path of a JSON document (`a.b[].c`).
fn key_paths(v: &serde_json::Value, prefix: &str, out: &mut std::collections::BTreeSet<String>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                let p = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                key_paths(x, &p, out);
            }
        }
        serde_json::Value::Array(a) => {
            for x in a {
                key_paths(x, &format!("{prefix}[]"), out);
            }
        }
        _ => {
            out.insert(prefix.to_string());
        }
    }
}

#[test]
fn report_json_keeps_every_key_of_the_contract() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    for (name, logs) in [("demo", None), ("large", Some("tests/data/large/jsonl"))] {
        let d = temp_dir(&format!("keys_{name}"));
        let out = d.join("out");
        let mut args = vec![
            "--headless",
            "--out",
            out.to_str().unwrap(),
            "--resamples",
            "50",
        ];
        let logs = logs.map(|l| root.join(l));
        if let Some(l) = &logs {
            args.push(l.to_str().unwrap());
        }
        assert!(rl_audit(&args).status.success());
        let r: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap())
                .unwrap();
        let mut got = std::collections::BTreeSet::new();
        key_paths(&r, "", &mut got);
        let want: std::collections::BTreeSet<String> =
            std::fs::read_to_string(root.join(format!("tests/data/report-keys-{name}.txt")))
                .unwrap()
                .lines()
                .filter(|l| !l.starts_with('#') && !l.is_empty())
                .map(str::to_string)
                .collect();
        let missing: Vec<_> = want.difference(&got).collect();
        let added: Vec<_> = got.difference(&want).collect();
        assert!(missing.is_empty(), "{name}: keys gone: {missing:?}");
        assert!(
            added.is_empty(),
            "{name}: keys not in the contract list: {added:?}"
        );
    }
}
