"""Installs the kernel spec `wengert` (jupyter/wengert_kernel.py over the
binary given) for the current user, or under DIR/kernels with --dir DIR
(for the tests, which point JUPYTER_PATH at DIR).

usage: /usr/bin/python3 jupyter/install.py [--dir DIR] WENGERT_BINARY"""
import json
import os
import sys
import tempfile


def spec(binary):
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(here)
    return {
        "argv": [sys.executable, "-Xfrozen_modules=off", os.path.join(here, "wengert_kernel.py"), "-f", "{connection_file}"],
        "display_name": "wengert",
        "language": "wengert",
        "interrupt_mode": "signal",
        "env": {"WENGERT_BIN": os.path.abspath(binary),
                "WENGERT_STDLIB": os.path.join(root, "stdlib")},
    }


def main(args):
    target = None
    if args[:1] == ["--dir"]:
        target, args = args[1], args[2:]
    if len(args) != 1:
        sys.exit(__doc__.split("\n\n")[-1])
    if target:
        folder = os.path.join(target, "kernels", "wengert")
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, "kernel.json"), "w") as f:
            json.dump(spec(args[0]), f, indent=1)
        print("kernel spec wengert in %s" % folder)
        return
    from jupyter_client.kernelspec import KernelSpecManager
    with tempfile.TemporaryDirectory() as tmp:
        folder = os.path.join(tmp, "wengert")
        os.makedirs(folder)
        with open(os.path.join(folder, "kernel.json"), "w") as f:
            json.dump(spec(args[0]), f, indent=1)
        where = KernelSpecManager().install_kernel_spec(folder, "wengert", user=True)
    print("installed the Jupyter kernel wengert in %s" % where)


if __name__ == "__main__":
    main(sys.argv[1:])
