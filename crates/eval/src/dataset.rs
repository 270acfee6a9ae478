//! A CSV stream loaded for evaluation: the selected input, target and truth columns as
//! row-major f64 buffers, in file order, optionally mean-centred.
//!
//! The whole file is read up front: whole-file centring and the hyperparameter fit on the
//! first samples need it, and the streams here are small (≤ a few 10⁵ rows). Only the
//! selected columns are parsed; every other column may hold anything.

use std::io::Read;
use std::path::Path;

use super::EvalError;
use super::columns::resolve;

/// Which columns to read (see [`super::columns`] for the grammar).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ColumnSelection {
    /// Input columns; default: every column that is neither a target nor a truth column.
    pub inputs: Option<String>,
    /// Target columns; default: the last column.
    pub targets: Option<String>,
    /// Optional noise-free truth columns, one per target, in target order.
    pub truth: Option<String>,
    /// Optional columns to predict at instead of the inputs, one per input (e.g. the
    /// learning sample formed from the true state of a recorded run); the inputs are then
    /// only streamed to `update`.
    pub predict_inputs: Option<String>,
}

/// How the stream is centred before it is streamed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Centering {
    /// Subtract the whole-file mean of every input and target column (the SkyGP reference
    /// protocol; a mild look-ahead). Truth columns are shifted by their target's mean, so
    /// truth and target stay comparable.
    #[default]
    WholeFile,
    /// Stream the raw values.
    None,
}

/// The selected columns of a CSV file, row-major.
#[derive(Debug, Clone, PartialEq)]
pub struct Dataset {
    /// Where the data came from (a path or a label), for messages.
    pub source: String,
    /// Input column names (d).
    pub input_names: Vec<String>,
    /// Target column names (p).
    pub target_names: Vec<String>,
    /// Truth column names (p, or empty).
    pub truth_names: Vec<String>,
    /// Inputs where the model predicts, n×d row-major (the `--predict-inputs` columns if
    /// given, else the inputs).
    pub x: Vec<f64>,
    /// Targets, n×p row-major.
    pub y: Vec<f64>,
    /// Truth, n×p row-major, if selected.
    pub truth: Option<Vec<f64>>,
    /// Means subtracted from the inputs (zeros if not centred).
    pub input_offsets: Vec<f64>,
    /// Means subtracted from the targets and truth (zeros if not centred).
    pub target_offsets: Vec<f64>,
    /// Rows left out because a selected cell was `nan` (a missing value).
    pub skipped_rows: usize,
    /// Inputs streamed to the model's `update` when they differ from `x` (a focused
    /// contamination, or `--predict-inputs`), n×d.
    pub x_update: Option<Vec<f64>>,
    /// Targets streamed to the model's `update` when they differ from `y` (a
    /// contamination), n×p. `y` stays the clean reference of the metrics.
    pub y_update: Option<Vec<f64>>,
    /// What the contamination did, if the stream was contaminated.
    pub contamination: Option<super::contamination::Summary>,
}

impl Dataset {
    /// Reads the file at `path` (CSV with a header row).
    pub fn from_path(path: &Path, sel: &ColumnSelection) -> Result<Self, EvalError> {
        let file = std::fs::File::open(path).map_err(|e| EvalError::Io {
            what: "cannot open data file",
            path: path.display().to_string(),
            source: e,
        })?;
        Self::from_reader(file, &path.display().to_string(), sel)
    }

