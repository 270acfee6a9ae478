//! `include/gpn_plugin.h` against the Rust ABI: every constant, the size of each struct and
//! the offset of every field, as a C compiler sees them.
//!
//! The test generates a C program from the Rust side's field and constant lists, compiles
//! it against the header with the system C compiler (`$CC`, else `cc`) in strict mode and
//! compares what it prints. A field missing from the header fails to compile; a field in
//! the wrong place or of the wrong type shows up as an offset or size difference; a status
//! code defined on one side only is reported by name. The header is also compiled as C++
//! (`$CXX`, else `c++`) to check its `extern "C"` guards.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use gpn_plugin_api::abi::{STATS_FIELD_OFFSETS, TABLE_FIELD_OFFSETS};
use gpn_plugin_api::{
    ABI_VERSION, ENTRY_SYMBOL, PluginStats, PluginTable, StrRef, TABLE_SIZE_MIN, status,
};

fn header_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("include/gpn_plugin.h")
}

fn header_text() -> String {
    std::fs::read_to_string(header_path()).expect("read include/gpn_plugin.h")
}

/// `#define NAME VALUE` lines of the header, by name.
fn header_defines() -> BTreeMap<String, String> {
    header_text()
        .lines()
        .filter_map(|line| {
            let rest = line.trim().strip_prefix("#define ")?;
            let mut parts = rest.splitn(2, char::is_whitespace);
            let name = parts.next()?.to_string();
            let value = parts
                .next()
                .unwrap_or("")
                .split("/*")
                .next()
                .unwrap_or("")
                .trim()
                .to_string();
            Some((name, value))
        })
        .collect()
}

fn scratch_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::create_dir_all(&dir).expect("create scratch dir");
    dir
}

