"""Writes the rosbag2 recordings of node/tests/learn_bag.rs with PyPI `rosbags` (and `mcap`
for an lz4-chunked file): one robot stream (a `gp-node sim --record` CSV) in every storage,
compression and torque form the node must read, and the damaged ones it must refuse.

Usage: learn_bag_writer.py STREAM.csv URDF JOINTS(comma-separated) OUT_DIR

The stream: row k is the state at t_k (true q, q̇) and tau_k, the torque applied from t_k on.
A joint state at t_k carries effort = tau_{k-1} (what acted over the interval it ends); the
effort command tau_k is logged after the state that produced it. Two clocks: the stamps are
the robot's; log times are the recorder's, 1000 s ahead plus 1 ms (±0.2 ms) of transport;
the command is logged 0.3 ms after its state. A summary of what was written goes to
OUT_DIR/written.json.
"""

import csv
import json
import shutil
import sys
from pathlib import Path

from mcap.writer import CompressionType
from mcap.writer import Writer as McapWriter
from rosbags.rosbag2 import CompressionFormat, CompressionMode, StoragePlugin, Writer
from rosbags.typesys import Stores, get_typestore

TS = get_typestore(Stores.ROS2_JAZZY)
JointState = TS.types["sensor_msgs/msg/JointState"]
Header = TS.types["std_msgs/msg/Header"]
Time = TS.types["builtin_interfaces/msg/Time"]
Float64MultiArray = TS.types["std_msgs/msg/Float64MultiArray"]
MultiArrayLayout = TS.types["std_msgs/msg/MultiArrayLayout"]
String = TS.types["std_msgs/msg/String"]

import numpy as np

EPOCH_NS = 1_700_000_000 * 10**9
SKEW_NS = 1000 * 10**9
TRANSPORT_NS = 1_000_000
JITTER_NS = 200_000
COMPUTE_NS = 300_000

JS_TYPE = "sensor_msgs/msg/JointState"
CMD_TYPE = "std_msgs/msg/Float64MultiArray"
STR_TYPE = "std_msgs/msg/String"
CMD_TOPIC = "/effort_controller/commands"


def read_stream(path, nv):
    rows = list(csv.DictReader(open(path)))
    t = np.array([float(r["t"]) for r in rows])
    q = np.array([[float(r[f"q_{j}"]) for j in range(nv)] for r in rows])
    qd = np.array([[float(r[f"qd_{j}"]) for j in range(nv)] for r in rows])
    tau = np.array([[float(r[f"tau_{j}"]) for j in range(nv)] for r in rows])
    return t, q, qd, tau


