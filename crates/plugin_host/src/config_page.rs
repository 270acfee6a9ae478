//! A plugin's configuration page (`docs/plugins/<name>.md`), printed from the schema the
//! plugin declares, so that the documentation and the checks read the same keys.

use super::library::Plugin;

/// The Markdown page of `plugin`'s configuration keys; `None` if it declares no schema.
pub fn config_page(plugin: &Plugin) -> Option<String> {
    let info = plugin.info();
    let table = plugin.config_schema()?.markdown_table();
    Some(format!(
        "# `{name}` configuration\n\n\
         {description}.\n\n\
         The keys of `model.config` (and of a swap target's `config`) when `model.plugin` is \
         `{name}`, as the plugin declares them through the ABI's `config_schema`. Printed by \
         `gp-node plugins {name} --markdown`; a test keeps this page equal to it. A key not \
         listed here is refused at start-up, naming the nearest known key; ranges and \
         relations between keys are checked when the model is created.\n\n\
         {table}",
        name = info.name,
        description = info.description,
    ))
}
