//! The little-endian byte format the plugins' saved states are written in: fixed-width
//! integers, `f64` by bit pattern (so a loaded state predicts bit for bit), and
//! length-prefixed strings and arrays. The reader checks every length against what is left,
//! so corrupt or truncated bytes give an error naming the plugin, never a panic or an absurd
//! allocation.

use gpn_online_model::ModelError;

/// Appends values to a byte buffer. Allocates (saving is not real-time).
#[derive(Debug, Default)]
pub struct StateWriter(Vec<u8>);

impl StateWriter {
    /// The bytes written so far.
    pub fn into_bytes(self) -> Vec<u8> {
        self.0
    }
    /// Raw bytes, no length prefix (a magic tag).
    pub fn bytes(&mut self, b: &[u8]) {
        self.0.extend_from_slice(b);
    }
    /// A `u32`.
    pub fn u32(&mut self, v: u32) {
        self.bytes(&v.to_le_bytes());
    }
    /// A `u64`.
    pub fn u64(&mut self, v: u64) {
        self.bytes(&v.to_le_bytes());
    }
    /// A `u128`.
    pub fn u128(&mut self, v: u128) {
        self.bytes(&v.to_le_bytes());
    }
    /// An `f64`, by its bit pattern.
    pub fn f64(&mut self, v: f64) {
        self.u64(v.to_bits());
    }
    /// A `bool` as one byte, 0 or 1.
    pub fn bool(&mut self, v: bool) {
        self.0.push(u8::from(v));
    }
    /// A UTF-8 string with its length.
    pub fn str(&mut self, s: &str) {
        self.u64(s.len() as u64);
        self.bytes(s.as_bytes());
    }
    /// `f64`s with their count.
    pub fn f64s(&mut self, v: &[f64]) {
        self.u64(v.len() as u64);
        v.iter().for_each(|&x| self.f64(x));
    }
    /// `u64`s with their count.
    pub fn u64s(&mut self, v: &[u64]) {
        self.u64(v.len() as u64);
        v.iter().for_each(|&x| self.u64(x));
    }
}

/// Reads what a [`StateWriter`] wrote, in the same order.
#[derive(Debug)]
pub struct StateReader<'a> {
    buf: &'a [u8],
    at: usize,
    context: &'static str,
}

