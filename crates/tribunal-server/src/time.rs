//! Wall-clock times as RFC 3339 text (UTC, to the microsecond), for the
//! decision log, the service's log lines and `/v1/packs`.

use std::time::{SystemTime, UNIX_EPOCH};

/// `time` as `2026-11-27T05:13:13.123456Z`.
pub fn rfc3339(time: SystemTime) -> String {
    let since = time.duration_since(UNIX_EPOCH).unwrap_or_default();
    let seconds = since.as_secs();
    let (days, rest) = (seconds / 86_400, seconds % 86_400);
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:06}Z",
        rest / 3600,
        rest / 60 % 60,
        rest % 60,
        since.subsec_micros()
    )
}

/// Now, as [`rfc3339`] writes it.
pub fn now() -> String {
    rfc3339(SystemTime::now())
}

/// The proleptic Gregorian date `days` after 1970-01-01 (Howard Hinnant's
/// `civil_from_days`, for days on or after the epoch).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let day_of_era = z % 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let mp = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = year_of_era + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn dates_across_leap_years_and_centuries() {
        let at = |seconds: u64| rfc3339(UNIX_EPOCH + Duration::from_secs(seconds));
        assert_eq!(at(0), "1970-01-01T00:00:00.000000Z");
        assert_eq!(at(951_782_400), "2000-02-29T00:00:00.000000Z");
        assert_eq!(at(1_709_251_199), "2024-02-29T23:59:59.000000Z");
        assert_eq!(at(4_107_542_400), "2100-03-01T00:00:00.000000Z");
        assert_eq!(
            rfc3339(UNIX_EPOCH + Duration::from_micros(1_795_756_393_123_456)),
            "2026-11-27T05:13:13.123456Z"
        );
    }
}
