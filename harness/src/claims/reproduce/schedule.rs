//! When a group's verdicts are looked at, and at what confidence: the looks spend α by plan
//! (the O'Brien-Fleming-type function), and after the pilot the last look is planned again from
//! the pilot's measured cost, never from its values.

use std::time::Duration;

use crate::stats::spending::{look_alphas, look_alphas_after};

/// When a group's verdicts are looked at, and at what confidence.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LookSchedule {
    /// Replicates at each look, increasing.
    pub looks: Vec<u32>,
    /// The confidence of each look's interval, one per look: 1 − the α the look spends.
    pub confidence: Vec<f64>,
    /// Wall time after which no look beyond the first is taken (`None`: no limit).
    pub budget: Option<Duration>,
    /// How the looks after the pilot may be planned again from its measured cost (`None`:
    /// they stay as planned).
    pub growth: Option<Growth>,
    /// The log half-width below which a decided ratio claim needs no further look (`None`: a
    /// group stops once every claim is decided).
    pub precision: Option<f64>,
}

/// How far a schedule's last look may move out after the pilot.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Growth {
    /// The most replicates at the last look.
    pub most: u32,
    /// Replicates between looks after the pilot.
    pub step: u32,
    /// The family-wise α the looks spend.
    pub alpha: f64,
}

/// The last look's replicates for a pilot of `pilot` replicates that took `seconds` each, a
/// `budget` of wall seconds for the rest, a planned last look at `planned` and at most `most`:
/// the pilot plus as many as the budget affords, never before `planned` (the floor every group
/// gets, however dear its replicates: a JVM per invocation) nor beyond `most`. The choice
/// depends only on costs, never on the values measured, so it cannot steer a verdict.
pub(crate) fn last_look(pilot: u32, seconds: f64, budget: f64, planned: u32, most: u32) -> u32 {
    affordable(pilot, seconds, budget).clamp(planned, most.max(planned))
}

/// The pilot's `pilot` replicates plus as many more as `budget` wall seconds afford at
/// `seconds` each (unbounded when a replicate cost nothing measurable).
fn affordable(pilot: u32, seconds: f64, budget: f64) -> u32 {
    let more = if seconds > 0.0 && seconds.is_finite() {
        (budget / seconds).floor().min(f64::from(u32::MAX)) as u32
    } else {
        u32::MAX
    };
    pilot.saturating_add(more)
}

impl LookSchedule {
    /// Looks at `looks` replicates that spend a family-wise `alpha` by the Lan-DeMets
    /// O'Brien-Fleming-type function over the information fraction (replicates at a look over
    /// replicates at the last): little at the first looks, nearly all at the last
    /// ([`look_alphas`]). A budget that ends the looks early leaves the rest unspent.
    pub fn spending(looks: Vec<u32>, alpha: f64, budget: Option<Duration>) -> LookSchedule {
        let confidence = look_alphas(&looks, alpha)
            .into_iter()
            .map(|a| 1.0 - a)
            .collect();
        LookSchedule {
            looks,
            confidence,
            budget,
            growth: None,
            precision: None,
        }
    }

    /// Plans the looks after the pilot (the first look, taken) again from the `seconds` each of
    /// its replicates took: the last at [`last_look`], looks every `step` before it, and the α
    /// the pilot did not spend shared over them by the same O'Brien-Fleming shape
    /// ([`look_alphas_after`]). The pilot's α was fixed before, so the looks spend α in all
    /// whatever is chosen. Without growth, a budget or a look after the pilot the schedule
    /// stays as it is. Why the last look is where it is, in words.
    pub fn after_pilot(&mut self, seconds: f64) -> String {
        let (Some(growth), Some(budget), Some(&pilot), Some(&planned)) = (
            self.growth,
            self.budget,
            self.looks.first(),
            self.looks.last(),
        ) else {
            return "planned before the pilot".into();
        };
        if self.looks.len() < 2 {
            return "a single look, planned before the pilot".into();
        }
        let budget = budget.as_secs_f64();
        let last = last_look(pilot, seconds, budget, planned, growth.most);
        let why = if affordable(pilot, seconds, budget) < planned {
            format!("the budget ({budget:.0} s) affords less; every group gets {planned}")
        } else if last == planned {
            format!("the budget ({budget:.0} s) affords no more")
        } else if last == growth.most.max(planned) {
            format!("the budget ({budget:.0} s) affords more; at most {last}")
        } else {
            format!("as many as the budget ({budget:.0} s) affords")
        };
        if last != planned {
            let mut later: Vec<u32> = (1..)
                .map(|k| pilot + k * growth.step)
                .take_while(|&n| n < last)
                .collect();
            later.push(last);
            let alphas = look_alphas_after(1.0 - self.confidence[0], pilot, &later, growth.alpha);
            self.looks.truncate(1);
            self.confidence.truncate(1);
            self.looks.extend(later);
            self.confidence.extend(alphas.into_iter().map(|a| 1.0 - a));
        }
        format!("last look at {last}: {why}")
    }

    /// The confidence of the interval at look `index` (counted from 0).
    pub fn confidence_at(&self, index: usize) -> f64 {
        self.confidence[index]
    }
}
