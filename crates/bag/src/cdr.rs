//! The CDR of a recorded message: a 4-byte encapsulation header (representation id, options)
//! then the body, aligned from the body's start (the DDS-XTypes rule ROS 2 uses).

use byteorder::{BigEndian, LittleEndian};
use serde::de::DeserializeOwned;

/// Decodes one message (`data` with its encapsulation header) as `T`. Plain CDR, either byte
/// order; anything else (parameter lists, XCDR2) and bytes that do not decode are refused
/// with the reason.
pub fn decode<T: DeserializeOwned>(data: &[u8]) -> Result<T, String> {
    let Some((header, body)) = data.split_first_chunk::<4>() else {
        return Err(format!(
            "{} bytes: shorter than the CDR encapsulation header",
            data.len()
        ));
    };
    let decoded = match [header[0], header[1]] {
        [0, 0] => cdr_encoding::from_bytes::<T, BigEndian>(body),
        [0, 1] => cdr_encoding::from_bytes::<T, LittleEndian>(body),
        other => {
            return Err(format!(
                "encapsulation {other:02x?} is not plain CDR (00 00 or 00 01)"
            ));
        }
    };
    decoded.map(|(value, _)| value).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpn_msgs::std_msgs::StringMessage;

    #[test]
    fn a_little_endian_string_decodes_and_a_short_or_foreign_header_is_refused() {
        // "ab" as std_msgs/String: length 3 (with the NUL), bytes, NUL.
        let bytes = [0, 1, 0, 0, 3, 0, 0, 0, b'a', b'b', 0];
        let msg: StringMessage = decode(&bytes).expect("decodes");
        assert_eq!(msg.data, "ab");
        let big = [0, 0, 0, 0, 0, 0, 0, 3, b'a', b'b', 0];
        assert_eq!(decode::<StringMessage>(&big).expect("decodes").data, "ab");
        assert!(decode::<StringMessage>(&bytes[..3]).is_err());
        let pl_cdr = [0, 3, 0, 0, 3, 0, 0, 0, b'a', b'b', 0];
        let err = decode::<StringMessage>(&pl_cdr).expect_err("refused");
        assert!(err.contains("not plain CDR"), "{err}");
        assert!(
            decode::<StringMessage>(&bytes[..9]).is_err(),
            "truncated body"
        );
    }
}
