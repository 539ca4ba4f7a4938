//! Byte sizes as the frameworks print them, converted to exact byte counts.
//!
//! Every framework formats sizes its own way (see `docs/formats.md` §1):
//! PyTorch prints `982.50 KiB`, `0 bytes` or `6080.27 GiB` (never TiB), old MPS
//! builds print `1.50 GB` meaning GiB, TensorFlow and XLA print `1.5KiB`,
//! `11.77MiB` or `512B`, and CuPy prints `1,073,741,824`. All of these units are
//! binary multiples. Conversion is done on the decimal digits as integers, so
//! `1.56 GiB` is exactly `round(156 × 2^30 / 100)` with no floating-point drift.

use std::fmt;

/// A kibibyte (2^10 bytes): the K of every size oomwhy reads is binary.
pub const KIB: u64 = 1 << 10;
/// A mebibyte (2^20 bytes).
pub const MIB: u64 = 1 << 20;
/// A gibibyte (2^30 bytes).
pub const GIB: u64 = 1 << 30;
/// A tebibyte (2^40 bytes).
pub const TIB: u64 = 1 << 40;

/// Why a printed size could not be turned into a byte count.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SizeError {
    /// The text is not a size in any known format.
    Malformed(String),
    /// The size does not fit in 64 bits (e.g. `99999999999999999999.00 GiB`).
    TooLarge(String),
}

impl fmt::Display for SizeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SizeError::Malformed(s) => write!(f, "not a size: `{s}`"),
            SizeError::TooLarge(s) => write!(f, "size too large for 64 bits: `{s}`"),
        }
    }
}

impl std::error::Error for SizeError {}

/// Binary multiplier for a unit label; `None` for an unknown label.
///
/// `KB`/`MB`/`GB` are accepted as binary because the only frameworks that
/// print them in OOM messages (old MPS builds, TensorFlow's `2.00GB`-style
/// wrappers) compute them with 1024-based divisors.
fn unit_multiplier(unit: &str) -> Option<u128> {
    let shift = match unit {
        "B" | "b" | "byte" | "bytes" | "Bytes" => 0,
        "KiB" | "KB" | "kB" | "K" => 10,
        "MiB" | "MB" | "M" => 20,
        "GiB" | "GB" | "G" => 30,
        "TiB" | "TB" | "T" => 40,
        "PiB" | "PB" | "P" => 50,
        "EiB" | "EB" | "E" => 60,
        _ => return None,
    };
    Some(1u128 << shift)
}

/// Parses a number with optional decimals and thousands separators into
/// `(mantissa, decimal_places)`: `"1,234.50"` gives `(123450, 2)`.
fn parse_decimal(number: &str) -> Option<(u128, u32)> {
    let mut mantissa: u128 = 0;
    let mut decimals: u32 = 0;
    let mut seen_point = false;
    let mut seen_digit = false;
    for c in number.chars() {
        match c {
            '0'..='9' => {
                seen_digit = true;
                mantissa = mantissa
                    .checked_mul(10)?
                    .checked_add(u128::from(c as u8 - b'0'))?;
                if seen_point {
                    decimals += 1;
                }
            }
            '.' if !seen_point => seen_point = true,
            ',' if !seen_point => {}
            _ => return None,
        }
    }
    if !seen_digit || decimals > 20 {
        return None;
    }
    Some((mantissa, decimals))
}

