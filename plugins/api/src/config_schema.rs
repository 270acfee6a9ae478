//! A plugin's configuration schema: its keys with type, default, unit and meaning.
//!
//! A plugin declares it once ([`crate::Plugin::config_schema`]); the ABI's `config_schema`
//! entry hands it to the host as JSON. The host checks a user's configuration against it
//! before anything is created ([`ConfigSchema::check`]: unknown keys are named with the
//! nearest known one, types are checked), the parameter loader starts from its defaults,
//! and the documentation tables are printed from it — so a key is described in one place.
//!
//! The wire form is one JSON object:
//!
//! ```json
//! {"keys": [{"name": "n_bar", "types": ["integer"], "default": 50, "unit": "samples",
//!            "doc": "Capacity of one expert."},
//!           {"name": "variant", "types": ["string"], "default": "fast",
//!            "values": ["fast", "dense"], "doc": "..."}]}
//! ```
//!
//! `types` lists the accepted JSON types, of `boolean`, `integer`, `number`, `string`,
//! `array`, `object`;
//! `default` is absent when a key has none (it must then be given, or is computed — `doc`
//! says which) and `null` when leaving it out turns a feature off; `values` lists the
//! accepted strings of an enumeration; `unit` is absent for a dimensionless key; `when`,
//! e.g. `{"key": "layout", "is": ["window"]}`, says that the key belongs to one mode of
//! the plugin only, so its default holds only when that key has one of those values.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The JSON type of a configuration value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KeyType {
    /// `true` or `false`.
    Boolean,
    /// A whole number (JSON number without fraction).
    Integer,
    /// Any JSON number.
    Number,
    /// A string; with [`ConfigKey::values`], one of those.
    String,
    /// A JSON array.
    Array,
    /// A JSON object.
    Object,
}

impl KeyType {
    fn admits(self, value: &Value) -> bool {
        match self {
            KeyType::Boolean => value.is_boolean(),
            KeyType::Integer => value.is_i64() || value.is_u64(),
            KeyType::Number => value.is_number(),
            KeyType::String => value.is_string(),
            KeyType::Array => value.is_array(),
            KeyType::Object => value.is_object(),
        }
    }

    fn name(self) -> &'static str {
        match self {
            KeyType::Boolean => "boolean",
            KeyType::Integer => "integer",
            KeyType::Number => "number",
            KeyType::String => "string",
            KeyType::Array => "array",
            KeyType::Object => "object",
        }
    }
}

/// One configuration key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConfigKey {
    /// The key as written in the configuration object.
    pub name: String,
    /// The JSON types it accepts (one, or a few alternatives).
    pub types: Vec<KeyType>,
    /// The value an absent key takes; `None` when there is none (given or computed);
    /// `Some(Value::Null)` when absence turns a feature off.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub default: Option<Value>,
    /// The accepted strings of an enumeration (empty: any string).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<String>,
    /// SI or count unit (`"s"`, `"samples"`, …); `None` for dimensionless keys.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unit: Option<String>,
    /// The mode the key belongs to; `None`: every mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when: Option<KeyCondition>,
    /// What the key does, in one or two sentences.
    pub doc: String,
}

/// A key that belongs to one mode of a plugin: it applies (and its default holds) only when
/// the configuration's key `key`, or that key's default, is one of the strings `is`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KeyCondition {
    /// The key that selects the mode (a string key of the same schema).
    pub key: String,
    /// The values of `key` under which the key applies.
    pub is: Vec<String>,
}

impl ConfigKey {
    /// A key of type `kind` with meaning `doc` and no default, unit or value list.
    pub fn new(name: &str, kind: KeyType, doc: &str) -> Self {
        ConfigKey {
            name: name.to_owned(),
            types: vec![kind],
            default: None,
            values: Vec::new(),
            unit: None,
            when: None,
            doc: doc.to_owned(),
        }
    }

    /// Also accepting values of type `kind`.
    pub fn or(mut self, kind: KeyType) -> Self {
        self.types.push(kind);
        self
    }

    /// The accepted types as text: "integer", "object or array".
    pub fn type_names(&self) -> String {
        let names: Vec<&str> = self.types.iter().map(|t| t.name()).collect();
        names.join(" or ")
    }

