//! The learner's model changes: the first fit and refits on the background worker, hot
//! swaps, resets and their cancellation, the replay copy (export) handed to the worker, and
//! adopting a finished model at a tick boundary ([`Learner::poll`]). Real-time on the
//! control thread: bounded channels, no waiting.

use std::time::Instant;

use gpn_gp_core::bound::CalibratedBound;

use super::super::change::WarmNormaliser;
use super::super::fit_worker::{
    FitJob, FitWorker, Job, ModelChange, ReadyModel, Reply, ReplyMeta, Retired,
};
use super::super::swap::{
    CancelOutcome, Finished, START_MODEL_ID, SwapEvent, SwapOutcome, SwapRefusal, SwapRequest,
    SwapSource,
};

use super::*;

/// Samples the model in use must have learned before refit number `done` (from 0): the
/// first after `after`, each later one after twice as many as the one before, so that
/// refits follow the data as it grows.
fn refit_threshold(after: usize, done: u32) -> usize {
    after.saturating_mul(1usize.checked_shl(done).unwrap_or(usize::MAX))
}

impl Learner {
    /// Moves the fit buffers to the worker; false if it is gone.
    pub(super) fn send_fit(&mut self) -> bool {
        let (Some(worker), Some(samples)) = (self.worker.as_ref(), self.fit_buffers.take()) else {
            return false;
        };
        let job = FitJob {
            samples,
            d: self.layout.dim(),
            p: self.nv,
            max_points: self.params.fit_max_points,
            sharing: self.params.hyper_sharing,
            max_noise_groups: self.params.max_noise_groups,
            normaliser: self.warm_normaliser(),
        };
        match worker.try_send(Job::Fit(job, ModelChange::Fit)) {
            Ok(()) => true,
            Err(Job::Fit(job, _)) => {
                self.fit_buffers = Some(job.samples);
                false
            }
            Err(_) => false,
        }
    }

    /// Starts a refit on the replay buffer when due (the copy runs a chunk per tick).
    pub(super) fn maybe_refit(&mut self) {
        let due = self.params.refit_after_samples > 0
            && !self.hyper_fixed
            && self.refits_done < self.params.max_refits
            && self.learned_by_model
                >= refit_threshold(self.params.refit_after_samples, self.refits_done)
            && self.export.is_none()
            && self.fit_buffers.is_some();
        if due {
            self.start_export(ExportPurpose::Refit);
            self.refits_done += 1;
        }
    }

    pub(super) fn start_export(&mut self, purpose: ExportPurpose) {
        if let Some(buffers) = self.fit_buffers.as_mut() {
            buffers.clear();
        }
        self.export = Some(Export { next: 0, purpose });
    }

