"""Writes a large rosbag2 recording (MCAP, PyPI `rosbags`) for measuring `gp-node learn`'s
memory: MINUTES of the built-in Panda's joint states at 1 kHz (a smooth motion inside its
limits, with efforts) and, like a lab's recordings, a camera stream on another topic
(640×480 mono8 images at IMAGE_HZ) that the learner skips. About 1.1 GB with the defaults.

Usage: big_recording.py OUT_DIR [MINUTES=10] [IMAGE_HZ=5]
Then:  /usr/bin/time -v gp-node learn --bag OUT_DIR --urdf urdf/panda.urdf --out big.gpn
"""

import math
import sys
from pathlib import Path

import numpy as np
from rosbags.rosbag2 import StoragePlugin, Writer
from rosbags.typesys import Stores, get_typestore

TS = get_typestore(Stores.ROS2_JAZZY)
JointState = TS.types["sensor_msgs/msg/JointState"]
Image = TS.types["sensor_msgs/msg/Image"]
Header = TS.types["std_msgs/msg/Header"]
Time = TS.types["builtin_interfaces/msg/Time"]

# The built-in Panda's joints and the middle and half-range of a motion inside their limits.
NAMES = [f"panda_joint{j}" for j in range(1, 8)]
MID = [0.0, 0.0, 0.0, -1.5, 0.0, 1.8, 0.0]
HALF = [0.5, 0.4, 0.5, 0.4, 0.5, 0.4, 0.5]
EPOCH_NS = 1_700_000_000 * 10**9


def stamp(ns):
    return Time(sec=ns // 10**9, nanosec=ns % 10**9)


def main():
    out = Path(sys.argv[1])
    minutes = float(sys.argv[2]) if len(sys.argv) > 2 else 10.0
    image_hz = float(sys.argv[3]) if len(sys.argv) > 3 else 5.0
    n = int(minutes * 60 * 1000)
    image_every = int(round(1000 / image_hz))
    pixels = np.random.default_rng(0).integers(0, 255, 640 * 480, dtype=np.uint8)
    with Writer(out, version=9, storage_plugin=StoragePlugin.MCAP) as writer:
        states = writer.add_connection("/joint_states", JointState.__msgtype__, typestore=TS)
        camera = writer.add_connection("/camera/image_raw", Image.__msgtype__, typestore=TS)
        for k in range(n):
            t = k / 1000.0
            ns = EPOCH_NS + k * 1_000_000
            q = [MID[j] + HALF[j] * math.sin((0.5 + 0.1 * j) * t) for j in range(7)]
            v = [HALF[j] * (0.5 + 0.1 * j) * math.cos((0.5 + 0.1 * j) * t) for j in range(7)]
            effort = [3.0 * math.sin(q[j]) + 0.5 * v[j] for j in range(7)]
            msg = JointState(
                header=Header(stamp=stamp(ns), frame_id=""),
                name=NAMES,
                position=np.array(q),
                velocity=np.array(v),
                effort=np.array(effort),
            )
            writer.write(states, ns + 300_000, TS.serialize_cdr(msg, JointState.__msgtype__))
            if k % image_every == 0:
                img = Image(
                    header=Header(stamp=stamp(ns), frame_id="camera"),
                    height=480,
                    width=640,
                    encoding="mono8",
                    is_bigendian=0,
                    step=640,
                    data=pixels,
                )
                writer.write(camera, ns + 400_000, TS.serialize_cdr(img, Image.__msgtype__))
    size = sum(f.stat().st_size for f in out.iterdir())
    print(f"{out}: {n} joint states, {n // image_every} images, {size / 1e9:.2f} GB")


if __name__ == "__main__":
    main()