impl<'a> StateReader<'a> {
    /// A reader of `buf` whose errors start with `context` (e.g. "rcagp load").
    pub fn new(buf: &'a [u8], context: &'static str) -> Self {
        Self {
            buf,
            at: 0,
            context,
        }
    }
    /// An error naming the reader's context.
    pub fn error(&self, msg: impl std::fmt::Display) -> ModelError {
        ModelError::Other(format!("{}: {msg}", self.context))
    }
    /// Bytes not read yet.
    pub fn remaining(&self) -> usize {
        self.buf.len() - self.at
    }
    /// The next `n` raw bytes.
    pub fn take(&mut self, n: usize) -> Result<&'a [u8], ModelError> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&e| e <= self.buf.len())
            .ok_or_else(|| self.error("truncated state"))?;
        let s = &self.buf[self.at..end];
        self.at = end;
        Ok(s)
    }
    fn array<const K: usize>(&mut self) -> Result<[u8; K], ModelError> {
        let mut a = [0u8; K];
        a.copy_from_slice(self.take(K)?);
        Ok(a)
    }
    /// A `u32`.
    pub fn u32(&mut self) -> Result<u32, ModelError> {
        Ok(u32::from_le_bytes(self.array()?))
    }
    /// A `u64`.
    pub fn u64(&mut self) -> Result<u64, ModelError> {
        Ok(u64::from_le_bytes(self.array()?))
    }
    /// A `u128`.
    pub fn u128(&mut self) -> Result<u128, ModelError> {
        Ok(u128::from_le_bytes(self.array()?))
    }
    /// An `f64`.
    pub fn f64(&mut self) -> Result<f64, ModelError> {
        Ok(f64::from_bits(self.u64()?))
    }
    /// A `u64` that must fit a `usize`.
    pub fn usize(&mut self) -> Result<usize, ModelError> {
        let v = self.u64()?;
        usize::try_from(v).map_err(|_| self.error("size out of range"))
    }
    /// A `bool` (a byte other than 0 or 1 is an error).
    pub fn bool(&mut self) -> Result<bool, ModelError> {
        match self.take(1)?[0] {
            0 => Ok(false),
            1 => Ok(true),
            b => Err(self.error(format!("bad bool byte {b}"))),
        }
    }
    /// A UTF-8 string.
    pub fn str(&mut self) -> Result<String, ModelError> {
        let n = self.usize()?;
        let bytes = self.take(n)?;
        String::from_utf8(bytes.to_vec()).map_err(|_| self.error("text is not UTF-8"))
    }
    /// A count that must equal `expected` (`what` names the field in the error).
    pub fn len_check(&mut self, expected: usize, what: &str) -> Result<(), ModelError> {
        let n = self.usize()?;
        if n == expected {
            Ok(())
        } else {
            Err(self.error(format!("{what}: {n} values, expected {expected}")))
        }
    }
    /// Exactly `out.len()` `f64`s into `out`.
    pub fn f64s_into(&mut self, out: &mut [f64], what: &str) -> Result<(), ModelError> {
        self.len_check(out.len(), what)?;
        for v in out.iter_mut() {
            *v = f64::from_bits(self.u64()?);
        }
        Ok(())
    }
    /// Exactly `out.len()` `u64`s into `out`.
    pub fn u64s_into(&mut self, out: &mut [u64], what: &str) -> Result<(), ModelError> {
        self.len_check(out.len(), what)?;
        for v in out.iter_mut() {
            *v = self.u64()?;
        }
        Ok(())
    }
    /// An error unless every byte was read.
    pub fn finish(&self) -> Result<(), ModelError> {
        match self.remaining() {
            0 => Ok(()),
            n => Err(self.error(format!("{n} trailing bytes"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_every_kind_and_refuses_truncation() {
        let mut w = StateWriter::default();
        w.bytes(b"TAG");
        w.u32(7);
        w.u64(u64::MAX);
        w.u128(1 << 100);
        w.f64(-0.1);
        w.bool(true);
        w.str("ε");
        w.f64s(&[1.5, f64::MIN_POSITIVE]);
        w.u64s(&[3, 4]);
        let bytes = w.into_bytes();
        let mut r = StateReader::new(&bytes, "test load");
        assert_eq!(r.take(3).unwrap(), b"TAG");
        assert_eq!(r.u32().unwrap(), 7);
        assert_eq!(r.u64().unwrap(), u64::MAX);
        assert_eq!(r.u128().unwrap(), 1 << 100);
        assert_eq!(r.f64().unwrap().to_bits(), (-0.1f64).to_bits());
        assert!(r.bool().unwrap());
        assert_eq!(r.str().unwrap(), "ε");
        let mut f = [0.0; 2];
        r.f64s_into(&mut f, "f").unwrap();
        assert_eq!(f, [1.5, f64::MIN_POSITIVE]);
        let mut u = [0; 2];
        r.u64s_into(&mut u, "u").unwrap();
        assert_eq!(u, [3, 4]);
        assert_eq!(r.finish(), Ok(()));

        let mut short = StateReader::new(&bytes[..bytes.len() - 1], "test load");
        short.take(3).unwrap();
        let err = (0..20).find_map(|_| short.u64().err()).unwrap();
        assert_eq!(err, ModelError::Other("test load: truncated state".into()));
        let mut wrong = StateReader::new(&bytes[bytes.len() - 24..], "test load");
        assert!(wrong.u64s_into(&mut [0; 3], "u").is_err());
    }
}
