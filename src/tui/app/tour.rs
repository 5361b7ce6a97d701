//! The guided tour in the workbench: starting it, going to a step, landing
//! on the place it names, its keys.

use super::*;

impl App {
    /// `t` / `--tour`: the tour from its first step (once the logs are in).
    pub fn start_tour(&mut self) {
        let Some(d) = self.data.clone().filter(|d| d.audit.is_complete()) else {
            self.tour_on_load = true;
            self.message = Some("the tour starts when the audit is complete".into());
            return;
        };
        self.help = false;
        self.tour = Some(Tour {
            steps: crate::tour::steps(&d.audit),
            at: 0,
            scroll: 0,
        });
        self.tour_go(0);
    }

    /// Moves the tour to step `at` and the workbench to where it looks.
    pub(super) fn tour_go(&mut self, at: usize) {
        let Some(t) = self.tour.as_mut() else { return };
        let at = at.min(t.steps.len().saturating_sub(1));
        t.at = at;
        t.scroll = 0;
        let Some(step) = t.steps.get(at).cloned() else {
            return;
        };
        self.land(&step.place);
    }

    /// The workbench where `place` is shown: its panel, benchmark and pair,
    /// and the cell or row (a tour's step, a headline finding).
    pub(super) fn land(&mut self, place: &crate::tour::Place) {
        let Some(d) = self.data.clone() else { return };
        let a = &d.audit;
        let locate = |sel: &mut Selection, p: &crate::analysis::PairNames| {
            let benches = a.benchmarks();
            sel.bench = benches.iter().position(|b| *b == p.benchmark).unwrap_or(0);
            sel.pair = a
                .pairs_of(&p.benchmark)
                .iter()
                .position(|q| q.base == p.base && q.rl == p.rl)
                .unwrap_or(0);
        };
        self.filter.clear();
        self.sel.category = None;
        match place {
            crate::tour::Place::Budget {
                pair,
                k,
                level,
                mode,
            } => {
                locate(&mut self.sel, pair);
                self.sel.k = a.pass.ks.iter().position(|x| x == k).unwrap_or(0);
                self.sel.level = a
                    .settings
                    .levels
                    .iter()
                    .position(|x| x == level)
                    .unwrap_or(0);
                self.sel.mode = *mode;
                self.go_panel(Panel::Budget);
            }
            crate::tour::Place::Table { topic, row, pair } => {
                use crate::tour::Topic;
                let panel = match topic {
                    Topic::Cost => Panel::Cost,
                    Topic::Matched => Panel::Steps,
                    Topic::Recovery => Panel::Recovery,
                    Topic::Likelihood => Panel::Likelihood,
                    Topic::Training => Panel::Training,
                    Topic::BudgetMix => Panel::BudgetMix,
                    _ => Panel::Budget,
                };
                if let Some(p) = pair {
                    locate(&mut self.sel, p);
                }
                self.sel.mode = None;
                self.llr_view = false;
                self.ceiling = usize::MAX;
                self.go_panel(panel);
                self.set_row(*row);
            }
            crate::tour::Place::BudgetMix { run, row } => {
                // The panel's run is the selection's pair index (p).
                self.sel.pair = *run;
                self.sel.mode = None;
                self.go_panel(Panel::BudgetMix);
                self.set_row(*row);
            }
        }
    }

    /// A key while the tour runs: n / Space next, N back, ↑↓ scroll its
    /// text, q / Esc leave it (the workbench stays where it is), ? help.
    pub(super) fn tour_key(&mut self, k: &KeyEvent) -> bool {
        let Some(t) = &self.tour else { return false };
        let (at, n) = (t.at, t.steps.len());
        self.message = None;
        match k.code {
            KeyCode::Char('n') | KeyCode::Char(' ') => {
                if at + 1 < n {
                    self.tour_go(at + 1);
                } else {
                    self.tour = None;
                    self.message =
                        Some("tour done — you are on its last panel; t starts it again".into());
                }
            }
            KeyCode::Char('N') => self.tour_go(at.saturating_sub(1)),
            KeyCode::Down | KeyCode::Char('j') => {
                if let Some(t) = self.tour.as_mut() {
                    t.scroll = t.scroll.saturating_add(1);
                }
            }
            KeyCode::Up | KeyCode::Char('k') => {
                if let Some(t) = self.tour.as_mut() {
                    t.scroll = t.scroll.saturating_sub(1);
                }
            }
            KeyCode::Char('q') | KeyCode::Esc => {
                self.tour = None;
                self.message = Some("left the tour — t starts it again".into());
            }
            _ => return false,
        }
        true
    }
}
