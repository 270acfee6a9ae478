//! `BranchModel`: one model per part of a kinematic split ([`super::branches`]) behind the
//! [`OnlineModel`] contract, so the learner, swaps and model files handle it as one model.
//!
//! Each call gathers the part's inputs (and targets, noise) into scratch buffers sized at
//! construction, calls the part's model and scatters its outputs back: no allocation, as the
//! members' own calls. An update that fails in one part leaves the parts before it updated
//! (the learner counts the sample as failed; the parts stay consistent models on their own).

use gpn_gp_core::model::{ModelError, ModelStats, OnlineModel, check_len};

use super::branches::Part;

/// Header of the learned state: the format and the number of parts.
const STATE_MAGIC: &[u8; 8] = b"GPNBRCH1";

struct Member {
    part: Part,
    model: Box<dyn OnlineModel>,
    x: Vec<f64>,
    y: Vec<f64>,
    noise: Vec<f64>,
    mean: Vec<f64>,
    var: Vec<f64>,
}

/// Models of the parts of a split, seen as one model of `d` inputs and `p` outputs.
pub struct BranchModel {
    d: usize,
    p: usize,
    members: Vec<Member>,
}

impl BranchModel {
    /// Wraps one model per part; each model's dimensions must be its part's.
    pub fn new(
        d: usize,
        p: usize,
        parts: Vec<(Part, Box<dyn OnlineModel>)>,
    ) -> Result<Self, String> {
        let members = parts
            .into_iter()
            .map(|(part, model)| {
                let (di, pi) = (part.inputs.len(), part.outputs.len());
                if model.input_dim() != di || model.output_dim() != pi {
                    return Err(format!(
                        "the model of outputs {:?} has {} inputs and {} outputs, expected {di} and {pi}",
                        part.outputs,
                        model.input_dim(),
                        model.output_dim()
                    ));
                }
                Ok(Member {
                    part,
                    model,
                    x: vec![0.0; di],
                    y: vec![0.0; pi],
                    noise: vec![0.0; pi],
                    mean: vec![0.0; pi],
                    var: vec![0.0; pi],
                })
            })
            .collect::<Result<Vec<_>, String>>()?;
        Ok(Self { d, p, members })
    }
}

fn gather(dst: &mut [f64], src: &[f64], index: &[usize]) {
    for (d, &i) in dst.iter_mut().zip(index) {
        *d = src[i];
    }
}

impl OnlineModel for BranchModel {
    fn input_dim(&self) -> usize {
        self.d
    }

    fn output_dim(&self) -> usize {
        self.p
    }

    fn predict(&mut self, x: &[f64], mean: &mut [f64], var: &mut [f64]) -> Result<(), ModelError> {
        check_len("x", x, self.d)?;
        check_len("mean", mean, self.p)?;
        check_len("var", var, self.p)?;
        for m in &mut self.members {
            gather(&mut m.x, x, &m.part.inputs);
            m.model.predict(&m.x, &mut m.mean, &mut m.var)?;
            for (k, &o) in m.part.outputs.iter().enumerate() {
                mean[o] = m.mean[k];
                var[o] = m.var[k];
            }
        }
        Ok(())
    }

    fn update(
        &mut self,
        x: &[f64],
        y: &[f64],
        t_secs: f64,
        noise_var: &[f64],
    ) -> Result<(), ModelError> {
        check_len("x", x, self.d)?;
        check_len("y", y, self.p)?;
        check_len("noise_var", noise_var, self.p)?;
        for m in &mut self.members {
            gather(&mut m.x, x, &m.part.inputs);
            gather(&mut m.y, y, &m.part.outputs);
            gather(&mut m.noise, noise_var, &m.part.outputs);
            m.model.update(&m.x, &m.y, t_secs, &m.noise)?;
        }
        Ok(())
    }

    /// Every part sees every sample: `samples_seen` is the first part's; the stores, experts
    /// and memory add up.
    fn stats(&self) -> ModelStats {
        let mut all = ModelStats::default();
        for (k, m) in self.members.iter().enumerate() {
            let s = m.model.stats();
            if k == 0 {
                all.samples_seen = s.samples_seen;
            }
            all.samples_stored += s.samples_stored;
            all.experts += s.experts;
            all.memory_bytes += s.memory_bytes;
        }
        all
    }

    /// `GPNBRCH1`, the number of parts (u64 LE), then per part its length (u64 LE) and bytes.
    fn state_bytes(&self) -> Result<Vec<u8>, ModelError> {
        let mut out = STATE_MAGIC.to_vec();
        out.extend_from_slice(&(self.members.len() as u64).to_le_bytes());
        for m in &self.members {
            let bytes = m.model.state_bytes()?;
            out.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
            out.extend_from_slice(&bytes);
        }
        Ok(out)
    }

