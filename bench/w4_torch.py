# W4 with PyTorch, VECTORISED: b = a*a over the whole tensor, then the gradient
# of sum(b) with respect to a.  Not the in-place element loop of w4.wg (that
# would be 1e6 Python-level indexing ops); an honest extra row, labelled so.
# Prints "# loop_seconds T" (the computation, without import time), then:
# sum(a*a) sum(g)
import sys
import time
import torch

torch.set_num_threads(1)
n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000000
t0 = time.perf_counter()
a = (1 + torch.arange(n, dtype=torch.float64) * 1e-6).requires_grad_()
s = (a * a).sum()
(g,) = torch.autograd.grad(s, a)
gs = g.sum().item()
print("# loop_seconds %.6f" % (time.perf_counter() - t0))
print("%.17g %.17g" % (s.item(), gs))
