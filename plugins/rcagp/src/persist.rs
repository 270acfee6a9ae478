//! Save and load of the learned state, bit for bit.
//!
//! The state is the block path's engine: hyperparameters (and their version), thresholds,
//! the window (every active slot's samples, action entries and block ids, the ring
//! position), the open block, G_C of the active slots, every output's factor of M and z
//! (which the live singles extend incrementally, so they are saved rather than recomputed),
//! the counters and the position of the random-action stream; plus the control thread's
//! counters. The scaled inputs and the open samples' kernel rows are recomputed from the raw
//! inputs by the same code, and the snapshot is rebuilt from the state, so a loaded model
//! predicts exactly what the saved one does after its next publication, and keeps learning
//! identically. A refit running at save time is not saved.
//!
//! Format, little-endian: the magic `GPNRCAGP`, a `u32` format version (1), the resolved
//! config's `Debug` text (a model loads only into one created with the same config and
//! dimensions), then length-prefixed fields in the order of [`save`]. Loading checks every
//! length and value before anything is replaced.

use gpn_gp_core::model::ModelError;
use gpn_gp_core::state_codec::{StateReader, StateWriter};

use crate::config::ValidConfig;
use crate::stream::engine::Engine;
use crate::stream::window::Rows;
use crate::weights::WeightProfile;

/// Starts a `layout: window` state.
pub(crate) const MAGIC: &[u8; 8] = b"GPNRCAGP";
const FORMAT_VERSION: u32 = 1;
/// Starts the optional trailing drift section.
const DRIFT_TAG: &[u8; 5] = b"DRIFT";

/// Counters of the control thread that belong to the state.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(crate) struct Counters {
    pub samples_seen: u64,
    pub admit_counter: u64,
}

/// Serialises `engine` and `counters`. **Allocates** the returned buffer.
pub(crate) fn save(engine: &Engine, counters: Counters) -> Vec<u8> {
    let mut w = StateWriter::default();
    w.bytes(MAGIC);
    w.u32(FORMAT_VERSION);
    w.str(&config_text(&engine.cfg));
    w.u64(counters.samples_seen);
    w.u64(counters.admit_counter);
    let p = &engine.params;
    w.f64s(&p.ell);
    w.f64s(&p.outputscale);
    w.f64s(&p.kappa);
    w.u64(p.version);
    w.f64s(&engine.c);
    w.u64(engine.blocks_inserted);
    w.u64(engine.blocks_since_refit as u64);
    w.u64(engine.version);
    w.bool(engine.dirty);
    w.u128(engine.rng_word_pos());
    let win = &engine.win;
    let (d, p_out, nbmax) = (win.d, win.p, win.blocks);
    let n = win.n_points();
    w.u64(win.filled as u64);
    w.u64(win.next_slot as u64);
    w.u64(win.next_id);
    w.u64s(&win.ids[..win.filled]);
    w.f64s(&win.s[..n]);
    write_rows(&mut w, &win.rows, n, (d, p_out));
    let m = win.open_len;
    w.u64(m as u64);
    write_rows(&mut w, &win.open, m, (d, p_out));
    let nb = win.filled;
    let mut g = Vec::with_capacity(nb * nb);
    for a in 0..nb {
        g.extend_from_slice(&engine.g[a * nbmax..a * nbmax + nb]);
    }
    w.f64s(&g);
    w.bool(engine.live);
    w.u64(engine.live_singles as u64);
    let cap = engine.cap_actions();
    for (o, ch) in engine.chol.iter().enumerate() {
        w.u64(ch.len() as u64);
        w.f64(ch.jitter());
        w.f64s(ch.packed());
        w.f64s(&engine.z[o * cap..o * cap + ch.len()]);
    }
    if let Some(dr) = &engine.cfg.drift {
        w.bytes(DRIFT_TAG);
        w.str(&format!("{dr:?}"));
        w.f64(engine.t_newest);
        w.f64(engine.t_ref);
        w.u64(engine.blocks_expired);
        w.u64(engine.drift_refreshes);
    }
    w.into_bytes()
}

/// The first `n` samples of `rows` (inputs of dimension d, p outputs), field by field.
fn write_rows(w: &mut StateWriter, rows: &Rows, n: usize, (d, p): (usize, usize)) {
    w.f64s(&rows.x[..n * d]);
    w.f64s(&rows.y[..n * p]);
    w.f64s(&rows.noise[..n * p]);
    w.f64s(&rows.t[..n]);
    w.f64s(&rows.center[..n * p]);
    w.f64s(&rows.cvar[..n * p]);
}

