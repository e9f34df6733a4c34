// C ABI around one CUTLASS 3.x conv2d fprop kernel (cutlass::conv::device::ConvUniversalAdapter over
// cutlass::conv::collective::CollectiveBuilder: TMA im2col + wgmma, sm_90a), with exactly the
// signature of the CUTLASS 2.x runner in pk_runtime.h, so the collector (ctypes) and the generated
// dispatcher call both kinds alike:
//
//   int64_t pk_info_<name>(int what)   0: sizeof(SharedStorage) (bytes of dynamic shared memory)
//                                      1: threads per block   2: mainloop stages   3: CTAs per cluster
//   int pk_run_<name>(...)             mode 0: can_implement + workspace query only (no device work,
//                                      pointers may be null); 1: one launch; 2: timed batches;
//                                      3: timed graph replays (pk_runtime.h).
//
// Tensors: activations NHWC, filter KRSC, output NPQK, all packed; D = alpha * conv(A, B) + beta * C
// (fp32 alpha/beta).  Serial split-k is not supported by these kernels: split_k_slices != 1 is
// PK_CANNOT_IMPLEMENT.
#pragma once

#include "pk_runtime.h"  // PkProblem, PkStatus (and the CUTLASS 2.x runner)

// The conv collective headers use cutlass::KernelHardwareInfo without including it.
#include "cutlass/kernel_hardware_info.hpp"
#include "cute/tensor.hpp"
#include "cutlass/conv/convnd_problem_shape.hpp"
#include "cutlass/conv/dispatch_policy.hpp"
#include "cutlass/conv/collective/collective_builder.hpp"
#include "cutlass/epilogue/collective/collective_builder.hpp"
#include "cutlass/conv/kernel/conv_universal.hpp"
#include "cutlass/conv/device/conv_universal_adapter.hpp"

namespace pk {

template <typename Kernel>
struct Runner3x {
  using Op = cutlass::conv::device::ConvUniversalAdapter<Kernel>;
  using ProblemShape = typename Kernel::ProblemShape;
  using ElementA = typename Op::ElementA;
  using ElementB = typename Op::ElementB;
  using ElementC = typename Op::ElementC;
  using ElementD = typename Op::ElementD;
  using StrideC = typename Kernel::StrideC;
  using StrideD = typename Kernel::StrideD;
  static_assert(ProblemShape::RankS == 2, "conv2d kernels only");

  static int64_t info(int what) {
    switch (what) {
      case 0: return static_cast<int64_t>(Kernel::SharedStorageSize);
      case 1: return static_cast<int64_t>(Kernel::MaxThreadsPerBlock);
      case 2: return static_cast<int64_t>(Op::kStages);
      case 3: return static_cast<int64_t>(cute::size(typename Kernel::DispatchPolicy::ClusterShape{}));
      default: return -1;
    }
  }

  static bool fits_int(const PkProblem* pr) {
    const int64_t v[] = {pr->n, pr->h, pr->w, pr->c, pr->k, pr->r, pr->s, pr->p, pr->q, pr->pad_h,
                         pr->pad_w, pr->stride_h, pr->stride_w, pr->dil_h, pr->dil_w};
    for (int64_t x : v) {
      if (x < 0 || x > INT32_MAX) return false;
    }
    return true;
  }

  static int run(const PkProblem* pr, void* A, void* B, void* C, void* D, float alpha, float beta,
                 void* workspace, size_t workspace_bytes, void* stream_ptr, int mode, int iters,
                 int reps, float* times_ms, size_t* ws_needed) {
    if (ws_needed) *ws_needed = 0;
    // A kernel without a source tensor (KernelConfig.no_source: ElementC void) computes alpha * conv only.
    if (cute::is_void_v<ElementC> && beta != 0.0f) return PK_CANNOT_IMPLEMENT;
    if (pr->split_k_slices != 1 || !fits_int(pr)) return PK_CANNOT_IMPLEMENT;
    cudaStream_t stream = static_cast<cudaStream_t>(stream_ptr);
    // ConvProblemShape for fprop: activation (n, h, w, c), filter (k, r, s, c), both packed
    // (C fastest); it derives the output extent (n, p, q, k) and the GEMM (M = NPQ, N = K, K = CRS).
    ProblemShape problem(
        cutlass::conv::Mode::kCrossCorrelation,
        {int(pr->n), int(pr->h), int(pr->w), int(pr->c)},
        {int(pr->k), int(pr->r), int(pr->s), int(pr->c)},
        {int(pr->pad_h), int(pr->pad_w)},  // lower padding
        {int(pr->pad_h), int(pr->pad_w)},  // upper padding
        {int(pr->stride_h), int(pr->stride_w)},
        {int(pr->dil_h), int(pr->dil_w)},
        1);  // groups
    // The output the caller allocated must be the one the kernel writes.
    if (problem.shape_C[0] != pr->n || problem.shape_C[1] != pr->p || problem.shape_C[2] != pr->q ||
        problem.shape_C[3] != pr->k) {
      return PK_CANNOT_IMPLEMENT;
    }
    // C and D strides: (q, p, n) modes of the packed NPQK output (as CUTLASS's conv examples do).
    StrideC stride_c{};
    StrideD stride_d{};
    cute::for_each(cute::make_seq<cute::rank<0>(StrideC{})>{}, [&](auto i) {
      cute::get<0, i>(stride_c) = problem.stride_C[ProblemShape::RankT - 2 - i];
    });
    cute::for_each(cute::make_seq<cute::rank<0>(StrideD{})>{}, [&](auto i) {
      cute::get<0, i>(stride_d) = problem.stride_C[ProblemShape::RankT - 2 - i];
    });
    typename Op::Arguments args{};
    args.problem_shape = problem;
    args.mainloop.ptr_A = static_cast<ElementA const*>(A);
    args.mainloop.ptr_B = static_cast<ElementB const*>(B);
    args.epilogue.thread.alpha = alpha;
    args.epilogue.thread.beta = beta;
    args.epilogue.ptr_C = static_cast<ElementC const*>(C);
    args.epilogue.dC = stride_c;
    args.epilogue.ptr_D = static_cast<ElementD*>(D);
    args.epilogue.dD = stride_d;
    size_t need = Op::get_workspace_size(args);
    if (ws_needed) *ws_needed = need;
    if (Op::can_implement(args) != cutlass::Status::kSuccess) return PK_CANNOT_IMPLEMENT;
    if (mode == 0) return PK_OK;
    if (need > workspace_bytes) return PK_WORKSPACE_TOO_SMALL;
    Op op;  // initialize() builds the TMA descriptors (host side, needs the device pointers)
    if (op.initialize(args, workspace, stream) != cutlass::Status::kSuccess) return PK_INIT_ERROR;
    if (cudaGetLastError() != cudaSuccess) return PK_INIT_ERROR;
    return launch(op, stream, mode, iters, reps, times_ms);
  }
};

}  // namespace pk

#define PK_EXPORT_KERNEL_3X(NAME, KERNEL)                                                        \
  extern "C" int64_t pk_info_##NAME(int what) { return pk::Runner3x<KERNEL>::info(what); }       \
  extern "C" int pk_run_##NAME(const PkProblem* pr, void* A, void* B, void* C, void* D,           \
                               float alpha, float beta, void* ws, size_t ws_bytes, void* stream, \
                               int mode, int iters, int reps, float* times_ms,                   \
                               size_t* ws_needed) {                                              \
    return pk::Runner3x<KERNEL>::run(pr, A, B, C, D, alpha, beta, ws, ws_bytes, stream, mode,    \
                                     iters, reps, times_ms, ws_needed);                          \
  }
