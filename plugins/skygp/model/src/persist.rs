//! Save and load of a [`SkyGp`]'s learned state, bit for bit.
//!
//! The state is everything that outlives a call: the expert pool (the slots in use, each
//! expert's valid rows of data, targets, α, its factor per output group and, for Dense,
//! its cached K), the list 𝒯, the selection cache, the decay clock, ν_prev/x_prev and the
//! counters. What is derived from the configuration (kernels, groups, ln ρ…) and pure
//! scratch is not written; a model is loaded into one created with the same config and
//! dimensions, which the state checks (it carries the resolved config's `Debug` text).
//!
//! Format, little-endian throughout: the magic `GPNSKYGP`, a `u32` format version, then
//! length-prefixed fields in the order of [`save`]. Floats are written as their IEEE
//! bits, so a loaded model predicts exactly what the saved one did and keeps learning
//! identically. Loading builds a fresh model and swaps it in only when every field has
//! been read and checked: on error the model is unchanged.
//!
//! Versions:
//! * 1 — a model without drift. Such a model still writes exactly this format, byte for
//!   byte as before the `drift` key existed (its configuration text leaves the `drift:
//!   None` field out), so its files and older builds stay interchangeable.
//! * 2 — a model with drift: version 1's fields, plus the free-slot list (retired experts),
//!   every handed-out slot (free ones with 0 rows), each expert's stamps, base variances,
//!   factor time and change counters, and the newest stamp and drift counters. The refresh
//!   thread's buffers are not saved: a loaded model copies its experts to its new thread
//!   on its first calls. A version-1 file is refused by a model with drift and a
//!   version-2 file by one without, each with a message saying so.
//!
//! Factors are restored through `PackedCholesky::extend_with_solved_mut`, whose row is
//! copied verbatim and whose pivot is set through the pivot floor (sqrt of the square of
//! a positive double is that double); each restored pivot is compared bitwise with the
//! saved one, so a change in that function shows up as a load error, not a silent drift.

use gpn_gp_core::cholesky::{PackedCholesky, dot};
use gpn_gp_core::model::ModelError;

use crate::config::ValidConfig;
use crate::expert::Expert;
use crate::model::{Cache, SkyGp};
use crate::pool::Pool;
use crate::runtime::DriftRuntime;

const MAGIC: &[u8; 8] = b"GPNSKYGP";
/// Format of a model without drift.
const FORMAT_VERSION: u32 = 1;
/// Format of a model with drift.
const FORMAT_VERSION_DRIFT: u32 = 2;

/// The configuration text stored in (and compared on loading) a state: the resolved
/// config's `Debug` text, without the `drift` field when drift is off, so that it is the
/// text of format 1.
fn config_text(cfg: &ValidConfig) -> String {
    let text = format!("{cfg:?}");
    match (cfg.drift, text.strip_suffix(", drift: None }")) {
        (None, Some(head)) => format!("{head} }}"),
        _ => text,
    }
}