    /// The type column of the documentation: the accepted strings of an enumeration in
    /// place of "string", e.g. "number or normalized".
    fn type_column(&self) -> String {
        let mut parts: Vec<String> = Vec::new();
        for kind in &self.types {
            if *kind == KeyType::String && !self.values.is_empty() {
                parts.push(self.values.join(" \\| "));
            } else {
                parts.push(kind.name().to_owned());
            }
        }
        parts.join(" or ")
    }

    /// With the value an absent key takes.
    pub fn default(mut self, value: impl Into<Value>) -> Self {
        self.default = Some(value.into());
        self
    }

    /// With the unit of its value.
    pub fn unit(mut self, unit: &str) -> Self {
        self.unit = Some(unit.to_owned());
        self
    }

    /// Belonging only to the mode in which the string key `key` is one of `values`.
    pub fn when(mut self, key: &str, values: &[&str]) -> Self {
        self.when = Some(KeyCondition {
            key: key.to_owned(),
            is: values.iter().map(|v| (*v).to_owned()).collect(),
        });
        self
    }

    /// A string key accepting only `values`.
    pub fn one_of(mut self, values: &[&str]) -> Self {
        self.values = values.iter().map(|v| (*v).to_owned()).collect();
        self
    }

    fn check(&self, plugin: &str, value: &Value) -> Result<(), String> {
        // `null` stands for "absent" where absence has a meaning of its own.
        if value.is_null() && self.default.as_ref().is_some_and(Value::is_null) {
            return Ok(());
        }
        if !self.types.iter().any(|t| t.admits(value)) {
            return Err(format!(
                "{plugin}: key '{}' must be of type {}, found {value}",
                self.name,
                self.type_names()
            ));
        }
        if let Some(text) = value.as_str()
            && !self.values.is_empty()
            && !self.values.iter().any(|v| v == text)
        {
            return Err(format!(
                "{plugin}: key '{}' is \"{text}\"; expected one of {}",
                self.name,
                self.values.join(", ")
            ));
        }
        Ok(())
    }
}

/// A field that is present is `Some`, even when it is `null` (serde reads `null` as `None`).
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

/// A plugin's configuration keys, in the order its documentation lists them.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ConfigSchema {
    /// Every key the plugin accepts; any other key is an error.
    pub keys: Vec<ConfigKey>,
}

impl ConfigSchema {
    /// The key named `name`, if the plugin has one.
    pub fn key(&self, name: &str) -> Option<&ConfigKey> {
        self.keys.iter().find(|k| k.name == name)
    }

    /// The configuration object of the defaults of an empty configuration: every key that
    /// has a non-null default and applies in the default mode.
    pub fn defaults(&self) -> serde_json::Map<String, Value> {
        self.defaults_for(&Value::Null)
    }

    /// The defaults that hold for the configuration `given`: every key with a non-null
    /// default that applies in the mode `given` selects (its own keys are not included).
    pub fn defaults_for(&self, given: &Value) -> serde_json::Map<String, Value> {
        self.keys
            .iter()
            .filter(|k| self.applies(k, given))
            .filter_map(|k| match &k.default {
                Some(v) if !v.is_null() => Some((k.name.clone(), v.clone())),
                _ => None,
            })
            .collect()
    }

    /// Whether `key` applies to the configuration `given`: it has no condition, or the
    /// selecting key (given, else its default) is one of the condition's values.
    pub fn applies(&self, key: &ConfigKey, given: &Value) -> bool {
        let Some(cond) = &key.when else {
            return true;
        };
        let selected = given
            .get(&cond.key)
            .or_else(|| self.key(&cond.key).and_then(|k| k.default.as_ref()));
        selected
            .and_then(Value::as_str)
            .is_some_and(|v| cond.is.iter().any(|c| c == v))
    }

