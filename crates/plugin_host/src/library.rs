//! [`Plugin`]: one loaded plugin library, checked and described, from which models are
//! created.
//!
//! Opening a library checks, in this order and before reading anything else: the entry
//! symbol exists, it returns a non-null table, the table's `abi_version` equals
//! [`ABI_VERSION`], and its `struct_size` covers the version-1 table as first published
//! ([`TABLE_SIZE_MIN`]); then that no required function pointer is null and that the three
//! strings are valid UTF-8. Only the bytes `struct_size` declares are read: a field added
//! later within version 1 (`describe`, `config_schema`, `readiness`, `wait_ready`) counts as absent when the table
//! ends before it. A plugin that declares its configuration schema has every configuration
//! checked against it before `create` is called (unknown keys, types, enumerations).
//! The table is then copied into host memory, so the only thing the host keeps pointing
//! into the library is code, kept alive by the `Arc` every [`Plugin`] and [`PluginModel`]
//! holds.

use std::path::Path;
use std::sync::Arc;

use gpn_plugin_api::abi::{ENTRY_SYMBOL_NUL, EntryFn};
use gpn_plugin_api::{
    ABI_VERSION, ConfigSchema, ENTRY_SYMBOL, ModelHandle, PluginTable, StrRef, TABLE_SIZE,
    TABLE_SIZE_MIN, TableHeader, status,
};
use libloading::Library;

use super::config;
use super::error::{HostError, Result};
use super::instance::{PluginModel, append_chunk};
use super::loaded::{Functions, Loaded, PluginInfo};
use super::search::{SearchPath, name_of_path};

/// Longest name/version/description accepted from a table, in bytes.
const MAX_STRING_BYTES: usize = 64 * 1024;

/// A loaded, checked plugin library. Cheap to clone; the library stays loaded while any
/// clone or any [`PluginModel`] created from it is alive.
#[derive(Clone)]
pub struct Plugin {
    loaded: Arc<Loaded>,
}

impl std::fmt::Debug for Plugin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Plugin")
            .field("info", &self.loaded.info)
            .finish()
    }
}

impl Plugin {
    /// Find `name` on `search` and [open](Plugin::open) it.
    pub fn find(name: &str, search: &SearchPath) -> Result<Plugin> {
        Plugin::open(search.find(name)?)
    }

    /// Load the library at `path` and check its table (see the module doc).
    ///
    /// Loading runs the library's initialisers: only open files you trust as much as the
    /// node's own code. Symbols are bound at load time (`RTLD_NOW`) so that a missing one
    /// fails here rather than inside the first call from the control thread.
    pub fn open(path: impl AsRef<Path>) -> Result<Plugin> {
        // A path with a separator, so the loader does not search its own directories.
        let path =
            std::path::absolute(path.as_ref()).unwrap_or_else(|_| path.as_ref().to_path_buf());
        let file_name = name_of_path(&path);
        let library = load_library(&path).map_err(|source| HostError::Load {
            name: file_name.clone(),
            source,
            path: path.clone(),
        })?;
        // SAFETY: `EntryFn` is the signature the ABI fixes for this symbol; a library that
        // exports the name with another type breaks the ABI and cannot be detected.
        let entry = unsafe { library.get::<EntryFn>(ENTRY_SYMBOL_NUL) }.map_err(|_| {
            HostError::NotAPlugin {
                name: file_name.clone(),
                symbol: ENTRY_SYMBOL,
                path: path.clone(),
            }
        })?;
        // SAFETY: calling the plugin's entry point, per the ABI: no arguments, returns a
        // pointer to a static table (or null).
        let table_ptr = unsafe { entry() };
        if table_ptr.is_null() {
            return Err(HostError::NullTable {
                name: file_name,
                path,
            });
        }
        if !table_ptr.is_aligned() {
            return Err(HostError::BadString {
                name: file_name,
                field: "table",
                reason: "the table pointer is misaligned".into(),
                path,
            });
        }
        // SAFETY: non-null and aligned for `PluginTable`, hence for its `TableHeader`
        // prefix (same first two fields, smaller alignment); every ABI version starts with
        // these 8 bytes, so reading them is valid whatever version the plugin has.
        let header = unsafe { table_ptr.cast::<TableHeader>().read() };
        check_header(header, &file_name, &path)?;
        let table = read_table(table_ptr, header.struct_size);
        let name = read_string(table.name, "name", &file_name, &path)?;
        let functions = functions_of(&table, &name, &path)?;
        let config_schema = read_config_schema(&table, &name, &path)?;
        let info = PluginInfo {
            version: read_string(table.version, "version", &name, &path)?,
            description: read_string(table.description, "description", &name, &path)?,
            name,
            abi_version: header.abi_version,
            path,
        };
        Ok(Plugin {
            loaded: Arc::new(Loaded {
                functions,
                info,
                config_schema,
                _library: library,
            }),
        })
    }

