//! Number formatting shared by every renderer (report.md, findings, the
//! workbench): a leaf module — it imports no renderer, so none of them
//! import each other for it.

use crate::analysis::passkt::PassCell;
use crate::analysis::stats::{Ci, Estimate};

/// `12.3%`, or `–` for no value.
pub fn pct(x: Option<f64>) -> String {
    x.map_or("–".into(), |x| format!("{:.1}%", 100.0 * x))
}

/// A Pass@(K,T) cell read beside another figure: `21.2% [13.0, 29.8] n=48
/// native`.
pub fn pass_cell(c: &PassCell) -> String {
    format!(
        "{} {} n={} {}",
        pct(c.value),
        pct_ci(c.ci),
        c.tasks,
        c.mode.name()
    )
}

/// `[10.2, 14.0]` in percent, or why there is no interval; `~[10.1, 14.2]`
/// provisional ([`Ci::Provisional`]).
pub fn pct_ci(ci: Ci) -> String {
    match ci {
        Ci::Interval(l, h) => format!("[{:.1}, {:.1}]", 100.0 * l, 100.0 * h),
        Ci::Provisional(l, h) => format!("~[{:.1}, {:.1}]", 100.0 * l, 100.0 * h),
        Ci::Degenerate => "[degenerate]".into(),
        Ci::Undefined => "[–]".into(),
        Ci::Pending => "[…]".into(),
    }
}

/// A p-value, adjusted or not: `≤0.0420` where it sits at the floor the
/// resamples allow (no resample crossed 0; more would tell how far below),
/// `–` for none.
pub fn p_floored(p: Option<f64>, floor: Option<f64>) -> String {
    match p {
        None => "–".into(),
        Some(x) if crate::analysis::multiplicity::at_floor(p, floor) => format!("≤{x:.4}"),
        Some(x) => format!("{x:.4}"),
    }
}

/// A contrast's Holm-adjusted p ([`p_floored`]).
pub fn holm_p(c: &crate::analysis::categories::Contrast) -> String {
    p_floored(c.p_adjusted, c.p_adjusted_floor)
}

/// An advantage cell's adjusted p ([`p_floored`]).
pub fn cell_p(t: &crate::analysis::multiplicity::CellTest) -> String {
    p_floored(t.p_adjusted, t.p_adjusted_floor)
}

/// `, adjusted p ≥0.0699 at B=1000` where the B resamples alone keep a
/// cell's adjusted p from 0.05 (more tasks would not resolve it); empty
/// otherwise.
pub fn held_by_resamples(t: &crate::analysis::multiplicity::CellTest, b: usize) -> String {
    t.p_adjusted_floor
        .filter(|&f| f >= 0.05)
        .map_or(String::new(), |f| format!(", adjusted p ≥{f:.4} at B={b}"))
}

/// What keeps an inconclusive cell from a verdict, as its finding and the
/// `inconclusive@L` gate say it: `adjusted p 0.3576 (maxt), mde 6.8 pp,
/// ≈180 tasks would resolve it` — the adjusted p first (why an interval
/// clear of 0 is still inconclusive), unless the B resamples alone hold it
/// above 0.05: then it is left out, the tasks would resolve it "once the
/// resamples allow" ([`tasks_to_resolve`]), and the last clause says so
/// ([`held_by_resamples`]).
pub fn undecided(
    t: &crate::analysis::multiplicity::CellTest,
    adjust: crate::analysis::multiplicity::Adjust,
    b: usize,
) -> String {
    let held = held_by_resamples(t, b);
    let p = if held.is_empty() {
        format!("adjusted p {} ({}), ", cell_p(t), adjust.name())
    } else {
        String::new()
    };
    format!(
        "{p}mde {:.1} pp{}{held}",
        100.0 * t.mde.unwrap_or(f64::NAN),
        tasks_to_resolve(t, b, "it").map_or(String::new(), |s| format!(", {s}")),
    )
}

