//! The benches' shared streams.

/// A stream of inputs and one target per row, with the hyperparameters to run it with.
pub struct Stream {
    pub x: Vec<Vec<f64>>,
    pub y: Vec<f64>,
    pub hyper: serde_json::Value,
}

/// A smooth trajectory-like stream of 10,000 rows in d inputs (slowly varying phases plus
/// noise, xorshift, reproducible); hyperparameters shared for p = 1, distinct per output
/// otherwise.
pub fn synthetic(d: usize, p: usize) -> Stream {
    let mut s = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    };
    // A smooth trajectory-like stream: slowly varying phases plus noise.
    let x: Vec<Vec<f64>> = (0..10_000)
        .map(|k| {
            (0..d)
                .map(|j| (0.01 * k as f64 * (1.0 + 0.1 * j as f64)).sin() + 0.1 * next())
                .collect()
        })
        .collect();
    let y = x
        .iter()
        .map(|r| r.iter().take(4).map(|v| v.sin()).sum::<f64>())
        .collect();
    let entry = |o: usize| serde_json::json!({"sigma_f": 1.0 + 0.1 * o as f64, "sigma_n": 0.05, "lengthscales": vec![1.0 + 0.05 * o as f64; d]});
    let hyper = if p == 1 {
        entry(0)
    } else {
        serde_json::Value::Array((0..p).map(entry).collect())
    };
    Stream { x, y, hyper }
}
