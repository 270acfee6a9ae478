//! The export glue in-process: `export_plugin!` on a small model, driven through the raw
//! table exactly as a host would, including bad pointers, bad configs, errors and panics.

use std::ffi::c_void;

use gpn_online_model::{ModelError, ModelStats, OnlineModel};
use gpn_plugin_api::{
    ABI_VERSION, ConfigKey, ConfigSchema, KeyType, ModelHandle, Plugin, PluginStats, PluginTable,
    TABLE_SIZE, status,
};

/// Mean of y per output; panics in `update` when y[0] == 666, fails predict when x[0] < 0.
struct Probe {
    /// What `describe` returns: `"object"`, `"array"` or nothing (config key `describe`).
    describe: Option<String>,
    d: usize,
    sum: Vec<f64>,
    n: u64,
}

impl OnlineModel for Probe {
    fn input_dim(&self) -> usize {
        self.d
    }
    fn output_dim(&self) -> usize {
        self.sum.len()
    }
    fn predict(&mut self, x: &[f64], mean: &mut [f64], var: &mut [f64]) -> Result<(), ModelError> {
        if x[0] < 0.0 {
            return Err(ModelError::Other("negative x is not allowed here".into()));
        }
        for o in 0..mean.len() {
            mean[o] = self.sum[o] / self.n.max(1) as f64;
            var[o] = 1.0 / (1.0 + self.n as f64);
        }
        Ok(())
    }
    fn update(&mut self, _x: &[f64], y: &[f64], _t: f64, _nv: &[f64]) -> Result<(), ModelError> {
        if y[0] == 666.0 {
            panic!("the probe saw the number of the beast");
        }
        if !y[0].is_finite() {
            return Err(ModelError::NonFinite {
                what: "y",
                index: 0,
            });
        }
        self.sum.iter_mut().zip(y).for_each(|(s, y)| *s += y);
        self.n += 1;
        Ok(())
    }
    fn stats(&self) -> ModelStats {
        ModelStats {
            samples_seen: self.n,
            samples_stored: 0,
            experts: 1,
            memory_bytes: 8 * self.sum.len() as u64,
        }
    }
}

impl Plugin for Probe {
    fn create(config: &serde_json::Value, d: usize, p: usize) -> Result<Self, ModelError> {
        if config.get("reject").is_some() {
            return Err(ModelError::Config("`reject` is set".into()));
        }
        Ok(Probe {
            d,
            sum: vec![0.0; p],
            n: 0,
            describe: config
                .get("describe")
                .and_then(serde_json::Value::as_str)
                .map(str::to_string),
        })
    }
    fn describe(&self) -> Option<serde_json::Value> {
        match self.describe.as_deref() {
            Some("object") => Some(serde_json::json!({"probe": true, "samples": self.n})),
            Some("array") => Some(serde_json::json!([1, 2])),
            _ => None,
        }
    }
    fn config_schema() -> Option<ConfigSchema> {
        Some(ConfigSchema {
            keys: vec![
                ConfigKey::new("describe", KeyType::String, "What describe returns.")
                    .one_of(&["object", "array"]),
                ConfigKey::new("reject", KeyType::Boolean, "Makes create fail.").default(false),
            ],
        })
    }
    fn save_state(&self) -> Result<Vec<u8>, ModelError> {
        let mut out = self.n.to_le_bytes().to_vec();
        for s in &self.sum {
            out.extend_from_slice(&s.to_le_bytes());
        }
        Ok(out)
    }
    fn load_state(&mut self, bytes: &[u8]) -> Result<(), ModelError> {
        if bytes.len() != 8 * (1 + self.sum.len()) {
            return Err(ModelError::Other(format!(
                "expected {} bytes, got {}",
                8 * (1 + self.sum.len()),
                bytes.len()
            )));
        }
        let word = |i: usize| <[u8; 8]>::try_from(&bytes[8 * i..8 * i + 8]).expect("8 bytes");
        self.n = u64::from_le_bytes(word(0));
        for (o, s) in self.sum.iter_mut().enumerate() {
            *s = f64::from_le_bytes(word(o + 1));
        }
        Ok(())
    }
}

