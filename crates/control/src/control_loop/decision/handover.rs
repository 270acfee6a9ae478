//! Smooth hand-overs and the torque-rate limit. Every switch between laws or models (a model
//! adopted or swapped in, a fallback, a re-adoption, the end of a safe episode, activation)
//! starts a blend: the step between the last command and the new law's first command is
//! kept as an offset that decays linearly to zero over `handover_s`. Whatever the law, every
//! command then changes by at most the rate limit × the tick period (per joint) from the
//! last one sent, so that drivers which reject torque jumps (Franka's) never see one.
//!
//! The blend's sum can leave the effort limits when the new law's command moves away from
//! its first value (found by the hostile-input suite: 1.08 × the limit after a model load),
//! so it is clamped into them before the rate limit, which then keeps every command inside
//! (the box of limits is convex).
//!
//! The period is the time between states, capped at twice its running estimate, so that a
//! state after a gap cannot license a jump. Real-time: no allocation after `new`.

/// The blend and the rate limiter (values in the command convention, as sent).
#[derive(Debug, Clone)]
pub struct Handover {
    rate_nm_per_s: Vec<f64>,
    /// |full torque| allowed per joint, N·m.
    effort_nm: Vec<f64>,
    blend_s: f64,
    offset: Vec<f64>,
    blend_left_s: f64,
    last: Vec<f64>,
    has_last: bool,
    period_s: f64,
    /// Commands the rate limit changed.
    pub rate_limited: u64,
    /// Blends started.
    pub blends: u64,
    /// Largest change between two commands sent, N·m.
    pub max_step_nm: f64,
}

/// The period assumed before two states have been seen, s (the strictest usual rate, 1 kHz).
const FIRST_PERIOD_S: f64 = 0.001;

impl Handover {
    /// Rate limits per joint (N·m/s), the blend time (s) and the effort limits (N·m, of the
    /// full torque).
    pub fn new(rate_nm_per_s: Vec<f64>, blend_s: f64, effort_nm: Vec<f64>) -> Self {
        let nv = rate_nm_per_s.len();
        Self {
            rate_nm_per_s,
            effort_nm,
            blend_s,
            offset: vec![0.0; nv],
            blend_left_s: 0.0,
            last: vec![0.0; nv],
            has_last: false,
            period_s: FIRST_PERIOD_S,
            rate_limited: 0,
            blends: 0,
            max_step_nm: 0.0,
        }
    }

    /// Starts from `u` as if it had been sent (activation: what the robot has now).
    pub fn start_from(&mut self, u: &[f64]) {
        self.last.copy_from_slice(u);
        self.has_last = true;
        self.offset.fill(0.0);
        self.blend_left_s = 0.0;
    }

    /// A switch: the new law's command is `u`; the step from the last command blends away.
    pub fn begin_blend(&mut self, u: &[f64]) {
        if !self.has_last || self.blend_s <= 0.0 {
            return;
        }
        for ((o, last), new) in self.offset.iter_mut().zip(&self.last).zip(u) {
            *o = last - new;
        }
        self.blend_left_s = self.blend_s;
        self.blends += 1;
    }

    /// Ends a blend at once (the safe output goes as fast as the rate limit allows).
    pub fn cancel_blend(&mut self) {
        self.blend_left_s = 0.0;
        self.offset.fill(0.0);
    }