    /// What the plugin says about itself.
    pub fn info(&self) -> &PluginInfo {
        &self.loaded.info
    }

    /// The configuration keys the plugin declares, with type, default, unit and meaning;
    /// `None` when it declares none (then only its `create` checks a configuration).
    pub fn config_schema(&self) -> Option<&ConfigSchema> {
        self.loaded.config_schema.as_ref()
    }

    /// The configuration a model created from `given` runs with: the plugin's declared
    /// defaults that hold in the mode `given` selects, with the given keys over them
    /// (`given` itself, as an object, when the plugin declares no schema). Not checked;
    /// [`Plugin::check_config`] does that.
    pub fn effective_config(&self, given: &serde_json::Value) -> serde_json::Value {
        let mut config = self
            .config_schema()
            .map(|s| s.defaults_for(given))
            .unwrap_or_default();
        if let Some(given) = given.as_object() {
            config.extend(given.iter().map(|(k, v)| (k.clone(), v.clone())));
        }
        serde_json::Value::Object(config)
    }

    /// Models created from this library that are still alive, plus clones of this
    /// `Plugin` other than `self` (the library unloads when this reaches 0 and `self` drops).
    pub fn other_handles(&self) -> usize {
        Arc::strong_count(&self.loaded) - 1
    }

    /// Create a model from YAML or JSON configuration text (empty means `{}`).
    pub fn create(
        &self,
        config_text: &str,
        input_dim: usize,
        output_dim: usize,
    ) -> Result<PluginModel> {
        let json = config::parse(config_text).map_err(|reason| self.config_error(reason))?;
        self.create_json(&json, input_dim, output_dim)
    }

    /// Create a model from a JSON value, checked against the plugin's schema first.
    pub fn create_json(
        &self,
        config: &serde_json::Value,
        input_dim: usize,
        output_dim: usize,
    ) -> Result<PluginModel> {
        self.check_config(config)?;
        let json = serde_json::to_string(config).map_err(|e| self.config_error(e.to_string()))?;
        self.create_json_text(&json, input_dim, output_dim)
    }

    /// Checks `config` against the plugin's schema (a no-op when it declares none): no
    /// unknown key (the error names the nearest one), each value of its key's type.
    pub fn check_config(&self, config: &serde_json::Value) -> Result<()> {
        match &self.loaded.config_schema {
            Some(schema) => schema
                .check(&self.loaded.info.name, config)
                .map_err(|reason| self.config_error(reason)),
            None => Ok(()),
        }
    }

    fn config_error(&self, reason: String) -> HostError {
        HostError::Config {
            plugin: self.loaded.info.name.clone(),
            reason,
            path: self.loaded.info.path.clone(),
        }
    }

    fn create_json_text(
        &self,
        json: &str,
        input_dim: usize,
        output_dim: usize,
    ) -> Result<PluginModel> {
        let loaded = &self.loaded;
        if input_dim == 0 || output_dim == 0 {
            return Err(HostError::Dimensions {
                plugin: loaded.info.name.clone(),
                input_dim,
                output_dim,
                path: loaded.info.path.clone(),
            });
        }
        // `create` runs on a short-lived thread of its own: whatever thread-local state the
        // plugin's runtime attaches to the calling thread dies with it. (Rust's std, for
        // one, registers a thread-local destructor when a plugin spawns a worker thread,
        // and glibc then keeps the library mapped until that thread exits.) So the library
        // can be unloaded after its last model even if the caller's thread lives forever.
        let created = std::thread::scope(|scope| {
            std::thread::Builder::new()
                .name("gpn-plugin-create".into())
                .spawn_scoped(scope, || call_create(loaded, json, input_dim, output_dim))
                .map_err(|e| {
                    loaded.host_error(
                        "create",
                        status::INTERNAL,
                        format!("cannot start a thread: {e}"),
                    )
                })?
                .join()
                .map_err(|_| {
                    loaded.host_error(
                        "create",
                        status::INTERNAL,
                        "the create thread panicked".into(),
                    )
                })?
        })?;
        // SAFETY: `created` was just made by this library's `create` with these dims and is
        // owned by no one else.
        Ok(unsafe { PluginModel::from_raw(Arc::clone(loaded), created.0, input_dim, output_dim) })
    }
}

