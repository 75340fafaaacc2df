"""Times the kernel `wengert` (installed by `make jupyter`, or on
JUPYTER_PATH): start-up until the kernel answers, and the round trip of a
trivial cell (execute request to idle), the median of 50.

usage: /usr/bin/python3 jupyter/timing.py"""
import statistics
import time

from jupyter_client.manager import start_new_kernel


def run(kc, code):
    msg_id = kc.execute(code)
    while True:
        m = kc.get_iopub_msg(timeout=30)
        if (m["parent_header"].get("msg_id") == msg_id and m["msg_type"] == "status"
                and m["content"]["execution_state"] == "idle"):
            return


starts = []
for _ in range(3):
    t = time.perf_counter()
    km, kc = start_new_kernel(kernel_name="wengert")
    starts.append(time.perf_counter() - t)
    run(kc, "1")
    trips = []
    for _ in range(50):
        t = time.perf_counter()
        run(kc, "1 + 1")
        trips.append(time.perf_counter() - t)
    kc.stop_channels()
    km.shutdown_kernel(now=True)
print("start-up: %.2f s (median of 3)" % statistics.median(starts))
print("round trip of '1 + 1': %.1f ms (median of 50)" % (1000 * statistics.median(trips)))
