//! Key files: one key per line, raw or in hex.

use crate::Error;

/// Splits `data` into keys, one per line (`\n`). A final newline does not
/// start another key. With `hex`, each line (surrounding whitespace
/// ignored) is decoded from hex and an empty line is the empty key; without
/// it the line's bytes are the key.
pub fn parse_keys(data: &[u8], hex: bool, path: &str) -> Result<Vec<Vec<u8>>, Error> {
    let body = data.strip_suffix(b"\n").unwrap_or(data);
    if data.is_empty() {
        return Ok(Vec::new());
    }
    body.split(|&b| b == b'\n')
        .enumerate()
        .map(|(i, line)| {
            if hex {
                decode_hex(line.trim_ascii())
                    .map_err(|e| Error::Failed(format!("{path}:{}: invalid hex: {e}", i + 1)))
            } else {
                Ok(line.to_vec())
            }
        })
        .collect()
}

/// Reads and splits a keys file.
pub fn read_keys(path: &str, hex: bool) -> Result<Vec<Vec<u8>>, Error> {
    let data = std::fs::read(path).map_err(|e| Error::Failed(format!("cannot read {path}: {e}")))?;
    parse_keys(&data, hex, path)
}

fn decode_hex(s: &[u8]) -> Result<Vec<u8>, String> {
    if !s.len().is_multiple_of(2) {
        return Err("odd number of digits".into());
    }
    let digit = |c: u8| -> Result<u8, String> {
        match c {
            b'0'..=b'9' => Ok(c - b'0'),
            b'a'..=b'f' => Ok(c - b'a' + 10),
            b'A'..=b'F' => Ok(c - b'A' + 10),
            _ => Err(format!("{:?} is not a hex digit", char::from(c))),
        }
    };
    s.chunks(2)
        .map(|p| Ok(digit(p[0])? << 4 | digit(p[1])?))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_lines_and_hex() {
        assert_eq!(parse_keys(b"", false, "f").unwrap(), Vec::<Vec<u8>>::new());
        assert_eq!(
            parse_keys(b"a\n\nbc\n", false, "f").unwrap(),
            vec![b"a".to_vec(), vec![], b"bc".to_vec()]
        );
        assert_eq!(
            parse_keys(b"a\nb", false, "f").unwrap(),
            vec![b"a".to_vec(), b"b".to_vec()]
        );
        assert_eq!(
            parse_keys(b"00ff\n\nAB \n", true, "f").unwrap(),
            vec![vec![0, 255], vec![], vec![0xab]]
        );
        assert!(parse_keys(b"0g\n", true, "f").is_err());
        assert!(parse_keys(b"abc\n", true, "f").is_err());
    }
}
