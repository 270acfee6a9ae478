"""Reads a recording gp-node wrote (`gp-node run --record`, `gp-node sim --record DIR`) with
two independent readers and prints one JSON object for the Rust test to check:

- `rosbags` (its rosbag2 Reader: metadata.yaml, the MCAP storage, the message definitions
  stored in the file registered in a Jazzy type store, CDR deserialisation);
- PyPI `mcap` with `mcap-ros2-support` (the MCAP file alone: schemas parsed from their
  `ros2msg` text, CDR decoded by Foxglove's decoder).

Per topic: type, count, and the first and last message of a few fields, so that the test
compares both readers with each other and with what it knows was sent.

Usage: record_read_back.py BAG_FOLDER
"""

import json
import math
import sys
from pathlib import Path

import yaml
from mcap.reader import make_reader
from mcap_ros2.decoder import DecoderFactory
from rosbags.rosbag2 import Reader
from rosbags.typesys import Stores, get_typestore, get_types_from_msg

FIELDS = {
    "sensor_msgs/msg/JointState": ["name", "position", "velocity", "effort"],
    "std_msgs/msg/Float64MultiArray": ["data"],
    "gp_learning_node_msgs/msg/ResidualEstimate": ["model", "joint_names", "mu", "sigma", "eta", "samples_seen"],
    "gp_learning_node_msgs/msg/ChangeEvent": ["source", "action"],
    "diagnostic_msgs/msg/DiagnosticArray": [],
    "trajectory_msgs/msg/JointTrajectory": ["joint_names"],
    "std_msgs/msg/String": [],
}


def plain(value):
    """JSON-ready: arrays as lists, NaN and infinities as null (strict JSON has neither)."""
    if hasattr(value, "tolist"):
        value = value.tolist()
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def fields_of(msgtype, msg):
    out = {f: plain(getattr(msg, f)) for f in FIELDS.get(msgtype, [])}
    if hasattr(msg, "header"):
        out["stamp_ns"] = msg.header.stamp.sec * 10**9 + msg.header.stamp.nanosec
    if msgtype == "std_msgs/msg/String":
        out["data_len"] = len(msg.data)
    if msgtype == "diagnostic_msgs/msg/DiagnosticArray":
        out["status_names"] = [s.name for s in msg.status]
    return out


def with_rosbags(folder):
    store = get_typestore(Stores.ROS2_JAZZY)
    topics = {}
    with Reader(folder) as reader:
        for conn in reader.connections:
            if conn.msgtype not in store.types:
                store.register(get_types_from_msg(conn.msgdef.data, conn.msgtype))
        for conn, log_ns, raw in reader.messages():
            msg = store.deserialize_cdr(raw, conn.msgtype)
            entry = topics.setdefault(
                conn.topic,
                {"type": conn.msgtype, "count": 0, "first": None, "last": None, "first_log_ns": log_ns},
            )
            entry["count"] += 1
            values = fields_of(conn.msgtype, msg)
            if entry["first"] is None:
                entry["first"] = values
            entry["last"] = values
            entry["last_log_ns"] = log_ns
        qos = {c.topic: [q.reliability.name.lower() for q in c.ext.offered_qos_profiles] for c in reader.connections}
    return topics, qos


def with_mcap(folder):
    files = sorted(Path(folder).glob("*.mcap"))
    assert len(files) == 1, files
    topics = {}
    with files[0].open("rb") as f:
        reader = make_reader(f, decoder_factories=[DecoderFactory()])
        header_profile = reader.get_header().profile
        for schema, channel, _message, msg in reader.iter_decoded_messages():
            entry = topics.setdefault(channel.topic, {"type": schema.name, "count": 0, "first": None, "last": None})
            entry["count"] += 1
            values = fields_of(schema.name, msg)
            if entry["first"] is None:
                entry["first"] = values
            entry["last"] = values
        names = [m.name for m in reader.iter_metadata()]
    return topics, header_profile, names


def main():
    folder = Path(sys.argv[1])
    meta = yaml.safe_load((folder / "metadata.yaml").read_text())["rosbag2_bagfile_information"]
    rosbags_topics, qos = with_rosbags(folder)
    mcap_topics, profile, metadata_records = with_mcap(folder)
    print(
        json.dumps(
            {
                "metadata": {
                    "version": meta["version"],
                    "storage_identifier": meta["storage_identifier"],
                    "ros_distro": meta.get("ros_distro"),
                    "message_count": meta["message_count"],
                    "relative_file_paths": meta["relative_file_paths"],
                    "counts": {
                        t["topic_metadata"]["name"]: t["message_count"] for t in meta["topics_with_message_count"]
                    },
                },
                "rosbags": rosbags_topics,
                "qos": qos,
                "mcap": mcap_topics,
                "mcap_profile": profile,
                "mcap_metadata_records": metadata_records,
            }
        )
    )


if __name__ == "__main__":
    main()
