"""Summarise an .rrd file with the rerun SDK's own reader (for node/tests/viz_rrd.rs).

Usage: python viz_read_rrd.py FILE.rrd

Prints one JSON object: the SDK version, the recording's application id, per entity
path the rows (temporal and static), the timelines, the components, the range of the time
axis (`sim_time` of gp-node sim, `node_time` of gp-node run; s) and, for `Scalars`, the count, min and max of the values; and, per
blueprint store in the file, each blueprint entity's components with their last value
(views: class, name, origin; containers: kind, name, contents).
"""

from __future__ import annotations

import json
import sys

import pyarrow as pa
import pyarrow.compute as pc
import rerun
from rerun.experimental import RrdReader

# The time axes of gp-node's recordings (durations, ns in the file).
TIME_AXES = ("sim_time", "node_time")


def scalar_values(batch: pa.RecordBatch, column: str) -> pa.Array:
    values = batch.column(column)
    while pa.types.is_list(values.type) or pa.types.is_large_list(values.type):
        values = pc.list_flatten(values)
    return values


def last_values(batch: pa.RecordBatch) -> dict:
    """Each data column's last row as plain Python (lists of one element unwrapped)."""
    out = {}
    for field in batch.schema:
        if (field.metadata or {}).get(b"rerun:kind") != b"data" or batch.num_rows == 0:
            continue
        value = batch.column(field.name)[batch.num_rows - 1].as_py()
        if isinstance(value, list) and len(value) == 1:
            value = value[0]
        out[field.name] = value
    return out


def blueprints(reader: RrdReader) -> list[dict]:
    """Per blueprint store: {entity path: {component: last value}}."""
    stores = []
    for store in reader.blueprints():
        entities: dict[str, dict] = {}
        for chunk in reader.stream(store=store):
            entities.setdefault(chunk.entity_path, {}).update(
                last_values(chunk.to_record_batch())
            )
        stores.append(entities)
    return stores


def main(path: str) -> None:
    reader = RrdReader(path)
    recordings = reader.recordings()
    entities: dict[str, dict] = {}
    for chunk in reader.stream():
        entry = entities.setdefault(
            chunk.entity_path,
            {
                "rows": 0,
                "static_rows": 0,
                "timelines": set(),
                "components": set(),
                "time_secs": [None, None],
                "scalars": {"count": 0, "min": None, "max": None},
            },
        )
        if chunk.is_static:
            entry["static_rows"] += chunk.num_rows
        else:
            entry["rows"] += chunk.num_rows
        entry["timelines"].update(chunk.timeline_names)
        batch = chunk.to_record_batch()
        for field in batch.schema:
            kind = (field.metadata or {}).get(b"rerun:kind")
            if kind == b"data":
                entry["components"].add(field.name)
        axis = next((n for n in TIME_AXES if n in batch.schema.names), None)
        if axis is not None and chunk.num_rows > 0:
            t = batch.column(axis).cast(pa.int64())
            lo, hi = pc.min(t).as_py() / 1e9, pc.max(t).as_py() / 1e9
            span = entry["time_secs"]
            span[0] = lo if span[0] is None else min(span[0], lo)
            span[1] = hi if span[1] is None else max(span[1], hi)
        if "Scalars:scalars" in batch.schema.names:
            values = scalar_values(batch, "Scalars:scalars")
            stats = entry["scalars"]
            stats["count"] += len(values)
            if len(values) > 0:
                lo, hi = pc.min(values).as_py(), pc.max(values).as_py()
                stats["min"] = lo if stats["min"] is None else min(stats["min"], lo)
                stats["max"] = hi if stats["max"] is None else max(stats["max"], hi)
    for entry in entities.values():
        entry["timelines"] = sorted(entry["timelines"])
        entry["components"] = sorted(entry["components"])
    json.dump(
        {
            "version": rerun.__version__,
            "application_ids": [r.application_id for r in recordings],
            "entities": entities,
            "blueprints": blueprints(reader),
        },
        sys.stdout,
        indent=1,
    )


if __name__ == "__main__":
    main(sys.argv[1])