/// Compile `source` with `compiler` and the include dir, run it, return its stdout.
fn compile_and_run(compiler: &str, std_flag: &str, ext: &str, source: &str, dir: &Path) -> String {
    let src = dir.join(format!("layout.{ext}"));
    let exe = dir.join(format!("layout_{ext}"));
    std::fs::write(&src, source).expect("write C source");
    let include = Path::new(env!("CARGO_MANIFEST_DIR")).join("include");
    let out = Command::new(compiler)
        .args([std_flag, "-Wall", "-Wextra", "-Werror", "-pedantic", "-I"])
        .arg(&include)
        .arg(&src)
        .arg("-o")
        .arg(&exe)
        .output()
        .unwrap_or_else(|e| panic!("cannot run the C compiler `{compiler}`: {e}"));
    assert!(
        out.status.success(),
        "{compiler} rejected the header:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run = Command::new(&exe).output().expect("run the layout program");
    assert!(run.status.success());
    String::from_utf8(run.stdout).expect("utf-8 output")
}

/// The C program: one `key value` line per constant, size and offset.
fn layout_program(defines: &BTreeMap<String, String>) -> String {
    let mut c = String::from(
        "#include <stddef.h>\n#include <stdio.h>\n#include <string.h>\n#include \"gpn_plugin.h\"\n\
         int main(void) {\n",
    );
    for (name, _) in defines.iter().filter(|(n, _)| {
        n.starts_with("GPN_STATUS_") || *n == "GPN_ABI_VERSION" || *n == "GPN_TABLE_SIZE_MIN"
    }) {
        writeln!(
            c,
            "  printf(\"define {name} %lu\\n\", (unsigned long)({name}));"
        )
        .expect("fmt");
    }
    writeln!(
        c,
        "  printf(\"define GPN_PLUGIN_ENTRY_SYMBOL %s\\n\", GPN_PLUGIN_ENTRY_SYMBOL);"
    )
    .expect("fmt");
    for (ty, fields) in [
        ("gpn_plugin_table", &TABLE_FIELD_OFFSETS[..]),
        ("gpn_stats", &STATS_FIELD_OFFSETS[..]),
    ] {
        writeln!(
            c,
            "  printf(\"size {ty} %lu\\n\", (unsigned long)sizeof({ty}));"
        )
        .expect("fmt");
        for (field, _) in fields {
            writeln!(
                c,
                "  printf(\"offset {ty}.{field} %lu\\n\", (unsigned long)offsetof({ty}, {field}));"
            )
            .expect("fmt");
        }
    }
    for (ty, fields) in [("gpn_str", ["ptr", "len"])] {
        writeln!(
            c,
            "  printf(\"size {ty} %lu\\n\", (unsigned long)sizeof({ty}));"
        )
        .expect("fmt");
        for field in fields {
            writeln!(
                c,
                "  printf(\"offset {ty}.{field} %lu\\n\", (unsigned long)offsetof({ty}, {field}));"
            )
            .expect("fmt");
        }
    }
    c.push_str("  return 0;\n}\n");
    c
}

/// What the Rust side says each line of the program must print.
fn expected_lines() -> BTreeMap<String, String> {
    let mut want = BTreeMap::new();
    want.insert(
        "define GPN_ABI_VERSION".to_string(),
        ABI_VERSION.to_string(),
    );
    want.insert(
        "define GPN_PLUGIN_ENTRY_SYMBOL".to_string(),
        ENTRY_SYMBOL.to_string(),
    );
    want.insert(
        "define GPN_TABLE_SIZE_MIN".to_string(),
        TABLE_SIZE_MIN.to_string(),
    );
    for (name, code) in status::ALL {
        want.insert(format!("define GPN_STATUS_{name}"), code.to_string());
    }
    want.insert(
        "size gpn_plugin_table".into(),
        std::mem::size_of::<PluginTable>().to_string(),
    );
    for (field, off) in TABLE_FIELD_OFFSETS {
        want.insert(format!("offset gpn_plugin_table.{field}"), off.to_string());
    }
    want.insert(
        "size gpn_stats".into(),
        std::mem::size_of::<PluginStats>().to_string(),
    );
    for (field, off) in STATS_FIELD_OFFSETS {
        want.insert(format!("offset gpn_stats.{field}"), off.to_string());
    }
    want.insert(
        "size gpn_str".into(),
        std::mem::size_of::<StrRef>().to_string(),
    );
    want.insert(
        "offset gpn_str.ptr".into(),
        std::mem::offset_of!(StrRef, ptr).to_string(),
    );
    want.insert(
        "offset gpn_str.len".into(),
        std::mem::offset_of!(StrRef, len).to_string(),
    );
    want
}

fn parse_output(out: &str) -> BTreeMap<String, String> {
    out.lines()
        .map(|line| {
            let (key, value) = line.rsplit_once(' ').expect("`key value` line");
            (key.to_string(), value.to_string())
        })
        .collect()
}

#[test]
fn header_matches_rust_constants_sizes_and_offsets() {
    let defines = header_defines();
    let program = layout_program(&defines);
    let compiler = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let got = parse_output(&compile_and_run(
        &compiler,
        "-std=c11",
        "c",
        &program,
        &scratch_dir("api_header_c"),
    ));
    let want = expected_lines();
    let mut problems = Vec::new();
    for (key, value) in &want {
        match got.get(key) {
            None => problems.push(format!("{key}: defined in Rust, missing from the header")),
            Some(v) if v != value => problems.push(format!("{key}: Rust {value}, C {v}")),
            Some(_) => {}
        }
    }
    for key in got.keys().filter(|k| !want.contains_key(*k)) {
        problems.push(format!("{key}: in the header, unknown to Rust"));
    }
    assert!(
        problems.is_empty(),
        "gpn_plugin.h disagrees with gpn_plugin_api:\n{}",
        problems.join("\n")
    );
}

#[test]
fn header_compiles_as_cplusplus() {
    let mut program = layout_program(&header_defines());
    // A C++ translation unit that also defines an entry point with C linkage.
    program.push_str(
        "extern \"C\" GPN_EXPORT const gpn_plugin_table *gpn_plugin_entry(void) { return NULL; }\n",
    );
    let compiler = std::env::var("CXX").unwrap_or_else(|_| "c++".into());
    let out = compile_and_run(
        &compiler,
        "-std=c++17",
        "cpp",
        &program,
        &scratch_dir("api_header_cpp"),
    );
    assert!(out.contains("size gpn_plugin_table"));
}

#[test]
fn header_defines_are_parsed() {
    // Guard the parser itself: if it stopped seeing #defines the main test would pass
    // vacuously on the status codes.
    let defines = header_defines();
    assert_eq!(
        defines.get("GPN_ABI_VERSION").map(String::as_str),
        Some("1u")
    );
    let statuses = defines
        .keys()
        .filter(|k| k.starts_with("GPN_STATUS_"))
        .count();
    assert_eq!(statuses, status::ALL.len());
}
