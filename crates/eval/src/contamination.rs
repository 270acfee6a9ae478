//! What a contamination (`gp-node eval --contaminate`) is and did, as the dataset and the
//! report carry it; the protocols themselves are in [`super::contaminate`].

/// The contamination protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// y − U(3σ̄, 9σ̄).
    Asymmetric,
    /// ±U(3σ̄, 9σ̄) on two halves.
    Uniform,
    /// Inputs moved to the median, targets far below.
    Focused,
}

impl Kind {
    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Asymmetric => "asymmetric",
            Kind::Uniform => "uniform",
            Kind::Focused => "focused",
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
    /// Samples changed.
    pub count: usize,
    /// σ̄ of every target column (clean).
    pub target_std: Vec<f64>,
}