/// Serialises the learned state of `model`. **Allocates** the returned buffer.
pub(crate) fn save(model: &SkyGp) -> Vec<u8> {
    let cfg = &model.cfg;
    let (d, p, n_bar) = (cfg.input_dim, cfg.output_dim, cfg.n_bar);
    let drift = model.drift.as_ref();
    let mut w = Writer::default();
    w.bytes(MAGIC);
    w.u32(if drift.is_some() {
        FORMAT_VERSION_DRIFT
    } else {
        FORMAT_VERSION
    });
    w.str(&config_text(cfg));
    w.usize(model.groups.len());

    w.usize(model.nu_prev.unwrap_or(usize::MAX));
    w.f64s(&model.x_prev);
    w.f64(model.clock);
    w.u64(model.samples_seen);
    w.u64(model.replacements);

    let c = &model.cache;
    w.f64s(&c.x);
    w.bool(c.valid);
    w.bool(c.kv_ready);
    w.usizes(&c.sel);
    w.usizes(&c.cand_pos);
    w.f64s(&c.cand_score);
    w.f64s(&c.k);
    w.f64s(&c.v);
    w.f64s(&c.mu);
    w.f64s(&c.var);
    w.f64s(&c.w);
    w.usize(c.n_agg);

    let pool = &model.pool;
    // Without drift every slot handed out is in 𝒯 (a recycled slot is reinserted at once);
    // with drift the others are in the free list.
    let used = match drift {
        None => pool.order.len(),
        Some(_) => pool.used(),
    };
    w.usize(used);
    w.usizes(&pool.order);
    if drift.is_some() {
        w.usizes(&pool.free);
    }
    w.u64(pool.created);
    w.u64(pool.evictions);
    for e in &pool.experts[..used] {
        let n = e.n;
        w.usize(n);
        w.usize(e.n_off);
        w.u64(e.created);
        w.f64(e.stamp);
        w.f64s(&e.center);
        w.f64s(&e.center_off);
        w.f64s(&e.x[..n * d]);
        for o in 0..p {
            w.f64s(&e.y[o * n_bar..o * n_bar + n]);
            w.f64s(&e.alpha[o * n_bar..o * n_bar + n]);
        }
        for ch in &e.chol {
            w.usize(ch.len());
            for i in 0..ch.len() {
                w.f64s(ch.row(i));
            }
        }
        for km in &e.kmat {
            w.f64s(&km[..n * (n + 1) / 2]);
        }
        if drift.is_some() {
            w.f64s(&e.t[..n]);
            for col in e.base.chunks(n_bar) {
                w.f64s(&col[..n]);
            }
            w.f64(e.factor_time);
            w.u64(e.generation);
            w.u64(e.seq);
            w.u64(e.structural_seq);
        }
    }
    if let Some(rt) = drift {
        let c = &rt.counters;
        w.f64(rt.t_now);
        for v in [c.adopted, c.dropped, c.expired, c.retired, c.sync_deferred] {
            w.u64(v);
        }
    }
    w.out
}

/// Replaces the learned state of `model` with `bytes` from [`save`] of a model with the
/// same configuration. **Allocates** a whole model (as creation does). On error `model` is
/// left unchanged.
pub(crate) fn load(model: &mut SkyGp, bytes: &[u8]) -> Result<(), ModelError> {
    let fresh = read(model, bytes).map_err(|e| ModelError::Other(format!("skygp state: {e}")))?;
    *model = fresh;
    Ok(())
}

/// Reads a whole state into a fresh model with `model`'s configuration.
fn read(model: &SkyGp, bytes: &[u8]) -> Result<SkyGp, String> {
    let cfg = &model.cfg;
    let mut r = Reader { bytes, at: 0 };
    read_header(&mut r, cfg)?;
    let mut m = SkyGp::new(cfg.clone());
    r.expect_usize("groups", m.groups.len())?;

    let nu = r.usize()?;
    r.f64s_into("x_prev", &mut m.x_prev)?;
    m.clock = r.f64()?;
    m.samples_seen = r.u64()?;
    m.replacements = r.u64()?;
    read_cache(&mut r, &mut m.cache, cfg.n_cal)?;

    let with_drift = cfg.drift.is_some();
    let (order, free) = read_pool_lists(&mut r, &mut m.pool, with_drift)?;
    let used = m.pool.used();
    let dims = ExpertDims {
        d: cfg.input_dim,
        p: cfg.output_dim,
        n_bar: cfg.n_bar,
        with_drift,
    };
    for (slot, e) in m.pool.experts[..used].iter_mut().enumerate() {
        read_expert(&mut r, e, slot, free.contains(&slot), &dims)?;
    }
    if let Some(rt) = m.drift.as_mut() {
        read_drift_runtime(&mut r, rt, &order)?;
    }
    let n_list = m.pool.len();
    m.nu_prev = match nu {
        usize::MAX => None,
        v if v < n_list => Some(v),
        v => return Err(format!("nu_prev {v} past the list ({n_list})")),
    };
    if r.at != bytes.len() {
        return Err(format!("{} trailing bytes", bytes.len() - r.at));
    }
    Ok(m)
}

/// Magic, the format version this model reads (which depends on whether it has drift) and
/// the saving model's configuration, which must be this one's.
fn read_header(r: &mut Reader<'_>, cfg: &ValidConfig) -> Result<(), String> {
    if r.take(MAGIC.len())? != MAGIC {
        return Err("not a SkyGP state (bad magic)".into());
    }
    let version = r.u32()?;
    let expected = if cfg.drift.is_some() {
        FORMAT_VERSION_DRIFT
    } else {
        FORMAT_VERSION
    };
    if version != expected {
        return Err(match version {
            FORMAT_VERSION => "format version 1 is the state of a model without drift; this model has a \"drift\" key".into(),
            FORMAT_VERSION_DRIFT => "format version 2 is the state of a model with drift; this model has no \"drift\" key".into(),
            _ => format!(
                "format version {version}, this build reads {FORMAT_VERSION} (no drift) and {FORMAT_VERSION_DRIFT} (drift)"
            ),
        });
    }
    let saved_cfg = r.str()?;
    let this_cfg = config_text(cfg);
    if saved_cfg != this_cfg {
        return Err(format!(
            "saved with another configuration or dimensions: saved {saved_cfg}, this model {this_cfg}"
        ));
    }
    Ok(())
}

