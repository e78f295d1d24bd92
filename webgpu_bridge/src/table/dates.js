// Date and time cells as milliseconds since the epoch (UTC), for a table's time column:
// the formats pandas.to_datetime(format="mixed") reads most often. ISO 8601 dates and
// date-times ("2024-03-01", "2024-03-01 12:30", "2024-03-01T12:30:05.250Z", with an offset
// "+01:00" converted to UTC), "2024/03/01", and month-first "03/01/2024 [12:30[:05]]".
// A time without an offset is read as UTC (pandas keeps it naive: the same order).

const ISO = /^\s*(\d{4})[-/](\d{1,2})[-/](\d{1,2})(?:[T ](\d{1,2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?\s*(Z|[+-]\d{2}(?::?\d{2})?)?\s*$/i;
const MONTH_FIRST = /^\s*(\d{1,2})\/(\d{1,2})\/(\d{4})(?:[ T](\d{1,2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?\s*$/;

function utc(year, month, day, hour, minute, second, fraction) {
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return null;
  const ms = Date.UTC(year, month - 1, day, hour, minute, second, Number(`0.${fraction || "0"}`) * 1000);
  if (new Date(ms).getUTCDate() !== day) return null;  // 2023-02-30 and the like
  return ms;
}

function offsetMinutes(zone) {
  if (!zone || zone.toUpperCase() === "Z") return 0;
  const sign = zone[0] === "-" ? -1 : 1;
  const digits = zone.slice(1).replace(":", "");
  return sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2) || 0));
}

/** A date/time cell as UTC milliseconds, or null when it is not one of the formats above. */
export function parseDatetime(text) {
  let m = ISO.exec(text);
  if (m) {
    const ms = utc(+m[1], +m[2], +m[3], +(m[4] ?? 0), +(m[5] ?? 0), +(m[6] ?? 0), m[7]);
    return ms === null ? null : ms - offsetMinutes(m[8]) * 60000;
  }
  m = MONTH_FIRST.exec(text);
  if (m) return utc(+m[3], +m[1], +m[2], +(m[4] ?? 0), +(m[5] ?? 0), +(m[6] ?? 0), m[7]);
  return null;
}
