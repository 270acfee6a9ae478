//! The viewer layout sent with every recording: one view per question a user asks of a run,
//! every joint shown (rerun's automatic layout shows a few joints and hides the ±η band).
//!
//! ```text
//! +-----------------+------------------------------------------------------+
//! | robot (3-D)     | tabs, one plot per joint:                            |
//! |                 |   tracking       q, q_d and the nominal run's q      |
//! +-----------------+   residual       true residual, μ, μ ± η_cal         |
//! | bound coverage  |   tracking error q − q_d of both runs                |
//! | tick time       |                                                      |
//! | model (experts) |                                                      |
//! | events (log)    |                                                      |
//! +-----------------+------------------------------------------------------+
//! ```
//!
//! Every view shows entities the logger writes (`logger.rs`), so a view never shows a
//! neighbour's series; the per-joint views overlay the nominal run (`nominal/…`) where it
//! has the quantity. The time panel is on the recording's time axis (`sim_time` or
//! `node_time`) and follows the newest data. Events (changes of the dynamics, models going
//! live, law switches) are text logs: the events view lists them and the time panel marks
//! them on the shared time axis.

use re_sdk::EntityPath;
use re_sdk::blueprint::components::PlayState;
use re_sdk::blueprint::{
    Blueprint, ContainerLike, Grid, Horizontal, Spatial3DView, Tabs, TextLogView, TimePanel,
    TimeSeriesView, Vertical,
};

use super::logger::{EVENTS, joint_entity, nominal_entity, root_entity};

/// Grid columns of the per-joint tabs: a 7-joint arm fits in 4 × 2.
fn grid_columns(joints: usize) -> u32 {
    match joints {
        0..=3 => joints.max(1) as u32,
        4 => 2,
        5..=9 => joints.div_ceil(2) as u32,
        _ => (joints as f64).sqrt().ceil() as u32,
    }
}

/// One tab: a grid with a time-series view per joint showing the entities `contents(J)`
/// gives (query expressions: `P` one entity, `P/**` a subtree).
fn per_joint_tab(
    name: &str,
    joint_names: &[String],
    what: &str,
    contents: impl Fn(&str) -> Vec<String>,
) -> Grid {
    let views: Vec<ContainerLike> = joint_names
        .iter()
        .map(|joint| {
            TimeSeriesView::new(format!("{joint}: {what}"))
                .with_origin(EntityPath::root())
                .with_contents(contents(joint))
                .into()
        })
        .collect();
    Grid::new(views)
        .with_name(name)
        .with_grid_columns(grid_columns(joint_names.len()))
}

/// The layout for a robot with joints `joint_names` (URDF names, in the model's order), its
/// time panel on `timeline`.
pub(crate) fn layout(joint_names: &[String], timeline: &str) -> Blueprint {
    let overview = Vertical::new([
        Spatial3DView::new("robot")
            .with_origin(EntityPath::from("robot"))
            .into(),
        TimeSeriesView::new("bound coverage (±η_cal, recent)")
            .with_origin(root_entity(&["dynamics", "coverage"]))
            .into(),
        TimeSeriesView::new("tick time (µs)")
            .with_origin(root_entity(&["tick"]))
            .into(),
        TimeSeriesView::new("model (experts or components)")
            .with_origin(root_entity(&["model"]))
            .into(),
        TextLogView::new("events (changes, models going live, law switches)")
            .with_origin(EntityPath::from(EVENTS))
            .into(),
    ])
    .with_name("overview")
    .with_row_shares([3.0, 1.0, 1.0, 1.0, 1.0]);
    let learned = |joint: &str, parts: &[&str]| joint_entity(joint, parts).to_string();
    let nominal = |joint: &str, parts: &[&str]| nominal_entity(joint, parts).to_string();
    let per_joint = Tabs::new([
        per_joint_tab("tracking: q and q_d", joint_names, "q, q_d", |j| {
            vec![
                format!("{}/**", learned(j, &["position"])),
                nominal(j, &["position", "q"]),
            ]
        })
        .into(),
        per_joint_tab(
            "residual: true or measured, μ, μ ± η_cal",
            joint_names,
            "residual (N·m)",
            |j| vec![format!("{}/**", learned(j, &["residual"]))],
        )
        .into(),
        per_joint_tab("tracking error", joint_names, "q − q_d (rad)", |j| {
            vec![
                learned(j, &["tracking_error"]),
                nominal(j, &["tracking_error"]),
            ]
        })
        .into(),
    ])
    .with_name("per joint");
    Blueprint::new(
        Horizontal::new([overview.into(), per_joint.into()])
            .with_name("gp-node")
            .with_column_shares([1.0, 2.0]),
    )
    .with_auto_views(false)
    .with_auto_layout(false)
    // At the newest data: a live run is followed, a file opens at its end.
    .with_time_panel(
        TimePanel::new()
            .with_timeline(timeline)
            .with_play_state(PlayState::Following),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grids_stay_near_square_and_never_empty() {
        assert_eq!(grid_columns(0), 1);
        assert_eq!(grid_columns(1), 1);
        assert_eq!(grid_columns(4), 2);
        assert_eq!(grid_columns(6), 3);
        assert_eq!(grid_columns(7), 4);
        assert_eq!(grid_columns(12), 4);
        assert_eq!(grid_columns(30), 6);
    }
}
