//! Number formatting shared by every renderer (report.md, findings, the
//! workbench): a leaf module — it imports no renderer, so none of them
//! import each other for it.

use crate::analysis::stats::{Ci, Estimate};

/// `12.3%`, or `–` for no value.
pub fn pct(x: Option<f64>) -> String {
    x.map_or("–".into(), |x| format!("{:.1}%", 100.0 * x))
}

/// `[10.2, 14.0]` in percent, or why there is no interval.
pub fn pct_ci(ci: Ci) -> String {
    match ci {
        Ci::Interval(l, h) => format!("[{:.1}, {:.1}]", 100.0 * l, 100.0 * h),
        Ci::Degenerate => "[degenerate]".into(),
        Ci::Undefined => "[–]".into(),
    }
}

/// Signed percentage points: `+2.5 pp`.
pub fn pp(x: f64) -> String {
    format!("{:+.1} pp", 100.0 * x)
}

/// A Markdown table cell: pipes escaped.
pub fn esc(s: &str) -> String {
    s.replace('|', "\\|")
}

/// `[lo, hi]` scaled, signed, one decimal.
pub fn signed_ci(ci: Ci, scale: f64) -> String {
    signed_ci_prec(ci, scale, 1)
}

/// `[lo, hi]` scaled, signed, with `prec` decimals.
pub fn signed_ci_prec(ci: Ci, scale: f64, prec: usize) -> String {
    match ci {
        Ci::Interval(l, h) => format!("[{:+.prec$}, {:+.prec$}]", scale * l, scale * h),
        Ci::Degenerate => "[degenerate]".into(),
        Ci::Undefined => "[–]".into(),
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