    /// Reads CSV text with a header row from `reader`; `source` names it in errors.
    pub fn from_reader<R: Read>(
        reader: R,
        source: &str,
        sel: &ColumnSelection,
    ) -> Result<Self, EvalError> {
        let mut rdr = csv::ReaderBuilder::new()
            .trim(csv::Trim::All)
            .from_reader(reader);
        let header: Vec<String> = rdr
            .headers()
            .map_err(|e| csv_error(source, &e))?
            .iter()
            .map(str::to_string)
            .collect();
        if header.is_empty() || header.iter().all(String::is_empty) {
            return Err(EvalError::EmptyFile {
                path: source.to_string(),
            });
        }
        let truth_idx = match &sel.truth {
            Some(spec) => resolve(spec, &header, "--truth")?,
            None => Vec::new(),
        };
        let target_idx = match &sel.targets {
            Some(spec) => resolve(spec, &header, "--targets")?,
            None => vec![header.len() - 1],
        };
        let input_idx = match &sel.inputs {
            Some(spec) => resolve(spec, &header, "--inputs")?,
            None => (0..header.len())
                .filter(|i| !target_idx.contains(i) && !truth_idx.contains(i))
                .collect(),
        };
        if input_idx.is_empty() {
            return Err(EvalError::ColumnSpec("no input columns selected".into()));
        }
        let predict_idx = match &sel.predict_inputs {
            Some(spec) => resolve(spec, &header, "--predict-inputs")?,
            None => Vec::new(),
        };
        if sel.predict_inputs.is_some() && predict_idx.len() != input_idx.len() {
            return Err(EvalError::ColumnSpec(format!(
                "--predict-inputs selects {} columns but there are {} inputs (one per input)",
                predict_idx.len(),
                input_idx.len()
            )));
        }
        if target_idx.is_empty() {
            return Err(EvalError::ColumnSpec("no target columns selected".into()));
        }
        if !truth_idx.is_empty() && truth_idx.len() != target_idx.len() {
            return Err(EvalError::ColumnSpec(format!(
                "--truth selects {} columns but there are {} targets (one truth column per target)",
                truth_idx.len(),
                target_idx.len()
            )));
        }
        for (a, what_a, b, what_b) in [
            (&input_idx, "input", &target_idx, "target"),
            (&input_idx, "input", &truth_idx, "truth"),
            (&target_idx, "target", &truth_idx, "truth"),
            (&predict_idx, "prediction input", &target_idx, "target"),
            (&predict_idx, "prediction input", &truth_idx, "truth"),
        ] {
            if let Some(i) = a.iter().find(|i| b.contains(i)) {
                return Err(EvalError::ColumnSpec(format!(
                    "column \"{}\" is both an {what_a} and a {what_b} column",
                    header[*i]
                )));
            }
        }

        let names = |idx: &[usize]| idx.iter().map(|&i| header[i].clone()).collect::<Vec<_>>();
        let (mut x, mut y, mut truth, mut x_predict) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let mut record = csv::StringRecord::new();
        let mut skipped_rows = 0;
        loop {
            match rdr.read_record(&mut record) {
                Ok(true) => {}
                Ok(false) => break,
                Err(e) => return Err(csv_error(source, &e)),
            }
            let line = record.position().map_or(0, |p| p.line());
            let parse = |idx: &[usize], out: &mut Vec<f64>| -> Result<(), EvalError> {
                for &i in idx {
                    let cell = record.get(i).unwrap_or("");
                    let v: f64 = cell.parse().map_err(|_| EvalError::NonNumeric {
                        path: source.to_string(),
                        line,
                        column: header[i].clone(),
                        value: cell.to_string(),
                    })?;
                    if v.is_infinite() {
                        return Err(EvalError::NonNumeric {
                            path: source.to_string(),
                            line,
                            column: header[i].clone(),
                            value: cell.to_string(),
                        });
                    }
                    out.push(v);
                }
                Ok(())
            };
            let marks = (x.len(), y.len(), truth.len(), x_predict.len());
            parse(&input_idx, &mut x)?;
            parse(&target_idx, &mut y)?;
            parse(&truth_idx, &mut truth)?;
            parse(&predict_idx, &mut x_predict)?;
            // `nan` marks a missing value (e.g. a recorded tick without a learning sample):
            // the row is left out and counted.
            if x[marks.0..]
                .iter()
                .chain(&y[marks.1..])
                .chain(&truth[marks.2..])
                .chain(&x_predict[marks.3..])
                .any(|v| v.is_nan())
            {
                x.truncate(marks.0);
                y.truncate(marks.1);
                truth.truncate(marks.2);
                x_predict.truncate(marks.3);
                skipped_rows += 1;
            }
        }
        if y.is_empty() {
            return Err(EvalError::NoRows {
                path: source.to_string(),
            });
        }
        let (d, p) = (input_idx.len(), target_idx.len());
        // Predicting elsewhere than the streamed inputs: `x` is where the model is asked,
        // `x_update` what it learns from (as for a contaminated stream).
        let (x, x_update) = if sel.predict_inputs.is_some() {
            (x_predict, Some(x))
        } else {
            (x, None)
        };
        Ok(Self {
            source: source.to_string(),
            input_names: names(&input_idx),
            target_names: names(&target_idx),
            truth_names: names(&truth_idx),
            x,
            y,
            truth: if truth_idx.is_empty() {
                None
            } else {
                Some(truth)
            },
            input_offsets: vec![0.0; d],
            target_offsets: vec![0.0; p],
            skipped_rows,
            x_update,
            y_update: None,
            contamination: None,
        })
    }