/// The config as saved: the `Debug` text without the `drift` field (the last one), so that
/// a model without the key saves exactly the bytes it saved before drift existed (and such
/// states load into it); drift settings go to the trailing drift section.
fn config_text(cfg: &ValidConfig) -> String {
    let text = format!(
        "{:?}",
        ValidConfig {
            drift: None,
            ..cfg.clone()
        }
    );
    // The admission interval decides which samples enter the window, not how a saved
    // window is read: left out, so that states saved before the key existed still load.
    let text = text.replacen(
        &format!(", admit_interval_s: {:?}", cfg.admit_interval_s),
        "",
        1,
    );
    let text = text.replacen(&format!(", refit_blocks: {:?}", cfg.refit_blocks), "", 1);
    // Likewise how often the thresholds are refreshed and how much a refit sees (they shape
    // later commits and refits only).
    let text = text.replacen(
        &format!(
            ", threshold_refresh_blocks: {:?}",
            cfg.threshold_refresh_blocks
        ),
        "",
        1,
    );
    // The paper's IMQ was the only weight profile before the key existed: left out for it,
    // so that those states still load; any other profile stays part of the identity.
    let text = match cfg.weight_profile {
        WeightProfile::Imq => text.replacen(", weight_profile: Imq", "", 1),
        WeightProfile::FlatImq => text,
    };
    match text.strip_suffix(", drift: None }") {
        Some(head) => format!("{head} }}"),
        None => text,
    }
}

fn bad(msg: impl Into<String>) -> ModelError {
    ModelError::Other(format!("rcagp load: {}", msg.into()))
}

/// Restores a state saved by [`save`] into a fresh engine built from `template`'s config.
pub(crate) fn load(template: &Engine, bytes: &[u8]) -> Result<(Engine, Counters), ModelError> {
    let mut r = StateReader::new(bytes, "rcagp load");
    read_header(&mut r, &template.cfg)?;
    let mut e = Engine::new(&template.cfg);
    let counters = Counters {
        samples_seen: r.u64()?,
        admit_counter: r.u64()?,
    };
    read_hyperparameters(&mut r, &mut e)?;
    read_engine_counters(&mut r, &mut e)?;
    read_window(&mut r, &mut e)?;
    read_gram(&mut r, &mut e)?;
    read_factors(&mut r, &mut e)?;
    if r.remaining() > 0 && r.take(DRIFT_TAG.len())? == DRIFT_TAG {
        read_drift(&mut r, &mut e, &template.cfg)?;
    } else if template.cfg.drift.is_some() {
        // A state saved without drift: age everything from its newest sample at the next
        // publication.
        let newest = rows_newest(&e);
        e.t_newest = newest;
        e.live = false;
        e.dirty = true;
        e.refresh_drift();
    }
    r.finish()?;
    e.rescale_inputs();
    Ok((e, counters))
}

/// Magic, format version and the saving model's config, which must be this one's.
fn read_header(r: &mut StateReader<'_>, cfg: &ValidConfig) -> Result<(), ModelError> {
    if r.take(8)? != MAGIC {
        return Err(bad("not an RCaGP state (bad magic)"));
    }
    let version = r.u32()?;
    if version != FORMAT_VERSION {
        return Err(bad(format!(
            "format version {version}, this build reads {FORMAT_VERSION}"
        )));
    }
    if r.str()? != config_text(cfg) {
        return Err(bad(
            "the state was saved by a model with a different configuration or dimensions",
        ));
    }
    Ok(())
}

/// Lengthscales, outputscales and κ (checked positive, 1/ℓ derived) and their version.
fn read_hyperparameters(r: &mut StateReader<'_>, e: &mut Engine) -> Result<(), ModelError> {
    let params = &mut e.params;
    r.f64s_into(&mut params.ell, "lengthscales")?;
    r.f64s_into(&mut params.outputscale, "outputscale")?;
    r.f64s_into(&mut params.kappa, "kappa")?;
    let positive = |v: &[f64]| v.iter().all(|x| x.is_finite() && *x > 0.0);
    if !(positive(&params.ell) && positive(&params.outputscale) && positive(&params.kappa)) {
        return Err(bad("hyperparameters must be finite and > 0"));
    }
    for (w, l) in params.inv_ell.iter_mut().zip(&params.ell) {
        *w = 1.0 / l;
    }
    params.version = r.u64()?;
    Ok(())
}

/// Thresholds, the engine's counters and the position of the random-action stream.
fn read_engine_counters(r: &mut StateReader<'_>, e: &mut Engine) -> Result<(), ModelError> {
    r.f64s_into(&mut e.c, "thresholds")?;
    e.blocks_inserted = r.u64()?;
    e.blocks_since_refit = r.usize()?;
    e.version = r.u64()?;
    e.dirty = r.bool()?;
    e.set_rng_word_pos(r.u128()?);
    Ok(())
}

/// Field names of the window's samples, in the order they are saved.
const ROW_FIELDS: [&str; 6] = ["x", "y", "noise", "t", "center", "cvar"];
/// The same fields of the open block.
const OPEN_FIELDS: [&str; 6] = [
    "open x",
    "open y",
    "open noise",
    "open t",
    "open center",
    "open cvar",
];

