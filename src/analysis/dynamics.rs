//! SPEC §2.5: training dynamics — every checkpoint metric against `step`,
//! its least-squares slope with a 95% t-interval, and the divergence flag
//! (trajectory reward rising while single-step reward falls).

use std::collections::BTreeMap;

use statrs::distribution::{ContinuousCDF, StudentsT};

use crate::schema::{Id, LogSet};

#[derive(Debug, Clone)]
pub struct MetricTrend {
    pub run: String,
    pub metric: String,
    pub checkpoints: u64,
    /// (step, value) in step order.
    pub points: Vec<(f64, f64)>,
    pub first: f64,
    pub last: f64,
    pub change: f64,
    pub slope: Option<f64>,
    pub slope_ci: Option<(f64, f64)>,
}

/// What makes a run divergent (SPEC §2.5: r_multi's slope interval above
/// 0, r_single's below), as the findings and the Training panel word it.
pub const DIVERGENT_MEANS: &str = "r_multi ↑ while r_single ↓";

#[derive(Debug, Clone)]
pub struct Divergence {
    pub run: String,
    pub divergent: bool,
    /// Whether both r_multi and r_single were logged.
    pub has_metrics: bool,
}

/// OLS slope of y on x and its 95% t-interval with n − 2 degrees of freedom.
pub fn ols_slope(points: &[(f64, f64)]) -> (Option<f64>, Option<(f64, f64)>) {
    let n = points.len();
    if n < 2 {
        return (None, None);
    }
    let nf = n as f64;
    let mx = points.iter().map(|p| p.0).sum::<f64>() / nf;
    let my = points.iter().map(|p| p.1).sum::<f64>() / nf;
    let sxx: f64 = points.iter().map(|p| (p.0 - mx).powi(2)).sum();
    if sxx <= 0.0 {
        return (None, None);
    }
    let sxy: f64 = points.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let slope = sxy / sxx;
    if n < 3 {
        return (Some(slope), None);
    }
    let intercept = my - slope * mx;
    let sse: f64 = points
        .iter()
        .map(|p| (p.1 - intercept - slope * p.0).powi(2))
        .sum();
    let df = nf - 2.0;
    let se = (sse / df / sxx).sqrt();
    let t = StudentsT::new(0.0, 1.0, df)
        .map(|d| d.inverse_cdf(0.975))
        .ok();
    (Some(slope), t.map(|t| (slope - t * se, slope + t * se)))
}

pub fn analyse(set: &LogSet) -> (Vec<MetricTrend>, Vec<Divergence>) {
    // run → metric → (step, value, file order)
    type Series = BTreeMap<(String, String), Vec<(i64, crate::schema::Loc, f64)>>;
    let mut series: Series = BTreeMap::new();
    let mut runs: BTreeMap<String, Id> = BTreeMap::new();
    for c in &set.checkpoints {
        runs.insert(set.name(c.run).to_string(), c.run);
        for &(m, x) in set.metrics_of(c) {
            series
                .entry((set.name(c.run).to_string(), set.name(m).to_string()))
                .or_default()
                .push((c.step, c.loc, x));
        }
    }
    let mut trends = Vec::new();
    for ((run, metric), mut pts) in series {
        pts.sort_by_key(|p| (p.0, p.1));
        let points: Vec<(f64, f64)> = pts.iter().map(|p| (p.0 as f64, p.2)).collect();
        let (first, last) = (points[0].1, points[points.len() - 1].1);
        let (slope, ci) = ols_slope(&points);
        trends.push(MetricTrend {
            run,
            metric,
            checkpoints: points.len() as u64,
            first,
            last,
            change: last - first,
            slope,
            slope_ci: ci,
            points,
        });
    }
    let divergence = runs
        .keys()
        .map(|run| {
            let ci = |m: &str| trends.iter().find(|t| &t.run == run && t.metric == m).map(|t| t.slope_ci);
            let (multi, single) = (ci("r_multi"), ci("r_single"));
            let divergent = matches!((multi, single), (Some(Some((lo, _))), Some(Some((_, hi)))) if lo > 0.0 && hi < 0.0);
            Divergence {
                run: run.clone(),
                divergent,
                has_metrics: multi.is_some() && single.is_some(),
            }
        })
        .collect();
    (trends, divergence)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slope_by_hand() {
        // y = 1, 3, 2 at x = 0, 1, 2: slope 0.5, intercept 1.5, residuals −0.5, 1, −0.5,
        // SSE 1.5, se = sqrt(1.5/1/2) = 0.866025, t(0.975, 1) = 12.7062047.
        let (s, ci) = ols_slope(&[(0.0, 1.0), (1.0, 3.0), (2.0, 2.0)]);
        assert!((s.unwrap() - 0.5).abs() < 1e-12);
        let (lo, hi) = ci.unwrap();
        let half = 12.706_204_736 * 0.866_025_403_8;
        assert!((lo - (0.5 - half)).abs() < 1e-6, "{lo}");
        assert!((hi - (0.5 + half)).abs() < 1e-6, "{hi}");
        assert_eq!(ols_slope(&[(0.0, 1.0), (1.0, 2.0)]).1, None);
    }
}
