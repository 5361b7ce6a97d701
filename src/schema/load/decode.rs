//! A file's bytes, read once, decompressed or converted into JSON Lines of records.

use super::*;

/// A file's bytes as JSON Lines of records, or why it is passed over.
pub(crate) enum Decoded {
    Lines(Vec<u8>, Vec<String>),
    /// Already parsed by columns (a `--summarize` shard).
    Parsed(Vec<crate::schema::parquet::ParsedRows>),
    /// Parquet trajectories, decoded a window of rows at a time and
    /// parsed by columns ([`crate::schema::parquet::parse_trajectories`]).
    Trajectories(Box<crate::schema::parquet::TrajectoryFile>),
    Skip(String),
}

/// Decompresses (or converts) a file's bytes, read once, into JSON Lines.
/// A `.json` that is not an Inspect log is an error when it was named on the
/// command line and passed over with a note when found in a directory.
pub(crate) fn decode(
    name: &str,
    fmt: Format,
    raw: Vec<u8>,
    opts: &LoadOptions,
    named: bool,
) -> Result<Decoded> {
    let lines = |b: Vec<u8>| Ok(Decoded::Lines(b, Vec::new()));
    match fmt {
        Format::Jsonl => lines(raw),
        // A mapping reads the file's own columns, row by row.
        Format::Parquet if opts.mapping.is_some() => {
            lines(crate::schema::parquet::read_parquet_records(name, raw)?)
        }
        Format::Parquet => match crate::schema::parquet::read_parquet(name, raw)? {
            crate::schema::parquet::ParquetData::Lines(b) => lines(b),
            crate::schema::parquet::ParquetData::Trajectories(file) => {
                Ok(Decoded::Trajectories(file))
            }
            crate::schema::parquet::ParquetData::Aggregates(part) => {
                Ok(Decoded::Parsed(vec![*part]))
            }
        },
        Format::Gzip => {
            let mut out = Vec::with_capacity(raw.len() * 4);
            flate2::read::MultiGzDecoder::new(&raw[..])
                .read_to_end(&mut out)
                .map_err(|e| Error::file(name, format!("corrupt or truncated gzip stream: {e}")))?;
            lines(out)
        }
        Format::Zstd => lines(
            zstd::stream::decode_all(&raw[..])
                .map_err(|e| Error::file(name, format!("corrupt or truncated zstd stream: {e}")))?,
        ),
        Format::Eval => {
            let (b, notes) = crate::schema::inspect::read(name, &raw, &opts.inspect)?;
            Ok(Decoded::Lines(b, notes))
        }
        // A mapping reads a whole `.json` file as one record.
        Format::Json if opts.mapping.is_some() => {
            let one_line: Vec<u8> = raw
                .iter()
                .map(|&b| if b == b'\n' || b == b'\r' { b' ' } else { b })
                .chain(std::iter::once(b'\n'))
                .collect();
            lines(one_line)
        }
        Format::Json => {
            let is_inspect = serde_json::from_slice::<serde_json::Value>(&raw)
                .map(|v| crate::schema::inspect::is_inspect_json(&v))
                .unwrap_or(false);
            if is_inspect {
                let (b, notes) = crate::schema::inspect::read(name, &raw, &opts.inspect)?;
                Ok(Decoded::Lines(b, notes))
            } else if named {
                Err(Error::file(name, "not an Inspect eval log (a .json log must be one; JSON Lines files end in .jsonl)"))
            } else {
                Ok(Decoded::Skip(format!(
                    "{name}: passed over (a .json file that is not an Inspect eval log)"
                )))
            }
        }
    }
}
