"""An inference-style PyTorch loop, timed: the overhead scenario.

Small batch, fp16, many small kernels per step and a read-back of the chosen
tokens every step, the shape of a decoding loop, so the per-launch cost of an
interposer shows. run.sh runs it without cutaint, with cutaint and, where
compute-sanitizer is present, under it (with fewer iterations).

Iterations come from GPU_SUITE_ITERS / GPU_SUITE_WARMUP (defaults 300 / 30).
Output: human-readable lines, then "RESULT key=value" lines for run.sh.
"""
import os
import sys
import time

import torch


class Block(torch.nn.Module):
    def __init__(self, width: int) -> None:
        super().__init__()
        self.norm = torch.nn.LayerNorm(width)
        self.up = torch.nn.Linear(width, 4 * width)
        self.down = torch.nn.Linear(4 * width, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.down(torch.nn.functional.gelu(self.up(self.norm(x))))


def main() -> int:
    if not torch.cuda.is_available():
        print("CUDA is not available to PyTorch")
        return 1
    iters = int(os.environ.get("GPU_SUITE_ITERS", "300"))
    warmup = int(os.environ.get("GPU_SUITE_WARMUP", "30"))
    torch.manual_seed(0)
    width, vocab = 1024, 8192
    model = torch.nn.Sequential(*[Block(width) for _ in range(6)],
                                torch.nn.Linear(width, vocab))
    model = model.half().cuda().eval()
    x = torch.randn(8, width, generator=torch.Generator().manual_seed(1)).half().cuda()

    tokens = 0
    with torch.inference_mode():
        for _ in range(warmup):
            model(x).argmax(-1).cpu()
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(iters):
            tokens += int(model(x).argmax(-1).cpu().sum())  # the read-back a sampler does
        torch.cuda.synchronize()
        elapsed = time.perf_counter() - start
    ms = elapsed / max(iters, 1) * 1e3
    print(f"{iters} iterations in {elapsed:.3f} s: {ms:.3f} ms per iteration")
    # The same input every step, so every step picks the same tokens.
    print(f"RESULT token_sum_per_iter={tokens // max(iters, 1)}")
    print(f"RESULT ms_per_iter={ms:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
