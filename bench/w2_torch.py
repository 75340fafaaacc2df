# W2 with PyTorch scalar tensors: h = tanh(w*h + b) for n steps, then
# torch.autograd.grad for dh/dw, dh/db (w = 0.9, b = 0.1, h0 = 0.1).  Slow (one autograd node per op), so
# run.py runs it once and may use fewer steps (BENCH_TORCH_STEPS).
# Prints "# loop_seconds T" (recurrence + grad, without import time), then:
# h dh/dw dh/db
import sys
import time
import torch

torch.set_num_threads(1)
n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000000
t0 = time.perf_counter()
w = torch.tensor(0.9, dtype=torch.float64, requires_grad=True)
b = torch.tensor(0.1, dtype=torch.float64, requires_grad=True)
h = torch.tensor(0.1, dtype=torch.float64)
for _ in range(n):
    h = torch.tanh(w * h + b)
gw, gb = torch.autograd.grad(h, (w, b))
t1 = time.perf_counter()
print("# loop_seconds %.6f" % (t1 - t0))
print("%.17g %.17g %.17g" % (h.item(), gw.item(), gb.item()))
