//! What a contamination (`gp-node eval --contaminate`) is and did, as the dataset and the
//! report carry it; the protocols themselves are in [`super::contaminate`] (the RCaGP paper's)
//! and [`super::sensor_faults`] (a robot's sensors and transport).

/// The contamination protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// y − U(3σ̄, 9σ̄).
    Asymmetric,
    /// ±U(3σ̄, 9σ̄) on two halves.
    Uniform,
    /// Inputs moved to the median, targets far below.
    Focused,
    /// Each target column (a joint's torque sensor) spiked by +U(3σ̄, 9σ̄) on its own samples.
    TorqueSpike,
    /// One joint's position reading off by a fixed angle; target recomputed from the robot.
    EncoderSpike,
    /// Samples never given to `update` (lost on the way).
    Drop,
    /// Samples given to `update` twice (delivered twice).
    Duplicate,
}

impl Kind {
    /// Every kind, in the order the help lists them.
    pub const ALL: [Kind; 7] = [
        Kind::Asymmetric,
        Kind::Uniform,
        Kind::Focused,
        Kind::TorqueSpike,
        Kind::EncoderSpike,
        Kind::Drop,
        Kind::Duplicate,
    ];

    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Asymmetric => "asymmetric",
            Kind::Uniform => "uniform",
            Kind::Focused => "focused",
            Kind::TorqueSpike => "torque-spike",
            Kind::EncoderSpike => "encoder-spike",
            Kind::Drop => "drop",
            Kind::Duplicate => "duplicate",
        }
    }

    /// The kind named `name` on the command line.
    pub fn from_name(name: &str) -> Option<Kind> {
        Self::ALL.into_iter().find(|k| k.name() == name)
    }

    /// What `count` counts, for the report.
    pub fn counted(self) -> &'static str {
        match self {
            Kind::Asymmetric | Kind::Uniform | Kind::Focused | Kind::EncoderSpike => {
                "samples changed for update"
            }
            Kind::TorqueSpike => "targets spiked for update (over all columns)",
            Kind::Drop => "samples not given to update",
            Kind::Duplicate => "samples given to update twice",
        }
    }
}

/// What a contamination did, for the report.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    /// The protocol.
    pub kind: Kind,
    /// The requested rate.
    pub rate: f64,
    /// The seed.
    pub seed: u64,
    /// What [`Kind::counted`] says.
    pub count: usize,
    /// σ̄ of every target column (clean).
    pub target_std: Vec<f64>,
    /// The spike of [`Kind::EncoderSpike`] (rad or m), else `None`.
    pub spike: Option<f64>,
}