    fn restore_state_bytes(&mut self, bytes: &[u8]) -> Result<(), ModelError> {
        let bad = |why: &str| ModelError::Other(format!("split model state: {why}"));
        let rest = bytes
            .strip_prefix(STATE_MAGIC.as_slice())
            .ok_or_else(|| bad("not a split model's state"))?;
        let take_u64 = |r: &mut &[u8]| -> Result<u64, ModelError> {
            let (head, tail) = r.split_first_chunk::<8>().ok_or_else(|| bad("truncated"))?;
            *r = tail;
            Ok(u64::from_le_bytes(*head))
        };
        let mut rest = rest;
        let count = take_u64(&mut rest)?;
        if count != self.members.len() as u64 {
            return Err(bad(&format!(
                "{count} parts, this model has {}",
                self.members.len()
            )));
        }
        let mut slices = Vec::with_capacity(self.members.len());
        for _ in 0..count {
            let len = usize::try_from(take_u64(&mut rest)?).map_err(|_| bad("too long"))?;
            if len > rest.len() {
                return Err(bad("truncated"));
            }
            let (part, tail) = rest.split_at(len);
            slices.push(part);
            rest = tail;
        }
        if !rest.is_empty() {
            return Err(bad("trailing bytes"));
        }
        for (m, s) in self.members.iter_mut().zip(slices) {
            m.model.restore_state_bytes(s)?;
        }
        Ok(())
    }

    fn plugin_identity(&self) -> Option<(String, String)> {
        self.members.first().and_then(|m| m.model.plugin_identity())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Predicts, per output, the sum of its inputs plus the number of updates seen (so the
    /// routing of inputs, outputs and state is visible).
    struct Sum {
        d: usize,
        p: usize,
        seen: u64,
    }

    impl OnlineModel for Sum {
        fn input_dim(&self) -> usize {
            self.d
        }
        fn output_dim(&self) -> usize {
            self.p
        }
        fn predict(
            &mut self,
            x: &[f64],
            mean: &mut [f64],
            var: &mut [f64],
        ) -> Result<(), ModelError> {
            let s: f64 = x.iter().sum();
            for (k, (m, v)) in mean.iter_mut().zip(var.iter_mut()).enumerate() {
                *m = s + self.seen as f64 + k as f64 * 0.5;
                *v = 1.0;
            }
            Ok(())
        }
        fn update(&mut self, _: &[f64], y: &[f64], _: f64, _: &[f64]) -> Result<(), ModelError> {
            self.seen += y.len() as u64;
            Ok(())
        }
        fn stats(&self) -> ModelStats {
            ModelStats {
                samples_seen: self.seen,
                samples_stored: 1,
                experts: 1,
                memory_bytes: 8,
            }
        }
        fn state_bytes(&self) -> Result<Vec<u8>, ModelError> {
            Ok(self.seen.to_le_bytes().to_vec())
        }
        fn restore_state_bytes(&mut self, b: &[u8]) -> Result<(), ModelError> {
            self.seen =
                u64::from_le_bytes(b.try_into().map_err(|_| ModelError::Other("len".into()))?);
            Ok(())
        }
    }

    fn two_parts() -> BranchModel {
        let part = |outputs: Vec<usize>, inputs: Vec<usize>| {
            let model: Box<dyn OnlineModel> = Box::new(Sum {
                d: inputs.len(),
                p: outputs.len(),
                seen: 0,
            });
            (Part { outputs, inputs }, model)
        };
        BranchModel::new(
            4,
            3,
            vec![part(vec![0, 2], vec![0, 3]), part(vec![1], vec![1, 2])],
        )
        .expect("dimensions fit")
    }

    #[test]
    fn inputs_and_outputs_are_routed_by_part() {
        let mut m = two_parts();
        let (mut mean, mut var) = ([0.0; 3], [0.0; 3]);
        m.predict(&[1.0, 10.0, 100.0, 1000.0], &mut mean, &mut var)
            .expect("predict");
        assert_eq!(mean, [1001.0, 110.0, 1001.5]);
        m.update(&[0.0; 4], &[0.0; 3], 0.0, &[1.0; 3])
            .expect("update");
        m.predict(&[0.0; 4], &mut mean, &mut var).expect("predict");
        // Part 0 saw 2 targets, part 1 one.
        assert_eq!(mean, [2.0, 1.0, 2.5]);
        assert_eq!(m.stats().samples_stored, 2);
        assert!(m.predict(&[0.0; 3], &mut mean, &mut var).is_err());
    }

    #[test]
    fn state_round_trips_and_a_foreign_state_is_refused() {
        let mut m = two_parts();
        m.update(&[0.0; 4], &[0.0; 3], 0.0, &[1.0; 3])
            .expect("update");
        let bytes = m.state_bytes().expect("save");
        let mut fresh = two_parts();
        fresh.restore_state_bytes(&bytes).expect("restore");
        assert_eq!(fresh.stats(), m.stats());
        assert!(
            fresh
                .restore_state_bytes(&bytes[..bytes.len() - 1])
                .is_err()
        );
        assert!(fresh.restore_state_bytes(b"other").is_err());
    }

    #[test]
    fn a_member_of_the_wrong_size_is_refused() {
        let model: Box<dyn OnlineModel> = Box::new(Sum {
            d: 3,
            p: 1,
            seen: 0,
        });
        let part = Part {
            outputs: vec![0],
            inputs: vec![0, 1],
        };
        assert!(BranchModel::new(2, 1, vec![(part, model)]).is_err());
    }
}
