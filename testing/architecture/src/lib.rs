//! The dependency rule of the workspace, checked: `ARCHITECTURE.md` holds one table of crates
//! with the workspace crates each may depend on; [`violations`] compares it with the edges
//! `cargo metadata` reports. Normal and build dependencies count; dev-dependencies (test
//! harnesses, doubles) do not.
//!
//! The rule table is the one whose header ends with "may depend on". A row:
//! `| `crate`, `other_crate` | folder | job | `allowed`, `allowed_*` … |`. The first cell
//! names the crates of the row (a trailing `*` matches a prefix), the last one what they may
//! depend on (backticked names; anything else in the cell is commentary).

use std::collections::BTreeMap;

use serde_json::Value;

/// One row of the table: the crates it covers and what they may depend on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    /// Crate names or prefixes (ending in `*`).
    pub crates: Vec<String>,
    /// Allowed workspace dependencies (names or prefixes).
    pub may_depend_on: Vec<String>,
}

/// The backticked words of `cell`.
fn backticked(cell: &str) -> Vec<String> {
    cell.split('`')
        .skip(1)
        .step_by(2)
        .map(str::trim)
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect()
}

/// The cells of a table row (`| a | b |`), trimmed; None for a line that is not one.
fn cells(line: &str) -> Option<Vec<&str>> {
    let inner = line.trim().strip_prefix('|')?.strip_suffix('|')?;
    Some(inner.split('|').map(str::trim).collect())
}

/// The rule rows of `markdown`: the rows of every table whose header's last column is
/// "may depend on" (the crate table; other tables are not rules).
pub fn rules(markdown: &str) -> Vec<Rule> {
    let mut rules = Vec::new();
    let mut in_rule_table = false;
    for line in markdown.lines() {
        let Some(row) = cells(line) else {
            in_rule_table = false;
            continue;
        };
        if row.last() == Some(&"may depend on") {
            in_rule_table = true;
            continue;
        }
        let separator = row
            .iter()
            .all(|c| c.chars().all(|ch| ch == '-' || ch == ':'));
        if !in_rule_table || separator || row.len() < 2 {
            continue;
        }
        rules.push(Rule {
            crates: backticked(row[0]),
            may_depend_on: backticked(row[row.len() - 1]),
        });
    }
    rules
}

fn matches(pattern: &str, name: &str) -> bool {
    match pattern.strip_suffix('*') {
        Some(prefix) => name.starts_with(prefix),
        None => pattern == name,
    }
}

/// The workspace's crates and their normal and build dependencies on each other, from the
/// JSON of `cargo metadata --format-version 1 --no-deps`.
pub fn workspace_edges(metadata: &Value) -> BTreeMap<String, Vec<String>> {
    let packages = metadata["packages"].as_array().cloned().unwrap_or_default();
    let names: Vec<String> = packages
        .iter()
        .filter_map(|p| p["name"].as_str().map(str::to_owned))
        .collect();
    packages
        .iter()
        .filter_map(|p| {
            let name = p["name"].as_str()?.to_owned();
            let mut deps: Vec<String> = p["dependencies"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|d| d["kind"].as_str() != Some("dev"))
                .filter_map(|d| d["name"].as_str().map(str::to_owned))
                .filter(|d| names.contains(d))
                .collect();
            deps.sort();
            deps.dedup();
            Some((name, deps))
        })
        .collect()
}

/// Everything the rule forbids: crates no row covers, and edges their row does not allow.
pub fn violations(rules: &[Rule], edges: &BTreeMap<String, Vec<String>>) -> Vec<String> {
    let mut found = Vec::new();
    for (name, deps) in edges {
        let Some(rule) = rules
            .iter()
            .find(|r| r.crates.iter().any(|c| matches(c, name)))
        else {
            found.push(format!(
                "{name}: no row of the crate table in ARCHITECTURE.md"
            ));
            continue;
        };
        for dep in deps {
            if !rule.may_depend_on.iter().any(|a| matches(a, dep)) {
                found.push(format!(
                    "{name} → {dep}: not allowed (its row allows: {})",
                    if rule.may_depend_on.is_empty() {
                        "nothing".to_owned()
                    } else {
                        rule.may_depend_on.join(", ")
                    }
                ));
            }
        }
    }
    found
}