/// The selection cache; its aggregate count may not exceed `n_cal`.
fn read_cache(r: &mut Reader<'_>, c: &mut Cache, n_cal: usize) -> Result<(), String> {
    r.f64s_into("cache.x", &mut c.x)?;
    c.valid = r.bool()?;
    c.kv_ready = r.bool()?;
    r.usizes_into("cache.sel", &mut c.sel)?;
    r.usizes_into("cache.cand_pos", &mut c.cand_pos)?;
    r.f64s_into_vec("cache.cand_score", &mut c.cand_score)?;
    r.f64s_into("cache.k", &mut c.k)?;
    r.f64s_into("cache.v", &mut c.v)?;
    r.f64s_into("cache.mu", &mut c.mu)?;
    r.f64s_into("cache.var", &mut c.var)?;
    r.f64s_into("cache.w", &mut c.w)?;
    c.n_agg = r.usize()?;
    if c.n_agg > n_cal {
        return Err(format!("cache.n_agg {} exceeds n_cal {n_cal}", c.n_agg));
    }
    Ok(())
}

/// The number of slots handed out, the list 𝒯 and (with drift) the free slots, checked to
/// name every slot once, and the pool's counters. Returns (𝒯, free slots).
fn read_pool_lists(
    r: &mut Reader<'_>,
    pool: &mut Pool,
    with_drift: bool,
) -> Result<(Vec<usize>, Vec<usize>), String> {
    let used = r.usize()?;
    if used > pool.capacity() {
        return Err(format!(
            "{used} experts, the pool holds {}",
            pool.capacity()
        ));
    }
    pool.ensure(used);
    pool.set_used(used);
    let mut order = Vec::new();
    r.usizes_into_vec(&mut order)?;
    let mut free = Vec::new();
    if with_drift {
        r.usizes_into_vec(&mut free)?;
    }
    if order.len() + free.len() != used {
        return Err(format!(
            "list has {} entries and {} free slots for {used} experts",
            order.len(),
            free.len()
        ));
    }
    let mut seen = vec![false; used];
    for &slot in order.iter().chain(&free) {
        if slot >= used || std::mem::replace(&mut seen[slot], true) {
            return Err(format!("list entry {slot} is out of range or repeated"));
        }
    }
    pool.order.extend_from_slice(&order);
    pool.free.extend_from_slice(&free);
    pool.created = r.u64()?;
    pool.evictions = r.u64()?;
    Ok((order, free))
}

/// What the reading of one expert needs to know of the model.
struct ExpertDims {
    /// Input dimension.
    d: usize,
    /// Output dimension.
    p: usize,
    /// Points per expert N̄.
    n_bar: usize,
    /// Whether the state carries the drift fields.
    with_drift: bool,
}

/// One expert (in `slot`, free or not): its points, targets, α, factors, cached K and,
/// with drift, its stamps, base variances and counters.
fn read_expert(
    r: &mut Reader<'_>,
    e: &mut Expert,
    slot: usize,
    is_free: bool,
    dims: &ExpertDims,
) -> Result<(), String> {
    let (d, n_bar) = (dims.d, dims.n_bar);
    let n = r.usize()?;
    if (n == 0) != is_free || n > n_bar {
        return Err(format!(
            "expert in slot {slot} holds {n} points (N̄ = {n_bar}{})",
            if is_free {
                ", a free slot holds none"
            } else {
                ""
            }
        ));
    }
    e.n = n;
    e.n_off = r.usize()?;
    e.created = r.u64()?;
    e.stamp = r.f64()?;
    r.f64s_into("center", &mut e.center)?;
    r.f64s_into("center_off", &mut e.center_off)?;
    r.f64s_into("x", &mut e.x[..n * d])?;
    for o in 0..dims.p {
        r.f64s_into("y", &mut e.y[o * n_bar..o * n_bar + n])?;
        r.f64s_into("alpha", &mut e.alpha[o * n_bar..o * n_bar + n])?;
    }
    for (g, ch) in e.chol.iter_mut().enumerate() {
        let len = r.usize()?;
        if len != n {
            return Err(format!(
                "factor {g} of slot {slot} has {len} rows for {n} points"
            ));
        }
        restore_factor(ch, len, r).map_err(|why| format!("factor {g} of slot {slot}: {why}"))?;
    }
    for km in &mut e.kmat {
        r.f64s_into("kmat", &mut km[..n * (n + 1) / 2])?;
    }
    if dims.with_drift {
        r.f64s_into("t", &mut e.t[..n])?;
        for col in e.base.chunks_mut(n_bar) {
            r.f64s_into("base", &mut col[..n])?;
        }
        e.factor_time = r.f64()?;
        e.generation = r.u64()?;
        e.seq = r.u64()?;
        e.structural_seq = r.u64()?;
    }
    Ok(())
}