gpn_plugin_api::export_plugin!(
    Probe,
    name = "probe",
    version = "9.9.9",
    description = "test probe"
);

fn table() -> &'static PluginTable {
    // SAFETY: the entry point returns a pointer to a `static`.
    unsafe { &*gpn_plugin_entry() }
}

fn str_of(s: gpn_plugin_api::StrRef) -> &'static str {
    // SAFETY: built from a `&'static str` by the macro.
    std::str::from_utf8(unsafe { std::slice::from_raw_parts(s.ptr, s.len) }).expect("utf-8")
}

fn last_error() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: a writable buffer of the given length.
    let n = unsafe { (table().last_error.expect("last_error"))(buf.as_mut_ptr(), buf.len()) };
    String::from_utf8(buf[..n].to_vec()).expect("utf-8")
}

fn create(config: &str, d: usize, p: usize) -> (u32, *mut ModelHandle) {
    let mut handle: *mut ModelHandle = std::ptr::dangling_mut(); // must be overwritten
    // SAFETY: config is a valid byte slice, `handle` is writable.
    let code = unsafe {
        (table().create.expect("create"))(config.as_ptr(), config.len(), d, p, &mut handle)
    };
    (code, handle)
}

fn destroy(h: *mut ModelHandle) {
    // SAFETY: `h` came from `create` and is not used afterwards.
    unsafe { (table().destroy.expect("destroy"))(h) }
}

fn update(h: *mut ModelHandle, x: &[f64], y: &[f64]) -> u32 {
    let nv = vec![0.01; y.len()];
    // SAFETY: slices of the model's dims.
    unsafe { (table().update.expect("update"))(h, x.as_ptr(), y.as_ptr(), 0.0, nv.as_ptr()) }
}

fn predict(h: *mut ModelHandle, x: &[f64], mean: &mut [f64], var: &mut [f64]) -> u32 {
    // SAFETY: slices of the model's dims.
    unsafe {
        (table().predict.expect("predict"))(h, x.as_ptr(), mean.as_mut_ptr(), var.as_mut_ptr())
    }
}

#[test]
fn table_header_and_strings() {
    let t = table();
    assert_eq!(t.abi_version, ABI_VERSION);
    assert_eq!(t.struct_size, TABLE_SIZE);
    assert_eq!(str_of(t.name), "probe");
    assert_eq!(str_of(t.version), "9.9.9");
    assert_eq!(str_of(t.description), "test probe");
}

#[test]
fn create_update_predict_stats_destroy() {
    let (code, h) = create("{}", 2, 2);
    assert_eq!(code, status::OK, "{}", last_error());
    assert_eq!(update(h, &[0.0, 1.0], &[1.0, 3.0]), status::OK);
    assert_eq!(update(h, &[0.0, 1.0], &[3.0, 5.0]), status::OK);
    let (mut mean, mut var) = ([0.0; 2], [0.0; 2]);
    assert_eq!(predict(h, &[0.0, 0.0], &mut mean, &mut var), status::OK);
    assert_eq!(mean, [2.0, 4.0]);
    let mut s = PluginStats::default();
    // SAFETY: live handle, writable out.
    let code = unsafe { (table().stats.expect("stats"))(h, &mut s) };
    assert_eq!(code, status::OK);
    assert_eq!(s.samples_seen, 2);
    destroy(h);
}

#[test]
fn empty_config_means_empty_object() {
    let (code, h) = create("", 1, 1);
    assert_eq!(code, status::OK);
    destroy(h);
}

