//! Scratch probe (not committed long-term).
use gpn_gp_core::kernel::ArdKernel;
use gpn_gp_core::tvgp::bandit::{BanditConfig, Method, run};
use gpn_gp_core::tvgp::problem::{Synthetic1d, TimeVaryingProblem, fit_hyperparameters};

fn main() {
    let p = Synthetic1d::with_horizon(500);
    let t0 = std::time::Instant::now();
    let h = fit_hyperparameters(&p, 200, 0).unwrap();
    println!("fit {:?} in {:?}", h, t0.elapsed());
    println!("stay0 {} random {} stay10pi {}", p.stay_regret(0.0, 500), p.random_regret(500), p.stay_regret(10.0*std::f64::consts::PI, 500));
    let args: Vec<String> = std::env::args().collect();
    let horizon: usize = args.get(1).map_or(500, |s| s.parse().unwrap());
    let step: f64 = args.get(2).map_or(0.25, |s| s.parse().unwrap());
    let mut c = BanditConfig::with_kernel(ArdKernel::se(h.sigma_f, &[h.lengthscale]).unwrap(), h.m0, horizon);
    c.grid_step = step;
    let s2 = p.noise_var();
    for (name, m) in [
        ("sparq", Method::sparq(s2)),
        ("ui-window", Method::injection_window(s2)),
        ("sw25", Method::sw_gp_ucb(25)),
        ("r50", Method::r_gp_ucb(50)),
        ("gp-ucb", Method::gp_ucb()),
        ("tv0.03", Method::tv_gp_ucb(0.03)),
        ("w0.95", Method::w_gp_ucb(0.95)),
        ("ui-all", Method::injection_all(s2)),
        ("expert-only", Method::expert_only(s2)),
        ("rand-past", Method::random_past_refresh(s2)),
        ("rand-dom", Method::random_domain_refresh(s2)),
    ] {
        let t0 = std::time::Instant::now();
        let mut out = vec![];
        for seed in 0..3 {
            let log = run(&p, &m, &c, seed).unwrap();
            out.push((log.average_regret(), log.average_regret_at(horizon * 3 / 5), log.steps.last().unwrap().beta, log.steps.last().unwrap().queries, log.steps.last().unwrap().model_size));
        }
        println!("{name:12} {:?} {:?}", t0.elapsed() / 3, out);
    }
}
