//! Changes of the robot's dynamics (time-varying GP work): the innovation monitors (CUSUM,
//! coverage), announced changes, the configured reaction through the worker, and the
//! probe offers.

use super::super::change::{ChangeAction, ChangeNotice, ChangeSource, standardised_innovation};
use super::super::fit_worker::{Injection, Job, Prober};

use super::*;

impl Learner {
    /// Innovations of the current sample (after `predict`, standardised `mu`, `var`): kept
    /// with the sample in the replay buffer, fed to the coverage monitor and the CUSUM.
    /// Real-time.
    #[allow(clippy::needless_range_loop)] // five per-joint arrays in step
    pub(super) fn watch_for_change(&mut self, t_secs: f64) {
        let scale = self.standardizer.std();
        let mut inside = true;
        let mut calibrated = true;
        for j in 0..self.nv {
            let e = self.y_std[j] - self.mu[j];
            self.innovation[j] = e * scale[j];
            self.z[j] = standardised_innovation(e, self.var[j], self.noise_var_std[j]);
            match self.calibration[j].eta(self.var[j].max(0.0).sqrt()) {
                Some(eta) => inside &= e.abs() <= eta,
                None => calibrated = false,
            }
        }
        self.replay.set_last_innovation(&self.innovation);
        if calibrated {
            self.coverage.push(inside);
        }
        let params = &self.params.change;
        if params.detect
            && self.pending_change.is_none()
            && let Some((joint, onset)) = self.cusum.push(params, t_secs, &self.z)
        {
            let notice = ChangeNotice {
                source: ChangeSource::Detected,
                t_secs,
                onset_secs: onset,
                joint: Some(joint),
                action: params.action,
            };
            self.note_change(notice);
        }
    }

    pub(super) fn note_change(&mut self, notice: ChangeNotice) {
        self.changes += 1;
        if self.change_notices.len() < self.change_notices.capacity() {
            self.change_notices.push(notice);
        }
        if notice.action != ChangeAction::Report {
            self.pending_change = Some(notice);
        }
    }

    /// An explicit "the dynamics changed now" (a payload picked up, from a topic or a
    /// service): reacts as configured, with the onset at the newest sample. Real-time.
    pub fn announce_change(&mut self) {
        let t = self.last_sample_t;
        if !t.is_finite() {
            return;
        }
        self.note_change(ChangeNotice {
            source: ChangeSource::Announced,
            t_secs: t,
            onset_secs: t,
            joint: None,
            action: self.params.change.action,
        });
    }

    /// Starts the reaction to a pending change once nothing else is in progress (and, for a
    /// re-identification, once enough samples followed the onset). Real-time.
    pub(super) fn react_to_change(&mut self) {
        let Some(notice) = self.pending_change else {
            return;
        };
        if self.model.is_none() {
            self.pending_change = None;
            return;
        }
        if self.change_in_progress() {
            return;
        }
        let onset = notice.onset_secs;
        let injection = match notice.action {
            ChangeAction::Report => None,
            ChangeAction::Inject => Some(Injection::Jump {
                before_t: onset,
                add_var: self.params.change.jump_std_nm.powi(2),
            }),
            ChangeAction::Drop => Some(Injection::Drop { before_t: onset }),
            ChangeAction::Reidentify => {
                if self.last_sample_t < onset + self.params.change.reidentify_window_s {
                    return;
                }
                Some(Injection::Reidentify { before_t: onset })
            }
        };
        self.pending_change = None;
        if let Some(injection) = injection {
            self.start_export(ExportPurpose::Rebuild { injection });
        }
    }

    /// With `learn.probe.enabled`: from now on the background worker plans a probe after
    /// every rebuild that follows a change (not after `report`, which rebuilds nothing), with
    /// the rebuilt model, and sends the outcome to the returned receiver (which keeps the
    /// oldest unread offers; newer ones are dropped while it is full). None when probing is
    /// off or the worker is gone. Not real-time: call before the loop starts.
    pub fn offer_probes(&mut self) -> Option<std::sync::mpsc::Receiver<super::super::ProbeOffer>> {
        if !self.params.probe.enabled {
            return None;
        }
        let (offers, receiver) = std::sync::mpsc::sync_channel(4);
        let prober = Prober {
            robot: self.robot.clone(),
            layout: self.layout,
            params: self.params.probe.clone(),
            offers,
        };
        self.worker
            .as_ref()?
            .try_send(Job::SetProber(Box::new(prober)))
            .ok()?;
        Some(receiver)
    }

    /// Changes noticed since the last call (drain every tick). Real-time.
    pub fn take_change_notices(&mut self) -> std::vec::Drain<'_, ChangeNotice> {
        self.change_notices.drain(..)
    }

    /// Coverage of ±η_cal over the monitor's window (None until it is full and calibrated).
    pub fn coverage(&self) -> Option<f64> {
        self.coverage.coverage()
    }

    /// Whether the change detector can raise an alarm now: its warm-up after the last new
    /// model is over, or that model came with its normaliser (`learn.change.warmup_samples`).
    pub fn change_detector_armed(&self) -> bool {
        self.params.change.detect && self.cusum.armed(&self.params.change)
    }

    /// Changes detected or announced so far.
    pub fn changes(&self) -> u64 {
        self.changes
    }

    /// The payload mass change found by the last re-identification, kg (NaN before one).
    pub fn reidentified_mass_kg(&self) -> f64 {
        self.reidentified_mass_kg
    }
}