/// `≈180 tasks would resolve {what}` for a cell with SPEC's `tasks_needed`,
/// `… once the resamples allow` where the B resamples alone hold its
/// adjusted p at 0.05 or above (the count assumes resamples enough).
pub fn tasks_to_resolve(
    t: &crate::analysis::multiplicity::CellTest,
    b: usize,
    what: &str,
) -> Option<String> {
    let then = if held_by_resamples(t, b).is_empty() {
        ""
    } else {
        " once the resamples allow"
    };
    t.tasks_needed
        .map(|n| format!("≈{n} tasks would resolve {what}{then}"))
}

/// An advantage cell's own bootstrap p, `≤` at its floor 2/(B_c+1).
pub fn cell_p_alone(t: &crate::analysis::multiplicity::CellTest) -> String {
    p_floored(t.p_value, t.p_value_floor)
}

/// A category contrast as the findings and the Budget panel read it:
/// `Δ(a) − Δ(b) -26.0 pp [-38.5, -14.6], n=12+12 tasks, Holm p ≤0.0420`.
pub fn contrast(c: &crate::analysis::categories::Contrast) -> String {
    format!(
        "Δ({}) − Δ({}) {} {}, n={}+{} tasks, Holm p {}",
        c.a,
        c.b,
        pp(c.diff),
        signed_ci(c.ci, 100.0),
        c.tasks_a,
        c.tasks_b,
        holm_p(c),
    )
}

/// Signed percentage points: `+2.5 pp`.
pub fn pp(x: f64) -> String {
    format!("{:+.1} pp", 100.0 * x)
}

/// A task's share of Δ in points: two decimals, or two significant digits
/// where two decimals would round a non-zero share to ±0.00 (a cell of
/// 26,000 tasks: each is a 26,000th of its Δ).
pub fn share_pp(x: f64) -> String {
    let p = 100.0 * x;
    let decimals = if p != 0.0 && p.abs() < 0.005 {
        (-p.abs().log10()).floor().min(12.0) as usize + 2
    } else {
        2
    };
    format!("{p:+.decimals$} pp")
}

/// A name or text in a Markdown table cell or line: pipes escaped (a pipe
/// ends a cell), and backticks (two in a row would open a code span that
/// runs across cells).
pub fn esc(s: &str) -> String {
    s.replace('|', "\\|").replace('`', "\\`")
}