    /// The command to send for the law's `u` (changed in place), `elapsed_s` after the last
    /// one: the blend's offset added and the sum clamped into the effort limits, then the
    /// rate limit from the last command sent. `gravity`: g(q) when the robot adds it to what
    /// is sent (the limits bound the full torque, sent + g).
    pub fn apply(&mut self, u: &mut [f64], elapsed_s: f64, gravity: Option<&[f64]>) {
        if elapsed_s.is_finite() && elapsed_s > 0.0 {
            // The period: a slow running estimate, so that one long gap does not move it.
            self.period_s += 0.05 * (elapsed_s.min(10.0 * self.period_s) - self.period_s);
        }
        let dt = if elapsed_s.is_finite() && elapsed_s > 0.0 {
            elapsed_s.min(2.0 * self.period_s)
        } else {
            self.period_s
        };
        if self.blend_left_s > 0.0 {
            let weight = self.blend_left_s / self.blend_s;
            for (j, (u, o)) in u.iter_mut().zip(&self.offset).enumerate() {
                let shift = gravity.map_or(0.0, |g| g[j]);
                let limit = self.effort_nm[j];
                *u = (*u + weight * o).clamp(-limit - shift, limit - shift);
            }
            self.blend_left_s -= dt;
        }
        if !self.has_last {
            self.start_from(u);
            return;
        }
        let mut limited = false;
        let mut step_max: f64 = 0.0;
        for ((u, last), rate) in u.iter_mut().zip(&self.last).zip(&self.rate_nm_per_s) {
            let bound = rate * dt;
            let step = *u - last;
            if step.abs() > bound {
                // (Within the bound `u` stays as it is, so a target is reached exactly.)
                *u = last + bound.copysign(step);
                limited = true;
            }
            step_max = step_max.max(step.abs().min(bound));
        }
        self.rate_limited += u64::from(limited);
        self.max_step_nm = self.max_step_nm.max(step_max);
        self.last.copy_from_slice(u);
    }

    /// Whether `target` is reached (the last command equals it).
    pub fn reached(&self, target: &[f64]) -> bool {
        self.has_last && self.last.iter().zip(target).all(|(a, b)| a == b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_switch_blends_and_every_step_respects_the_rate_limit() {
        let mut h = Handover::new(vec![1000.0, 1000.0], 0.1, vec![100.0, 100.0]);
        let mut u = [10.0, -5.0];
        h.apply(&mut u, 0.001, None);
        assert_eq!(u, [10.0, -5.0], "the first command starts the history");
        // A law switch to 30 N·m: blended over 0.1 s, never more than 1 N·m per 1 ms.
        let target = [30.0, -5.0];
        h.begin_blend(&target);
        let mut previous = u;
        let mut reached_at = None;
        for k in 1..=200 {
            let mut u = target;
            h.apply(&mut u, 0.001, None);
            assert!((u[0] - previous[0]).abs() <= 1.0 + 1e-12, "tick {k}: {u:?}");
            if reached_at.is_none() && u == target {
                reached_at = Some(k);
            }
            previous = u;
        }
        let reached_at = reached_at.expect("the blend ends");
        assert!((99..=101).contains(&reached_at), "{reached_at}");
        // A step without a blend is rate-limited: 20 ticks for 20 N·m.
        let mut h = Handover::new(vec![1000.0], 0.1, vec![100.0]);
        h.start_from(&[0.0]);
        let mut u = [20.0];
        h.apply(&mut u, 0.001, None);
        assert_eq!(u, [1.0]);
        // A gap of 1 s does not license a jump: at most 2 periods' worth.
        let mut u = [20.0];
        h.apply(&mut u, 1.0, None);
        assert!(u[0] <= 1.0 + 2.0 * 0.0015 * 1000.0, "{u:?}");
        assert!(h.rate_limited >= 2);
    }

    #[test]
    fn a_blend_never_leaves_the_effort_limits() {
        // Last command +40 N·m, the new law starts at -40 (offset +80) and then moves to +40:
        // unclamped, the blend would send 40 + 0.9 × 80 = 112 N·m.
        let limit = 50.0;
        for gravity in [None, Some([10.0])] {
            let shift = gravity.map_or(0.0, |g: [f64; 1]| g[0]);
            let mut h = Handover::new(vec![1e9], 0.1, vec![limit]);
            h.start_from(&[40.0 - shift]);
            h.begin_blend(&[-40.0 - shift]);
            for _ in 0..150 {
                let mut u = [40.0 - shift];
                h.apply(&mut u, 0.001, gravity.as_ref().map(|g| &g[..]));
                let full = u[0] + shift;
                assert!(full.abs() <= limit, "{full} N·m sent (gravity {gravity:?})");
            }
        }
    }
}
