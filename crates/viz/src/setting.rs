//! The rerun target as one string: the `ros.rerun` parameter and `gp-node run --rerun`.

use std::path::PathBuf;

use super::{DEFAULT_CONNECT_ADDR, VizTarget};

/// The forms [`VizTarget::from_setting`] accepts, for error messages and docs.
pub const SETTING_FORMS: &str =
    "\"\" (off), \"spawn\", \"connect\", \"connect HOST:PORT\" or \"save FILE.rrd\"";

impl VizTarget {
    /// Parses a rerun setting: `""` (no logging: `None`), `spawn`, `connect` (to
    /// [`DEFAULT_CONNECT_ADDR`]), `connect ADDR` (`HOST:PORT` or a `rerun+http://` URL) or
    /// `save FILE` (the rest of the string, spaces included, is the file). Surrounding
    /// whitespace is ignored.
    ///
    /// Errors: any other word, `save` without a file, `spawn` with an argument, or an
    /// address with spaces; the message lists the accepted forms.
    pub fn from_setting(setting: &str) -> Result<Option<VizTarget>, String> {
        let setting = setting.trim();
        if setting.is_empty() {
            return Ok(None);
        }
        let (word, rest) = match setting.split_once(char::is_whitespace) {
            Some((word, rest)) => (word, rest.trim()),
            None => (setting, ""),
        };
        let refuse = |why: &str| Err(format!("{setting:?}: {why}; expected {SETTING_FORMS}"));
        match (word, rest) {
            ("spawn", "") => Ok(Some(VizTarget::Spawn)),
            ("spawn", _) => refuse("spawn takes no argument"),
            ("connect", "") => Ok(Some(VizTarget::Connect(DEFAULT_CONNECT_ADDR.to_owned()))),
            ("connect", addr) if addr.contains(char::is_whitespace) => {
                refuse("an address has no spaces")
            }
            ("connect", addr) => Ok(Some(VizTarget::Connect(addr.to_owned()))),
            ("save", "") => refuse("save needs a file"),
            ("save", file) => Ok(Some(VizTarget::File(PathBuf::from(file)))),
            _ => refuse(&format!("unknown target {word:?}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_form_parses() {
        assert_eq!(VizTarget::from_setting("  "), Ok(None));
        assert_eq!(VizTarget::from_setting("spawn"), Ok(Some(VizTarget::Spawn)));
        assert_eq!(
            VizTarget::from_setting("connect"),
            Ok(Some(VizTarget::Connect(DEFAULT_CONNECT_ADDR.into())))
        );
        assert_eq!(
            VizTarget::from_setting(" connect  10.0.0.2:9876 "),
            Ok(Some(VizTarget::Connect("10.0.0.2:9876".into())))
        );
        assert_eq!(
            VizTarget::from_setting("save runs/arm 1.rrd"),
            Ok(Some(VizTarget::File("runs/arm 1.rrd".into())))
        );
    }

    #[test]
    fn anything_else_is_refused_with_the_forms() {
        for (bad, why) in [
            ("save", "needs a file"),
            ("spawn now", "no argument"),
            ("connect a b", "no spaces"),
            ("file x.rrd", "unknown target \"file\""),
        ] {
            let err = VizTarget::from_setting(bad).expect_err(bad);
            assert!(err.contains(why) && err.contains("save FILE.rrd"), "{err}");
        }
    }
}
