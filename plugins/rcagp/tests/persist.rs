//! Save/load: a loaded model predicts bit for bit what the saved one does and keeps learning
//! identically (inline and background); a state from another config, truncated or
//! corrupted bytes are refused and leave the model unchanged.
#![allow(clippy::unwrap_used)]

use std::time::Duration;

use gpn_gp_core::model::OnlineModel;
use gpn_rcagp::RcaGp;
use serde_json::json;

fn sample(k: usize) -> ([f64; 3], [f64; 2]) {
    let t = k as f64 * 0.02;
    let x = [t.sin(), (0.6 * t).cos(), (0.3 * t).sin() * 2.0];
    (
        [x[0], x[1], x[2]],
        [
            (2.0 * x[0]).sin() + x[2],
            x[1] * x[2] + if k.is_multiple_of(37) { 6.0 } else { 0.0 },
        ],
    )
}

fn cfg(background: bool, actions: &str) -> serde_json::Value {
    json!({
        "hyper": [{"sigma_f": 1.0, "sigma_n": 0.05, "lengthscales": [0.9, 1.1, 1.4]},
                  {"sigma_f": 0.8, "sigma_n": 0.08, "lengthscales": [0.9, 1.1, 1.4]}],
        "blocks": 7, "block_size": 5, "background": background, "actions": actions,
        "refit_every_blocks": 3, "refit_steps": 2,
    })
}

fn bits(v: &[f64]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits()).collect()
}

fn feed(m: &mut RcaGp, range: std::ops::Range<usize>, background: bool) {
    for k in range {
        let (x, y) = sample(k);
        let (mut mu, mut var) = ([0.0; 2], [0.0; 2]);
        m.predict(&x, &mut mu, &mut var).unwrap();
        m.update(&x, &y, k as f64 * 0.001, &[0.0025, 0.0064])
            .unwrap();
        if background {
            assert!(m.wait_idle(Duration::from_secs(20)));
        }
    }
}

fn round_trip(background: bool, actions: &str) {
    round_trip_of(cfg(background, actions), background, actions);
}

fn round_trip_of(c: serde_json::Value, background: bool, actions: &str) {
    let mut a = RcaGp::from_json(&c, 3, 2).unwrap();
    // 123 samples: 24 blocks (window replaced three times) and an open block of 3.
    feed(&mut a, 0..123, background);
    let bytes = a.save().unwrap();
    let mut b = RcaGp::from_json(&c, 3, 2).unwrap();
    b.load(&bytes).unwrap();
    // Without refits in flight both now continue identically (refits off from here on:
    // background refits finish at times that depend on the machine).
    let (mut m1, mut v1, mut m2, mut v2) = ([0.0; 2], [0.0; 2], [0.0; 2], [0.0; 2]);
    for k in 123..170 {
        let (x, y) = sample(k);
        a.predict(&x, &mut m1, &mut v1).unwrap();
        b.predict(&x, &mut m2, &mut v2).unwrap();
        assert_eq!(bits(&m1), bits(&m2), "{actions}: mean at step {k}");
        assert_eq!(bits(&v1), bits(&v2), "{actions}: variance at step {k}");
        if background {
            break; // the background refit schedule is time-dependent; one step suffices
        }
        a.update(&x, &y, 0.0, &[0.0025, 0.0064]).unwrap();
        b.update(&x, &y, 0.0, &[0.0025, 0.0064]).unwrap();
    }
    assert_eq!(a.save().unwrap().len(), b.save().unwrap().len());
}

#[test]
fn round_trip_inline() {
    round_trip(false, "weight_aware");
    round_trip(false, "random");
}

/// Between threshold refreshes blocks go in by one-row updates; the schedule follows the
/// saved block count, so a loaded model commits exactly as the saved one goes on to.
#[test]
fn round_trip_with_row_commits() {
    let mut c = cfg(false, "weight_aware");
    c["threshold_refresh_blocks"] = json!(4);
    c["admit_interval_s"] = json!(0.0);
    let mut probe = RcaGp::from_json(&c, 3, 2).unwrap();
    feed(&mut probe, 0..170, false);
    let (rows, all) = probe.commits().unwrap();
    assert!(
        rows >= all / 2 && all >= 30,
        "{rows} of {all} blocks by row updates"
    );
    round_trip_of(c, false, "weight_aware, row commits");
}

#[test]
fn round_trip_background() {
    round_trip(true, "weight_aware");
}

#[test]
fn refuses_foreign_or_damaged_states() {
    let mut a = RcaGp::from_json(&cfg(false, "weight_aware"), 3, 2).unwrap();
    feed(&mut a, 0..60, false);
    let bytes = a.save().unwrap();
    let probe = [0.1, 0.2, 0.3];
    let (mut m0, mut v0, mut m1, mut v1) = ([0.0; 2], [0.0; 2], [0.0; 2], [0.0; 2]);
    let mut other = cfg(false, "weight_aware");
    other["blocks"] = json!(8);
    let mut b = RcaGp::from_json(&other, 3, 2).unwrap();
    let e = b.load(&bytes).unwrap_err().to_string();
    assert!(e.contains("different configuration"), "{e}");
    let mut c = RcaGp::from_json(&cfg(false, "weight_aware"), 3, 2).unwrap();
    feed(&mut c, 0..20, false);
    c.predict(&probe, &mut m0, &mut v0).unwrap();
    for bad in [
        &bytes[..bytes.len() / 2],
        &bytes[..7],
        b"GPNRCAGP\x02\0\0\0".as_slice(),
    ] {
        assert!(c.load(bad).is_err());
        c.predict(&probe, &mut m1, &mut v1).unwrap();
        assert_eq!(
            bits(&m0),
            bits(&m1),
            "a refused load leaves the model unchanged"
        );
    }
    let mut flipped = bytes.clone();
    let at = flipped.len() - 8 * 40;
    flipped[at + 7] = 0x7f; // an input becomes NaN-ish or huge: must not panic
    let _ = c.load(&flipped);
}

/// The weight profile is part of a state's identity: a `flat_imq` state round-trips and an
/// IMQ model refuses it (its stored weights were computed with the other profile).
#[test]
fn the_weight_profile_is_part_of_the_saved_identity() {
    let mut flat = cfg(false, "weight_aware");
    flat["weight_profile"] = json!("flat_imq");
    round_trip_of(flat.clone(), false, "flat_imq");
    let mut a = RcaGp::from_json(&flat, 3, 2).unwrap();
    feed(&mut a, 0..40, false);
    let bytes = a.save().unwrap();
    for imq in [cfg(false, "weight_aware"), {
        let mut c = cfg(false, "weight_aware");
        c["weight_profile"] = json!("imq");
        c
    }] {
        let mut b = RcaGp::from_json(&imq, 3, 2).unwrap();
        let e = b.load(&bytes).unwrap_err().to_string();
        assert!(e.contains("different configuration"), "{e}");
    }
}