/// Converts a number and a unit label (both as printed) to bytes, rounding
/// half up to the nearest byte.
pub fn to_bytes(number: &str, unit: &str) -> Result<u64, SizeError> {
    let whole = || format!("{number} {unit}");
    let multiplier = unit_multiplier(unit).ok_or_else(|| SizeError::Malformed(whole()))?;
    let (mantissa, decimals) = parse_decimal(number).ok_or_else(|| {
        // An overflowing mantissa is still a well-formed number.
        if number
            .chars()
            .all(|c| c.is_ascii_digit() || c == '.' || c == ',')
            && number.chars().any(|c| c.is_ascii_digit())
            && number.matches('.').count() <= 1
        {
            SizeError::TooLarge(whole())
        } else {
            SizeError::Malformed(whole())
        }
    })?;
    let scale = 10u128.pow(decimals);
    let product = mantissa
        .checked_mul(multiplier)
        .ok_or_else(|| SizeError::TooLarge(whole()))?;
    let rounded = (product + scale / 2) / scale;
    u64::try_from(rounded).or_else(|_| {
        // PyTorch prints values near 2^64 (u64::MAX, its "no limit") as
        // `17179869184.00 GiB`, which rounds up to 2^64. When the printed
        // value's rounding interval (± half its last digit) still reaches a
        // 64-bit value, read it as u64::MAX; otherwise it is too large.
        let lowest = product
            .checked_mul(2)
            .map(|twice| (twice - multiplier).div_ceil(2 * scale));
        match lowest {
            Some(lowest) if lowest <= u128::from(u64::MAX) => Ok(u64::MAX),
            _ => Err(SizeError::TooLarge(whole())),
        }
    })
}

/// Converts a number and a decimal unit label (`kB`, `MB`, `GB`, `TB`, as
/// programs that count in powers of 1000 print them: Dask before its
/// binary units) to bytes, rounding half up.
pub fn to_bytes_decimal(number: &str, unit: &str) -> Result<u64, SizeError> {
    let whole = || format!("{number} {unit}");
    let multiplier: u128 = match unit {
        "B" => 1,
        "kB" | "KB" => 1_000,
        "MB" => 1_000_000,
        "GB" => 1_000_000_000,
        "TB" => 1_000_000_000_000,
        "PB" => 1_000_000_000_000_000,
        _ => return Err(SizeError::Malformed(whole())),
    };
    let (mantissa, decimals) =
        parse_decimal(number).ok_or_else(|| SizeError::Malformed(whole()))?;
    let scale = 10u128.pow(decimals);
    let product = mantissa
        .checked_mul(multiplier)
        .ok_or_else(|| SizeError::TooLarge(whole()))?;
    u64::try_from((product + scale / 2) / scale).map_err(|_| SizeError::TooLarge(whole()))
}

/// Parses a whole size token such as `2.00 GiB`, `0 bytes`, `1.5KiB`, `512B`
/// or `1,073,741,824 bytes`.
pub fn parse_size(text: &str) -> Result<u64, SizeError> {
    let text = text.trim();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == ','))
        .ok_or_else(|| SizeError::Malformed(text.to_string()))?;
    let (number, unit) = text.split_at(split);
    to_bytes(number, unit.trim_start())
}

/// Half of the last printed digit of a size, in bytes: the most the true value
/// can differ from the printed one. `2.00 GiB` is exact to ±0.005 GiB.
///
/// When the last digit is not a whole number of bytes, reading the printed
/// value back rounds it to a whole byte, which can add up to half a byte:
/// `1.01 MiB` is 1059061.76 bytes, read as 1059062, and the true value can be
/// 5242.88 bytes below that, so 1053819 (5243 bytes away) is within it.
pub fn rounding_tolerance(number: &str, unit: &str) -> u64 {
    let decimals = number.split_once('.').map_or(0, |(_, d)| d.len() as u32);
    let multiplier = unit_multiplier(unit).unwrap_or(1);
    let digit = 10u128.pow(decimals.min(20));
    let tolerance = if multiplier % digit == 0 {
        // Whole bytes per digit: the printed value is an exact byte count.
        multiplier / (2 * digit)
    } else {
        // floor(half a digit + half a byte).
        (multiplier + digit) / (2 * digit)
    };
    u64::try_from(tolerance).unwrap_or(u64::MAX)
}

/// Formats a byte count the way PyTorch's `format_size` does (`2.00 GiB`,
/// `982.50 KiB`, `0 bytes`), so numbers in oomwhy's output read like the
/// message the user is looking at.
pub fn format_size(bytes: u64) -> String {
    if bytes <= KIB {
        format!("{bytes} bytes")
    } else if bytes <= MIB {
        format!("{:.2} KiB", bytes as f64 / KIB as f64)
    } else if bytes <= GIB {
        format!("{:.2} MiB", bytes as f64 / MIB as f64)
    } else {
        format!("{:.2} GiB", bytes as f64 / GIB as f64)
    }
}

