//! The robot in 3-D: the URDF's visuals (primitive shapes, and meshes rerun can read, see
//! `mesh.rs`) as static entities under one entity per body, moved by `world_from_body` transforms from forward kinematics, plus a skeleton of
//! joint origins. Runs on the logger thread (after [`Robot3d::new`], which parses the URDF
//! once before the run starts).

use re_sdk::{EntityPath, EntityPathPart, RecordingStream};
use re_sdk_types::archetypes::{
    Asset3D, Boxes3D, Capsules3D, Cylinders3D, Ellipsoids3D, LineStrips3D, Transform3D,
    ViewCoordinates,
};
use re_sdk_types::components::{Color, FillMode};
use re_sdk_types::datatypes::{Mat3x3, Rgba32};

use gpn_dynamics::{BodyRef, Data, Model, Transform, forward_kinematics};

use super::error::{Result, VizError};
use super::mesh::MeshSearch;
use super::{VizPayload, VizUrdf};

/// Colour of visuals without a URDF material colour.
const DEFAULT_RGBA: [u8; 4] = [205, 210, 220, 255];
/// Colour of the skeleton.
const SKELETON_RGBA: [u8; 4] = [230, 120, 40, 255];
/// Radius of the skeleton's lines, m.
const SKELETON_RADIUS_M: f32 = 0.006;
/// Colour of the payload.
const PAYLOAD_RGBA: [u8; 4] = [240, 180, 40, 255];
/// Density the payload's sphere is drawn with (steel), kg/m³: its size shows the mass.
const PAYLOAD_DENSITY_KG_M3: f64 = 7850.0;

/// The sphere's radius for `mass_kg`, m.
fn payload_radius_m(mass_kg: f64) -> f64 {
    (3.0 * mass_kg.max(0.0) / (4.0 * std::f64::consts::PI * PAYLOAD_DENSITY_KG_M3)).cbrt()
}

/// The payload's entity and what it last showed.
struct PayloadView {
    payload: VizPayload,
    path: EntityPath,
    body_from_com: Transform,
    shown_mass: Option<f64>,
}

/// A URDF primitive.
#[derive(Debug, Clone, PartialEq)]
enum Shape {
    /// Full side lengths, m.
    Box([f64; 3]),
    /// Along the local z axis, centred.
    Cylinder { radius: f64, length: f64 },
    /// Along the local z axis, centred; `length` between the cap centres.
    Capsule { radius: f64, length: f64 },
    /// Centred.
    Sphere { radius: f64 },
    /// A mesh file rerun reads, scaled per axis.
    Mesh {
        file: std::path::PathBuf,
        scale: [f64; 3],
    },
}

/// One visual, placed in its body's frame.
#[derive(Debug, Clone)]
struct Visual {
    path: EntityPath,
    body_from_visual: Transform,
    shape: Shape,
    rgba: [u8; 4],
}

/// The robot's entities and the forward-kinematics buffers that move them.
pub(crate) struct Robot3d {
    model: Model,
    data: Data,
    /// `robot/links/L` for each body, L the body's link.
    body_paths: Vec<EntityPath>,
    visuals: Vec<Visual>,
    payload: Option<PayloadView>,
    /// Mesh visuals not drawn, and why.
    skipped_meshes: Vec<String>,
}

fn path(parts: &[&str]) -> EntityPath {
    EntityPath::new(parts.iter().map(|p| EntityPathPart::new(*p)).collect())
}

fn f32s<const N: usize>(v: [f64; N]) -> [f32; N] {
    v.map(|x| x as f32)
}

fn rerun_transform(x: &Transform) -> Transform3D {
    scaled_transform(x, [1.0; 3])
}

/// `x` after a scaling of the local axes by `scale` (a mesh's URDF scale).
fn scaled_transform(x: &Transform, scale: [f64; 3]) -> Transform3D {
    let r = &x.rotation;
    let columns: [[f32; 3]; 3] =
        std::array::from_fn(|c| [r[(0, c)], r[(1, c)], r[(2, c)]].map(|v| (v * scale[c]) as f32));
    let t = &x.translation;
    Transform3D::from_translation_mat3x3(f32s([t.x, t.y, t.z]), Mat3x3::from(columns))
}

fn rgba_of(color: &urdf_rs::Color) -> [u8; 4] {
    color
        .rgba
        .0
        .map(|c| (c.clamp(0.0, 1.0) * 255.0).round() as u8)
}

