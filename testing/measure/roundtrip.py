"""The report both loopback peers print (loopback_peer.py, loopback_peer_rclpy.py): one JSON
object with the states sent and answered and the round-trip quantiles. Standard library
only, so that either peer's Python can import it."""

import json
import statistics


def report(n: int, rtt_us: list, unanswered: int, rate_hz: float, wall_s: float) -> str:
    """The JSON line: `rtt_us` are the answered states' round trips, µs."""
    rtt = sorted(rtt_us)
    return json.dumps(
        {
            "sent": n,
            "answered": len(rtt),
            "unanswered": unanswered,
            "rate_hz": rate_hz,
            "wall_s": wall_s,
            "roundtrip_us": {
                "p50": statistics.median(rtt) if rtt else None,
                "p99": rtt[int(0.99 * (len(rtt) - 1))] if rtt else None,
                "max": rtt[-1] if rtt else None,
            },
        }
    )
