//! Column selections (`COLS`) of the evaluator: header names, 0-based indices and inclusive
//! ranges, resolved against a CSV header.
//!
//! Grammar: a comma-separated list of items; an item is
//! * a header name (exact match after trimming spaces), e.g. `y`;
//! * a 0-based column index, e.g. `3` (an item that is also a header name means the name);
//! * an inclusive range `A..B` of names (`x1..x8`: every column from x1's to x8's position)
//!   or of indices (`0..7`), in header order, A not after B.
//!
//! A column may appear only once in a selection.

use super::EvalError;

/// Resolves `spec` against `header`; returns the 0-based column indices in the order given.
/// `what` names the selection in errors (`--inputs`, …).
pub fn resolve(spec: &str, header: &[String], what: &str) -> Result<Vec<usize>, EvalError> {
    let mut out = Vec::new();
    for item in spec.split(',').map(str::trim) {
        if item.is_empty() {
            return Err(EvalError::ColumnSpec(format!(
                "{what} \"{spec}\": empty item"
            )));
        }
        if let Some(i) = lookup(item, header) {
            push_unique(&mut out, i, header, what)?;
            continue;
        }
        if let Some((a, b)) = item.split_once("..") {
            let (a, b) = (a.trim(), b.trim());
            let ia = lookup(a, header).ok_or_else(|| unknown(a, header, what))?;
            let ib = lookup(b, header).ok_or_else(|| unknown(b, header, what))?;
            if ia > ib {
                return Err(EvalError::ColumnSpec(format!(
                    "{what}: range \"{item}\" runs backwards (column {ia} after column {ib})"
                )));
            }
            for i in ia..=ib {
                push_unique(&mut out, i, header, what)?;
            }
            continue;
        }
        return Err(unknown(item, header, what));
    }
    Ok(out)
}

/// A name (exact) or, failing that, an in-range 0-based index.
fn lookup(item: &str, header: &[String]) -> Option<usize> {
    if let Some(i) = header.iter().position(|h| h == item) {
        return Some(i);
    }
    match item.parse::<usize>() {
        Ok(i) if i < header.len() => Some(i),
        _ => None,
    }
}

fn push_unique(
    out: &mut Vec<usize>,
    i: usize,
    header: &[String],
    what: &str,
) -> Result<(), EvalError> {
    if out.contains(&i) {
        return Err(EvalError::ColumnSpec(format!(
            "{what}: column \"{}\" (index {i}) selected twice",
            header[i]
        )));
    }
    out.push(i);
    Ok(())
}

fn unknown(item: &str, header: &[String], what: &str) -> EvalError {
    EvalError::UnknownColumn {
        what: what.to_string(),
        column: item.to_string(),
        header: header.join(", "),
    }
}