/// Formats a signed byte difference (`-1.44 GiB`).
pub fn format_signed(bytes: i128) -> String {
    let magnitude = u64::try_from(bytes.unsigned_abs()).unwrap_or(u64::MAX);
    if bytes < 0 {
        format!("-{}", format_size(magnitude))
    } else {
        format_size(magnitude)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_pytorch_unit() {
        let cases: &[(&str, u64)] = &[
            ("0 bytes", 0),
            ("512 bytes", 512),
            ("1024 bytes", 1024),
            ("1024.00 KiB", MIB),
            ("982.50 KiB", 1_006_080),
            ("20.00 MiB", 20 * MIB),
            ("1024.00 MiB", GIB),
            ("2.00 GiB", 2 * GIB),
            ("1.56 GiB", 1_675_037_245), // round(1.56 * 2^30) = 1675037245.44
            ("7.88 GiB", 8_461_085_573), // round(7.88 * 2^30) = 8461085573.12
            ("6080.27 GiB", 6_528_640_200_212),
        ];
        for (text, want) in cases {
            assert_eq!(parse_size(text), Ok(*want), "{text}");
        }
    }

    #[test]
    fn thousands_of_gib_are_exact() {
        assert_eq!(parse_size("37252902.99 GiB"), Ok(40_000_000_005_777_654));
    }

    #[test]
    fn parses_tensorflow_and_mps_units() {
        assert_eq!(parse_size("1.5KiB"), Ok(1536));
        assert_eq!(parse_size("11.77MiB"), Ok(12_341_740));
        assert_eq!(parse_size("512B"), Ok(512));
        assert_eq!(parse_size("2.00GiB"), Ok(2 * GIB));
        assert_eq!(parse_size("1.50 GB"), Ok(GIB + GIB / 2));
        assert_eq!(parse_size("720.00 KB"), Ok(720 * 1024));
    }

    #[test]
    fn parses_thousands_separators() {
        assert_eq!(parse_size("1,073,741,824 bytes"), Ok(GIB));
        assert_eq!(to_bytes("17179869184", "bytes"), Ok(16 * GIB));
    }

    #[test]
    fn rejects_overflow_without_panicking() {
        assert!(matches!(
            parse_size("99999999999999999999.00 GiB"),
            Err(SizeError::TooLarge(_))
        ));
        assert!(matches!(
            parse_size("999999999999999999999999999999999999999999 bytes"),
            Err(SizeError::TooLarge(_))
        ));
        assert!(matches!(parse_size("GiB"), Err(SizeError::Malformed(_))));
        assert!(matches!(
            parse_size("1.2.3 GiB"),
            Err(SizeError::Malformed(_))
        ));
        assert!(matches!(
            parse_size("12 parsecs"),
            Err(SizeError::Malformed(_))
        ));
    }

    #[test]
    fn format_matches_pytorch() {
        assert_eq!(format_size(0), "0 bytes");
        assert_eq!(format_size(1024), "1024 bytes");
        assert_eq!(format_size(MIB), "1024.00 KiB");
        assert_eq!(format_size(GIB), "1024.00 MiB");
        assert_eq!(format_size(2 * GIB), "2.00 GiB");
        assert_eq!(format_signed(-(3 * GIB as i128) / 2), "-1.50 GiB");
    }

    #[test]
    fn print_then_parse_round_trips_within_rounding() {
        for bytes in [
            0,
            1,
            1023,
            1024,
            1025,
            5 * MIB + 7,
            3 * GIB + 12345,
            900 * GIB,
        ] {
            let printed = format_size(bytes);
            let parsed = parse_size(&printed).unwrap();
            let (number, unit) = printed.split_once(' ').unwrap();
            let tolerance = rounding_tolerance(number, unit);
            assert!(
                parsed.abs_diff(bytes) <= tolerance,
                "{bytes} -> {printed} -> {parsed}"
            );
        }
    }

    #[test]
    fn tolerance_is_half_the_last_digit() {
        assert_eq!(rounding_tolerance("2.00", "GiB"), GIB / 200);
        assert_eq!(rounding_tolerance("512", "bytes"), 0);
        assert_eq!(rounding_tolerance("1.5", "KiB"), 51);
    }
}