    /// Copies the next chunk of the replay buffer; hands the job to the worker when the
    /// copy is complete. Samples that arrive during the copy may be skipped or seen twice
    /// (the buffer is a ring); warming does not need an exact snapshot. Real-time.
    pub(super) fn advance_export(&mut self) {
        let (Some(export), Some(buffers)) = (self.export.as_mut(), self.fit_buffers.as_mut())
        else {
            return;
        };
        let end = (export.next + EXPORT_CHUNK).min(self.replay.len());
        for i in export.next..end {
            if let Some(s) = self.replay.get(i) {
                buffers.push(s.x, s.y, s.noise_var, s.innovation, s.t_secs);
            }
        }
        export.next = end;
        if end < self.replay.len() {
            return;
        }
        let (Some(export), Some(samples), Some(worker)) = (
            self.export.take(),
            self.fit_buffers.take(),
            self.worker.as_ref(),
        ) else {
            return;
        };
        let job = match export.purpose {
            ExportPurpose::Refit => Job::Fit(
                FitJob {
                    samples,
                    d: self.layout.dim(),
                    p: self.nv,
                    max_points: self.params.fit_max_points,
                    sharing: self.params.hyper_sharing,
                    max_noise_groups: self.params.max_noise_groups,
                    normaliser: self.warm_normaliser(),
                },
                ModelChange::Refit,
            ),
            ExportPurpose::Swap { factory, id } => Job::Warm {
                factory: Some(factory),
                samples,
                change: ModelChange::Swap,
                id,
                injection: None,
                normaliser: self.warm_normaliser(),
            },
            ExportPurpose::Fresh { id } => Job::Warm {
                factory: None,
                samples,
                change: ModelChange::Fresh,
                id,
                injection: None,
                normaliser: self.warm_normaliser(),
            },
            ExportPurpose::Rebuild { injection } => Job::Warm {
                factory: None,
                samples,
                change: ModelChange::Rebuild,
                id: 0,
                injection: Some(injection),
                normaliser: self.warm_normaliser(),
            },
        };
        if let Err(job) = worker.try_send(job) {
            // The worker's queue is full (it is dropping retired models): keep the buffers
            // and report the change as failed rather than waiting.
            let (samples, id, change) = match job {
                Job::Fit(j, c) => (Some(j.samples), 0, c),
                Job::Warm {
                    samples,
                    id,
                    change,
                    ..
                } => (Some(samples), id, change),
                _ => (None, 0, ModelChange::Refit),
            };
            self.fit_buffers = samples;
            self.push_event(SwapEvent {
                id,
                change,
                outcome: SwapOutcome::Failed(String::new()),
            });
        }
    }

    /// What a model warmed on the worker measures for the change detector (None when
    /// detection is off). Real-time: the settings hold no heap data.
    fn warm_normaliser(&self) -> Option<WarmNormaliser> {
        self.params.change.detect.then(|| WarmNormaliser {
            window: self.params.change.normalise_samples,
            gate: self.params.gate.clone(),
        })
    }

    pub(super) fn push_event(&mut self, event: SwapEvent) {
        if event.id != 0 && self.events.len() < self.events.capacity() {
            self.events.push(event);
        }
    }

    pub(super) fn change_in_progress(&self) -> bool {
        self.export.is_some()
            || self.fit_buffers.is_none()
            || self.pending.is_some()
            || self.pending_adopt
            || self.cancelled.is_some()
            || self.undo_pending.is_some()
    }

    /// Starts from `ready` (a model file, `model.file`): adopted at the first ticks, before
    /// any fit; its change is reported with id [`START_MODEL_ID`]. Its hyperparameters were
    /// fitted on what it learned, so no refit follows (a refit would warm a new model on the
    /// replay buffer alone and drop what the file holds); a reset restores them. Refused only
    /// while another change is in progress (call it before the loop runs).
    pub fn start_from(&mut self, ready: Box<ReadyModel>) -> Result<(), SwapRefusal> {
        self.request_swap(SwapRequest {
            id: START_MODEL_ID,
            source: SwapSource::Ready(ready),
        })
        .map_err(|(_, why)| why)?;
        self.refits_done = self.params.max_refits;
        Ok(())
    }

    /// Asks for a model change (a swap warmed on the replay buffer, or a ready model).
    /// Refused at once while another change is in progress; the request is then given back
    /// (to be dropped off the control thread). Real-time: no allocation (it is moved).
    pub fn request_swap(
        &mut self,
        request: SwapRequest,
    ) -> Result<(), (Option<SwapRequest>, SwapRefusal)> {
        if self.phase == LearnPhase::Fitting {
            return Err((Some(request), SwapRefusal::Fitting));
        }
        if self.change_in_progress() {
            return Err((Some(request), SwapRefusal::Busy));
        }
        let Some(worker) = self.worker.as_ref() else {
            return Err((Some(request), SwapRefusal::Busy));
        };
        let id = request.id;
        let job = match request.source {
            SwapSource::Warm(factory) if self.model.is_some() => {
                self.start_export(ExportPurpose::Swap { factory, id });
                self.user_change = Some(id);
                return Ok(());
            }
            SwapSource::Warm(factory) => Job::SetFactory(factory, id),
            SwapSource::Ready(ready) => Job::Adopt(ready, id),
        };
        let adopting = matches!(job, Job::Adopt(..));
        match worker.try_send(job) {
            Ok(()) => {
                self.pending_adopt = adopting;
                self.user_change = Some(id);
                Ok(())
            }
            Err(job) => Err((give_back(job), SwapRefusal::Busy)),
        }
    }

