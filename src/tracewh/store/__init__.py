"""What the warehouse stores, described once.

catalog: the stored tables as DuckDB's catalog lists them (removing and counting a source's rows
loop over it), and which views a lake row-groups by rank; derive: the registry of what is derived
from the stored rows, the scripts that make it and what they fill (filled again when a script
changes, hashed into the metrics lock).
"""

from .catalog import event_tables, rank_partitioned, remove_source, source_rows, stored_tables

__all__ = ["event_tables", "rank_partitioned", "remove_source", "source_rows", "stored_tables"]
