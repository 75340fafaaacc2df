#!/usr/bin/python3
"""Helpers of the GradBench shell tests (tests/shell/gradbench_*.sh, wmath_paths.sh).

  gb_session.py messages SESSION.jsonl   the messages a recorded session sent to the tool, one JSON a line
  gb_session.py answers                  stdin's responses with their timings dropped (to compare as text)
"""
import json
import sys


def main():
    if len(sys.argv) >= 2 and sys.argv[1] == "messages" and len(sys.argv) == 3:
        for line in open(sys.argv[2]):
            e = json.loads(line)
            if "message" in e:
                print(json.dumps(e["message"]))
    elif sys.argv[1:] == ["answers"]:
        for line in sys.stdin:
            m = json.loads(line)
            m.pop("timings", None)
            print(json.dumps(m))
    else:
        sys.exit(__doc__)


main()