#[test]
fn create_failures_are_categorised_and_leave_null() {
    let (code, h) = create("{not json", 1, 1);
    assert_eq!(code, status::INVALID_CONFIG);
    assert!(h.is_null());
    assert!(
        last_error().contains("config is not JSON"),
        "{}",
        last_error()
    );

    let (code, h) = create(r#"{"reject": true}"#, 1, 1);
    assert_eq!(code, status::INVALID_CONFIG);
    assert!(h.is_null());
    assert!(last_error().contains("`reject` is set"));

    let (code, h) = create("{}", 0, 1);
    assert_eq!(code, status::INVALID_ARGUMENT);
    assert!(h.is_null());

    let bad = [0xff_u8, 0xfe];
    let mut handle = std::ptr::null_mut();
    // SAFETY: valid slice and out pointer.
    let code =
        unsafe { (table().create.expect("create"))(bad.as_ptr(), bad.len(), 1, 1, &mut handle) };
    assert_eq!(code, status::INVALID_ARGUMENT);
    assert!(last_error().contains("UTF-8"));

    // SAFETY: a null out pointer must be rejected, not written.
    let code = unsafe {
        (table().create.expect("create"))(std::ptr::null(), 0, 1, 1, std::ptr::null_mut())
    };
    assert_eq!(code, status::INVALID_ARGUMENT);
}

#[test]
fn null_pointers_are_rejected() {
    let (_, h) = create("{}", 1, 1);
    let y = [1.0];
    // SAFETY: the shim must check the null x before reading.
    let code = unsafe {
        (table().update.expect("update"))(h, std::ptr::null(), y.as_ptr(), 0.0, y.as_ptr())
    };
    assert_eq!(code, status::INVALID_ARGUMENT);
    assert!(last_error().contains("x is null"));
    assert_eq!(
        update(std::ptr::null_mut(), &[0.0], &[1.0]),
        status::INVALID_ARGUMENT
    );
    // SAFETY: null is a no-op for destroy.
    unsafe { (table().destroy.expect("destroy"))(std::ptr::null_mut()) };
    destroy(h);
}

#[test]
fn model_errors_map_to_codes() {
    let (_, h) = create("{}", 1, 1);
    assert_eq!(update(h, &[0.0], &[f64::NAN]), status::NON_FINITE);
    assert!(last_error().starts_with("update: y contains a non-finite value"));
    let (mut m, mut v) = ([0.0], [0.0]);
    assert_eq!(predict(h, &[-1.0], &mut m, &mut v), status::INTERNAL);
    assert_eq!(last_error(), "predict: negative x is not allowed here");
    // The model still works after an ordinary error.
    assert_eq!(update(h, &[0.0], &[2.0]), status::OK);
    destroy(h);
}

#[test]
fn a_panic_is_caught_and_poisons_the_model() {
    let (_, h) = create("{}", 1, 1);
    assert_eq!(update(h, &[0.0], &[666.0]), status::PANIC);
    let msg = last_error();
    assert!(msg.starts_with("update: model panicked at "), "{msg}");
    assert!(
        msg.contains("shims.rs:") && msg.ends_with("the probe saw the number of the beast"),
        "{msg}"
    );
    let (mut m, mut v) = ([0.0], [0.0]);
    assert_eq!(predict(h, &[0.0], &mut m, &mut v), status::PANIC);
    assert!(last_error().contains("poisoned"));
    destroy(h);
    // Other models are unaffected.
    let (code, h2) = create("{}", 1, 1);
    assert_eq!(code, status::OK);
    assert_eq!(update(h2, &[0.0], &[1.0]), status::OK);
    destroy(h2);
}

unsafe extern "C" fn collect(ctx: *mut c_void, bytes: *const u8, len: usize) -> u32 {
    // SAFETY: `ctx` is the `Vec<u8>` passed by `save_via_table`; `bytes` has `len` bytes.
    unsafe {
        let out = &mut *ctx.cast::<Vec<u8>>();
        out.extend_from_slice(std::slice::from_raw_parts(bytes, len));
    }
    status::OK
}

unsafe extern "C" fn refuse(_ctx: *mut c_void, _bytes: *const u8, _len: usize) -> u32 {
    status::UNSUPPORTED
}

fn save_via_table(h: *mut ModelHandle) -> Vec<u8> {
    let mut out = Vec::new();
    // SAFETY: live handle; `collect` matches the context type.
    let code = unsafe { (table().save.expect("save"))(h, collect, (&raw mut out).cast()) };
    assert_eq!(code, status::OK, "{}", last_error());
    out
}

#[test]
fn save_load_round_trip_and_bad_state() {
    let (_, a) = create("{}", 1, 2);
    update(a, &[0.0], &[1.0, 2.0]);
    update(a, &[0.0], &[5.0, 6.0]);
    let bytes = save_via_table(a);
    assert_eq!(bytes.len(), 24);

    let (_, b) = create("{}", 1, 2);
    // SAFETY: live handle, valid slice.
    let code = unsafe { (table().load.expect("load"))(b, bytes.as_ptr(), bytes.len()) };
    assert_eq!(code, status::OK);
    let (mut ma, mut va, mut mb, mut vb) = ([0.0; 2], [0.0; 2], [0.0; 2], [0.0; 2]);
    predict(a, &[0.0], &mut ma, &mut va);
    predict(b, &[0.0], &mut mb, &mut vb);
    assert_eq!((ma, va), (mb, vb));

    // SAFETY: live handle, valid slice (too short).
    let code = unsafe { (table().load.expect("load"))(b, bytes.as_ptr(), 3) };
    assert_eq!(code, status::INVALID_STATE);
    assert!(last_error().contains("expected 24 bytes, got 3"));

    // SAFETY: live handle; the writer refuses.
    let code = unsafe { (table().save.expect("save"))(a, refuse, std::ptr::null_mut()) };
    assert_eq!(code, status::UNSUPPORTED);
    destroy(a);
    destroy(b);
}

#[test]
fn last_error_is_bounded_at_a_char_boundary() {
    let (_, h) = create("{}", 1, 1);
    let (mut m, mut v) = ([0.0], [0.0]);
    predict(h, &[-1.0], &mut m, &mut v);
    let mut buf = [0u8; 5];
    // SAFETY: writable buffer of 5 bytes.
    let n = unsafe { (table().last_error.expect("last_error"))(buf.as_mut_ptr(), buf.len()) };
    assert_eq!(&buf[..n], b"predi");
    // SAFETY: a null buffer writes nothing.
    let n = unsafe { (table().last_error.expect("last_error"))(std::ptr::null_mut(), 10) };
    assert_eq!(n, 0);
    destroy(h);
}

fn describe_via_table(h: *mut ModelHandle) -> (u32, Vec<u8>) {
    let mut out = Vec::new();
    // SAFETY: live handle; `collect` matches the context type.
    let code = unsafe { (table().describe.expect("describe"))(h, collect, (&raw mut out).cast()) };
    (code, out)
}

#[test]
fn describe_writes_one_json_object_or_says_unsupported() {
    let (_, h) = create(r#"{"describe": "object"}"#, 1, 1);
    update(h, &[0.0], &[1.0]);
    let (code, bytes) = describe_via_table(h);
    assert_eq!(code, status::OK, "{}", last_error());
    let v: serde_json::Value = serde_json::from_slice(&bytes).expect("JSON");
    assert_eq!(v, serde_json::json!({"probe": true, "samples": 1}));
    // SAFETY: live handle; the writer refuses.
    let code = unsafe { (table().describe.expect("describe"))(h, refuse, std::ptr::null_mut()) };
    assert_eq!(code, status::UNSUPPORTED);
    assert!(last_error().contains("refused"));
    destroy(h);

    let (_, h) = create("{}", 1, 1);
    let (code, bytes) = describe_via_table(h);
    assert_eq!(code, status::UNSUPPORTED);
    assert!(bytes.is_empty());
    assert!(last_error().contains("no diagnostics"));
    destroy(h);

    let (_, h) = create(r#"{"describe": "array"}"#, 1, 1);
    let (code, _) = describe_via_table(h);
    assert_eq!(code, status::INTERNAL);
    assert!(last_error().contains("not a JSON object"));
    destroy(h);
}

#[test]
fn config_schema_is_written_without_a_model() {
    let mut out = Vec::new();
    let entry = table().config_schema.expect("config_schema");
    // SAFETY: `collect` matches the context type.
    let code = unsafe { entry(collect, (&raw mut out).cast()) };
    assert_eq!(code, status::OK, "{}", last_error());
    let schema = ConfigSchema::from_json(&out).expect("a schema");
    assert_eq!(Some(schema), Probe::config_schema());
    // SAFETY: the writer refuses; nothing else is touched.
    let code = unsafe { entry(refuse, std::ptr::null_mut()) };
    assert_eq!(code, status::UNSUPPORTED);
    assert!(last_error().contains("config_schema: the host's writer refused"));
}