/// The drift clock and counters; every expert of 𝒯 (`order`) is marked for the new
/// refresh thread, which learns them on the first calls.
fn read_drift_runtime(
    r: &mut Reader<'_>,
    rt: &mut DriftRuntime,
    order: &[usize],
) -> Result<(), String> {
    let t_now = r.f64()?;
    rt.observe_time(t_now);
    let c = &mut rt.counters;
    for v in [
        &mut c.adopted,
        &mut c.dropped,
        &mut c.expired,
        &mut c.retired,
        &mut c.sync_deferred,
    ] {
        *v = r.u64()?;
    }
    for &slot in order {
        rt.live[slot] = true;
        rt.mark_dirty(slot);
    }
    Ok(())
}

/// Rebuild a factor row by row from its saved rows, bit for bit (see the module doc).
fn restore_factor(ch: &mut PackedCholesky, n: usize, r: &mut Reader<'_>) -> Result<(), String> {
    ch.clear();
    let mut row = Vec::with_capacity(n);
    for i in 0..n {
        r.f64s_into_vec("factor row", &mut row)?;
        if row.len() != i + 1 {
            return Err(format!("row {i} has {} entries", row.len()));
        }
        let (l, pivot) = (&row[..i], row[i]);
        if !(pivot > 0.0 && pivot.is_finite()) {
            return Err(format!("pivot {pivot} at row {i}"));
        }
        // c − lᵀl is exactly 0, so the pivot becomes sqrt(floor) = sqrt(pivot²) = pivot.
        ch.extend_with_solved_mut(l, dot(l, l), pivot * pivot)
            .map_err(|e| e.to_string())?;
        if ch.row(i)[i].to_bits() != pivot.to_bits() {
            return Err(format!("pivot at row {i} did not restore exactly"));
        }
    }
    Ok(())
}

#[derive(Default)]
struct Writer {
    out: Vec<u8>,
}