    /// Number of samples n.
    pub fn len(&self) -> usize {
        self.y.len() / self.target_names.len().max(1)
    }

    /// True if there are no samples.
    pub fn is_empty(&self) -> bool {
        self.y.is_empty()
    }

    /// Input dimension d.
    pub fn input_dim(&self) -> usize {
        self.input_names.len()
    }

    /// Output dimension p.
    pub fn output_dim(&self) -> usize {
        self.target_names.len()
    }

    /// Inputs of sample i.
    pub fn x_row(&self, i: usize) -> &[f64] {
        let d = self.input_dim();
        &self.x[i * d..(i + 1) * d]
    }

    /// Targets of sample i.
    pub fn y_row(&self, i: usize) -> &[f64] {
        let p = self.output_dim();
        &self.y[i * p..(i + 1) * p]
    }

    /// Inputs of sample i as streamed to `update` (equal to [`Self::x_row`] unless
    /// contaminated).
    pub fn x_update_row(&self, i: usize) -> &[f64] {
        let d = self.input_dim();
        match &self.x_update {
            Some(x) => &x[i * d..(i + 1) * d],
            None => self.x_row(i),
        }
    }

    /// Targets of sample i as streamed to `update` (equal to [`Self::y_row`] unless
    /// contaminated).
    pub fn y_update_row(&self, i: usize) -> &[f64] {
        let p = self.output_dim();
        match &self.y_update {
            Some(y) => &y[i * p..(i + 1) * p],
            None => self.y_row(i),
        }
    }

    /// The stream as the model sees it: a copy whose `x` and `y` are the streamed values
    /// (for fitting hyperparameters on what the model is given). **Allocates** a copy.
    pub fn as_streamed(&self) -> Dataset {
        let mut d = self.clone();
        if let Some(x) = d.x_update.take() {
            d.x = x;
        }
        if let Some(y) = d.y_update.take() {
            d.y = y;
        }
        d
    }

    /// Truth of sample i, if selected.
    pub fn truth_row(&self, i: usize) -> Option<&[f64]> {
        let p = self.output_dim();
        self.truth.as_ref().map(|t| &t[i * p..(i + 1) * p])
    }

    /// Applies `centering` (once; centring twice subtracts nothing more for `WholeFile`).
    pub fn center(&mut self, centering: Centering) {
        if centering == Centering::None {
            return;
        }
        let n = self.len() as f64;
        let d = self.input_dim();
        let p = self.output_dim();
        let col_means = |data: &[f64], k: usize| -> Vec<f64> {
            let mut m = vec![0.0; k];
            for row in data.chunks_exact(k) {
                for (mj, v) in m.iter_mut().zip(row) {
                    *mj += v;
                }
            }
            m.iter_mut().for_each(|v| *v /= n);
            m
        };
        let mx = col_means(&self.x, d);
        let my = col_means(&self.y, p);
        let sub = |data: &mut [f64], m: &[f64]| {
            for row in data.chunks_exact_mut(m.len()) {
                for (v, mj) in row.iter_mut().zip(m) {
                    *v -= mj;
                }
            }
        };
        sub(&mut self.x, &mx);
        sub(&mut self.y, &my);
        if let Some(t) = &mut self.truth {
            sub(t, &my);
        }
        // Streamed copies move with their clean columns (the means are the clean ones).
        if let Some(x) = &mut self.x_update {
            sub(x, &mx);
        }
        if let Some(y) = &mut self.y_update {
            sub(y, &my);
        }
        for (o, m) in self.input_offsets.iter_mut().zip(&mx) {
            *o += m;
        }
        for (o, m) in self.target_offsets.iter_mut().zip(&my) {
            *o += m;
        }
    }
}

fn csv_error(source: &str, e: &csv::Error) -> EvalError {
    let line = e.position().map_or(0, |p| p.line());
    EvalError::Csv {
        path: source.to_string(),
        line,
        message: e.to_string(),
    }
}
