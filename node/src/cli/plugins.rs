//! `gp-node plugins [NAME]`: which model plugins the node finds, and the configuration keys
//! a plugin declares (its schema, read through the ABI: the one place a key's type,
//! default, unit and meaning are written). `docs/plugins/<name>.md` is this command's
//! `--markdown` output.

use std::path::PathBuf;
use std::process::ExitCode;

use crate::plugin_host::{Plugin, SearchPath, config_page};
use anyhow::Context;

/// Arguments of `gp-node plugins`.
#[derive(clap::Args)]
pub struct PluginsArgs {
    /// A plugin's name: print its configuration keys. Without it, list the plugins found.
    pub name: Option<String>,
    /// Extra plugin directories, searched before `GPN_PLUGIN_PATH` and the executable's
    /// directory.
    #[arg(long, value_name = "DIR")]
    pub plugin_path: Vec<PathBuf>,
    /// Print the keys as the Markdown page of `docs/plugins/`.
    #[arg(long, conflicts_with = "json", requires = "name")]
    pub markdown: bool,
    /// Print the schema as the JSON the plugin declares.
    #[arg(long, requires = "name")]
    pub json: bool,
}

/// Runs `gp-node plugins`; `Err` is bad input (exit 2 in `main`).
pub fn run(args: PluginsArgs) -> anyhow::Result<ExitCode> {
    let search = SearchPath::standard(&args.plugin_path);
    let Some(name) = &args.name else {
        print!("{}", list(&search));
        return Ok(ExitCode::SUCCESS);
    };
    let plugin = Plugin::find(name, &search)?;
    let info = plugin.info();
    let schema = plugin.config_schema().with_context(|| {
        format!(
            "plugin {} ({}) declares no configuration schema: its documentation lists its keys",
            info.name,
            info.path.display()
        )
    })?;
    if args.json {
        println!("{}", schema.to_json());
    } else if args.markdown {
        print!("{}", config_page(&plugin).unwrap_or_default());
    } else {
        println!("{} {} — {}", info.name, info.version, info.description);
        println!("{}\n", info.path.display());
        print!("{}", schema.markdown_table());
    }
    Ok(ExitCode::SUCCESS)
}

/// The plugins on the search path, each opened to print its version and description.
fn list(search: &SearchPath) -> String {
    let mut out = String::new();
    let available = search.available();
    if available.is_empty() {
        let dirs: Vec<String> = search
            .dirs()
            .iter()
            .map(|d| d.display().to_string())
            .collect();
        return format!("no plugins found in: {}\n", dirs.join(", "));
    }
    for found in available {
        match Plugin::open(&found.path) {
            Ok(plugin) => {
                let info = plugin.info();
                let keys = plugin
                    .config_schema()
                    .map_or("no schema".to_owned(), |s| format!("{} keys", s.keys.len()));
                out += &format!(
                    "{:<12} {:<8} {:<9} {}\n",
                    info.name, info.version, keys, info.description
                );
            }
            Err(err) => out += &format!("{:<12} not loadable: {err}\n", found.name),
        }
    }
    out
}