    /// Cancels the caller's change `id` if it is still in progress: it will never be
    /// adopted (a result that arrives later is retired off the control thread, and the
    /// worker goes back to the plugin and hyperparameters in use). Otherwise says how it
    /// finished. Real-time.
    pub fn cancel_swap(&mut self, id: u64) -> CancelOutcome {
        if self.user_change != Some(id) {
            return match self.finished {
                Some((done, how)) if done == id => CancelOutcome::Finished(how),
                _ => CancelOutcome::Unknown,
            };
        }
        self.user_change = None;
        if let Some(export) = self
            .export
            .take_if(|e| matches!(e.purpose, ExportPurpose::Swap { id: own, .. } if own == id))
        {
            // Still copying the replay buffer: nothing reached the worker yet.
            if let ExportPurpose::Swap { factory, .. } = export.purpose {
                self.retire(Retired {
                    factory: Some(factory),
                    ..Retired::default()
                });
            }
        } else {
            self.cancelled = Some(id);
        }
        CancelOutcome::Cancelled
    }

    /// Whether the reply for `meta` answers a cancelled change.
    pub(super) fn is_cancelled(&self, meta: &ReplyMeta) -> bool {
        meta.id != 0 && self.cancelled == Some(meta.id)
    }

    /// Retires a cancelled change's result and tells the worker to undo it.
    pub(super) fn drop_cancelled(&mut self, meta: &ReplyMeta, retired: Retired) {
        self.cancelled = None;
        if meta.change == ModelChange::Load {
            self.pending_adopt = false;
        }
        self.retire(retired);
        self.undo_pending = Some(meta.id);
        self.send_undo();
    }

    pub(super) fn send_undo(&mut self) {
        if let (Some(id), Some(worker)) = (self.undo_pending, self.worker.as_ref())
            && worker.try_send(Job::Cancel(id)).is_ok()
        {
            self.undo_pending = None;
        }
    }

    pub(super) fn finish(&mut self, meta: &ReplyMeta, how: Finished) {
        if meta.id != 0 && self.user_change == Some(meta.id) {
            self.user_change = None;
            self.finished = Some((meta.id, how));
        }
    }

    /// Forgets what was learned: the model (retired off the control thread), the replay
    /// buffer and the calibration. With `keep_hyperparameters` (and hyperparameters known),
    /// a fresh model with the current hyperparameters is built and adopted; otherwise the
    /// learner collects samples for a new fit. Real-time.
    pub fn reset(&mut self, keep_hyperparameters: bool, id: u64) -> Result<(), SwapRefusal> {
        if self.phase == LearnPhase::Fitting {
            return Err(SwapRefusal::Fitting);
        }
        if self.change_in_progress() {
            return Err(SwapRefusal::Busy);
        }
        let keep = keep_hyperparameters && self.hyper.is_some();
        let model = self.model.take();
        self.retire(Retired {
            model,
            ..Retired::default()
        });
        self.replay.clear();
        self.calibration.iter_mut().for_each(CalibratedBound::reset);
        self.previous.valid = false;
        self.learned_by_model = 0;
        self.refits_done = 0;
        self.innovation_gate.reset();
        if keep {
            self.phase = LearnPhase::Fitting;
            self.start_export(ExportPurpose::Fresh { id });
        } else {
            self.phase = LearnPhase::Collecting;
            if let Some(buffers) = self.fit_buffers.as_mut() {
                buffers.clear();
            }
        }
        Ok(())
    }

