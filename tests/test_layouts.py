"""The filter storage map the collector uses equals CUTLASS's own TensorCxRSKx<32> layout plus
cutlass::reorder_convK<32> (host code from the nvidia-cutlass package, compiled with nvcc)."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from predictor.layouts import filter_offsets, reorder_perm32

DRIVER = r"""
#include <cstdio>
#include "cutlass/cutlass.h"
#include "cutlass/layout/tensor.h"
#include "cutlass/conv/conv2d_problem_size.h"
#include "cutlass/util/host_tensor.h"
#include "cutlass/util/host_reorder.h"
int main() {
  const int K = KK, C = CC, R = RR, S = SS;
  cutlass::Tensor4DCoord extent(K, R, S, C);
  using Layout = cutlass::layout::TensorCxRSKx<32>;
  cutlass::HostTensor<int, Layout> src(extent, false), dst(extent, false);
  // value of logical element = its KCRS linear index
  for (int k = 0; k < K; ++k) for (int c = 0; c < C; ++c) for (int r = 0; r < R; ++r) for (int s = 0; s < S; ++s)
    src.host_ref().at({k, r, s, c}) = ((k * C + c) * R + r) * S + s;
  cutlass::conv::Conv2dProblemSize p(1, R, S, C, K, R, S, 1, 1, 0, 0, 1, 1, 1, 1,
                                     cutlass::conv::Mode::kCrossCorrelation);
  cutlass::gemm::GemmCoord gemm = cutlass::conv::implicit_gemm_problem_size(cutlass::conv::Operator::kFprop, p);
  cutlass::reorder_convK<32>(dst.host_ref(), src.host_ref(), gemm);
  for (long i = 0; i < (long)dst.size(); ++i) std::printf("%d\n", dst.host_data()[i]);
  return 0;
}
"""


def test_perm_is_a_permutation_within_groups() -> None:
    p = reorder_perm32(96)
    assert sorted(p) == list(range(96))
    assert all((p[i] // 32) == (i // 32) for i in range(96))
    with pytest.raises(ValueError, match="K=40"):
        reorder_perm32(40)


@pytest.mark.nvcc
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
@pytest.mark.parametrize("K,C,R,S", [(64, 64, 3, 3), (32, 96, 1, 1)])
def test_matches_cutlass_host_reorder(tmp_path: Path, K: int, C: int, R: int, S: int) -> None:
    pytest.importorskip("cutlass_library")
    from predictor.emit import cutlass_root

    root = cutlass_root()
    src = DRIVER.replace("KK", str(K)).replace("CC", str(C)).replace("RR", str(R)).replace("SS", str(S))
    cu = tmp_path / "reorder.cu"
    cu.write_text(src)
    exe = tmp_path / "reorder"
    subprocess.run(["nvcc", "-std=c++17", "-w", f"-I{root / 'include'}", f"-I{root / 'tools/util/include'}",
                    str(cu), "-o", str(exe)], check=True, capture_output=True, text=True)
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout.split()
    cutlass_buf = np.array([int(v) for v in out])
    ours = np.empty(K * C * R * S, dtype=np.int64)
    ours[filter_offsets(K, C, R, S).reshape(-1)] = np.arange(K * C * R * S)
    np.testing.assert_array_equal(ours, cutlass_buf)
    # and the un-reordered layout differs, so a missing reorder is visible
    plain = np.empty_like(ours)
    plain[filter_offsets(K, C, R, S, reorder=False).reshape(-1)] = np.arange(K * C * R * S)
    assert (plain != cutlass_buf).mean() > 0.5