    /// Checks `config` (plugin `plugin`'s configuration object) against the schema: an
    /// object, no unknown key (the error names the nearest known one), each value of its
    /// key's type and, for enumerations, one of its values. Ranges and relations between
    /// keys are the plugin's to check when it creates a model.
    pub fn check(&self, plugin: &str, config: &Value) -> Result<(), String> {
        let object = match config {
            Value::Null => return Ok(()),
            Value::Object(object) => object,
            other => {
                return Err(format!(
                    "{plugin}: the configuration must be an object of keys, found {other}"
                ));
            }
        };
        for (name, value) in object {
            match self.key(name) {
                Some(key) => key.check(plugin, value)?,
                None => return Err(self.unknown_key(plugin, name)),
            }
        }
        Ok(())
    }

    fn unknown_key(&self, plugin: &str, name: &str) -> String {
        let nearest = self
            .keys
            .iter()
            .map(|k| (strsim::damerau_levenshtein(name, &k.name), &k.name))
            .min();
        match nearest {
            // Suggest only what looks like a typo of the key, not any key at all.
            Some((distance, key)) if distance <= name.len().max(key.len()) / 2 => {
                format!("{plugin} has no configuration key '{name}'; did you mean '{key}'?")
            }
            _ => format!(
                "{plugin} has no configuration key '{name}'; its keys: {}",
                self.keys
                    .iter()
                    .map(|k| k.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }

    /// The schema as the JSON text the ABI carries.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|_| String::from("{\"keys\":[]}"))
    }

    /// Parses the ABI's JSON text.
    pub fn from_json(text: &[u8]) -> Result<Self, String> {
        serde_json::from_slice(text).map_err(|e| format!("not a configuration schema: {e}"))
    }

    /// A Markdown table of the keys (key, type, default, unit, meaning), for documentation.
    pub fn markdown_table(&self) -> String {
        let mut out =
            String::from("| key | type | default | unit | meaning |\n|---|---|---|---|---|\n");
        for k in &self.keys {
            let kind = k.type_column();
            let default = match &k.default {
                None => "—".to_owned(),
                Some(Value::Null) => "off".to_owned(),
                Some(v) => format!("`{v}`"),
            };
            let unit = k.unit.as_deref().unwrap_or("");
            let only = match &k.when {
                Some(c) => format!("*{} {} only.* ", c.key, c.is.join(" or ")),
                None => String::new(),
            };
            let doc = format!("{only}{}", k.doc).replace('|', "\\|");
            out.push_str(&format!(
                "| `{}` | {kind} | {default} | {unit} | {doc} |\n",
                k.name
            ));
        }
        out
    }
}

/// A plugin's conformance check of its schema against its configuration type `C`, for its
/// tests: the schema names exactly the fields serde reads into `C`; the schema's defaults,
/// spelled out on top of `required` (the keys without a default a configuration must
/// have), are accepted by [`ConfigSchema::check`] and `resolve` to the same checked value as
/// `required` alone; and every enumeration value resolves. `resolve` parses and checks a
/// configuration as the plugin's `create` does. The first disagreement is the error.
pub fn conformance<'de, C, R, E>(
    plugin: &str,
    schema: &ConfigSchema,
    required: &Value,
    resolve: impl Fn(&Value) -> Result<R, E>,
) -> Result<(), String>
where
    C: Deserialize<'de>,
    R: PartialEq + std::fmt::Debug,
    E: std::fmt::Debug,
{
    let names: Vec<&str> = schema.keys.iter().map(|k| k.name.as_str()).collect();
    let fields = struct_fields::<C>();
    if names != fields {
        return Err(format!(
            "{plugin}: schema keys {names:?} are not the fields {fields:?}"
        ));
    }
    let with = |extra: serde_json::Map<String, Value>| {
        let mut config = required.as_object().cloned().unwrap_or_default();
        config.extend(extra);
        Value::Object(config)
    };
    let spelled_out = with(schema.defaults_for(required));
    schema.check(plugin, &spelled_out)?;
    let resolved = resolve(&spelled_out).map_err(|e| format!("{plugin}: defaults: {e:?}"))?;
    let implicit = resolve(required).map_err(|e| format!("{plugin}: required keys: {e:?}"))?;
    if resolved != implicit {
        return Err(format!(
            "{plugin}: the schema's defaults resolve to {resolved:?}, an empty configuration to {implicit:?}"
        ));
    }
    for key in &schema.keys {
        for value in &key.values {
            let config = with(
                [(key.name.clone(), Value::from(value.as_str()))]
                    .into_iter()
                    .collect(),
            );
            resolve(&config).map_err(|e| format!("{plugin}: {} = {value:?}: {e:?}", key.name))?;
        }
    }
    Ok(())
}

/// The field names a `#[derive(Deserialize)]` struct accepts, in declaration order: what a
/// plugin's test compares with its schema's keys so that neither lists a key the other
/// lacks. Empty for a type that is not a struct.
pub fn struct_fields<'de, T: Deserialize<'de>>() -> &'static [&'static str] {
    /// A deserializer that only records the field list serde hands it, then stops.
    struct Fields<'a>(&'a mut &'static [&'static str]);

    impl<'de> serde::Deserializer<'de> for Fields<'_> {
        type Error = serde::de::value::Error;

        fn deserialize_any<V: serde::de::Visitor<'de>>(
            self,
            _: V,
        ) -> Result<V::Value, Self::Error> {
            Err(serde::de::Error::custom("not a struct"))
        }

        fn deserialize_struct<V: serde::de::Visitor<'de>>(
            self,
            _name: &'static str,
            fields: &'static [&'static str],
            _visitor: V,
        ) -> Result<V::Value, Self::Error> {
            *self.0 = fields;
            Err(serde::de::Error::custom("fields recorded"))
        }

        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes
            byte_buf option unit unit_struct newtype_struct seq tuple tuple_struct map enum
            identifier ignored_any
        }
    }

    let mut fields: &'static [&'static str] = &[];
    // The error is the point: the deserializer stops as soon as it has the list.
    let _ = T::deserialize(Fields(&mut fields));
    fields
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> ConfigSchema {
        ConfigSchema {
            keys: vec![
                ConfigKey::new("n_bar", KeyType::Integer, "Capacity.")
                    .default(50)
                    .unit("samples"),
                ConfigKey::new("variant", KeyType::String, "Which.")
                    .default("fast")
                    .one_of(&["fast", "dense"]),
                ConfigKey::new("drift", KeyType::Object, "Off when absent.").default(Value::Null),
                ConfigKey::new("hyper", KeyType::Object, "Given or fitted.").or(KeyType::Array),
            ],
        }
    }

    #[test]
    fn lists_the_fields_of_a_struct() {
        #[derive(Deserialize)]
        #[allow(dead_code)]
        struct Config {
            n_bar: Option<usize>,
            variant: Option<String>,
        }
        assert_eq!(struct_fields::<Config>(), ["n_bar", "variant"]);
        assert!(struct_fields::<u32>().is_empty());
    }

    /// A plugin's configuration type for the conformance tests: `n` defaults to 50 and
    /// `mode` accepts "a" and "b".
    #[derive(Deserialize, Debug)]
    #[serde(deny_unknown_fields)]
    struct Toy {
        n: Option<u64>,
        mode: Option<String>,
    }

    fn resolve(config: &Value) -> Result<(u64, String), String> {
        let toy = Toy::deserialize(config).map_err(|e| e.to_string())?;
        let mode = toy.mode.unwrap_or_else(|| "a".into());
        if !["a", "b"].contains(&mode.as_str()) {
            return Err(format!("mode {mode}"));
        }
        Ok((toy.n.unwrap_or(50), mode))
    }

    fn toy_schema(n_default: u64, modes: &[&str]) -> ConfigSchema {
        ConfigSchema {
            keys: vec![
                ConfigKey::new("n", KeyType::Integer, "N.").default(n_default),
                ConfigKey::new("mode", KeyType::String, "Mode.")
                    .default("a")
                    .one_of(modes),
            ],
        }
    }

    #[test]
    fn conformance_finds_each_kind_of_disagreement() {
        let empty = json!({});
        let check =
            |schema: &ConfigSchema| conformance::<Toy, _, _>("toy", schema, &empty, resolve);
        assert_eq!(check(&toy_schema(50, &["a", "b"])), Ok(()));
        let wrong_default = check(&toy_schema(40, &["a", "b"])).unwrap_err();
        assert!(
            wrong_default.contains("defaults resolve to (40"),
            "{wrong_default}"
        );
        let bad_value = check(&toy_schema(50, &["a", "c"])).unwrap_err();
        assert!(bad_value.contains("mode = \"c\""), "{bad_value}");
        let mut missing = toy_schema(50, &["a", "b"]);
        missing.keys.pop();
        let missing = check(&missing).unwrap_err();
        assert!(missing.contains("are not the fields"), "{missing}");
    }

    #[test]
    fn accepts_known_keys_of_the_right_type() {
        let config = json!({"n_bar": 8, "variant": "dense", "drift": null, "hyper": {}});
        assert_eq!(schema().check("p", &config), Ok(()));
        assert_eq!(schema().check("p", &Value::Null), Ok(()));
    }

    #[test]
    fn names_the_nearest_key_of_a_typo() {
        let err = schema().check("skygp", &json!({"n_barr": 8})).unwrap_err();
        assert_eq!(
            err,
            "skygp has no configuration key 'n_barr'; did you mean 'n_bar'?"
        );
        let err = schema()
            .check("skygp", &json!({"lengthscale": 1}))
            .unwrap_err();
        assert!(
            err.contains("its keys: n_bar, variant, drift, hyper"),
            "{err}"
        );
    }

    #[test]
    fn refuses_wrong_types_and_values() {
        let s = schema();
        assert!(
            s.check("p", &json!({"n_bar": 1.5}))
                .unwrap_err()
                .contains("integer")
        );
        assert!(
            s.check("p", &json!({"variant": "slow"}))
                .unwrap_err()
                .contains("fast, dense")
        );
        assert!(s.check("p", &json!({"hyper": [{}]})).is_ok());
        let err = s.check("p", &json!({"hyper": null})).unwrap_err();
        assert!(err.contains("must be of type object or array"), "{err}");
        assert!(
            s.check("p", &json!([1]))
                .unwrap_err()
                .contains("object of keys")
        );
    }

    #[test]
    fn a_key_of_one_mode_has_its_default_only_in_that_mode() {
        let mut s = schema();
        s.keys.push(
            ConfigKey::new("window", KeyType::Integer, "Fast only.")
                .default(8)
                .when("variant", &["fast"]),
        );
        s.keys.push(
            ConfigKey::new("merge", KeyType::Boolean, "Dense only.")
                .default(true)
                .when("variant", &["dense"]),
        );
        // The selecting key's own default picks the mode of an empty configuration.
        assert_eq!(
            Value::Object(s.defaults()),
            json!({"n_bar": 50, "variant": "fast", "window": 8})
        );
        assert_eq!(
            Value::Object(s.defaults_for(&json!({"variant": "dense"}))),
            json!({"n_bar": 50, "variant": "fast", "merge": true})
        );
        // A selecting value that is not a string selects no mode.
        assert!(!s.applies(s.key("window").unwrap(), &json!({"variant": 3})));
        assert_eq!(
            ConfigSchema::from_json(s.to_json().as_bytes()),
            Ok(s.clone())
        );
        let table = s.markdown_table();
        assert!(
            table.contains("| `merge` | boolean | `true` |  | *variant dense only.* Dense only. |"),
            "{table}"
        );
    }

    #[test]
    fn round_trips_through_json_and_lists_defaults() {
        let s = schema();
        assert_eq!(
            ConfigSchema::from_json(s.to_json().as_bytes()),
            Ok(s.clone())
        );
        assert_eq!(
            Value::Object(s.defaults()),
            json!({"n_bar": 50, "variant": "fast"})
        );
        let table = s.markdown_table();
        assert!(
            table.contains("| `n_bar` | integer | `50` | samples | Capacity. |"),
            "{table}"
        );
        assert!(
            table.contains("| `variant` | fast \\| dense | `\"fast\"` |"),
            "{table}"
        );
        assert!(table.contains("| `drift` | object | off |"), "{table}");
        let mixed = ConfigKey::new("beta", KeyType::Number, "β.")
            .or(KeyType::String)
            .one_of(&["normalized"]);
        assert_eq!(mixed.type_column(), "number or normalized");
    }
}
