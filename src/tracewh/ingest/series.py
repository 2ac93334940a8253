"""Time series sampled beside the job (GPU monitors writing CSV): find the time, device and
host columns and the time unit; sql/ingest/series.sql does the rest."""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from pathlib import Path

from ..errors import IngestError

_TIME = re.compile(r"^(time|timestamp|ts|date|datetime|time_?ns|time_?ms|time_?s|epoch.*)$", re.I)
_DEVICE = re.compile(r"^(index|gpu|gpu_?index|gpu_?id|device|device_?id|dev)$", re.I)
_HOST = re.compile(r"^(host|hostname|node|nodename)$", re.I)
_ZONE = re.compile(r"^(?:UTC)?([+-])(\d{1,2}):?(\d{2})?$", re.I)


@dataclass
class SeriesLayout:
    time_column: str
    time_unit: str            # s | ms | us | ns | text
    device_column: str | None
    host_column: str | None
    tz_offset_ns: int


def layout(path: Path, time_column: str | None = None, time_unit: str | None = None,
           tz: str | None = None) -> SeriesLayout:
    """Read the header and the first row; the time column and unit are taken as given or
    detected (a number's magnitude tells s/ms/us/ns since the epoch)."""
    try:
        with path.open(newline="", errors="replace") as handle:
            reader = csv.reader(handle)
            header = [name.strip() for name in next(reader, [])]
            first = next(reader, None)
    except OSError as exc:
        raise IngestError(path, f"cannot read: {exc.strerror or exc}") from None
    if not header or first is None:
        raise IngestError(path, "empty series: a header and at least one row are needed")
    if time_column is None:
        time_column = next((c for c in header if _TIME.match(c)), None)
        if time_column is None:
            raise IngestError(path, f"no time column among {', '.join(header)}",
                              "name it with --series-time-column")
    elif time_column not in header:
        raise IngestError(path, f"no column {time_column!r}", f"columns: {', '.join(header)}")
    value = first[header.index(time_column)].strip()
    unit = time_unit or _unit_of(value)
    return SeriesLayout(time_column, unit, next((c for c in header if _DEVICE.match(c)), None),
                        next((c for c in header if _HOST.match(c)), None), _offset_ns(tz))


def _unit_of(value: str) -> str:
    try:
        number = float(value)
    except ValueError:
        return "text"
    for unit, limit in (("s", 1e11), ("ms", 1e14), ("us", 1e17)):
        if abs(number) < limit:
            return unit
    return "ns"


def _offset_ns(tz: str | None) -> int:
    """'+02:00' -> the ns to subtract from local stamps to get UTC; None/'UTC' -> 0."""
    if not tz or tz.upper() in ("UTC", "Z"):
        return 0
    match = _ZONE.match(tz.strip())
    if not match:
        raise IngestError(tz, "not a UTC offset", "give it like +02:00 or -0500")
    sign = 1 if match.group(1) == "+" else -1
    return sign * (int(match.group(2)) * 3600 + int(match.group(3) or 0) * 60) * 1_000_000_000


def load(con, path: Path, found: SeriesLayout, run_id: str, file_id: int, host: str | None):
    """Write the samples (inside the caller's transaction); returns the source's facts."""
    from ..resources import sql_dir
    from ..sqlscript import set_variables
    from .source import SourceFacts

    set_variables(con, run_id=run_id, file_id=file_id, time_column=found.time_column,
                  time_unit=found.time_unit, tz_offset_ns=found.tz_offset_ns,
                  device_column=found.device_column, host_column=found.host_column, host=host)
    sql = (sql_dir() / "ingest" / "series.sql").read_text().replace(
        "{csv_file}", str(path).replace("'", "''"))
    con.execute(sql)
    first = con.execute("SELECT min(ts_ns) FROM store.samples WHERE file_id = ?", [file_id]).fetchall()
    if first[0][0] is None:
        raise IngestError(path, f"no samples: column {found.time_column!r} holds no time "
                          f"readable as {found.time_unit}", "set --series-time-unit")
    cursor = con.execute((sql_dir() / "ingest" / "series_faults.sql").read_text())
    faults = dict(zip([d[0] for d in cursor.description], cursor.fetchone()))
    return SourceFacts("series-csv", None, None, True, first[0][0], host,
                       _warnings(faults, found),
                       time_base=f"time column {found.time_column!r} ({found.time_unit})")


def _warnings(faults: dict, found: SeriesLayout) -> list[str]:
    """What series_faults.sql counted, said in words."""
    said = []
    if faults["unknown_zone_rows"]:
        said.append(f"{faults['unknown_zone_rows']} row(s) stamped in a zone not known here "
                    f"({faults['unknown_zones']}): not stored; write the stamps with an offset "
                    "such as +02:00")
    if faults["before_1970_rows"]:
        said.append(f"{faults['before_1970_rows']} row(s) stamped before 1970: not stored")
    if faults["unreadable_time_rows"]:
        said.append(f"{faults['unreadable_time_rows']} row(s) whose time is not readable as "
                    f"{found.time_unit}: not stored")
    if faults["not_finite_values"]:
        said.append(f"{faults['not_finite_values']} value(s) that are no finite number "
                    "(1e400, inf): not stored")
    if faults["out_of_order"]:
        said.append(f"{faults['out_of_order']} stamp(s) earlier than the row before them on "
                    "their device: stored in time order")
    if faults["repeated"]:
        said.append(f"{faults['repeated']} sample(s) repeat an earlier one's device, measure "
                    "and time: stored as written")
    if faults["bad_devices"]:
        said.append(f"device column {found.device_column!r} holds {faults['bad_devices']}, no "
                    "device number: those samples have no device")
    if found.time_unit == "text" and found.tz_offset_ns == 0 and not faults["zoned_rows"]:
        said.append("time stamps without a zone taken as UTC (--series-tz to say otherwise)")
    return said