    /// Results of model changes since the last call (drain every tick). Real-time.
    pub fn take_events(&mut self) -> std::vec::Drain<'_, SwapEvent> {
        self.events.drain(..)
    }

    /// The last adoption's identity and readiness time.
    pub fn last_adoption(&self) -> Option<ReplyMeta> {
        self.last_adoption
    }

    /// The running model's learned state with what is needed to rebuild it: the plugin's
    /// identity, hyperparameters and output map. Not real-time: the model serialises into
    /// new memory (call it between ticks).
    pub fn snapshot(&self) -> Result<ModelSnapshot, String> {
        let model = self.model.as_ref().ok_or("no model is active yet")?;
        let (plugin, plugin_version) = model
            .plugin_identity()
            .ok_or("the model is not a plugin and cannot be saved")?;
        Ok(ModelSnapshot {
            plugin,
            plugin_version,
            hyper: self.hyper.clone().unwrap_or(serde_json::Value::Null),
            output_mean: self.standardizer.mean().to_vec(),
            output_std: self.standardizer.std().to_vec(),
            input_dim: model.input_dim(),
            friction_feature_velocity: self.layout.friction_velocity(),
            output_dim: model.output_dim(),
            stats: model.stats(),
            accel_range: self.accel_seen.clone(),
            state: model.state_bytes().map_err(|e| e.to_string())?,
        })
    }

    /// A fit, refit or model change is running on the background thread.
    pub fn background_busy(&self) -> bool {
        (self.fit_buffers.is_none() || self.pending_adopt)
            && self.export.is_none()
            && self.pending.is_none()
            && self.worker.is_some()
    }

    /// Advances a replay copy in progress and adopts a model the background worker
    /// finished, if any; true when a new model was adopted at this call. The old model, its
    /// hyperparameters and output map go back to the worker to be dropped there. Real-time:
    /// no allocation, no waiting.
    pub fn poll(&mut self) -> bool {
        self.send_undo();
        self.react_to_change();
        self.advance_export();
        let Some(reply) = self
            .pending
            .take()
            .or_else(|| self.worker.as_ref().and_then(FitWorker::try_recv))
        else {
            return false;
        };
        match reply {
            Reply::Ready(outcome, buffers, meta) => {
                if let Some(buffers) = buffers {
                    self.fit_buffers = Some(buffers);
                }
                if self.is_cancelled(&meta) {
                    self.drop_cancelled(
                        &meta,
                        Retired {
                            model: Some(outcome.model),
                            standardizer: Some(outcome.standardizer),
                            hyper: Some(outcome.hyper),
                            normaliser: outcome.normaliser,
                            ..Retired::default()
                        },
                    );
                    return false;
                }
                self.finish(&meta, Finished::Adopted);
                if meta.change == ModelChange::Load {
                    self.pending_adopt = false;
                }
                self.learned_by_model = 0;
                // A loaded model knows the q̈ of what it learned: queries may reach as far.
                for (seen, &(lo, hi)) in self.accel_seen.iter_mut().zip(&outcome.accel_range) {
                    *seen = (seen.0.min(lo), seen.1.max(hi));
                }
                let old_standardizer =
                    std::mem::replace(&mut self.standardizer, outcome.standardizer);
                let old_hyper = self.hyper.replace(outcome.hyper);
                let old_model = self.model.replace(outcome.model);
                base_noise_var(
                    self.hyper.as_ref(),
                    self.standardizer.std(),
                    self.params.torque_noise_std_nm.powi(2),
                    &mut self.noise_base_std,
                );
                // The detector starts afresh with the new model: armed at once when the
                // worker measured its normaliser while warming it.
                match &outcome.normaliser {
                    Some(nu) => self.cusum.reset_to(nu),
                    None => self.cusum.reset(),
                }
                self.retire(Retired {
                    model: old_model,
                    standardizer: Some(old_standardizer),
                    hyper: old_hyper,
                    normaliser: outcome.normaliser,
                    ..Retired::default()
                });
                if matches!(meta.change, ModelChange::Fit | ModelChange::Refit) {
                    self.counts.fit_secs = outcome.fit_secs;
                }
                if meta.change == ModelChange::Refit {
                    self.counts.refits_adopted += 1;
                }
                self.phase = LearnPhase::Active;
                self.last_adoption = Some(meta);
                if meta.reidentified_mass_kg.is_finite() {
                    self.reidentified_mass_kg = meta.reidentified_mass_kg;
                }
                self.push_event(SwapEvent {
                    id: meta.id,
                    change: meta.change,
                    outcome: SwapOutcome::Adopted {
                        ready_at: meta.ready_at,
                        adopted_at: Instant::now(),
                    },
                });
                true
            }
            Reply::Failed(message, buffers, meta) => {
                if let Some(buffers) = buffers {
                    self.fit_buffers = Some(buffers);
                }
                if self.is_cancelled(&meta) {
                    self.drop_cancelled(
                        &meta,
                        Retired {
                            message: Some(message),
                            ..Retired::default()
                        },
                    );
                    return false;
                }
                self.finish(&meta, Finished::Failed);
                if meta.change == ModelChange::Load {
                    self.pending_adopt = false;
                }
                // A failed refit or swap leaves the running model in place.
                if self.model.is_none() {
                    self.phase = if meta.change == ModelChange::Fresh {
                        LearnPhase::Collecting
                    } else {
                        LearnPhase::Failed
                    };
                }
                if meta.id != 0 {
                    self.push_event(SwapEvent {
                        id: meta.id,
                        change: meta.change,
                        outcome: SwapOutcome::Failed(message),
                    });
                } else {
                    let old = self.failure.replace(message);
                    self.retire(Retired {
                        message: old,
                        ..Retired::default()
                    });
                }
                false
            }
            Reply::Kept(nlpd, buffers, meta) => {
                if let Some(buffers) = buffers {
                    self.fit_buffers = Some(buffers);
                }
                self.counts.refits_kept += 1;
                self.counts.last_kept_nlpd = nlpd;
                self.finish(&meta, Finished::Failed);
                false
            }
            Reply::FactorySet(meta) => {
                if self.is_cancelled(&meta) {
                    self.drop_cancelled(&meta, Retired::default());
                    return false;
                }
                self.finish(&meta, Finished::FactorySet);
                self.push_event(SwapEvent {
                    id: meta.id,
                    change: meta.change,
                    outcome: SwapOutcome::FactorySet,
                });
                false
            }
        }
    }

    /// While fitting, waits up to `timeout` for the model; the next [`Learner::poll`] adopts
    /// it. Returns true when a reply is ready. Not real-time: a simulation running faster
    /// than the wall clock uses it to hold simulated time while the background fit runs.
    pub fn wait_for_model(&mut self, timeout: std::time::Duration) -> bool {
        if self.pending.is_some() {
            return true;
        }
        if !self.background_busy() {
            return false;
        }
        self.pending = self.worker.as_ref().and_then(|w| w.recv_timeout(timeout));
        self.pending.is_some()
    }

    pub(super) fn retire(&self, retired: Retired) {
        if let Some(worker) = &self.worker {
            // If the queue is full it is dropped here; that only happens when the worker is
            // busy with several jobs at once.
            let _ = worker.try_send(Job::Retire(retired));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::refit_threshold;

    #[test]
    fn each_refit_waits_twice_as_long_as_the_one_before() {
        let waits: Vec<usize> = (0..4).map(|k| refit_threshold(3000, k)).collect();
        assert_eq!(waits, [3000, 6000, 12_000, 24_000]);
        assert_eq!(refit_threshold(usize::MAX / 2, 3), usize::MAX, "saturates");
        assert_eq!(refit_threshold(0, 5), 0);
        assert_eq!(
            refit_threshold(1, 200),
            usize::MAX,
            "a shift past the word saturates"
        );
    }
}
