"""Independent reference for the gpn_msgs tests: PyPI `rosbags` (its ROS 2 Jazzy type store,
plus this package's own msg/ and srv/ files) describes each type and serialises values of
it to CDR.

stdin: JSON {"package_dir": DIR, "messages": [{"type": "pkg/msg/Name", "value": {...}}, ...]}
stdout: JSON {"messages": [{"type": ..., "fields": [[name, ros_type], ...], "cdr_hex": ...}]}

Field types are spelt as a .msg file spells them (`float64[]`, `std_msgs/Header`, `byte`),
from rosbags' parsed definitions, so the Rust side can compare them with its own tables.
"""

import json
import pathlib
import sys

import numpy as np
from rosbags.typesys import Stores, get_typestore, get_types_from_msg
from rosbags.typesys.base import Nodetype

NUMPY_DTYPES = {
    "bool": np.bool_, "byte": np.uint8, "char": np.uint8, "uint8": np.uint8, "int8": np.int8,
    "uint16": np.uint16, "int16": np.int16, "uint32": np.uint32, "int32": np.int32,
    "uint64": np.uint64, "int64": np.int64, "float32": np.float32, "float64": np.float64,
}


def own_types(package_dir: pathlib.Path) -> dict:
    """Parses msg/*.msg and srv/*.srv (as their _Request and _Response halves)."""
    pkg = "gp_learning_node_msgs"
    types = {}
    for path in sorted((package_dir / "msg").glob("*.msg")):
        types.update(get_types_from_msg(path.read_text(), f"{pkg}/msg/{path.stem}"))
    for path in sorted((package_dir / "srv").glob("*.srv")):
        request, response = path.read_text().split("\n---\n")
        for part, text in (("Request", request), ("Response", response)):
            parsed = get_types_from_msg(text, f"{pkg}/srv/{path.stem}_{part}")
            # rosbags files a name without "/msg/" under "<pkg>/srv/msg/…"; ROS 2 names the
            # service halves "<pkg>/srv/<Name>_Request" and "_Response".
            types.update({k.replace("/srv/msg/", "/srv/"): v for k, v in parsed.items()})
    return types


def short(name: str) -> str:
    """`std_msgs/msg/Header` -> `std_msgs/Header` (the .msg spelling)."""
    parts = name.split("/")
    return f"{parts[0]}/{parts[-1]}" if len(parts) == 3 else name


def spell(desc) -> str:
    """A rosbags field descriptor as a .msg type string."""
    kind, detail = desc
    if kind == Nodetype.BASE:
        base = detail[0]
        return base
    if kind == Nodetype.NAME:
        return short(detail)
    inner, count = detail
    suffix = "[]" if kind == Nodetype.SEQUENCE else f"[{count}]"
    return spell(inner) + suffix


def build(store, typename: str, value: dict):
    """A rosbags message object of `typename` from plain JSON values."""
    _, fields = store.fielddefs[typename]
    kwargs = {}
    for name, desc in fields:
        kwargs[name] = convert(store, desc, value[name])
    return store.types[typename](**kwargs)


def convert(store, desc, value):
    kind, detail = desc
    if kind == Nodetype.BASE:
        base = detail[0]
        if base == "string":
            return value
        if base in ("float32", "float64"):
            return float(value)
        if base == "bool":
            return bool(value)
        return int(value)
    if kind == Nodetype.NAME:
        return build(store, detail, value)
    inner, _count = detail
    if inner[0] == Nodetype.BASE and inner[1][0] in NUMPY_DTYPES:
        return np.array(value, dtype=NUMPY_DTYPES[inner[1][0]])
    return [convert(store, inner, v) for v in value]


def main() -> None:
    request = json.load(sys.stdin)
    store = get_typestore(Stores.ROS2_JAZZY)
    store.register(own_types(pathlib.Path(request["package_dir"])))
    out = []
    for item in request["messages"]:
        typename = item["type"]
        _, fields = store.fielddefs[typename]
        msg = build(store, typename, item["value"])
        cdr = store.serialize_cdr(msg, typename)
        out.append({
            "type": typename,
            "fields": [[name, spell(desc)] for name, desc in fields],
            "cdr_hex": bytes(cdr).hex(),
        })
    json.dump({"messages": out}, sys.stdout)


if __name__ == "__main__":
    main()