/// The ring position, block ids, actions, the stored samples and the open block.
fn read_window(r: &mut StateReader<'_>, e: &mut Engine) -> Result<(), ModelError> {
    let win = &mut e.win;
    let (d, p, kb, nbmax) = (win.d, win.p, win.block_size, win.blocks);
    let filled = r.usize()?;
    let next_slot = r.usize()?;
    if filled > nbmax || next_slot >= nbmax || (filled < nbmax && next_slot != 0) {
        return Err(bad(format!(
            "window position (filled {filled}, next {next_slot}) invalid for {nbmax} blocks"
        )));
    }
    win.filled = filled;
    win.next_slot = next_slot;
    win.next_id = r.u64()?;
    let n = filled * kb;
    r.u64s_into(&mut win.ids[..filled], "block ids")?;
    r.f64s_into(&mut win.s[..n], "actions")?;
    read_rows(r, &mut win.rows, n, (d, p), &ROW_FIELDS)?;
    let m = r.usize()?;
    if m >= kb {
        return Err(bad(format!("open block of {m} samples (block size {kb})")));
    }
    win.open_len = m;
    read_rows(r, &mut win.open, m, (d, p), &OPEN_FIELDS)
}

/// The first `n` samples of `rows` (inputs of dimension d, p outputs), fields named by
/// `names` in errors.
fn read_rows(
    r: &mut StateReader<'_>,
    rows: &mut Rows,
    n: usize,
    (d, p): (usize, usize),
    names: &[&str; 6],
) -> Result<(), ModelError> {
    r.f64s_into(&mut rows.x[..n * d], names[0])?;
    r.f64s_into(&mut rows.y[..n * p], names[1])?;
    r.f64s_into(&mut rows.noise[..n * p], names[2])?;
    r.f64s_into(&mut rows.t[..n], names[3])?;
    r.f64s_into(&mut rows.center[..n * p], names[4])?;
    r.f64s_into(&mut rows.cvar[..n * p], names[5])
}

/// G_C of the filled slots, saved densely, into the engine's `blocks`-strided matrix.
fn read_gram(r: &mut StateReader<'_>, e: &mut Engine) -> Result<(), ModelError> {
    let (filled, nbmax) = (e.win.filled, e.win.blocks);
    let mut g = vec![0.0; filled * filled];
    r.f64s_into(&mut g, "G")?;
    for a in 0..filled {
        e.g[a * nbmax..a * nbmax + filled].copy_from_slice(&g[a * filled..(a + 1) * filled]);
    }
    Ok(())
}

/// The live flag and singles, then every output's factor of M (with its jitter) and z.
fn read_factors(r: &mut StateReader<'_>, e: &mut Engine) -> Result<(), ModelError> {
    let filled = e.win.filled;
    e.live = r.bool()?;
    e.live_singles = r.usize()?;
    if e.live_singles > e.win.open_len {
        return Err(bad("more live singles than open samples"));
    }
    let cap = e.cap_actions();
    for o in 0..e.win.p {
        let len = r.usize()?;
        if len > cap || (e.live && len != filled + e.live_singles) {
            return Err(bad(format!("factor of size {len} for {filled} blocks")));
        }
        let jitter = f64::from_bits(r.u64()?);
        let mut packed = vec![0.0; len * (len + 1) / 2];
        r.f64s_into(&mut packed, "factor")?;
        e.chol[o]
            .set_packed(len, &packed, jitter)
            .map_err(|err| bad(err.to_string()))?;
        r.f64s_into(&mut e.z[o * cap..o * cap + len], "z")?;
    }
    Ok(())
}

/// The trailing drift section (after its tag): settings, which must be this model's, time
/// stamps and drift counters.
fn read_drift(
    r: &mut StateReader<'_>,
    e: &mut Engine,
    cfg: &ValidConfig,
) -> Result<(), ModelError> {
    let Some(dr) = &cfg.drift else {
        return Err(bad(
            "the state was saved with a drift key; this model has none",
        ));
    };
    if r.str()? != format!("{dr:?}") {
        return Err(bad("the state was saved with different drift settings"));
    }
    e.t_newest = f64::from_bits(r.u64()?);
    e.t_ref = f64::from_bits(r.u64()?);
    e.blocks_expired = r.u64()?;
    e.drift_refreshes = r.u64()?;
    if e.t_newest.is_nan() || e.t_ref.is_nan() || e.t_ref > e.t_newest {
        return Err(bad("drift time stamps invalid"));
    }
    Ok(())
}

/// Newest stamp in a loaded window (−∞ if empty).
fn rows_newest(e: &Engine) -> f64 {
    let n = e.win.n_points();
    e.win.rows.t[..n]
        .iter()
        .chain(&e.win.open.t[..e.win.open_len])
        .fold(f64::NEG_INFINITY, |a, &b| a.max(b))
}