/// Reads the plugin's configuration schema, if its table has the entry and it declares
/// one. A schema that cannot be read is the plugin's fault and refuses the library: a host that ignored it would check configurations against nothing.
fn read_config_schema(
    table: &PluginTable,
    name: &str,
    path: &Path,
) -> Result<Option<ConfigSchema>> {
    let Some(entry) = table.config_schema else {
        return Ok(None);
    };
    let bad = |reason: String| HostError::BadSchema {
        name: name.to_string(),
        reason,
        path: path.to_path_buf(),
    };
    let mut bytes: Vec<u8> = Vec::new();
    // SAFETY: the plugin's `config_schema` (non-null); `append_chunk` takes the
    // `*mut Vec<u8>` passed as its context, which nothing else touches during the call.
    let code = unsafe { entry(append_chunk, (&raw mut bytes).cast()) };
    match code {
        status::OK => ConfigSchema::from_json(&bytes).map(Some).map_err(bad),
        status::UNSUPPORTED => Ok(None),
        code => Err(bad(format!(
            "config_schema failed with {}",
            status::name(code)
        ))),
    }
}

/// A model handle on its way from the create thread to the caller.
struct Created(std::ptr::NonNull<ModelHandle>);

// SAFETY: the ABI lets a model be created on one thread and used on another; the handle is
// moved, never shared.
unsafe impl Send for Created {}

/// Call the plugin's `create` and, on failure, read its message (on this same thread).
fn call_create(
    loaded: &Loaded,
    json: &str,
    input_dim: usize,
    output_dim: usize,
) -> Result<Created> {
    let mut handle: *mut ModelHandle = std::ptr::null_mut();
    // SAFETY: `create` is the plugin's (checked non-null); the config is a valid UTF-8
    // buffer of the given length and `handle` a writable out pointer, as the ABI asks.
    let code = unsafe {
        (loaded.functions.create)(
            json.as_ptr(),
            json.len(),
            input_dim,
            output_dim,
            &mut handle,
        )
    };
    if code != status::OK {
        let err = loaded.call_error("create", code);
        if !handle.is_null() {
            // SAFETY: the plugin broke the contract by returning a model with an error; it
            // is still its model, so hand it back for destruction rather than leak it.
            unsafe { (loaded.functions.destroy)(handle) };
        }
        return Err(err);
    }
    std::ptr::NonNull::new(handle).map(Created).ok_or_else(|| {
        loaded.host_error(
            "create",
            status::INTERNAL,
            "returned OK but no model".into(),
        )
    })
}

#[cfg(unix)]
fn load_library(path: &Path) -> std::result::Result<Library, libloading::Error> {
    use libloading::os::unix::{Library as UnixLibrary, RTLD_LOCAL, RTLD_NOW};
    // SAFETY: loading runs the library's initialisers; opening a plugin means trusting its
    // code (see `Plugin::open`). RTLD_LOCAL keeps its symbols out of other plugins' way.
    unsafe { UnixLibrary::open(Some(path), RTLD_NOW | RTLD_LOCAL) }.map(Library::from)
}

#[cfg(not(unix))]
fn load_library(path: &Path) -> std::result::Result<Library, libloading::Error> {
    // SAFETY: as above: loading a plugin means trusting its initialisers.
    unsafe { Library::new(path) }
}

/// Check the header fields, the first thing read from a table.
pub(crate) fn check_header(header: TableHeader, name: &str, path: &Path) -> Result<()> {
    if header.abi_version != ABI_VERSION {
        return Err(HostError::AbiMismatch {
            name: name.to_string(),
            expected: ABI_VERSION,
            found: header.abi_version,
            path: path.to_path_buf(),
        });
    }
    if header.struct_size < TABLE_SIZE_MIN {
        return Err(HostError::TableTooSmall {
            name: name.to_string(),
            abi_version: ABI_VERSION,
            expected: TABLE_SIZE_MIN,
            found: header.struct_size,
            path: path.to_path_buf(),
        });
    }
    Ok(())
}