impl Writer {
    fn bytes(&mut self, b: &[u8]) {
        self.out.extend_from_slice(b);
    }
    fn u32(&mut self, v: u32) {
        self.bytes(&v.to_le_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.bytes(&v.to_le_bytes());
    }
    fn usize(&mut self, v: usize) {
        self.u64(v as u64);
    }
    fn bool(&mut self, v: bool) {
        self.out.push(u8::from(v));
    }
    fn f64(&mut self, v: f64) {
        self.u64(v.to_bits());
    }
    fn str(&mut self, s: &str) {
        self.usize(s.len());
        self.bytes(s.as_bytes());
    }
    fn f64s(&mut self, v: &[f64]) {
        self.usize(v.len());
        v.iter().for_each(|x| self.f64(*x));
    }
    fn usizes(&mut self, v: &[usize]) {
        self.usize(v.len());
        v.iter().for_each(|x| self.usize(*x));
    }
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.bytes.len());
        let end = end.ok_or_else(|| format!("truncated at byte {} (wanted {n} more)", self.at))?;
        let s = &self.bytes[self.at..end];
        self.at = end;
        Ok(s)
    }
    fn array<const N: usize>(&mut self) -> Result<[u8; N], String> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N)?);
        Ok(a)
    }
    fn u32(&mut self) -> Result<u32, String> {
        Ok(u32::from_le_bytes(self.array()?))
    }
    fn u64(&mut self) -> Result<u64, String> {
        Ok(u64::from_le_bytes(self.array()?))
    }
    fn usize(&mut self) -> Result<usize, String> {
        let v = self.u64()?;
        if v == u64::MAX {
            return Ok(usize::MAX);
        }
        usize::try_from(v).map_err(|_| format!("{v} does not fit in usize"))
    }
    fn expect_usize(&mut self, what: &str, want: usize) -> Result<(), String> {
        let v = self.usize()?;
        if v == want {
            Ok(())
        } else {
            Err(format!("{what}: saved {v}, this model {want}"))
        }
    }
    fn bool(&mut self) -> Result<bool, String> {
        match self.take(1)?[0] {
            0 => Ok(false),
            1 => Ok(true),
            b => Err(format!("invalid flag byte {b}")),
        }
    }
    fn f64(&mut self) -> Result<f64, String> {
        Ok(f64::from_bits(self.u64()?))
    }
    fn str(&mut self) -> Result<String, String> {
        let n = self.usize()?;
        let b = self.take(n)?;
        String::from_utf8(b.to_vec()).map_err(|e| format!("invalid text: {e}"))
    }
    /// A length prefix no larger than what remains (so a corrupt length cannot allocate).
    fn len(&mut self, item_bytes: usize) -> Result<usize, String> {
        let n = self.usize()?;
        if n.saturating_mul(item_bytes) > self.bytes.len() - self.at {
            return Err(format!("length {n} runs past the end of the state"));
        }
        Ok(n)
    }
    /// A float array whose length must equal `out.len()`.
    fn f64s_into(&mut self, what: &str, out: &mut [f64]) -> Result<(), String> {
        let n = self.len(8)?;
        if n != out.len() {
            return Err(format!(
                "{what}: saved {n} values, this model holds {}",
                out.len()
            ));
        }
        for v in out.iter_mut() {
            *v = self.f64()?;
        }
        Ok(())
    }
    /// A float array of any length, into a vector's existing capacity.
    fn f64s_into_vec(&mut self, what: &str, out: &mut Vec<f64>) -> Result<(), String> {
        let n = self.len(8)?;
        if out.capacity() > 0 && n > out.capacity() {
            return Err(format!(
                "{what}: {n} values exceed capacity {}",
                out.capacity()
            ));
        }
        out.clear();
        for _ in 0..n {
            out.push(self.f64()?);
        }
        Ok(())
    }
    /// An index array into a vector with reserved capacity (which it must not exceed).
    fn usizes_into(&mut self, what: &str, out: &mut Vec<usize>) -> Result<(), String> {
        let n = self.len(8)?;
        if n > out.capacity() {
            return Err(format!(
                "{what}: {n} entries exceed capacity {}",
                out.capacity()
            ));
        }
        out.clear();
        for _ in 0..n {
            out.push(self.usize()?);
        }
        Ok(())
    }
    fn usizes_into_vec(&mut self, out: &mut Vec<usize>) -> Result<(), String> {
        let n = self.len(8)?;
        out.clear();
        out.reserve(n);
        for _ in 0..n {
            out.push(self.usize()?);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpn_gp_core::model::OnlineModel;
    use serde_json::json;

    /// A deterministic 2-D input path with two targets.
    fn sample(k: usize) -> ([f64; 2], [f64; 2]) {
        let t = k as f64 * 0.05;
        let x = [
            (1.3 * t).sin() * 2.0 + 0.1 * (7.0 * t).cos(),
            (0.7 * t).cos() * 1.5,
        ];
        let y = [
            x[0].sin() * x[1],
            (x[0] - x[1]).cos() + 0.05 * ((k * 31) % 7) as f64,
        ];
        (x, y)
    }

    fn config(variant: &str, preset: &str) -> serde_json::Value {
        json!({
            "variant": variant, "preset": preset, "n_bar": 10, "n_cal": 3, "max_experts": 12,
            "hyper": [
                {"sigma_f": 1.0, "sigma_n": 0.1, "lengthscales": [0.6, 0.8]},
                {"sigma_f": 0.7, "sigma_n": 0.2, "lengthscales": [1.1, 0.5]}
            ]
        })
    }

    fn bits(v: &[f64]) -> Vec<u64> {
        v.iter().map(|x| x.to_bits()).collect()
    }

    /// Streams samples `range` through `m`, predict then update.
    fn run(m: &mut SkyGp, range: std::ops::Range<usize>) {
        let (mut mean, mut var) = ([0.0; 2], [0.0; 2]);
        for k in range {
            let (x, y) = sample(k);
            m.predict(&x, &mut mean, &mut var).expect("predict");
            m.update(&x, &y, k as f64 * 0.01, &[0.01, 0.04])
                .expect("update");
        }
    }

    #[test]
    fn save_then_load_reproduces_predictions_and_learning_bitwise() {
        for (variant, preset) in [
            ("fast", "recommended"),
            ("dense", "recommended"),
            ("fast", "reference"),
            ("dense", "reference"),
        ] {
            let cfg = config(variant, preset);
            let mut a = SkyGp::from_json(&cfg, 2, 2).expect("config");
            run(&mut a, 0..600);
            assert!(
                a.evictions() > 0,
                "{variant}/{preset}: the stream must recycle experts"
            );
            if variant == "dense" {
                assert!(
                    a.replacements() > 0,
                    "{preset}: Dense must have replaced points"
                );
            }
            // Save right after a prediction, while its selection is cached for the update.
            let (x, _) = sample(600);
            let (mut mean, mut var) = ([0.0; 2], [0.0; 2]);
            a.predict(&x, &mut mean, &mut var).expect("predict");
            let state = save(&a);
            let mut b = SkyGp::from_json(&cfg, 2, 2).expect("config");
            load(&mut b, &state).expect("load");
            assert_eq!(
                save(&b),
                state,
                "{variant}/{preset}: re-saving gives the same bytes"
            );
            assert_eq!(a.stats(), b.stats());
            // Both continue identically: every prediction bitwise equal, same final state.
            let (mut ma, mut va, mut mb, mut vb) = ([0.0; 2], [0.0; 2], [0.0; 2], [0.0; 2]);
            for k in 600..900 {
                let (x, y) = sample(k);
                a.predict(&x, &mut ma, &mut va).expect("predict a");
                b.predict(&x, &mut mb, &mut vb).expect("predict b");
                assert_eq!(bits(&ma), bits(&mb), "{variant}/{preset}: mean at step {k}");
                assert_eq!(
                    bits(&va),
                    bits(&vb),
                    "{variant}/{preset}: variance at step {k}"
                );
                a.update(&x, &y, k as f64 * 0.01, &[0.01, 0.04])
                    .expect("update a");
                b.update(&x, &y, k as f64 * 0.01, &[0.01, 0.04])
                    .expect("update b");
            }
            assert_eq!(
                save(&a),
                save(&b),
                "{variant}/{preset}: same state after 300 more steps"
            );
        }
    }

    #[test]
    fn an_empty_model_round_trips() {
        let cfg = config("fast", "recommended");
        let a = SkyGp::from_json(&cfg, 2, 2).expect("config");
        let mut b = SkyGp::from_json(&cfg, 2, 2).expect("config");
        run(&mut b, 0..50);
        load(&mut b, &save(&a)).expect("load");
        assert_eq!(b.stats(), a.stats());
        assert_eq!(b.n_experts(), 0);
    }

    #[test]
    fn bad_states_are_refused_and_leave_the_model_unchanged() {
        let cfg = config("dense", "recommended");
        let mut a = SkyGp::from_json(&cfg, 2, 2).expect("config");
        run(&mut a, 0..200);
        let state = save(&a);
        let mut b = SkyGp::from_json(&cfg, 2, 2).expect("config");
        run(&mut b, 0..30);
        let before = save(&b);
        let err = |bytes: &[u8], b: &mut SkyGp| load(b, bytes).expect_err("must fail").to_string();

        let cut = err(&state[..state.len() - 3], &mut b);
        assert!(
            cut.contains("runs past the end") || cut.contains("truncated"),
            "{cut}"
        );
        assert!(err(b"not a state", &mut b).contains("bad magic"));
        let mut longer = state.clone();
        longer.push(0);
        assert!(err(&longer, &mut b).contains("1 trailing bytes"));
        let mut version = state.clone();
        version[8] = 9;
        assert!(err(&version, &mut b).contains("format version 9"));
        let mut other = SkyGp::from_json(&config("fast", "recommended"), 2, 2).expect("config");
        assert!(err(&state, &mut other).contains("another configuration"));
        let mut other_dims = SkyGp::from_json(
            &json!({"variant": "dense", "n_bar": 10, "n_cal": 3, "max_experts": 12,
                    "hyper": {"sigma_f": 1.0, "sigma_n": 0.1, "lengthscales": [0.6, 0.8]}}),
            2,
            1,
        )
        .expect("config");
        assert!(err(&state, &mut other_dims).contains("another configuration"));
        assert_eq!(save(&b), before, "failed loads left the model as it was");
    }
}
