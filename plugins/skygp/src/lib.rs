//! gpn_skygp: the `skygp` plugin, SkyGP-Fast and SkyGP-Dense (`gpn_skygp_model`, re-exported
//! here whole) exported through the plugin ABI as `libgpn_skygp.so`. The model lives in a
//! crate of its own so that linking it in-process (RCaGP's experts layout) brings no second
//! `gpn_plugin_entry`; this crate is what the node loads and what tests link as SkyGP.

pub use gpn_skygp_model::*;

gpn_plugin_api::export_plugin!(
    gpn_skygp_model::SkyGp,
    name = "skygp",
    version = env!("CARGO_PKG_VERSION"),
    description = "SkyGP-Fast and SkyGP-Dense: streaming mixtures of local GP experts",
);