/// Copy the plugin's table into host memory, reading only the `struct_size` bytes it
/// declares (≥ [`TABLE_SIZE_MIN`], checked): fields beyond them stay zero, i.e. null.
fn read_table(table_ptr: *const PluginTable, struct_size: u32) -> PluginTable {
    let mut table = std::mem::MaybeUninit::<PluginTable>::zeroed();
    let n = (struct_size.min(TABLE_SIZE)) as usize;
    // SAFETY: `check_header` made sure the plugin declares at least `TABLE_SIZE_MIN` bytes
    // at this non-null, aligned pointer, and we copy at most `struct_size` of them (never
    // more than our own table's size) into a zeroed table. Every bit pattern, zero
    // included, is valid for its fields (integers, raw pointers, nullable function
    // pointers), so the copy is a valid `PluginTable`.
    unsafe {
        std::ptr::copy_nonoverlapping(table_ptr.cast::<u8>(), table.as_mut_ptr().cast::<u8>(), n);
        table.assume_init()
    }
}

fn read_string(s: StrRef, field: &'static str, name: &str, path: &Path) -> Result<String> {
    let bad = |reason: String| HostError::BadString {
        name: name.to_string(),
        field,
        reason,
        path: path.to_path_buf(),
    };
    if s.len == 0 {
        return Ok(String::new());
    }
    if s.ptr.is_null() {
        return Err(bad(format!("null pointer with length {}", s.len)));
    }
    if s.len > MAX_STRING_BYTES {
        return Err(bad(format!(
            "length {} exceeds {MAX_STRING_BYTES} bytes",
            s.len
        )));
    }
    // SAFETY: the ABI makes `ptr` point to `len` bytes that live as long as the library,
    // which is loaded for the duration of this call; they are copied out immediately.
    let bytes = unsafe { std::slice::from_raw_parts(s.ptr, s.len) };
    std::str::from_utf8(bytes)
        .map(str::to_owned)
        .map_err(|e| bad(format!("not UTF-8: {e}")))
}

