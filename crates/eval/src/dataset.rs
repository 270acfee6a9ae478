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
    /// How many times each sample is given to `update` (0: dropped, 2: duplicated) when not
    /// once each (a `drop` or `duplicate` contamination).
    pub update_repeats: Option<Vec<u8>>,
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
        let header = read_header(&mut rdr, source)?;
        let cols = Columns::select(sel, &header)?;
        let rows = read_rows(&mut rdr, source, &header, &cols)?;
        if rows.y.is_empty() {
            return Err(EvalError::NoRows {
                path: source.to_string(),
            });
        }
        let names = |idx: &[usize]| idx.iter().map(|&i| header[i].clone()).collect::<Vec<_>>();
        let (d, p) = (cols.input.len(), cols.target.len());
        // Predicting elsewhere than the streamed inputs: `x` is where the model is asked,
        // `x_update` what it learns from (as for a contaminated stream).
        let (x, x_update) = if sel.predict_inputs.is_some() {
            (rows.x_predict, Some(rows.x))
        } else {
            (rows.x, None)
        };
        Ok(Self {
            source: source.to_string(),
            input_names: names(&cols.input),
            target_names: names(&cols.target),
            truth_names: names(&cols.truth),
            x,
            y: rows.y,
            truth: if cols.truth.is_empty() {
                None
            } else {
                Some(rows.truth)
            },
            input_offsets: vec![0.0; d],
            target_offsets: vec![0.0; p],
            skipped_rows: rows.skipped,
            x_update,
            y_update: None,
            update_repeats: None,
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

    /// The population variance of each (clean) target column over the stream (0 with
    /// fewer than 2 samples).
    pub fn target_variances(&self) -> Vec<f64> {
        let (n, p) = (self.len(), self.output_dim());
        if n < 2 {
            return vec![0.0; p];
        }
        (0..p)
            .map(|t| {
                let mean = (0..n).map(|i| self.y_row(i)[t]).sum::<f64>() / n as f64;
                (0..n)
                    .map(|i| (self.y_row(i)[t] - mean).powi(2))
                    .sum::<f64>()
                    / n as f64
            })
            .collect()
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

    /// How many times sample i is given to `update`: 1, or 0 (dropped) or 2 (duplicated).
    pub fn update_count(&self, i: usize) -> usize {
        self.update_repeats
            .as_ref()
            .map_or(1, |r| usize::from(r[i]))
    }

    /// The streamed samples (what `update` gets) at `rows`, in that order, as a dataset of
    /// their own (no truth, no contamination record): e.g. the subset a refit fits on. A
    /// dropped row is left out and a duplicated one appears twice.
    pub fn streamed_rows(&self, rows: &[usize]) -> Dataset {
        let (d, p) = (self.input_dim(), self.output_dim());
        let mut x = Vec::with_capacity(rows.len() * d);
        let mut y = Vec::with_capacity(rows.len() * p);
        for &r in rows {
            for _ in 0..self.update_count(r) {
                x.extend_from_slice(self.x_update_row(r));
                y.extend_from_slice(self.y_update_row(r));
            }
        }
        Dataset {
            source: self.source.clone(),
            input_names: self.input_names.clone(),
            target_names: self.target_names.clone(),
            truth_names: Vec::new(),
            x,
            y,
            truth: None,
            input_offsets: self.input_offsets.clone(),
            target_offsets: self.target_offsets.clone(),
            skipped_rows: 0,
            x_update: None,
            y_update: None,
            update_repeats: None,
            contamination: None,
        }
    }

    /// The whole stream as the model sees it ([`Self::streamed_rows`] of every row): e.g.
    /// for fitting hyperparameters on what the model is given. **Allocates** a copy.
    pub fn as_streamed(&self) -> Dataset {
        self.streamed_rows(&(0..self.len()).collect::<Vec<_>>())
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

/// The CSV header's column names; a file without any is [`EvalError::EmptyFile`].
fn read_header<R: Read>(rdr: &mut csv::Reader<R>, source: &str) -> Result<Vec<String>, EvalError> {
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
    Ok(header)
}

/// The header indices of each role a column can have.
struct Columns {
    input: Vec<usize>,
    target: Vec<usize>,
    truth: Vec<usize>,
    /// `--predict-inputs`: where the model is asked instead of `input`.
    predict: Vec<usize>,
}

impl Columns {
    /// Resolves the selection against the header: targets default to the last column,
    /// inputs to every column that is neither a target nor a truth. Checked in this order:
    /// each spec, inputs present, one prediction input per input, targets present, one
    /// truth per target, no column in two roles.
    fn select(sel: &ColumnSelection, header: &[String]) -> Result<Self, EvalError> {
        let truth = match &sel.truth {
            Some(spec) => resolve(spec, header, "--truth")?,
            None => Vec::new(),
        };
        let target = match &sel.targets {
            Some(spec) => resolve(spec, header, "--targets")?,
            None => vec![header.len() - 1],
        };
        let input = match &sel.inputs {
            Some(spec) => resolve(spec, header, "--inputs")?,
            None => (0..header.len())
                .filter(|i| !target.contains(i) && !truth.contains(i))
                .collect(),
        };
        if input.is_empty() {
            return Err(EvalError::ColumnSpec("no input columns selected".into()));
        }
        let predict = match &sel.predict_inputs {
            Some(spec) => resolve(spec, header, "--predict-inputs")?,
            None => Vec::new(),
        };
        if sel.predict_inputs.is_some() && predict.len() != input.len() {
            return Err(EvalError::ColumnSpec(format!(
                "--predict-inputs selects {} columns but there are {} inputs (one per input)",
                predict.len(),
                input.len()
            )));
        }
        if target.is_empty() {
            return Err(EvalError::ColumnSpec("no target columns selected".into()));
        }
        if !truth.is_empty() && truth.len() != target.len() {
            return Err(EvalError::ColumnSpec(format!(
                "--truth selects {} columns but there are {} targets (one truth column per target)",
                truth.len(),
                target.len()
            )));
        }
        let cols = Self {
            input,
            target,
            truth,
            predict,
        };
        cols.check_disjoint(header)?;
        Ok(cols)
    }

    /// No column may have two roles.
    fn check_disjoint(&self, header: &[String]) -> Result<(), EvalError> {
        for (a, what_a, b, what_b) in [
            (&self.input, "input", &self.target, "target"),
            (&self.input, "input", &self.truth, "truth"),
            (&self.target, "target", &self.truth, "truth"),
            (&self.predict, "prediction input", &self.target, "target"),
            (&self.predict, "prediction input", &self.truth, "truth"),
        ] {
            if let Some(i) = a.iter().find(|i| b.contains(i)) {
                return Err(EvalError::ColumnSpec(format!(
                    "column \"{}\" is both an {what_a} and a {what_b} column",
                    header[*i]
                )));
            }
        }
        Ok(())
    }
}

/// The data rows, row-major per role.
struct Rows {
    x: Vec<f64>,
    y: Vec<f64>,
    truth: Vec<f64>,
    x_predict: Vec<f64>,
    /// Rows left out for a `nan`.
    skipped: usize,
}

/// Reads every data row into [`Rows`].
fn read_rows<R: Read>(
    rdr: &mut csv::Reader<R>,
    source: &str,
    header: &[String],
    cols: &Columns,
) -> Result<Rows, EvalError> {
    let (mut x, mut y, mut truth, mut x_predict) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut record = csv::StringRecord::new();
    let mut skipped = 0;
    loop {
        match rdr.read_record(&mut record) {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) => return Err(csv_error(source, &e)),
        }
        let cells = Cells {
            record: &record,
            line: record.position().map_or(0, |p| p.line()),
            source,
            header,
        };
        let marks = (x.len(), y.len(), truth.len(), x_predict.len());
        cells.parse(&cols.input, &mut x)?;
        cells.parse(&cols.target, &mut y)?;
        cells.parse(&cols.truth, &mut truth)?;
        cells.parse(&cols.predict, &mut x_predict)?;
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
            skipped += 1;
        }
    }
    Ok(Rows {
        x,
        y,
        truth,
        x_predict,
        skipped,
    })
}

/// One data row with what its errors name.
struct Cells<'a> {
    record: &'a csv::StringRecord,
    line: u64,
    source: &'a str,
    header: &'a [String],
}

impl Cells<'_> {
    /// Appends the cells at `idx` to `out`; a cell that is not a number (or is infinite) is
    /// [`EvalError::NonNumeric`].
    fn parse(&self, idx: &[usize], out: &mut Vec<f64>) -> Result<(), EvalError> {
        for &i in idx {
            let cell = self.record.get(i).unwrap_or("");
            let v: f64 = cell.parse().map_err(|_| self.non_numeric(i, cell))?;
            if v.is_infinite() {
                return Err(self.non_numeric(i, cell));
            }
            out.push(v);
        }
        Ok(())
    }

    fn non_numeric(&self, i: usize, cell: &str) -> EvalError {
        EvalError::NonNumeric {
            path: self.source.to_string(),
            line: self.line,
            column: self.header[i].clone(),
            value: cell.to_string(),
        }
    }
}
