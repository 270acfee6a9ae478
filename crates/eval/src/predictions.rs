//! `gp-node eval --predictions FILE.csv`: one row per predicted step, so that a model's
//! errors can be looked at where they happen (which rows, which joints) instead of only as
//! the stream's RMSE.
//!
//! Columns, for each target `T` (the data file's column name) and its truth column `R`:
//! `step` (0-based among the streamed rows; rows the loader left out are not counted, step 0
//! is never predicted), then `mu_T`, `sigma_T` (latent standard deviation, no noise), `T`
//! (the clean target the metrics compare with) and, with `--truth`, `R`. All in the data
//! file's units: whole-file centring is undone.

use std::io::Write;

use super::dataset::Dataset;

/// Writes the predictions of one evaluation run as CSV.
pub struct PredictionWriter<W: Write> {
    out: W,
    offsets: Vec<f64>,
    line: String,
}

impl<W: Write> PredictionWriter<W> {
    /// Writes the header for `data`'s targets (and truth columns, if it has any).
    pub fn new(mut out: W, data: &Dataset) -> std::io::Result<Self> {
        let mut header = String::from("step");
        for name in &data.target_names {
            header += &format!(",mu_{name},sigma_{name},{name}");
        }
        let truth = data.truth.is_some();
        for name in data.truth_names.iter().filter(|_| truth) {
            header += &format!(",{name}");
        }
        writeln!(out, "{header}")?;
        Ok(Self {
            out,
            offsets: data.target_offsets.clone(),
            line: String::new(),
        })
    }

    /// One predicted step: the prediction (`mean`, latent `var`), the centred clean target
    /// and, if any, the centred truth.
    pub fn row(
        &mut self,
        step: usize,
        mean: &[f64],
        var: &[f64],
        target: &[f64],
        truth: Option<&[f64]>,
    ) -> std::io::Result<()> {
        use std::fmt::Write as _;
        self.line.clear();
        let _ = write!(self.line, "{step}");
        for (j, offset) in self.offsets.iter().enumerate() {
            let sigma = var[j].max(0.0).sqrt();
            let _ = write!(
                self.line,
                ",{},{sigma},{}",
                mean[j] + offset,
                target[j] + offset
            );
        }
        for (value, offset) in truth.into_iter().flatten().zip(&self.offsets) {
            let _ = write!(self.line, ",{}", value + offset);
        }
        writeln!(self.out, "{}", self.line)
    }

    /// Flushes and returns the writer.
    pub fn finish(mut self) -> std::io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::{Centering, ColumnSelection};

    fn data(with_truth: bool) -> Dataset {
        let text = "a,b,y,z,ty,tz\n1,2,10,20,11,21\n3,4,30,40,31,41\n";
        let sel = ColumnSelection {
            inputs: Some("a..b".into()),
            targets: Some("y,z".into()),
            truth: with_truth.then(|| "ty,tz".into()),
            predict_inputs: None,
        };
        let mut d = Dataset::from_reader(text.as_bytes(), "mem.csv", &sel).expect("dataset");
        d.center(Centering::WholeFile);
        d
    }

    #[test]
    fn rows_are_in_the_files_units_with_centring_undone() {
        let d = data(true);
        let mut w = PredictionWriter::new(Vec::new(), &d).expect("header");
        // Centred: target means are 20 and 30.
        w.row(1, &[1.5, -2.0], &[4.0, -1e-18], d.y_row(1), d.truth_row(1))
            .expect("row");
        let text = String::from_utf8(w.finish().expect("flush")).expect("utf-8");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "step,mu_y,sigma_y,y,mu_z,sigma_z,z,ty,tz");
        // A round-off negative variance is written as σ = 0, not NaN.
        assert_eq!(lines[1], "1,21.5,2,30,28,0,40,31,41");
    }

    #[test]
    fn without_truth_there_are_no_truth_columns() {
        let d = data(false);
        let mut w = PredictionWriter::new(Vec::new(), &d).expect("header");
        w.row(1, &[0.0, 0.0], &[1.0, 1.0], d.y_row(1), d.truth_row(1))
            .expect("row");
        let text = String::from_utf8(w.finish().expect("flush")).expect("utf-8");
        assert_eq!(
            text,
            "step,mu_y,sigma_y,y,mu_z,sigma_z,z\n1,20,1,30,30,1,40\n"
        );
    }
}