/// `s` as a Markdown code span, whatever it holds (CommonMark §6.1): fenced
/// by one backtick more than its longest run of them, and padded with a
/// space where a backtick would otherwise touch the fence or CommonMark
/// would strip a space of its own. Pipes are left as they are: in a table
/// cell use [`code_cell`] (GFM reads `\|` in a code span in a table as
/// `|`).
pub fn code(s: &str) -> String {
    let longest = s.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    let spaced = s.starts_with(' ') && s.ends_with(' ') && s.trim() != "";
    let pad = if s.starts_with('`') || s.ends_with('`') || spaced {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{s}{pad}{fence}")
}

/// [`code`] in a table cell: its pipes escaped.
pub fn code_cell(s: &str) -> String {
    code(&s.replace('|', "\\|"))
}

/// report.md with no raw HTML: a `<` that CommonMark would take for the
/// start of a tag, comment or declaration (§6.6: followed by a letter,
/// `/`, `!` or `?`) is escaped outside code spans and fenced blocks, so
/// that a run or benchmark named `<b>x` reads as written wherever a name
/// is. The report writes no HTML of its own. Code spans are read as
/// CommonMark does within a line (a run of n backticks to the next run of
/// exactly n; a run with none after it is text), and a backslash escapes
/// the punctuation after it.
pub fn no_raw_html(md: &str) -> String {
    let mut out = String::with_capacity(md.len());
    let mut fenced = false;
    for line in md.split_inclusive('\n') {
        if line.starts_with("```") {
            fenced = !fenced;
            out.push_str(line);
            continue;
        }
        if fenced {
            out.push_str(line);
            continue;
        }
        let b = line.as_bytes();
        let mut i = 0;
        while i < b.len() {
            match b[i] {
                b'\\' if b.get(i + 1).is_some_and(u8::is_ascii_punctuation) => {
                    out.push_str(&line[i..i + 2]);
                    i += 2;
                }
                b'`' => {
                    let n = b[i..].iter().take_while(|&&c| c == b'`').count();
                    let end = closing_run(&b[i + n..], n).map_or(i + n, |at| i + n + at + n);
                    out.push_str(&line[i..end]);
                    i = end;
                }
                b'<' if b.get(i + 1).is_some_and(|&n| {
                    n.is_ascii_alphabetic() || matches!(n, b'/' | b'!' | b'?')
                }) =>
                {
                    out.push_str("\\<");
                    i += 1;
                }
                _ => {
                    // Up to the next byte that can matter (all ASCII, so
                    // never inside a character).
                    let run = b[i + 1..]
                        .iter()
                        .position(|c| matches!(c, b'\\' | b'`' | b'<'))
                        .map_or(b.len(), |at| i + 1 + at);
                    out.push_str(&line[i..run]);
                    i = run;
                }
            }
        }
    }
    out
}

/// Where, in `rest`, a run of exactly `n` backticks starts: a code span's
/// closing fence.
fn closing_run(rest: &[u8], n: usize) -> Option<usize> {
    let mut i = 0;
    while i < rest.len() {
        if rest[i] == b'`' {
            let m = rest[i..].iter().take_while(|&&c| c == b'`').count();
            if m == n {
                return Some(i);
            }
            i += m;
        } else {
            i += 1;
        }
    }
    None
}

/// What a provisional interval is, said where one is shown
/// ([`Ci::Provisional`]; `resamples`: the audit's): `~[…] provisional: the
/// first 1,000 of 10,000 resamples`.
pub fn provisional_note(resamples: usize) -> String {
    format!(
        "~[…] provisional: the first {} of {} resamples",
        thousands(crate::analysis::stats::PROVISIONAL_RESAMPLES),
        thousands(resamples)
    )
}

/// `10,000`: a count with its thousands separated.
pub fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() * 4 / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Whether any of these intervals is provisional.
pub fn any_provisional(cis: impl IntoIterator<Item = Ci>) -> bool {
    cis.into_iter().any(|c| matches!(c, Ci::Provisional(..)))
}

/// `[lo, hi]` scaled, signed, one decimal.
pub fn signed_ci(ci: Ci, scale: f64) -> String {
    signed_ci_prec(ci, scale, 1)
}

/// `[lo, hi]` scaled, signed, with `prec` decimals (`~[lo, hi]`
/// provisional).
pub fn signed_ci_prec(ci: Ci, scale: f64, prec: usize) -> String {
    match ci {
        Ci::Interval(l, h) => format!("[{:+.prec$}, {:+.prec$}]", scale * l, scale * h),
        Ci::Provisional(l, h) => format!("~[{:+.prec$}, {:+.prec$}]", scale * l, scale * h),
        Ci::Degenerate => "[degenerate]".into(),
        Ci::Undefined => "[–]".into(),
        Ci::Pending => "[…]".into(),
    }
}

/// A difference in points with its interval, or `–`.
pub fn est_pp(e: &Option<Estimate>) -> String {
    match e {
        Some(e) => format!("{} {}", pp(e.value), signed_ci(e.ci, 100.0)),
        None => "–".into(),
    }
}

/// A mean score difference with its interval, four decimals: `+0.0123 [-0.0010, +0.0250]`.
pub fn score_diff(e: &Option<Estimate>) -> String {
    e.map_or("–".into(), |e| {
        format!("{:+.4} {}", e.value, signed_ci_prec(e.ci, 1.0, 4))
    })
}

/// A log-likelihood difference with its interval, in nats, two decimals
/// throughout: `+2.69 [+1.38, +4.62] nats`.
pub fn nats(e: &Estimate) -> String {
    format!("{:+.2} {} nats", e.value, signed_ci_prec(e.ci, 1.0, 2))
}

/// A point share with its n: `76.4% (n=123)`, `–` with nothing to share.
pub fn share_n(x: Option<f64>, n: u64) -> String {
    if n == 0 {
        "–".into()
    } else {
        format!("{} (n={n})", pct(x))
    }
}

/// A share and its Wilson interval: `56.1% [43.0, 68.4]`, `–` without a
/// denominator.
pub fn share_ci(x: Option<f64>, ci: Option<(f64, f64)>) -> String {
    match ci {
        Some(_) => format!("{} {}", pct(x), wilson_pct(ci)),
        None => pct(x),
    }
}

/// A Wilson interval in percent, or nothing.
pub fn wilson_pct(ci: Option<(f64, f64)>) -> String {
    ci.map_or("".into(), |(l, h)| {
        format!("[{:.1}, {:.1}]", 100.0 * l, 100.0 * h)
    })
}

/// Is a difference's interval clear of zero?
pub fn verdict(ci: Ci) -> &'static str {
    if ci.above_zero() || ci.below_zero() {
        "significant"
    } else {
        "not significant"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_provisional_intervals_read_as_written() {
        let t: Vec<String> = [0, 7, 999, 1000, 10000, 123456, 1234567]
            .into_iter()
            .map(thousands)
            .collect();
        assert_eq!(
            t,
            ["0", "7", "999", "1,000", "10,000", "123,456", "1,234,567"]
        );
        assert_eq!(pct_ci(Ci::Provisional(0.088, 0.194)), "~[8.8, 19.4]");
        assert_eq!(
            signed_ci(Ci::Provisional(-0.1, 0.03), 100.0),
            "~[-10.0, +3.0]"
        );
        assert_eq!(
            provisional_note(10000),
            "~[…] provisional: the first 1,000 of 10,000 resamples"
        );
    }

    #[test]
    fn a_code_span_holds_any_name_and_html_is_escaped_outside_them() {
        // CommonMark §6.1: the fence longer than any run inside, a space
        // where a backtick touches it or a space of the name's own would
        // be stripped.
        assert_eq!(code("grpo"), "`grpo`");
        assert_eq!(code("a`b"), "``a`b``");
        assert_eq!(code("a``b`"), "``` a``b` ```");
        assert_eq!(code("`x"), "`` `x ``");
        assert_eq!(code(" a "), "`  a  `");
        assert_eq!(code("   "), "`   `");
        assert_eq!(code_cell("a|b"), "`a\\|b`");
        assert_eq!(esc("a|b`c"), "a\\|b\\`c");
        // Code spans (to the next run of as many backticks) and escaped
        // characters pass; a `<` opening a tag elsewhere is escaped; a
        // run with no closing one is text.
        assert_eq!(
            no_raw_html("x `<b>` <b> \\<i> ``a`<b>`` \\`<p>` ` <c> 1 < 2 <\n"),
            "x `<b>` \\<b> \\<i> ``a`<b>`` \\`\\<p>` ` \\<c> 1 < 2 <\n"
        );
        assert_eq!(
            no_raw_html("```\n<b>\n```\n<b> é<é\n"),
            "```\n<b>\n```\n\\<b> é<é\n"
        );
    }

    #[test]
    fn a_share_of_delta_keeps_its_sign_and_first_digits() {
        // 0.75 of a point, and a task of the demo (48 tasks) going from 1 of
        // 16 rollouts to none: −(1/16)/48.
        assert_eq!(share_pp(0.0075), "+0.75 pp");
        assert_eq!(share_pp(-0.0625 / 48.0), "-0.13 pp");
        // A task of 26,041 going from 7 of 8 to 1 of 8: −0.75 / 26,041 =
        // −0.00288 points, not "-0.00"; one rollout of 8 more, 0.00048.
        assert_eq!(share_pp(-0.75 / 26_041.0), "-0.0029 pp");
        assert_eq!(share_pp(0.125 / 26_041.0), "+0.00048 pp");
        // Exactly nothing stays two decimals.
        assert_eq!(share_pp(0.0), "+0.00 pp");
        // From 0.005 points on, two decimals.
        assert_eq!(share_pp(0.00006), "+0.01 pp");
    }
}