def stamp(ns):
    return Time(sec=ns // 10**9, nanosec=ns % 10**9)


def messages(stream, names, *, effort, commands, names_prefix="", shuffle_every=0):
    """(topic, type, log_ns, cdr) of the whole stream, in log order."""
    t, q, qd, tau = stream
    out = []
    if commands:
        # The command of the first row, which acted over the first state's interval.
        log_ns = EPOCH_NS + round(t[0] * 1e9) + SKEW_NS + TRANSPORT_NS + COMPUTE_NS
        cmd = Float64MultiArray(layout=MultiArrayLayout(dim=[], data_offset=0), data=np.array(tau[0], dtype=np.float64))
        out.append((CMD_TOPIC, CMD_TYPE, log_ns, TS.serialize_cdr(cmd, CMD_TYPE)))
    for k in range(1, len(t)):
        stamp_ns = EPOCH_NS + round(t[k] * 1e9)
        if shuffle_every and k % shuffle_every == 0:
            stamp_ns -= 5_000_000
        jitter = ((k * 7919) % 5 - 2) * JITTER_NS // 2
        log_ns = EPOCH_NS + round(t[k] * 1e9) + SKEW_NS + TRANSPORT_NS + jitter
        msg = JointState(
            header=Header(stamp=stamp(stamp_ns), frame_id=""),
            name=[names_prefix + n for n in names],
            position=np.array(q[k], dtype=np.float64),
            velocity=np.array(qd[k], dtype=np.float64),
            effort=np.array(tau[k - 1] if effort else [], dtype=np.float64),
        )
        out.append(("/joint_states", JS_TYPE, log_ns, TS.serialize_cdr(msg, JS_TYPE)))
        if commands:
            cmd = Float64MultiArray(
                layout=MultiArrayLayout(dim=[], data_offset=0),
                data=np.array(tau[k], dtype=np.float64),
            )
            out.append((CMD_TOPIC, CMD_TYPE, log_ns + COMPUTE_NS, TS.serialize_cdr(cmd, CMD_TYPE)))
    out.sort(key=lambda m: m[2])
    return out


def description(urdf, log_ns):
    return ("/robot_description", STR_TYPE, log_ns, TS.serialize_cdr(String(data=urdf), STR_TYPE))


def write_rosbag2(path, msgs, storage, mode=CompressionMode.NONE):
    writer = Writer(path, version=9, storage_plugin=storage)
    if mode != CompressionMode.NONE:
        writer.set_compression(mode, CompressionFormat.ZSTD)
    with writer:
        conns = {}
        for topic, msgtype, log_ns, data in msgs:
            if topic not in conns:
                conns[topic] = writer.add_connection(topic, msgtype, typestore=TS)
            writer.write(conns[topic], log_ns, data)


def write_lz4_mcap(path, msgs):
    with open(path, "wb") as f:
        w = McapWriter(f, compression=CompressionType.LZ4, chunk_size=64 * 1024)
        w.start(profile="ros2", library="learn_bag_writer")
        channels = {}
        for topic, msgtype, log_ns, data in msgs:
            if topic not in channels:
                schema = w.register_schema(name=msgtype, encoding="ros2msg", data=b"")
                channels[topic] = w.register_channel(topic=topic, message_encoding="cdr", schema_id=schema)
            w.add_message(channel_id=channels[topic], log_time=log_ns, publish_time=log_ns, data=data)
        w.finish()


def main():
    csv_path, urdf_path, joints, out = sys.argv[1:5]
    out = Path(out)
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    names = joints.split(",")
    stream = read_stream(csv_path, len(names))
    urdf = Path(urdf_path).read_text()
    first_log = EPOCH_NS + SKEW_NS
    desc = [description(urdf, first_log)]

    with_effort = desc + messages(stream, names, effort=True, commands=False)
    with_commands = desc + messages(stream, names, effort=False, commands=True)
    write_rosbag2(out / "mcap_effort", with_effort, StoragePlugin.MCAP)
    write_rosbag2(out / "sqlite_commands", with_commands, StoragePlugin.SQLITE3)
    write_rosbag2(out / "sqlite_message_zstd", with_effort, StoragePlugin.SQLITE3, CompressionMode.MESSAGE)
    write_rosbag2(out / "mcap_file_zstd", with_commands, StoragePlugin.MCAP, CompressionMode.FILE)
    write_rosbag2(out / "mcap_chunk_zstd", with_effort, StoragePlugin.MCAP, CompressionMode.STORAGE)
    write_lz4_mcap(out / "chunks_lz4.mcap", with_commands)

    # Damaged and wrong recordings.
    mcap_file = next((out / "mcap_effort").glob("*.mcap"))
    data = mcap_file.read_bytes()
    (out / "truncated.mcap").write_bytes(data[: len(data) * 6 // 10])
    write_rosbag2(
        out / "wrong_type",
        [("/joint_states", STR_TYPE, first_log + k, TS.serialize_cdr(String(data="x"), STR_TYPE)) for k in range(10)],
        StoragePlugin.MCAP,
    )
    write_rosbag2(
        out / "no_states",
        [m for m in with_commands if m[0] != "/joint_states"],
        StoragePlugin.SQLITE3,
    )
    write_rosbag2(
        out / "wrong_names",
        desc + messages(stream, names, effort=True, commands=False, names_prefix="other_"),
        StoragePlugin.MCAP,
    )
    write_rosbag2(
        out / "shuffled_stamps",
        desc + messages(stream, names, effort=True, commands=False, shuffle_every=50),
        StoragePlugin.MCAP,
    )
    shutil.copytree(out / "mcap_effort", out / "bz2")
    meta = (out / "bz2" / "metadata.yaml").read_text()
    meta = meta.replace("compression_format: ''", "compression_format: bz2").replace(
        "compression_mode: ''", "compression_mode: FILE"
    )
    (out / "bz2" / "metadata.yaml").write_text(meta)

    json.dump(
        {
            "joint_states": len(stream[0]) - 1,
            "commands": len(stream[0]),
            "mcap_size": len(data),
            "bz2_metadata_changed": "bz2" in meta,
        },
        open(out / "written.json", "w"),
    )


if __name__ == "__main__":
    main()
