//! Model configuration text (YAML or JSON — YAML is a superset) to the JSON object the
//! ABI's `create` takes.
//!
//! One parser (`serde_norway`, YAML 1.2 core schema) reads both. The conversion is explicit
//! so that what JSON cannot say is an error rather than a silent change: mapping keys must
//! be strings (or plain scalars, written as their text), floats must be finite, and YAML
//! tags are refused. Empty text or `null` means `{}`.

use serde_json::{Map, Number, Value as Json};
use serde_norway::Value as Yaml;

/// Parse YAML or JSON configuration text into a JSON value (`{}` when empty or `null`).
pub fn parse(text: &str) -> Result<Json, String> {
    if text.trim().is_empty() {
        return Ok(Json::Object(Map::new()));
    }
    let yaml: Yaml = serde_norway::from_str(text).map_err(|e| format!("not YAML or JSON: {e}"))?;
    match to_json(&yaml, "$")? {
        Json::Null => Ok(Json::Object(Map::new())),
        json => Ok(json),
    }
}

fn to_json(yaml: &Yaml, at: &str) -> Result<Json, String> {
    Ok(match yaml {
        Yaml::Null => Json::Null,
        Yaml::Bool(b) => Json::Bool(*b),
        Yaml::Number(n) => {
            if let Some(i) = n.as_i64() {
                Json::from(i)
            } else if let Some(u) = n.as_u64() {
                Json::from(u)
            } else {
                let f = n.as_f64().unwrap_or(f64::NAN);
                Json::Number(
                    Number::from_f64(f)
                        .ok_or_else(|| format!("{at}: {f} is not a finite number"))?,
                )
            }
        }
        Yaml::String(s) => Json::String(s.clone()),
        Yaml::Sequence(items) => Json::Array(
            items
                .iter()
                .enumerate()
                .map(|(i, item)| to_json(item, &format!("{at}[{i}]")))
                .collect::<Result<_, _>>()?,
        ),
        Yaml::Mapping(map) => {
            let mut out = Map::new();
            for (key, value) in map {
                let key = match key {
                    Yaml::String(s) => s.clone(),
                    Yaml::Bool(b) => b.to_string(),
                    Yaml::Number(n) => n.to_string(),
                    _ => return Err(format!("{at}: mapping keys must be strings")),
                };
                let value = to_json(value, &format!("{at}.{key}"))?;
                out.insert(key, value);
            }
            Json::Object(out)
        }
        Yaml::Tagged(tagged) => {
            return Err(format!("{at}: YAML tag {} is not supported", tagged.tag));
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn yaml_and_json_give_the_same_object() {
        let yaml = "variant: dense\nn_cal: 2\nhyper:\n  sigma_f: 1.0\n  lengthscales: [0.5, 2]\n";
        let json_text = r#"{"variant": "dense", "n_cal": 2, "hyper": {"sigma_f": 1.0, "lengthscales": [0.5, 2]}}"#;
        let want = json!({"variant": "dense", "n_cal": 2, "hyper": {"sigma_f": 1.0, "lengthscales": [0.5, 2]}});
        assert_eq!(parse(yaml), Ok(want.clone()));
        assert_eq!(parse(json_text), Ok(want));
    }

    #[test]
    fn empty_and_null_mean_empty_object() {
        assert_eq!(parse(""), Ok(json!({})));
        assert_eq!(parse("  \n"), Ok(json!({})));
        assert_eq!(parse("null"), Ok(json!({})));
        assert_eq!(parse("~"), Ok(json!({})));
    }

    #[test]
    fn what_json_cannot_say_is_an_error() {
        assert!(parse("a: .nan").is_err_and(|e| e.contains("$.a") && e.contains("finite")));
        assert!(parse("a: !custom 3").is_err_and(|e| e.contains("tag")));
        assert!(parse("? [1, 2]\n: x").is_err_and(|e| e.contains("keys")));
        assert!(parse("a: [1, 2").is_err_and(|e| e.contains("not YAML or JSON")));
        // "no" stays a string under YAML 1.2.
        assert_eq!(parse("country: no"), Ok(json!({"country": "no"})));
    }
}