fn functions_of(table: &PluginTable, name: &str, path: &Path) -> Result<Functions> {
    let missing = |function| HostError::MissingFunction {
        name: name.to_string(),
        function,
        path: path.to_path_buf(),
    };
    Ok(Functions {
        create: table.create.ok_or_else(|| missing("create"))?,
        destroy: table.destroy.ok_or_else(|| missing("destroy"))?,
        update: table.update.ok_or_else(|| missing("update"))?,
        predict: table.predict.ok_or_else(|| missing("predict"))?,
        stats: table.stats.ok_or_else(|| missing("stats"))?,
        save: table.save.ok_or_else(|| missing("save"))?,
        load: table.load.ok_or_else(|| missing("load"))?,
        last_error: table.last_error.ok_or_else(|| missing("last_error"))?,
        describe: table.describe,
        readiness: table.readiness,
        wait_ready: table.wait_ready,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_check_refuses_other_versions_and_short_tables() {
        let path = Path::new("/p/libx.so");
        assert!(
            check_header(
                TableHeader {
                    abi_version: ABI_VERSION,
                    struct_size: TABLE_SIZE
                },
                "x",
                path
            )
            .is_ok()
        );
        // A longer table (a later minor addition at the end) is fine.
        assert!(
            check_header(
                TableHeader {
                    abi_version: ABI_VERSION,
                    struct_size: TABLE_SIZE + 8
                },
                "x",
                path
            )
            .is_ok()
        );
        let err = check_header(
            TableHeader {
                abi_version: 2,
                struct_size: TABLE_SIZE,
            },
            "x",
            path,
        );
        assert!(matches!(
            err,
            Err(HostError::AbiMismatch {
                expected: 1,
                found: 2,
                ..
            })
        ));
        let err = check_header(
            TableHeader {
                abi_version: ABI_VERSION,
                struct_size: 8,
            },
            "x",
            path,
        );
        assert!(matches!(
            err,
            Err(HostError::TableTooSmall { found: 8, .. })
        ));
        // The table as first published (up to `last_error`, no `describe`) is accepted;
        // one byte less is not.
        assert!(
            check_header(
                TableHeader {
                    abi_version: ABI_VERSION,
                    struct_size: TABLE_SIZE_MIN
                },
                "x",
                path
            )
            .is_ok()
        );
        assert!(matches!(
            check_header(
                TableHeader {
                    abi_version: ABI_VERSION,
                    struct_size: TABLE_SIZE_MIN - 1
                },
                "x",
                path
            ),
            Err(HostError::TableTooSmall { .. })
        ));
    }

    #[test]
    fn a_shorter_table_reads_as_no_describe() {
        static FULL: PluginTable = gpn_plugin_api::shim::table::<Dummy>(
            StrRef::from_static("dummy"),
            StrRef::EMPTY,
            StrRef::EMPTY,
        );
        assert!(FULL.describe.is_some());
        let whole = read_table(&FULL, TABLE_SIZE);
        assert!(whole.describe.is_some() && whole.last_error.is_some());
        let short = read_table(&FULL, TABLE_SIZE_MIN);
        assert!(short.describe.is_none());
        assert!(short.last_error.is_some());
    }

    /// A model type for a table in tests (never called).
    struct Dummy;
    impl gpn_online_model::OnlineModel for Dummy {
        fn input_dim(&self) -> usize {
            1
        }
        fn output_dim(&self) -> usize {
            1
        }
        fn predict(
            &mut self,
            _: &[f64],
            _: &mut [f64],
            _: &mut [f64],
        ) -> std::result::Result<(), gpn_online_model::ModelError> {
            Ok(())
        }
        fn update(
            &mut self,
            _: &[f64],
            _: &[f64],
            _: f64,
            _: &[f64],
        ) -> std::result::Result<(), gpn_online_model::ModelError> {
            Ok(())
        }
        fn stats(&self) -> gpn_online_model::ModelStats {
            gpn_online_model::ModelStats::default()
        }
    }
    impl gpn_plugin_api::Plugin for Dummy {
        fn create(
            _: &serde_json::Value,
            _: usize,
            _: usize,
        ) -> std::result::Result<Self, gpn_online_model::ModelError> {
            Ok(Dummy)
        }
        fn save_state(&self) -> std::result::Result<Vec<u8>, gpn_online_model::ModelError> {
            Ok(Vec::new())
        }
        fn load_state(
            &mut self,
            _: &[u8],
        ) -> std::result::Result<(), gpn_online_model::ModelError> {
            Ok(())
        }
    }

    #[test]
    fn strings_are_checked() {
        let path = Path::new("/p/libx.so");
        assert_eq!(
            read_string(StrRef::from_static("héllo"), "name", "x", path)
                .ok()
                .as_deref(),
            Some("héllo")
        );
        assert_eq!(
            read_string(StrRef::EMPTY, "name", "x", path)
                .ok()
                .as_deref(),
            Some("")
        );
        let null = StrRef {
            ptr: std::ptr::null(),
            len: 3,
        };
        assert!(matches!(
            read_string(null, "name", "x", path),
            Err(HostError::BadString { .. })
        ));
        static BAD: [u8; 2] = [0xff, 0xfe];
        let bad = StrRef {
            ptr: BAD.as_ptr(),
            len: 2,
        };
        assert!(matches!(
            read_string(bad, "version", "x", path),
            Err(HostError::BadString {
                field: "version",
                ..
            })
        ));
    }

    /// `config_schema` entries of hand-made tables: a bad schema, a failing call, none.
    unsafe extern "C" fn garbage_schema(
        write: gpn_plugin_api::abi::WriteFn,
        ctx: *mut std::ffi::c_void,
    ) -> u32 {
        let text = b"{\"keys\": 3}";
        // SAFETY: the host's writer with its own context.
        unsafe { write(ctx, text.as_ptr(), text.len()) }
    }
    unsafe extern "C" fn failing_schema(
        _: gpn_plugin_api::abi::WriteFn,
        _: *mut std::ffi::c_void,
    ) -> u32 {
        status::INTERNAL
    }
    unsafe extern "C" fn no_schema(
        _: gpn_plugin_api::abi::WriteFn,
        _: *mut std::ffi::c_void,
    ) -> u32 {
        status::UNSUPPORTED
    }

    #[test]
    fn a_schema_that_cannot_be_read_refuses_the_library() {
        let path = Path::new("/p/libx.so");
        let mut table = gpn_plugin_api::shim::table::<Dummy>(
            StrRef::from_static("dummy"),
            StrRef::EMPTY,
            StrRef::EMPTY,
        );
        // The shim's entry for a plugin that declares nothing says UNSUPPORTED: no schema.
        assert!(matches!(read_config_schema(&table, "x", path), Ok(None)));
        table.config_schema = Some(no_schema);
        assert!(matches!(read_config_schema(&table, "x", path), Ok(None)));
        table.config_schema = None;
        assert!(matches!(read_config_schema(&table, "x", path), Ok(None)));
        table.config_schema = Some(garbage_schema);
        let err = read_config_schema(&table, "x", path).expect_err("not a schema");
        assert!(
            err.to_string().contains("not a configuration schema"),
            "{err}"
        );
        table.config_schema = Some(failing_schema);
        let err = read_config_schema(&table, "x", path).expect_err("a failing call");
        assert!(matches!(err, HostError::BadSchema { .. }), "{err}");
        assert!(err.to_string().contains("INTERNAL"), "{err}");
    }
}