impl Robot3d {
    /// Entities for `model`; with `urdf` (the XML the model was built from), also its
    /// visuals, meshes looked up by `meshes`; with `payload`, the payload (a link the model
    /// does not know is an error).
    pub fn new(
        model: &Model,
        urdf: Option<(&VizUrdf<'_>, &MeshSearch)>,
        payload: Option<&VizPayload>,
    ) -> Result<Self> {
        let body_paths = (0..model.nv())
            .map(|i| path(&["robot", "links", model.body_link_name(i)]))
            .collect();
        let payload = match payload {
            Some(p) => {
                let (body, body_from_link) =
                    model
                        .body_of_link_transform(&p.link)
                        .ok_or_else(|| VizError::Urdf {
                            source_name: model.source_name().to_owned(),
                            message: format!(
                                "the payload's link {:?} is not a link of the robot",
                                p.link
                            ),
                        })?;
                let body_link = match body {
                    BodyRef::Body(i) => model.body_link_name(i),
                    BodyRef::World => p.link.as_str(),
                };
                Some(PayloadView {
                    path: path(&["robot", "links", body_link, "payload"]),
                    body_from_com: body_from_link * Transform::from_xyz_rpy(p.com_m, [0.0; 3]),
                    payload: p.clone(),
                    shown_mass: None,
                })
            }
            None => None,
        };
        let mut robot = Self {
            model: model.clone(),
            data: Data::new(model),
            body_paths,
            visuals: Vec::new(),
            payload,
            skipped_meshes: Vec::new(),
        };
        if let Some((urdf, meshes)) = urdf {
            robot.read_visuals(urdf.xml, model.source_name(), meshes)?;
        }
        Ok(robot)
    }

    /// Mesh visuals that are not drawn, each with the reason.
    pub fn skipped_meshes(&self) -> &[String] {
        &self.skipped_meshes
    }

    /// Mesh visuals drawn.
    pub fn meshes_drawn(&self) -> usize {
        self.visuals
            .iter()
            .filter(|v| matches!(v.shape, Shape::Mesh { .. }))
            .count()
    }

    fn read_visuals(&mut self, xml: &str, source_name: &str, meshes: &MeshSearch) -> Result<()> {
        let urdf = urdf_rs::read_from_string(xml).map_err(|e| VizError::Urdf {
            source_name: source_name.to_owned(),
            message: e.to_string(),
        })?;
        for link in &urdf.links {
            // Links the model does not know (none, for the model built from this XML).
            let Some((body, body_from_link)) = self.model.body_of_link_transform(&link.name) else {
                continue;
            };
            let parent = match body {
                BodyRef::Body(i) => self.model.body_link_name(i),
                BodyRef::World => link.name.as_str(),
            };
            for (k, visual) in link.visual.iter().enumerate() {
                let shape = match &visual.geometry {
                    urdf_rs::Geometry::Box { size } => Shape::Box(size.0),
                    urdf_rs::Geometry::Cylinder { radius, length } => Shape::Cylinder {
                        radius: *radius,
                        length: *length,
                    },
                    urdf_rs::Geometry::Capsule { radius, length } => Shape::Capsule {
                        radius: *radius,
                        length: *length,
                    },
                    urdf_rs::Geometry::Sphere { radius } => Shape::Sphere { radius: *radius },
                    urdf_rs::Geometry::Mesh { filename, scale } => match meshes.resolve(filename) {
                        Ok(file) => Shape::Mesh {
                            file,
                            scale: scale.map_or([1.0; 3], |s| s.0),
                        },
                        // The skeleton still shows the link.
                        Err(why) => {
                            self.skipped_meshes
                                .push(format!("link {}: {why}", link.name));
                            continue;
                        }
                    },
                };
                let named_color = |name: &str| {
                    urdf.materials
                        .iter()
                        .find(|m| m.name == name)
                        .and_then(|m| m.color.as_ref())
                };
                let rgba = visual
                    .material
                    .as_ref()
                    .and_then(|m| m.color.as_ref().or_else(|| named_color(&m.name)))
                    .map_or(DEFAULT_RGBA, rgba_of);
                let origin = &visual.origin;
                let link_from_visual = Transform::from_xyz_rpy(origin.xyz.0, origin.rpy.0);
                let name = format!("{}_{k}", link.name);
                self.visuals.push(Visual {
                    path: path(&["robot", "links", parent, &name]),
                    body_from_visual: body_from_link * link_from_visual,
                    shape,
                    rgba,
                });
            }
        }
        Ok(())
    }

    /// Logs what never changes: the world's axes and every visual with its placement.
    pub fn log_static(&self, rec: &RecordingStream) -> Result<()> {
        let robot = path(&["robot"]);
        rec.log_static(robot.clone(), &ViewCoordinates::RIGHT_HAND_Z_UP())
            .map_err(log_error(&robot))?;
        for v in &self.visuals {
            let color = [Color::from_unmultiplied_rgba(
                v.rgba[0], v.rgba[1], v.rgba[2], v.rgba[3],
            )];
            let logged = match v.shape {
                Shape::Box(size) => rec.log_static(
                    v.path.clone(),
                    &Boxes3D::from_sizes([f32s(size)])
                        .with_colors(color)
                        .with_fill_mode(FillMode::Solid),
                ),
                Shape::Cylinder { radius, length } => rec.log_static(
                    v.path.clone(),
                    &Cylinders3D::from_lengths_and_radii([length as f32], [radius as f32])
                        .with_colors(color)
                        .with_fill_mode(FillMode::Solid),
                ),
                Shape::Capsule { radius, length } => rec.log_static(
                    v.path.clone(),
                    // rerun's capsule starts at the origin; the URDF's is centred.
                    &Capsules3D::from_lengths_and_radii([length as f32], [radius as f32])
                        .with_translations([[0.0, 0.0, -0.5 * length as f32]])
                        .with_colors(color)
                        .with_fill_mode(FillMode::Solid),
                ),
                Shape::Sphere { radius } => rec.log_static(
                    v.path.clone(),
                    &Ellipsoids3D::from_radii([radius as f32])
                        .with_colors(color)
                        .with_fill_mode(FillMode::Solid),
                ),
                Shape::Mesh { ref file, .. } => {
                    let asset = Asset3D::from_file_path(file).map_err(|e| VizError::Urdf {
                        source_name: file.display().to_string(),
                        message: format!("cannot read the mesh: {e}"),
                    })?;
                    // The URDF's colour only where it gives one: a mesh keeps its own.
                    let asset = if v.rgba == DEFAULT_RGBA {
                        asset
                    } else {
                        let [r, g, b, a] = v.rgba;
                        asset.with_albedo_factor(Rgba32::from_unmultiplied_rgba(r, g, b, a))
                    };
                    rec.log_static(v.path.clone(), &asset)
                }
            };
            logged.map_err(log_error(&v.path))?;
            let scale = match v.shape {
                Shape::Mesh { scale, .. } => scale,
                _ => [1.0; 3],
            };
            rec.log_static(
                v.path.clone(),
                &scaled_transform(&v.body_from_visual, scale),
            )
            .map_err(log_error(&v.path))?;
        }
        if let Some(p) = &self.payload {
            rec.log_static(p.path.clone(), &rerun_transform(&p.body_from_com))
                .map_err(log_error(&p.path))?;
        }
        Ok(())
    }

    /// Logs the payload's sphere when its mass differs from the one shown (the first pose
    /// and a step; the caller sets the time).
    fn log_payload(&mut self, rec: &RecordingStream, t_secs: f64) -> Result<()> {
        let Some(p) = self.payload.as_mut() else {
            return Ok(());
        };
        let mass = p.payload.mass_at(t_secs);
        if p.shown_mass == Some(mass) {
            return Ok(());
        }
        p.shown_mass = Some(mass);
        let [r, g, b, a] = PAYLOAD_RGBA;
        rec.log(
            p.path.clone(),
            &Ellipsoids3D::from_radii([payload_radius_m(mass) as f32])
                .with_colors([Color::from_unmultiplied_rgba(r, g, b, a)])
                .with_fill_mode(FillMode::Solid),
        )
        .map_err(log_error(&p.path))
    }

    /// Logs the pose at `q` at simulated time `t_secs` (the caller sets the timelines): one
    /// transform per body, the skeleton, and the payload when its mass changed. A `q` of the
    /// wrong length logs nothing.
    pub fn log_pose(&mut self, rec: &RecordingStream, q: &[f64], t_secs: f64) -> Result<()> {
        self.log_payload(rec, t_secs)?;
        let Ok(world_from_body) = forward_kinematics(&self.model, &mut self.data, q) else {
            return Ok(());
        };
        for (path, x) in self.body_paths.iter().zip(world_from_body) {
            rec.log(path.clone(), &rerun_transform(x))
                .map_err(log_error(path))?;
        }
        let origin = |x: &Transform| f32s([x.translation.x, x.translation.y, x.translation.z]);
        let segments: Vec<[[f32; 3]; 2]> = (0..self.model.nv())
            .map(|i| {
                let from = self
                    .model
                    .parent(i)
                    .map_or([0.0; 3], |p| origin(&world_from_body[p]));
                [from, origin(&world_from_body[i])]
            })
            .collect();
        let skeleton = path(&["robot", "skeleton"]);
        let [r, g, b, a] = SKELETON_RGBA;
        rec.log(
            skeleton.clone(),
            &LineStrips3D::new(segments)
                .with_radii([SKELETON_RADIUS_M])
                .with_colors([Color::from_unmultiplied_rgba(r, g, b, a)]),
        )
        .map_err(log_error(&skeleton))
    }
}

/// Maps a rerun error to [`VizError::Log`] naming `path`.
pub(crate) fn log_error(path: &EntityPath) -> impl Fn(re_sdk::RecordingStreamError) -> VizError {
    let entity = path.to_string();
    move |e| VizError::Log {
        entity: entity.clone(),
        message: e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The Panda the node ships (`gp_node::app::DEFAULT_URDF`).
    const DEFAULT_URDF: &str = include_str!("../../../urdf/panda.urdf");

    #[test]
    fn the_panda_has_a_visual_per_link_under_its_body() {
        let model = Model::from_urdf_str(DEFAULT_URDF, "panda.urdf").expect("panda");
        let urdf = VizUrdf::text(DEFAULT_URDF);
        let robot =
            Robot3d::new(&model, Some((&urdf, &MeshSearch::default())), None).expect("visuals");
        assert_eq!(robot.body_paths.len(), 7);
        assert_eq!(robot.body_paths[0].to_string(), "/robot/links/panda_link1");
        assert_eq!(robot.visuals.len(), 11);
        assert!(
            robot
                .visuals
                .iter()
                .any(|v| v.path.to_string() == "/robot/links/panda_link0/panda_link0_0")
        );
    }

    #[test]
    fn a_broken_urdf_names_its_source() {
        let model = Model::from_urdf_str(DEFAULT_URDF, "broken.urdf").expect("panda");
        let urdf = VizUrdf::text("<robot");
        let err = Robot3d::new(&model, Some((&urdf, &MeshSearch::default())), None)
            .err()
            .expect("error");
        assert!(err.to_string().contains("broken.urdf"), "{err}");
    }

    #[test]
    fn the_payload_sits_at_its_centre_of_mass_on_its_links_body() {
        let model = Model::from_urdf_str(DEFAULT_URDF, "panda.urdf").expect("panda");
        // panda_link8 is welded to panda_link7 (a fixed joint 0.107 m along its z axis).
        let payload = VizPayload {
            link: "panda_link8".into(),
            com_m: [0.0, 0.0, 0.05],
            mass_kg: 1.5,
            step: Some((15.0, 3.0)),
        };
        let robot = Robot3d::new(&model, None, Some(&payload)).expect("payload");
        let view = robot.payload.as_ref().expect("a payload view");
        assert_eq!(view.path.to_string(), "/robot/links/panda_link7/payload");
        let t = &view.body_from_com.translation;
        assert!(
            (t.x.abs() + t.y.abs()) < 1e-12 && (t.z - 0.157).abs() < 1e-12,
            "{t:?}"
        );
        // 1.5 kg of steel: r = (3 m / (4 π ρ))^(1/3) = 35.7 mm; twice the mass, 2^(1/3) × r.
        assert!((payload_radius_m(1.5) - 0.03573).abs() < 1e-5);
        assert_eq!(payload.mass_at(14.999), 1.5);
        assert_eq!(payload.mass_at(15.0), 3.0);
        let unknown = VizPayload {
            link: "no_such_link".into(),
            ..payload
        };
        let err = Robot3d::new(&model, None, Some(&unknown))
            .err()
            .expect("error");
        assert!(err.to_string().contains("no_such_link"), "{err}");
    }
}
