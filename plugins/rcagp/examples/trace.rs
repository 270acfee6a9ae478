//! Diagnostic (not committed): stream a recorded sim CSV through RcaGp and print windowed errors.
use gpn_gp_core::model::OnlineModel;
use std::io::Write;
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = &args[1];
    let mut cfg: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&args[2]).unwrap()).unwrap();
    for kv in &args[3..] {
        let (k, v) = kv.split_once('=').unwrap();
        cfg[k] = serde_json::from_str(v).unwrap_or(serde_json::Value::String(v.into()));
    }
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    let h: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |n: &str| h.iter().position(|c| *c == n).unwrap();
    let ix: Vec<usize> = (0..21).map(|k| col(&format!("x_{k}"))).collect();
    let iy: Vec<usize> = (0..7).map(|k| col(&format!("y_{k}"))).collect();
    let it: Vec<usize> = (0..7).map(|k| col(&format!("y_true_{k}"))).collect();
    let mut rows: Vec<(Vec<f64>, Vec<f64>, Vec<f64>)> = Vec::new();
    for l in lines {
        let v: Vec<f64> = l
            .split(',')
            .map(|s| s.parse().unwrap_or(f64::NAN))
            .collect();
        let x: Vec<f64> = ix.iter().map(|&i| v[i]).collect();
        let y: Vec<f64> = iy.iter().map(|&i| v[i]).collect();
        let t: Vec<f64> = it.iter().map(|&i| v[i]).collect();
        if x.iter().chain(&y).chain(&t).any(|a| a.is_nan()) {
            continue;
        }
        rows.push((x, y, t));
    }
    let n = rows.len() as f64;
    let mut mx = vec![0.0; 21];
    let mut my = vec![0.0; 7];
    for (x, y, _) in &rows {
        for k in 0..21 {
            mx[k] += x[k] / n;
        }
        for o in 0..7 {
            my[o] += y[o] / n;
        }
    }
    let noise: Vec<f64> = cfg["hyper"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["sigma_n"].as_f64().unwrap().powi(2))
        .collect();
    let mut m = gpn_rcagp::RcaGp::from_json(&cfg, 21, 7).unwrap();
    let (mut mu, mut var) = (vec![0.0; 7], vec![0.0; 7]);
    let mut win_sq = vec![0.0; 7];
    let mut cnt = 0;
    let mut tot = vec![0.0; 7];
    let out = std::io::stdout();
    let mut out = out.lock();
    let mut glitch_in_win = 0;
    for (i, (x, y, t)) in rows.iter().enumerate() {
        let xc: Vec<f64> = x.iter().zip(&mx).map(|(a, b)| a - b).collect();
        let yc: Vec<f64> = y.iter().zip(&my).map(|(a, b)| a - b).collect();
        let tc: Vec<f64> = t.iter().zip(&my).map(|(a, b)| a - b).collect();
        if i > 0 {
            m.predict(&xc, &mut mu, &mut var).unwrap();
            for o in 0..7 {
                let e = (mu[o] - tc[o]).powi(2);
                win_sq[o] += e;
                tot[o] += e;
            }
            cnt += 1;
        }
        if yc.iter().zip(&tc).any(|(a, b)| (a - b).abs() > 1.0) {
            glitch_in_win += 1;
        }
        m.update(&xc, &yc, i as f64 * 0.001, &noise).unwrap();
        if (i + 1) % 1000 == 0 {
            let s = m.snapshot();
            writeln!(
                out,
                "{:6} rmse {:?} glitches {} c {:?} kappa {:?} ell0 {:.3}",
                i + 1,
                win_sq
                    .iter()
                    .map(|v| ((v / cnt as f64) as f64).sqrt())
                    .map(|v| (v * 1000.0).round() / 1000.0)
                    .collect::<Vec<_>>(),
                glitch_in_win,
                s.thresholds()
                    .iter()
                    .map(|v| (v * 1000.0).round() / 1000.0)
                    .collect::<Vec<_>>(),
                s.noise_multipliers()
                    .iter()
                    .map(|v| (v * 100.0).round() / 100.0)
                    .collect::<Vec<_>>(),
                s.lengthscales()[0]
            )
            .unwrap();
            win_sq.iter_mut().for_each(|v| *v = 0.0);
            cnt = 0;
            glitch_in_win = 0;
        }
    }
    let pooled = (tot.iter().sum::<f64>() / (7.0 * (n - 1.0))).sqrt();
    writeln!(
        out,
        "pooled {pooled:.4} per-output {:?}",
        tot.iter()
            .map(|v| ((v / (n - 1.0)).sqrt() * 1000.0).round() / 1000.0)
            .collect::<Vec<_>>()
    )
    .unwrap();
}
